// SPDX-License-Identifier: GPL-2.0
/*
 * Where the visits of each flush happen.  Everything about lock windows is
 * here: pairing the kernel's cgroup_rstat_locked/unlock events with the
 * memcg_flush_stats request that owns them (by pid, kernel-model section 4.2),
 * lock-only flushes (css release, section 6), the flush models, explicit VISIT
 * events, and the hook where an update lands inside a window.
 *
 * A request with force || needs_flush on pid P owns the following locked /
 * unlock events of pid P with the same cgroup id, one pair per possible CPU in
 * ascending order (6.15+; cpu -1 is the whole 6.10-6.14 loop).  A policy that
 * went ahead where the kernel did too flushes at those windows (instant: at
 * the request); one that went ahead alone flushes instantly at the request;
 * one that skipped ignores them.
 */
#include <errno.h>
#include <string.h>

#include "replay-local.h"

static unsigned int win_all_policies(const struct replay *r)
{
	return (1u << r->p.nr_policies) - 1;
}

static struct win_pend *pend_find(struct replay *r, int32_t pid)
{
	unsigned int i;

	for (i = 0; i < WIN_MAX_PEND; i++)
		if (r->win.pend[i].used && r->win.pend[i].pid == pid)
			return &r->win.pend[i];
	return NULL;
}

static int win_end_policy(struct replay *r, unsigned int p, uint64_t ts)
{
	struct win_pol *wp = &r->win.pol[p];

	if (!wp->open)
		return 0;
	wp->open = wp->closing = false;
	return sim_window_end(r->sims[p], ts);
}

/*
 * pend_close() - a flush is over, or will get no more windows.  Policies that
 * waited for windows that never came flush now, so that no flush is lost.
 */
static int pend_close(struct replay *r, struct win_pend *pd, uint64_t ts)
{
	unsigned int p;
	int ret;

	for (p = 0; p < r->p.nr_policies; p++) {
		if (!(pd->go & (1u << p)))
			continue;
		if (r->win.kwin_open && r->win.kwin_pid == pd->pid) {
			ret = win_end_policy(r, p, ts);
			if (ret < 0)
				return ret;
		}
		if (pd->last_cpu == -2) {
			ret = sim_flush(r->sims[p], ts, pd->id);
			if (ret < 0)
				return ret;
		}
	}
	if (pd->last_cpu == -2 && pd->go)
		r->st.win.missing++;
	if (r->win.kwin_open && r->win.kwin_pid == pd->pid) {
		r->win.kwin_open = false;
		if (r->inf) {
			ret = infer_unlock(r->inf, ts);
			if (ret < 0)
				return ret;
		}
	}
	pd->used = false;
	return 0;
}

static struct win_pend *pend_alloc(struct replay *r, int32_t pid, uint64_t ts)
{
	struct win_pend *oldest = NULL;
	unsigned int i;

	for (i = 0; i < WIN_MAX_PEND; i++) {
		if (!r->win.pend[i].used)
			return &r->win.pend[i];
		if (!oldest || r->win.pend[i].req_ts < oldest->req_ts)
			oldest = &r->win.pend[i];
	}
	/* More flushers in flight than any kernel has CPUs flushing: drop the oldest. */
	if (pend_close(r, oldest, ts) < 0)
		return NULL;
	return oldest;
}

/**
 * window_flush_request() - after every policy decided on a memcg_flush_stats
 * event (@go[p]), place the visits of the flushes that go ahead.
 */
int window_flush_request(struct replay *r, const struct mcr_event *ev, const bool *go)
{
	bool kernel_flush = ev->flags & (MCR_FLUSH_FORCE | MCR_FLUSH_NEEDS);
	bool windows = kernel_flush && r->t->windows_traced;
	bool defer = windows && (r->p.model != REPLAY_MODEL_INSTANT || r->t->visits_traced);
	struct win_pend *pd = pend_find(r, ev->pid);
	unsigned int p, mask = 0;
	int ret;

	if (pd) {
		ret = pend_close(r, pd, ev->ts);
		if (ret < 0)
			return ret;
	}
	for (p = 0; p < r->p.nr_policies; p++) {
		if (!go[p])
			continue;
		if (defer) {
			mask |= 1u << p;
			continue;
		}
		ret = sim_flush(r->sims[p], ev->ts, ev->id);
		if (ret < 0)
			return ret;
	}
	if (!windows) {
		if (kernel_flush && (ev->flags & MCR_FLUSH_FORCE) && ev->id == SIM_ROOT_ID) {
			struct win_pend done = { .id = ev->id, .root_forced = true };

			val_flush_done(r, &done, ev->ts);
		}
		return 0;
	}
	pd = pend_alloc(r, ev->pid, ev->ts);
	if (!pd)
		return -ENOMEM;
	*pd = (struct win_pend){
		.id = ev->id, .req_ts = ev->ts, .pid = ev->pid, .last_cpu = -2, .go = mask,
		.used = true, .root_forced = (ev->flags & MCR_FLUSH_FORCE) && ev->id == SIM_ROOT_ID,
	};
	return 0;
}

