/* SPDX-License-Identifier: GPL-2.0 */
/*
 * policy.h - memcg_rstat_updated()'s ancestor walk and the policies' steps;
 * the table of policies is policy.c's, the update path instantiated once per
 * policy with its step inlined is update.c's.
 */
#ifndef MCR_SIM_POLICY_H
#define MCR_SIM_POLICY_H

#include "rstat.h"
#include "stale.h"

/*
 * memcg_rstat_updated(): css_rstat_updated() then the ancestor walk, each
 * node's counters handed to the policy's @step.  always_inline with a
 * constant @step (SIM_POLICY_WALK()): each policy's walk is one loop with its
 * step inlined, no call and no 16-byte struct per node.
 *
 * @calm_skips: the policy's step leaves a flushable node alone and walks
 * on (continue): from a node that is calm with only calm ancestors
 * (sim.calm_up: all flushable) to the root every step is such a skip, so
 * the walk only counts them (the node's level + 1) and touches none of
 * their slots or nodes.  A step below cannot change that: it changes only
 * its own node's counters.
 */
static inline __attribute__((always_inline))
void sim_walk_run(struct sim *s, int32_t slot, uint32_t abs_val, bool calm_skips,
		  struct sim_step_out (*step)(const struct sim_step_in *in))
{
	struct sim_step_in in = { .th = s->th, .abs_val = abs_val, .batch = s->batch };
	uint64_t steps = 0, charged = 0;
	int32_t idx;

	/* css_rstat_updated()'s own early return, before the call: a slot mostly is linked */
	if (!s->ctr[slot].on_tree)
		sim_rstat_updated(s, slot);
	/* the two counts of every step in registers: the stores below may alias s->cost */
	for (idx = slot; idx != SIM_NONE; idx = s->ctr[idx].parent) {
		struct sim_ctr *sl = &s->ctr[idx];
		struct sim_node *n = &s->nodes[sl->node];
		struct sim_step_out out;

		if (calm_skips && s->calm_up[sl->node]) {
			steps += n->level + 1;
			break;
		}
		steps++;
		in.atomic = n->stats_updates;
		in.pcpu = sl->stats_updates;
		out = step(&in);
		charged += out.charged;
		sl->stats_updates = out.pcpu;
		if (out.add) {
			/* atomic_add(stats_updates, &vmstats->stats_updates) */
			s->cost.atomic_adds++;
			n->stats_updates += out.add;
			sim_flushable_update(s, n, s->now);
		}
		if (out.drop)
			s->cost.dropped_batches++;
		if (out.walk == SIM_WALK_STOP)
			break;
	}
	s->cost.walk_steps += steps;
	s->cost.pcpu_adds += charged;
}

/*
 * The steps: each a pure function of one node's counters (struct
 * sim_step_in), which never sees the simulator, so the inference applies
 * exactly the same step to its hypotheses' counters.  always_inline: each
 * table policy's update path has its step inlined in the walk (update.c);
 * the table's pointers get a copy of their own.
 */

/* 6.16+, 60cada258dfe: a flushable node ends the walk before its counter moves. */
static inline __attribute__((always_inline))
struct sim_step_out sim_policy_break_step(const struct sim_step_in *in)
{
	if (sim_step_flushable(in))
		return sim_step_skip(in, SIM_WALK_STOP);
	return sim_step_charge(in);
}

/* The proposed fix: skip a flushable node but keep crediting its ancestors. */
static inline __attribute__((always_inline))
struct sim_step_out sim_policy_continue_step(const struct sim_step_in *in)
{
	if (sim_step_flushable(in))
		return sim_step_skip(in, SIM_WALK_NEXT);
	return sim_step_charge(in);
}

/*
 * 6.8-6.15 (8d59d2214c23, 9cee7e8ef3e3): the per-CPU counter always grows;
 * a full batch is dropped instead of added when the node is flushable.
 */
static inline __attribute__((always_inline))
struct sim_step_out sim_policy_legacy_step(const struct sim_step_in *in)
{
	struct sim_step_out out = sim_step_charge(in);

	if (sim_step_flushable(in)) {
		out.drop = out.add;
		out.add = 0;
	}
	return out;
}

/*
 * The table policies' update paths (struct sim_policy.update, update.c):
 * sim_update() with the policy's step inlined; and the one for a policy
 * built outside the table, which calls its step through the pointer.
 */
int sim_update_break(struct sim *s, uint64_t ts, unsigned int cpu, uint64_t id,
		     enum sim_item_kind kind, int item, int64_t val);
int sim_update_continue(struct sim *s, uint64_t ts, unsigned int cpu, uint64_t id,
			enum sim_item_kind kind, int item, int64_t val);
int sim_update_legacy(struct sim *s, uint64_t ts, unsigned int cpu, uint64_t id,
		      enum sim_item_kind kind, int item, int64_t val);
int sim_update_generic(struct sim *s, uint64_t ts, unsigned int cpu, uint64_t id,
		       enum sim_item_kind kind, int item, int64_t val);
/* sim_update_apply() of each (struct sim_policy.apply) */
int sim_update_break_apply(struct sim *s, struct sim_prep h, uint64_t ts, int64_t val);
int sim_update_continue_apply(struct sim *s, struct sim_prep h, uint64_t ts, int64_t val);
int sim_update_legacy_apply(struct sim *s, struct sim_prep h, uint64_t ts, int64_t val);
int sim_update_generic_apply(struct sim *s, struct sim_prep h, uint64_t ts, int64_t val);
/* the same for a simulator with watched memcgs (struct sim_policy.update_watched, .apply_watched) */
int sim_update_break_watched(struct sim *s, uint64_t ts, unsigned int cpu, uint64_t id,
			     enum sim_item_kind kind, int item, int64_t val);
int sim_update_continue_watched(struct sim *s, uint64_t ts, unsigned int cpu, uint64_t id,
				enum sim_item_kind kind, int item, int64_t val);
int sim_update_legacy_watched(struct sim *s, uint64_t ts, unsigned int cpu, uint64_t id,
			      enum sim_item_kind kind, int item, int64_t val);
int sim_update_generic_watched(struct sim *s, uint64_t ts, unsigned int cpu, uint64_t id,
			       enum sim_item_kind kind, int item, int64_t val);
int sim_update_break_watched_apply(struct sim *s, struct sim_prep h, uint64_t ts, int64_t val);
int sim_update_continue_watched_apply(struct sim *s, struct sim_prep h, uint64_t ts, int64_t val);
int sim_update_legacy_watched_apply(struct sim *s, struct sim_prep h, uint64_t ts, int64_t val);
int sim_update_generic_watched_apply(struct sim *s, struct sim_prep h, uint64_t ts, int64_t val);

#endif
