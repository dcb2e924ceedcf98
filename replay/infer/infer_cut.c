// SPDX-License-Identifier: GPL-2.0
/*
 * infer_cut.c - the branches the cap would drop are never made.
 *
 * A window's update branches every hypothesis at each visit of its path
 * still to come; with the count at the cap, the compaction right after keeps
 * the cap cheapest and frees the rest, most of them branches just made
 * (copied, walked, hashed, selected).  The hypotheses there before the update
 * all stay, each as its own branch "before all" at that branch's cost, so
 * the cap-th cheapest of them is where the cap will cut (inf_cut()): a branch
 * dearer than that is not made, if at least cap of the cheaper ones stay
 * distinct, which inf_cut_settle() checks after the walks.  Where the cheaper
 * branches alone are more than cap (up to six times the cap in one update on
 * a 64-CPU trace), only the cap + 1 cheapest of the hypotheses and their
 * branches are made, with their ties: what an update makes before the cap
 * has ranked its branches is about the cap's worth, not several times it.
 *
 * Contract: the hypotheses kept, every read's answer, the cap's
 * "dropped some" and the order handed to the sink are the very ones of
 * making every branch (tests/unit/test_infer.c compares both): where the
 * check fails, the unmade branches' tables are hashed without making them,
 * and those the cap might keep are made after all, from each hypothesis as
 * it was before its walk (in->undo).  Only the count of
 * hypotheses the cap dropped (infer_capped()) may be larger: an unmade branch
 * that would have merged with a cheaper twin counts as dropped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "infer-local.h"

/*
 * INF_SELECT(name, type, cmp) defines name(a, n, k): @a[0..@n-1] reordered
 * so that a[k] is the k-th (from 0) in cmp()'s order and none before it comes
 * after it, by a three-way quickselect (the elements equal to the pivot
 * grouped between the smaller and the larger).
 */
#define INF_SELECT(name, type, cmp)						\
static void name(type *a, size_t n, size_t k)					\
{										\
	size_t lo = 0, hi = n;	/* a[k]'s place is in a[lo..hi-1] */		\
										\
	while (hi - lo > 1) {							\
		type pivot = a[lo + (hi - lo) / 2], t;				\
		size_t lt = lo, i = lo, gt = hi;				\
										\
		/* a[lo..lt-1] < pivot, a[lt..i-1] == pivot, a[gt..hi-1] > pivot */ \
		while (i < gt) {						\
			int c = cmp(&a[i], &pivot);				\
										\
			if (c < 0) {						\
				t = a[i];					\
				a[i++] = a[lt];					\
				a[lt++] = t;					\
			} else if (c > 0) {					\
				t = a[i];					\
				a[i] = a[--gt];					\
				a[gt] = t;					\
			} else {						\
				i++;						\
			}							\
		}								\
		if (k < lt)							\
			hi = lt;						\
		else if (k >= gt)						\
			lo = gt;						\
		else								\
			return;							\
	}									\
}

static int inf_u64_cmp(const uint64_t *x, const uint64_t *y)
{
	return (*x > *y) - (*x < *y);
}

INF_SELECT(inf_u64_select, uint64_t, inf_u64_cmp)

/* The @k-th smallest of @a[0..@n-1] (from 0), which it reorders. */
static uint64_t inf_select(uint64_t *a, size_t n, size_t k)
{
	inf_u64_select(a, n, k);
	return a[k];
}

/*
 * Which of this update's branches are made right away: those that cost less
 * than *@cut, the others left to inf_cut_settle().  The candidates are the
 * hypotheses before the update and every branch "after a visit" their
 * positions allow (some commute and make none, so this may count more than
 * are made).  Every branch with fewer hypotheses than the cap, else each
 * that costs no more than the cap-th of those, where that makes no more than
 * cap branches; else the cap + 2-th cheapest candidate, plus one.  Either
 * way, when the tables made below the cut stay distinct and are more than
 * cap, the branches not made are dropped unhashed (inf_cut_distinct()).
 */
