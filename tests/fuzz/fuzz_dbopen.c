// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_dbopen.c - libFuzzer target: what every reader does with a trace
 * database: db_open() (identity and validation), the trace tables
 * (replay_trace_load), every event through db_iter and the meta values.
 * Any return code is fine, a crash, hang, leak or sanitizer report is not.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "db.h"
#include "fuzz.h"
#include "replay.h"

#define FUZZ_MAX_EVENTS	200000	/* a page of SQLite can claim more rows than it holds */

static int fuzz_cgroup(const struct db_cgroup *cg, void *arg)
{
	(*(uint64_t *)arg) += cg->id;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct replay_trace t = { 0 };
	struct mcr_event ev;
	struct db_iter *it;
	struct db *db;
	uint64_t n = 0, sum = 0;
	int64_t v;
	char path[64], *s;

	if (fuzz_write_input("db", data, size, path, sizeof(path)))
		return 0;
	if (db_open(path, false, &db) == 0) {
		if (db_meta_get(db, "kernel_release", &s) == 0)
			free(s);
		db_meta_get_int(db, "nr_cpus_online", &v);
		db_cgroups_foreach(db, fuzz_cgroup, &sum);
		if (replay_trace_load(db, &t) == 0)
			replay_trace_free(&t);
		if (db_iter_open(db, &it) == 0) {
			while (n++ < FUZZ_MAX_EVENTS && db_iter_next(it, &ev) > 0)
				sum += ev.ts;
			db_iter_close(it);
		}
		db_close(db);
	}
	fuzz_unlink_db(path);
	return 0;
}
