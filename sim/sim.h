/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sim.h - a pure model of the kernel's memcg rstat update and flush logic.
 *
 * Contract: sim/ owns the simulated hierarchy, the per-CPU and atomic
 * stats_updates counters, the per-CPU "updated" trees, the walk policies and
 * the staleness and cost accounting.  It does no I/O, keeps no global state,
 * never prints and never exits; every function returns 0 (or a count) on
 * success and a negative errno on failure.  Time is whatever the caller passes
 * (ns); the simulator only uses differences.  Mirrors mm/memcontrol.c
 * (memcg_rstat_updated, __mem_cgroup_flush_stats, mem_cgroup_css_rstat_flush)
 * and kernel/cgroup/rstat.c (css_rstat_updated, css_rstat_updated_list,
 * css_rstat_flush) of Linux 6.15-6.18.
 */
#ifndef MCR_SIM_H
#define MCR_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"

#define SIM_CHARGE_BATCH	64U	/* MEMCG_CHARGE_BATCH */
#define SIM_ROOT_ID		1ULL	/* cgroup_id() of the root cgroup */

struct sim;
struct sim_node;
struct sim_pcpu;

/* What the ancestor walk does at one node; returned by a policy's step. */
enum sim_walk {
	SIM_WALK_NEXT,		/* go on to the parent */
	SIM_WALK_STOP,		/* stop walking */
};

/*
 * One node of memcg_rstat_updated()'s ancestor walk, as a pure function of
 * the node's counters: the simulator (sim/update.c) and the replay's
 * inference (replay/infer_walk.c) both apply a policy's step through this
 * table, so a policy is written once and both see the same one.
 */
struct sim_step_in {
	int64_t		atomic;		/* memcg_vmstats.stats_updates */
	uint64_t	th;		/* MEMCG_CHARGE_BATCH * num_online_cpus() */
	uint32_t	pcpu;		/* memcg_vmstats_percpu.stats_updates of this CPU */
	uint32_t	abs_val;	/* abs(val) of memcg_rstat_updated(), never 0 */
};

/* 16 bytes: returned in two registers on x86-64 and arm64, the walks' hot path */
struct sim_step_out {
	uint32_t	pcpu;		/* the per-CPU counter after the step */
	uint32_t	add;		/* moved into the atomic; 0 if none */
	uint32_t	drop;		/* a batch taken from the per-CPU counter and lost */
	bool		charged;	/* this_cpu_add_return() ran (a cost count) */
	uint8_t		walk;		/* enum sim_walk */
};

/*
 * A walk policy: how memcg_rstat_updated() treats one node of the ancestor
 * walk.  @step is applied to m, parent(m), ..., root, each time to the
 * counters as the previous steps left them, until it says SIM_WALK_STOP.
 * Adding a policy is adding one function and one entry to the table in
 * sim/policy.c (or building a struct sim_policy and passing it to
 * sim_create(): the table is only the names the CLI knows).
 */
struct sim_policy {
	const char	*name;		/* "break", "continue", "legacy" */
	const char	*kernels;	/* kernels that run it, e.g. "6.16+" */
	const char	*summary;	/* one line for --help */
	struct sim_step_out (*step)(const struct sim_step_in *in);
};

const struct sim_policy *sim_policy_find(const char *name);	/* NULL if unknown */
const struct sim_policy *sim_policy_at(size_t i);		/* NULL past the end */

/* Building blocks of steps.  memcg_vmstats_needs_flush(): strictly above TH. */
static inline bool sim_step_flushable(const struct sim_step_in *in)
{
	return in->atomic > (int64_t)in->th;
}

/* The node is left alone; the walk goes on or stops. */
static inline struct sim_step_out sim_step_skip(const struct sim_step_in *in, enum sim_walk walk)
{
	return (struct sim_step_out){ .pcpu = in->pcpu, .walk = walk };
}

/*
 * this_cpu_add_return(statc->stats_updates, val); when that reaches
 * MEMCG_CHARGE_BATCH, this_cpu_xchg(statc->stats_updates, 0) and the batch
 * goes to the atomic.  The walk goes on.
 */
