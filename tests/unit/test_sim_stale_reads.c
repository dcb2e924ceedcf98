// SPDX-License-Identifier: GPL-2.0
/*
 * test_sim_stale_reads.c - what a read and an episode report from the
 * staleness accounting (sim/stale.c): updates that cancel, the state and
 * lruvec lines as one, a read during a flush, a failing episode sink, CPU
 * hotplug moving the stranded bound, a large update, a calm tree; each
 * expected value derived by hand.
 */
#include "stale_fixture.h"

/* What one read got. */
struct read_log {
	int64_t			err[8];		/* by STATE line 0..7 */
	int64_t			ev[8];		/* by EVENT line 0..7 */
	enum sim_item_kind	kind[8];	/* kinds passed, in order */
	uint64_t		age;
	int			lines;
};

static int read_keep(enum sim_item_kind kind, int it, int64_t error, uint64_t age_ns, void *ctx)
{
	struct read_log *log = ctx;

	if (it < 0 || it >= 8 || log->lines >= 8)
		return -EINVAL;
	if (kind == SIM_ITEM_EVENT)
		log->ev[it] = error;
	else
		log->err[it] = error;
	log->kind[log->lines++] = kind;
	log->age = age_ns;
	return 0;
}

struct ep_log {
	struct sim_episode	last;
	int			n;
};

static int ep_keep(const struct sim_episode *ep, void *ctx)
{
	struct ep_log *log = ctx;

	log->last = *ep;
	log->n++;
	return 0;
}

#define FILE	1	/* node_stat_item lines: the idx values do not matter */
#define ANON	2
#define PGFAULT	3	/* a vm_event_item: another namespace */

/*
 * Updates that cancel.  1 CPU, TH 64, stranded above 64 + 63 = 127, BREAK,
 * root -> A.  First a race on one CPU leaves A flushable and root reset:
 *   t=1 A FILE +65: A's pcpu 65 -> atomic 65 (flushable); root's pcpu 65 ->
 *       atomic 65 (flushable).
 *   t=2 window root/CPU 0 = [A, root]; A visited: A's atomic 0, its 65 wait
 *       in root's pending.
 *   t=3 A FILE +65: A's atomic 65 (flushable); root is flushable: the walk
 *       stops there.
 *   t=4 root visited: atomic 65 -> 0, the pending 65 aggregated.  Root now
 *       misses A's second 65 (FILE error -65, pending 65), is not flushable,
 *       and every later update of A stops at the flushable A.
 * Then 100 fault/free pairs, i = 0..99: at t = 10 + 2i STATE ANON +1 and
 * EVENT PGFAULT +1, at t = 11 + 2i LRUVEC ANON -1 (the same line as STATE
 * ANON).  Root's pending volume grows by 3 per pair: 65 + 300 = 365 at the
 * end.  Since its last flush (t=4) only the pairs count (A's second 65 came
 * before root's visit): 3i + 1, 3i + 2, 3i + 3 after each update of pair i,
 * above 127 from the PGFAULT of pair 42 (128, t = 94): root is stranded from
 * t = 94.
 * Root's errors: ANON is -1 from each fault to its free (1 ns), 0 otherwise:
 * max visible 1, area 100 page*ns; PGFAULT is -(i + 1) events from t = 10 + 2i
 * for 2 ns: area 2 * (1 + ... + 100) = 10100 event*ns, max 100 at t = 210;
 * FILE is -65 from t=3, but root was flushable until t=4 (the -130 of t=3..4
 * was not visible): max visible 65, area 65 * (210 - 4) = 13390.
 * The read at t = 210 skips (atomic 0): stale; the reader got FILE -65 pages
 * and PGFAULT -100 events, ANON exact; age 210 - 3 = 207.
 * Ages are per memcg: PGFAULT's max error age is 207, FILE's update of t=3,
 * not PGFAULT's own oldest (t=10).
 * Episode [94, 210] (closed open at 210): worst line FILE -65 (pages outrank
 * the -100 events), 1 read skipped, max pending 365; stranded 116 ns.
 * A is flushable from t=3 on, so none of A's errors were visible after it;
 * A's FILE error of t=1 was held while flushable and 0 while not (t=2..3).
 */
