// SPDX-License-Identifier: GPL-2.0
/*
 * results_read.c - reading the result tables back (db/results.h): the lag
 * report rows, runs, validation and mismatches, and what a pass needs to know
 * before it starts (the cgroups that are read, a cgroup by path).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "db_local.h"
#include "error.h"
#include "results.h"

/* replay's --batch and --cpus ranges: what a run can have simulated */
#define DB_RUN_MAX_BATCH	65536
#define DB_RUN_MAX_CPUS		8192

static int db_done(int rc)
{
	return rc == SQLITE_DONE ? 0 : db_err(rc) ? db_err(rc) : -EIO;
}

/*
 * End of a foreach: @ret is the callback's verdict, @rc the last step. A
 * callback's stop wins over the step's code, which only says we left early.
 */
static int db_rows_end(sqlite3_stmt *st, int rc, int ret)
{
	if (!ret)
		ret = db_done(rc);
	sqlite3_finalize(st);
	return ret;
}

/* End of a one-row get: no row is -ENOENT, so callers can tell absent from broken. */
static int db_row_end(sqlite3_stmt *st, int rc)
{
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? -ENOENT : db_done(rc);
}

static int db_u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/*
 * The cgroups some reader asked about (non-forced memcg_flush_stats), by id.
 * The events live in compressed chunks, so this is one streaming pass over
 * them (tens of millions of events a second); reads are rare, so the set
 * stays small.
 */
int db_read_cgroups_foreach(struct db *db, int (*fn)(uint64_t id, void *ctx), void *ctx)
{
	uint64_t *ids = NULL, *n;
	size_t nr = 0, cap = 0, i;
	struct db_iter *it;
	struct mcr_event ev;
	int ret;

	ret = db_iter_open(db, &it);
	if (ret)
		return ret;
	while ((ret = db_iter_next(it, &ev)) == 1) {
		if (ev.kind != MCR_EV_FLUSH || (ev.flags & MCR_FLUSH_FORCE))
			continue;
		if (nr && ids[nr - 1] == ev.id)
			continue;	/* the same reader again: the common case */
		if (nr == cap) {
			cap = cap ? 2 * cap : 256;
			n = realloc(ids, cap * sizeof(*ids));
			if (!n) {
				ret = -ENOMEM;
				break;
			}
			ids = n;
		}
		ids[nr++] = ev.id;
	}
	db_iter_close(it);
	if (!ret && nr) {
		qsort(ids, nr, sizeof(*ids), db_u64_cmp);
		for (i = 0; !ret && i < nr; i++)
			if (!i || ids[i] != ids[i - 1])
				ret = fn(ids[i], ctx);
	}
	free(ids);
	return ret;
}

int db_cgroup_by_path(struct db *db, const char *path, uint64_t *id)
{
	sqlite3_stmt *st;
	int rc, ret;

	ret = db_prepare(db, "SELECT id FROM cgroups WHERE path = ? ORDER BY removed_ts >= 0, id"
			 " LIMIT 1", &st);
	if (ret)
		return ret;
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*id = (uint64_t)sqlite3_column_int64(st, 0);
	return db_row_end(st, rc);
}

int db_replay_run_exists(struct db *db, int64_t run_id)
{
	sqlite3_stmt *st;
	int rc, ret;

	if (db->older)
		return -MCR_E_OLDER;

	ret = db_prepare(db, "SELECT 1 FROM runs WHERE kind = 'replay' AND (?1 <= 0 OR run_id = ?1)"
			 " LIMIT 1", &st);
	if (ret)
		return ret;
	sqlite3_bind_int64(st, 1, run_id);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : db_done(rc);
}

static const char *col_text(sqlite3_stmt *st, int i)
{
	const char *s = (const char *)sqlite3_column_text(st, i);

	return s ? s : "-";
}

