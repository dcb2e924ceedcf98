// SPDX-License-Identifier: GPL-2.0
/*
 * results_read.c - reading the result tables back (db/results.h): the lag
 * report rows, runs, validation and mismatches, and what a pass needs to know
 * before it starts (the cgroups that are read, a cgroup by path).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "db_local.h"
#include "error.h"
#include "results.h"

static int db_prepare_rd(struct db *db, const char *sql, sqlite3_stmt **st)
{
	int rc = sqlite3_prepare_v2(db->sql, sql, -1, st, NULL);

	return rc == SQLITE_OK ? 0 : rc == SQLITE_NOMEM ? -ENOMEM : -MCR_E_SCHEMA;
}

static int db_done(int rc)
{
	return rc == SQLITE_DONE ? 0 : db_err(rc) ? db_err(rc) : -EIO;
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

	ret = db_prepare_rd(db, "SELECT id FROM cgroups WHERE path = ? ORDER BY removed_ts >= 0, id"
			    " LIMIT 1", &st);
	if (ret)
		return ret;
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*id = (uint64_t)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? -ENOENT : db_done(rc);
}

int db_replay_run_exists(struct db *db, int64_t run_id)
{
	sqlite3_stmt *st;
	int rc, ret;

	if (db->older)
		return -MCR_E_OLDER;

	ret = db_prepare_rd(db, "SELECT 1 FROM runs WHERE kind = 'replay' AND (?1 <= 0 OR run_id = ?1)"
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

int db_runs_foreach(struct db *db, int (*fn)(const struct db_run_info *r, void *ctx), void *ctx)
{
	struct db_run_info ri;
	sqlite3_stmt *st;
	int rc, ret;

	if (db->older)
		return -MCR_E_OLDER;

	ret = db_prepare_rd(db, "SELECT run_id, kind, policy, flush_model, events, wall_s, started_at"
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
		ret = fn(&ri, ctx);
		if (ret)
			break;
	}
	if (!ret)
		ret = db_done(rc);
	sqlite3_finalize(st);
	return ret;
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

/* SELECT <every column> FROM the right view, filtered, in tree order. */
static char *db_lag_sql(const struct db_lag_filter *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int i;

	if (!m)
		return NULL;
	fprintf(m, "SELECT ");
	for (i = 0; i < DB_LAG_NR_COLS; i++)
		fprintf(m, "%s%s", i ? ", " : "", db_lag_cols[i]);
	if (f->worst_only && f->nr_runs)
		fprintf(m, " FROM (SELECT l.*, row_number() OVER (PARTITION BY l.run_id, l.cgroup_id"
			" ORDER BY l.unit = 'events', l.max_read_error DESC, l.max_visible_error DESC,"
			" l.item) AS rank FROM lag_report_all l) WHERE rank = 1");
	else
		fprintf(m, " FROM %s WHERE 1", f->worst_only ? "cgroup_lag_report" :
			f->nr_runs ? "lag_report_all" : "lag_report");
	if (f->nr_runs) {
		fprintf(m, " AND run_id IN (");
		for (i = 0; i < f->nr_runs; i++)
			fprintf(m, "%s%" PRId64, i ? "," : "", f->runs[i]);
		fprintf(m, ")");
	}
	if (f->cgroup)
		fprintf(m, " AND cgroup = ?1");
	fprintf(m, " ORDER BY level IS NULL, level, cgroup, item, policy, run_id");
	if (fclose(m)) {
		free(buf);
		return NULL;
	}
	return buf;
}

int db_lag_foreach(struct db *db, const struct db_lag_filter *f,
		   int (*fn)(const struct db_lag_row *row, void *ctx), void *ctx)
{
	struct db_lag_row r;
	sqlite3_stmt *st;
	char *sql;
	int rc, ret, i;

	if (db->older)
		return -MCR_E_OLDER;
	sql = db_lag_sql(f);
	if (!sql)
		return -ENOMEM;
	ret = db_prepare_rd(db, sql, &st);
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
		ret = fn(&r, ctx);
		if (ret)
			break;
	}
	if (!ret)
		ret = db_done(rc);
	sqlite3_finalize(st);
	return ret;
}

int db_mismatches_foreach(struct db *db, int64_t run_id, int64_t limit,
			  int (*fn)(const struct db_mismatch *m, void *ctx), void *ctx)
{
	struct db_mismatch m;
	sqlite3_stmt *st;
	int rc, ret;

	if (db->older)
		return -MCR_E_OLDER;

	ret = db_prepare_rd(db, "SELECT m.ts, m.cpu, m.cgroup_id, coalesce(c.path, '#' || m.cgroup_id),"
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
	if (!ret)
		ret = db_done(rc);
	sqlite3_finalize(st);
	return ret;
}

/* The validation row of @run_id; *out's strings stay NULL, *diff_hist is malloc'd JSON. */
int db_validation_get(struct db *db, int64_t run_id, struct db_validation *out, char **diff_hist)
{
	sqlite3_stmt *st;
	int rc, ret;

	*diff_hist = NULL;
	if (db->older)
		return -MCR_E_OLDER;
	ret = db_prepare_rd(db, "SELECT flush_events, compared, skipped_before_sync,"
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
		*diff_hist = strdup((const char *)sqlite3_column_text(st, 8));
		if (!*diff_hist)
			rc = SQLITE_NOMEM;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? -ENOENT : db_done(rc);
}
