// SPDX-License-Identifier: GPL-2.0
/*
 * policy.c - the ancestor-walk policies of memcg_rstat_updated()
 * (mm/memcontrol.c): legacy as 8d59d2214c23 left it (6.8-6.15), break as
 * 60cada258dfe made it (6.16+), and the proposed continue; one step function
 * and one table entry each.
 *
 * A step is a pure function of one node's counters (struct sim_step_in): it
 * never sees the simulator, so the inference applies exactly the same step to
 * its hypotheses' counters.
 */
#include <stddef.h>
#include <string.h>

#include "policy.h"

/*
 * The steps are always_inline: each policy's walk below has its step inlined
 * (SIM_POLICY_WALK()); the table's pointers get a copy of their own.
 */

/* 6.16+, 60cada258dfe: a flushable node ends the walk before its counter moves. */
static inline __attribute__((always_inline))
struct sim_step_out policy_break_step(const struct sim_step_in *in)
{
	if (sim_step_flushable(in))
		return sim_step_skip(in, SIM_WALK_STOP);
	return sim_step_charge(in);
}

/* The proposed fix: skip a flushable node but keep crediting its ancestors. */
static inline __attribute__((always_inline))
struct sim_step_out policy_continue_step(const struct sim_step_in *in)
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
struct sim_step_out policy_legacy_step(const struct sim_step_in *in)
{
	struct sim_step_out out = sim_step_charge(in);

	if (sim_step_flushable(in)) {
		out.drop = out.add;
		out.add = 0;
	}
	return out;
}

SIM_POLICY_WALK(policy_break_walk, policy_break_step)
SIM_POLICY_WALK(policy_continue_walk, policy_continue_step)
SIM_POLICY_WALK(policy_legacy_walk, policy_legacy_step)

/* sim_walk_run() with the step through the policy's pointer. */
void sim_walk_generic(struct sim *s, int slot, unsigned int abs_val)
{
	sim_walk_run(s, slot, abs_val, s->policy->step);
}

static const struct sim_policy sim_policies[] = {
	{
		.name		= "break",
		.kernels	= "6.16+",
		.summary	= "stop the ancestor walk at the first flushable memcg (upstream)",
		.step		= policy_break_step,
		.walk		= policy_break_walk,
	},
	{
		.name		= "continue",
		.kernels	= "patch",
		.summary	= "skip a flushable memcg, keep crediting its ancestors (proposed fix)",
		.step		= policy_continue_step,
		.walk		= policy_continue_walk,
	},
	{
		.name		= "legacy",
		.kernels	= "6.8-6.15",
		.summary	= "walk every ancestor, drop full batches at flushable memcgs",
		.step		= policy_legacy_step,
		.walk		= policy_legacy_walk,
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

/**
 * sim_policy_rank() - where a policy stands in the table, to sort by it
 * @name: a policy name as stored with a run
 *
 * Return: its index; the table's size for an unknown name, so that rows of a
 * policy this build does not know sort after the known ones.
 */
int sim_policy_rank(const char *name)
{
	const struct sim_policy *pol = sim_policy_find(name);

	if (!pol)
		return (int)(sizeof(sim_policies) / sizeof(sim_policies[0]));
	return (int)(pol - sim_policies);
}
