/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sim-local.h - private layout of the simulator; only the files of sim/ and the sim
 * unit tests include it.
 *
 * Nodes live in one array in creation order, so a parent's index is always
 * smaller than its children's.  Per (memcg, cpu) state exists only for pairs
 * that occurred: a slot (struct sim_pcpu) is made the first time an update of
 * the memcg or one of its descendants runs on that CPU, together with the slots
 * of its ancestors on that CPU, and caches the parent's slot the way the kernel
 * caches parent_pcpu.  Slots and nodes are addressed by index because their
 * arrays grow with realloc().
 */
#ifndef MCR_SIM_LOCAL_H
#define MCR_SIM_LOCAL_H

#include <stddef.h>
#include <string.h>

#include "idmap.h"
#include "sim.h"

#define SIM_NONE	(-1)		/* no node / no slot */
#define SIM_CACHELINE	64		/* nodes and slots start on one: see sim_array_grow() */
#define SIM_TS_NONE	UINT64_MAX	/* no unflushed update */
#define SIM_KEY_EMPTY	IDMAP_EMPTY	/* the one id the maps cannot hold */

/*
 * Signed deltas of one slot not yet moved up by a visit: the first
 * SIM_SLOT_ITEMS in the slot itself (the update path's one cache line holds
 * their keys), the rest in a list of chunks from a pool shared by the whole
 * sim, so memory follows the (slot, item) pairs that are unflushed now, not
 * every pair that ever occurred.  The slot's own items are two chunks'
 * worth: a visit takes the deltas newest chunk first, as with the pool alone.
 * Items are dense indexes (sim_item_index()), not the traced (kind, item).
 */
#define SIM_CHUNK_ITEMS	8
#define SIM_SLOT_ITEMS	(2 * SIM_CHUNK_ITEMS)
#define SIM_ITEM_FREE	UINT16_MAX	/* unused key of a chunk */
#define SIM_ITEM_DIRECT	512		/* items below this skip the hash on the update path */
struct sim_chunk {
	uint16_t	k[SIM_CHUNK_ITEMS] __attribute__((aligned(16)));
	int64_t		d[SIM_CHUNK_ITEMS];
	int32_t		next;
	uint16_t	nr;
};

/*
 * One (memcg, cpu) pair: the kernel's memcg_vmstats_percpu (stats_updates)
 * plus css_rstat_cpu (the updated-tree links) plus what the staleness
 * accounting needs (deltas not yet moved up by a visit on this CPU).  The
 * first 64 bytes are what an update and the walk touch.
 */
struct __attribute__((aligned(SIM_CACHELINE))) sim_pcpu {
	uint64_t		unfl;		/* sum of |v| since the last visit (node, cpu) */
	uint64_t		unfl_since;	/* ts of the oldest of them, SIM_TS_NONE if none */
	uint16_t		k[SIM_SLOT_ITEMS] __attribute__((aligned(16))); /* SIM_ITEM_FREE: unused */
	int32_t			chunks;		/* the deltas past d[], newest chunk first */
	int32_t			node;
	int32_t			parent;		/* slot of (parent(node), cpu): parent_pcpu */
	uint32_t		stats_updates;	/* memcg_vmstats_percpu.stats_updates */
	/* the rest */
	int32_t			dirty_prev;	/* the node's slots with unfl > 0, */
	int32_t			dirty_next;	/* sorted by unfl_since */
	int32_t			updated_children; /* css_rstat_cpu.updated_children */
	int32_t			updated_next;	/* siblings on the parent's list */
	int32_t			updated_prev;
	uint32_t		cpu;
	uint16_t		nr;		/* items in k[] and d[] */
	bool			on_tree;	/* linked on this CPU's updated tree */
	int64_t			d[SIM_SLOT_ITEMS];
};

/*
 * Per (memcg, line): the signed missing value (truth - shown = -error) and
 * the visible error over time (sim/lag.c), side by side so the update path
 * touches one cache line per ancestor.
 */
struct sim_line {
	int64_t			miss;		/* signed missing, the line's unit */
	uint64_t		nf_at;		/* the node's sim_nf() when the line last changed */
	uint64_t		max_vis;	/* max |error| held for a positive non-flushable time */
	double			vis_area;	/* integral of |visible error|, unit * ns */
};

