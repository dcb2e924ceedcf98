// SPDX-License-Identifier: GPL-2.0
/*
 * infer_dd.c - the orders of a lock window as a quasi-reduced, hash-consed
 * layered decision diagram (infer_dd.h has the contract).
 *
 * Nodes sit in one array (0 and 1 are the empty set and the terminal), their
 * edges in one pool, a node's edges contiguous and sorted by value; nothing
 * is freed before inf_dd_destroy().  The unique table maps (layer, edges) to
 * the node; the operations build a node's edges on a scratch stack and hand
 * them to dd_mk(), which returns the existing node or appends a new one.
 * Every reference across a call that may make nodes is an index, never a
 * pointer: the arrays grow.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "infer_dd.h"

#define DD_UNION_MEMO	(1u << 15)	/* union memo entries kept at most */

struct dd_node {
	uint32_t	layer;
	uint32_t	ne;
	size_t		eoff;
	uint64_t	sum;	/* the OR of its edges' inf_dd_sum_fn and of their children's */
};

struct dd_edge {
	int64_t		val;
	uint32_t	child;
};

/* An operation's memo: (a, b) -> res, the entries of older generations as empty. */
struct dd_mslot {
	uint64_t	a, b, res;
	uint32_t	gen;
};

struct dd_memo {
	struct dd_mslot	*s;
	size_t		mask;	/* slots - 1; 0: none yet */
	size_t		used;
	uint32_t	gen;
};

struct inf_dd {
	unsigned int	nr;
	uint64_t	*keys;
	struct dd_node	*node;
	size_t		nr_node, cap_node;
	struct dd_edge	*edge;
	size_t		nr_edge, cap_edge;
	uint32_t	*ut;		/* unique table: node ids, 0 empty */
	size_t		ut_mask;
	struct dd_edge	*scr;		/* scratch stack of edges */
	size_t		nr_scr, cap_scr;
	struct dd_memo	op;		/* the running operation's, new generation per call */
	struct dd_memo	un;		/* union's: nodes never change, so kept across calls, up to DD_UNION_MEMO */
	int64_t		*tup;		/* enumeration's tuple */
	int64_t		*outv;		/* map steps' images, INF_DD_MAX_OUT per layer */
	uint64_t	*outs;
	uint64_t	steps;		/* nodes and edges the maps met, each time (inf_dd_steps()) */
	inf_dd_sum_fn	sum;		/* NULL: no summary, every node's is 0 */
	void		*sum_ctx;
	uint32_t	*mark;		/* inf_dd_size()'s visited stamps, per node */
	size_t		cap_mark;
	uint32_t	stamp;
};

static uint64_t dd_mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 29);
}

struct inf_dd *inf_dd_create(const uint64_t *keys, unsigned int nr_layers)
{
	struct inf_dd *dd;
	size_t n = nr_layers ? nr_layers : 1;

	if (nr_layers >= UINT32_MAX)
		return NULL;
	dd = calloc(1, sizeof(*dd));
	if (!dd)
		return NULL;
	dd->nr = nr_layers;
	dd->keys = calloc(n, sizeof(*dd->keys));
	dd->tup = calloc(n, sizeof(*dd->tup));
	dd->outv = calloc(n * INF_DD_MAX_OUT, sizeof(*dd->outv));
	dd->outs = calloc(n * INF_DD_MAX_OUT, sizeof(*dd->outs));
	dd->ut_mask = 255;
	dd->ut = calloc(dd->ut_mask + 1, sizeof(*dd->ut));
	if (!dd->keys || !dd->tup || !dd->outv || !dd->outs || !dd->ut ||
	    mcr_grow((void **)&dd->node, &dd->cap_node, 2, sizeof(*dd->node))) {
		inf_dd_destroy(dd);
		return NULL;
	}
	if (nr_layers)
		memcpy(dd->keys, keys, nr_layers * sizeof(*keys));
	/* 0: the empty set, 1: the terminal, below the last layer */
	dd->node[0] = (struct dd_node){ .layer = nr_layers };
	dd->node[1] = (struct dd_node){ .layer = nr_layers };
	dd->nr_node = 2;
	dd->op.gen = 1;
	dd->un.gen = 1;
	return dd;
}

