// SPDX-License-Identifier: GPL-2.0
/*
 * update.c - the update path: mod_memcg_state(), mod_memcg_lruvec_state()
 * and count_memcg_events() calling memcg_rstat_updated() (mm/memcontrol.c),
 * with the ancestor walk delegated to the policy's step, and the update's
 * half of the staleness accounting (stale.c states the model; the visit's
 * half and the queries are there).  One file so that the whole per-event
 * path compiles as one function: no call but the walk's.
 */
#include <errno.h>

#include "cgroup.h"
#include "policy.h"
#include "watch.h"

/*
 * One node's share of an update of line @k: @n and every ancestor miss it
 * until visits move it up to them.  @calm: @n is flushable and not stranded,
 * as most are at most updates; then it is not stuck, its non-flushable clock
 * stands still (sim_nf() is nf_ns, sim_sn() sn_ns), no episode is open (ep_scan implies
 * stranded) and sim_lag_eval() has nothing to do, since only a node that is
 * not flushable strands.  The calm instance runs the same operations in the
 * same order as the general one, without the tests whose outcome it knows.
 */
static inline __attribute__((always_inline))
void stale_add(struct sim *s, struct sim_node *n, uint64_t ts, uint32_t k, uint64_t mag,
	       uint64_t walk_mag, int64_t d, uint64_t g, bool calm)
{
	sim_stale_touch_at(n, ts, calm);
	sim_missing_change(n, mag, true);
	n->fresh += walk_mag;
	if (ts < n->oldest)
		sim_oldest_set(n, ts);
	if (calm) {
		sim_line_touch(&n->lines[k], n->nf_ns, n->sn_ns);
		n->lines[k].miss += d;
		return;
	}
	sim_item_touch(s, n, k, ts, g);
	n->lines[k].miss += d;
	sim_item_changed(s, n, k);
	/*
	 * Before the walk: a memcg the walk is about to make flushable
	 * is stranded for no time, which sim_lag_change() does not count.
	 */
	sim_lag_eval(s, n, ts);
}

/*
 * The lowest node of @node's path (itself included) that is calm with only
 * calm ancestors, SIM_NONE if the root is not calm: the update's share of
 * it and everything above is deferred (lag.c).  Nothing is deferred for an
 * update older than a clock already moved (ts_hi): all is applied first.
 * It reads sim.calm_up only, not the nodes: mostly one byte.
 */
static inline __attribute__((always_inline))
int32_t sim_calm_top(struct sim *s, int32_t node, uint64_t ts)
{
	const int32_t *a;
	int i;

	if (ts < s->ts_hi) {
		if (s->owe_any)
			sim_lazy_settle(s);
		return SIM_NONE;
	}
	s->ts_hi = ts;
	if (s->calm_up[node])
		return node;
	/* calm_up holds from some ancestor up, or for none */
	for (;;) {
		a = &s->path[(size_t)node * SIM_PATH];
		for (i = 0; i < SIM_PATH && a[i] != SIM_NONE; i++)
			if (s->calm_up[a[i]])
				return a[i];
		if (i < SIM_PATH)
			return SIM_NONE;
		/* deeper than the path table: on from its last entry */
		node = a[SIM_PATH - 1];
	}
}

/* stale_add() deferred for @top and its ancestors (lag.c, sim_lazy_settle()). */
static inline __attribute__((always_inline))
void stale_defer(struct sim *s, int32_t top, uint64_t ts, uint32_t k, uint64_t mag,
		 uint64_t walk_mag, int64_t d)
{
	struct sim_node *n = &s->nodes[top];

	if (n->owe_first == SIM_TS_NONE) {
		n->owe_first = ts;
		s->owe_dirty[top / 64] |= UINT64_C(1) << (top % 64);
		s->owe_any = true;
	}
	n->owe_last = ts;
	n->owe_mag += mag;
	n->owe_mts += (unsigned __int128)mag * ts;
	n->owe_walk += walk_mag;
	n->owe_it[k] += d;
	n->owe_bits[k / 64] |= UINT64_C(1) << (k % 64);
}

