// SPDX-License-Identifier: GPL-2.0
/*
 * infer_cut.c - the branches the cap would drop are never made.
 *
 * A window's update branches every hypothesis at each visit of its path
 * still to come; with the count at the cap, the compaction right after keeps
 * the cap cheapest and frees the rest, most of them branches just made
 * (copied, walked, hashed, sorted).  The hypotheses there before the update
 * all stay, each as its own branch "before all" at its own cost, so the
 * cap-th cheapest of them is where the cap will cut (inf_cut()): a branch
 * dearer than that is not made, if at least cap of the cheaper ones stay
 * distinct, which inf_cut_settle() checks after the walks.
 *
 * Contract: the hypotheses kept, their order, every read's answer, the cap's
 * "dropped some" and the order handed to the sink are the very ones of
 * making every branch (tests/unit/test_infer.c compares both): where the
 * check fails, the unmade branches are made after all, cheapest first, from
 * each hypothesis as it was before its walk (in->undo).  Only the count of
 * hypotheses the cap dropped (infer_capped()) may be larger: an unmade branch
 * that would have merged with a cheaper twin counts as dropped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "infer-local.h"

/* @x holds at least @n elements of @size bytes. */
int inf_grow(void *x, size_t *cap, size_t n, size_t size)
{
	void **p = x, *q;
	size_t c = *cap ? *cap : 64;

	if (n <= *cap)
		return 0;
	while (c < n)
		c *= 2;
	q = realloc(*p, c * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

/* The @k-th smallest of @a[0..@n-1] (from 0), which it reorders: a three-way quickselect. */
static uint64_t inf_select(uint64_t *a, size_t n, size_t k)
{
	size_t lo = 0, hi = n;	/* the answer is in a[lo..hi-1] */

	while (hi - lo > 1) {
		uint64_t pivot = a[lo + (hi - lo) / 2], t;
		size_t lt = lo, i = lo, gt = hi;

		/* a[lo..lt-1] < pivot, a[lt..i-1] == pivot, a[gt..hi-1] > pivot */
		while (i < gt) {
			if (a[i] < pivot) {
				t = a[i];
				a[i++] = a[lt];
				a[lt++] = t;
			} else if (a[i] > pivot) {
				t = a[i];
				a[i] = a[--gt];
				a[gt] = t;
			} else {
				i++;
			}
		}
		if (k < lt)
			hi = lt;
		else if (k >= gt)
			lo = gt;
		else
			return pivot;
	}
	return a[k];
}

/*
 * Where the cap will cut after this update: the cost of the cap-th
 * cheapest hypothesis before it (they all stay, each as its own branch
 * "before all"), UINT64_MAX if there are fewer.  A branch dearer than that
 * ranks behind at least cap others, if those stay distinct: inf_cut_distinct().
 */
int inf_cut(struct infer *in, uint64_t *cut)
{
	size_t i;

	*cut = UINT64_MAX;
	if (in->no_cut || !in->win || !in->cap || in->nr_h < in->cap)
		return 0;
	if (inf_grow(&in->costs, &in->cap_costs, in->nr_h, sizeof(*in->costs)))
		return -ENOMEM;
	for (i = 0; i < in->nr_h; i++)
		in->costs[i] = in->h[i].cost;
	*cut = inf_select(in->costs, in->nr_h, in->cap - 1);
	return 0;
}

/*
 * How many hypotheses of cost at most @cut are distinct (a different hash
 * is a different table; equal hashes count once).  If more than cap, the
 * branches dearer than @cut, not made, were dropped anyway: more than cap
 * survive the merge, the cap sorts by cost and keeps cap of them, and each
 * unmade branch costs more than every one of those; where it would have
 * merged, a cheaper twin is kept instead of it.  The kept hypotheses and
 * their order are the very ones made with every branch.  With cap or fewer,
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

		if (in->h[i].cost > cut)
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
	size_t i, nv = inf_branch_points(h, pa, vis);	/* its walk kept its position */

	for (i = 0; i < nv; i++)
		c[i] = h->cost + inf_visit_cost(in, vis[i], sk->t_last, ts);
	return nv;
}

/*
 * The cut did not hold: the unmade branches of cost up to @hi are made
 * after all, each from its hypothesis as it was before its walk (its
 * table, its last decision, t_last).  Their place in in->h does not matter:
 * inf_compact() sorts.  in->unmade is what is left above @hi.
 */
static int inf_unskip(struct infer *in, const struct inf_path *pa, unsigned int cpu,
		      uint64_t ts, uint64_t tag, uint64_t lo, uint64_t hi)
{
	size_t s, i, vis[INF_MAX_PATH + 1], nv, nr_skip = in->nr_skip;
	uint64_t c[INF_MAX_PATH];
	int ret = 0;

	in->unmade = 0;
	for (s = 0; s < nr_skip && ret >= 0; s++) {
		const struct inf_skip *sk = &in->skip[s];
		struct inf_hyp pre;
		struct inf_dec *up;
		bool any = false;

		nv = inf_skip_costs(in, sk, pa, ts, vis, c);
		for (i = 0; i < nv; i++) {
			any |= c[i] >= lo && c[i] <= hi;
			in->unmade += c[i] > hi;
		}
		if (!any)
			continue;
		ret = inf_hyp_copy(&pre, &in->h[sk->k]);
		if (!ret)
			ret = inf_undo_walk(&pre, &in->undo[sk->undo], 2 * pa->n);
		if (!ret) {
			/* the decision "before all of them" goes too */
			up = pre.d ? pre.d->up : NULL;
			if (up)
				up->ref++;
			inf_dec_put(pre.d);
			pre.d = up;
			pre.t_last = sk->t_last;
			ret = inf_branches(in, &pre, true, pa, cpu, ts, tag, vis, nv, lo, hi);
		} else {
			inf_hyp_free(&pre);
		}
	}
	return ret < 0 ? ret : 0;
}

/*
 * Make unmade branches, cheapest first, until more than cap hypotheses of
 * cost at most the cut are distinct, or none is left unmade.  Each round
 * raises the cut to take at least as many branches as distinct ones are
 * missing.
 */
int inf_cut_settle(struct infer *in, const struct inf_path *pa, unsigned int cpu, uint64_t ts,
		   uint64_t tag, uint64_t cut)
{
	size_t vis[INF_MAX_PATH + 1], s, i, nv, n, need, distinct;
	uint64_t c[INF_MAX_PATH], next;
	int ret;

	while (in->unmade) {
		if (inf_grow(&in->costs, &in->cap_costs, in->nr_h + in->unmade, sizeof(*in->costs)))
			return -ENOMEM;
		distinct = inf_cut_distinct(in, cut);
		if (distinct > in->cap)
			return 0;
		need = in->cap + 1 - distinct;
		for (s = 0, n = 0; s < in->nr_skip; s++) {
			nv = inf_skip_costs(in, &in->skip[s], pa, ts, vis, c);
			for (i = 0; i < nv; i++)
				if (c[i] > cut)
					in->costs[n++] = c[i];
		}
		next = inf_select(in->costs, n, (need < n ? need : n) - 1);
		ret = inf_unskip(in, pa, cpu, ts, tag, cut + 1, next);
		if (ret)
			return ret;
		cut = next;
	}
	return 0;
}
