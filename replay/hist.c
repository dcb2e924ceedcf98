// SPDX-License-Identifier: GPL-2.0
/*
 * Log-linear histogram: chunk 0 holds 0..127 exactly; chunk k >= 1 holds
 * [2^(k+6), 2^(k+7)) in 128 equal buckets of width 2^(k-1).
 */
#include <errno.h>
#include <stdlib.h>

#include "hist.h"

static unsigned int hist_chunk_of(uint64_t v, unsigned int *sub)
{
	unsigned int e;

	if (v < HIST_SUB) {
		*sub = (unsigned int)v;
		return 0;
	}
	e = 63 - (unsigned int)__builtin_clzll(v);		/* >= HIST_SUB_BITS */
	*sub = (unsigned int)(v >> (e - HIST_SUB_BITS)) - HIST_SUB;
	return e - HIST_SUB_BITS + 1;
}

/* The middle of a bucket, so the error is at most half its width. */
static uint64_t hist_value_of(unsigned int k, unsigned int sub)
{
	unsigned int shift;
	uint64_t lo;

	if (k == 0)
		return sub;
	shift = k - 1;
	lo = (uint64_t)(HIST_SUB + sub) << shift;
	return lo + (shift ? (1ull << shift) / 2 : 0);
}

int hist_add(struct hist *h, uint64_t v)
{
	unsigned int sub, k = hist_chunk_of(v, &sub);

	if (!h->chunk[k]) {
		h->chunk[k] = calloc(HIST_SUB, sizeof(uint32_t));
		if (!h->chunk[k])
			return -ENOMEM;
	}
	/* A saturated bucket only loses weight past 4 G points of one cgroup. */
	if (h->chunk[k][sub] != UINT32_MAX)
		h->chunk[k][sub]++;
	h->n++;
	if (v > h->max)
		h->max = v;
	return 0;
}

uint64_t hist_quantile(const struct hist *h, double q)
{
	uint64_t rank, seen = 0;
	unsigned int k, sub;

	if (!h->n)
		return 0;
	rank = (uint64_t)(q * (double)h->n);
	if ((double)rank < q * (double)h->n)
		rank++;
	if (rank < 1)
		rank = 1;
	for (k = 0; k < HIST_CHUNKS; k++) {
		if (!h->chunk[k])
			continue;
		for (sub = 0; sub < HIST_SUB; sub++) {
			seen += h->chunk[k][sub];
			if (seen >= rank) {
				uint64_t v = hist_value_of(k, sub);

				return v > h->max ? h->max : v;
			}
		}
	}
	return h->max;
}

void hist_free(struct hist *h)
{
	unsigned int k;

	for (k = 0; k < HIST_CHUNKS; k++) {
		free(h->chunk[k]);
		h->chunk[k] = NULL;
	}
	h->n = h->max = 0;
}
