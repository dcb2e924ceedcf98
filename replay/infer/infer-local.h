/* SPDX-License-Identifier: GPL-2.0 */
/*
 * infer-local.h - the inference's private layout, shared by replay/infer/ only.
 *
 * The trace has every update and every lock window, but not when inside the
 * window each visit happened.  The base simulator takes all the window's
 * visits at unlock (position 0 throughout the window).  A hypothesis is a
 * position p in the window's visit list (visits 0..p-1 done) and the counters
 * in which it differs from the base, as (key, value) entries; a key names the
 * atomic of a memcg or the per-CPU counter of (memcg, cpu).  A counter not
 * listed has the base's value, or 0 if the hypothesis already visited it
 * (virtual visits: moving p costs nothing for nodes nobody updated): its
 * virtual value.  The table is canonical: it lists exactly the counters
 * unlike their virtual value, every write drops an entry that comes back to
 * it, so two hypotheses with the same counters have the same entries.
 *
 * Where each concern lives:
 *   infer.c         lifecycle, the kernel's values pruning hypotheses, the order sink
 *   infer_hyp.c     one hypothesis: its counter table, copies, decision chain;
 *                   the decisions' free list
 *   infer_walk.c    an update: the ancestor path, branching, the policy's step per hypothesis
 *   infer_cap.c     cost against the spread model, merging twins, the cap and its budget,
 *                   the counters every table holds alike given to the base
 *   infer_cut.c     the branches the cap would drop, never made
 *   infer_window.c  the open lock window: visit list, visits, unlock and late updates,
 *                   the updates no hypothesis needs to take
 *   infer_lazy.c    between windows: which tables an update has to ask, the adds
 *                   they take alike with the base (pending)
 *   infer_dd.c      (infer_dd.h) a set of tuples as one hash-consed layered decision
 *                   diagram
 *   infer_ddwin.c   the hypotheses on that diagram, exact where the list is capped:
 *                   from the list, an update's branches and walks, a read, the
 *                   close, back to hypotheses; its budget
 *   infer_exact.c   the diagram beside the list: when it opens, is given up and
 *                   becomes the list again; only with in->dd (infer_set_exact())
 *                   and no order sink
 *   infer_ahead.c   the trace ahead: per-CPU counters no hypothesis can take
 *                   to a batch before their next reset, set back to the base's
 */
#ifndef MCR_REPLAY_INFER_LOCAL_H
#define MCR_REPLAY_INFER_LOCAL_H

#include "idmap.h"
#include "infer.h"

#define INF_CPU_BITS	14			/* REPLAY_MAX_CPUS is 8192 */
#define INF_ATOMIC	((1u << INF_CPU_BITS) - 1)	/* the "cpu" of an atomic key */
#define INF_NONE	SIZE_MAX
#define INF_MAX_PATH	64
#define INF_LATE_NS	INFER_LATE_NS
/*
 * The deepest path whose entry slots a hypothesis keeps (pc_idx): deeper
 * ones are found entry by entry.  Compactions move whole hypotheses, so
 * their size is paid at every branching update.
 */
#define INF_PIN_NODES	16
/* Lazy mode's lists are made anew once they hold this many nodes beyond 4 per entry. */
#define INF_RELIST_SLACK	4096
/* Decisions a block of the free list holds (24 KiB). */
#define INF_DEC_BLOCK	1024

/*
 * One branch decision: update @tag came after @p visits of its window.  A
 * window holds one per update per hypothesis at the cap's peaks: 24 bytes in
 * a block of the inference's free list (the order takes no @p above
 * UINT32_MAX anyway); a free one is linked through @up.
 * @sent: handed to the sink by infer_settle(), as is all it stands on.
 */
struct inf_dec {
	struct inf_dec	*up;
	uint64_t	tag;
	uint32_t	p;
	uint32_t	ref : 31;
	uint32_t	sent : 1;
};

/*
 * A hypothesis (in->h index) that may hold a key, the value its entry had
 * when listed (less the key's pend then, as entries are), and the key's next
 * one.  A table that changes the entry is listed again with the new value,
 * so its current value is always listed; a node whose value is no longer
 * the entry's (or whose entry went) is left, and asked for nothing.
 */
struct inf_own {
	uint32_t	hyp;
	uint32_t	next;	/* UINT32_MAX: the last */
	int64_t		val;
};

