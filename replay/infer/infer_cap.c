// SPDX-License-Identifier: GPL-2.0
/*
 * infer_cap.c - what the inference keeps: cost, merging, the cap.
 *
 * Each hypothesis carries a cost: how far, in visits, the visits of its
 * order sit from where the spread model puts them, each visit at the time
 * nearest its own that the order's decisions allow, summed over its history
 * (a Viterbi path score).  The spread model's own order costs nothing.
 * Merging keeps the cheaper history; the cap keeps the cheapest hypotheses,
 * so the orders that are most plausible by timing are the last to go,
 * whatever the cap.
 *
 * Contract: inf_compact() only drops, merges and (at the cap) reorders
 * hypotheses, never changes a kept one's counters; outside a window it
 * gives the base the counters every table holds alike (inf_consensus()),
 * which changes the tables, not what they stand for.  Which it keeps
 * depends only on their counters, the base's, costs and decisions (never on
 * table layout, memory, when entries equal to the base were last dropped,
 * or the array's order), so a run is deterministic.  Ties of cost are
 * broken by a hash of the counters that differ from the base; nothing reads
 * the array's order as a result (infer_finish() breaks its ties by the hash
 * too).
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
 * The sum, over visits @a..@b, of how far the spread model's time for each
 * (visit v is due at (v + 1) units) lies outside [@lo, @hi]: the visits
 * due before @lo came late, those due after @hi early.  Arithmetic series,
 * no loop: a window may hold thousands of visits.
 */
static uint64_t inf_dist_sum(size_t a, size_t b, uint64_t lo, uint64_t hi)
{
	const uint64_t u = INF_COST_UNIT;
	uint64_t sum = 0, c, m;

	if (a > b)
		return 0;
	/* late: (v + 1) * u < lo, i.e. v + 1 <= (lo - 1) / u */
	m = lo ? (lo - 1) / u : 0;
	if (m > a) {
		c = (m - 1 < b ? m - 1 : b) - a + 1;
		sum += c * lo - u * (c * (a + 1) + c * (c - 1) / 2);
	}
	/* early: (v + 1) * u > hi, i.e. v >= hi / u */
	m = hi / u > a ? hi / u : a;
	if (m <= b) {
		c = b - m + 1;
		sum += u * (c * (m + 1) + c * (c - 1) / 2) - c * hi;
	}
	return sum;
}

/* The lateness of visits @a..@b past the bounds @f puts on them (inf_dist_sum()). */
static uint64_t inf_front_late(const struct inf_front *f, size_t a, size_t b)
{
	uint64_t sum = 0, lo = 0;
	size_t j = 0, e;

	while (j < f->n && f->w[j] <= a)
		lo = f->lo[j++];
	while (a <= b) {
		/* lo bounds a..e, up to the next entry */
		e = j < f->n && f->w[j] - 1 < b ? f->w[j] - 1 : b;
		sum += inf_dist_sum(a, e, lo, UINT64_MAX);
		if (j < f->n)
			lo = f->lo[j++];
		a = e + 1;
	}
	return sum;
}

/* The time a new bound takes: never below the latest (a late update's may be). */
static uint64_t inf_front_at(const struct inf_front *f, uint64_t at)
{
	return f->n && f->lo[f->n - 1] > at ? f->lo[f->n - 1] : at;
}

/*
 * What a decision at @at that visit @w (INF_NONE: none) came after it adds
 * to the lateness of the visits from @w to @last: they are bounded by @at
 * now, by @f before.
 */
static uint64_t inf_front_raise(const struct inf_front *f, size_t w, uint64_t at, size_t last)
{
	if (w == INF_NONE || w > last)
		return 0;
	return inf_dist_sum(w, last, inf_front_at(f, at), UINT64_MAX) - inf_front_late(f, w, last);
}

/*
 * The costs of an update's branches for a hypothesis of @cost at position
 * @p with bounds @f, the update being where the spread model puts @at
 * (inf_branch_at()): of each "after vis[i]", i < @nv, into @c, and of
 * "before all of them", returned.  A visit is charged for coming early when
 * a branch makes it before the update, and for coming late as soon as a
 * decision bounds it from below, so that an order that leaves its visits
 * for later pays now, not when it makes them: "after vis[i]" makes visits
 * p..vis[i] and bounds vis[i + 1] (the path's next); "before all" bounds
 * vis[0].  The spread model's own order is never charged.  @vis ascends,
 * from @p on.
 */
