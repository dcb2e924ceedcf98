// SPDX-License-Identifier: GPL-2.0
/*
 * The inference's decision diagram (replay/infer/infer_dd.c) against the list
 * form it replaces: random small tuple sets (seeded) built into a diagram
 * hold as many tuples as the list's distinct ones, enumerate to the sorted
 * distinct list, restrict to the list's filter, unite to the list's union,
 * map to the list's per-tuple images; the diagram is never larger than the
 * list, and being canonical (hash-consed), equal sets are one handle and a
 * set whose parts are equal holds them once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../harness.h"
#include "infer/infer_dd.h"

#define MAXM	5
#define MAXN	64
#define ROUNDS	300

struct tset {
	size_t	n, m;
	int64_t	*t;	/* n x m, row-major */
};

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static size_t g_m;

static int row_cmp(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;
	size_t j;

	for (j = 0; j < g_m; j++)
		if (x[j] != y[j])
			return x[j] < y[j] ? -1 : 1;
	return 0;
}

static int tset_add(struct tset *s, const int64_t *row)
{
	int64_t *t = realloc(s->t, (s->n + 1) * s->m * sizeof(*t));

	if (!t)
		return -ENOMEM;
	s->t = t;
	memcpy(s->t + s->n * s->m, row, s->m * sizeof(*row));
	s->n++;
	return 0;
}

/* Sorted, duplicates dropped. */
static void tset_norm(struct tset *s)
{
	size_t i, w = 0;

	if (!s->n)
		return;
	g_m = s->m;
	qsort(s->t, s->n, s->m * sizeof(*s->t), row_cmp);
	for (i = 0; i < s->n; i++)
		if (!w || row_cmp(s->t + i * s->m, s->t + (w - 1) * s->m))
			memmove(s->t + w++ * s->m, s->t + i * s->m, s->m * sizeof(*s->t));
	s->n = w;
}

/* A random set: m layers, values in [-1, k-1), n rows with duplicates. */
static void tset_rand(struct tset *s, uint64_t *x, size_t m, size_t n, unsigned int k)
{
	int64_t row[MAXM];
	size_t i, j;

	s->m = m;
	s->n = 0;
	for (i = 0; i < n; i++) {
		for (j = 0; j < m; j++)
			row[j] = (int64_t)(rnd(x) % k) - 1;
		if (tset_add(s, row))
			return;
	}
}

struct collect {
	struct tset	s;
};

static int collect_row(void *ctx, const int64_t *tuple)
{
	struct collect *c = ctx;

	return tset_add(&c->s, tuple);
}

static struct inf_dd *mk_dd(size_t m)
{
	uint64_t keys[MAXM];
	size_t j;

	for (j = 0; j < m; j++)
		keys[j] = 1000 + j;
	return inf_dd_create(keys, (unsigned int)m);
}

/* Build, count, enumerate and size against the distinct list. */
TEST(test_dd_build_count_enum)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	int round;

	for (round = 0; round < ROUNDS; round++) {
		size_t m = 1 + rnd(&x) % MAXM, n = rnd(&x) % MAXN, nodes, edges, width[MAXM], j;
		unsigned int k = 1 + rnd(&x) % 4;
		struct tset s = { 0 }, d;
		struct collect c = { .s = { .m = m } };
		struct inf_dd *dd = mk_dd(m);
		uint64_t cnt;
		uint32_t root;
		int ret;

		ASSERT(dd);
		tset_rand(&s, &x, m, n, k);
		ASSERT_EQU(s.n, n);
		ASSERT_EQ(inf_dd_build(dd, s.t, s.n, &root), 0);
		d = s;
		d.t = malloc((s.n ? s.n : 1) * m * sizeof(*d.t));
		ASSERT(d.t);
		if (s.n)
			memcpy(d.t, s.t, s.n * m * sizeof(*d.t));
		tset_norm(&d);
		ASSERT_EQ(inf_dd_count(dd, root, &cnt), 0);
		ASSERT_EQU(cnt, d.n);
		ASSERT_EQ(root == INF_DD_EMPTY, d.n == 0);
		ret = inf_dd_enum(dd, root, collect_row, &c);
		ASSERT_EQ(ret, 0);
		ASSERT_EQU(c.s.n, d.n);
		ASSERT(!d.n || !memcmp(c.s.t, d.t, d.n * m * sizeof(*d.t)));
		/* never above the list: a layer has at most one node per distinct row */
		ASSERT_EQ(inf_dd_size(dd, root, &nodes, &edges, width), 0);
		ASSERT(nodes <= d.n * m);
		ASSERT(edges <= d.n * m);
		for (j = 0; j < m; j++)
			ASSERT(width[j] <= d.n);
		ASSERT(inf_dd_nr_nodes(dd) == nodes);
		free(s.t);
		free(d.t);
		free(c.s.t);
		inf_dd_destroy(dd);
	}
}

