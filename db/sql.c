// SPDX-License-Identifier: GPL-2.0
/*
 * sql.c - the SQL helpers under every file of db/: result codes, statements,
 * row loops, the meta table and the names in the schema.  It calls no other
 * file of db/, so the files above it (db.c, events.c, schema.c, validate.c,
 * ...) include no circle.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "db_local.h"
#include "error.h"

/* Map an SQLite result code to a negative errno or -MCR_E_*. */
int db_err(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_OK:
	case SQLITE_ROW:
	case SQLITE_DONE:
		return 0;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_READONLY:
		return -EROFS;
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return -EACCES;
	case SQLITE_CANTOPEN:
		return -EACCES;
	case SQLITE_NOTADB:
		return -MCR_E_NOT_SQLITE;
	case SQLITE_CORRUPT:
		return -MCR_E_CORRUPT;
	case SQLITE_ERROR:		/* no such table / column: the file lacks our schema */
		return -MCR_E_SCHEMA;
	case SQLITE_CONSTRAINT:
	case SQLITE_MISMATCH:
	case SQLITE_RANGE:
	case SQLITE_TOOBIG:
		return -EINVAL;
	default:
		return -EIO;
	}
}

int db_exec(struct db *db, const char *sql)
{
	return db_err(sqlite3_exec(db->sql, sql, NULL, NULL, NULL));
}

/*
 * Prepare for the result tables: any failure but memory means the file lacks
 * the table or column we name: a trace no replay has written to yet.
 */
int db_prepare(struct db *db, const char *sql, sqlite3_stmt **st)
{
	int rc = sqlite3_prepare_v2(db->sql, sql, -1, st, NULL);

	return rc == SQLITE_OK ? 0 : rc == SQLITE_NOMEM ? -ENOMEM : -MCR_E_SCHEMA;
}

/**
 * db_query_ints() - run @sql for one row of one or two integers
 * @b: the second column, or NULL for a one-column query
 *
 * A NULL column leaves its output alone, so the caller's initial value is
 * the answer for an empty aggregate (min() over no rows).
 *
 * Return: 0, -ENOENT if there is no row, or the error.
 */
int db_query_ints(struct db *db, const char *sql, int64_t *a, int64_t *b)
{
	sqlite3_stmt *st;
	int rc;

	rc = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_err(rc);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		if (sqlite3_column_type(st, 0) != SQLITE_NULL)
			*a = sqlite3_column_int64(st, 0);
		if (b && sqlite3_column_type(st, 1) != SQLITE_NULL)
			*b = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? -ENOENT : db_err(rc);
}

/*
 * Step an INSERT or UPDATE once and reset it for the next row; the bindings
 * stay, so a caller that leaves a column unbound in some rows clears them.
 */
int db_step_reset(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : db_err(rc);
}

/**
 * db_stmt_rows() - step @st, call @row for each row, finalize @st.
 * @row: reads the row's columns; a non-zero return stops and is returned.
 */
int db_stmt_rows(sqlite3_stmt *st, int (*row)(sqlite3_stmt *st, void *ctx), void *ctx)
{
	int rc, ret = 0;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ret = row(st, ctx);
		if (ret)
			break;
	}
	if (!ret && rc != SQLITE_DONE)
		ret = db_err(rc);
	sqlite3_finalize(st);
	return ret;
}

/**
 * db_rows_foreach() - run @sql and call @row for each row of the result.
 * @row: reads the row's columns; a non-zero return stops and is returned.
 */
int db_rows_foreach(struct db *db, const char *sql, int (*row)(sqlite3_stmt *st, void *ctx),
		    void *ctx)
{
	sqlite3_stmt *st;
	int rc;

	rc = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_err(rc);
	return db_stmt_rows(st, row, ctx);
}

/* The end of a statement's steps: SQLITE_DONE is 0, else the error. */
int db_done(int rc)
{
	return rc == SQLITE_DONE ? 0 : db_err(rc) ? db_err(rc) : -EIO;
}

/*
 * End of a foreach: @ret is the callback's verdict, @rc the last step. A
 * callback's stop wins over the step's code, which only says we left early.
 */
int db_rows_end(sqlite3_stmt *st, int rc, int ret)
{
	if (!ret)
		ret = db_done(rc);
	sqlite3_finalize(st);
	return ret;
}

/* End of a one-row get: no row is -ENOENT, so callers can tell absent from broken. */
int db_row_end(sqlite3_stmt *st, int rc)
{
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? -ENOENT : db_done(rc);
}

/* A text column, "-" for NULL. */
const char *db_col_text(sqlite3_stmt *st, int i)
{
	const char *s = (const char *)sqlite3_column_text(st, i);

	return s ? s : "-";
}

/* Is @name a table, view or index of the main schema?  Errors count as "no". */
bool db_schema_has(struct db *db, const char *name)
{
	sqlite3_stmt *st;
	bool found = false;

	if (sqlite3_prepare_v2(db->sql, "SELECT 1 FROM main.sqlite_master WHERE name = ?",
			       -1, &st, NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

sqlite3 *db_sqlite(struct db *db)
{
	return db->sql;
}

/* meta */

int db_meta_set(struct db *db, const char *key, const char *value)
{
	sqlite3_stmt *st;
	int rc;

	rc = sqlite3_prepare_v2(db->sql, "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
				-1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_err(rc);
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return db_err(rc);
}

int db_meta_set_int(struct db *db, const char *key, int64_t value)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRId64, value);
	return db_meta_set(db, key, buf);
}

/**
 * db_meta_get() - read a meta value.
 * @value: set to a malloc'd copy (NULL if the stored value is NULL)
 *
 * Returns 0, -ENOENT if the key is absent, or another negative error.
 */
int db_meta_get(struct db *db, const char *key, char **value)
{
	const unsigned char *text;
	sqlite3_stmt *st;
	int rc, err = 0;

	rc = sqlite3_prepare_v2(db->sql, "SELECT value FROM meta WHERE key = ?", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_err(rc);
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		text = sqlite3_column_text(st, 0);
		*value = text ? strdup((const char *)text) : NULL;
		if (text && !*value)
			err = -ENOMEM;
	} else {
		err = rc == SQLITE_DONE ? -ENOENT : db_err(rc);
	}
	sqlite3_finalize(st);
	return err;
}

/* Returns 0, -ENOENT if absent, -EINVAL if the value is not a decimal integer. */
int db_meta_get_int(struct db *db, const char *key, int64_t *value)
{
	char *text, *end;
	long long v;
	int err;

	err = db_meta_get(db, key, &text);
	if (err)
		return err;
	if (!text)
		return -EINVAL;
	errno = 0;
	v = strtoll(text, &end, 10);
	err = errno || end == text || *end ? -EINVAL : 0;
	free(text);
	if (!err)
		*value = v;
	return err;
}
