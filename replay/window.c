// SPDX-License-Identifier: GPL-2.0
/*
 * Where the visits of each flush happen.  Everything about lock windows is
 * here: pairing the kernel's cgroup_rstat_locked/unlock events with the
 * memcg_flush_stats request that owns them (by pid: __mem_cgroup_flush_stats()
 * calls css_rstat_flush() on the same task), lock-only flushes (css release:
 * css_rstat_exit() in kernel/cgroup/rstat.c), explicit VISIT events, and the
 * hook where an update lands inside a window.  Where the visits of a window
 * go otherwise is the flush model's (flush_model.h): this file calls its
 * window hooks (engine.c its prepare) and never asks which model it is.
 *
 * A request with force || needs_flush on pid P owns the following locked /
 * unlock events of pid P with the same cgroup id, one pair per possible CPU in
 * ascending order (6.15+; cpu -1 is the whole 6.10-6.14 loop).  A policy that
 * went ahead where the kernel did too flushes at those windows (under a model
 * that flushes whole: at the request); one that went ahead alone flushes
 * instantly at the request; one that skipped ignores them.
 *
 * A window whose unlock the trace lacks (lost events, a damaged file) must
 * still end, or every later update would land in it and the flush would
 * never complete.  The kernel traces locked and unlock with the rstat lock
 * held and IRQs off (spin_lock_irq()), and emits the unlock after its locked
 * on the same CPU: lock windows on one CPU do not nest, and a task holds one
 * at a time, so the next lock traced on the same CPU or by the same task
 * proves the window over.  That may be far (the flush's last CPU, an idle
 * CPU), while windows last microseconds: the trace's own windows bound them,
 * so a window without unlock ends no later than its lock plus the longest
 * window whose unlock the trace had so far.  It closes at the earlier of the
 * two (win_lost()), at its lock when the trace has no whole window yet (as
 * spread already placed such a window's visits); where in between its unlock
 * really was is unknown, so the order of updates and visits around it is a
 * guess, counted in replay_window_stats.unlock_lost and named as lost events
 * by validation.  The flush models and inference see it as a window that
 * ends there.  (The first other event on the CPU would prove it over too,
 * but synth's kernel traces updates of the flushing CPU inside its windows.)
 */
#include <errno.h>
#include <string.h>

#include "replay-local.h"
#include "window-local.h"

/* What reading ahead from a cgroup_rstat_locked event found. */
struct win_look {
	uint64_t	unlock_ts;	/* valid if found */
	uint64_t	proof_ts;	/* the lock that proves the window over, UINT64_MAX */
	bool		found;
	bool		explicit_visits;	/* VISIT events of its CPU come first */
};

/*
 * Reads ahead to the unlock that closes the window opened by @ev, within the
 * lookahead bound.  A lock of the same CPU or task ends the search: it proves
 * the window over (see the top of this file), its unlock would have come
 * before.  Returns 0 (see @lk) or the source's error.
 */
static int win_lookahead(struct replay *r, const struct mcr_event *ev, struct win_look *lk)
{
	const struct mcr_event *e;
	size_t i;
	int ret;

	*lk = (struct win_look){ .proof_ts = UINT64_MAX };
	for (i = 0;; i++) {
		ret = evq_peek(&r->q, i, &e);
		if (ret <= 0)
			return ret;
		if (e->kind == MCR_EV_VISIT && e->item == ev->item) {
			lk->explicit_visits = true;
			continue;
		}
		if (e->kind == MCR_EV_UNLOCK && e->pid == ev->pid && e->id == ev->id &&
		    e->item == ev->item) {
			lk->unlock_ts = e->ts;
			lk->found = true;
			return 0;
		}
		if (e->kind == MCR_EV_LOCKED && (e->cpu == ev->cpu || (ev->pid && e->pid == ev->pid) ||
		    (e->pid == ev->pid && e->id == ev->id && e->item == ev->item))) {
			lk->proof_ts = e->ts;
			return 0;
		}
	}
}