uint64_t inf_branch_costs(const struct infer *in, const struct inf_front *f, size_t p,
			  uint64_t cost, uint64_t at, const size_t *vis, size_t nv, uint64_t *c)
{
	size_t i, last = in->n_list ? in->n_list - 1 : 0;

	if (at == UINT64_MAX) {
		/* the window's length is unknown: no spread model to be far from */
		for (i = 0; i < nv; i++)
			c[i] = cost;
		return cost;
	}
	for (i = 0; i < nv; i++)
		c[i] = cost + inf_dist_sum(p, vis[i], 0, at) +
		       (i + 1 < nv ? inf_front_raise(f, vis[i + 1], at, last) : 0);
	return nv ? cost + inf_front_raise(f, vis[0], at, last) : cost;
}

/* Drop the first @j bounds of @f. */
static void inf_front_drop(struct inf_front *f, uint32_t j)
{
	memmove(f->lo, f->lo + j, (f->n - j) * sizeof(*f->lo));
	memmove(f->w, f->w + j, (f->n - j) * sizeof(*f->w));
	f->n -= j;
}

/* A decision at @at (inf_branch_at()) says visit @w (INF_NONE: none) and those after came later. */
void inf_front_push(struct inf_front *f, uint64_t at, size_t w)
{
	if (w == INF_NONE || at == UINT64_MAX)
		return;
	at = inf_front_at(f, at);
	/* a later bound from an earlier visit on holds for all those an older one bounds */
	while (f->n && f->w[f->n - 1] >= w)
		f->n--;
	if (f->n == INF_FRONT) {
		/*
		 * The oldest goes: its visits' bound falls to the window's
		 * start.  Their lateness is charged already; a later raise
		 * over them may charge it again, never the spread order's,
		 * which has none.
		 */
		inf_front_drop(f, 1);
	}
	f->lo[f->n] = at;
	f->w[f->n++] = (uint32_t)w;
}

