// SPDX-License-Identifier: GPL-2.0
/*
 * test_sim_api.c - the simulator's contract at its edges: policy table,
 * hierarchy, unknown ids, CPU hotplug and every error path of the window API.
 */
#include <errno.h>
#include <string.h>

#include "../harness.h"
#include "sim.h"
#include "sim_new.h"
#include "sim-local.h"
#include "rstat.h"

#define ROOT	SIM_ROOT_ID
#define A	10ULL
#define B	11ULL

TEST(policy_table)
{
	const char *names[] = { "break", "continue", "legacy" };
	size_t i;

	for (i = 0; i < 3; i++) {
		const struct sim_policy *p = sim_policy_find(names[i]);

		ASSERT(p);
		ASSERT_STR(p->name, names[i]);
		ASSERT(p == sim_policy_at(i));
		ASSERT(p->kernels && p->summary && p->step);
	}
	ASSERT(!sim_policy_at(3));
	ASSERT(!sim_policy_find("BREAK"));
	ASSERT(!sim_policy_find("nope"));
	ASSERT(!sim_policy_find(NULL));
	ASSERT_STR(sim_policy_find("break")->kernels, "6.16+");
	ASSERT_STR(sim_policy_find("legacy")->kernels, "6.8-6.15");
}

/* The report sorts runs by rank: table order, and a policy this build lacks after all three. */
TEST(policy_rank)
{
	ASSERT_EQ(sim_policy_rank("break"), 0);
	ASSERT_EQ(sim_policy_rank("continue"), 1);
	ASSERT_EQ(sim_policy_rank("legacy"), 2);
	ASSERT_EQ(sim_policy_rank("nope"), 3);
	ASSERT_EQ(sim_policy_rank(NULL), 3);
}

TEST(create_arguments)
{
	const struct sim_policy *p = sim_policy_find("break");
	struct sim *s;

	ASSERT(!sim_new(NULL, 4, 4));
	ASSERT(!sim_new(p, 4, 0));
	ASSERT(!sim_new(p, 4, 5));
	ASSERT(!sim_new(p, 0, 0));
	s = sim_new(p, 256, 8);
	ASSERT(s);
	ASSERT(sim_policy(s) == p);
	ASSERT_EQ(sim_threshold(s), 512);		/* 64 * 8 online, not 256 possible */
	ASSERT_EQ(sim_cgroup_count(s), 1);
	ASSERT_EQU(sim_cgroup_at(s, 0), ROOT);
	ASSERT_EQU(sim_cgroup_at(s, 1), 0);
	ASSERT_EQ(sim_cgroup_level(s, ROOT), 0);
	sim_destroy(s);
	sim_destroy(NULL);
}

TEST(hierarchy)
{
	struct sim *s = sim_new(sim_policy_find("break"), 2, 2);

	ASSERT(s);
	ASSERT_EQ(sim_cgroup_add(s, 1, A, ROOT), 0);
	ASSERT_EQ(sim_cgroup_add(s, 1, B, A), 0);
	ASSERT_EQ(sim_cgroup_add(s, 1, B, ROOT), -EEXIST);
	ASSERT_EQ(sim_cgroup_add(s, 1, ROOT, 0), -EEXIST);
	ASSERT_EQ(sim_cgroup_add(s, 1, 0, ROOT), -EINVAL);
	ASSERT_EQU(sim_cgroup_parent(s, B), A);		/* not re-parented by the -EEXIST */
	ASSERT_EQU(sim_cgroup_parent(s, A), ROOT);
	ASSERT_EQU(sim_cgroup_parent(s, ROOT), 0);
	ASSERT_EQU(sim_cgroup_parent(s, 99), 0);
	ASSERT_EQ(sim_cgroup_level(s, B), 2);
	ASSERT_EQ(sim_cgroup_level(s, 99), -ENOENT);
	/* unknown parent: under the root */
	ASSERT_EQ(sim_cgroup_add(s, 1, 30, 777), 0);
	ASSERT_EQU(sim_cgroup_parent(s, 30), ROOT);
	ASSERT_EQ(sim_cgroup_count(s), 4);
	ASSERT_EQU(sim_cgroup_at(s, 2), B);		/* creation order */
	/* removal keeps the node: a dying memcg is still updated */
	ASSERT_EQ(sim_cgroup_remove(s, 2, B), 0);
	ASSERT(sim_cgroup_known(s, B));
	ASSERT_EQ(sim_update(s, 3, 0, B, SIM_ITEM_STATE, 0, 100), 0);
	ASSERT_EQ(sim_stats_updates(s, B), 100);
	ASSERT_EQ(sim_cgroup_remove(s, 2, 99), -ENOENT);
	ASSERT_EQ(sim_cgroup_remove(s, 2, ROOT), -EINVAL);
	sim_destroy(s);
}

