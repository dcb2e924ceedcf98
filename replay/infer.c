// SPDX-License-Identifier: GPL-2.0
/*
 * infer.c - which order inside a lock window explains the kernel's values.
 *
 * The trace has every update and every lock window, but not when inside the
 * window each visit happened.  The base simulator takes all the window's
 * visits at unlock (position 0 throughout the window).  A hypothesis is a
 * position p in the window's visit list (visits 0..p-1 done) and the counters
 * in which it differs from the base, as (key, value) pairs; a key names the
 * atomic of a memcg or the per-CPU counter of (memcg, cpu).  A counter not
 * listed has the base's value, or 0 if the hypothesis already visited it
 * (virtual visits: moving p costs nothing for nodes nobody updated).
 *
 * An update in a window branches only on the remaining visits of its own
 * ancestor path: "before all of them", "after the first", ..., "after the
 * last"; every other visit commutes with it.  Identical hypotheses merge.
 *
 * Each hypothesis carries a cost: how far, in visits, its choices sit from
 * where the spread model would put each update, summed over its history (a
 * Viterbi path score).  Merging keeps the cheaper history; the cap keeps the
 * cheapest hypotheses, so the orders that are most plausible by timing are
 * the last to go, whatever the cap.
 *
 * With an order sink, every branch also records the position chosen, in a
 * chain shared between hypotheses; when one hypothesis is left (or at the
 * end, the cheapest) its chain is final and goes to the sink, oldest first.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "infer.h"

#define INF_CPU_BITS	14			/* REPLAY_MAX_CPUS is 8192 */
#define INF_ATOMIC	((1u << INF_CPU_BITS) - 1)	/* the "cpu" of an atomic key */
#define INF_NONE	SIZE_MAX
#define INF_MAX_PATH	64
#define INF_COMPACT_EVERY	255	/* updates between full normalizations, minus 1 */
/*
 * How long after a window's unlock an update's tracepoint may still report a
 * change made inside the window: the walk, the tracepoint's own cost, an
 * interrupt in between.  Measured gaps here were 11-300 ns.
 */
#define INF_LATE_NS		20000
#define INF_CAP_FLOOR		64
#define INF_SAT_BUDGET		(256ull << 20)	/* hypothesis walks: seconds */

struct inf_ent {
	uint64_t	key;
	int64_t		val;
};

/* One branch decision: update @tag came after @p visits of its window. */
struct inf_dec {
	struct inf_dec	*up;
	uint64_t	tag;
	size_t		p;
	uint32_t	ref;
};

struct inf_hyp {
	size_t		p;
	uint64_t	hash;		/* of (p, entries), set by inf_compact() */
	uint64_t	cost;		/* distance from the spread model, 1/1024 visits */
	uint64_t	t_last;		/* its last decision in the open window (or its start) */
	struct inf_dec	*d;		/* newest decision; NULL without a sink */
	struct inf_ent	*e;		/* table of size slots, n used */
	uint32_t	n, size;
	uint32_t	gen;		/* bumped whenever entries move */
	/* where the entries of the last walked path sit, valid while pc_gen == gen */
	uint32_t	pc_gen;
	uint32_t	pc_cpu;
	size_t		pc_n;
	uint64_t	pc_id;
	uint32_t	pc_idx[2 * INF_MAX_PATH];
};

/* id -> index in the window's list */
struct inf_slot {
	uint64_t	id;		/* 0: free */
	size_t		idx;
};

struct infer {
	struct sim		*s;
	bool			brk, legacy;	/* the policy step mirrored below */
	unsigned int		nr_possible;
	unsigned int		max_hyp;
	unsigned int		cap;		/* the cap now: max_hyp, or the floor (see inf_budget) */
	uint64_t		sat_work;	/* hypothesis walks since the count last fit the floor */
	uint64_t		lowered;	/* times the cap fell to the floor */
	struct inf_hyp		*h;
	size_t			nr_h, cap_h;
	uint64_t		max_kept;
	uint64_t		quiet;		/* updates since creation: full normalization cadence */
	uint64_t		capped;		/* hypotheses the cap dropped */
	/* the open window */
	bool			win;
	bool			closing;	/* unlock traced, late updates may still land */
	unsigned int		wcpu;
	uint64_t		t0, dur;
	uint64_t		unlock_ts, last_ts;
	uint64_t		*list;
	size_t			n_list, cap_list;
	struct inf_slot		*map;
	size_t			map_mask;
	infer_order_fn		order_fn;
	void			*order_ctx;
	int			order_err;
};

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