/*
 * Reads ahead to the unlock that closes the window opened by @ev; says
 * whether VISIT events of its CPU come first.  Returns 1 found, 0 not found
 * within the lookahead bound, or the source's error.
 */
static int win_lookahead(struct replay *r, const struct mcr_event *ev, uint64_t *unlock_ts,
			 bool *explicit_visits)
{
	const struct mcr_event *e;
	size_t i;
	int ret;

	*explicit_visits = false;
	for (i = 0;; i++) {
		ret = evq_peek(&r->q, i, &e);
		if (ret <= 0)
			return ret;
		if (e->kind == MCR_EV_VISIT && e->item == ev->item)
			*explicit_visits = true;
		if (e->pid != ev->pid || e->id != ev->id || e->item != ev->item)
			continue;
		if (e->kind == MCR_EV_UNLOCK) {
			*unlock_ts = e->ts;
			return 1;
		}
		if (e->kind == MCR_EV_LOCKED)
			return 0;
	}
}

/* Inference follows the kernel's own windows, whatever the policies decided. */
static int win_infer_locked(struct replay *r, const struct mcr_event *ev)
{
	uint64_t unlock_ts = 0;
	bool expl;
	int found;

	if (!r->inf)
		return 0;
	if (ev->item == -1)
		return infer_flush_all(r->inf, ev->ts, ev->id);
	found = win_lookahead(r, ev, &unlock_ts, &expl);
	if (found < 0)
		return found;
	return infer_locked(r->inf, ev->ts, ev->id, (unsigned int)ev->item,
			    found && unlock_ts > ev->ts ? unlock_ts - ev->ts : 0);
}

static bool win_foreign(struct replay *r, const struct mcr_event *ev)
{
	if (r->t->hierarchy_id >= 0 && ev->aux != r->t->hierarchy_id) {
		r->st.win.foreign++;
		return true;
	}
	if (ev->item < -1 || ev->item >= (int)r->t->nr_possible) {
		r->st.win.bad_cpu++;
		return true;
	}
	return false;
}

/**
 * window_locked() - cgroup_rstat_locked(cpu=c): the flush of subtree(id) on
 * CPU c starts.  Opens each flushing policy's window and places its visits
 * by the flush model, unless explicit VISIT events follow.
 */
