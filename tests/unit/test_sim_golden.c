// SPDX-License-Identifier: GPL-2.0
/*
 * test_sim_golden.c - the seed race of "memcg: keep propagating stats updates
 * to ancestors" and the batching phase, with every expected number derived by
 * hand next to it from mm/memcontrol.c: memcg_rstat_updated() (the break of
 * 60cada258dfe) and mem_cgroup_css_rstat_flush() (the atomic set to 0 at
 * every visit).
 */
#include "seed_fixture.h"

/*
 * BREAK, from leaf = 320, root = 256: each further leaf update on CPU 1 sees
 * atomic[leaf] = 320 > 256 and stops before touching anything, so root stays
 * at 256 (not flushable), a non-forced root read skips, and root's missing
 * grows by 64 per update: 320 + 64k.  Root is stuck (leaf flushable, root
 * not, missing > 0).
 */
TEST(seed_race_break)
{
	struct sim *s = sim_new(sim_policy_find("break"), 4, 4);
	struct sim_cost c;
	int k;

	ASSERT(s);
	ASSERT_EQ(seed_race(t, s), 0);
	for (k = 1; k <= 5; k++) {
		ASSERT_EQ(sim_update(s, 10 + k, 1, LEAF, SIM_ITEM_STATE, 0, 64), 0);
		ASSERT_EQ(sim_stats_updates(s, ROOT), 256);
		ASSERT_EQ(sim_flush_request(s, 10 + k, ROOT, false), 0);
		ASSERT_EQU(stale(s, ROOT).missing, 320 + 64 * k);
		ASSERT(stale(s, ROOT).stuck);
	}
	/* the five breaks: one walk step each, no per-CPU add */
	ASSERT_EQ(sim_pcpu_stats_updates(s, LEAF, 1), 0);
	ASSERT_EQ(sim_pcpu_stats_updates(s, ROOT, 1), 0);
	sim_cost_get(s, &c);
	/*
	 * updates: 1 + 1 + 4 + 5 = 11; walk steps: 6 full walks of 2 + 5 breaks = 17;
	 * per-CPU adds 12; atomic adds: 5 batches x 2 = 10; resets: root once;
	 * visits: leaf and root on CPU 2; requests: 1 forced + 5 skipped.
	 */
	ASSERT_EQU(c.updates, 11);
	ASSERT_EQU(c.walk_steps, 17);
	ASSERT_EQU(c.pcpu_adds, 12);
	ASSERT_EQU(c.atomic_adds, 10);
	ASSERT_EQU(c.atomic_resets, 1);
	ASSERT_EQU(c.visits, 2);
	ASSERT_EQU(c.flush_requests, 6);
	ASSERT_EQU(c.flushes, 1);
	ASSERT_EQU(sim_flush_request(s, 20, ROOT, true), 1);
	ASSERT_EQ(sim_flush(s, 20, ROOT), 0);
	ASSERT(all_zero(s));
	sim_destroy(s);
}

/*
 * CONTINUE: the next batch of 64 skips leaf (320 > 256) and reaches root:
 * pcpu[root][1] was emptied by the last batch, 0 + 64 = 64 -> atomic[root] =
 * 256 + 64 = 320 > 256, so the next root read flushes; after it all is zero.
 */
TEST(seed_race_continue)
{
	struct sim *s = sim_new(sim_policy_find("continue"), 4, 4);

	ASSERT(s);
	ASSERT_EQ(seed_race(t, s), 0);
	ASSERT_EQ(sim_update(s, 11, 1, LEAF, SIM_ITEM_STATE, 0, 64), 0);
	ASSERT_EQ(sim_stats_updates(s, LEAF), 320);
	ASSERT_EQ(sim_stats_updates(s, ROOT), 320);
	ASSERT(!stale(s, ROOT).stuck);
	ASSERT_EQ(sim_flush_request(s, 12, ROOT, false), 1);
	ASSERT_EQ(sim_flush(s, 12, ROOT), 0);
	ASSERT(all_zero(s));
	sim_destroy(s);
}

/*
 * LEGACY: the next batch still grows pcpu[leaf][1] to 64; leaf is flushable
 * so that batch is dropped (leaf stays 320); root gets 64 -> 320 > 256 and
 * recovers as under CONTINUE.
 */
