// SPDX-License-Identifier: GPL-2.0
/*
 * infer_ddwin.c - the open window's hypotheses as one decision diagram
 * (infer_dd.h) instead of a list: the same states, each a tuple, twins one
 * by construction, nothing capped.
 *
 * Layer 0 is the position; each further layer a memcg, children before
 * parents (deepest first, then by id), so that an update's walk meets its
 * path's layers in its own order.  A memcg layer's value names an interned
 * set of that memcg's entries (infer-local.h: its atomic's and its per-CPU
 * counters' values where they differ from what the hypothesis would read
 * without them), 0 the empty set: a tuple is a hypothesis's (p, table),
 * canonical as the table is.  A memcg whose counters no tuple holds needs no
 * layer; one gets a layer (of one edge, the empty set) when an update's
 * path or a read first names it (inf_dd_embed()).
 *
 * Each operation is one memoized pass (inf_dd_map()) doing to every tuple
 * what the list does to each hypothesis:
 *   update   inf_hyp_update(): the branches "before all" and "after vis[i]"
 *            of the path's visits still to come, unless the update commutes
 *            with them (inf_commutes()), then inf_walk() on each; the
 *            position layer emits each branch's position, the memcg layers
 *            make the visits between the two positions, the walk's step
 *            and the commute test, the path's root layer drops a branch
 *            the commute test says the list does not make;
 *   check    infer_check(): keep the tuples whose atomic reads the traced
 *            value, or when none does, give every tuple that value;
 *   close    inf_close(): the visits left, then position 0.
 * The base simulator is the inference's, read, never changed.
 * tests/unit/test_infer_ddwin.c holds these against the list.
 *
 * Its budget (infer_exact.c gives a diagram up past it): map steps over
 * the trace (inf_ddw_left()), one map's steps, its live edges, its
 * interned sets; past any, an operation returns -E2BIG.
 *
 * What keeps an update cheap: most of a map's nodes come out as they were.
 * A per-CPU counter's value is stored less its pend, the adds every holder
 * took alike with the base, so a charge below the batch changes no stored
 * value of the holders it leaves below it.  A node's summary
 * (inf_dd_set_sum()) is a Bloom filter of the counters its tuples hold
 * below: an atomic's with its flushable side, a per-CPU counter's with the
 * bucket of its stored value; a node holding none that the update would
 * change otherwise than by a pend, reached with the walk where the base's
 * is, is its own image and is not walked (ddw_upd_keep()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "infer-local.h"
#include "infer_dd.h"

#define DDW_PBITS	28
#define DDW_BUCKET	16		/* a per-CPU counter's summary buckets (ddw_bucket()) */
#define DDW_GC_NODES	(1u << 16)	/* nodes made beyond the live ones before a copy */
#define DDW_GC_EDGES	(1u << 16)	/* edges made beyond the live ones before a copy (1 MiB) */
#define DDW_MAX_EDGES	(1u << 17)	/* live edges past which the diagram is given up (2 MiB) */
#define DDW_MAP_STEPS	(1u << 16)	/* steps past which one map gives the diagram up */
#define DDW_MAX_SETS	(1u << 16)	/* entry sets interned, past which it is given up */
#define DDW_MAX_ENTS	(1u << 18)	/* and their entries (4 MiB) */
#define DDW_PMASK	((1ull << DDW_PBITS) - 1)
#define DDW_ALIVE	(1ull << 56)	/* the branch's walk goes on */
#define DDW_CALIVE	(1ull << 57)	/* the commute test goes on */
#define DDW_CFAIL	(1ull << 58)	/* the update does not commute */

struct ddw_ent {
	uint32_t	cpu;	/* INF_ATOMIC, or the per-CPU counter's CPU */
	int64_t		val;
};

/*
 * An update's step at a memcg layer is a function of (layer, state, value)
 * alone, and the same triple meets many nodes: the image of each, for the
 * update being mapped (gen), in a table of DDW_SMEMO slots, the newest kept.
 */
#define DDW_SMEMO	(1u << 14)
struct ddw_smemo {
	uint64_t	state;
	int64_t		val, ov;
	uint64_t	os;
	uint32_t	layer, gen;
	int		nout;		/* 0 (the tuples dropped) or 1 */
};

struct inf_ddw {
	struct inf_dd	*dd;
	uint32_t	root;
	uint64_t	scale;		/* in->dd_scale: the limits below times it */
	/* memcg layer l (>= 1): ids[l - 1], its depth and its visit's list index */
	uint64_t	*ids;
	uint32_t	*depth;
	size_t		*vis;
	int32_t		*pidx;		/* in an update: its path index, -1 */
	bool		*held;		/* some tuple may hold an entry of it (a superset) */
	size_t		nr, cap;
	struct idmap	lidx;		/* memcg id -> its layer */
	size_t		gc_at;		/* nodes made past which the live ones are copied out */
	size_t		gc_edges;	/* or edges (a map copies a wide node whole) */
	/* interned entry sets: set v is ents[off[v] .. off[v] + len[v]), by cpu */
	struct ddw_ent	*ents;
	size_t		nr_ents, cap_ents;
	uint32_t	*off, *len;
	size_t		nr_sets, cap_sets;
	uint32_t	*ht;		/* set + 1, 0: a free slot */
	size_t		ht_mask;
	struct ddw_ent	*scr;		/* a set being changed */
	size_t		cap_scr;
	struct ddw_smemo *smemo;	/* NULL until the first update */
	uint32_t	sgen;
	uint64_t	work;		/* map steps (inf_dd_steps()) since it was opened */
	int64_t		th;		/* the flushable threshold (ddw_atomic_bit()) */
	/*
	 * Pends: per per-CPU counter, the adds every holder took alike with
	 * the base and that no stored value carries: a holder's counter is its
	 * stored value plus its pend (an atomic has none).  key -> pend.
	 */
	struct idmap	pend;
	bool		*pended;	/* per memcg layer: some counter of it has a pend */
};