static size_t inf_hash(uint64_t id)
{
	return (size_t)(id * 0x9e3779b97f4a7c15ull >> 17);
}

static size_t inf_list_idx(const struct infer *in, uint64_t id)
{
	size_t i;

	if (!in->win || !in->map)
		return INF_NONE;
	for (i = inf_hash(id) & in->map_mask; in->map[i].id; i = (i + 1) & in->map_mask)
		if (in->map[i].id == id)
			return in->map[i].idx;
	return INF_NONE;
}

/* Where in the list the visit that resets @key is; INF_NONE if none does. */
static size_t inf_vis(const struct infer *in, uint64_t key)
{
	unsigned int cpu = inf_key_cpu(key);

	if (!in->win || (cpu != INF_ATOMIC && cpu != in->wcpu))
		return INF_NONE;
	return inf_list_idx(in, inf_key_id(key));
}

static int64_t inf_base(const struct infer *in, uint64_t key)
{
	unsigned int cpu = inf_key_cpu(key);

	if (cpu == INF_ATOMIC)
		return sim_stats_updates(in->s, inf_key_id(key));
	return sim_pcpu_stats_updates(in->s, inf_key_id(key), cpu);
}

/* What @h's counter @key would be without its own entry. */
static int64_t inf_virtual(const struct infer *in, const struct inf_hyp *h, uint64_t key)
{
	size_t v = inf_vis(in, key);

	return v != INF_NONE && v < h->p ? 0 : inf_base(in, key);
}

/*
 * Entries live in a small open-addressing table per hypothesis (key 0 is no
 * valid key: ids start at 1).  Slots only move when the table is rebuilt,
 * which bumps gen, so pinned slot numbers stay valid across inserts.
 */
static inline uint32_t inf_slot0(uint64_t key, uint32_t size)
{
	return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & (size - 1);
}

/* The slot holding @key, or the empty one where it would go; @h must have a table. */
static uint32_t inf_slot(const struct inf_hyp *h, uint64_t key)
{
	uint32_t i;

	for (i = inf_slot0(key, h->size); h->e[i].key && h->e[i].key != key; i = (i + 1) & (h->size - 1))
		;
	return i;
}

static struct inf_ent *inf_find(const struct inf_hyp *h, uint64_t key)
{
	uint32_t i;

	if (!h->n)
		return NULL;
	i = inf_slot(h, key);
	return h->e[i].key ? &h->e[i] : NULL;
}

static int64_t inf_get(const struct infer *in, const struct inf_hyp *h, uint64_t key)
{
	const struct inf_ent *e = inf_find(h, key);

	return e ? e->val : inf_virtual(in, h, key);
}

/* Into a fresh table of @size slots, keeping only entries @keep says yes to. */
static int inf_rebuild(const struct infer *in, struct inf_hyp *h, uint32_t size,
		       bool (*keep)(const struct infer *in, const struct inf_hyp *h,
				    const struct inf_ent *e))
{
	struct inf_ent *old = h->e, *ne = calloc(size, sizeof(*ne));
	uint32_t i, old_size = h->size;

	if (!ne)
		return -ENOMEM;
	h->e = ne;
	h->size = size;
	h->n = 0;
	for (i = 0; i < old_size; i++) {
		if (!old[i].key || (keep && !keep(in, h, &old[i])))
			continue;
		h->e[inf_slot(h, old[i].key)] = old[i];
		h->n++;
	}
	free(old);
	h->gen++;
	return 0;
}

static int inf_set(struct inf_hyp *h, uint64_t key, int64_t val)
{
	uint32_t i;
	int ret;

	if (2 * (h->n + 1) > h->size) {
		struct inf_ent *e = inf_find(h, key);

		if (e) {
			e->val = val;
			return 0;
		}
		ret = inf_rebuild(NULL, h, h->size ? 2 * h->size : 16, NULL);
		if (ret)
			return ret;
	}
	i = inf_slot(h, key);
	if (!h->e[i].key) {
		h->e[i].key = key;
		h->n++;
	}
	h->e[i].val = val;
	return 0;
}