/* Per (memcg, line): what the reads of the memcg got; only for memcgs that are read. */
struct sim_item_reads {
	uint64_t		max_err;
	double			err_sum;
	uint64_t		wrong;
	uint64_t		max_age;
};

/*
 * One memcg.  The fields the update path touches at every ancestor come
 * first, in two cache lines; what visits, reads and episodes use follows.
 */
struct __attribute__((aligned(SIM_CACHELINE))) sim_node {
	/* update path, line 0 */
	int64_t			stats_updates;	/* memcg_vmstats.stats_updates (the atomic) */
	uint64_t		missing;	/* sum of |v| in the subtree not yet aggregated here */
	uint64_t		fresh;		/* of it, |(int)v| of updates since this node's last visit */
	uint64_t		oldest;		/* oldest ts counted in missing */
	struct sim_line		*lines;		/* by item index */
	uint32_t		cap_it;		/* length of lines and pend_it, 0 until needed */
	int32_t			parent;
	uint32_t		nr_flushable_desc; /* flushable strict descendants */
	bool			flushable;	/* stats_updates > TH, kept in sync */
	bool			stranded;
	bool			ep_scan;	/* the lines at the episode's start are not scanned yet */
	bool			removed;
	/* update path, line 1: time accounting, integrated up to last_ts */
	uint64_t		last_ts;
	uint64_t		max_missing;
	/*
	 * sum of each change of missing times its time, modulo 2^128:
	 * the integral of missing up to T is missing * T - it (sim_missing_area())
	 */
	unsigned __int128	missing_ts;
	uint64_t		stuck_ns;
	/* non-flushable time, integrated up to nf_last (sim/lag.c) */
	uint64_t		nf_ns;
	uint64_t		nf_last;
	uint64_t		ep_max_pending;
	/* visits */
	uint64_t		id;
	uint64_t		pendmag;	/* |v| handed up by children, waiting for a visit */
	uint64_t		pend_since;	/* oldest ts in pendmag */
	int64_t			*pend_it;	/* state_pending, signed, by item index */
	uint64_t		*pend_bits;	/* bit k: pend_it[k] was added to since the last visit */
	struct sim_item_reads	*read_it;	/* read errors, by item index; NULL until read */
	uint32_t		cap_read;	/* length of read_it */
	int32_t			first_child;
	int32_t			next_sibling;
	int32_t			dirty_head;	/* slot with the oldest unflushed update */
	int32_t			dirty_tail;
	uint32_t		level;
	uint64_t		first_ts;
	uint64_t		age_from;	/* last_ts when oldest last changed: sim_age_settle() */
	uint64_t		max_age_ns;
	/* stranded state and the open episode */
	uint64_t		strand_ns;	/* stranded time of ended episodes */
	uint64_t		ep_start;
	uint64_t		ep_skipped;
	uint64_t		ep_worst_abs;
	int64_t			ep_worst_err;
	uint64_t		episodes;	/* ended episodes that count */
	uint64_t		reads;
	uint64_t		stale_reads;
	uint64_t		reads_ended;
	uint64_t		max_read_age;
	int32_t			ep_worst_k;	/* item index, SIM_NONE if no line was wrong */
	bool			vis_listed;	/* on sim.visited */
};

struct sim {
	const struct sim_policy	*policy;
	/* policy->walk, or the step through its pointer for a policy without one */
	void			(*walk)(struct sim *s, int slot, unsigned int abs_val);
	unsigned int		nr_possible;
	unsigned int		nr_online;
	uint32_t		batch;		/* MEMCG_CHARGE_BATCH */
	uint32_t		th;		/* MEMCG_CHARGE_BATCH * num_online_cpus() */
	uint64_t		strand_th;	/* th + (MEMCG_CHARGE_BATCH - 1) * nr_online */

	struct sim_node		*nodes;
	uint32_t		nr_nodes;
	uint32_t		cap_nodes;
	/*
	 * [node * SIM_PATH + i]: the node's i-th ancestor (0: the parent), SIM_NONE
	 * past the root; a node deeper than SIM_PATH lists its nearest ones.  Only
	 * for prefetching: 32 bytes a node stay in cache where the nodes do not,
	 * and the walk's parent links are a chain of dependent misses.
	 */
	int32_t			*path;
	/*
	 * cgroup id -> node: ids below SIM_ID_DIRECT (cgroup ids are small
	 * counters) in the flat id_direct (SIM_NONE: unknown), one load on the
	 * update path; larger ones in ids.  id_direct grows to cover the
	 * largest small id seen.
	 */
	int32_t			*id_direct;
	uint32_t		cap_id_direct;
	struct idmap		ids;