/* Equal sets are one handle, made of no new node; equal parts are held once. */
TEST(test_dd_canonical)
{
	uint64_t x = 12345;
	int round;

	for (round = 0; round < ROUNDS; round++) {
		size_t m = 2 + rnd(&x) % (MAXM - 1), n = 1 + rnd(&x) % MAXN, i, j, made;
		size_t n0, e0, n1, e1;
		struct tset s = { 0 }, p = { 0 }, two = { .m = m };
		struct inf_dd *dd = mk_dd(m);
		uint32_t a, b, r0, r1;

		ASSERT(dd);
		tset_rand(&s, &x, m, n, 3);
		ASSERT_EQ(inf_dd_build(dd, s.t, s.n, &a), 0);
		made = inf_dd_nr_nodes(dd);
		/* the same set shuffled, every row twice */
		p.m = m;
		for (i = 0; i < 2 * s.n; i++)
			ASSERT_EQ(tset_add(&p, s.t + (rnd(&x) % s.n) * m), 0);
		for (i = 0; i < s.n; i++)
			ASSERT_EQ(tset_add(&p, s.t + i * m), 0);
		ASSERT_EQ(inf_dd_build(dd, p.t, p.n, &b), 0);
		ASSERT_EQU(a, b);
		ASSERT_EQU(inf_dd_nr_nodes(dd), made);
		/* {0, 1} x rest(s): the two halves are one node below the root */
		for (i = 0; i < s.n; i++)
			for (j = 0; j < 2; j++) {
				int64_t row[MAXM];

				memcpy(row, s.t + i * m, m * sizeof(*row));
				row[0] = (int64_t)j;
				ASSERT_EQ(tset_add(&two, row), 0);
			}
		ASSERT_EQ(inf_dd_build(dd, two.t, two.n, &a), 0);
		ASSERT_EQ(inf_dd_restrict(dd, a, 0, 0, &r0), 0);
		ASSERT_EQ(inf_dd_restrict(dd, a, 0, 1, &r1), 0);
		ASSERT(r0 != r1 && r0 != INF_DD_EMPTY);
		ASSERT_EQ(inf_dd_size(dd, a, &n0, &e0, NULL), 0);
		ASSERT_EQ(inf_dd_size(dd, r0, &n1, &e1, NULL), 0);
		ASSERT_EQU(n0, n1);
		ASSERT_EQU(e0, e1 + 1);
		free(s.t);
		free(p.t);
		free(two.t);
		inf_dd_destroy(dd);
	}
}

/* An observation: restrict == the list's filter, as a handle. */
TEST(test_dd_restrict)
{
	uint64_t x = 777;
	int round;

	for (round = 0; round < ROUNDS; round++) {
		size_t m = 1 + rnd(&x) % MAXM, n = rnd(&x) % MAXN, i, l;
		struct tset s = { 0 };
		struct inf_dd *dd = mk_dd(m);
		uint32_t root, r, want;
		int64_t v;

		ASSERT(dd);
		tset_rand(&s, &x, m, n, 1 + rnd(&x) % 4);
		ASSERT_EQ(inf_dd_build(dd, s.t, s.n, &root), 0);
		for (l = 0; l < m; l++)
			for (v = -2; v <= 3; v++) {
				struct tset f = { .m = m };
				uint64_t cnt, fc;

				for (i = 0; i < s.n; i++)
					if (s.t[i * m + l] == v)
						ASSERT_EQ(tset_add(&f, s.t + i * m), 0);
				ASSERT_EQ(inf_dd_restrict(dd, root, (unsigned int)l, v, &r), 0);
				ASSERT_EQ(inf_dd_build(dd, f.t, f.n, &want), 0);
				ASSERT_EQU(r, want);
				tset_norm(&f);
				fc = f.n;
				ASSERT_EQ(inf_dd_count(dd, r, &cnt), 0);
				ASSERT_EQU(cnt, fc);
				free(f.t);
			}
		ASSERT_EQ(inf_dd_restrict(dd, root, (unsigned int)m, 0, &r), -EINVAL);
		free(s.t);
		inf_dd_destroy(dd);
	}
}