static void inf_dec_put(struct inf_dec *d)
{
	while (d && !--d->ref) {
		struct inf_dec *up = d->up;

		free(d);
		d = up;
	}
}

static int inf_dec_push(struct infer *in, struct inf_hyp *h, uint64_t tag)
{
	struct inf_dec *d;

	if (!in->order_fn)
		return 0;
	d = malloc(sizeof(*d));
	if (!d)
		return -ENOMEM;
	*d = (struct inf_dec){ .up = h->d, .tag = tag, .p = h->p, .ref = 1 };
	h->d = d;	/* takes over h's reference to the old head */
	return 0;
}

static int inf_hyp_copy(struct inf_hyp *dst, const struct inf_hyp *src)
{
	*dst = (struct inf_hyp){ .p = src->p, .cost = src->cost, .t_last = src->t_last, .d = src->d,
				 .gen = 1 };
	if (dst->d)
		dst->d->ref++;
	if (!src->size)
		return 0;
	dst->e = malloc(src->size * sizeof(*dst->e));
	if (!dst->e)
		return -ENOMEM;
	memcpy(dst->e, src->e, src->size * sizeof(*dst->e));
	dst->n = src->n;
	dst->size = src->size;
	return 0;
}

static int inf_push(struct infer *in, struct inf_hyp *h)
{
	if (in->nr_h == in->cap_h) {
		size_t cap = in->cap_h ? in->cap_h * 2 : 16;
		struct inf_hyp *nh = realloc(in->h, cap * sizeof(*nh));

		if (!nh)
			return -ENOMEM;
		in->h = nh;
		in->cap_h = cap;
	}
	in->h[in->nr_h++] = *h;
	return 0;
}

static void inf_hyp_free(struct inf_hyp *h)
{
	free(h->e);
	h->e = NULL;
	h->n = h->size = 0;
	inf_dec_put(h->d);
	h->d = NULL;
}

struct infer *infer_create(const struct sim_policy *pol, unsigned int nr_possible,
			   unsigned int nr_online, unsigned int max_hyp)
{
	struct infer *in = calloc(1, sizeof(*in));
	struct inf_hyp h0 = { .gen = 1 };

	if (!in)
		return NULL;
	in->s = sim_create(pol, nr_possible, nr_online);
	in->brk = !strcmp(pol->name, "break");
	in->legacy = !strcmp(pol->name, "legacy");
	in->nr_possible = nr_possible;
	in->max_hyp = in->cap = max_hyp ? max_hyp : INFER_MAX_HYP_DEFAULT;
	if (!in->s || nr_possible >= INF_ATOMIC || inf_push(in, &h0) < 0) {
		infer_destroy(in);
		return NULL;
	}
	in->max_kept = 1;
	return in;
}

void infer_destroy(struct infer *in)
{
	size_t i;

	if (!in)
		return;
	for (i = 0; i < in->nr_h; i++)
		inf_hyp_free(&in->h[i]);
	free(in->h);
	free(in->list);
	free(in->map);
	sim_destroy(in->s);
	free(in);
}

struct sim *infer_base(struct infer *in)
{
	return in->s;
}

uint64_t infer_max_kept(const struct infer *in)
{
	return in->max_kept;
}

uint64_t infer_cap_lowered(const struct infer *in)
{
	return in->lowered;
}

uint64_t infer_capped(const struct infer *in)
{
	return in->capped;
}

size_t infer_nr_hyp(const struct infer *in)
{
	return in->nr_h;
}

static bool inf_trivial(const struct infer *in)
{
	return in->nr_h == 1 && !in->h[0].n && !in->h[0].p;
}

/*
 * memcg_rstat_updated()'s walk on one hypothesis.  A mirror of the policy
 * steps of sim/policy.c (break, continue, legacy), because those act on the
 * simulator's own nodes; tests/unit/test_infer.c checks that both agree.
 */
struct inf_path {
	uint64_t	id[INF_MAX_PATH];
	size_t		vis[INF_MAX_PATH];	/* list index of its visit, INF_NONE */
	int64_t		base_a[INF_MAX_PATH];	/* the base's counters before the update */
	int64_t		base_p[INF_MAX_PATH];
	size_t		n;
	int64_t		th;
};

