// SPDX-License-Identifier: GPL-2.0
/*
 * results_check.c - the rules a result row is read back by (below), the
 * lag report's column names, and the checks of runs and validation rows
 * that the readers of results_read.c and results_lag.c run on every row.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "db.h"
#include "db_local.h"
#include "error.h"
#include "results.h"
#include "results_local.h"

/* replay's --batch and --cpus ranges: what a run can have simulated */
#define DB_RUN_MAX_BATCH	65536
#define DB_RUN_MAX_CPUS		8192

/*
 * The checks of result rows as they are read back.  Replay writes every row
 * from one pass over the trace, so each rule below holds for every row it
 * wrote; a row that breaks one was not written so (a damaged page, an edit),
 * and printing it would print a wrong number as if measured.  Refused with
 * -MCR_E_CORRUPT and a sentence in db_why() naming the table, the row's key,
 * the column and the value.  The rules, by column (db/results_schema.c):
 *
 * - Counts (reads, stale_reads, stranded_episodes, max_pending, and the
 *   |error| maxima and percentile, which are integers of the item's unit):
 *   SQLite integers >= 0.  A flipped bit may also change a value's type.
 * - Means, ages and durations (mean_read_error, mean_visible_error,
 *   max_error_age_ms, stranded_ms): finite numbers >= 0.
 * - stale_reads <= reads: a stale read is one of the cgroup's reads.
 * - p99_read_error and mean_read_error within [0, max_read_error], and
 *   mean_visible_error within [0, max_visible_error]: a percentile and a
 *   mean lie between the minimum (|error| >= 0) and the maximum.
 * - reads and stranded_episodes at most the run's events (runs.events):
 *   each read is one memcg_flush_stats event, each episode starts at one.
 * - max_error_age_ms and stranded_ms at most the trace's span (the larger of
 *   the capture window and the events' first to last ts), plus 1 ms for the
 *   rounding of ns to ms: both are stretches of trace time.
 * - max_settled_error, max_flush_error, noticeable_episodes (later columns):
 *   NULL in rows written before them, else integers >= 0; each maximum at
 *   most max_visible_error, and max_visible_error the larger of the two when
 *   both are there (the visible maximum is split, never more); noticeable
 *   episodes at most stranded_episodes (they are some of them).
 * - runs: counters integers >= 0, updates and flush_requests at most events
 *   (each is one event), flushes at most flush_requests, wall_s finite and
 *   >= 0, batch_size in [1, 65536] and nr_cpus in [1, 8192] (replay's
 *   --batch and --cpus ranges).
 * - series: min_error <= error <= max_error (the extremes of the interval
 *   that ends at the sample); stranded_episodes: end_ts not before start_ts.
 * - validation: counts; compared and skipped_before_sync at most
 *   flush_events, each match count at most compared.
 * - stat_read_checks: numbers integers; per >= 1; unit 'bytes' or 'count';
 *   verdict 'anchor', 'exact', 'within2' or 'off' as diff says (0, 0, 1 or 2
 *   in absolute value, above 2; an anchor shows what was printed); cause
 *   NULL but on an off row, then 'decision', 'window' or NULL;
 *   printed_error = printed - truth; printed - shown = diff x per, to the
 *   rounding of diff (per / 2).
 * - Fractions (cost_basis.shared_fraction, cost_report's
 *   atomic_shared_fraction) within [0, 1]; the calibration table's figures
 *   as sim_cost_table_check() wants them; cost estimates finite.
 *
 * An absolute bound on an error needs a bound on an event's value, which
 * the event check owns; the rules above catch what a damaged mean or
 * maximum does to the rows beside it.
 */
int db_res_bad(struct db *db, const char *fmt, ...)
{
	static const char tail[] = ": a damaged result table (replay the file again)";
	size_t n;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(db->why, sizeof(db->why), fmt, ap);
	va_end(ap);
	n = strlen(db->why);
	if (n + sizeof(tail) <= sizeof(db->why))
		memcpy(db->why + n, tail, sizeof(tail));
	return -MCR_E_CORRUPT;
}

const char *const db_lag_cols[DB_LAG_NR_COLS] = {
	"policy", "run_id", "flush_model", "cgroup", "cgroup_id", "level", "item", "unit", "reads",
	"stale_reads", "max_read_error", "p99_read_error", "mean_read_error", "max_visible_error",
	"mean_visible_error", "max_error_age_ms", "stranded_ms", "stranded_episodes", "max_pending",
	"max_settled_error", "max_flush_error", "noticeable_episodes",
};

