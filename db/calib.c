// SPDX-License-Identifier: GPL-2.0
/* calib.c - the calibration and cost_basis tables and the cost_report view (calib.h). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calib.h"
#include "db.h"
#include "db_local.h"
#include "error.h"

static int db_calib_end(sqlite3_stmt *st, int rc)
{
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE || rc == SQLITE_OK)
		return 0;
	return db_err(rc) ? db_err(rc) : -EIO;
}

int db_calibration_put(struct db *db, const struct sim_cost_calib *c)
{
	sqlite3_stmt *st;
	unsigned int i;
	int err;

	err = db_exec(db, "DELETE FROM calibration");
	if (!err)
		err = db_prepare(db, "INSERT INTO calibration (op, ns, lo_ns, hi_ns, samples, cpus,"
				 " host, measured_at, tool_version) VALUES (?,?,?,?,?,?,?,?,?)", &st);
	if (err)
		return err;
	for (i = 0; !err && i < SIM_COST_NR_OPS; i++) {
		sqlite3_bind_text(st, 1, sim_cost_op_name(i), -1, SQLITE_STATIC);
		sqlite3_bind_double(st, 2, c->t.op[i].ns);
		sqlite3_bind_double(st, 3, c->t.op[i].lo_ns);
		sqlite3_bind_double(st, 4, c->t.op[i].hi_ns);
		sqlite3_bind_int64(st, 5, c->samples);
		sqlite3_bind_int64(st, 6, c->cpus);
		sqlite3_bind_text(st, 7, c->host, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 8, c->measured_at, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 9, c->tool_version, -1, SQLITE_STATIC);
		err = db_step_reset(st);
	}
	sqlite3_finalize(st);
	return err;
}

int db_calibration_get(struct db *db, struct sim_cost_calib *c)
{
	sqlite3_stmt *st;
	unsigned int seen = 0, bad;
	const char *field;
	int rc, err;

	memset(c, 0, sizeof(*c));
	err = db_prepare(db, "SELECT op, ns, lo_ns, hi_ns, samples, cpus, host, measured_at,"
			 " tool_version FROM calibration", &st);
	if (err)
		return err;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int op = sim_cost_op_find((const char *)sqlite3_column_text(st, 0));
		const char *s;

		if (op < 0)
			continue;
		c->t.op[op].ns = sqlite3_column_double(st, 1);
		c->t.op[op].lo_ns = sqlite3_column_double(st, 2);
		c->t.op[op].hi_ns = sqlite3_column_double(st, 3);
		c->samples = (unsigned int)sqlite3_column_int64(st, 4);
		c->cpus = (unsigned int)sqlite3_column_int64(st, 5);
		if ((s = (const char *)sqlite3_column_text(st, 6)))
			snprintf(c->host, sizeof(c->host), "%s", s);
		if ((s = (const char *)sqlite3_column_text(st, 7)))
			snprintf(c->measured_at, sizeof(c->measured_at), "%s", s);
		if ((s = (const char *)sqlite3_column_text(st, 8)))
			snprintf(c->tool_version, sizeof(c->tool_version), "%s", s);
		seen |= 1u << op;
	}
	err = db_calib_end(st, rc);
	if (err)
		return err;
	if (seen != (1u << SIM_COST_NR_OPS) - 1)
		return -ENOENT;
	/* what a calibration file must hold (replay/cost_file.c), so that no estimate is inf */
	if (sim_cost_table_check(&c->t, &bad, &field)) {
		const struct sim_cost_figure *f = &c->t.op[bad];

		snprintf(db->why, sizeof(db->why), "calibration row op %s: ns %g, lo_ns %g,"
			 " hi_ns %g: each must be in [0, %g] and lo_ns <= ns <= hi_ns (%s"
			 " refused); run memcg-replay calibrate --db again", sim_cost_op_name(bad),
			 f->ns, f->lo_ns, f->hi_ns, SIM_COST_NS_MAX, field);
		return -MCR_E_BAD_INPUT;
	}
	return 0;
}

int db_cost_basis_put(struct db *db, const struct db_cost_basis *b)
{
	sqlite3_stmt *st;
	int err;

	err = db_prepare(db, "INSERT OR REPLACE INTO cost_basis (id, trace_ns, updates, window_ns,"
			 " node_visits, shared_visits, shared_fraction) VALUES (1,?,?,?,?,?,?)", &st);
	if (err)
		return err;
	sqlite3_bind_int64(st, 1, (int64_t)b->trace_ns);
	sqlite3_bind_int64(st, 2, (int64_t)b->updates);
	sqlite3_bind_int64(st, 3, (int64_t)b->window_ns);
	sqlite3_bind_int64(st, 4, (int64_t)b->node_visits);
	sqlite3_bind_int64(st, 5, (int64_t)b->shared_visits);
	sqlite3_bind_double(st, 6, b->shared_fraction);
	return db_calib_end(st, sqlite3_step(st));
}