/*
 * What is left of the diagrams' budget: INF_DD_FIRST_STEPS map steps, and
 * INF_DD_STEPS more for each update the inference took, over the whole
 * trace, times in->dd_scale (infer_set_exact()), less what every diagram
 * spent (@w's too, if open) but while it was wide (infer_set_exact_wide()).
 * A window whose diagram stays narrow costs a few steps an update; one whose orders
 * multiply faster than the reads prune them would cost ever more, and
 * stops at the budget.
 */
uint64_t inf_ddw_left(const struct infer *in, const struct inf_ddw *w)
{
	uint64_t allowed = in->dd_scale * (INF_DD_FIRST_STEPS + INF_DD_STEPS * in->nr_upd);
	uint64_t spent = in->dd_work + (w ? w->work : 0);

	/* an open diagram's steps may be among those forgiven: @w NULL then counts less */
	spent = spent > in->dd_forgiven ? spent - in->dd_forgiven : 0;

	return spent < allowed ? allowed - spent : 0;
}

/*
 * A map's own limit: the left budget, and at most DDW_MAP_STEPS, which
 * bounds its memo (a slot a node met) and the nodes it makes.
 */
static uint64_t ddw_map_limit(const struct infer *in, const struct inf_ddw *w)
{
	uint64_t left = inf_ddw_left(in, w), most = in->dd_scale * DDW_MAP_STEPS;

	return left < most ? left : most;
}

/* inf_dd_map() of @w's diagram within ddw_map_limit() (else -E2BIG); its steps count. */
static int ddw_map(const struct infer *in, struct inf_ddw *w, unsigned int depth,
		   inf_dd_step_fn fn, inf_dd_keep_fn keep, void *ctx, uint32_t *out)
{
	uint64_t steps = inf_dd_steps(w->dd);
	int ret = inf_dd_map_within(w->dd, w->root, depth, 0, fn, keep, ctx,
				    ddw_map_limit(in, w), out);

	w->work += inf_dd_steps(w->dd) - steps;
	return ret;
}

/* The map steps @w spent since it was opened. */
uint64_t inf_ddw_work(const struct inf_ddw *w)
{
	return w->work;
}

/* Can a diagram hold the open window's positions? */
bool inf_ddw_fits(const struct infer *in)
{
	return in->n_list <= DDW_PMASK;
}

/* ---- interned entry sets ---- */

static uint64_t ddw_set_hash(const struct ddw_ent *e, size_t n)
{
	uint64_t h = 0x2545f4914f6cdd1dull;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ inf_mix(e[i].cpu, e[i].val)) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

/* Set @v's entries; NULL for none (the table may not exist yet). */
static const struct ddw_ent *ddw_set_ents(const struct inf_ddw *w, size_t v)
{
	return w->len[v] ? w->ents + w->off[v] : NULL;
}

static bool ddw_set_is(const struct inf_ddw *w, uint32_t v, const struct ddw_ent *e, size_t n)
{
	const struct ddw_ent *x = ddw_set_ents(w, v);
	size_t i;

	if (w->len[v] != n)
		return false;
	for (i = 0; i < n; i++)
		if (x[i].cpu != e[i].cpu || x[i].val != e[i].val)
			return false;
	return true;
}

static int ddw_rehash(struct inf_ddw *w)
{
	size_t nn = w->ht_mask ? 2 * (w->ht_mask + 1) : 256, i, v;
	uint32_t *ht = calloc(nn, sizeof(*ht));

	if (!ht)
		return -ENOMEM;
	free(w->ht);
	w->ht = ht;
	w->ht_mask = nn - 1;
	for (v = 0; v < w->nr_sets; v++) {
		for (i = ddw_set_hash(ddw_set_ents(w, v), w->len[v]) & w->ht_mask; ht[i];
		     i = (i + 1) & w->ht_mask)
			;
		ht[i] = (uint32_t)v + 1;
	}
	return 0;
}

/* The set of entries @e (@n, sorted by cpu, no two alike): its name. */
static int ddw_intern(struct inf_ddw *w, const struct ddw_ent *e, size_t n, int64_t *out)
{
	size_t i;
	int ret;

	if (2 * (w->nr_sets + 1) > w->ht_mask + 1 && (ret = ddw_rehash(w)))
		return ret;
	for (i = ddw_set_hash(e, n) & w->ht_mask; w->ht[i]; i = (i + 1) & w->ht_mask)
		if (ddw_set_is(w, w->ht[i] - 1, e, n)) {
			*out = w->ht[i] - 1;
			return 0;
		}
	/* sets are never freed while the diagram lives: their memory is the budget's too */
	if (w->nr_sets >= w->scale * DDW_MAX_SETS || w->nr_ents + n > w->scale * DDW_MAX_ENTS)
		return -E2BIG;
	/*
	 * len shares cap_sets: grown alongside, only when off grew (a realloc
	 * to the same size is free in glibc, but a copy of the whole array
	 * elsewhere: ASan's took validate 50 s for 300 000 events)
	 */
	if (w->nr_sets + 1 > w->cap_sets) {
		size_t cap = w->cap_sets;
		uint32_t *l;

		if (inf_grow(&w->off, &cap, w->nr_sets + 1, sizeof(*w->off)))
			return -ENOMEM;
		l = realloc(w->len, cap * sizeof(*l));
		if (!l)
			return -ENOMEM;
		w->len = l;
		w->cap_sets = cap;
	}
	if (inf_grow(&w->ents, &w->cap_ents, w->nr_ents + n, sizeof(*w->ents)))
		return -ENOMEM;
	if (n)
		memcpy(w->ents + w->nr_ents, e, n * sizeof(*e));
	w->off[w->nr_sets] = (uint32_t)w->nr_ents;
	w->len[w->nr_sets] = (uint32_t)n;
	w->nr_ents += n;
	w->ht[i] = (uint32_t)w->nr_sets + 1;
	*out = (int64_t)w->nr_sets++;
	return 0;
}

/* Set @v into the scratch, with room for two more; returns its length. */
static int ddw_load(struct inf_ddw *w, int64_t v, size_t *n)
{
	if (v < 0 || (size_t)v >= w->nr_sets)
		return -EINVAL;
	*n = w->len[v];
	if (inf_grow(&w->scr, &w->cap_scr, *n + 2, sizeof(*w->scr)))
		return -ENOMEM;
	if (*n)
		memcpy(w->scr, w->ents + w->off[v], *n * sizeof(*w->scr));
	return 0;
}