/* The value of @h's counter of path node @i: its entry, 0 if visited, else the base. */
static int64_t inf_path_get(const struct infer *in, const struct inf_hyp *h,
			    const struct inf_path *pa, size_t i, bool atomic, unsigned int cpu)
{
	uint64_t key = inf_key(pa->id[i], atomic ? INF_ATOMIC : cpu);
	const struct inf_ent *e = inf_find(h, key);

	if (e)
		return e->val;
	if (pa->vis[i] != INF_NONE && pa->vis[i] < h->p && (atomic || cpu == in->wcpu))
		return 0;
	return atomic ? pa->base_a[i] : pa->base_p[i];
}

static bool inf_pinned(const struct inf_hyp *h, const struct inf_path *pa, unsigned int cpu)
{
	return h->pc_gen == h->gen && h->pc_id == pa->id[0] && h->pc_cpu == cpu && h->pc_n == pa->n;
}

/*
 * Give every counter of @pa an entry in @h and note where they sit, so that
 * the walk, and the next walks of the same path, read and write in place.
 * The base is about to take its own walk, which may touch counters this one
 * leaves alone: pinned values stay this hypothesis's own.
 */
static int inf_pin(struct infer *in, struct inf_hyp *h, const struct inf_path *pa, unsigned int cpu)
{
	size_t i;
	int ret;

	if (inf_pinned(h, pa, cpu))
		return 0;
	for (i = 0; i < pa->n; i++) {
		uint64_t ka = inf_key(pa->id[i], INF_ATOMIC), kp = inf_key(pa->id[i], cpu);

		if (!inf_find(h, ka)) {
			ret = inf_set(h, ka, inf_path_get(in, h, pa, i, true, cpu));
			if (ret)
				return ret;
		}
		if (!inf_find(h, kp)) {
			ret = inf_set(h, kp, inf_path_get(in, h, pa, i, false, cpu));
			if (ret)
				return ret;
		}
	}
	for (i = 0; i < pa->n; i++) {
		h->pc_idx[2 * i] = inf_slot(h, inf_key(pa->id[i], INF_ATOMIC));
		h->pc_idx[2 * i + 1] = inf_slot(h, inf_key(pa->id[i], cpu));
	}
	h->pc_gen = h->gen;
	h->pc_id = pa->id[0];
	h->pc_cpu = cpu;
	h->pc_n = pa->n;
	return 0;
}

static int inf_walk(struct infer *in, struct inf_hyp *h, const struct inf_path *pa,
		    unsigned int cpu, uint32_t a)
{
	int64_t th = pa->th;
	size_t i;
	int ret;

	ret = inf_pin(in, h, pa, cpu);
	if (ret)
		return ret;
	for (i = 0; i < pa->n; i++) {
		int64_t *at = &h->e[h->pc_idx[2 * i]].val, *pcpu = &h->e[h->pc_idx[2 * i + 1]].val;
		bool flushable = *at > th;
		uint32_t pc;

		if (flushable && in->brk)
			break;
		if (flushable && !in->legacy)
			continue;
		pc = (uint32_t)*pcpu + a;
		if (pc < SIM_CHARGE_BATCH) {
			*pcpu = pc;
		} else {
			*pcpu = 0;
			if (!flushable)
				*at += pc;
		}
	}
	return 0;
}

static bool inf_differs(const struct infer *in, const struct inf_hyp *h, const struct inf_ent *e)
{
	return e->val != inf_virtual(in, h, e->key);
}

/* Drop what equals the virtual value: a canonical form for merging. */
static int inf_normalize(struct infer *in, struct inf_hyp *h)
{
	uint32_t i, keep = 0;

	for (i = 0; i < h->size; i++)
		keep += h->e[i].key && inf_differs(in, h, &h->e[i]);
	if (keep == h->n)
		return 0;
	if (!keep) {
		free(h->e);
		h->e = NULL;
		h->n = h->size = 0;
		h->gen++;
		return 0;
	}
	return inf_rebuild(in, h, h->size, inf_differs);
}

/* Independent of slot order: the sum of each entry's mix. */
static uint64_t inf_hyp_hash(const struct inf_hyp *h)
{
	uint64_t x = (h->p + 1) * 0x9e3779b97f4a7c15ull;
	uint32_t i;

	for (i = 0; i < h->size; i++) {
		uint64_t z;

		if (!h->e[i].key)
			continue;
		z = (h->e[i].key ^ ((uint64_t)h->e[i].val * 0xbf58476d1ce4e5b9ull)) + 0x9e3779b97f4a7c15ull;
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		x += z ^ (z >> 31);
	}
	return x;
}

