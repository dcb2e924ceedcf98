/* SPDX-License-Identifier: GPL-2.0 */
/*
 * flush_model.h - where the visits of a flush happen when the trace does not
 * say: a table of flush models chosen by name (replay/flush_model.c), one
 * file each (replay/model_<name>.c).
 *
 * Contract: the engine (replay/window.c) pairs the kernel's lock windows with
 * the flush requests that own them, handles explicit VISIT events (they beat
 * any model) and the 6.10-6.14 window that holds every CPU, and opens and
 * closes each policy's simulated window.  A model only places the visits of
 * one policy's open window, through the hooks below; the engine calls them
 * and never asks which model it runs.  A model keeps its per-window scratch
 * in struct model_window (zeroed when the window opens); its only per-run
 * input is the window order in the engine's r->order, which the engine fills
 * with a prepass when prepare() asks for one.  A model never reads the event
 * source, never creates a replay, never prints.  Hooks return 0 (or the
 * documented 1) or a negative errno; a NULL hook does nothing.
 */
#ifndef MCR_REPLAY_FLUSH_MODEL_H
#define MCR_REPLAY_FLUSH_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mcr_event;
struct replay;
struct replay_trace;
struct sim_policy;

/* One policy's open lock window, the model's to use. */
struct model_window {
	uint64_t	t0, dur;	/* spread: the window's span */
	size_t		n, done;	/* visits to place, placed so far */
	bool		closing;	/* unlock seen, kept open for late updates */
	/*
	 * inferred: a pin of this window (struct replay_pin): no more than
	 * @hold visits before its cut, @through of them at it
	 */
	bool		pinned, has_cut, cut_done;
	size_t		hold, through;
	uint64_t	cut_tag;
};

/* The kernel's lock window being opened (cgroup_rstat_locked on one CPU). */
struct model_lock {
	uint64_t	ts;
	/*
	 * The unlock within the engine's lookahead, or where the engine ends
	 * a window whose unlock the trace lacks (window.c); unlock_found
	 * false: neither, the window ends at its lock.
	 */
	uint64_t	unlock_ts;	/* valid if unlock_found */
	bool		unlock_found;
};

/* What an update's before_update half found, for the runs' halves. */
struct model_upd {
	size_t		want;	/* inferred: visits the order puts before it (0: no decision) */
};

struct replay_model {
	const char	*name;
	const char	*summary;	/* one line for --help */
	/*
	 * Each flush goes whole at one instant: at its memcg_flush_stats
	 * request, or (a flush without request) at its first lock window.
	 * The per-CPU windows then place nothing, unless the trace has
	 * explicit visits.
	 */
	bool		whole_flush;
	/* window_begin() wants the unlock's ts: the engine reads ahead for it. */
	bool		needs_unlock;
	/* What @t lacks for the model to work as it says: "needs X; using Y"; NULL: nothing. */
	const char *(*unmet)(const struct replay_trace *t);
	/*
	 * Before the pass.  Setting *@infer_with asks the engine for the order
	 * inside the trace's lock windows inferred with that policy: it runs
	 * that prepass over the source and sets r->order before the pass.
	 * NULL for the plain models (a fixed rule, all validate compares).
	 */
	int (*prepare)(struct replay *r, const struct sim_policy **infer_with);
	/*
	 * Policy @pol's simulated window opens at @lk->ts (sim_window_begin()
	 * done).  Return 1 when the model places its visits (the window stays
	 * open), 0 when they all happen now.
	 */
	int (*window_begin)(struct replay *r, unsigned int pol, struct model_window *w,
			    const struct model_lock *lk);
	/* Before each event while the window is open: the visits due first.  1, or 0: close it. */
	int (*visit)(struct replay *r, unsigned int pol, struct model_window *w,
		     const struct mcr_event *ev);
	/*
	 * Before each update is applied, in two halves.  before_update, once,
	 * on the pass's thread: what the runs need to know of the update
	 * (read from state the pass owns, such as the order), into @u; 1 if
	 * before_update_run has anything to do, 0 if not, -errno.  Then
	 * before_update_run for each run @pol, on whichever thread applies
	 * the run's update (workers.c): the visits @u puts first in its open
	 * window.  It touches only the run's window and simulator, and ends
	 * no window.
	 */
	int (*before_update)(struct replay *r, const struct mcr_event *ev, struct model_upd *u);
	int (*before_update_run)(struct replay *r, unsigned int pol, const struct mcr_event *ev,
				 const struct model_upd *u);
	/* The kernel's unlock of the window: 1 keeps it open, 0 makes what is left happen now. */
	int (*window_end)(struct replay *r, unsigned int pol, struct model_window *w, uint64_t ts);
};

/* The models, in --help order. */
extern const struct replay_model replay_model_instant;
extern const struct replay_model replay_model_window;
extern const struct replay_model replay_model_spread;
extern const struct replay_model replay_model_inferred;

const struct replay_model *replay_model_at(size_t i);	/* NULL past the end */
/* Sets *@out to the model named @name: 0, or -EINVAL if there is none. */
int replay_model_find(const char *name, const struct replay_model **out);

/* A fixed rule, no prepass: what validate's plain comparison can use. */
static inline bool replay_model_is_plain(const struct replay_model *m)
{
	return !m->prepare;
}

/* What @t lacks for @m, as "needs X; using Y" (one phrase for the user); NULL: nothing. */
static inline const char *replay_model_unmet(const struct replay_model *m,
					     const struct replay_trace *t)
{
	return m->unmet ? m->unmet(t) : NULL;
}

/*
 * The model replay uses when none is named: for @t, inferred when the trace
 * has lock windows and a kernel whose policy is known, else spread; @t NULL:
 * the plain default (spread).
 */
const struct replay_model *replay_model_default(const struct replay_trace *t);
/* " (default ...)" for @m's --help line, or "". */
const char *replay_model_default_note(const struct replay_model *m);
extern const char *const replay_model_default_why;		/* one paragraph for --help */

#endif
