// SPDX-License-Identifier: GPL-2.0
/* The streaming histogram behind p50/p99: exact below 128, within 1% above, bounded memory. */
#include <malloc.h>
#include <stdlib.h>

#include "../harness.h"
#include "hist.h"

TEST(exact_small_values)
{
	struct hist h = { 0 };
	uint64_t v;

	/* 0..99 once each: the 50th value is 49, the 99th is 98 (rank = ceil(q * n)). */
	for (v = 0; v < 100; v++)
		ASSERT_EQ(hist_add(&h, v), 0);
	ASSERT_EQU(hist_quantile(&h, 0.50), 49);
	ASSERT_EQU(hist_quantile(&h, 0.99), 98);
	ASSERT_EQU(h.max, 99);
	hist_free(&h);
}

TEST(relative_error_below_one_percent)
{
	struct hist h = { 0 };
	uint64_t v, q;
	double err;

	/* One value repeated: every quantile is that value, within half a bucket (1/256). */
	for (v = 128; v < (1ull << 40); v = v * 3 + 7) {
		ASSERT_EQ(hist_add(&h, v), 0);
		ASSERT_EQ(hist_add(&h, v), 0);
		q = hist_quantile(&h, 0.5);
		err = (double)(q > v ? q - v : v - q) / (double)v;
		if (err > 0.01)
			FAILF("value %llu -> %llu, error %.4f", (unsigned long long)v,
			      (unsigned long long)q, err);
		hist_free(&h);
	}
}

TEST(memory_bounded)
{
	struct hist h = { 0 };
	uint64_t i;

	/* A million values spread over 2^0..2^20 touch at most 14 chunks (0 and 7..20). */
	for (i = 0; i < 1000000; i++)
		ASSERT_EQ(hist_add(&h, (i * 2654435761u) & 0xfffff), 0);
	ASSERT(hist_chunks(&h) <= 14);
	ASSERT_EQU(h.n, 1000000);
	hist_free(&h);
}

/*
 * Most histograms of a pass hold a few values within one power of two, one
 * chunk: its 20 bytes are the only allocation (a 32-byte heap block), not
 * also an array of one pointer to it.  1000 of them, 3 values each, take
 * 32 000 bytes of glibc's heap, where an array for each took 64 000.
 */
TEST(single_chunk_alone)
{
#if !defined(__GLIBC__) || defined(__SANITIZE_ADDRESS__)
	SKIP("heap use is counted with glibc's mallinfo2()");
#else
	struct hist *h = calloc(1000, sizeof(*h));
	size_t before, used;
	unsigned int i;

	ASSERT(h);
	before = mallinfo2().uordblks;
	for (i = 0; i < 1000; i++) {
		ASSERT_EQ(hist_add(&h[i], 300 + i % 7), 0);
		ASSERT_EQ(hist_add(&h[i], 301), 0);
		ASSERT_EQ(hist_add(&h[i], 383), 0);
		ASSERT_EQU(hist_chunks(&h[i]), 1);
	}
	used = mallinfo2().uordblks - before;
	ASSERT(used <= 1000 * 32);
	/* a second chunk before and a third after it: the values keep their order */
	ASSERT_EQ(hist_add(&h[0], 5), 0);
	ASSERT_EQ(hist_add(&h[0], 1ull << 30), 0);
	ASSERT_EQU(hist_chunks(&h[0]), 3);
	ASSERT_EQU(hist_quantile(&h[0], 0.2), 5);		/* rank 1 */
	ASSERT_EQU(hist_quantile(&h[0], 0.4), 301);		/* rank 2: 300, bucket 300..301 */
	ASSERT_EQU(hist_quantile(&h[0], 1.0), 1ull << 30);
	for (i = 0; i < 1000; i++)
		hist_free(&h[i]);
	free(h);
#endif
}

/*
 * Chunks made out of order keep their order: 2^20 (chunk 14), then 5 (chunk
 * 0), then 1000 (chunk 3: 1000 >> 2 = 250, bucket [1000, 1004), middle 1002).
 */
TEST(chunks_out_of_order)
{
	struct hist h = { 0 };

	ASSERT_EQ(hist_add(&h, 1ull << 20), 0);
	ASSERT_EQ(hist_add(&h, 5), 0);
	ASSERT_EQ(hist_add(&h, 1000), 0);
	ASSERT_EQU(hist_chunks(&h), 3);
	ASSERT_EQU(hist_quantile(&h, 0.2), 5);		/* rank 1 */
	ASSERT_EQU(hist_quantile(&h, 0.5), 1002);	/* rank 2 */
	/* rank 3: bucket [2^20, 2^20 + 8192), its middle above the max: the max */
	ASSERT_EQU(hist_quantile(&h, 1.0), 1ull << 20);
	hist_free(&h);
	ASSERT_EQU(hist_chunks(&h), 0);
}

