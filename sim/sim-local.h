/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sim-local.h - private layout of the simulator, the bottom of sim/: the types,
 * and helpers that read or set their fields and call nothing of sim/.  Each
 * concern above it has a header of its own, included in this order (a file
 * includes only the headers below its own):
 *
 *	lag.h		the error a reader sees (lag.c)
 *	items.h		the signed per-item storage (items.c)
 *	stale.h		what a memcg misses, flushable and stuck (stale.c)
 *	cgroup.h	the hierarchy (cgroup.c)
 *	rstat.h		per-CPU slots and updated trees (rstat.c)
 *	policy.h	the ancestor walk and its policies (policy.c)
 *
 * update.c, flush.c, life.c, override.c and handle.c are the top: nothing
 * of sim/ calls them but through sim.h.  Only the files of sim/ and the sim
 * unit tests include these headers.
 *
 * Nodes live in one array in creation order, so a parent's index is always
 * smaller than its children's.  Per (memcg, cpu) state exists only for pairs
 * that occurred: a slot (its struct sim_ctr, and its struct sim_pcpu unless
 * counters only) is made the first time an update of the memcg or one of its
 * descendants runs on that CPU, together with the slots of its ancestors on
 * that CPU, and caches the parent's slot the way the kernel caches
 * parent_pcpu.  Slots and nodes are addressed by index because their arrays
 * grow.
 */
#ifndef MCR_SIM_LOCAL_H
#define MCR_SIM_LOCAL_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "idmap.h"
#include "sim.h"

#define SIM_NONE	(-1)		/* no node / no slot */
#define SIM_CACHELINE	64		/* nodes and slots start on one: see sim_array_grow() */
#define SIM_TS_NONE	UINT64_MAX	/* no unflushed update */
#define SIM_KEY_EMPTY	IDMAP_EMPTY	/* the one id the maps cannot hold */
#define SIM_PATH	8		/* ancestors per node in sim.path */
#define SIM_ID_DIRECT	(1U << 16)	/* ids below this: sim.id_direct */
#define SIM_PEND_WORDS(cap)	(((cap) + 63) / 64)	/* words of sim_node.pend_bits, owe_bits */

/*
 * Signed deltas of one slot not yet moved up by a visit: the first
 * SIM_SLOT_ITEMS in the slot itself (its first cache line holds their keys,
 * its second the deltas), the rest in a list of chunks from a pool shared
 * by the whole sim, so memory follows the (slot, item) pairs that are
 * unflushed now, not every pair that ever occurred.  The slot's own items
 * are one chunk's worth: a visit takes the deltas newest chunk first, as
 * with the pool alone.  Items are dense indexes (sim_item_index()), not the
 * traced (kind, item).
 */
#define SIM_CHUNK_ITEMS	8
#define SIM_SLOT_ITEMS	SIM_CHUNK_ITEMS	/* sim_slot_items_move() takes them as one chunk */
#define SIM_ITEM_FREE	UINT16_MAX	/* unused key of a chunk */
#define SIM_ITEM_DIRECT	512		/* items below this skip the hash on the update path */
struct sim_chunk {
	uint16_t	k[SIM_CHUNK_ITEMS] __attribute__((aligned(16)));
	int64_t		d[SIM_CHUNK_ITEMS];
	int32_t		next;
	uint16_t	nr;
};

/*
 * One (memcg, cpu) pair, in two arrays by the same slot index.  What the
 * ancestor walk reads and writes at every node, the kernel's
 * memcg_vmstats_percpu.stats_updates and the parent_pcpu link, is a
 * struct sim_ctr: 16 bytes, four to a cache line, so the walk's slots of
 * thousands of memcgs on tens of CPUs stay in a core's L2.  What only the
 * staleness accounting needs (the deltas not yet moved up by a visit on this
 * CPU) is a struct sim_pcpu of two cache lines: the first holds the item
 * keys and the dirty links, the second the deltas.  A counters-only
 * simulator (struct sim_params) has no sim_pcpu array at all.  Slots are the
 * largest part of a simulator (a memcg has one per CPU it was updated on), so
 * what only flushes need, the updated-tree links, is in sim.tree beside them.
 */