TEST(seed_race_legacy)
{
	struct sim *s = sim_new(sim_policy_find("legacy"), 4, 4);
	struct sim_cost c;

	ASSERT(s);
	ASSERT_EQ(seed_race(t, s), 0);
	ASSERT_EQ(sim_update(s, 11, 1, LEAF, SIM_ITEM_STATE, 0, 64), 0);
	ASSERT_EQ(sim_stats_updates(s, LEAF), 320);
	ASSERT_EQ(sim_stats_updates(s, ROOT), 320);
	sim_cost_get(s, &c);
	ASSERT_EQU(c.dropped_batches, 1);
	ASSERT_EQ(sim_flush_request(s, 12, ROOT, false), 1);
	ASSERT_EQ(sim_flush(s, 12, ROOT), 0);
	ASSERT(all_zero(s));
	sim_destroy(s);
}

/* Forced root flush restores everything under every policy, even mid-race. */
TEST(seed_race_forced_flush_all_policies)
{
	const struct sim_policy *p;
	size_t i;

	for (i = 0; (p = sim_policy_at(i)); i++) {
		struct sim *s = sim_new(p, 4, 4);

		ASSERT(s);
		ASSERT_EQ(seed_race(t, s), 0);
		ASSERT_EQ(sim_update(s, 11, 1, LEAF, SIM_ITEM_STATE, 0, 64), 0);
		ASSERT_EQ(sim_update(s, 12, 3, LEAF, SIM_ITEM_STATE, 0, -7), 0);
		ASSERT_EQ(sim_flush_request(s, 13, ROOT, true), 1);
		ASSERT_EQ(sim_flush(s, 13, ROOT), 0);
		ASSERT(all_zero(s));
		sim_destroy(s);
	}
}

/*
 * Batching phase, no flush: 1 CPU, TH = 64 * 1 = 64, root with children A, B.
 *   B +24: pcpu[B] 24, pcpu[root] 24.
 *   A +40: pcpu[A] 40; pcpu[root] 64 >= 64 -> atomic[root] = 64 (not > 64).
 *   A +30: A not flushable: pcpu[A] 70 -> atomic[A] = 70 (flushable);
 *          root: 64 is not > 64, pcpu[root] 30.
 * Then A +5, k = 1..20:
 *   BREAK: A is flushable, the walk stops at A: root stays atomic 64, pcpu 30,
 *          never flushable while A is; root misses 94 + 5k and is stuck.
 *          walk steps 3*2 + 20*1 = 26, pcpu adds 6, atomic adds 2.
 *   CONTINUE: A skipped, pcpu[root] = 30 + 5k reaches 65 at k = 7 ->
 *          atomic[root] = 64 + 65 = 129 (flushable); from k = 8 root is skipped
 *          too.  walk steps 6 + 40 = 46, pcpu adds 6 + 7 = 13, atomic adds 3.
 *   LEGACY: pcpu[A] = 5k reaches 65 at k = 13 -> dropped (A flushable), then
 *          5 * 7 = 35 at k = 20; root as CONTINUE up to k = 7 (129), then
 *          pcpu[root] = 5(k-7) reaches 65 at k = 20 -> dropped (flushable), 0.
 *          walk steps 46, pcpu adds 6 + 40 = 46, atomic adds 3, 2 drops.
 */
/*
 * Stranded (threshold TH + 63 * 1 = 127): root's pending volume is
 * 24, 64, 94, then 94 + 5k, above 127 from k = 7 (129, t = 10).
 *   BREAK: root never flushable: stranded from t = 10; at t = 23 that is
 *          13 ns in one open episode, worst line 0 at its final error
 *          -(24 + 40 + 30 + 100) = -194 pages, max pending 194.
 *   CONTINUE, LEGACY: the update at k = 7 (pending 129) also makes root
 *          flushable (atomic 129), before the stranded test runs: never
 *          stranded; at k <= 6 pending is <= 124.
 */
struct batching_expect {
	const char	*policy;
	int64_t		root_atomic;
	uint32_t	root_pcpu;
	uint32_t	a_pcpu;
	int		root_flushable_from;	/* k at which root became flushable, 0 never */
	uint64_t	walk_steps, pcpu_adds, atomic_adds, dropped;
	uint64_t	stranded_ns, episodes;
};

