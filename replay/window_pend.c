// SPDX-License-Identifier: GPL-2.0
/*
 * window_pend.c - the flush requests that own lock windows (window.c): a
 * memcg_flush_stats that went ahead in some run waits, by its pid, for the
 * locked/unlock pairs of its flush; its progress (the visible error's "in
 * flush" time) runs from its first window to the end of its last, and when
 * it gets no more windows it is closed, the runs that waited in vain
 * flushing then.  window_flush_request() starts one.
 */
#include <errno.h>
#include <string.h>

#include "grow.h"
#include "replay-local.h"
#include "window-local.h"

struct win_pend *win_pend_find(struct replay *r, int32_t pid)
{
	unsigned int i;

	for (i = 0; i < WIN_MAX_PEND; i++)
		if (r->win.pend[i].used && r->win.pend[i].pid == pid)
			return &r->win.pend[i];
	return NULL;
}

/* The runs that flush at @pd's windows, bit p for run p.  Only with the runs drained. */
uint64_t win_pend_go(const struct replay *r, const struct win_pend *pd)
{
	uint64_t go = 0;
	unsigned int p;

	for (p = 0; p < r->p.nr_runs; p++)
		if (win_goes(r, p, pd))
			go |= win_run_bit(p);
	return go;
}

/* The runs in @go flush at @pd's windows, the others not.  Only with the runs drained. */
void win_pend_go_set(struct replay *r, const struct win_pend *pd, uint64_t go)
{
	uint64_t bit = (uint64_t)1 << win_slot(r, pd);
	unsigned int p;

	for (p = 0; p < r->p.nr_runs; p++)
		r->win.rgo[p] = go & win_run_bit(p) ? r->win.rgo[p] | bit : r->win.rgo[p] & ~bit;
}

/* @pd is over: its slot free, no run flushing at it.  Only with the runs drained. */
void win_pend_free(struct replay *r, struct win_pend *pd)
{
	win_pend_go_set(r, pd, 0);
	pd->used = false;
}

int win_end_policy(struct replay *r, unsigned int p, uint64_t ts)
{
	struct win_pol *wp = &r->win.pol[p];
	struct win_defer *d = &r->win.defer[p];
	size_t i;
	int ret;

	if (!wp->open)
		return 0;
	wp->open = false;
	ret = sim_window_end(r->sims[p], ts);
	/* the flushes that waited for the lock take it now, in the order they came */
	for (i = 0; !ret && i < d->nr; i++)
		ret = sim_flush(r->sims[p], ts, d->id[i]);
	d->nr = 0;
	return ret;
}

int win_flush_run(struct replay *r, unsigned int p, uint64_t ts, uint64_t id)
{
	struct win_defer *d = &r->win.defer[p];
	int ret;

	if (!r->win.pol[p].open || !sim_window_open(r->sims[p]))
		return sim_flush(r->sims[p], ts, id);
	ret = mcr_grow((void **)&d->id, &d->cap, d->nr + 1, sizeof(*d->id));
	if (ret < 0)
		return ret;
	d->id[d->nr++] = id;
	/* runs' threads count here at once (window_flush_request_run()) */
	__atomic_fetch_add(&r->st.win.deferred, 1, __ATOMIC_RELAXED);
	return 0;
}

void window_free(struct replay *r)
{
	unsigned int p;

	for (p = 0; p < REPLAY_MAX_RUNS; p++) {
		free(r->win.defer[p].id);
		r->win.defer[p] = (struct win_defer){ 0 };
	}
}

/*
 * The flush of @pd is in progress in each run that flushes at it from its first
 * window to the end of its last (sim_flush_progress_begin()): visible states
 * in between are its transients, not settled staleness.  @begin false ends
 * it, once.
 */
