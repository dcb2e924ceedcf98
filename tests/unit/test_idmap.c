// SPDX-License-Identifier: GPL-2.0
/*
 * test_idmap.c - the id -> value table (sim/base/idmap.c): lookups across growth,
 * replace, the reserved key, iteration, filter, reset, clone and fit, and the gen
 * counter that tells a caller its slot numbers went stale.
 */
#include <errno.h>

#include "../harness.h"
#include "idmap.h"

TEST(put_get_grow)
{
	struct idmap m = { 0 };
	uint64_t k;

	ASSERT_EQ(idmap_get(&m, 1, -1), -1);
	ASSERT(!idmap_find(&m, 1));
	/* 1000 keys from a 16-slot start: grows 6 times, never above half full */
	for (k = 1; k <= 1000; k++)
		ASSERT_EQ(idmap_put(&m, k << 14, (int64_t)k * 3), 0);
	ASSERT_EQU(idmap_count(&m), 1000);
	ASSERT_EQU(m.mask + 1, 2048);
	for (k = 1; k <= 1000; k++)
		ASSERT_EQ(idmap_get(&m, k << 14, -1), (int64_t)k * 3);
	ASSERT_EQ(idmap_get(&m, 1001 << 14, -1), -1);
	ASSERT_EQ(idmap_put(&m, 5 << 14, -9), 0);	/* replace */
	ASSERT_EQU(idmap_count(&m), 1000);
	ASSERT_EQ(idmap_get(&m, 5 << 14, 0), -9);
	ASSERT_EQ(idmap_put(&m, IDMAP_EMPTY, 1), -EINVAL);
	ASSERT_EQ(idmap_put(&m, 0, 7), 0);		/* 0 is a key like any other */
	ASSERT_EQ(idmap_get(&m, 0, -1), 7);
	idmap_free(&m);
	ASSERT_EQU(idmap_count(&m), 0);
	ASSERT_EQ(idmap_get(&m, 1 << 14, -1), -1);
}

static bool keep_even(const struct idmap_ent *e, void *ctx)
{
	(*(int *)ctx)++;
	return !(e->val & 1);
}

static bool keep_none(const struct idmap_ent *e, void *ctx)
{
	return false;
}

/* Keys 1..10 with value = key: the filter keeps 2, 4, ..., 10; the sum of what iteration sees. */
TEST(iterate_filter)
{
	struct idmap m = { 0 };
	struct idmap_ent *e;
	uint32_t pos = 0, gen;
	int64_t sum = 0;
	int calls = 0;
	uint64_t k;

	for (k = 1; k <= 10; k++)
		ASSERT_EQ(idmap_put(&m, k, (int64_t)k), 0);
	while ((e = idmap_next(&m, &pos)))
		sum += e->val;
	ASSERT_EQ(sum, 55);
	gen = m.gen;
	ASSERT_EQ(idmap_filter(&m, keep_even, &calls), 0);
	ASSERT_EQ(calls, 10);				/* asked once per entry */
	ASSERT(m.gen != gen);
	ASSERT_EQU(idmap_count(&m), 5);
	ASSERT_EQ(idmap_get(&m, 4, -1), 4);
	ASSERT_EQ(idmap_get(&m, 5, -1), -1);
	/* nothing goes: the table and its slots stay */
	gen = m.gen;
	ASSERT_EQ(idmap_filter(&m, keep_even, &calls), 0);
	ASSERT_EQ(calls, 15);
	ASSERT_EQU(m.gen, gen);
	/* everything goes: the table is freed */
	ASSERT_EQ(idmap_put(&m, 3, 3), 0);
	ASSERT_EQ(idmap_put(&m, 5, 5), 0);
	ASSERT_EQ(idmap_filter(&m, keep_none, NULL), 0);
	ASSERT_EQU(idmap_count(&m), 0);
	ASSERT(!m.e);
	idmap_free(&m);
}

TEST(reset_clone_gen)
{
	struct idmap m = { 0 }, c;
	uint32_t gen, slot;
	uint64_t k;

	for (k = 1; k <= 100; k++)
		ASSERT_EQ(idmap_put(&m, k, 1), 0);
	/* slots stay where they are while gen stays */
	slot = idmap_slot(&m, 42);
	gen = m.gen;
	ASSERT_EQ(idmap_put(&m, 42, 2), 0);
	ASSERT_EQ(idmap_put(&m, 101, 2), 0);
	ASSERT_EQU(m.gen, gen);
	ASSERT_EQU(idmap_slot(&m, 42), slot);
	ASSERT_EQ(m.e[slot].val, 2);

	ASSERT_EQ(idmap_clone(&c, &m), 0);
	ASSERT_EQU(idmap_count(&c), 101);
	ASSERT_EQU(idmap_slot(&c, 42), slot);		/* slot for slot */
	ASSERT_EQ(idmap_put(&c, 42, 3), 0);
	ASSERT_EQ(idmap_get(&m, 42, 0), 2);		/* a copy, not a share */

	/* reset for 3 keys shrinks to the 16-slot minimum, empty */
	ASSERT_EQ(idmap_reset(&m, 3), 0);
	ASSERT_EQU(idmap_count(&m), 0);
	ASSERT_EQU(m.mask + 1, 16);
	ASSERT_EQ(idmap_get(&m, 42, -1), -1);
	ASSERT_EQ(idmap_put(&m, 42, 5), 0);
	gen = m.gen;
	ASSERT_EQ(idmap_reset(&m, 8), 0);		/* same size: kept, cleared */
	ASSERT_EQU(m.mask + 1, 16);
	ASSERT(m.gen != gen);
	ASSERT_EQ(idmap_get(&m, 42, -1), -1);
	idmap_free(&m);
	idmap_free(&c);
	ASSERT_EQ(idmap_clone(&c, &m), 0);		/* an empty map clones to an empty map */
	ASSERT_EQU(idmap_count(&c), 0);
	idmap_free(&c);
}

