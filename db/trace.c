// SPDX-License-Identifier: GPL-2.0
/*
 * trace.c - what the trace tables say before the first event is read: the
 * lost-event gaps, and which rare event kinds the events table holds.  The
 * cgroups table is db.c's (db_cgroups_foreach), meta is sql.c's.
 */
#include <errno.h>

#include "db.h"
#include "db_local.h"

struct db_gaps_walk {
	int	(*fn)(const struct db_gap *gap, void *arg);
	void	*arg;
};

static int db_gap_row(sqlite3_stmt *st, void *ctx)
{
	const struct db_gaps_walk *w = ctx;
	struct db_gap gap = {
		.cpu = sqlite3_column_int(st, 0),
		.ts = (uint64_t)sqlite3_column_int64(st, 1),
		.count = sqlite3_column_int64(st, 2),
	};

	return w->fn(&gap, w->arg);
}

/**
 * db_gaps_foreach() - call @fn for every gap, by timestamp.
 * @fn:  callback; a non-zero return stops the walk and is returned.
 */
int db_gaps_foreach(struct db *db, int (*fn)(const struct db_gap *gap, void *arg), void *arg)
{
	struct db_gaps_walk w = { fn, arg };

	return db_rows_foreach(db, "SELECT cpu, ts, count FROM gaps ORDER BY ts", db_gap_row, &w);
}