static int db_res_bad(struct db *db, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* What info prints of a run, by the rules of db_run_check() below. */
static int db_run_info_check(struct db *db, sqlite3_stmt *st, const struct db_run_info *ri)
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

int db_runs_foreach(struct db *db, int (*fn)(const struct db_run_info *r, void *ctx), void *ctx)
{
	struct db_run_info ri;
	sqlite3_stmt *st;
	int rc, ret;

	if (db->older)
		return -MCR_E_OLDER;

	/* schema 2 read as it is: th = b c, stranded_limit = th + (b - 1) c */
	ret = db_prepare(db, db->runs_grid ?
			 "SELECT run_id, kind, policy, flush_model, events, wall_s, started_at,"
			 " batch_size, nr_cpus FROM runs ORDER BY run_id" :
			 "SELECT run_id, kind, policy, flush_model, events, wall_s, started_at,"
			 " CASE WHEN 2 * th > stranded_limit THEN th / (2 * th - stranded_limit) END,"
			 " CASE WHEN 2 * th > stranded_limit THEN 2 * th - stranded_limit END"
			 " FROM runs ORDER BY run_id", &st);
	if (ret)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ri.run_id = sqlite3_column_int64(st, 0);
		ri.kind = col_text(st, 1);
		ri.policy = col_text(st, 2);
		ri.flush_model = col_text(st, 3);
		ri.events = sqlite3_column_int64(st, 4);
		ri.wall_s = sqlite3_column_double(st, 5);
		ri.started_at = col_text(st, 6);
		ri.batch_size = (unsigned int)sqlite3_column_int64(st, 7);
		ri.nr_cpus = (unsigned int)sqlite3_column_int64(st, 8);
		ret = db_run_info_check(db, st, &ri);
		if (!ret)
			ret = fn(&ri, ctx);
		if (ret)
			break;
	}
	return db_rows_end(st, rc, ret);
}

static const char *const db_lag_cols[DB_LAG_NR_COLS] = {
	"policy", "run_id", "flush_model", "cgroup", "cgroup_id", "level", "item", "unit", "reads",
	"stale_reads", "max_read_error", "p99_read_error", "mean_read_error", "max_visible_error",
	"mean_visible_error", "max_error_age_ms", "stranded_ms", "stranded_episodes", "max_pending",
};

const char *db_lag_col_name(enum db_lag_col c)
{
	return c < DB_LAG_NR_COLS ? db_lag_cols[c] : NULL;
}

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
 * - runs: counters integers >= 0, updates and flush_requests at most events
 *   (each is one event), flushes at most flush_requests, wall_s finite and
 *   >= 0, batch_size in [1, 65536] and nr_cpus in [1, 8192] (replay's
 *   --batch and --cpus ranges).
 * - series: min_error <= error <= max_error (the extremes of the interval
 *   that ends at the sample); stranded_episodes: end_ts not before start_ts.
 * - validation: counts; compared and skipped_before_sync at most
 *   flush_events, each match count at most compared.
 * - Fractions (cost_basis.shared_fraction, cost_report's
 *   atomic_shared_fraction) within [0, 1]; the calibration table's figures
 *   as sim_cost_table_check() wants them; cost estimates finite.
 *
 * An absolute bound on an error needs a bound on an event's value, which
 * the event check owns; the rules above catch what a damaged mean or
 * maximum does to the rows beside it.
 */
