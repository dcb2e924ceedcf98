// SPDX-License-Identifier: GPL-2.0
/*
 * workers.c - each run's simulator on its own thread, fed from the one
 * decoded stream.
 *
 * The pass (engine.c) decodes every event once.  An update that needs no
 * shared decision (no series sample due, its cgroup known to the
 * simulators, no validation or inference, and no run's window kept open
 * past its unlock) has its shared half done by the pass right away (cgroup,
 * window hook, counters, the model's look at the order, the series lines it
 * makes) and its per-run half queued in a block: the visits the model puts
 * before it (window_before_event_run(), window_update_run()), sim_update()
 * (whose simulator keeps the series' ranges, sim_watch()), and the run's
 * new and visited series lines.
 * Those touch only the run's simulator, window and series entries.  A
 * waiting read does not stop it: whether a read's flush is over changes only at the flush and lock
 * events (window.c's pending flushes), when a window kept open past its
 * unlock closes (the inferred model's: nothing is queued while one is) and
 * when a window whose unlock was lost closes (nothing is queued while one
 * is open), so no queued update could end one.
 * A lock or unlock event that continues a flush in progress goes the same
 * way (window_take(): the kernel window's bookkeeping by the pass, each
 * run's window opened or ended by the run), so the runs do not stop at each
 * of a flush's per-CPU windows; so does the flush's last unlock, each run
 * ending its own read of it.  A flush request that neither closes another
 * nor is forced goes too (reads_take()): the pass counts it and makes its
 * pending flush, each run decides, reads, flushes at once if it must, and
 * ends its read unless the request's windows hold it.  Each run keeps which
 * requests it flushes at (win.rgo) and its waiting reads (struct
 * reads_run), so nothing the pass reads waits for their decisions.  Blocks
 * are small and sit in a ring; every run consumes every block in order, on
 * its own thread (the pass's included, when it waits for room), so three
 * runs keep two cores busy while the pass decodes, and a single run, if
 * asked, has a thread of its own: the pass decodes and does the shared
 * halves while it applies.  A series sample goes too: each run takes its
 * values, the pass makes the rows as the block is delivered.  Any other
 * event first drains the ring: the pass then goes on serially, as with one
 * thread.
 *
 * The rows the queued events make, stranded episodes and reads, a run keeps
 * per block (rows.c), and the pass's thread hands them to the sink in the
 * order one thread would have made them.  So the rows are the same for any
 * thread count.
 *
 * Owns the threads and the ring; never prints.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "replay-local.h"

#define WK_BLOCK	256	/* events per block: the runs start on it early */
#define WK_RING		32	/* blocks in flight */
#define WK_SPIN		2048	/* pauses a thread spins before it sleeps */

/*
 * A queued event: what a run's thread reads of every one, a cache line
 * (the blocks cross from the pass's core to the runs').  The rest, read
 * for some only, sits in arrays of the block beside.
 */
struct wk_ev {
	struct mcr_event	ev;	/* an update, or a lock or unlock (wk_block.op) */
	struct rcg		*c;	/* an update's cgroup */
};

struct wk_block {
	struct wk_ev		ev[WK_BLOCK];
	/* a lock, unlock, flush request or sample's per-run half */
	struct win_op		op[WK_BLOCK];
	/* an update's model half for the runs (window_update_shared()), if upd_run */
	struct model_upd	upd[WK_BLOCK];
	bool			upd_run[WK_BLOCK];
	/* the series lines an update made, hits.v[hit0..]; unused with own_series */
	uint32_t		hit0[WK_BLOCK], nr_hits[WK_BLOCK];
	uint32_t		nr;
	struct rser_hits	hits;			/* the series lines the events made */
	struct rows_list	eps[REPLAY_MAX_RUNS];	/* per run */
	/* a series sample among its events (at most one): its index, each run's values */
	bool			sampled;
	uint64_t		sample_k;
	struct series_vals	svals[REPLAY_MAX_RUNS];
};

/* win_op.kind of a series sample's entry in a block */
#define WK_OP_SAMPLE	0xff

/* A thread that applies blocks; th[0] is the pass's own. */
struct wk_thread {
	struct workers		*w;
	pthread_t		id;	/* the runs' threads: th[1..] */
	int			last;	/* the run it applied last, or is given first; -1 */
};

