// SPDX-License-Identifier: GPL-2.0
/*
 * test_sim_split.c - the visible error split into settled and in flush, and
 * the noticeable stranded episodes, on the seed race (seed_fixture.h), every
 * expected number derived by hand beside its test.
 */
#include "seed_fixture.h"

/*
 * The visible error split at root's FILE_PAGES, BREAK against CONTINUE,
 * from the seed race on (root is not flushable before t=11 under either:
 * its atomic is 0, then 64 from t=4 to t=5, then 64..256 from t=6 to t=9,
 * never > 256, so its visible error is its error).  The flush of t=2 is in
 * progress while CPU 2's window is open, t=2..5 (CPU 0, 1 and 3's windows
 * last no time):
 *   t 1..2  -1    settled
 *   t 2..4  -1    in flush
 *   t 4..5  -65   in flush (CPU 1's batch raced with the window)
 *   t 5..6  -64   settled (root's visit aggregated the +1)
 *   t 6..9  -128, -192, -256 settled; t 9..11 -320 settled
 * so both have in-flush max 65 and settled max >= 320.  Then:
 *   BREAK: the +64 at t = 10 + k stops at the flushable leaf: root -384,
 *     -448, -512, -576 at t = 11..14, -640 from t=15 to the forced flush at
 *     t=20 (instant: no time in flush): settled max 640, in flush 65.
 *   CONTINUE: the +64 at t=11 reaches root (atomic 320 > 256): flushable
 *     from t=11, visible 0, and the instant flush at t=12 empties it:
 *     settled max 320, in flush 65.
 * The policies differ by 640 against 320 outside flushes and not at all
 * inside: the transient is the flush's, the settled error the policy's.
 */
static void split_run(struct test_ctx *t, const char *policy, uint64_t settled, uint64_t flush)
{
	struct sim *s = sim_new(sim_policy_find(policy), 4, 4);
	struct sim_item_stats is;
	int k;

	ASSERT(s);
	if (!s)
		return;
	ASSERT_EQ(seed_race(t, s), 0);
	for (k = 1; k <= (strcmp(policy, "break") ? 1 : 5); k++)
		ASSERT_EQ(sim_update(s, 10 + k, 1, LEAF, SIM_ITEM_STATE, FILE_PAGES, 64), 0);
	if (strcmp(policy, "break")) {
		ASSERT_EQ(sim_flush_request(s, 12, ROOT, false), 1);
		ASSERT_EQ(sim_flush(s, 12, ROOT), 0);
	} else {
		ASSERT_EQ(sim_flush_request(s, 20, ROOT, true), 1);
		ASSERT_EQ(sim_flush(s, 20, ROOT), 0);
	}
	ASSERT(all_zero(s));
	ASSERT_EQ(sim_item_stats_get(s, ROOT, SIM_ITEM_STATE, FILE_PAGES, 30, &is), 0);
	ASSERT_EQU(is.max_visible_settled, settled);
	ASSERT_EQU(is.max_visible_flush, flush);
	ASSERT_EQU(is.max_visible, settled > flush ? settled : flush);
	sim_destroy(s);
}

TEST(visible_split_break_continue)
{
	split_run(t, "break", 640, 65);
	split_run(t, "continue", 320, 65);
}

/*
 * A flush whose windows are apart: CONTINUE, 2 CPUs, TH 128, root alone.
 *   t=1  +10 on CPU 0 (per-CPU 10 < 64): root non-flushable, error -10;
 *   t=2  +200 on CPU 1: atomic 200 > 128, flushable: visible 0;
 *   t=10 the flush's window on CPU 0 visits root: aggregates the 10 and
 *        resets the atomic: error -200 (CPU 1's delta), not flushable;
 *   t=20 its window on CPU 1 aggregates the 200: error 0.
 * Between the windows the lock is free, yet the flush is in progress:
 * begun at t=10 and ended at t=20 (sim_flush_progress_*()), the -200 of
 * t 10..20 is its transient (in flush 200, settled 10).  Without them only
 * the windows, which last no time, are in flush: settled 200, in flush 0.
 */