static int db_res_bad(struct db *db, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int db_res_bad(struct db *db, const char *fmt, ...)
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

struct db_lag_check {
	struct db	*db;
	double		span_ms;	/* < 0: not computed yet */
};

static const char *db_lag_table(int col)
{
	return col >= DB_LAG_READS && col <= DB_LAG_STALE_READS ? "cgroup_summary" :
	       col >= DB_LAG_STRANDED_MS ? "cgroup_summary" : "item_summary";
}

static bool db_lag_col_int(int col)
{
	return col == DB_LAG_READS || col == DB_LAG_STALE_READS || col == DB_LAG_MAX_READ_ERROR ||
	       col == DB_LAG_P99_READ_ERROR || col == DB_LAG_MAX_VISIBLE_ERROR ||
	       col == DB_LAG_STRANDED_EPISODES || col == DB_LAG_MAX_PENDING;
}

static bool db_lag_col_real(int col)
{
	return col == DB_LAG_MEAN_READ_ERROR || col == DB_LAG_MEAN_VISIBLE_ERROR ||
	       col == DB_LAG_MAX_ERROR_AGE_MS || col == DB_LAG_STRANDED_MS;
}

/* @r is read from @st; the run's events are column DB_LAG_NR_COLS + 2. */
static int db_lag_check_row(struct db_lag_check *c, sqlite3_stmt *st, const struct db_lag_row *r)
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

/*
 * SELECT <every column> FROM the right view, filtered, in tree order, and the
 * run's batch and CPUs from runs (schema 2: from th = b c and
 * stranded_limit = th + (b - 1) c).
 */
static char *db_lag_sql(const struct db *db, const struct db_lag_filter *f, bool all)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int i;

	if (!m)
		return NULL;
	fprintf(m, "SELECT ");
	/* a file no writer opened since the units were fixed: old labels of pages */
	for (i = 0; i < DB_LAG_NR_COLS; i++)
		if (i == DB_LAG_UNIT)
			fprintf(m, "CASE WHEN q.unit IN " DB_ITEM_UNITS_OLD " THEN 'pages'"
				" ELSE q.unit END, ");
		else
			fprintf(m, "q.%s, ", db_lag_cols[i]);
	fprintf(m, "g.b, g.c, g.ev FROM (SELECT ");
	for (i = 0; i < DB_LAG_NR_COLS; i++)
		fprintf(m, "%s%s", i ? ", " : "", db_lag_cols[i]);
	if (f->worst_only && f->nr_runs)
		fprintf(m, " FROM (SELECT l.*, row_number() OVER (PARTITION BY l.run_id, l.cgroup_id"
			" ORDER BY l.unit = 'events', l.max_read_error DESC, l.max_visible_error DESC,"
			" l.item) AS rank FROM lag_report_all l) WHERE rank = 1");
	else
		fprintf(m, " FROM %s WHERE 1", f->worst_only ? "cgroup_lag_report" :
			f->nr_runs || all ? "lag_report_all" : "lag_report");
	if (f->nr_runs) {
		fprintf(m, " AND run_id IN (");
		for (i = 0; i < f->nr_runs; i++)
			fprintf(m, "%s%" PRId64, i ? "," : "", f->runs[i]);
		fprintf(m, ")");
	}
	if (f->cgroup)
		fprintf(m, " AND cgroup = ?1");
	if (db->runs_grid)
		fprintf(m, ") q LEFT JOIN (SELECT run_id AS rid, batch_size AS b, nr_cpus AS c,"
			" events AS ev FROM runs) g ON g.rid = q.run_id");
	else
		fprintf(m, ") q LEFT JOIN (SELECT run_id AS rid, th / (2 * th - stranded_limit) AS b,"
			" 2 * th - stranded_limit AS c, events AS ev FROM runs"
			" WHERE 2 * th > stranded_limit) g ON g.rid = q.run_id");
	fprintf(m, " ORDER BY q.level IS NULL, q.level, q.cgroup, q.item, q.policy, q.run_id");
	if (fclose(m)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int db_lag_walk(struct db *db, const struct db_lag_filter *f, bool all,
		       int (*fn)(const struct db_lag_row *row, void *ctx), void *ctx)
{
	struct db_lag_check check = { db, -1 };
	struct db_lag_row r;
	sqlite3_stmt *st;
	char *sql;
	int rc, ret, i;

	if (db->older)
		return -MCR_E_OLDER;
	sql = db_lag_sql(db, f, all);
	if (!sql)
		return -ENOMEM;
	ret = db_prepare(db, sql, &st);
	free(sql);
	if (ret)
		return ret;
	if (f->cgroup)
		sqlite3_bind_text(st, 1, f->cgroup, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		memset(&r, 0, sizeof(r));
		for (i = 0; i < DB_LAG_NR_COLS; i++)
			r.text[i] = (const char *)sqlite3_column_text(st, i);
		r.policy = col_text(st, DB_LAG_POLICY);
		r.run_id = sqlite3_column_int64(st, DB_LAG_RUN_ID);
		r.flush_model = col_text(st, DB_LAG_FLUSH_MODEL);
		r.cgroup = col_text(st, DB_LAG_CGROUP);
		r.cgroup_id = (uint64_t)sqlite3_column_int64(st, DB_LAG_CGROUP_ID);
		r.level = sqlite3_column_type(st, DB_LAG_LEVEL) == SQLITE_NULL ? -1 :
			  sqlite3_column_int(st, DB_LAG_LEVEL);
		r.item = col_text(st, DB_LAG_ITEM);
		r.unit = col_text(st, DB_LAG_UNIT);
		r.reads = (uint64_t)sqlite3_column_int64(st, DB_LAG_READS);
		r.stale_reads = (uint64_t)sqlite3_column_int64(st, DB_LAG_STALE_READS);
		r.max_read_error = (uint64_t)sqlite3_column_int64(st, DB_LAG_MAX_READ_ERROR);
		r.p99_read_error = (uint64_t)sqlite3_column_int64(st, DB_LAG_P99_READ_ERROR);
		r.mean_read_error = sqlite3_column_double(st, DB_LAG_MEAN_READ_ERROR);
		r.max_visible_error = (uint64_t)sqlite3_column_int64(st, DB_LAG_MAX_VISIBLE_ERROR);
		r.mean_visible_error = sqlite3_column_double(st, DB_LAG_MEAN_VISIBLE_ERROR);
		r.max_error_age_ms = sqlite3_column_double(st, DB_LAG_MAX_ERROR_AGE_MS);
		r.stranded_ms = sqlite3_column_double(st, DB_LAG_STRANDED_MS);
		r.stranded_episodes = (uint64_t)sqlite3_column_int64(st, DB_LAG_STRANDED_EPISODES);
		r.max_pending = (uint64_t)sqlite3_column_int64(st, DB_LAG_MAX_PENDING);
		r.batch_size = (unsigned int)sqlite3_column_int64(st, DB_LAG_NR_COLS);
		r.nr_cpus = (unsigned int)sqlite3_column_int64(st, DB_LAG_NR_COLS + 1);
		r.batch_text = (const char *)sqlite3_column_text(st, DB_LAG_NR_COLS);
		r.cpus_text = (const char *)sqlite3_column_text(st, DB_LAG_NR_COLS + 1);
		ret = db_lag_check_row(&check, st, &r);
		if (!ret && fn)
			ret = fn(&r, ctx);
		if (ret)
			break;
	}
	return db_rows_end(st, rc, ret);
}

int db_lag_foreach(struct db *db, const struct db_lag_filter *f,
		   int (*fn)(const struct db_lag_row *row, void *ctx), void *ctx)
{
	return db_lag_walk(db, f, false, fn, ctx);
}

static int db_run_check(sqlite3_stmt *st, void *ctx)
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

static int db_validation_row_check(sqlite3_stmt *st, void *ctx)
{
	struct db_validation v;
	char *hist = NULL;
	int err = db_validation_get(ctx, sqlite3_column_int64(st, 0), &v, &hist);

	free(hist);
	return err;
}

/**
 * db_results_check() - check every row of runs, of lag_report_all
 * (item_summary with cgroup_summary) and of validation by the rules above,
 * before a report
 * prints any.
 * Return: 0, -MCR_E_CORRUPT with db_why() naming the row, or the error.
 */
int db_results_check(struct db *db)
{
	struct db_lag_filter all = { 0 };
	int err;

	if (db->older)
		return -MCR_E_OLDER;
	err = db_rows_foreach(db, db->runs_grid ?
			      "SELECT run_id, events, updates, flush_requests, flushes, visits,"
			      " walk_steps, pcpu_adds, atomic_adds, dropped_batches, atomic_resets,"
			      " unknown_ids, wall_s, batch_size, nr_cpus FROM runs"
			      " ORDER BY run_id" :
			      "SELECT run_id, events, updates, flush_requests, flushes, visits,"
			      " walk_steps, pcpu_adds, atomic_adds, dropped_batches, atomic_resets,"
			      " unknown_ids, wall_s, NULL, NULL FROM runs ORDER BY run_id",
			      db_run_check, db);
	if (!err)
		err = db_lag_walk(db, &all, true, NULL, NULL);
	if (!err)
		err = db_rows_foreach(db, "SELECT run_id FROM validation ORDER BY run_id",
				      db_validation_row_check, db);
	return err;
}

int db_mismatches_foreach(struct db *db, int64_t run_id, int64_t limit,
			  int (*fn)(const struct db_mismatch *m, void *ctx), void *ctx)
{
	struct db_mismatch m;
	sqlite3_stmt *st;
	int rc, ret;

	if (db->older)
		return -MCR_E_OLDER;

	ret = db_prepare(db, "SELECT m.ts, m.cpu, m.cgroup_id, coalesce(c.path, '#' || m.cgroup_id),"
			 " m.kernel_stats_updates, m.sim_stats_updates, m.kernel_needs_flush,"
			 " m.sim_needs_flush, m.cause, m.context FROM validation_mismatch m"
			 " LEFT JOIN cgroups c ON c.id = m.cgroup_id WHERE m.run_id = ?"
			 " ORDER BY m.rowid LIMIT ?", &st);
	if (ret)
		return ret;
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_int64(st, 2, limit);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		m = (struct db_mismatch){
			.run_id = run_id,
			.ts = (uint64_t)sqlite3_column_int64(st, 0),
			.cpu = sqlite3_column_int(st, 1),
			.cgroup_id = (uint64_t)sqlite3_column_int64(st, 2),
			.path = col_text(st, 3),
			.kernel_stats_updates = sqlite3_column_int64(st, 4),
			.sim_stats_updates = sqlite3_column_int64(st, 5),
			.kernel_needs_flush = sqlite3_column_int(st, 6),
			.sim_needs_flush = sqlite3_column_int(st, 7),
			.cause = (const char *)sqlite3_column_text(st, 8),
			.context = (const char *)sqlite3_column_text(st, 9),
		};
		ret = fn(&m, ctx);
		if (ret)
			break;
	}
	return db_rows_end(st, rc, ret);
}

/*
 * A validation row: counts (integers >= 0, NULL none), of which compared and
 * skipped_before_sync are flush events and every match a compared one.
 */
static int db_validation_check(struct db *db, sqlite3_stmt *st, const struct db_validation *v)
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

/* The validation row of @run_id; *out's strings stay NULL, *diff_hist is malloc'd JSON. */
int db_validation_get(struct db *db, int64_t run_id, struct db_validation *out, char **diff_hist)
{
	sqlite3_stmt *st;
	int rc, ret;

	*diff_hist = NULL;
	if (db->older)
		return -MCR_E_OLDER;
	ret = db_prepare(db, "SELECT flush_events, compared, skipped_before_sync,"
			 " stats_updates_match, needs_flush_match, stats_updates_match_plain,"
			 " needs_flush_match_plain, max_hypotheses, coalesce(diff_hist, '{}')"
			 " FROM validation WHERE run_id = ?", &st);
	if (ret)
		return ret;
	sqlite3_bind_int64(st, 1, run_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		memset(out, 0, sizeof(*out));
		out->run_id = run_id;
		out->flush_events = (uint64_t)sqlite3_column_int64(st, 0);
		out->compared = (uint64_t)sqlite3_column_int64(st, 1);
		out->skipped_before_sync = (uint64_t)sqlite3_column_int64(st, 2);
		out->stats_updates_match = (uint64_t)sqlite3_column_int64(st, 3);
		out->needs_flush_match = (uint64_t)sqlite3_column_int64(st, 4);
		out->stats_updates_match_plain = (uint64_t)sqlite3_column_int64(st, 5);
		out->needs_flush_match_plain = (uint64_t)sqlite3_column_int64(st, 6);
		out->max_hypotheses = (uint64_t)sqlite3_column_int64(st, 7);
		ret = db_validation_check(db, st, out);
		if (ret) {
			sqlite3_finalize(st);
			return ret;
		}
		*diff_hist = strdup((const char *)sqlite3_column_text(st, 8));
		if (!*diff_hist)
			rc = SQLITE_NOMEM;
	}
	return db_row_end(st, rc);
}

/*
 * Plot readers (report --format html): the samples, reads, episodes and
 * counters of one run, and what the trace says about itself.
 */
int db_item_by_name(struct db *db, const char *name, int *kind, int *item)
{
	sqlite3_stmt *st;
	int rc, ret;
	char k[16];

	/* "state:12" / "lruvec:12" / "events:3": the names lag_report gives unnamed items */
	if (sscanf(name, "%15[a-z]:%d", k, item) == 2) {
		*kind = !strcmp(k, "events") ? 3 : 1;
		return 0;
	}
	ret = db_prepare(db, "SELECT kind, item FROM items WHERE name = ? ORDER BY kind LIMIT 1", &st);
	if (ret)
		return ret;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		/* lruvec items are merged into state in the result tables */
		*kind = sqlite3_column_int(st, 0) == 2 ? 1 : sqlite3_column_int(st, 0);
		*item = sqlite3_column_int(st, 1);
	}
	return db_row_end(st, rc);
}

