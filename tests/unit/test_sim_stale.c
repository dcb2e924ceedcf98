// SPDX-License-Identifier: GPL-2.0
/*
 * test_sim_stale.c - staleness accounting (sim/stale.c): missing pages as
 * magnitude and signed per item, the oldest unflushed update, stuck state
 * and the time integrals, derived by hand.  The reads and episodes built on
 * them are in test_sim_stale_reads.c.
 */
#include "stale_fixture.h"


/*
 * 2 CPUs, TH 128 (no counter ever gets near a batch here), root -> A -> B,
 * root -> D, made at t=50.
 *   t=100 B +10 CPU 0 (state 5)   B 10  A 10  root 10
 *   t=200 B  -3 CPU 1 (state 5)   B 13  A 13  root 13        state 5: +7
 *   t=300 A  +5 CPU 0 (state 6)   B 13  A 18  root 18
 *   t=400 D  +7 CPU 1 (event 2)   D 7         root 25
 * oldest: B, A, root 100; D 400.
 *   t=500 flush(B): B visited on CPU 0 (10) and CPU 1 (3): B 0; the 13 pages
 *         wait in A's pending: A still 18, root 25; A's oldest still 100.
 *   t=600 flush(A): A on CPU 0 moves its own 5 plus the pending 13 into
 *         root's pending; A on CPU 1 (linked by B's update) moves nothing.
 *         A 0, root 25 (18 pending + D's 7), oldest 100.
 *   t=700 window root/CPU 0 = [root]: root aggregates its pending 18 -> 7
 *         left (D on CPU 1); oldest becomes D's 400.
 *   t=710 window root/CPU 1 = [D, root]: after D, root still 7 (pending);
 *         after root 0.
 * Integrals of root: 10*100 + 13*100 + 18*100 + 25*300 + 7*10 = 11670 page*ns;
 * max missing 25; max age 700 - 100 = 600 (at 710 the oldest is 400: 310).
 * A: 10*100 + 13*100 + 18*300 = 7700, max age 600 - 100 = 500.
 * B: 10*100 + 13*300 = 4900, max age 500 - 100 = 400.
 */