static const struct batching_expect batching[] = {
	{ "break",    64,  30, 0,  0, 26,  6, 2, 0, 13, 1 },
	{ "continue", 129, 0,  0,  7, 46, 13, 3, 0,  0, 0 },
	{ "legacy",   129, 0,  35, 7, 46, 46, 3, 2,  0, 0 },
};

/* Keeps the last episode a sink was given. */
TEST(batching_phase)
{
	size_t i;

	for (i = 0; i < sizeof(batching) / sizeof(batching[0]); i++) {
		const struct batching_expect *e = &batching[i];
		struct sim *s = sim_new(sim_policy_find(e->policy), 1, 1);
		int k, flushable_from = 0;
		struct sim_cgroup_stats cs;
		struct ep_log log = { .n = 0 };
		struct sim_cost c;

		ASSERT(s);
		sim_episode_sink(s, ep_keep, &log);
		ASSERT_EQ(sim_threshold(s), 64);
		ASSERT_EQU(sim_stranded_threshold(s), 127);
		ASSERT_EQ(sim_cgroup_add(s, 0, A, ROOT), 0);
		ASSERT_EQ(sim_cgroup_add(s, 0, B, ROOT), 0);
		ASSERT_EQ(sim_update(s, 1, 0, B, SIM_ITEM_STATE, 0, 24), 0);
		ASSERT_EQ(sim_update(s, 2, 0, A, SIM_ITEM_STATE, 0, 40), 0);
		ASSERT_EQ(sim_stats_updates(s, ROOT), 64);
		ASSERT(!sim_needs_flush(s, ROOT));
		ASSERT_EQ(sim_update(s, 3, 0, A, SIM_ITEM_STATE, 0, 30), 0);
		ASSERT_EQ(sim_stats_updates(s, A), 70);
		ASSERT(sim_needs_flush(s, A));
		ASSERT_EQ(sim_pcpu_stats_updates(s, ROOT, 0), 30);
		for (k = 1; k <= 20; k++) {
			ASSERT_EQ(sim_update(s, 3 + k, 0, A, SIM_ITEM_STATE, 0, 5), 0);
			if (!flushable_from && sim_needs_flush(s, ROOT))
				flushable_from = k;
		}
		ASSERT_EQ(flushable_from, e->root_flushable_from);
		ASSERT_EQ(sim_stats_updates(s, ROOT), e->root_atomic);
		ASSERT_EQ(sim_stats_updates(s, A), 70);
		ASSERT(sim_needs_flush(s, A));
		ASSERT_EQ(sim_pcpu_stats_updates(s, ROOT, 0), e->root_pcpu);
		ASSERT_EQ(sim_pcpu_stats_updates(s, A, 0), e->a_pcpu);
		/* missing: root 24 + 40 + 30 + 20*5 = 194, A 70 + 100 = 170, B 24 */
		ASSERT_EQU(stale(s, ROOT).missing, 194);
		ASSERT_EQU(stale(s, A).missing, 170);
		ASSERT_EQU(stale(s, B).missing, 24);
		ASSERT_EQ(stale(s, ROOT).stuck, !e->root_flushable_from);
		ASSERT_EQ(sim_cgroup_stats_get(s, ROOT, 23, &cs), 0);
		ASSERT_EQU(cs.stranded_ns, e->stranded_ns);
		ASSERT_EQU(cs.episodes, e->episodes);
		ASSERT_EQ(cs.stranded, e->episodes == 1);
		ASSERT_EQU(cs.pending, 194);
		ASSERT_EQ(log.n, 0);
		ASSERT_EQ(sim_episodes_close(s, 23), 0);
		ASSERT_EQ(log.n, (int)e->episodes);
		if (e->episodes) {
			ASSERT_EQU(log.last.id, ROOT);
			ASSERT_EQU(log.last.start, 10);
			ASSERT_EQU(log.last.end, 23);
			ASSERT(log.last.open);
			ASSERT_EQ(log.last.worst_kind, SIM_ITEM_STATE);
			ASSERT_EQ(log.last.worst_item, 0);
			ASSERT_EQ(log.last.worst_error, -194);
			ASSERT_EQU(log.last.max_pending, 194);
			ASSERT_EQU(log.last.reads_skipped, 0);
		}
		/* A and B never stranded: A is flushable, B's 24 are below 127 */
		ASSERT_EQ(sim_cgroup_stats_get(s, A, 23, &cs), 0);
		ASSERT_EQU(cs.stranded_ns + cs.episodes, 0);
		sim_cost_get(s, &c);
		ASSERT_EQU(c.walk_steps, e->walk_steps);
		ASSERT_EQU(c.pcpu_adds, e->pcpu_adds);
		ASSERT_EQU(c.atomic_adds, e->atomic_adds);
		ASSERT_EQU(c.dropped_batches, e->dropped);
		printf("# batching phase %-8s root atomic %lld pcpu %u flushable %s, A atomic 70 "
		       "flushable, root missing 194 stuck %s; steps %llu pcpu adds %llu "
		       "atomic adds %llu dropped %llu\n", e->policy,
		       (long long)sim_stats_updates(s, ROOT), sim_pcpu_stats_updates(s, ROOT, 0),
		       sim_needs_flush(s, ROOT) ? "yes" : "no",
		       stale(s, ROOT).stuck ? "yes" : "no",
		       (unsigned long long)c.walk_steps, (unsigned long long)c.pcpu_adds,
		       (unsigned long long)c.atomic_adds, (unsigned long long)c.dropped_batches);
		sim_destroy(s);
	}
}


