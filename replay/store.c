// SPDX-License-Identifier: GPL-2.0
/*
 * Results into the trace database (tables documented in db/schema.c): a run
 * row per policy, then reads, series and mismatches as the pass makes them,
 * then summaries and counters.  The caller holds one transaction around all
 * of it, so a failed pass leaves nothing behind.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "error.h"
#include "replay.h"

struct replay_store {
	struct db	*db;
	sqlite3		*sq;
	sqlite3_stmt	*ins_read, *ins_series, *ins_mismatch;
	int64_t		run_id[REPLAY_MAX_POLICIES];
	unsigned int	nr_runs;
};

static int store_err(int rc)
{
	return rc == SQLITE_NOMEM ? -ENOMEM : rc == SQLITE_FULL ? -ENOSPC : -EIO;
}

static int store_step(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : store_err(rc);
}

static int store_read(void *ctx, unsigned int pol, const struct replay_read *r)
{
	struct replay_store *s = ctx;
	sqlite3_stmt *st = s->ins_read;

	sqlite3_bind_int64(st, 1, s->run_id[pol]);
	sqlite3_bind_int64(st, 2, (int64_t)r->ts);
	sqlite3_bind_int(st, 3, r->cpu);
	sqlite3_bind_int64(st, 4, (int64_t)r->id);
	sqlite3_bind_int(st, 5, r->force);
	sqlite3_bind_int(st, 6, r->flushed);
	sqlite3_bind_int64(st, 7, (int64_t)r->missing);
	sqlite3_bind_int64(st, 8, (int64_t)r->age_ns);
	sqlite3_bind_int64(st, 9, r->sim_stats_updates);
	sqlite3_bind_int64(st, 10, r->kernel_stats_updates);
	sqlite3_bind_int(st, 11, r->kernel_needs_flush);
	sqlite3_bind_int(st, 12, r->stale);
	return store_step(st);
}

static int store_point(void *ctx, unsigned int pol, const struct replay_point *p)
{
	struct replay_store *s = ctx;
	sqlite3_stmt *st = s->ins_series;

	sqlite3_bind_int64(st, 1, s->run_id[pol]);
	sqlite3_bind_int64(st, 2, (int64_t)p->id);
	sqlite3_bind_int64(st, 3, (int64_t)p->ts);
	sqlite3_bind_int64(st, 4, (int64_t)p->missing);
	sqlite3_bind_int64(st, 5, p->signed_missing);
	sqlite3_bind_int64(st, 6, (int64_t)p->age_ns);
	sqlite3_bind_int64(st, 7, p->stats_updates);
	sqlite3_bind_int(st, 8, p->flushable);
	sqlite3_bind_int(st, 9, p->stuck);
	sqlite3_bind_text(st, 10, p->is_read ? "read" : "sample", -1, SQLITE_STATIC);
	return store_step(st);
}

static int store_mismatch(void *ctx, const struct replay_mismatch *m)
{
	struct replay_store *s = ctx;
	sqlite3_stmt *st = s->ins_mismatch;

	sqlite3_bind_int64(st, 1, s->run_id[0]);
	sqlite3_bind_int64(st, 2, (int64_t)m->ts);
	sqlite3_bind_int(st, 3, m->cpu);
	sqlite3_bind_int64(st, 4, (int64_t)m->id);
	sqlite3_bind_int64(st, 5, m->kernel_stats_updates);
	sqlite3_bind_int64(st, 6, m->sim_stats_updates);
	sqlite3_bind_int(st, 7, m->kernel_needs_flush);
	sqlite3_bind_int(st, 8, m->sim_needs_flush);
	if (m->cause)
		sqlite3_bind_text(st, 9, m->cause, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 9);
	sqlite3_bind_text(st, 10, m->context, -1, SQLITE_TRANSIENT);
	return store_step(st);
}

static int store_prepare(struct replay_store *s, const char *sql, sqlite3_stmt **st)
{
	int rc = sqlite3_prepare_v2(s->sq, sql, -1, st, NULL);

	return rc == SQLITE_OK ? 0 : (rc == SQLITE_NOMEM ? -ENOMEM : -MCR_E_SCHEMA);
}

int replay_store_open(struct db *db, const char *kind, const char *file,
		      struct replay_params *p, struct replay_store **out)
{
	struct replay_store *s = calloc(1, sizeof(*s));
	char policies[REPLAY_MAX_POLICIES * 32] = "";
	sqlite3_stmt *run = NULL;
	unsigned int i;
	int ret;

	if (!s)
		return -ENOMEM;
	s->db = db;
	s->sq = db_sqlite(db);
	for (i = 0; i < p->nr_policies; i++)
		snprintf(policies + strlen(policies), sizeof(policies) - strlen(policies), "%s%s",
			 i ? "," : "", p->policies[i]->name);
	/* json_object() does the quoting of the file name. */
	ret = store_prepare(s, "INSERT INTO runs (kind, policy, flush_model, params, started_at, "
			    "sample_ns, tool_version) VALUES (?1, ?2, ?3, json_object('file', ?4, "
			    "'policies', ?5, 'flush_model', ?3, 'sample_ms', ?6 / 1e6, 'validate', "
			    "json(?7), 'max_mismatches', ?8), strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), "
			    "?6, ?9)", &run);
	if (ret)
		goto fail;
	for (i = 0; i < p->nr_policies; i++) {
		sqlite3_bind_text(run, 1, kind, -1, SQLITE_STATIC);
		sqlite3_bind_text(run, 2, p->policies[i]->name, -1, SQLITE_STATIC);
		sqlite3_bind_text(run, 3, p->model->name, -1, SQLITE_STATIC);
		sqlite3_bind_text(run, 4, file, -1, SQLITE_STATIC);
		sqlite3_bind_text(run, 5, policies, -1, SQLITE_STATIC);
		sqlite3_bind_int64(run, 6, (int64_t)p->sample_ns);
		sqlite3_bind_text(run, 7, p->validate ? "true" : "false", -1, SQLITE_STATIC);
		sqlite3_bind_int(run, 8, (int)p->max_mismatches);
		sqlite3_bind_text(run, 9, MCR_VERSION, -1, SQLITE_STATIC);
		ret = store_step(run);
		if (ret)
			goto fail;
		s->run_id[i] = sqlite3_last_insert_rowid(s->sq);
	}
	s->nr_runs = p->nr_policies;
	sqlite3_finalize(run);
	run = NULL;
	ret = store_prepare(s, "INSERT INTO reads (run_id, ts, cpu, cgroup_id, force, flushed, "
			    "missing_pages, age_ns, sim_stats_updates, kernel_stats_updates, "
			    "kernel_needs_flush, stale) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", &s->ins_read);
	if (!ret)
		ret = store_prepare(s, "INSERT INTO series (run_id, cgroup_id, ts, missing_pages, "
				    "signed_missing_pages, age_ns, stats_updates, flushable, stuck, "
				    "reason) VALUES (?,?,?,?,?,?,?,?,?,?)", &s->ins_series);
	if (!ret)
		ret = store_prepare(s, "INSERT INTO validation_mismatch (run_id, ts, cpu, cgroup_id, "
				    "kernel_stats_updates, sim_stats_updates, kernel_needs_flush, "
				    "sim_needs_flush, cause, context) VALUES (?,?,?,?,?,?,?,?,?,?)",
				    &s->ins_mismatch);
	if (ret)
		goto fail;
	p->sink = (struct replay_sink){
		.read = store_read, .point = store_point, .mismatch = store_mismatch, .ctx = s,
	};
	*out = s;
	return 0;
