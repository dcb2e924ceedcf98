// SPDX-License-Identifier: GPL-2.0
/*
 * test_live_watch.c - memcg-capture --watch's feed (capture/live_watch.c)
 * without tracefs: the readers' side (live_watch_push(), live_watch_mark())
 * driven by hand on a struct live of two CPUs, the consumer's merge in
 * db/iter's order (ts, then CPU), the drained times that hold it back, the
 * end, and an overflow that stops the feed without ever blocking a reader.
 */
#include <errno.h>
#include <stdlib.h>

#include "../harness.h"
#include "live_local.h"

static struct live *fake_live(int nr_cpus)
{
	struct live *lv = calloc(1, sizeof(*lv));
	int i;

	if (!lv)
		return NULL;
	lv->opts.clock = "mono";
	lv->nr_cpus = nr_cpus;
	lv->cpus = calloc(nr_cpus, sizeof(*lv->cpus));
	for (i = 0; i < nr_cpus; i++) {
		lv->cpus[i].lv = lv;
		lv->cpus[i].cpu = i;
	}
	if (!lv->cpus || live_watch_enable(lv) < 0) {
		free(lv->cpus);
		free(lv);
		return NULL;
	}
	return lv;
}

static void fake_free(struct live *lv)
{
	live_watch_free(lv);
	free(lv->cpus);
	free(lv);
}

static void push(struct live *lv, int cpu, uint64_t ts, uint64_t id)
{
	struct mcr_event ev = { .ts = ts, .cpu = cpu, .id = id, .kind = MCR_EV_STATE };

	live_watch_push(&lv->cpus[cpu], &ev);
}

TEST(test_clock)
{
	ASSERT(live_watch_clock_ok("mono"));
	ASSERT(live_watch_clock_ok("boot"));
	ASSERT(!live_watch_clock_ok("global"));
	ASSERT(!live_watch_clock_ok("local"));
}

TEST(test_merge_order)
{
	struct live *lv = fake_live(2);
	struct mcr_event ev;
	/* (ts, cpu) as the database's reader merges them: ties go to the lower CPU */
	static const uint64_t want_ts[] = { 10, 20, 20, 30, 40 };
	static const int want_cpu[] = { 1, 0, 1, 0, 1 };
	size_t i;

	ASSERT(lv);
	push(lv, 0, 20, 1);
	push(lv, 0, 30, 2);
	push(lv, 1, 10, 3);
	push(lv, 1, 20, 4);
	push(lv, 1, 40, 5);
	/* nothing published yet */
	ASSERT_EQ(live_watch_next(lv, &ev), -EAGAIN);
	live_watch_mark(&lv->cpus[0], 100 + LIVE_WATCH_SLACK_NS);
	live_watch_mark(&lv->cpus[1], 100 + LIVE_WATCH_SLACK_NS);
	for (i = 0; i < sizeof(want_ts) / sizeof(want_ts[0]); i++) {
		ASSERT_EQ(live_watch_next(lv, &ev), 1);
		ASSERT_EQU(ev.ts, want_ts[i]);
		ASSERT_EQ(ev.cpu, want_cpu[i]);
	}
	/* empty, not ended */
	ASSERT_EQ(live_watch_next(lv, &ev), -EAGAIN);
	live_watch_mark(&lv->cpus[0], UINT64_MAX);
	ASSERT_EQ(live_watch_next(lv, &ev), -EAGAIN);
	live_watch_mark(&lv->cpus[1], UINT64_MAX);
	ASSERT_EQ(live_watch_next(lv, &ev), 0);
	fake_free(lv);
}

/* An empty CPU holds back what another has until its drained time is past it. */
TEST(test_drained_holds_back)
{
	struct live *lv = fake_live(2);
	struct mcr_event ev;

	ASSERT(lv);
	push(lv, 1, 1000, 1);
	live_watch_mark(&lv->cpus[1], 5000 + LIVE_WATCH_SLACK_NS);
	/* CPU 0 drained up to 1000: an event of ts 1000 may still come from it */
	live_watch_mark(&lv->cpus[0], 1000 + LIVE_WATCH_SLACK_NS);
	ASSERT_EQ(live_watch_next(lv, &ev), -EAGAIN);
	/* and it did: it goes first (lower CPU) */
	push(lv, 0, 1000, 2);
	live_watch_mark(&lv->cpus[0], 1001 + LIVE_WATCH_SLACK_NS);
	ASSERT_EQ(live_watch_next(lv, &ev), 1);
	ASSERT_EQU(ev.id, 2);
	ASSERT_EQ(live_watch_next(lv, &ev), 1);
	ASSERT_EQU(ev.id, 1);
	ASSERT_EQ(live_watch_next(lv, &ev), -EAGAIN);
	/* a drained time never goes back */
	live_watch_mark(&lv->cpus[0], 10);
	push(lv, 1, 1500, 3);
	live_watch_mark(&lv->cpus[1], 5000 + LIVE_WATCH_SLACK_NS);
	ASSERT_EQ(live_watch_next(lv, &ev), -EAGAIN);
	live_watch_mark(&lv->cpus[0], 2000 + LIVE_WATCH_SLACK_NS);
	ASSERT_EQ(live_watch_next(lv, &ev), 1);
	ASSERT_EQU(ev.id, 3);
	fake_free(lv);
}

/* A full queue: the reader goes on, the feed stops for good and says where. */
TEST(test_overflow)
{
	struct live *lv = fake_live(2);
	struct live_watch_totals tot;
	struct mcr_event ev;
	uint64_t i, n;

	ASSERT(lv);
	n = lv->watch_queue;
	ASSERT(n >= LIVE_WATCH_QUEUE_MIN && n <= LIVE_WATCH_QUEUE_MAX);
	for (i = 0; i < n; i++)
		push(lv, 0, i + 1, i);
	live_watch_mark(&lv->cpus[0], UINT64_MAX);
	live_watch_mark(&lv->cpus[1], UINT64_MAX);
	/* full, not over: one taken makes room for one */
	ASSERT_EQ(live_watch_next(lv, &ev), 1);
	push(lv, 0, n + 1, n);
	live_watch_totals(lv, &tot);
	ASSERT(!tot.overflow);
	push(lv, 0, n + 2, n + 1);
	live_watch_totals(lv, &tot);
	ASSERT(tot.overflow);
	ASSERT_EQ(tot.overflow_cpu, 0);
	ASSERT_EQU(tot.overflow_ts, n + 2);
	ASSERT_EQU(tot.queue, n);
	ASSERT_EQU(tot.queued, n + 1);
	ASSERT_EQ(live_watch_next(lv, &ev), -ENOBUFS);
	/* no reader queues anything after it, on any CPU */
	push(lv, 1, n + 3, n + 2);
	live_watch_totals(lv, &tot);
	ASSERT_EQU(tot.queued, n + 1);
	ASSERT_EQ(tot.overflow_cpu, 0);
	fake_free(lv);
}

/* The queues' size: the budget over the CPUs, within its bounds. */
TEST(test_queue_size)
{
	struct live *lv = fake_live(64);

	ASSERT(lv);
	ASSERT_EQU(lv->watch_queue, LIVE_WATCH_QUEUE_MIN);
	fake_free(lv);
	lv = fake_live(8);
	ASSERT(lv);
	ASSERT_EQU(lv->watch_queue, LIVE_WATCH_BUDGET / 8);
	fake_free(lv);
}

TEST_MAIN(test_clock, test_merge_order, test_drained_holds_back, test_overflow, test_queue_size)
