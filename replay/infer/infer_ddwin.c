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
 * The switch (in->dd, off by default): without an order sink, an update in
 * a window that could take the list past the cap turns the list into the
 * diagram (inf_dd_switch()), which then takes every update, read and
 * window until a close or a read leaves no more orders than the cap
 * (inf_dd_back()).  Off because it is slow: every update rebuilds the
 * diagram above its path's last layer, and the path's root is the last
 * layer, so each costs the whole diagram.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "infer-local.h"
#include "infer_dd.h"

#define DDW_PBITS	28
#define DDW_PMASK	((1ull << DDW_PBITS) - 1)
#define DDW_ALIVE	(1ull << 56)	/* the branch's walk goes on */
#define DDW_CALIVE	(1ull << 57)	/* the commute test goes on */
#define DDW_CFAIL	(1ull << 58)	/* the update does not commute */

struct ddw_ent {
	uint32_t	cpu;	/* INF_ATOMIC, or the per-CPU counter's CPU */
	int64_t		val;
};

struct inf_ddw {
	struct inf_dd	*dd;
	uint32_t	root;
	/* memcg layer l (>= 1): ids[l - 1], its depth and its visit's list index */
	uint64_t	*ids;
	uint32_t	*depth;
	size_t		*vis;
	int32_t		*pidx;		/* in an update: its path index, -1 */
	bool		*held;		/* some tuple may hold an entry of it (a superset) */
	size_t		nr, cap;
	struct idmap	lidx;		/* memcg id -> its layer */
	size_t		gc_at;		/* nodes made past which the live ones are copied out */
	/* interned entry sets: set v is ents[off[v] .. off[v] + len[v]), by cpu */
	struct ddw_ent	*ents;
	size_t		nr_ents, cap_ents;
	uint32_t	*off, *len;
	size_t		nr_sets, cap_sets;
	uint32_t	*ht;		/* set + 1, 0: a free slot */
	size_t		ht_mask;
	struct ddw_ent	*scr;		/* a set being changed */
	size_t		cap_scr;
};

/* ---- interned entry sets ---- */

static uint64_t ddw_set_hash(const struct ddw_ent *e, size_t n)
{
	uint64_t h = 0x2545f4914f6cdd1dull;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ inf_mix(e[i].cpu, e[i].val)) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

static bool ddw_set_is(const struct inf_ddw *w, uint32_t v, const struct ddw_ent *e, size_t n)
{
	const struct ddw_ent *x = w->ents + w->off[v];
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
		for (i = ddw_set_hash(w->ents + w->off[v], w->len[v]) & w->ht_mask; ht[i];
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
	if (w->nr_sets >= UINT32_MAX - 1 || w->nr_ents + n > UINT32_MAX ||
	    inf_grow(&w->off, &w->cap_sets, w->nr_sets + 1, sizeof(*w->off)))
		return -ENOMEM;
	/* len shares cap_sets: grown alongside */
	{
		uint32_t *l = realloc(w->len, w->cap_sets * sizeof(*l));

		if (!l)
			return -ENOMEM;
		w->len = l;
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

static struct inf_dd *ddw_dd_new(const struct inf_ddw *w)
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
	bool *nheld = NULL;
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
	if (!nid || !ndep || !nvis || !map || !nheld)
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

	if (inf_dd_nr_nodes(w->dd) <= w->gc_at)
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
	w->gc_at = 2 * inf_dd_nr_nodes(dd) + (1u << 16);
	return 0;
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
	free(w->ents);
	free(w->off);
	free(w->len);
	free(w->ht);
	free(w->scr);
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
	w->dd = ddw_dd_new(w);	/* the position's layer alone */
	if (!w->dd)
		goto fail;
	w->root = INF_DD_EMPTY;
	w->gc_at = 1u << 16;
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
				ret = ddw_intern(w, w->scr, n, &row[l + 1]);
			if (ret)
				goto fail;
			w->held[l] |= n != 0;
		}
	}
	ret = inf_dd_build(w->dd, tab, in->nr_h, &w->root);
	if (ret)
		goto fail;
	free(ids);
	free(tab);
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
		const struct ddw_ent *e = w->ents + w->off[tuple[l + 1]];

		for (i = 0; i < w->len[tuple[l + 1]]; i++, n++) {
			en->keys[n] = inf_key(w->ids[l], e[i].cpu);
			en->vals[n] = e[i].val;
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

static int ddw_upd_step(void *ctx, unsigned int layer, uint64_t state, int64_t val, int64_t *ov,
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
	v = w->vis[layer - 1];
	i = w->pidx[layer];
	if (i < 0 && !(v != INF_NONE && v >= p0 && v < p1)) {
		ov[0] = val;	/* neither on the path nor visited now */
		os[0] = state;
		return 1;
	}
	ret = ddw_load(w, val, &n);
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
	ret = ddw_intern(w, w->scr, n, &ov[0]);
	if (ret)
		return ret;
	w->held[layer - 1] |= n != 0;
	os[0] = p0 | (uint64_t)p1 << DDW_PBITS | f;
	return 1;
}

/**
 * inf_ddw_update() - every tuple takes the update of path @pa from @cpu (as
 * built by inf_path_build() before the base takes it), as inf_hyp_update()
 * with no cut: the branches, each walk.
 */
int inf_ddw_update(struct infer *in, struct inf_ddw *w, const struct inf_path *pa,
		   unsigned int cpu)
{
	struct ddw_upd u = { .in = in, .w = w, .pa = pa, .cpu = cpu };
	unsigned int depth, l;
	bool branch = false;
	uint32_t out;
	size_t i;
	int ret;

	if (pa->cut || in->n_list > DDW_PMASK)
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
	ret = ddw_add(in, w, pa->id, pa->n);
	if (ret)
		return ret;
	u.si = (struct sim_step_in){ .th = pa->th, .abs_val = pa->abs_val, .batch = sim_batch(in->s) };
	for (i = 0; i < pa->n; i++) {
		l = ddw_layer(w, pa->id[i]);
		w->pidx[l] = (int32_t)i;
		branch |= pa->vis[i] != INF_NONE;
	}
	u.top = ddw_layer(w, pa->id[pa->n - 1]);
	depth = branch ? (unsigned int)w->nr + 1 : u.top + 1;
	ret = inf_dd_map(w->dd, w->root, depth, 0, ddw_upd_step, &u, &out);
	for (i = 0; i < pa->n; i++)
		w->pidx[ddw_layer(w, pa->id[i])] = -1;
	if (!ret)
		w->root = out;
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
		ret = ddw_load(w, val, &n);
		if (ret)
			return ret;
		if (v != INF_NONE && v >= state) {
			ddw_del(w->scr, &n, INF_ATOMIC);
			ddw_del(w->scr, &n, r->in->wcpu);
		}
		os[0] = state;
		return ddw_intern(w, w->scr, n, &ov[0]) ?: 1;
	}
	if (layer != r->layer) {
		ov[0] = val;
		os[0] = state;
		return 1;
	}
	/* inf_get() of the atomic */
	ret = ddw_load(w, val, &n);
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
		w->held[layer - 1] |= n != 0;
		return ddw_intern(w, w->scr, n, &ov[0]) ?: 1;
	}
}