struct workers {
	struct replay		*r;
	unsigned int		nr_runs;
	unsigned int		nr_threads;	/* the pass's thread included */
	/*
	 * A single run with series: its thread resolves and makes the series
	 * lines (series_update_one()) into one_hits, not the pass.
	 */
	bool			own_series;
	struct rser_hits	one_hits;
	struct rows_cursor	cur[REPLAY_MAX_RUNS];	/* per run */
	struct wk_thread	th[REPLAY_MAX_RUNS + 1];	/* [0] the pass's */
	unsigned int		owner[REPLAY_MAX_RUNS];	/* the thread that applies run p */
	unsigned int		started;	/* threads created */
	pthread_mutex_t		mu;
	pthread_cond_t		cv;
	/* under mu */
	uint64_t		filled;		/* blocks published */
	uint64_t		emitted;	/* blocks delivered and free again */
	uint64_t		done[REPLAY_MAX_RUNS];	/* blocks each run has applied */
	bool			claimed[REPLAY_MAX_RUNS];
	int			err;		/* first run error; the runs stop */
	bool			quit;
	/* changes of the above, also read unlocked (workers_sleep()) */
	uint64_t		gen;
	unsigned int		spin;		/* WK_SPIN, 0 on one CPU */
	/* the pass's thread only */
	struct wk_block		*fill;		/* block being filled: ring[filled % WK_RING] */
	struct wk_block		*ring[WK_RING];
};

/*
 * The runs' threads besides the pass's: one fewer than the threads allowed
 * (default: the online CPUs), one fewer again for a prepass beside the pass
 * (beside.c), at most one per run.  A single run gets one when asked for
 * two threads or more besides the prepass's: the pass decodes while it
 * applies.
 * Not by default: on a two-CPU machine that pipeline took 10 % more time
 * and 30 % more CPU than one thread (the 8-CPU fleet trace under break),
 * the run's half alone costing more on its thread than both together on one.
 */
static unsigned int workers_count(const struct replay *r)
{
	unsigned int n = r->p.threads;

	if (!n) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);

		if (r->p.nr_runs == 1)
			return 0;

		n = cpus > 0 ? (unsigned int)cpus : 1;
	}
	n--;
	if (r->prep.beside && n)
		n--;	/* the prepass's thread (beside.c) */
	return n < r->p.nr_runs ? n : r->p.nr_runs;
}

/* A lock, unlock or flush request's per-run half (window_take(), reads_take()), run @p's. */
static int workers_op_run(struct replay *r, unsigned int p, const struct mcr_event *ev,
			  struct rcg *c, const struct win_op *op)
{
	int ret;

	if (op->kind == MCR_EV_FLUSH)
		return reads_request_run(r, p, ev, c, op);
	ret = window_op_run(r, p, ev, op);
	if (ret <= 0)
		return ret;
	/* the request the unlock ended held the run's read of it */
	rows_phase(&r->ep[p], ROWS_READS);
	return reads_end_flush(r, p, ev->id, op->req_ts, ev->pid, ev->ts);
}

