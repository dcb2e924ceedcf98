// SPDX-License-Identifier: GPL-2.0
/*
 * The open window's hypotheses on the decision diagram (replay/infer/infer_ddwin.c)
 * against the list (replay/infer/), which keeps every order when it makes every
 * branch and its cap is never reached: fed the same random windows, the
 * diagram's tuples are the list's hypotheses as a set, (position, entries)
 * for (position, entries), after every update, after the close and after
 * every read, and both answer each read alike.
 *
 * Tree root -> A (-> A1, A2), B (-> B1), 3 CPUs; each round 3 updates outside
 * a window, then a window over the root or A on a random CPU with 4-9
 * updates of -80..80 on random CPUs and nodes; the diagram is made from the
 * list as the window opens.  After the window a read of a random node (3 in
 * 4, and more while the list holds over MAX_LIST), with the atomic one
 * hypothesis holds, or now and then a value none holds (the list then gives
 * it to all).  Per policy, two seeds; the lists reach thousands.
 */
#include <stdlib.h>
#include <string.h>

#include "../harness.h"
#include "infer.h"
#include "infer/infer-local.h"	/* white box: the list's hypotheses, the path */
#include "sim_new.h"

#define ROOT	SIM_ROOT_ID
#define ROUNDS	60
#define MAX_LIST	200	/* past it, a round reads until the list is smaller */

static const uint64_t ids[] = { 30, 31, 32, 40, 41 };	/* A, A1, A2, B, B1 */
static const uint64_t par[] = { ROOT, 30, 30, ROOT, 40 };

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* A hypothesis as a hash of (position, entries), and which one it is. */
struct hh {
	uint64_t	hash;
	size_t		idx;
};

static int hh_cmp(const void *a, const void *b)
{
	const struct hh *x = a, *y = b;

	return x->hash < y->hash ? -1 : x->hash > y->hash;
}

struct cmp {
	const struct infer	*in;
	struct hh		*l;	/* the list's, sorted, twins once */
	size_t			nl;
	uint64_t		*d;	/* the diagram's */
	size_t			nd, cap;
	bool			bad;	/* a tuple whose hash is a list hypothesis's but not its entries */
};

static int cmp_tuple(void *ctx, size_t p, const uint64_t *keys, const int64_t *vals, size_t n)
{
	struct cmp *c = ctx;
	struct hh k, *f;
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < n; i++)
		sum += inf_mix(keys[i], vals[i]);
	k.hash = inf_hash_of(p, sum);
	if (c->nd == c->cap) {
		uint64_t *d = realloc(c->d, (c->cap = 2 * c->cap + 64) * sizeof(*d));

		if (!d)
			return -1;
		c->d = d;
	}
	c->d[c->nd++] = k.hash;
	f = bsearch(&k, c->l, c->nl, sizeof(k), hh_cmp);
	if (f) {
		const struct inf_hyp *h = &c->in->h[f->idx];

		if (h->p != p || idmap_count(&h->e) != n)
			c->bad = true;
		for (i = 0; i < n && !c->bad; i++) {
			const struct idmap_ent *e = inf_find(h, keys[i]);

			if (!e || e->val != vals[i])
				c->bad = true;
		}
	}
	return 0;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The diagram's tuples are the list's hypotheses, as a set. */
static bool same_set(struct infer *in, struct inf_ddw *w)
{
	struct cmp c = { .in = in };
	uint64_t cnt;
	size_t i, n = 0;
	bool ok = false;

	c.l = malloc((in->nr_h + 1) * sizeof(*c.l));
	if (!c.l)
		return false;
	for (i = 0; i < in->nr_h; i++)
		c.l[i] = (struct hh){ .hash = inf_hyp_hash(&in->h[i]), .idx = i };
	qsort(c.l, in->nr_h, sizeof(*c.l), hh_cmp);
	for (i = 0; i < in->nr_h; i++)
		if (!n || c.l[n - 1].hash != c.l[i].hash)
			c.l[n++] = c.l[i];
	c.nl = n;
	if (inf_ddw_count(w, &cnt) || cnt != n || inf_ddw_enum(w, cmp_tuple, &c) || c.bad ||
	    c.nd != n)
		goto out;
	qsort(c.d, c.nd, sizeof(*c.d), u64_cmp);
	for (i = 0; i < n; i++)
		if (c.d[i] != c.l[i].hash)
			goto out;
	ok = true;
out:
	free(c.l);
	free(c.d);
	return ok;
}