int win_pend_progress(struct replay *r, struct win_pend *pd, uint64_t ts, bool begin)
{
	unsigned int p;
	int ret;

	if (pd->progress == begin)
		return 0;
	pd->progress = begin;
	for (p = 0; p < r->p.nr_runs; p++) {
		if (!win_goes(r, p, pd))
			continue;
		ret = begin ? sim_flush_progress_begin(r->sims[p], ts) :
			      sim_flush_progress_end(r->sims[p], ts);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/*
 * win_pend_close() - a flush is over, or will get no more windows.  Policies that
 * waited for windows that never came flush now, so that no flush is lost.
 */
int win_pend_close(struct replay *r, struct win_pend *pd, uint64_t ts)
{
	unsigned int p;
	int ret;

	for (p = 0; p < r->p.nr_runs; p++) {
		if (!win_goes(r, p, pd))
			continue;
		if (r->win.kwin_open && r->win.kwin_pid == pd->pid) {
			ret = win_end_policy(r, p, ts);
			if (ret < 0)
				return ret;
		}
		if (pd->last_cpu == -2) {
			ret = win_flush_run(r, p, ts, pd->id);
			if (ret < 0)
				return ret;
		}
	}
	if (pd->last_cpu == -2 && win_pend_go(r, pd))
		r->st.win.missing++;
	ret = win_pend_progress(r, pd, ts, false);
	if (ret < 0)
		return ret;
	if (r->win.kwin_open && r->win.kwin_pid == pd->pid) {
		r->win.kwin_open = false;
		r->win.kwin_lost = false;
		if (r->inf) {
			ret = infer_unlock(r->inf, ts);
			if (ret < 0)
				return ret;
		}
	}
	win_pend_free(r, pd);
	return 0;
}

void win_pend_done(struct replay *r, const struct win_pend *pd, uint64_t ts)
{
	if (pd->root_forced && !r->synced) {
		r->synced = true;
		r->sync_ts = ts;
		if (r->inf)
			infer_set_synced(r->inf);
		val_synced(r);
	}
	val_flush_done(r, pd);
}

struct win_pend *win_pend_alloc(struct replay *r, int32_t pid, uint64_t ts)
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
	if (win_pend_close(r, oldest, ts) < 0)
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
	bool root_forced = (ev->flags & MCR_FLUSH_FORCE) && ev->id == SIM_ROOT_ID;
	bool windows = kernel_flush && r->t->windows_traced;
	bool defer = windows && (!r->p.model->whole_flush || r->t->visits_traced);
	struct win_pend *pd = win_pend_find(r, ev->pid);
	uint64_t mask = 0;
	unsigned int p;
	int ret;

	if (pd) {
		ret = win_pend_close(r, pd, ev->ts);
		if (ret < 0)
			return ret;
	}
	for (p = 0; p < r->p.nr_runs; p++) {
		if (!go[p])
			continue;
		if (defer) {
			mask |= win_run_bit(p);
			continue;
		}
		ret = win_flush_run(r, p, ev->ts, ev->id);
		if (ret < 0)
			return ret;
	}
	/* once it completes every counter is known: exact orders from here on */
	if (root_forced && r->inf)
		infer_set_syncing(r->inf);
	if (!windows) {
		if (root_forced) {
			struct win_pend done = { .id = ev->id, .root_forced = true };

			win_pend_done(r, &done, ev->ts);
		}
		return 0;
	}
	pd = win_pend_alloc(r, ev->pid, ev->ts);
	if (!pd)
		return -ENOMEM;
	*pd = (struct win_pend){
		.id = ev->id, .req_ts = ev->ts, .pid = ev->pid, .last_cpu = -2,
		.used = true, .root_forced = root_forced,
	};
	win_pend_go_set(r, pd, mask);
	return 0;
}

/**
 * window_flush_take() - can flush request @ev go to the runs' threads as far
 * as the windows go?  Then its shared half is done now: the pending flush
 * its windows will find, if the kernel flushed, its runs to come
 * (window_flush_request_run() sets each run's bit), and @op says which.
 * Not where it would close a request (its pid's) or drop one (no slot
 * free), which reads every run's decision; not under a model that places
 * visits before updates or ends windows itself, nor one that flushes whole
 * where the trace has windows but no visits.  Return: 1 (@op filled), 0.
 */
int window_flush_take(struct replay *r, const struct mcr_event *ev, struct win_op *op)
{
	const struct replay_model *m = r->p.model;
	bool windows = (ev->flags & (MCR_FLUSH_FORCE | MCR_FLUSH_NEEDS)) && r->t->windows_traced;
	struct win_pend *pd = NULL;
	unsigned int i;

	if (m->before_update || m->window_end || (ev->flags & MCR_FLUSH_FORCE) ||
	    win_pend_find(r, ev->pid) || (windows && m->whole_flush && !r->t->visits_traced))
		return 0;
	if (windows) {
		for (i = 0; i < WIN_MAX_PEND && r->win.pend[i].used; i++)
			;
		if (i == WIN_MAX_PEND)
			return 0;
		pd = &r->win.pend[i];
		/* each run clears its bit before this request sets it: win_pend_over_run() */
		*pd = (struct win_pend){
			.id = ev->id, .req_ts = ev->ts, .pid = ev->pid, .last_cpu = -2,
			.used = true,
		};
	}
	*op = (struct win_op){
		.kind = MCR_EV_FLUSH, .slot = pd ? win_slot(r, pd) : WIN_SLOT_NONE,
	};
	return 1;
}

/*
 * window_flush_request() for run @p alone, of a request the runs took
 * (window_flush_take()): if it went ahead (@go), it flushes at the
 * request's windows, or at once if the kernel's flush has none.
 */
int window_flush_request_run(struct replay *r, unsigned int p, const struct mcr_event *ev,
			     const struct win_op *op, bool go)
{
	if (!go)
		return 0;
	if (op->slot != WIN_SLOT_NONE) {
		r->win.rgo[p] |= (uint64_t)1 << op->slot;
		return 0;
	}
	return win_flush_run(r, p, ev->ts, ev->id);
}
