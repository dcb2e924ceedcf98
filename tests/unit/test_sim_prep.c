// SPDX-License-Identifier: GPL-2.0
/*
 * test_sim_prep.c - the two-phase update (sim_update_prepare() and
 * sim_update_apply()) leaves the very machine sim_update() leaves, whatever
 * runs between the two phases: updates that make the slot, line or memcg
 * the handle did not find, cgroups added (the tables grow and move),
 * flushes and windows (the memcgs' flushable and calm states change).
 */
#include <errno.h>
#include <string.h>

#include "../harness.h"
#include "sim.h"
#include "sim_new.h"

#define NR_CPUS	4
#define NR_IDS	48

/* sim_update() through a handle prepared earlier, as replay's callers do */
static int prep_apply(struct sim *s, struct sim_prep h, uint64_t ts, unsigned int cpu,
		      uint64_t id, enum sim_item_kind kind, int item, int64_t val)
{
	if (sim_prep_ok(h))
		return sim_update_apply(s, h, ts, val);
	return sim_update(s, ts, cpu, id, kind, item, val);
}

/* Every counter, cost count, memcg's and line's staleness of @a and @b agree. */
static void machines_equal(struct test_ctx *t, struct sim *a, struct sim *b, uint64_t now)
{
	struct sim_cost ca, cb;
	uint64_t id;
	unsigned int cpu;
	int item, kind;

	sim_cost_get(a, &ca);
	sim_cost_get(b, &cb);
	ASSERT(!memcmp(&ca, &cb, sizeof(ca)));
	ASSERT_EQU(sim_cgroup_count(a), sim_cgroup_count(b));
	for (id = 1; id <= NR_IDS + 2; id++) {
		struct sim_cgroup_stats sa, sb;

		ASSERT_EQ(sim_cgroup_known(a, id), sim_cgroup_known(b, id));
		if (!sim_cgroup_known(a, id))
			continue;
		ASSERT_EQU(sim_cgroup_parent(a, id), sim_cgroup_parent(b, id));
		ASSERT_EQ(sim_stats_updates(a, id), sim_stats_updates(b, id));
		for (cpu = 0; cpu < NR_CPUS; cpu++)
			ASSERT_EQU(sim_pcpu_stats_updates(a, id, cpu),
				   sim_pcpu_stats_updates(b, id, cpu));
		ASSERT_EQ(sim_cgroup_stats_get(a, id, now, &sa), 0);
		ASSERT_EQ(sim_cgroup_stats_get(b, id, now, &sb), 0);
		ASSERT(!memcmp(&sa, &sb, sizeof(sa)));
		for (kind = SIM_ITEM_STATE; kind <= SIM_ITEM_EVENT; kind += 2)
			for (item = 0; item < 8; item++) {
				struct sim_item_stats la, lb;
				int ra = sim_item_stats_get(a, id, kind, item, now, &la);

				ASSERT_EQ(ra, sim_item_stats_get(b, id, kind, item, now, &lb));
				if (!ra)
					ASSERT(!memcmp(&la, &lb, sizeof(la)));
			}
	}
}

/*
 * A pseudo-random trace applied to @a two-phase (each update prepared while
 * the event before it is applied, with cgroups added, removed and flushed
 * in between) and to @b by sim_update(): the same machine.
 */
