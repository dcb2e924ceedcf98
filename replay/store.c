// SPDX-License-Identifier: GPL-2.0
/*
 * Results into the trace database through db/results.h: a run row per
 * run (policy, batch, CPUs), then reads, series, episodes and mismatches as the pass makes them,
 * then summaries and counters.  The caller holds one transaction around all
 * of it, so a failed pass leaves nothing behind.  No SQL here: db/ owns it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "error.h"
#include "replay.h"
#include "results.h"

struct replay_store {
	struct db		*db;
	struct db_results	*w;
	int64_t			run_id[REPLAY_MAX_RUNS];
	unsigned int		nr_runs;
};

/* items.kind of a line: merged state and lruvec lines are kind 1. */
static int store_kind(enum sim_item_kind kind)
{
	return kind == SIM_ITEM_EVENT ? MCR_EV_EVENTS : MCR_EV_STATE;
}

static int store_read(void *ctx, unsigned int pol, const struct replay_read *r)
{
	struct replay_store *s = ctx;
	struct db_read row = {
		.run_id = s->run_id[pol], .ts = r->ts, .cgroup_id = r->id, .pending = r->pending,
		.pending_since_flush = r->pending_since_flush,
		.sim_stats_updates = r->sim_stats_updates,
		.kernel_stats_updates = r->kernel_stats_updates, .cpu = r->cpu, .pid = r->pid,
		.items_wrong = (unsigned int)r->nr_errors, .force = r->force,
		.flushed = r->flushed, .stranded = r->stranded, .stale = r->stale,
		.kernel_needs_flush = r->kernel_needs_flush,
	};
	int64_t read_id;
	size_t i;
	int ret;

	ret = db_read_add(s->w, &row, &read_id);
	for (i = 0; !ret && i < r->nr_errors; i++) {
		struct db_read_error e = {
			.read_id = read_id, .error = r->errors[i].error, .age_ns = r->errors[i].age_ns,
			.kind = store_kind(r->errors[i].kind), .item = r->errors[i].item,
		};

		ret = db_read_error_add(s->w, &e);
	}
	return ret;
}

static int store_sample(void *ctx, unsigned int pol, const struct replay_sample *sm)
{
	struct replay_store *s = ctx;
	struct db_series row = {
		.run_id = s->run_id[pol], .cgroup_id = sm->id, .ts = sm->ts, .error = sm->error,
		.min_error = sm->min_error, .max_error = sm->max_error,
		.kind = store_kind(sm->kind), .item = sm->item,
	};

	return db_series_add(s->w, &row);
}

static int store_cgroup_sample(void *ctx, unsigned int pol, const struct replay_cgroup_sample *cs)
{
	struct replay_store *s = ctx;
	struct db_cgroup_sample row = {
		.run_id = s->run_id[pol], .cgroup_id = cs->id, .ts = cs->ts, .pending = cs->pending,
		.stats_updates = cs->stats_updates, .flushable = cs->flushable,
		.stranded = cs->stranded,
	};

	return db_cgroup_sample_add(s->w, &row);
}

static int store_episode(void *ctx, unsigned int pol, const struct sim_episode *ep)
{
	struct replay_store *s = ctx;
	struct db_episode row = {
		.run_id = s->run_id[pol], .cgroup_id = ep->id, .start_ts = ep->start,
		.end_ts = ep->end, .worst_error = ep->worst_error,
		.reads_skipped = ep->reads_skipped, .max_pending = ep->max_pending,
		.worst_kind = ep->worst_item < 0 ? 0 : store_kind(ep->worst_kind),
		.worst_item = ep->worst_item, .open = ep->open,
	};

	return db_episode_add(s->w, &row);
}

static int store_mismatch(void *ctx, const struct replay_mismatch *m)
{
	struct replay_store *s = ctx;
	struct db_mismatch row = {
		.run_id = s->run_id[0], .ts = m->ts, .cgroup_id = m->id,
		.kernel_stats_updates = m->kernel_stats_updates,
		.sim_stats_updates = m->sim_stats_updates, .cause = m->cause,
		.context = m->context, .cpu = m->cpu, .kernel_needs_flush = m->kernel_needs_flush,
		.sim_needs_flush = m->sim_needs_flush,
	};

	return db_mismatch_add(s->w, &row);
}

int replay_store_open(struct db *db, const char *kind, const char *file,
		      struct replay_params *p, const struct replay_trace *t,
		      struct replay_store **out)
{
	struct replay_store *s = calloc(1, sizeof(*s));
	char policies[REPLAY_MAX_RUNS * 32] = "";
	unsigned int i, j;
	int ret = 0;