TEST(subtree_flush_waits_in_parent_pending)
{
	struct sim *s = sim_new(sim_policy_find("break"), 2, 2);
	struct sim_acct ac;
	uint64_t id;

	ASSERT(s);
	ASSERT_EQ(sim_cgroup_add(s, 50, A, ROOT), 0);
	ASSERT_EQ(sim_cgroup_add(s, 50, B, A), 0);
	ASSERT_EQ(sim_cgroup_add(s, 50, D, ROOT), 0);
	ASSERT_EQ(sim_update(s, 100, 0, B, SIM_ITEM_STATE, 5, 10), 0);
	ASSERT_EQ(sim_update(s, 200, 1, B, SIM_ITEM_STATE, 5, -3), 0);
	ASSERT_EQ(sim_update(s, 300, 0, A, SIM_ITEM_STATE, 6, 5), 0);
	ASSERT_EQ(sim_update(s, 400, 1, D, SIM_ITEM_EVENT, 2, 7), 0);
	ASSERT_EQU(stale(s, B).missing, 13);
	ASSERT_EQU(stale(s, A).missing, 18);
	ASSERT_EQU(stale(s, D).missing, 7);
	ASSERT_EQU(stale(s, ROOT).missing, 25);
	ASSERT_EQU(stale(s, B).oldest_ts, 100);
	ASSERT_EQU(stale(s, A).oldest_ts, 100);
	ASSERT_EQU(stale(s, D).oldest_ts, 400);
	ASSERT_EQU(stale(s, ROOT).oldest_ts, 100);
	ASSERT_EQ(item(s, B, SIM_ITEM_STATE, 5), 7);
	ASSERT_EQ(item(s, ROOT, SIM_ITEM_STATE, 5), 7);
	ASSERT_EQ(item(s, ROOT, SIM_ITEM_STATE, 6), 5);
	ASSERT_EQ(item(s, ROOT, SIM_ITEM_EVENT, 2), 7);
	/* LRUVEC 5 is the line of STATE 5 (memcg_stat_item extends node_stat_item) */
	ASSERT_EQ(item(s, ROOT, SIM_ITEM_LRUVEC, 5), 7);
	ASSERT_EQ(item(s, ROOT, SIM_ITEM_LRUVEC, 2), 0);	/* EVENT 2 is another namespace */

	ASSERT_EQ(sim_flush(s, 500, B), 0);
	ASSERT_EQU(stale(s, B).missing, 0);
	ASSERT_EQU(stale(s, B).oldest_ts, 0);
	ASSERT_EQU(stale(s, A).missing, 18);
	ASSERT_EQU(stale(s, A).oldest_ts, 100);
	ASSERT_EQU(stale(s, ROOT).missing, 25);
	ASSERT_EQ(item(s, B, SIM_ITEM_STATE, 5), 0);
	ASSERT_EQ(item(s, A, SIM_ITEM_STATE, 5), 7);

	ASSERT_EQ(sim_flush(s, 600, A), 0);
	ASSERT_EQU(stale(s, A).missing, 0);
	ASSERT_EQU(stale(s, ROOT).missing, 25);
	ASSERT_EQU(stale(s, ROOT).oldest_ts, 100);
	ASSERT_EQ(item(s, ROOT, SIM_ITEM_STATE, 5), 7);

	ASSERT_EQ(sim_window_begin(s, 700, ROOT, 0), 0);
	ASSERT_EQ(sim_window_remaining(s), 1);
	ASSERT_EQ(sim_window_end(s, 700), 0);
	ASSERT_EQU(stale(s, ROOT).missing, 7);
	ASSERT_EQU(stale(s, ROOT).oldest_ts, 400);
	ASSERT_EQ(item(s, ROOT, SIM_ITEM_STATE, 5), 0);
	ASSERT_EQ(item(s, ROOT, SIM_ITEM_EVENT, 2), 7);

	ASSERT_EQ(sim_window_begin(s, 710, ROOT, 1), 0);
	ASSERT_EQ(sim_window_visit_next(s, 710, &id), 1);
	ASSERT_EQU(id, D);
	ASSERT_EQU(stale(s, D).missing, 0);
	ASSERT_EQU(stale(s, ROOT).missing, 7);
	ASSERT_EQ(sim_window_visit_next(s, 710, &id), 1);
	ASSERT_EQU(id, ROOT);
	ASSERT_EQ(sim_window_visit_next(s, 710, &id), 0);
	ASSERT_EQ(sim_window_end(s, 710), 0);
	ASSERT_EQU(stale(s, ROOT).missing, 0);
	ASSERT_EQU(stale(s, ROOT).oldest_ts, 0);

	ASSERT_EQ(sim_acct_get(s, ROOT, 1000, &ac), 0);
	ASSERT_EQU(ac.max_missing, 25);
	ASSERT_EQU(ac.max_age_ns, 600);
	ASSERT_EQU(ac.stuck_ns, 0);
	ASSERT_EQU((uint64_t)ac.missing_area, 11670);
	ASSERT_EQU(ac.first_ts, 50);
	ASSERT_EQ(sim_acct_get(s, A, 1000, &ac), 0);
	ASSERT_EQU((uint64_t)ac.missing_area, 7700);
	ASSERT_EQU(ac.max_age_ns, 500);
	ASSERT_EQU(ac.max_missing, 18);
	ASSERT_EQ(sim_acct_get(s, B, 1000, &ac), 0);
	ASSERT_EQU((uint64_t)ac.missing_area, 4900);
	ASSERT_EQU(ac.max_age_ns, 400);
	sim_destroy(s);
}

/*
 * Stuck: 1 CPU, TH 64, the batching phase under BREAK at t=10, 20, 30
 * (B +24, A +40, A +30): from t=30 A is flushable (70), root is not (64) and
 * misses 94 pages -> stuck.  B is not stuck (no flushable descendant), A is
 * flushable so not stuck.
 *   t=100 flush(A): A's atomic 70 -> 0, so root has no flushable descendant:
 *         not stuck, stuck_ns = 100 - 30 = 70.  A's 70 pages wait in root's
 *         pending: root still misses 94, its oldest update is B's (t=10).
 *   t=150 flush(root): B and root visited, root misses 0.
 * root's area: 24*10 + 64*10 + 94*120 = 240 + 640 + 11280 = 12160, max age
 * 150 - 10 = 140.
 */
