/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hash.h - the integer mixer of the cgroup-id tables in capture/ and replay/.
 *
 * Contract: mcr_hash64() spreads the bits of an id (cgroup ids are inode
 * numbers: small and dense) over the whole word, so that masking its low bits
 * picks a bucket.  The 64-bit finalizer of MurmurHash3.
 */
#ifndef MCR_HASH_H
#define MCR_HASH_H

#include <stdint.h>

static inline uint64_t mcr_hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

#endif
