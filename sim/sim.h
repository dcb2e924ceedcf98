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
 * A walk policy: how memcg_rstat_updated() treats one node of the ancestor
 * walk.  @step is called for m, parent(m), ..., root with the magnitude of the
 * update; it may add to the per-CPU counter and move a batch into the atomic
 * using sim_pcpu_add() and sim_atomic_add().  Adding a policy is adding one
 * function and one entry to the table in sim/policy.c.
 */
struct sim_policy {
	const char	*name;		/* "break", "continue", "legacy" */
	const char	*kernels;	/* kernels that run it, e.g. "6.16+" */
	const char	*summary;	/* one line for --help */
	enum sim_walk	(*step)(struct sim *s, struct sim_node *n, unsigned int cpu, uint32_t abs_val);
};

const struct sim_policy *sim_policy_find(const char *name);	/* NULL if unknown */
const struct sim_policy *sim_policy_at(size_t i);		/* NULL past the end */

/* For policy steps only. */
bool sim_node_flushable(const struct sim *s, const struct sim_node *n);
uint32_t sim_pcpu_add(struct sim *s, struct sim_node *n, unsigned int cpu, uint32_t v);	/* returns new value */
uint32_t sim_pcpu_take(struct sim *s, struct sim_node *n, unsigned int cpu);		/* xchg(0) */
void sim_atomic_add(struct sim *s, struct sim_node *n, uint32_t v);

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
