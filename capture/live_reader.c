// SPDX-License-Identifier: GPL-2.0
/*
 * One reader thread per CPU: drains the CPU's ring buffer (whole sub-buffers
 * through splice, then the partial one by read()), decodes each record into
 * the CPU's queue with a per-CPU sequence number, and turns every in-band
 * missed-events marker into a gap marker in the same queue.
 *
 * Watermark: after publishing a sub-buffer the reader stores the ts of its
 * last record; once the buffer is empty it may raise it to the highest ts any
 * reader had published before the empty read, since a record committed later
 * carries a later time.  The writer merges only below the lowest watermark.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "live_local.h"

#define LIVE_POLL_NS	20000000	/* idle poll: bounds the merge delay */

static int live_consume(struct live_cpu *c, void *page)
{
	struct live *lv = c->lv;
	struct live_queue *q = &c->q;
	unsigned long long ts;
	struct mcr_event *ev;
	uint64_t last = 0;
	int missed, n = 0;
	char **pathp;
	void *data;

	if (kbuffer_load_subbuffer(c->kb, page) < 0)
		return -EINVAL;
	data = kbuffer_read_event(c->kb, &ts);
	missed = kbuffer_missed_events(c->kb);
	if (missed) {
		/* the marker sits before this sub-buffer's first record */
		ev = live_queue_slot(lv, q, &pathp);
		if (!ev)
			return -ENOMEM;
		memset(ev, 0, sizeof(*ev));
		ev->kind = LIVE_EV_GAP;
		ev->cpu = c->cpu;
		ev->ts = data ? ts : kbuffer_timestamp(c->kb);
		ev->val = missed;
		if (missed > 0)
			atomic_fetch_add_explicit(&c->missed, missed, memory_order_relaxed);
		else
			atomic_fetch_add_explicit(&c->missed_unknown, 1, memory_order_relaxed);
	}
	for (; data; data = kbuffer_next_event(c->kb, &ts)) {
		const char *path = NULL;
		int len = 0;

		ev = live_queue_slot(lv, q, &pathp);
		if (!ev)
			return -ENOMEM;
		if (!live_decode(&lv->dec, data, (unsigned int)kbuffer_event_size(c->kb), ev, &path,
				 &len)) {
			/* not ours (cannot happen: only our events are enabled); reuse the slot */
			q->tail_pos--;
			continue;
		}
		ev->ts = ts;
		ev->cpu = c->cpu;
		ev->seq = c->seq++;
		*pathp = NULL;
		if (ev->kind == MCR_EV_MKDIR || ev->kind == MCR_EV_RMDIR)
			*pathp = path ? strndup(path, len > 0 ? (size_t)len : 0) : NULL;
		last = ts;
		n++;
	}
	live_queue_publish(q);
	if (n) {
		atomic_fetch_add_explicit(&c->records, n, memory_order_relaxed);
		atomic_store_explicit(&q->wm, last, memory_order_release);
		live_atomic_max(&lv->global_max_ts, last);
	}
	return n;
}

/* Whole sub-buffers first: splice moves pages without copying them. */
static int live_drain_full(struct live_cpu *c)
{
	int r, pages = 0;

	while ((r = tracefs_cpu_buffered_read(c->tc, c->page, true)) > 0) {
		if (live_consume(c, c->page) < 0)
			return -ENOMEM;
		pages++;
	}
	return pages;
}

static void live_idle_wait(struct live *lv)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += LIVE_POLL_NS;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&lv->lock);
	if (!atomic_load(&lv->stop))
		pthread_cond_timedwait(&lv->wake, &lv->lock, &until);
	pthread_mutex_unlock(&lv->lock);
}

void *live_reader_main(void *arg)
{
	struct live_cpu *c = arg;
	struct live *lv = c->lv;
	uint64_t seen;
	int r;

	while (!atomic_load(&lv->stop)) {
		if (live_drain_full(c) < 0)
			break;
		/* the splice pipe is empty now, so a plain read cannot reorder pages */
		seen = atomic_load(&lv->global_max_ts);
		r = tracefs_cpu_read(c->tc, c->page, true);
		if (r > 0) {
			if (live_consume(c, c->page) < 0)
				break;
		} else {
			live_atomic_max(&c->q.wm, seen);
		}
		live_idle_wait(lv);
	}
	/* tracing is off now: take what is left, whole pages then the partial one */
	live_drain_full(c);
	while (tracefs_cpu_flush(c->tc, c->page) > 0)
		if (live_consume(c, c->page) < 0)
			break;
	live_queue_publish(&c->q);
	atomic_store(&c->q.wm, UINT64_MAX);
	atomic_store_explicit(&c->q.done, true, memory_order_release);
	return NULL;
}