fail:
	sqlite3_finalize(run);
	replay_store_close(s);
	return ret;
}

int64_t replay_store_run_id(const struct replay_store *st, unsigned int pol)
{
	return pol < st->nr_runs ? st->run_id[pol] : -1;
}

struct item_row {
	sqlite3_stmt	*st;
	int64_t		run_id;
	uint64_t	id;
	int		err;
};

static int store_item(enum sim_item_kind kind, int item, int64_t max_abs, int64_t final, void *ctx)
{
	struct item_row *ir = ctx;
	static const int ev_kind[] = {
		[SIM_ITEM_STATE] = MCR_EV_STATE, [SIM_ITEM_LRUVEC] = MCR_EV_LRUVEC,
		[SIM_ITEM_EVENT] = MCR_EV_EVENTS,
	};

	sqlite3_bind_int64(ir->st, 1, ir->run_id);
	sqlite3_bind_int64(ir->st, 2, (int64_t)ir->id);
	sqlite3_bind_int(ir->st, 3, ev_kind[kind]);
	sqlite3_bind_int(ir->st, 4, item);
	sqlite3_bind_int64(ir->st, 5, max_abs);
	sqlite3_bind_int64(ir->st, 6, final);
	ir->err = store_step(ir->st);
	return ir->err;
}

