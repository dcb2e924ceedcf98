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

#define SIM_CHARGE_BATCH	64U	/* MEMCG_CHARGE_BATCH of 6.8-6.18: the default batch */
#define SIM_ROOT_ID		1ULL	/* cgroup_id() of the root cgroup */

struct sim;
struct sim_node;
struct sim_pcpu;

/*
 * A prepared update (sim_update_prepare()): where the update of one (cpu,
 * id, kind, item) lands, as indices the simulator never moves or reuses
 * (slots and lines are never freed, a line keeps its index).  Small enough
 * to pass in two registers.
 */
struct sim_prep {
	int32_t			slot;	/* the (memcg, cpu) slot; negative: not resolved */
	int32_t			line;	/* the line's index */
	uint32_t		kind;	/* enum sim_item_kind */
};

/* What the ancestor walk does at one node; returned by a policy's step. */
enum sim_walk {
	SIM_WALK_NEXT,		/* go on to the parent */
	SIM_WALK_STOP,		/* stop walking */
};

/*
 * One node of memcg_rstat_updated()'s ancestor walk, as a pure function of
 * the node's counters: the simulator (sim/update.c) and the replay's
 * inference (replay/infer/infer_walk.c) both apply a policy's step through this
 * table, so a policy is written once and both see the same one.
 */