static int64_t ddw_pend(const struct inf_ddw *w, uint64_t key)
{
	return idmap_get(&w->pend, key, 0);
}

/* Entry @e of a set at memcg layer @layer as its counter's value: a per-CPU one's pend added. */
static int64_t ddw_value(const struct inf_ddw *w, unsigned int layer, const struct ddw_ent *e)
{
	if (e->cpu == INF_ATOMIC || !w->pended[layer - 1])
		return e->val;
	return e->val + ddw_pend(w, inf_key(w->ids[layer - 1], e->cpu));
}

/* Set @v of memcg layer @layer into the scratch as counter values (ddw_value()). */
static int ddw_load_at(struct inf_ddw *w, unsigned int layer, int64_t v, size_t *n)
{
	size_t i;
	int ret = ddw_load(w, v, n);

	if (ret || !w->pended[layer - 1])
		return ret;
	for (i = 0; i < *n; i++)
		w->scr[i].val = ddw_value(w, layer, &w->scr[i]);
	return 0;
}

/*
 * The scratch's @n counter values of memcg layer @layer as a stored set,
 * named in @out: less each one's pend, and for @cpu's counter @d more, the
 * pend the update being made adds to it after (ddw_upd_pend()).
 */
static int ddw_store(struct inf_ddw *w, unsigned int layer, size_t n, uint32_t cpu, int64_t d,
		     int64_t *out)
{
	size_t i;

	if (w->pended[layer - 1] || d)
		for (i = 0; i < n; i++)
			if (w->scr[i].cpu != INF_ATOMIC)
				w->scr[i].val -= ddw_pend(w, inf_key(w->ids[layer - 1],
								     w->scr[i].cpu)) +
						 (w->scr[i].cpu == cpu ? d : 0);
	w->held[layer - 1] |= n != 0;
	return ddw_intern(w, w->scr, n, out);
}

static struct ddw_ent *ddw_find(struct ddw_ent *e, size_t n, uint32_t cpu)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (e[i].cpu == cpu)
			return &e[i];
	return NULL;
}

static void ddw_del(struct ddw_ent *e, size_t *n, uint32_t cpu)
{
	struct ddw_ent *x = ddw_find(e, *n, cpu);

	if (x) {
		memmove(x, x + 1, (size_t)(e + *n - (x + 1)) * sizeof(*e));
		(*n)--;
	}
}

/* inf_put() on a set: @cpu's counter takes @val, no entry if that is @virt. */
static void ddw_put(struct ddw_ent *e, size_t *n, uint32_t cpu, int64_t val, int64_t virt)
{
	struct ddw_ent *x = ddw_find(e, *n, cpu);
	size_t i;

	if (val == virt) {
		ddw_del(e, n, cpu);
		return;
	}
	if (x) {
		x->val = val;
		return;
	}
	for (i = *n; i > 0 && e[i - 1].cpu > cpu; i--)
		e[i] = e[i - 1];
	e[i] = (struct ddw_ent){ .cpu = cpu, .val = val };
	(*n)++;
}

/*
 * The nodes' summaries are 64-bit Bloom filters of the counters held below
 * them, an atomic's with whether it is flushable (sim_step_flushable(): all
 * the table's steps read of it).  A per-CPU counter's bit:
 */
static uint64_t ddw_key_bit(uint64_t key)
{
	return 1ull << (inf_mix(key, 0) >> 58);
}

/* An atomic's, flushable or not. */
static uint64_t ddw_atomic_bit(uint64_t id, bool flushable)
{
	return 1ull << (inf_mix(inf_key(id, INF_ATOMIC), 1 + flushable) >> 58);
}

/*
 * A per-CPU counter's stored value's bucket (DDW_BUCKET wide, floored): an
 * update reads which holders its add takes to the batch by the buckets.
 */
static int64_t ddw_bucket(int64_t stored)
{
	return stored >= 0 ? stored / DDW_BUCKET : -((-stored + DDW_BUCKET - 1) / DDW_BUCKET);
}

static uint64_t ddw_bucket_bit(uint64_t key, int64_t bucket)
{
	return 1ull << (inf_mix(key, 3 + (uint64_t)bucket) >> 58);
}

/* inf_dd_sum_fn: the counters set @val of memcg layer @layer holds */
static uint64_t ddw_sum(void *ctx, unsigned int layer, int64_t val)
{
	const struct inf_ddw *w = ctx;
	const struct ddw_ent *e;
	uint64_t id, m = 0;
	size_t i;

	if (!layer)
		return 0;
	id = w->ids[layer - 1];
	e = ddw_set_ents(w, (size_t)val);
	for (i = 0; i < w->len[val]; i++)
		m |= e[i].cpu == INF_ATOMIC ?
			     ddw_atomic_bit(id, e[i].val > w->th) :
			     ddw_key_bit(inf_key(id, e[i].cpu)) |
			     ddw_bucket_bit(inf_key(id, e[i].cpu), ddw_bucket(e[i].val));
	return m;
}

/* ---- layers ---- */

static uint32_t ddw_depth(const struct infer *in, uint64_t id)
{
	int32_t nd = sim_node_handle(in->s, id);
	uint32_t d = 0;

	while (nd >= 0 && (nd = sim_node_parent_at(in->s, nd)) >= 0)
		d++;
	return d;
}

/* Layer order: deeper first, then by id. */
static bool ddw_before(uint32_t da, uint64_t a, uint32_t db, uint64_t b)
{
	return da != db ? da > db : a < b;
}

/* The memcg layer of @id, 0 if none. */
static unsigned int ddw_layer(const struct inf_ddw *w, uint64_t id)
{
	return (unsigned int)idmap_get(&w->lidx, id, 0);
}

static struct inf_dd *ddw_dd_new(struct inf_ddw *w)
{
	uint64_t *keys = malloc((w->nr + 1) * sizeof(*keys));
	struct inf_dd *dd;