/* An update naming an unknown id attaches it under the root, counted once. */
TEST(unknown_ids)
{
	struct sim *s = sim_new(sim_policy_find("continue"), 1, 1);
	struct sim_stale st;
	struct sim_cost c;

	ASSERT(s);
	ASSERT_EQ(sim_update(s, 5, 0, 42, SIM_ITEM_STATE, 0, 3), 0);
	ASSERT_EQ(sim_update(s, 6, 0, 42, SIM_ITEM_STATE, 0, 3), 0);
	ASSERT(sim_cgroup_known(s, 42));
	ASSERT_EQU(sim_cgroup_parent(s, 42), ROOT);
	ASSERT_EQ(sim_cgroup_level(s, 42), 1);
	ASSERT_EQ(sim_stale_get(s, ROOT, &st), 0);
	ASSERT_EQU(st.missing, 6);
	sim_cost_get(s, &c);
	ASSERT_EQU(c.unknown_ids, 1);
	ASSERT_EQU(c.updates, 2);
	/* val 0 is a no-op, and does not make the id known */
	ASSERT_EQ(sim_update(s, 7, 0, 43, SIM_ITEM_STATE, 0, 0), 0);
	ASSERT(!sim_cgroup_known(s, 43));
	sim_cost_get(s, &c);
	ASSERT_EQU(c.updates, 2);
	ASSERT_EQU(c.unknown_ids, 1);
	sim_destroy(s);
}

TEST(update_errors)
{
	struct sim *s = sim_new(sim_policy_find("break"), 2, 1);
	struct sim_stale st;
	int64_t v;

	ASSERT(s);
	ASSERT_EQ(sim_update(s, 1, 2, ROOT, SIM_ITEM_STATE, 0, 1), -EINVAL);	/* cpu */
	ASSERT_EQ(sim_update(s, 1, 0, ROOT, (enum sim_item_kind)7, 0, 1), -EINVAL);
	ASSERT_EQ(sim_update(s, 1, 0, 0, SIM_ITEM_STATE, 0, 1), -EINVAL);	/* id 0 */
	/* an offline but possible CPU is fine (TH counts online, the flush possible) */
	ASSERT_EQ(sim_update(s, 1, 1, ROOT, SIM_ITEM_STATE, 0, 1), 0);
	ASSERT_EQ(sim_stale_get(s, 99, &st), -ENOENT);
	ASSERT_EQ(sim_item_missing(s, 99, SIM_ITEM_STATE, 0, &v), -ENOENT);
	ASSERT_EQ(sim_item_missing(s, ROOT, (enum sim_item_kind)7, 0, &v), -EINVAL);
	ASSERT_EQ(sim_flush_request(s, 1, 99, true), -ENOENT);
	ASSERT_EQ(sim_flush(s, 1, 99), -ENOENT);
	ASSERT(!sim_needs_flush(s, 99));
	ASSERT_EQ(sim_stats_updates(s, 99), 0);
	sim_destroy(s);
}