const char *db_lag_col_name(enum db_lag_col c)
{
	return c < DB_LAG_NR_COLS ? db_lag_cols[c] : NULL;
}

/* Trace ns the results can span, in ms: the larger of the capture window and the events' span. */
static double db_trace_span_ms(struct db *db)
{
	int64_t a = 0, b = 0, span = 0;

	if (!db_meta_get_int(db, "capture_start_ns", &a) &&
	    !db_meta_get_int(db, "capture_end_ns", &b) && b > a)
		span = b - a;	/* db_validate(): 0 <= a <= b */
	a = b = 0;
	if (!db_events_span(db, &a, &b) && b > a && (double)b - (double)a > (double)span)
		return ((double)b - (double)a) / 1e6;
	return (double)span / 1e6;
}

static const char *db_lag_table(int col)
{
	return col >= DB_LAG_READS && col <= DB_LAG_STALE_READS ? "cgroup_summary" :
	       col == DB_LAG_MAX_SETTLED_ERROR || col == DB_LAG_MAX_FLUSH_ERROR ? "item_summary" :
	       col >= DB_LAG_STRANDED_MS ? "cgroup_summary" : "item_summary";
}

/* Columns later than their tables: NULL in rows written before them. */
static bool db_lag_col_late(int col)
{
	return col == DB_LAG_MAX_SETTLED_ERROR || col == DB_LAG_MAX_FLUSH_ERROR ||
	       col == DB_LAG_NOTICEABLE_EPISODES;
}

static bool db_lag_col_int(int col)
{
	return col == DB_LAG_READS || col == DB_LAG_STALE_READS || col == DB_LAG_MAX_READ_ERROR ||
	       col == DB_LAG_P99_READ_ERROR || col == DB_LAG_MAX_VISIBLE_ERROR ||
	       col == DB_LAG_STRANDED_EPISODES || col == DB_LAG_MAX_PENDING ||
	       db_lag_col_late(col);
}

static bool db_lag_col_real(int col)
{
	return col == DB_LAG_MEAN_READ_ERROR || col == DB_LAG_MEAN_VISIBLE_ERROR ||
	       col == DB_LAG_MAX_ERROR_AGE_MS || col == DB_LAG_STRANDED_MS;
}