/* union == the list's union, as a handle. */
TEST(test_dd_union)
{
	uint64_t x = 4242;
	int round;

	for (round = 0; round < ROUNDS; round++) {
		size_t m = 1 + rnd(&x) % MAXM;
		struct tset a = { 0 }, b = { 0 }, ab = { .m = m };
		struct inf_dd *dd = mk_dd(m);
		uint32_t ra, rb, u, u2, want;

		ASSERT(dd);
		tset_rand(&a, &x, m, rnd(&x) % MAXN, 3);
		tset_rand(&b, &x, m, rnd(&x) % MAXN, 3);
		ASSERT_EQ(inf_dd_build(dd, a.t, a.n, &ra), 0);
		ASSERT_EQ(inf_dd_build(dd, b.t, b.n, &rb), 0);
		ab.t = malloc((a.n + b.n + 1) * m * sizeof(*ab.t));
		ASSERT(ab.t);
		if (a.n)
			memcpy(ab.t, a.t, a.n * m * sizeof(*ab.t));
		if (b.n)
			memcpy(ab.t + a.n * m, b.t, b.n * m * sizeof(*ab.t));
		ab.n = a.n + b.n;
		ASSERT_EQ(inf_dd_build(dd, ab.t, ab.n, &want), 0);
		ASSERT_EQ(inf_dd_union(dd, ra, rb, &u), 0);
		ASSERT_EQ(inf_dd_union(dd, rb, ra, &u2), 0);
		ASSERT_EQU(u, want);
		ASSERT_EQU(u2, want);
		ASSERT_EQ(inf_dd_union(dd, ra, INF_DD_ONE, &u), ra > INF_DD_ONE ? -EINVAL : 0);
		free(a.t);
		free(b.t);
		free(ab.t);
		inf_dd_destroy(dd);
	}
}

/*
 * A transducer that drops, keeps and branches, and makes images meet: the
 * state carries what the layers above saw, as an update's walk carries its
 * charge up the path.
 */
static int step(void *ctx, unsigned int layer, uint64_t state, int64_t val, int64_t *ov,
		uint64_t *os)
{
	uint64_t h = (uint64_t)(val + 1) * 3 + state * 5 + layer;

	if (h % 7 == 0)
		return 0;
	ov[0] = (val + (int64_t)state) % 3;
	os[0] = (state * 7 + (uint64_t)(val + 1)) % 4;
	if (h % 3)
		return 1;
	ov[1] = val - 1;
	os[1] = (state + 1) % 4;
	return 2;
}

/* Every image of @row under step() over layers l..depth-1, into @out. */
static int map_row(struct tset *out, int64_t *row, size_t l, size_t depth, uint64_t state)
{
	int64_t ov[INF_DD_MAX_OUT], keep;
	uint64_t os[INF_DD_MAX_OUT];
	int k, n, ret = 0;

	if (l == depth)
		return tset_add(out, row);
	keep = row[l];
	n = step(NULL, (unsigned int)l, state, row[l], ov, os);
	for (k = 0; !ret && k < n; k++) {
		row[l] = ov[k];
		ret = map_row(out, row, l + 1, depth, os[k]);
	}
	row[l] = keep;
	return ret;
}

/*
 * The map of @root under @fn is the set the per-tuple images @img build,
 * the same handle, holding as many tuples as @img's distinct rows (@img is
 * sorted); else @t fails.
 */
static void expect_map(struct test_ctx *t, struct inf_dd *dd, uint32_t root, unsigned int depth,
		       uint64_t s0, inf_dd_step_fn fn, void *ctx, struct tset *img)
{
	uint32_t r, want;
	uint64_t cnt;

	ASSERT_EQ(inf_dd_build(dd, img->t, img->n, &want), 0);
	ASSERT_EQ(inf_dd_map(dd, root, depth, s0, fn, NULL, ctx, &r), 0);
	ASSERT_EQU(r, want);
	tset_norm(img);
	ASSERT_EQ(inf_dd_count(dd, r, &cnt), 0);
	ASSERT_EQU(cnt, img->n);
}

