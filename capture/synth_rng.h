/* SPDX-License-Identifier: GPL-2.0 */
/*
 * synth_rng.h - the random numbers of the synthetic traces (synth_rng.c):
 * seeded, so that a seed makes the same trace everywhere.  No global state.
 */
#ifndef MCR_SYNTH_RNG_H
#define MCR_SYNTH_RNG_H

#include <stdint.h>

/* xoshiro256** seeded with splitmix64: small, fast, and the same everywhere. */
struct synth_rng {
	uint64_t	s[4];
};

void synth_rng_seed(struct synth_rng *r, uint64_t seed);
uint64_t synth_rng_next(struct synth_rng *r);

static inline double synth_rng_unit(struct synth_rng *r)	/* [0, 1) */
{
	return (double)(synth_rng_next(r) >> 11) * 0x1.0p-53;
}

static inline uint64_t synth_rng_below(struct synth_rng *r, uint64_t n)	/* [0, n) */
{
	return (uint64_t)(((unsigned __int128)synth_rng_next(r) * n) >> 64);
}

#endif /* MCR_SYNTH_RNG_H */
