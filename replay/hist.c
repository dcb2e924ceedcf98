// SPDX-License-Identifier: GPL-2.0
/*
 * Log-linear histogram: chunk 0 holds 0..127 exactly; chunk k >= 1 holds
 * [2^(k+6), 2^(k+7)) in 128 equal buckets of width 2^(k-1).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

/* Where chunk @k is (or would go) in h->chunk. */
static unsigned int hist_slot(const struct hist *h, unsigned int k)
{
	return (unsigned int)__builtin_popcountll(h->mask & ((1ull << k) - 1));
}

static uint32_t *hist_chunk_get(struct hist *h, unsigned int k)
{
	unsigned int i = hist_slot(h, k), nr = hist_chunks(h);
	uint32_t **n, *c;

	if (h->mask & (1ull << k))
		return h->chunk[i];
	c = calloc(HIST_SUB, sizeof(uint32_t));
	n = c ? realloc(h->chunk, (nr + 1) * sizeof(*n)) : NULL;
	if (!n) {
		free(c);
		return NULL;
	}
	memmove(&n[i + 1], &n[i], (nr - i) * sizeof(*n));
	n[i] = c;
	h->chunk = n;
	h->mask |= 1ull << k;
	return c;
}

int hist_add(struct hist *h, uint64_t v)
{
	unsigned int sub, k = hist_chunk_of(v, &sub);
	uint32_t *c = hist_chunk_get(h, k);

	if (!c)
		return -ENOMEM;
	/* A saturated bucket only loses weight past 4 G points of one cgroup. */
	if (c[sub] != UINT32_MAX)
		c[sub]++;
	h->n++;
	if (v > h->max)
		h->max = v;
	return 0;
}

uint64_t hist_quantile(const struct hist *h, double q)
{
	uint64_t rank, seen = 0;
	unsigned int k, i = 0, sub;

	if (!h->n)
		return 0;
	rank = (uint64_t)(q * (double)h->n);
	if ((double)rank < q * (double)h->n)
		rank++;
	if (rank < 1)
		rank = 1;
	for (k = 0; k < HIST_CHUNKS; k++) {
		if (!(h->mask & (1ull << k)))
			continue;
		for (sub = 0; sub < HIST_SUB; sub++) {
			seen += h->chunk[i][sub];
			if (seen >= rank) {
				uint64_t v = hist_value_of(k, sub);

				return v > h->max ? h->max : v;
			}
		}
		i++;
	}
	return h->max;
}

unsigned int hist_chunks(const struct hist *h)
{
	return (unsigned int)__builtin_popcountll(h->mask);
}

void hist_free(struct hist *h)
{
	unsigned int i;

	for (i = 0; i < hist_chunks(h); i++)
		free(h->chunk[i]);
	free(h->chunk);
	h->chunk = NULL;
	h->n = h->max = h->mask = 0;
}