void inf_dd_destroy(struct inf_dd *dd)
{
	if (!dd)
		return;
	free(dd->keys);
	free(dd->node);
	free(dd->edge);
	free(dd->ut);
	free(dd->scr);
	free(dd->op.s);
	free(dd->un.s);
	free(dd->tup);
	free(dd->outv);
	free(dd->outs);
	free(dd->mark);
	free(dd);
}

unsigned int inf_dd_layers(const struct inf_dd *dd)
{
	return dd->nr;
}

int inf_dd_set_sum(struct inf_dd *dd, inf_dd_sum_fn fn, void *ctx)
{
	if (dd->nr_node > 2)
		return -EBUSY;
	dd->sum = fn;
	dd->sum_ctx = ctx;
	return 0;
}

uint64_t inf_dd_sum(const struct inf_dd *dd, uint32_t u)
{
	return u < dd->nr_node ? dd->node[u].sum : 0;
}

uint64_t inf_dd_steps(const struct inf_dd *dd)
{
	return dd->steps;
}

uint64_t inf_dd_key(const struct inf_dd *dd, unsigned int layer)
{
	return layer < dd->nr ? dd->keys[layer] : 0;
}

size_t inf_dd_nr_edges(const struct inf_dd *dd)
{
	return dd->nr_edge;
}

size_t inf_dd_nr_nodes(const struct inf_dd *dd)
{
	return dd->nr_node - 2;
}

/* ---- the memo ---- */

/*
 * Two words in one mix: a multiply spreads @a over the word before @b joins
 * it.  Pairs that meet only probe on.  A node's hash mixes one pair an
 * edge: dd_mix() twice an edge was twice the time.
 */
static uint64_t dd_mix2(uint64_t h, uint64_t a, uint64_t b)
{
	return dd_mix(h, (a * 0x9e3779b97f4a7c15ull) ^ b);
}

static size_t dd_memo_slot(const struct dd_memo *m, uint64_t a, uint64_t b)
{
	return (size_t)dd_mix2(0x5bd1e995ull, a, b) & m->mask;
}

static bool dd_memo_get(const struct dd_memo *m, uint64_t a, uint64_t b, uint64_t *res)
{
	size_t i;

	if (!m->mask)
		return false;
	for (i = dd_memo_slot(m, a, b); m->s[i].gen == m->gen; i = (i + 1) & m->mask)
		if (m->s[i].a == a && m->s[i].b == b) {
			*res = m->s[i].res;
			return true;
		}
	return false;
}

static void dd_memo_put_at(struct dd_memo *m, uint64_t a, uint64_t b, uint64_t res)
{
	size_t i;

	for (i = dd_memo_slot(m, a, b); m->s[i].gen == m->gen; i = (i + 1) & m->mask)
		;
	m->s[i] = (struct dd_mslot){ .a = a, .b = b, .res = res, .gen = m->gen };
	m->used++;
}

static int dd_memo_put(struct dd_memo *m, uint64_t a, uint64_t b, uint64_t res)
{
	if (2 * (m->used + 1) > m->mask + 1) {
		struct dd_mslot *old = m->s;
		size_t i, n = m->mask ? m->mask + 1 : 0, nn = n ? 2 * n : 256;

		m->s = calloc(nn, sizeof(*m->s));
		if (!m->s) {
			m->s = old;
			return -ENOMEM;
		}
		m->mask = nn - 1;
		m->used = 0;
		for (i = 0; i < n; i++)
			if (old[i].gen == m->gen)
				dd_memo_put_at(m, old[i].a, old[i].b, old[i].res);
		free(old);
	}
	dd_memo_put_at(m, a, b, res);
	return 0;
}