static int store_summaries(struct replay_store *s, struct replay *r, unsigned int pol)
{
	sqlite3_stmt *sum = NULL, *items = NULL;
	size_t i;
	int ret;

	ret = store_prepare(s, "INSERT INTO cgroup_summary (run_id, cgroup_id, max_missing_pages, "
			    "p50_missing_pages, p99_missing_pages, mean_missing_pages, max_age_ms, "
			    "reads, stale_reads, stale_max_pages, stale_mean_pages, stuck_ms, "
			    "final_missing_pages) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", &sum);
	if (!ret)
		ret = store_prepare(s, "INSERT INTO item_summary (run_id, cgroup_id, kind, item, "
				    "max_abs_missing, final_missing) VALUES (?,?,?,?,?,?)", &items);
	for (i = 0; !ret && i < replay_cgroup_count(r); i++) {
		uint64_t id = replay_cgroup_id(r, i);
		struct item_row ir = { .st = items, .run_id = s->run_id[pol], .id = id };
		struct replay_summary sm;

		if (replay_summary_get(r, pol, id, &sm) < 0)
			continue;	/* named in the table, never seen by the pass */
		sqlite3_bind_int64(sum, 1, s->run_id[pol]);
		sqlite3_bind_int64(sum, 2, (int64_t)id);
		sqlite3_bind_int64(sum, 3, (int64_t)sm.max_missing);
		sqlite3_bind_int64(sum, 4, (int64_t)sm.p50_missing);
		sqlite3_bind_int64(sum, 5, (int64_t)sm.p99_missing);
		sqlite3_bind_double(sum, 6, sm.mean_missing);
		sqlite3_bind_double(sum, 7, sm.max_age_ms);
		sqlite3_bind_int64(sum, 8, (int64_t)sm.reads);
		sqlite3_bind_int64(sum, 9, (int64_t)sm.stale_reads);
		sqlite3_bind_int64(sum, 10, (int64_t)sm.stale_max);
		sqlite3_bind_double(sum, 11, sm.stale_mean);
		sqlite3_bind_double(sum, 12, sm.stuck_ms);
		sqlite3_bind_int64(sum, 13, (int64_t)sm.final_missing);
		ret = store_step(sum);
		if (!ret)
			ret = replay_items_foreach(r, pol, id, store_item, &ir);
		if (ir.err)
			ret = ir.err;
	}
	sqlite3_finalize(sum);
	sqlite3_finalize(items);
	return ret;
}