/*
 * The root reader under BREAK, after seed_race() (root atomic 256, leaf 320).
 * Root's FILE_PAGES error: the +1 of t=1 was aggregated by root's visit at
 * t=5, the five batches of 64 on CPU 1 (t=4, 6..9) were not: -320.  Each
 * leaf +64 at t = 10 + k stops at the flushable leaf, so root's error is
 * -(320 + 64k) and its pending volume 320 + 64k.  Root's last flush is its
 * visit at t=5: the batch of t=4 raced with that flush (it came after CPU
 * 1's window; its credit was lost with the reset), so root's pending since
 * flush is 256 + 64k.  Stranded threshold: 256 + 63 * 4 = 508, so root is
 * stranded from k = 4 (512):
 *   k = 1..3: skipped, not stale (320, 384, 448 <= 508), errors -384, -448, -512;
 *   k = 4: skipped while stranded, a stale read: FILE_PAGES read error -576
 *          pages; age: the oldest update root misses is the batch of t=4,
 *          14 - 4 = 10 ns;
 *   k = 5: stale, -640.
 * The forced flush at t=20 empties root: the episode is [14, 20], 2 reads
 * skipped, worst line FILE_PAGES at -640, max pending 640; stranded 6 ns.
 * Root is never flushable, so its visible error is its error at all times:
 *   t 1..4: -1, 4..5: -65, 5..6: -64, then -128, -192, -256 (t 6, 7, 8),
 *   9..11: -320, 11: -384, 12: -448, 13: -512, 14: -576, 15..20: -640, 0 after;
 *   area 3 + 65 + 64 + 128 + 192 + 256 + 640 + 384 + 448 + 512 + 576 + 3200
 *   = 6468 page*ns, max 640.
 */