/* Apply block @b to run @p.  No lock held: the run is claimed. */
static int workers_apply(struct workers *w, struct wk_block *b, unsigned int p)
{
	struct replay *r = w->r;
	struct replay_ep_ctx *ec = &r->ep[p];
	struct rows_cursor *cur = &w->cur[p];
	struct sim *s = r->sims[p];
	/*
	 * hv[hc]: the update's handle, if ok[hc]; hv[hc ^ 1]: the next's.
	 * Two in place, and whether each holds one apart from it: a handle
	 * marked unresolved in its slot and copied whole to the next was a
	 * 4-byte store loaded as 8, a store forwarding stall (4 % of the
	 * three policies' profile on the 8-CPU fleet trace).  An event that
	 * is not an update leaves ok[hc] false: only an update asks ahead.
	 */
	struct sim_prep hv[2];
	bool ok[2] = { false, false };
	unsigned int hc = 0;
	uint32_t i;
	int ret = 0;

	rows_begin(ec, cur, &b->eps[p]);
	for (i = 0; i < b->nr && !ret; i++) {
		const struct mcr_event *ev = &b->ev[i].ev;
		enum sim_item_kind kind = replay_item_kind(ev->kind);

		cur->at = i;
		if (!mcr_event_is_update(ev) && b->op[i].kind == WK_OP_SAMPLE) {
			/* taken before the event's visits, as series_until() is */
			ret = series_sample_run(r, p, &b->svals[p]);
			continue;
		}
		cur->phase = ROWS_VISITS;
		ret = window_before_event_run(r, p, ev);
		if (ret < 0)
			break;
		cur->phase = ROWS_EVENT;
		if (!mcr_event_is_update(ev)) {
			ret = workers_op_run(r, p, ev, b->ev[i].c, &b->op[i]);
			if (ret < 0)
				break;
			ret = series_after_event_run(r, p);
			continue;
		}
		if (b->upd_run[i]) {
			cur->phase = ROWS_MODEL;
			ret = window_update_run(r, p, ev, &b->upd[i]);
			if (ret < 0)
				break;
			cur->phase = ROWS_EVENT;
		}
		/*
		 * The block's next update prepared while this one is applied
		 * (engine_prefetch()), this one with what the previous prepared.
		 */
		ok[hc ^ 1] = false;
		if (i + 1 < b->nr && mcr_event_is_update(&b->ev[i + 1].ev)) {
			const struct mcr_event *nx = &b->ev[i + 1].ev;

			hv[hc ^ 1] = sim_update_prepare(s, (unsigned int)nx->cpu, nx->id,
							 replay_item_kind(nx->kind), nx->item);
			ok[hc ^ 1] = true;
		}
		ret = ok[hc] && sim_prep_ok(hv[hc]) ? sim_update_apply(s, hv[hc], ev->ts, ev->val) :
		      sim_update(s, ev->ts, (unsigned int)ev->cpu, ev->id, kind, ev->item, ev->val);
		hc ^= 1;
		if (ret)
			break;
		/* the series lines the update made */
		if (w->own_series)
			ret = series_update_one(r, b->ev[i].c, kind, ev->item, &w->one_hits);
		else if (b->nr_hits[i])	/* without series the block has no hits array */
			ret = series_update_run(r, b->hits.v + b->hit0[i], b->nr_hits[i], p, kind,
						ev->item);
		if (!ret)
			ret = series_after_event_run(r, p);
	}
	ec->buf = NULL;
	return ret;
}

/*
 * A run of thread @t's with a block to apply, or -1.  Under mu.  The run
 * @t applied last if it can go on with it, else its run furthest behind.
 * Only its own (workers_start()): a run that changes threads takes its
 * simulator's state to the other core.  Chosen among all runs by which was
 * furthest behind, runs changed threads at nearly every block (62 000 times
 * in 65 000 blocks applied on the 8-CPU fleet trace), and even kept on a
 * thread while they had blocks, with three runs on two threads each run was
 * applied on both.
 */
static int workers_pick(const struct workers *w, const struct wk_thread *t)
{
	unsigned int p, best = 0, me = (unsigned int)(t - w->th);
	int pick = -1;

	if (t->last >= 0 && !w->claimed[t->last] && w->done[t->last] < w->filled)
		return t->last;
	for (p = 0; p < w->nr_runs; p++)
		if (w->owner[p] == me && !w->claimed[p] && w->done[p] < w->filled &&
		    (pick < 0 || w->done[p] < w->done[best])) {
			pick = (int)p;
			best = p;
		}
	return pick;
}

/* Under mu: the state changed; wake whoever waits for it. */
static void workers_changed(struct workers *w)
{
	__atomic_store_n(&w->gen, w->gen + 1, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&w->cv);
}

/*
 * Under mu: wait for the state to change.  A block takes tens of
 * microseconds to fill or apply, and a sleep and a wake-up per block cost
 * both threads the kernel's time (10 000 to 15 000 of each on the 8-CPU
 * fleet trace), so it spins a little first, unlocked, on the change count.
 * Every change is made under mu, so one after the last look wakes the wait.
 */
static void workers_sleep(struct workers *w)
{
	uint64_t g = w->gen;
	unsigned int i;

	pthread_mutex_unlock(&w->mu);
	for (i = 0; i < w->spin && __atomic_load_n(&w->gen, __ATOMIC_ACQUIRE) == g; i++) {
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	}
	pthread_mutex_lock(&w->mu);
	if (w->gen == g)
		pthread_cond_wait(&w->cv, &w->mu);
}

