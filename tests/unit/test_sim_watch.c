// SPDX-License-Identifier: GPL-2.0
/*
 * test_sim_watch.c - watched memcgs (sim/watch.c): the range of each line's
 * visible error over the updates between two takes, as the replay's series
 * read it at their samples.
 */
#include <errno.h>
#include <stdint.h>

#include "../harness.h"
#include "sim.h"
#include "sim_new.h"

#define ROOT	SIM_ROOT_ID
#define A	10ULL
#define B	11ULL
#define C	99ULL

/* Line @line of @id's range since the last take, or false. */
static bool take(struct sim *s, uint64_t id, int32_t line, int64_t *lo, int64_t *hi)
{
	return sim_range_take(s, sim_node_handle(s, id), line, lo, hi);
}

/*
 * 1 CPU, TH = 64 x 1; root - A - B; A watched, and C (under A) before it
 * exists.  Hand derivation (sim_step_charge(): the per-CPU counter adds
 * |val| and moves to the atomic at 64 or more):
 * - B +10 of line 5: nothing flushable, so B, A and the root are below the
 *   calm top; A misses 10: its range of line 5 is [-10, -10].
 * - B -4: A misses 6: [-10, -6].  Taken: those; again: empty.
 * - B +60: per-CPU 10 + 4 + 60 = 74 at B, A and the root: each moves 74 to
 *   its atomic, 74 > TH, so the walk makes A flushable: every line of A
 *   shows 0 after it (not -66, which only the walk's inside saw): [0, 0];
 *   line 6, which the simulator does not know yet, gets nothing.
 * - B +1 of line 6: A and the root are calm (flushable, not stranded), as
 *   is B: nothing is seen, A's line 6 stays empty.
 * - C appears under A and takes +5 of line 5: A and the root are calm, C
 *   is not flushable: C's line 5 [-5, -5]; A's line 5 empty since taken.
 * - A flush of the root visits all: C's error goes back to 0, seen when
 *   the caller asks after the event (sim_watch_visited()): before that C's
 *   range is [-5, -5] (taken), after it C's line 5 [0, 0] and A's lines 5
 *   and 6 [0, 0] (A is no longer flushable: its atomic was reset; nothing
 *   is missing); the root, not watched, none.
 */
TEST(ranges)
{
	struct sim *s = sim_new(sim_policy_find("break"), 1, 1);
	int32_t l5, l6;
	int64_t lo = 1, hi = 1;

	ASSERT(s);
	ASSERT_EQ(sim_cgroup_add(s, 1, A, ROOT), 0);
	ASSERT_EQ(sim_cgroup_add(s, 1, B, A), 0);
	ASSERT_EQ(sim_watch(s, A), 0);
	ASSERT_EQ(sim_watch(s, A), 0);		/* twice: nothing more */
	ASSERT_EQ(sim_watch(s, C), 0);		/* not known yet */

	ASSERT_EQ(sim_update(s, 2, 0, B, SIM_ITEM_STATE, 5, 10), 0);
	ASSERT_EQ(sim_update(s, 3, 0, B, SIM_ITEM_STATE, 5, -4), 0);
	l5 = sim_line_handle(s, SIM_ITEM_STATE, 5);
	ASSERT(l5 >= 0);
	ASSERT(take(s, A, l5, &lo, &hi));
	ASSERT_EQ(lo, -10);
	ASSERT_EQ(hi, -6);
	ASSERT(!take(s, A, l5, &lo, &hi));
	ASSERT(!take(s, B, l5, &lo, &hi));	/* not watched */
	ASSERT(!take(s, ROOT, l5, &lo, &hi));

	ASSERT_EQ(sim_update(s, 4, 0, B, SIM_ITEM_STATE, 5, 60), 0);
	ASSERT(sim_needs_flush(s, A));
	ASSERT_EQ(sim_stats_updates(s, A), 74);
	ASSERT(take(s, A, l5, &lo, &hi));
	ASSERT_EQ(lo, 0);
	ASSERT_EQ(hi, 0);

	ASSERT_EQ(sim_update(s, 5, 0, B, SIM_ITEM_STATE, 6, 1), 0);
	l6 = sim_line_handle(s, SIM_ITEM_STATE, 6);
	ASSERT(l6 >= 0);
	ASSERT(!take(s, A, l6, &lo, &hi));

	ASSERT_EQ(sim_cgroup_add(s, 6, C, A), 0);
	ASSERT_EQ(sim_update(s, 7, 0, C, SIM_ITEM_STATE, 5, 5), 0);
	ASSERT(!take(s, A, l5, &lo, &hi));
	ASSERT_EQ(sim_flush_request(s, 8, ROOT, true), 1);
	ASSERT_EQ(sim_flush(s, 8, ROOT), 0);
	ASSERT_EQ(sim_line_error_at(s, sim_node_handle(s, C), l5), 0);
	ASSERT(take(s, C, l5, &lo, &hi));
	ASSERT_EQ(lo, -5);
	ASSERT_EQ(hi, -5);
	ASSERT_EQ(sim_watch_visited(s), 0);
	ASSERT(!sim_needs_flush(s, A));
	ASSERT(take(s, C, l5, &lo, &hi));
	ASSERT(lo == 0 && hi == 0);
	ASSERT(take(s, A, l5, &lo, &hi));
	ASSERT(lo == 0 && hi == 0);
	ASSERT(take(s, A, l6, &lo, &hi));
	ASSERT(lo == 0 && hi == 0);
	ASSERT(!take(s, ROOT, l5, &lo, &hi));
	ASSERT_EQ(sim_watch_visited(s), 0);	/* the list is empty: nothing more */
	ASSERT(!take(s, C, l5, &lo, &hi));
	sim_destroy(s);
}

/* Bad handles take nothing; a counters-only simulator keeps no ranges. */
TEST(edges)
{
	struct sim_params sp = { .policy = sim_policy_find("break"), .nr_possible = 1,
				 .nr_online = 1, .batch = SIM_CHARGE_BATCH, .counters_only = true };
	struct sim *s = sim_new(sim_policy_find("break"), 1, 1);
	struct sim *co = sim_create(&sp);
	int64_t lo, hi;

	ASSERT(s && co);
	ASSERT(!sim_range_take(s, 0, 0, &lo, &hi));	/* nothing watched yet */
	ASSERT_EQ(sim_cgroup_add(s, 1, A, ROOT), 0);
	ASSERT_EQ(sim_watch(s, A), 0);
	ASSERT(!sim_range_take(s, -1, 0, &lo, &hi));
	ASSERT(!sim_range_take(s, 1000, 0, &lo, &hi));
	ASSERT(!sim_range_take(s, sim_node_handle(s, A), -1, &lo, &hi));
	ASSERT(!sim_range_take(s, sim_node_handle(s, A), 5, &lo, &hi));
	ASSERT_EQ(sim_watch(co, ROOT), -EINVAL);
	sim_destroy(co);
	sim_destroy(s);
}

TEST_MAIN(ranges, edges)