int db_series_foreach(struct db *db, int64_t run_id, uint64_t cgroup_id, int kind, int item,
		      int (*fn)(const struct db_series *s, void *ctx), void *ctx)
{
	struct db_series s = { .run_id = run_id, .cgroup_id = cgroup_id, .kind = kind, .item = item };
	sqlite3_stmt *st;
	int rc, ret;

	ret = db_prepare(db, "SELECT ts, error, min_error, max_error FROM series WHERE run_id = ?"
			 " AND cgroup_id = ? AND kind = ? AND item = ? ORDER BY ts", &st);
	if (ret)
		return ret;
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_int64(st, 2, (int64_t)cgroup_id);
	sqlite3_bind_int(st, 3, kind);
	sqlite3_bind_int(st, 4, item);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		s.ts = (uint64_t)sqlite3_column_int64(st, 0);
		s.error = sqlite3_column_int64(st, 1);
		s.min_error = sqlite3_column_int64(st, 2);
		s.max_error = sqlite3_column_int64(st, 3);
		/* the extremes of (previous sample, ts] include the sample at ts */
		if (s.min_error > s.error || s.error > s.max_error) {
			ret = db_res_bad(db, "series row (run %" PRId64 ", cgroup %" PRIu64 ", kind %d"
					 ", item %d, ts %" PRIu64 "): error %" PRId64 " outside its"
					 " [min_error %" PRId64 ", max_error %" PRId64 "]", run_id,
					 cgroup_id, kind, item, s.ts, s.error, s.min_error,
					 s.max_error);
			break;
		}
		ret = fn(&s, ctx);
		if (ret)
			break;
	}
	return db_rows_end(st, rc, ret);
}