/* Link slot @idx into @n's slots by age (stale.c): mostly at the tail. */
static void sim_dirty_insert(struct sim *s, struct sim_node *n, int32_t idx)
{
	struct sim_pcpu *sl = &s->slots[idx];
	int32_t after = n->dirty_tail;

	while (after != SIM_NONE && s->slots[after].unfl_since > sl->unfl_since)
		after = s->slots[after].dirty_prev;
	sl->dirty_prev = after;
	sl->dirty_next = after == SIM_NONE ? n->dirty_head : s->slots[after].dirty_next;
	if (after == SIM_NONE)
		n->dirty_head = idx;
	else
		s->slots[after].dirty_next = idx;
	if (sl->dirty_next == SIM_NONE)
		n->dirty_tail = idx;
	else
		s->slots[sl->dirty_next].dirty_prev = idx;
}

/*
 * What the stale pass of an update of @node, line @k, is about to touch
 * below the calm top @top (sim_calm_top()): at @node and each ancestor the
 * node's second update-path line and its sim_line of @k; and at @top what
 * its share is deferred into.  The pass follows parent links, each a load
 * that depends on the previous one; asked for here all at once, the misses
 * overlap.  Hints only: nothing is read for its value but the compact path
 * table and the nodes' line pointers.
 *
 * It spends no test it can avoid: a line beyond cap_it (a node that has not
 * met item @k yet) is a prefetch of an address nothing reads, which costs
 * nothing and cannot fault.  The address is computed as an integer, as
 * lines may still be NULL.
 */
static inline __attribute__((always_inline))
void sim_lines_prefetch(const struct sim *s, int32_t node, uint32_t k, int32_t top)
{
	const int32_t *a = &s->path[(size_t)node * SIM_PATH];
	const struct sim_node *n = &s->nodes[node];
	size_t line = (size_t)k * sizeof(struct sim_line);
	int32_t i;

	if (top != SIM_NONE) {
		n = &s->nodes[top];
		__builtin_prefetch(&n->owe_mts, 1);
		__builtin_prefetch((const void *)((uintptr_t)n->owe_it + k * sizeof(int64_t)), 1);
		if (top == node)
			return;
		n = &s->nodes[node];
	}
	__builtin_prefetch((const void *)((uintptr_t)n->lines + line));
	/*
	 * The loads of lines do not depend on each other: they overlap too.
	 * Not the root (node 0, the end of every path): every update touches
	 * it, so it stays in cache.
	 */
	for (i = 0; i < SIM_PATH && a[i] > 0 && a[i] != top; i++) {
		n = &s->nodes[a[i]];
		__builtin_prefetch((const char *)n + SIM_CACHELINE);
		__builtin_prefetch((const void *)((uintptr_t)n->lines + line));
	}
}

#define SIM_VAL_MAX	(INT64_C(1) << 47)

/*
 * Account one update of line @k (sim_item_index()) of slot @slot's memcg,
 * unflushed on its CPU (@walk_mag: what the counters see of it,
 * sim_walk_abs()): at the memcg and each ancestor below the calm top
 * of its path (sim_calm_top()) now, the top's share deferred (lag.c).
 * always_inline: one copy in each policy's update path, which is then one
 * function but for the rare calls.  @watch (a simulator with watched
 * memcgs, sim_watch(): its own instance of the update path): the watched
 * memcgs it changed that are not flushable wait in s->wpend for
 * sim_watch_look() after the walk.
 */