	/* (kind, item) <-> dense item index; small items also directly (item_direct) */
	struct idmap		item_idx;
	uint64_t		*item_key;
	uint32_t		nr_items;
	uint32_t		cap_items;
	int16_t			item_direct[2][SIM_ITEM_DIRECT]; /* [STATE, EVENT][item]: index + 1, 0 none */

	struct sim_chunk	*chunks;
	uint32_t		nr_chunks;
	uint32_t		cap_chunks;
	int32_t			free_chunk;

	struct sim_pcpu		*slots;
	uint32_t		nr_slots;
	uint32_t		cap_slots;
	/*
	 * (node, cpu) -> slot, flat: [node * nr_possible + cpu], SIM_NONE where
	 * the pair never occurred; grows with the nodes.  An index, not a hash:
	 * the update path finds its slot with one load.
	 */
	int32_t			*slot_of;
	uint32_t		cap_slot_of;	/* nodes it covers */

	uint64_t		now;		/* ts of the update in progress */
	bool			clock_started;

	/* the one open flush window (the rstat lock is global per subsystem) */
	bool			win_open;
	unsigned int		win_cpu;
	int32_t			*win;		/* slots to visit, children before parents */
	size_t			win_len;
	size_t			win_pos;
	size_t			win_cap;

	struct sim_cost		cost;

	/* nodes visited since the last sim_visited_drain(), each once */
	int32_t			*visited;
	uint32_t		nr_visited;
	uint32_t		cap_visited;

	/* stranded episodes go here when they end */
	int			(*ep_fn)(const struct sim_episode *ep, void *ctx);
	void			*ep_ctx;
	int			ep_err;		/* first error @ep_fn returned, until taken */
};

/* items.c */
#define SIM_PEND_WORDS(cap)	(((cap) + 63) / 64)	/* words of sim_node.pend_bits */
int sim_item_index_new(struct sim *s, enum sim_item_kind kind, int item);
int sim_item_find(const struct sim *s, enum sim_item_kind kind, int item);
int sim_node_items_reserve(struct sim *s, struct sim_node *n);
int sim_slot_item_add_chunk(struct sim *s, struct sim_pcpu *sl, uint16_t k, int64_t d);
void sim_slot_items_move(struct sim *s, uint64_t ts, struct sim_pcpu *sl, struct sim_node *n,
			 struct sim_node *p);
void sim_items_destroy(struct sim *s);

typedef uint16_t sim_keys_v __attribute__((vector_size(16)));

/* Position of @kv's key among the 8 keys at @k, or -1: one vector compare. */
static inline int sim_keys_find(const uint16_t *k, sim_keys_v kv)
{
	sim_keys_v keys, eq;
	uint64_t half[2];

	memcpy(&keys, k, sizeof(keys));
	eq = (sim_keys_v)(keys == kv);
	memcpy(half, &eq, sizeof(half));
	if (half[0])
		return __builtin_ctzll(half[0]) / 16;
	if (half[1])
		return 4 + __builtin_ctzll(half[1]) / 16;
	return -1;
}

/*
 * Add @d to item @k of the slot's unflushed deltas: inline in the update
 * path for the slot's own keys.  A slot has chunks only once its own keys
 * are full (a visit empties both), so a key not among them goes in them
 * while there is room, and the chunks are searched only then.
 */
static inline int sim_slot_item_add(struct sim *s, struct sim_pcpu *sl, uint16_t k, int64_t d)
{
	sim_keys_v kv = (sim_keys_v){ 0 } + k;
	unsigned int j;
	int i;

	for (j = 0; j < SIM_SLOT_ITEMS; j += SIM_CHUNK_ITEMS) {
		i = sim_keys_find(&sl->k[j], kv);
		if (i >= 0) {
			sl->d[j + i] += d;
			return 0;
		}
	}
	if (sl->nr < SIM_SLOT_ITEMS) {
		sl->k[sl->nr] = k;
		sl->d[sl->nr] = d;
		sl->nr++;
		return 0;
	}
	return sim_slot_item_add_chunk(s, sl, k, d);
}