TEST(window_errors)
{
	struct sim *s = sim_new(sim_policy_find("break"), 2, 2);
	uint64_t id = 0;

	ASSERT(s);
	ASSERT_EQ(sim_cgroup_add(s, 0, A, ROOT), 0);
	ASSERT(!sim_window_open(s));
	ASSERT_EQ(sim_window_visit_next(s, 1, &id), -EINVAL);
	ASSERT_EQ(sim_window_visit(s, 1, A), -EINVAL);
	ASSERT_EQ(sim_window_end(s, 1), -EINVAL);
	ASSERT_EQ(sim_window_remaining(s), 0);
	ASSERT_EQU(sim_window_peek(s, 0), 0);
	ASSERT_EQ(sim_window_begin(s, 1, 99, 0), -ENOENT);
	ASSERT_EQ(sim_window_begin(s, 1, ROOT, 2), -EINVAL);
	ASSERT(!sim_window_open(s));

	ASSERT_EQ(sim_update(s, 2, 1, A, SIM_ITEM_STATE, 0, 1), 0);
	/* CPU 0 has nothing linked: an open, empty window */
	ASSERT_EQ(sim_window_begin(s, 3, ROOT, 0), 0);
	ASSERT(sim_window_open(s));
	ASSERT_EQ(sim_window_remaining(s), 0);
	ASSERT_EQ(sim_window_visit_next(s, 3, &id), 0);
	ASSERT_EQ(sim_window_begin(s, 3, ROOT, 1), -EBUSY);
	ASSERT_EQ(sim_flush(s, 3, ROOT), -EBUSY);
	ASSERT_EQ(sim_window_end(s, 3), 0);

	ASSERT_EQ(sim_window_begin(s, 4, ROOT, 1), 0);
	ASSERT_EQ(sim_window_remaining(s), 2);
	ASSERT_EQU(sim_window_peek(s, 0), A);
	ASSERT_EQU(sim_window_peek(s, 1), ROOT);
	ASSERT_EQU(sim_window_peek(s, 2), 0);
	ASSERT_EQ(sim_window_visit(s, 4, 99), -ENOENT);
	/* explicit visit out of order: root first, then A is what is left */
	ASSERT_EQ(sim_window_visit(s, 4, ROOT), 0);
	ASSERT_EQ(sim_window_visit(s, 4, ROOT), -ENOENT);
	ASSERT_EQ(sim_window_remaining(s), 1);
	ASSERT_EQU(sim_window_peek(s, 0), A);
	ASSERT_EQ(sim_window_visit(s, 4, A), 0);
	ASSERT_EQ(sim_window_remaining(s), 0);
	ASSERT_EQ(sim_window_end(s, 4), 0);
	ASSERT(!sim_window_open(s));
	sim_destroy(s);
}

/*
 * Updates during a window link nodes again for a later flush (6.17+): an
 * update of A on CPU 1 while the CPU 1 window is open and A already visited
 * puts A back on CPU 1's tree; the next flush visits it.
 */
TEST(window_relink)
{
	struct sim *s = sim_new(sim_policy_find("break"), 2, 2);
	struct sim_stale st;
	uint64_t id;

	ASSERT(s);
	ASSERT_EQ(sim_cgroup_add(s, 0, A, ROOT), 0);
	ASSERT_EQ(sim_update(s, 1, 1, A, SIM_ITEM_STATE, 0, 5), 0);
	ASSERT_EQ(sim_window_begin(s, 2, ROOT, 1), 0);
	ASSERT_EQ(sim_window_visit_next(s, 2, &id), 1);
	ASSERT_EQU(id, A);
	ASSERT_EQ(sim_update(s, 3, 1, A, SIM_ITEM_STATE, 0, 7), 0);
	ASSERT_EQ(sim_window_remaining(s), 1);	/* the list is fixed */
	ASSERT_EQ(sim_window_end(s, 4), 0);
	ASSERT_EQ(sim_stale_get(s, A, &st), 0);
	ASSERT_EQU(st.missing, 7);
	ASSERT_EQ(sim_window_begin(s, 5, ROOT, 1), 0);
	ASSERT_EQ(sim_window_remaining(s), 2);	/* A and root linked again */
	ASSERT_EQ(sim_window_end(s, 5), 0);
	ASSERT_EQ(sim_stale_get(s, ROOT, &st), 0);
	ASSERT_EQU(st.missing, 0);
	sim_destroy(s);
}

/*
 * Hotplug: 4 CPUs, TH 256.  A race leaves A = 150, root = 0 (visit A on
 * CPU 0, A +150 on CPU 1, visit root on CPU 0); then root +100 on CPU 2 gives
 * root = 100.  Online 2 -> TH 128: A flushable (150 > 128), root not (100),
 * root missing > 0 -> stuck.  Online 1 -> TH 64: root flushable too, not
 * stuck.  Online 4 -> TH 256: nothing flushable.  Online 0 or 5: -EINVAL.
 */
