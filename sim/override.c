// SPDX-License-Identifier: GPL-2.0
/*
 * override.c - read and overwrite single counters, for callers that keep
 * several candidate states over one simulator (replay's hypothesis inference)
 * and fold the surviving one back.  Nothing else changes: no tree links, no
 * staleness accounting, no cost counters.
 */
#include <errno.h>

#include "rstat.h"
#include "stale.h"

/**
 * sim_pcpu_stats_updates() - the per-CPU counter of (@id, @cpu)
 * Return: its value, 0 where the pair never occurred or @id is unknown.
 */
uint32_t sim_pcpu_stats_updates(const struct sim *s, uint64_t id, unsigned int cpu)
{
	int32_t node = sim_node_lookup(s, id);

	return node == SIM_NONE ? 0 : sim_pcpu_stats_updates_at(s, node, cpu);
}

/**
 * sim_pcpu_set() - overwrite the per-CPU counter of (@id, @cpu)
 * Return: 0, -ENOENT for an unknown id, -EINVAL for a bad cpu, -ENOMEM.
 */
int sim_pcpu_set(struct sim *s, uint64_t id, unsigned int cpu, uint32_t v)
{
	int32_t node = sim_node_lookup(s, id);
	int32_t slot;

	if (node == SIM_NONE)
		return -ENOENT;
	if (cpu >= s->nr_possible)
		return -EINVAL;
	slot = sim_slot_get(s, node, cpu);
	if (slot < 0)
		return slot;
	s->ctr[slot].stats_updates = v;
	return 0;
}

/**
 * sim_stats_updates_set() - overwrite the atomic of @id, keeping its
 * flushable state (and its ancestors' counts) in step
 * Return: 0, -ENOENT for an unknown id.
 */
int sim_stats_updates_set(struct sim *s, uint64_t id, int64_t v)
{
	int32_t node = sim_node_lookup(s, id);

	if (node == SIM_NONE)
		return -ENOENT;
	s->nodes[node].stats_updates = v;
	sim_flushable_update(s, &s->nodes[node], s->now);
	return sim_lag_err_take(s);
}