static bool inf_same(const struct inf_hyp *a, const struct inf_hyp *b)
{
	uint32_t i;

	if (a->hash != b->hash || a->p != b->p || a->n != b->n)
		return false;
	for (i = 0; i < a->size; i++) {
		const struct inf_ent *e;

		if (!a->e[i].key)
			continue;
		e = inf_find(b, a->e[i].key);
		if (!e || e->val != a->e[i].val)
			return false;
	}
	return true;
}

#define INF_COST_UNIT	1024

/*
 * Where the spread model puts an update at @ts, in 1/1024 visits: visit k is
 * due at (k + 1) units; UINT64_MAX when the window's length is unknown.
 */
static uint64_t inf_spread_x(const struct infer *in, uint64_t ts)
{
	unsigned __int128 x;

	if (!in->dur)
		return UINT64_MAX;
	if (ts <= in->t0)
		return 0;
	x = (unsigned __int128)(ts - in->t0) * (in->n_list + 1) * INF_COST_UNIT / in->dur;
	return x > (in->n_list + 1) * INF_COST_UNIT ? (in->n_list + 1) * INF_COST_UNIT : (uint64_t)x;
}

/*
 * The cost of placing visit @k somewhere in [@t_lo, @t_hi]: how far that
 * interval is from the spread model's time for it.  Charged once per visit
 * a decision places, not per update, so an order whose visits all run a
 * little late pays for each visit once, however many updates fall around it.
 */
static uint64_t inf_visit_cost(const struct infer *in, size_t k, uint64_t t_lo, uint64_t t_hi)
{
	uint64_t due = (k + 1) * INF_COST_UNIT, lo = inf_spread_x(in, t_lo), hi = inf_spread_x(in, t_hi);

	if (lo == UINT64_MAX)
		return 0;
	return due < lo ? lo - due : due > hi ? due - hi : 0;
}

/* By hash, then cost: the first of identical hypotheses has the cheapest history. */
static int inf_hash_cmp(const void *a, const void *b)
{
	const struct inf_hyp *x = a, *y = b;

	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return x->cost < y->cost ? -1 : x->cost > y->cost;
}

/* By cost; the hash makes the order, and so the run, deterministic. */
static int inf_cost_cmp(const void *a, const void *b)
{
	const struct inf_hyp *x = a, *y = b;

	if (x->cost != y->cost)
		return x->cost < y->cost ? -1 : 1;
	return x->hash < y->hash ? -1 : x->hash > y->hash;
}

/* Merge identical hypotheses, then keep the @cap cheapest. */
static void inf_compact(struct infer *in, bool full)
{
	size_t i, j, n = 0;
	uint64_t min_cost = UINT64_MAX;

	for (i = 0; i < in->nr_h; i++) {
		if (full && inf_normalize(in, &in->h[i]))
			full = false;	/* out of memory: merging only finds fewer twins */
		in->h[i].hash = inf_hyp_hash(&in->h[i]);
	}
	qsort(in->h, in->nr_h, sizeof(*in->h), inf_hash_cmp);
	for (i = 0; i < in->nr_h; i++) {
		for (j = n; j > 0 && in->h[j - 1].hash == in->h[i].hash; j--)
			if (inf_same(&in->h[j - 1], &in->h[i]))
				break;
		if (j > 0 && in->h[j - 1].hash == in->h[i].hash)
			inf_hyp_free(&in->h[i]);
		else
			in->h[n++] = in->h[i];
	}
	in->nr_h = n;
	if (n > in->cap) {
		qsort(in->h, n, sizeof(*in->h), inf_cost_cmp);
		for (i = in->cap; i < n; i++)
			inf_hyp_free(&in->h[i]);
		in->capped += n - in->cap;
		in->nr_h = in->cap;
	}
	/* only differences of cost matter: keep them small */
	for (i = 0; i < in->nr_h; i++)
		if (in->h[i].cost < min_cost)
			min_cost = in->h[i].cost;
	for (i = n = 0; i < in->nr_h; i++) {
		in->h[i].cost -= min_cost;
		in->h[n++] = in->h[i];
	}
	in->nr_h = n;
	if (in->nr_h > in->max_kept)
		in->max_kept = in->nr_h;
}