TEST(set_online_threshold)
{
	struct sim *s = sim_new(sim_policy_find("break"), 4, 4);
	struct sim_stale st;

	ASSERT(s);
	ASSERT_EQ(sim_cgroup_add(s, 0, A, ROOT), 0);
	ASSERT_EQ(sim_update(s, 1, 0, A, SIM_ITEM_STATE, 0, 1), 0);
	ASSERT_EQ(sim_window_begin(s, 2, ROOT, 0), 0);
	ASSERT_EQ(sim_window_visit(s, 2, A), 0);
	ASSERT_EQ(sim_update(s, 3, 1, A, SIM_ITEM_STATE, 0, 150), 0);
	ASSERT_EQ(sim_window_end(s, 4), 0);
	ASSERT_EQ(sim_stats_updates(s, A), 150);
	ASSERT_EQ(sim_stats_updates(s, ROOT), 0);
	ASSERT_EQ(sim_update(s, 5, 2, ROOT, SIM_ITEM_STATE, 0, 100), 0);
	ASSERT_EQ(sim_stats_updates(s, ROOT), 100);

	ASSERT_EQ(sim_set_online(s, 10, 2), 0);
	ASSERT_EQ(sim_threshold(s), 128);
	ASSERT(sim_needs_flush(s, A));
	ASSERT(!sim_needs_flush(s, ROOT));
	ASSERT_EQ(sim_stale_get(s, ROOT, &st), 0);
	ASSERT(st.stuck);
	ASSERT_EQ(sim_set_online(s, 20, 1), 0);
	ASSERT_EQ(sim_threshold(s), 64);
	ASSERT(sim_needs_flush(s, ROOT));
	ASSERT_EQ(sim_stale_get(s, ROOT, &st), 0);
	ASSERT(!st.stuck);
	ASSERT_EQ(sim_set_online(s, 30, 4), 0);
	ASSERT(!sim_needs_flush(s, A));
	ASSERT(!sim_needs_flush(s, ROOT));
	ASSERT_EQ(sim_set_online(s, 40, 0), -EINVAL);
	ASSERT_EQ(sim_set_online(s, 40, 5), -EINVAL);
	ASSERT_EQ(sim_threshold(s), 256);
	sim_destroy(s);
}

/* Flush requests: threshold strictly greater, force always; both counted. */
TEST(flush_request)
{
	struct sim *s = sim_new(sim_policy_find("break"), 1, 1);
	struct sim_cost c;

	ASSERT(s);
	ASSERT_EQ(sim_update(s, 1, 0, ROOT, SIM_ITEM_STATE, 0, 64), 0);
	ASSERT_EQ(sim_stats_updates(s, ROOT), 64);
	ASSERT_EQ(sim_flush_request(s, 2, ROOT, false), 0);	/* 64 is not > 64 */
	ASSERT_EQ(sim_update(s, 3, 0, ROOT, SIM_ITEM_STATE, 0, 64), 0);
	ASSERT_EQ(sim_flush_request(s, 4, ROOT, false), 1);
	ASSERT_EQ(sim_flush_request(s, 5, ROOT, true), 1);
	sim_cost_get(s, &c);
	ASSERT_EQU(c.flush_requests, 3);
	ASSERT_EQU(c.flushes, 2);
	sim_destroy(s);
}

static int count_items(enum sim_item_kind kind, int it, int64_t missing, void *ctx)
{
	int64_t *sum = ctx;

	sum[0]++;
	sum[1] += missing;
	return it == 99 ? 7 : 0;
}

TEST(items_foreach)
{
	struct sim *s = sim_new(sim_policy_find("break"), 1, 1);
	int64_t sum[2] = { 0, 0 };

	ASSERT(s);
	ASSERT_EQ(sim_update(s, 1, 0, ROOT, SIM_ITEM_STATE, 1, 5), 0);
	ASSERT_EQ(sim_update(s, 1, 0, ROOT, SIM_ITEM_LRUVEC, 1, -2), 0);
	ASSERT_EQ(sim_update(s, 1, 0, ROOT, SIM_ITEM_STATE, 2, 3), 0);
	ASSERT_EQ(sim_update(s, 1, 0, ROOT, SIM_ITEM_STATE, 2, -3), 0);	/* nets to 0 */
	/* STATE 1 and LRUVEC 1 are one line (+5 - 2 = 3); line 2 nets to 0 */
	ASSERT_EQ(sim_items_foreach(s, ROOT, count_items, sum), 0);
	ASSERT_EQ(sum[0], 1);
	ASSERT_EQ(sum[1], 3);
	ASSERT_EQ(sim_update(s, 1, 0, ROOT, SIM_ITEM_EVENT, 99, 1), 0);
	ASSERT_EQ(sim_items_foreach(s, ROOT, count_items, sum), 7);
	ASSERT_EQ(sim_items_foreach(s, 5, count_items, sum), -ENOENT);
	sim_destroy(s);
}