int window_locked(struct replay *r, const struct mcr_event *ev)
{
	struct win_pend *pd;
	uint64_t unlock_ts = 0;
	bool expl = false, first;
	unsigned int p;
	int ret, found = 0;

	if (win_foreign(r, ev))
		return 0;
	pd = pend_find(r, ev->pid);
	if (pd && (pd->id != ev->id || ev->item <= pd->last_cpu ||
		   (ev->item == -1 && pd->last_cpu != -2))) {
		ret = pend_close(r, pd, ev->ts);
		if (ret < 0)
			return ret;
		pd = NULL;
	}
	if (!pd) {
		/* 6.15+ takes cpu=-1 only for cputime_adjust, which is not a flush. */
		if (ev->item == -1) {
			r->st.win.foreign++;
			return 0;
		}
		pd = pend_alloc(r, ev->pid, ev->ts);
		if (!pd)
			return -ENOMEM;
		*pd = (struct win_pend){
			.id = ev->id, .req_ts = ev->ts, .pid = ev->pid, .last_cpu = -2,
			.go = win_all_policies(r), .used = true, .lock_only = true,
		};
	}
	if (!rcg_get(r, ev->ts, ev->id, false))
		return -ENOMEM;
	if (pd->lock_only)
		r->st.win.lock_only++;
	else
		r->st.win.owned++;
	first = pd->last_cpu == -2;
	pd->last_cpu = ev->item;
	r->win.kwin_open = true;
	r->win.kwin_id = ev->id;
	r->win.kwin_pid = ev->pid;
	r->win.kwin_cpu = ev->item;
	ret = win_infer_locked(r, ev);
	if (ret < 0)
		return ret;
	if (!pd->go)
		return 0;

	/* The 6.10-6.14 loop: every CPU inside one window, timing unknown. */
	if (ev->item == -1 ||
	    (r->p.model == REPLAY_MODEL_INSTANT && !r->t->visits_traced)) {
		if (!first && ev->item != -1)
			return 0;	/* instant lock-only flush: done at its first window */
		for (p = 0; p < r->p.nr_policies; p++) {
			if (!(pd->go & (1u << p)))
				continue;
			ret = sim_flush(r->sims[p], ev->ts, ev->id);
			if (ret < 0)
				return ret;
		}
		return 0;
	}
	if (r->p.model >= REPLAY_MODEL_SPREAD || r->t->visits_traced) {
		found = win_lookahead(r, ev, &unlock_ts, &expl);
		if (found < 0)
			return found;
		if (!found)
			r->st.win.no_unlock++;
	}
	if (expl)
		r->st.win.explicit_windows++;
	for (p = 0; p < r->p.nr_policies; p++) {
		struct win_pol *wp = &r->win.pol[p];

		if (!(pd->go & (1u << p)))
			continue;
		ret = win_end_policy(r, p, ev->ts);	/* windows of another lock overlapped */
		if (ret < 0)
			return ret;
		ret = sim_window_begin(r->sims[p], ev->ts, ev->id, (unsigned int)ev->item);
		if (ret < 0)
			return ret;
		memset(wp, 0, sizeof(*wp));
		wp->open = true;
		if (expl) {
			wp->explicit_visits = true;
		} else if (r->p.model == REPLAY_MODEL_INFERRED && r->p.order) {
			wp->inferred = true;
		} else if (r->p.model >= REPLAY_MODEL_SPREAD && found) {
			wp->spread = true;
			wp->t0 = ev->ts;
			wp->dur = unlock_ts - ev->ts;
			wp->n = sim_window_remaining(r->sims[p]);
		} else {
			ret = win_end_policy(r, p, ev->ts);
			if (ret < 0)
				return ret;
		}
	}
	return 0;
}

/* Spread: visit k of n is due at t0 + (k + 1) * dur / (n + 1), strictly inside the window. */
static uint64_t win_due(const struct win_pol *wp, size_t k)
{
	return wp->t0 + (uint64_t)((unsigned __int128)wp->dur * (k + 1) / (wp->n + 1));
}

static bool win_is_update(const struct mcr_event *ev)
{
	return ev->kind == MCR_EV_STATE || ev->kind == MCR_EV_LRUVEC || ev->kind == MCR_EV_EVENTS;
}

/**
 * window_before_event() - spread windows: the visits due before an event at
 * @ev->ts happen first, so updates from other CPUs interleave with them by ts.
 * Inferred windows past their unlock close now, unless @ev is an update the
 * inferred order puts inside (its tracepoint fired late).
 */
int window_before_event(struct replay *r, const struct mcr_event *ev)
{
	uint64_t ts = ev->ts;
	unsigned int p;
	size_t k;
	int ret;

	for (p = 0; p < r->p.nr_policies; p++) {
		struct win_pol *wp = &r->win.pol[p];

		if (wp->closing && !(win_is_update(ev) &&
				     replay_order_lookup(r->p.order, replay_tag(ev), &k))) {
			ret = win_end_policy(r, p, ts);
			if (ret < 0)
				return ret;
		}
		if (!wp->open || !wp->spread)
			continue;
		while (wp->done < wp->n && win_due(wp, wp->done) <= ts) {
			uint64_t id;
			ret = sim_window_visit_next(r->sims[p], win_due(wp, wp->done), &id);
			if (ret < 0)
				return ret;
			wp->done++;
			if (!ret) {
				wp->done = wp->n;
				break;
			}
		}
	}
	return 0;
}

/**
 * window_before_update() - inferred windows: the visits the inferred order
 * puts before this update happen first.  An update without a decision has
 * no visit of its own path left to order against, so it needs none.
 */
int window_before_update(struct replay *r, const struct mcr_event *ev)
{
	unsigned int p;
	size_t k;

	if (!r->p.order || !replay_order_lookup(r->p.order, replay_tag(ev), &k))
		return 0;
	r->st.win.inferred_updates++;
	for (p = 0; p < r->p.nr_policies; p++) {
		struct win_pol *wp = &r->win.pol[p];

		if (!wp->open || !wp->inferred)
			continue;
		while (wp->done < k) {
			uint64_t id;
			int ret = sim_window_visit_next(r->sims[p], ev->ts, &id);

			if (ret < 0)
				return ret;
			if (!ret)
				break;
			wp->done++;
		}
	}
	return 0;
}

