/* SPDX-License-Identifier: GPL-2.0 */
/*
 * infer.h - hypothesis inference of the order inside kernel lock windows
 * (issue 5, "fidelity").  Private to replay/.
 *
 * Contract: an infer object owns its own simulator of the validated policy
 * (the "base"), driven by the trace's own lock windows (never by a flush
 * model), and a set of hypotheses, each a visit position in the open window
 * plus a few counters that differ from the base.  The caller feeds it every
 * cgroup add, update, lock/unlock and asks it at each traced
 * memcg_flush_stats whether some hypothesis explains the kernel's value; that
 * prunes the hypotheses.  All functions return 0 or a negative errno.
 */
#ifndef MCR_REPLAY_INFER_H
#define MCR_REPLAY_INFER_H

#include <stdbool.h>
#include <stdint.h>

#include "sim.h"

#define INFER_MAX_HYP_DEFAULT	64

struct infer;

struct infer *infer_create(const struct sim_policy *pol, unsigned int nr_possible,
			   unsigned int nr_online, unsigned int max_hyp);
void infer_destroy(struct infer *in);
struct sim *infer_base(struct infer *in);	/* for cgroup adds/removes */

int infer_update(struct infer *in, uint64_t ts, unsigned int cpu, uint64_t id,
		 enum sim_item_kind kind, int item, int64_t val);
/* @dur: the window's length if known (unlock ts - locked ts), else 0. */
int infer_locked(struct infer *in, uint64_t ts, uint64_t id, unsigned int cpu, uint64_t dur);
int infer_unlock(struct infer *in, uint64_t ts);
int infer_flush_all(struct infer *in, uint64_t ts, uint64_t id);	/* a window we cannot split */

/*
 * A traced memcg_flush_stats(@id, @su, @nf): sets *@su_ok / *@nf_ok when some
 * hypothesis agrees, keeps only the ones whose atomic equals @su (all of them
 * when none does) and folds a lone survivor into the base.
 */
int infer_check(struct infer *in, uint64_t id, int64_t su, bool nf, bool *su_ok, bool *nf_ok);
uint64_t infer_max_kept(const struct infer *in);
size_t infer_nr_hyp(const struct infer *in);

#endif