/*
 * The update path's prefetch table: each node lists its SIM_PATH nearest
 * ancestors, the parent links' own answer; deeper ones are cut off there but
 * the update still reaches the root.  Nodes, slots and their counters stay
 * on cache lines across the arrays' growth (past 64 nodes, past 256 slots).
 */
TEST(ancestor_path)
{
	struct sim *s = sim_new(sim_policy_find("break"), 4, 4);
	struct sim_stale st;
	uint64_t id;
	uint32_t i, j;

	ASSERT(s);
	/* a chain 100 <- 101 <- ... <- 111, 12 levels below the root */
	for (id = 100; id < 112; id++)
		ASSERT_EQ(sim_cgroup_add(s, 0, id, id == 100 ? ROOT : id - 1), 0);
	for (id = 200; id < 280; id++)
		ASSERT_EQ(sim_cgroup_add(s, 0, id, 105), 0);
	ASSERT_EQ(sim_cgroup_count(s), 93);
	for (i = 0; i < s->nr_nodes; i++) {
		int32_t up = s->nodes[i].parent;

		for (j = 0; j < SIM_PATH; j++) {
			ASSERT_EQ(s->path[(size_t)i * SIM_PATH + j], up);
			if (up != SIM_NONE)
				up = s->nodes[up].parent;
		}
	}
	/* node 111 is at level 12: its list ends at 103, four levels short of the root */
	ASSERT_EQ(s->path[(size_t)sim_node_lookup(s, 111) * SIM_PATH + SIM_PATH - 1],
		  sim_node_lookup(s, 103));
	/* one update of 3 pages at the bottom: every ancestor up to the root misses 3 */
	ASSERT_EQ(sim_update(s, 1, 2, 111, SIM_ITEM_STATE, 1, 3), 0);
	ASSERT_EQ(sim_stale_get(s, ROOT, &st), 0);
	ASSERT_EQ(st.missing, 3);
	ASSERT_EQ(sim_stale_get(s, 100, &st), 0);
	ASSERT_EQ(st.missing, 3);
	/* 80 leaves under 105 (level 6) on 4 CPUs: 320 leaf slots and their ancestors' */
	for (id = 200; id < 280; id++)
		for (j = 0; j < 4; j++)
			ASSERT_EQ(sim_update(s, 2, j, id, SIM_ITEM_STATE, 1, 1), 0);
	ASSERT(s->nr_slots > 256);
	ASSERT_EQ((uintptr_t)s->nodes % SIM_CACHELINE, 0);
	ASSERT_EQ((uintptr_t)s->slots % SIM_CACHELINE, 0);
	ASSERT_EQ((uintptr_t)s->ctr % SIM_CACHELINE, 0);
	/* 3 + 80 * 4 * 1 pages below the root, none flushed */
	ASSERT_EQ(sim_stale_get(s, ROOT, &st), 0);
	ASSERT_EQ(st.missing, 323);
	sim_destroy(s);
}

/*
 * A counters-only simulator keeps the slots' counters and no deltas: the
 * same updates make the same slots, and their sim_pcpu array is never made.
 * 40 leaves on 8 CPUs, depth 2: 40 * 8 + 8 + 8 = 336 slots, past the first
 * growth (256).
 */