TEST(stuck_and_age)
{
	struct sim *s = sim_new(sim_policy_find("break"), 1, 1);
	struct sim_acct ac;
	struct sim_stale st;

	ASSERT(s);
	ASSERT_EQ(sim_cgroup_add(s, 0, A, ROOT), 0);
	ASSERT_EQ(sim_cgroup_add(s, 0, B, ROOT), 0);
	ASSERT_EQ(sim_update(s, 10, 0, B, SIM_ITEM_STATE, 0, 24), 0);
	ASSERT_EQ(sim_update(s, 20, 0, A, SIM_ITEM_STATE, 0, 40), 0);
	ASSERT(!stale(s, ROOT).stuck);
	ASSERT_EQ(sim_update(s, 30, 0, A, SIM_ITEM_STATE, 0, 30), 0);
	st = stale(s, ROOT);
	ASSERT(st.stuck);
	ASSERT(!st.flushable);
	ASSERT_EQU(st.missing, 94);
	ASSERT_EQU(st.oldest_ts, 10);
	ASSERT_EQ(st.stats_updates, 64);
	ASSERT(!stale(s, A).stuck);
	ASSERT(stale(s, A).flushable);
	ASSERT(!stale(s, B).stuck);
	ASSERT_EQ(sim_acct_get(s, ROOT, 60, &ac), 0);
	ASSERT_EQU(ac.stuck_ns, 30);		/* query only: 60 - 30 */

	ASSERT_EQ(sim_flush(s, 100, A), 0);
	st = stale(s, ROOT);
	ASSERT(!st.stuck);
	ASSERT_EQU(st.missing, 94);
	ASSERT_EQU(st.oldest_ts, 10);
	ASSERT_EQU(stale(s, A).missing, 0);
	ASSERT_EQ(sim_acct_get(s, ROOT, 120, &ac), 0);
	ASSERT_EQU(ac.stuck_ns, 70);

	ASSERT_EQ(sim_flush(s, 150, ROOT), 0);
	ASSERT_EQU(stale(s, ROOT).missing, 0);
	ASSERT_EQ(sim_acct_get(s, ROOT, 500, &ac), 0);
	ASSERT_EQU(ac.stuck_ns, 70);
	ASSERT_EQU((uint64_t)ac.missing_area, 12160);
	ASSERT_EQU(ac.max_age_ns, 140);
	ASSERT_EQU(ac.max_missing, 94);
	sim_destroy(s);
}

/*
 * The integral of missing is exact, rounded once when read: A gets +1 at
 * t0 = 1000, +2 at t1 = t0 + 2^54, +4 at t1 + 1, read at t1 + 2.
 *   area = 1 * 2^54 + 3 * 1 + 7 * 1 = 2^54 + 10, between the doubles
 *   2^54 + 8 and 2^54 + 12 (4 apart there): a tie, to the even mantissa,
 *   2^54 + 8 = 18014398509481992.
 * Adding at each touch in doubles gives 2^54, then 2^54 + 3 -> 2^54 + 4,
 * then 2^54 + 11 -> 2^54 + 12: off by 4.  The root misses the same.
 */
TEST(missing_area_exact)
{
	struct sim *s = sim_new(sim_policy_find("break"), 1, 1);
	uint64_t t1 = 1000 + (1ULL << 54);
	struct sim_acct ac;

	ASSERT(s);
	ASSERT_EQ(sim_cgroup_add(s, 0, A, ROOT), 0);
	ASSERT_EQ(sim_update(s, 1000, 0, A, SIM_ITEM_STATE, 0, 1), 0);
	ASSERT_EQ(sim_update(s, t1, 0, A, SIM_ITEM_STATE, 0, 2), 0);
	ASSERT_EQ(sim_update(s, t1 + 1, 0, A, SIM_ITEM_STATE, 0, 4), 0);
	ASSERT_EQ(sim_acct_get(s, A, t1 + 2, &ac), 0);
	ASSERT_EQU((uint64_t)ac.missing_area, 18014398509481992ULL);
	ASSERT_EQ(sim_acct_get(s, ROOT, t1 + 2, &ac), 0);
	ASSERT_EQU((uint64_t)ac.missing_area, 18014398509481992ULL);
	sim_destroy(s);
}

