// SPDX-License-Identifier: GPL-2.0
/*
 * test_sim_step.c - each policy's step as the pure function of one node's
 * counters it is (sim/policy.c), and the simulator applying a policy built
 * outside the table.
 */
#include "../harness.h"
#include "self_policy.h"
#include "sim.h"
#include "sim_new.h"

#define ROOT	SIM_ROOT_ID
#define P	10ULL
#define L	20ULL

static struct sim_step_out step(const char *pol, int64_t atomic, uint32_t pcpu, uint32_t v)
{
	struct sim_step_in in = { .atomic = atomic, .th = 128, .pcpu = pcpu, .abs_val = v,
				  .batch = SIM_CHARGE_BATCH };

	return sim_policy_find(pol)->step(&in);
}

/*
 * TH 128.  Not flushable (atomic 128 is not above TH): every policy charges
 * the per-CPU counter, 60 + 3 = 63 stays below the batch, 60 + 4 = 64 moves
 * the whole 64 into the atomic and leaves 0.
 */
TEST(step_below_th)
{
	static const char *const pols[] = { "break", "continue", "legacy" };
	struct sim_step_out o;
	int i;

	for (i = 0; i < 3; i++) {
		o = step(pols[i], 128, 60, 3);
		ASSERT(o.charged && o.walk == SIM_WALK_NEXT);
		ASSERT_EQU(o.pcpu, 63);
		ASSERT_EQU(o.add, 0);
		ASSERT_EQU(o.drop, 0);
		o = step(pols[i], 128, 60, 4);
		ASSERT(o.charged && o.walk == SIM_WALK_NEXT);
		ASSERT_EQU(o.pcpu, 0);
		ASSERT_EQU(o.add, 64);
		ASSERT_EQU(o.drop, 0);
	}
}

/*
 * Flushable (atomic 129 > TH 128), per-CPU 60, +4:
 *   break (60cada258dfe): stops, nothing moves
 *   continue: skips the node, nothing moves, the walk goes on
 *   legacy (8d59d2214c23): charges, the full batch of 64 is dropped
 */
TEST(step_flushable)
{
	struct sim_step_out o;

	o = step("break", 129, 60, 4);
	ASSERT(!o.charged && o.walk == SIM_WALK_STOP);
	ASSERT_EQU(o.pcpu, 60);
	ASSERT_EQU(o.add + o.drop, 0);
	o = step("continue", 129, 60, 4);
	ASSERT(!o.charged && o.walk == SIM_WALK_NEXT);
	ASSERT_EQU(o.pcpu, 60);
	ASSERT_EQU(o.add + o.drop, 0);
	o = step("legacy", 129, 60, 4);
	ASSERT(o.charged && o.walk == SIM_WALK_NEXT);
	ASSERT_EQU(o.pcpu, 0);
	ASSERT_EQU(o.add, 0);
	ASSERT_EQU(o.drop, 64);
	o = step("legacy", 129, 60, 3);
	ASSERT_EQU(o.pcpu, 63);
	ASSERT_EQU(o.drop, 0);
}

/*
 * root -> P -> L, 2 CPUs.  L +5 on CPU 0: the step adds 5 to L's atomic and
 * stops, so P and root stay 0 (break would have left all three at 0 with
 * CPU 0's counters at 5); -7 adds |-7| = 7: L 12.  Events: a count of 2^32
 * is (int)0, no walk at all (count_memcg_events' truncation); 2^32 + 1 walks
 * with 1: L 13.  Cost: 3 walks of one step each, no per-CPU add, 3 atomic adds.
 */
TEST(sim_applies_any_policy)
{
	struct sim *s = sim_new(&self_policy, 2, 2);
	struct sim_cost c;

	ASSERT(s);
	ASSERT_EQ(sim_cgroup_add(s, 0, P, ROOT), 0);
	ASSERT_EQ(sim_cgroup_add(s, 0, L, P), 0);
	ASSERT_EQ(sim_update(s, 1, 0, L, SIM_ITEM_STATE, 0, 5), 0);
	ASSERT_EQ(sim_update(s, 2, 1, L, SIM_ITEM_STATE, 0, -7), 0);
	ASSERT_EQ(sim_update(s, 3, 1, L, SIM_ITEM_EVENT, 0, 1LL << 32), 0);
	ASSERT_EQ(sim_update(s, 4, 1, L, SIM_ITEM_EVENT, 0, (1LL << 32) + 1), 0);
	ASSERT_EQ(sim_stats_updates(s, L), 13);
	ASSERT_EQ(sim_stats_updates(s, P), 0);
	ASSERT_EQ(sim_stats_updates(s, ROOT), 0);
	ASSERT_EQU(sim_pcpu_stats_updates(s, L, 0), 0);
	sim_cost_get(s, &c);
	ASSERT_EQU(c.walk_steps, 3);
	ASSERT_EQU(c.pcpu_adds, 0);
	ASSERT_EQU(c.atomic_adds, 3);
	sim_destroy(s);
}

/* The one truncation: |(int)val|. */
TEST(walk_abs)
{
	ASSERT_EQU(sim_walk_abs(0), 0);
	ASSERT_EQU(sim_walk_abs(-7), 7);
	ASSERT_EQU(sim_walk_abs(1LL << 32), 0);
	ASSERT_EQU(sim_walk_abs((1LL << 32) + 3), 3);
	ASSERT_EQU(sim_walk_abs(0xffffffffLL), 1);		/* (int)0xffffffff = -1 */
	ASSERT_EQU(sim_walk_abs(INT32_MIN), 0x80000000u);
}

TEST_MAIN(step_below_th, step_flushable, sim_applies_any_policy, walk_abs)
