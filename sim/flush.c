// SPDX-License-Identifier: GPL-2.0
/*
 * flush.c - the flush path: __mem_cgroup_flush_stats() deciding, and
 * css_rstat_flush() walking every possible CPU's updated list, one window per
 * CPU, with mem_cgroup_css_rstat_flush() as the visit.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rstat.h"
#include "stale.h"

/*
 * mem_cgroup_css_rstat_flush(css, cpu): aggregate, then the remote
 * WRITE_ONCE(stats_updates, 0) and the store of 0 into a non-zero atomic;
 * a store, not a subtraction, so concurrent credit is lost.
 */
/* List @n for sim_visited_drain(). */
static int sim_visited_add(struct sim *s, struct sim_node *n, int32_t idx)
{
	if (n->vis_listed)
		return 0;
	if (s->nr_visited == s->cap_visited) {
		uint32_t cap = s->cap_visited ? s->cap_visited * 2 : 64;
		int32_t *v = realloc(s->visited, sizeof(*v) * cap);

		if (!v)
			return -ENOMEM;
		s->visited = v;
		s->cap_visited = cap;
	}
	s->visited[s->nr_visited++] = idx;
	n->vis_listed = true;
	return 0;
}

int sim_visited_drain(struct sim *s, int (*fn)(uint64_t id, void *ctx), void *ctx)
{
	uint32_t i;
	int ret = 0;

	/* replay drains after every event; most events visit nothing */
	if (!s->nr_visited)
		return 0;
	for (i = 0; i < s->nr_visited; i++) {
		struct sim_node *n = &s->nodes[s->visited[i]];

		ret = fn(n->id, ctx);
		if (ret)
			break;
		n->vis_listed = false;
	}
	/* what @fn did not see yet stays, in order */
	if (i && i < s->nr_visited)
		memmove(s->visited, s->visited + i, sizeof(*s->visited) * (s->nr_visited - i));
	s->nr_visited -= i;
	return ret;
}

/* always_inline: once in the window's loop (sim_window_next()), once for an explicit visit */
static inline __attribute__((always_inline))
int sim_visit(struct sim *s, uint64_t ts, int32_t slot)
{
	struct sim_ctr *sc = &s->ctr[slot];
	struct sim_node *n = &s->nodes[sc->node];
	int ret;

	ret = sim_visited_add(s, n, sc->node);
	if (ret)
		return ret;
	sim_lazy_sync(s, ts);
	s->cost.visits++;
	ret = s->counters_only ? 0 : sim_stale_visit(s, ts, slot);
	sc->stats_updates = 0;
	if (n->stats_updates) {
		n->stats_updates = 0;
		s->cost.atomic_resets++;
		sim_flushable_update(s, n, ts);
	}
	sim_lag_eval(s, n, ts);
	if (!ret)
		ret = sim_lag_err_take(s);
	return ret;
}

/*
 * A flush is in progress while a window is open or a flush_progress flush
 * is under way: the settled clock (sim_settled()) stops while one is.
 */
static void sim_flushing_update(struct sim *s, uint64_t ts)
{
	bool f = s->win_open || s->flush_progress;

	if (f == s->flushing)
		return;
	s->settled_ns = sim_settled(s, ts);
	if (ts > s->settled_last)
		s->settled_last = ts;
	s->flushing = f;
}

/**
 * sim_flush_progress_begin() - a flush that goes ahead starts
 * @s: the simulator
 * @ts: its request
 *
 * Until the matching sim_flush_progress_end(), visible states count as in
 * flush (sim.h).  Return: 0.
 */
int sim_flush_progress_begin(struct sim *s, uint64_t ts)
{
	sim_clock(s, ts);
	s->flush_progress++;
	sim_flushing_update(s, ts);
	return 0;
}

/**
 * sim_flush_progress_end() - the flush begun by sim_flush_progress_begin() is over
 * @s: the simulator
 * @ts: the end of its last window
 *
 * Return: 0, -EINVAL without a flush begun.
 */
int sim_flush_progress_end(struct sim *s, uint64_t ts)
{
	if (!s->flush_progress)
		return -EINVAL;
	sim_clock(s, ts);
	s->flush_progress--;
	sim_flushing_update(s, ts);
	return 0;
}

/**
 * sim_flush_request() - __mem_cgroup_flush_stats(): flush or skip
 * @s: the simulator
 * @ts: when
 * @id: the memcg whose stats are read
 * @force: the caller's force flag
 *
 * Decides with the simulated atomic, never a traced one.
 * Return: 1 if the flush goes ahead, 0 if skipped, -ENOENT for an unknown id.
 */
int sim_flush_request(struct sim *s, uint64_t ts, uint64_t id, bool force)
{
	int32_t idx = sim_node_lookup(s, id);

	sim_clock(s, ts);
	if (idx == SIM_NONE)
		return -ENOENT;
	s->cost.flush_requests++;
	if (!force && !s->nodes[idx].flushable)
		return 0;
	s->cost.flushes++;
	return 1;
}

/**
 * sim_window_begin() - css_rstat_updated_list(css, cpu) under the lock
 * @s: the simulator
 * @ts: when the lock is taken
 * @id: root of the flushed subtree
 * @cpu: the CPU whose updated tree is processed
 *
 * Return: 0, -EBUSY if a window is open, -ENOENT for an unknown id, -EINVAL
 * for a CPU that is not possible, -ENOMEM.
 */