/**
 * window_unlock() - cgroup_rstat_unlock(cpu=c): what is left of CPU c's
 * visits happens now; after the last possible CPU the flush is complete.
 */
int window_unlock(struct replay *r, const struct mcr_event *ev)
{
	struct win_pend *pd;
	unsigned int p;
	int ret;

	if (win_foreign(r, ev))
		return 0;
	pd = pend_find(r, ev->pid);
	if (!pd || pd->id != ev->id || pd->last_cpu != ev->item)
		return 0;	/* an unlock whose locked we did not see */
	for (p = 0; p < r->p.nr_policies; p++) {
		/* an inferred window waits for late updates (window_before_event) */
		if (r->win.pol[p].open && r->win.pol[p].inferred) {
			r->win.pol[p].closing = true;
			continue;
		}
		ret = win_end_policy(r, p, ev->ts);
		if (ret < 0)
			return ret;
	}
	r->win.kwin_open = false;
	if (r->inf) {
		ret = infer_unlock(r->inf, ev->ts);
		if (ret < 0)
			return ret;
	}
	if (ev->item == -1 || ev->item == (int)r->t->nr_possible - 1) {
		if (pd->root_forced)
			val_flush_done(r, pd, ev->ts);
		pd->used = false;
	}
	return 0;
}

/**
 * window_visit() - an explicit VISIT event: the trace says when this node
 * was visited, which beats any model.
 */
int window_visit(struct replay *r, const struct mcr_event *ev)
{
	unsigned int p;
	int ret;

	if (!r->win.kwin_open || r->win.kwin_cpu != ev->item) {
		r->st.win.visits_unmatched++;
		return 0;
	}
	for (p = 0; p < r->p.nr_policies; p++) {
		struct win_pol *wp = &r->win.pol[p];

		if (!wp->open || !wp->explicit_visits)
			continue;
		ret = sim_window_visit(r->sims[p], ev->ts, ev->id);
		if (ret == -ENOENT)
			r->st.win.visits_unmatched++;
		else if (ret < 0)
			return ret;
	}
	return 0;
}

/**
 * window_update_hook() - an update to cgroup @c arrives (before it is
 * applied).  If a kernel lock window of an ancestor-or-self of @c is open, the
 * trace does not say whether the update came before or after the visits of
 * @c's path that the window still has to make: the per-CPU phase of those
 * counters is unknown (kernel-model section 7).
 *
 * It marks the path, so that validation without inference can name "window
 * order unknown" as a mismatch's cause.  Inference itself branches on that
 * order in infer_update() (replay/infer.c); window_before_update() replays
 * the order it found.
 */
void window_update_hook(struct replay *r, const struct mcr_event *ev, struct rcg *c)
{
	struct rcg *a;
	bool inside = false;

	if (!r->win.kwin_open)
		return;
	for (a = c; a; a = a->parent) {
		if (a->id == r->win.kwin_id) {
			inside = true;
			break;
		}
	}
	if (!inside)
		return;
	r->st.win.in_window_updates++;
	for (a = c; a; a = a->parent)
		a->window_ts = ev->ts;
}

/* End of the trace: close what is open; flushes still waiting for windows happen now. */
int window_finish(struct replay *r)
{
	unsigned int i;
	int ret;

	for (i = 0; i < WIN_MAX_PEND; i++) {
		if (!r->win.pend[i].used)
			continue;
		ret = pend_close(r, &r->win.pend[i], r->now);
		if (ret < 0)
			return ret;
	}
	for (i = 0; i < r->p.nr_policies; i++) {
		ret = win_end_policy(r, i, r->now);
		if (ret < 0)
			return ret;
	}
	return r->inf ? infer_finish(r->inf, r->now) : 0;
}

/**
 * window_flush_waiting() - is the flush that (@pid, @req_ts) requested of
 * @id still to make visits for policy @pol (its windows not all over yet)?
 */
bool window_flush_waiting(const struct replay *r, uint64_t id, uint64_t req_ts, int32_t pid,
			  unsigned int pol)
{
	const struct win_pend *pd;
	unsigned int i;

	for (i = 0; i < WIN_MAX_PEND; i++) {
		pd = &r->win.pend[i];
		if (pd->used && pd->pid == pid && pd->id == id && pd->req_ts == req_ts &&
		    (pd->go & (1u << pol)))
			return true;
	}
	return false;
}
