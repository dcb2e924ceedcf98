// SPDX-License-Identifier: GPL-2.0
/*
 * statreads.c - the stat_reads table: memory.stat reads logged during a live
 * capture (memcg-capture --read), line by line as printed.
 */
#include <errno.h>
#include <string.h>

#include "db.h"
#include "db_local.h"
#include "error.h"

int db_stat_read_put(struct db *db, const struct db_stat_read *r, const struct db_stat_line *lines,
		     size_t n)
{
	sqlite3_stmt *st;
	size_t i;
	int err;

	if (r->read < 0 || r->ts_after < r->ts_before || r->ts_before > INT64_MAX ||
	    r->ts_after > INT64_MAX || r->cgroup > INT64_MAX)
		return -EINVAL;
	/* the capture's bulk transaction when open (its writer commits it) */
	err = db_bulk_begin(db);
	if (err)
		return err;
	err = db_prepare(db, "INSERT INTO stat_reads (read, cgroup, ts_before, ts_after, pos, line,"
			 " name, value, unit) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", &st);
	if (err)
		return err;
	for (i = 0; i < n && !err; i++) {
		sqlite3_bind_int64(st, 1, r->read);
		sqlite3_bind_int64(st, 2, (int64_t)r->cgroup);
		sqlite3_bind_int64(st, 3, (int64_t)r->ts_before);
		sqlite3_bind_int64(st, 4, (int64_t)r->ts_after);
		sqlite3_bind_int64(st, 5, (int64_t)i);
		sqlite3_bind_text(st, 6, lines[i].line, (int)lines[i].len, SQLITE_STATIC);
		sqlite3_bind_text(st, 7, lines[i].name, -1, SQLITE_STATIC);
		if (lines[i].has_value)
			sqlite3_bind_int64(st, 8, lines[i].value);
		else
			sqlite3_bind_null(st, 8);
		if (lines[i].unit)
			sqlite3_bind_text(st, 9, lines[i].unit, -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(st, 9);
		err = db_step_reset(st);
		sqlite3_clear_bindings(st);
	}
	sqlite3_finalize(st);
	return err;
}

bool db_has_stat_reads(struct db *db)
{
	int64_t any = 1;

	if (!db_schema_has(db, "stat_reads"))
		return false;
	/* a query that fails says yes: reading the rows then reports it */
	db_query_ints(db, "SELECT EXISTS (SELECT 1 FROM stat_reads)", &any, NULL);
	return any;
}

struct stat_rows {
	int	(*fn)(const struct db_stat_read *r, const struct db_stat_line *l, void *ctx);
	void	*ctx;
};

static int stat_row(sqlite3_stmt *st, void *arg)
{
	struct stat_rows *sr = arg;
	struct db_stat_read r;
	struct db_stat_line l;

	r.read = sqlite3_column_int64(st, 0);
	r.cgroup = (uint64_t)sqlite3_column_int64(st, 1);
	r.ts_before = (uint64_t)sqlite3_column_int64(st, 2);
	r.ts_after = (uint64_t)sqlite3_column_int64(st, 3);
	l.line = (const char *)sqlite3_column_text(st, 4);
	l.len = (size_t)sqlite3_column_bytes(st, 4);
	l.name = (const char *)sqlite3_column_text(st, 5);
	l.has_value = sqlite3_column_type(st, 6) == SQLITE_INTEGER;
	l.value = sqlite3_column_int64(st, 6);
	l.unit = (const char *)sqlite3_column_text(st, 7);
	if (!l.line || !l.name)
		return -MCR_E_CORRUPT;
	return sr->fn(&r, &l, sr->ctx);
}

int db_stat_reads_foreach(struct db *db, int (*fn)(const struct db_stat_read *r,
						   const struct db_stat_line *l, void *ctx),
			  void *ctx)
{
	struct stat_rows sr = { fn, ctx };

	if (!db_has_stat_reads(db))
		return -ENOENT;
	return db_rows_foreach(db, "SELECT read, cgroup, ts_before, ts_after, line, name, value,"
			       " unit FROM stat_reads ORDER BY read, pos", stat_row, &sr);
}

int db_read_in_window(struct db *db, int64_t run_id, uint64_t cgroup, uint64_t lo, uint64_t hi,
		      struct db_read_match *m)
{
	sqlite3_stmt *st;
	int rc, err;

	if (lo > INT64_MAX || hi > INT64_MAX || cgroup > INT64_MAX)
		return -EINVAL;
	err = db_prepare(db, "SELECT read_id, ts, flushed, kernel_needs_flush FROM reads"
			 " WHERE run_id = ? AND cgroup_id = ? AND force = 0 AND ts BETWEEN ? AND ?"
			 " ORDER BY ts, read_id LIMIT 1", &st);
	if (err)
		return err;
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_int64(st, 2, (int64_t)cgroup);
	sqlite3_bind_int64(st, 3, (int64_t)lo);
	sqlite3_bind_int64(st, 4, (int64_t)hi);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		m->read_id = sqlite3_column_int64(st, 0);
		m->ts = (uint64_t)sqlite3_column_int64(st, 1);
		m->flushed = sqlite3_column_int(st, 2) != 0;
		m->kernel_needs_flush = sqlite3_column_int(st, 3) != 0;
		err = 0;
	} else {
		err = rc == SQLITE_DONE ? -ENOENT : db_err(rc);
	}
	sqlite3_finalize(st);
	return err;
}

struct err_rows {
	int	(*fn)(int kind, int item, int64_t error, void *ctx);
	void	*ctx;
};

static int err_row(sqlite3_stmt *st, void *arg)
{
	struct err_rows *er = arg;

	return er->fn(sqlite3_column_int(st, 0), sqlite3_column_int(st, 1),
		      sqlite3_column_int64(st, 2), er->ctx);
}

int db_read_errors_foreach(struct db *db, int64_t read_id,
			   int (*fn)(int kind, int item, int64_t error, void *ctx), void *ctx)
{
	struct err_rows er = { fn, ctx };
	sqlite3_stmt *st;
	int err;

	err = db_prepare(db, "SELECT kind, item, error FROM read_errors WHERE read_id = ?", &st);
	if (err)
		return err;
	sqlite3_bind_int64(st, 1, read_id);
	return db_stmt_rows(st, err_row, &er);
}

int db_first_forced_read(struct db *db, int64_t run_id, uint64_t *ts)
{
	sqlite3_stmt *st;
	int rc, err;

	err = db_prepare(db, "SELECT min(ts) FROM reads WHERE run_id = ? AND force = 1", &st);
	if (err)
		return err;
	sqlite3_bind_int64(st, 1, run_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_INTEGER) {
		*ts = (uint64_t)sqlite3_column_int64(st, 0);
		err = 0;
	} else {
		err = rc == SQLITE_ROW || rc == SQLITE_DONE ? -ENOENT : db_err(rc);
	}
	sqlite3_finalize(st);
	return err;
}
