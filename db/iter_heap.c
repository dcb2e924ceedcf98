// SPDX-License-Identifier: GPL-2.0
/*
 * iter_heap.c - the per-event merge by a heap of the CPUs' heads (a scan of up to
 * DB_ITER_SCAN CPUs), for more than 64 CPUs or a ts too far from the others
 * for the packed keys; db_iter_next_chunked() hands out by the packed keys
 * while they hold.
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

	if (!it->primed && (ret = db_iter_prime(it)) < 0)
		return ret;
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