/*
 * Lazy mode (infer_lazy.c): a key some table holds.  Its holders' counters
 * are their entries plus @pend, the adds they took alike with the base's
 * and not yet written; @lo..@hi bound their entries' values.
 */
struct inf_kagg {
	uint64_t	key;
	int64_t		pend;
	int64_t		lo, hi;
	uint32_t	head;	/* in->own[], UINT32_MAX: none */
	bool		dirty;	/* in in->dirty: pend may not be 0 */
};

/* A counter as it was before a walk: its entry's value, or no entry. */
struct inf_undo {
	uint64_t	key;
	int64_t		val;
	bool		had;
};

/*
 * What a hypothesis's decisions in the open window say of the visits it has
 * still to make: those from w[i] on came after lo[i] (a time as
 * inf_branch_at() gives it), the latest entry that applies being the
 * bound; ascending in both, none for a visit before w[0] (the window's
 * start).  A decision "after visit v" at t says only that the path's next
 * visit came after t: the visits between commute with the update and may
 * have been made before it.  At most INF_FRONT entries: past that the
 * oldest goes, which only lowers a bound.
 */
#define INF_FRONT	2
struct inf_front {
	uint64_t	lo[INF_FRONT];
	uint32_t	w[INF_FRONT];
	uint32_t	n;
};

/* Hypothesis @k did not make its branches above the cut; how it was before its walk. */
struct inf_skip {
	size_t		k;
	uint64_t	cost;
	struct inf_front front;
	size_t		undo;	/* its path's counters: in->undo[undo..] */
	uint64_t	make;	/* the unmade branches to make after all (inf_cut_settle()) */
};

/* An unmade branch: the i-th of in->skip[skip]; its group's slot in in->gslot (inf_cut_settle()). */
struct inf_cref {
	uint32_t	skip;
	uint32_t	i;
	uint32_t	slot;
};

/* A hypothesis (or an unmade branch) as the cap's order ranks it (infer_cap.c, infer_cut.c). */
struct inf_sort_key {
	uint64_t	hash;
	uint64_t	cost;
	uint32_t	idx;
};

struct inf_hyp {
	size_t		p;
	uint64_t	hash;		/* of (p, entries), set by inf_compact() */
	uint64_t	ehash;		/* sum of inf_mix() over the entries */
	uint64_t	cost;		/* distance from the spread model, 1/1024 visits */
	struct inf_front front;		/* its decisions' bounds on its visits to come */
	uint64_t	useq;		/* lazy: the update (in->useq) that last asked it */
	struct inf_dec	*d;		/* newest decision; NULL without a sink */
	struct idmap	e;		/* key -> counter value, where it differs from the base */
	/*
	 * Where the entries of the last walked path sit (UINT32_MAX: absent),
	 * valid while pc_gen == e.gen
	 */
	uint32_t	pc_gen;
	uint32_t	pc_cpu;
	size_t		pc_n;
	uint64_t	pc_id;
	uint32_t	pc_idx[2 * INF_PIN_NODES];
};

/*
 * An update's ancestor path (infer_walk.c), with the base's counters before the update
 * (base) and after its walk (post, atomic then per-CPU of each node), and how
 * many nodes that walk steps (reach).
 */
struct inf_path {
	uint64_t	id[INF_MAX_PATH];
	int32_t		nd[INF_MAX_PATH];	/* its node handle, negative if none */
	size_t		vis[INF_MAX_PATH];	/* list index of its visit, INF_NONE */
	int64_t		base[2 * INF_MAX_PATH];
	int64_t		post[2 * INF_MAX_PATH];
	size_t		n;
	size_t		reach;
	bool		cut;		/* deeper than INF_MAX_PATH: the base walks further */
	bool		partial;	/* only the nodes to reach: inf_path_complete() adds the rest */
	bool		added;		/* its memcg was unknown: the base attached it under the root */
	uint64_t	th;
	uint32_t	abs_val;
	unsigned int	cpu;
};


/*
 * infer_ahead.c: an event still to come on one CPU, as the lookahead logged
 * it (an update made on it, a lock window flushing its per-CPU trees).
 */
