// SPDX-License-Identifier: GPL-2.0
/*
 * pass.c - replay's end-of-pass summary as a report model (model.h), from
 * the replay it just made: its runs in the pass's order with their counts,
 * and its ancestors (cgroups with children) a reader got the worst page line
 * of, one line per run.  The text ops write it (text.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "pass.h"
#include "replay.h"
#include "results.h"

#define REPLAY_TOP_ANCESTORS	5

/* A grid: some run is not at the trace's own batch and CPUs.  Then every name says both. */
static bool replay_is_grid(const struct replay_params *p, const struct replay_trace *t)
{
	unsigned int i;

	for (i = 0; i < p->nr_runs; i++)
		if (!replay_run_is_own(&p->runs[i], t))
			return true;
	return false;
}

/*
 * The worst page line a reader of one cgroup got under one policy, and the
 * largest settled visible error of a page line (what a reader would have got
 * at the worst moment outside a flush: the one figure for a cgroup nobody
 * read), with the in-flush transient apart.
 */
struct worst {
	uint64_t		err;
	uint64_t		visible;	/* settled: outside flushes */
	uint64_t		flush;		/* the in-flush transient */
	int			item;
	enum sim_item_kind	kind;
	bool			any;
};

static int worst_cb(const struct replay_item_summary *is, void *ctx)
{
	struct worst *w = ctx;

	if (is->kind == SIM_ITEM_EVENT)
		return 0;	/* counts, not pages: ranked apart */
	if (is->max_settled_error > w->visible)
		w->visible = is->max_settled_error;
	if (is->max_flush_error > w->flush)
		w->flush = is->max_flush_error;
	if (!w->any || is->max_read_error > w->err) {
		w->err = is->max_read_error;
		w->item = is->item;
		w->kind = is->kind;
		w->any = true;
	}
	return 0;
}

struct anc_row {
	uint64_t	id;
	uint64_t	worst;	/* over the policies, pages */
	uint64_t	gap;	/* worst - best policy */
};

static int anc_cmp(const void *a, const void *b)
{
	const struct anc_row *x = a, *y = b;

	if (x->worst != y->worst)
		return x->worst < y->worst ? 1 : -1;
	if (x->gap != y->gap)
		return x->gap < y->gap ? 1 : -1;
	return (x->id > y->id) - (x->id < y->id);
}

/* The runs of the pass, in its order, with their counts. */
static int pass_runs(struct report_host *h, struct replay_pass *ps)
{
	const struct replay_params *p = replay_params(ps->r);
	unsigned int pol;

	for (pol = 0; pol < p->nr_runs; pol++) {
		struct report_run *ru = report_host_add_run(h);
		struct sim_cost c;

		if (!ru)
			return -ENOMEM;
		sim_cost_get(replay_sim(ps->r, pol), &c);
		ru->id = replay_store_run_id(ps->store, pol);
		ru->rank = sim_policy_rank(p->runs[pol].policy->name);
		ru->batch = p->runs[pol].batch;
		ru->cpus = p->runs[pol].nr_online;
		ru->policy = strdup(p->runs[pol].policy->name);
		ru->flush_model = strdup(p->model ? p->model->name : "-");
		if (!ru->policy || !ru->flush_model)
			return -ENOMEM;
		ru->counters = (struct db_run_counters){
			.updates = c.updates, .walk_steps = c.walk_steps, .pcpu_adds = c.pcpu_adds,
			.atomic_adds = c.atomic_adds, .dropped_batches = c.dropped_batches,
			.flush_requests = c.flush_requests, .flushes = c.flushes, .visits = c.visits,
			.atomic_resets = c.atomic_resets, .unknown_ids = c.unknown_ids,
		};
		ru->have_counters = true;
	}
	return 0;
}

/* One ancestor's line per run: its worst page line, stale reads, stranded time. */
static int pass_ancestor(struct report_host *h, struct db *db, struct replay *r, uint64_t id)
{
	const struct replay_params *p = replay_params(r);
	const char *path = replay_cgroup_path(r, id);
	unsigned int pol;

	for (pol = 0; pol < p->nr_runs; pol++) {
		struct replay_summary s;
		struct worst w = { 0 };
		struct report_line *l;
		char name[64] = "-";

		if (replay_summary_get(r, pol, id, &s) < 0 ||
		    replay_items_foreach(r, pol, id, worst_cb, &w) < 0)
			continue;
		if (w.any && w.err)
			db_item_name(db, MCR_EV_STATE, w.item, name, sizeof(name));
		l = report_host_add_line(h);
		if (!l)
			return -ENOMEM;
		*l = (struct report_line){
			.cgroup = strdup(path ? path : "?"), .item = strdup(name),
			.run_id = h->runs[pol].id, .cgroup_id = id, .level = -1,
			.reads = s.reads, .stale_reads = s.stale_reads, .max_read = w.err,
			.max_visible = w.visible > w.flush ? w.visible : w.flush,
			.max_settled = w.visible, .max_flush = w.flush, .split = true,
			.noticeable = s.noticeable_episodes, .stranded_ms = s.stranded_ms,
			.stranded_episodes = s.episodes,
		};
		if (!l->cgroup || !l->item)
			return -ENOMEM;
	}
	return 0;
}

/*
 * The ancestors (cgroups with children) ranked by the worst error a reader of
 * them got on a page line of memory.stat, over the policies: the first
 * REPLAY_TOP_ANCESTORS.
 */
static int pass_ancestors(struct report_host *h, struct db *db, struct replay *r)
{
	const struct replay_params *p = replay_params(r);
	size_t n = replay_cgroup_count(r), i, k = 0;
	struct anc_row *rows = calloc(n ? n : 1, sizeof(*rows));
	unsigned int pol;
	int err = 0;

	if (!rows)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		uint64_t id = replay_cgroup_id(r, i), lo = UINT64_MAX, hi = 0;

		if (replay_cgroup_is_leaf(r, id))
			continue;
		for (pol = 0; pol < p->nr_runs; pol++) {
			struct worst w = { 0 };

			if (replay_items_foreach(r, pol, id, worst_cb, &w) < 0)
				break;
			lo = w.err < lo ? w.err : lo;
			hi = w.err > hi ? w.err : hi;
		}
		if (pol == p->nr_runs)
			rows[k++] = (struct anc_row){ .id = id, .worst = hi, .gap = hi - lo };
	}
	qsort(rows, k, sizeof(*rows), anc_cmp);
	for (i = 0; i < k && i < REPLAY_TOP_ANCESTORS && !err; i++)
		err = pass_ancestor(h, db, r, rows[i].id);
	free(rows);
	return err;
}

int report_pass_model(struct report_model *m, struct db *db, struct replay_pass *ps,
		      int64_t page_size)
{
	static const struct report_load none;
	struct report_host *h;
	int err;

	memset(m, 0, sizeof(*m));
	m->o = none;
	m->hosts = h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	m->nr_hosts = 1;
	h->db = db;
	h->pass = true;
	h->page_size = page_size;
	h->grid = replay_is_grid(replay_params(ps->r), replay_trace(ps->r));
	err = pass_runs(h, ps);
	if (!err)
		err = pass_ancestors(h, db, ps->r);
	if (!err)
		err = report_host_finish(h);
	m->grid = h->grid;
	return err;
}
