// SPDX-License-Identifier: GPL-2.0
/* The streaming histogram behind p50/p99: exact below 128, within 1% above, bounded memory. */
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

TEST_MAIN(exact_small_values, relative_error_below_one_percent, memory_bounded,
	  chunks_out_of_order)