	if (!keys)
		return NULL;
	keys[0] = 0;
	if (w->nr)
		memcpy(keys + 1, w->ids, w->nr * sizeof(*keys));
	dd = inf_dd_create(keys, (unsigned int)w->nr + 1);
	free(keys);
	if (dd)
		(void)inf_dd_set_sum(dd, ddw_sum, w);	/* a new diagram: cannot fail */
	return dd;
}

/*
 * Layers for those of @ids (@n, deduplicated or not) that have none: a new
 * diagram, the set embedded into it with the empty set at the new layers.
 */
static int ddw_add(const struct infer *in, struct inf_ddw *w, const uint64_t *ids, size_t n)
{
	size_t add = 0, i, j, k, nn;
	unsigned int *map = NULL;
	uint64_t *nid = NULL;
	uint32_t *ndep = NULL, root;
	size_t *nvis = NULL;
	bool *nheld = NULL, *npended = NULL;
	struct inf_dd *dd = NULL;
	int ret = -ENOMEM;

	for (i = 0; i < n; i++)
		if (!ddw_layer(w, ids[i]))
			add++;
	if (!add)
		return 0;
	if (!w->dd)
		return -ENOMEM;	/* an earlier failure left no diagram */
	nn = w->nr + add;
	nid = malloc(nn * sizeof(*nid));
	ndep = malloc(nn * sizeof(*ndep));
	nvis = malloc(nn * sizeof(*nvis));
	map = malloc((w->nr + 1) * sizeof(*map));
	nheld = calloc(nn, sizeof(*nheld));
	npended = calloc(nn, sizeof(*npended));
	if (!nid || !ndep || !nvis || !map || !nheld || !npended)
		goto out;
	/* the old layers, then the new ones inserted in order */
	if (w->nr) {
		memcpy(nid, w->ids, w->nr * sizeof(*nid));
		memcpy(ndep, w->depth, w->nr * sizeof(*ndep));
	}
	k = w->nr;
	for (i = 0; i < n; i++) {
		uint64_t id = ids[i];
		uint32_t d;

		if (ddw_layer(w, id))
			continue;
		for (j = 0; j < k && nid[j] != id; j++)
			;
		if (j < k)
			continue;
		d = ddw_depth(in, id);
		for (j = k; j > 0 && ddw_before(d, id, ndep[j - 1], nid[j - 1]); j--) {
			nid[j] = nid[j - 1];
			ndep[j] = ndep[j - 1];
		}
		nid[j] = id;
		ndep[j] = d;
		k++;
	}
	nn = k;
	map[0] = 0;
	for (i = 0, j = 0; i < w->nr; i++) {
		while (nid[j] != w->ids[i])
			j++;
		map[i + 1] = (unsigned int)j + 1;
		nheld[j] = w->held[i];
		npended[j] = w->pended[i];
	}
	for (j = 0; j < nn; j++)
		nvis[j] = inf_list_idx(in, nid[j]);
	free(w->ids);
	free(w->depth);
	free(w->vis);
	free(w->pidx);
	free(w->held);
	w->ids = nid;
	w->depth = ndep;
	w->vis = nvis;
	w->held = nheld;
	free(w->pended);
	w->pended = npended;
	npended = NULL;
	nid = NULL;
	ndep = NULL;
	nvis = NULL;
	nheld = NULL;
	w->nr = w->cap = nn;
	w->pidx = malloc((nn + 1) * sizeof(*w->pidx));
	dd = ddw_dd_new(w);
	ret = w->pidx && dd ? idmap_reset(&w->lidx, nn) : -ENOMEM;
	for (i = 0; !ret && i <= nn; i++)
		w->pidx[i] = -1;
	for (j = 0; !ret && j < nn; j++)
		ret = idmap_put(&w->lidx, w->ids[j], (int64_t)j + 1);
	if (!ret)
		ret = inf_dd_embed(w->dd, w->root, dd, map, 0, &root);
	/* on failure the layers are the new ones, the diagram the old: none is left */
	inf_dd_destroy(w->dd);
	w->dd = ret ? NULL : dd;
	w->root = ret ? INF_DD_EMPTY : root;
	dd = NULL;
out:
	inf_dd_destroy(dd);
	free(nid);
	free(ndep);
	free(nvis);
	free(nheld);
	free(npended);
	free(map);
	return ret;
}

/*
 * Nodes are never freed while a diagram lives: past gc_at made, the live
 * ones are copied into a new diagram of the same layers.
 */
static int ddw_gc(struct inf_ddw *w)
{
	unsigned int *map;
	struct inf_dd *dd;
	uint32_t root;
	size_t l;
	int ret;

	if (inf_dd_nr_nodes(w->dd) <= w->gc_at && inf_dd_nr_edges(w->dd) <= w->gc_edges)
		return 0;
	map = malloc((w->nr + 1) * sizeof(*map));
	dd = ddw_dd_new(w);
	ret = map && dd ? 0 : -ENOMEM;
	for (l = 0; !ret && l <= w->nr; l++)
		map[l] = (unsigned int)l;
	if (!ret)
		ret = inf_dd_embed(w->dd, w->root, dd, map, 0, &root);
	free(map);
	if (ret) {
		inf_dd_destroy(dd);
		return ret;
	}
	inf_dd_destroy(w->dd);
	w->dd = dd;
	w->root = root;
	w->gc_at = 2 * inf_dd_nr_nodes(dd) + DDW_GC_NODES;
	w->gc_edges = 2 * inf_dd_nr_edges(dd) + DDW_GC_EDGES;
	/* its memory is the budget's too */
	return inf_dd_nr_edges(dd) > w->scale * DDW_MAX_EDGES ? -E2BIG : 0;
}

/* A window opens: where each memcg's visit is in its list. */
void inf_ddw_reopen(const struct infer *in, struct inf_ddw *w)
{
	size_t l;

	for (l = 0; l < w->nr; l++)
		w->vis[l] = inf_list_idx(in, w->ids[l]);
}

/* ---- from the list, to the caller ---- */