/* Thread @t claims run @p, applies its next block, releases it.  Called and returns with mu held. */
static void workers_step(struct workers *w, struct wk_thread *t, unsigned int p)
{
	struct wk_block *b = w->ring[w->done[p] % WK_RING];
	int ret;

	t->last = (int)p;
	w->claimed[p] = true;
	pthread_mutex_unlock(&w->mu);
	ret = workers_apply(w, b, p);
	pthread_mutex_lock(&w->mu);
	w->claimed[p] = false;
	if (ret < 0) {
		if (!w->err)
			w->err = ret;
	} else {
		w->done[p]++;
	}
	workers_changed(w);
}

static void *workers_main(void *arg)
{
	struct wk_thread *t = arg;
	struct workers *w = t->w;

	pthread_mutex_lock(&w->mu);
	while (!w->quit) {
		int p = w->err ? -1 : workers_pick(w, t);

		if (p < 0)
			workers_sleep(w);
		else
			workers_step(w, t, (unsigned int)p);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* The oldest block every run has applied: its rows to the sink, in one thread's order. */
static int workers_emit(struct workers *w, struct wk_block *b)
{
	unsigned int p;
	int ret;

	ret = rows_emit(&w->r->p.sink, b->eps, w->nr_runs, b->nr);
	if (ret < 0 || !b->sampled)
		return ret;
	/* its rows go to the held series tables: their order among the others' is free */
	ret = series_sample_emit(w->r, b->sample_k, b->svals);
	for (p = 0; p < w->nr_runs; p++)	/* a sample's values are large, and rare */
		series_vals_free(&b->svals[p]);
	return ret;
}

static uint64_t workers_min_done(const struct workers *w)
{
	uint64_t m = w->filled;
	unsigned int p;

	for (p = 0; p < w->nr_runs; p++)
		if (w->done[p] < m)
			m = w->done[p];
	return m;
}

/*
 * On the pass's thread, mu held: deliver what every run has applied; if
 * that frees nothing, help apply (or wait).  Stops when @until blocks are
 * emitted.  Returns 0 or the first error.
 */
static int workers_wait(struct workers *w, uint64_t until)
{
	int ret = 0;

	while (w->emitted < until) {
		if (w->err)
			return w->err;
		if (workers_min_done(w) > w->emitted) {
			struct wk_block *b = w->ring[w->emitted % WK_RING];

			/* the runs are past it: nobody touches it while the sink runs */
			pthread_mutex_unlock(&w->mu);
			ret = workers_emit(w, b);
			pthread_mutex_lock(&w->mu);
			if (ret < 0)
				return ret;
			w->emitted++;
			continue;
		}
		ret = workers_pick(w, &w->th[0]);
		if (ret >= 0)
			workers_step(w, &w->th[0], (unsigned int)ret);
		else
			workers_sleep(w);
		ret = 0;
	}
	return ret;
}

/* Publish the block being filled, if it holds anything, and take the next free one. */
static int workers_publish(struct workers *w)
{
	int ret = 0;

	if (!w->fill->nr)
		return 0;
	pthread_mutex_lock(&w->mu);
	w->filled++;
	workers_changed(w);
	if (w->filled - w->emitted == WK_RING)
		ret = workers_wait(w, w->emitted + 1);
	pthread_mutex_unlock(&w->mu);
	if (ret < 0)
		return ret;
	w->fill = w->ring[w->filled % WK_RING];
	w->fill->nr = 0;
	w->fill->hits.nr = 0;
	w->fill->sampled = false;
	return 0;
}

/**
 * workers_drain() - every queued update applied in every run and its
 * episodes delivered: the simulators are as one thread would have left them.
 * Return: 0 or the first error of a run or of the sink.
 */
int workers_drain(struct replay *r)
{
	struct workers *w = r->wk;
	int ret;

	if (!w)
		return 0;
	ret = workers_publish(w);
	if (ret < 0)
		return ret;
	pthread_mutex_lock(&w->mu);
	ret = workers_wait(w, w->filled);
	pthread_mutex_unlock(&w->mu);
	return ret;
}

/*
 * Can update @ev go to the runs' threads, and which cgroup is it (known to
 * every simulator)?  Its series lines are then appended to @b's.
 */
static struct rcg *workers_eligible(struct replay *r, const struct mcr_event *ev,
				    struct wk_block *b, int *err)
{
	int ret;
	struct rcg *c;

	/* a window whose unlock was lost closes before some event: window_before_event() */
	if (!mcr_event_is_update(ev) || (unsigned int)ev->cpu >= r->t->nr_possible ||
	    series_due(r, ev->ts) || r->win.kwin_lost)
		return NULL;
	/*
	 * The model's hooks, per run, go with the update to the run's thread
	 * (the visit hook, before_update's run half), but not where one would
	 * end a window.
	 */
	if (!window_runs_may_queue(r))
		return NULL;
	c = rcg_find_added(r, ev->id);
	if (!c)
		return NULL;
	if (r->wk->own_series)	/* the run resolves them, and makes new ones */
		return c;
	ret = series_lines_resolve(r, c, replay_item_kind(ev->kind), ev->item, &b->hits);
	if (ret < 0)
		*err = ret;
	return ret > 0 ? c : NULL;
}

/* Append @e's event to the block being filled; publish it when full. */
static int workers_push(struct workers *w)
{
	if (++w->fill->nr < WK_BLOCK)
		return 0;
	return workers_publish(w);
}

/*
 * A lock or unlock event whose per-run halves can go with the updates
 * (window_take()), its shared half done now.  Return: 1 queued, 0 not, -errno.
 */
static int workers_take_window(struct replay *r, struct workers *w, const struct mcr_event *ev)
{
	struct wk_ev *e = &w->fill->ev[w->fill->nr];
	int ret;

	if ((ev->kind != MCR_EV_LOCKED && ev->kind != MCR_EV_UNLOCK) ||
	    (unsigned int)ev->cpu >= r->t->nr_possible || series_due(r, ev->ts) ||
	    r->win.kwin_lost)
		return 0;
	ret = window_take(r, ev, &w->fill->op[w->fill->nr]);
	if (ret <= 0)
		return ret;
	e->ev = *ev;
	ret = workers_push(w);
	return ret < 0 ? ret : 1;
}

/*
 * A flush request whose per-run halves can go with the updates
 * (reads_take()), its shared half done now.  Return: 1 queued, 0
 * not, -errno.
 */
static int workers_take_flush(struct replay *r, struct workers *w, const struct mcr_event *ev)
{
	struct wk_ev *e = &w->fill->ev[w->fill->nr];
	struct rcg *c;
	int ret;

	if ((unsigned int)ev->cpu >= r->t->nr_possible || series_due(r, ev->ts) ||
	    r->win.kwin_lost)
		return 0;
	c = rcg_find_added(r, ev->id);
	if (!c)
		return 0;
	ret = reads_take(r, ev, &w->fill->op[w->fill->nr]);
	if (ret <= 0)
		return ret;
	e->ev = *ev;
	e->c = c;
	ret = workers_push(w);
	return ret < 0 ? ret : 1;
}

/*
 * The series samples due before an event at @ts go to the runs' threads:
 * the pass counts each (series_sample_take()), each run takes its values
 * in order with the queued events (series_sample_run()), and the pass makes
 * the rows when the block is delivered (workers_emit()).  Not with a
 * single run's own series, whose lines its thread makes.  One to a block.
 * Return: 0 or -errno.
 */
static int workers_take_samples(struct replay *r, struct workers *w, uint64_t ts)
{
	int ret;

	while (!w->own_series && series_due(r, ts)) {
		if (w->fill->sampled) {
			ret = workers_publish(w);
			if (ret < 0)
				return ret;
		}
		w->fill->ev[w->fill->nr] = (struct wk_ev){ .ev = { .ts = ts } };
		w->fill->op[w->fill->nr] = (struct win_op){ .kind = WK_OP_SAMPLE };
		w->fill->sampled = true;
		w->fill->sample_k = series_sample_take(r);
		ret = workers_push(w);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/**
 * workers_take() - queue update @ev for the runs if it can go (see the top
 * of this file), doing its shared half now; a lock or unlock event too,
 * where window_take() splits it.
 * Return: 1 queued, 0 not (drained: the pass handles it serially), or -errno.
 */
int workers_take(struct replay *r, const struct mcr_event *ev)
{
	struct workers *w = r->wk;
	struct rcg *c;
	struct wk_ev *e;
	size_t hit0;
	int ret = 0;

	if (!w)
		return 0;
	ret = workers_take_samples(r, w, ev->ts);
	if (ret < 0)
		return ret;
	if (!mcr_event_is_update(ev)) {
		ret = ev->kind == MCR_EV_FLUSH ? workers_take_flush(r, w, ev) :
		      workers_take_window(r, w, ev);
		return ret ? ret : workers_drain(r);
	}
	hit0 = w->fill->hits.nr;
	c = workers_eligible(r, ev, w->fill, &ret);
	if (ret < 0)
		return ret;
	if (!c)
		return workers_drain(r);
	/* engine_update()'s shared half, in its order */
	window_update_hook(r, ev, c);
	ret = window_update_shared(r, ev, &w->fill->upd[w->fill->nr]);
	if (ret < 0)
		return ret;
	w->fill->upd_run[w->fill->nr] = ret > 0;
	r->st.updates++;
	e = &w->fill->ev[w->fill->nr];
	e->ev = *ev;
	e->c = c;
	if (!w->own_series) {
		w->fill->hit0[w->fill->nr] = (uint32_t)hit0;
		w->fill->nr_hits[w->fill->nr] = (uint32_t)(w->fill->hits.nr - hit0);
	}
	ret = workers_push(w);
	return ret < 0 ? ret : 1;
}

/**
 * workers_start() - the runs' threads for @r's pass, if more than one
 * thread is allowed, and neither validation nor inference
 * (they compare run 0 with the kernel event by event: serial).
 * Return: 0 (r->wk NULL: the serial path), or -errno.
 */
int workers_start(struct replay *r)
{
	struct workers *w;
	unsigned int i;
	int ret;

	if (r->wk || r->val || r->inf || r->p.placed || !workers_count(r))
		return 0;
	/* the runs' cursors are cache-line aligned */
	w = aligned_alloc(_Alignof(struct workers), sizeof(*w));
	if (!w)
		return -ENOMEM;
	memset(w, 0, sizeof(*w));
	w->r = r;
	w->nr_runs = r->p.nr_runs;
	w->nr_threads = workers_count(r) + 1;
	w->own_series = r->p.nr_runs == 1 && r->p.sample_ns;
	w->spin = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? WK_SPIN : 0;
	for (i = 0; i < WK_RING; i++) {
		w->ring[i] = calloc(1, sizeof(*w->ring[i]));
		if (!w->ring[i]) {
			r->wk = w;
			workers_stop(r);
			return -ENOMEM;
		}
	}
	w->fill = w->ring[0];
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	r->wk = w;
	/*
	 * The runs dealt to the runs' threads in turn and then to the pass's,
	 * which decodes besides: of three runs on two threads, the runs'
	 * thread applies two.  Each thread starts on its first.
	 */
	for (i = 0; i < w->nr_threads; i++)
		w->th[i] = (struct wk_thread){ .w = w, .last = -1 };
	for (i = 0; i < w->nr_runs; i++) {
		w->owner[i] = (i + 1) % w->nr_threads;
		if (w->th[w->owner[i]].last < 0)
			w->th[w->owner[i]].last = (int)i;
	}
	for (i = 0; i + 1 < w->nr_threads; i++) {
		ret = -pthread_create(&w->th[i + 1].id, NULL, workers_main, &w->th[i + 1]);
		if (ret) {
			workers_stop(r);
			return ret;
		}
		w->started++;
	}
	return 0;
}

/* workers_stop() - join the threads and free the ring; queued work is dropped (drain first). */
void workers_stop(struct replay *r)
{
	struct workers *w = r->wk;
	unsigned int i, p;

	if (!w)
		return;
	if (w->started || w->fill) {
		pthread_mutex_lock(&w->mu);
		w->quit = true;
		workers_changed(w);
		pthread_mutex_unlock(&w->mu);
	}
	for (i = 0; i < w->started; i++)
		pthread_join(w->th[i + 1].id, NULL);
	if (w->fill) {
		pthread_cond_destroy(&w->cv);
		pthread_mutex_destroy(&w->mu);
	}
	for (i = 0; i < WK_RING; i++) {
		if (!w->ring[i])
			continue;
		for (p = 0; p < REPLAY_MAX_RUNS; p++) {
			rows_free(&w->ring[i]->eps[p]);
			series_vals_free(&w->ring[i]->svals[p]);
		}
		free(w->ring[i]->hits.v);
		free(w->ring[i]);
	}
	free(w->one_hits.v);
	free(w);
	r->wk = NULL;
}
