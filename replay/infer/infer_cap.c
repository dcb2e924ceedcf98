// SPDX-License-Identifier: GPL-2.0
/*
 * infer_cap.c - what the inference keeps: cost, merging, the cap.
 *
 * Each hypothesis carries a cost: how far, in visits, its choices sit from
 * where the spread model would put each update, summed over its history (a
 * Viterbi path score).  Merging keeps the cheaper history; the cap keeps the
 * cheapest hypotheses, so the orders that are most plausible by timing are
 * the last to go, whatever the cap.
 *
 * Contract: inf_compact() only drops, merges and reorders hypotheses, never
 * changes a kept one's counters; the order it leaves depends only on their
 * counters, costs and decisions (never on table layout, memory, or when
 * entries equal to the base were last dropped), so a run is deterministic.
 * Ties of cost are broken by a hash of the counters that differ from the
 * base.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "infer-local.h"

#define INF_COST_UNIT	1024
#define INF_CAP_FLOOR	64
#define INF_SAT_BUDGET	(256ull << 20)	/* hypothesis walks: seconds */

/*
 * Where the spread model puts an update at @ts, in 1/1024 visits: visit k is
 * due at (k + 1) units; UINT64_MAX when the window's length is unknown.
 */
static uint64_t inf_spread_x(const struct infer *in, uint64_t ts)
{
	unsigned __int128 x;

	if (!in->dur)
		return UINT64_MAX;
	if (ts <= in->t0)
		return 0;
	x = (unsigned __int128)(ts - in->t0) * (in->n_list + 1) * INF_COST_UNIT / in->dur;
	return x > (in->n_list + 1) * INF_COST_UNIT ? (in->n_list + 1) * INF_COST_UNIT : (uint64_t)x;
}

/*
 * The cost of placing visit @k somewhere in [@t_lo, @t_hi]: how far that
 * interval is from the spread model's time for it.  Charged once per visit
 * a decision places, not per update, so an order whose visits all run a
 * little late pays for each visit once, however many updates fall around it.
 */
static uint64_t inf_visit_cost(const struct infer *in, size_t k, uint64_t t_lo, uint64_t t_hi)
{
	uint64_t due = (k + 1) * INF_COST_UNIT, lo = inf_spread_x(in, t_lo), hi = inf_spread_x(in, t_hi);

	if (lo == UINT64_MAX)
		return 0;
	return due < lo ? lo - due : due > hi ? due - hi : 0;
}

/* A branch "after visit @vis" of a hypothesis of @cost whose last decision was at @t_last. */
uint64_t inf_branch_cost(const struct infer *in, uint64_t cost, uint64_t t_last, size_t vis,
			 uint64_t ts)
{
	/* visit vis came after this order's last decision, before ts */
	return cost + inf_visit_cost(in, vis, t_last, ts);
}

/* Both tables canonical: the same counters are the same entries. */
static bool inf_same(const struct inf_hyp *a, const struct inf_hyp *b)
{
	const struct idmap_ent *e, *f;
	uint32_t pos = 0;

	if (a->hash != b->hash || a->p != b->p || idmap_count(&a->e) != idmap_count(&b->e))
		return false;
	/* twins made by the same steps from one table lie slot for slot alike */
	if (a->e.mask == b->e.mask && (!a->e.e ||
	    !memcmp(a->e.e, b->e.e, ((size_t)a->e.mask + 1) * sizeof(*a->e.e))))
		return true;
	while ((e = idmap_next(&a->e, &pos))) {
		f = inf_find(b, e->key);
		if (!f || f->val != e->val)
			return false;
	}
	return true;
}

/*
 * Twins of equal cost differ only in when their last decision was (t_last,
 * what the next visits are charged from) and in the decisions themselves:
 * newest first, down to the chain they share.  Without this the twin kept
 * would be whichever qsort() met first, i.e. the array's order, which
 * depends on the merges before.
 */
static int inf_twin_cmp(const struct inf_hyp *x, const struct inf_hyp *y)
{
	const struct inf_dec *a = x->d, *b = y->d;

	if (x->t_last != y->t_last)
		return x->t_last < y->t_last ? -1 : 1;
	for (; a != b; a = a->up, b = b->up) {
		if (!a || !b)
			return a ? 1 : -1;
		if (a->tag != b->tag)
			return a->tag < b->tag ? -1 : 1;
		if (a->p != b->p)
			return a->p < b->p ? -1 : 1;
	}
	return 0;
}

/*
 * The sorts below order these keys, not the hypotheses (hundreds of bytes
 * each, moved log n times by the merge sort): then each hypothesis moves
 * once, to its place.  The order is the hypotheses' own comparison's: glibc's
 * qsort() is a stable merge sort either way.
 */
/* By hash, then cost: the first of identical hypotheses has the cheapest history. */
static int inf_hash_cmp(const void *a, const void *b, void *arg)
{
	const struct inf_sort_key *x = a, *y = b;
	const struct inf_hyp *h = arg;

	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	if (x->cost != y->cost)
		return x->cost < y->cost ? -1 : 1;
	return inf_twin_cmp(&h[x->idx], &h[y->idx]);
}