/* Inference follows the kernel's own windows, whatever the policies decided. */
static int win_infer_locked(struct replay *r, const struct mcr_event *ev,
			    const struct win_look *lk)
{
	val_window_closed(r);
	if (!r->inf)
		return 0;
	if (ev->item == -1)
		return infer_flush_all(r->inf, ev->ts, ev->id);
	return infer_locked(r->inf, ev->ts, ev->id, (unsigned int)ev->item,
			    lk->found && lk->unlock_ts > ev->ts ? lk->unlock_ts - ev->ts : 0);
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

/*
 * The flush whose windows @ev continues: the pending request of its pid, or a
 * new lock-only flush.  *@out NULL: not a flush at all.
 */
static int win_pend_for_lock(struct replay *r, const struct mcr_event *ev, struct win_pend **out)
{
	struct win_pend *pd = win_pend_find(r, ev->pid);
	int ret;

	*out = NULL;
	if (pd && (pd->id != ev->id || ev->item <= pd->last_cpu ||
		   (ev->item == -1 && pd->last_cpu != -2))) {
		ret = win_pend_close(r, pd, ev->ts);
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
		pd = win_pend_alloc(r, ev->pid, ev->ts);
		if (!pd)
			return -ENOMEM;
		*pd = (struct win_pend){
			.id = ev->id, .req_ts = ev->ts, .pid = ev->pid, .last_cpu = -2,
			.used = true, .lock_only = true,
		};
		win_pend_go_set(r, pd, win_all_policies(r));
	}
	*out = pd;
	return 0;
}

static int win_flush_now(struct replay *r, uint64_t go, uint64_t ts, uint64_t id)
{
	unsigned int p;
	int ret;

	for (p = 0; p < r->p.nr_runs; p++) {
		if (!(go & (win_run_bit(p))))
			continue;
		ret = win_flush_run(r, p, ts, id);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/*
 * Opens run @p's window of the flush (@ev->id, @req_ts, @ev->pid): explicit
 * VISIT events place its visits if the trace has them there (@expl), else
 * the flush model does, or they all happen now.  Touches run @p's state
 * alone: a run's thread may do it (window_take()).
 */
static int win_open_run(struct replay *r, unsigned int p, const struct mcr_event *ev,
			uint64_t req_ts, bool expl, const struct model_lock *lk)
{
	const struct replay_model *m = r->p.model;
	struct win_pol *wp = &r->win.pol[p];
	int ret;

	ret = win_end_policy(r, p, ev->ts);	/* windows of another lock overlapped */
	if (ret < 0)
		return ret;
	ret = sim_window_begin(r->sims[p], ev->ts, ev->id, (unsigned int)ev->item);
	if (ret < 0)
		return ret;
	memset(wp, 0, sizeof(*wp));
	wp->open = true;
	wp->id = ev->id;
	wp->req_ts = req_ts;
	wp->pid = ev->pid;
	if (expl) {
		wp->explicit_visits = true;
		return 0;
	}
	ret = m->window_begin ? m->window_begin(r, p, &wp->m, lk) : 0;
	if (!ret)
		ret = win_end_policy(r, p, ev->ts);
	return ret < 0 ? ret : 0;
}

/* Opens the window of each policy that flushes at @pd (win_open_run()). */
static int win_open(struct replay *r, const struct mcr_event *ev, const struct win_pend *pd,
		    const struct win_look *look)
{
	struct model_lock lk = { .ts = ev->ts, .unlock_ts = look->unlock_ts,
				 .unlock_found = look->found };
	unsigned int p;
	int ret;

	if (look->explicit_visits)
		r->st.win.explicit_windows++;
	for (p = 0; p < r->p.nr_runs; p++) {
		if (!win_goes(r, p, pd))
			continue;
		ret = win_open_run(r, p, ev, pd->req_ts, look->explicit_visits, &lk);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* The kernel's window is over at @ts: run @p's model ends it, or what is left happens now. */
static int win_unlock_run(struct replay *r, unsigned int p, uint64_t ts)
{
	struct model_window *w = window_placed(r, p);
	int ret;

	ret = w && r->p.model->window_end ? r->p.model->window_end(r, p, w, ts) : 0;
	if (!ret)
		ret = win_end_policy(r, p, ts);	/* what is left happens now */
	return ret < 0 ? ret : 0;
}

/*
 * The kernel's window of @pd on CPU @item is over at @ts (its unlock, traced
 * or implied): what is left of each policy's visits happens now; after the
 * last possible CPU the flush is complete.
 */
static int win_unlock_at(struct replay *r, struct win_pend *pd, int item, uint64_t ts)
{
	unsigned int p;
	int ret;

	for (p = 0; p < r->p.nr_runs; p++) {
		ret = win_unlock_run(r, p, ts);
		if (ret < 0)
			return ret;
	}
	val_unlocked(r, r->win.kwin_id, ts);
	r->win.kwin_open = false;
	r->win.kwin_lost = false;
	pd->unlocked = true;
	if (r->inf) {
		ret = infer_unlock(r->inf, ts);
		if (ret < 0)
			return ret;
	}
	if (item == -1 || item == (int)r->t->nr_possible - 1) {
		win_pend_done(r, pd, ts);
		ret = win_pend_progress(r, pd, ts, false);
		if (ret < 0)
			return ret;
		win_pend_free(r, pd);
	}
	return 0;
}

/*
 * When the window @ev opened ends, its unlock not being in the trace: at the
 * next lock that proves it over, or after the longest window the trace has
 * had so far, whichever comes first (see the top of this file); its own lock
 * if the trace has no whole window yet.
 */
static uint64_t win_lost_end(const struct replay *r, const struct mcr_event *ev,
			     const struct win_look *lk)
{
	uint64_t end = ev->ts + r->win.max_win_ns;

	if (end < ev->ts)
		end = UINT64_MAX;
	if (lk->proof_ts < end)
		end = lk->proof_ts;
	return end > ev->ts ? end : ev->ts;
}

/* The flush model's visits due before @ev, in every run. */
static int win_visits_before(struct replay *r, const struct mcr_event *ev)
{
	unsigned int p;
	int ret;

	if (!r->p.model->visit)
		return 0;
	for (p = 0; p < r->p.nr_runs; p++) {
		ret = window_before_event_run(r, p, ev);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/*
 * The open window whose unlock was lost ends at its end, or at @ts if that
 * is earlier: as if its unlock were traced then.
 */
static int win_lost_close(struct replay *r, uint64_t ts)
{
	struct mcr_event u = {
		.ts = ts < r->win.lost_end_ts ? ts : r->win.lost_end_ts, .kind = MCR_EV_UNLOCK,
		.pid = r->win.kwin_pid, .id = r->win.kwin_id, .item = r->win.kwin_cpu,
	};
	struct win_pend *pd = win_pend_find(r, r->win.kwin_pid);
	int ret;

	r->win.kwin_lost = false;
	if (!r->win.kwin_open || !pd || pd->unlocked || pd->last_cpu != r->win.kwin_cpu)
		return 0;
	ret = win_visits_before(r, &u);
	return ret < 0 ? ret : win_unlock_at(r, pd, u.item, u.ts);
}

/* The kernel's window opens at lock @ev of @pd's request: its CPU, its owner. */
static void win_kernel_open(struct replay *r, struct win_pend *pd, const struct mcr_event *ev)
{
	pd->last_cpu = ev->item;
	pd->unlocked = false;
	r->win.kwin_open = true;
	r->win.kwin_id = ev->id;
	r->win.kwin_pid = ev->pid;
	r->win.kwin_cpu = ev->item;
}

/**
 * window_locked() - cgroup_rstat_locked(cpu=c): the flush of subtree(id) on
 * CPU c starts.  Opens each flushing policy's window, unless the flush goes
 * whole at once.
 */
int window_locked(struct replay *r, const struct mcr_event *ev)
{
	struct win_look lk;
	struct win_pend *pd;
	bool first, lost;
	int ret;

	if (win_foreign(r, ev))
		return 0;
	if (r->win.kwin_lost) {
		/* no proof came first: another task's window, which cannot overlap it */
		ret = win_lost_close(r, ev->ts);
		if (ret < 0)
			return ret;
	}
	ret = win_pend_for_lock(r, ev, &pd);
	if (ret < 0 || !pd)
		return ret;
	if (!rcg_get(r, ev->ts, ev->id, false))
		return -ENOMEM;
	if (pd->lock_only)
		r->st.win.lock_only++;
	else
		r->st.win.owned++;
	first = pd->last_cpu == -2;
	ret = win_pend_progress(r, pd, ev->ts, true);
	if (ret < 0)
		return ret;
	win_kernel_open(r, pd, ev);
	ret = win_lookahead(r, ev, &lk);
	if (ret < 0)
		return ret;
	lost = !lk.found;
	if (lost) {
		/* the models and inference see it end where the rule ends it */
		r->st.win.unlock_lost++;
		r->win.lost_ts = ev->ts;
		lk.unlock_ts = win_lost_end(r, ev, &lk);
		lk.found = lk.unlock_ts > ev->ts;
	} else if (lk.unlock_ts > ev->ts && lk.unlock_ts - ev->ts > r->win.max_win_ns) {
		r->win.max_win_ns = lk.unlock_ts - ev->ts;
	}
	ret = win_infer_locked(r, ev, &lk);
	/*
	 * The 6.10-6.14 loop holds every CPU inside one window, timing unknown;
	 * a model that flushes whole does a lock-only flush at its first window.
	 */
	if (ret >= 0 && win_pend_go(r, pd)) {
		if (ev->item == -1 || (r->p.model->whole_flush && !r->t->visits_traced))
			ret = first || ev->item == -1 ?
			      win_flush_now(r, win_pend_go(r, pd), ev->ts, ev->id) : 0;
		else
			ret = win_open(r, ev, pd, &lk);
	}
	if (ret < 0 || !lost)
		return ret;
	if (!lk.found)
		return win_unlock_at(r, pd, ev->item, ev->ts);
	/* window_before_event() closes it */
	r->win.kwin_lost = true;
	r->win.lost_end_ts = lk.unlock_ts;
	return 0;
}

/**
 * window_before_event() - the visits the flush model puts before an event at
 * @ev->ts happen first, so that updates from other CPUs interleave with them
 * by ts; a model may close its window here.  A window whose unlock was lost
 * and that ends by now ends first (nothing is queued while one is open).
 */
int window_before_event(struct replay *r, const struct mcr_event *ev)
{
	int ret;

	if (r->win.kwin_lost && ev->ts >= r->win.lost_end_ts) {
		ret = win_lost_close(r, ev->ts);
		if (ret < 0)
			return ret;
	}
	return win_visits_before(r, ev);
}

/* window_before_event() for run @p alone: touches only its simulator and window. */
int window_before_event_run(struct replay *r, unsigned int p, const struct mcr_event *ev)
{
	const struct replay_model *m = r->p.model;
	struct model_window *w = m->visit ? window_placed(r, p) : NULL;
	int ret;

	if (!w)
		return 0;
	ret = m->visit(r, p, w, ev);
	return ret ? ret : win_end_policy(r, p, ev->ts);
}

/* window_update_shared()'s event @ev, run @p's half: the visits the model puts first. */
int window_update_run(struct replay *r, unsigned int p, const struct mcr_event *ev,
		      const struct model_upd *u)
{
	return r->p.model->before_update_run(r, p, ev, u);
}

/* window_before_update() - both halves, every run: the visits the model puts before @ev. */
int window_before_update(struct replay *r, const struct mcr_event *ev)
{
	struct model_upd u;
	unsigned int p;
	int ret = window_update_shared(r, ev, &u);

	for (p = 0; ret > 0 && p < r->p.nr_runs; p++) {
		int err = window_update_run(r, p, ev, &u);

		if (err < 0)
			return err;
	}
	return ret < 0 ? ret : 0;
}

/*
 * window_runs_may_queue() - may an update go to the runs' threads as far as
 * the windows go?  Not while a run's window is kept open past its unlock
 * (the inferred model's window_end): the model's visit hook ends it at
 * some event, which ends reads and reads the pass's order.  Pass's thread,
 * runs drained or not.  Only a model with window_end keeps one open, and
 * under such a model only the pass opens and closes windows
 * (window_take()); under any other the runs' threads may, so their flags
 * are not read here.
 */
bool window_runs_may_queue(const struct replay *r)
{
	unsigned int p;

	if (!r->p.model->window_end)
		return true;
	for (p = 0; p < r->p.nr_runs; p++)
		if (r->win.pol[p].open && r->win.pol[p].m.closing)
			return false;
	return true;
}

struct model_window *window_placed(struct replay *r, unsigned int pol)
{
	struct win_pol *wp = &r->win.pol[pol];

	return wp->open && !wp->explicit_visits ? &wp->m : NULL;
}

/**
 * window_unlock() - cgroup_rstat_unlock(cpu=c): what is left of CPU c's
 * visits happens now; after the last possible CPU the flush is complete.
 */
int window_unlock(struct replay *r, const struct mcr_event *ev)
{
	struct win_pend *pd;

	if (win_foreign(r, ev))
		return 0;
	pd = win_pend_find(r, ev->pid);
	/* an unlock whose locked we did not see, or past the lookahead of one taken as lost */
	if (!pd || pd->id != ev->id || pd->last_cpu != ev->item || pd->unlocked)
		return 0;
	return win_unlock_at(r, pd, ev->item, ev->ts);
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
	for (p = 0; p < r->p.nr_runs; p++) {
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
 * counters is unknown: memcg_rstat_updated() takes no rstat lock.
 *
 * It counts the update and, when validating, marks the path, so that
 * validation without inference can name "window order unknown" as a
 * mismatch's cause.  Inference itself branches on that
 * order in infer_update() (replay/infer/infer_update.c); the inferred flush model
 * replays the order it found (replay/model_inferred.c).
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
	/* only validation reads the marks: a replay's path stays clean */
	if (!r->val)
		return;
	for (a = c; a; a = a->parent)
		a->window_ts = ev->ts;
}

/* End of the trace: close what is open; flushes still waiting for windows happen now. */
int window_finish(struct replay *r)
{
	unsigned int i;
	int ret;

	if (r->win.kwin_lost) {
		ret = win_lost_close(r, r->now);
		if (ret < 0)
			return ret;
	}
	for (i = 0; i < WIN_MAX_PEND; i++) {
		if (!r->win.pend[i].used)
			continue;
		ret = win_pend_close(r, &r->win.pend[i], r->now);
		if (ret < 0)
			return ret;
	}
	for (i = 0; i < r->p.nr_runs; i++) {
		ret = win_end_policy(r, i, r->now);
		if (ret < 0)
			return ret;
	}
	return r->inf ? infer_finish(r->inf, r->now) : 0;
}

/* Is waiting read @w's flush still ahead of it by its pending request alone? */
static bool win_wait_held(const struct replay *r, const struct read_wait *w)
{
	unsigned int k;

	if (!w->rd.flushed)
		return false;
	for (k = 0; k < WIN_MAX_PEND; k++) {
		const struct win_pend *pd = &r->win.pend[k];

		if (pd->used && pd->pid == w->rd.pid && pd->id == w->rd.id &&
		    pd->req_ts == w->rd.ts && win_goes(r, w->pol, pd))
			return true;
	}
	return false;
}

/*
 * Is every waiting read's flush still ahead of it by its pending request
 * alone (a used win_pend of its run)?  Then no read can end before the
 * request's last unlock, whatever the runs' windows do.  Shared state only.
 */
static bool win_waits_held(const struct replay *r)
{
	unsigned int p;
	size_t i;

	for (p = 0; p < r->p.nr_runs; p++)
		for (i = 0; i < r->rr[p].nr; i++)
			if (!win_wait_held(r, &r->rr[p].w[i]))
				return false;
	return true;
}

/**
 * window_reads_note() - the runs drained: is some waiting read not held by
 * its request alone?  window_take() and reads_take() ask until the
 * runs next drain.
 */
void window_reads_note(struct replay *r)
{
	r->win.waits_unheld = !win_waits_held(r);
}

/*
 * window_take() - can lock or unlock event @ev be split into a shared half,
 * done now, and per-run halves (window_op_run()) that the runs' threads do
 * in order with their queued updates (workers.c)?  Only where nothing the
 * pass does until the runs next drain reads a run's window or simulator:
 *   - a lock of a flush request's next CPU (its pid's, its cgroup known to
 *     the simulators), whose unlock the lookahead finds, under a model that
 *     places visits in the window and has neither a before_update hook nor
 *     a window_end one (window_runs_may_queue() reads the windows then),
 *     and no explicit VISIT events in it;
 *   - an unlock of such a window.  The flush's last ends the request: the
 *     pass frees its slot, each run ends its progress and its read of it
 *     (win_pend_over_run()), but not a forced root flush's (validation
 *     syncs at its end);
 * and only while every waiting read was held by its request as the runs
 * last drained (window_reads_note()): then no read ends at the event but
 * the request's own, each run's on its thread.  The caller checks what is
 * not the windows' (no sample due, no window with a lost unlock, the CPU).
 * Return: 1 (the shared half done, @op filled), 0 (nothing done), -errno.
 */
int window_take(struct replay *r, const struct mcr_event *ev, struct win_op *op)
{
	const struct replay_model *m = r->p.model;
	struct win_pend *pd;
	struct win_look lk;
	struct rcg *c;
	int ret;

	if (m->before_update || m->window_end ||
	    (r->t->hierarchy_id >= 0 && ev->aux != r->t->hierarchy_id) ||
	    ev->item < 0 || ev->item >= (int)r->t->nr_possible)
		return 0;
	pd = win_pend_find(r, ev->pid);
	if (!pd || pd->id != ev->id || r->win.waits_unheld)
		return 0;
	if (ev->kind == MCR_EV_UNLOCK) {
		bool last = ev->item == (int)r->t->nr_possible - 1;

		if (pd->last_cpu != ev->item || pd->unlocked || (last && pd->root_forced))
			return 0;
		/* win_unlock_at()'s shared half */
		r->win.kwin_open = false;
		r->win.kwin_lost = false;
		pd->unlocked = true;
		*op = (struct win_op){ .kind = MCR_EV_UNLOCK };
		if (last) {
			/*
			 * the request is over: its slot free now, each run's bit
			 * cleared as the run gets there, before any later
			 * request's sets it again (win_pend_over_run())
			 */
			op->last = true;
			op->slot = win_slot(r, pd);
			op->progress = pd->progress;
			op->req_ts = pd->req_ts;
			win_pend_done(r, pd, ev->ts);	/* not a forced root flush's: no sync */
			pd->progress = false;
			pd->used = false;
		}
		return 1;
	}
	if (ev->kind != MCR_EV_LOCKED || ev->item <= pd->last_cpu ||
	    (m->whole_flush && !r->t->visits_traced))
		return 0;
	c = rcg_find(r, ev->id);
	if (!c || !c->added)
		return 0;
	ret = win_lookahead(r, ev, &lk);
	/*
	 * explicit visits count in the windows' stats where some run flushes,
	 * which only the runs know while requests are queued
	 */
	if (ret < 0 || !lk.found || lk.explicit_visits)
		return ret;
	/* window_locked()'s shared half */
	if (pd->lock_only)
		r->st.win.lock_only++;
	else
		r->st.win.owned++;
	/* win_pend_progress() at the flush's first lock: the runs begin it */
	op->progress = !pd->progress;
	pd->progress = true;
	win_kernel_open(r, pd, ev);
	if (lk.unlock_ts > ev->ts && lk.unlock_ts - ev->ts > r->win.max_win_ns)
		r->win.max_win_ns = lk.unlock_ts - ev->ts;
	op->kind = MCR_EV_LOCKED;
	op->slot = win_slot(r, pd);
	op->req_ts = pd->req_ts;
	op->unlock_ts = lk.unlock_ts;
	return 1;
}

/*
 * The last unlock @ev of a request (@op): as win_unlock_at() ends it, run
 * @p's half: if the run flushed at it, its progress ends and its bit goes.
 * Return: 1 if it did (its read of it ends now: reads_end_flush()), 0, -errno.
 */
static int win_pend_over_run(struct replay *r, unsigned int p, const struct mcr_event *ev,
			     const struct win_op *op)
{
	uint64_t bit = (uint64_t)1 << op->slot;
	int ret;

	if (!(r->win.rgo[p] & bit))
		return 0;
	r->win.rgo[p] &= ~bit;
	rows_phase(&r->ep[p], ROWS_FLUSH);
	if (op->progress) {
		ret = sim_flush_progress_end(r->sims[p], ev->ts);
		if (ret < 0)
			return ret;
	}
	return 1;
}

/*
 * window_op_run() - window_take()'s event @ev, run @p's half: touches only
 * its window and simulator.  Return: 1 if @ev ended a request the run
 * flushed at (the caller ends the run's read of it: reads_end_flush()), 0,
 * or -errno.
 */
int window_op_run(struct replay *r, unsigned int p, const struct mcr_event *ev,
		  const struct win_op *op)
{
	struct model_lock lk = { .ts = ev->ts, .unlock_ts = op->unlock_ts, .unlock_found = true };
	int ret;

	if (op->kind == MCR_EV_UNLOCK) {
		ret = win_unlock_run(r, p, ev->ts);
		return ret < 0 || !op->last ? ret : win_pend_over_run(r, p, ev, op);
	}
	if (!win_goes(r, p, &r->win.pend[op->slot]))
		return 0;
	/* no row comes of it: the runs' order among themselves is free */
	if (op->progress) {
		ret = sim_flush_progress_begin(r->sims[p], ev->ts);
		if (ret < 0)
			return ret;
	}
	return win_open_run(r, p, ev, op->req_ts, false, &lk);
}

/**
 * window_flush_waiting() - is the flush that (@pid, @req_ts) requested of
 * @id still to make visits for policy @pol (its windows not all over yet)?
 * The kernel's last unlock does not end it when the flush model keeps the
 * policy's last window open past it (model_inferred.c: updates the order puts
 * before the unlock's visits were traced after it): mem_cgroup_flush_stats()
 * returns, and the reader reads, only once every visit is made.
 */
bool window_flush_waiting(const struct replay *r, uint64_t id, uint64_t req_ts, int32_t pid,
			  unsigned int pol)
{
	const struct win_pol *wp = &r->win.pol[pol];
	const struct win_pend *pd;
	unsigned int i;

	if (wp->open && wp->id == id && wp->req_ts == req_ts && wp->pid == pid)
		return true;

	for (i = 0; i < WIN_MAX_PEND; i++) {
		pd = &r->win.pend[i];
		if (pd->used && pd->pid == pid && pd->id == id && pd->req_ts == req_ts &&
		    win_goes(r, pol, pd))
			return true;
	}
	return false;
}