int inf_cut(struct infer *in, const struct inf_path *pa, uint64_t ts, uint64_t *cut)
{
	size_t vis[INF_MAX_PATH + 1], i, k, nv, n = 0, max = 0, made = 0;
	uint64_t *c, *before, old = UINT64_MAX, at;

	*cut = UINT64_MAX;
	if (in->no_cut || !in->win || !in->cap)
		return 0;
	for (i = 0; i < pa->n; i++)
		max += pa->vis[i] != INF_NONE;
	if (in->nr_h * max <= in->cap)
		return 0;
	/* every candidate's cost, then each hypothesis's "before all" again */
	if (inf_grow(&in->costs, &in->cap_costs, in->nr_h * (max + 2), sizeof(*in->costs)))
		return -ENOMEM;
	c = in->costs;
	before = c + in->nr_h * (max + 1);
	at = inf_branch_at(in, ts);
	for (k = 0; k < in->nr_h; k++) {
		const struct inf_hyp *h = &in->h[k];

		nv = inf_branch_points(h, pa, vis);
		c[n] = inf_branch_costs(in, &h->front, h->p, h->cost, at, vis, nv, c + n + 1);
		before[k] = c[n];
		n += nv + 1;
	}
	if (in->nr_h >= in->cap) {
		old = inf_select(before, in->nr_h, in->cap - 1);
		/* the branches as cheap as the cap-th "before all" */
		for (i = 0; i < n; i++)
			made += c[i] <= old;
		for (k = 0; k < in->nr_h; k++)
			made -= before[k] <= old;
	} else {
		made = n - in->nr_h;
	}
	if (made <= in->cap) {
		*cut = old == UINT64_MAX ? old : old + 1;
		return 0;
	}
	*cut = inf_select(c, n, in->cap + 1) + 1;
	in->cut_ranked++;
	return 0;
}

/*
 * How many hypotheses of cost below @cut are distinct (a different hash
 * is a different table; equal hashes count once).  If more than cap, the
 * branches of @cut or more, not made, were dropped anyway: more than cap
 * survive the merge, the cap keeps the cap cheapest of them, and each
 * unmade branch costs more than every one of those; where it would have
 * merged, a cheaper twin is kept instead of it.  The kept hypotheses are
 * the very ones made with every branch.  With cap or fewer,
 * an unmade branch might have been the one more that made the cap cut.
 */
static size_t inf_cut_distinct(struct infer *in, uint64_t cut)
{
	size_t i, mask, distinct = 0;

	for (mask = 1; mask < 2 * in->nr_h; mask *= 2)
		;
	if (inf_grow(&in->costs, &in->cap_costs, mask, sizeof(*in->costs)))
		return 0;	/* the cut is then as if it did not hold */
	mask--;
	memset(in->costs, 0, (mask + 1) * sizeof(*in->costs));
	/* a set of the hashes, 0 free: x | 1 may count two as one, never one as two */
	for (i = 0; i < in->nr_h; i++) {
		uint64_t x = inf_hyp_hash(&in->h[i]) | 1;
		size_t j = (size_t)mcr_hash64(x) & mask;

		if (in->h[i].cost >= cut)
			continue;
		while (in->costs[j] && in->costs[j] != x)
			j = (j + 1) & mask;
		distinct += !in->costs[j];
		in->costs[j] = x;
	}
	return distinct;
}

/* @h's counters as they were before its walk, from @u. */
static int inf_undo_walk(struct inf_hyp *h, const struct inf_undo *u, size_t n)
{
	size_t j;
	int ret;

	for (j = 0; j < n; j++) {
		struct idmap_ent *e = inf_find(h, u[j].key);

		if (!u[j].had) {
			inf_ent_del(h, u[j].key);
		} else if (e) {
			inf_ent_set(h, e, u[j].val);
		} else {
			ret = idmap_put(&h->e, u[j].key, u[j].val);
			if (ret)
				return ret;
			h->ehash += inf_mix(u[j].key, u[j].val);
		}
	}
	h->pc_n = 0;
	return 0;
}

/* The costs of the branches of skipped hypothesis @sk, into @c; returns how many. */
static size_t inf_skip_costs(const struct infer *in, const struct inf_skip *sk,
			     const struct inf_path *pa, uint64_t ts, size_t *vis, uint64_t *c)
{
	const struct inf_hyp *h = &in->h[sk->k];
	size_t nv = inf_branch_points(h, pa, vis);	/* its walk kept its position */

	inf_branch_costs(in, &sk->front, h->p, sk->cost, inf_branch_at(in, ts), vis, nv, c);
	return nv;
}