/*
 * By cost, then the hash, descending.  After inf_merge() no two hypotheses
 * have the same counters, so the order is total (up to a 64-bit hash
 * collision between different tables): which of several orders of equal
 * cost the cap keeps depends on their position and counters only.  Each
 * table is canonical whenever it is hashed, so neither the cadence of
 * compactions nor the threads (the inference is one sequential pass over
 * the trace's events, whatever --threads) change it.  Which of the equal
 * orders stays is arbitrary by design: the direction is the one that keeps
 * validate's matches on the recordings where the cap saturates.
 */
static int inf_cost_cmp(const void *a, const void *b, void *arg)
{
	const struct inf_sort_key *x = a, *y = b;

	if (x->cost != y->cost)
		return x->cost < y->cost ? -1 : 1;
	return x->hash > y->hash ? -1 : x->hash < y->hash;
}

/*
 * The hypotheses sorted by @cmp; the first @keep stay (in that order), the
 * others are freed.  Each moves once, into the spare array, which becomes
 * in->h.
 */
static int inf_sort(struct infer *in, int (*cmp)(const void *, const void *, void *), size_t keep)
{
	struct inf_sort_key *k;
	struct inf_hyp *t;
	size_t i, c;

	if (inf_grow(&in->keys, &in->cap_keys, in->nr_h, sizeof(*in->keys)) ||
	    inf_grow(&in->hs, &in->cap_hs, in->nr_h, sizeof(*in->hs)))
		return -ENOMEM;
	k = in->keys;
	for (i = 0; i < in->nr_h; i++)
		k[i] = (struct inf_sort_key){ .hash = in->h[i].hash, .cost = in->h[i].cost,
					      .idx = (uint32_t)i };
	qsort_r(k, in->nr_h, sizeof(*k), cmp, in->h);
	for (i = 0; i < in->nr_h; i++)
		in->hs[i] = in->h[k[i].idx];
	t = in->h;
	in->h = in->hs;
	in->hs = t;
	c = in->cap_h;
	in->cap_h = in->cap_hs;
	in->cap_hs = c;
	for (i = keep; i < in->nr_h; i++)
		inf_hyp_free(&in->h[i]);
	if (keep < in->nr_h)
		in->nr_h = keep;
	return 0;
}

/* Sorted by hash, identical neighbours go: the first (cheapest) stays. */
static int inf_merge(struct infer *in)
{
	size_t i, j, n = 0;
	int ret = inf_sort(in, inf_hash_cmp, in->nr_h);

	if (ret)
		return ret;
	for (i = 0; i < in->nr_h; i++) {
		for (j = n; j > 0 && in->h[j - 1].hash == in->h[i].hash; j--)
			if (inf_same(&in->h[j - 1], &in->h[i]))
				break;
		if (j > 0 && in->h[j - 1].hash == in->h[i].hash)
			inf_hyp_free(&in->h[i]);
		else
			in->h[n++] = in->h[i];
	}
	in->nr_h = n;
	return 0;
}

/*
 * Merge identical hypotheses, then keep the @cap cheapest.  @full (every
 * INF_COMPACT_EVERY updates, and at a window's close) outside a window also
 * begins lazy mode again.
 */
int inf_compact(struct infer *in, bool full)
{
	uint64_t min_cost = UINT64_MAX;
	size_t i;
	int ret;

	inf_lazy_sync(in);	/* the hashes read every entry */
	in->changed = in->stale = false;
	for (i = 0; i < in->nr_h; i++)
		in->h[i].hash = inf_hyp_hash(&in->h[i]);
	if (full && !in->win)
		inf_lazy_begin(in);
	ret = inf_merge(in);
	if (!ret && in->nr_h > in->cap) {
		in->capped += in->nr_h - in->cap;
		ret = inf_sort(in, inf_cost_cmp, in->cap);
	}
	if (ret)
		return ret;
	/* only differences of cost matter: keep them small */
	for (i = 0; i < in->nr_h; i++)
		if (in->h[i].cost < min_cost)
			min_cost = in->h[i].cost;
	for (i = 0; i < in->nr_h; i++)
		in->h[i].cost -= min_cost;
	if (in->nr_h > in->max_kept)
		in->max_kept = in->nr_h;
	if (in->lazy)
		in->owned_lost = inf_lazy_owned(in) != 0;	/* the array moved */
	return 0;
}

/*
 * The cap's budget.  Most of the time a few hypotheses are alive; a long
 * flush with many updates inside (a root flush over the whole tree) makes
 * hundreds for a while, until the next reads prune them, and that is when a
 * large cap pays.  Some traces stay saturated for good (every window full
 * of updates to every level): there a large cap only multiplies the cost, so
 * after INF_SAT_BUDGET walks above the floor the cap falls to the floor until
 * the count is down to a quarter of it.
 */
void inf_budget(struct infer *in, uint64_t unmade)
{
	unsigned int floor = in->max_hyp < INF_CAP_FLOOR ? in->max_hyp : INF_CAP_FLOOR;
	uint64_t n = in->nr_h + unmade;

	/* hysteresis: a lowered cap keeps the count at the floor, so wait for it to shrink */
	if (n <= (in->cap == in->max_hyp ? floor : floor / 4)) {
		in->sat_work = 0;
		in->cap = in->max_hyp;
		return;
	}
	in->sat_work += n;
	if (in->sat_work > INF_SAT_BUDGET && in->cap != floor) {
		in->cap = floor;
		in->lowered++;
	}
}