/* map == the list's per-tuple images, as a handle. */
TEST(test_dd_map)
{
	uint64_t x = 99;
	int round;

	for (round = 0; round < ROUNDS; round++) {
		size_t m = 1 + rnd(&x) % MAXM, depth = rnd(&x) % (m + 1), i;
		uint64_t s0 = rnd(&x) % 4;
		struct tset s = { 0 }, img = { .m = m };
		struct inf_dd *dd = mk_dd(m);
		uint32_t root;

		ASSERT(dd);
		tset_rand(&s, &x, m, rnd(&x) % MAXN, 1 + rnd(&x) % 4);
		ASSERT_EQ(inf_dd_build(dd, s.t, s.n, &root), 0);
		for (i = 0; i < s.n; i++) {
			int64_t row[MAXM];

			memcpy(row, s.t + i * m, m * sizeof(*row));
			ASSERT_EQ(map_row(&img, row, 0, depth, s0), 0);
		}
		expect_map(t, dd, root, (unsigned int)depth, s0, step, NULL, &img);
		free(s.t);
		free(img.t);
		inf_dd_destroy(dd);
	}
}

/*
 * A batch that fills: the values from @ctx's cut up wrap round to 0 and
 * up (v - cut), the rest move up by 1; the second layer's values
 * reversed.  A node's images then come out of value order.
 */
static int wrap_step(void *ctx, unsigned int layer, uint64_t state, int64_t val, int64_t *ov,
		     uint64_t *os)
{
	int64_t cut = *(const int64_t *)ctx;

	ov[0] = layer ? 1000 - val : val >= cut ? val - cut : val + 1;
	os[0] = state;
	return 1;
}

/*
 * Wide nodes (up to 200 edges: below the sort's in-place bound and above
 * it) whose images come as two or many ascending runs, and meet (v + 1 of
 * one edge is v - cut of another): map == the per-tuple images.
 */
TEST(test_dd_map_wide)
{
	static const size_t widths[] = { 2, 17, 64, 65, 200 };
	uint64_t x = 7;
	size_t w, i, j, dups;

	for (w = 0; w < sizeof(widths) / sizeof(widths[0]); w++) {
		size_t n = widths[w];
		int64_t cut = (int64_t)(n / 2), row[2];
		struct tset s = { .m = 2 }, img = { .m = 2 };
		struct inf_dd *dd = mk_dd(2);
		uint32_t root;

		ASSERT(dd);
		for (i = 0; i < n; i++)
			for (j = 0, dups = 1 + rnd(&x) % 3; j < dups; j++) {
				row[0] = (int64_t)i;
				row[1] = (int64_t)(rnd(&x) % 50);
				ASSERT_EQ(tset_add(&s, row), 0);
				/* its image, as wrap_step() makes it */
				row[0] = row[0] >= cut ? row[0] - cut : row[0] + 1;
				row[1] = 1000 - row[1];
				ASSERT_EQ(tset_add(&img, row), 0);
			}
		ASSERT_EQ(inf_dd_build(dd, s.t, s.n, &root), 0);
		expect_map(t, dd, root, 2, 0, wrap_step, &cut, &img);
		free(s.t);
		free(img.t);
		inf_dd_destroy(dd);
	}
}

/* A summary: the bit of each value (values are small). */
static uint64_t sum_bit(void *ctx, unsigned int layer, int64_t val)
{
	return 1ull << ((uint64_t)(val + 1) & 63);
}

/* Below layer 0, a 2 becomes 3; the rest, and the state, stay. */
static int two_step(void *ctx, unsigned int layer, uint64_t state, int64_t val, int64_t *ov,
		    uint64_t *os)
{
	ov[0] = layer && val == 2 ? 3 : val;
	os[0] = state;
	return 1;
}

/* Nothing below holds a 2: two_step() gives the node back. */
static bool two_keep(void *ctx, unsigned int layer, uint64_t state, uint64_t sum)
{
	unsigned int *kept = ctx;

	if (!layer || (sum & sum_bit(NULL, 0, 2)))
		return false;
	(*kept)++;
	return true;
}