/*
 * The unmade branches of each skipped hypothesis in its in->cand entries'
 * make bits are made after all, from the hypothesis as it was before its
 * walk (its table, its last decision, its bounds).  Their place in in->h does
 * not matter: the cap's order is the keys' (inf_compact()).
 */
static int inf_unskip(struct infer *in, const struct inf_path *pa, unsigned int cpu,
		      uint64_t ts, uint64_t tag)
{
	size_t s, vis[INF_MAX_PATH + 1], nv;
	int ret = 0;

	for (s = 0; s < in->nr_skip && !ret; s++) {
		const struct inf_skip *sk = &in->skip[s];
		struct inf_hyp pre;
		struct inf_dec *up;

		if (!sk->make)
			continue;
		nv = inf_branch_points(&in->h[sk->k], pa, vis);
		ret = inf_hyp_copy(&pre, &in->h[sk->k]);
		if (!ret)
			ret = inf_undo_walk(&pre, &in->undo[sk->undo], 2 * pa->n);
		if (ret) {
			inf_hyp_free(in, &pre);
			break;
		}
		/* the decision "before all of them" goes too */
		up = pre.d ? pre.d->up : NULL;
		if (up)
			up->ref++;
		inf_dec_put(in, pre.d);
		pre.d = up;
		pre.cost = sk->cost;
		pre.front = sk->front;
		ret = inf_branches(in, &pre, true, pa, cpu, ts, tag, vis, nv, sk->make, NULL);
	}
	return ret;
}

/* The cap's order (inf_cost_cmp(), infer_cap.c). */
static int inf_rank_cmp(const void *a, const void *b)
{
	return inf_cost_cmp(a, b, NULL);
}

/*
 * inf_rank_select(a, n, k): @a reordered so that its first @k + 1 are the
 * @k + 1 first in inf_rank_cmp()'s order (a total order here: the hashes
 * differ).
 */
INF_SELECT(inf_rank_select, struct inf_sort_key, inf_rank_cmp)

/* @a reordered so that its first @k + 1 are the first in the cap's order: the cap's own (inf_keep()). */
void inf_keys_select(struct inf_sort_key *a, size_t n, size_t k)
{
	inf_rank_select(a, n, k);
}

/*
 * in->gslot holds a candidate's index in in->cand, and two flags: the group
 * is counted among those ranked before the next skipped hypothesis (COUNTED),
 * its unmade branches are made after all (MADE).
 */
#define INF_SLOT_MADE		(1u << 31)
#define INF_SLOT_COUNTED	(1u << 30)
#define INF_SLOT_IDX		(INF_SLOT_COUNTED - 1)

/* A min-heap of (a group's cheapest cost then, its slot) in in->gheap. */
static void inf_gheap_push(struct infer *in, uint64_t cost, size_t slot)
{
	struct inf_sort_key *h = in->gheap, t;
	size_t i = in->nr_gheap++;

	h[i] = (struct inf_sort_key){ .cost = cost, .idx = (uint32_t)slot };
	for (; i && h[(i - 1) / 2].cost > h[i].cost; i = (i - 1) / 2) {
		t = h[i];
		h[i] = h[(i - 1) / 2];
		h[(i - 1) / 2] = t;
	}
}

static void inf_gheap_pop(struct infer *in)
{
	struct inf_sort_key *h = in->gheap, t;
	size_t i = 0, c, n = --in->nr_gheap;

	h[0] = h[n];
	for (; (c = 2 * i + 1) < n; i = c) {
		if (c + 1 < n && h[c + 1].cost < h[c].cost)
			c++;
		if (h[i].cost <= h[c].cost)
			break;
		t = h[i];
		h[i] = h[c];
		h[c] = t;
	}
}

/*
 * Candidate @i of in->cand joins its hash's group in in->gslot (@size
 * slots), which ranks by its cheapest member; a new cheapest goes on the heap.
 */