enum { INF_AREC_UPDATE, INF_AREC_LOCKED, INF_AREC_UNLOCK };
struct inf_arec {
	uint64_t	at;	/* its place in the trace (struct infer_ahead) */
	uint64_t	ts;
	uint64_t	id;	/* the update's memcg; the window's flushed cgroup */
	uint32_t	val;	/* an update's abs(val) */
	uint8_t		kind;
};

/* One CPU's events still to come, [head, n) of r. */
struct inf_alog {
	struct inf_arec	*r;
	size_t		head, n, cap;
};

struct infer {
	struct sim		*s;
	const struct sim_policy	*pol;		/* whose step the hypotheses' walks apply */
	unsigned int		nr_possible;
	unsigned int		max_hyp;
	unsigned int		cap;		/* the cap now: max_hyp, or halved down to the floor (inf_budget) */
	uint64_t		sat_work;	/* hypothesis walks since the count last fit the floor */
	uint64_t		lowered;	/* times the cap was halved (inf_budget()) */
	unsigned int		patience;	/* INF_SAT_BUDGET times this before each halving */
	uint64_t		missed;		/* checks no order explained, the cap having dropped some */
	bool			syncing;	/* infer_set_syncing(): orders decide from here on */
	bool			synced;		/* infer_set_synced(): misses count from here on */
	uint64_t		checks;		/* infer_check() calls */
	uint64_t		*miss_at;	/* [missed]: the checks (0: the first) that missed */
	size_t			cap_miss_at;
	uint64_t		*work_at;	/* [checks]: infer_work() at each check */
	size_t			cap_work_at;
	uint64_t		walks;		/* hypothesis walks, all told (inf_budget()) */
	struct inf_hyp		*h;
	size_t			nr_h, cap_h;
	struct inf_sort_key	*keys;
	size_t			cap_keys;
	uint64_t		max_kept;
	uint64_t		max_held;	/* after an update's branches, before the merge and the cap */
	uint64_t		cut_ranked;	/* updates whose cut the candidates' ranks set (inf_cut()) */
	uint64_t		quiet;		/* updates since creation: full normalization cadence */
	uint64_t		capped;		/* hypotheses the cap dropped */
	uint64_t		consensus_keys;	/* counters all held alike, given to the base */
	struct idmap_ent	*cons;		/* scratch: those counters (inf_consensus()) */
	size_t			cap_cons;
	bool			no_consensus;	/* keep them (tests hold a diagram against the base) */
	/*
	 * The update being taken in a window (infer_walk.c): the branches
	 * the cap would drop are not made (skip), each hypothesis that had
	 * some keeps what its walk overwrote (undo) so that they can be
	 * made after all; costs is scratch space for the cut.
	 */
	struct inf_skip		*skip;
	size_t			nr_skip, cap_skip;
	uint64_t		unmade;		/* the branches not made */
	uint64_t		unmade_total;	/* so far, after inf_cut_settle() */
	bool			no_cut;		/* make every branch (tests compare) */
	struct inf_undo		*undo;
	size_t			nr_undo, cap_undo;
	uint64_t		*costs;
	size_t			cap_costs;
	struct inf_sort_key	*cand;		/* the hypotheses and the unmade branches, ranked */
	size_t			cap_cand;
	struct inf_cref		*cref;
	size_t			cap_cref;
	uint32_t		*gslot;		/* hash -> its group's first in cand */
	size_t			cap_gslot;
	struct inf_sort_key	*grp;		/* the groups */
	size_t			cap_grp;
	struct inf_sort_key	*gheap;		/* groups by their cheapest cost (inf_cut_settle()) */
	size_t			nr_gheap, cap_gheap;
	/*
	 * Lazy mode, between windows (infer_lazy.c): a hypothesis walks only
	 * where its own counters on the path differ from the base's.
	 */
	bool			lazy;
	/*
	 * Which tables may hold each key (a superset): key -> its ka[], whose
	 * head is the newest of its nodes in own[], each naming a hypothesis
	 * and the key's next node.
	 */
	struct idmap		owned;
	/*
	 * Lazy: nonzero at a node handle (sim_node_handle()) some key of
	 * owned names, so a path's node with 0 needs no lookup; own_any_node
	 * when a key's node had no handle: ask owned at every node.
	 */
	uint8_t			*own_node;
	size_t			cap_own_node;
	bool			own_any_node;
	struct inf_own		*own;
	size_t			nr_own, cap_own;
	size_t			nr_live;	/* nodes when last listed anew: as many as entries */
	size_t			relist_slack;	/* listed anew past 4 * nr_live + this (tests: 0) */
	uint64_t		relists;
	struct inf_kagg		*ka;
	size_t			nr_ka, cap_ka;
	uint32_t		*dirty;		/* ka[] with adds not yet written */
	size_t			nr_dirty, cap_dirty;
	bool			agg;		/* the step is the table's: bounds decide (inf_lazy_alike()) */
	uint64_t		lazy_alike;	/* lazy updates no hypothesis walked for */
	uint64_t		*lseen;		/* per hypothesis: the list it was last met in */
	size_t			cap_lseen;
	uint64_t		lseq;		/* lists inf_lazy_select() walked */
	uint64_t		lazy_listed;	/* list nodes it read */
	uint64_t		lazy_asked;	/* tables it asked */
	uint64_t		lazy_walked;	/* of them, those whose walk wrote */
	/*
	 * A table changed since the last compaction but by pending adds:
	 * without, a lazy compaction would find no twin and drop nothing.
	 */
	bool			changed;
	bool			stale;		/* a compaction skipped: the order is an older one */
	uint64_t		useq;		/* lazy updates: a hypothesis asked once per update */
	bool			owned_lost;	/* out of memory building it: ask every table */
	/*
	 * In a window: every key a table held at its start or took since (a
	 * superset of the keys held; none is ever dropped); wkeys_lost: out
	 * of memory, unknown.  An update none of whose path's counters is in
	 * it may need no hypothesis at all (inf_win_alike()).
	 */
	struct idmap		wkeys;		/* key -> the least value held */
	struct idmap		wkeys_hi;	/* key -> the greatest */
	bool			wkeys_lost;
	/*
	 * The update being taken in a window: which of its path's counters
	 * (inf_path_key() order) some table may hold, from wkeys once for
	 * all its hypotheses, and set as a walk gives a table one of them:
	 * the others need no lookup in any table (inf_path_find()).
	 */
	bool			pk_on;
	bool			pk_maybe[2 * INF_MAX_PATH];
	bool			no_pk;		/* every table looks every counter up (tests compare) */
	uint64_t		pk_masked;	/* window updates with a counter no table held */
	uint64_t		win_alike;	/* window updates no hypothesis walked for */
	bool			no_win_alike;	/* ask every hypothesis (tests compare) */
	/* the open window */
	bool			win;
	bool			closing;	/* unlock traced, late updates may still land */
	/*
	 * A lock that came while the open window was closing, not yet taken
	 * (infer_locked()): the closing window stays open for late updates
	 * whose paths the held window's visits do not touch.
	 */
	struct inf_held {
		uint64_t	ts, id, dur;
		unsigned int	cpu;
		bool		on;
	}			held;
	uint64_t		late_held;	/* late updates taken with a lock held */
	bool			reopening;	/* inf_open() closing the window before */
	unsigned int		wcpu;
	uint64_t		t0, dur;
	uint64_t		unlock_ts, last_ts;
	uint64_t		*list;		/* the visits, sim_window_peek() order */
	size_t			n_list, cap_list;
	struct idmap		list_idx;	/* id -> its index in list */
	infer_order_fn		order_fn;
	void			*order_ctx;
	/*
	 * With dd (infer_set_exact()) and without a sink, a window whose list
	 * the cap could cut holds its orders also as a diagram (infer_ddwin.c),
	 * exact, beside the list, until a close or a read leaves no more than
	 * the cap, or its budget runs out.
	 */
	struct inf_ddw		*ddw;
	bool			dd;
	uint64_t		dd_scale;	/* the diagrams' budget and limits times it, >= 1 */
	uint64_t		dd_switches;	/* diagrams opened */
	uint64_t		dd_max;		/* the most orders a diagram held at a close or read */
	uint64_t		dd_given_up;	/* diagrams dropped past their budget (inf_dd_give_up()) */
	uint64_t		dd_work;	/* map steps of the diagrams dropped so far */
	/*
	 * infer_set_exact_wide(): the steps spent while the budget was wide,
	 * which the budget no longer counts once it is narrow again
	 * (inf_ddw_left()); and what was spent when it widened.
	 */
	uint64_t		dd_forgiven;
	uint64_t		dd_wide_from;
	uint64_t		dd_narrow_scale;	/* 0: not wide */
	uint64_t		nr_upd;		/* updates taken since creation: the budget grows with them */
	uint64_t		dd_capped;	/* what the list's cap dropped beside the open diagram */
	/*
	 * The trace ahead (infer_ahead.c): each CPU's events from the next
	 * one fed up to ahead_at, at most INF_AHEAD_EVENTS on; ahead_end: to
	 * the trace's end.  canon, canon_pre: scratch, each per-CPU key held
	 * and the greatest value held (inf_canon_keys()).
	 */
	struct infer_ahead	ahead;
	struct inf_alog		*alog;		/* [nr_possible], NULL until first used */
	uint64_t		ahead_at;
	bool			ahead_end;
	bool			canon_always;	/* at every compaction, not only past the cap (tests) */
	uint64_t		canon_keys;	/* per-CPU counters found inert and set back */
	uint64_t		canon_runs;	/* compactions that set some back */
	uint64_t		canon_next;	/* no look before this event (infer_ahead.c) */
	uint64_t		canon_wait;
	struct idmap		canon, canon_pre;
	struct idmap		canon_memo;	/* key -> its verdict: inert until ts, or not until -done */
	/* decisions not in any chain (inf_dec_put()), and the blocks they all lie in */
	struct inf_dec		*dec_free;
	struct inf_dec		**dec_blk;
	size_t			nr_dec_blk, cap_dec_blk;
};

