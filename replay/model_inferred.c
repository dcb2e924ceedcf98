// SPDX-License-Identifier: GPL-2.0
/*
 * Flush model "inferred": inside each traced lock window, the order of
 * updates and visits that best explains the kernel's recorded
 * memcg_flush_stats values.  Its prepare step asks the engine for a prepass
 * of inference with the traced kernel's own policy (replay/infer/infer.c), which
 * keeps, for every update that landed in a window before some visit of its
 * own path, how many of the window's visits came before it (r->order).  The
 * replay of any policy then makes exactly those visits before that update;
 * what is left of a window happens at its unlock, or later for an update the
 * order puts inside (its tracepoint fired after the unlock).  Flushes the
 * trace has no window for still go at the request; without an order (no
 * windows, or a kernel whose policy is unknown) the model is spread.
 */
#include "replay-local.h"

static const char *inferred_unmet(const struct replay_trace *t)
{
	if (!t->windows_traced)
		return "needs rstat lock windows in the trace; using spread";
	if (!replay_policy_for_trace(t))
		return "needs a kernel release 6.8+ (the kernel's policy); using spread";
	return NULL;
}

static int inferred_prepare(struct replay *r, const struct sim_policy **infer_with)
{
	if (!r->order && !inferred_unmet(r->t))
		*infer_with = replay_policy_for_trace(r->t);
	return 0;
}

static bool inferred_under(struct replay *r, uint64_t id, uint64_t top)
{
	const struct rcg *c = rcg_find(r, id);
	unsigned int depth;

	for (depth = 0; c && depth < RCG_MAX_DEPTH; c = c->parent, depth++)
		if (c->id == top)
			return true;
	return false;
}

/*
 * A pin of the window opening at @lk on the kernel's window CPU: the visits
 * from subtree(cgroup)'s first on wait for its cut, and there those up to
 * the last of the cgroup's descendants are made (the cgroup's own, if it has
 * none on the list).  The cgroup's own visit and those after it stay where
 * the order puts them: what the cgroup prints of its descendants' updates
 * depends on their visits only, and its own visit resets its stats_updates,
 * which the kernel's recorded values settle.  The list is reverse BFS:
 * other nodes may sit between, they wait too.
 */
static void inferred_pin(struct replay *r, unsigned int pol, struct model_window *w,
			 const struct model_lock *lk)
{
	const struct replay_pin *pin = NULL;
	size_t i, n, own = 0;
	bool first = true;

	for (i = 0; i < r->p.nr_pins; i++)
		if (r->p.pins[i].lock_ts == lk->ts && r->p.pins[i].cpu == r->win.kwin_cpu) {
			pin = &r->p.pins[i];
			break;
		}
	if (!pin)
		return;
	n = sim_window_remaining(r->sims[pol]);
	for (i = 0; i < n; i++) {
		uint64_t id = sim_window_peek(r->sims[pol], i);

		if (!inferred_under(r, id, pin->cgroup))
			continue;
		if (first)
			w->hold = i;
		first = false;
		if (id == pin->cgroup) {
			own = i + 1;
			break;
		}
		w->through = i + 1;
	}
	if (first)
		return;		/* nothing of the subtree on the list */
	if (!w->through)
		w->through = own;
	w->pinned = true;
	w->has_cut = pin->cut;
	w->cut_tag = pin->cut_tag;
}

static int inferred_window_begin(struct replay *r, unsigned int pol, struct model_window *w,
				 const struct model_lock *lk)
{
	if (!r->order)
		return replay_model_spread.window_begin(r, pol, w, lk);
	if (r->p.nr_pins)
		inferred_pin(r, pol, w, lk);
	return 1;
}

static bool inferred_is_update(const struct mcr_event *ev)
{
	return ev->kind == MCR_EV_STATE || ev->kind == MCR_EV_LRUVEC || ev->kind == MCR_EV_EVENTS;
}

/* A window past its unlock closes at the first event the order does not put inside it. */
static int inferred_visit(struct replay *r, unsigned int pol, struct model_window *w,
			  const struct mcr_event *ev)
{
	size_t k;

	if (!r->order)
		return replay_model_spread.visit(r, pol, w, ev);
	return !w->closing ||
	       (inferred_is_update(ev) && replay_order_lookup(r->order, replay_tag(ev), &k));
}

/*
 * The visits the order puts before this update happen first.  An update
 * without a decision has no visit of its own path left to order against, so
 * it needs none.  The order is the pass's (the prepass beside it adds to
 * it): looked up here, once; each run's visits in inferred_before_update_run().
 */
static int inferred_before_update(struct replay *r, const struct mcr_event *ev,
				  struct model_upd *u)
{
	size_t k = 0;
	bool has;

	if (!r->order)
		return 0;
	has = replay_order_lookup(r->order, replay_tag(ev), &k);
	u->want = has ? k : 0;
	r->st.win.inferred_updates += has;
	return has || r->p.nr_pins;
}

static int inferred_before_update_run(struct replay *r, unsigned int pol,
				      const struct mcr_event *ev, const struct model_upd *u)
{
	struct model_window *w = window_placed(r, pol);
	size_t want = u->want;

	if (!w)
		return 0;
	/* a pin: the subtree's visits wait for the cut, and happen there */
	if (w->pinned && !w->cut_done) {
		if (w->has_cut && replay_tag(ev) == w->cut_tag) {
			w->cut_done = true;
			if (want < w->through)
				want = w->through;
		} else if (want > w->hold) {
			want = w->hold;
		}
	}
	while (w->done < want) {
		uint64_t id;
		int ret = sim_window_visit_next(r->sims[pol], ev->ts, &id);

		if (ret < 0)
			return ret;
		if (!ret)
			break;
		w->done++;
	}
	return 0;
}

/* Unlock: the window waits for late updates (inferred_visit). */
static int inferred_window_end(struct replay *r, unsigned int pol, struct model_window *w,
			       uint64_t ts)
{
	if (!r->order)
		return 0;
	w->closing = true;
	return 1;
}

const struct replay_model replay_model_inferred = {
	.name		= "inferred",
	.summary	= "in each traced lock window, the order that explains the kernel's recorded "
			  "values (a first pass of validate's inference); spread elsewhere",
	.needs_unlock	= true,
	.unmet		= inferred_unmet,
	.prepare	= inferred_prepare,
	.window_begin	= inferred_window_begin,
	.visit		= inferred_visit,
	.before_update	= inferred_before_update,
	.before_update_run = inferred_before_update_run,
	.window_end	= inferred_window_end,
};