static inline struct sim_step_out sim_step_charge(const struct sim_step_in *in)
{
	struct sim_step_out out = { .pcpu = in->pcpu + in->abs_val, .charged = true,
				    .walk = SIM_WALK_NEXT };

	if (out.pcpu >= SIM_CHARGE_BATCH) {
		out.add = out.pcpu;
		out.pcpu = 0;
	}
	return out;
}

/* |val| as memcg_rstat_updated(memcg, int val) sees it; 0: no walk, no tree link. */
static inline uint32_t sim_walk_abs(int64_t val)
{
	int32_t v = mcr_walk_val(val);

	return v < 0 ? -(uint32_t)v : (uint32_t)v;
}

/* Which kind of traced update: the item namespaces differ. */
enum sim_item_kind {
	SIM_ITEM_STATE,		/* mod_memcg_state: node_stat_item / memcg_stat_item */
	SIM_ITEM_LRUVEC,	/* mod_memcg_lruvec_state: node_stat_item */
	SIM_ITEM_EVENT,		/* count_memcg_events: vm_event_item */
};

struct sim *sim_create(const struct sim_policy *policy, unsigned int nr_possible,
		       unsigned int nr_online);
void sim_destroy(struct sim *s);
const struct sim_policy *sim_policy(const struct sim *s);

/* CPU hotplug: TH = 64 * nr_online is re-read on every check, as the kernel does. */
int sim_set_online(struct sim *s, uint64_t ts, unsigned int nr_online);
uint64_t sim_threshold(const struct sim *s);

/*
 * Hierarchy.  The root (SIM_ROOT_ID) exists from sim_create().  A cgroup whose
 * parent is unknown attaches under the root.  An update naming an unknown id
 * attaches it under the root and counts it in sim_cost.unknown_ids.
 * Removing (rmdir) keeps the node: dying memcgs are still charged and updated.
 * Adding an id that exists re-parents nothing and returns -EEXIST.
 */
int sim_cgroup_add(struct sim *s, uint64_t ts, uint64_t id, uint64_t parent_id);
int sim_cgroup_remove(struct sim *s, uint64_t ts, uint64_t id);
bool sim_cgroup_known(const struct sim *s, uint64_t id);
uint64_t sim_cgroup_parent(const struct sim *s, uint64_t id);	/* 0 for root/unknown */

/*
 * One traced mod_memcg_state / mod_memcg_lruvec_state / count_memcg_events on
 * ring-buffer CPU @cpu.  @val is the traced value, already in pages; for
 * SIM_ITEM_EVENT it is the unsigned long count and the walk sees (int)val.
 * val == 0 is a no-op, as in the kernel.
 */
int sim_update(struct sim *s, uint64_t ts, unsigned int cpu, uint64_t id,
	       enum sim_item_kind kind, int item, int64_t val);

/* The flushable test (atomic > TH) and the atomic itself, as traced by memcg_flush_stats. */
bool sim_needs_flush(const struct sim *s, uint64_t id);
int64_t sim_stats_updates(const struct sim *s, uint64_t id);

/*
 * __mem_cgroup_flush_stats(): decides with the simulated counters.  Returns 1
 * if the flush goes ahead (force or needs_flush; it is counted as a flush),
 * 0 if it is skipped.  It does not visit anything: follow with sim_flush()
 * for an instant flush, or drive the per-CPU windows below.
 */
int sim_flush_request(struct sim *s, uint64_t ts, uint64_t id, bool force);

/* A whole flush of subtree(@id) at one instant: every possible CPU, children first. */
int sim_flush(struct sim *s, uint64_t ts, uint64_t id);

/*
 * Step by step, as css_rstat_flush() does it, so updates from other CPUs can
 * interleave.  At most one window is open at a time (the rstat lock is global
 * per subsystem).  sim_window_begin() detaches subtree(@id) from CPU @cpu's
 * updated tree and fixes the visit list (children before parents, reverse BFS);
 * updates during the window re-link nodes for a later flush, as in 6.17+.
 *   sim_window_visit_next(): visits the next node of the list; returns 1 and
 *        sets *@id_out, or 0 when the list is empty.
 *   sim_window_visit(): visits @id now (an explicit visit event); -ENOENT if @id
 *        is not (any more) on the list.
 *   sim_window_end(): visits what is left, in order, and closes the window.
 *   sim_window_remaining(): visits left; sim_window_peek(i): the i-th id left.
 */