TEST(counters_only_slots)
{
	struct sim_params sp = { .policy = sim_policy_find("break"), .nr_possible = 8,
				 .nr_online = 8, .batch = SIM_CHARGE_BATCH };
	struct sim *s[2];
	uint64_t id;
	unsigned int k, cpu;

	for (k = 0; k < 2; k++) {
		sp.counters_only = k;
		s[k] = sim_create(&sp);
		ASSERT(s[k]);
		ASSERT_EQ(sim_cgroup_add(s[k], 0, 10, ROOT), 0);
		for (id = 100; id < 140; id++)
			ASSERT_EQ(sim_cgroup_add(s[k], 0, id, 10), 0);
		for (id = 100; id < 140; id++)
			for (cpu = 0; cpu < 8; cpu++)
				ASSERT_EQ(sim_update(s[k], 1, cpu, id, SIM_ITEM_STATE, 1, 1), 0);
		ASSERT_EQ(s[k]->nr_slots, 336);
	}
	ASSERT(s[0]->slots != NULL);
	ASSERT(s[1]->slots == NULL);
	for (k = 0; k < s[0]->nr_slots; k++)
		ASSERT_EQ(s[1]->ctr[k].stats_updates, s[0]->ctr[k].stats_updates);
	for (k = 0; k < 2; k++)
		sim_destroy(s[k]);
}

/*
 * Past SIM_MAP_MIN the node, slot and counter arrays are mappings grown by
 * mremap(): nothing is lost as they move.  4100 memcgs under the root on 2
 * CPUs: 8200 + 2 slots, so the slots (128 bytes each) become a mapping at
 * 8192 (1 MiB) and are remapped past it, and the nodes (448 bytes) become
 * one at 4096 and are remapped past that.  Each (memcg, cpu) takes
 * 1 + (memcg + cpu) % 50 pages, below the batch (64): its per-CPU counter is
 * that, its atomic 0.  The root misses the sum.
 */
TEST(arrays_mapped)
{
	struct sim *s = sim_new(sim_policy_find("break"), 2, 2);
	struct sim_stale st;
	uint64_t id, sum = 0;
	unsigned int cpu;

	ASSERT(s);
	for (id = 100; id < 4200; id++)
		ASSERT_EQ(sim_cgroup_add(s, 0, id, ROOT), 0);
	for (id = 100; id < 4200; id++)
		for (cpu = 0; cpu < 2; cpu++) {
			ASSERT_EQ(sim_update(s, 1, cpu, id, SIM_ITEM_STATE, 1,
					     1 + (int64_t)((id + cpu) % 50)), 0);
			sum += 1 + (id + cpu) % 50;
		}
	ASSERT_EQ(s->nr_slots, 8202);
	ASSERT_EQ(s->cap_slots, 16384);
	ASSERT_EQ(s->cap_nodes, 8192);
	ASSERT(sizeof(*s->nodes) * 4096 >= SIM_MAP_MIN);
	ASSERT_EQ((uintptr_t)s->slots % SIM_CACHELINE, 0);
	ASSERT_EQ((uintptr_t)s->ctr % SIM_CACHELINE, 0);
	ASSERT_EQ((uintptr_t)s->nodes % SIM_CACHELINE, 0);
	for (id = 100; id < 4200; id++)
		for (cpu = 0; cpu < 2; cpu++)
			ASSERT_EQ(sim_pcpu_stats_updates(s, id, cpu), 1 + (id + cpu) % 50);
	ASSERT_EQ(sim_stats_updates(s, 4199), 0);
	ASSERT_EQ(sim_stale_get(s, ROOT, &st), 0);
	ASSERT_EQ(st.missing, sum);
	sim_destroy(s);
}

/*
 * Handles (handle.c) read what the lookups read.  1 CPU, TH = 64: A +10 of
 * line 5 leaves A and the root 10 behind (error -10 at both, A's atomic 0:
 * its per-CPU 10 is below the batch); A +70 brings A's per-CPU to 80 >= 64,
 * so A's atomic is 80 > TH, flushable.  B's line 6 is known to the simulator
 * but never updated below A: A reads 0 for it.  A's path (A, then the root)
 * reads the per-CPU 10 at both after A's first update; after its second,
 * the root's per-CPU 10 + 1 (B's) + 70 = 81 >= 64 has moved too: atomics 80
 * and 81, per-CPU 0.
 */