TEST(seed_race_break_read_error)
{
	static const int64_t want[6] = { 0, -384, -448, -512, -576, -640 };
	struct sim *s = sim_new(sim_policy_find("break"), 4, 4);
	struct sim_read_info info;
	struct sim_cgroup_stats cs;
	struct sim_item_stats is;
	struct read_log log;
	struct ep_log ep = { .n = 0 };
	int k;

	ASSERT(s);
	sim_episode_sink(s, ep_keep, &ep);
	ASSERT_EQ(seed_race(t, s), 0);
	ASSERT_EQU(sim_stranded_threshold(s), 508);
	for (k = 1; k <= 5; k++) {
		ASSERT_EQ(sim_update(s, 10 + k, 1, LEAF, SIM_ITEM_STATE, FILE_PAGES, 64), 0);
		ASSERT_EQ(read_now(s, 10 + k, ROOT, &log, &info), 1);
		ASSERT(!info.flushable);
		ASSERT_EQU(info.pending, 320 + 64 * k);
		ASSERT_EQU(info.pending_since_flush, 256 + 64 * k);
		ASSERT_EQ(info.stale, k >= 4);
		ASSERT_EQ(info.stranded, k >= 4);
		ASSERT_EQ(log.err[FILE_PAGES], want[k]);
		ASSERT_EQU(log.age, 10 + k - 4);
	}
	ASSERT_EQ(sim_cgroup_stats_get(s, ROOT, 15, &cs), 0);
	ASSERT_EQU(cs.reads, 5);
	ASSERT_EQU(cs.stale_reads, 2);
	ASSERT_EQU(cs.stranded_ns, 1);
	ASSERT_EQ(ep.n, 0);
	ASSERT_EQ(sim_flush_request(s, 20, ROOT, true), 1);
	ASSERT_EQ(sim_flush(s, 20, ROOT), 0);
	ASSERT_EQ(ep.n, 1);
	ASSERT_EQU(ep.last.start, 14);
	ASSERT_EQU(ep.last.end, 20);
	ASSERT(!ep.last.open);
	ASSERT_EQU(ep.last.reads_skipped, 2);
	ASSERT_EQ(ep.last.worst_item, FILE_PAGES);
	ASSERT_EQ(ep.last.worst_error, -640);
	ASSERT_EQU(ep.last.max_pending, 640);
	ASSERT_EQ(sim_cgroup_stats_get(s, ROOT, 30, &cs), 0);
	ASSERT_EQU(cs.stranded_ns, 6);
	ASSERT_EQU(cs.episodes, 1);
	ASSERT_EQU(cs.max_pending, 640);
	ASSERT_EQU(cs.pending + cs.pending_since_flush, 0);
	ASSERT_EQ(sim_item_stats_get(s, ROOT, SIM_ITEM_STATE, FILE_PAGES, 30, &is), 0);
	ASSERT_EQ(is.error, 0);
	ASSERT_EQU(is.max_visible, 640);
	ASSERT_EQU((uint64_t)is.visible_area, 6468);
	/* read stats: five wrong reads, 384 + 448 + 512 + 576 + 640 = 2560 */
	ASSERT_EQU(is.max_read_error, 640);
	ASSERT_EQU((uint64_t)is.read_error_sum, 2560);
	ASSERT_EQU(is.reads_wrong, 5);
	ASSERT_EQU(is.max_error_age_ns, 11);
	sim_destroy(s);
}

/*
 * The same reader under CONTINUE: the +64 at t=11 skips the leaf and reaches
 * root (atomic 320 > 256), so the read at t=11 flushes: before it root's
 * pending volume is 384, after it every line is exact: read error 0, not
 * stale, no stranded time (384 never exceeded 508).
 */
TEST(seed_race_continue_read_error)
{
	struct sim *s = sim_new(sim_policy_find("continue"), 4, 4);
	struct sim_read_info info;
	struct sim_cgroup_stats cs;
	struct read_log log;

	ASSERT(s);
	ASSERT_EQ(seed_race(t, s), 0);
	ASSERT_EQ(sim_update(s, 11, 1, LEAF, SIM_ITEM_STATE, FILE_PAGES, 64), 0);
	ASSERT_EQ(read_now(s, 11, ROOT, &log, &info), 0);
	ASSERT(info.flushable);
	ASSERT(!info.stale);
	ASSERT_EQU(info.pending, 384);
	ASSERT_EQ(log.lines, 0);
	ASSERT_EQ(sim_cgroup_stats_get(s, ROOT, 30, &cs), 0);
	ASSERT_EQU(cs.stale_reads, 0);
	ASSERT_EQU(cs.stranded_ns + cs.episodes, 0);
	sim_destroy(s);
}

/*
 * A read that flushes while updates race with its windows, CONTINUE, after
 * seed_race() and the +64 at t=11 (root 320, flushable; every unflushed
 * delta is on CPU 1: the batches of t=4, 6..9, 11).  Read of root at t=12:
 * pending volume 384.  Windows CPU 0 (empty) and CPU 1 (leaf, root) at t=12
 * aggregate all 384 pages.  At t=13 the leaf gets +2 on CPU 1, whose window
 * is over: leaf and root are linked again on CPU 1 for a later flush.
 * Windows CPU 2 and 3 at t=14 are empty, the flush is done: what the reader
 * got is FILE_PAGES -2 (not 0: the +2 raced with the flush), age 14 - 13 = 1.
 */