/* Visits p..upto of @h happen now: listed counters of those nodes become 0. */
static void inf_visit_upto(struct infer *in, struct inf_hyp *h, size_t upto)
{
	uint32_t i;

	for (i = 0; i < h->size; i++) {
		size_t v;

		if (!h->e[i].key)
			continue;
		v = inf_vis(in, h->e[i].key);

		if (v != INF_NONE && v >= h->p && v <= upto)
			h->e[i].val = 0;
	}
	h->p = upto + 1;
}

static int inf_close(struct infer *in);

/*
 * The cap's budget.  Most of the time a few hypotheses are alive; a long
 * flush with many updates inside (a root flush over the whole tree) makes
 * hundreds for a while, until the next reads prune them, and that is when a
 * large cap pays.  Some traces stay saturated for good (every window full
 * of updates to every level): there a large cap only multiplies the cost, so
 * after INF_SAT_BUDGET walks above the floor the cap falls to the floor until
 * the count is down to a quarter of it.
 */
static void inf_budget(struct infer *in)
{
	unsigned int floor = in->max_hyp < INF_CAP_FLOOR ? in->max_hyp : INF_CAP_FLOOR;

	/* hysteresis: a lowered cap keeps the count at the floor, so wait for it to shrink */
	if (in->nr_h <= (in->cap == in->max_hyp ? floor : floor / 4)) {
		in->sat_work = 0;
		in->cap = in->max_hyp;
		return;
	}
	in->sat_work += in->nr_h;
	if (in->sat_work > INF_SAT_BUDGET && in->cap != floor) {
		in->cap = floor;
		in->lowered++;
	}
}

/**
 * infer_update() - one traced update; see sim_update() for the arguments.
 */
int infer_update(struct infer *in, uint64_t ts, uint64_t t_min, unsigned int cpu, uint64_t id,
		 enum sim_item_kind kind, int item, int64_t val, uint64_t tag)
{
	struct inf_path pa;
	size_t vis[INF_MAX_PATH + 1], i, k, nr_old;
	int32_t wv = (int32_t)(uint32_t)(uint64_t)val;
	uint32_t a = wv < 0 ? -(uint32_t)wv : (uint32_t)wv;
	uint64_t x;
	int ret;

	/* late: traced after the unlock, but made after nothing else we saw on its CPU before it */
	if (in->closing && !(t_min < in->unlock_ts && ts - in->unlock_ts <= INF_LATE_NS)) {
		ret = inf_close(in);
		if (ret)
			return ret;
	}
	if (ts > in->last_ts)
		in->last_ts = ts;
	if (!val || !wv || (!in->win && inf_trivial(in)))
		return sim_update(in->s, ts, cpu, id, kind, item, val);
	if (!sim_cgroup_known(in->s, id)) {
		/* the base attaches it under the root; then the path is known */
		ret = sim_cgroup_add(in->s, ts, id, SIM_ROOT_ID);
		if (ret < 0 && ret != -EEXIST)
			return ret;
	}
	pa.n = 0;
	pa.th = (int64_t)sim_threshold(in->s);
	for (x = id; x && pa.n < INF_MAX_PATH; x = sim_cgroup_parent(in->s, x)) {
		pa.id[pa.n] = x;
		pa.vis[pa.n] = inf_list_idx(in, x);
		pa.base_a[pa.n] = sim_stats_updates(in->s, x);
		pa.base_p[pa.n] = sim_pcpu_stats_updates(in->s, x, cpu);
		pa.n++;
	}
	nr_old = in->nr_h;
	for (k = 0; k < nr_old; k++) {
		struct inf_hyp *h = &in->h[k];
		size_t nv = 0;

		/* a pinned path has entries: it may differ from the base */
		bool same = !inf_pinned(h, &pa, cpu);

		for (i = 0; i < pa.n; i++) {
			size_t v = pa.vis[i];

			if (v != INF_NONE && v >= h->p)
				vis[nv++] = v;
			if (v != INF_NONE && v < h->p)
				same = false;
			if (same && h->n && (inf_find(h, inf_key(pa.id[i], INF_ATOMIC)) ||
					     inf_find(h, inf_key(pa.id[i], cpu))))
				same = false;
		}
		if (!nv && same)
			continue;	/* its walk reads what the base's reads: the same */
		vis[nv] = in->n_list;	/* the end of the last branch's interval */
		/* branches "after vis[i]", ascending (children come first in the list) */
		for (i = 0; i < nv; i++) {
			struct inf_hyp b;

			ret = inf_hyp_copy(&b, &in->h[k]);
			if (!ret) {
				inf_visit_upto(in, &b, vis[i]);
				/* visit vis[i] came after this order's last decision, before ts */
				b.cost += inf_visit_cost(in, vis[i], b.t_last, ts);
				b.t_last = ts;
				ret = inf_dec_push(in, &b, tag);
			}
			if (!ret)
				ret = inf_walk(in, &b, &pa, cpu, a);
			if (!ret)
				ret = inf_push(in, &b);
			if (ret) {
				inf_hyp_free(&b);
				return ret;
			}
		}
		/* before all of them; in->h may have moved */
		h = &in->h[k];
		if (nv) {
			/* a visit still to come that was due is charged when it comes */
			h->t_last = ts;
			ret = inf_dec_push(in, h, tag);
			if (ret)
				return ret;
		}
		ret = inf_walk(in, h, &pa, cpu, a);
		if (ret)
			return ret;
	}
	ret = sim_update(in->s, ts, cpu, id, kind, item, val);
	if (ret)
		return ret;
	inf_budget(in);
	/*
	 * Entries equal to the base are only redundant: drop them now and
	 * then; after a branch, merge what is identical as it stands.
	 */
	if (!(++in->quiet & INF_COMPACT_EVERY))
		inf_compact(in, true);
	else if (in->nr_h != nr_old)
		inf_compact(in, false);
	return 0;
}

