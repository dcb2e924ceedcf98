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
 * Contract: inf_compact() only drops, merges and (at the cap) reorders
 * hypotheses, never changes a kept one's counters; which it keeps depends
 * only on their counters, costs and decisions (never on table layout,
 * memory, when entries equal to the base were last dropped, or the array's
 * order), so a run is deterministic.  Ties of cost are broken by a hash of
 * the counters that differ from the base; nothing reads the array's order
 * as a result (infer_finish() breaks its ties by the hash too).
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
uint64_t inf_branch_at(const struct infer *in, uint64_t ts)
{
	unsigned __int128 x;
	uint64_t y;

	if (!in->dur)
		return UINT64_MAX;
	if (ts <= in->t0)
		return 0;
	/* in 64 bits unless the product overflows (a long window of many visits) */
	if (!__builtin_mul_overflow(ts - in->t0, (uint64_t)(in->n_list + 1) * INF_COST_UNIT, &y))
		x = y / in->dur;
	else
		x = (unsigned __int128)(ts - in->t0) * (in->n_list + 1) * INF_COST_UNIT / in->dur;
	return x > (in->n_list + 1) * INF_COST_UNIT ? (in->n_list + 1) * INF_COST_UNIT : (uint64_t)x;
}

/*
 * The cost of each branch "after vis[i]", i < @nv, of a hypothesis of @cost,
 * into @c: placing visit vis[i] somewhere between its last decision and the
 * update, which the spread model puts at @lo and @hi (inf_branch_at()): how
 * far that interval is from the spread model's time for the visit.  Charged
 * once per visit a decision places, not per update, so an order whose visits
 * all run a little late pays for each visit once, however many updates fall
 * around it.  The window's times are worked out once for all the branches.
 */
void inf_branch_costs(uint64_t cost, uint64_t lo, uint64_t hi, const size_t *vis, size_t nv,
		      uint64_t *c)
{
	uint64_t due;
	size_t i;

	for (i = 0; i < nv; i++) {
		due = (vis[i] + 1) * INF_COST_UNIT;
		c[i] = cost + (lo == UINT64_MAX ? 0 : due < lo ? lo - due : due > hi ? due - hi : 0);
	}
}

/* A branch "after visit @vis" of a hypothesis of @cost whose last decision was at @t_last. */
uint64_t inf_branch_cost(const struct infer *in, uint64_t cost, uint64_t t_last, size_t vis,
			 uint64_t ts)
{
	uint64_t c;

	/* visit vis came after this order's last decision, before ts */
	inf_branch_costs(cost, inf_branch_at(in, t_last), inf_branch_at(in, ts), &vis, 1, &c);
	return c;
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
 * would be whichever the merge met first, i.e. the array's order, which
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
 * The cap's order: by cost, then the hash, descending.  After inf_merge() no
 * two hypotheses have the same counters, so the order is total (up to a
 * 64-bit hash collision between different tables): which of several orders
 * of equal cost the cap keeps depends on their position and counters only.
 * Each table is canonical whenever it is hashed, so neither the cadence of
 * compactions nor the threads (the inference is one sequential pass over
 * the trace's events, whatever --threads) change it.  Which of the equal
 * orders stays is arbitrary by design: the direction is the one that keeps
 * validate's matches on the recordings where the cap saturates.
 */
int inf_cost_cmp(const void *a, const void *b, void *arg)
{
	const struct inf_sort_key *x = a, *y = b;

	if (x->cost != y->cost)
		return x->cost < y->cost ? -1 : 1;
	return x->hash > y->hash ? -1 : x->hash < y->hash;
}

/*
 * The @keep first hypotheses in the cap's order (inf_cost_cmp()) stay, where
 * they are in the array, the others are freed.  Which stay is the order's
 * alone; where they lie is read by nothing (inf_merge()), so a selection of
 * the keys serves, no sort, and a hypothesis moves only to close a gap.
 */
static int inf_keep(struct infer *in, size_t keep)
{
	struct inf_sort_key *k;
	uint64_t *stay;
	size_t i, n = 0;

	if (inf_grow(&in->keys, &in->cap_keys, in->nr_h, sizeof(*in->keys)) ||
	    inf_grow(&in->costs, &in->cap_costs, in->nr_h, sizeof(*in->costs)))
		return -ENOMEM;
	k = in->keys;
	stay = in->costs;	/* scratch between updates */
	for (i = 0; i < in->nr_h; i++) {
		k[i] = (struct inf_sort_key){ .hash = in->h[i].hash, .cost = in->h[i].cost,
					      .idx = (uint32_t)i };
		stay[i] = 0;
	}
	if (keep)
		inf_keys_select(k, in->nr_h, keep - 1);
	for (i = 0; i < keep; i++)
		stay[k[i].idx] = 1;
	for (i = 0; i < in->nr_h; i++) {
		/* a freed one's newest decision is read: ask for it ahead */
		if (i + 8 < in->nr_h && !stay[i + 8] && in->h[i + 8].d)
			__builtin_prefetch(in->h[i + 8].d, 1);
		if (stay[i])
			in->h[n++] = in->h[i];
		else
			inf_hyp_free(in, &in->h[i]);
	}
	in->nr_h = n;
	return 0;
}

/* Of twins, @a has the cheaper history (inf_twin_cmp() breaks ties of cost). */
static bool inf_twin_less(const struct inf_hyp *a, const struct inf_hyp *b)
{
	return a->cost != b->cost ? a->cost < b->cost : inf_twin_cmp(a, b) < 0;
}

/*
 * Identical hypotheses (same position, same table) go but one, the one of
 * the cheapest history, found through an open-addressing table of hashes;
 * the others keep their order in the array.  No later order depends on the
 * array's: the cap's order is total on distinct tables (inf_cost_cmp()), and
 * reads and windows treat every hypothesis alike wherever it is.
 */
static int inf_merge(struct infer *in)
{
	size_t size, i, x, n = 0;

	for (size = 1; size < 2 * in->nr_h; size *= 2)
		;
	if (inf_grow(&in->gslot, &in->cap_gslot, size, sizeof(*in->gslot)))
		return -ENOMEM;
	memset(in->gslot, 0xff, size * sizeof(*in->gslot));
	for (i = 0; i < in->nr_h; i++) {
		struct inf_hyp *h = &in->h[i], t;

		for (x = (size_t)mcr_hash64(h->hash) & (size - 1); in->gslot[x] != UINT32_MAX;
		     x = (x + 1) & (size - 1))
			if (inf_same(&in->h[in->gslot[x]], h))
				break;
		if (in->gslot[x] == UINT32_MAX) {
			in->gslot[x] = (uint32_t)n;
			in->h[n++] = *h;
			continue;
		}
		/* a twin of the one kept at gslot[x]: the cheaper history stays there */
		if (inf_twin_less(h, &in->h[in->gslot[x]])) {
			t = in->h[in->gslot[x]];
			in->h[in->gslot[x]] = *h;
			*h = t;
		}
		inf_hyp_free(in, h);
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
		inf_capped_add(in, in->nr_h - in->cap);
		ret = inf_keep(in, in->cap);
	}
	if (ret)
		return ret;
	/*
	 * only differences of cost matter: keep them small; and a table the
	 * window's visits emptied gets a size of its own, not its largest,
	 * before its branches copy it slot for slot (best effort: a table
	 * that finds no memory for it stays as it is)
	 */
	for (i = 0; i < in->nr_h; i++) {
		if (in->h[i].cost < min_cost)
			min_cost = in->h[i].cost;
		(void)idmap_fit(&in->h[i].e);
	}
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