struct sim_ctr {
	uint32_t		stats_updates;	/* memcg_vmstats_percpu.stats_updates */
	int32_t			parent;		/* slot of (parent(node), cpu): parent_pcpu */
	int32_t			node;
	bool			on_tree;	/* linked on this CPU's updated tree */
};
_Static_assert(sizeof(struct sim_ctr) == 16, "four counters to a cache line");

struct __attribute__((aligned(SIM_CACHELINE))) sim_pcpu {
	uint64_t		unfl;		/* sum of |v| since the last visit (node, cpu) */
	uint64_t		unfl_since;	/* ts of the oldest of them, SIM_TS_NONE if none */
	uint16_t		k[SIM_SLOT_ITEMS] __attribute__((aligned(16))); /* SIM_ITEM_FREE: unused */
	int32_t			chunks;		/* the deltas past d[], newest chunk first */
	int32_t			dirty_prev;	/* the node's slots with unfl > 0, */
	int32_t			dirty_next;	/* sorted by unfl_since */
	uint16_t		nr;		/* items in k[] and d[] */
	int64_t			d[SIM_SLOT_ITEMS] __attribute__((aligned(SIM_CACHELINE)));
};
_Static_assert(sizeof(struct sim_pcpu) == 2 * SIM_CACHELINE, "a slot is two cache lines");

/* A slot's links on its CPU's updated tree (css_rstat_cpu), by slot index. */
struct sim_tree {
	int32_t			updated_children; /* css_rstat_cpu.updated_children */
	int32_t			updated_next;	/* siblings on the parent's list */
	int32_t			updated_prev;
};

/*
 * Per (memcg, line): the signed missing value (truth - shown = -error) and
 * the visible error over time (sim/lag.c), side by side so the update path
 * touches one cache line per ancestor.  The visible maximum is kept in two
 * halves: states held while no flush was in progress (settled) and the rest
 * (sim_flush_progress()); their larger is the maximum over all.
 */
struct sim_line {
	int64_t			miss;		/* signed missing, the line's unit */
	uint64_t		nf_at;		/* the node's sim_nf() when the line last changed */
	uint64_t		sn_at;		/* the node's sim_sn() then */
	uint64_t		max_settled;	/* max |error| held for a positive settled nf time */
	uint64_t		max_flush;	/* max |error| held for a positive in-flush nf time */
	double			vis_area;	/* integral of |visible error|, unit * ns */
};

/* The range of a watched line's visible error since it was last taken: lo > hi when empty. */
struct sim_range {
	int64_t			lo, hi;
};

/* A watched memcg's ranges, by item index (cap of them). */
struct sim_wnode {
	struct sim_range	*r;
	uint32_t		cap;
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
	/* the slots with unflushed deltas, oldest first: an update links its slot */
	int32_t			dirty_head;	/* slot with the oldest unflushed update */
	int32_t			dirty_tail;
	/* update path, line 1: time accounting, integrated up to last_ts */
	uint64_t		last_ts;
	uint64_t		max_missing;	/* settled at each drop: sim_max_missing() */
	/*
	 * sum of each change of missing times its time, modulo 2^128:
	 * the integral of missing up to T is missing * T - it (sim_missing_area())
	 */
	unsigned __int128	missing_ts;
	uint64_t		stuck_ns;
	/* non-flushable time, integrated up to nf_last (sim/lag.c) */
	uint64_t		nf_ns;
	uint64_t		nf_last;
	/* of it, the time no flush was in progress, up to nf_last: sim_sn() */
	uint64_t		sn_ns;
	/*
	 * Updates of the subtree not applied here yet, nor to any ancestor
	 * (stale.c, sim_lazy_settle()): their sums, the sum of each |v| times
	 * its ts, their first and last ts (SIM_TS_NONE: none) and, by item
	 * index, their signed sums (owe_it, each added to since the last
	 * settle with its bit in owe_bits).  Only a memcg that and whose
	 * ancestors are all calm holds any.
	 */
	unsigned __int128	owe_mts;
	uint64_t		owe_mag;
	uint64_t		owe_walk;
	uint64_t		owe_first;
	uint64_t		owe_last;
	int64_t			*owe_it;
	uint64_t		*owe_bits;
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
	uint32_t		level;
	uint64_t		first_ts;
	uint64_t		age_from;	/* last_ts when oldest last changed: sim_age_settle() */
	uint64_t		max_age_ns;
	uint64_t		sn_g;		/* sim_settled() at nf_last */
	/* stranded state and the open episode */
	uint64_t		ep_max_pending;
	uint64_t		strand_ns;	/* stranded time of ended episodes */
	uint64_t		ep_start;
	uint64_t		ep_skipped;
	uint64_t		ep_worst_abs;
	int64_t			ep_worst_err;
	uint64_t		episodes;	/* ended episodes that count */
	uint64_t		episodes_noticeable; /* of them, sim_episode_noticeable() */
	uint64_t		reads;
	uint64_t		stale_reads;
	uint64_t		reads_ended;
	uint64_t		max_read_age;
	int32_t			ep_worst_k;	/* item index, SIM_NONE if no line was wrong */
	bool			vis_listed;	/* on sim.visited */
};
_Static_assert(offsetof(struct sim_node, dirty_tail) < SIM_CACHELINE,
	       "an update links its slot to its node's slots by the node's first line");

