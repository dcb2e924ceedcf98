// SPDX-License-Identifier: GPL-2.0
/*
 * iter_rows.c - the previous format's reader: an events table, no chunks, read
 * row by row in rowid order, which was the same replay order.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "db_local.h"
#include "error.h"
#include "store.h"
#include "iter_local.h"

/* The previous format: one row per event. */
int db_iter_next_row(struct db_iter *it, struct mcr_event *ev)
{
	sqlite3_stmt *st = it->st;
	int64_t cpu, kind, item, aux, level, flags, pid;
	const char *field = NULL;
	int64_t v = 0;
	int rc;

	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return 0;
	if (rc != SQLITE_ROW)
		return db_err(rc) ? db_err(rc) : -EIO;
	cpu = sqlite3_column_int64(st, 1);
	kind = sqlite3_column_int64(st, 3);
	item = sqlite3_column_int64(st, 5);
	aux = sqlite3_column_int64(st, 7);
	level = sqlite3_column_int64(st, 8);
	flags = sqlite3_column_int64(st, 9);
	pid = sqlite3_column_int64(st, 10);
	if (cpu < 0 || cpu >= it->nr_possible) {
		snprintf(it->db->why, sizeof(it->db->why), "events row %" PRId64 ": cpu %" PRId64
			 " not below nr_cpus_possible %u", (int64_t)sqlite3_column_int64(st, 11), cpu,
			 it->nr_possible);
		return -MCR_E_CPU;
	}
	/* what does not fit the event's fields; the rest is db_event_check()'s */
	if (kind < 0 || kind > UINT8_MAX)
		field = "kind", v = kind;
	else if (item != (int32_t)item)
		field = "item", v = item;
	else if (aux != (int32_t)aux)
		field = "aux", v = aux;
	else if (level != (int16_t)level)
		field = "level", v = level;
	else if (flags < 0 || flags > UINT8_MAX)
		field = "flags", v = flags;
	else if (pid != (int32_t)pid)
		field = "pid", v = pid;
	if (field) {
		char what[64] = "";

		if (strcmp(field, "kind"))
			snprintf(what, sizeof(what), " %s %" PRId64, field, v);
		snprintf(it->db->why, sizeof(it->db->why), "events row %" PRId64 " (cpu %" PRId64
			 " seq %" PRId64 "): kind %" PRId64 "%s out of range",
			 (int64_t)sqlite3_column_int64(st, 11), cpu,
			 (int64_t)sqlite3_column_int64(st, 2), kind, what);
		return -MCR_E_BAD_INPUT;
	}
	ev->ts = (uint64_t)sqlite3_column_int64(st, 0);
	ev->cpu = (int32_t)cpu;
	ev->seq = (uint64_t)sqlite3_column_int64(st, 2);
	ev->kind = (uint8_t)kind;
	ev->id = (uint64_t)sqlite3_column_int64(st, 4);
	ev->item = (int32_t)item;
	ev->val = sqlite3_column_int64(st, 6);
	ev->aux = (int32_t)aux;
	ev->level = (int16_t)level;
	ev->flags = (uint8_t)flags;
	ev->pid = (int32_t)pid;
	if (ev->ts < it->last_ts[cpu]) {
		snprintf(it->db->why, sizeof(it->db->why), "events row %" PRId64 " (cpu %" PRId64
			 " seq %" PRIu64 "): ts %" PRIu64 " before the CPU's previous %" PRIu64,
			 (int64_t)sqlite3_column_int64(st, 11), cpu, ev->seq, ev->ts,
			 it->last_ts[cpu]);
		return -MCR_E_TIME;
	}
	it->last_ts[cpu] = ev->ts;
	return 1;
}
