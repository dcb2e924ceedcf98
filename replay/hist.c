// SPDX-License-Identifier: GPL-2.0
/*
 * Log-linear histogram: chunk 0 holds 0..127 exactly; chunk k >= 1 holds
 * [2^(k+6), 2^(k+7)) in 128 equal buckets of width 2^(k-1).  A chunk is
 * sparse until it uses many buckets (hist_sparse_add()).
 */
#include <errno.h>
#include <stdbool.h>
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

/*
 * A chunk starts sparse: its buckets in use only, each a uint32_t of count
 * << HIST_SUB_BITS | bucket, sorted by bucket, after a header of capacity
 * << 16 | number in use.  Most histograms hold a few dozen values (the reads
 * of one cgroup that got one line wrong), where a dense chunk would be 512
 * bytes for a handful of buckets.  Past HIST_SPARSE_MAX buckets, or a count
 * the packing cannot hold, the chunk turns dense: 128 counts.  Quantiles
 * walk buckets in the same order either way, so they do not change.
 * Bit 0 of the pointer in h->chunk tags a sparse chunk.
 */
#define HIST_SPARSE_MAX		32
#define HIST_SPARSE_COUNT_MAX	((UINT32_MAX >> HIST_SUB_BITS) - 1)

static bool hist_is_sparse(const uint32_t *c)
{
	return (uintptr_t)c & 1;
}

static uint32_t *hist_untag(uint32_t *c)
{
	return (uint32_t *)((uintptr_t)c & ~(uintptr_t)1);
}

static uint32_t *hist_tag(uint32_t *c)
{
	return (uint32_t *)((uintptr_t)c | 1);
}

/* The allocated chunks, by k ascending: h->one alone, or h->chunk. */
static uint32_t **hist_chunk_array(struct hist *h)
{
	return hist_chunks(h) > 1 ? h->chunk : &h->one;
}

/* Where chunk @k is (or would go) in hist_chunk_array(). */
static unsigned int hist_slot(const struct hist *h, unsigned int k)
{
	return (unsigned int)__builtin_popcountll(h->mask & ((1ull << k) - 1));
}

/*
 * A histogram whose values all fell in one bucket allocates nothing: h->one
 * holds the bucket, sub << 2 | HIST_INLINE, in the chunk of h->mask's one
 * bit, and its count is h->n (a dense chunk's at most UINT32_MAX, which it
 * reads as).  Most of a pass's histograms are that: a cgroup read wrong on
 * a line once or twice.  A value in another bucket gives the bucket the
 * chunk it would have had all along (hist_uninline()).
 */
#define HIST_INLINE		2

static bool hist_is_inline(const struct hist *h)
{
	return hist_chunks(h) == 1 && ((uintptr_t)h->one & HIST_INLINE);
}

static unsigned int hist_inline_sub(const struct hist *h)
{
	return (unsigned int)((uintptr_t)h->one >> 2);
}

static uint64_t hist_inline_count(const struct hist *h)
{
	return h->n < UINT32_MAX ? h->n : UINT32_MAX;
}

/*
 * The inline bucket into a chunk: sparse with that one bucket, or dense
 * past the counts a sparse chunk holds, as hist_sparse_add() would have
 * left it.
 */
static int hist_uninline(struct hist *h)
{
	unsigned int sub = hist_inline_sub(h);
	uint32_t *c;

	if (h->n <= HIST_SPARSE_COUNT_MAX) {
		c = malloc(5 * sizeof(uint32_t));
		if (!c)
			return -ENOMEM;
		c[0] = 4u << 16 | 1;
		c[1] = (uint32_t)h->n << HIST_SUB_BITS | sub;
		h->one = hist_tag(c);
		return 0;
	}
	c = calloc(HIST_SUB, sizeof(uint32_t));
	if (!c)
		return -ENOMEM;
	c[sub] = (uint32_t)hist_inline_count(h);
	h->one = c;
	return 0;
}

/* Slot @i holds a new sparse chunk for @k; NULL on ENOMEM. */
static uint32_t **hist_chunk_new(struct hist *h, unsigned int k)
{
	unsigned int i = hist_slot(h, k), nr = hist_chunks(h);
	uint32_t **n, *c;

	c = malloc(5 * sizeof(uint32_t));
	if (!c)
		return NULL;
	c[0] = 4u << 16;
	if (!nr) {
		h->one = hist_tag(c);
		h->mask |= 1ull << k;
		return &h->one;
	}
	n = realloc(nr > 1 ? h->chunk : NULL, (nr + 1) * sizeof(*n));
	if (!n) {
		free(c);
		return NULL;
	}
	if (nr == 1)
		n[0] = h->one;
	memmove(&n[i + 1], &n[i], (nr - i) * sizeof(*n));
	n[i] = hist_tag(c);
	h->chunk = n;
	h->mask |= 1ull << k;
	return &n[i];
}