static inline __attribute__((always_inline))
int sim_stale_update(struct sim *s, uint64_t ts, int32_t slot, enum sim_item_kind kind,
		     uint32_t k, int64_t val, uint32_t walk_mag, bool watch)
{
	struct sim_pcpu *sl = &s->slots[slot];
	/*
	 * The slot's memcg, read once: a store through the slot's deltas
	 * could be one to its counter or s->nodes as the compiler sees them,
	 * and nothing here moves the nodes.
	 */
	int32_t node = s->ctr[slot].node, idx, top;
	struct sim_node *un = &s->nodes[node], *n;
	uint64_t mag, g;
	int64_t d;
	int ret;

	top = sim_calm_top(s, node, ts);
	sim_lines_prefetch(s, node, k, top);
	/*
	 * The sums add d and mag per update: a value from a damaged file
	 * (INT64_MAX) would overflow them at the second update.  2^47 pages
	 * (512 PiB) is beyond any real update, and 2^16 of them still fit.
	 * Every real value is within it, and for all but a negative event
	 * count mag is |val| and d val: one test for both.
	 */
	if (__builtin_expect((uint64_t)val + SIM_VAL_MAX <= 2 * (uint64_t)SIM_VAL_MAX &&
			     (val >= 0 || kind != SIM_ITEM_EVENT), 1)) {
		mag = val < 0 ? -(uint64_t)val : (uint64_t)val;
		d = val;
	} else {
		if (kind == SIM_ITEM_EVENT) {
			/* an unsigned long count; beyond INT64_MAX the signed value saturates */
			mag = (uint64_t)val;
			d = val < 0 ? INT64_MAX : val;
		} else {
			mag = val < 0 ? -(uint64_t)val : (uint64_t)val;
			d = val;
		}
		d = d > SIM_VAL_MAX ? SIM_VAL_MAX : d < -SIM_VAL_MAX ? -SIM_VAL_MAX : d;
		if (mag > (uint64_t)SIM_VAL_MAX)
			mag = (uint64_t)SIM_VAL_MAX;
	}
	ret = sim_slot_item_add(s, sl, (uint16_t)k, d);
	if (ret)
		return ret;
	if (!sl->unfl || ts < sl->unfl_since) {
		if (sl->unfl)
			sim_dirty_unlink(s, un, sl);
		sl->unfl_since = ts;
		sim_dirty_insert(s, un, slot);
	}
	sl->unfl += mag;

	/* the ancestors' lines are at least as long (sim_node_items_reserve()) */
	if (un->cap_it <= k) {
		ret = sim_node_items_reserve(s, un);
		if (ret)
			return ret;
	}
	/*
	 * The settled clock is the simulator's: read once for the path.
	 * Nothing the pass does moves it (only a flush's start or end).
	 */
	g = node != top ? sim_settled(s, ts) : 0;
	for (idx = node; idx != top; idx = n->parent) {
		n = &s->nodes[idx];
		if (sim_node_calm(n)) {
			stale_add(s, n, ts, k, mag, walk_mag, d, g, true);
			continue;
		}
		stale_add(s, n, ts, k, mag, walk_mag, d, g, false);
		/* a watched memcg that is not flushable: its line is seen after the walk */
		if (watch && s->watched[idx] && !n->flushable)
			s->wpend[s->nr_wpend++] = idx;
	}
	if (top != SIM_NONE)
		stale_defer(s, top, ts, k, mag, walk_mag, d);
	return 0;
}

/*
 * What the update of (@node, @cpu) is about to touch in the slots: the
 * slot's deltas, and of the ancestors' counters on @cpu only the parent's,
 * whose index the slot's counter holds: a slot_of load and multiply per
 * ancestor cost more than their misses (break's walk reaches 1.5 slots an
 * update; replay_mem, CPU time, with and without: every policy as fast or
 * faster without).  The nodes' lines are sim_lines_prefetch()'s.  Hints
 * only: nothing is read for its value but the counter's parent link.
 * always_inline: as a function of its own, GCC 12 finds it free of side
 * effects (pure-const) and drops the call.
 */
static inline __attribute__((always_inline))
void sim_path_prefetch(const struct sim *s, int32_t slot, bool prepared)
{
	const char *sl = (const char *)&s->slots[slot];
	const struct sim_ctr *sp = &s->ctr[slot];
	int32_t parent = sp->parent;

	/* sim_update_prepare() asked for it already */
	if (!prepared)
		__builtin_prefetch(sl + SIM_CACHELINE);
	/*
	 * The parent's counter on @cpu, where the walk goes first after the
	 * slot's own step: its index is in the slot's counter, which the
	 * update reads at once anyway, so it costs no lookup.  And where a
	 * slot off its updated tree will be linked (sim_rstat_updated()):
	 * its links and its parent's.  The stale pass overlaps their misses.
	 */
	if (parent != SIM_NONE)
		__builtin_prefetch(&s->ctr[parent]);
	if (!sp->on_tree) {
		__builtin_prefetch(&s->tree[slot]);
		if (parent != SIM_NONE)
			__builtin_prefetch(&s->tree[parent]);
	}
}


