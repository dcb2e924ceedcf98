// SPDX-License-Identifier: GPL-2.0
/*
 * trace.c - what the trace tables say before the first event is read: the
 * lost-event gaps, and info's summary of the cgroups and the event counts.
 * The cgroups table's rows are db.c's (db_cgroups_foreach), meta is sql.c's.
 */
#include <errno.h>
#include <string.h>

#include "error.h"

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

/*
 * One row of integers into @out (NULL as 0; all 0 if there is no row): 0,
 * or -MCR_E_CORRUPT for a damaged page, -EIO for any other failure.
 */
static int db_summary_ints(struct db *db, const char *sql, int64_t *out, int n)
{
	sqlite3_stmt *st;
	int i, rc;

	for (i = 0; i < n; i++)
		out[i] = 0;
	rc = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW)
			for (i = 0; i < n; i++)
				out[i] = sqlite3_column_int64(st, i);
		sqlite3_finalize(st);
	}
	if (rc == SQLITE_ROW)
		return 0;
	return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB ? -MCR_E_CORRUPT : -EIO;
}

/* The per-kind totals counted when the load finished: no pass over the events. */
static int64_t db_summary_counted(struct db *db, uint64_t *by_kind)
{
	sqlite3_stmt *st;
	int64_t total = 0, k, n;

	if (sqlite3_prepare_v2(db->sql, "SELECT kind, events FROM event_kinds", -1, &st,
			       NULL) != SQLITE_OK)
		return -MCR_E_SCHEMA;
	while (sqlite3_step(st) == SQLITE_ROW) {
		k = sqlite3_column_int64(st, 0);
		n = sqlite3_column_int64(st, 1);
		if (k >= 1 && k <= MCR_EV_KIND_MAX && n > 0) {
			by_kind[k] = (uint64_t)n;
			total += n;
		}
	}
	sqlite3_finalize(st);
	return total;
}

/**
 * db_summary() - what a trace holds, from its tables alone.
 * @db:  open database
 * @out: the cgroups table's counts and the event counts of the load
 *
 * Return: 0, or the first error, also in out->cgroups_err or out->events.
 */
int db_summary(struct db *db, struct db_summary *out)
{
	int64_t cg[3];

	memset(out, 0, sizeof(*out));
	out->events = db_summary_counted(db, out->by_kind);
	out->cgroups_err = db_summary_ints(db, "SELECT count(*), max(level), sum(path IS NULL)"
					   " FROM cgroups", cg, 3);
	out->cgroups = cg[0];
	out->cgroup_max_level = cg[1];
	out->cgroups_no_path = cg[2];
	return out->cgroups_err ?: out->events < 0 ? (int)out->events : 0;
}