void inf_ddw_free(struct inf_ddw *w)
{
	if (!w)
		return;
	inf_dd_destroy(w->dd);
	free(w->ids);
	free(w->depth);
	free(w->vis);
	free(w->pidx);
	free(w->held);
	idmap_free(&w->lidx);
	idmap_free(&w->pend);
	free(w->pended);
	free(w->ents);
	free(w->off);
	free(w->len);
	free(w->ht);
	free(w->scr);
	free(w->smemo);
	free(w);
}

/* Hypothesis @h's entries of memcg @id, by cpu, into the scratch; how many. */
static int ddw_of_hyp(struct inf_ddw *w, const struct inf_hyp *h, uint64_t id, size_t *n)
{
	const struct idmap_ent *e;
	uint32_t pos = 0;

	*n = 0;
	while ((e = idmap_next(&h->e, &pos))) {
		if (inf_key_id(e->key) != id)
			continue;
		if (inf_grow(&w->scr, &w->cap_scr, *n + 2, sizeof(*w->scr)))
			return -ENOMEM;
		ddw_put(w->scr, n, inf_key_cpu(e->key), e->val, e->val + 1);
	}
	return 0;
}

/**
 * inf_ddw_open() - the list's hypotheses (in->h), as they are in the open
 * window, as a diagram.
 */
int inf_ddw_open(struct infer *in, struct inf_ddw **out)
{
	struct inf_ddw *w = calloc(1, sizeof(*w));
	uint64_t *ids = NULL;
	int64_t *tab = NULL, v;
	size_t nids = 0, capids = 0, i, l, n;
	int ret = -ENOMEM;

	*out = NULL;
	if (!w)
		return -ENOMEM;
	w->th = (int64_t)sim_threshold(in->s);
	w->scale = in->dd_scale;
	w->dd = ddw_dd_new(w);	/* the position's layer alone */
	if (!w->dd)
		goto fail;
	w->root = INF_DD_EMPTY;
	w->gc_at = DDW_GC_NODES;
	w->gc_edges = DDW_GC_EDGES;
	ret = ddw_intern(w, NULL, 0, &v);	/* set 0: no entry */
	for (i = 0; !ret && i < in->nr_h; i++) {
		const struct idmap_ent *e;
		uint32_t pos = 0;

		while (!ret && (e = idmap_next(&in->h[i].e, &pos))) {
			ret = inf_grow(&ids, &capids, nids + 1, sizeof(*ids));
			if (!ret)
				ids[nids++] = inf_key_id(e->key);
		}
	}
	if (!ret)
		ret = ddw_add(in, w, ids, nids);
	if (ret)
		goto fail;
	ret = -ENOMEM;
	tab = malloc((in->nr_h ? in->nr_h : 1) * (w->nr + 1) * sizeof(*tab));
	if (!tab)
		goto fail;
	for (i = 0; i < in->nr_h; i++) {
		int64_t *row = tab + i * (w->nr + 1);

		row[0] = (int64_t)in->h[i].p;
		for (l = 0; l < w->nr; l++) {
			ret = ddw_of_hyp(w, &in->h[i], w->ids[l], &n);
			if (!ret)
				ret = ddw_store(w, (unsigned int)l + 1, n, 0, 0, &row[l + 1]);
			if (ret)
				goto fail;
		}
	}
	ret = inf_dd_build(w->dd, tab, in->nr_h, &w->root);
	if (ret)
		goto fail;
	free(ids);
	free(tab);
	w->work = in->nr_h * (w->nr + 1);	/* the opening, a step a tuple's layer */
	*out = w;
	return 0;
fail:
	free(ids);
	free(tab);
	inf_ddw_free(w);
	return ret;
}

int inf_ddw_count(struct inf_ddw *w, uint64_t *n)
{
	return inf_dd_count(w->dd, w->root, n);
}

struct ddw_enum {
	struct inf_ddw	*w;
	inf_ddw_fn	fn;
	void		*ctx;
	uint64_t	*keys;
	int64_t		*vals;
};

static int ddw_enum_one(void *ctx, const int64_t *tuple)
{
	struct ddw_enum *en = ctx;
	const struct inf_ddw *w = en->w;
	size_t l, i, n = 0;

	for (l = 0; l < w->nr; l++) {
		const struct ddw_ent *e = ddw_set_ents(w, (size_t)tuple[l + 1]);

		for (i = 0; i < w->len[tuple[l + 1]]; i++, n++) {
			en->keys[n] = inf_key(w->ids[l], e[i].cpu);
			en->vals[n] = ddw_value(w, (unsigned int)l + 1, &e[i]);
		}
	}
	return en->fn(en->ctx, (size_t)tuple[0], en->keys, en->vals, n);
}

/**
 * inf_ddw_enum() - each tuple once, as a hypothesis: its position and its
 * entries (@n keys and values); @fn's nonzero return stops and is returned.
 */
int inf_ddw_enum(struct inf_ddw *w, inf_ddw_fn fn, void *ctx)
{
	struct ddw_enum en = { .w = w, .fn = fn, .ctx = ctx };
	size_t i, most = 0, room;
	int ret;

	/* a set may stand at several layers: room for the longest at each */
	for (i = 0; i < w->nr_sets; i++)
		if (w->len[i] > most)
			most = w->len[i];
	room = w->nr * most + 1;
	en.keys = malloc(room * sizeof(*en.keys));
	en.vals = malloc(room * sizeof(*en.vals));
	ret = en.keys && en.vals ? inf_dd_enum(w->dd, w->root, ddw_enum_one, &en) : -ENOMEM;
	free(en.keys);
	free(en.vals);
	return ret;
}

/* ---- an update ---- */

struct ddw_upd {
	struct infer		*in;
	struct inf_ddw		*w;
	const struct inf_path	*pa;
	unsigned int		cpu;
	unsigned int		top;	/* the layer of the path's last node */
	struct sim_step_in	si;
	bool			branch;	/* a visit on the path: the tuples branch */
	unsigned int		walk_to; /* the base's walk reaches the layers up to this one */
	int64_t			d[INF_MAX_PATH]; /* per path node: the pend its counter on cpu takes */
	uint64_t		keys;	/* the held counters its walk reads or moves (summary bits) */
};