/*
 * Summaries cover every layer below a node: the shortcut, taken wherever
 * the summary shows no 2 below, gives the very map made without it (and
 * the list's images), and it is taken.  A summary is set before any node.
 * A map within a step limit is refused at once with none, the same with enough.
 */
TEST(test_dd_sum_keep)
{
	uint64_t x = 4242;
	unsigned int kept = 0;
	int round;

	for (round = 0; round < ROUNDS; round++) {
		size_t m = 1 + rnd(&x) % MAXM, i, j;
		struct tset s = { 0 }, img = { .m = m };
		struct inf_dd *dd = mk_dd(m);
		uint32_t root, plain, fast, want, lim;

		ASSERT(dd);
		ASSERT_EQ(inf_dd_set_sum(dd, sum_bit, NULL), 0);
		tset_rand(&s, &x, m, 1 + rnd(&x) % MAXN, 2 + rnd(&x) % 3);
		ASSERT_EQ(inf_dd_build(dd, s.t, s.n, &root), 0);
		ASSERT_EQ(inf_dd_set_sum(dd, NULL, NULL), -EBUSY);
		for (i = 0; i < s.n; i++) {
			int64_t row[MAXM];

			for (j = 0; j < m; j++)
				row[j] = j && s.t[i * m + j] == 2 ? 3 : s.t[i * m + j];
			ASSERT_EQ(tset_add(&img, row), 0);
		}
		ASSERT_EQ(inf_dd_build(dd, img.t, img.n, &want), 0);
		ASSERT_EQ(inf_dd_map(dd, root, (unsigned int)m, 0, two_step, NULL, NULL, &plain), 0);
		ASSERT_EQ(inf_dd_map(dd, root, (unsigned int)m, 0, two_step, two_keep, &kept, &fast),
			  0);
		ASSERT_EQU(plain, want);
		ASSERT_EQU(fast, want);
		/* within a limit: none refuses the first step, enough gives the same map */
		ASSERT_EQ(inf_dd_map_within(dd, root, (unsigned int)m, 0, two_step, NULL, NULL, 0,
					    &lim), -E2BIG);
		ASSERT_EQ(inf_dd_map_within(dd, root, (unsigned int)m, 0, two_step, NULL, NULL,
					    1u << 20, &lim), 0);
		ASSERT_EQU(lim, want);
		free(s.t);
		free(img.t);
		inf_dd_destroy(dd);
	}
	ASSERT(kept > 0);
}

/* The close: layer j visited at position >= j. */
static int close_step(void *ctx, unsigned int layer, uint64_t state, int64_t val, int64_t *ov,
		      uint64_t *os)
{
	if (!layer) {
		ov[0] = val;
		os[0] = (uint64_t)val;
	} else {
		ov[0] = (int64_t)layer <= (int64_t)state ? 0 : val;
		os[0] = state;
	}
	return 1;
}

/*
 * A window's close: the counters the position has visited become 0, then the
 * position goes; == the list's, as a handle (the list's rows with a position
 * of 0 and that dropped).
 */
TEST(test_dd_close)
{
	uint64_t x = 31337;
	int round;

	for (round = 0; round < ROUNDS; round++) {
		size_t m = 2 + rnd(&x) % (MAXM - 1), i, j;
		struct tset s = { 0 }, ref = { .m = m };
		struct inf_dd *dd = mk_dd(m);
		uint32_t root, r, closed, want, want_top;
		uint64_t cnt;

		ASSERT(dd);
		tset_rand(&s, &x, m, 1 + rnd(&x) % MAXN, 4);
		for (i = 0; i < s.n; i++) {
			int64_t row[MAXM];

			s.t[i * m] = (int64_t)(rnd(&x) % m);	/* a position */
			memcpy(row, s.t + i * m, m * sizeof(*row));
			for (j = 1; j < m; j++)
				if ((int64_t)j <= row[0])
					row[j] = 0;
			row[0] = 0;
			ASSERT_EQ(tset_add(&ref, row), 0);
		}
		ASSERT_EQ(inf_dd_build(dd, s.t, s.n, &root), 0);
		ASSERT_EQ(inf_dd_map(dd, root, (unsigned int)m, 0, close_step, NULL, NULL, &r), 0);
		ASSERT_EQ(inf_dd_drop_top(dd, r, &closed), 0);
		ASSERT_EQ(inf_dd_build(dd, ref.t, ref.n, &want_top), 0);
		ASSERT_EQ(inf_dd_drop_top(dd, want_top, &want), 0);
		ASSERT_EQU(closed, want);
		ASSERT(closed != INF_DD_EMPTY);
		tset_norm(&ref);
		ASSERT_EQ(inf_dd_count(dd, closed, &cnt), 0);
		ASSERT_EQU(cnt, ref.n);
		ASSERT_EQ(inf_dd_drop_top(dd, INF_DD_ONE, &r), -EINVAL);
		free(s.t);
		free(ref.t);
		inf_dd_destroy(dd);
	}
}

