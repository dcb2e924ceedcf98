/* SPDX-License-Identifier: GPL-2.0 */
/*
 * db_local.h - db/ internals shared by its files; not for other modules.
 */
#ifndef MCR_DB_LOCAL_H
#define MCR_DB_LOCAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

#include "event.h"
#include "store.h"

#define DB_BUSY_TIMEOUT_MS	5000

struct db {
	sqlite3			*sql;
	sqlite3_stmt		*ins_chunk;
	uint64_t		txn_rows;	/* chunks in the open bulk transaction */
	uint64_t		appended;	/* events stored through this handle */
	uint64_t		kind_rows[MCR_EV_KIND_MAX + 1];	/* ... per kind, not yet counted */
	struct db_chunk		**open;		/* db_events_append(): open chunk per CPU */
	unsigned int		nr_open;
	bool			writable;
	bool			older;		/* read-only open of a schema 1 file: no results */
	bool			runs_grid;	/* runs has batch_size and nr_cpus (not schema 2) */
	bool			created;	/* by db_create: kind_rows are the whole table */
	bool			row_events;	/* previous format: an events table, no chunks */
	bool			in_txn;		/* a transaction is open (bulk or db_begin) */
	bool			bulk;		/* ... and it is the bulk one, ours to commit */
};

/* schema.c */
int db_schema_create(struct db *db);
int db_schema_check(struct db *db);
int db_schema_events_table(struct db *db, bool chunks);

bool db_schema_has(struct db *db, const char *name);

/* results_schema.c */
int db_schema_results(struct db *db, bool temp);
bool db_schema_has_results(struct db *db);
int db_schema_upgrade_v1(struct db *db);
int db_schema_upgrade(struct db *db, int64_t ver);
bool db_schema_runs_grid(struct db *db);

/* db.c */
int db_err(int rc);
int db_exec(struct db *db, const char *sql);
int db_prepare(struct db *db, const char *sql, sqlite3_stmt **st);
int db_query_ints(struct db *db, const char *sql, int64_t *a, int64_t *b);
int db_step_reset(sqlite3_stmt *st);
int db_rows_foreach(struct db *db, const char *sql, int (*row)(sqlite3_stmt *st, void *ctx),
		    void *ctx);

/* validate.c: meta ranges and the hierarchy; -MCR_E_BAD_INPUT and @why */
int db_validate(struct db *db, char *why, size_t len);

/* events.c */
int db_events_flush(struct db *db);	/* put the open chunks, no commit */
void db_events_discard(struct db *db);	/* forget the open chunks (rollback) */
void db_events_release(struct db *db);

#endif