static int ddw_upd_pos(const struct ddw_upd *u, int64_t val, int64_t *ov, uint64_t *os)
{
	uint64_t p = (uint64_t)val, f = DDW_ALIVE | DDW_CALIVE;
	size_t i;
	int n = 0;

	ov[n] = val;
	os[n++] = p | p << DDW_PBITS | f;
	for (i = 0; i < u->pa->n; i++) {
		size_t v = u->pa->vis[i];

		if (v == INF_NONE || v < p)
			continue;
		ov[n] = (int64_t)v + 1;
		os[n++] = p | (uint64_t)(v + 1) << DDW_PBITS | f;
	}
	return n;
}

/* Memcg layer @layer is neither on the path nor visited between the state's two positions: kept. */
static bool ddw_upd_idle(const struct inf_ddw *w, unsigned int layer, uint64_t state)
{
	size_t v = w->vis[layer - 1];

	return w->pidx[layer] < 0 &&
	       (v == INF_NONE || v < (state & DDW_PMASK) || v >= (state >> DDW_PBITS & DDW_PMASK));
}

static int ddw_upd_walk(void *ctx, unsigned int layer, uint64_t state, int64_t val, int64_t *ov,
			uint64_t *os)
{
	struct ddw_upd *u = ctx;
	struct inf_ddw *w = u->w;
	const struct inf_path *pa = u->pa;
	size_t p0 = state & DDW_PMASK, p1 = state >> DDW_PBITS & DDW_PMASK, n, v;
	uint64_t f = state & (DDW_ALIVE | DDW_CALIVE | DDW_CFAIL);
	unsigned int wcpu = u->in->wcpu, cpu = u->cpu;
	int32_t i;
	int ret;

	if (!layer)
		return ddw_upd_pos(u, val, ov, os);
	/* a memcg layer, not idle: ddw_upd_step() keeps those */
	v = w->vis[layer - 1];
	i = w->pidx[layer];
	ret = ddw_load_at(w, layer, val, &n);
	if (ret)
		return ret;
	if (i >= 0 && p1 != p0 && (f & DDW_CALIVE)) {
		/* inf_commutes(), on the tuple as it was */
		const struct ddw_ent *a = ddw_find(w->scr, n, INF_ATOMIC);
		const struct ddw_ent *c = ddw_find(w->scr, n, cpu);
		bool visited = v != INF_NONE && v < p0;
		struct sim_step_in si = u->si;
		struct sim_step_out so, sv;

		si.atomic = a ? a->val : visited ? 0 : pa->base[2 * i];
		si.pcpu = (uint32_t)(c ? c->val : visited && cpu == wcpu ? 0 : pa->base[2 * i + 1]);
		so = u->in->pol->step(&si);
		if (v != INF_NONE && !visited) {
			struct sim_step_in sw = si;

			sw.atomic = 0;
			if (cpu == wcpu)
				sw.pcpu = 0;
			sv = u->in->pol->step(&sw);
			if (sv.walk != so.walk || sv.add ||
			    (cpu == wcpu ? sv.pcpu != 0 : sv.pcpu != so.pcpu))
				f |= DDW_CFAIL;
		}
		if (so.walk == SIM_WALK_STOP)
			f &= ~DDW_CALIVE;
	}
	/* the visits between the two positions (inf_visit_upto()) */
	if (v != INF_NONE && v >= p0 && v < p1) {
		ddw_del(w->scr, &n, INF_ATOMIC);
		ddw_del(w->scr, &n, wcpu);
	}
	if (i >= 0) {
		/* inf_walk() on the branch */
		const struct ddw_ent *a = ddw_find(w->scr, n, INF_ATOMIC);
		const struct ddw_ent *c = ddw_find(w->scr, n, cpu);
		bool visited = v != INF_NONE && v < p1, pvisited = visited && cpu == wcpu;
		int64_t va = a ? a->val : visited ? 0 : pa->base[2 * i];
		int64_t vc = c ? c->val : pvisited ? 0 : pa->base[2 * i + 1];

		if (f & DDW_ALIVE) {
			struct sim_step_in si = u->si;
			struct sim_step_out so;

			si.atomic = va;
			si.pcpu = (uint32_t)vc;
			so = u->in->pol->step(&si);
			vc = so.pcpu;
			va += so.add;
			if (so.walk == SIM_WALK_STOP)
				f &= ~DDW_ALIVE;
		}
		ddw_put(w->scr, &n, INF_ATOMIC, va, visited ? 0 : pa->post[2 * i]);
		ddw_put(w->scr, &n, cpu, vc, pvisited ? 0 : pa->post[2 * i + 1]);
		if (layer == u->top) {
			/* commutes: the list makes "before all" only */
			if (p1 != p0 && !(f & DDW_CFAIL))
				return 0;
			f = 0;
		}
	}
	ret = ddw_store(w, layer, n, cpu, i >= 0 ? u->d[i] : 0, &ov[0]);
	if (ret)
		return ret;
	os[0] = p0 | (uint64_t)p1 << DDW_PBITS | f;
	return 1;
}

/*
 * The summary bits of the counters that would make a tuple's walk differ
 * from the base's, or change otherwise than by a pend, where the base's
 * walk steps (the table's steps: a flushable test on the atomic, a batch
 * test on the per-CPU counter):
 * - an atomic on the other side of flushable; any, where the base's step
 *   moves a batch into it (its holders' values move);
 * - where the base's step charges its per-CPU counter below the batch,
 *   the holders whose add would reach the batch (their buckets); every
 *   other holder takes the add alike: it goes to the counter's pend, @d;
 * - where the base's step moves that counter to the atomic, every holder.
 * A policy built elsewhere may read them otherwise: every holder, no pend.
 */
