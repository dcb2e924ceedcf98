// SPDX-License-Identifier: GPL-2.0
/*
 * update.c - the update path: mod_memcg_state(), mod_memcg_lruvec_state()
 * and count_memcg_events() calling memcg_rstat_updated() (mm/memcontrol.c),
 * with the ancestor walk delegated to the policy's step.
 */
#include <errno.h>

#include "sim-local.h"

/*
 * Keep the flushable flag and the ancestors' count of flushable descendants
 * (which makes "stuck" O(1)) in step with the atomic.
 */
void sim_flushable_update(struct sim *s, struct sim_node *n, uint64_t ts)
{
	bool f = n->stats_updates > (int64_t)s->th;
	struct sim_node *p;

	if (f == n->flushable)
		return;
	sim_stale_touch(n, ts);
	sim_lag_flushable(n, ts);
	n->flushable = f;
	sim_lag_eval(s, n, ts);
	for (p = sim_parent(s, n); p; p = sim_parent(s, p)) {
		sim_stale_touch(p, ts);
		if (f)
			p->nr_flushable_desc++;
		else
			p->nr_flushable_desc--;
	}
}

/* A policy built outside the table (no walk of its own): the step through its pointer. */
static void sim_walk_generic(struct sim *s, int slot, unsigned int abs_val)
{
	sim_walk_run(s, slot, abs_val, s->policy->step);
}

/*
 * What the update of (@node, @cpu), line @k, is about to touch: the slot's
 * deltas, then at @node and each ancestor the node's second update-path line
 * and its sim_line of @k.  The stale pass follows parent links, each a load
 * that depends on the previous one; asked for here all at once, the misses
 * overlap.  Hints only: nothing is read for its value but the compact path
 * table and the nodes' line pointers.  Not the ancestors' slots on @cpu:
 * the slot_of load and multiply per ancestor cost more than their misses
 * (break's walk reaches 1.5 slots an update; replay_mem, CPU time, with
 * and without: every policy as fast or faster without).
 *
 * It runs at every ancestor of every update, so it spends no test it can
 * avoid: a line beyond cap_it (a node that has not met item @k yet) is a
 * prefetch of an address nothing reads, which costs nothing and cannot
 * fault.  The address is computed as an integer, as lines may still be NULL.
 * always_inline: as a function of its own, GCC 12 finds it free of side
 * effects (pure-const) and drops the call.
 */
static inline __attribute__((always_inline))
void sim_path_prefetch(const struct sim *s, int32_t node, int32_t slot, uint32_t k)
{
	const int32_t *a = &s->path[(size_t)node * SIM_PATH];
	const char *sl = (const char *)&s->slots[slot];
	const struct sim_node *n = &s->nodes[node];
	size_t line = (size_t)k * sizeof(struct sim_line);
	int32_t i;

	__builtin_prefetch(sl + SIM_CACHELINE);
	__builtin_prefetch(sl + 2 * SIM_CACHELINE);
	__builtin_prefetch(sl + 3 * SIM_CACHELINE);
	__builtin_prefetch((const void *)((uintptr_t)n->lines + line));
	/*
	 * The loads of lines do not depend on each other: they overlap too.
	 * Not the root (node 0, the end of every path): every update touches
	 * it, so it stays in cache.
	 */
	for (i = 0; i < SIM_PATH && a[i] > 0; i++) {
		n = &s->nodes[a[i]];
		__builtin_prefetch((const char *)n + SIM_CACHELINE);
		__builtin_prefetch((const void *)((uintptr_t)n->lines + line));
	}
}

/**
 * sim_update() - one traced memcg stat update
 * @s: the simulator
 * @ts: event time (ns)
 * @cpu: ring-buffer CPU, whose per-CPU counters the kernel changed
 * @id: memcg cgroup id; unknown ids attach under the root
 * @kind: which tracepoint
 * @item: the traced item
 * @val: the traced val, in pages (events: the unsigned long count's bits)
 *
 * The walk sees |(int)val| as the kernel's int parameter does: for
 * count_memcg_events that truncates the unsigned long, and a count whose low
 * 32 bits are 0 returns before css_rstat_updated().  The staleness accounting
 * instead uses the delta the stat itself receives: val for the two state
 * events (the traced field is an int already) and the full count for events,
 * since this_cpu_add(statc->events[i], count) is not truncated.
 *
 * Return: 0, -EINVAL for a bad cpu/kind/id, -ENOMEM (the sim is then unusable).
 */
int sim_update(struct sim *s, uint64_t ts, unsigned int cpu, uint64_t id,
	       enum sim_item_kind kind, int item, int64_t val)
{
	int32_t node, slot;
	uint32_t abs_val;
	int k, ret;

	if (cpu >= s->nr_possible || kind > SIM_ITEM_EVENT || !id || id == SIM_KEY_EMPTY)
		return -EINVAL;
	if (!val)
		return 0;
	sim_clock(s, ts);
	s->now = ts;
	node = sim_node_lookup(s, id);
	if (node == SIM_NONE) {
		node = sim_node_create(s, ts, id, 0);
		if (node < 0)
			return node;
		s->cost.unknown_ids++;
	}
	slot = sim_slot_find(s, node, cpu);
	if (slot == SIM_NONE) {
		slot = sim_slot_get(s, node, cpu);
		if (slot < 0)
			return slot;
	}
	s->cost.updates++;
	k = sim_item_index(s, kind, item);
	if (k < 0)
		return k;
	sim_path_prefetch(s, node, slot, (uint32_t)k);
	ret = sim_stale_update(s, ts, slot, kind, (uint32_t)k, val);
	if (ret)
		return ret;
	abs_val = sim_walk_abs(val);
	if (abs_val)
		(s->policy->walk ? s->policy->walk : sim_walk_generic)(s, slot, abs_val);
	return sim_lag_err_take(s);
}

/* memcg_vmstats_needs_flush() for @id; false for unknown ids. */
bool sim_needs_flush(const struct sim *s, uint64_t id)
{
	int32_t idx = sim_node_lookup(s, id);

	return idx != SIM_NONE && s->nodes[idx].flushable;
}

/* The atomic stats_updates of @id, as memcg_flush_stats traces it; 0 if unknown. */
int64_t sim_stats_updates(const struct sim *s, uint64_t id)
{
	int32_t idx = sim_node_lookup(s, id);

	return idx == SIM_NONE ? 0 : s->nodes[idx].stats_updates;
}