/* The bucket middle hist_quantile() must give for sorted @v at @q, as hist.c's header defines it. */
static uint64_t naive_quantile(const uint64_t *v, uint64_t n, double q)
{
	uint64_t rank = (uint64_t)(q * (double)n), x, lo, w;
	unsigned int e;

	if ((double)rank < q * (double)n)
		rank++;
	if (rank < 1)
		rank = 1;
	x = v[rank - 1];
	if (x < HIST_SUB)
		return x;
	e = 63 - (unsigned int)__builtin_clzll(x);
	w = 1ull << (e - HIST_SUB_BITS);		/* bucket width */
	lo = x & ~(w - 1);
	x = lo + w / 2;
	return x > v[n - 1] ? v[n - 1] : x;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/*
 * A chunk holds its buckets sparsely until it uses 32, then densely: every
 * quantile must be the same on both sides of that, and of each growth of
 * the sparse chunk (4, 8, 16, 32 buckets).  Values in 1024..2047 (chunk 4,
 * buckets of width 8), each bucket three times before the next (37 is prime
 * to 128: the 128 buckets in turn), so the 33rd bucket turns the chunk dense
 * with counts of 3 in it; checked against the sorted values after every add.
 */
TEST(sparse_then_dense)
{
	static const double qs[] = { 0.01, 0.25, 0.5, 0.75, 0.9, 0.99, 1.0 };
	uint64_t v[300], s[300], i, n = 0;
	struct hist h = { 0 };
	unsigned int j;

	for (i = 0; i < 300; i++) {
		v[n++] = 1024 + (((i / 3) * 37) % 128) * 8 + (i % 5);
		ASSERT_EQ(hist_add(&h, v[n - 1]), 0);
		memcpy(s, v, n * sizeof(*v));
		qsort(s, n, sizeof(*s), cmp_u64);
		for (j = 0; j < sizeof(qs) / sizeof(qs[0]); j++)
			if (hist_quantile(&h, qs[j]) != naive_quantile(s, n, qs[j]))
				FAILF("after %llu values, q %.2f: %llu, expected %llu",
				      (unsigned long long)n, qs[j],
				      (unsigned long long)hist_quantile(&h, qs[j]),
				      (unsigned long long)naive_quantile(s, n, qs[j]));
	}
	ASSERT_EQU(hist_chunks(&h), 1);
	hist_free(&h);
}

/*
 * A histogram whose values all fall in one bucket allocates nothing: 1000
 * of them, 1 to 3 values each (300, then 300 or 301: bucket [300, 302) of
 * chunk 2, middle 301), take no heap; their quantiles are the bucket's
 * middle clamped to the max (300 alone, else 301).  A value in another
 * bucket (5, chunk 0; then 303, the next bucket of chunk 2) gives them the
 * chunks they would have had: quantiles as the sorted values say.
 */
TEST(one_bucket_inline)
{
#if !defined(__GLIBC__) || defined(__SANITIZE_ADDRESS__)
	SKIP("heap use is counted with glibc's mallinfo2()");
#else
	struct hist *h = calloc(1000, sizeof(*h));
	size_t before;
	unsigned int i, j;

	ASSERT(h);
	before = mallinfo2().uordblks;
	for (i = 0; i < 1000; i++)
		for (j = 0; j <= i % 3; j++)
			ASSERT_EQ(hist_add(&h[i], 300 + j % 2), 0);
	ASSERT_EQU(mallinfo2().uordblks, before);
	ASSERT_EQU(hist_quantile(&h[0], 0.99), 300);
	ASSERT_EQU(hist_quantile(&h[2], 0.5), 301);
	ASSERT_EQU(hist_chunks(&h[2]), 1);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(hist_add(&h[i], 5), 0);
		ASSERT_EQ(hist_add(&h[i], 303), 0);
	}
	/* h[0]: 5 300 303; h[2]: 5 300 300 301 303 */
	ASSERT_EQU(hist_chunks(&h[0]), 2);
	ASSERT_EQU(hist_quantile(&h[0], 0.3), 5);
	ASSERT_EQU(hist_quantile(&h[0], 0.6), 301);
	ASSERT_EQU(hist_quantile(&h[0], 1.0), 303);
	ASSERT_EQU(hist_quantile(&h[2], 0.8), 301);
	ASSERT_EQU(hist_quantile(&h[2], 1.0), 303);
	ASSERT_EQU(h[2].n, 5);
	for (i = 0; i < 1000; i++)
		hist_free(&h[i]);
	ASSERT_EQU(mallinfo2().uordblks, before);
	free(h);
#endif
}

TEST_MAIN(exact_small_values, relative_error_below_one_percent, memory_bounded,
	  single_chunk_alone, chunks_out_of_order, sparse_then_dense, one_bucket_inline)
