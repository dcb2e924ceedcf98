// SPDX-License-Identifier: GPL-2.0
/*
 * Flush model "spread": CPU c's visits evenly over its lock window
 * [cgroup_rstat_locked, cgroup_rstat_unlock], in the order
 * css_rstat_flush() makes them (children before parents), so that updates
 * from other CPUs fall between a child's visit and its parent's by ts.  A
 * window whose unlock the trace lacks spreads them up to where the engine
 * ends it, or has them all at locked if that is its lock (window.c).
 */
#include "replay-local.h"

/* Visit k of n is due at t0 + (k + 1) * dur / (n + 1), strictly inside the window. */
static uint64_t spread_due(const struct model_window *w, size_t k)
{
	return w->t0 + (uint64_t)((unsigned __int128)w->dur * (k + 1) / (w->n + 1));
}

static int spread_window_begin(struct replay *r, unsigned int pol, struct model_window *w,
			       const struct model_lock *lk)
{
	if (!lk->unlock_found)
		return 0;
	w->t0 = lk->ts;
	w->dur = lk->unlock_ts - lk->ts;
	w->n = sim_window_remaining(r->sims[pol]);
	return 1;
}

static int spread_visit(struct replay *r, unsigned int pol, struct model_window *w,
			const struct mcr_event *ev)
{
	while (w->done < w->n && spread_due(w, w->done) <= ev->ts) {
		uint64_t id;
		int ret = sim_window_visit_next(r->sims[pol], spread_due(w, w->done), &id);

		if (ret < 0)
			return ret;
		w->done++;
		if (!ret) {
			w->done = w->n;
			break;
		}
	}
	return 1;
}

const struct replay_model replay_model_spread = {
	.name		= "spread",
	.summary	= "CPU c's visits evenly over its lock window, in order",
	.needs_unlock	= true,
	.window_begin	= spread_window_begin,
	.visit		= spread_visit,
};