static size_t inf_group_put(struct infer *in, size_t i, size_t size)
{
	struct inf_sort_key *k = in->cand;
	size_t x = (size_t)mcr_hash64(k[i].hash) & (size - 1);
	struct inf_sort_key *r;

	while (in->gslot[x] != UINT32_MAX && k[in->gslot[x] & INF_SLOT_IDX].hash != k[i].hash)
		x = (x + 1) & (size - 1);
	if (in->gslot[x] == UINT32_MAX) {
		in->gslot[x] = (uint32_t)i;
		inf_gheap_push(in, k[i].cost, x);
		return x;
	}
	r = &k[in->gslot[x] & INF_SLOT_IDX];
	if (k[i].cost < r->cost) {
		r->cost = k[i].cost;
		if (!(in->gslot[x] & INF_SLOT_COUNTED))
			inf_gheap_push(in, k[i].cost, x);
	}
	return x;
}

/*
 * Whether more than cap groups rank before every candidate of cost @x or
 * more: the groups whose cheapest member costs less than @x, counted once
 * each (a group's cheapest only falls, so a counted one stays counted).
 */
static bool inf_groups_before(struct infer *in, uint64_t x, size_t *counted)
{
	while (in->nr_gheap && in->gheap[0].cost < x) {
		uint32_t *sl = &in->gslot[in->gheap[0].idx];

		if (!(*sl & INF_SLOT_COUNTED)) {
			*sl |= INF_SLOT_COUNTED;
			++*counted;
		}
		inf_gheap_pop(in);
	}
	return *counted > in->cap;
}