/* A new generation: every entry is gone. */
static void dd_memo_clear(struct dd_memo *m)
{
	m->used = 0;
	if (++m->gen == 0) {
		if (m->s)
			memset(m->s, 0, (m->mask + 1) * sizeof(*m->s));
		m->gen = 1;
	}
}

/* ---- nodes ---- */

static int dd_push(struct inf_dd *dd, int64_t val, uint32_t child)
{
	if (mcr_grow((void **)&dd->scr, &dd->cap_scr, dd->nr_scr + 1, sizeof(*dd->scr)))
		return -ENOMEM;
	dd->scr[dd->nr_scr++] = (struct dd_edge){ .val = val, .child = child };
	return 0;
}

static uint64_t dd_hash(uint32_t layer, const struct dd_edge *e, size_t ne)
{
	uint64_t h = dd_mix(0x2545f4914f6cdd1dull, layer);
	size_t i;

	for (i = 0; i < ne; i++)
		h = dd_mix2(h, (uint64_t)e[i].val, e[i].child);
	return h;
}

static bool dd_same(const struct inf_dd *dd, uint32_t id, uint32_t layer,
		    const struct dd_edge *e, size_t ne)
{
	const struct dd_node *n = &dd->node[id];
	size_t i;

	if (n->layer != layer || n->ne != ne)
		return false;
	for (i = 0; i < ne; i++)
		if (dd->edge[n->eoff + i].val != e[i].val ||
		    dd->edge[n->eoff + i].child != e[i].child)
			return false;
	return true;
}

static int dd_ut_rehash(struct inf_dd *dd)
{
	size_t nn = 2 * (dd->ut_mask + 1), i;
	uint32_t *ut = calloc(nn, sizeof(*ut)), id;

	if (!ut)
		return -ENOMEM;
	free(dd->ut);
	dd->ut = ut;
	dd->ut_mask = nn - 1;
	for (id = 2; id < dd->nr_node; id++) {
		const struct dd_node *n = &dd->node[id];

		for (i = dd_hash(n->layer, dd->edge + n->eoff, n->ne) & dd->ut_mask; ut[i];
		     i = (i + 1) & dd->ut_mask)
			;
		ut[i] = id;
	}
	return 0;
}

/*
 * The node of @layer whose edges are the scratch stack from @base up (sorted,
 * one per value, no empty child); pops them.  No edge: the empty set.
 */
static int dd_mk(struct inf_dd *dd, uint32_t layer, size_t base, uint32_t *out)
{
	const struct dd_edge *e;
	size_t ne = dd->nr_scr - base, i, k;
	int ret;

	dd->nr_scr = base;
	if (!ne) {
		*out = INF_DD_EMPTY;
		return 0;
	}
	e = dd->scr + base;
	for (i = dd_hash(layer, e, ne) & dd->ut_mask; dd->ut[i]; i = (i + 1) & dd->ut_mask)
		if (dd_same(dd, dd->ut[i], layer, e, ne)) {
			*out = dd->ut[i];
			return 0;
		}
	if (dd->nr_node >= UINT32_MAX - 1 || ne > UINT32_MAX)
		return -ENOMEM;
	if (mcr_grow((void **)&dd->node, &dd->cap_node, dd->nr_node + 1, sizeof(*dd->node)) ||
	    mcr_grow((void **)&dd->edge, &dd->cap_edge, dd->nr_edge + ne, sizeof(*dd->edge)))
		return -ENOMEM;
	if (ne)
		memcpy(dd->edge + dd->nr_edge, e, ne * sizeof(*e));
	dd->node[dd->nr_node] = (struct dd_node){ .layer = layer, .ne = (uint32_t)ne,
						  .eoff = dd->nr_edge };
	for (k = 0; dd->sum && k < ne; k++)
		dd->node[dd->nr_node].sum |= dd->sum(dd->sum_ctx, layer, e[k].val) |
					     dd->node[e[k].child].sum;
	dd->nr_edge += ne;
	dd->ut[i] = (uint32_t)dd->nr_node;
	*out = (uint32_t)dd->nr_node++;
	if (2 * (dd->nr_node - 2) > dd->ut_mask + 1) {
		ret = dd_ut_rehash(dd);
		if (ret)
			return ret;
	}
	return 0;
}

