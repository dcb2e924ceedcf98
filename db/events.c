// SPDX-License-Identifier: GPL-2.0
/*
 * events.c - bulk writing of the events table.
 *
 * Rows are buffered DB_INSERT_ROWS at a time and written by one prepared
 * multi-row INSERT (about 1.5x the rate of one row per statement, see
 * bench/db_rate.c); a transaction is begun lazily and committed every
 * DB_COMMIT_ROWS rows, so a crash loses at most the last batch.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "db_local.h"
#include "error.h"

#define DB_INSERT_HEAD \
	"INSERT INTO events (ts, cpu, seq, kind, id, item, val, aux, level, flags, pid) VALUES "
#define DB_INSERT_ROW	"(?,?,?,?,?,?,?,?,?,?,?)"

static int db_events_prepare(struct db *db)
{
	static const size_t row = sizeof(DB_INSERT_ROW);	/* with the ',' */
	char *sql, *p;
	unsigned int i;
	int rc;

	sql = malloc(sizeof(DB_INSERT_HEAD) + DB_INSERT_ROWS * row);
	if (!sql)
		return -ENOMEM;
	p = stpcpy(sql, DB_INSERT_HEAD);
	for (i = 0; i < DB_INSERT_ROWS; i++) {
		if (i)
			*p++ = ',';
		p = stpcpy(p, DB_INSERT_ROW);
	}
	rc = sqlite3_prepare_v3(db->sql, sql, -1, SQLITE_PREPARE_PERSISTENT, &db->ins_many, NULL);
	free(sql);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v3(db->sql, DB_INSERT_HEAD DB_INSERT_ROW, -1,
					SQLITE_PREPARE_PERSISTENT, &db->ins_one, NULL);
	return db_err(rc);
}

/* Bind @ev to the DB_EVENT_COLS parameters of row @row of @st. */
static void db_bind_event(sqlite3_stmt *st, unsigned int row, const struct mcr_event *ev)
{
	int p = (int)(row * DB_EVENT_COLS);

	/* uint64 fields are stored bit for bit as SQLite's int64. */
	sqlite3_bind_int64(st, p + 1, (int64_t)ev->ts);
	sqlite3_bind_int(st, p + 2, ev->cpu);
	sqlite3_bind_int64(st, p + 3, (int64_t)ev->seq);
	sqlite3_bind_int(st, p + 4, ev->kind);
	sqlite3_bind_int64(st, p + 5, (int64_t)ev->id);
	sqlite3_bind_int(st, p + 6, ev->item);
	sqlite3_bind_int64(st, p + 7, ev->val);
	sqlite3_bind_int(st, p + 8, ev->aux);
	sqlite3_bind_int(st, p + 9, ev->level);
	sqlite3_bind_int(st, p + 10, ev->flags);
	sqlite3_bind_int(st, p + 11, ev->pid);
}

static int db_events_step(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : db_err(rc);
}

/* Begin the bulk transaction unless one (ours or the caller's) is open. */
static int db_events_txn(struct db *db)
{
	int err;

	if (db->in_txn)
		return 0;
	err = db_exec(db, "BEGIN IMMEDIATE");
	if (err)
		return err;
	db->in_txn = true;
	db->bulk = true;
	db->txn_rows = 0;
	return 0;
}

static int db_events_commit_bulk(struct db *db)
{
	int err;

	if (!db->bulk)
		return 0;
	err = db_exec(db, "COMMIT");
	if (err)
		return err;
	db->in_txn = false;
	db->bulk = false;
	db->txn_rows = 0;
	return 0;
}

/* Write a full buffer with the multi-row statement. */
static int db_events_write_full(struct db *db)
{
	unsigned int i;
	int err;

	err = db_events_txn(db);
	if (err)
		return err;
	for (i = 0; i < DB_INSERT_ROWS; i++)
		db_bind_event(db->ins_many, i, &db->buf[i]);
	err = db_events_step(db->ins_many);
	if (err)
		return err;
	db->nbuf = 0;
	db->txn_rows += DB_INSERT_ROWS;
	if (db->txn_rows >= DB_COMMIT_ROWS)
		return db_events_commit_bulk(db);
	return 0;
}

/**
 * db_events_flush() - write the buffered rows one by one, without committing.
 * @db: database
 */
