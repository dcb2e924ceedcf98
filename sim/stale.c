// SPDX-License-Identifier: GPL-2.0
/*
 * stale.c - what a memcg's memory.stat is missing: the pending volume
 * (stats_updates units) and the signed value per line, kept so each query is
 * O(1).  How a reader sees it (errors, stranded state) is lag.c's.
 *
 * missing(M) = sum over X in subtree(M) of pendmag[X] + sum_c unfl[X][c];
 * fresh(M) is the part of it from updates after M's last visit (the
 * stranded test's "pending since flush", lag.c), zeroed at each visit of M.
 * An update of X adds |v| to X and every ancestor.  A visit (X, c) moves
 * unfl[X][c] + pendmag[X] into pendmag[parent(X)]: only missing[X] drops, the
 * ancestors still miss it.  The signed per-item values move the same way.
 * oldest[M] is the ts of the oldest update still counted in missing[M]; a
 * visit of X can only move oldest[X] (the moved deltas stay inside every
 * ancestor's subtree), and only when the deltas it moved held the oldest; the
 * recomputation then reads X's pending, the head of X's slots sorted by age
 * and X's children (O(children), not O(CPUs)).  Time integrals are brought up to date lazily, right
 * before anything that changes a node's missing, oldest or stuck state.
 */
#include <errno.h>
#include <stdlib.h>

#include "sim-local.h"

/*
 * Bring @n's clock up to @ts (out-of-order ts leave it) and integrate its
 * stuck time; @flushable: the caller knows @n is, so it is not stuck.
 * Inline in the update loop, where it runs at every ancestor.  The integral
 * of missing needs nothing here: each change of missing adds its own term
 * at the clock's time (sim_missing_change()).  The largest age is not looked
 * at here either, but where oldest changes (sim_age_settle()).
 */
static inline __attribute__((always_inline))
void stale_touch(struct sim_node *n, uint64_t ts, bool flushable)
{
	if (ts <= n->last_ts)
		return;
	if (!flushable && sim_node_stuck(n))
		n->stuck_ns += ts - n->last_ts;
	n->last_ts = ts;
}

/*
 * missing grows (@add) or drops by @v at the node's clock, last_ts: from
 * then on the integral grows by v per ns more or less, so it is
 * sum(+-v_i * (T - t_i)) = missing * T - sum(+-v_i * t_i).  Exact in
 * unsigned 128-bit arithmetic: the terms wrap, the result (below
 * 2^64 * 2^64) does not.  The double the additions at every touch gave
 * rounded at each of them; this rounds once, when read.
 */
static inline __attribute__((always_inline))
void sim_missing_change(struct sim_node *n, uint64_t v, bool add)
{
	unsigned __int128 term = (unsigned __int128)v * n->last_ts;

	if (add) {
		n->missing += v;
		n->missing_ts += term;
	} else {
		n->missing -= v;
		n->missing_ts -= term;
	}
}

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

static void sim_oldest_set(struct sim_node *n, uint64_t oldest)
{
	sim_age_settle(n);
	n->oldest = oldest;
}

void sim_stale_touch(struct sim_node *n, uint64_t ts)
{
	stale_touch(n, ts, false);
}

/*
 * One node's share of an update of line @k: @n and every ancestor miss it
 * until visits move it up to them.  @calm: @n is flushable and not stranded,
 * as most are at most updates; then it is not stuck, its non-flushable clock
 * stands still (sim_nf() is nf_ns), no episode is open (ep_scan implies
 * stranded) and sim_lag_eval() has nothing to do, since only a node that is
 * not flushable strands.  The calm instance runs the same operations in the
 * same order as the general one, without the tests whose outcome it knows.
 */
static inline __attribute__((always_inline))
void stale_add(struct sim *s, struct sim_node *n, uint64_t ts, uint32_t k, uint64_t mag,
	       uint64_t walk_mag, int64_t d, bool calm)
{
	stale_touch(n, ts, calm);
	sim_missing_change(n, mag, true);
	n->fresh += walk_mag;
	if (ts < n->oldest)
		sim_oldest_set(n, ts);
	if (n->missing > n->max_missing)
		n->max_missing = n->missing;
	if (calm) {
		sim_line_touch(&n->lines[k], n->nf_ns);
		n->lines[k].miss += d;
		return;
	}
	sim_item_touch(s, n, k, ts);
	n->lines[k].miss += d;
	sim_item_changed(s, n, k);
	/*
	 * Before the walk: a memcg the walk is about to make flushable
	 * is stranded for no time, which sim_lag_change() does not count.
	 */
	sim_lag_eval(s, n, ts);
}