TEST(cancelling_updates)
{
	struct sim *s = sim_new(sim_policy_find("break"), 1, 1);
	struct ep_log ep = { .n = 0 };
	struct sim_read_info info;
	struct sim_cgroup_stats cs;
	struct sim_item_stats is;
	struct read_log log;
	uint64_t id;
	int i;

	ASSERT(s);
	sim_episode_sink(s, ep_keep, &ep);
	ASSERT_EQ(sim_cgroup_add(s, 0, A, ROOT), 0);
	ASSERT_EQ(sim_update(s, 1, 0, A, SIM_ITEM_STATE, FILE, 65), 0);
	ASSERT(sim_needs_flush(s, A) && sim_needs_flush(s, ROOT));
	ASSERT_EQ(sim_window_begin(s, 2, ROOT, 0), 0);
	ASSERT_EQ(sim_window_visit_next(s, 2, &id), 1);
	ASSERT_EQU(id, A);
	ASSERT_EQ(sim_update(s, 3, 0, A, SIM_ITEM_STATE, FILE, 65), 0);
	ASSERT_EQ(sim_window_end(s, 4), 0);
	ASSERT(sim_needs_flush(s, A) && !sim_needs_flush(s, ROOT));
	ASSERT_EQU(stale(s, ROOT).missing, 65);
	for (i = 0; i < 100; i++) {
		ASSERT_EQ(sim_update(s, 10 + 2 * i, 0, A, SIM_ITEM_STATE, ANON, 1), 0);
		ASSERT_EQ(sim_update(s, 10 + 2 * i, 0, A, SIM_ITEM_EVENT, PGFAULT, 1), 0);
		ASSERT_EQ(stale(s, ROOT).stranded, i >= 42);
		ASSERT_EQ(sim_update(s, 11 + 2 * i, 0, A, SIM_ITEM_LRUVEC, ANON, -1), 0);
		ASSERT_EQ(stale(s, ROOT).stranded, i >= 42);
	}
	ASSERT_EQ(sim_flush_request(s, 210, ROOT, false), 0);
	ASSERT_EQ(sim_read_begin(s, 210, ROOT, false, &info), 0);
	ASSERT(info.stale);
	ASSERT_EQU(info.pending, 365);
	ASSERT_EQU(info.pending_since_flush, 300);
	memset(&log, 0, sizeof(log));
	ASSERT_EQ(sim_read_end(s, 210, ROOT, read_keep, &log, NULL), 2);
	ASSERT_EQ(log.err[FILE], -65);
	ASSERT_EQ(log.err[ANON], 0);
	ASSERT_EQ(log.ev[PGFAULT], -100);
	ASSERT_EQU(log.age, 207);
	ASSERT_EQ(sim_item_unit(SIM_ITEM_EVENT), SIM_UNIT_EVENTS);
	ASSERT_EQ(sim_item_unit(SIM_ITEM_LRUVEC), SIM_UNIT_PAGES);

	ASSERT_EQ(sim_item_stats_get(s, ROOT, SIM_ITEM_STATE, ANON, 210, &is), 0);
	ASSERT_EQ(is.error, 0);
	ASSERT_EQU(is.max_visible, 1);
	ASSERT_EQU((uint64_t)is.visible_area, 100);
	ASSERT_EQU(is.reads_wrong, 0);
	ASSERT_EQ(sim_item_stats_get(s, ROOT, SIM_ITEM_EVENT, PGFAULT, 210, &is), 0);
	ASSERT_EQ(is.error, -100);
	ASSERT_EQU(is.max_visible, 100);
	ASSERT_EQU((uint64_t)is.visible_area, 10100);
	ASSERT_EQU(is.max_read_error, 100);
	ASSERT_EQU(is.max_error_age_ns, 207);
	ASSERT_EQ(sim_item_stats_get(s, ROOT, SIM_ITEM_STATE, FILE, 210, &is), 0);
	ASSERT_EQ(is.error, -65);
	ASSERT_EQU(is.max_visible, 65);
	ASSERT_EQU((uint64_t)is.visible_area, 13390);
	ASSERT_EQU(is.max_read_error, 65);

	ASSERT_EQ(sim_cgroup_stats_get(s, ROOT, 210, &cs), 0);
	ASSERT_EQU(cs.stranded_ns, 116);
	ASSERT_EQU(cs.episodes, 1);
	ASSERT_EQU(cs.stale_reads, 1);
	ASSERT_EQU(cs.max_pending, 365);
	ASSERT_EQ(ep.n, 0);
	ASSERT_EQ(sim_episodes_close(s, 210), 0);
	ASSERT_EQ(ep.n, 1);
	ASSERT_EQU(ep.last.start, 94);
	ASSERT_EQU(ep.last.end, 210);
	ASSERT(ep.last.open);
	ASSERT_EQ(ep.last.worst_kind, SIM_ITEM_STATE);
	ASSERT_EQ(ep.last.worst_item, FILE);
	ASSERT_EQ(ep.last.worst_error, -65);
	ASSERT_EQU(ep.last.reads_skipped, 1);
	ASSERT_EQU(ep.last.max_pending, 365);

	ASSERT_EQ(sim_cgroup_stats_get(s, A, 210, &cs), 0);
	ASSERT(cs.flushable);
	ASSERT_EQU(cs.stranded_ns + cs.episodes, 0);
	ASSERT_EQ(sim_item_stats_get(s, A, SIM_ITEM_STATE, FILE, 210, &is), 0);
	ASSERT_EQ(is.error, -65);
	ASSERT_EQU(is.max_visible, 0);
	ASSERT_EQU((uint64_t)is.visible_area, 0);
	ASSERT_EQ(sim_item_stats_get(s, A, SIM_ITEM_EVENT, PGFAULT, 210, &is), 0);
	ASSERT_EQ(is.error, -100);
	ASSERT_EQU(is.max_visible, 0);
	sim_destroy(s);
}