int db_events_flush(struct db *db)
{
	unsigned int i;
	int err;

	if (!db->nbuf)
		return 0;
	err = db_events_txn(db);
	if (err)
		return err;
	for (i = 0; i < db->nbuf; i++) {
		db_bind_event(db->ins_one, 0, &db->buf[i]);
		err = db_events_step(db->ins_one);
		if (err)
			return err;
	}
	db->txn_rows += db->nbuf;
	db->nbuf = 0;
	return 0;
}

/**
 * db_events_append() - append one event in replay order.
 * @db: database opened writable
 * @ev: the event; copied
 *
 * Returns 0, -EINVAL for an unknown kind or a negative cpu, or an SQLite
 * failure mapped to a negative errno.
 */
int db_events_append(struct db *db, const struct mcr_event *ev)
{
	int err;

	if (!ev->kind || ev->kind > MCR_EV_KIND_MAX || ev->cpu < 0)
		return -EINVAL;
	if (!db->ins_many) {
		err = db_events_prepare(db);
		if (err)
			return err;
	}
	db->buf[db->nbuf++] = *ev;
	db->kind_rows[ev->kind]++;
	db->appended++;
	if (db->nbuf == DB_INSERT_ROWS)
		return db_events_write_full(db);
	return 0;
}

/**
 * db_events_commit() - make every event appended so far durable now.
 * @db: database
 *
 * Inside a caller's db_begin() transaction the rows are written but the
 * commit is left to db_commit().
 */
int db_events_commit(struct db *db)
{
	int err = db_events_flush(db);

	return err ? err : db_events_commit_bulk(db);
}

/* Per-kind row counts into event_kinds, the total into meta event_count. */
static int db_events_count(struct db *db)
{
	uint64_t rows[MCR_EV_KIND_MAX + 1] = { 0 }, total = 0;
	sqlite3_stmt *st;
	unsigned int k;
	int rc, err = 0;

	if (db->created) {
		memcpy(rows, db->kind_rows, sizeof(rows));
	} else {
		/* Appended to a file opened later: count what the table holds. */
		rc = sqlite3_prepare_v2(db->sql, "SELECT kind, count(*) FROM events GROUP BY kind",
					-1, &st, NULL);
		if (rc != SQLITE_OK)
			return db_err(rc);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			int64_t kind = sqlite3_column_int64(st, 0);

			if (kind > 0 && kind <= MCR_EV_KIND_MAX)
				rows[kind] = (uint64_t)sqlite3_column_int64(st, 1);
		}
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return db_err(rc);
	}
	rc = sqlite3_prepare_v2(db->sql, "UPDATE event_kinds SET events = ? WHERE kind = ?",
				-1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_err(rc);
	for (k = 1; k <= MCR_EV_KIND_MAX; k++) {
		total += rows[k];
		sqlite3_bind_int64(st, 1, (int64_t)rows[k]);
		sqlite3_bind_int(st, 2, (int)k);
		err = db_events_step(st);
		if (err)
			break;
	}
	sqlite3_finalize(st);
	return err ? err : db_meta_set_int(db, "event_count", (int64_t)total);
}

/**
 * db_events_finish() - end the load: commit, count, index, leave WAL.
 * @db: database the events were appended to
 *
 * The only index is a partial one over the rare kinds (flush, rstat lock,
 * mkdir/rmdir, visits), for the typed views: replay reads in rowid order and
 * needs none, and per-kind counts are kept in event_kinds.  The file goes
 * back to a rollback journal so a finished trace is a single file.
 */
int db_events_finish(struct db *db)
{
	int err;

	err = db_events_commit(db);
	if (err)
		return err;
	if (db->in_txn)		/* inside the caller's db_begin() */
		return -EBUSY;
	err = db_exec(db, "BEGIN IMMEDIATE");
	if (err)
		return err;
	err = db_events_count(db);
	if (!err)
		err = db_exec(db, "CREATE INDEX IF NOT EXISTS events_rare ON events (kind)"
			      " WHERE kind > 3");
	if (err) {
		db_exec(db, "ROLLBACK");
		return err;
	}
	err = db_exec(db, "COMMIT");
	if (!err)
		err = db_exec(db, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE;");
	return err;
}

void db_events_release(struct db *db)
{
	sqlite3_finalize(db->ins_many);
	sqlite3_finalize(db->ins_one);
	db->ins_many = NULL;
	db->ins_one = NULL;
}
