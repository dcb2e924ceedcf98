// SPDX-License-Identifier: GPL-2.0
/*
 * One reader thread per CPU: drains the CPU's ring buffer a sub-buffer a
 * read(), walks each sub-buffer's records (live_page.c), decodes each
 * record with a
 * per-CPU sequence number straight into the CPU's open chunk of the event
 * store, and seals and queues the chunk when full or LIVE_SEAL_NS old.  Every
 * in-band missed-events marker is queued for the writer as a gap row.
 *
 * The cgroup table is shared with the other readers under lv->db_lock, taken
 * for cgroup_mkdir/rmdir and, with a --cgroup scope only, for each event's
 * scope test.  A cgroup_mkdir is applied by the reader of the CPU it ran on,
 * so an event of a new cgroup in scope traced on another CPU within the same
 * few microseconds may be judged before it (without --cgroup nothing is
 * filtered and the question does not arise).
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cgtrack.h"
#include "db.h"
#include "live_local.h"

static uint64_t live_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Scope filter (--cgroup): ancestors keep their flushes and lock windows only.
 * Without a scope it only drops other hierarchies' events and touches no
 * shared state; with one it runs under db_lock, since an id the table does
 * not know yet is named through the cgroup filesystem and added to it.
 */
static bool live_keep(struct live *lv, const struct mcr_event *ev)
{
	struct cgtrack *cg = lv->opts.scoped ? lv->opts.cgroups : NULL;

	switch (ev->kind) {
	case MCR_EV_LOCKED:
	case MCR_EV_UNLOCK:
	case MCR_EV_CONTENDED:
	case MCR_EV_MKDIR:
	case MCR_EV_RMDIR:
		/* other hierarchies' rstat flushes (cpu.stat on cgroup2) are not memcg's */
		if (ev->aux != lv->opts.hierarchy_id)
			return false;
		if (ev->kind == MCR_EV_MKDIR || ev->kind == MCR_EV_RMDIR)
			return !cg || cgtrack_in_scope(cg, ev->id);
		/* fall through */
	case MCR_EV_FLUSH:
		return !cg || cgtrack_in_scope(cg, ev->id) || cgtrack_is_ancestor(cg, ev->id);
	default:
		return !cg || cgtrack_in_scope(cg, ev->id);
	}
}

/* mkdir/rmdir: the table follows the hierarchy before the scope decides. */
static int live_cgroup_event(struct live *lv, const struct mcr_event *ev, const char *path,
			     int len)
{
	struct cgtrack *cg = lv->opts.cgroups;
	char *p;
	int ret;

	if (!cg || ev->aux != lv->opts.hierarchy_id)
		return 0;
	p = path ? strndup(path, len > 0 ? (size_t)len : 0) : strdup("");
	if (!p)
		return -ENOMEM;
	if (ev->kind == MCR_EV_MKDIR)
		ret = cgtrack_mkdir(cg, ev->id, p, ev->level, ev->ts);
	else
		ret = cgtrack_rmdir(cg, ev->id, p, ev->level, ev->ts);
	free(p);
	return ret < 0 ? ret : 0;
}

/* Store one decoded event in the open chunk: 1 stored, 0 filtered, or a negative error. */
static int live_store(struct live_cpu *c, struct mcr_event *ev, const char *path, int len)
{
	struct live *lv = c->lv;
	bool keep;
	int ret = 0;

	if (lv->opts.scoped || ev->kind == MCR_EV_MKDIR || ev->kind == MCR_EV_RMDIR) {
		/* the cgroup table changes under mkdir/rmdir: read it under the lock */
		pthread_mutex_lock(&lv->db_lock);
		if (ev->kind == MCR_EV_MKDIR || ev->kind == MCR_EV_RMDIR)
			ret = live_cgroup_event(lv, ev, path, len);
		keep = live_keep(lv, ev);
		pthread_mutex_unlock(&lv->db_lock);
		if (ret < 0)
			return ret;
	} else {
		keep = live_keep(lv, ev);
	}
	if (!keep)
		return 0;
	if (!c->enc.count)
		c->open_ns = live_now_ns();
	ret = db_chunk_add(&c->enc, ev);
	if (!ret && db_chunk_full(&c->enc))
		ret = live_chunk_ship(c);
	return ret < 0 ? ret : 1;
}

/*
 * --rotate: @c passes the boundary.  Its open chunk is the old file's last
 * one; the old file's sequence numbers, filtered and missed counts are kept
 * for live_rotate_end(), published by the epoch's store.
 */
