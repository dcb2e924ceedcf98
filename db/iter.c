// SPDX-License-Identifier: GPL-2.0
/*
 * iter.c - streaming the events table in replay order, checking as it goes
 * what replay relies on: time never goes backwards within one CPU, and every
 * CPU an event names exists.
 */
#include <errno.h>
#include <stdlib.h>

#include "db.h"
#include "db_local.h"
#include "error.h"

#define DB_MAX_CPUS	(1 << 20)	/* sanity bound on meta nr_cpus_possible */

struct db_iter {
	struct db	*db;
	sqlite3_stmt	*st;
	uint64_t	count;
	int		err;		/* sticky: once failed, always failed */
	unsigned int	nr_possible;
	uint64_t	last_ts[];	/* per ring-buffer CPU */
};

/* Rows in events: meta event_count once the load finished, else COUNT(*). */
static int db_iter_total(struct db *db, uint64_t *out)
{
	sqlite3_stmt *st;
	int64_t n;
	int rc;

	if (!db_meta_get_int(db, "event_count", &n) && n >= 0) {
		*out = (uint64_t)n;
		return 0;
	}
	rc = sqlite3_prepare_v2(db->sql, "SELECT count(*) FROM events", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_err(rc);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out = (uint64_t)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : db_err(rc);
}

/**
 * db_iter_open() - start reading the events in replay order.
 * @db:  open database
 * @out: the iterator
 *
 * Needs meta nr_cpus_possible (-MCR_E_SCHEMA without a sane one).
 */
int db_iter_open(struct db *db, struct db_iter **out)
{
	struct db_iter *it;
	int64_t possible;
	uint64_t count = 0;
	int err, rc;

	err = db_meta_get_int(db, "nr_cpus_possible", &possible);
	if (err == -ENOENT || err == -EINVAL || (!err && (possible < 1 || possible > DB_MAX_CPUS)))
		return -MCR_E_SCHEMA;
	if (err)
		return err;
	err = db_iter_total(db, &count);
	if (err)
		return err;
	it = calloc(1, sizeof(*it) + (size_t)possible * sizeof(it->last_ts[0]));
	if (!it)
		return -ENOMEM;
	it->db = db;
	it->count = count;
	it->nr_possible = (unsigned int)possible;
	rc = sqlite3_prepare_v2(db->sql,
				"SELECT ts, cpu, seq, kind, id, item, val, aux, level, flags, pid"
				" FROM events ORDER BY rowid", -1, &it->st, NULL);
	if (rc != SQLITE_OK) {
		free(it);
		return db_err(rc);
	}
	*out = it;
	return 0;
}

/* Lock and visit events name a target CPU in item: it must exist too (or be -1). */
static bool db_iter_target_ok(const struct db_iter *it, const struct mcr_event *ev)
{
	switch (ev->kind) {
	case MCR_EV_LOCKED:
	case MCR_EV_UNLOCK:
	case MCR_EV_CONTENDED:
	case MCR_EV_VISIT:
		return ev->item == -1 || (ev->item >= 0 && (unsigned int)ev->item < it->nr_possible);
	default:
		return true;
	}
}

/**
 * db_iter_next() - the next event in replay order.
 * @it: iterator
 * @ev: filled when 1 is returned
 *
 * Returns 1, 0 at the end, or a negative error that every later call returns
 * again: -MCR_E_TIME if ts goes backwards within one CPU, -MCR_E_CPU if the
 * event's CPU (or the CPU a lock or visit event targets) is not below meta
 * nr_cpus_possible.
 */
int db_iter_next(struct db_iter *it, struct mcr_event *ev)
{
	sqlite3_stmt *st = it->st;
	int64_t cpu, kind;
	int rc;

	if (it->err)
		return it->err;
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return 0;
	if (rc != SQLITE_ROW)
		return it->err = db_err(rc) ? db_err(rc) : -EIO;
	cpu = sqlite3_column_int64(st, 1);
	kind = sqlite3_column_int64(st, 3);
	if (cpu < 0 || cpu >= it->nr_possible)
		return it->err = -MCR_E_CPU;
	if (kind < 1 || kind > MCR_EV_KIND_MAX)
		return it->err = -MCR_E_BAD_INPUT;
	ev->ts = (uint64_t)sqlite3_column_int64(st, 0);
	ev->cpu = (int32_t)cpu;
	ev->seq = (uint64_t)sqlite3_column_int64(st, 2);
	ev->kind = (uint8_t)kind;
	ev->id = (uint64_t)sqlite3_column_int64(st, 4);
	ev->item = (int32_t)sqlite3_column_int64(st, 5);
	ev->val = sqlite3_column_int64(st, 6);
	ev->aux = (int32_t)sqlite3_column_int64(st, 7);
	ev->level = (int16_t)sqlite3_column_int64(st, 8);
	ev->flags = (uint8_t)sqlite3_column_int64(st, 9);
	ev->pid = (int32_t)sqlite3_column_int64(st, 10);
	if (ev->ts < it->last_ts[cpu])
		return it->err = -MCR_E_TIME;
	it->last_ts[cpu] = ev->ts;
	if (!db_iter_target_ok(it, ev))
		return it->err = -MCR_E_CPU;
	return 1;
}

uint64_t db_iter_count(const struct db_iter *it)
{
	return it->count;
}

void db_iter_close(struct db_iter *it)
{
	if (!it)
		return;
	sqlite3_finalize(it->st);
	free(it);
}