TEST(read_that_flushes)
{
	struct sim *s = sim_new(sim_policy_find("continue"), 4, 4);
	struct sim_read_info info;
	struct read_log log = { .lines = 0 };
	unsigned int cpu;

	ASSERT(s);
	ASSERT_EQ(seed_race(t, s), 0);
	ASSERT_EQ(sim_update(s, 11, 1, LEAF, SIM_ITEM_STATE, FILE_PAGES, 64), 0);
	ASSERT_EQ(sim_flush_request(s, 12, ROOT, false), 1);
	ASSERT_EQ(sim_read_begin(s, 12, ROOT, true, &info), 0);
	ASSERT_EQU(info.pending, 384);
	ASSERT(!info.stale);
	for (cpu = 0; cpu < 2; cpu++)
		ASSERT(!sim_window_begin(s, 12, ROOT, cpu) && !sim_window_end(s, 12));
	ASSERT_EQ(sim_update(s, 13, 1, LEAF, SIM_ITEM_STATE, FILE_PAGES, 2), 0);
	for (cpu = 2; cpu < 4; cpu++)
		ASSERT(!sim_window_begin(s, 14, ROOT, cpu) && !sim_window_end(s, 14));
	ASSERT_EQ(sim_read_end(s, 14, ROOT, read_keep, &log, &info), 1);
	ASSERT_EQ(log.err[FILE_PAGES], -2);
	ASSERT_EQU(log.age, 1);
	ASSERT_EQU(info.pending, 2);
	sim_destroy(s);
}

/*
 * No race at all: 4 CPUs, TH 256, root -> leaf.  Four batches of 64 on
 * CPU 0 (t=1..4) put both atomics at exactly 256 (not > 256, nothing ever
 * flushable, so all policies agree); +63 on CPUs 1, 2, 3 (t=5..7) stay in
 * the per-CPU counters.  Root's pending volume is 256 + 3 * 63 = 445: above
 * TH (the old stale test, missing > TH, called this stale) but not above 508.
 * The read at t=10 skips: not stale, no stranded time, under every policy,
 * and the reader honestly got FILE_PAGES -445 (the error batching allows).
 * Visible error of root: -64, -128, -192, -256, -319, -382 over one ns each,
 * then -445 from t=7 to 10: area 1341 + 1335 = 2676, max 445.
 */
TEST(no_race_no_stale_read)
{
	const struct sim_policy *p;
	size_t i;

	for (i = 0; (p = sim_policy_at(i)); i++) {
		struct sim *s = sim_new(p, 4, 4);
		struct sim_read_info info;
		struct sim_cgroup_stats cs;
		struct sim_item_stats is;
		struct read_log log;
		int k;

		ASSERT(s);
		ASSERT_EQ(sim_cgroup_add(s, 0, LEAF, ROOT), 0);
		for (k = 1; k <= 4; k++)
			ASSERT_EQ(sim_update(s, k, 0, LEAF, SIM_ITEM_STATE, FILE_PAGES, 64), 0);
		for (k = 1; k <= 3; k++)
			ASSERT_EQ(sim_update(s, 4 + k, k, LEAF, SIM_ITEM_STATE, FILE_PAGES, 63), 0);
		ASSERT_EQ(sim_stats_updates(s, ROOT), 256);
		ASSERT_EQ(sim_stats_updates(s, LEAF), 256);
		ASSERT_EQU(stale(s, ROOT).missing, 445);
		ASSERT(stale(s, ROOT).missing > sim_threshold(s));
		ASSERT_EQ(read_now(s, 10, ROOT, &log, &info), 1);
		ASSERT(!info.flushable);
		ASSERT(!info.stranded);
		ASSERT(!info.stale);
		ASSERT_EQ(log.err[FILE_PAGES], -445);
		ASSERT_EQ(sim_cgroup_stats_get(s, ROOT, 20, &cs), 0);
		ASSERT_EQU(cs.reads, 1);
		ASSERT_EQU(cs.stale_reads, 0);
		ASSERT_EQU(cs.stranded_ns, 0);
		ASSERT_EQU(cs.episodes, 0);
		ASSERT_EQ(sim_item_stats_get(s, ROOT, SIM_ITEM_STATE, FILE_PAGES, 10, &is), 0);
		ASSERT_EQU(is.max_visible, 445);
		ASSERT_EQU((uint64_t)is.visible_area, 2676);
		printf("# no race %-8s root pending 445 (TH 256, stranded above 508): "
		       "read error %lld pages, stale reads %llu, stranded %llu ns\n",
		       p->name, (long long)log.err[FILE_PAGES],
		       (unsigned long long)cs.stale_reads, (unsigned long long)cs.stranded_ns);
		sim_destroy(s);
	}
}

