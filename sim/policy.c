// SPDX-License-Identifier: GPL-2.0
/*
 * policy.c - the ancestor-walk policies of memcg_rstat_updated()
 * (mm/memcontrol.c): legacy as 8d59d2214c23 left it (6.8-6.15), break as
 * 60cada258dfe made it (6.16+), and the proposed continue; one step function
 * and one table entry each.
 */
#include <stddef.h>
#include <string.h>

#include "sim-local.h"

/* 6.16+, 60cada258dfe: a flushable node ends the walk before its counter moves. */
static enum sim_walk policy_break_step(struct sim *s, struct sim_node *n, unsigned int cpu,
				       uint32_t abs_val)
{
	if (sim_node_flushable(s, n))
		return SIM_WALK_STOP;
	if (sim_pcpu_add(s, n, cpu, abs_val) < SIM_CHARGE_BATCH)
		return SIM_WALK_NEXT;
	sim_atomic_add(s, n, sim_pcpu_take(s, n, cpu));
	return SIM_WALK_NEXT;
}

/* The proposed fix: skip a flushable node but keep crediting its ancestors. */
static enum sim_walk policy_continue_step(struct sim *s, struct sim_node *n, unsigned int cpu,
					  uint32_t abs_val)
{
	if (sim_node_flushable(s, n))
		return SIM_WALK_NEXT;
	if (sim_pcpu_add(s, n, cpu, abs_val) < SIM_CHARGE_BATCH)
		return SIM_WALK_NEXT;
	sim_atomic_add(s, n, sim_pcpu_take(s, n, cpu));
	return SIM_WALK_NEXT;
}

/*
 * 6.8-6.15 (8d59d2214c23, 9cee7e8ef3e3): the per-CPU counter always grows;
 * a full batch is dropped instead of added when the node is flushable.
 */
static enum sim_walk policy_legacy_step(struct sim *s, struct sim_node *n, unsigned int cpu,
					uint32_t abs_val)
{
	uint32_t x;

	if (sim_pcpu_add(s, n, cpu, abs_val) < SIM_CHARGE_BATCH)
		return SIM_WALK_NEXT;
	x = sim_pcpu_take(s, n, cpu);
	if (!sim_node_flushable(s, n))
		sim_atomic_add(s, n, x);
	else
		sim_batch_drop(s, n, x);
	return SIM_WALK_NEXT;
}

static const struct sim_policy sim_policies[] = {
	{
		.name		= "break",
		.kernels	= "6.16+",
		.summary	= "stop the ancestor walk at the first flushable memcg (upstream)",
		.step		= policy_break_step,
	},
	{
		.name		= "continue",
		.kernels	= "patch",
		.summary	= "skip a flushable memcg, keep crediting its ancestors (proposed fix)",
		.step		= policy_continue_step,
	},
	{
		.name		= "legacy",
		.kernels	= "6.8-6.15",
		.summary	= "walk every ancestor, drop full batches at flushable memcgs",
		.step		= policy_legacy_step,
	},
};

/**
 * sim_policy_find() - look a walk policy up by name
 * @name: "break", "continue" or "legacy"
 *
 * Return: the policy, or NULL if @name is NULL or unknown.
 */
const struct sim_policy *sim_policy_find(const char *name)
{
	size_t i;

	for (i = 0; name && i < sizeof(sim_policies) / sizeof(sim_policies[0]); i++)
		if (!strcmp(sim_policies[i].name, name))
			return &sim_policies[i];
	return NULL;
}

/**
 * sim_policy_at() - the @i-th policy of the table, for listing them
 * @i: index from 0
 *
 * Return: the policy, or NULL past the end.
 */
const struct sim_policy *sim_policy_at(size_t i)
{
	return i < sizeof(sim_policies) / sizeof(sim_policies[0]) ? &sim_policies[i] : NULL;
}
