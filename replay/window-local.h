/* SPDX-License-Identifier: GPL-2.0 */
/*
 * window-local.h - what window.c (the lock windows) and window_pend.c (the
 * flush requests that own them) share; not for the rest of replay/.
 */
#ifndef MCR_REPLAY_WINDOW_LOCAL_H
#define MCR_REPLAY_WINDOW_LOCAL_H

#include "replay-local.h"

/* A set of runs: bit p for run p (REPLAY_MAX_RUNS <= 64). */
static inline uint64_t win_run_bit(unsigned int p)
{
	return (uint64_t)1 << p;
}

static inline uint64_t win_all_policies(const struct replay *r)
{
	return r->p.nr_runs == 64 ? UINT64_MAX : win_run_bit(r->p.nr_runs) - 1;
}

_Static_assert(WIN_MAX_PEND <= 64, "a run's flushes to come are bits of one word (win.rgo)");

static inline unsigned int win_slot(const struct replay *r, const struct win_pend *pd)
{
	return (unsigned int)(pd - r->win.pend);
}

/* Does run @p flush at @pd's windows?  Run @p's thread, or the runs drained. */
static inline bool win_goes(const struct replay *r, unsigned int p, const struct win_pend *pd)
{
	return r->win.rgo[p] >> win_slot(r, pd) & 1;
}

/* window_pend.c: the pending flush requests, by the pid that will take their windows */
uint64_t win_pend_go(const struct replay *r, const struct win_pend *pd);
void win_pend_go_set(struct replay *r, const struct win_pend *pd, uint64_t go);
void win_pend_free(struct replay *r, struct win_pend *pd);
struct win_pend *win_pend_find(struct replay *r, int32_t pid);
struct win_pend *win_pend_alloc(struct replay *r, int32_t pid, uint64_t ts);
int win_pend_progress(struct replay *r, struct win_pend *pd, uint64_t ts, bool begin);
int win_pend_close(struct replay *r, struct win_pend *pd, uint64_t ts);
/* The trace saw @pd's flush complete at @ts (its last window unlocked): a forced root one syncs. */
void win_pend_done(struct replay *r, const struct win_pend *pd, uint64_t ts);
/* End run @p's open window at @ts (sim_window_end()), then its deferred flushes. */
int win_end_policy(struct replay *r, unsigned int p, uint64_t ts);
/*
 * Run @p flushes @id at @ts; while its window is open (another flush holds
 * the rstat lock), when that window ends, as the kernel's flush would wait.
 */
int win_flush_run(struct replay *r, unsigned int p, uint64_t ts, uint64_t id);

#endif /* MCR_REPLAY_WINDOW_LOCAL_H */