/*
 * test_infer.c's test_order_found as a diagram: break, TH 128; root -> P -> L
 * at 192 each, the window's visit list [L, P, root] (layers 1..3, layer 0 the
 * visits done).  cpu1's L +64 inside the window: the visits before it come
 * first (a visited counter is 0), then its walk from L adds 64 until a
 * counter above TH stops it; the unlock visits the rest (0).
 */
#define EX_TH	128
#define EX_ADD	64

static int ex_update(void *ctx, unsigned int layer, uint64_t state, int64_t val, int64_t *ov,
		     uint64_t *os)
{
	int64_t v;
	int n = 0;

	if (!layer) {
		/* the orders: after val..3 visits, the walk alive (bit 8) */
		for (v = val; v <= 3; v++) {
			ov[n] = v;
			os[n++] = (uint64_t)v | 1u << 8;
		}
		return n;
	}
	v = (int64_t)layer - 1 < (int64_t)(state & 0xff) ? 0 : val;
	os[0] = state;
	if (state >> 8 & 1) {
		if (v > EX_TH)
			os[0] = state & 0xff;	/* the walk stops here */
		else
			v += EX_ADD;
	}
	ov[0] = v;
	return 1;
}

static int ex_unlock(void *ctx, unsigned int layer, uint64_t state, int64_t val, int64_t *ov,
		     uint64_t *os)
{
	os[0] = layer ? state : (uint64_t)val;
	ov[0] = layer && (int64_t)layer - 1 >= (int64_t)state ? 0 : val;
	return 1;
}

TEST(test_dd_order_found)
{
	static const int64_t open[4] = { 0, 192, 192, 192 };
	static const int64_t want[4][4] = {
		{ 0, 0, 0, 0 }, { 0, 64, 0, 0 }, { 0, 64, 64, 0 }, { 0, 64, 64, 64 },
	};
	uint64_t keys[4] = { 0, 20, 10, 1 }, cnt;	/* position, L, P, root */
	struct inf_dd *dd = inf_dd_create(keys, 4);
	struct collect c = { .s = { .m = 4 } };
	uint32_t root, upd, unl, closed, r;

	ASSERT(dd);
	ASSERT_EQ(inf_dd_build(dd, open, 1, &root), 0);
	ASSERT_EQ(inf_dd_map(dd, root, 4, 0, ex_update, NULL, NULL, &upd), 0);
	ASSERT_EQ(inf_dd_count(dd, upd, &cnt), 0);
	ASSERT_EQU(cnt, 4);			/* four orders */
	ASSERT_EQ(inf_dd_map(dd, upd, 4, 0, ex_unlock, NULL, NULL, &unl), 0);
	ASSERT_EQ(inf_dd_drop_top(dd, unl, &closed), 0);
	ASSERT_EQ(inf_dd_enum(dd, closed, collect_row, &c), 0);
	ASSERT_EQU(c.s.n, 4);
	ASSERT(!memcmp(c.s.t, want, sizeof(want)));
	/* the kernel reads P = 64: two orders remain; then root = 64: one */
	ASSERT_EQ(inf_dd_restrict(dd, closed, 2, 64, &r), 0);
	ASSERT_EQ(inf_dd_count(dd, r, &cnt), 0);
	ASSERT_EQU(cnt, 2);
	ASSERT_EQ(inf_dd_restrict(dd, r, 3, 64, &r), 0);
	ASSERT_EQ(inf_dd_count(dd, r, &cnt), 0);
	ASSERT_EQU(cnt, 1);
	free(c.s.t);
	inf_dd_destroy(dd);
}

/*
 * embed: a set of m layers in a diagram of up to 2m - 1, its layers at
 * random ascending places (layer 0 at 0), == the list's rows with the fill
 * value at every new layer, as a handle.
 */