static int ddw_rd(struct ddw_rd *r, uint32_t *out)
{
	unsigned int depth = r->op == DDW_CLOSE ? (unsigned int)r->w->nr + 1 : r->layer + 1;

	return inf_dd_map(r->w->dd, r->w->root, depth, 0, ddw_rd_step, r, out);
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

/* ---- the switch: list -> diagram -> list ---- */

/**
 * inf_dd_switch() - before an update in a window whose branches could take
 * the list past the cap (each hypothesis one per visit of the path still to
 * come, and itself): without a sink, the list becomes the diagram, exact
 * from here on.  The sink needs each order's history, which the diagram
 * does not keep: with one, the list and its cap stay.
 */
int inf_dd_switch(struct infer *in, const struct inf_path *pa)
{
	size_t i, nv = 0;
	int ret;

	if (!in->dd || in->ddw || in->order_fn || !in->win || pa->cut || in->n_list > DDW_PMASK)
		return 0;
	for (i = 0; i < pa->n; i++)
		nv += pa->vis[i] != INF_NONE;
	if (!nv || in->nr_h * (nv + 1) <= in->cap)
		return 0;
	ret = inf_lazy_end(in);
	if (!ret)
		ret = inf_ddw_open(in, &in->ddw);
	if (ret)
		return ret;
	for (i = 0; i < in->nr_h; i++)
		inf_hyp_free(in, &in->h[i]);
	in->nr_h = 0;
	in->dd_switches++;
	return 0;
}

static int ddw_to_hyp(void *ctx, size_t p, const uint64_t *keys, const int64_t *vals, size_t n)
{
	struct infer *in = ctx;
	struct inf_hyp h = { .p = p, .t_last = in->last_ts };
	size_t i;
	int ret = 0;

	for (i = 0; i < n && !ret; i++) {
		ret = idmap_put(&h.e, keys[i], vals[i]);
		h.ehash += inf_mix(keys[i], vals[i]);
	}
	if (!ret)
		ret = inf_push(in, &h);
	if (ret)
		inf_hyp_free(in, &h);
	return ret;
}

/**
 * inf_dd_back() - outside a window, a diagram of no more orders than the
 * cap becomes the list again (each cost 0: the spread model's distance is
 * not kept by the diagram).
 */
int inf_dd_back(struct infer *in)
{
	uint64_t n;
	int ret;

	if (!in->ddw || in->win)
		return 0;
	ret = inf_ddw_count(in->ddw, &n);
	if (ret)
		return ret == -EOVERFLOW ? 0 : ret;
	if (n > in->dd_max)
		in->dd_max = n;
	if (n > in->max_kept)
		in->max_kept = n;
	if (n > in->cap)
		return 0;
	ret = inf_ddw_enum(in->ddw, ddw_to_hyp, in);
	if (ret)
		return ret;
	inf_ddw_free(in->ddw);
	in->ddw = NULL;
	return inf_compact(in, true);
}
