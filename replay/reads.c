// SPDX-License-Identifier: GPL-2.0
/*
 * reads.c - what each reader of memory.stat got, and the summaries.
 *
 * A non-forced memcg_flush_stats is a read.  Its value is fixed after the
 * read's flush decision: at once when the policy skipped the flush, once the
 * flush's visits are over when it went ahead (window.c says when;
 * window_flush_waiting()).  Until then the read waits here; the sink gets it
 * with every line the reader got wrong.  A forced flush is not a reader: it
 * is recorded (force = 1) without errors.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "replay-local.h"

/*
 * The cgroup's line, added if new.  The array grows by one element, not
 * line_get()'s doubling: a pass keeps one per (cgroup, run, line) read
 * wrong, thousands, and a new line is rare (once per such line), where the
 * doubling left 38 % of them unused at 20 M events of the fleet trace.
 */
static struct rcg_item *rcg_item_get(struct rcg_pol *cp, enum sim_item_kind kind, int item)
{
	struct rcg_item *it = line_find(cp->items, cp->nr_items, sizeof(*cp->items), kind, item,
					NULL);

	if (it)
		return it;
	if (cp->nr_items == cp->cap_items) {
		it = realloc(cp->items, (cp->nr_items + 1) * sizeof(*it));
		if (!it)
			return NULL;
		cp->items = it;
		cp->cap_items = cp->nr_items + 1;
	}
	return line_get((void **)&cp->items, &cp->nr_items, &cp->cap_items, sizeof(*cp->items),
			kind, item);
}

static const struct rcg_item *rcg_item_find(const struct rcg_pol *cp, enum sim_item_kind kind,
					    int item)
{
	return line_find(cp->items, cp->nr_items, sizeof(*cp->items), kind, item, NULL);
}

void reads_free(struct replay *r)
{
	size_t i, j;
	unsigned int p;

	for (i = 0; i < r->nr_cg; i++)
		for (p = 0; p < r->p.nr_runs; p++) {
			struct rcg_pol *cp = &r->cg[i]->pol[p];

			for (j = 0; j < cp->nr_items; j++)
				hist_free(&cp->items[j].h);
			free(cp->items);
		}
	for (p = 0; p < REPLAY_MAX_RUNS; p++) {
		free(r->rr[p].w);
		free(r->rr[p].errs);
	}
}

static int reads_emit(struct replay *r, unsigned int p, struct replay_read *rd)
{
	if (r->ep[p].buf)	/* on a run's thread (workers.c): delivered in order later */
		return rows_read(&r->ep[p], rd);
	return r->p.sink.read ? r->p.sink.read(r->p.sink.ctx, p, rd) : 0;
}

struct err_ctx {
	struct reads_run *rr;
	struct rcg_pol	*cp;
};

static int reads_err_cb(enum sim_item_kind kind, int item, int64_t error, uint64_t age_ns,
			void *ctx)
{
	struct err_ctx *ec = ctx;
	struct reads_run *rr = ec->rr;
	struct rcg_item *it;
	int ret;

	ret = mcr_grow((void **)&rr->errs, &rr->cap_errs, rr->nr_errs + 1, sizeof(*rr->errs));
	if (ret < 0)
		return ret;
	rr->errs[rr->nr_errs++] = (struct replay_read_error){
		.error = error, .age_ns = age_ns, .kind = kind, .item = item,
	};
	it = rcg_item_get(ec->cp, kind, item);
	if (!it)
		return -ENOMEM;
	ret = hist_add(&it->h, error < 0 ? -(uint64_t)error : (uint64_t)error);
	return ret < 0 ? ret : 0;
}

/* The reader's value is fixed now: every wrong line to the sink. */
static int reads_end(struct replay *r, struct read_wait *w, uint64_t ts)
{
	struct rcg *c = rcg_find(r, w->rd.id);
	struct reads_run *rr = &r->rr[w->pol];
	struct err_ctx ec = { .rr = rr };
	struct sim_read_info info;
	int ret;

	if (!c)
		return -ENOENT;
	ec.cp = &c->pol[w->pol];
	rr->nr_errs = 0;
	ret = sim_read_end(r->sims[w->pol], ts, w->rd.id, reads_err_cb, &ec, &info);
	if (ret < 0)
		return ret;
	w->rd.errors = rr->errs;
	w->rd.nr_errors = rr->nr_errs;
	return reads_emit(r, w->pol, &w->rd);
}