/* LRUVEC and STATE updates of one idx are one line of memory.stat (see sim.h). */
static inline uint64_t sim_item_key(enum sim_item_kind kind, int item)
{
	if (kind == SIM_ITEM_LRUVEC)
		kind = SIM_ITEM_STATE;
	return ((uint64_t)kind << 32) | (uint32_t)item;
}

/*
 * The dense index of (@kind, @item), made on first sight; or -errno.  Every
 * item the kernel traces today has a direct entry (index + 1, 0: none yet),
 * so the update path reads one small array and calls nothing.
 */
static inline int sim_item_index(struct sim *s, enum sim_item_kind kind, int item)
{
	if (item >= 0 && item < SIM_ITEM_DIRECT) {
		int16_t d = s->item_direct[kind == SIM_ITEM_EVENT][item];

		if (d)
			return d - 1;
	}
	return sim_item_index_new(s, kind, item);
}

/* cgroup.c */
#define SIM_PATH	8		/* ancestors per node in sim.path */
#define SIM_ID_DIRECT	(1U << 16)	/* ids below this: sim.id_direct */
/* The node of cgroup @id, SIM_NONE if unknown: inline, the update path asks once per event. */
static inline int32_t sim_node_lookup(const struct sim *s, uint64_t id)
{
	if (id < s->cap_id_direct)
		return s->id_direct[id];
	return (int32_t)idmap_get(&s->ids, id, SIM_NONE);
}
int32_t sim_node_create(struct sim *s, uint64_t ts, uint64_t id, int32_t parent);

/* rstat.c */
static inline int32_t sim_slot_find(const struct sim *s, int32_t node, unsigned int cpu)
{
	return (uint32_t)node < s->cap_slot_of ?
	       s->slot_of[(size_t)node * s->nr_possible + cpu] : SIM_NONE;
}
int32_t sim_slot_get(struct sim *s, int32_t node, unsigned int cpu);
void sim_rstat_updated(struct sim *s, int32_t slot);
int sim_rstat_updated_list(struct sim *s, int32_t slot);

/* stale.c */
void sim_stale_touch(struct sim_node *n, uint64_t ts);
void sim_oldest_set(struct sim_node *n, uint64_t oldest);
void sim_dirty_unlink(struct sim *s, struct sim_node *n, struct sim_pcpu *sl);
int sim_stale_visit(struct sim *s, uint64_t ts, struct sim_pcpu *sl);
void sim_flushable_update(struct sim *s, struct sim_node *n, uint64_t ts);

/* lag.c */
void sim_lag_change(struct sim *s, struct sim_node *n, uint64_t ts);
void sim_lag_worst(struct sim *s, struct sim_node *n, uint32_t k);
void sim_lag_scan(struct sim *s, struct sim_node *n);
void sim_lag_flushable(struct sim_node *n, uint64_t ts);

/* The first error the episode sink returned since the last call, then 0. */
static inline int sim_lag_err_take(struct sim *s)
{
	int ret = s->ep_err;

	s->ep_err = 0;
	return ret;
}

static inline uint64_t sim_abs64(int64_t v)
{
	return v < 0 ? -(uint64_t)v : (uint64_t)v;
}

/* The node's non-flushable time up to @ts (earlier than the last change: up to it). */
static inline uint64_t sim_nf(const struct sim_node *n, uint64_t ts)
{
	return n->nf_ns + (!n->flushable && ts > n->nf_last ? ts - n->nf_last : 0);
}

/*
 * Bring line @k of @n up to @ts before its error changes: the error it held
 * since its last change was visible for the non-flushable time in between;
 * and the lines an episode started with, before the first of them changes.
 */
static inline void sim_line_touch(struct sim_line *a, uint64_t nf)
{
	if (nf > a->nf_at) {
		uint64_t e = sim_abs64(a->miss);

		a->vis_area += (double)e * (double)(nf - a->nf_at);
		if (e > a->max_vis)
			a->max_vis = e;
		a->nf_at = nf;
	}
}

