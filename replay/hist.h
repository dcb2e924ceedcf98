/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hist.h - a bounded streaming histogram of unsigned values (pages).
 *
 * Contract: log-linear buckets, exact below 128 and 128 sub-buckets per power
 * of two above, so a quantile is within 0.4% (half a bucket) of the true
 * value.  Buckets are allocated per power of two on first use: memory is at
 * most 58 chunks of 512 bytes, whatever the number of values added.  A chunk
 * holds only the buckets it uses (4 bytes each) until it uses 32; a pass
 * keeps one histogram per (cgroup, run, line) read wrong, thousands of them,
 * most with a few dozen values.  An empty histogram is 32 bytes; one whose
 * values all fell in one bucket (most of them: a line read wrong once or
 * twice) is those 32 bytes alone; one with a single chunk (their values
 * within a power of two) points at it directly, without an array of one
 * pointer.
 */
#ifndef MCR_REPLAY_HIST_H
#define MCR_REPLAY_HIST_H

#include <stdint.h>

#define HIST_SUB_BITS	7
#define HIST_SUB	(1u << HIST_SUB_BITS)
#define HIST_CHUNKS	(64 - HIST_SUB_BITS + 1)

struct hist {
	uint64_t	n;
	uint64_t	max;
	uint64_t	mask;		/* bit k: chunk k allocated */
	union {
		uint32_t **chunk;	/* 2+ chunks: the allocated ones, by k ascending */
		uint32_t *one;		/* a single chunk: it */
	};
};

int hist_add(struct hist *h, uint64_t v);		/* 0 or -ENOMEM */
uint64_t hist_quantile(const struct hist *h, double q);	/* 0 if empty */
unsigned int hist_chunks(const struct hist *h);		/* chunks allocated */
void hist_free(struct hist *h);

#endif