/*
 * The node's slots with unflushed deltas, oldest first, so the oldest of them
 * is the head.  Trace timestamps mostly grow, so an insert is at the tail.
 */
static void sim_dirty_unlink(struct sim *s, struct sim_node *n, struct sim_pcpu *sl)
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

static void sim_dirty_insert(struct sim *s, struct sim_node *n, int32_t idx)
{
	struct sim_pcpu *sl = &s->slots[idx];
	int32_t after = n->dirty_tail;

	while (after != SIM_NONE && s->slots[after].unfl_since > sl->unfl_since)
		after = s->slots[after].dirty_prev;
	sl->dirty_prev = after;
	sl->dirty_next = after == SIM_NONE ? n->dirty_head : s->slots[after].dirty_next;
	if (after == SIM_NONE)
		n->dirty_head = idx;
	else
		s->slots[after].dirty_next = idx;
	if (sl->dirty_next == SIM_NONE)
		n->dirty_tail = idx;
	else
		s->slots[sl->dirty_next].dirty_prev = idx;
}

#define SIM_VAL_MAX	(INT64_C(1) << 47)

/* Account one update of line @k (sim_item_index()) of slot @slot's memcg, unflushed on its CPU. */
int sim_stale_update(struct sim *s, uint64_t ts, int32_t slot, enum sim_item_kind kind,
		     uint32_t k, int64_t val)
{
	struct sim_pcpu *sl = &s->slots[slot];
	int32_t walk = (int32_t)(uint32_t)(uint64_t)val;
	int32_t idx;
	uint64_t mag, walk_mag;
	struct sim_node *n;
	int64_t d;
	int ret;

	/* what the counters see (memcg_rstat_updated()'s int val) */
	walk_mag = walk < 0 ? -(uint64_t)walk : (uint64_t)walk;
	if (kind == SIM_ITEM_EVENT) {
		/* an unsigned long count; beyond INT64_MAX the signed value saturates */
		mag = (uint64_t)val;
		d = val < 0 ? INT64_MAX : val;
	} else {
		mag = val < 0 ? -(uint64_t)val : (uint64_t)val;
		d = val;
	}
	/*
	 * The sums add d and mag per update: a value from a damaged file
	 * (INT64_MAX) would overflow them at the second update.  2^47 pages
	 * (512 PiB) is beyond any real update, and 2^16 of them still fit.
	 */
	d = d > SIM_VAL_MAX ? SIM_VAL_MAX : d < -SIM_VAL_MAX ? -SIM_VAL_MAX : d;
	if (mag > (uint64_t)SIM_VAL_MAX)
		mag = (uint64_t)SIM_VAL_MAX;
	ret = sim_slot_item_add(s, sl, (uint16_t)k, d);
	if (ret)
		return ret;
	if (!sl->unfl || ts < sl->unfl_since) {
		n = &s->nodes[sl->node];
		if (sl->unfl)
			sim_dirty_unlink(s, n, sl);
		sl->unfl_since = ts;
		sim_dirty_insert(s, n, slot);
	}
	sl->unfl += mag;

	for (idx = sl->node; idx != SIM_NONE; idx = n->parent) {
		n = &s->nodes[idx];
		if (n->cap_it <= k) {
			ret = sim_node_items_reserve(s, n);
			if (ret)
				return ret;
		}
		if (n->flushable && !n->stranded)
			stale_add(s, n, ts, k, mag, walk_mag, d, true);
		else
			stale_add(s, n, ts, k, mag, walk_mag, d, false);
	}
	return 0;
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
int sim_stale_visit(struct sim *s, uint64_t ts, struct sim_pcpu *sl)
{
	struct sim_node *n = &s->nodes[sl->node];
	struct sim_node *p = sim_parent(s, n);
	uint64_t amt = sl->unfl + n->pendmag;
	uint64_t since;
	int ret;

	/*
	 * The node's flush: what is still missing here now predates it and is
	 * either collected by this flush's visits on other CPUs or raced with
	 * it; only later updates can strand the node (lag.c).
	 */
	n->fresh = 0;
	if (!amt)
		return 0;
	ret = sim_node_items_reserve(s, n);
	if (!ret && p)
		ret = sim_node_items_reserve(s, p);
	if (ret)
		return ret;
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
	n = s->nodes[idx];
	sim_stale_touch(&n, now);
	sim_age_settle(&n);
	out->max_missing = n.max_missing;
	out->max_age_ns = n.max_age_ns;
	out->stuck_ns = n.stuck_ns;
	out->missing_area = sim_missing_area(&n);
	out->first_ts = n.first_ts;
	return 0;
}
