/* SPDX-License-Identifier: GPL-2.0 */
/*
 * policy.h - memcg_rstat_updated()'s ancestor walk, instantiated once per
 * policy with its step inlined (policy.c).
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
 */
static inline __attribute__((always_inline))
void sim_walk_run(struct sim *s, int32_t slot, uint32_t abs_val,
		  struct sim_step_out (*step)(const struct sim_step_in *in))
{
	struct sim_step_in in = { .th = s->th, .abs_val = abs_val, .batch = s->batch };
	uint64_t steps = 0, charged = 0;
	int32_t idx;

	/* css_rstat_updated()'s own early return, before the call: a slot mostly is linked */
	if (!s->slots[slot].on_tree)
		sim_rstat_updated(s, slot);
	/* the two counts of every step in registers: the stores below may alias s->cost */
	for (idx = slot; idx != SIM_NONE; idx = s->slots[idx].parent) {
		struct sim_pcpu *sl = &s->slots[idx];
		struct sim_node *n = &s->nodes[sl->node];
		struct sim_step_out out;

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

/* A policy's walk (struct sim_policy.walk): sim_walk_run() with its step. */
#define SIM_POLICY_WALK(name, stepfn)						\
	static void name(struct sim *s, int slot, unsigned int abs_val)	\
	{									\
		sim_walk_run(s, slot, abs_val, stepfn);				\
	}

/* A policy built outside the table (no walk of its own): the step through its pointer. */
void sim_walk_generic(struct sim *s, int slot, unsigned int abs_val);

#endif