static int count_lines(enum sim_item_kind kind, int it, const struct sim_item_stats *st,
		       void *ctx)
{
	struct read_log *log = ctx;

	if (it < 0 || it >= 8 || log->lines >= 8)
		return -EINVAL;
	log->err[it] = st->error;
	log->kind[log->lines++] = kind;
	return 0;
}

/*
 * mod_memcg_state and mod_memcg_lruvec_state of one idx change one
 * memory.stat line: 1 CPU, TH 64, root alone.  t=1 STATE 5 +10, t=2 LRUVEC 5
 * -4: one line (reported as STATE) with error -6, pending volume 14.  Not
 * flushable (atomic 0: per-CPU 14 < 64): visible -10 for 1 ns, then -6:
 * area at t=3 16, max 10.  A read at t=3 gets one wrong line, STATE 5 -6.
 */
TEST(state_and_lruvec_are_one_line)
{
	struct sim *s = sim_new(sim_policy_find("break"), 1, 1);
	struct read_log log;
	struct sim_item_stats is;
	int64_t e = 0;

	ASSERT(s);
	ASSERT_EQ(sim_update(s, 1, 0, ROOT, SIM_ITEM_STATE, 5, 10), 0);
	ASSERT_EQ(sim_update(s, 2, 0, ROOT, SIM_ITEM_LRUVEC, 5, -4), 0);
	ASSERT_EQ(sim_item_error(s, ROOT, SIM_ITEM_STATE, 5, &e), 0);
	ASSERT_EQ(e, -6);
	ASSERT_EQ(sim_item_error(s, ROOT, SIM_ITEM_LRUVEC, 5, &e), 0);
	ASSERT_EQ(e, -6);
	ASSERT_EQ(sim_item_error(s, ROOT, SIM_ITEM_EVENT, 5, &e), 0);
	ASSERT_EQ(e, 0);
	ASSERT_EQ(sim_item_error(s, ROOT, (enum sim_item_kind)7, 5, &e), -EINVAL);
	ASSERT_EQ(sim_item_error(s, 99, SIM_ITEM_STATE, 5, &e), -ENOENT);
	ASSERT_EQU(stale(s, ROOT).missing, 14);
	memset(&log, 0, sizeof(log));
	ASSERT_EQ(sim_item_stats_foreach(s, ROOT, 3, count_lines, &log), 0);
	ASSERT_EQ(log.lines, 1);
	ASSERT_EQ(log.kind[0], SIM_ITEM_STATE);
	ASSERT_EQ(log.err[5], -6);
	ASSERT_EQ(sim_item_stats_get(s, ROOT, SIM_ITEM_LRUVEC, 5, 3, &is), 0);
	ASSERT_EQU((uint64_t)is.visible_area, 16);
	ASSERT_EQU(is.max_visible, 10);
	ASSERT_EQ(sim_read_begin(s, 3, ROOT, false, NULL), 0);
	memset(&log, 0, sizeof(log));
	ASSERT_EQ(sim_read_end(s, 3, ROOT, read_keep, &log, NULL), 1);
	ASSERT_EQ(log.kind[0], SIM_ITEM_STATE);
	ASSERT_EQ(log.err[5], -6);
	ASSERT_EQ(sim_read_begin(s, 3, 99, false, NULL), -ENOENT);
	ASSERT_EQ(sim_read_end(s, 3, 99, NULL, NULL, NULL), -ENOENT);
	sim_destroy(s);
}