/* @r is read from @st; the run's events are column DB_LAG_NR_COLS + 2. */
int db_lag_check_row(struct db_lag_check *c, sqlite3_stmt *st, const struct db_lag_row *r)
{
	char at[160];
	int col, t;
	double v, lim;
	int64_t events;

#define DB_LAG_BAD(col, fmt, ...)						\
	db_res_bad(c->db, "%s row %s: %s " fmt, db_lag_table(col), at,	\
		   db_lag_col_name(col), __VA_ARGS__)

	snprintf(at, sizeof(at), "(run %" PRId64 ", cgroup %" PRIu64 ", %s)", r->run_id,
		 r->cgroup_id, r->item);
	for (col = 0; col < DB_LAG_NR_COLS; col++) {
		t = sqlite3_column_type(st, col);
		if (t == SQLITE_NULL && db_lag_col_late(col))
			continue;
		if (db_lag_col_int(col)) {
			if (t != SQLITE_INTEGER)
				return DB_LAG_BAD(col, "'%.24s': not an integer", r->text[col] ?
						  r->text[col] : "NULL");
			if (sqlite3_column_int64(st, col) < 0)
				return DB_LAG_BAD(col, "%" PRId64 ": negative",
						  (int64_t)sqlite3_column_int64(st, col));
		} else if (db_lag_col_real(col)) {
			v = sqlite3_column_double(st, col);
			if ((t != SQLITE_FLOAT && t != SQLITE_INTEGER) || !isfinite(v) || v < 0)
				return DB_LAG_BAD(col, "'%.24s': not a finite number >= 0",
						  r->text[col] ? r->text[col] : "NULL");
		}
	}
	if (r->stale_reads > r->reads)
		return DB_LAG_BAD(DB_LAG_STALE_READS, "%" PRIu64 " above reads %" PRIu64,
				  r->stale_reads, r->reads);
	if (r->p99_read_error > r->max_read_error)
		return DB_LAG_BAD(DB_LAG_P99_READ_ERROR, "%" PRIu64 " above max_read_error %"
				  PRIu64, r->p99_read_error, r->max_read_error);
	if (r->mean_read_error > (double)r->max_read_error)
		return DB_LAG_BAD(DB_LAG_MEAN_READ_ERROR, "%g above max_read_error %" PRIu64,
				  r->mean_read_error, r->max_read_error);
	if (r->mean_visible_error > (double)r->max_visible_error)
		return DB_LAG_BAD(DB_LAG_MEAN_VISIBLE_ERROR, "%g above max_visible_error %" PRIu64,
				  r->mean_visible_error, r->max_visible_error);
	if (r->max_settled_error > r->max_visible_error)
		return DB_LAG_BAD(DB_LAG_MAX_SETTLED_ERROR, "%" PRIu64 " above max_visible_error %"
				  PRIu64, r->max_settled_error, r->max_visible_error);
	if (r->max_flush_error > r->max_visible_error)
		return DB_LAG_BAD(DB_LAG_MAX_FLUSH_ERROR, "%" PRIu64 " above max_visible_error %"
				  PRIu64, r->max_flush_error, r->max_visible_error);
	if (sqlite3_column_type(st, DB_LAG_MAX_SETTLED_ERROR) != SQLITE_NULL &&
	    sqlite3_column_type(st, DB_LAG_MAX_FLUSH_ERROR) != SQLITE_NULL &&
	    r->max_settled_error < r->max_visible_error && r->max_flush_error < r->max_visible_error)
		return DB_LAG_BAD(DB_LAG_MAX_VISIBLE_ERROR, "%" PRIu64 " above max(max_settled_error,"
				  " max_flush_error) %" PRIu64, r->max_visible_error,
				  r->max_settled_error > r->max_flush_error ?
				  r->max_settled_error : r->max_flush_error);
	if (r->noticeable_episodes > r->stranded_episodes)
		return DB_LAG_BAD(DB_LAG_NOTICEABLE_EPISODES, "%" PRIu64 " above stranded_episodes %"
				  PRIu64, r->noticeable_episodes, r->stranded_episodes);
	if (sqlite3_column_type(st, DB_LAG_NR_COLS + 2) == SQLITE_INTEGER) {
		events = sqlite3_column_int64(st, DB_LAG_NR_COLS + 2);
		if (events >= 0 && r->reads > (uint64_t)events)
			return DB_LAG_BAD(DB_LAG_READS, "%" PRIu64 " above the run's events %"
					  PRId64, r->reads, events);
		if (events >= 0 && r->stranded_episodes > (uint64_t)events)
			return DB_LAG_BAD(DB_LAG_STRANDED_EPISODES, "%" PRIu64
					  " above the run's events %" PRId64, r->stranded_episodes,
					  events);
	}
	if (c->span_ms < 0)
		c->span_ms = db_trace_span_ms(c->db);
	lim = c->span_ms + 1;
	if (r->max_error_age_ms > lim)
		return DB_LAG_BAD(DB_LAG_MAX_ERROR_AGE_MS, "%g above the trace's span %g ms",
				  r->max_error_age_ms, c->span_ms);
	if (r->stranded_ms > lim)
		return DB_LAG_BAD(DB_LAG_STRANDED_MS, "%g above the trace's span %g ms",
				  r->stranded_ms, c->span_ms);
#undef DB_LAG_BAD
	return 0;
}

/* What info prints of a run, by the rules of db_run_check() below. */
int db_run_info_check(struct db *db, sqlite3_stmt *st, const struct db_run_info *ri)
{
	int t = sqlite3_column_type(st, 4);

	if (t != SQLITE_NULL && (t != SQLITE_INTEGER || ri->events < 0))
		return db_res_bad(db, "runs row run_id %" PRId64 ": events '%.24s': not a count",
				  ri->run_id, (const char *)sqlite3_column_text(st, 4));
	if (sqlite3_column_type(st, 5) != SQLITE_NULL && (!isfinite(ri->wall_s) || ri->wall_s < 0))
		return db_res_bad(db, "runs row run_id %" PRId64 ": wall_s '%.24s': not a finite"
				  " number >= 0", ri->run_id, (const char *)sqlite3_column_text(st, 5));
	if (sqlite3_column_type(st, 7) != SQLITE_NULL &&
	    (sqlite3_column_int64(st, 7) < 1 || sqlite3_column_int64(st, 7) > DB_RUN_MAX_BATCH ||
	     sqlite3_column_int64(st, 8) < 1 || sqlite3_column_int64(st, 8) > DB_RUN_MAX_CPUS))
		return db_res_bad(db, "runs row run_id %" PRId64 ": batch_size %" PRId64 ", nr_cpus %"
				  PRId64 ": out of range [1, %d] and [1, %d]", ri->run_id,
				  (int64_t)sqlite3_column_int64(st, 7),
				  (int64_t)sqlite3_column_int64(st, 8), DB_RUN_MAX_BATCH,
				  DB_RUN_MAX_CPUS);
	return 0;
}

