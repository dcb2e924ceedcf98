/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lag.h - the error a reader of memory.stat sees (lag.c): the non-flushable
 * clock, the lines' visible error and the stranded episodes, with the calls
 * the update path makes inline.
 */
#ifndef MCR_SIM_LAG_H
#define MCR_SIM_LAG_H

#include "sim-local.h"

void sim_lag_change(struct sim *s, struct sim_node *n, uint64_t ts);
void sim_lag_worst(struct sim *s, struct sim_node *n, uint32_t k);
void sim_lag_scan(struct sim *s, struct sim_node *n);
void sim_lag_flushable(struct sim *s, struct sim_node *n, uint64_t ts);

void sim_lazy_settle(struct sim *s);
void sim_calm_sync(struct sim *s, const struct sim_node *n);

/*
 * Before a call reads or changes what an update may have left deferred
 * (lag.c): every deferred update applied, and the clocks' high mark
 * raised to @ts, below which no update is deferred.
 */
static inline void sim_lazy_sync(struct sim *s, uint64_t ts)
{
	if (ts > s->ts_hi)
		s->ts_hi = ts;
	if (s->owe_any)
		sim_lazy_settle(s);
}

/*
 * The same for a query, which takes the simulator const: applying what is
 * deferred changes no value a caller can see, only where it is kept.
 */
static inline void sim_lazy_settle_read(const struct sim *s)
{
	if (s->owe_any)
		sim_lazy_settle((struct sim *)s);
}

/* The first error the episode sink returned since the last call, then 0. */
static inline int sim_lag_err_take(struct sim *s)
{
	int ret = s->ep_err;

	s->ep_err = 0;
	return ret;
}

/* The node's non-flushable time up to @ts (earlier than the last change: up to it). */
static inline uint64_t sim_nf(const struct sim_node *n, uint64_t ts)
{
	return n->nf_ns + (!n->flushable && ts > n->nf_last ? ts - n->nf_last : 0);
}

/* sim_sn() with the simulator's settled time up to then, @g = sim_settled(s, ts). */
static inline uint64_t sim_sn_at(const struct sim_node *n, uint64_t g)
{
	if (n->flushable)
		return n->sn_ns;
	return n->sn_ns + (g > n->sn_g ? g - n->sn_g : 0);
}

/* The node's non-flushable time up to @ts during which no flush was in progress. */
static inline uint64_t sim_sn(const struct sim *s, const struct sim_node *n, uint64_t ts)
{
	if (n->flushable)
		return n->sn_ns;
	return sim_sn_at(n, sim_settled(s, ts));
}

/*
 * Bring line @k of @n up to @ts before its error changes: the error it held
 * since its last change was visible for the non-flushable time in between
 * (@nf: sim_nf()), settled for the part of it no flush was in progress (@sn:
 * sim_sn()), and in flush for the rest; and the lines an episode started
 * with, before the first of them changes.
 */
static inline void sim_line_touch(struct sim_line *a, uint64_t nf, uint64_t sn)
{
	if (nf > a->nf_at) {
		uint64_t e = sim_abs64(a->miss);

		a->vis_area += (double)e * (double)(nf - a->nf_at);
		if (sn > a->sn_at) {
			if (e > a->max_settled)
				a->max_settled = e;
		}
		if (nf - a->nf_at > sn - a->sn_at && e > a->max_flush)
			a->max_flush = e;
		a->sn_at = sn;
		a->nf_at = nf;
	}
}

/* @g: sim_settled(s, ts), the same for every node an update touches */
static inline void sim_item_touch(struct sim *s, struct sim_node *n, uint32_t k, uint64_t ts,
				  uint64_t g)
{
	uint64_t nf = sim_nf(n, ts);

	if (n->ep_scan)
		sim_lag_scan(s, n);
	sim_line_touch(&n->lines[k], nf, sim_sn_at(n, g));
}

/*
 * @n's pending volume, flushable flag or the threshold changed at @ts: the
 * common case (nothing to do) stays inline on the update path.
 */
static inline void sim_lag_eval(struct sim *s, struct sim_node *n, uint64_t ts)
{
	bool st = !n->flushable && n->fresh > s->strand_th;

	if (st != n->stranded || (st && n->missing > n->ep_max_pending))
		sim_lag_change(s, n, ts);
}

/* After line @k of @n changed: the open episode's worst line. */
static inline void sim_item_changed(struct sim *s, struct sim_node *n, uint32_t k)
{
	if (n->stranded)
		sim_lag_worst(s, n, k);
}

#endif