int db_cost_basis_get(struct db *db, struct db_cost_basis *b)
{
	sqlite3_stmt *st;
	int rc, err;

	memset(b, 0, sizeof(*b));
	err = db_prepare(db, "SELECT trace_ns, updates, window_ns, node_visits, shared_visits,"
			 " shared_fraction FROM cost_basis WHERE id = 1", &st);
	if (err)
		return err;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		b->trace_ns = (uint64_t)sqlite3_column_int64(st, 0);
		b->updates = (uint64_t)sqlite3_column_int64(st, 1);
		b->window_ns = (uint64_t)sqlite3_column_int64(st, 2);
		b->node_visits = (uint64_t)sqlite3_column_int64(st, 3);
		b->shared_visits = (uint64_t)sqlite3_column_int64(st, 4);
		b->shared_fraction = sqlite3_column_double(st, 5);
		sqlite3_finalize(st);
		/* a fraction of the visits, which are counts (results_read.c's rules) */
		if (!isfinite(b->shared_fraction) || b->shared_fraction < 0 ||
		    b->shared_fraction > 1 || b->shared_visits > b->node_visits ||
		    b->node_visits > INT64_MAX || b->trace_ns > INT64_MAX) {
			snprintf(db->why, sizeof(db->why), "cost_basis row: shared_fraction %g,"
				 " shared_visits %" PRIu64 " of node_visits %" PRIu64 ", trace_ns %"
				 PRIu64 ": not a fraction of counts: a damaged result table (replay"
				 " the file again)", b->shared_fraction, b->shared_visits,
				 b->node_visits, b->trace_ns);
			return -MCR_E_CORRUPT;
		}
		return 0;
	}
	err = db_calib_end(st, rc);
	return err ? err : -ENOENT;
}

static int64_t db_col_i64(sqlite3_stmt *st, int i, int64_t none)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? none : sqlite3_column_int64(st, i);
}

/*
 * cost_report's columns, but max_read_error_pages taken here over every line
 * that is not an event line: the view of a file no writer opened since the
 * units were fixed leaves out the lines it labels DB_ITEM_UNITS_OLD (pages).
 */
#define DB_COST_COLS \
	"run_id, policy, flush_model, updates, walk_steps, pcpu_adds, atomic_adds," \
	" dropped_batches, flushable_checks, atomic_shared_fraction, est_ns_per_update," \
	" est_ns_per_update_max, est_cpu_s_per_s, reads, stale_reads, stranded_cgroups," \
	" (SELECT max(l.max_read_error) FROM lag_report_all l" \
	" WHERE l.run_id = cost_report.run_id AND l.unit != 'events')," \
	" max_read_error_events, "
/* the cgroups with a noticeable episode; NULL for results before the column */
#define DB_COST_NOTICEABLE \
	"(SELECT coalesce(sum(g.noticeable_episodes > 0), 0) FROM cgroup_summary g" \
	" WHERE g.run_id = cost_report.run_id)"
/* @where: "" every run, else the latest only (DB_LATEST_RUN) */
#define DB_COST_SELECT(noticeable, where) \
	"SELECT q.*, g.batch_size, g.nr_cpus FROM (SELECT " DB_COST_COLS noticeable \
	" FROM cost_report) q LEFT JOIN runs g ON g.run_id = q.run_id" where " ORDER BY q.run_id"
#define DB_COST_SELECT_V2(noticeable, where) \
	"SELECT q.*, g.b, g.c FROM (SELECT " DB_COST_COLS noticeable " FROM cost_report) q" \
	" LEFT JOIN (SELECT run_id, th / (2 * th - stranded_limit) AS b," \
	" 2 * th - stranded_limit AS c FROM runs WHERE 2 * th > stranded_limit) g" \
	" ON g.run_id = q.run_id" where " ORDER BY q.run_id"
#define DB_COST_LATEST		" WHERE " DB_LATEST_RUN("q.run_id")
#define DB_COST_LATEST_V2	" WHERE " DB_LATEST_RUN_V2("q.run_id")