int sim_window_begin(struct sim *s, uint64_t ts, uint64_t id, unsigned int cpu)
{
	int32_t idx = sim_node_lookup(s, id);
	int32_t slot;
	int ret;

	if (s->win_open)
		return -EBUSY;
	if (cpu >= s->nr_possible)
		return -EINVAL;
	if (idx == SIM_NONE)
		return -ENOENT;
	sim_clock(s, ts);
	s->win_len = 0;
	s->win_pos = 0;
	slot = sim_slot_find(s, idx, cpu);
	if (slot != SIM_NONE) {
		ret = sim_rstat_updated_list(s, slot);
		if (ret)
			return ret;
	}
	s->win_open = true;
	s->win_cpu = cpu;
	sim_flushing_update(s, ts);
	return 0;
}

/*
 * sim_window_visit_next() in an open window: inline in sim_window_end()'s
 * loop, which visits most of the slots.
 */
static inline __attribute__((always_inline))
int sim_window_next(struct sim *s, uint64_t ts, uint64_t *id_out)
{
	int32_t slot;
	int ret;

	if (s->win_pos == s->win_len)
		return 0;
	sim_clock(s, ts);
	slot = s->win[s->win_pos++];
	/*
	 * The list is known: ask for the slot visited five after this one
	 * (both lines: its sums, then its deltas, which the visit moves), and
	 * for the node of the one three after, whose slot was asked for two
	 * visits ago: its index is there by now.  Their misses overlap the
	 * visits between.  Hints: they change nothing.  The bare simulators
	 * (replay_mem, 3 runs alternated, 8- and 32-CPU fleet traces) went
	 * 1.01-1.03 times as fast as with the slot two ahead and no node.
	 */
	if (s->win_pos + 4 < s->win_len) {
		int32_t next = s->win[s->win_pos + 4];

		__builtin_prefetch(&s->ctr[next]);
		if (s->slots) {
			__builtin_prefetch(&s->slots[next]);
			__builtin_prefetch((const char *)&s->slots[next] + SIM_CACHELINE);
		}
	}
	if (s->win_pos + 2 < s->win_len)
		__builtin_prefetch(&s->nodes[s->ctr[s->win[s->win_pos + 2]].node]);
	if (id_out)
		*id_out = s->nodes[s->ctr[slot].node].id;
	ret = sim_visit(s, ts, slot);
	return ret ? ret : 1;
}

/**
 * sim_window_visit_next() - visit the next memcg of the open window
 * @s: the simulator
 * @ts: when
 * @id_out: the memcg visited (may be NULL)
 *
 * Return: 1 after a visit, 0 when the list is done, -EINVAL without a window.
 */
int sim_window_visit_next(struct sim *s, uint64_t ts, uint64_t *id_out)
{
	if (!s->win_open)
		return -EINVAL;
	return sim_window_next(s, ts, id_out);
}

/**
 * sim_window_visit() - visit @id now, out of list order (an explicit visit event)
 * @s: the simulator
 * @ts: when
 * @id: the memcg
 *
 * Return: 0, -EINVAL without a window, -ENOENT if @id is not (any more) on the list.
 */
int sim_window_visit(struct sim *s, uint64_t ts, uint64_t id)
{
	int32_t idx = sim_node_lookup(s, id);
	size_t i;

	if (!s->win_open)
		return -EINVAL;
	if (idx == SIM_NONE)
		return -ENOENT;
	for (i = s->win_pos; i < s->win_len; i++) {
		int32_t slot = s->win[i];

		if (s->ctr[slot].node != idx)
			continue;
		memmove(&s->win[i], &s->win[i + 1], (s->win_len - i - 1) * sizeof(*s->win));
		s->win_len--;
		sim_clock(s, ts);
		return sim_visit(s, ts, slot);
	}
	return -ENOENT;
}

/**
 * sim_window_end() - visit what is left, in order, and release the lock
 * @s: the simulator
 * @ts: when
 *
 * Return: 0, -EINVAL without a window.
 */
int sim_window_end(struct sim *s, uint64_t ts)
{
	int ret;

	if (!s->win_open)
		return -EINVAL;
	while ((ret = sim_window_next(s, ts, NULL)) > 0)
		;
	s->win_open = false;
	s->win_len = 0;
	s->win_pos = 0;
	sim_flushing_update(s, ts);
	return ret;
}

bool sim_window_open(const struct sim *s)
{
	return s->win_open;
}

size_t sim_window_remaining(const struct sim *s)
{
	return s->win_open ? s->win_len - s->win_pos : 0;
}

/* The id of the @i-th visit left in the open window, 0 past the end. */
uint64_t sim_window_peek(const struct sim *s, size_t i)
{
	if (!s->win_open || i >= s->win_len - s->win_pos)
		return 0;
	return s->nodes[s->ctr[s->win[s->win_pos + i]].node].id;
}

int sim_window_state(const struct sim *s, uint64_t id)
{
	size_t i;

	if (!s->win_open)
		return -ENOENT;
	for (i = 0; i < s->win_len; i++)
		if (s->nodes[s->ctr[s->win[i]].node].id == id)
			return i >= s->win_pos;
	return -ENOENT;
}

/**
 * sim_flush() - a whole flush of subtree(@id) at one instant
 * @s: the simulator
 * @ts: when
 * @id: root of the flushed subtree
 *
 * Every possible CPU in ascending order, children before parents on each.
 * Return: 0, -EBUSY if a window is open, -ENOENT for an unknown id.
 */
int sim_flush(struct sim *s, uint64_t ts, uint64_t id)
{
	unsigned int cpu;
	int ret;

	if (s->win_open)
		return -EBUSY;
	if (sim_node_lookup(s, id) == SIM_NONE)
		return -ENOENT;
	for (cpu = 0; cpu < s->nr_possible; cpu++) {
		ret = sim_window_begin(s, ts, id, cpu);
		if (!ret)
			ret = sim_window_end(s, ts);
		if (ret)
			return ret;
	}
	return 0;
}
