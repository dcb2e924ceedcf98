/* SPDX-License-Identifier: GPL-2.0 */
/*
 * results_local.h - the rows results.c holds until db_results_flush() and
 * results_held.c keeps, spills and inserts in key order; not for the rest
 * of db/.  Functions return 0 or a negative errno / -MCR_E_*.
 */
#ifndef MCR_DB_RESULTS_LOCAL_H
#define MCR_DB_RESULTS_LOCAL_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

#include "results.h"

struct db;
struct held_line;

/* Rows per bulk INSERT (db_results_bulk()): 832 parameters at most (item_summary's 13). */
#define DB_BULK_ROWS		64

/*
 * The most runs of the spill file one merge reads at once, one buffer each
 * (results_held.c): more, and held_reduce() merges groups of them first,
 * writing the spill file again.
 */
#define DB_HELD_WAYS		512

/* A run of the spill file: its records' bytes [off, end). */
struct held_span {
	uint64_t		off, end;
};

/*
 * The rows of one table held until db_results_flush() inserts them, in key
 * order: each line's rows lie next to each other in the table's B-tree, and
 * a new run's (the largest run_id) after every row already there.
 */
struct held {
	struct held_line	*lines;
	size_t			nr, cap;
	uint32_t		*hash;		/* line index + 1, open addressing */
	size_t			hash_cap;	/* a power of 2, above 2 x nr */
	size_t			bytes;		/* of every line's buf */
	size_t			keys;		/* key columns bound of a row (up to 4) */
	size_t			cols;		/* values of a row */
	int			spill;		/* spill file, -1 none yet */
	uint64_t		spill_len;
	struct held_span	*runs;		/* each spill's records in it, in write order */
	size_t			nr_runs, cap_runs;
	size_t			limit;		/* bytes held before a spill, 0: DB_HELD_BYTES */
	struct held		*peer;		/* shares the limit: spilled together; or NULL */
	size_t			ways;		/* runs a merge reads at once, 0: DB_HELD_WAYS */
	size_t			ways_max;	/* the most runs read at once by a merge */
	sqlite3_stmt		*bulk;		/* DB_BULK_ROWS rows */
	sqlite3_stmt		*one;		/* one row */
	/*
	 * Or, if set, a line's rows go in as pieces instead (series_lines):
	 * the keys, the first row's ts, the ts step and a JSON array of the
	 * rows' other values, one row per DB_PIECE_TEXT bytes of them at most.
	 */
	sqlite3_stmt		*piece;
};

/*
 * Bytes of a piece's JSON rows at most: its row stays within the B-tree
 * page of its key (SQLite moves payload past about 1000 bytes of a 4 KiB
 * page of a WITHOUT ROWID table to an overflow page, most of it unused).
 */
#define DB_PIECE_TEXT		960

/*
 * One row of line @key: @v[0] its ts, increasing along the line (-EINVAL),
 * then @h->cols - 1 more values.
 */
int db_held_add(struct held *h, const int64_t *key, const uint64_t *v);
/* Insert every row @h holds, in key order; then @h is empty, as db_held_free() leaves it. */
int db_held_insert(struct held *h);
void db_held_free(struct held *h);
/* @one's INSERT prepared with its VALUES row repeated for a bulk insert (@h->bulk). */
int db_results_bulk(struct db *db, const char *one, sqlite3_stmt **st);
/*
 * Insert @nr gathered rows: through @bulk (db_results_bulk() of @one) if
 * they are DB_BULK_ROWS, else one by one through @one.  @bind(@ctx, st, at,
 * i) binds row @i as the row whose first parameter is @at + 1.
 */
int db_results_rows(sqlite3_stmt *bulk, sqlite3_stmt *one, int nr,
		    void (*bind)(void *ctx, sqlite3_stmt *st, int at, int i), void *ctx);

/* stat_read_checks (statchecks.c): names <-> enums; -EINVAL for another name. */
int db_stat_verdict_parse(const char *s, enum db_stat_verdict *v);
int db_stat_cause_parse(const char *s, enum db_stat_cause *c);
/*
 * The rules of a stat_read_checks row (results_check.c): 0 or -EINVAL.  And
 * the row of @st (columns of statchecks.c's STAT_CHECK_COLS) read into @r by
 * them: -MCR_E_CORRUPT with db_why() naming row, column and value.
 */
int db_stat_check_rules(const struct db_stat_check *r);
int db_stat_check_row(struct db *db, sqlite3_stmt *st, struct db_stat_check *r);

#endif /* MCR_DB_RESULTS_LOCAL_H */