/**
 * infer_locked() - the kernel's window on @cpu for subtree(@id) opens.
 */
int infer_locked(struct infer *in, uint64_t ts, uint64_t id, unsigned int cpu, uint64_t dur)
{
	size_t i, n, cap;
	int ret;

	ret = inf_close(in);
	if (ret)
		return ret;
	ret = sim_window_begin(in->s, ts, id, cpu);
	if (ret)
		return ret;
	n = sim_window_remaining(in->s);
	if (n > in->cap_list) {
		uint64_t *l = realloc(in->list, n * sizeof(*l));

		if (!l)
			return -ENOMEM;
		in->list = l;
		in->cap_list = n;
	}
	for (cap = 16; cap < 2 * n; cap *= 2)
		;
	if (cap - 1 != in->map_mask || !in->map) {
		free(in->map);
		in->map = calloc(cap, sizeof(*in->map));
		if (!in->map)
			return -ENOMEM;
		in->map_mask = cap - 1;
	} else {
		memset(in->map, 0, cap * sizeof(*in->map));
	}
	for (i = 0; i < n; i++) {
		size_t j;

		in->list[i] = sim_window_peek(in->s, i);
		for (j = inf_hash(in->list[i]) & in->map_mask; in->map[j].id;
		     j = (j + 1) & in->map_mask)
			;
		in->map[j] = (struct inf_slot){ in->list[i], i };
	}
	in->n_list = n;
	in->win = true;
	in->closing = false;
	in->wcpu = cpu;
	in->t0 = in->last_ts = ts;
	in->dur = dur;
	for (i = 0; i < in->nr_h; i++) {
		in->h[i].p = 0;
		in->h[i].t_last = ts;
	}
	return 0;
}

/* The window is over: every hypothesis makes its remaining visits. */
static int inf_close(struct infer *in)
{
	size_t i;
	int ret;

	if (!in->win)
		return 0;
	for (i = 0; i < in->nr_h; i++)
		if (in->n_list)
			inf_visit_upto(in, &in->h[i], in->n_list - 1);
	ret = sim_window_end(in->s, in->last_ts > in->unlock_ts ? in->last_ts : in->unlock_ts);
	in->win = in->closing = false;
	for (i = 0; i < in->nr_h; i++)
		in->h[i].p = 0;
	inf_compact(in, true);
	return ret;
}

/**
 * infer_unlock() - the kernel traced the window's unlock.  A tracepoint fires
 * after the update it reports, so an update traced just after the unlock may
 * have been made inside the window: the window stays open for those (see
 * infer_update()) and closes at the first event that cannot be one.
 */
int infer_unlock(struct infer *in, uint64_t ts)
{
	if (!in->win)
		return 0;
	in->closing = true;
	in->unlock_ts = ts;
	return 0;
}

