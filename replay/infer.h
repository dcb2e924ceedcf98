/* SPDX-License-Identifier: GPL-2.0 */
/*
 * infer.h - hypothesis inference of the order inside kernel lock windows,
 * for replays faithful to the trace.  Private to replay/; the face of replay/infer/.
 *
 * Contract: an infer object owns its own simulator of the validated policy
 * (the "base"), driven by the trace's own lock windows (never by a flush
 * model), and a set of hypotheses, each a visit position in the open window
 * plus a few counters that differ from the base.  The caller feeds it every
 * cgroup add, update, lock/unlock and asks it at each traced
 * memcg_flush_stats whether some hypothesis explains the kernel's value; that
 * prunes the hypotheses.  The hypotheses' walks apply the same step of
 * @pol (struct sim_policy) as the base simulator: any policy the simulator
 * runs, from the table or built by the caller, is inferred with no change
 * here.  All functions return 0 or a negative errno.
 */
#ifndef MCR_REPLAY_INFER_H
#define MCR_REPLAY_INFER_H

#include <stdbool.h>
#include <stdint.h>

#include "event.h"
#include "replay.h"
#include "sim.h"

#define INFER_MAX_HYP_DEFAULT	REPLAY_MAX_HYP_DEFAULT
/*
 * How long after a window's unlock an update's tracepoint may still report a
 * change made inside the window: the walk, the tracepoint's own cost, an
 * interrupt in between.  Measured gaps here were 11-300 ns.  The window
 * stays open that long for an update with nothing traced on its CPU since
 * before the unlock, and closes at the first event that cannot be one (a
 * lock, a flush, any other update): infer_unlock().
 */
#define INFER_LATE_NS		20000

struct infer;

struct infer *infer_create(const struct sim_params *sp, unsigned int max_hyp);
void infer_destroy(struct infer *in);
struct sim *infer_base(struct infer *in);	/* the base simulator, to read */
/* sim_cgroup_add() / sim_cgroup_remove() on the base, a held window opened first */
int infer_cgroup_add(struct infer *in, uint64_t ts, uint64_t id, uint64_t parent_id);
int infer_cgroup_remove(struct infer *in, uint64_t ts, uint64_t id);

/*
 * @t_min: the earliest the change can have been made: the previous event
 * traced on @cpu (0 unknown); the tracepoint fires after the change.
 * @tag: the caller's name for this update, handed back by the order sink.
 */
int infer_update(struct infer *in, uint64_t ts, uint64_t t_min, unsigned int cpu, uint64_t id,
		 enum sim_item_kind kind, int item, int64_t val, uint64_t tag);
/*
 * @dur: the window's length if known (unlock ts - locked ts; for a window
 * whose unlock the trace lacks, up to where window.c ends it), else 0.
 */
int infer_locked(struct infer *in, uint64_t ts, uint64_t id, unsigned int cpu, uint64_t dur);
int infer_unlock(struct infer *in, uint64_t ts);
int infer_flush_all(struct infer *in, uint64_t ts, uint64_t id);	/* a window we cannot split */

/*
 * A traced memcg_flush_stats(@id, @su, @nf): sets *@su_ok / *@nf_ok when some
 * hypothesis agrees, keeps only the ones whose atomic equals @su and folds a
 * lone survivor into the base.  When none agrees, every hypothesis takes @su
 * (the kernel's value is exact) and all are kept.
 */
int infer_check(struct infer *in, uint64_t id, int64_t su, bool nf, bool *su_ok, bool *nf_ok);
uint64_t infer_max_kept(const struct infer *in);
uint64_t infer_capped(const struct infer *in);	/* hypotheses dropped by the cap so far */
uint64_t infer_cap_lowered(const struct infer *in);	/* long saturations: cap halved */
/*
 * Checks where no hypothesis explained the kernel's stats_updates after the
 * cap had dropped some, once synced (infer_set_synced()): the kernel's order
 * may have been among them.
 */
uint64_t infer_missed(const struct infer *in);
/* Those checks, by their number among the infer_check() calls (0: the first), in order. */
size_t infer_miss_at(const struct infer *in, const uint64_t **at);
/*
 * The work done so far: hypothesis walks, and the exact diagrams' map
 * steps.  A measure of cost that does not depend on the machine.
 */