static int store_run_counters(struct replay_store *s, struct replay *r, unsigned int pol,
			      double wall_s)
{
	const struct replay_stats *rs = replay_stats(r);
	struct sim_cost c;
	sqlite3_stmt *st;
	int ret;

	sim_cost_get(replay_sim(r, pol), &c);
	ret = store_prepare(s, "UPDATE runs SET wall_s = ?, events = ?, updates = ?, flush_requests = ?, "
			    "flushes = ?, visits = ?, walk_steps = ?, pcpu_adds = ?, atomic_adds = ?, "
			    "dropped_batches = ?, atomic_resets = ?, unknown_ids = ? WHERE run_id = ?", &st);
	if (ret)
		return ret;
	sqlite3_bind_double(st, 1, wall_s);
	sqlite3_bind_int64(st, 2, (int64_t)rs->events);
	sqlite3_bind_int64(st, 3, (int64_t)c.updates);
	sqlite3_bind_int64(st, 4, (int64_t)c.flush_requests);
	sqlite3_bind_int64(st, 5, (int64_t)c.flushes);
	sqlite3_bind_int64(st, 6, (int64_t)c.visits);
	sqlite3_bind_int64(st, 7, (int64_t)c.walk_steps);
	sqlite3_bind_int64(st, 8, (int64_t)c.pcpu_adds);
	sqlite3_bind_int64(st, 9, (int64_t)c.atomic_adds);
	sqlite3_bind_int64(st, 10, (int64_t)c.dropped_batches);
	sqlite3_bind_int64(st, 11, (int64_t)c.atomic_resets);
	sqlite3_bind_int64(st, 12, (int64_t)c.unknown_ids);
	sqlite3_bind_int64(st, 13, s->run_id[pol]);
	ret = store_step(st);
	sqlite3_finalize(st);
	return ret;
}

/* diff_hist as a JSON object: keys are our own bucket names, values integers. */
static void store_diff_json(const struct replay_validation *v, char *buf, size_t len)
{
	size_t off = 0;
	unsigned int b;

	off += (size_t)snprintf(buf, len, "{");
	for (b = 0; b < REPLAY_DIFF_BUCKETS && off < len; b++) {
		if (!v->diff_hist[b])
			continue;
		off += (size_t)snprintf(buf + off, len - off, "%s\"%s\":%llu", off > 1 ? "," : "",
					replay_diff_bucket_name(b),
					(unsigned long long)v->diff_hist[b]);
	}
	if (off < len)
		snprintf(buf + off, len - off, "}");
}

static int store_validation(struct replay_store *s, struct replay *r)
{
	const struct replay_validation *v = replay_validation(r);
	char diff[REPLAY_DIFF_BUCKETS * 48];
	sqlite3_stmt *st;
	int ret;

	store_diff_json(v, diff, sizeof(diff));
	ret = store_prepare(s, "INSERT INTO validation (run_id, policy, flush_model, flush_events, "
			    "compared, skipped_before_sync, stats_updates_match, needs_flush_match, "
			    "stats_updates_match_plain, needs_flush_match_plain, max_hypotheses, "
			    "diff_hist) VALUES (?,?,?,?,?,?,?,?,?,?,?,json(?))", &st);
	if (ret)
		return ret;
	sqlite3_bind_int64(st, 1, s->run_id[0]);
	sqlite3_bind_text(st, 2, replay_params(r)->policies[0]->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, replay_params(r)->model->name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, (int64_t)v->flush_events);
	sqlite3_bind_int64(st, 5, (int64_t)v->compared);
	sqlite3_bind_int64(st, 6, (int64_t)v->skipped_before_sync);
	sqlite3_bind_int64(st, 7, (int64_t)v->stats_updates_match);
	sqlite3_bind_int64(st, 8, (int64_t)v->needs_flush_match);
	sqlite3_bind_int64(st, 9, (int64_t)v->stats_updates_match_plain);
	sqlite3_bind_int64(st, 10, (int64_t)v->needs_flush_match_plain);
	sqlite3_bind_int64(st, 11, (int64_t)v->max_hypotheses);
	sqlite3_bind_text(st, 12, diff, -1, SQLITE_TRANSIENT);
	ret = store_step(st);
	sqlite3_finalize(st);
	return ret;
}

int replay_store_finish(struct replay_store *s, struct replay *r, double wall_s)
{
	unsigned int p;
	int ret = 0;

	for (p = 0; !ret && p < s->nr_runs; p++) {
		ret = store_summaries(s, r, p);
		if (!ret)
			ret = store_run_counters(s, r, p, wall_s);
	}
	if (!ret && replay_validation(r))
		ret = store_validation(s, r);
	return ret;
}

void replay_store_close(struct replay_store *s)
{
	if (!s)
		return;
	sqlite3_finalize(s->ins_read);
	sqlite3_finalize(s->ins_series);
	sqlite3_finalize(s->ins_mismatch);
	free(s);
}