static int dd_check(const struct inf_dd *dd, uint32_t u)
{
	return u < dd->nr_node ? 0 : -EINVAL;
}

/* ---- build ---- */

struct dd_rows {
	const int64_t	*tab;
	size_t		m;
};

static int dd_row_cmp(const void *a, const void *b, void *arg)
{
	const struct dd_rows *r = arg;
	const int64_t *x = r->tab + *(const size_t *)a * r->m, *y = r->tab + *(const size_t *)b * r->m;
	size_t j;

	for (j = 0; j < r->m; j++)
		if (x[j] != y[j])
			return x[j] < y[j] ? -1 : 1;
	return 0;
}

/* The rows ord[lo..hi), sorted and equal on the columns before @layer. */
static int dd_build_rec(struct inf_dd *dd, const int64_t *tab, const size_t *ord, size_t lo,
			size_t hi, uint32_t layer, uint32_t *out)
{
	size_t base = dd->nr_scr, a, b;
	uint32_t child;
	int ret;

	if (layer == dd->nr) {
		*out = INF_DD_ONE;
		return 0;
	}
	for (a = lo; a < hi; a = b) {
		int64_t v = tab[ord[a] * dd->nr + layer];

		for (b = a + 1; b < hi && tab[ord[b] * dd->nr + layer] == v; b++)
			;
		ret = dd_build_rec(dd, tab, ord, a, b, layer + 1, &child);
		if (!ret)
			ret = dd_push(dd, v, child);
		if (ret) {
			dd->nr_scr = base;
			return ret;
		}
	}
	return dd_mk(dd, layer, base, out);
}

int inf_dd_build(struct inf_dd *dd, const int64_t *tab, size_t n, uint32_t *root)
{
	struct dd_rows r = { .tab = tab, .m = dd->nr };
	size_t *ord, i;
	int ret;

	*root = INF_DD_EMPTY;
	if (!n)
		return 0;
	if (!dd->nr) {
		*root = INF_DD_ONE;
		return 0;
	}
	ord = malloc(n * sizeof(*ord));
	if (!ord)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		ord[i] = i;
	qsort_r(ord, n, sizeof(*ord), dd_row_cmp, &r);
	ret = dd_build_rec(dd, tab, ord, 0, n, 0, root);
	free(ord);
	return ret;
}

/* ---- count, enumerate, size ---- */

static int dd_count_rec(struct inf_dd *dd, uint32_t u, uint64_t *out)
{
	uint64_t sum = 0, c, res;
	size_t i;
	int ret;

	if (u <= INF_DD_ONE) {
		*out = u;
		return 0;
	}
	if (dd_memo_get(&dd->op, u, 0, &res)) {
		*out = res;
		return 0;
	}
	for (i = 0; i < dd->node[u].ne; i++) {
		ret = dd_count_rec(dd, dd->edge[dd->node[u].eoff + i].child, &c);
		if (ret)
			return ret;
		if (__builtin_add_overflow(sum, c, &sum))
			return -EOVERFLOW;
	}
	*out = sum;
	return dd_memo_put(&dd->op, u, 0, sum);
}

int inf_dd_count(struct inf_dd *dd, uint32_t root, uint64_t *count)
{
	int ret = dd_check(dd, root);

	*count = 0;
	if (ret)
		return ret;
	dd_memo_clear(&dd->op);
	return dd_count_rec(dd, root, count);
}

static int dd_enum_rec(struct inf_dd *dd, uint32_t u,
		       int (*fn)(void *ctx, const int64_t *tuple), void *ctx)
{
	const struct dd_node *n = &dd->node[u];
	size_t i;
	int ret;

	if (u == INF_DD_ONE)
		return fn(ctx, dd->tup);
	for (i = 0; i < n->ne; i++) {
		const struct dd_edge *e = &dd->edge[n->eoff + i];

		dd->tup[n->layer] = e->val;
		ret = dd_enum_rec(dd, e->child, fn, ctx);
		if (ret)
			return ret;
	}
	return 0;
}

