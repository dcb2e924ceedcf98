// SPDX-License-Identifier: GPL-2.0
/*
 * test_sim_counters.c - struct sim_params.counters_only: the kernel's
 * counters without the staleness accounting.  Two simulators, one with the
 * flag and one without, take the same seeded random trace (updates of every
 * kind and sign on random CPUs, unknown ids, lock windows with visits in and
 * out of list order, whole flushes, flush requests, rmdirs, counters set
 * from outside, CPU hotplug) under every table policy.  After every
 * operation both answer alike: the return code, every memcg's atomic and
 * per-CPU stats_updates and flushable flag, the open window's list, the
 * memcgs visited in order, and the cost counters.  The flagged one misses
 * nothing.  The seed is fixed; MCR_SEED=<n> overrides it.
 */
#include <stdlib.h>

#include "../harness.h"
#include "sim.h"

#define NCG	28
#define NCPU	4
#define OPS	40000

struct vis {
	uint64_t	id[4 * NCG * NCPU];
	size_t		n;
};

static int vis_add(uint64_t id, void *ctx)
{
	struct vis *v = ctx;

	if (v->n < sizeof(v->id) / sizeof(v->id[0]))
		v->id[v->n] = id;
	v->n++;
	return 0;
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Both simulators alike in every counter the flag keeps; the flagged one misses nothing. */
static void same_counters(struct test_ctx *t, struct sim *a, struct sim *b, size_t op)
{
	struct sim_cost ca, cb;
	struct vis va = { 0 }, vb = { 0 };
	size_t i, n = sim_cgroup_count(a);
	unsigned int cpu;

	ASSERT_EQU(sim_cgroup_count(b), n);
	for (i = 0; i < n; i++) {
		uint64_t id = sim_cgroup_at(a, i);
		struct sim_stale st;

		ASSERT_EQU(sim_cgroup_at(b, i), id);
		if (sim_stats_updates(a, id) != sim_stats_updates(b, id) ||
		    sim_needs_flush(a, id) != sim_needs_flush(b, id))
			FAILF("op %zu: memcg %llu: atomic %lld/%lld flushable %d/%d", op,
			      (unsigned long long)id, (long long)sim_stats_updates(a, id),
			      (long long)sim_stats_updates(b, id), sim_needs_flush(a, id),
			      sim_needs_flush(b, id));
		for (cpu = 0; cpu < NCPU; cpu++)
			ASSERT_EQU(sim_pcpu_stats_updates(a, id, cpu), sim_pcpu_stats_updates(b, id, cpu));
		ASSERT_EQ(sim_stale_get(b, id, &st), 0);
		ASSERT_EQU(st.missing, 0);
	}
	ASSERT_EQ(sim_window_open(a), sim_window_open(b));
	ASSERT_EQU(sim_window_remaining(a), sim_window_remaining(b));
	for (i = 0; i < sim_window_remaining(a); i++)
		ASSERT_EQU(sim_window_peek(a, i), sim_window_peek(b, i));
	ASSERT_EQ(sim_visited_drain(a, vis_add, &va), 0);
	ASSERT_EQ(sim_visited_drain(b, vis_add, &vb), 0);
	ASSERT_EQU(va.n, vb.n);
	for (i = 0; i < va.n && i < sizeof(va.id) / sizeof(va.id[0]); i++)
		ASSERT_EQU(va.id[i], vb.id[i]);
	sim_cost_get(a, &ca);
	sim_cost_get(b, &cb);
	ASSERT(!memcmp(&ca, &cb, sizeof(ca)));
}

/* One random operation on @s; the same @x gives the same operation. */
static int random_op(struct sim *s, uint64_t x, uint64_t ts, const uint64_t *ids, size_t nr)
{
	static const int64_t vals[] = { 1, -1, 2, -3, 64, -64, 512, -512, 100000, 0,
					1LL << 32, (1LL << 32) + 7 };
	uint64_t id = ids[x % nr];
	unsigned int cpu = (x >> 8) % NCPU;
	unsigned int r = (x >> 16) % 1000;

	if (r < 700) {
		enum sim_item_kind kind = (enum sim_item_kind)((x >> 24) % 3);
		int64_t v = vals[(x >> 28) % (sizeof(vals) / sizeof(vals[0]))];

		if (kind != SIM_ITEM_EVENT && (v >= 1LL << 31 || v <= -(1LL << 31)))
			v = (int32_t)v;
		if (!((x >> 36) % 50))
			id = 5000 + (x >> 40) % 3;	/* unknown: under the root */
		return sim_update(s, ts, cpu, id, kind, (int)((x >> 32) % 6), v);
	}
	if (r < 760)
		return sim_flush_request(s, ts, id, (x >> 24) & 1);
	if (!sim_window_open(s)) {
		if (r < 860)
			return sim_window_begin(s, ts, (x >> 24) % 3 ? SIM_ROOT_ID : id, cpu);
		if (r < 870)
			return sim_flush(s, ts, id);
		if (r < 875)
			return sim_cgroup_remove(s, ts, id);
		if (r < 880)
			return sim_stats_updates_set(s, id, (int64_t)((x >> 24) % 300));
		if (r < 885)
			return sim_pcpu_set(s, id, cpu, (uint32_t)((x >> 24) % 70));
		if (r < 888)
			return sim_set_online(s, ts, 1 + (x >> 24) % NCPU);
		return 0;
	}
	if (r < 900)
		return sim_window_visit_next(s, ts, NULL);
	if (r < 920)
		return sim_window_visit(s, ts, id);
	if (r < 960)
		return sim_window_end(s, ts);
	return 0;
}

TEST(test_counters_only_alike)
{
	uint64_t seed = getenv("MCR_SEED") ? strtoull(getenv("MCR_SEED"), NULL, 0) : 0x5eed34;
	const struct sim_policy *pol;
	size_t p;

	for (p = 0; (pol = sim_policy_at(p)); p++) {
		struct sim_params sp = { .policy = pol, .nr_possible = NCPU, .nr_online = NCPU,
					 .batch = SIM_CHARGE_BATCH };
		uint64_t ids[NCG], x = seed + p, ts = 1000;
		struct sim *a, *b;
		size_t i, op;

		a = sim_create(&sp);
		sp.counters_only = true;
		b = sim_create(&sp);
		ASSERT(a && b);
		ids[0] = SIM_ROOT_ID;
		for (i = 1; i < NCG; i++) {
			uint64_t parent = ids[rnd(&x) % i];

			ids[i] = 100 + i;
			ASSERT_EQ(sim_cgroup_add(a, ts, ids[i], parent), 0);
			ASSERT_EQ(sim_cgroup_add(b, ts, ids[i], parent), 0);
		}
		for (op = 0; op < OPS; op++) {
			uint64_t r = rnd(&x);
			int ra, rb;

			ts += (r >> 50) % 4 ? 1 + (r >> 52) % 5000 : 0;
			ra = random_op(a, r, ts, ids, NCG);
			rb = random_op(b, r, ts, ids, NCG);
			if (ra != rb)
				FAILF("seed %#llx policy %s op %zu: %d, counters only %d",
				      (unsigned long long)seed, pol->name, op, ra, rb);
			same_counters(t, a, b, op);
			if (t->failed) {
				printf("  seed %#llx policy %s\n", (unsigned long long)seed, pol->name);
				break;
			}
		}
		sim_destroy(a);
		sim_destroy(b);
		if (t->failed)
			break;
	}
}

TEST_MAIN(test_counters_only_alike)
