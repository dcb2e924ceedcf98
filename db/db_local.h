/* SPDX-License-Identifier: GPL-2.0 */
/*
 * db_local.h - db/ internals shared by its files; not for other modules.
 */
#ifndef MCR_DB_LOCAL_H
#define MCR_DB_LOCAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sqlite3.h>

#include "event.h"

/* Rows per multi-row INSERT, and rows per bulk transaction (a multiple of it). */
#define DB_INSERT_ROWS		64
#define DB_COMMIT_ROWS		(1600 * DB_INSERT_ROWS)	/* 102400 */
#define DB_EVENT_COLS		11			/* columns bound per event row */
#define DB_BUSY_TIMEOUT_MS	5000

struct db {
	sqlite3			*sql;
	sqlite3_stmt		*ins_many;	/* DB_INSERT_ROWS rows */
	sqlite3_stmt		*ins_one;	/* the remainder, one row at a time */
	uint64_t		txn_rows;	/* rows in the open bulk transaction */
	uint64_t		appended;	/* rows appended through this handle */
	uint64_t		kind_rows[MCR_EV_KIND_MAX + 1];
	unsigned int		nbuf;
	bool			writable;
	bool			older;		/* read-only open of a schema 1 file: no results */
	bool			created;	/* by db_create: kind_rows are the whole table */
	bool			in_txn;		/* a transaction is open (bulk or db_begin) */
	bool			bulk;		/* ... and it is the bulk one, ours to commit */
	struct mcr_event	buf[DB_INSERT_ROWS];
};

/* schema.c */
int db_schema_create(struct db *db);
int db_schema_check(struct db *db);
bool db_schema_has(struct db *db, const char *name);

/* results_schema.c */
int db_schema_results(struct db *db, bool temp);
bool db_schema_has_results(struct db *db);
int db_schema_upgrade_v1(struct db *db);

/* db.c */
int db_err(int rc);
int db_exec(struct db *db, const char *sql);
int db_rows_foreach(struct db *db, const char *sql, int (*row)(sqlite3_stmt *st, void *ctx),
		    void *ctx);

/* events.c */
int db_events_flush(struct db *db);	/* write the buffered rows, no commit */
void db_events_release(struct db *db);

#endif