/**
 * reads_request() - policy @p decided (@go) on the flush request @ev of @c;
 * @st is the memcg's state before the decision.
 */
int reads_request(struct replay *r, const struct mcr_event *ev, struct rcg *c, unsigned int p,
		  bool go, const struct sim_stale *st, uint64_t seq)
{
	struct replay_read rd = {
		.ts = ev->ts, .id = ev->id, .pending = st->missing,
		.sim_stats_updates = st->stats_updates, .kernel_stats_updates = ev->val,
		.cpu = ev->cpu, .pid = ev->pid, .force = ev->flags & MCR_FLUSH_FORCE,
		.flushed = go, .kernel_needs_flush = ev->flags & MCR_FLUSH_NEEDS,
	};
	struct reads_run *rr = &r->rr[p];
	struct sim_read_info info;
	int ret;

	if (rd.force) {
		struct sim_cgroup_stats cs;

		ret = sim_cgroup_stats_get(r->sims[p], ev->id, ev->ts, &cs);
		if (ret < 0)
			return ret;
		rd.pending_since_flush = cs.pending_since_flush;
		rd.stranded = cs.stranded;
		return reads_emit(r, p, &rd);
	}
	ret = sim_read_begin(r->sims[p], ev->ts, ev->id, go, &info);
	if (ret < 0)
		return ret;
	rd.stranded = info.stranded;
	rd.pending_since_flush = info.pending_since_flush;
	rd.stale = info.stale;
	c->pol[p].flushed_reads += go;
	ret = mcr_grow((void **)&rr->w, &rr->cap, rr->nr + 1, sizeof(*rr->w));
	if (ret < 0)
		return ret;
	rr->w[rr->nr++] = (struct read_wait){ .rd = rd, .seq = seq, .pol = p };
	__atomic_fetch_add(&r->nr_waits, 1, __ATOMIC_RELAXED);
	return 0;	/* reads_settle() ends it once the flush is placed */
}

/**
 * reads_decide() - run @p decides on flush request @ev of @c, the @seq-th
 * (replay_stats.flush_events), and its read waits.  Return: 1 it goes
 * ahead, 0 not, -errno.
 */
int reads_decide(struct replay *r, unsigned int p, const struct mcr_event *ev, struct rcg *c,
		 uint64_t seq)
{
	struct sim_stale st;
	bool go;
	int ret;

	ret = sim_stale_get(r->sims[p], ev->id, &st);
	if (ret < 0)
		return ret;
	ret = sim_flush_request(r->sims[p], ev->ts, ev->id, ev->flags & MCR_FLUSH_FORCE);
	if (ret < 0)
		return ret;
	go = ret > 0;
	ret = reads_request(r, ev, c, p, go, &st, seq);
	return ret < 0 ? ret : go;
}

/**
 * reads_take() - can flush request @ev go to the runs' threads?  Then
 * its shared half is done now (its count, its pending flush:
 * window_flush_take()) and each run's half (reads_request_run()) goes with
 * the queued updates.  Not a forced flush (few: the periodic one, and a
 * forced root flush's end is validation's to sync), nor while some waiting
 * read is not held by its request (reads_settle() might end it here).  The
 * runs' threads run without validation or inference, and the caller checks
 * what is not the reads' (no sample due, no window with a lost unlock, the
 * CPU, the cgroup known).
 * Return: 1 (@op filled), 0 (nothing done), -errno.
 */
int reads_take(struct replay *r, const struct mcr_event *ev, struct win_op *op)
{
	int ret;

	if ((ev->flags & MCR_FLUSH_FORCE) || r->win.waits_unheld)
		return 0;
	ret = window_flush_take(r, ev, op);
	if (ret <= 0)
		return ret;
	op->seq = ++r->st.flush_events;
	return 1;
}

/**
 * reads_request_run() - engine_read() of a request the runs took
 * (reads_take()), run @p's half: its decision and read, its flush if
 * that goes ahead at once, and the read's end unless the request's windows
 * hold it.  Touches run @p's simulator, window, reads and @c's run state
 * alone.
 */