int db_item_reads_foreach(struct db *db, const struct db_reads_filter *f,
			  int (*fn)(const struct db_item_read *r, void *ctx), void *ctx)
{
	struct db_item_read r;
	sqlite3_stmt *st;
	int rc, ret;

	ret = db_prepare(db, "SELECT r.ts, r.cgroup_id, r.force, r.flushed, r.stranded, r.stale,"
			 " coalesce(e.error, 0) FROM reads r LEFT JOIN read_errors e"
			 " ON e.read_id = r.read_id AND e.kind = ?4 AND e.item = ?5"
			 " WHERE r.run_id = ?1 AND (?2 = 0 OR r.cgroup_id = ?2) AND r.force = ?3"
			 " ORDER BY r.ts", &st);
	if (ret)
		return ret;
	sqlite3_bind_int64(st, 1, f->run_id);
	sqlite3_bind_int64(st, 2, (int64_t)f->cgroup_id);
	sqlite3_bind_int(st, 3, f->forced);
	sqlite3_bind_int(st, 4, f->kind);
	sqlite3_bind_int(st, 5, f->item);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r = (struct db_item_read){
			.ts = (uint64_t)sqlite3_column_int64(st, 0),
			.cgroup_id = (uint64_t)sqlite3_column_int64(st, 1),
			.force = sqlite3_column_int(st, 2), .flushed = sqlite3_column_int(st, 3),
			.stranded = sqlite3_column_int(st, 4), .stale = sqlite3_column_int(st, 5),
			.error = sqlite3_column_int64(st, 6),
		};
		ret = fn(&r, ctx);
		if (ret)
			break;
	}
	return db_rows_end(st, rc, ret);
}