static void live_epoch_advance(struct live_cpu *c)
{
	live_chunk_ship(c);
	c->done.cpu = c->cpu;
	c->done.first = c->seq_first;
	c->done.last = (int64_t)c->seq - 1;
	c->done.filtered = c->nfiltered - c->filtered_base;
	c->done_missed = atomic_load(&c->missed) - c->missed_base;
	c->seq_first = (int64_t)c->seq;
	c->filtered_base = c->nfiltered;
	c->missed_base = atomic_load(&c->missed);
	atomic_store_explicit(&c->epoch, atomic_load(&c->epoch) + 1, memory_order_release);
}

/* A rotation waits for this reader: is it due? */
static bool live_epoch_pending(struct live_cpu *c)
{
	return atomic_load_explicit(&c->lv->epoch, memory_order_acquire) !=
	       atomic_load_explicit(&c->epoch, memory_order_relaxed);
}

/* The record at @ts is the first past the boundary: the file ends before it. */
static void live_epoch_check(struct live_cpu *c, uint64_t ts)
{
	if (live_epoch_pending(c) && ts >= atomic_load(&c->lv->boundary))
		live_epoch_advance(c);
}

/*
 * Queue a gap row for the writer: put here, under db_lock, it made a reader
 * that had just lost events wait for the writer's commit (a WAL checkpoint
 * syncs), while its buffer filled.
 */
static int live_gap(struct live_cpu *c, uint64_t ts, int missed)
{
	struct live *lv = c->lv;
	int ret = 0;

	if (missed > 0)
		atomic_fetch_add_explicit(&c->missed, missed, memory_order_relaxed);
	else
		atomic_fetch_add_explicit(&c->missed_unknown, 1, memory_order_relaxed);
	pthread_mutex_lock(&lv->lock);
	if (lv->nr_gaps == lv->gaps_cap) {
		size_t cap = lv->gaps_cap ? 2 * lv->gaps_cap : 64;
		struct live_gap *g = realloc(lv->gaps, cap * sizeof(*g));

		if (g) {
			lv->gaps = g;
			lv->gaps_cap = cap;
		}
	}
	if (lv->nr_gaps < lv->gaps_cap)
		lv->gaps[lv->nr_gaps++] = (struct live_gap){
			c->cpu, atomic_load_explicit(&c->epoch, memory_order_relaxed), ts,
			missed > 0 ? missed : -1 };
	else
		ret = -ENOMEM;
	pthread_mutex_unlock(&lv->lock);
	return ret;
}

/*
 * Decode and store one sub-buffer; *@full tells whether it was full (the
 * writer had left it), not the writer's own, read before it was.  Returns
 * the records in it or a negative error.
 */
static int live_consume(struct live_cpu *c, void *page, bool *full)
{
	struct live *lv = c->lv;
	struct live_page pg;
	struct mcr_event ev;
	uint64_t ts, first = 0, last = 0, stored = 0;
	unsigned int size;
	int n = 0, ret = 0;
	const void *data;

	if (live_page_load(&pg, page, (size_t)c->page_size) < 0)
		return -EINVAL;
	/*
	 * The writer leaves a sub-buffer when a record does not fit in it, so a
	 * full one has less room left than the largest record; ours are under
	 * 100 bytes but for a cgroup path.  A wrong guess costs a syscall or a
	 * wait for the next poll, not an event.
	 */
	*full = pg.size >= (uint32_t)c->page_size / 4 * 3;
	data = live_page_next(&pg, &ts, &size);
	live_epoch_check(c, data ? ts : pg.ts);
	if (pg.missed) {
		/* the marker sits before this sub-buffer's first record */
		ret = live_gap(c, data ? ts : pg.ts, pg.missed > 0 ? (int)pg.missed : -1);
		if (ret < 0)
			goto fail;
	}
	for (; data; data = live_page_next(&pg, &ts, &size)) {
		const char *path = NULL;
		int len = 0;

		/* not ours cannot happen: only our events are enabled */
		if (!live_decode(&lv->dec, (void *)data, size, &ev, &path, &len))
			continue;
		live_epoch_check(c, ts);
		ev.ts = ts;
		c->read_ts = ts;
		ev.cpu = c->cpu;
		ev.seq = c->seq++;
		n++;
		ret = live_store(c, &ev, path, len);
		if (ret < 0)
			break;
		if (ret && c->wq)
			live_watch_push(c, &ev);
		if (ret) {
			first = first ? first : ev.ts;
			last = ev.ts;
			stored++;
		} else {
			c->nfiltered++;
		}
	}
	/* a record whose length runs past the page ends it: what follows is lost, uncounted */
	if (ret >= 0 && pg.bad)
		ret = live_gap(c, pg.ts, -1);
	/* the totals are published once a sub-buffer, not once an event */
	atomic_fetch_add_explicit(&c->records, n, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->stored, stored, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->filtered, n - stored, memory_order_relaxed);
	if (stored) {
		if (!atomic_load_explicit(&c->first_ts, memory_order_relaxed))
			atomic_store_explicit(&c->first_ts, first, memory_order_relaxed);
		atomic_store_explicit(&c->last_ts, last, memory_order_relaxed);
	}
	if (ret >= 0)
		return n;
fail:
	atomic_store(&lv->write_error, ret);
	return ret;
}