int inf_dd_enum(struct inf_dd *dd, uint32_t root,
		int (*fn)(void *ctx, const int64_t *tuple), void *ctx)
{
	int ret = dd_check(dd, root);

	if (ret || root == INF_DD_EMPTY)
		return ret;
	if (dd->nr)
		memset(dd->tup, 0, dd->nr * sizeof(*dd->tup));
	return dd_enum_rec(dd, root, fn, ctx);
}

static void dd_size_rec(struct inf_dd *dd, uint32_t u, size_t *nodes, size_t *edges,
			size_t *width)
{
	size_t i;

	if (u <= INF_DD_ONE || dd->mark[u] == dd->stamp)
		return;
	dd->mark[u] = dd->stamp;
	(*nodes)++;
	*edges += dd->node[u].ne;
	if (width)
		width[dd->node[u].layer]++;
	for (i = 0; i < dd->node[u].ne; i++)
		dd_size_rec(dd, dd->edge[dd->node[u].eoff + i].child, nodes, edges, width);
}

int inf_dd_size(struct inf_dd *dd, uint32_t root, size_t *nodes, size_t *edges, size_t *width)
{
	size_t old = dd->cap_mark;
	int ret = dd_check(dd, root);

	*nodes = *edges = 0;
	if (width && dd->nr)
		memset(width, 0, dd->nr * sizeof(*width));
	if (ret)
		return ret;
	if (mcr_grow((void **)&dd->mark, &dd->cap_mark, dd->nr_node, sizeof(*dd->mark)))
		return -ENOMEM;
	if (dd->cap_mark > old)
		memset(dd->mark + old, 0, (dd->cap_mark - old) * sizeof(*dd->mark));
	if (++dd->stamp == 0) {
		memset(dd->mark, 0, dd->cap_mark * sizeof(*dd->mark));
		dd->stamp = 1;
	}
	dd_size_rec(dd, root, nodes, edges, width);
	return 0;
}

/* ---- restrict ---- */

static int dd_restrict_rec(struct inf_dd *dd, uint32_t u, uint32_t layer, int64_t val,
			   uint32_t *out)
{
	size_t base = dd->nr_scr, i, lo, hi;
	uint64_t res;
	uint32_t c;
	int ret;

	if (u <= INF_DD_ONE) {
		*out = u;
		return 0;
	}
	if (dd->node[u].layer == layer) {
		/* one edge at most: the one of @val */
		lo = 0;
		hi = dd->node[u].ne;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (dd->edge[dd->node[u].eoff + mid].val < val)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == dd->node[u].ne || dd->edge[dd->node[u].eoff + lo].val != val) {
			*out = INF_DD_EMPTY;
			return 0;
		}
		ret = dd_push(dd, val, dd->edge[dd->node[u].eoff + lo].child);
		return ret ? ret : dd_mk(dd, layer, base, out);
	}
	if (dd_memo_get(&dd->op, u, 0, &res)) {
		*out = (uint32_t)res;
		return 0;
	}
	for (i = 0; i < dd->node[u].ne; i++) {
		struct dd_edge e = dd->edge[dd->node[u].eoff + i];

		ret = dd_restrict_rec(dd, e.child, layer, val, &c);
		if (!ret && c != INF_DD_EMPTY)
			ret = dd_push(dd, e.val, c);
		if (ret) {
			dd->nr_scr = base;
			return ret;
		}
	}
	ret = dd_mk(dd, dd->node[u].layer, base, out);
	return ret ? ret : dd_memo_put(&dd->op, u, 0, *out);
}

int inf_dd_restrict(struct inf_dd *dd, uint32_t root, unsigned int layer, int64_t val,
		    uint32_t *out)
{
	int ret = dd_check(dd, root);

	*out = INF_DD_EMPTY;
	if (ret)
		return ret;
	if (layer >= dd->nr || (root != INF_DD_EMPTY && dd->node[root].layer > layer))
		return -EINVAL;
	dd_memo_clear(&dd->op);
	return dd_restrict_rec(dd, root, layer, val, out);
}

