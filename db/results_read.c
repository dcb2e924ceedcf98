// SPDX-License-Identifier: GPL-2.0
/*
 * results_read.c - reading the result tables back (db/results.h): runs,
 * validation and mismatches, the plot readers, and what a pass needs to know
 * before it starts (the cgroups that are read, a cgroup by path).  The lag
 * report's rows are read in results_lag.c; every row is checked by the rules
 * of results_check.c.
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
#include "grow.h"
#include "results.h"
#include "results_local.h"
#include "statlines.h"

static int db_u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/*
 * The cgroups some reader asked about (non-forced memcg_flush_stats), by id:
 * meta read_cgroups, which the writer stored with the events, if it covers
 * all of them.  Else (a file from before it, events added by an older
 * build) one streaming pass over the compressed chunks (tens of millions of
 * events a second); reads are rare, so the set stays small.
 */
int db_read_cgroups_foreach(struct db *db, int (*fn)(uint64_t id, void *ctx), void *ctx)
{
	const struct mcr_event *const *evs;
	uint64_t *ids = NULL;
	size_t nr = 0, cap = 0, i;
	struct db_iter *it;
	int64_t covers, total;
	int ret, k, got = 0;

	if (!db->row_events) {
		ret = db_read_ids_meta(db, &ids, &nr, &covers);
		if (ret == -ENOMEM)
			return ret;
		total = ret ? -1 : db_chunk_events(db);
		if (!ret && total >= 0 && covers == total) {
			for (i = 0; !ret && i < nr; i++)
				ret = fn(ids[i], ctx);
			free(ids);
			return ret;
		}
		free(ids);
		ids = NULL;
		nr = 0;
	}
	ret = db_iter_open(db, &it);
	if (ret)
		return ret;
	/* in batches: the events are looked at where the reader built them, not copied */
	while (!ret && (got = db_iter_next_batch(it, &evs)) > 0) {
		for (k = 0; k < got; k++) {
			const struct mcr_event *ev = evs[k];

			if (ev->kind != MCR_EV_FLUSH || (ev->flags & MCR_FLUSH_FORCE))
				continue;
			if (nr && ids[nr - 1] == ev->id)
				continue;	/* the same reader again: the common case */
			if (mcr_grow((void **)&ids, &cap, nr + 1, sizeof(*ids)) < 0) {
				ret = -ENOMEM;
				break;
			}
			ids[nr++] = ev->id;
		}
	}
	if (!ret && got < 0)
		ret = got;
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

int db_cgroup_lookup(struct db *db, const char *path, uint64_t *id, char **canon)
{
	bool by_id = *path && strspn(path, "0123456789") == strlen(path) && strlen(path) <= 19;
	sqlite3_stmt *st;
	int rc, ret;

	ret = db_prepare(db, by_id ? "SELECT id, path FROM cgroups WHERE id = CAST(?1 AS INTEGER)" :
			 "SELECT id, path FROM cgroups WHERE path = ?1 ORDER BY removed_ts >= 0, id"
			 " LIMIT 1", &st);
	if (ret)
		return ret;
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*id = (uint64_t)sqlite3_column_int64(st, 0);
		if (canon) {
			const char *p = (const char *)sqlite3_column_text(st, 1);

			*canon = p ? strdup(p) : NULL;
			if (p && !*canon) {
				sqlite3_finalize(st);
				return -ENOMEM;
			}
		}
	}
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
		ri.kind = db_col_text(st, 1);
		ri.policy = db_col_text(st, 2);
		ri.flush_model = db_col_text(st, 3);
		ri.events = sqlite3_column_int64(st, 4);
		ri.wall_s = sqlite3_column_double(st, 5);
		ri.started_at = db_col_text(st, 6);
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
 * (item_summary with cgroup_summary) and of validation by the rules of
 * results_check.c,
 * before a report
 * prints any.
 * Return: 0, -MCR_E_CORRUPT with db_why() naming the row, or the error.
 */
static int db_stat_check_row_check(sqlite3_stmt *st, void *ctx)
{
	struct db_stat_check r;

	return db_stat_check_row(ctx, st, &r);
}

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
	if (!err && db_schema_has(db, "stat_read_checks"))
		err = db_rows_foreach(db, "SELECT run_id, read, cgroup_id, name, unit, per,"
				      " request_ts, printed, shown, truth, printed_error, diff,"
				      " verdict, cause FROM stat_read_checks ORDER BY run_id, read, name",
				      db_stat_check_row_check, db);
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
			.path = db_col_text(st, 3),
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

int db_item_by_line(struct db *db, const char *name, int *kind, int *item, const char **kname)
{
	const char *it;
	int ret;

	if (kname)
		*kname = name;
	ret = db_item_by_name(db, name, kind, item);
	if (ret != -ENOENT)
		return ret;
	if (statline_item(name, &it))
		return -ENOENT;
	if (kname)
		*kname = it;
	ret = db_item_by_name(db, it, kind, item);
	return ret == -ENOENT ? -ENODATA : ret;
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
