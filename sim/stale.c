// SPDX-License-Identifier: GPL-2.0
/*
 * stale.c - what a memcg's memory.stat is missing: the pending volume
 * (stats_updates units) and the signed value per line, kept so each query is
 * O(1).  How a reader sees it (errors, stranded state) is lag.c's.
 *
 * missing(M) = sum over X in subtree(M) of pendmag[X] + sum_c unfl[X][c];
 * fresh(M) is the part of it from updates after M's last visit (the
 * stranded test's "pending since flush", lag.c), zeroed at each visit of M.
 * An update of X adds |v| to X and every ancestor (to the calm ones
 * lazily, lag.c).  A visit (X, c) moves unfl[X][c] + pendmag[X] into
 * pendmag[parent(X)]: only missing[X] drops, the ancestors still miss it.  The signed per-item values move the same way.
 * oldest[M] is the ts of the oldest update still counted in missing[M]; a
 * visit of X can only move oldest[X] (the moved deltas stay inside every
 * ancestor's subtree), and only when the deltas it moved held the oldest; the
 * recomputation then reads X's pending, the head of X's slots sorted by age
 * and X's children (O(children), not O(CPUs)).  Time integrals are brought up to date lazily, right
 * before anything that changes a node's missing, oldest or stuck state.
 * An update's half (sim_stale_update()) is in update.c, inline in the
 * update path; the helpers both halves use are in stale.h.
 */
#include <errno.h>
#include <stdlib.h>

#include "stale.h"

/* The integral of missing over time (pages * ns) up to @n's clock. */
static double sim_missing_area(const struct sim_node *n)
{
	return (double)((unsigned __int128)n->missing * n->last_ts - n->missing_ts);
}

/*
 * The age of what @n misses, last_ts - oldest, only grows while oldest
 * stands, so its largest value over the touches since oldest last changed
 * (age_from) is the one at the last of them, last_ts; a touch that advanced
 * no clock since then (last_ts == age_from) saw none.  Called after a touch
 * and before oldest changes (and on a copy when read): the maximum is the
 * one a check at every touch finds.  oldest is SIM_TS_NONE exactly while
 * missing is 0, when there is no age.
 */
static void sim_age_settle(struct sim_node *n)
{
	if (n->last_ts > n->age_from && n->oldest <= n->last_ts &&
	    n->last_ts - n->oldest > n->max_age_ns)
		n->max_age_ns = n->last_ts - n->oldest;
	n->age_from = n->last_ts;
}

void sim_oldest_set(struct sim_node *n, uint64_t oldest)
{
	sim_age_settle(n);
	n->oldest = oldest;
}

void sim_stale_touch(struct sim_node *n, uint64_t ts)
{
	sim_stale_touch_at(n, ts, false);
}

/*
 * The node's slots with unflushed deltas, oldest first, so the oldest of them
 * is the head.  Trace timestamps mostly grow, so an insert is at the tail.
 */
void sim_dirty_unlink(struct sim *s, struct sim_node *n, struct sim_pcpu *sl)
{
	if (sl->dirty_prev != SIM_NONE)
		s->slots[sl->dirty_prev].dirty_next = sl->dirty_next;
	else
		n->dirty_head = sl->dirty_next;
	if (sl->dirty_next != SIM_NONE)
		s->slots[sl->dirty_next].dirty_prev = sl->dirty_prev;
	else
		n->dirty_tail = sl->dirty_prev;
	sl->dirty_prev = SIM_NONE;
	sl->dirty_next = SIM_NONE;
}

/* min over what is still missing at @n: its pending, its CPUs, its children. */
static uint64_t sim_oldest_recompute(const struct sim *s, const struct sim_node *n)
{
	uint64_t o = n->pend_since;
	int32_t i = n->dirty_head;

	if (i != SIM_NONE && s->slots[i].unfl_since < o)
		o = s->slots[i].unfl_since;
	for (i = n->first_child; i != SIM_NONE; i = s->nodes[i].next_sibling)
		if (s->nodes[i].missing && s->nodes[i].oldest < o)
			o = s->nodes[i].oldest;
	return o;
}

/*
 * The staleness half of mem_cgroup_css_rstat_flush() / mem_cgroup_stat_aggregate():
 * this CPU's deltas and the children's pending deltas reach the node and wait
 * in the parent's pending.
 */
int sim_stale_visit(struct sim *s, uint64_t ts, int32_t slot)
{
	struct sim_pcpu *sl = &s->slots[slot];
	struct sim_node *n = &s->nodes[s->ctr[slot].node];
	struct sim_node *p = sim_parent(s, n);
	uint64_t amt = sl->unfl + n->pendmag;
	uint64_t since;
	int ret = 0;

	/*
	 * The node's flush: what is still missing here now predates it and is
	 * either collected by this flush's visits on other CPUs or raced with
	 * it; only later updates can strand the node (lag.c).
	 */
	n->fresh = 0;
	if (!amt)
		return 0;
	/* and so @p's: an ancestor's lines are at least as long */
	if (n->cap_it < s->nr_items) {
		ret = sim_node_items_reserve(s, n);
		if (ret)
			return ret;
	}
	sim_stale_touch(n, ts);
	since = sl->unfl && sl->unfl_since < n->pend_since ? sl->unfl_since : n->pend_since;
	sim_missing_change(n, amt, false);
	if (p) {
		p->pendmag += amt;
		if (since < p->pend_since)
			p->pend_since = since;
	}
	if (sl->unfl)
		sim_dirty_unlink(s, n, sl);
	sl->unfl = 0;
	sl->unfl_since = SIM_TS_NONE;
	n->pendmag = 0;
	n->pend_since = SIM_TS_NONE;
	sim_slot_items_move(s, ts, sl, n, p);
	if (!n->missing)
		sim_oldest_set(n, SIM_TS_NONE);
	else if (since <= n->oldest)
		sim_oldest_set(n, sim_oldest_recompute(s, n));
	return ret;
}