/* ---- union ---- */

static int dd_union_rec(struct inf_dd *dd, uint32_t a, uint32_t b, uint32_t *out)
{
	size_t base = dd->nr_scr, i = 0, j = 0, na, nb;
	uint32_t layer, c;
	uint64_t res;
	int ret = 0;

	if (a == b || b == INF_DD_EMPTY) {
		*out = a;
		return 0;
	}
	if (a == INF_DD_EMPTY) {
		*out = b;
		return 0;
	}
	if (a > b) {
		uint32_t t = a;

		a = b;
		b = t;
	}
	layer = dd->node[a].layer;
	if (a == INF_DD_ONE || dd->node[b].layer != layer)
		return -EINVAL;
	dd->steps++;	/* a map's images that meet are united: its work too */
	if (dd_memo_get(&dd->un, a, b, &res)) {
		*out = (uint32_t)res;
		return 0;
	}
	na = dd->node[a].ne;
	nb = dd->node[b].ne;
	while (!ret && (i < na || j < nb)) {
		struct dd_edge x = { 0 }, y = { 0 };

		if (i < na)
			x = dd->edge[dd->node[a].eoff + i];
		if (j < nb)
			y = dd->edge[dd->node[b].eoff + j];
		if (j == nb || (i < na && x.val < y.val)) {
			ret = dd_push(dd, x.val, x.child);
			i++;
		} else if (i == na || y.val < x.val) {
			ret = dd_push(dd, y.val, y.child);
			j++;
		} else {
			ret = dd_union_rec(dd, x.child, y.child, &c);
			if (!ret)
				ret = dd_push(dd, x.val, c);
			i++;
			j++;
		}
	}
	if (ret) {
		dd->nr_scr = base;
		return ret;
	}
	ret = dd_mk(dd, layer, base, out);
	if (ret)
		return ret;
	/* a cache: kept to DD_UNION_MEMO entries, not to every union ever made */
	if (dd->un.used >= DD_UNION_MEMO)
		dd_memo_clear(&dd->un);
	return dd_memo_put(&dd->un, a, b, *out);
}

int inf_dd_union(struct inf_dd *dd, uint32_t a, uint32_t b, uint32_t *out)
{
	int ret = dd_check(dd, a) ?: dd_check(dd, b);

	*out = INF_DD_EMPTY;
	return ret ? ret : dd_union_rec(dd, a, b, out);
}

int inf_dd_drop_top(struct inf_dd *dd, uint32_t root, uint32_t *out)
{
	uint32_t acc = INF_DD_EMPTY;
	size_t i;
	int ret = dd_check(dd, root);

	*out = INF_DD_EMPTY;
	if (ret)
		return ret;
	if (root == INF_DD_ONE)
		return -EINVAL;
	for (i = 0; !ret && i < dd->node[root].ne; i++)
		ret = dd_union_rec(dd, acc, dd->edge[dd->node[root].eoff + i].child, &acc);
	if (!ret)
		*out = acc;
	return ret;
}

/* ---- map ---- */

struct dd_map {
	inf_dd_keep_fn		keep;
	uint64_t		stop_at;	/* dd->steps past which a step is refused */
	unsigned int	depth;
	inf_dd_step_fn	fn;
	void		*ctx;
};

static inline bool dd_edge_less(const struct dd_edge *x, const struct dd_edge *y)
{
	return x->val < y->val || (x->val == y->val && x->child < y->child);
}

static int dd_edge_cmp(const void *a, const void *b)
{
	const struct dd_edge *x = a, *y = b;

	return dd_edge_less(x, y) ? -1 : dd_edge_less(y, x);
}

/*
 * A map's images in value order.  They come as a few ascending runs (a
 * batch that fills wraps the largest per-CPU values round to the smallest):
 * a node's few tens of edges sort in place faster than qsort() calls its
 * comparison for them.
 */