/*
 * count_memcg_events: the walk sees (int)count, the stat gets the count.
 * 1 CPU, TH 64.  A count of 2^32 + 3 walks with 3 (pcpu[root] 3) but misses
 * 2^32 + 3 pages-worth of events; a count of 2^32 is (int)0: the kernel
 * returns before css_rstat_updated(), so nothing is linked and no counter
 * moves, but the delta is still unflushed on that CPU.
 */
TEST(event_count_truncation)
{
	struct sim *s = sim_new(sim_policy_find("continue"), 1, 1);
	const int64_t big = (int64_t)((1ULL << 32) + 3);

	ASSERT(s);
	ASSERT_EQ(sim_update(s, 1, 0, ROOT, SIM_ITEM_EVENT, 1, big), 0);
	ASSERT_EQ(sim_pcpu_stats_updates(s, ROOT, 0), 3);
	ASSERT_EQU(stale(s, ROOT).missing, (1ULL << 32) + 3);
	ASSERT_EQ(item(s, ROOT, SIM_ITEM_EVENT, 1), big);
	ASSERT_EQ(sim_flush(s, 2, ROOT), 0);
	ASSERT_EQU(stale(s, ROOT).missing, 0);

	ASSERT_EQ(sim_update(s, 3, 0, ROOT, SIM_ITEM_EVENT, 1, (int64_t)(1ULL << 32)), 0);
	ASSERT_EQ(sim_pcpu_stats_updates(s, ROOT, 0), 0);
	ASSERT_EQU(stale(s, ROOT).missing, 1ULL << 32);
	/* not linked: a flush does not see it */
	ASSERT_EQ(sim_flush(s, 4, ROOT), 0);
	ASSERT_EQU(stale(s, ROOT).missing, 1ULL << 32);
	/* the next real update links root on CPU 0 and the flush takes both */
	ASSERT_EQ(sim_update(s, 5, 0, ROOT, SIM_ITEM_STATE, 0, -2), 0);
	ASSERT_EQ(sim_pcpu_stats_updates(s, ROOT, 0), 2);
	ASSERT_EQ(sim_flush(s, 6, ROOT), 0);
	ASSERT_EQU(stale(s, ROOT).missing, 0);
	sim_destroy(s);
}

/*
 * Timestamps out of order across CPUs (ring buffers are merged by ts, but a
 * caller may not): 2 CPUs, root -> A.
 *   t=100 A +1 CPU 0; t=90 A +1 CPU 1; t=95 A +1 CPU 0 (CPU 0's oldest
 *   becomes 95).  oldest(A) = oldest(root) = 90.
 *   window A/CPU 1: its t=90 page waits in root's pending -> A's oldest is
 *   CPU 0's 95, root's stays 90.
 *   window A/CPU 0: A misses nothing; root still misses 3, oldest 90.
 *   window root/CPU 0: root aggregates its pending: 0.
 */
TEST(oldest_out_of_order)
{
	struct sim *s = sim_new(sim_policy_find("break"), 2, 2);

	ASSERT(s);
	ASSERT_EQ(sim_cgroup_add(s, 0, A, ROOT), 0);
	ASSERT_EQ(sim_update(s, 100, 0, A, SIM_ITEM_STATE, 0, 1), 0);
	ASSERT_EQ(sim_update(s, 90, 1, A, SIM_ITEM_STATE, 0, 1), 0);
	ASSERT_EQ(sim_update(s, 95, 0, A, SIM_ITEM_STATE, 0, 1), 0);
	ASSERT_EQU(stale(s, A).oldest_ts, 90);
	ASSERT_EQU(stale(s, ROOT).oldest_ts, 90);
	ASSERT_EQ(sim_window_begin(s, 200, A, 1), 0);
	ASSERT_EQ(sim_window_end(s, 200), 0);
	ASSERT_EQU(stale(s, A).oldest_ts, 95);
	ASSERT_EQU(stale(s, A).missing, 2);
	ASSERT_EQU(stale(s, ROOT).oldest_ts, 90);
	ASSERT_EQ(sim_window_begin(s, 210, A, 0), 0);
	ASSERT_EQ(sim_window_end(s, 210), 0);
	ASSERT_EQU(stale(s, A).missing, 0);
	ASSERT_EQU(stale(s, A).oldest_ts, 0);
	ASSERT_EQU(stale(s, ROOT).missing, 3);
	ASSERT_EQU(stale(s, ROOT).oldest_ts, 90);
	ASSERT_EQ(sim_window_begin(s, 220, ROOT, 0), 0);
	ASSERT_EQ(sim_window_end(s, 220), 0);
	ASSERT_EQU(stale(s, ROOT).missing, 0);
	sim_destroy(s);
}

