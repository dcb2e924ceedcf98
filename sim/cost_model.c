// SPDX-License-Identifier: GPL-2.0
/*
 * cost_model.c - a run's operation counts at measured costs (cost_model.h).
 *
 * Per update the kernel's memcg_rstat_updated() (mm/memcontrol.c) walks from
 * the memcg to the root.  Since 60cada258dfe (6.16, break) and in the
 * proposed continue, every node the walk reaches is first tested with
 * memcg_vmstats_needs_flush(), then its per-CPU stats_updates grows by
 * |val| (this_cpu_add_return()), and a full batch moves into the atomic
 * (atomic_add()).  In 6.8-6.15 (legacy, 8d59d2214c23) the per-CPU add comes
 * first and the test only guards the atomic add of a full batch, so it runs
 * once per batch moved or dropped.  Each node reached is one step up the tree
 * (parent_mem_cgroup() and this_cpu_ptr() of its counters).  So:
 *
 *   checks = walk_steps                     (break, continue)
 *          = atomic_adds + dropped_batches  (legacy)
 *   ns     = walk_steps x step + pcpu_adds x pcpu_add + checks x check
 *          + atomic_adds x (shared x atomic_contended + (1 - shared) x atomic_add)
 *
 * and, as an upper bound, ns_max with the cold-cache step and every atomic
 * add contended.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "cost_model.h"

static const char *const sim_cost_op_names[SIM_COST_NR_OPS] = {
	[SIM_COST_PLAIN_ADD]		= "plain_add",
	[SIM_COST_PCPU_ADD]		= "pcpu_add",
	[SIM_COST_ATOMIC_ADD]		= "atomic_add",
	[SIM_COST_ATOMIC_CONTENDED]	= "atomic_add_contended",
	[SIM_COST_FLUSHABLE_CHECK]	= "flushable_check",
	[SIM_COST_WALK_STEP]		= "walk_step",
	[SIM_COST_WALK_STEP_COLD]	= "walk_step_cold",
};

const char *sim_cost_op_name(unsigned int op)
{
	return op < SIM_COST_NR_OPS ? sim_cost_op_names[op] : NULL;
}

int sim_cost_op_find(const char *name)
{
	unsigned int i;

	for (i = 0; name && i < SIM_COST_NR_OPS; i++)
		if (!strcmp(sim_cost_op_names[i], name))
			return (int)i;
	return -1;
}

int sim_cost_policy_legacy(const char *policy)
{
	return policy && !strcmp(policy, "legacy");
}

static bool sim_cost_ns_ok(double ns)
{
	return isfinite(ns) && ns >= 0 && ns <= SIM_COST_NS_MAX;
}

int sim_cost_table_check(const struct sim_cost_table *t, unsigned int *op, const char **field)
{
	unsigned int i;

	for (i = 0; i < SIM_COST_NR_OPS; i++) {
		const struct sim_cost_figure *f = &t->op[i];

		*op = i;
		*field = !sim_cost_ns_ok(f->ns) ? "ns" : !sim_cost_ns_ok(f->lo_ns) ? "lo_ns" :
			 !sim_cost_ns_ok(f->hi_ns) ? "hi_ns" : f->lo_ns > f->ns ? "lo_ns" :
			 f->ns > f->hi_ns ? "hi_ns" : NULL;
		if (*field)
			return -EINVAL;
	}
	return 0;
}

int sim_cost_estimate(const struct sim_cost_counts *c, const struct sim_cost_table *t,
		      struct sim_cost_estimate *out)
{
	double step, cold, pcpu, check, atomic, contended;
	unsigned int i;

	/* the medians only: the spread is not used here */
	for (i = 0; i < SIM_COST_NR_OPS; i++)
		if (!sim_cost_ns_ok(t->op[i].ns))
			return -EINVAL;
	if (!isfinite(c->shared) || c->shared < 0 || c->shared > 1)
		return -EINVAL;
	step = t->op[SIM_COST_WALK_STEP].ns;
	cold = t->op[SIM_COST_WALK_STEP_COLD].ns;
	pcpu = t->op[SIM_COST_PCPU_ADD].ns;
	check = t->op[SIM_COST_FLUSHABLE_CHECK].ns;
	atomic = t->op[SIM_COST_ATOMIC_ADD].ns;
	contended = t->op[SIM_COST_ATOMIC_CONTENDED].ns;

	memset(out, 0, sizeof(*out));
	out->checks = c->legacy ? c->atomic_adds + c->dropped_batches : c->walk_steps;
	out->atomic_ns = c->shared * contended + (1 - c->shared) * atomic;
	out->ns = (double)c->walk_steps * step + (double)c->pcpu_adds * pcpu +
		  (double)out->checks * check + (double)c->atomic_adds * out->atomic_ns;
	out->ns_max = (double)c->walk_steps * cold + (double)c->pcpu_adds * pcpu +
		      (double)out->checks * check + (double)c->atomic_adds * contended;
	if (c->updates) {
		out->ns_per_update = out->ns / (double)c->updates;
		out->ns_per_update_max = out->ns_max / (double)c->updates;
	}
	if (c->trace_ns)
		out->cpu_s_per_s = out->ns / (double)c->trace_ns;
	return 0;
}