	if (!s)
		return -ENOMEM;
	s->db = db;
	/* every policy of the invocation, once each */
	for (i = 0; i < p->nr_runs; i++) {
		for (j = 0; j < i && p->runs[j].policy != p->runs[i].policy; j++)
			;
		if (j == i)
			snprintf(policies + strlen(policies), sizeof(policies) - strlen(policies),
				 "%s%s", i ? "," : "", p->runs[i].policy->name);
	}
	for (i = 0; !ret && i < p->nr_runs; i++) {
		const struct replay_run *rn = &p->runs[i];
		/* TH of memcg_vmstats_needs_flush(); per-CPU remainders add < batch each */
		uint64_t th = (uint64_t)rn->batch * rn->nr_online;
		struct db_run run = {
			.kind = kind, .policy = rn->policy->name,
			.flush_model = p->model->name, .file = file,
			.policies = policies, .sample_ns = p->sample_ns, .th = th,
			.stranded_limit = th + (uint64_t)(rn->batch - 1) * rn->nr_online,
			.batch_size = rn->batch, .nr_cpus = rn->nr_online,
			.max_mismatches = p->max_mismatches, .validate = p->validate,
		};

		ret = db_run_add(db, &run, &s->run_id[i]);
	}
	s->nr_runs = p->nr_runs;
	if (!ret)
		ret = db_results_open(db, &s->w);
	if (ret) {
		replay_store_close(s);
		return ret;
	}
	p->sink = (struct replay_sink){
		.read = store_read, .sample = store_sample, .cgroup_sample = store_cgroup_sample,
		.episode = store_episode, .mismatch = store_mismatch, .ctx = s,
	};
	*out = s;
	return 0;
}

int64_t replay_store_run_id(const struct replay_store *st, unsigned int pol)
{
	return pol < st->nr_runs ? st->run_id[pol] : -1;
}

struct item_row {
	struct replay_store	*s;
	int64_t			run_id;
	uint64_t		id;
};

static int store_item(const struct replay_item_summary *is, void *ctx)
{
	struct item_row *ir = ctx;
	struct db_item_summary row = {
		.run_id = ir->run_id, .cgroup_id = ir->id, .max_read_error = is->max_read_error,
		.p99_read_error = is->p99_read_error, .mean_read_error = is->mean_read_error,
		.max_visible_error = is->max_visible_error,
		.max_settled_error = is->max_settled_error,
		.max_flush_error = is->max_flush_error,
		.mean_visible_error = is->mean_visible_error,
		.max_error_age_ms = is->max_error_age_ms, .final_error = is->final_error,
		.kind = store_kind(is->kind), .item = is->item,
	};

	return db_item_summary_add(ir->s->w, &row);
}

static int store_summaries(struct replay_store *s, struct replay *r, unsigned int pol)
{
	size_t i;
	int ret = 0;

	for (i = 0; !ret && i < replay_cgroup_count(r); i++) {
		uint64_t id = replay_cgroup_id(r, i);
		struct item_row ir = { .s = s, .run_id = s->run_id[pol], .id = id };
		struct db_cgroup_summary row;
		struct replay_summary sm;

		if (replay_summary_get(r, pol, id, &sm) < 0)
			continue;	/* named in the table, never seen by the pass */
		row = (struct db_cgroup_summary){
			.run_id = s->run_id[pol], .cgroup_id = id, .reads = sm.reads,
			.flushed_reads = sm.flushed_reads, .stale_reads = sm.stale_reads,
			.stranded_ms = sm.stranded_ms, .stranded_episodes = sm.episodes,
			.noticeable_episodes = sm.noticeable_episodes,
			.max_pending = sm.max_pending, .mean_pending = sm.mean_pending,
			.final_pending = sm.final_pending,
		};
		ret = db_cgroup_summary_add(s->w, &row);
		if (!ret)
			ret = replay_items_foreach(r, pol, id, store_item, &ir);
	}
	return ret;
}

static int store_run_counters(struct replay_store *s, struct replay *r, unsigned int pol,
			      double wall_s)
{
	struct db_run_counters rc = { .wall_s = wall_s, .events = replay_stats(r)->events };
	struct sim_cost c;

	sim_cost_get(replay_sim(r, pol), &c);
	rc.updates = c.updates;
	rc.flush_requests = c.flush_requests;
	rc.flushes = c.flushes;
	rc.visits = c.visits;
	rc.walk_steps = c.walk_steps;
	rc.pcpu_adds = c.pcpu_adds;
	rc.atomic_adds = c.atomic_adds;
	rc.dropped_batches = c.dropped_batches;
	rc.atomic_resets = c.atomic_resets;
	rc.unknown_ids = c.unknown_ids;
	return db_run_counters_set(s->db, s->run_id[pol], &rc);
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
	struct db_validation row = {
		.run_id = s->run_id[0], .policy = replay_params(r)->runs[0].policy->name,
		.flush_model = replay_params(r)->model->name, .diff_hist = diff,
		.flush_events = v->flush_events, .compared = v->compared,
		.skipped_before_sync = v->skipped_before_sync,
		.stats_updates_match = v->stats_updates_match,
		.needs_flush_match = v->needs_flush_match,
		.stats_updates_match_plain = v->stats_updates_match_plain,
		.needs_flush_match_plain = v->needs_flush_match_plain,
		.max_hypotheses = v->max_hypotheses,
	};

	store_diff_json(v, diff, sizeof(diff));
	return db_validation_add(s->db, &row);
}

/* The summaries, then every row the writer holds (series, item_summary) goes in. */
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
	if (!ret)
		ret = db_results_flush(s->w);
	return ret;
}

void replay_store_close(struct replay_store *s)
{
	if (!s)
		return;
	db_results_close(s->w);
	free(s);
}
