// SPDX-License-Identifier: GPL-2.0
/*
 * test_svg.c - the HTML report's plotting kit (cli/svg.c): 1-2-5 ticks that
 * cover the range, the data -> pixel map, and the per-column min/max
 * reduction that keeps a one-sample spike.
 */
#include <errno.h>
#include <math.h>

#include "../harness.h"
#include "svg.h"

#define NEAR(a, b)	(fabs((a) - (b)) < 1e-9)

TEST(ticks_cover_range)
{
	struct svg_ticks k;

	/* [0, 9.3] in at most 6 ticks: 9.3 / 5 = 1.86 -> step 2: 0 2 4 6 8 10 */
	ASSERT_EQ(svg_ticks(0, 9.3, 6, &k), 0);
	ASSERT(NEAR(k.step, 2));
	ASSERT_EQ(k.n, 6);
	ASSERT(NEAR(k.v[0], 0) && NEAR(k.v[5], 10));
	ASSERT_EQ(k.decimals, 0);
	/* [-3.2, 47]: 50.2 / 5 = 10.04 -> 20 (10 would need -10..50 = 6 intervals): -20 0 20 40 60 */
	ASSERT_EQ(svg_ticks(-3.2, 47, 6, &k), 0);
	ASSERT(NEAR(k.step, 20));
	ASSERT_EQ(k.n, 5);
	ASSERT(NEAR(k.v[0], -20) && NEAR(k.v[1], 0) && NEAR(k.v[4], 60));
	/* [0, 0.37] in 5: 0.37 / 4 = 0.0925 -> 0.1, 0 .. 0.4, one decimal */
	ASSERT_EQ(svg_ticks(0, 0.37, 5, &k), 0);
	ASSERT(NEAR(k.step, 0.1));
	ASSERT_EQ(k.n, 5);
	ASSERT(NEAR(k.v[4], 0.4));
	ASSERT_EQ(k.decimals, 1);
	/* an empty range gets [v - 1, v + 1]: 2 / 4 = 0.5 -> 4.5 .. 6.5? no: floor(4/0.5)=8 -> 4 4.5 .. 6 */
	ASSERT_EQ(svg_ticks(5, 5, 5, &k), 0);
	ASSERT(NEAR(k.step, 0.5));
	ASSERT(k.v[0] <= 4 + 1e-9 && k.v[k.n - 1] >= 6 - 1e-9);
	ASSERT_EQ(svg_ticks(1, 0, 5, &k), -EINVAL);
	ASSERT_EQ(svg_ticks(0, 1, 2, &k), -EINVAL);
	ASSERT_EQ(svg_ticks(0, NAN, 5, &k), -EINVAL);
}

TEST(ticks_every_range_covered)
{
	struct svg_ticks k;
	double lo, w;
	int m;

	/* a sweep: first tick <= lo, last >= hi, at most max_ticks, step a 1-2-5 */
	for (m = 3; m <= 10; m++)
		for (lo = -1000; lo < 1000; lo += 37.7)
			for (w = 0.013; w < 5000; w = w * 1.9 + 1) {
				double mant, hi = lo + w;

				ASSERT_EQ(svg_ticks(lo, hi, m, &k), 0);
				if (!(k.n >= 2 && k.n <= m))
					FAILF("lo %g hi %g m %d: n %d step %g", lo, hi, m, k.n, k.step);
				ASSERT(k.v[0] <= lo + 1e-9 * k.step);
				ASSERT(k.v[k.n - 1] >= hi - 1e-9 * k.step);
				mant = k.step / pow(10, floor(log10(k.step) + 1e-12));
				ASSERT(NEAR(mant, 1) || NEAR(mant, 2) || NEAR(mant, 5));
			}
}

TEST(scale_maps)
{
	struct svg_scale y = { .d0 = -10, .d1 = 30, .r0 = 200, .r1 = 0 };

	/* 40 data units over 200 px, upward: 0 -> 200 - 10 * 5 = 150 */
	ASSERT(NEAR(svg_map(&y, 0), 150));
	ASSERT(NEAR(svg_map(&y, 30), 0));
	ASSERT(NEAR(svg_map(&y, -10), 200));
}

TEST(reduce_keeps_spikes)
{
	struct svg_reduce r;
	int i;

	ASSERT_EQ(svg_reduce_init(&r, 0, 100, 10), 0);	/* 10 data units per column */
	/* 1000 samples of 0 with one spike to 500 at x = 42.3 and a dip to -7 at x = 99.99 */
	for (i = 0; i < 1000; i++)
		svg_reduce_add(&r, i * 0.1, 0, 0);
	svg_reduce_add(&r, 42.3, 3, 500);
	svg_reduce_add(&r, 99.99, -7, -7);
	ASSERT_EQ(svg_reduce_col(&r, 42.3), 4);
	ASSERT_EQ(svg_reduce_col(&r, 100), 9);	/* the right edge belongs to the last column */
	ASSERT_EQ(svg_reduce_col(&r, -5), 0);
	ASSERT_EQ(svg_reduce_col(&r, 1e9), 9);
	ASSERT(r.col[4].set && NEAR(r.col[4].lo, 0) && NEAR(r.col[4].hi, 500));
	ASSERT(NEAR(r.col[9].lo, -7) && NEAR(r.col[9].hi, 0));
	for (i = 0; i < 10; i++)
		if (i != 4 && i != 9)
			ASSERT(NEAR(r.col[i].lo, 0) && NEAR(r.col[i].hi, 0));
	svg_reduce_free(&r);
	ASSERT_EQ(svg_reduce_init(&r, 5, 5, 10), -EINVAL);
	ASSERT_EQ(svg_reduce_init(&r, 0, 5, 0), -EINVAL);
}

TEST(path_is_continuous)
{
	struct svg_scale y = { .d0 = 0, .d1 = 100, .r0 = 100, .r1 = 0 };
	struct svg_reduce r;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	ASSERT_EQ(svg_reduce_init(&r, 0, 4, 4), 0);
	svg_reduce_add(&r, 0.5, 10, 10);	/* col 0: y 90 */
	svg_reduce_add(&r, 1.5, 20, 80);	/* col 1: 80..20, the end nearer 90 first */
	/* col 2 empty: the line jumps over it */
	svg_reduce_add(&r, 3.5, 75, 90);	/* col 3: y 25..10, 25 nearer the last point (20) */
	f = open_memstream(&buf, &len);
	ASSERT(f);
	ASSERT_EQ(svg_path_reduced(f, &r, &y, 50, "class=\"b\""), 5);
	fclose(f);
	ASSERT_STR(buf, "<path class=\"b\" d=\"M50 90L51 80V20L53 25V10\"/>\n");
	free(buf);
	svg_reduce_free(&r);
}

TEST(escape_num)
{
	char *buf = NULL, n[32];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ASSERT(f);
	svg_escape(f, "/a<b>&\"c'");
	fclose(f);
	ASSERT_STR(buf, "/a&lt;b&gt;&amp;&quot;c&#39;");
	free(buf);
	ASSERT_STR(svg_num(n, sizeof(n), -0.04, 1), "0.0");
	ASSERT_STR(svg_num(n, sizeof(n), 2.5, 1), "2.5");
	ASSERT_STR(svg_num(n, sizeof(n), 40, 0), "40");
}

TEST_MAIN(ticks_cover_range, ticks_every_range_covered, scale_maps, reduce_keeps_spikes,
	  path_is_continuous, escape_num)