TEST(handles)
{
	struct sim *s = sim_new(sim_policy_find("break"), 1, 1);
	struct sim_path_node pn[4];
	int32_t na, nr, l5, l6;
	bool more;
	int64_t e;

	ASSERT(s);
	ASSERT_EQ(sim_cgroup_add(s, 1, A, ROOT), 0);
	ASSERT_EQ(sim_cgroup_add(s, 1, B, ROOT), 0);
	na = sim_node_handle(s, A);
	nr = sim_node_handle(s, ROOT);
	ASSERT(na >= 0 && nr >= 0 && na != nr);
	ASSERT(sim_node_handle(s, 99) < 0);
	ASSERT(sim_line_handle(s, SIM_ITEM_STATE, 5) < 0);	/* no update yet */
	ASSERT(sim_line_handle(s, SIM_ITEM_EVENT + 1, 5) < 0);
	ASSERT_EQ(sim_line_error_at(s, na, sim_line_handle(s, SIM_ITEM_STATE, 5)), 0);

	ASSERT_EQ(sim_update(s, 2, 0, A, SIM_ITEM_STATE, 5, 10), 0);
	l5 = sim_line_handle(s, SIM_ITEM_STATE, 5);
	ASSERT(l5 >= 0);
	ASSERT_EQ(sim_line_error_at(s, na, l5), -10);
	ASSERT_EQ(sim_line_error_at(s, nr, l5), -10);
	ASSERT_EQ(sim_item_error(s, A, SIM_ITEM_STATE, 5, &e), 0);
	ASSERT_EQ(e, -10);
	ASSERT(!sim_node_flushable_at(s, na));
	ASSERT_EQ(sim_node_path_at(s, na, 0, pn, 4, &more), 2);
	ASSERT(!more);
	ASSERT(pn[0].node == na && pn[0].id == A && pn[0].stats_updates == 0 && pn[0].pcpu == 10);
	ASSERT(pn[1].node == nr && pn[1].id == ROOT && pn[1].stats_updates == 0 && pn[1].pcpu == 10);
	ASSERT_EQ(sim_node_path_at(s, na, 0, pn, 1, &more), 1);
	ASSERT(more && pn[0].node == na);
	ASSERT_EQ(sim_node_path_at(s, nr, 0, pn, 4, &more), 1);
	ASSERT(!more && pn[0].id == ROOT);
	ASSERT_EQ(sim_node_level_at(s, na), 1);
	ASSERT_EQ(sim_node_level_at(s, nr), 0);

	ASSERT_EQ(sim_update(s, 3, 0, B, SIM_ITEM_STATE, 6, 1), 0);
	l6 = sim_line_handle(s, SIM_ITEM_STATE, 6);
	ASSERT(l6 >= 0 && l6 != l5);
	ASSERT_EQ(sim_line_handle(s, SIM_ITEM_STATE, 5), l5);	/* stable */
	ASSERT_EQ(sim_node_handle(s, A), na);
	ASSERT_EQ(sim_line_error_at(s, na, l6), 0);
	ASSERT_EQ(sim_item_error(s, A, SIM_ITEM_STATE, 6, &e), 0);
	ASSERT_EQ(e, 0);
	ASSERT_EQ(sim_line_error_at(s, nr, l6), -1);

	ASSERT_EQ(sim_update(s, 4, 0, A, SIM_ITEM_STATE, 5, 70), 0);
	ASSERT_EQ(sim_stats_updates(s, A), 80);
	ASSERT(sim_node_flushable_at(s, na));
	ASSERT_EQ(sim_node_path_at(s, na, 0, pn, 4, &more), 2);
	ASSERT(pn[0].stats_updates == 80 && pn[0].pcpu == 0);
	ASSERT(pn[1].stats_updates == 81 && pn[1].pcpu == 0);
	ASSERT(sim_needs_flush(s, A));
	ASSERT_EQ(sim_line_error_at(s, na, l5), -80);
	sim_destroy(s);
}

/*
 * Ids below SIM_ID_DIRECT live in the flat table, larger ones in the hash:
 * both kinds in one hierarchy, and unknown ids on both sides of the edge
 * and inside the table's covered range.
 */