static uint64_t ddw_path_bits(const struct infer *in, const struct inf_ddw *w,
			      const struct inf_path *pa, unsigned int cpu,
			      const struct sim_step_in *sb, int64_t *d)
{
	struct sim_step_in si;
	uint64_t m = 0;
	size_t i;

	/* field by field: a copy of *@sb whole stalled on its narrower stores */
	si.th = sb->th;
	si.abs_val = sb->abs_val;
	si.batch = sb->batch;

	for (i = 0; i < pa->n; i++)
		d[i] = 0;
	for (i = 0; i < pa->reach; i++) {
		uint64_t id = pa->id[i], key = inf_key(id, cpu);
		bool fl = pa->base[2 * i] > w->th;
		int64_t moved, p, b;
		struct sim_step_out so;

		si.atomic = pa->base[2 * i];
		si.pcpu = (uint32_t)pa->base[2 * i + 1];
		so = in->pol->step(&si);
		moved = (int64_t)so.pcpu - pa->base[2 * i + 1];
		m |= ddw_atomic_bit(id, !fl);
		if (!in->agg || so.add)
			m |= ddw_atomic_bit(id, fl);
		if (!in->agg || so.add || so.drop || (moved && moved != (int64_t)pa->abs_val)) {
			m |= ddw_key_bit(key);
		} else if (moved) {
			p = ddw_pend(w, key);
			for (b = ddw_bucket(si.batch - (int64_t)pa->abs_val - p);
			     b <= ddw_bucket(si.batch - 1 - p); b++)
				m |= ddw_bucket_bit(key, b);
			d[i] = moved;
		}
	}
	return m;
}

/* The pends the update's alike holders took (ddw_path_bits()), after its map. */
static int ddw_upd_pend(struct inf_ddw *w, const struct inf_path *pa, unsigned int cpu,
			const int64_t *d)
{
	unsigned int l;
	size_t i;
	int ret;

	for (i = 0; i < pa->reach; i++) {
		uint64_t key = inf_key(pa->id[i], cpu);

		/* a memcg with no layer has no holder: its pend may stay as it is */
		if (!d[i] || !(l = ddw_layer(w, pa->id[i])))
			continue;
		ret = idmap_put(&w->pend, key, ddw_pend(w, key) + d[i]);
		if (ret)
			return ret;
		w->pended[l - 1] = true;
	}
	return 0;
}

/*
 * Without a branch, tuples that hold none of the path's counters below
 * @layer and whose walk goes on where the base's does (or stops alike)
 * take the base's steps there: nothing of them changes.
 */
static bool ddw_upd_keep(void *ctx, unsigned int layer, uint64_t state, uint64_t sum)
{
	const struct ddw_upd *u = ctx;

	return !u->branch && layer && !(sum & u->keys) &&
	       !!(state & DDW_ALIVE) == (layer <= u->walk_to);
}

/* ddw_upd_walk(), each (layer, state, value) of a memcg layer worked out once per update */
static int ddw_upd_step(void *ctx, unsigned int layer, uint64_t state, int64_t val, int64_t *ov,
			uint64_t *os)
{
	struct ddw_upd *u = ctx;
	struct inf_ddw *w = u->w;
	struct ddw_smemo *m;
	uint64_t h;
	int n;

	if (!layer)
		return ddw_upd_walk(ctx, layer, state, val, ov, os);
	if (ddw_upd_idle(w, layer, state)) {
		ov[0] = val;
		os[0] = state;
		return 1;
	}
	h = (state * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)val * 0xbf58476d1ce4e5b9ull) ^ layer;
	m = &w->smemo[(h ^ h >> 29) & (DDW_SMEMO - 1)];
	if (m->gen == w->sgen && m->layer == layer && m->val == val && m->state == state) {
		ov[0] = m->ov;
		os[0] = m->os;
		return m->nout;
	}
	n = ddw_upd_walk(ctx, layer, state, val, ov, os);
	if (n == 0 || n == 1)
		*m = (struct ddw_smemo){ .state = state, .val = val, .layer = layer,
					 .gen = w->sgen, .nout = n, .ov = n ? ov[0] : 0,
					 .os = n ? os[0] : 0 };
	return n;
}

/**
 * inf_ddw_update() - every tuple takes the update of path @pa from @cpu (as
 * built by inf_path_build() before the base takes it), as inf_hyp_update()
 * with no cut: the branches, each walk.  A partial @pa (only to the base's
 * reach, outside a window) does where every tuple takes the update alike;
 * where a tuple's walk may differ, -EAGAIN with nothing changed: the caller
 * completes @pa (inf_path_complete()) and calls again.
 */
int inf_ddw_update(struct infer *in, struct inf_ddw *w, const struct inf_path *pa,
		   unsigned int cpu)
{
	struct ddw_upd u;	/* its d[] as long as the path, set by ddw_path_bits() */
	unsigned int depth, l, lay[INF_MAX_PATH];
	bool branch = false;
	uint32_t out;
	size_t i;
	int ret;

	if (pa->cut || !inf_ddw_fits(in))
		return -E2BIG;
	if (!pa->abs_val)
		return 0;
	/*
	 * inf_path_same() for every tuple: no visit on the path (no branch,
	 * nothing visited), no entry where the base's walk steps: each walk
	 * is the base's, no entry changes.
	 */
	for (i = 0; i < pa->n; i++) {
		l = ddw_layer(w, pa->id[i]);
		if (pa->vis[i] != INF_NONE || (i < pa->reach && l && w->held[l - 1]))
			break;
	}
	if (i == pa->n)
		return 0;
	for (i = 0; i < pa->n; i++)
		branch |= pa->vis[i] != INF_NONE;
	/*
	 * Field by field, here: an initializer zeroed all of d[] at every
	 * update, those that return above too (on anon2's trace-cmd recording
	 * over 40 % of this function's own time).
	 */
	u.in = in;
	u.w = w;
	u.pa = pa;
	u.cpu = cpu;
	u.branch = branch;
	/*
	 * Field by field too: a compound literal's stores, then a copy's wide
	 * loads across them, failed to forward (over half of this function's
	 * own time on anon2's trace-cmd recording).
	 */
	u.si.atomic = 0;
	u.si.pcpu = 0;
	u.si.th = pa->th;
	u.si.abs_val = pa->abs_val;
	u.si.batch = sim_batch(in->s);
	u.keys = ddw_path_bits(in, w, pa, cpu, &u.si, u.d);
	/* the same, by the summaries: no tuple holds a counter the walk reads or moves */
	if (!branch && !(inf_dd_sum(w->dd, w->root) & u.keys))
		return ddw_upd_pend(w, pa, cpu, u.d);
	if (pa->partial)
		return -EAGAIN;	/* nothing changed yet: again with the whole path */
	ret = ddw_add(in, w, pa->id, pa->n);
	if (ret)
		return ret;
	if (!w->smemo && !(w->smemo = calloc(DDW_SMEMO, sizeof(*w->smemo))))
		return -ENOMEM;
	if (++w->sgen == 0) {
		memset(w->smemo, 0, DDW_SMEMO * sizeof(*w->smemo));
		w->sgen = 1;
	}
	for (i = 0; i < pa->n; i++) {
		lay[i] = ddw_layer(w, pa->id[i]);
		w->pidx[lay[i]] = (int32_t)i;
	}
	/*
	 * The path's layers ascend as its nodes do: the base's walk reaches a
	 * layer while it is at most the last node the walk steps.
	 */
	u.walk_to = pa->reach ? lay[pa->reach - 1] : 0;
	u.top = lay[pa->n - 1];
	depth = branch ? (unsigned int)w->nr + 1 : u.top + 1;
	ret = ddw_map(in, w, depth, ddw_upd_step, ddw_upd_keep, &u, &out);
	for (i = 0; i < pa->n; i++)
		w->pidx[lay[i]] = -1;
	if (ret)
		return ret;
	w->root = out;
	ret = ddw_upd_pend(w, pa, cpu, u.d);
	return ret ? ret : ddw_gc(w);
}