int reads_request_run(struct replay *r, unsigned int p, const struct mcr_event *ev, struct rcg *c,
		      const struct win_op *op)
{
	bool go;
	int ret;

	ret = reads_decide(r, p, ev, c, op->seq);	/* not forced: reads_take() */
	if (ret < 0)
		return ret;
	go = ret > 0;
	rows_phase(&r->ep[p], ROWS_FLUSH);
	ret = window_flush_request_run(r, p, ev, op, go);
	if (ret < 0)
		return ret;
	rows_phase(&r->ep[p], ROWS_READS);
	/* reads_settle(): held by the request's windows, or over */
	return go && op->slot != WIN_SLOT_NONE ? 0 : reads_end_new(r, p, ev->ts);
}

/**
 * reads_end_new() - end run @p's newest waiting read, its request's, at @ts:
 * one that did not go ahead, or went ahead at once (reads_request_run()).
 */
int reads_end_new(struct replay *r, unsigned int p, uint64_t ts)
{
	struct reads_run *rr = &r->rr[p];
	struct read_wait w;

	if (!rr->nr)
		return -EINVAL;
	w = rr->w[--rr->nr];
	__atomic_fetch_sub(&r->nr_waits, 1, __ATOMIC_RELAXED);
	return reads_end(r, &w, ts);
}

/**
 * reads_end_flush() - the flush that (@pid, @req_ts) requested of @id is
 * over for run @p at @ts (its last unlock): its read that waited for it
 * ends (reads_settle(), run @p's half).
 */
int reads_end_flush(struct replay *r, unsigned int p, uint64_t id, uint64_t req_ts, int32_t pid,
		    uint64_t ts)
{
	struct reads_run *rr = &r->rr[p];
	size_t i, k = 0;
	int ret = 0;

	for (i = 0; i < rr->nr; i++) {
		struct read_wait *w = &rr->w[i];

		if (!ret && w->rd.flushed && w->rd.id == id && w->rd.ts == req_ts &&
		    w->rd.pid == pid) {
			ret = reads_end(r, w, ts);
			continue;
		}
		if (!ret)
			rr->w[k++] = *w;
	}
	__atomic_fetch_sub(&r->nr_waits, rr->nr - (ret ? 0 : k), __ATOMIC_RELAXED);
	rr->nr = ret ? 0 : k;
	return ret;
}

/*
 * The waiting read that came first among the runs' lists from @pos on:
 * by its request, then by run.  Its run, or -1 if none is left.
 */
static int reads_next(const struct replay *r, const size_t *pos)
{
	unsigned int p;
	int best = -1;

	if (r->p.nr_runs == 1)	/* one list: in order already */
		return pos[0] < r->rr[0].nr ? 0 : -1;
	for (p = 0; p < r->p.nr_runs; p++)
		if (pos[p] < r->rr[p].nr &&
		    (best < 0 || r->rr[p].w[pos[p]].seq < r->rr[best].w[pos[best]].seq))
			best = (int)p;
	return best;
}

/* Is waiting read @w's value fixed now (@all: the trace ended)? */
static bool reads_over(const struct replay *r, const struct read_wait *w, bool all)
{
	return all || !w->rd.flushed ||
	       !window_flush_waiting(r, w->rd.id, w->rd.ts, w->rd.pid, w->pol);
}

/* Does some waiting read end now?  The pass asks after nearly every event, and mostly none does. */
static bool reads_any_over(const struct replay *r, bool all)
{
	unsigned int p;
	size_t i;

	for (p = 0; p < r->p.nr_runs; p++)
		for (i = 0; i < r->rr[p].nr; i++)
			if (reads_over(r, &r->rr[p].w[i], all))
				return true;
	return false;
}

/**
 * reads_settle() - end the waiting reads whose flush is over (@all: every
 * one, the trace ended), in the order they came: request by request, run
 * by run in each.  Only with the runs drained.
 */
int reads_settle(struct replay *r, bool all)
{
	size_t pos[REPLAY_MAX_RUNS], kept[REPLAY_MAX_RUNS], left = 0;
	unsigned int p;
	int q, ret = 0;

	if (!reads_any_over(r, all))
		return 0;
	for (p = 0; p < r->p.nr_runs; p++)
		pos[p] = kept[p] = 0;
	while ((q = reads_next(r, pos)) >= 0) {
		struct reads_run *rr = &r->rr[q];
		struct read_wait *w = &rr->w[pos[q]++];

		if (!ret && reads_over(r, w, all)) {
			ret = reads_end(r, w, w->rd.flushed || all ? r->now : w->rd.ts);
			continue;
		}
		if (ret)
			continue;
		if (w != &rr->w[kept[q]])	/* most stay where they are */
			rr->w[kept[q]] = *w;
		kept[q]++;
	}
	for (p = 0; p < r->p.nr_runs; p++) {
		r->rr[p].nr = ret ? 0 : kept[p];
		left += r->rr[p].nr;
	}
	__atomic_store_n(&r->nr_waits, left, __ATOMIC_RELAXED);
	return ret;
}

