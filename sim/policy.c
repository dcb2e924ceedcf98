// SPDX-License-Identifier: GPL-2.0
/*
 * policy.c - the ancestor-walk policies of memcg_rstat_updated()
 * (mm/memcontrol.c): legacy as 8d59d2214c23 left it (6.8-6.15), break as
 * 60cada258dfe made it (6.16+), and the proposed continue; one step function
 * and one table entry each; the steps are in policy.h, inline in each
 * policy's update path (update.c).
 */
#include <stddef.h>
#include <string.h>

#include "policy.h"

static const struct sim_policy sim_policies[] = {
	{
		.name		= "break",
		.kernels	= "6.16+",
		.summary	= "stop the ancestor walk at the first flushable memcg (upstream)",
		.step		= sim_policy_break_step,
		.update		= sim_update_break,
		.apply		= sim_update_break_apply,
		.update_watched	= sim_update_break_watched,
		.apply_watched	= sim_update_break_watched_apply,
	},
	{
		.name		= "continue",
		.kernels	= "patch",
		.summary	= "skip a flushable memcg, keep crediting its ancestors (proposed fix)",
		.step		= sim_policy_continue_step,
		.update		= sim_update_continue,
		.apply		= sim_update_continue_apply,
		.update_watched	= sim_update_continue_watched,
		.apply_watched	= sim_update_continue_watched_apply,
	},
	{
		.name		= "legacy",
		.kernels	= "6.8-6.15",
		.summary	= "walk every ancestor, drop full batches at flushable memcgs",
		.step		= sim_policy_legacy_step,
		.update		= sim_update_legacy,
		.apply		= sim_update_legacy_apply,
		.update_watched	= sim_update_legacy_watched,
		.apply_watched	= sim_update_legacy_watched_apply,
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
