/* SPDX-License-Identifier: GPL-2.0 */
/*
 * seed_fixture.h - what test_sim_golden.c and test_sim_split.c share, over
 * stale_fixture.h's ids and staleness reader: the seed race built step by
 * step with every intermediate number checked (seed_race()), and one traced
 * read of a cgroup as its reader got it (read_now()).
 */
#ifndef MCR_TEST_SEED_FIXTURE_H
#define MCR_TEST_SEED_FIXTURE_H

#include <errno.h>
#include <string.h>

#include "../harness.h"
#include "sim.h"
#include "sim_new.h"
#include "sim-local.h"
#include "rstat.h"
#include "stale_fixture.h"

#define LEAF	2ULL

/*
 * Builds the race of the patch mail: 4 CPUs possible and online, TH = 64 * 4
 * = 256, root -> leaf.  Returns 0 when every intermediate number matched.
 *
 *  t=1  leaf +1 on CPU 2: leaf and root linked on CPU 2's tree;
 *       pcpu[leaf][2] = pcpu[root][2] = 1 (< 64, no batch).
 *       missing: leaf 1, root 1.
 *  t=2  root flush: windows for CPUs 0 and 1 are empty (nothing linked there);
 *       window CPU 2 lists [leaf, root] (children first).
 *  t=3  visit leaf on CPU 2: pcpu[leaf][2] = 0, atomic[leaf] is 0 (no reset);
 *       its 1 page goes to root's pending: missing leaf 0, root 1.
 *  t=4  CPU 1 adds a batch of 64 to leaf: pcpu[leaf][1] = 64 >= 64 ->
 *       atomic[leaf] = 64; leaf was not flushable, so root: pcpu[root][1] = 64
 *       -> atomic[root] = 64.  missing: leaf 64, root 65.
 *  t=5  visit root on CPU 2: pcpu[root][2] = 0, atomic[root] 64 -> 0 (one
 *       reset, the credit is lost); root's pending 1 is aggregated:
 *       missing root 64.  Window CPU 3 empty.  Now leaf = 64, root = 0.
 *  t=6..9  four more batches of 64 on CPU 1.  Before each, leaf's atomic is
 *       64, 128, 192, 256: never > 256, so every policy adds to both:
 *       leaf = 64 + 4*64 = 320, root = 0 + 4*64 = 256 (not > 256).
 *       missing: leaf 64 + 256 = 320, root 64 + 256 = 320.
 */
static inline int seed_race(struct test_ctx *t, struct sim *s)
{
	uint64_t id = 0;
	int i;

	if (sim_threshold(s) != 256)
		return -1;
	if (sim_cgroup_add(s, 0, LEAF, ROOT) ||
	    sim_update(s, 1, 2, LEAF, SIM_ITEM_STATE, 0, 1))
		return -1;
	if (stale(s, LEAF).missing != 1 || stale(s, ROOT).missing != 1)
		return -1;
	if (sim_flush_request(s, 2, ROOT, true) != 1)
		return -1;
	for (i = 0; i < 2; i++)
		if (sim_window_begin(s, 2, ROOT, i) || sim_window_remaining(s) != 0 ||
		    sim_window_end(s, 2))
			return -1;
	if (sim_window_begin(s, 2, ROOT, 2) || sim_window_remaining(s) != 2 ||
	    sim_window_peek(s, 0) != LEAF || sim_window_peek(s, 1) != ROOT)
		return -1;
	if (sim_window_visit_next(s, 3, &id) != 1 || id != LEAF)
		return -1;
	if (stale(s, LEAF).missing != 0 || stale(s, ROOT).missing != 1)
		return -1;
	if (sim_update(s, 4, 1, LEAF, SIM_ITEM_STATE, 0, 64))
		return -1;
	if (sim_stats_updates(s, LEAF) != 64 || sim_stats_updates(s, ROOT) != 64 ||
	    stale(s, ROOT).missing != 65)
		return -1;
	if (sim_window_visit_next(s, 5, &id) != 1 || id != ROOT || sim_window_end(s, 5))
		return -1;
	if (sim_window_begin(s, 5, ROOT, 3) || sim_window_end(s, 5))
		return -1;
	if (sim_stats_updates(s, LEAF) != 64 || sim_stats_updates(s, ROOT) != 0 ||
	    stale(s, ROOT).missing != 64)
		return -1;
	for (i = 0; i < 4; i++)
		if (sim_update(s, 6 + i, 1, LEAF, SIM_ITEM_STATE, 0, 64))
			return -1;
	if (sim_stats_updates(s, LEAF) != 320 || sim_stats_updates(s, ROOT) != 256)
		return -1;
	if (!sim_needs_flush(s, LEAF) || sim_needs_flush(s, ROOT))
		return -1;
	if (stale(s, LEAF).missing != 320 || stale(s, ROOT).missing != 320)
		return -1;
	return 0;
}

/* A forced root flush leaves every counter and every missing value at zero. */
static inline int all_zero(const struct sim *s)
{
	static const uint64_t ids[] = { ROOT, LEAF };
	unsigned int i, c;

	for (i = 0; i < 2; i++) {
		struct sim_stale st = stale(s, ids[i]);

		if (st.missing || st.stats_updates || st.flushable || st.stuck || st.oldest_ts)
			return 0;
		for (c = 0; c < 4; c++)
			if (sim_pcpu_stats_updates(s, ids[i], c))
				return 0;
	}
	return 1;
}


/* What one read got: every wrong line and the age passed with them. */
struct read_log {
	int64_t		err[4];		/* by line: item 0..3 of STATE */
	int64_t		events;		/* EVENT lines summed */
	uint64_t	age;
	int		lines;
};

static inline int read_keep(enum sim_item_kind kind, int item, int64_t error, uint64_t age_ns,
		     void *ctx)
{
	struct read_log *log = ctx;

	if (kind == SIM_ITEM_EVENT)
		log->events += error;
	else if (item >= 0 && item < 4)
		log->err[item] = error;
	log->age = age_ns;
	log->lines++;
	return 0;
}

/* A traced read of @id at @ts, skipped or flushed at once: what the reader got. */
static inline int read_now(struct sim *s, uint64_t ts, uint64_t id, struct read_log *log,
		    struct sim_read_info *info)
{
	int go = sim_flush_request(s, ts, id, false);
	int ret;

	memset(log, 0, sizeof(*log));
	if (go < 0)
		return go;
	ret = sim_read_begin(s, ts, id, go, info);
	if (!ret && go)
		ret = sim_flush(s, ts, id);
	if (ret)
		return ret;
	return sim_read_end(s, ts, id, read_keep, log, NULL);
}

#define FILE_PAGES	0	/* the seed race's line: any node_stat_item idx will do */

/* The last episode a sink was given, and how many. */
struct ep_log {
	struct sim_episode	last;
	int			n;
};

static inline int ep_keep(const struct sim_episode *ep, void *ctx)
{
	struct ep_log *log = ctx;

	log->last = *ep;
	log->n++;
	return 0;
}

#endif /* MCR_TEST_SEED_FIXTURE_H */