struct sim_step_in {
	int64_t		atomic;		/* memcg_vmstats.stats_updates */
	uint64_t	th;		/* MEMCG_CHARGE_BATCH * num_online_cpus() */
	uint32_t	pcpu;		/* memcg_vmstats_percpu.stats_updates of this CPU */
	uint32_t	abs_val;	/* abs(val) of memcg_rstat_updated(), never 0 */
	uint32_t	batch;		/* MEMCG_CHARGE_BATCH: the per-CPU counter's flush point */
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
 * Which kind of traced update.  A line of memory.stat is (namespace, idx):
 * enum memcg_stat_item starts at NR_VM_NODE_STAT_ITEMS
 * (include/linux/memcontrol.h), so mod_memcg_state's idx and
 * mod_memcg_lruvec_state's node_stat_item idx number one namespace, and both
 * land in the same memcg->vmstats->state[] entry that memory.stat prints
 * (memcg_page_state_output()).  STATE and LRUVEC updates of one idx are
 * therefore ONE line, in pages; every per-item query below treats LRUVEC as
 * STATE and reports the line as SIM_ITEM_STATE.  EVENT lines are a different
 * namespace (vm_event_item, memcg->vmstats->events[]) and count events.
 */
enum sim_item_kind {
	SIM_ITEM_STATE,		/* mod_memcg_state: node_stat_item / memcg_stat_item */
	SIM_ITEM_LRUVEC,	/* mod_memcg_lruvec_state: node_stat_item */
	SIM_ITEM_EVENT,		/* count_memcg_events: vm_event_item */
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
	/*
	 * Optional, the simulator's own: its whole update path (sim_update())
	 * with @step inlined in the walk (sim/update.c), for the table's
	 * policies; NULL (a policy built elsewhere): the walk calls @step
	 * through the pointer.  Either way the same steps in the same order.
	 */
	int (*update)(struct sim *s, uint64_t ts, unsigned int cpu, uint64_t id,
		      enum sim_item_kind kind, int item, int64_t val);
	/* Optional with @update: sim_update_apply(), @step inlined; NULL: through @step */
	int (*apply)(struct sim *s, struct sim_prep h, uint64_t ts, int64_t val);
	/* Optional with @update and @apply: theirs once the simulator watches a memcg (sim_watch()) */
	int (*update_watched)(struct sim *s, uint64_t ts, unsigned int cpu, uint64_t id,
			      enum sim_item_kind kind, int item, int64_t val);
	int (*apply_watched)(struct sim *s, struct sim_prep h, uint64_t ts, int64_t val);
};

const struct sim_policy *sim_policy_find(const char *name);	/* NULL if unknown */
const struct sim_policy *sim_policy_at(size_t i);		/* NULL past the end */
int sim_policy_rank(const char *name);			/* table order; unknown last */

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
 * MEMCG_CHARGE_BATCH (@in->batch), this_cpu_xchg(statc->stats_updates, 0)
 * and the batch goes to the atomic.  The walk goes on.
 */
static inline struct sim_step_out sim_step_charge(const struct sim_step_in *in)
{
	struct sim_step_out out = { .pcpu = in->pcpu + in->abs_val, .charged = true,
				    .walk = SIM_WALK_NEXT };

	if (out.pcpu >= in->batch) {
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

/* The unit a line's values are in: never add one to the other. */
enum sim_unit {
	SIM_UNIT_PAGES,		/* STATE and LRUVEC lines (the trace's val is in pages) */
	SIM_UNIT_EVENTS,	/* EVENT lines: counts */
};

enum sim_unit sim_item_unit(enum sim_item_kind kind);

/*
 * The simulated machine.  MEMCG_CHARGE_BATCH is a parameter so that one trace
 * can be replayed at other batches than its kernel's: it is both the point at
 * which memcg_rstat_updated() moves a per-CPU counter into the atomic and the
 * factor of TH in memcg_vmstats_needs_flush(), and so of the stranded limit.
 */
struct sim_params {
	const struct sim_policy	*policy;	/* the walk policy (sim_policy_find()) */
	unsigned int		nr_possible;	/* CPUs the flush walks (for_each_possible_cpu) */
	unsigned int		nr_online;	/* CPUs counted in TH, 1..nr_possible */
	unsigned int		batch;		/* MEMCG_CHARGE_BATCH, >= 1 (SIM_CHARGE_BATCH) */
	/*
	 * The kernel's counters alone: stats_updates (atomic and per-CPU),
	 * flushable, the updated trees and the windows' visits, as without
	 * it; no staleness accounting (what each memcg misses, its lines,
	 * lag and episodes), whose queries then say 0.  For a caller that
	 * reads only the counters (order inference).
	 */
	bool			counters_only;
};

struct sim *sim_create(const struct sim_params *sp);
void sim_destroy(struct sim *s);
const struct sim_policy *sim_policy(const struct sim *s);

/* CPU hotplug: TH = batch * nr_online is re-read on every check, as the kernel does. */
int sim_set_online(struct sim *s, uint64_t ts, unsigned int nr_online);
uint64_t sim_threshold(const struct sim *s);
unsigned int sim_batch(const struct sim *s);	/* MEMCG_CHARGE_BATCH of this sim */

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

/*
 * The update in two phases, for a caller that knows the next event while it
 * applies the one before: sim_update_prepare() looks the next update up,
 * asks for what it touches first (so that those misses overlap the work on
 * the update before) and keeps the lookups in a handle; sim_update_apply()
 * is then sim_update() of that update without them.
 *
 * Contract.  A handle is for the simulator that prepared it and the same
 * (cpu, id, kind, item); ts and val come with the apply.  It holds the
 * lookups' answers and nothing else (not the memcgs' flushable, calm or
 * stranded state, nor any count), and a resolved answer never goes stale:
 * slots and lines are never freed or moved by index.  So whatever runs
 * between prepare and apply (updates, cgroups added or removed, flushes,
 * windows, sim_set_online()) the apply does what sim_update() would.  What
 * was not known at prepare (a memcg, a (memcg, cpu) slot or a line not
 * seen yet; or an id or item past the direct tables) is not resolved:
 * sim_prep_ok() is false, and the caller calls sim_update(), which looks up
 * again and creates what is missing, even if another call created it
 * between the two.  sim_update_apply() of an unresolved handle is -EINVAL.
 */
struct sim_prep sim_update_prepare(const struct sim *s, unsigned int cpu, uint64_t id,
				   enum sim_item_kind kind, int item);
int sim_update_apply(struct sim *s, struct sim_prep h, uint64_t ts, int64_t val);

static inline bool sim_prep_ok(struct sim_prep h)
{
	return h.slot >= 0;
}

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
/* @id on the open window's list: 1 still to visit, 0 visited, -ENOENT not on it (or no window). */
int sim_window_state(const struct sim *s, uint64_t id);

/*
 * A flush in progress, for the visible error's split (below): from the
 * request a flush goes ahead at to the end of its last CPU's window, as its
 * caller knows them (the windows of one flush are separate lock sections, and
 * updates run between them).  Begin and end pair; flushes may overlap.  An
 * open window counts as a flush in progress too, paired or not.
 * sim_flush_progress_end() without a begin is -EINVAL.
 */
int sim_flush_progress_begin(struct sim *s, uint64_t ts);
int sim_flush_progress_end(struct sim *s, uint64_t ts);

/*
 * Staleness of one memcg M now: the pending volume (missing), in
 * stats_updates units, not memory; the reader's view is below
 * (sim_item_error() and friends).  O(1): no subtree walk.
 */
struct sim_stale {
	uint64_t	missing;	/* pending volume: sum of |v| in subtree(M) not yet
					 * aggregated into M, stats_updates units (not pages) */
	uint64_t	oldest_ts;	/* ts of the oldest update counted in missing (0 if none) */
	int64_t		stats_updates;	/* atomic[M] */
	bool		flushable;	/* atomic[M] > TH */
	bool		stuck;		/* !flushable, missing > 0, and some descendant flushable */
	bool		stranded;	/* see "Staleness as a reader of memory.stat sees it" */
};
int sim_stale_get(const struct sim *s, uint64_t id, struct sim_stale *out);

/* Signed missing value of one line of M (truth - shown = -error), in the line's unit. */
int sim_item_missing(const struct sim *s, uint64_t id, enum sim_item_kind kind, int item,
		     int64_t *out);
/*
 * Calls @fn for each line of M with non-zero signed missing (STATE for merged
 * lines); stops on non-zero return.
 */
int sim_items_foreach(const struct sim *s, uint64_t id,
		      int (*fn)(enum sim_item_kind kind, int item, int64_t missing, void *ctx),
		      void *ctx);

/*
 * Time accounting per memcg since sim_create(), integrated at every change up to
 * @now: time-weighted pending volume (stats_updates units * ns), stuck time,
 * worst values seen.
 */
struct sim_acct {
	uint64_t	max_missing;
	uint64_t	max_age_ns;	/* largest now - oldest_ts seen */
	uint64_t	stuck_ns;
	double		missing_area;	/* integral of missing over time, units * ns */
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

/*
 * Staleness as a reader of memory.stat sees it.  Per policy (one sim), memcg
 * M and line I, at time t:
 *   truth(M,I)  = sum of every delta to I in subtree(M) so far;
 *   shown(M,I)  = M's flushed aggregate (memcg->vmstats->state[I] / events[I]);
 *   error(M,I)  = shown - truth, signed, in the line's unit (sim_item_unit()):
 *                 negative while the stat lags growth.  Deltas that cancel
 *                 (a fault and its free) cancel here.
 *   pending(M)  = sum of |v| of updates in subtree(M) not yet aggregated into
 *                 M, in stats_updates units (the currency the kernel's
 *                 counters bound; NOT memory: never print it as bytes).  A
 *                 fault and its free add 2.  (= sim_stale.missing)
 *   visible(M,I)= 0 while M is flushable (a reader would flush first), else
 *                 error(M,I): what a reader arriving at t would get.  A state
 *                 that lasts zero time (the visits of an instant flush, an
 *                 update and the batch it completes) is not visible: max and
 *                 integral are taken over states held for a positive time.
 *   settled / in flush: a visible state held while no flush was in
 *                 progress (no window open, no flush between
 *                 sim_flush_progress_begin() and _end()) is settled; one held
 *                 while a flush was in progress is an in-flush transient: a
 *                 flush resets M's atomic at its first visit of M, so M stops
 *                 being flushable while the CPUs the flush has not reached yet
 *                 still hold M's deltas.  The settled maximum is what a reader
 *                 meets outside flushes and what tells the policies apart;
 *                 the in-flush one is kept apart (its size is the flush's).
 *   pending since flush(M) = the part of pending(M) from updates after M's
 *                 last flush (its last visit on any CPU), counted as the walk
 *                 sees them (|(int)v|).  What was pending at that visit is
 *                 being collected by the same flush's visits on other CPUs or
 *                 raced with it; either way no walk policy could have
 *                 credited it to M since.
 *   stranded(M) = !flushable(M) && pending since flush(M) >
 *                 sim_stranded_threshold() = TH + (batch - 1) *
 *                 nr_online.  M not flushable means its atomic (<= TH) was
 *                 not reset since that flush, so every update since then that
 *                 a walk credited to M sits in the atomic or in a per-CPU
 *                 remainder (<= batch - 1 per online CPU): only updates a walk did
 *                 not credit (it stopped early) exceed the bound.  Under
 *                 continue and legacy a memcg is never stranded (short of
 *                 CPU hotplug lowering TH, or updates on CPUs not counted
 *                 online); per-CPU remainders alone, and a flush in
 *                 progress, never strand it.
 *   read error  = at a traced read of M, error(M,I) after that read's flush
 *                 decision: at the read for a skipped read, once the flush's
 *                 visits of M are done for a read that flushed.
 *   stale read  = a read skipped while M was stranded.
 *   age         = ts - the oldest update in subtree(M) not yet aggregated into
 *                 M, any line (decision: per memcg, because per-line ages
 *                 would cost a children scan per line at every visit).  Each
 *                 line records the largest age seen at the reads where that
 *                 line's read error was non-zero.
 * Everything is O(1) per memcg per update (the update path stays O(depth));
 * time integrals are brought up to date lazily.
 */

/* The stranded threshold: TH + (batch - 1) * nr_online, stats_updates units. */
uint64_t sim_stranded_threshold(const struct sim *s);

/*
 * Handles (handle.c) for a caller that reads the same (memcg, line) often:
 * the node of @id and the line of (@kind, @item), negative while unknown,
 * stable once known; then the flushable flag and sim_item_error() without
 * a lookup.  The *_at() calls take a known node and any line handle.
 */
int32_t sim_node_handle(const struct sim *s, uint64_t id);
int32_t sim_line_handle(const struct sim *s, enum sim_item_kind kind, int item);
/*
 * Watched memcgs (watch.c): from sim_watch() on, each update that changes a
 * line of @id while it is not flushable widens the range of the line's
 * visible error (sim_line_error_at(), 0 for every line if the update makes
 * it flushable), and so does each event that visits it, for every line
 * (sim_watch_visited()); sim_range_take() returns a line's range since it
 * was last taken (false: none seen) and starts it again empty.  CPU
 * hotplug changes visible errors too: a caller looks at that itself.
 */
int sim_watch(struct sim *s, uint64_t id);
bool sim_range_take(struct sim *s, int32_t node, int32_t line, int64_t *lo, int64_t *hi);
/*
 * After an event: the watched memcgs it visited see every line's visible
 * error (0 for all where flushable); empties the list sim_visited_drain()
 * reads.  Return: 0, -ENOMEM.
 */
int sim_watch_visited(struct sim *s);
bool sim_node_flushable_at(const struct sim *s, int32_t node);
int64_t sim_line_error_at(const struct sim *s, int32_t node, int32_t line);
/*
 * A known node's parent (negative at the root), level (root = 0: a path of
 * level + 1 nodes) and counters: a path walked without lookups.
 */
int32_t sim_node_parent_at(const struct sim *s, int32_t node);
uint32_t sim_node_level_at(const struct sim *s, int32_t node);
int64_t sim_stats_updates_at(const struct sim *s, int32_t node);
uint32_t sim_pcpu_stats_updates_at(const struct sim *s, int32_t node, unsigned int cpu);
/* (node, cpu) is linked on @cpu's updated tree: the next flush above it on @cpu visits it */
bool sim_pcpu_on_tree_at(const struct sim *s, int32_t node, unsigned int cpu);

/* A known node's path to the root in one call: each node with its counters on a CPU. */
struct sim_path_node {
	int32_t		node;
	uint32_t	pcpu;		/* sim_pcpu_stats_updates_at(node, cpu) */
	uint64_t	id;
	int64_t		stats_updates;	/* the atomic */
};

/*
 * From @node up to the root, at most @max nodes into @out; returns how many,
 * *@more set if the root was not reached.
 */
size_t sim_node_path_at(const struct sim *s, int32_t node, unsigned int cpu,
			struct sim_path_node *out, size_t max, bool *more);

/* error(@id, line of (@kind, @item)) now; 0 for a line never updated in the subtree. */
int sim_item_error(const struct sim *s, uint64_t id, enum sim_item_kind kind, int item,
		   int64_t *out);

/* Per (memcg, line), since the memcg became known, up to @now. */
struct sim_item_stats {
	int64_t		error;		/* error now, signed, line's unit */
	uint64_t	max_visible;	/* max |visible error| held for a positive time */
	uint64_t	max_visible_settled; /* of states held while no flush was in progress */
	uint64_t	max_visible_flush; /* of states held while one was (in-flush transients) */
	double		visible_area;	/* integral of |visible error| dt, unit * ns */
	uint64_t	max_read_error;	/* max |read error| over the ended reads of M */
	double		read_error_sum;	/* sum of |read error| over them (mean: / reads_ended) */
	uint64_t	reads_wrong;	/* ended reads whose read error on this line was != 0 */
	uint64_t	max_error_age_ns; /* max age (see above) at those reads */
};
int sim_item_stats_get(const struct sim *s, uint64_t id, enum sim_item_kind kind, int item,
		       uint64_t now, struct sim_item_stats *out);
/*
 * @fn for each line ever updated anywhere under the sim (first-seen order)
 * whose stats at @id are not all zero; STATE for merged lines.  A non-zero
 * return stops the loop and is returned.
 */
int sim_item_stats_foreach(const struct sim *s, uint64_t id, uint64_t now,
			   int (*fn)(enum sim_item_kind kind, int item,
				     const struct sim_item_stats *st, void *ctx),
			   void *ctx);

/* Per memcg, since it became known, up to @now. */
struct sim_cgroup_stats {
	uint64_t	pending;	/* pending volume now, stats_updates units */
	uint64_t	pending_since_flush; /* of it, since M's last flush (see above) */
	uint64_t	max_pending;	/* its maximum */
	uint64_t	oldest_ts;	/* oldest update not yet aggregated into M, 0 if none */
	uint64_t	first_ts;	/* when M became known: mean = area / (now - first_ts) */
	uint64_t	stranded_ns;	/* time stranded */
	uint64_t	stranded_since;	/* start of the open episode while stranded, else 0 */
	uint64_t	episodes;	/* stranded episodes that count (see struct sim_episode) */
	uint64_t	episodes_noticeable; /* of them, noticeable (see struct sim_episode) */
	uint64_t	reads;		/* sim_read_begin() calls */
	uint64_t	stale_reads;	/* of which skipped while stranded */
	uint64_t	reads_ended;	/* sim_read_end() calls: reads whose result was taken */
	uint64_t	max_read_age_ns;/* max age at sim_read_end() */
	bool		flushable;
	bool		stranded;
};
int sim_cgroup_stats_get(const struct sim *s, uint64_t id, uint64_t now,
			 struct sim_cgroup_stats *out);

/*
 * Reads.  For each traced non-forced memcg_flush_stats of M, after
 * go = sim_flush_request():
 *   sim_read_begin(s, ts, M, go, &info)  counts the read; info says whether M
 *        was stranded and the read stale (= !go && stranded);
 *   sim_read_end(s, t, M, fn, ctx, &info) fixes what the reader got: every
 *        line of M whose error is non-zero at that moment goes to @fn (and
 *        into the line's read stats).  Call it at t = ts right away for a
 *        skipped read; for a read that flushed, once the flush's visits of M
 *        are done (right after sim_flush(); after the last CPU's window that
 *        visits M when windows are driven one by one).
 * begin and end carry no handle: overlapping reads of one memcg are fine.
 */
struct sim_read_info {
	uint64_t	pending;	/* pending volume of M, stats_updates units */
	uint64_t	pending_since_flush; /* of it, since M's last flush */
	uint64_t	age_ns;		/* ts - oldest update M misses, 0 if none */
	bool		flushable;
	bool		stranded;
	bool		stale;		/* begin: skipped while stranded; end: as begin said */
};
int sim_read_begin(struct sim *s, uint64_t ts, uint64_t id, bool flushed,
		   struct sim_read_info *out);
/* Return: the number of lines passed to @fn (wrong lines), or -errno / what @fn returned. */
int sim_read_end(struct sim *s, uint64_t ts, uint64_t id,
		 int (*fn)(enum sim_item_kind kind, int item, int64_t error, uint64_t age_ns,
			   void *ctx),
		 void *ctx, struct sim_read_info *out);

/*
 * Stranded episodes: from the moment M becomes stranded to the moment it is
 * not.  One that lasted no time and skipped no read does not count (an
 * update strands M for the instant before its own walk makes M flushable).  The worst line is the page line with
 * the largest |error| during the episode (M is not flushable, so error =
 * visible error); an event line only when no page line was wrong.
 */
struct sim_episode {
	uint64_t		id;		/* the memcg */
	uint64_t		start;
	uint64_t		end;
	uint64_t		reads_skipped;	/* reads of M skipped during it (stale reads) */
	uint64_t		max_pending;	/* largest pending volume during it */
	int64_t			worst_error;	/* signed error of the worst line at its worst */
	int			worst_item;	/* -1 if no line was wrong */
	enum sim_item_kind	worst_kind;	/* SIM_ITEM_STATE or SIM_ITEM_EVENT */
	bool			open;		/* still stranded at end (sim_episodes_close()) */
	bool			noticeable;	/* see SIM_EPISODE_NOTICE_NS */
};

/*
 * A stranded episode a reader could have noticed: it skipped a read (a stale
 * read), or it lasted at least this long (1 ms).  One shorter with no read
 * inside is a blip between an update and the walk or flush that settles it:
 * no reader met it, and no reader polling memory.stat would likely meet one.
 */
#define SIM_EPISODE_NOTICE_NS	1000000ULL
/*
 * @fn is called when an episode ends, from inside the sim call that ended it;
 * a negative return is returned by that call.  NULL: nothing is delivered.
 */
void sim_episode_sink(struct sim *s, int (*fn)(const struct sim_episode *ep, void *ctx),
		      void *ctx);
/*
 * End of the trace: deliver every open episode with end = @ts and open set.
 * A memcg still stranded starts a new episode at @ts (call it once, last).
 */
int sim_episodes_close(struct sim *s, uint64_t ts);

/*
 * The memcgs visited since the last call (or sim_watch_visited()), each
 * once, in first-visit order; then the list is empty.  A visit changes only
 * the visited memcg's shown values, atomic and flushable state, so a caller
 * that follows some memcgs looks at these instead of all of them after each
 * flush (the replay's series let the simulator do it: sim_watch_visited()).
 * @fn's non-zero return stops the walk (the rest stay listed) and is
 * returned.
 */
int sim_visited_drain(struct sim *s, int (*fn)(uint64_t id, void *ctx), void *ctx);

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