static void script(struct test_ctx *t, struct sim *a, struct sim *b, uint64_t seed)
{
	struct { unsigned int cpu; uint64_t id; enum sim_item_kind kind; int item; int64_t val; } ev, nx;
	struct sim_prep h, nh;
	uint64_t x = seed, ts;
	unsigned int added = 0, resolved = 0;

#define NEXT() do {								\
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;	\
		nx.cpu = (x >> 8) % NR_CPUS;					\
		nx.id = ((x >> 20) % NR_IDS) + 1;				\
		nx.kind = (enum sim_item_kind)((x >> 28) % 3);			\
		nx.item = (int)((x >> 30) % 8);					\
		nx.val = (int64_t)((x >> 40) % 97) - 40;			\
	} while (0)
	NEXT();
	h = sim_update_prepare(a, nx.cpu, nx.id, nx.kind, nx.item);
	for (ts = 1; ts < 30000; ts++) {
		ev = nx;
		NEXT();
		nh = sim_update_prepare(a, nx.cpu, nx.id, nx.kind, nx.item);
		/* between the prepare of ev and its apply */
		if ((x >> 58) == 0) {
			uint64_t id = ((x >> 12) % NR_IDS) + 1;

			if (sim_flush_request(a, ts, id, (x >> 50) & 1) > 0)
				ASSERT_EQ(sim_flush(a, ts, id), 0);
			if (sim_flush_request(b, ts, id, (x >> 50) & 1) > 0)
				ASSERT_EQ(sim_flush(b, ts, id), 0);
		} else if ((x >> 58) == 1 && added < NR_IDS) {
			/* an id later updates name, under one added before */
			uint64_t id = NR_IDS - added, parent = added ? id + 1 + (x >> 13) % added : 1;

			added++;
			if (!sim_cgroup_known(a, id)) {
				ASSERT_EQ(sim_cgroup_add(a, ts, id, parent), 0);
				ASSERT_EQ(sim_cgroup_add(b, ts, id, parent), 0);
			}
		} else if ((x >> 58) == 2) {
			uint64_t id = ((x >> 12) % NR_IDS) + 1;

			ASSERT_EQ(sim_cgroup_remove(a, ts, id), sim_cgroup_remove(b, ts, id));
		}
		resolved += sim_prep_ok(h);
		ASSERT_EQ(prep_apply(a, h, ts, ev.cpu, ev.id, ev.kind, ev.item, ev.val),
			  sim_update(b, ts, ev.cpu, ev.id, ev.kind, ev.item, ev.val));
		h = nh;
		if (t->failed)
			return;
	}
#undef NEXT
	/* most went through a handle, some (new memcgs, slots, lines) not */
	ASSERT(resolved > 25000 && resolved < 29999);
	machines_equal(t, a, b, ts);
}

TEST(prep_matches_update)
{
	size_t k;
	uint64_t seed;

	for (k = 0; sim_policy_at(k); k++)
		for (seed = 1; seed <= 3; seed++) {
			struct sim *a = sim_new(sim_policy_at(k), NR_CPUS, NR_CPUS);
			struct sim *b = sim_new(sim_policy_at(k), NR_CPUS, NR_CPUS);

			ASSERT(a && b);
			script(t, a, b, seed);
			sim_destroy(a);
			sim_destroy(b);
			if (t->failed)
				return;
		}
}

/* A few updates that make the root and 2 flushable: calm, their shares deferred. */
static void warm(struct test_ctx *t, struct sim *s)
{
	unsigned int i;

	ASSERT_EQ(sim_cgroup_add(s, 0, 2, 1), 0);
	ASSERT_EQ(sim_cgroup_add(s, 0, 3, 2), 0);
	for (i = 0; i < 40; i++)
		ASSERT_EQ(sim_update(s, 1 + i, i % 2, 3, SIM_ITEM_STATE, (int)(i % 3), 64), 0);
}

/*
 * Each operation that changes the tables or the states between a prepare
 * and its apply, against a simulator fed the same calls with sim_update():
 * a handle whose answer went stale (an unresolved one applied as it was,
 * or one that kept a pointer into a table that moved, or a state the
 * operation changed) leaves another machine.
 */