/*
 * A flush in progress does not strand: 2 CPUs, TH 128, stranded above
 * 128 + 126 = 254, BREAK, root alone.  t=1 +1 on CPU 0; t=2..6 +64 on CPU 1:
 * atomic 64, 128, 192 (flushable from t=4), then the walk stops: pending
 * 321 (all since the last flush: none yet), error -321, not stranded
 * (flushable).  Instant flush at t=10: the CPU 0 visit resets the atomic
 * with CPU 1's 320 still pending, but none of it came after that visit (0
 * since flush): not stranded; the CPU 1 visit empties root.  The visible
 * error stopped being visible at t=4 (flushable) and the -320 between the
 * two visits lasted no time: max 129 (t=3..4), area 1 + 65 + 129 = 195.
 * Same again at t=11..16, the flush at t=20 with the CPU 1 window at t=25:
 * a read at t=22 skips (not flushable) and gets -320, age 22 - 12 = 10, but
 * is not stale: the flush will collect it.  No episode, no stranded time.
 */
TEST(flush_in_progress)
{
	struct sim *s = sim_new(sim_policy_find("break"), 2, 2);
	struct ep_log ep = { .n = 0 };
	struct sim_read_info info;
	struct sim_cgroup_stats cs;
	struct sim_item_stats is;
	struct read_log log;
	int round, k;

	ASSERT(s);
	sim_episode_sink(s, ep_keep, &ep);
	ASSERT_EQU(sim_stranded_threshold(s), 254);
	for (round = 0; round < 2; round++) {
		uint64_t t0 = round * 10;

		ASSERT_EQ(sim_update(s, t0 + 1, 0, ROOT, SIM_ITEM_STATE, 0, 1), 0);
		for (k = 0; k < 5; k++)
			ASSERT_EQ(sim_update(s, t0 + 2 + k, 1, ROOT, SIM_ITEM_STATE, 0, 64), 0);
		ASSERT_EQ(sim_stats_updates(s, ROOT), 192);
		ASSERT_EQU(stale(s, ROOT).missing, 321);
		ASSERT(!stale(s, ROOT).stranded);
		if (round)
			break;
		ASSERT_EQ(sim_flush_request(s, 10, ROOT, true), 1);
		ASSERT_EQ(sim_flush(s, 10, ROOT), 0);
		ASSERT_EQ(ep.n, 0);
		ASSERT_EQ(sim_cgroup_stats_get(s, ROOT, 10, &cs), 0);
		ASSERT_EQU(cs.episodes + cs.stranded_ns, 0);
		ASSERT_EQ(sim_item_stats_get(s, ROOT, SIM_ITEM_STATE, 0, 10, &is), 0);
		ASSERT_EQU(is.max_visible, 129);
		ASSERT_EQU((uint64_t)is.visible_area, 195);
	}
	ASSERT_EQ(sim_flush_request(s, 20, ROOT, true), 1);
	ASSERT_EQ(sim_window_begin(s, 20, ROOT, 0), 0);
	ASSERT_EQ(sim_window_end(s, 20), 0);
	ASSERT(!stale(s, ROOT).stranded);
	ASSERT_EQ(sim_flush_request(s, 22, ROOT, false), 0);
	ASSERT_EQ(sim_read_begin(s, 22, ROOT, false, &info), 0);
	ASSERT(!info.stale);
	ASSERT_EQU(info.pending, 320);
	ASSERT_EQU(info.pending_since_flush, 0);
	memset(&log, 0, sizeof(log));
	ASSERT_EQ(sim_read_end(s, 22, ROOT, read_keep, &log, NULL), 1);
	ASSERT_EQ(log.err[0], -320);
	ASSERT_EQU(log.age, 10);
	ASSERT_EQ(sim_window_begin(s, 25, ROOT, 1), 0);
	ASSERT_EQ(sim_window_end(s, 25), 0);
	ASSERT_EQ(ep.n, 0);
	ASSERT_EQ(sim_cgroup_stats_get(s, ROOT, 30, &cs), 0);
	ASSERT_EQU(cs.episodes, 0);
	ASSERT_EQU(cs.stranded_ns, 0);
	ASSERT_EQU(cs.stale_reads, 0);
	sim_destroy(s);
}