struct sim {
	const struct sim_policy	*policy;
	/* policy->update, or the step through its pointer for a policy without one */
	int			(*update)(struct sim *s, uint64_t ts, unsigned int cpu, uint64_t id,
					  enum sim_item_kind kind, int item, int64_t val);
	/* policy->apply, as update */
	int			(*apply)(struct sim *s, struct sim_prep h, uint64_t ts, int64_t val);
	unsigned int		nr_possible;
	unsigned int		nr_online;
	uint32_t		batch;		/* MEMCG_CHARGE_BATCH */
	uint32_t		th;		/* MEMCG_CHARGE_BATCH * num_online_cpus() */
	uint64_t		strand_th;	/* th + (MEMCG_CHARGE_BATCH - 1) * nr_online */
	bool			counters_only;	/* struct sim_params: no staleness accounting */

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

	struct sim_ctr		*ctr;		/* [slot] */
	struct sim_pcpu		*slots;		/* [slot], NULL if counters_only */
	struct sim_tree		*tree;		/* [slot] */
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

	/*
	 * Lazy settling of calm ancestors (lag.c): calm_up[node] says the
	 * node and all its ancestors are calm (flushable, not stranded),
	 * kept beside the nodes so an update finds the calm top of its path
	 * without touching them; owe_dirty has a bit per node holding
	 * updates not applied yet (owe_any: one is set); ts_hi is the
	 * largest ts any call has brought a node's clock to, below which an
	 * update is not deferred.
	 */
	uint8_t			*calm_up;
	uint64_t		*owe_dirty;
	bool			owe_any;
	uint64_t		ts_hi;

	/*
	 * Time with no flush in progress (no window open, no sim_flush_progress()
	 * flush under way), integrated up to settled_last: sim_settled().
	 */
	uint64_t		settled_ns;
	uint64_t		settled_last;
	uint32_t		flush_progress;	/* flushes begun and not ended */
	bool			flushing;	/* win_open || flush_progress */

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

	/*
	 * Watched memcgs (watch.c, sim_watch()): after each update, the
	 * visible error of the line it changed (0 for every line, where the
	 * update made the memcg flushable), and after each event that visited
	 * one, every line's, widens the line's range until sim_range_take().
	 * watched[node] is nonzero for them and grows with the nodes once one
	 * is watched; watch_ids are ids watched before the simulator knew
	 * them.  The update's watched memcgs below its calm top that were
	 * not flushable wait in wpend until its walk is done (room for
	 * nr_watched).
	 */
	uint8_t			*watched;
	struct sim_wnode	*wn;		/* [node], beside watched */
	uint32_t		nr_watched;
	uint64_t		*watch_ids;
	uint32_t		nr_watch_ids;
	uint32_t		cap_watch_ids;
	int32_t			*wpend;
	uint32_t		nr_wpend;

	/* stranded episodes go here when they end */
	int			(*ep_fn)(const struct sim_episode *ep, void *ctx);
	void			*ep_ctx;
	int			ep_err;		/* first error @ep_fn returned, until taken */
};