/* The sparse chunk at *@slot as 128 counts. */
static int hist_densify(uint32_t **slot)
{
	uint32_t *sp = hist_untag(*slot), *c = calloc(HIST_SUB, sizeof(uint32_t));
	uint32_t j, nr = sp[0] & 0xffff;

	if (!c)
		return -ENOMEM;
	for (j = 1; j <= nr; j++)
		c[sp[j] & (HIST_SUB - 1)] = sp[j] >> HIST_SUB_BITS;
	free(sp);
	*slot = c;
	return 0;
}

/* One more in bucket @sub of the sparse chunk at *@slot; may turn it dense. */
static int hist_sparse_add(uint32_t **slot, unsigned int sub)
{
	uint32_t *c = hist_untag(*slot);
	uint32_t nr = c[0] & 0xffff, cap = c[0] >> 16, j;

	for (j = 1; j <= nr && (c[j] & (HIST_SUB - 1)) < sub; j++)
		;
	if (j <= nr && (c[j] & (HIST_SUB - 1)) == sub) {
		if ((c[j] >> HIST_SUB_BITS) < HIST_SPARSE_COUNT_MAX) {
			c[j] += HIST_SUB;
			return 0;
		}
	} else if (nr < cap) {
		memmove(&c[j + 1], &c[j], (nr + 1 - j) * sizeof(*c));
		c[j] = HIST_SUB | sub;
		c[0]++;
		return 0;
	} else if (cap < HIST_SPARSE_MAX) {
		c = realloc(c, (1 + 2 * cap) * sizeof(*c));
		if (!c)
			return -ENOMEM;
		c[0] = (2 * cap) << 16 | nr;
		*slot = hist_tag(c);
		return hist_sparse_add(slot, sub);
	}
	if (hist_densify(slot))
		return -ENOMEM;
	(*slot)[sub]++;
	return 0;
}

int hist_add(struct hist *h, uint64_t v)
{
	unsigned int sub, k = hist_chunk_of(v, &sub);
	uint32_t **slot;

	if (!h->mask) {
		h->mask = 1ull << k;
		h->one = (uint32_t *)((uintptr_t)sub << 2 | HIST_INLINE);
		goto counted;
	}
	if (hist_is_inline(h)) {
		if (h->mask == 1ull << k && hist_inline_sub(h) == sub)
			goto counted;
		if (hist_uninline(h))
			return -ENOMEM;
	}
	slot = h->mask & (1ull << k) ? &hist_chunk_array(h)[hist_slot(h, k)] : hist_chunk_new(h, k);
	if (!slot)
		return -ENOMEM;
	if (hist_is_sparse(*slot)) {
		if (hist_sparse_add(slot, sub))
			return -ENOMEM;
	} else if ((*slot)[sub] != UINT32_MAX) {
		/* A saturated bucket only loses weight past 4 G points of one cgroup. */
		(*slot)[sub]++;
	}
counted:
	h->n++;
	if (v > h->max)
		h->max = v;
	return 0;
}

uint64_t hist_quantile(const struct hist *h, double q)
{
	uint32_t *const *chunk = hist_chunks(h) > 1 ? h->chunk : &h->one;
	uint64_t rank, seen = 0;
	unsigned int k, i = 0, sub;

	if (!h->n)
		return 0;
	rank = (uint64_t)(q * (double)h->n);
	if ((double)rank < q * (double)h->n)
		rank++;
	if (rank < 1)
		rank = 1;
	if (hist_is_inline(h)) {
		uint64_t v = hist_value_of((unsigned int)__builtin_ctzll(h->mask), hist_inline_sub(h));

		return hist_inline_count(h) >= rank && v < h->max ? v : h->max;
	}
	for (k = 0; k < HIST_CHUNKS; k++) {
		uint32_t *c;

		if (!(h->mask & (1ull << k)))
			continue;
		c = chunk[i++];
		if (hist_is_sparse(c)) {
			uint32_t j, nr;

			c = hist_untag(c);
			for (j = 1, nr = c[0] & 0xffff; j <= nr; j++) {
				seen += c[j] >> HIST_SUB_BITS;
				if (seen >= rank) {
					uint64_t v = hist_value_of(k, c[j] & (HIST_SUB - 1));

					return v > h->max ? h->max : v;
				}
			}
			continue;
		}
		for (sub = 0; sub < HIST_SUB; sub++) {
			seen += c[sub];
			if (seen >= rank) {
				uint64_t v = hist_value_of(k, sub);

				return v > h->max ? h->max : v;
			}
		}
	}
	return h->max;
}

unsigned int hist_chunks(const struct hist *h)
{
	return (unsigned int)__builtin_popcountll(h->mask);
}

void hist_free(struct hist *h)
{
	uint32_t **chunk = hist_chunk_array(h);
	unsigned int i;

	for (i = 0; i < hist_chunks(h) && !hist_is_inline(h); i++)
		free(hist_untag(chunk[i]));
	if (hist_chunks(h) > 1)
		free(h->chunk);
	h->chunk = NULL;
	h->n = h->max = h->mask = 0;
}
