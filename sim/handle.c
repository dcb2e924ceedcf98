// SPDX-License-Identifier: GPL-2.0
/*
 * handle.c - a memcg's node index and a line's index, resolved once by a
 * caller that looks at the same (memcg, line) after every update (replay's
 * series), then read without a lookup.  Both indices are stable for the
 * simulator's life: nodes are never freed (cgroup.c) and an item keeps the
 * index it got when first updated (items.c).  Reads only; no state.
 */
#include "lag.h"
#include "rstat.h"

int32_t sim_node_handle(const struct sim *s, uint64_t id)
{
	return sim_node_lookup(s, id);
}

int32_t sim_line_handle(const struct sim *s, enum sim_item_kind kind, int item)
{
	return kind > SIM_ITEM_EVENT ? SIM_NONE : sim_item_find(s, kind, item);
}

bool sim_node_flushable_at(const struct sim *s, int32_t node)
{
	return s->nodes[node].flushable;
}

/* As sim_item_error(): a line never updated in the subtree (or anywhere) reads 0. */
int64_t sim_line_error_at(const struct sim *s, int32_t node, int32_t line)
{
	const struct sim_node *n = &s->nodes[node];

	/* only a calm memcg may have updates deferred (lag.c) */
	if (s->calm_up[node])
		sim_lazy_settle_read(s);
	return line >= 0 && (uint32_t)line < n->cap_it ? -n->lines[line].miss : 0;
}

int32_t sim_node_parent_at(const struct sim *s, int32_t node)
{
	return s->nodes[node].parent;
}

uint32_t sim_node_level_at(const struct sim *s, int32_t node)
{
	return s->nodes[node].level;
}

/* As sim_stats_updates() and sim_pcpu_stats_updates() of the node's id. */
int64_t sim_stats_updates_at(const struct sim *s, int32_t node)
{
	return s->nodes[node].stats_updates;
}

uint32_t sim_pcpu_stats_updates_at(const struct sim *s, int32_t node, unsigned int cpu)
{
	int32_t idx = sim_slot_find(s, node, cpu);

	return idx == SIM_NONE ? 0 : s->ctr[idx].stats_updates;
}

bool sim_pcpu_on_tree_at(const struct sim *s, int32_t node, unsigned int cpu)
{
	int32_t idx = sim_slot_find(s, node, cpu);

	return idx != SIM_NONE && s->ctr[idx].on_tree;
}

size_t sim_node_path_at(const struct sim *s, int32_t node, unsigned int cpu,
			struct sim_path_node *out, size_t max, bool *more)
{
	size_t n = 0;

	for (; node >= 0 && n < max; node = s->nodes[node].parent, n++)
		out[n] = (struct sim_path_node){
			.node = node, .id = s->nodes[node].id,
			.stats_updates = sim_stats_updates_at(s, node),
			.pcpu = sim_pcpu_stats_updates_at(s, node, cpu),
		};
	*more = node >= 0;
	return n;
}