#define DD_SORT_INSERT	64

static void dd_edges_sort(struct dd_edge *v, size_t n)
{
	size_t i, j;

	if (n > DD_SORT_INSERT) {
		qsort(v, n, sizeof(*v), dd_edge_cmp);
		return;
	}
	for (i = 1; i < n; i++) {
		struct dd_edge x = v[i];

		for (j = i; j && dd_edge_less(&x, &v[j - 1]); j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

static int dd_map_rec(struct inf_dd *dd, const struct dd_map *mp, uint32_t u, uint64_t state,
		      uint32_t *out)
{
	size_t base = dd->nr_scr, i, k, w;
	uint32_t layer = dd->node[u].layer, c;
	bool same = true, sorted = true;
	uint64_t res;
	int ret = 0, nout;

	dd->steps++;
	if (u == INF_DD_EMPTY || (mp->keep && u != INF_DD_ONE &&
				  mp->keep(mp->ctx, layer, state, dd->node[u].sum))) {
		*out = u;
		return 0;
	}
	if (dd_memo_get(&dd->op, u, state, &res)) {
		*out = (uint32_t)res;
		return 0;
	}
	dd->steps += dd->node[u].ne;	/* a step an edge too: a node may be wide */
	/*
	 * While every edge so far is its own image nothing is pushed: most
	 * nodes of a map come out as they were (the keep shortcut aside).
	 */
	for (i = 0; !ret && i < dd->node[u].ne; i++) {
		struct dd_edge e = dd->edge[dd->node[u].eoff + i];
		int64_t *ov = dd->outv + (size_t)layer * INF_DD_MAX_OUT;
		uint64_t *os = dd->outs + (size_t)layer * INF_DD_MAX_OUT;
		uint32_t ch[INF_DD_MAX_OUT];

		if (dd->steps > mp->stop_at) {
			ret = -E2BIG;
			break;
		}
		nout = mp->fn(mp->ctx, layer, state, e.val, ov, os);
		if (nout < 0 || nout > INF_DD_MAX_OUT) {
			ret = nout < 0 ? nout : -EINVAL;
			break;
		}
		for (k = 0; !ret && k < (size_t)nout; k++) {
			ch[k] = e.child;
			if (layer + 1 < mp->depth)
				ret = dd_map_rec(dd, mp, e.child, os[k], &ch[k]);
		}
		if (ret)
			break;
		if (same && nout == 1 && ov[0] == e.val && ch[0] == e.child)
			continue;
		if (same) {
			/* the edges before this one were their own images, in order */
			for (k = 0; !ret && k < i; k++)
				ret = dd_push(dd, dd->edge[dd->node[u].eoff + k].val,
					      dd->edge[dd->node[u].eoff + k].child);
			same = false;
		}
		for (k = 0; !ret && k < (size_t)nout; k++) {
			if (ch[k] == INF_DD_EMPTY)
				continue;
			sorted &= dd->nr_scr == base || dd->scr[dd->nr_scr - 1].val < ov[k];
			ret = dd_push(dd, ov[k], ch[k]);
		}
	}
	if (ret) {
		dd->nr_scr = base;
		return ret;
	}
	if (same) {
		/* every edge its own image: the node, neither sorted nor hashed again */
		*out = u;
		return dd_memo_put(&dd->op, u, state, u);
	}
	/* images may meet: one edge per value, its child the union of theirs */
	if (!sorted)
		dd_edges_sort(dd->scr + base, dd->nr_scr - base);
	for (i = base, w = base; !ret && i < dd->nr_scr; i++) {
		if (w > base && dd->scr[w - 1].val == dd->scr[i].val) {
			ret = dd_union_rec(dd, dd->scr[w - 1].child, dd->scr[i].child, &c);
			dd->scr[w - 1].child = c;
		} else {
			dd->scr[w++] = dd->scr[i];
		}
	}
	if (ret) {
		dd->nr_scr = base;
		return ret;
	}
	dd->nr_scr = w;
	ret = dd_mk(dd, layer, base, out);
	return ret ? ret : dd_memo_put(&dd->op, u, state, *out);
}

int inf_dd_map(struct inf_dd *dd, uint32_t root, unsigned int depth, uint64_t state0,
	       inf_dd_step_fn fn, inf_dd_keep_fn keep, void *ctx, uint32_t *out)
{
	return inf_dd_map_within(dd, root, depth, state0, fn, keep, ctx, UINT64_MAX, out);
}

int inf_dd_map_within(struct inf_dd *dd, uint32_t root, unsigned int depth, uint64_t state0,
		      inf_dd_step_fn fn, inf_dd_keep_fn keep, void *ctx, uint64_t max_steps,
		      uint32_t *out)
{
	struct dd_map mp = {
		.depth = depth, .fn = fn, .keep = keep, .ctx = ctx,
		.stop_at = dd->steps + max_steps < dd->steps ? UINT64_MAX : dd->steps + max_steps,
	};
	int ret = dd_check(dd, root);

	*out = INF_DD_EMPTY;
	if (ret)
		return ret;
	if (root == INF_DD_EMPTY)
		return 0;
	if (depth > dd->nr || dd->node[root].layer >= depth) {
		if (depth <= dd->nr && dd->node[root].layer == depth) {
			*out = root;	/* no layer to rewrite */
			return 0;
		}
		return -EINVAL;
	}
	dd_memo_clear(&dd->op);
	return dd_map_rec(dd, &mp, root, state0, out);
}

/* ---- embed ---- */

struct dd_embed {
	struct inf_dd		*src;
	const unsigned int	*map;
	int64_t			fill;
};

/* @u of @src as the node of @dst's layer @l (@u's own layer maps at or below @l). */
static int dd_embed_rec(struct inf_dd *dst, const struct dd_embed *em, uint32_t u, uint32_t l,
			uint32_t *out)
{
	const struct inf_dd *src = em->src;
	size_t base = dst->nr_scr, i;
	uint32_t lu, c;
	uint64_t res;
	int ret = 0;

	if (u == INF_DD_EMPTY || l == dst->nr) {
		*out = u;
		return 0;
	}
	if (dd_memo_get(&dst->op, u, l, &res)) {
		*out = (uint32_t)res;
		return 0;
	}
	lu = u == INF_DD_ONE ? dst->nr : em->map[src->node[u].layer];
	if (l < lu) {
		ret = dd_embed_rec(dst, em, u, l + 1, &c);
		if (!ret)
			ret = dd_push(dst, em->fill, c);
	} else {
		for (i = 0; !ret && i < src->node[u].ne; i++) {
			struct dd_edge e = src->edge[src->node[u].eoff + i];

			ret = dd_embed_rec(dst, em, e.child, l + 1, &c);
			if (!ret)
				ret = dd_push(dst, e.val, c);
		}
	}
	if (ret) {
		dst->nr_scr = base;
		return ret;
	}
	ret = dd_mk(dst, l, base, out);
	return ret ? ret : dd_memo_put(&dst->op, u, l, *out);
}

int inf_dd_embed(struct inf_dd *src, uint32_t root, struct inf_dd *dst, const unsigned int *map,
		 int64_t fill, uint32_t *out)
{
	struct dd_embed em = { .src = src, .map = map, .fill = fill };
	unsigned int i;
	int ret = dd_check(src, root);

	*out = INF_DD_EMPTY;
	if (ret)
		return ret;
	if (src->nr > dst->nr)
		return -EINVAL;
	for (i = 0; i < src->nr; i++)
		if (map[i] >= dst->nr || (i && map[i] <= map[i - 1]))
			return -EINVAL;
	if (root != INF_DD_EMPTY && root != INF_DD_ONE && src->node[root].layer)
		return -EINVAL;
	dd_memo_clear(&dst->op);
	return dd_embed_rec(dst, &em, root, 0, out);
}
