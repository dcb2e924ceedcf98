// SPDX-License-Identifier: GPL-2.0
/*
 * infer_census FILE [MAX_HYP [EVERY [EVENTS [DD]]]]: what the order inference's hypotheses
 * differ in when there are many, to size an exact representation before
 * building one.  Runs validate's inference (the traced kernel's policy) over
 * the trace database FILE (read only) with a cap of MAX_HYP hypotheses
 * (0: the default), and each time the cap has just dropped some (every
 * EVERY-th such time, default 1), and at each new peak, takes a census of
 * the hypotheses kept; EVENTS: the trace's first EVENTS events only:
 *
 *   n        hypotheses, and how many positions (p) in the open window
 *   keys     counters whose value differs between them, as the window's
 *            close would leave them (a visit still to come resets its
 *            counters: what only says how far a hypothesis is in the window
 *            is its position): atomics, per-CPU counters of the window's
 *            CPU, of other CPUs
 *   dom      the sum over those counters of the values each takes, and
 *            log2 of their product (the size of a product of per-counter
 *            value sets, which keeps combinations no order gives)
 *   comp     the counters grouped by pairwise dependence (two counters are
 *            dependent when some pair of their values never occurs together),
 *            the sum over groups of the value tuples each group takes, and
 *            whether the product of the groups is exactly the hypotheses
 *            (then the groups factor the set without loss); with more than
 *            one group, a second line lists each group's tuples and columns
 *            (the position, atomics, per-CPU counters by CPU)
 *   dd       a reduced layered decision diagram of the set (position first,
 *            then the counters by their memcg's place in the window's
 *            visit list, per-CPU ones beside their atomic): nodes, edges
 *            and its widest layer.  Its edges against n x keys is what an
 *            exact shared representation saves over a list of hypotheses.
 *            The same with the counters in a random order, as a control.
 *            Both are built by the inference's own diagram (infer_dd.c);
 *            "counted here" says whether a hash count of the same diagram
 *            agrees (nodes, edges, widest layer) and the random order holds
 *            as many tuples (distinct settled rows, "tuples").
 *
 * DD 1: a window whose list the cap could cut holds its orders as a decision
 * diagram instead (replay/infer/infer_ddwin.c, off in the tool); the summary
 * then says how often the list became a diagram and the most orders one held
 * at a close or a read; censuses see the list only.
 *
 * White box: it reads the inference's private layout (infer-local.h) and
 * changes nothing but DD; the replay's results are not written.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "replay.h"
#include "replay-local.h"
#include "infer/infer-local.h"
#include "infer/infer_dd.h"

#define CENSUS_MAX_PAIRS	128	/* counters above which no groups are made */

struct census_src {
	struct replay_source	db;
	struct replay		*r;
	uint64_t		events, last_capped, cap_events, every, peak, stop;
	/* over every census */
	uint64_t		dd_disagree;	/* module's diagram unlike the counted one */
	uint64_t		nr, max_n, max_keys, max_edges, max_comp_sum;
	double			sum_ratio;
};

struct ckey {
	uint64_t	key;
	uint64_t	order;	/* visit-list place, then atomic before per-CPU */
};