static inline void sim_item_touch(struct sim *s, struct sim_node *n, uint32_t k, uint64_t ts)
{
	uint64_t nf = sim_nf(n, ts);

	if (n->ep_scan)
		sim_lag_scan(s, n);
	sim_line_touch(&n->lines[k], nf);
}

/*
 * @n's pending volume, flushable flag or the threshold changed at @ts: the
 * common case (nothing to do) stays inline on the update path.
 */
static inline void sim_lag_eval(struct sim *s, struct sim_node *n, uint64_t ts)
{
	bool st = !n->flushable && n->fresh > s->strand_th;

	if (st != n->stranded || (st && n->missing > n->ep_max_pending))
		sim_lag_change(s, n, ts);
}

/* After line @k of @n changed: the open episode's worst line. */
static inline void sim_item_changed(struct sim *s, struct sim_node *n, uint32_t k)
{
	if (n->stranded)
		sim_lag_worst(s, n, k);
}

/* flush.c */
int sim_visit(struct sim *s, uint64_t ts, int32_t slot);

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

/* update.c */
void sim_walk_generic(struct sim *s, int slot, unsigned int abs_val);

/* sim.c */
void sim_clock_start(struct sim *s, uint64_t ts);

/* The root is known from creation; its clock starts with the first ts seen. */
static inline void sim_clock(struct sim *s, uint64_t ts)
{
	if (!s->clock_started)
		sim_clock_start(s, ts);
}
void *sim_array_grow(void *old, size_t old_size, size_t new_size);

/* for tests: the per-CPU counter of (@id, @cpu), 0 where the pair never occurred */
uint32_t sim_pcpu_get(const struct sim *s, uint64_t id, unsigned int cpu);

static inline struct sim_node *sim_parent(struct sim *s, const struct sim_node *n)
{
	return n->parent == SIM_NONE ? NULL : &s->nodes[n->parent];
}

/*
 * Flushable and not stranded, the state of most nodes at most updates
 * (stale_add()'s calm case): the two flags are adjacent bytes, tested with
 * one load and compare instead of two of each, at every ancestor.
 */
_Static_assert(offsetof(struct sim_node, stranded) == offsetof(struct sim_node, flushable) + 1,
	       "sim_node_calm() reads flushable and stranded as one 16-bit value");
static inline bool sim_node_calm(const struct sim_node *n)
{
	static const struct { bool flushable, stranded; } calm = { true, false };
	uint16_t v, c;

	memcpy(&v, &n->flushable, sizeof(v));
	memcpy(&c, &calm, sizeof(c));
	return v == c;
}

static inline bool sim_node_stuck(const struct sim_node *n)
{
	return !n->flushable && n->missing && n->nr_flushable_desc;
}

/*
 * Bring @n's clock up to @ts (out-of-order ts leave it) and integrate its
 * stuck time; @flushable: the caller knows @n is, so it is not stuck.
 * Inline in the update loop, where it runs at every ancestor.  The integral
 * of missing needs nothing here: each change of missing adds its own term
 * at the clock's time (sim_missing_change()).  The largest age is not looked
 * at here either, but where oldest changes (sim_age_settle()).
 */
static inline __attribute__((always_inline))
void sim_stale_touch_at(struct sim_node *n, uint64_t ts, bool flushable)
{
	if (ts <= n->last_ts)
		return;
	if (!flushable && sim_node_stuck(n))
		n->stuck_ns += ts - n->last_ts;
	n->last_ts = ts;
}

/*
 * missing grows (@add) or drops by @v at the node's clock, last_ts: from
 * then on the integral grows by v per ns more or less, so it is
 * sum(+-v_i * (T - t_i)) = missing * T - sum(+-v_i * t_i).  Exact in
 * unsigned 128-bit arithmetic: the terms wrap, the result (below
 * 2^64 * 2^64) does not.  The double the additions at every touch gave
 * rounded at each of them; this rounds once, when read.
 */
static inline __attribute__((always_inline))
void sim_missing_change(struct sim_node *n, uint64_t v, bool add)
{
	unsigned __int128 term = (unsigned __int128)v * n->last_ts;

	if (add) {
		n->missing += v;
		n->missing_ts += term;
	} else {
		n->missing -= v;
		n->missing_ts -= term;
	}
}

#endif