/* A sink's error is returned by the call that ended the episode. */
static int ep_fail(const struct sim_episode *ep, void *ctx)
{
	return -ENOSPC;
}

TEST(episode_sink_error)
{
	struct sim *s = sim_new(sim_policy_find("break"), 1, 1);

	ASSERT(s);
	sim_episode_sink(s, ep_fail, NULL);
	ASSERT_EQ(sim_update(s, 1, 0, ROOT, SIM_ITEM_STATE, 0, 128), 0);	/* flushable */
	ASSERT_EQ(sim_stats_updates_set(s, ROOT, 0), 0);	/* 128 > 127: stranded */
	ASSERT(stale(s, ROOT).stranded);
	ASSERT_EQ(sim_flush(s, 5, ROOT), -ENOSPC);
	ASSERT(!stale(s, ROOT).stranded);
	ASSERT_EQ(sim_update(s, 6, 0, ROOT, SIM_ITEM_STATE, 0, 1), 0);	/* taken once */
	sim_destroy(s);
}

/*
 * CPU hotplug moves the threshold: 4 CPUs, CONTINUE, root alone.  +63 on
 * each CPU at t=1..4 stays in the per-CPU counters (atomic 0): pending 252,
 * not stranded (TH 256, bound 508).  At t=10 three CPUs go offline: TH 64,
 * bound 64 + 63 = 127 < 252 with the remainders of the offline CPUs still
 * pending: stranded (the one way continue strands).  At t=15 they are back:
 * bound 508, the episode [10, 15] ends and is delivered; unknown ids and
 * kinds are refused by every query.
 */