/*
 * CONTINUE under flushable ancestors: root(1) > 10 > 11 > 12, one CPU, TH =
 * 64 * 1 = 64.  The first update, 65 pages of 12: at each of the four
 * nodes the atomic is 0, not flushable, so the per-CPU counter takes 65 >=
 * 64 and moves into the atomic (65 > 64: flushable): 4 steps, 4 adds, 4
 * batches, every per-CPU counter back at 0.  The next, 1 page of 12: every
 * node is flushable, so continue skips all four and changes nothing: 4
 * steps, no add.  Then a flush of 12 alone sets atomic[12] to 0: the third
 * update, 1 page, charges 12 (per-CPU 1 < 64, no batch) and skips 11, 10
 * and root, still flushable: 4 steps, 1 add.  Steps 12, per-CPU adds 5,
 * atomic adds 4; only pcpu[12] is 1, and every atomic but 12's is 65.
 */
TEST(continue_skips_flushable_ancestors)
{
	struct sim *s = sim_new(sim_policy_find("continue"), 1, 1);
	struct sim_cost c;

	ASSERT(s);
	ASSERT_EQ(sim_cgroup_add(s, 0, 10, SIM_ROOT_ID), 0);
	ASSERT_EQ(sim_cgroup_add(s, 0, 11, 10), 0);
	ASSERT_EQ(sim_cgroup_add(s, 0, 12, 11), 0);
	ASSERT_EQ(sim_update(s, 1, 0, 12, SIM_ITEM_STATE, 0, 65), 0);
	sim_cost_get(s, &c);
	ASSERT_EQU(c.walk_steps, 4);
	ASSERT_EQU(c.pcpu_adds, 4);
	ASSERT_EQU(c.atomic_adds, 4);
	ASSERT(sim_needs_flush(s, SIM_ROOT_ID) && sim_needs_flush(s, 12));
	ASSERT_EQ(sim_update(s, 2, 0, 12, SIM_ITEM_STATE, 0, 1), 0);
	sim_cost_get(s, &c);
	ASSERT_EQU(c.walk_steps, 8);
	ASSERT_EQU(c.pcpu_adds, 4);
	ASSERT_EQ(sim_pcpu_stats_updates(s, 12, 0), 0);
	ASSERT_EQ(sim_pcpu_stats_updates(s, SIM_ROOT_ID, 0), 0);
	ASSERT_EQ(sim_flush(s, 3, 12), 0);
	ASSERT_EQ(sim_stats_updates(s, 12), 0);
	ASSERT_EQ(sim_update(s, 4, 0, 12, SIM_ITEM_STATE, 0, 1), 0);
	sim_cost_get(s, &c);
	ASSERT_EQU(c.walk_steps, 12);
	ASSERT_EQU(c.pcpu_adds, 5);
	ASSERT_EQU(c.atomic_adds, 4);
	ASSERT_EQ(sim_pcpu_stats_updates(s, 12, 0), 1);
	ASSERT_EQ(sim_pcpu_stats_updates(s, 11, 0), 0);
	ASSERT_EQ(sim_pcpu_stats_updates(s, SIM_ROOT_ID, 0), 0);
	ASSERT_EQ(sim_stats_updates(s, 12), 0);
	ASSERT_EQ(sim_stats_updates(s, 11), 65);
	ASSERT_EQ(sim_stats_updates(s, 10), 65);
	ASSERT_EQ(sim_stats_updates(s, SIM_ROOT_ID), 65);
	sim_destroy(s);
}

TEST_MAIN(seed_race_break, seed_race_continue, seed_race_legacy,
	  seed_race_forced_flush_all_policies, batching_phase, seed_race_break_read_error,
	  seed_race_continue_read_error, read_that_flushes, no_race_no_stale_read,
	  continue_skips_flushable_ancestors)