uint64_t infer_work(const struct infer *in);
/* infer_work() at each infer_check() so far, by its number; returns how many. */
size_t infer_work_at(const struct infer *in, const uint64_t **at);
/*
 * A forced flush of the root is requested.  Until it completes, counters may
 * still hold values from before the trace, which it does not show, and no
 * value is compared: exact orders there buy little.  So the exact diagram
 * (infer_set_exact()) opens only from here on, its budget kept for the
 * orders of this flush's lock windows and after; before it the list and
 * its cap alone.
 */
void infer_set_syncing(struct infer *in);
/*
 * Every counter is known from here on: that flush has completed (and
 * infer_set_syncing() holds).  Before it counters may hold values from
 * before the trace, which it does not show, so a value no hypothesis explains
 * says nothing of the cap: no miss (infer_missed()), though every hypothesis
 * still takes the kernel's value.
 */
void infer_set_synced(struct infer *in);
/*
 * How long a saturated cap holds before it is halved, in multiples of the
 * default (1); 0: never halved (a search after a miss, bounded otherwise).
 */
void infer_set_patience(struct infer *in, unsigned int k);
/*
 * The cap from the next update on (0: the default), a lowered one restored:
 * a search widens it only where it may explain what a first pass missed.
 */
void infer_set_max_hyp(struct infer *in, unsigned int max_hyp);

/*
 * The inferred order: for each update that landed in a lock window with
 * visits of its own path still to come, @p is how many of the window's visits
 * (sim_window_peek() order) came before it.  Called once per such update when
 * the choice is final: when one hypothesis is left, when all share it
 * (infer_settle()), else at infer_finish() with the cheapest.  A non-zero
 * return stops the replay with that error.
 */
typedef int (*infer_order_fn)(void *ctx, uint64_t tag, size_t p);
void infer_set_order_sink(struct infer *in, infer_order_fn fn, void *ctx);
/*
 * Between two updates: the decisions every hypothesis shares go to the sink
 * now; @pending(ctx, tag) names each hypothesis's oldest decision still open.
 * For a pass that reads the order while the inference runs (replay/beside.c).
 * Return: how many open decisions it walked (its cost), or -errno.
 */
int infer_settle(struct infer *in, void (*pending)(void *ctx, uint64_t tag), void *ctx);
int infer_finish(struct infer *in, uint64_t ts);	/* closes a window left open, flushes the order */
size_t infer_nr_hyp(const struct infer *in);

/*
 * The trace ahead of the inference, for merging hypotheses exactly: @done()
 * is the number of the trace's events the caller has taken, the last of
 * them the one being fed now (or passed over); @peek makes event @at of the
 * trace available in *@ev (0: its first; @at >= @done() - 1): 1, or 0 past
 * the end or past what it can hold, or a negative error.  Without it
 * hypotheses merge only where they are alike (infer_ahead.c: what it adds).
 */
struct infer_ahead {
	int		(*peek)(void *ctx, uint64_t at, const struct mcr_event **ev);
	uint64_t	(*done)(void *ctx);
	void		*ctx;
};
void infer_set_ahead(struct infer *in, const struct infer_ahead *a);
uint64_t infer_inert_keys(const struct infer *in);	/* counters found inert and set back */

/*
 * Exact mode, off by default: without an order sink, the orders of a window
 * that would pass the cap are also held as a decision diagram beside the
 * list, with no cap, and the traced values are checked against it; when a
 * close or read leaves no more than the cap, they are the list again.  A
 * diagram that costs more than its budget of steps per update is given up
 * and the list goes on alone (its drops then count in infer_capped()).
 * @budget: 0 off; else the diagrams' budget and limits times @budget
 * (INFER_EXACT_BUDGET_MAX at most; 1 the default).
 */
#define INFER_EXACT_BUDGET_MAX	REPLAY_EXACT_BUDGET_MAX
void infer_set_exact(struct infer *in, unsigned int budget);
/*
 * A wider search's stretch (@budget > 0): the budget's scale @budget from
 * here, as though from the start; 0: back to infer_set_exact()'s, and the
 * steps spent meanwhile no longer count against it.
 */
void infer_set_exact_wide(struct infer *in, unsigned int budget);
uint64_t infer_exact_max(const struct infer *in);	/* the most orders a diagram held */
uint64_t infer_exact_given_up(const struct infer *in);	/* diagrams given up, past their budget */

#endif