/* Seal the open chunk once its first event is LIVE_SEAL_NS old. */
static void live_seal_aged(struct live_cpu *c)
{
	if (c->enc.count && live_now_ns() - c->open_ns >= LIVE_SEAL_NS)
		live_chunk_ship(c);
}

/*
 * read() returns a whole sub-buffer swapped out of the ring buffer and
 * copied once, or the part of the writer's own sub-buffer written so far,
 * copied record by record.  Draining stops at the writer's: reading it again
 * at once would return a few records a syscall.  Not at the first read: that
 * can be the rest of a sub-buffer the last drain read part of, short but not
 * the writer's.  splice() moves whole sub-buffers without a copy, but then
 * reading them from the pipe copies them anyway, and costs a second syscall.
 */
static int live_drain(struct live_cpu *c, bool *empty)
{
	bool full = true;
	int pages = 0;

	*empty = false;
	while (full || pages == 1) {
		if (tracefs_cpu_read(c->tc, c->page, true) <= 0) {
			*empty = true;
			break;
		}
		if (live_consume(c, c->page, &full) < 0)
			return -ENOMEM;
		pages++;
		live_seal_aged(c);
	}
	return pages;
}

/*
 * --rotate: is the buffer empty, a read returning nothing?  The drain stops
 * at a sub-buffer it judged the writer's by its fill, which a misjudged one
 * could leave records behind; what this read returns is consumed, and the
 * next round looks again.
 */
static bool live_empty(struct live_cpu *c)
{
	bool full;

	if (tracefs_cpu_read(c->tc, c->page, true) <= 0)
		return true;
	live_consume(c, c->page, &full);
	return false;
}

/*
 * Sleep until the kernel says the ring buffer is LIVE_BUFFER_PERCENT full,
 * the open chunk is due to be sealed, LIVE_POLL_MAX_MS have passed, or the
 * capture stops.  A wakeup costs ~60 us of CPU on these machines: polling
 * every 20 ms was a tenth of a capture's CPU.
 */
static void live_wait(struct live_cpu *c)
{
	struct pollfd fds[2] = {
		{ .fd = c->fd, .events = POLLIN },
		{ .fd = c->lv->stop_fd, .events = POLLIN },
	};
	int ms = LIVE_POLL_MAX_MS;

	if (c->enc.count) {
		uint64_t now = live_now_ns(), due = c->open_ns + LIVE_SEAL_NS;
		uint64_t left = due > now ? (due - now + 999999) / 1000000 : 0;

		if (left < (uint64_t)ms)
			ms = (int)left;
	}
	poll(fds, 2, ms);
}

void *live_reader_main(void *arg)
{
	struct live_cpu *c = arg;
	struct live *lv = c->lv;
	bool full;

	while (!atomic_load(&lv->stop)) {
		uint64_t now = 0;
		uint64_t drain_ts = c->wq ? live_watch_now(lv) : 0;
		bool pending = live_epoch_pending(c);
		bool empty;

		/*
		 * --rotate: a buffer drained after the clock passed the boundary
		 * (by LIVE_ROTATE_SLACK_NS) holds nothing from before it; a CPU
		 * without a record since passes the boundary here.
		 */
		if (pending && live_clock_now(lv, &now) < 0)
			now = 0;
		if (live_drain(c, &empty) < 0)
			break;
		if (pending && live_epoch_pending(c) && now >= atomic_load(&lv->boundary) &&
		    now - atomic_load(&lv->boundary) >= LIVE_ROTATE_SLACK_NS && live_empty(c))
			live_epoch_advance(c);
		/*
		 * --watch: a drain that found the buffer empty read every record
		 * committed before it began; one that stopped at a sub-buffer it
		 * took for the writer's (a guess) left nothing older than the last
		 * record it read.
		 */
		if (c->wq)
			live_watch_mark(c, empty ? drain_ts : c->read_ts);
		live_seal_aged(c);
		live_wait(c);
	}
	/* tracing is off now: take what is left */
	while (tracefs_cpu_flush(c->tc, c->page) > 0)
		if (live_consume(c, c->page, &full) < 0)
			break;
	live_chunk_ship(c);
	atomic_store(&c->exited, true);
	if (c->wq)
		live_watch_mark(c, UINT64_MAX);
	return NULL;
}
