/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stale.h - what a memcg misses (stale.c): the pending volume, its age and
 * time integrals, the flushable flag and the stuck state, with the update's
 * half inline (update.c).
 */
#ifndef MCR_SIM_STALE_H
#define MCR_SIM_STALE_H

#include "items.h"

void sim_stale_touch(struct sim_node *n, uint64_t ts);
void sim_oldest_set(struct sim_node *n, uint64_t oldest);
void sim_dirty_unlink(struct sim *s, struct sim_node *n, struct sim_pcpu *sl);
int sim_stale_visit(struct sim *s, uint64_t ts, int32_t slot);
void sim_flushable_update(struct sim *s, struct sim_node *n, uint64_t ts);

/*
 * Flushable and not stranded, the state of most nodes at most updates
 * (stale_add()'s calm case): the two flags are adjacent bytes, tested with
 * one load and compare instead of two of each, at every ancestor.
 */
_Static_assert(offsetof(struct sim_node, stranded) == offsetof(struct sim_node, flushable) + 1,
	       "sim_node_calm() reads flushable and stranded as one 16-bit value");
static inline bool sim_node_calm(const struct sim_node *n)
{
	static const struct { bool flushable, stranded; } calm = { true, false };
	uint16_t v, c;

	memcpy(&v, &n->flushable, sizeof(v));
	memcpy(&c, &calm, sizeof(c));
	return v == c;
}

static inline bool sim_node_stuck(const struct sim_node *n)
{
	return !n->flushable && n->missing && n->nr_flushable_desc;
}

/*
 * Bring @n's clock up to @ts (out-of-order ts leave it) and integrate its
 * stuck time; @flushable: the caller knows @n is, so it is not stuck.
 * Inline in the update loop, where it runs at every ancestor.  The integral
 * of missing needs nothing here: each change of missing adds its own term
 * at the clock's time (sim_missing_change()).  The largest age is not looked
 * at here either, but where oldest changes (sim_age_settle()).
 */
static inline __attribute__((always_inline))
void sim_stale_touch_at(struct sim_node *n, uint64_t ts, bool flushable)
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
		n->max_missing = sim_max_missing(n);
		n->missing -= v;
		n->missing_ts -= term;
	}
}

#endif