/*
 * The update of slot @slot's memcg, line @k, once the lookups are done and
 * the clock is set: what sim_update() and sim_update_apply() share.
 */
static inline __attribute__((always_inline))
int sim_update_slot(struct sim *s, uint64_t ts, int32_t slot, enum sim_item_kind kind,
		    uint32_t k, int64_t val, bool prepared, bool watch,
		    struct sim_step_out (*step)(const struct sim_step_in *in))
{
	/* what the counters see (memcg_rstat_updated()'s int val), once for both halves */
	uint32_t abs_val = sim_walk_abs(val);
	int ret;

	/* counters only: the walk's slots and nodes are few and stay in cache */
	if (!s->counters_only) {
		sim_path_prefetch(s, slot, prepared);
		ret = sim_stale_update(s, ts, slot, kind, k, val, abs_val, watch);
		if (ret)
			return ret;
	}
	if (abs_val)
		sim_walk_run(s, slot, abs_val, step == sim_policy_continue_step, step);
	if (watch && s->nr_wpend) {
		ret = sim_watch_look(s, k);
		if (ret)
			return ret;
	}
	return sim_lag_err_take(s);
}

static inline __attribute__((always_inline))
int sim_update_run(struct sim *s, uint64_t ts, unsigned int cpu, uint64_t id,
		   enum sim_item_kind kind, int item, int64_t val, bool watch,
		   struct sim_step_out (*step)(const struct sim_step_in *in))
{
	int32_t node, slot;
	int k;

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
	return sim_update_slot(s, ts, slot, kind, (uint32_t)k, val, false, watch, step);
}

/*
 * sim_update() of a prepared update (sim_update_prepare()): the handle
 * holds what the lookups would find, and nothing else, so what changed
 * since it was prepared is seen here as sim_update() would see it.
 */
static inline __attribute__((always_inline))
int sim_update_apply_run(struct sim *s, struct sim_prep h, uint64_t ts, int64_t val, bool watch,
			 struct sim_step_out (*step)(const struct sim_step_in *in))
{
	if (!val)
		return 0;
	sim_clock(s, ts);
	s->now = ts;
	s->cost.updates++;
	return sim_update_slot(s, ts, h.slot, h.kind, (uint32_t)h.line, val, true, watch, step);
}

/*
 * The update path once per table policy, its step inlined in the walk
 * (struct sim_policy.update and .apply), and once with the step through
 * the policy's pointer for a policy built elsewhere; each twice, for a
 * simulator without watched memcgs and one with (.update_watched and
 * .apply_watched, sim_watch()).  sim_update() calls the simulator's own
 * through one pointer: no test of the policy or of watching on the path.
 */
#define SIM_UPDATE_PAIR(name, apply, stepfn, watch)				\
	int name(struct sim *s, uint64_t ts, unsigned int cpu, uint64_t id,	\
		 enum sim_item_kind kind, int item, int64_t val)		\
	{									\
		return sim_update_run(s, ts, cpu, id, kind, item, val, watch, stepfn); \
	}									\
	int apply(struct sim *s, struct sim_prep h, uint64_t ts, int64_t val)	\
	{									\
		return sim_update_apply_run(s, h, ts, val, watch, stepfn);	\
	}