int replay_summary_get(struct replay *r, unsigned int pol, uint64_t id, struct replay_summary *out)
{
	struct rcg *c = rcg_find(r, id);
	struct sim_cgroup_stats cs;
	struct sim_acct a;
	uint64_t from;
	int ret;

	if (!c || !c->added || pol >= r->p.nr_runs)
		return -ENOENT;
	ret = sim_cgroup_stats_get(r->sims[pol], id, r->st.last_ts, &cs);
	if (!ret)
		ret = sim_acct_get(r->sims[pol], id, r->st.last_ts, &a);
	if (ret < 0)
		return ret;
	memset(out, 0, sizeof(*out));
	out->reads = cs.reads;
	out->flushed_reads = c->pol[pol].flushed_reads;
	out->stale_reads = cs.stale_reads;
	out->episodes = cs.episodes;
	out->noticeable_episodes = cs.episodes_noticeable;
	out->stranded_ms = (double)cs.stranded_ns / 1e6;
	out->max_pending = cs.max_pending;
	out->final_pending = cs.pending;
	from = a.first_ts > r->st.first_ts ? a.first_ts : r->st.first_ts;
	if (r->st.last_ts > from)
		out->mean_pending = a.missing_area / (double)(r->st.last_ts - from);
	return 0;
}

/*
 * The q-quantile of |read error| over all @n reads of a cgroup, of which the
 * histogram holds the non-zero ones: the others are zeros, below every one.
 */
static uint64_t reads_quantile(const struct hist *h, uint64_t n, double q)
{
	uint64_t zeros, rank;

	if (!n || !h->n)
		return 0;
	zeros = n > h->n ? n - h->n : 0;
	rank = (uint64_t)(q * (double)n);
	if ((double)rank < q * (double)n)
		rank++;
	if (rank <= zeros)
		return 0;
	return hist_quantile(h, (double)(rank - zeros) / (double)h->n);
}

struct items_ctx {
	const struct rcg_pol	*cp;
	uint64_t		reads;
	double			span_ns;	/* time the cgroup was known */
	int			(*fn)(const struct replay_item_summary *is, void *ctx);
	void			*ctx;
};

static int items_cb(enum sim_item_kind kind, int item, const struct sim_item_stats *st, void *ctx)
{
	struct items_ctx *ic = ctx;
	const struct rcg_item *it = rcg_item_find(ic->cp, kind, item);
	struct replay_item_summary is = {
		.kind = kind, .item = item, .max_read_error = st->max_read_error,
		.mean_read_error = ic->reads ? st->read_error_sum / (double)ic->reads : 0,
		.max_visible_error = st->max_visible,
		.max_settled_error = st->max_visible_settled,
		.max_flush_error = st->max_visible_flush,
		.mean_visible_error = ic->span_ns > 0 ? st->visible_area / ic->span_ns : 0,
		.max_error_age_ms = (double)st->max_error_age_ns / 1e6,
		.final_error = st->error,
	};

	if (it)
		is.p99_read_error = reads_quantile(&it->h, ic->reads, 0.99);
	return ic->fn(&is, ic->ctx);
}

int replay_items_foreach(struct replay *r, unsigned int pol, uint64_t id,
			 int (*fn)(const struct replay_item_summary *is, void *ctx), void *ctx)
{
	struct rcg *c = rcg_find(r, id);
	struct items_ctx ic = { .fn = fn, .ctx = ctx };
	struct sim_cgroup_stats cs;
	uint64_t from;
	int ret;

	if (!c || !c->added || pol >= r->p.nr_runs)
		return -ENOENT;
	ret = sim_cgroup_stats_get(r->sims[pol], id, r->st.last_ts, &cs);
	if (ret < 0)
		return ret;
	ic.cp = &c->pol[pol];
	ic.reads = cs.reads_ended;
	from = cs.first_ts > r->st.first_ts ? cs.first_ts : r->st.first_ts;
	if (r->st.last_ts > from)
		ic.span_ns = (double)(r->st.last_ts - from);
	return sim_item_stats_foreach(r->sims[pol], id, r->st.last_ts, items_cb, &ic);
}