TEST(id_ranges)
{
	const uint64_t small = 3, edge = SIM_ID_DIRECT - 1, big = SIM_ID_DIRECT,
		       huge = UINT64_C(1) << 40;
	struct sim *s = sim_new(sim_policy_find("break"), 2, 2);
	struct sim_stale st;

	ASSERT(s);
	ASSERT_EQ(sim_cgroup_add(s, 0, big, ROOT), 0);
	ASSERT_EQ(sim_cgroup_add(s, 0, small, big), 0);
	ASSERT_EQ(sim_cgroup_add(s, 0, huge, small), 0);
	ASSERT_EQ(sim_cgroup_add(s, 0, edge, huge), 0);
	ASSERT_EQU(sim_cgroup_parent(s, edge), huge);
	ASSERT_EQU(sim_cgroup_parent(s, huge), small);
	ASSERT_EQU(sim_cgroup_parent(s, small), big);
	ASSERT_EQ(sim_cgroup_level(s, edge), 4);
	/* unknown: inside the table's range, past it, and in the hash */
	ASSERT(!sim_cgroup_known(s, 4));
	ASSERT(!sim_cgroup_known(s, edge - 1));
	ASSERT(!sim_cgroup_known(s, big + 1));
	ASSERT(!sim_cgroup_known(s, huge + 1));
	ASSERT_EQ(sim_update(s, 1, 1, edge, SIM_ITEM_STATE, 0, 5), 0);
	ASSERT_EQ(sim_stale_get(s, big, &st), 0);
	ASSERT_EQU(st.missing, 5);
	ASSERT_EQU(sim_pcpu_stats_updates(s, small, 1), 5);
	ASSERT_EQU(sim_pcpu_stats_updates(s, big, 1), 5);
	ASSERT_EQU(sim_pcpu_stats_updates(s, big, 0), 0);
	sim_destroy(s);
}

/* One pseudo-random machine's whole state, for comparing two runs. */
static void walk_script(struct test_ctx *t, struct sim *s)
{
	uint64_t x = 12345;
	unsigned int i;

	for (i = 2; i < 40; i++)
		ASSERT_EQ(sim_cgroup_add(s, 0, i, i < 5 ? ROOT : i / 3 + 1), 0);
	for (i = 0; i < 20000; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		if ((x >> 60) == 0) {
			uint64_t id = ((x >> 20) % 40) + 1;

			if (sim_flush_request(s, i, id, (x >> 50) & 1) > 0)
				ASSERT_EQ(sim_flush(s, i, id), 0);
			continue;
		}
		ASSERT_EQ(sim_update(s, i, (x >> 8) % 4, ((x >> 20) % 40) + 1, SIM_ITEM_STATE,
				     (int)((x >> 30) % 3), (int64_t)((x >> 40) % 97) - 40), 0);
	}
}

/*
 * A table policy walks with its step inlined (its own walk); the same step
 * through the pointer (a policy without a walk) must leave the very same
 * machine: every counter, every cost count.
 */
TEST(table_walk_matches_step)
{
	size_t k;

	for (k = 0; sim_policy_at(k); k++) {
		struct sim_policy plain = *sim_policy_at(k);
		struct sim *a, *b;
		struct sim_cost ca, cb;
		uint64_t id;
		unsigned int cpu;

		ASSERT(plain.update);
		plain.update = NULL;
		a = sim_new(sim_policy_at(k), 4, 4);
		b = sim_new(&plain, 4, 4);
		ASSERT(a && b);
		walk_script(t, a);
		walk_script(t, b);
		if (t->failed)
			return;
		sim_cost_get(a, &ca);
		sim_cost_get(b, &cb);
		ASSERT(ca.walk_steps > ca.updates);
		ASSERT(ca.atomic_adds > 0 && ca.flushes > 0);
		ASSERT(!memcmp(&ca, &cb, sizeof(ca)));
		for (id = 1; id <= 40; id++) {
			struct sim_stale sa, sb;

			ASSERT_EQ(sim_stats_updates(a, id), sim_stats_updates(b, id));
			ASSERT_EQ(sim_stale_get(a, id, &sa), 0);
			ASSERT_EQ(sim_stale_get(b, id, &sb), 0);
			ASSERT_EQU(sa.missing, sb.missing);
			ASSERT_EQ(sa.flushable, sb.flushable);
			for (cpu = 0; cpu < 4; cpu++)
				ASSERT_EQU(sim_pcpu_stats_updates(a, id, cpu), sim_pcpu_stats_updates(b, id, cpu));
		}
		sim_destroy(a);
		sim_destroy(b);
	}
}

TEST_MAIN(policy_table, policy_rank, create_arguments, hierarchy, unknown_ids, update_errors,
	  window_errors, window_relink, set_online_threshold, flush_request, items_foreach,
	  ancestor_path, counters_only_slots, arrays_mapped, handles, id_ranges,
	  table_walk_matches_step)