int db_run_check(sqlite3_stmt *st, void *ctx)
{
	static const char *const cols[] = {
		"events", "updates", "flush_requests", "flushes", "visits", "walk_steps",
		"pcpu_adds", "atomic_adds", "dropped_batches", "atomic_resets", "unknown_ids",
	};
	struct db *db = ctx;
	int64_t run = sqlite3_column_int64(st, 0), v[11], b, c;
	double wall = sqlite3_column_double(st, 12);
	int i, t;

	for (i = 0; i < 11; i++) {
		t = sqlite3_column_type(st, i + 1);
		v[i] = sqlite3_column_int64(st, i + 1);
		if (t == SQLITE_NULL)
			v[i] = 0;	/* a run that stopped before its counters: none */
		else if (t != SQLITE_INTEGER || v[i] < 0)
			return db_res_bad(db, "runs row run_id %" PRId64 ": %s '%.24s':"
					  " not a count", run, cols[i],
					  (const char *)sqlite3_column_text(st, i + 1));
	}
	if (v[1] > v[0] || v[2] > v[0])
		return db_res_bad(db, "runs row run_id %" PRId64 ": %s %" PRId64 " above events %"
				  PRId64, run, v[1] > v[0] ? "updates" : "flush_requests",
				  v[1] > v[0] ? v[1] : v[2], v[0]);
	if (v[3] > v[2])
		return db_res_bad(db, "runs row run_id %" PRId64 ": flushes %" PRId64 " above"
				  " flush_requests %" PRId64, run, v[3], v[2]);
	t = sqlite3_column_type(st, 12);
	if (t != SQLITE_NULL && (!isfinite(wall) || wall < 0))
		return db_res_bad(db, "runs row run_id %" PRId64 ": wall_s '%.24s': not a finite"
				  " number >= 0", run, (const char *)sqlite3_column_text(st, 12));
	if (sqlite3_column_type(st, 13) != SQLITE_NULL) {
		b = sqlite3_column_int64(st, 13);
		c = sqlite3_column_int64(st, 14);
		if (b < 1 || b > DB_RUN_MAX_BATCH)
			return db_res_bad(db, "runs row run_id %" PRId64 ": batch_size %" PRId64
					  " out of range [1, %d]", run, b, DB_RUN_MAX_BATCH);
		if (c < 1 || c > DB_RUN_MAX_CPUS)
			return db_res_bad(db, "runs row run_id %" PRId64 ": nr_cpus %" PRId64
					  " out of range [1, %d]", run, c, DB_RUN_MAX_CPUS);
	}
	return 0;
}

/*
 * A validation row: counts (integers >= 0, NULL none), of which compared and
 * skipped_before_sync are flush events and every match a compared one.
 */
int db_validation_check(struct db *db, sqlite3_stmt *st, const struct db_validation *v)
{
	static const char *const cols[] = {
		"flush_events", "compared", "skipped_before_sync", "stats_updates_match",
		"needs_flush_match", "stats_updates_match_plain", "needs_flush_match_plain",
		"max_hypotheses",
	};
	const uint64_t match[] = {
		v->stats_updates_match, v->needs_flush_match, v->stats_updates_match_plain,
		v->needs_flush_match_plain,
	};
	int i, t;

	for (i = 0; i < 8; i++) {
		t = sqlite3_column_type(st, i);
		if (t != SQLITE_NULL && (t != SQLITE_INTEGER || sqlite3_column_int64(st, i) < 0))
			return db_res_bad(db, "validation row run_id %" PRId64 ": %s '%.24s': not a"
					  " count", v->run_id, cols[i],
					  (const char *)sqlite3_column_text(st, i));
	}
	if (v->compared > v->flush_events || v->skipped_before_sync > v->flush_events)
		return db_res_bad(db, "validation row run_id %" PRId64 ": compared %" PRIu64
				  ", skipped_before_sync %" PRIu64 " of flush_events %" PRIu64,
				  v->run_id, v->compared, v->skipped_before_sync, v->flush_events);
	for (i = 0; i < 4; i++)
		if (match[i] > v->compared)
			return db_res_bad(db, "validation row run_id %" PRId64 ": %s %" PRIu64
					  " above compared %" PRIu64, v->run_id, cols[i + 3],
					  match[i], v->compared);
	return 0;
}
