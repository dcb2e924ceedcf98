// SPDX-License-Identifier: GPL-2.0
/*
 * The writer thread: a k-way merge of the per-CPU queues by (ts, cpu) into
 * the database.  Only events below every CPU's watermark are merged, so an
 * event that a slower reader has not decoded yet cannot be overtaken.  The
 * writer alone touches the database and the cgroup table while capturing.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "cgtrack.h"
#include "db.h"
#include "live_local.h"

#define LIVE_COMMIT_NS		1000000000ull	/* commit at least this often */
#define LIVE_WRITER_IDLE_NS	10000000

struct live_heap {
	struct mcr_event	**ev;	/* head event of each CPU in the heap */
	int			*cpu;	/* index into lv->cpus */
	int			nr;
};

static bool live_before(const struct mcr_event *a, const struct mcr_event *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->cpu < b->cpu);
}

static void live_heap_swap(struct live_heap *h, int a, int b)
{
	struct mcr_event *e = h->ev[a];
	int c = h->cpu[a];

	h->ev[a] = h->ev[b];
	h->cpu[a] = h->cpu[b];
	h->ev[b] = e;
	h->cpu[b] = c;
}

static void live_heap_push(struct live_heap *h, struct mcr_event *ev, int cpu)
{
	int i = h->nr++;

	h->ev[i] = ev;
	h->cpu[i] = cpu;
	while (i && live_before(h->ev[i], h->ev[(i - 1) / 2])) {
		live_heap_swap(h, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void live_heap_pop(struct live_heap *h)
{
	int i = 0;

	h->ev[0] = h->ev[--h->nr];
	h->cpu[0] = h->cpu[h->nr];
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i;

		if (l < h->nr && live_before(h->ev[l], h->ev[m]))
			m = l;
		if (r < h->nr && live_before(h->ev[r], h->ev[m]))
			m = r;
		if (m == i)
			break;
		live_heap_swap(h, i, m);
		i = m;
	}
}

static uint64_t live_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Scope filter (--cgroup): ancestors keep their flushes and lock windows only. */
static bool live_keep(struct live *lv, const struct mcr_event *ev)
{
	const struct cgtrack *cg = lv->opts.cgroups;

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

static int live_write_one(struct live *lv, struct mcr_event *ev, char *path)
{
	struct cgtrack *cg = lv->opts.cgroups;
	int ret = 0;

	if (ev->kind == LIVE_EV_GAP)
		return db_gap_put(lv->db, ev->cpu, ev->ts, ev->val);
	if (cg && ev->aux == lv->opts.hierarchy_id) {
		/* the table follows the hierarchy before the scope decides */
		if (ev->kind == MCR_EV_MKDIR)
			ret = cgtrack_mkdir(cg, ev->id, path ? path : "", ev->level, ev->ts);
		else if (ev->kind == MCR_EV_RMDIR)
			ret = cgtrack_rmdir(cg, ev->id, path ? path : "", ev->level, ev->ts);
		if (ret < 0)
			return ret;
	}
	if (!live_keep(lv, ev)) {
		atomic_fetch_add_explicit(&lv->filtered, 1, memory_order_relaxed);
		return 0;
	}
	ret = db_events_append(lv->db, ev);
	if (ret < 0)
		return ret;
	if (!atomic_load_explicit(&lv->stored, memory_order_relaxed))
		atomic_store(&lv->first_ts, ev->ts);
	atomic_store_explicit(&lv->last_ts, ev->ts, memory_order_relaxed);
	atomic_fetch_add_explicit(&lv->stored, 1, memory_order_relaxed);
	return 0;
}

/* One merge round up to the lowest watermark; returns events handled or -errno. */
static int live_merge_round(struct live *lv, struct live_heap *h, bool *all_done)
{
	uint64_t limit = UINT64_MAX;
	struct mcr_event *ev;
	int i, n = 0, ret;
	char *path;

	*all_done = true;
	for (i = 0; i < lv->nr_cpus; i++) {
		struct live_queue *q = &lv->cpus[i].q;
		uint64_t wm = atomic_load_explicit(&q->wm, memory_order_acquire);

		if (!atomic_load_explicit(&q->done, memory_order_acquire))
			*all_done = false;
		if (wm < limit)
			limit = wm;
	}
	h->nr = 0;
	for (i = 0; i < lv->nr_cpus; i++) {
		ev = live_queue_peek(lv, &lv->cpus[i].q, &path);
		if (ev && (ev->ts < limit || limit == UINT64_MAX))
			live_heap_push(h, ev, i);
	}
	while (h->nr) {
		struct live_queue *q;

		i = h->cpu[0];
		q = &lv->cpus[i].q;
		ev = live_queue_peek(lv, q, &path);
		ret = live_write_one(lv, ev, path);
		if (ev->kind == MCR_EV_MKDIR || ev->kind == MCR_EV_RMDIR)
			free(path);
		live_queue_advance(q);
		if (ret < 0)
			return ret;
		n++;
		live_heap_pop(h);
		ev = live_queue_peek(lv, q, &path);
		if (ev && (ev->ts < limit || limit == UINT64_MAX))
			live_heap_push(h, ev, i);
	}
	return n;
}

void *live_writer_main(void *arg)
{
	struct live *lv = arg;
	struct live_heap h = { 0 };
	uint64_t last_commit = live_mono_ns(), now;
	bool all_done = false;
	int ret = 0;

	h.ev = calloc(lv->nr_cpus, sizeof(*h.ev));
	h.cpu = calloc(lv->nr_cpus, sizeof(*h.cpu));
	if (!h.ev || !h.cpu) {
		ret = -ENOMEM;
		goto out;
	}
	for (;;) {
		ret = live_merge_round(lv, &h, &all_done);
		if (ret < 0)
			break;
		now = live_mono_ns();
		if (now - last_commit >= LIVE_COMMIT_NS) {
			/* a short capture killed early still keeps what it read */
			ret = db_events_commit(lv->db);
			if (ret < 0)
				break;
			last_commit = now;
		}
		if (all_done) {
			/* readers were done before this round: nothing can follow it */
			ret = live_merge_round(lv, &h, &all_done);
			break;
		}
		if (!ret) {
			struct timespec ts = { 0, LIVE_WRITER_IDLE_NS };

			nanosleep(&ts, NULL);
		}
	}
out:
	if (ret < 0)
		atomic_store(&lv->write_error, ret);
	else
		atomic_store(&lv->write_error, db_events_commit(lv->db));
	free(h.ev);
	free(h.cpu);
	return NULL;
}