/**
 * infer_flush_all() - a window we cannot split (the 6.10-6.14 loop over every
 * CPU under one lock): every possible CPU's visits at once, in order.
 */
int infer_flush_all(struct infer *in, uint64_t ts, uint64_t id)
{
	unsigned int cpu;
	int ret;

	for (cpu = 0; cpu < in->nr_possible; cpu++) {
		ret = infer_locked(in, ts, id, cpu, 0);
		if (!ret)
			ret = infer_unlock(in, ts);
		if (!ret)
			ret = inf_close(in);
		if (ret)
			return ret;
	}
	return 0;
}

void infer_set_order_sink(struct infer *in, infer_order_fn fn, void *ctx)
{
	in->order_fn = fn;
	in->order_ctx = ctx;
}

/* @h's decisions are final: hand them to the sink, oldest first, and drop them. */
static int inf_emit(struct infer *in, struct inf_hyp *h)
{
	struct inf_dec *d, **v;
	size_t n = 0, i;
	int ret = 0;

	if (!h->d)
		return 0;
	for (d = h->d; d; d = d->up)
		n++;
	v = malloc(n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = n, d = h->d; d; d = d->up)
		v[--i] = d;
	for (i = 0; i < n && !ret; i++)
		ret = in->order_fn(in->order_ctx, v[i]->tag, v[i]->p);
	free(v);
	inf_dec_put(h->d);
	h->d = NULL;
	return ret;
}

/**
 * infer_finish() - the end of the trace: the cheapest hypothesis's decisions
 * go to the order sink.
 */
int infer_finish(struct infer *in, uint64_t ts)
{
	size_t i, best = 0;
	int ret;

	if (in->win && !in->closing)
		infer_unlock(in, ts);
	ret = inf_close(in);
	if (ret)
		return ret;
	for (i = 1; i < in->nr_h; i++)
		if (in->h[i].cost < in->h[best].cost)
			best = i;
	return in->nr_h ? inf_emit(in, &in->h[best]) : 0;
}

/* A lone hypothesis outside a window becomes the base. */
static int inf_fold(struct infer *in)
{
	struct inf_hyp *h = &in->h[0];
	uint32_t i;
	int ret = 0;

	if (in->nr_h != 1 || in->win)
		return 0;
	ret = inf_emit(in, h);
	h->cost = 0;
	for (i = 0; i < h->size && !ret; i++) {
		uint64_t id = inf_key_id(h->e[i].key);
		unsigned int cpu = inf_key_cpu(h->e[i].key);

		if (!h->e[i].key)
			continue;
		if (cpu == INF_ATOMIC)
			ret = sim_stats_updates_set(in->s, id, h->e[i].val);
		else
			ret = sim_pcpu_set(in->s, id, cpu, (uint32_t)h->e[i].val);
	}
	free(h->e);
	h->e = NULL;
	h->n = h->size = 0;
	h->gen++;
	return ret;
}

int infer_check(struct infer *in, uint64_t id, int64_t su, bool nf, bool *su_ok, bool *nf_ok)
{
	int64_t th = (int64_t)sim_threshold(in->s);
	uint64_t key = inf_key(id, INF_ATOMIC);
	size_t i, n = 0;
	int ret;

	if (in->closing) {
		ret = inf_close(in);
		if (ret)
			return ret;
	}

	*su_ok = *nf_ok = false;
	for (i = 0; i < in->nr_h; i++) {
		int64_t v = inf_get(in, &in->h[i], key);

		if ((v > th) == nf)
			*nf_ok = true;
		if (v == su)
			*su_ok = true;
	}
	if (!*su_ok) {
		/*
		 * Nothing explains it (the cap dropped the kernel's order, or the
		 * trace misses something): take the kernel's value, which is
		 * exact, so that one miss does not become many.
		 */
		for (i = 0; i < in->nr_h; i++) {
			ret = inf_set(&in->h[i], key, su);
			if (ret)
				return ret;
		}
		inf_compact(in, false);
		return 0;
	}
	for (i = 0; i < in->nr_h; i++) {
		if (inf_get(in, &in->h[i], key) == su)
			in->h[n++] = in->h[i];
		else
			inf_hyp_free(&in->h[i]);
	}
	in->nr_h = n;
	return inf_fold(in);
}
