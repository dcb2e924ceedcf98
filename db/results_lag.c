// SPDX-License-Identifier: GPL-2.0
/*
 * results_lag.c - the lag report's rows (db_lag_foreach()): the SQL over the
 * summary views, filtered and in tree order, and each row read and checked
 * (db_lag_check_row(), results_check.c) before the caller sees it.
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
	/* results written before the later columns: their views lack them */
	for (i = 0; i < DB_LAG_NR_COLS; i++)
		fprintf(m, "%s%s%s", i ? ", " : "", !db->settled && i >= DB_LAG_MAX_SETTLED_ERROR ?
			"NULL AS " : "", db_lag_cols[i]);
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

int db_lag_walk(struct db *db, const struct db_lag_filter *f, bool all,
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
		r.policy = db_col_text(st, DB_LAG_POLICY);
		r.run_id = sqlite3_column_int64(st, DB_LAG_RUN_ID);
		r.flush_model = db_col_text(st, DB_LAG_FLUSH_MODEL);
		r.cgroup = db_col_text(st, DB_LAG_CGROUP);
		r.cgroup_id = (uint64_t)sqlite3_column_int64(st, DB_LAG_CGROUP_ID);
		r.level = sqlite3_column_type(st, DB_LAG_LEVEL) == SQLITE_NULL ? -1 :
			  sqlite3_column_int(st, DB_LAG_LEVEL);
		r.item = db_col_text(st, DB_LAG_ITEM);
		r.unit = db_col_text(st, DB_LAG_UNIT);
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
		r.max_settled_error = (uint64_t)sqlite3_column_int64(st, DB_LAG_MAX_SETTLED_ERROR);
		r.max_flush_error = (uint64_t)sqlite3_column_int64(st, DB_LAG_MAX_FLUSH_ERROR);
		r.noticeable_episodes = (uint64_t)sqlite3_column_int64(st,
								      DB_LAG_NOTICEABLE_EPISODES);
		r.has_settled = sqlite3_column_type(st, DB_LAG_MAX_SETTLED_ERROR) != SQLITE_NULL;
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