/*
 * The value an update adds to the sums, at the ends of its range (2^47 a
 * value, update.c): each line of its own memcg, so nothing adds up.  A state
 * value within it is itself, beyond it clamped on each side; an event count
 * is unsigned, so a negative one is a count beyond INT64_MAX and saturates.
 * The magnitude clamps the same way.
 */
TEST(update_value_range)
{
	static const struct {
		enum sim_item_kind kind;
		int64_t val, d;
		uint64_t mag;
	} c[] = {
		{ SIM_ITEM_STATE, INT64_C(1) << 47, INT64_C(1) << 47, 1ULL << 47 },
		{ SIM_ITEM_STATE, (INT64_C(1) << 47) + 1, INT64_C(1) << 47, 1ULL << 47 },
		{ SIM_ITEM_STATE, -(INT64_C(1) << 47), -(INT64_C(1) << 47), 1ULL << 47 },
		{ SIM_ITEM_STATE, -(INT64_C(1) << 47) - 1, -(INT64_C(1) << 47), 1ULL << 47 },
		{ SIM_ITEM_LRUVEC, INT64_MIN, -(INT64_C(1) << 47), 1ULL << 47 },
		{ SIM_ITEM_LRUVEC, INT64_MAX, INT64_C(1) << 47, 1ULL << 47 },
		{ SIM_ITEM_EVENT, INT64_C(1) << 47, INT64_C(1) << 47, 1ULL << 47 },
		{ SIM_ITEM_EVENT, (INT64_C(1) << 47) + 1, INT64_C(1) << 47, 1ULL << 47 },
		{ SIM_ITEM_EVENT, -1, INT64_C(1) << 47, 1ULL << 47 },
		{ SIM_ITEM_EVENT, -(INT64_C(1) << 47), INT64_C(1) << 47, 1ULL << 47 },
		{ SIM_ITEM_EVENT, INT64_MIN, INT64_C(1) << 47, 1ULL << 47 },
		{ SIM_ITEM_STATE, -5, -5, 5 },
		{ SIM_ITEM_EVENT, 5, 5, 5 },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct sim *s = sim_new(sim_policy_find("break"), 1, 1);
		int64_t d, root_d;
		uint64_t mag, root_mag;

		ASSERT(s);
		ASSERT_EQ(sim_cgroup_add(s, 0, A, ROOT), 0);
		ASSERT_EQ(sim_update(s, 10, 0, A, c[i].kind, 7, c[i].val), 0);
		d = item(s, A, c[i].kind, 7);
		root_d = item(s, ROOT, c[i].kind, 7);
		mag = stale(s, A).missing;
		root_mag = stale(s, ROOT).missing;
		sim_destroy(s);
		if (d != c[i].d || mag != c[i].mag || root_d != c[i].d || root_mag != c[i].mag)
			FAILF("case %zu: val %" PRId64 ": item %" PRId64 " (root %" PRId64
			      "), missing %" PRIu64 " (root %" PRIu64 ")", i, c[i].val, d, root_d,
			      mag, root_mag);
	}
}


TEST_MAIN(subtree_flush_waits_in_parent_pending, stuck_and_age, missing_area_exact,
	  event_count_truncation, oldest_out_of_order, update_value_range)
