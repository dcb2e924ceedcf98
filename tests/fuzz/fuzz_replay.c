// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_replay.c - libFuzzer target: a trace database built from the input's
 * bytes (meta values, a few cgroups, events: values the fuzzer picks, SQLite
 * kept valid), then what `memcg-replay replay` and `validate` do with it:
 * db_open() and its validation, replay_trace_load(), and a replay pass of
 * every policy with the default flush model, then one with validation.
 * fuzz_dbopen damages the file; this one its values.  Any return code is
 * fine, a crash, hang, leak or sanitizer report is not.
 *
 * Input: 4 meta bytes (nr_cpus_possible, nr_cpus_online, log2 batch_size,
 * log2 page_size, each small or an extreme), 1 byte cgroup count, 3 bytes per
 * cgroup (id, parent, level), then 16 bytes per event.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db.h"
#include "fuzz.h"
#include "flush_model.h"
#include "sim.h"
#include "replay.h"

#define FUZZ_MAX_EVENTS	2048

struct fuzz_in {
	const uint8_t	*p;
	size_t		left;
};

static uint8_t in_u8(struct fuzz_in *in)
{
	if (!in->left)
		return 0;
	in->left--;
	return *in->p++;
}

/* A small value mostly; the ends of int64 when the byte says so. */
static int64_t in_meta(struct fuzz_in *in, int shift)
{
	uint8_t b = in_u8(in);

	switch (b) {
	case 0xff: return INT64_MAX;
	case 0xfe: return INT64_MIN;
	case 0xfd: return -1;
	default: return shift ? (int64_t)1 << (b % 40) : b;
	}
}

static int64_t in_val(uint8_t sel, uint32_t raw)
{
	switch (sel & 7) {
	case 0: return INT64_MAX;
	case 1: return INT64_MIN;
	case 2: return -(int64_t)raw;
	default: return raw % 1024;
	}
}

static int fuzz_build(const char *path, struct fuzz_in *in)
{
	static const char *const keys[] = { "nr_cpus_possible", "nr_cpus_online", "batch_size",
					     "page_size" };
	struct db *db;
	uint64_t ts = 1000, seq[8] = { 0 };
	unsigned int i, n;
	int err;

	err = db_create(path, &db);
	if (err)
		return err;
	db_meta_set(db, "source", "synth:fuzz");
	db_meta_set(db, "kernel_release", "6.18.0-fuzz");
	for (i = 0; i < 4; i++) {
		int64_t v = in_meta(in, i >= 2);

		if (v != -1)
			db_meta_set_int(db, keys[i], v);
	}
	n = in_u8(in) % 16;
	for (i = 0; i < n; i++) {
		struct db_cgroup cg = { .path = NULL, .created_ts = -1, .removed_ts = -1 };

		cg.id = in_u8(in);
		cg.parent = in_u8(in) % 16;
		cg.level = (int)(in_u8(in) % 8) - 1;
		db_cgroup_put(db, &cg);
	}
	for (i = 0; i < FUZZ_MAX_EVENTS && in->left >= 16; i++) {
		struct mcr_event ev = { 0 };
		uint32_t raw;

		ts += in_u8(in) * 1000ull;
		ev.ts = ts;
		ev.cpu = in_u8(in) % 8;
		ev.seq = seq[ev.cpu]++;
		ev.kind = in_u8(in) % (MCR_EV_KIND_MAX + 2);
		ev.id = in_u8(in) % 20;
		ev.item = (int8_t)in_u8(in);
		ev.flags = in_u8(in) & 3;
		ev.aux = (int8_t)in_u8(in);
		ev.level = (int8_t)in_u8(in);
		ev.pid = in_u8(in);
		memcpy(&raw, in->p, 4);
		in->p += 4;
		in->left -= 4;
		ev.val = in_val(in_u8(in), raw);
		in_u8(in);
		in_u8(in);
		if (db_events_append(db, &ev))
			break;
	}
	db_events_finish(db);
	return db_close(db);
}

static void fuzz_replay(struct db *db, const struct replay_trace *t, bool validate)
{
	struct replay_params p = { .max_hypotheses = 64, .validate = validate,
				   .max_mismatches = 10 };
	struct replay_pass ps;
	unsigned int i;

	for (i = 0; sim_policy_at(i) && p.nr_runs < (validate ? 1 : 3); i++)
		p.runs[p.nr_runs++] = replay_run_own(t, sim_policy_at(i));
	p.model = replay_model_default(t);
	if (replay_pass_db(db, t, "fuzz.db", validate ? "validate" : "replay", &p, &ps) == 0)
		replay_pass_free(&ps);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct replay_trace t;
	struct db *db;
	char path[64];

	snprintf(path, sizeof(path), "/dev/shm/mcr-fuzz-replay-%d", (int)getpid());
	fuzz_unlink_db(path);
	if (fuzz_build(path, &in) == 0 && db_open(path, true, &db) == 0) {
		if (replay_trace_load(db, &t) == 0) {
			fuzz_replay(db, &t, false);
			fuzz_replay(db, &t, true);
			replay_trace_free(&t);
		}
		db_close(db);
	}
	fuzz_unlink_db(path);
	return 0;
}
