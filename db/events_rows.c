// SPDX-License-Identifier: GPL-2.0
/*
 * events_rows.c - the events as rows, both ways: writing the event store out
 * as the events table for SQL users (db_events_table), and converting a file
 * of the previous format, which held only that table, into the store
 * (db_events_convert).  Neither is on a hot path: one prepared INSERT per row.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "db.h"
#include "db_local.h"
#include "error.h"

#define DB_ROWS_COMMIT	(1 << 20)

static int db_rows_insert(sqlite3_stmt *st, const struct mcr_event *ev)
{
	/* uint64 fields are stored bit for bit as SQLite's int64. */
	sqlite3_bind_int64(st, 1, (int64_t)ev->ts);
	sqlite3_bind_int(st, 2, ev->cpu);
	sqlite3_bind_int64(st, 3, (int64_t)ev->seq);
	sqlite3_bind_int(st, 4, ev->kind);
	sqlite3_bind_int64(st, 5, (int64_t)ev->id);
	sqlite3_bind_int(st, 6, ev->item);
	sqlite3_bind_int64(st, 7, ev->val);
	sqlite3_bind_int(st, 8, ev->aux);
	sqlite3_bind_int(st, 9, ev->level);
	sqlite3_bind_int(st, 10, ev->flags);
	sqlite3_bind_int(st, 11, ev->pid);
	return db_step_reset(st);
}

/**
 * db_events_table() - (re)write the events table from the event store.
 * @db:  open writable database of the current format, no transaction open
 * @out: rows written
 *
 * One transaction: the table is either the whole trace or absent.  The
 * typed views (update_events, ...) read it.  Returns 0 or a negative error;
 * -EINVAL for a file of the previous format (its table is the trace).
 */
int db_events_table(struct db *db, uint64_t *out)
{
	struct mcr_event ev;
	struct db_iter *it = NULL;
	sqlite3_stmt *st = NULL;
	uint64_t n = 0;
	int err, rc;

	if (db->row_events)
		return -EINVAL;
	if (db->in_txn)
		return -EBUSY;
	err = db_exec(db, "BEGIN IMMEDIATE");
	if (err)
		return err;
	err = db_exec(db, "DROP TABLE IF EXISTS events");
	if (!err)
		err = db_schema_events_table(db, false);
	if (!err) {
		rc = sqlite3_prepare_v2(db->sql, "INSERT INTO events (ts, cpu, seq, kind, id, item,"
					" val, aux, level, flags, pid) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
					-1, &st, NULL);
		err = db_err(rc);
	}
	if (!err)
		err = db_iter_open(db, &it);
	while (!err && (err = db_iter_next(it, &ev)) > 0) {
		err = db_rows_insert(st, &ev);
		n++;
	}
	db_iter_close(it);
	sqlite3_finalize(st);
	if (err) {
		db_exec(db, "ROLLBACK");
		return err;
	}
	*out = n;
	return db_exec(db, "COMMIT");
}

/**
 * db_events_convert() - turn a file of the previous format into the store.
 * @db:  open writable database
 * @out: events converted
 *
 * The rows are read in replay order, written as chunks, then the events
 * table is dropped and the file compacted.  Returns 0, -EALREADY if the file
 * is of the current format, or a negative error (the file is then as it
 * was: everything up to dropping the table is one transaction).
 */
int db_events_convert(struct db *db, uint64_t *out)
{
	struct mcr_event ev;
	struct db_iter *it = NULL;
	uint64_t n = 0;
	int err;

	if (!db->row_events)
		return -EALREADY;
	if (db->in_txn)
		return -EBUSY;
	err = db_begin(db);
	if (!err)
		err = db_schema_events_table(db, true);
	if (!err)
		err = db_iter_open(db, &it);
	while (!err && (err = db_iter_next(it, &ev)) > 0) {
		err = db_events_append(db, &ev);
		n++;
	}
	db_iter_close(it);
	if (!err)
		err = db_events_flush(db);
	if (!err)
		err = db_exec(db, "DROP TABLE events; UPDATE event_kinds SET events = NULL");
	if (!err) {
		char sql[48];

		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", DB_SCHEMA_VERSION);
		err = db_exec(db, sql);
	}
	if (!err)
		err = db_commit(db);
	if (err) {
		db_rollback(db);
		return err;
	}
	db->row_events = false;
	/* event_kinds are counted again from what the chunks hold */
	err = db_events_finish(db);
	if (!err)
		err = db_exec(db, "VACUUM");
	*out = n;
	return err;
}

bool db_events_are_rows(struct db *db)
{
	return db->row_events;
}