/*
 * Keep the flushable flag and the ancestors' count of flushable descendants
 * (which makes "stuck" O(1)) in step with the atomic.
 */
void sim_flushable_update(struct sim *s, struct sim_node *n, uint64_t ts)
{
	bool f = n->stats_updates > (int64_t)s->th;
	struct sim_node *p;

	if (f == n->flushable)
		return;
	/* @n stops being calm: nothing stays deferred (lag.c) */
	if (!f)
		sim_lazy_sync(s, ts);
	sim_stale_touch(n, ts);
	sim_lag_flushable(s, n, ts);
	n->flushable = f;
	sim_calm_sync(s, n);
	sim_lag_eval(s, n, ts);
	for (p = sim_parent(s, n); p; p = sim_parent(s, p)) {
		sim_stale_touch(p, ts);
		if (f)
			p->nr_flushable_desc++;
		else
			p->nr_flushable_desc--;
	}
}

/**
 * sim_stale_get() - staleness of one memcg now
 * @s: the simulator
 * @id: the memcg
 * @out: filled in
 *
 * Return: 0, or -ENOENT for an unknown id.
 */
int sim_stale_get(const struct sim *s, uint64_t id, struct sim_stale *out)
{
	int32_t idx = sim_node_lookup(s, id);
	const struct sim_node *n;

	if (idx == SIM_NONE)
		return -ENOENT;
	sim_lazy_settle_read(s);
	n = &s->nodes[idx];
	out->missing = n->missing;
	out->oldest_ts = n->missing && n->oldest != SIM_TS_NONE ? n->oldest : 0;
	out->stats_updates = n->stats_updates;
	out->flushable = n->flushable;
	out->stuck = sim_node_stuck(n);
	out->stranded = n->stranded;
	return 0;
}

/**
 * sim_item_missing() - signed pages of one item missing from a memcg's stat
 * @s: the simulator
 * @id: the memcg
 * @kind: item namespace
 * @item: the item
 * @out: filled in (0 if the item was never updated in the subtree)
 *
 * Return: 0, -ENOENT for an unknown id, -EINVAL for a bad kind.
 */
int sim_item_missing(const struct sim *s, uint64_t id, enum sim_item_kind kind, int item,
		     int64_t *out)
{
	int32_t idx = sim_node_lookup(s, id);
	int k;

	if (kind > SIM_ITEM_EVENT)
		return -EINVAL;
	if (idx == SIM_NONE)
		return -ENOENT;
	sim_lazy_settle_read(s);
	k = sim_item_find(s, kind, item);
	*out = k >= 0 && (uint32_t)k < s->nodes[idx].cap_it ? s->nodes[idx].lines[k].miss : 0;
	return 0;
}

/**
 * sim_items_foreach() - every item with non-zero signed missing, in first-seen order
 * @s: the simulator
 * @id: the memcg
 * @fn: called per item; a non-zero return stops the loop and is returned
 * @ctx: passed to @fn
 *
 * Return: 0, -ENOENT for an unknown id, or what @fn returned.
 */
int sim_items_foreach(const struct sim *s, uint64_t id,
		      int (*fn)(enum sim_item_kind kind, int item, int64_t missing, void *ctx),
		      void *ctx)
{
	int32_t idx = sim_node_lookup(s, id);
	const struct sim_node *n;
	uint32_t k;
	int ret;

	if (idx == SIM_NONE)
		return -ENOENT;
	sim_lazy_settle_read(s);
	n = &s->nodes[idx];
	for (k = 0; k < n->cap_it && k < s->nr_items; k++) {
		uint64_t key = s->item_key[k];

		if (!n->lines[k].miss)
			continue;
		ret = fn((enum sim_item_kind)(key >> 32), (int)(uint32_t)key, n->lines[k].miss, ctx);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * sim_acct_get() - time accounting of one memcg up to @now
 * @s: the simulator
 * @id: the memcg
 * @now: integrate up to here (earlier than the last change: up to that change)
 * @out: filled in
 *
 * Does not change the simulator.
 * Return: 0, or -ENOENT for an unknown id.
 */
int sim_acct_get(struct sim *s, uint64_t id, uint64_t now, struct sim_acct *out)
{
	int32_t idx = sim_node_lookup(s, id);
	struct sim_node n;

	if (idx == SIM_NONE)
		return -ENOENT;
	sim_lazy_settle_read(s);
	n = s->nodes[idx];
	sim_stale_touch(&n, now);
	sim_age_settle(&n);
	out->max_missing = sim_max_missing(&n);
	out->max_age_ns = n.max_age_ns;
	out->stuck_ns = n.stuck_ns;
	out->missing_area = sim_missing_area(&n);
	out->first_ts = n.first_ts;
	return 0;
}