static void run(struct test_ctx *t, const char *pol, uint64_t seed, uint64_t *windows,
		uint64_t *peak)
{
	struct sim_params sp = { .policy = sim_policy_find(pol), .nr_possible = 3,
				 .nr_online = 3, .batch = SIM_CHARGE_BATCH };
	struct infer *in = infer_create(&sp, 1u << 24);
	uint64_t x = seed, ts = 1;
	int round, i, j;

	ASSERT(in);
	in->no_cut = true;
	in->no_consensus = true;	/* w is read against the base, which must not move */
	for (j = 0; j < 5; j++)
		ASSERT_EQ(sim_cgroup_add(infer_base(in), 0, ids[j], par[j]), 0);
	for (round = 0; round < ROUNDS && !t->failed; round++) {
		int n = 4 + (int)(rnd(&x) % 6);
		uint64_t top = rnd(&x) % 3 ? ROOT : 30, id;
		unsigned int wcpu = (unsigned int)(rnd(&x) % 3);
		struct inf_ddw *w = NULL;
		bool su[2], nf[2];
		int64_t v;

		for (i = -3; i < n && !t->failed; i++) {
			unsigned int cpu = (unsigned int)(rnd(&x) % 3);
			int64_t val = (int64_t)(rnd(&x) % 161) - 80;
			struct inf_path pa;

			id = ids[rnd(&x) % 5];
			if (!i) {
				ASSERT_EQ(infer_locked(in, ts, top, wcpu, 40 * (uint64_t)n), 0);
				ASSERT_EQ(inf_ddw_open(in, &w), 0);
				ASSERT(same_set(in, w));
			}
			ts += 1 + rnd(&x) % 30;
			if (w && sim_walk_abs(val)) {
				ASSERT_EQ(inf_path_build(in, ts, cpu, id, sim_walk_abs(val), &pa, NULL), 0);
				ASSERT_EQ(inf_ddw_update(in, w, &pa, cpu), 0);
			}
			ASSERT_EQ(infer_update(in, ts, ts, cpu, id, SIM_ITEM_STATE, 0, val, ts), 0);
			ASSERT(in->capped == 0);
			if (w)
				ASSERT(same_set(in, w));
			if (in->nr_h > *peak)
				*peak = in->nr_h;
		}
		if (t->failed)
			break;
		(*windows)++;
		ts += 5;
		ASSERT_EQ(infer_unlock(in, ts), 0);
		ASSERT_EQ(inf_ddw_close(in, w), 0);
		ts += 100;
		ASSERT_EQ(inf_close_unless_late(in, ts, ts), 0);
		ASSERT(same_set(in, w));
		/* a read, 3 in 4; more while the list is large */
		for (j = 0; !t->failed && (!j ? rnd(&x) % 4 : in->nr_h > MAX_LIST) && j < 16; j++) {
			id = rnd(&x) % 6 ? ids[rnd(&x) % 5] : ROOT;
			v = inf_get(in, &in->h[rnd(&x) % in->nr_h], inf_key(id, INF_ATOMIC));
			if (!(rnd(&x) % 8))
				v += 1000;	/* none holds it */
			ASSERT_EQ(inf_ddw_check(in, w, id, v, v > 128, &su[0], &nf[0]), 0);
			ASSERT_EQ(infer_check(in, id, v, v > 128, &su[1], &nf[1]), 0);
			ASSERT(su[0] == su[1] && nf[0] == nf[1]);
			if (in->nr_h > 1) {
				ASSERT(same_set(in, w));
			} else {
				uint64_t cnt;

				/* the list folded its lone hypothesis into the base */
				ASSERT_EQ(inf_ddw_count(w, &cnt), 0);
				ASSERT_EQU(cnt, 1);
				break;
			}
		}
		inf_ddw_free(w);
	}
	infer_destroy(in);
}

TEST(test_ddwin_exact)
{
	static const char *const pols[] = { "break", "continue", "legacy" };
	uint64_t windows = 0, peak = 0;
	size_t k;

	for (k = 0; k < 3 && !t->failed; k++) {
		run(t, pols[k], 88172645463325252ull, &windows, &peak);
		run(t, pols[k], 0x243f6a8885a308d3ull + k, &windows, &peak);
	}
	ASSERT_EQU(windows, 6 * ROUNDS);
	ASSERT(peak > 64);	/* the list branched: windows with many orders were compared */
}

TEST_MAIN(test_ddwin_exact)