/* By the cheapest of its unmade branches' costs: which skipped hypothesis to hash first. */
static int inf_skip_order_cmp(const void *a, const void *b)
{
	const struct inf_sort_key *x = a, *y = b;

	if (x->cost != y->cost)
		return x->cost < y->cost ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/*
 * The cut did not hold (inf_cut_distinct()): which unmade branches may the
 * cap keep?  Their hashes, computed without making them
 * (inf_branch_hashes()), and the hypotheses' group them by table: each
 * group ranks (the cap's order) by its cheapest member, and every group
 * holds at least one table of its own (a hash shared by different tables
 * only makes fewer groups than tables).
 *
 * A group that ranks past cap + 1 has at least cap + 1 groups before it,
 * each of whose cheapest member survives the merge (twins keep the cheapest)
 * as a table of its own: the cap drops every member of the group, made or
 * not, and still cuts (more than cap stay), with every branch made.  For
 * the same reason, once more than cap groups have a cheapest member below
 * x, an unmade branch of cost x or more is dropped whatever its group: it
 * is dearer than each of those survivors, so it loses to a cheaper twin or
 * falls to the cap.  So the skipped hypotheses are hashed cheapest branch
 * first, and none is hashed once the next one's cheapest branch is that
 * dear.
 *
 * The first cap + 1 groups are made: those that may be kept and the one
 * more that makes the cap cut; within a group, each member as cheap as its
 * cheapest, for the merge to decide between equal twins (inf_twin_cmp()).
 * A dearer member would lose the merge to the cheapest twin: it is not
 * made, and not dropped by the cap either.  (A different table whose hash
 * collided would be lost so; the cap's order already takes a 64-bit hash
 * for the table, infer_cap.c.)  in->unmade is then what the cap drops.
 */
int inf_cut_settle(struct infer *in, const struct inf_path *pa, unsigned int cpu, uint64_t ts,
		   uint64_t tag, uint64_t cut)
{
	size_t vis[INF_MAX_PATH + 1], s, i, slot, nv, n = 0, g = 0, size, counted = 0, made = 0;
	size_t merged = 0;
	uint64_t c[INF_MAX_PATH], hash[INF_MAX_PATH], unmade = in->unmade, *own;
	struct inf_sort_key *k, *order;

	if (!unmade)
		return 0;
	if (inf_grow(&in->costs, &in->cap_costs, in->nr_h, sizeof(*in->costs)))
		return -ENOMEM;
	if (inf_cut_distinct(in, cut) > in->cap)
		return 0;
	for (size = 1; size < 2 * (in->nr_h + unmade); size *= 2)
		;
	if (in->nr_h + unmade >= INF_SLOT_COUNTED ||
	    inf_grow(&in->cand, &in->cap_cand, in->nr_h + unmade, sizeof(*in->cand)) ||
	    inf_grow(&in->cref, &in->cap_cref, unmade, sizeof(*in->cref)) ||
	    inf_grow(&in->gslot, &in->cap_gslot, size, sizeof(*in->gslot)) ||
	    inf_grow(&in->gheap, &in->cap_gheap, in->nr_h + unmade, sizeof(*in->gheap)) ||
	    inf_grow(&in->grp, &in->cap_grp, in->nr_h + unmade + in->nr_skip, sizeof(*in->grp)))
		return -ENOMEM;
	/* in->costs, free again after inf_cut_distinct(): each candidate's own cost */
	if (inf_grow(&in->costs, &in->cap_costs, in->nr_h + unmade, sizeof(*in->costs)))
		return -ENOMEM;
	own = in->costs;
	memset(in->gslot, 0xff, size * sizeof(*in->gslot));
	in->nr_gheap = 0;
	k = in->cand;
	for (i = 0; i < in->nr_h; i++) {
		k[n] = (struct inf_sort_key){ .hash = inf_hyp_hash(&in->h[i]),
					      .cost = in->h[i].cost, .idx = UINT32_MAX };
		own[n] = k[n].cost;
		inf_group_put(in, n++, size);
	}
	/* the skipped hypotheses by their cheapest unmade branch (in->grp's tail is scratch) */
	order = in->grp + in->nr_h + unmade;
	for (s = 0; s < in->nr_skip; s++) {
		uint64_t least = UINT64_MAX;

		nv = inf_skip_costs(in, &in->skip[s], pa, ts, vis, c);
		for (i = 0; i < nv; i++)
			if (c[i] >= cut && c[i] < least)
				least = c[i];
		in->skip[s].make = 0;
		order[s] = (struct inf_sort_key){ .cost = least, .idx = (uint32_t)s };
	}
	qsort(order, in->nr_skip, sizeof(*order), inf_skip_order_cmp);
	for (s = 0; s < in->nr_skip; s++) {
		struct inf_skip *sk = &in->skip[order[s].idx];
		uint64_t mask = 0;

		if (inf_groups_before(in, order[s].cost, &counted))
			break;
		nv = inf_skip_costs(in, sk, pa, ts, vis, c);
		for (i = 0; i < nv; i++)
			if (c[i] >= cut)
				mask |= 1ull << i;
		inf_branch_hashes(in, &in->h[sk->k], &in->undo[sk->undo], pa, cpu, vis, nv, mask,
				  hash);
		for (i = 0; i < nv; i++) {
			if (!(mask >> i & 1))
				continue;
			in->cref[g] = (struct inf_cref){ .skip = order[s].idx, .i = (uint32_t)i };
			k[n] = (struct inf_sort_key){ .hash = hash[i], .cost = c[i],
						      .idx = (uint32_t)g++ };
			own[n] = c[i];
			in->cref[k[n].idx].slot = (uint32_t)inf_group_put(in, n, size);
			n++;
		}
	}
	for (slot = 0, g = 0; slot < size; slot++) {
		if (in->gslot[slot] == UINT32_MAX)
			continue;
		in->gslot[slot] &= INF_SLOT_IDX;
		in->grp[g++] = (struct inf_sort_key){ .hash = k[in->gslot[slot]].hash,
						      .cost = k[in->gslot[slot]].cost,
						      .idx = (uint32_t)slot };
	}
	/* the first cap + 1 groups in the cap's order are made */
	if (g > in->cap + 1)
		inf_rank_select(in->grp, g, in->cap);
	for (i = 0; i < g && i <= in->cap; i++)
		in->gslot[in->grp[i].idx] |= INF_SLOT_MADE;
	for (i = 0; i < n; i++) {
		const struct inf_cref *cr;

		if (k[i].idx == UINT32_MAX)
			continue;
		cr = &in->cref[k[i].idx];
		if (!(in->gslot[cr->slot] & INF_SLOT_MADE))
			continue;
		/* a twin dearer than its group's cheapest would lose the merge to it: not dropped */
		if (own[i] > k[in->gslot[cr->slot] & INF_SLOT_IDX].cost) {
			merged++;
			continue;
		}
		in->skip[cr->skip].make |= 1ull << cr->i;
		made++;
	}
	in->unmade = unmade - made - merged;
	return inf_unskip(in, pa, cpu, ts, tag);
}
