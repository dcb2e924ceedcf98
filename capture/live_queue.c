// SPDX-License-Identifier: GPL-2.0
/*
 * Per-CPU queues between a reader and the writer: a singly linked list of
 * chunks, one producer and one consumer, no locks.  The reader never waits for
 * the writer except when its own queue is over its share of the memory cap:
 * then the ring buffer absorbs the burst and any loss shows in the stats.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "live_local.h"

#define LIVE_QUEUE_DEFAULT_MAX	(256ul << 20)

/*
 * Reuse before malloc.  Only the writer pushes and only the reader pops, so
 * a popped chunk cannot come back between the load and the exchange (no ABA).
 */
static struct live_chunk *live_chunk_alloc(struct live_queue *q)
{
	struct live_chunk *c = atomic_load_explicit(&q->spare, memory_order_acquire);

	while (c && !atomic_compare_exchange_weak_explicit(&q->spare, &c,
			atomic_load_explicit(&c->next, memory_order_relaxed),
			memory_order_acquire, memory_order_acquire))
		;
	if (!c)
		c = malloc(sizeof(*c));
	if (!c)
		return NULL;
	atomic_init(&c->next, NULL);
	atomic_init(&c->count, 0);
	atomic_fetch_add(&q->chunks, 1);
	return c;
}

int live_queue_init(struct live_queue *q)
{
	atomic_init(&q->chunks, 0);
	atomic_init(&q->spare, NULL);
	atomic_init(&q->wm, 0);
	atomic_init(&q->done, false);
	q->tail = q->head = live_chunk_alloc(q);
	q->tail_pos = q->head_pos = 0;
	return q->tail ? 0 : -ENOMEM;
}

static bool live_queue_over_cap(struct live *lv, struct live_queue *q)
{
	size_t max = lv->opts.queue_max ? lv->opts.queue_max : LIVE_QUEUE_DEFAULT_MAX;
	size_t share = max / (size_t)(lv->nr_cpus > 0 ? lv->nr_cpus : 1);

	return (size_t)atomic_load_explicit(&q->chunks, memory_order_relaxed) *
	       sizeof(struct live_chunk) > share;
}

/*
 * live_queue_slot - the next free event slot of @q, for the reader.  The slot
 * becomes visible to the writer at the next live_queue_publish().  Returns NULL
 * only when out of memory.
 */
struct mcr_event *live_queue_slot(struct live *lv, struct live_queue *q, char ***path)
{
	struct live_chunk *c;

	if (q->tail_pos == LIVE_CHUNK_EVENTS) {
		/* a waiting reader must not hold back the writer's watermark */
		while (live_queue_over_cap(lv, q) && !atomic_load(&lv->stop)) {
			struct timespec ts = { 0, 2000000 };

			live_queue_publish(q);
			live_atomic_max(&q->wm, q->tail->ev[LIVE_CHUNK_EVENTS - 1].ts);
			nanosleep(&ts, NULL);
		}
		c = live_chunk_alloc(q);
		if (!c)
			return NULL;
		atomic_store_explicit(&q->tail->count, LIVE_CHUNK_EVENTS, memory_order_release);
		atomic_store_explicit(&q->tail->next, c, memory_order_release);
		q->tail = c;
		q->tail_pos = 0;
	}
	*path = &q->tail->path[q->tail_pos];
	return &q->tail->ev[q->tail_pos++];
}

/* live_queue_publish - make every filled slot visible to the writer. */
void live_queue_publish(struct live_queue *q)
{
	atomic_store_explicit(&q->tail->count, q->tail_pos, memory_order_release);
}

static void live_chunk_recycle(struct live_queue *q, struct live_chunk *c)
{
	struct live_chunk *top = atomic_load_explicit(&q->spare, memory_order_relaxed);

	atomic_fetch_sub(&q->chunks, 1);
	do
		atomic_store_explicit(&c->next, top, memory_order_relaxed);
	while (!atomic_compare_exchange_weak_explicit(&q->spare, &top, c, memory_order_release,
						      memory_order_relaxed));
}

struct mcr_event *live_queue_peek(struct live *lv, struct live_queue *q, char **path)
{
	struct live_chunk *next;

	for (;;) {
		unsigned int n = atomic_load_explicit(&q->head->count, memory_order_acquire);

		if (q->head_pos < n) {
			*path = q->head->path[q->head_pos];
			return &q->head->ev[q->head_pos];
		}
		if (q->head_pos < LIVE_CHUNK_EVENTS)
			return NULL;
		next = atomic_load_explicit(&q->head->next, memory_order_acquire);
		if (!next)
			return NULL;
		live_chunk_recycle(q, q->head);
		q->head = next;
		q->head_pos = 0;
	}
}

void live_queue_advance(struct live_queue *q)
{
	q->head_pos++;
}

/* After both threads are gone: free what is left, paths included. */
void live_queue_free(struct live *lv, struct live_queue *q)
{
	struct live_chunk *c = q->head, *next;
	unsigned int i, n;

	for (i = q->head_pos; c; c = next, i = 0) {
		n = atomic_load(&c->count);
		for (; i < n; i++)
			if (c->ev[i].kind == MCR_EV_MKDIR || c->ev[i].kind == MCR_EV_RMDIR)
				free(c->path[i]);
		next = atomic_load(&c->next);
		free(c);
	}
	for (c = atomic_load(&q->spare); c; c = next) {
		next = atomic_load(&c->next);
		free(c);
	}
	q->head = q->tail = NULL;
}
