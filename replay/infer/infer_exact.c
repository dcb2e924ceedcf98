// SPDX-License-Identifier: GPL-2.0
/*
 * infer_exact.c - exact mode (in->dd, infer_set_exact()): when the list
 * would pass its cap, the window's orders are also held as a decision
 * diagram (infer_ddwin.c), with no cap, within a budget.
 *
 * Without an order sink, an update in a window that could take the list
 * past the cap opens the diagram from the list (inf_dd_switch()), and both
 * take every update, read and window from there: the list with its cap as
 * ever, the diagram exact, and the reads' answers are the diagram's.  When
 * a close or a read leaves no more orders than the cap, they become the
 * list (inf_dd_back()), and what the cap dropped meanwhile never counts.
 * A diagram past its budget (infer_ddwin.c: map steps over the trace,
 * inf_ddw_left(); one map's steps; its live edges; its interned sets) is
 * given up (inf_dd_give_up()): the list goes on alone, and its drops count
 * from the diagram's opening.
 *
 * Owns when a diagram opens, is given up and becomes the list again; the
 * diagram's operations are infer_ddwin.c's.
 */
#include <errno.h>

#include "infer-local.h"

/**
 * inf_dd_switch() - before an update in a window whose branches could take
 * the list past the cap (each hypothesis one per visit of the path still to
 * come, and itself): without a sink, the diagram opens from the list, exact
 * from here on, and the list goes on beside it.  The sink needs each
 * order's history, which the diagram does not keep: with one, the list and
 * its cap alone.  Nor before a forced flush of the root is requested
 * (infer_set_syncing()): while counters may still hold values from before
 * the trace, exact orders buy little.
 */
int inf_dd_switch(struct infer *in, const struct inf_path *pa)
{
	size_t i, nv = 0;
	int ret;

	if (!in->dd || !in->syncing || in->ddw || in->order_fn || !in->win || pa->cut || !inf_ddw_fits(in))
		return 0;
	for (i = 0; i < pa->n; i++)
		nv += pa->vis[i] != INF_NONE;
	if (!nv || in->nr_h * (nv + 1) <= in->cap || inf_ddw_left(in, NULL) < INF_DD_OPEN_STEPS)
		return 0;
	ret = inf_lazy_end(in);
	if (!ret)
		ret = inf_ddw_open(in, &in->ddw);
	if (ret == -E2BIG) {
		in->dd_given_up++;	/* too large from the start */
		return 0;
	}
	if (ret)
		return ret;
	in->dd_switches++;
	in->dd_capped = 0;
	return 0;
}

/* The diagram is dropped; what the list's cap dropped beside it counts now. */
static void inf_dd_drop(struct infer *in)
{
	in->dd_work += inf_ddw_work(in->ddw);
	inf_ddw_free(in->ddw);
	in->ddw = NULL;
	in->capped += in->dd_capped;
	in->dd_capped = 0;
}

/**
 * inf_dd_give_up() - after an operation on the diagram: one that ran past
 * the budget (-E2BIG) drops it, and the list, capped, goes on alone.
 * Returns the operation's other errors.
 */
int inf_dd_give_up(struct infer *in, int ret)
{
	if (ret != -E2BIG)
		return ret;
	inf_dd_drop(in);
	in->dd_given_up++;
	return 0;
}

/**
 * inf_dd_update() - the open diagram, if any, takes an update of path @pa
 * from @cpu (before the base does, as the list), within the budget, or is
 * given up (so is it on a path it cannot take).  -EAGAIN: @pa is partial
 * and the diagram needs the whole of it (inf_ddw_update()).
 */
int inf_dd_update(struct infer *in, const struct inf_path *pa, unsigned int cpu)
{
	return in->ddw ? inf_dd_give_up(in, inf_ddw_update(in, in->ddw, pa, cpu)) : 0;
}

static int dd_to_hyp(void *ctx, size_t p, const uint64_t *keys, const int64_t *vals, size_t n)
{
	struct infer *in = ctx;
	struct inf_hyp h = { .p = p };	/* the diagram keeps no bounds: none */
	size_t i;
	int ret = 0;

	for (i = 0; i < n && !ret; i++) {
		ret = idmap_put(&h.e, keys[i], vals[i]);
		h.ehash += inf_mix(keys[i], vals[i]);
	}
	if (!ret)
		ret = inf_push(in, &h);
	if (ret)
		inf_hyp_free(in, &h);
	return ret;
}

/**
 * inf_dd_back() - outside a window, a diagram of no more orders than the
 * cap becomes the list, in place of the list's own (each cost 0: the
 * spread model's distance is not kept by the diagram); what the cap
 * dropped beside it is back, so it never counts.
 */
int inf_dd_back(struct infer *in)
{
	uint64_t n;
	size_t i;
	int ret;

	if (!in->ddw || in->win)
		return 0;
	ret = inf_ddw_count(in->ddw, &n);
	if (ret)
		return ret == -EOVERFLOW ? 0 : ret;
	if (n > in->dd_max)
		in->dd_max = n;
	if (n > in->cap)
		return 0;
	ret = inf_lazy_end(in);
	if (ret)
		return ret;
	for (i = 0; i < in->nr_h; i++)
		inf_hyp_free(in, &in->h[i]);
	in->nr_h = 0;
	ret = inf_ddw_enum(in->ddw, dd_to_hyp, in);
	if (ret)
		return ret;
	in->dd_capped = 0;
	inf_dd_drop(in);
	return inf_compact(in, true);
}
