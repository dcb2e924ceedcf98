/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stale_fixture.h - what test_sim_stale.c and test_sim_stale_reads.c
 * share: the cgroup ids of their trees and reading one node's staleness
 * or one item's missing amount.
 */
#ifndef MCR_TEST_STALE_FIXTURE_H
#define MCR_TEST_STALE_FIXTURE_H

#include <errno.h>
#include <string.h>

#include "../harness.h"
#include "sim.h"
#include "sim_new.h"
#include "rstat.h"
#include "sim-local.h"
#include "stale.h"

#define ROOT	SIM_ROOT_ID
#define A	10ULL
#define B	11ULL
#define D	20ULL

static inline struct sim_stale stale(const struct sim *s, uint64_t id)
{
	struct sim_stale st = { 0 };

	sim_stale_get(s, id, &st);
	return st;
}

static inline int64_t item(const struct sim *s, uint64_t id, enum sim_item_kind kind, int i)
{
	int64_t v = -12345;

	sim_item_missing(s, id, kind, i, &v);
	return v;
}

#endif
