// SPDX-License-Identifier: GPL-2.0
/*
 * --watch: the readers' events, as they store them, to one consumer in the
 * process, merged in the order the database's reader merges them (db/iter.c:
 * by ts, then CPU, each CPU's in ring-buffer order).
 *
 * One single-producer single-consumer ring per CPU (its size: live.h).  The reader writes an
 * event into its ring as it stores it and publishes its tail once a
 * sub-buffer (live_watch_mark()), with the time up to which its ring buffer
 * is drained; it reads the consumer's head only when its last look said the
 * ring was full.  It never waits: a full ring sets watch_overflow, and from
 * then on no reader queues anything and the consumer is told.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgtrack.h"
#include "error.h"
#include "live_local.h"

static const struct { const char *name; clockid_t id; } watch_clocks[] = {
	{ "mono", CLOCK_MONOTONIC }, { "mono_raw", CLOCK_MONOTONIC_RAW },
	{ "boot", CLOCK_BOOTTIME }, { "tai", CLOCK_TAI },
};

#define WATCH_NR_CLOCKS	(sizeof(watch_clocks) / sizeof(watch_clocks[0]))

static unsigned int watch_clock_find(const char *clock)
{
	unsigned int i;

	for (i = 0; i < WATCH_NR_CLOCKS; i++)
		if (!strcmp(clock, watch_clocks[i].name))
			break;
	return i;
}

bool live_watch_clock_ok(const char *clock)
{
	return watch_clock_find(clock) < WATCH_NR_CLOCKS;
}

int live_watch_enable(struct live *lv)
{
	unsigned int i = watch_clock_find(lv->opts.clock);
	uint32_t size;
	int k;

	if (i == WATCH_NR_CLOCKS)
		return -MCR_E_BAD_INPUT;
	lv->watch_clock = watch_clocks[i].id;
	atomic_store(&lv->watch_overflow_cpu, -1);
	size = LIVE_WATCH_QUEUE_MAX;
	while (size > LIVE_WATCH_QUEUE_MIN && size * (uint64_t)lv->nr_cpus > LIVE_WATCH_BUDGET)
		size /= 2;
	lv->watch_queue = size;
	for (k = 0; k < lv->nr_cpus; k++) {
		struct live_watchq *q = aligned_alloc(64, (sizeof(*q) + 63) / 64 * 64);

		if (!q)
			return -ENOMEM;
		memset(q, 0, sizeof(*q));
		q->mask = size - 1;
		q->buf = malloc(size * sizeof(*q->buf));
		if (!q->buf) {
			free(q);
			return -ENOMEM;
		}
		lv->cpus[k].wq = q;
	}
	lv->watching = true;
	return 0;
}

void live_watch_free(struct live *lv)
{
	int k;

	for (k = 0; k < lv->nr_cpus; k++) {
		if (!lv->cpus[k].wq)
			continue;
		free(lv->cpus[k].wq->buf);
		free(lv->cpus[k].wq);
		lv->cpus[k].wq = NULL;
	}
}

uint64_t live_watch_now(const struct live *lv)
{
	struct timespec ts;

	clock_gettime(lv->watch_clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void live_watch_push(struct live_cpu *c, const struct mcr_event *ev)
{
	struct live_watchq *q = c->wq;
	struct live *lv = c->lv;

	if (atomic_load_explicit(&lv->watch_overflow, memory_order_relaxed))
		return;
	if (q->put - q->head_seen > q->mask) {
		q->head_seen = atomic_load_explicit(&q->head, memory_order_acquire);
		if (q->put - q->head_seen > q->mask) {
			int none = -1;

			/* the first CPU to overflow names it */
			if (atomic_compare_exchange_strong(&lv->watch_overflow_cpu, &none, c->cpu))
				atomic_store(&lv->watch_overflow_ts, ev->ts);
			atomic_store_explicit(&lv->watch_overflow, true, memory_order_release);
			return;
		}
	}
	q->buf[q->put & q->mask] = *ev;
	q->put++;
	q->queued++;
}

void live_watch_mark(struct live_cpu *c, uint64_t ts)
{
	struct live_watchq *q = c->wq;

	atomic_store_explicit(&q->tail, q->put, memory_order_release);
	if (ts != UINT64_MAX)
		ts = ts > LIVE_WATCH_SLACK_NS ? ts - LIVE_WATCH_SLACK_NS : 0;
	/* only forward: a reader's clock never runs back, but the slack is taken off */
	if (ts > atomic_load_explicit(&q->drained, memory_order_relaxed))
		atomic_store_explicit(&q->drained, ts, memory_order_release);
}

int live_watch_next(struct live *lv, struct mcr_event *ev)
{
	struct live_watchq *best = NULL;
	uint64_t lim = UINT64_MAX, best_ts = 0;
	bool ended = true;
	int k;

	if (atomic_load_explicit(&lv->watch_overflow, memory_order_acquire))
		return -ENOBUFS;
	/* lv->cpus[] is in CPU order: the first of equal ts is the lower CPU */
	for (k = 0; k < lv->nr_cpus; k++) {
		struct live_watchq *q = lv->cpus[k].wq;
		uint64_t drained;

		if (q->take == q->tail_seen) {
			/* drained first: every event below it was published before it */
			drained = atomic_load_explicit(&q->drained, memory_order_acquire);
			q->tail_seen = atomic_load_explicit(&q->tail, memory_order_acquire);
			if (q->take == q->tail_seen) {
				if (drained != UINT64_MAX)
					ended = false;
				if (drained < lim)
					lim = drained;
				continue;
			}
		}
		ended = false;
		if (!best || q->buf[q->take & q->mask].ts < best_ts) {
			best = q;
			best_ts = q->buf[q->take & q->mask].ts;
		}
	}
	if (!best)
		return ended ? 0 : -EAGAIN;
	/* an empty CPU may still deliver an event at its drained time or later */
	if (best_ts >= lim)
		return -EAGAIN;
	*ev = best->buf[best->take & best->mask];
	best->take++;
	atomic_store_explicit(&best->head, best->take, memory_order_release);
	lv->watch_taken++;
	return 1;
}

void live_watch_totals(struct live *lv, struct live_watch_totals *t)
{
	int k;

	memset(t, 0, sizeof(*t));
	/* the readers' counts are final once they ended (live_stop()) */
	for (k = 0; k < lv->nr_cpus; k++)
		if (lv->cpus[k].wq)
			t->queued += lv->cpus[k].wq->queued;
	t->taken = lv->watch_taken;
	t->queue = lv->watch_queue;
	t->overflow = atomic_load(&lv->watch_overflow);
	t->overflow_cpu = atomic_load(&lv->watch_overflow_cpu);
	t->overflow_ts = atomic_load(&lv->watch_overflow_ts);
}

int live_cgroup_info(struct live *lv, uint64_t id, uint64_t *parent, char *path, size_t len)
{
	int ret;

	if (!lv->opts.cgroups)
		return -ENOENT;
	pthread_mutex_lock(&lv->db_lock);
	ret = cgtrack_info(lv->opts.cgroups, id, parent, path, len);
	pthread_mutex_unlock(&lv->db_lock);
	return ret;
}