int sim_window_begin(struct sim *s, uint64_t ts, uint64_t id, unsigned int cpu);
int sim_window_visit_next(struct sim *s, uint64_t ts, uint64_t *id_out);
int sim_window_visit(struct sim *s, uint64_t ts, uint64_t id);
int sim_window_end(struct sim *s, uint64_t ts);
bool sim_window_open(const struct sim *s);
size_t sim_window_remaining(const struct sim *s);
uint64_t sim_window_peek(const struct sim *s, size_t i);

/*
 * Staleness of one memcg M now: what a reader of M's memory.stat is missing,
 * i.e. what mem_cgroup_css_rstat_flush() has not yet aggregated into M's
 * vmstats->state.  O(1): no subtree walk.
 */
struct sim_stale {
	uint64_t	missing;	/* pages: sum of |v| in subtree(M) not yet aggregated into M */
	uint64_t	oldest_ts;	/* ts of the oldest update counted in missing (0 if none) */
	int64_t		stats_updates;	/* atomic[M] */
	bool		flushable;	/* atomic[M] > TH */
	bool		stuck;		/* !flushable, missing > 0, and some descendant flushable */
};
int sim_stale_get(const struct sim *s, uint64_t id, struct sim_stale *out);

/* Signed missing pages of one item of M (page-unit items are exact). */
int sim_item_missing(const struct sim *s, uint64_t id, enum sim_item_kind kind, int item,
		     int64_t *out);
/* Calls @fn for each item of M with non-zero signed missing; stops on non-zero return. */
int sim_items_foreach(const struct sim *s, uint64_t id,
		      int (*fn)(enum sim_item_kind kind, int item, int64_t missing, void *ctx),
		      void *ctx);

/*
 * Time accounting per memcg since sim_create(), integrated at every change up to
 * @now: time-weighted missing (page*ns), stuck time, worst values seen.
 */
struct sim_acct {
	uint64_t	max_missing;
	uint64_t	max_age_ns;	/* largest now - oldest_ts seen */
	uint64_t	stuck_ns;
	double		missing_area;	/* integral of missing over time, page*ns */
	uint64_t	first_ts;	/* when the memcg became known */
};
int sim_acct_get(struct sim *s, uint64_t id, uint64_t now, struct sim_acct *out);

/*
 * Single counters, for callers that keep candidate states over one simulator
 * and fold one back (replay's hypothesis inference).  The setters change the
 * counter only (and the flushable state that follows from an atomic).
 */
uint32_t sim_pcpu_stats_updates(const struct sim *s, uint64_t id, unsigned int cpu);
int sim_pcpu_set(struct sim *s, uint64_t id, unsigned int cpu, uint32_t v);
int sim_stats_updates_set(struct sim *s, uint64_t id, int64_t v);

/* Cost counters: what the policy makes the kernel do. */
struct sim_cost {
	uint64_t	updates;	/* sim_update calls with val != 0 */
	uint64_t	walk_steps;	/* nodes the ancestor walk looked at */
	uint64_t	pcpu_adds;	/* per-CPU counter additions */
	uint64_t	atomic_adds;	/* batches moved into an atomic */
	uint64_t	dropped_batches;/* LEGACY: batches thrown away at a flushable node */
	uint64_t	flush_requests;
	uint64_t	flushes;	/* requests that went ahead */
	uint64_t	visits;		/* (memcg, cpu) visits */
	uint64_t	atomic_resets;	/* visits that stored 0 into a non-zero atomic */
	uint64_t	unknown_ids;	/* ids first seen in an update, attached under root */
};
void sim_cost_get(const struct sim *s, struct sim_cost *out);

/* Iteration over known memcgs, in creation order; the id of the i-th or 0 past the end. */
size_t sim_cgroup_count(const struct sim *s);
uint64_t sim_cgroup_at(const struct sim *s, size_t i);
int sim_cgroup_level(const struct sim *s, uint64_t id);	/* root = 0 */

#endif
