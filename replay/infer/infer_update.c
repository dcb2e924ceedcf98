// SPDX-License-Identifier: GPL-2.0
/*
 * infer_update.c - one traced update, on every hypothesis and on the base.
 *
 * An update in a window branches only on the remaining visits of its own
 * ancestor path: "before all of them", "after the first", ..., "after the
 * last"; every other visit commutes with it.  Each branch then takes
 * memcg_rstat_updated()'s walk on its own counters through the policy's step
 * (struct sim_policy, sim/policy.c), the very function the simulator applies
 * to its nodes, so inference knows every policy the simulator knows.
 *
 * Contract: the base simulator takes the update last, with its own walk;
 * a hypothesis whose path counters are all the base's takes no walk of its
 * own (it would compute the base's result).  Never prunes: merging and the
 * cap are infer_cap.c's, after the update.
 */
#include <errno.h>

#include "infer-local.h"

#define INF_COMPACT_EVERY	255	/* updates between full compactions, minus 1 */

/*
 * Hypothesis @k takes the update at @ts: one new hypothesis per visit of the
 * path still to come ("after vis[i]") whose cost is below @cut, pushed at
 * the end of in->h, and @k itself for "before all of them".  If some were
 * not made, in->skip and in->undo keep how to make them (inf_unskip()).
 */
static int inf_hyp_update(struct infer *in, size_t k, const struct inf_path *pa,
			  unsigned int cpu, uint64_t ts, uint64_t tag, uint64_t cut)
{
	size_t vis[INF_MAX_PATH + 1], nv, i, out = 0;
	struct idmap_ent *ent[2 * INF_MAX_PATH], **found = NULL;
	struct inf_undo *undo = NULL;
	uint64_t at, before, mask = 0, c[INF_MAX_PATH + 1];
	struct inf_front front;
	struct inf_hyp *h;
	int ret;

	nv = inf_branch_points(&in->h[k], pa, vis);
	/*
	 * With visits of the path to come, the test of commuting reads the
	 * path's entries: found once for it, the next test and the walk (the
	 * walk's from inf_path_find()'s cache of their slots).
	 */
	if (nv) {
		inf_path_find(in, &in->h[k], pa, cpu, ent);
		found = ent;
		if (inf_commutes(in, &in->h[k], pa, cpu, found))
			nv = 0;	/* no branch: each would be "before all" with visits made */
	}
	if (!nv && inf_path_same(in, &in->h[k], pa, cpu, found))
		return 0;	/* its walk is the base's */
	if (!nv)
		return inf_walk(in, &in->h[k], pa, cpu, NULL);
	front = in->h[k].front;
	at = inf_branch_at(in, ts);
	before = inf_branch_costs(in, &front, in->h[k].p, in->h[k].cost, at, vis, nv, c);
	for (i = 0; i < nv; i++)
		if (c[i] < cut)
			mask |= 1ull << i;
		else
			out++;
	ret = inf_branches(in, &in->h[k], false, pa, cpu, ts, tag, vis, nv, mask, c);
	if (ret)
		return ret;
	if (out) {
		in->unmade += out;
		if (inf_grow(&in->skip, &in->cap_skip, in->nr_skip + 1, sizeof(*in->skip)) ||
		    inf_grow(&in->undo, &in->cap_undo, in->nr_undo + 2 * pa->n, sizeof(*in->undo)))
			return -ENOMEM;
		in->skip[in->nr_skip++] = (struct inf_skip){ .k = k, .cost = in->h[k].cost,
							     .front = front,
							     .undo = in->nr_undo };
		undo = &in->undo[in->nr_undo];
		in->nr_undo += 2 * pa->n;
	}
	/* before all of them; in->h may have moved */
	h = &in->h[k];
	if (nv) {
		/* the path's next visit came after the update, as do those after it */
		h->cost = before;
		inf_front_push(&h->front, at, vis[0]);
		ret = inf_dec_push(in, h, tag);
		if (ret)
			return ret;
	}
	return inf_walk(in, h, pa, cpu, undo);
}

/*
 * Lazy mode (infer_lazy.c): nothing branches, and a hypothesis that reads
 * the base's counters where the base's walk goes takes the base's walk
 * (inf_path_same()).  Only the tables holding a key the base's walk reads
 * (in->owned) are asked, not every table holding the root's, which every
 * hypothesis of a window over the whole tree holds.
 */
/* @h's own walk, unless it holds nothing or reads what the base's walk reads. */
static int inf_lazy_walk(struct infer *in, struct inf_hyp *h, const struct inf_path *pa,
			 unsigned int cpu)
{
	if (!idmap_count(&h->e) || inf_path_same(in, h, pa, cpu, NULL))
		return 0;
	return inf_walk(in, h, pa, cpu, NULL);
}

static int inf_lazy_update(struct infer *in, const struct inf_path *pa, unsigned int cpu)
{
	size_t j, k;
	int ret;

	if (inf_lazy_alike(in, pa, cpu))
		return 0;	/* every table that differs takes the base's adds as they are */
	if (in->agg && !in->owned_lost && !in->win)
		return inf_lazy_select(in, pa, cpu, inf_walk_lazy);
	inf_lazy_sync_path(in, pa, cpu);
	in->changed = true;
	if (in->owned_lost) {
		for (k = 0; k < in->nr_h; k++) {
			ret = inf_lazy_walk(in, &in->h[k], pa, cpu);
			if (ret)
				return ret;
		}
		return 0;
	}
	in->useq++;
	for (j = 0; j < 2 * pa->reach; j++) {
		int64_t a = idmap_get(&in->owned, inf_path_key(pa, j, cpu), -1);
		int64_t x = a < 0 || in->ka[a].head == UINT32_MAX ? -1 : (int64_t)in->ka[a].head;

		/* a walk may add nodes (own[] moves) but never to this list's tail */
		for (; x >= 0; x = in->own[x].next == UINT32_MAX ? -1 : (int64_t)in->own[x].next) {
			struct inf_hyp *h = &in->h[in->own[x].hyp];

			if (h->useq == in->useq)
				continue;
			h->useq = in->useq;
			ret = inf_lazy_walk(in, h, pa, cpu);
			if (ret)
				return ret;
		}
	}
	return 0;
}

