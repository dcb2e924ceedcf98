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
	unsigned int k, chunks = 0;

	/* A million values spread over 2^0..2^20 touch at most 14 chunks (0 and 7..20). */
	for (i = 0; i < 1000000; i++)
		ASSERT_EQ(hist_add(&h, (i * 2654435761u) & 0xfffff), 0);
	for (k = 0; k < HIST_CHUNKS; k++)
		chunks += h.chunk[k] != NULL;
	ASSERT(chunks <= 14);
	ASSERT_EQU(h.n, 1000000);
	hist_free(&h);
}

TEST_MAIN(exact_small_values, relative_error_below_one_percent, memory_bounded)
