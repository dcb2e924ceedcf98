// SPDX-License-Identifier: GPL-2.0
/*
 * pass.c - the summary replay prints once the pass is done: the
 * ancestors a reader got the worst page line of, under each run, and each
 * run's cost.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "num.h"
#include "replay.h"
#include "pass.h"
#include "results.h"

#define REPLAY_TOP_ANCESTORS	5

/* A grid: some run is not at the trace's own batch and CPUs.  Then every label says both. */
static bool replay_is_grid(const struct replay_params *p, const struct replay_trace *t)
{
	unsigned int i;

	for (i = 0; i < p->nr_runs; i++)
		if (!replay_run_is_own(&p->runs[i], t))
			return true;
	return false;
}

/* "break", or "break b=32 cpus=2" in a grid. */
static const char *replay_label(char *buf, size_t len, const struct replay_run *rn, bool grid)
{
	if (grid)
		snprintf(buf, len, "%s b=%u cpus=%u", rn->policy->name, rn->batch, rn->nr_online);
	else
		snprintf(buf, len, "%s", rn->policy->name);
	return buf;
}

/* The label column's width: 10 as it always was, wider for a grid's labels. */
static int replay_label_width(const struct replay_params *p, bool grid)
{
	unsigned int i;
	char buf[64];
	int w = 10;

	for (i = 0; i < p->nr_runs; i++) {
		int n = (int)strlen(replay_label(buf, sizeof(buf), &p->runs[i], grid));

		w = n > w ? n : w;
	}
	return w;
}

/*
 * The worst page line a reader of one cgroup got under one policy, and the
 * largest visible error of a page line (what a reader would have got at the
 * worst moment: the one figure for a cgroup nobody read).
 */
struct worst {
	uint64_t		err;
	uint64_t		visible;
	int			item;
	enum sim_item_kind	kind;
	bool			any;
};

static int worst_cb(const struct replay_item_summary *is, void *ctx)
{
	struct worst *w = ctx;

	if (is->kind == SIM_ITEM_EVENT)
		return 0;	/* counts, not pages: ranked apart */
	if (is->max_visible_error > w->visible)
		w->visible = is->max_visible_error;
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

/*
 * The ancestors (cgroups with children) ranked by the worst error a reader of
 * them got on a page line of memory.stat, over the policies; each policy's
 * worst line, its stale reads and stranded time.
 */
void replay_print_ancestors(struct db *db, struct replay *r, int64_t page_size)
{
	const struct replay_params *p = replay_params(r);
	bool grid = replay_is_grid(p, replay_trace(r));
	int lw = replay_label_width(p, grid);
	size_t n = replay_cgroup_count(r), i, k = 0;
	struct anc_row *rows = calloc(n ? n : 1, sizeof(*rows));
	unsigned int pol;

	if (!rows)
		return;
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
	printf("Ancestors by the worst error a reader got on a page line of memory.stat:\n");
	if (!k)
		printf("  (no cgroup with children)\n");
	for (i = 0; i < k && i < REPLAY_TOP_ANCESTORS; i++) {
		const char *path = replay_cgroup_path(r, rows[i].id);

		printf("  %s (id %" PRIu64 ")\n", path ? path : "?", rows[i].id);
		printf("    %-*s %-12s %-24s %-13s %-13s %s\n", lw, "policy", "worst read", "line",
		       "stale reads", "visible max", "stranded");
		for (pol = 0; pol < p->nr_runs; pol++) {
			struct replay_summary s;
			struct worst w = { 0 };
			char a[32], b[32], v[32], name[64] = "-", reads[32], lab[64];

			if (replay_summary_get(r, pol, rows[i].id, &s) < 0 ||
			    replay_items_foreach(r, pol, rows[i].id, worst_cb, &w) < 0)
				continue;
			if (w.any && w.err)
				db_item_name(db, MCR_EV_STATE, w.item, name, sizeof(name));
			snprintf(reads, sizeof(reads), "%" PRIu64 " of %" PRIu64, s.stale_reads, s.reads);
			if (!s.reads)
				snprintf(a, sizeof(a), "not read");
			else
				cli_pages_str(a, sizeof(a), (double)w.err, page_size);
			printf("    %-*s %-12s %-24s %-13s %-13s %s in %" PRIu64 "\n", lw,
			       replay_label(lab, sizeof(lab), &p->runs[pol], grid), a, name, reads,
			       cli_pages_str(v, sizeof(v), (double)w.visible, page_size),
			       cli_ms_str(b, sizeof(b), s.stranded_ms), s.episodes);
		}
	}
	free(rows);
}

void replay_print_costs(struct replay_pass *ps)
{
	const struct replay_params *p = replay_params(ps->r);
	const struct replay_stats *st = replay_stats(ps->r);
	bool grid = replay_is_grid(p, replay_trace(ps->r));
	int lw = replay_label_width(p, grid);
	unsigned int pol;
	char lab[64];

	printf("\nCost per %s:\n  %-*s %12s %12s %12s %10s %10s %12s %12s %8s\n",
	       grid ? "run" : "policy", lw, "policy", "walk_steps", "pcpu_adds", "atomic_adds", "dropped", "flushes", "visits",
	       "atomic_resets", "run_id");
	for (pol = 0; pol < p->nr_runs; pol++) {
		struct sim_cost c;

		sim_cost_get(replay_sim(ps->r, pol), &c);
		printf("  %-*s %12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %10" PRIu64 " %10" PRIu64
		       " %12" PRIu64 " %12" PRIu64 " %8" PRId64 "\n", lw,
		       replay_label(lab, sizeof(lab), &p->runs[pol], grid),
		       c.walk_steps, c.pcpu_adds, c.atomic_adds, c.dropped_batches, c.flushes,
		       c.visits, c.atomic_resets, replay_store_run_id(ps->store, pol));
	}
	printf("\n%" PRIu64 " events (%" PRIu64 " updates, %" PRIu64 " reads) in %.2f s; lock windows: "
	       "%" PRIu64 " of flush requests, %" PRIu64 " lock-only, %" PRIu64 " with visit events",
	       st->events, st->updates, st->flush_events, ps->wall_s, st->win.owned,
	       st->win.lock_only, st->win.explicit_windows);
	if (st->win.missing)
		printf(", %" PRIu64 " flushes whose windows never came", st->win.missing);
	if (st->win.unlock_lost)
		printf(", %" PRIu64 " closed without their unlock event (inexact)",
		       st->win.unlock_lost);
	printf(".\n");
}