TEST(hotplug_moves_the_bound)
{
	struct sim *s = sim_new(sim_policy_find("continue"), 4, 4);
	struct ep_log ep = { .n = 0 };
	struct sim_cgroup_stats cs;
	struct sim_item_stats is;
	unsigned int c;

	ASSERT(s);
	sim_episode_sink(s, ep_keep, &ep);
	for (c = 0; c < 4; c++)
		ASSERT_EQ(sim_update(s, 1 + c, c, ROOT, SIM_ITEM_STATE, 0, 63), 0);
	ASSERT_EQ(sim_stats_updates(s, ROOT), 0);
	ASSERT(!stale(s, ROOT).stranded);
	ASSERT_EQ(sim_set_online(s, 10, 1), 0);
	ASSERT_EQU(sim_stranded_threshold(s), 127);
	ASSERT(stale(s, ROOT).stranded);
	ASSERT_EQ(sim_set_online(s, 15, 4), 0);
	ASSERT_EQU(sim_stranded_threshold(s), 508);
	ASSERT(!stale(s, ROOT).stranded);
	ASSERT_EQ(ep.n, 1);
	ASSERT_EQU(ep.last.start, 10);
	ASSERT_EQU(ep.last.end, 15);
	ASSERT_EQ(ep.last.worst_error, -252);
	ASSERT_EQ(sim_cgroup_stats_get(s, ROOT, 20, &cs), 0);
	ASSERT_EQU(cs.stranded_ns, 5);
	ASSERT_EQU(cs.pending_since_flush, 252);

	ASSERT_EQ(sim_cgroup_stats_get(s, 99, 20, &cs), -ENOENT);
	ASSERT_EQ(sim_item_stats_get(s, 99, SIM_ITEM_STATE, 0, 20, &is), -ENOENT);
	ASSERT_EQ(sim_item_stats_get(s, ROOT, (enum sim_item_kind)7, 0, 20, &is), -EINVAL);
	ASSERT_EQ(sim_item_stats_foreach(s, 99, 20, count_lines, NULL), -ENOENT);
	is.error = 1;
	ASSERT_EQ(sim_item_stats_get(s, ROOT, SIM_ITEM_EVENT, 0, 20, &is), 0);
	ASSERT_EQ(is.error, 0);			/* never updated: all zero */
	ASSERT_EQU(is.max_visible, 0);
	ASSERT_EQ(sim_episodes_close(s, 30), 0);
	ASSERT_EQ(ep.n, 1);			/* nothing open */
	sim_destroy(s);
}

/*
 * A large folio: 2 CPUs, TH 128, bound 254, CONTINUE, root alone.  +512 on
 * CPU 0 raises root's pending since flush to 512 before the walk runs, and
 * the walk moves the 512 into the atomic (flushable): stranded for no time,
 * which is no episode.  Under BREAK too (root is the first node).
 */
TEST(large_update_no_episode)
{
	const struct sim_policy *p;
	size_t i;

	for (i = 0; (p = sim_policy_at(i)); i++) {
		struct sim *s = sim_new(p, 2, 2);
		struct ep_log ep = { .n = 0 };
		struct sim_cgroup_stats cs;

		ASSERT(s);
		sim_episode_sink(s, ep_keep, &ep);
		ASSERT_EQ(sim_update(s, 1, 0, ROOT, SIM_ITEM_STATE, 0, 512), 0);
		ASSERT(sim_needs_flush(s, ROOT));
		ASSERT(!stale(s, ROOT).stranded);
		ASSERT_EQ(sim_cgroup_stats_get(s, ROOT, 10, &cs), 0);
		ASSERT_EQU(cs.pending_since_flush, 512);
		ASSERT_EQU(cs.episodes + cs.stranded_ns, 0);
		ASSERT_EQ(ep.n, 0);
		sim_destroy(s);
	}
}

/* The calm test (sim_node_calm()) is flushable && !stranded for every pair of flags. */
TEST(calm_is_flushable_not_stranded)
{
	struct sim_node n;
	int f, st;

	memset(&n, 0, sizeof(n));
	for (f = 0; f < 2; f++)
		for (st = 0; st < 2; st++) {
			n.flushable = f;
			n.stranded = st;
			ASSERT_EQ(sim_node_calm(&n), f && !st);
		}
}

TEST_MAIN(cancelling_updates, state_and_lruvec_are_one_line, flush_in_progress,
	  episode_sink_error, hotplug_moves_the_bound, large_update_no_episode,
	  calm_is_flushable_not_stranded)