/* The node of cgroup @id, SIM_NONE if unknown: inline, the update path asks once per event. */
static inline int32_t sim_node_lookup(const struct sim *s, uint64_t id)
{
	if (id < s->cap_id_direct)
		return s->id_direct[id];
	return (int32_t)idmap_get(&s->ids, id, SIM_NONE);
}

/* LRUVEC and STATE updates of one idx are one line of memory.stat (see sim.h). */
static inline uint64_t sim_item_key(enum sim_item_kind kind, int item)
{
	if (kind == SIM_ITEM_LRUVEC)
		kind = SIM_ITEM_STATE;
	return ((uint64_t)kind << 32) | (uint32_t)item;
}

/* The dense index of (@kind, @item), SIM_NONE if it never occurred. */
static inline int sim_item_find(const struct sim *s, enum sim_item_kind kind, int item)
{
	return (int32_t)idmap_get(&s->item_idx, sim_item_key(kind, item), SIM_NONE);
}

/* The time up to @ts during which no flush was in progress (flush.c). */
static inline uint64_t sim_settled(const struct sim *s, uint64_t ts)
{
	return s->settled_ns + (!s->flushing && ts > s->settled_last ? ts - s->settled_last : 0);
}

/* The root is known from creation; its clock starts with the first ts seen. */
static inline void sim_clock(struct sim *s, uint64_t ts)
{
	if (s->clock_started)
		return;
	s->clock_started = true;
	if (ts > s->ts_hi)
		s->ts_hi = ts;
	s->nodes[0].first_ts = ts;
	s->nodes[0].last_ts = ts;
	s->nodes[0].nf_last = ts;
	s->settled_last = ts;
	s->nodes[0].sn_g = sim_settled(s, ts);
}

/*
 * Grow an array of nodes, slots or counters, keeping the cache-line
 * alignment of their type (realloc() only keeps malloc's): the fields an
 * update touches at each ancestor are then in two lines of a node and one of
 * a slot, wherever the element lies.  @new_size is a multiple of
 * SIM_CACHELINE (the types' size).  From SIM_MAP_MIN on, the array is a
 * mapping of its own that grows with mremap(): the pages move, nothing is
 * copied, and the old and the new array are never both resident (a copy
 * doubled the slots' memory at the moment they grew, the peak of a replay at
 * 256 CPUs).  Free with sim_array_free() and the same size.
 */
#define SIM_MAP_MIN	(1u << 20)
#define SIM_MAP_ROUND	(1u << 16)	/* a multiple of any page size */

static inline size_t sim_map_len(size_t size)
{
	return (size + SIM_MAP_ROUND - 1) & ~(size_t)(SIM_MAP_ROUND - 1);
}

static inline void *sim_array_grow(void *old, size_t old_size, size_t new_size)
{
	void *p;

	if (old_size >= SIM_MAP_MIN) {
		p = mremap(old, sim_map_len(old_size), sim_map_len(new_size), MREMAP_MAYMOVE);
		return p == MAP_FAILED ? NULL : p;
	}
	if (new_size >= SIM_MAP_MIN) {
		p = mmap(NULL, sim_map_len(new_size), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
	} else {
		p = aligned_alloc(SIM_CACHELINE, new_size);
		if (!p)
			return NULL;
	}
	if (old)
		memcpy(p, old, old_size);
	free(old);
	return p;
}

static inline void sim_array_free(void *p, size_t size)
{
	if (!p)
		return;
	if (size >= SIM_MAP_MIN)
		munmap(p, sim_map_len(size));
	else
		free(p);
}

static inline struct sim_node *sim_parent(struct sim *s, const struct sim_node *n)
{
	return n->parent == SIM_NONE ? NULL : &s->nodes[n->parent];
}

/*
 * The largest missing so far.  missing only grows between two drops (a
 * visit of the node, sim_missing_change() with !add), so its maximum is
 * settled in max_missing right before each drop, and is the larger of the
 * two at any other time: the update path, which only adds, does not look.
 */
static inline uint64_t sim_max_missing(const struct sim_node *n)
{
	return n->missing > n->max_missing ? n->missing : n->max_missing;
}

static inline uint64_t sim_abs64(int64_t v)
{
	return v < 0 ? -(uint64_t)v : (uint64_t)v;
}

#endif