int db_episodes_foreach(struct db *db, int64_t run_id, uint64_t cgroup_id,
			int (*fn)(const struct db_episode *e, void *ctx), void *ctx)
{
	struct db_episode e;
	sqlite3_stmt *st;
	int rc, ret;

	ret = db_prepare(db, "SELECT start_ts, end_ts, open, coalesce(worst_kind, 0),"
			 " coalesce(worst_item, 0), coalesce(worst_error, 0), reads_skipped,"
			 " coalesce(max_pending, 0) FROM stranded_episodes WHERE run_id = ?"
			 " AND cgroup_id = ? ORDER BY start_ts", &st);
	if (ret)
		return ret;
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_int64(st, 2, (int64_t)cgroup_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		e = (struct db_episode){
			.run_id = run_id, .cgroup_id = cgroup_id,
			.start_ts = (uint64_t)sqlite3_column_int64(st, 0),
			.end_ts = (uint64_t)sqlite3_column_int64(st, 1),
			.open = sqlite3_column_int(st, 2), .worst_kind = sqlite3_column_int(st, 3),
			.worst_item = sqlite3_column_int(st, 4),
			.worst_error = sqlite3_column_int64(st, 5),
			.reads_skipped = (uint64_t)sqlite3_column_int64(st, 6),
			.max_pending = (uint64_t)sqlite3_column_int64(st, 7),
		};
		if (e.end_ts < e.start_ts) {
			ret = db_res_bad(db, "stranded_episodes row (run %" PRId64 ", cgroup %" PRIu64
					 ", start_ts %" PRIu64 "): end_ts %" PRIu64 " before it",
					 run_id, cgroup_id, e.start_ts, e.end_ts);
			break;
		}
		ret = fn(&e, ctx);
		if (ret)
			break;
	}
	return db_rows_end(st, rc, ret);
}

