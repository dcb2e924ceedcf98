// SPDX-License-Identifier: GPL-2.0
/*
 * cost_share.c - which measured atomic add applies to a trace: how often the
 * memcgs an update's walk reaches were just updated from another CPU (cost.h).
 *
 * memcg_rstat_updated() (mm/memcontrol.c) adds full batches into the memcg's
 * atomic vmstats->stats_updates; that line is cheap to add to while one CPU
 * owns it and costs a transfer between caches (the contended figure) when
 * another CPU wrote it just before.  Which batches the walk moves depends on
 * the policy and on per-CPU phases the trace alone does not show, so this
 * measures the trace instead of a run: for every update and every memcg on
 * its path to the root, whether an update of another CPU reached that memcg
 * less than the window before.  The fraction of such (update, memcg) pairs is
 * the share of atomic adds priced as contended; the rest are priced as an
 * uncontended atomic add.  Cgroups unknown to the trace hang under the root,
 * as the simulator attaches them.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "db.h"
#include "idmap.h"

struct share_node {
	int32_t		parent;		/* index; -1 for the root */
	int32_t		last_cpu;	/* CPU of the latest update reaching it; -1 none */
	uint64_t	last_ts;
	uint64_t	other_ts;	/* latest update from a CPU other than last_cpu */
	bool		has_other;
};

struct share_state {
	struct idmap		ids;	/* cgroup id -> index */
	struct share_node	*n;
	size_t			nr, cap;
	int32_t			root;
};

static int share_add(struct share_state *s, uint64_t id, int32_t parent)
{
	int err;

	if (s->nr == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 64;
		struct share_node *nn = realloc(s->n, ncap * sizeof(*nn));

		if (!nn)
			return -ENOMEM;
		s->n = nn;
		s->cap = ncap;
	}
	err = idmap_put(&s->ids, id, (int64_t)s->nr);
	if (err)
		return err;
	s->n[s->nr] = (struct share_node){ .parent = parent, .last_cpu = -1 };
	return (int)s->nr++;
}

/* Cgroups come parents first: a parent is known when its children come. */
static int share_cgroup(const struct db_cgroup *cg, void *arg)
{
	struct share_state *s = arg;
	int32_t parent = cg->parent ? (int32_t)idmap_get(&s->ids, cg->parent, -1) : -1;
	int idx;

	if (parent < 0 && (cg->parent || cg->parent_unknown || cg->level != 0))
		parent = s->root;
	idx = share_add(s, cg->id, parent);
	if (idx < 0)
		return idx;
	if (s->root < 0 && parent < 0)
		s->root = idx;
	return 0;
}

static void share_update(struct share_state *s, int32_t idx, int cpu, uint64_t ts,
			 struct cost_share *out)
{
	for (; idx >= 0; idx = s->n[idx].parent) {
		struct share_node *n = &s->n[idx];
		bool other = true;
		uint64_t when = 0;

		if (n->last_cpu >= 0 && n->last_cpu != cpu)
			when = n->last_ts;
		else if (n->has_other)
			when = n->other_ts;
		else
			other = false;
		out->node_visits++;
		if (other && ts - when < out->window_ns)
			out->shared_visits++;
		if (n->last_cpu >= 0 && n->last_cpu != cpu) {
			n->other_ts = n->last_ts;
			n->has_other = true;
		}
		n->last_cpu = cpu;
		n->last_ts = ts;
	}
}

/**
 * cost_share_scan() - the trace's shared fraction of walk visits
 * @db: the trace
 * @window_ns: how recent another CPU's update must be to count (> 0)
 * @out: filled; fraction 0 for a trace without updates
 */
int cost_share_scan(struct db *db, uint64_t window_ns, struct cost_share *out)
{
	struct share_state s = { .root = -1 };
	struct db_iter *it = NULL;
	struct mcr_event ev;
	bool first = true;
	int err, rc = 0;

	if (!window_ns)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->window_ns = window_ns;
	err = idmap_reset(&s.ids, 256);
	if (!err)
		err = db_cgroups_foreach(db, share_cgroup, &s);
	if (!err)
		err = db_iter_open(db, &it);
	while (!err && (rc = db_iter_next(it, &ev)) > 0) {
		int32_t idx;

		if (first) {
			out->first_ts = ev.ts;
			first = false;
		}
		out->last_ts = ev.ts;
		if (!mcr_event_is_update(&ev) || !mcr_event_walk_val(&ev))
			continue;
		idx = (int32_t)idmap_get(&s.ids, ev.id, -1);
		if (idx < 0) {
			idx = share_add(&s, ev.id, s.root);
			if (idx < 0) {
				err = idx;
				break;
			}
		}
		out->updates++;
		share_update(&s, idx, ev.cpu, ev.ts, out);
	}
	if (!err && rc < 0)
		err = rc;
	if (it)
		db_iter_close(it);
	idmap_free(&s.ids);
	free(s.n);
	if (err)
		return err;
	out->fraction = out->node_visits ? (double)out->shared_visits / (double)out->node_visits : 0;
	return 0;
}