TEST(test_dd_embed)
{
	uint64_t x = 2718281828ull;
	int round;

	for (round = 0; round < ROUNDS; round++) {
		size_t m = 1 + rnd(&x) % MAXM, n = rnd(&x) % MAXN, extra = rnd(&x) % m, mm, i, j, l;
		unsigned int map[MAXM];
		uint64_t keys[2 * MAXM];
		struct tset s = { 0 }, want = { 0 };
		struct inf_dd *dd = mk_dd(m), *big;
		uint32_t root, out, w;
		int64_t fill = (int64_t)(rnd(&x) % 3) - 1;

		ASSERT(dd);
		mm = m + extra;
		want.m = mm;
		for (l = 0; l < mm; l++)
			keys[l] = 2000 + l;
		big = inf_dd_create(keys, (unsigned int)mm);
		ASSERT(big);
		/* m places of mm, the first at 0 */
		map[0] = 0;
		for (i = 1, l = 1; i < m; i++, l++) {
			while (mm - l > m - i && rnd(&x) % 2)
				l++;
			map[i] = (unsigned int)l;
		}
		tset_rand(&s, &x, m, n, 3);
		ASSERT_EQ(inf_dd_build(dd, s.t, s.n, &root), 0);
		for (i = 0; i < s.n; i++) {
			int64_t row[2 * MAXM];

			for (l = 0; l < mm; l++)
				row[l] = fill;
			for (j = 0; j < m; j++)
				row[map[j]] = s.t[i * m + j];
			ASSERT_EQ(tset_add(&want, row), 0);
		}
		ASSERT_EQ(inf_dd_embed(dd, root, big, map, fill, &out), 0);
		ASSERT_EQ(inf_dd_build(big, want.t, want.n, &w), 0);
		ASSERT_EQU(out, w);
		if (m > 1) {
			map[1] = map[0];
			ASSERT_EQ(inf_dd_embed(dd, root, big, map, fill, &out), -EINVAL);
		}
		free(s.t);
		free(want.t);
		inf_dd_destroy(dd);
		inf_dd_destroy(big);
	}
}

/* Bad handles and layers: -EINVAL, nothing made. */
TEST(test_dd_errors)
{
	uint64_t keys[2] = { 1, 2 }, cnt;
	int64_t tab[4] = { 1, 2, 3, 4 };
	struct inf_dd *dd = inf_dd_create(keys, 2);
	uint32_t root, r;
	size_t n, e;

	ASSERT(dd);
	ASSERT_EQU(inf_dd_layers(dd), 2);
	ASSERT_EQU(inf_dd_key(dd, 1), 2);
	ASSERT_EQ(inf_dd_build(dd, tab, 2, &root), 0);
	ASSERT_EQ(inf_dd_count(dd, root + 100, &cnt), -EINVAL);
	ASSERT_EQ(inf_dd_restrict(dd, root, 2, 0, &r), -EINVAL);
	ASSERT_EQ(inf_dd_restrict(dd, INF_DD_ONE, 1, 0, &r), -EINVAL);
	ASSERT_EQ(inf_dd_restrict(dd, INF_DD_EMPTY, 1, 0, &r), 0);
	ASSERT_EQU(r, INF_DD_EMPTY);
	ASSERT_EQ(inf_dd_size(dd, root + 100, &n, &e, NULL), -EINVAL);
	ASSERT_EQ(inf_dd_map(dd, root, 3, 0, step, NULL, NULL, &r), -EINVAL);
	ASSERT_EQ(inf_dd_map(dd, root, 0, 0, step, NULL, NULL, &r), 0);
	ASSERT_EQU(r, root);
	ASSERT_EQ(inf_dd_build(dd, tab, 0, &r), 0);
	ASSERT_EQU(r, INF_DD_EMPTY);
	ASSERT_EQ(inf_dd_count(dd, INF_DD_EMPTY, &cnt), 0);
	ASSERT_EQU(cnt, 0);
	inf_dd_destroy(dd);
}

TEST_MAIN(test_dd_build_count_enum, test_dd_canonical, test_dd_restrict, test_dd_union,
	  test_dd_map, test_dd_map_wide, test_dd_sum_keep, test_dd_embed, test_dd_close,
	  test_dd_order_found, test_dd_errors)