static int ckey_cmp(const void *a, const void *b)
{
	const struct ckey *x = a, *y = b;

	if (x->order != y->order)
		return x->order < y->order ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

static int ckey_raw_cmp(const void *a, const void *b)
{
	const struct ckey *x = a, *y = b;

	uint64_t p = inf_mix(x->key, 0), q = inf_mix(y->key, 0);

	return p < q ? -1 : p > q;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	uint64_t z = h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* How many distinct values in @v[0..n) (sorted in place). */
static size_t distinct(uint64_t *v, size_t n)
{
	size_t i, d = 0;

	qsort(v, n, sizeof(*v), u64_cmp);
	for (i = 0; i < n; i++)
		d += !i || v[i] != v[i - 1];
	return d;
}

/* The rows' tuples (m columns, row-major), for the diagram's sort. */
static const int64_t *g_tab;
static size_t g_m;

static int row_cmp(const void *a, const void *b)
{
	const int64_t *x = g_tab + *(const uint32_t *)a * g_m, *y = g_tab + *(const uint32_t *)b * g_m;
	size_t j;

	for (j = 0; j < g_m; j++)
		if (x[j] != y[j])
			return x[j] < y[j] ? -1 : 1;
	return 0;
}

/*
 * The reduced diagram of the rows of @tab (n x m), column order as given:
 * a node of level i is the set of (value, child) pairs of a prefix group;
 * equal sets are one node (by a 64-bit hash: a measurement).
 */
static void diagram(const int64_t *tab, size_t n, size_t m, uint64_t *nodes, uint64_t *edges,
		    uint64_t *width)
{
	uint32_t *ord = malloc(n * sizeof(*ord));
	uint64_t *child = malloc(n * sizeof(*child)), *sig = malloc(2 * n * sizeof(*sig));
	size_t i, j, a, b;

	*nodes = *edges = *width = 0;
	if (!ord || !child || !sig)
		goto out;
	for (i = 0; i < n; i++) {
		ord[i] = (uint32_t)i;
		child[i] = 1;	/* the terminal */
	}
	g_tab = tab;
	g_m = m;
	qsort(ord, n, sizeof(*ord), row_cmp);
	/* level i's groups: rows equal on columns 0..i-1; child[] holds level i+1's node per row */
	for (i = m; i-- > 0; ) {
		size_t nsig = 0;

		for (a = 0; a < n; a = b) {
			uint64_t h = 0x1234567ull + i, pairs = 0;
			const int64_t *ra = tab + (size_t)ord[a] * m;

			for (b = a + 1; b < n; b++) {
				const int64_t *rb = tab + (size_t)ord[b] * m;

				if (i && memcmp(ra, rb, i * sizeof(*ra)))
					break;
			}
			/* the pairs (value at i, child), rows sorted so equal values are adjacent */
			for (j = a; j < b; j++) {
				const int64_t *r = tab + (size_t)ord[j] * m;

				if (j > a && r[i] == tab[(size_t)ord[j - 1] * m + i] &&
				    child[ord[j]] == child[ord[j - 1]])
					continue;
				h = mix(mix(h, (uint64_t)r[i]), child[ord[j]]);
				pairs++;
			}
			for (j = a; j < b; j++)
				child[ord[j]] = h;
			/* (node, its edges), as pairs: a node shared by groups counts once */
			sig[2 * nsig] = h;
			sig[2 * nsig + 1] = pairs;
			nsig++;
		}
		qsort(sig, nsig, 2 * sizeof(*sig), u64_cmp);
		for (j = 0, a = 0; j < nsig; j++) {
			if (j && sig[2 * j] == sig[2 * j - 2])
				continue;
			a++;
			*edges += sig[2 * j + 1];
		}
		*nodes += a;
		if (a > *width)
			*width = a;
	}
out:
	free(ord);
	free(child);
	free(sig);
}

/*
 * The same diagram built by the inference's own (replay/infer/infer_dd.c):
 * layer 0 the position (key 0 here), then @keys' counters.  @tuples: the
 * distinct rows it holds (hypotheses alike once settled are one).
 */
static int dd_module(const int64_t *tab, size_t n, const struct ckey *keys, size_t nd,
		     uint64_t *nodes, uint64_t *edges, uint64_t *width, uint64_t *tuples)
{
	uint64_t *lk = calloc(nd + 1, sizeof(*lk));
	size_t *w = calloc(nd + 1, sizeof(*w)), nn = 0, ne = 0, j;
	struct inf_dd *dd = NULL;
	uint32_t root;
	int ret = -ENOMEM;

	*nodes = *edges = *width = *tuples = 0;
	if (!lk || !w)
		goto out;
	for (j = 0; j < nd; j++)
		lk[j + 1] = keys[j].key;
	dd = inf_dd_create(lk, (unsigned int)(nd + 1));
	if (!dd)
		goto out;
	ret = inf_dd_build(dd, tab, n, &root);
	if (!ret)
		ret = inf_dd_size(dd, root, &nn, &ne, w);
	if (!ret)
		ret = inf_dd_count(dd, root, tuples);
	*nodes = nn;
	*edges = ne;
	for (j = 0; j <= nd; j++)
		if (w[j] > *width)
			*width = w[j];
out:
	inf_dd_destroy(dd);
	free(lk);
	free(w);
	return ret;
}

/*
 * @h's counter @key as the window's close would leave it if nothing else
 * came: a counter whose visit @h has still to make is 0 then.  Differences
 * that only say how far @h is in the window (its position does) drop out.
 */
static int64_t settled(const struct infer *in, const struct inf_hyp *h, uint64_t key)
{
	size_t v = inf_vis(in, key);

	return v != INF_NONE && v >= h->p ? 0 : inf_get(in, h, key);
}

/* The group (union-find root) of column @j. */
static size_t grp_root(const int *grp, size_t j)
{
	while ((size_t)grp[j] != j)
		j = (size_t)grp[j];
	return j;
}

/*
 * " T (pos, N atomics, cpu C: K, ...)": group @g's @tuples, and its columns:
 * the position (column 0), atomics, per-CPU counters by CPU.  Into @buf,
 * returns the length written (at most @size - 1).
 */
static size_t group_desc(char *buf, size_t size, const int *grp, const struct ckey *keys,
			 size_t nd, size_t g, uint64_t tuples)
{
	unsigned int cpus[16], nc[16], ncpu = 0, nat = 0, u;
	bool pos = false, more = false;
	size_t j, len;

	for (j = 0; j <= nd; j++) {
		if (grp_root(grp, j) != g)
			continue;
		if (!j) {
			pos = true;
			continue;
		}
		if (inf_key_cpu(keys[j - 1].key) == INF_ATOMIC) {
			nat++;
			continue;
		}
		for (u = 0; u < ncpu && cpus[u] != inf_key_cpu(keys[j - 1].key); u++)
			;
		if (u == ncpu && ncpu == 16) {
			more = true;
			continue;
		}
		if (u == ncpu) {
			cpus[ncpu] = inf_key_cpu(keys[j - 1].key);
			nc[ncpu++] = 0;
		}
		nc[u]++;
	}
	len = (size_t)snprintf(buf, size, " %llu (%s%u atomics", (unsigned long long)tuples,
			       pos ? "pos, " : "", nat);
	for (u = 0; u < ncpu && len < size; u++)
		len += (size_t)snprintf(buf + len, size - len, ", cpu %u: %u", cpus[u], nc[u]);
	if (len < size)
		len += (size_t)snprintf(buf + len, size - len, "%s)", more ? ", ..." : "");
	return len < size ? len : size - 1;
}

static void census(struct census_src *c)
{
	struct infer *in = c->r->inf;
	size_t n = in->nr_h, m = 0, cap = 64, i, j, k;
	struct ckey *keys = malloc(cap * sizeof(*keys));
	size_t nat = 0, nwin = 0, noth = 0, nd = 0;
	uint64_t *col = malloc((n + 1) * sizeof(*col));
	int64_t *tab = NULL;
	double log_dom = 0;
	uint64_t sum_dom = 0, dd_nodes, dd_edges, dd_width, comp_sum = 0;
	uint64_t ctl_nodes = 0, ctl_edges = 0, ctl_width = 0, ctl_tuples = 0;
	uint64_t hash_nodes, hash_edges, hash_width, tuples = 0;
	int dd_ret, ctl_ret = 0;
	struct ckey *perm;
	int64_t *ctl;
	size_t ncomp = 0;
	long double comp_prod = 1;
	struct idmap seen = { 0 };
	int *grp = NULL;
	char gdesc[2048] = "";
	size_t gdesc_len = 0;

	if (!keys || !col)
		goto out;
	/* every counter some table holds */
	for (i = 0; i < n; i++) {
		const struct idmap_ent *e;
		uint32_t pos = 0;

		while ((e = idmap_next(&in->h[i].e, &pos))) {
			size_t v;

			if (idmap_find(&seen, e->key))
				continue;
			if (idmap_put(&seen, e->key, 0))
				goto out;
			if (m == cap) {
				struct ckey *t = realloc(keys, 2 * cap * sizeof(*keys));

				if (!t)
					goto out;
				keys = t;
				cap *= 2;
			}
			v = inf_list_idx(in, inf_key_id(e->key));
			keys[m].key = e->key;
			keys[m].order = (v == INF_NONE ? (uint64_t)1 << 40 : v) << 16 |
					(inf_key_cpu(e->key) == INF_ATOMIC ? 0 : 1 + inf_key_cpu(e->key) % 0x7fff);
			m++;
		}
	}
	qsort(keys, m, sizeof(*keys), ckey_cmp);
	/* column 0: the position; then the counters whose value differs */
	tab = malloc(n * (m + 1) * sizeof(*tab));
	if (!tab)
		goto out;
	for (i = 0; i < n; i++)
		col[i] = in->h[i].p;
	for (i = 0; i < n; i++)
		tab[i * (m + 1)] = (int64_t)in->h[i].p;
	{
		uint64_t np = distinct(col, n);

		sum_dom = np;
		log_dom = log2((double)np);
	}
	for (k = 0; k < m; k++) {
		uint64_t d;

		for (i = 0; i < n; i++)
			col[i] = (uint64_t)settled(in, &in->h[i], keys[k].key);
		d = distinct(col, n);
		if (d < 2)
			continue;
		for (i = 0; i < n; i++)
			tab[i * (m + 1) + 1 + nd] = settled(in, &in->h[i], keys[k].key);
		keys[nd++] = keys[k];
		sum_dom += d;
		log_dom += log2((double)d);
		if (inf_key_cpu(keys[k].key) == INF_ATOMIC)
			nat++;
		else if (in->win && inf_key_cpu(keys[k].key) == in->wcpu)
			nwin++;
		else
			noth++;
	}
	/* compact the rows to 1 + nd columns */
	for (i = 0; i < n; i++)
		memmove(tab + i * (nd + 1), tab + i * (m + 1), (nd + 1) * sizeof(*tab));
	/* groups by pairwise dependence (union-find over the columns, the position too) */
	grp = malloc((nd + 1) * sizeof(*grp));
	if (!grp)
		goto out;
	for (j = 0; j <= nd; j++)
		grp[j] = (int)j;
	/* quadratic in the counters: skipped when there are many */
	for (j = 0; j <= nd && nd <= CENSUS_MAX_PAIRS; j++)
		for (k = j + 1; k <= nd; k++) {
			uint64_t dj, dk, djk;
			size_t a = grp_root(grp, j), b = grp_root(grp, k);

			if (a == b)
				continue;
			for (i = 0; i < n; i++)
				col[i] = (uint64_t)tab[i * (nd + 1) + j];
			dj = distinct(col, n);
			for (i = 0; i < n; i++)
				col[i] = (uint64_t)tab[i * (nd + 1) + k];
			dk = distinct(col, n);
			for (i = 0; i < n; i++)
				col[i] = mix((uint64_t)tab[i * (nd + 1) + j], (uint64_t)tab[i * (nd + 1) + k]);
			djk = distinct(col, n);
			if (djk != dj * dk)
				grp[b] = (int)a;
		}
	for (j = 0; j <= nd; j++) {
		if (grp_root(grp, j) != j)
			continue;
		/* the tuples of group j */
		for (i = 0; i < n; i++) {
			uint64_t h = 77;

			for (k = 0; k <= nd; k++)
				if (grp_root(grp, k) == j)
					h = mix(h, (uint64_t)tab[i * (nd + 1) + k]);
			col[i] = h;
		}
		k = distinct(col, n);
		comp_sum += k;
		comp_prod *= (long double)k;
		ncomp++;
		if (gdesc_len < sizeof(gdesc) - 64)
			gdesc_len += group_desc(gdesc + gdesc_len, sizeof(gdesc) - gdesc_len, grp, keys,
						nd, j, k);
	}
	/* the module's diagram, and the one counted here as its check */
	dd_ret = dd_module(tab, n, keys, nd, &dd_nodes, &dd_edges, &dd_width, &tuples);
	diagram(tab, n, nd + 1, &hash_nodes, &hash_edges, &hash_width);
	/* the control: the counters in a random order (by a hash of their key) */
	ctl = malloc(n * (nd + 1) * sizeof(*ctl));
	perm = malloc(nd * sizeof(*perm));
	if (ctl && perm) {
		for (j = 0; j < nd; j++)
			perm[j] = keys[j];
		qsort(perm, nd, sizeof(*perm), ckey_raw_cmp);
		for (j = 0; j < nd; j++)
			for (k = 0; k < nd; k++)
				if (keys[k].key == perm[j].key)
					perm[j].order = k;
		for (i = 0; i < n; i++) {
			ctl[i * (nd + 1)] = tab[i * (nd + 1)];
			for (j = 0; j < nd; j++)
				ctl[i * (nd + 1) + 1 + j] = tab[i * (nd + 1) + 1 + perm[j].order];
		}
		for (j = 0; j < nd; j++)
			perm[j] = keys[perm[j].order];
		ctl_ret = dd_module(ctl, n, perm, nd, &ctl_nodes, &ctl_edges, &ctl_width,
				    &ctl_tuples);
	}
	free(ctl);
	free(perm);
	printf("census event %llu: n %zu, keys %zu (atomic %zu, window cpu %zu, other cpus %zu), "
	       "dom sum %llu log2 prod %.1f, comp %zu sum %llu exact %s, dd nodes %llu edges %llu "
	       "width %llu tuples %llu (list %zu; random order: nodes %llu edges %llu width %llu), "
	       "capped %llu, counted here: %s\n",
	       (unsigned long long)c->events, n, nd, nat, nwin, noth,
	       (unsigned long long)sum_dom, log_dom, ncomp, (unsigned long long)comp_sum,
	       nd > CENSUS_MAX_PAIRS ? "-" : comp_prod == (long double)n ? "yes" : "no", (unsigned long long)dd_nodes,
	       (unsigned long long)dd_edges, (unsigned long long)dd_width,
	       (unsigned long long)tuples, n * (nd + 1),
	       (unsigned long long)ctl_nodes, (unsigned long long)ctl_edges,
	       (unsigned long long)ctl_width, (unsigned long long)in->capped,
	       dd_ret || ctl_ret ? "module failed" :
	       hash_nodes == dd_nodes && hash_edges == dd_edges && hash_width == dd_width &&
	       ctl_tuples == tuples ? "agrees" : "DIFFERS");
	if (ncomp > 1 && nd <= CENSUS_MAX_PAIRS)
		printf("  groups:%s\n", gdesc);
	if (dd_ret || ctl_ret || hash_nodes != dd_nodes || hash_edges != dd_edges ||
	    hash_width != dd_width || ctl_tuples != tuples)
		c->dd_disagree++;
	c->nr++;
	if (n > c->max_n)
		c->max_n = n;
	if (nd > c->max_keys)
		c->max_keys = nd;
	if (dd_edges > c->max_edges)
		c->max_edges = dd_edges;
	if (comp_sum > c->max_comp_sum)
		c->max_comp_sum = comp_sum;
	c->sum_ratio += (double)dd_edges / (double)(n * (nd + 1));
out:
	idmap_free(&seen);
	free(keys);
	free(col);
	free(tab);
	free(grp);
}

static int census_next(void *ctx, struct mcr_event *ev)
{
	struct census_src *c = ctx;
	struct infer *in = c->r ? c->r->inf : NULL;

	if (in && in->capped != c->last_capped) {
		c->last_capped = in->capped;
		if (c->cap_events++ % c->every == 0)
			census(c);
	} else if (in && in->nr_h > c->peak) {
		c->peak = in->nr_h;
		census(c);
	}
	if (c->stop && c->events == c->stop)
		return 0;	/* a prefix of the trace */
	c->events++;
	return c->db.next(c->db.ctx, ev);
}

static int census_rewind(void *ctx)
{
	struct census_src *c = ctx;

	return c->db.rewind(c->db.ctx);
}

int main(int argc, char **argv)
{
	struct replay_params p = { .model = &replay_model_spread, .validate = true };
	struct census_src c = { .every = 1 };
	struct replay_source src = { census_next, census_rewind, &c, NULL };
	const struct replay_validation *v;
	struct replay_trace tr;
	struct db *db;
	bool dd;
	int ret;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE [MAX_HYP [EVERY [EVENTS [DD]]]]\n", argv[0]);
		return 2;
	}
	p.max_hypotheses = argc > 2 ? (unsigned int)strtoul(argv[2], NULL, 0) : 0;
	c.every = argc > 3 ? strtoull(argv[3], NULL, 0) : 1;
	if (!c.every)
		c.every = 1;
	c.stop = argc > 4 ? strtoull(argv[4], NULL, 0) : 0;
	dd = argc > 5 && strtoul(argv[5], NULL, 0);
	ret = db_open(argv[1], false, &db);
	if (ret) {
		fprintf(stderr, "%s: cannot open (%d)\n", argv[1], ret);
		return 1;
	}
	ret = replay_trace_load(db, &tr);
	if (!ret)
		ret = replay_source_db_open(db, &c.db);
	if (ret) {
		fprintf(stderr, "%s: cannot read (%d)\n", argv[1], ret);
		return 1;
	}
	p.runs[0] = replay_run_own(&tr, replay_policy_for_trace(&tr));
	p.nr_runs = 1;
	ret = replay_create(&p, &tr, &c.r);
	if (!ret && !c.r->inf)
		ret = -EINVAL;	/* no lock windows traced: nothing to infer */
	if (!ret)
		c.r->inf->dd = dd;
	if (!ret)
		ret = replay_run(c.r, &src);
	if (ret) {
		fprintf(stderr, "%s: replay failed (%d)\n", argv[1], ret);
		return 1;
	}
	v = replay_validation(c.r);
	printf("summary: %llu censuses of %llu cap events; max n %llu, max keys %llu, "
	       "max dd edges %llu, max comp sum %llu, mean dd edges / (n x keys) %.3f; "
	       "matched %llu of %llu, capped %llu; module's diagram unlike the counted one: %llu\n",
	       (unsigned long long)c.nr, (unsigned long long)c.cap_events,
	       (unsigned long long)c.max_n, (unsigned long long)c.max_keys,
	       (unsigned long long)c.max_edges, (unsigned long long)c.max_comp_sum,
	       c.nr ? c.sum_ratio / (double)c.nr : 0.0,
	       (unsigned long long)v->stats_updates_match, (unsigned long long)v->compared,
	       (unsigned long long)v->capped, (unsigned long long)c.dd_disagree);
	if (dd)
		printf("diagram: list -> diagram %llu times, at most %llu orders at a close or read, "
		       "%s at the end\n", (unsigned long long)c.r->inf->dd_switches,
		       (unsigned long long)c.r->inf->dd_max, c.r->inf->ddw ? "a diagram" : "the list");
	replay_destroy(c.r);
	replay_source_db_close(&c.db);
	replay_trace_free(&tr);
	db_close(db);
	return 0;
}
