// SPDX-License-Identifier: GPL-2.0
/*
 * iter_event.c - the merge event by event, where rounds do not serve: up to
 * 64 CPUs by packed keys (ts and the CPU's index in one u64, the least
 * found by conditional moves), beyond them or for a ts too far from the
 * others by a binary heap (a scan of up to DB_ITER_SCAN CPUs).
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

/*
 * Move @c past the event just handed out: its next event from the batch,
 * the chunk's next batch or the next chunk.  1: it has a head; 0: none left;
 * or the error, which the event handed out does not share (it is good: the
 * failure is returned by the next call).
 */
static inline __attribute__((always_inline)) int db_iter_advance(struct db_iter *it,
								  struct db_iter_cpu *c)
{
	if (__builtin_expect(++c->pos < c->n, 1))
		return 1;
	return db_iter_refill(it, c);
}

/* (a_ts, a_cpu) before (b_ts, b_cpu) */
static inline bool db_iter_before(uint64_t a_ts, int a_cpu, uint64_t b_ts, int b_cpu)
{
	return a_ts < b_ts || (a_ts == b_ts && a_cpu < b_cpu);
}

static inline bool db_iter_head_before(const struct db_iter_head *a, const struct db_iter_head *b)
{
	return db_iter_before(a->ts, a->cpu, b->ts, b->cpu);
}

/* Move heap[i] down to its place. */
static void db_iter_sift(struct db_iter *it, unsigned int i)
{
	struct db_iter_head *h = it->heap, x = h[i];
	unsigned int n = it->nr_heap, k;

	while ((k = 2 * i + 1) < n) {
		if (k + 1 < n && db_iter_head_before(&h[k + 1], &h[k]))
			k++;
		if (!db_iter_head_before(&h[k], &x))
			break;
		h[i] = h[k];
		i = k;
	}
	h[i] = x;
}

/* The least key below the top: the lesser of its two children. */
static void db_iter_next_key(struct db_iter *it)
{
	const struct db_iter_head *h = it->heap;

	if (it->nr_heap > 2 && db_iter_head_before(&h[2], &h[1]))
		h = &h[2];
	else if (it->nr_heap > 1)
		h = &h[1];
	else
		h = NULL;
	it->next_ts = h ? h->ts : UINT64_MAX;
	it->next_cpu = h ? h->cpu : INT32_MAX;
}

/*
 * Put the least head on top and note the next least.  A few CPUs are
 * scanned, their keys in one or two cache lines: as fast as the heap and its
 * branches predicted better, as when CPUs take turns.  Beyond, the heap.
 * The count only falls, so a scan never leaves a heap's order broken.
 */
static void db_iter_reorder(struct db_iter *it)
{
	struct db_iter_head *h = it->heap, t;
	unsigned int i, n = it->nr_heap, best = 0, next = n;

	if (n > DB_ITER_SCAN) {
		db_iter_sift(it, 0);
		db_iter_next_key(it);
		return;
	}
	/* h[n], past the last, is the sentinel that comes after every head */
	h[n] = (struct db_iter_head){ UINT64_MAX, INT32_MAX, NULL };
	for (i = 1; i < n; i++) {
		if (db_iter_head_before(&h[i], &h[best])) {
			next = best;
			best = i;
		} else if (db_iter_head_before(&h[i], &h[next])) {
			next = i;
		}
	}
	it->next_ts = h[next].ts;
	it->next_cpu = h[next].cpu;
	t = h[0];
	h[0] = h[best];
	h[best] = t;
}

void db_iter_heapify(struct db_iter *it)
{
	unsigned int i;

	for (i = it->nr_heap / 2; i-- > 0;)
		db_iter_sift(it, i);
	db_iter_next_key(it);
}

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
static int db_iter_next_packed(struct db_iter *it, struct mcr_event *ev)
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

/*
 * The store: the head of the heap's top CPU.  It stays on top, with no heap
 * work, while its next event is before the least of the others (next_ts,
 * next_cpu): one comparison an event for the long runs of one CPU of a
 * recording; a sift down the heap's log2(CPUs) levels when CPUs alternate,
 * where a scan of every CPU's head cost one cache miss per CPU.
 */
int db_iter_next_chunked(struct db_iter *it, struct mcr_event *ev)
{
	struct db_iter_head *top;
	struct db_iter_cpu *c;
	int ret;

	if (it->packed)
		return db_iter_next_packed(it, ev);
	if (!it->nr_heap)
		return 0;
	top = &it->heap[0];
	c = top->c;
	*ev = c->ev[c->pos];
	ret = db_iter_advance(it, c);
	if (ret < 0) {
		it->err = ret;
		return 1;
	}
	if (!ret) {
		*top = it->heap[--it->nr_heap];
		db_iter_reorder(it);
		return 1;
	}
	top->ts = c->ev[c->pos].ts;
	if (!db_iter_before(top->ts, top->cpu, it->next_ts, it->next_cpu)) {
		/*
		 * Many CPUs taking turns read as many streams of built batches,
		 * too many for the hardware prefetcher: fetch the next lines of
		 * the CPU left while the others are read.  A run of one CPU
		 * streams, and needs none.
		 */
		__builtin_prefetch(&c->ev[c->pos + DB_ITER_AHEAD]);
		db_iter_reorder(it);
	}
	return 1;
}