/* Visits before @p are made: of the entries that bound none of the rest, only the last counts. */
void inf_front_placed(struct inf_front *f, size_t p)
{
	uint32_t j = 0;

	while (j + 1 < f->n && f->w[j + 1] <= p)
		j++;
	if (j)
		inf_front_drop(f, j);
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

/* Bound @i of @x against bound @j of @y, the looser first: the earlier time, then the later visit. */
static int inf_bound_cmp(const struct inf_front *x, uint32_t i, const struct inf_front *y,
			 uint32_t j)
{
	if (x->lo[i] != y->lo[j])
		return x->lo[i] < y->lo[j] ? -1 : 1;
	if (x->w[i] != y->w[j])
		return x->w[i] > y->w[j] ? -1 : 1;
	return 0;
}

/*
 * Bounds, the looser first where one is looser: the latest bound
 * (inf_bound_cmp()), then the count, then each bound from the first.
 * Total: equal only if the same.
 */
static int inf_front_cmp(const struct inf_front *x, const struct inf_front *y)
{
	int c = x->n && y->n ? inf_bound_cmp(x, x->n - 1, y, y->n - 1) : 0;
	uint32_t j;

	if (c)
		return c;
	if (x->n != y->n)
		return x->n < y->n ? -1 : 1;
	for (j = 0; j < x->n && !c; j++)
		c = inf_bound_cmp(x, j, y, j);
	return c;
}

/*
 * Twins of equal cost differ only in their bounds on the visits to come
 * (what those will be charged from) and in the decisions themselves:
 * newest first, down to the chain they share.  Without this the twin kept
 * would be whichever the merge met first, i.e. the array's order, which
 * depends on the merges before.
 */
static int inf_twin_cmp(const struct inf_hyp *x, const struct inf_hyp *y)
{
	const struct inf_dec *a = x->d, *b = y->d;
	int c = inf_front_cmp(&x->front, &y->front);

	if (c)
		return c;
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
 * Outside a window, a counter that every hypothesis holds at the same value
 * is no difference between them: the base takes it and the entries go.  The
 * base itself follows no order of its own (it takes each window's visits at
 * its unlock), so after a window every hypothesis differs from it alike in
 * the per-CPU counters of the walks that window changed: hundreds of
 * entries each at 64 CPUs, copied at every branch and listed in owned,
 * where a handful tell them apart.  Exact: each hypothesis's counters are
 * what they were; each hash moves by the same amount, so twins stay twins.
 * Candidates are the first table's keys; a key any table lacks, or holds
 * at another value, stays.
 */
static int inf_consensus(struct infer *in)
{
	const struct inf_hyp *h0 = &in->h[0];
	const struct idmap_ent *e;
	size_t i, k, n = 0;
	uint32_t pos = 0;
	int ret = 0;

	if (in->win || in->ddw || in->no_consensus || !in->nr_h || !idmap_count(&h0->e))
		return 0;
	/* best effort: without room the tables stay as they are */
	if (inf_grow(&in->cons, &in->cap_cons, idmap_count(&h0->e), sizeof(*in->cons)))
		return 0;
	while ((e = idmap_next(&h0->e, &pos))) {
		for (k = 1; k < in->nr_h; k++) {
			const struct idmap_ent *f = inf_find(&in->h[k], e->key);

			if (!f || f->val != e->val)
				break;
		}
		if (k == in->nr_h)
			in->cons[n++] = *e;	/* the tables move as entries go: listed first */
	}
	for (i = 0; i < n && !ret; i++) {
		uint64_t id = inf_key_id(in->cons[i].key);
		unsigned int cpu = inf_key_cpu(in->cons[i].key);

		ret = cpu == INF_ATOMIC ? sim_stats_updates_set(in->s, id, in->cons[i].val) :
					  sim_pcpu_set(in->s, id, cpu, (uint32_t)in->cons[i].val);
		for (k = 0; k < in->nr_h && !ret; k++)
			inf_ent_del(&in->h[k], in->cons[i].key);
	}
	for (k = 0; k < in->nr_h; k++)
		in->h[k].hash = inf_hyp_hash(&in->h[k]);
	in->consensus_keys += n;
	return ret;
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
	if (full && !in->win && !in->reopening)
		inf_lazy_begin(in);
	ret = inf_merge(in);
	/* twins once the counters no later step can tell apart go (infer_ahead.c) */
	if (!ret && (in->nr_h > in->cap || in->canon_always)) {
		ret = inf_canon(in);
		if (ret > 0) {
			for (i = 0; i < in->nr_h; i++)
				in->h[i].hash = inf_hyp_hash(&in->h[i]);
			ret = inf_merge(in);
		}
	}
	if (!ret && in->nr_h > in->cap) {
		inf_capped_add(in, in->nr_h - in->cap);
		ret = inf_keep(in, in->cap);
	}
	if (!ret)
		ret = inf_consensus(in);
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
 * after INF_SAT_BUDGET walks above the floor the cap is halved, and again
 * after as many more, down to the floor, until the count is down to a
 * quarter of the floor.  Halved rather than cut to the floor at once: on a
 * recording whose long flush saturated a cap of 1024 while 512 held the
 * kernel's order, the floor dropped it (validate 59 of 60 flushes and 34 of
 * 1140 memory.stat lines off, where -H 512 and halving match all).  Each
 * step costs one budget more: log2(max_hyp / floor) of them at most.  A
 * search after a miss may wait longer, or never halve (infer_set_patience()).
 */
void inf_budget(struct infer *in, uint64_t unmade)
{
	unsigned int floor = in->max_hyp < INF_CAP_FLOOR ? in->max_hyp : INF_CAP_FLOOR;
	uint64_t n = in->nr_h + unmade;

	in->walks += n;
	/* hysteresis: a lowered cap keeps the count at the floor, so wait for it to shrink */
	if (n <= (in->cap == in->max_hyp ? floor : floor / 4)) {
		in->sat_work = 0;
		in->cap = in->max_hyp;
		return;
	}
	in->sat_work += n;
	if (in->patience && in->sat_work > INF_SAT_BUDGET * in->patience && in->cap != floor) {
		in->cap = in->cap / 2 > floor ? in->cap / 2 : floor;
		in->sat_work = 0;
		in->lowered++;
	}
}