#define SIM_POLICY_UPDATE(name, stepfn)						\
	SIM_UPDATE_PAIR(name, name##_apply, stepfn, false)			\
	SIM_UPDATE_PAIR(name##_watched, name##_watched_apply, stepfn, true)

SIM_POLICY_UPDATE(sim_update_break, sim_policy_break_step)
SIM_POLICY_UPDATE(sim_update_continue, sim_policy_continue_step)
SIM_POLICY_UPDATE(sim_update_legacy, sim_policy_legacy_step)
SIM_POLICY_UPDATE(sim_update_generic, s->policy->step)

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
	return s->update(s, ts, cpu, id, kind, item, val);
}

/**
 * sim_update_prepare() - look up the next update and warm the caches for it
 * @s: the simulator
 * @cpu: as for sim_update()
 * @id: as for sim_update()
 * @kind: as for sim_update()
 * @item: as for sim_update()
 *
 * Asks for the slot's first two lines and the node's first line: the
 * apply needs those at once, so a caller that knows the next event asks
 * here while the simulator works on the one before.  Only those: the
 * path's lines as well cost more instructions than their misses
 * (replay_mem, 8-CPU fleet trace, break: 14.1 M events/s with these, 13.0 M
 * with the whole path).  Keeps what it finds, the slot of (@id, @cpu) and
 * the line of (@kind, @item), for sim_update_apply().  Changes nothing.
 * Ids past the flat table, lines past the direct table and what is not
 * known yet are not resolved (sim_prep_ok() false): sim_update() then.
 *
 * Return: the handle.
 */
/* A handle's slot and line as its first 8 bytes are in memory. */
static inline uint64_t sim_prep_pack(int32_t slot, int32_t line)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return (uint32_t)slot | (uint64_t)(uint32_t)line << 32;
#else
	return (uint32_t)line | (uint64_t)(uint32_t)slot << 32;
#endif
}

/*
 * sim_update_prepare()'s lookups, the slot and the line (SIM_NONE each
 * where not resolved) packed as the handle's first 8 bytes.  The handle is then
 * made from one 64-bit value: built field by field in the branches, GCC
 * 12 stored its halves to the stack and loaded them back as one, a store
 * forwarding stall at every prepared update.
 */
static inline __attribute__((always_inline))
uint64_t sim_prep_lookup(const struct sim *s, unsigned int cpu, uint64_t id,
			 enum sim_item_kind kind, int item)
{
	const uint64_t none = sim_prep_pack(SIM_NONE, SIM_NONE);
	int32_t node, slot;
	int16_t d;

	if (cpu >= s->nr_possible || id >= s->cap_id_direct || kind > SIM_ITEM_EVENT)
		return none;
	node = s->id_direct[id];
	if (node == SIM_NONE)
		return none;
	slot = sim_slot_find(s, node, cpu);
	if (slot == SIM_NONE)
		return none;
	__builtin_prefetch(&s->ctr[slot]);
	if (s->slots) {
		__builtin_prefetch(&s->slots[slot]);
		__builtin_prefetch((const char *)&s->slots[slot] + SIM_CACHELINE);
	}
	__builtin_prefetch(&s->nodes[node]);
	if ((unsigned int)item >= SIM_ITEM_DIRECT)
		return none;
	d = s->item_direct[kind == SIM_ITEM_EVENT][item];
	if (!d)
		return none;
	return sim_prep_pack(slot, d - 1);
}

struct sim_prep sim_update_prepare(const struct sim *s, unsigned int cpu, uint64_t id,
				   enum sim_item_kind kind, int item)
{
	uint64_t v = sim_prep_lookup(s, cpu, id, kind, item);
	struct sim_prep h;

	_Static_assert(offsetof(struct sim_prep, line) == sizeof(int32_t),
		       "slot and line are the handle's first 8 bytes");
	memcpy(&h, &v, sizeof(v));
	h.kind = kind;
	return h;
}

/**
 * sim_update_apply() - sim_update() of a prepared update
 * @s: the simulator that prepared @h
 * @h: sim_update_prepare() of this update's cpu, id, kind and item
 * @ts: as for sim_update()
 * @val: as for sim_update()
 *
 * Return: as sim_update(); -EINVAL for a handle that is not resolved.
 */
int sim_update_apply(struct sim *s, struct sim_prep h, uint64_t ts, int64_t val)
{
	if ((uint32_t)h.slot >= s->nr_slots)
		return -EINVAL;
	return s->apply(s, h, ts, val);
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
	int32_t node = sim_node_lookup(s, id);

	return node == SIM_NONE ? 0 : sim_stats_updates_at(s, node);
}