/* ---- a read, the close ---- */

enum ddw_op { DDW_KEEP_SU, DDW_HAS_NF, DDW_SET_SU, DDW_CLOSE };

struct ddw_rd {
	struct infer	*in;
	struct inf_ddw	*w;
	enum ddw_op	op;
	unsigned int	layer;	/* the read memcg's */
	int64_t		su, th;
	bool		nf;
};

static int ddw_rd_step(void *ctx, unsigned int layer, uint64_t state, int64_t val, int64_t *ov,
		       uint64_t *os)
{
	struct ddw_rd *r = ctx;
	struct inf_ddw *w = r->w;
	size_t n, v;
	int64_t a, virt;
	struct ddw_ent *e;
	int ret;

	if (!layer) {
		ov[0] = r->op == DDW_CLOSE ? 0 : val;
		os[0] = (uint64_t)val;
		return 1;
	}
	v = w->vis[layer - 1];
	if (r->op == DDW_CLOSE) {
		if (v == INF_NONE || v < state) {
			ov[0] = val;
			os[0] = state;
			return 1;
		}
		ret = ddw_load_at(w, layer, val, &n);
		if (ret)
			return ret;
		if (v != INF_NONE && v >= state) {
			ddw_del(w->scr, &n, INF_ATOMIC);
			ddw_del(w->scr, &n, r->in->wcpu);
		}
		os[0] = state;
		return ddw_store(w, layer, n, 0, 0, &ov[0]) ?: 1;
	}
	if (layer != r->layer) {
		ov[0] = val;
		os[0] = state;
		return 1;
	}
	/* inf_get() of the atomic */
	ret = ddw_load_at(w, layer, val, &n);
	if (ret)
		return ret;
	virt = v != INF_NONE && v < state ? 0 : sim_stats_updates(r->in->s, w->ids[layer - 1]);
	e = ddw_find(w->scr, n, INF_ATOMIC);
	a = e ? e->val : virt;
	ov[0] = val;
	os[0] = state;
	switch (r->op) {
	case DDW_KEEP_SU:
		return a == r->su;
	case DDW_HAS_NF:
		return (a > r->th) == r->nf;
	default:
		ddw_put(w->scr, &n, INF_ATOMIC, r->su, virt);
		return ddw_store(w, layer, n, 0, 0, &ov[0]) ?: 1;
	}
}

static int ddw_rd(struct ddw_rd *r, uint32_t *out)
{
	unsigned int depth = r->op == DDW_CLOSE ? (unsigned int)r->w->nr + 1 : r->layer + 1;

	return ddw_map(r->in, r->w, depth, ddw_rd_step, NULL, r, out);
}

/**
 * inf_ddw_close() - the window ends: every tuple makes the visits it has
 * left and goes back to position 0 (inf_close() on the list, called after
 * it: the window's list must still be open).
 */
int inf_ddw_close(struct infer *in, struct inf_ddw *w)
{
	struct ddw_rd r = { .in = in, .w = w, .op = DDW_CLOSE };
	uint32_t out;
	size_t l;
	int ret;

	if (!in->win)
		return 0;
	ret = ddw_rd(&r, &out);
	if (ret)
		return ret;
	w->root = out;
	for (l = 0; l < w->nr; l++)
		w->vis[l] = INF_NONE;	/* no window: nothing left to visit */
	return 0;
}

/**
 * inf_ddw_check() - infer_check() on the tuples: *@su_ok and *@nf_ok as
 * there; keeps the tuples whose atomic of @id is @su, or, when none is,
 * gives that to every tuple.  No fold: the base is the caller's.
 */
int inf_ddw_check(struct infer *in, struct inf_ddw *w, uint64_t id, int64_t su, bool nf,
		  bool *su_ok, bool *nf_ok)
{
	struct ddw_rd r = { .in = in, .w = w, .su = su, .nf = nf,
			    .th = (int64_t)sim_threshold(in->s) };
	uint32_t keep, has;
	int ret;

	*su_ok = *nf_ok = false;
	ret = ddw_add(in, w, &id, 1);
	if (ret)
		return ret;
	r.layer = ddw_layer(w, id);
	r.op = DDW_HAS_NF;
	ret = ddw_rd(&r, &has);
	r.op = DDW_KEEP_SU;
	if (!ret)
		ret = ddw_rd(&r, &keep);
	if (ret)
		return ret;
	*nf_ok = has != INF_DD_EMPTY;
	*su_ok = keep != INF_DD_EMPTY;
	if (*su_ok) {
		w->root = keep;
		return 0;
	}
	r.op = DDW_SET_SU;
	ret = ddw_rd(&r, &keep);
	if (!ret)
		w->root = keep;
	return ret;
}