TEST(prep_then_change)
{
	enum { ADD_PARENT, SLOT_MADE, LINE_MADE, FLUSH, WINDOW, TABLES_GROW, NR_OPS };
	unsigned int op, i;

	for (op = 0; op < NR_OPS; op++) {
		struct sim *a = sim_new(sim_policy_find("break"), NR_CPUS, NR_CPUS);
		struct sim *b = sim_new(sim_policy_find("break"), NR_CPUS, NR_CPUS);
		uint64_t id = op == ADD_PARENT ? 7 : 3;
		unsigned int cpu = op == SLOT_MADE ? 3 : 0;
		int item = op == LINE_MADE ? 6 : 1;
		struct sim_prep h;
		struct sim *s;

		ASSERT(a && b);
		warm(t, a);
		warm(t, b);
		h = sim_update_prepare(a, cpu, id, SIM_ITEM_STATE, item);
		ASSERT_EQ(sim_prep_ok(h), op != ADD_PARENT && op != SLOT_MADE && op != LINE_MADE);
		for (s = a; s; s = s == a ? b : NULL) {
			switch (op) {
			case ADD_PARENT:	/* 7 was unknown: now under 3, not the root */
				ASSERT_EQ(sim_cgroup_add(s, 50, 7, 3), 0);
				break;
			case SLOT_MADE:		/* (3, cpu 3) made by another update */
			case LINE_MADE:		/* line 6 made by another update */
				ASSERT_EQ(sim_update(s, 50, cpu, id, SIM_ITEM_STATE, item, -3), 0);
				break;
			case FLUSH:		/* 3, 2 and the root visited: no longer flushable */
				ASSERT_EQ(sim_flush_request(s, 50, 1, true), 1);
				ASSERT_EQ(sim_flush(s, 50, 1), 0);
				break;
			case WINDOW:		/* a window open over the apply */
				ASSERT_EQ(sim_flush_request(s, 50, 1, true), 1);
				ASSERT_EQ(sim_window_begin(s, 50, 1, 1), 0);
				break;
			case TABLES_GROW:	/* nodes, paths and slots reallocated */
				for (i = 0; i < 300; i++) {
					ASSERT_EQ(sim_cgroup_add(s, 50, 100 + i, 3), 0);
					ASSERT_EQ(sim_update(s, 50, i % NR_CPUS, 100 + i,
							     SIM_ITEM_EVENT, (int)(i % 5), 1), 0);
				}
				break;
			}
		}
		ASSERT_EQ(prep_apply(a, h, 60, cpu, id, SIM_ITEM_STATE, item, 9), 0);
		ASSERT_EQ(sim_update(b, 60, cpu, id, SIM_ITEM_STATE, item, 9), 0);
		if (op == WINDOW) {
			ASSERT_EQ(sim_window_end(a, 70), 0);
			ASSERT_EQ(sim_window_end(b, 70), 0);
		}
		ASSERT_EQ(sim_update(a, 80, 1, 2, SIM_ITEM_STATE, 2, 5), 0);
		ASSERT_EQ(sim_update(b, 80, 1, 2, SIM_ITEM_STATE, 2, 5), 0);
		machines_equal(t, a, b, 90);
		sim_destroy(a);
		sim_destroy(b);
		if (t->failed)
			return;
	}
}

/* A handle that resolved nothing is not applied; one resolved is for its own update. */
TEST(prep_unresolved)
{
	struct sim *s = sim_new(sim_policy_find("continue"), 2, 2);
	struct sim_prep h;

	ASSERT(s);
	h = sim_update_prepare(s, 0, 5, SIM_ITEM_STATE, 0);	/* unknown memcg */
	ASSERT(!sim_prep_ok(h));
	ASSERT_EQ(sim_update_apply(s, h, 1, 4), -EINVAL);
	ASSERT_EQ(sim_update(s, 1, 0, 5, SIM_ITEM_STATE, 0, 4), 0);
	ASSERT(!sim_prep_ok(sim_update_prepare(s, 2, 5, SIM_ITEM_STATE, 0)));	/* bad cpu */
	ASSERT(!sim_prep_ok(sim_update_prepare(s, 0, 5, 7, 0)));		/* bad kind */
	ASSERT(!sim_prep_ok(sim_update_prepare(s, 1, 5, SIM_ITEM_STATE, 0)));	/* no slot */
	ASSERT(!sim_prep_ok(sim_update_prepare(s, 0, 5, SIM_ITEM_EVENT, 0)));	/* no line */
	ASSERT(!sim_prep_ok(sim_update_prepare(s, 0, 5, SIM_ITEM_STATE, -1)));
	/* LRUVEC and STATE updates of one idx are one line */
	h = sim_update_prepare(s, 0, 5, SIM_ITEM_LRUVEC, 0);
	ASSERT(sim_prep_ok(h));
	ASSERT_EQ(sim_update_apply(s, h, 2, 0), 0);		/* val 0: nothing */
	ASSERT_EQ(sim_update_apply(s, h, 2, 3), 0);
	ASSERT_EQU(sim_pcpu_stats_updates(s, 5, 0), 7);
	sim_destroy(s);
}

TEST_MAIN(prep_matches_update, prep_then_change, prep_unresolved)