int db_run_counters_get(struct db *db, int64_t run_id, struct db_run_counters *c)
{
	sqlite3_stmt *st;
	int rc, ret, i;
	uint64_t *v[] = { &c->events, &c->updates, &c->flush_requests, &c->flushes, &c->visits,
			  &c->walk_steps, &c->pcpu_adds, &c->atomic_adds, &c->dropped_batches,
			  &c->atomic_resets, &c->unknown_ids };

	ret = db_prepare(db, "SELECT coalesce(wall_s, 0), events, updates, flush_requests, flushes,"
			 " visits, walk_steps, pcpu_adds, atomic_adds, dropped_batches,"
			 " atomic_resets, unknown_ids FROM runs WHERE run_id = ?", &st);
	if (ret)
		return ret;
	sqlite3_bind_int64(st, 1, run_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		c->wall_s = sqlite3_column_double(st, 0);
		for (i = 0; i < (int)(sizeof(v) / sizeof(v[0])); i++)
			*v[i] = (uint64_t)sqlite3_column_int64(st, i + 1);
	}
	return db_row_end(st, rc);
}

struct db_lost_sum {
	struct db_trace_lost	*out;
	int64_t			possible;
	char			*why;
	size_t			len;
};

/* a += b, or the refusal naming what overflowed (db_validate() bounds each term) */
static int db_lost_add(int64_t *a, int64_t b, const char *what, struct db_lost_sum *ls)
{
	if (!__builtin_add_overflow(*a, b, a))
		return 0;
	snprintf(ls->why, ls->len, "%s: the sum overflows an int64 (damaged rows)", what);
	return -MCR_E_BAD_INPUT;
}