static bool inf_trivial(const struct infer *in)
{
	return in->nr_h == 1 && !idmap_count(&in->h[0].e) && !in->h[0].p;
}

/*
 * In a window, which counters of @pa some table may hold (in->pk_maybe):
 * one lookup each in wkeys, for the update, where each hypothesis would
 * look every one up in its own table.  wkeys lost: every table is asked.
 */
static void inf_path_maybe(struct infer *in, const struct inf_path *pa, unsigned int cpu)
{
	bool some = false;
	size_t j;

	in->pk_on = in->win && !in->wkeys_lost && !in->no_pk;
	for (j = 0; in->pk_on && j < 2 * pa->n; j++) {
		in->pk_maybe[j] = idmap_find(&in->wkeys, inf_path_key(pa, j, cpu)) != NULL;
		some |= !in->pk_maybe[j];
	}
	in->pk_masked += some;
}

/**
 * infer_update() - one traced update; see sim_update() for the arguments.
 */
int infer_update(struct infer *in, uint64_t ts, uint64_t t_min, unsigned int cpu, uint64_t id,
		 enum sim_item_kind kind, int item, int64_t val, uint64_t tag)
{
	uint32_t abs_val = sim_walk_abs(val);
	uint64_t cut = UINT64_MAX;
	struct inf_path pa;
	size_t k, nr_old;
	bool lazy, unheld;
	int ret;

	if (in->held.on) {
		if (inf_late_past_held(in, ts, t_min, cpu, id))
			in->late_held++;
		else if ((ret = inf_unhold(in)))
			return ret;
	}
	ret = inf_close_unless_late(in, ts, t_min);
	if (ret)
		return ret;
	if (ts > in->last_ts)
		in->last_ts = ts;
	in->nr_upd++;
	if (!abs_val || (!in->ddw && !in->win && inf_trivial(in)))
		return sim_update(in->s, ts, cpu, id, kind, item, val);
	/*
	 * The list's tables: none to ask (no path), but the diagram's tuples
	 * take it all the same.  With the diagram open, the path to the base's
	 * reach answers both; the rest of it only if the list or the diagram
	 * asks.
	 */
	if (in->ddw) {
		ret = inf_path_build(in, ts, cpu, id, abs_val, &pa, &unheld);
		if (ret)
			return ret;
		ret = inf_dd_update(in, &pa, cpu);
		if (ret == -EAGAIN) {
			inf_path_complete(in, &pa);
			ret = inf_dd_update(in, &pa, cpu);
		}
		if (ret)
			return ret;
	} else {
		unheld = inf_lazy_unheld(in, id, cpu, abs_val);
		if (!unheld) {
			ret = inf_path_build(in, ts, cpu, id, abs_val, &pa, NULL);
			if (!ret)
				ret = inf_dd_switch(in, &pa);
			if (!ret)
				ret = inf_dd_update(in, &pa, cpu);
			if (ret)
				return ret;
		}
	}
	if (unheld) {
		in->lazy_alike++;	/* alike with no table to ask */
	} else {
		if (in->lazy && pa.cut)
			ret = inf_lazy_end(in);	/* the base walks nodes the hypotheses do not */
		else if (in->lazy)
			ret = inf_lazy_update(in, &pa, cpu);
		if (ret)
			return ret;
	}
	/* lazy, the hypotheses took the update above: nothing branches between windows */
	/* and in a window, an update that commutes alike with every hypothesis's visits */
	lazy = in->lazy || inf_win_alike(in, &pa, cpu);
	nr_old = in->nr_h;
	in->nr_skip = in->nr_undo = 0;
	in->unmade = 0;
	ret = lazy ? 0 : inf_cut(in, &pa, ts, &cut);
	if (!lazy)
		inf_path_maybe(in, &pa, cpu);
	for (k = 0; !lazy && !ret && k < nr_old; k++)
		ret = inf_hyp_update(in, k, &pa, cpu, ts, tag, cut);
	if (!ret && !lazy)
		ret = inf_cut_settle(in, &pa, cpu, ts, tag, cut);
	in->pk_on = false;
	if (ret)
		return ret;
	if (in->nr_h > in->max_held)
		in->max_held = in->nr_h;
	ret = sim_update(in->s, ts, cpu, id, kind, item, val);
	if (ret)
		return ret;
	inf_budget(in, in->unmade);
	inf_capped_add(in, in->unmade);
	in->unmade_total += in->unmade;	/* the cap would have dropped them (inf_cut_distinct()) */
	/*
	 * Merge twins now and then (and restart lazy mode between windows);
	 * after a branch, merge and cap at once.
	 */
	if (!(++in->quiet & INF_COMPACT_EVERY)) {
		/*
		 * Between windows, tables that only took the base's adds stay
		 * distinct and as many: the merge would only sort them again.
		 */
		if (in->lazy && !in->changed) {
			in->stale = true;
			return 0;
		}
		return inf_compact(in, true);
	}
	if (in->nr_h != nr_old || in->unmade)
		return inf_compact(in, false);
	return 0;
}