/*
 * Keys: the id above the cpu bits.  IDMAP_EMPTY would be an id whose low
 * 50 bits are all set with INF_ATOMIC: cgroup ids (inode numbers) are far
 * from that.
 */
static inline uint64_t inf_key(uint64_t id, unsigned int cpu)
{
	return (id << INF_CPU_BITS) | cpu;
}

static inline uint64_t inf_key_id(uint64_t key)
{
	return key >> INF_CPU_BITS;
}

static inline unsigned int inf_key_cpu(uint64_t key)
{
	return key & INF_ATOMIC;
}

/*
 * One entry's share of a hypothesis's hash.  The hash is a sum of these over
 * the canonical table, so it does not depend on slot order, and is kept
 * entry by entry.
 */
static inline uint64_t inf_mix(uint64_t key, int64_t val)
{
	uint64_t z = (key ^ ((uint64_t)val * 0xbf58476d1ce4e5b9ull)) + 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* @e takes @val, which differs from what @h would read without it; the hash follows. */
static inline void inf_ent_set(struct inf_hyp *h, struct idmap_ent *e, int64_t val)
{
	h->ehash += inf_mix(e->key, val) - inf_mix(e->key, e->val);
	e->val = val;
}

/*
 * Of the canonical table: a function of the position and of the counters
 * that differ from the base, nothing else.  Independent of slot order (a
 * sum), and of when entries came and went: none equal to the base is ever
 * left.
 */
static inline uint64_t inf_hash_of(size_t p, uint64_t ehash)
{
	return (p + 1) * 0x9e3779b97f4a7c15ull + ehash;
}

static inline uint64_t inf_hyp_hash(const struct inf_hyp *h)
{
	return inf_hash_of(h->p, h->ehash);
}

static inline struct idmap_ent *inf_find(const struct inf_hyp *h, uint64_t key)
{
	return idmap_find(&h->e, key);
}

/* Where @id's visit sits in the open window's list; INF_NONE if it has none. */
static inline size_t inf_list_idx(const struct infer *in, uint64_t id)
{
	int64_t v;

	if (!in->win)
		return INF_NONE;
	v = idmap_get(&in->list_idx, id, -1);
	return v < 0 ? INF_NONE : (size_t)v;
}

/* Where in the list the visit that resets @key is; INF_NONE if none does. */
static inline size_t inf_vis(const struct infer *in, uint64_t key)
{
	unsigned int cpu = inf_key_cpu(key);

	if (!in->win || (cpu != INF_ATOMIC && cpu != in->wcpu))
		return INF_NONE;
	return inf_list_idx(in, inf_key_id(key));
}

/* Counter @j of the path: the atomic of node j / 2 if j is even, else its per-CPU one */
static inline uint64_t inf_path_key(const struct inf_path *pa, size_t j, unsigned int cpu)
{
	return inf_key(pa->id[j / 2], j & 1 ? cpu : INF_ATOMIC);
}

/* infer_hyp.c */
int64_t inf_virtual(const struct infer *in, const struct inf_hyp *h, uint64_t key);
int64_t inf_get(const struct infer *in, const struct inf_hyp *h, uint64_t key);
int inf_put(struct inf_hyp *h, uint64_t key, int64_t val, int64_t virt);
void inf_ent_del(struct inf_hyp *h, uint64_t key);
int inf_hyp_copy(struct inf_hyp *dst, const struct inf_hyp *src);
int inf_grow(void *x, size_t *cap, size_t n, size_t size);
int inf_grow_zero(void *x, size_t *cap, size_t n, size_t size);
int inf_push(struct infer *in, struct inf_hyp *h);
void inf_hyp_free(struct infer *in, struct inf_hyp *h);
void inf_dec_put(struct infer *in, struct inf_dec *d);
int inf_dec_push(struct infer *in, struct inf_hyp *h, uint64_t tag);

/* infer_cap.c */
uint64_t inf_branch_at(const struct infer *in, uint64_t ts);
uint64_t inf_branch_costs(const struct infer *in, const struct inf_front *f, size_t p,
			  uint64_t cost, uint64_t at, const size_t *vis, size_t nv, uint64_t *c);
void inf_front_push(struct inf_front *f, uint64_t at, size_t w);
void inf_front_placed(struct inf_front *f, size_t p);
int inf_compact(struct infer *in, bool full);
/* The cap's order (infer_cap.c); the comparison is the tests' reference. */
int inf_cost_cmp(const void *a, const void *b, void *arg);
void inf_budget(struct infer *in, uint64_t unmade);

/* infer_walk.c */
int inf_path_build(struct infer *in, uint64_t ts, unsigned int cpu, uint64_t id,
		   uint32_t abs_val, struct inf_path *pa, bool *unheld);
void inf_path_complete(const struct infer *in, struct inf_path *pa);
int inf_walk(struct infer *in, struct inf_hyp *h, const struct inf_path *pa,
	     unsigned int cpu, struct inf_undo *undo);
int inf_walk_lazy(struct infer *in, struct inf_hyp *h, const struct inf_path *pa,
		  unsigned int cpu, const int64_t *pold, const int64_t *pend);
void inf_path_find(const struct infer *in, struct inf_hyp *h, const struct inf_path *pa,
		   unsigned int cpu, struct idmap_ent **ent);
/* @ent: @h's entries of the path (inf_path_find()), or NULL to look them up */
bool inf_path_same(const struct infer *in, const struct inf_hyp *h, const struct inf_path *pa,
		   unsigned int cpu, struct idmap_ent *const *ent);
size_t inf_branch_points(const struct inf_hyp *h, const struct inf_path *pa, size_t *vis);
bool inf_commutes(const struct infer *in, const struct inf_hyp *h, const struct inf_path *pa,
		  unsigned int cpu, struct idmap_ent *const *ent);
int inf_branches(struct infer *in, struct inf_hyp *src, bool take, const struct inf_path *pa,
		 unsigned int cpu, uint64_t ts, uint64_t tag, const size_t *vis, size_t nv,
		 uint64_t mask, const uint64_t *costs);
void inf_branch_hashes(const struct infer *in, const struct inf_hyp *h, const struct inf_undo *u,
		       const struct inf_path *pa, unsigned int cpu, const size_t *vis, size_t nv,
		       uint64_t mask, uint64_t *hash);

/* infer_cut.c */
void inf_keys_select(struct inf_sort_key *a, size_t n, size_t k);
int inf_cut(struct infer *in, const struct inf_path *pa, uint64_t ts, uint64_t *cut);
int inf_cut_settle(struct infer *in, const struct inf_path *pa, unsigned int cpu, uint64_t ts,
		   uint64_t tag, uint64_t cut);

/* infer_lazy.c */
void inf_lazy_begin(struct infer *in);
int inf_lazy_owned(struct infer *in);
int inf_lazy_own(struct infer *in, uint64_t key, size_t k, int64_t val);
bool inf_lazy_unheld(const struct infer *in, uint64_t id, unsigned int cpu, uint32_t abs_val);
bool inf_lazy_unheld_may(const struct infer *in);
bool inf_lazy_node_unowned(const struct infer *in, int32_t nd);
bool inf_lazy_alike(struct infer *in, const struct inf_path *pa, unsigned int cpu);
/* How inf_lazy_select() asks a table: inf_walk_lazy()'s contract. */
typedef int (*inf_ask_fn)(struct infer *in, struct inf_hyp *h, const struct inf_path *pa,
			  unsigned int cpu, const int64_t *pold, const int64_t *pend);
int inf_lazy_select(struct infer *in, const struct inf_path *pa, unsigned int cpu,
		    inf_ask_fn ask);
void inf_lazy_sync_path(struct infer *in, const struct inf_path *pa, unsigned int cpu);
void inf_lazy_sync(struct infer *in);
int inf_lazy_end(struct infer *in);

/* infer_window.c */
void inf_visit_upto(struct infer *in, struct inf_hyp *h, size_t upto);
int inf_close(struct infer *in);
void inf_win_key(struct infer *in, uint64_t key, int64_t val);
bool inf_win_alike(struct infer *in, const struct inf_path *pa, unsigned int cpu);
int inf_close_unless_late(struct infer *in, uint64_t ts, uint64_t t_min);
int inf_unhold(struct infer *in);
bool inf_late_past_held(struct infer *in, uint64_t ts, uint64_t t_min, unsigned int cpu,
			uint64_t id);

/* infer_ddwin.c */
struct inf_ddw;
/* A hypothesis of the diagram: its position and its @n entries. */
typedef int (*inf_ddw_fn)(void *ctx, size_t p, const uint64_t *keys, const int64_t *vals,
			  size_t n);
int inf_ddw_open(struct infer *in, struct inf_ddw **out);
void inf_ddw_free(struct inf_ddw *w);
int inf_ddw_count(struct inf_ddw *w, uint64_t *n);
int inf_ddw_enum(struct inf_ddw *w, inf_ddw_fn fn, void *ctx);
int inf_ddw_update(struct infer *in, struct inf_ddw *w, const struct inf_path *pa,
		   unsigned int cpu);
int inf_ddw_close(struct infer *in, struct inf_ddw *w);
int inf_ddw_check(struct infer *in, struct inf_ddw *w, uint64_t id, int64_t su, bool nf,
		  bool *su_ok, bool *nf_ok);
void inf_ddw_reopen(const struct infer *in, struct inf_ddw *w);
uint64_t inf_ddw_left(const struct infer *in, const struct inf_ddw *w);
uint64_t inf_ddw_work(const struct inf_ddw *w);
bool inf_ddw_fits(const struct infer *in);

/* infer_ahead.c */
/*
 * How far ahead of the event being fed the lookahead reads; the queue it
 * takes stays within 16 Ki events (0.9 MiB), its logs about as much.  A
 * flush period of a busy synthetic host (64 CPUs, 1 M updates/s: 51 ms) is
 * 51 Ki events: 63 Ki merged more there, but added 7.6 MiB to validate's
 * peak on a 2-CPU recording, 2.3 times a plain replay's.
 */
#define INF_AHEAD_EVENTS	(15u << 10)
int inf_canon(struct infer *in);
void inf_ahead_free(struct infer *in);

/* infer_exact.c: the diagram beside the list */
int inf_dd_switch(struct infer *in, const struct inf_path *pa);
int inf_dd_update(struct infer *in, const struct inf_path *pa, unsigned int cpu);
int inf_dd_give_up(struct infer *in, int ret);
int inf_dd_back(struct infer *in);
/*
 * The diagrams' budget, over the whole trace: map steps allowed at first,
 * and for each update (infer_update()) since; a diagram opens only with
 * INF_DD_OPEN_STEPS of it left.
 */
#define INF_DD_FIRST_STEPS	(1ull << 22)
#define INF_DD_STEPS		4
#define INF_DD_OPEN_STEPS	(1ull << 20)
/* The cap dropped @n hypotheses: they count unless an exact diagram is beside the list. */
static inline void inf_capped_add(struct infer *in, uint64_t n)
{
	if (in->ddw)
		in->dd_capped += n;
	else
		in->capped += n;
}

#endif
