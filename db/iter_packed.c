// SPDX-License-Identifier: GPL-2.0
/*
 * iter_packed.c - the per-event merge of up to 64 CPUs by packed keys (ts and the
 * CPU's index in one u64), the least found by conditional moves.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "db_local.h"
#include "error.h"
#include "store.h"
#include "iter_local.h"

/* The heap's heads as packed keys; false (and the heap kept) if a ts does not fit. */
bool db_iter_pack(struct db_iter *it)
{
	unsigned int i;

	for (i = 0; i < it->nr_groups * DB_ITER_GROUP; i++)
		it->key[i] = UINT64_MAX;
	for (i = 0; i < it->nr_heap; i++) {
		uint64_t rel = it->heap[i].ts - it->key_base;
		unsigned int idx = (unsigned int)(it->heap[i].c - it->cpus);

		if (rel > it->key_lim) {
			it->packed = false;
			return false;
		}
		it->key[idx] = rel << DB_ITER_KEY_BITS | idx;
	}
	for (i = 0; i < it->nr_groups; i++)
		it->gmin[i] = db_iter_group_min(&it->key[i * DB_ITER_GROUP]);
	return true;
}

/*
 * Leave the packed keys for the heap, over every CPU's head: a ts beyond
 * what the index promised (a chunk that steps back in time has them).
 */
static void db_iter_unpack(struct db_iter *it)
{
	unsigned int i;

	it->packed = false;
	it->nr_heap = 0;
	for (i = 0; i < it->nr_cpus; i++) {
		struct db_iter_cpu *c = &it->cpus[i];

		if (it->key[i] != UINT64_MAX)
			it->heap[it->nr_heap++] = (struct db_iter_head){ c->ev[c->pos].ts, c->cpu, c };
	}
	db_iter_heapify(it);
}

/* The least key of all groups. */
static inline uint64_t db_iter_least(const struct db_iter *it)
{
	uint64_t k = it->gmin[0];
	unsigned int g;

	for (g = 1; g < it->nr_groups; g++)
		k = db_iter_min(k, it->gmin[g]);
	return k;
}

static inline void db_iter_regroup(struct db_iter *it, unsigned int idx)
{
	unsigned int g = idx / DB_ITER_GROUP;

	it->gmin[g] = db_iter_group_min(&it->key[g * DB_ITER_GROUP]);
}

/*
 * Hand out the head of cpus[@idx] and move it on.  Returns its next packed
 * key, UINT64_MAX if it has no events left, or 0 after leaving the packed
 * keys for the heap (a ts beyond them) or an error (it->err, sticky).
 */
static inline __attribute__((always_inline)) uint64_t db_iter_take(struct db_iter *it, unsigned int idx, struct mcr_event *ev)
{
	struct db_iter_cpu *c = &it->cpus[idx];
	uint64_t rel;
	int ret;

	*ev = c->ev[c->pos];
	ret = db_iter_advance(it, c);
	if (ret < 0) {
		it->err = ret;
		return 0;
	}
	if (!ret)
		return UINT64_MAX;
	rel = c->ev[c->pos].ts - it->key_base;
	if (__builtin_expect(rel > it->key_lim, 0)) {
		it->key[idx] = 0;	/* not UINT64_MAX: it has a head */
		it->run = false;
		db_iter_unpack(it);
		return 0;
	}
	return rel << DB_ITER_KEY_BITS | idx;
}

/*
 * Packed keys: the least key of the least group names the CPU; its next
 * key is one shift and or, and only its group's least is done again.  No
 * branch depends on which CPU comes next, which the heap's sift did at
 * every level when CPUs alternate at random, mispredicting half of them.
 * A CPU that comes twice in a row starts a run: its key is taken out, the
 * least of the others noted, and while its next key is below that, one
 * comparison an event, as for the long runs of one CPU of a recording.
 */
int db_iter_next_packed(struct db_iter *it, struct mcr_event *ev)
{
	unsigned int idx;
	uint64_t k;

	if (it->run) {
		idx = it->run_idx;
		k = db_iter_take(it, idx, ev);
		if (k < it->run_lim && k)
			return 1;
		it->run = false;
		if (k) {
			it->key[idx] = k;
			db_iter_regroup(it, idx);
		}
		return 1;
	}
	k = db_iter_least(it);
	if (k == UINT64_MAX)
		return 0;
	idx = (unsigned int)(k & (DB_ITER_KEY_CPUS - 1));
	k = db_iter_take(it, idx, ev);
	if (!k)
		return 1;
	if (idx == it->run_idx) {
		it->key[idx] = UINT64_MAX;
		db_iter_regroup(it, idx);
		it->run_lim = db_iter_least(it);
		if (k < it->run_lim) {
			it->run = true;
			return 1;
		}
	}
	it->run_idx = idx;
	it->key[idx] = k;
	db_iter_regroup(it, idx);
	return 1;
}
