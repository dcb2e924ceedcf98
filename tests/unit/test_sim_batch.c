// SPDX-License-Identifier: GPL-2.0
/*
 * test_sim_batch.c - MEMCG_CHARGE_BATCH and the online CPUs as parameters of
 * the simulator: one small trace at three (batch, CPUs) points, every number
 * derived by hand below from mm/memcontrol.c: memcg_rstat_updated() (the
 * per-CPU counter moves into the atomic when it reaches MEMCG_CHARGE_BATCH;
 * the break of 60cada258dfe) and memcg_vmstats_needs_flush() (atomic > TH =
 * MEMCG_CHARGE_BATCH * num_online_cpus()).
 */
#include <errno.h>

#include "../harness.h"
#include "sim.h"
#include "sim-local.h"
#include "rstat.h"

#define ROOT	SIM_ROOT_ID
#define LEAF	2ULL

static struct sim *mk(const char *pol, unsigned int batch, unsigned int online)
{
	struct sim_params sp = { .policy = sim_policy_find(pol), .nr_possible = 2,
				 .nr_online = online, .batch = batch };
	struct sim *s = sim_create(&sp);

	if (s && sim_cgroup_add(s, 0, LEAF, ROOT)) {
		sim_destroy(s);
		return NULL;
	}
	return s;
}

/* root -> leaf; three updates of +40 pages to leaf on CPU 0, at t = 1, 2, 3. */
static int three_updates(struct sim *s)
{
	int t, ret = 0;

	for (t = 1; !ret && t <= 3; t++)
		ret = sim_update(s, (uint64_t)t, 0, LEAF, SIM_ITEM_STATE, 0, 40);
	return ret;
}

/*
 * batch 32, 2 CPUs: TH = 32 * 2 = 64, stranded limit 64 + 31 * 2 = 126.
 *  t=1  pcpu[leaf][0] = 40 >= 32: atomic[leaf] = 40, pcpu 0; leaf was not
 *       flushable (0 <= 64), so root: pcpu 40 >= 32: atomic[root] = 40.
 *  t=2  leaf 40 <= 64: atomic[leaf] = 80; root 40 <= 64: atomic[root] = 80.
 *  t=3  leaf 80 > 64: flushable, break stops before its counter moves:
 *       pcpu[leaf][0] stays 0, root untouched.
 *  A read of root at t=4: 80 > 64, it flushes.
 */
TEST(batch_32_read_flushes)
{
	struct sim *s = mk("break", 32, 2);

	ASSERT(s);
	if (!s)
		return;
	ASSERT_EQU(sim_batch(s), 32);
	ASSERT_EQU(sim_threshold(s), 64);
	ASSERT_EQU(sim_stranded_threshold(s), 126);
	ASSERT_EQ(three_updates(s), 0);
	ASSERT_EQ(sim_stats_updates(s, LEAF), 80);
	ASSERT_EQ(sim_stats_updates(s, ROOT), 80);
	ASSERT_EQU(sim_pcpu_stats_updates(s, LEAF, 0), 0);
	ASSERT_EQU(sim_pcpu_stats_updates(s, ROOT, 0), 0);
	ASSERT(sim_needs_flush(s, ROOT));
	ASSERT_EQ(sim_flush_request(s, 4, ROOT, false), 1);
	sim_destroy(s);
}

/*
 * batch 64, 2 CPUs: TH = 128, stranded limit 128 + 63 * 2 = 254.
 *  t=1  pcpu[leaf][0] = 40 < 64: no batch; the walk goes on: pcpu[root][0] = 40.
 *  t=2  leaf 80 >= 64: atomic[leaf] = 80, pcpu 0; root 80 >= 64:
 *       atomic[root] = 80, pcpu 0.
 *  t=3  leaf 80 <= 128: pcpu 40; root 80 <= 128: pcpu 40.
 *  A read of root at t=4: 80 <= 128, it is skipped.
 */
TEST(batch_64_read_skips)
{
	struct sim *s = mk("break", 64, 2);

	ASSERT(s);
	if (!s)
		return;
	ASSERT_EQU(sim_threshold(s), 128);
	ASSERT_EQU(sim_stranded_threshold(s), 254);
	ASSERT_EQ(three_updates(s), 0);
	ASSERT_EQ(sim_stats_updates(s, LEAF), 80);
	ASSERT_EQ(sim_stats_updates(s, ROOT), 80);
	ASSERT_EQU(sim_pcpu_stats_updates(s, LEAF, 0), 40);
	ASSERT_EQU(sim_pcpu_stats_updates(s, ROOT, 0), 40);
	ASSERT(!sim_needs_flush(s, ROOT));
	ASSERT_EQ(sim_flush_request(s, 4, ROOT, false), 0);
	sim_destroy(s);
}

/*
 * batch 64, 1 CPU online (of 2 possible): TH = 64, stranded limit 64 + 63 = 127.
 * The batching is that of batch 64 above, the threshold that of batch 32:
 *  t=1  pcpu leaf 40, root 40 (< 64).
 *  t=2  leaf: atomic 80, pcpu 0; root: atomic 80, pcpu 0.
 *  t=3  leaf 80 > 64: flushable, break stops; pcpu[leaf][0] stays 0.
 *  A read of root at t=4: 80 > 64, it flushes.
 */
TEST(one_cpu_online_read_flushes)
{
	struct sim *s = mk("break", 64, 1);

	ASSERT(s);
	if (!s)
		return;
	ASSERT_EQU(sim_threshold(s), 64);
	ASSERT_EQU(sim_stranded_threshold(s), 127);
	ASSERT_EQ(three_updates(s), 0);
	ASSERT_EQ(sim_stats_updates(s, LEAF), 80);
	ASSERT_EQ(sim_stats_updates(s, ROOT), 80);
	ASSERT_EQU(sim_pcpu_stats_updates(s, LEAF, 0), 0);
	ASSERT_EQU(sim_pcpu_stats_updates(s, ROOT, 0), 0);
	ASSERT_EQ(sim_flush_request(s, 4, ROOT, false), 1);
	sim_destroy(s);
}

/*
 * Hotplug keeps the batch: batch 32 on 2 CPUs (TH 64) brought to 1 CPU has
 * TH 32 and stranded limit 32 + 31 = 63.
 */
TEST(hotplug_keeps_batch)
{
	struct sim *s = mk("continue", 32, 2);

	ASSERT(s);
	if (!s)
		return;
	ASSERT_EQ(sim_set_online(s, 1, 1), 0);
	ASSERT_EQU(sim_threshold(s), 32);
	ASSERT_EQU(sim_stranded_threshold(s), 63);
	sim_destroy(s);
}

/* A batch of 0 is no machine; TH = batch * CPUs must fit the kernel's unsigned int. */
TEST(bad_params)
{
	struct sim_params sp = { .policy = sim_policy_find("break"), .nr_possible = 2,
				 .nr_online = 2, .batch = 0 };
	struct sim *s;

	ASSERT(!sim_create(&sp));
	ASSERT(!sim_create(NULL));
	sp.batch = 1u << 16;
	sp.nr_possible = sp.nr_online = 1u << 16;
	ASSERT(!sim_create(&sp));
	sp.nr_possible = sp.nr_online = (1u << 16) - 1;
	s = sim_create(&sp);
	ASSERT(s);
	sim_destroy(s);
}

TEST_MAIN(batch_32_read_flushes, batch_64_read_skips, one_cpu_online_read_flushes,
	  hotplug_keeps_batch, bad_params)