static int db_cost_rows_walk(struct db *db, bool latest,
			     int (*fn)(const struct db_cost_row *r, void *ctx), void *ctx)
{
	/* [runs_grid][settled][latest] */
	static const char *const sql[2][2][2] = {
		/* a schema 2 runs table has no batch_size: th = b c, stranded_limit = th + (b - 1) c */
		{ { DB_COST_SELECT_V2("NULL", ""), DB_COST_SELECT_V2("NULL", DB_COST_LATEST_V2) },
		  { DB_COST_SELECT_V2(DB_COST_NOTICEABLE, ""),
		    DB_COST_SELECT_V2(DB_COST_NOTICEABLE, DB_COST_LATEST_V2) } },
		{ { DB_COST_SELECT("NULL", ""), DB_COST_SELECT("NULL", DB_COST_LATEST) },
		  { DB_COST_SELECT(DB_COST_NOTICEABLE, ""),
		    DB_COST_SELECT(DB_COST_NOTICEABLE, DB_COST_LATEST) } },
	};
	sqlite3_stmt *st;
	int rc, ret = 0, err;

	if (db->older)
		return -MCR_E_OLDER;
	err = db_prepare(db, sql[db->runs_grid][db->settled][latest], &st);
	if (err)
		return err;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *fm = (const char *)sqlite3_column_text(st, 2);
		struct db_cost_row r = {
			.run_id = sqlite3_column_int64(st, 0),
			.policy = (const char *)sqlite3_column_text(st, 1),
			.flush_model = fm ? fm : "-",
			.updates = (uint64_t)db_col_i64(st, 3, 0),
			.walk_steps = (uint64_t)db_col_i64(st, 4, 0),
			.pcpu_adds = (uint64_t)db_col_i64(st, 5, 0),
			.atomic_adds = (uint64_t)db_col_i64(st, 6, 0),
			.dropped_batches = (uint64_t)db_col_i64(st, 7, 0),
			.flushable_checks = (uint64_t)db_col_i64(st, 8, 0),
			.atomic_shared_fraction = sqlite3_column_double(st, 9),
			.est_ns_per_update = sqlite3_column_double(st, 10),
			.est_ns_per_update_max = sqlite3_column_double(st, 11),
			.est_cpu_s_per_s = sqlite3_column_double(st, 12),
			.reads = (uint64_t)db_col_i64(st, 13, 0),
			.stale_reads = (uint64_t)db_col_i64(st, 14, 0),
			.stranded_cgroups = (uint64_t)db_col_i64(st, 15, 0),
			.max_read_error_pages = db_col_i64(st, 16, -1),
			.max_read_error_events = db_col_i64(st, 17, -1),
			.noticeable_cgroups = db_col_i64(st, 18, -1),
			.batch_size = (unsigned int)db_col_i64(st, 19, 0),
			.nr_cpus = (unsigned int)db_col_i64(st, 20, 0),
			.has_est = sqlite3_column_type(st, 10) != SQLITE_NULL,
		};

		if (!r.policy)
			r.policy = "-";
		/*
		 * The view's fraction is cost_basis's, its estimates are
		 * finite products of counts and checked figures: anything
		 * else is a damaged table, never printed.
		 */
		if (!isfinite(r.atomic_shared_fraction) || r.atomic_shared_fraction < 0 ||
		    r.atomic_shared_fraction > 1 || !isfinite(r.est_ns_per_update) ||
		    !isfinite(r.est_ns_per_update_max) || !isfinite(r.est_cpu_s_per_s)) {
			snprintf(db->why, sizeof(db->why), "cost_report row run_id %" PRId64
				 ": atomic_shared_fraction %g, est_* %g, %g, %g: not a fraction and"
				 " finite estimates (replay the file again)", r.run_id,
				 r.atomic_shared_fraction, r.est_ns_per_update,
				 r.est_ns_per_update_max, r.est_cpu_s_per_s);
			ret = -MCR_E_CORRUPT;
			break;
		}
		ret = fn(&r, ctx);
		if (ret)
			break;
	}
	if (ret) {
		sqlite3_finalize(st);
		return ret;
	}
	return db_calib_end(st, rc);
}

int db_cost_rows_foreach(struct db *db, int (*fn)(const struct db_cost_row *r, void *ctx),
			 void *ctx)
{
	return db_cost_rows_walk(db, false, fn, ctx);
}

int db_cost_rows_latest_foreach(struct db *db,
				int (*fn)(const struct db_cost_row *r, void *ctx), void *ctx)
{
	return db_cost_rows_walk(db, true, fn, ctx);
}