static int db_lost_gap(sqlite3_stmt *st, void *ctx)
{
	struct db_lost_sum *ls = ctx;
	int64_t n = sqlite3_column_int64(st, 0);

	ls->out->gaps++;
	if (n < 0) {
		ls->out->gaps_unknown++;
		return 0;
	}
	return db_lost_add(&ls->out->gap_events, n, "gaps count", ls);
}

/* An end row of cpu_stats and its start (0 without one): what the buffer lost between. */
static int db_lost_cpu(sqlite3_stmt *st, void *ctx)
{
	struct db_lost_sum *ls = ctx;
	int64_t over = sqlite3_column_int64(st, 0), drop = sqlite3_column_int64(st, 1);
	int64_t over0 = sqlite3_column_int64(st, 2), drop0 = sqlite3_column_int64(st, 3);
	int err = 0;

	ls->out->cpus_end++;
	if (over < 0 || drop < 0)
		ls->out->cpus_unknown++;
	if (over >= 0)
		err = db_lost_add(&ls->out->overrun, over - (over0 > 0 ? over0 : 0),
				  "cpu_stats overrun", ls);
	if (!err && drop >= 0)
		err = db_lost_add(&ls->out->dropped, drop - (drop0 > 0 ? drop0 : 0),
				  "cpu_stats dropped", ls);
	return err;
}

/*
 * The sums info and the HTML report print: gaps (counted events) and
 * ring-buffer overruns and drops, summed here with overflow checks (each
 * term is bounded by db_validate(), so an overflow is a file changed since
 * it was opened).  A refusal's sentence is db_why().
 */
int db_trace_lost(struct db *db, struct db_trace_lost *out)
{
	struct db_lost_sum ls = { out, 0, db->why, sizeof(db->why) };
	int err;

	*out = (struct db_trace_lost){ 0 };
	err = db_rows_foreach(db, "SELECT count FROM gaps", db_lost_gap, &ls);
	if (!err)
		err = db_rows_foreach(db, "SELECT e.overrun, e.dropped, coalesce(s.overrun, 0),"
				      " coalesce(s.dropped, 0) FROM cpu_stats e"
				      " LEFT JOIN cpu_stats s"
				      " ON s.cpu = e.cpu AND s.phase = 'start'"
				      " WHERE e.phase = 'end'", db_lost_cpu, &ls);
	if (!err)
		err = db_query_ints(db, "SELECT count(*) FROM cpu_stats b WHERE b.phase = 'start'"
				    " AND NOT EXISTS (SELECT 1 FROM cpu_stats c WHERE c.cpu = b.cpu"
				    " AND c.phase = 'end')", &out->cpus_no_end, NULL);
	return err;
}