static void gap_run(struct test_ctx *t, bool progress, uint64_t settled, uint64_t flush)
{
	struct sim *s = sim_new(sim_policy_find("continue"), 2, 2);
	struct sim_item_stats is;

	ASSERT(s);
	if (!s)
		return;
	ASSERT_EQU(sim_threshold(s), 128);
	ASSERT_EQ(sim_update(s, 1, 0, ROOT, SIM_ITEM_STATE, FILE_PAGES, 10), 0);
	ASSERT_EQ(sim_update(s, 2, 1, ROOT, SIM_ITEM_STATE, FILE_PAGES, 200), 0);
	ASSERT(sim_needs_flush(s, ROOT));
	ASSERT_EQ(sim_flush_request(s, 10, ROOT, false), 1);
	if (progress)
		ASSERT_EQ(sim_flush_progress_begin(s, 10), 0);
	ASSERT_EQ(sim_window_begin(s, 10, ROOT, 0), 0);
	ASSERT_EQ(sim_window_end(s, 10), 0);
	ASSERT(!sim_needs_flush(s, ROOT));
	ASSERT_EQ(sim_window_begin(s, 20, ROOT, 1), 0);
	ASSERT_EQ(sim_window_end(s, 20), 0);
	if (progress)
		ASSERT_EQ(sim_flush_progress_end(s, 20), 0);
	ASSERT_EQ(sim_flush_progress_end(s, 21), -EINVAL);
	ASSERT_EQ(sim_item_stats_get(s, ROOT, SIM_ITEM_STATE, FILE_PAGES, 30, &is), 0);
	ASSERT_EQ(is.error, 0);
	ASSERT_EQU(is.max_visible_settled, settled);
	ASSERT_EQU(is.max_visible_flush, flush);
	ASSERT_EQU(is.max_visible, 200);
	sim_destroy(s);
}

TEST(visible_split_between_windows)
{
	gap_run(t, true, 10, 200);
	gap_run(t, false, 200, 0);
}

/*
 * Noticeable episodes (SIM_EPISODE_NOTICE_NS, 1 ms): BREAK after the seed
 * race, root is stranded from the +64 at t=14 (pending since flush 512 >
 * 508, see seed_race_break_read_error) to the forced flush.
 *   no read, flush at t=20: 6 ns, none skipped: an episode, not noticeable;
 *   no read, flush at t = 14 + 1 ms: noticeable by its length;
 *   the reads at t = 14 and 15 (stale), flush at t=20: noticeable by them.
 */
static void notice_run(struct test_ctx *t, uint64_t end, bool reads, bool want)
{
	struct sim *s = sim_new(sim_policy_find("break"), 4, 4);
	struct sim_cgroup_stats cs;
	struct ep_log ep = { .n = 0 };
	struct sim_read_info info;
	struct read_log log;
	int k;

	ASSERT(s);
	if (!s)
		return;
	sim_episode_sink(s, ep_keep, &ep);
	ASSERT_EQ(seed_race(t, s), 0);
	for (k = 1; k <= 5; k++) {
		ASSERT_EQ(sim_update(s, 10 + k, 1, LEAF, SIM_ITEM_STATE, FILE_PAGES, 64), 0);
		if (reads && k >= 4)
			ASSERT_EQ(read_now(s, 10 + k, ROOT, &log, &info), 1);
	}
	/* an open episode is judged as far as it went */
	ASSERT_EQ(sim_cgroup_stats_get(s, ROOT, end, &cs), 0);
	ASSERT_EQU(cs.episodes, 1);
	ASSERT_EQU(cs.episodes_noticeable, want);
	ASSERT_EQ(sim_flush_request(s, end, ROOT, true), 1);
	ASSERT_EQ(sim_flush(s, end, ROOT), 0);
	ASSERT_EQ(ep.n, 1);
	ASSERT_EQU(ep.last.start, 14);
	ASSERT_EQU(ep.last.end, end);
	ASSERT_EQU(ep.last.reads_skipped, reads ? 2 : 0);
	ASSERT_EQ(ep.last.noticeable, want);
	ASSERT_EQ(sim_cgroup_stats_get(s, ROOT, end + 1, &cs), 0);
	ASSERT_EQU(cs.episodes, 1);
	ASSERT_EQU(cs.episodes_noticeable, want);
	sim_destroy(s);
}

TEST(noticeable_episodes)
{
	notice_run(t, 20, false, false);
	notice_run(t, 14 + SIM_EPISODE_NOTICE_NS - 1, false, false);
	notice_run(t, 14 + SIM_EPISODE_NOTICE_NS, false, true);
	notice_run(t, 20, true, true);
}

TEST_MAIN(visible_split_break_continue, visible_split_between_windows, noticeable_episodes)