/*
 * Deleting in a 16-slot table of 7 keys, one key at a time in a scrambled
 * order: every key still present stays reachable after each delete (the
 * backward shift never strands a key behind a hole, whatever the wrap), a
 * deleted key is gone, and each delete bumps gen.
 */
TEST(del_backward_shift)
{
	static const uint64_t order[] = { 3, 0, 6, 1, 5, 2, 4 };
	struct idmap m = { 0 };
	uint32_t gen;
	size_t i, j;

	for (i = 0; i < 7; i++)
		ASSERT_EQ(idmap_put(&m, i * 7919, (int64_t)i), 0);
	ASSERT_EQU(m.mask + 1, 16);
	ASSERT(!idmap_del(&m, 12345));			/* absent: nothing moves */
	for (i = 0; i < 7; i++) {
		gen = m.gen;
		ASSERT(idmap_del(&m, order[i] * 7919));
		ASSERT(m.gen != gen);
		ASSERT(!idmap_del(&m, order[i] * 7919));
		ASSERT_EQU(idmap_count(&m), 6 - i);
		for (j = i + 1; j < 7; j++)
			ASSERT_EQ(idmap_get(&m, order[j] * 7919, -1), (int64_t)order[j]);
	}
	idmap_free(&m);
	ASSERT(!idmap_del(&m, 0));			/* an unallocated map */
}

/* Many keys in a small table wrap around the end: deletes keep all others reachable. */
TEST(del_dense)
{
	struct idmap m = { 0 };
	uint64_t k, d;

	for (k = 0; k < 500; k++)
		ASSERT_EQ(idmap_put(&m, k, (int64_t)k), 0);
	for (d = 0; d < 500; d += 3) {
		ASSERT(idmap_del(&m, d));
		for (k = d + 1; k < 500; k++)
			ASSERT_EQ(idmap_get(&m, k, -1), (int64_t)k);
	}
	ASSERT_EQU(idmap_count(&m), 500 - 167);
	for (k = 0; k < 500; k += 3)
		ASSERT_EQ(idmap_get(&m, k, -1), -1);
	idmap_free(&m);
}

/*
 * idmap_fit(): 1000 keys make a 2048-slot table; deleting all but 100 leaves
 * it 1/20 full (<= 1/8): it becomes the smallest power of two at most half
 * full with 100 keys, 256 slots, every key kept, gen bumped.  At 100 keys in
 * 256 slots (> 1/8) a second fit changes nothing, nor at 32 of 256 (exactly
 * 1/8 is still fitted: 64 slots); an empty map goes to the 16-slot minimum,
 * and an unallocated one stays so.
 */
TEST(fit_shrinks)
{
	struct idmap m = { 0 };
	uint32_t gen;
	uint64_t k;

	for (k = 0; k < 1000; k++)
		ASSERT_EQ(idmap_put(&m, k, (int64_t)k + 1), 0);
	ASSERT_EQU(m.mask + 1, 2048);
	for (k = 100; k < 1000; k++)
		ASSERT(idmap_del(&m, k));
	gen = m.gen;
	ASSERT_EQ(idmap_fit(&m), 0);
	ASSERT_EQU(m.mask + 1, 256);
	ASSERT(m.gen != gen);
	ASSERT_EQU(idmap_count(&m), 100);
	for (k = 0; k < 100; k++)
		ASSERT_EQ(idmap_get(&m, k, -1), (int64_t)k + 1);
	ASSERT_EQ(idmap_get(&m, 100, -1), -1);
	gen = m.gen;
	ASSERT_EQ(idmap_fit(&m), 0);			/* 100 of 256: left */
	ASSERT_EQU(m.mask + 1, 256);
	ASSERT_EQU(m.gen, gen);
	for (k = 32; k < 100; k++)
		ASSERT(idmap_del(&m, k));
	ASSERT_EQ(idmap_fit(&m), 0);			/* 32 of 256: an eighth */
	ASSERT_EQU(m.mask + 1, 64);
	for (k = 0; k < 32; k++)
		ASSERT_EQ(idmap_get(&m, k, -1), (int64_t)k + 1);
	for (k = 0; k < 32; k++)
		ASSERT(idmap_del(&m, k));
	ASSERT_EQ(idmap_fit(&m), 0);
	ASSERT_EQU(m.mask + 1, 16);
	ASSERT_EQU(idmap_count(&m), 0);
	idmap_free(&m);
	ASSERT_EQ(idmap_fit(&m), 0);
	ASSERT(!m.e);
}

TEST_MAIN(put_get_grow, iterate_filter, reset_clone_gen, del_backward_shift, del_dense, fit_shrinks)
