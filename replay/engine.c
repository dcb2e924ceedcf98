// SPDX-License-Identifier: GPL-2.0
/*
 * The pass: one read of the events, every run's simulator driven from it.
 * What readers got is reads.c's business, the series series.c's, where
 * flush visits happen window.c's (and the flush model's), comparison with the
 * kernel validate.c's.  A flush model that asks for a prepass gets it here,
 * before the pass: the same engine with no policy, inference alone, over the
 * rewound source.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "grow.h"
#include "replay-local.h"

#define REPLAY_PROGRESS_EVERY	(1u << 16)

/* A stranded episode ended in run ep->pol's simulator. */
static int engine_episode(const struct sim_episode *ep, void *ctx)
{
	struct replay_ep_ctx *ec = ctx;
	struct replay *r = ec->r;

	if (ec->buf)	/* on a run's thread (workers.c): delivered in order later */
		return rows_episode(ec, ep);
	return r->p.sink.episode ? r->p.sink.episode(r->p.sink.ctx, ec->pol, ep) : 0;
}

/* The engine with no policy to place visits for: inference alone, the prepass. */
static const struct replay_model engine_no_model = {
	.name		= "none",
	.summary	= "no policy: the prepass's inference only",
};

/* The replay and its simulators; the caller adds inference, cgroups, validation. */
static int engine_alloc(const struct replay_params *p, const struct replay_trace *t,
			struct replay **out)
{
	struct replay *r;
	unsigned int i;

	if (!t->nr_possible || t->nr_possible > REPLAY_MAX_CPUS || !t->nr_online ||
	    t->nr_online > t->nr_possible || !t->batch || t->batch > REPLAY_MAX_BATCH)
		return -MCR_E_BAD_INPUT;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->p = *p;
	r->t = t;
	r->order = p->order;
	r->cpu_prev_ts = calloc(t->nr_possible, sizeof(*r->cpu_prev_ts));
	if (!r->cpu_prev_ts) {
		free(r);
		return -ENOMEM;
	}
	for (i = 0; i < p->nr_runs; i++) {
		const struct replay_run *run = &p->runs[i];
		struct sim_params sp = {
			.policy = run->policy, .batch = run->batch, .nr_online = run->nr_online,
			/* more CPUs than traced: they count in TH, and never update */
			.nr_possible = run->nr_online > t->nr_possible ? run->nr_online :
				       t->nr_possible,
		};

		r->sims[i] = sim_create(&sp);
		if (!r->sims[i]) {
			replay_destroy(r);
			return -ENOMEM;
		}
		r->ep[i] = (struct replay_ep_ctx){ .r = r, .pol = i };
		sim_episode_sink(r->sims[i], engine_episode, &r->ep[i]);
	}
	*out = r;
	return 0;
}

struct replay_run replay_run_own(const struct replay_trace *t, const struct sim_policy *pol)
{
	return (struct replay_run){ .policy = pol, .batch = t->batch, .nr_online = t->nr_online };
}

bool replay_run_is_own(const struct replay_run *run, const struct replay_trace *t)
{
	return run->batch == t->batch && run->nr_online == t->nr_online;
}

/* The traced kernel's machine for @pol: what inference and validation simulate. */
static struct sim_params engine_own_params(const struct replay_trace *t,
					   const struct sim_policy *pol)
{
	return (struct sim_params){ .policy = pol, .nr_possible = t->nr_possible,
				    .nr_online = t->nr_online, .batch = t->batch };
}

/*
 * The inference's lookahead (infer_set_ahead()): the event the pass is on,
 * and its own queue of events after it.
 */
static int engine_peek(void *ctx, uint64_t at, const struct mcr_event **ev)
{
	struct replay *r = ctx;

	if (at + 1 == r->q.got && r->q.got) {
		*ev = &r->cur;
		return 1;
	}
	if (!r->q.src || at < r->q.got)
		return 0;
	return evq_peek(&r->q, (size_t)(at - r->q.got), ev);
}

static uint64_t engine_done(void *ctx)
{
	const struct replay *r = ctx;

	return r->q.got;
}

static void engine_infer_ahead(struct replay *r)
{
	const struct infer_ahead a = { .peek = engine_peek, .done = engine_done, .ctx = r };

	infer_set_ahead(r->inf, &a);
}

int replay_create(const struct replay_params *p, const struct replay_trace *t,
		  struct replay **out)
{
	struct sim_params own;
	struct replay *r;
	unsigned int i;
	int ret;

	if (!p->nr_runs || p->nr_runs > REPLAY_MAX_RUNS || !p->model)
		return -EINVAL;
	for (i = 0; i < p->nr_runs; i++)
		if (!p->runs[i].policy || !p->runs[i].batch || p->runs[i].batch > REPLAY_MAX_BATCH ||
		    !p->runs[i].nr_online || p->runs[i].nr_online > REPLAY_MAX_CPUS)
			return -EINVAL;
	/* the kernel's values are those of its own machine: compare the run that has it */
	if (p->validate && !replay_run_is_own(&p->runs[0], t))
		return -EINVAL;
	ret = engine_alloc(p, t, &r);
	if (ret)
		return ret;
	if (p->validate && t->windows_traced && !p->answers) {
		own = engine_own_params(t, p->runs[0].policy);
		r->inf = infer_create(&own, p->max_hypotheses);
		if (!r->inf) {
			ret = -ENOMEM;
			goto fail;
		}
		/* exact beside the cap where no order is kept (infer_set_exact()) */
		infer_set_exact(r->inf, replay_exact_budget(p));
		if (p->no_halving)
			infer_set_patience(r->inf, 0);
		engine_infer_ahead(r);
		/* the inferred model's prepass would find the same order */
		if (p->keep_order && p->runs[0].policy == replay_policy_for_trace(t)) {
			r->order_kept = order_create();
			if (!r->order_kept) {
				ret = -ENOMEM;
				goto fail;
			}
			infer_set_order_sink(r->inf, order_add, r->order_kept);
		}
	}
	ret = rcg_add_initial(r);
	if (ret < 0)
		goto fail;
	if (p->validate) {
		ret = val_create(r);
		if (ret < 0)
			goto fail;
	}
	/* a search's answers stand for the inference, as beside.c's do */
	if (p->validate && t->windows_traced && p->answers) {
		r->val->beside = true;
		ret = p->answers->n ? val_checks_put(r, p->answers->v, p->answers->n) : 0;
		if (ret < 0)
			goto fail;
		r->order_kept = p->answers->order;
		p->answers->order = NULL;
	}
	*out = r;
	return 0;
fail:
	replay_destroy(r);
	return ret;
}

void replay_destroy(struct replay *r)
{
	unsigned int i;

	if (!r)
		return;
	workers_stop(r);
	val_free(r);
	infer_destroy(r->inf);
	window_free(r);
	reads_free(r);
	series_free(r);
	rcg_free_all(r);
	for (i = 0; i < r->p.nr_runs; i++)
		sim_destroy(r->sims[i]);
	evq_free(&r->q);
	replay_order_free(r->order_own);
	replay_order_free(r->order_kept);
	replay_checks_free(&r->inf_checks);
	free(r->cpu_prev_ts);
	free(r);
}

/*
 * One pass of inference with @ei->policy over @src, its decisions to
 * @ei->order.  The inference follows the trace's own lock windows and the
 * kernel's recorded values, never a policy's decisions: the pass runs no
 * policy at all.
 */
int engine_infer_pass(const struct replay_trace *t, const struct engine_infer *ei,
		      struct replay_source *src)
{
	struct replay_params p = {
		.model = &engine_no_model, .max_hypotheses = ei->max_hyp,
		.progress = ei->progress, .progress_ctx = ei->progress_ctx,
		.progress_name = ei->name ? ei->name : "infer",
	};
	struct replay *r;
	int ret;

	ret = engine_alloc(&p, t, &r);
	if (ret)
		return ret;
	r->prepared = true;
	if (t->windows_traced) {
		struct sim_params own = engine_own_params(t, ei->policy);

		r->inf = infer_create(&own, ei->max_hyp);
		if (!r->inf) {
			replay_destroy(r);
			return -ENOMEM;
		}
		infer_set_exact(r->inf, ei->exact);
		if (ei->exact_wide)
			infer_set_exact_wide(r->inf, ei->exact_wide);
		if (ei->no_halving)
			infer_set_patience(r->inf, 0);
		infer_set_order_sink(r->inf, ei->order, ei->order_ctx);
		engine_infer_ahead(r);
		r->settled = ei->settled;
		r->settled_ctx = ei->settled_ctx;
		r->checked = ei->checked;
		r->checked_ctx = ei->checked_ctx;
	}
	ret = rcg_add_initial(r);
	if (!ret)
		ret = replay_run(r, src);
	if (ei->capped)
		*ei->capped = r->inf ? infer_capped(r->inf) : 0;
	if (ei->missed)
		*ei->missed = r->inf ? infer_missed(r->inf) : 0;
	if (ei->work)
		*ei->work = r->inf ? infer_work(r->inf) : 0;
	if (!ret && ei->checks && r->inf)
		ret = replay_checks_copy(ei->checks, r->inf);
	replay_destroy(r);
	return ret;
}

/* replay_order_infer() with @ei's cap, halving and outputs; the order is its own. */
static int engine_order_infer(const struct replay_trace *t, struct engine_infer *ei,
			      struct replay_source *src, struct replay_order **out)
{
	int ret;

	*out = NULL;
	if (!ei->policy)
		return -EINVAL;
	ei->order = order_add;
	ei->order_ctx = order_create();
	if (!ei->order_ctx)
		return -ENOMEM;
	ret = engine_infer_pass(t, ei, src);
	if (ret) {
		replay_order_free(ei->order_ctx);
		return ret;
	}
	*out = ei->order_ctx;
	return 0;
}

int replay_order_infer(const struct replay_trace *t, const struct sim_policy *pol,
		       unsigned int max_hyp, struct replay_source *src,
		       void (*progress)(void *ctx, const char *pass, uint64_t done), void *progress_ctx,
		       struct replay_order **out)
{
	struct engine_infer ei = {
		.policy = pol, .max_hyp = max_hyp, .progress = progress,
		.progress_ctx = progress_ctx,
	};

	return engine_order_infer(t, &ei, src, out);
}

int replay_checks_copy(struct replay_checks *to, const struct infer *in)
{
	const uint64_t *miss, *work;
	size_t nm = infer_miss_at(in, &miss), nw = infer_work_at(in, &work);

	replay_checks_free(to);
	to->miss_at = malloc((nm + 1) * sizeof(*to->miss_at));
	to->work_at = malloc((nw + 1) * sizeof(*to->work_at));
	if (!to->miss_at || !to->work_at) {
		replay_checks_free(to);
		return -ENOMEM;
	}
	if (nm)
		memcpy(to->miss_at, miss, nm * sizeof(*miss));
	if (nw)
		memcpy(to->work_at, work, nw * sizeof(*work));
	to->nr_miss = nm;
	to->nr_checks = nw;
	return 0;
}

void replay_checks_free(struct replay_checks *c)
{
	free(c->miss_at);
	free(c->work_at);
	*c = (struct replay_checks){ 0 };
}

/*
 * Is the stretch up to check @next wide: is the first pass's next miss
 * within REPLAY_WIDER_AHEAD checks of it?
 */
static bool search_wide(const struct replay_answers *a, uint64_t next)
{
	return a->first_by < a->first_nr_miss &&
	       a->first_miss[a->first_by] < next + REPLAY_WIDER_AHEAD;
}

/* The stretch up to check @next, wide or not: the list's cap, or the diagrams' budget. */
static void search_region(struct replay_answers *a, struct infer *in, uint64_t next)
{
	bool wide = search_wide(a, next);

	if (wide == a->wide)
		return;
	a->wide = wide;
	if (a->wide_budget) {
		infer_set_exact_wide(in, wide ? a->wide_budget : 0);
		return;
	}
	infer_set_max_hyp(in, wide ? a->wide_hyp : a->narrow_hyp);
	infer_set_patience(in, wide ? 0 : 1);
}

static int search_checked(void *ctx, struct infer *in, bool su_ok, bool nf_ok)
{
	struct replay_answers *a = ctx;
	uint64_t at = a->checks++;

	if (a->keep) {
		if (mcr_grow((void **)&a->v, &a->cap, a->n + 1, sizeof(*a->v)) < 0)
			return -ENOMEM;
		a->v[a->n++] = val_check_of(in, su_ok, nf_ok);
	}
	if (a->wide)
		a->wide_checks++;
	while (a->first_by < a->first_nr_miss && a->first_miss[a->first_by] <= at)
		a->first_by++;
	search_region(a, in, at + 1);
	/*
	 * Given up: a search doing worse than the first pass so far, or, once
	 * the first pass had made a quarter of its misses, avoiding fewer than
	 * a quarter of them (it costs several passes: worth it for more; no
	 * value before the counters are known is a miss, infer_set_synced()); one past
	 * --retry times the first pass's work so far and an eighth of its
	 * whole (one burst of saturation early on may cost more than the rest).
	 */
	if (infer_missed(in) > a->first_by)
		return -ERANGE;
	if (a->first_by && a->first_by * 4 >= a->first_nr_miss &&
	    4 * infer_missed(in) > 3 * a->first_by)
		return -ERANGE;
	if (at < a->first_nr_checks &&
	    (double)infer_work(in) > a->retry * ((double)a->first_work[at] + a->first_whole / 8))
		return -ETIME;
	return 0;
}

/* Every REPLAY_BESIDE_EVERY events: the search's work. */
static int search_settled(void *ctx, struct infer *in, uint64_t done)
{
	const struct replay_answers *a = ctx;

	return infer_work(in) > a->limit ? -ETIME : 0;
}

int engine_search(const struct replay_trace *t, const struct replay_params *p,
		  const struct sim_policy *pol, bool checks, bool order, struct replay_source *src,
		  struct replay_answers *out)
{
	struct engine_infer ei = {
		.policy = pol, .exact = out->narrow_budget,
		.settled = search_settled, .settled_ctx = out,
		.checked = search_checked, .checked_ctx = out,
		.missed = &out->missed, .work = &out->work,
		.progress = p->progress, .progress_ctx = p->progress_ctx, .name = "search",
	};
	int ret;

	out->keep = checks;
	/* the stretch up to the first check (a diagram search's cap is the first pass's) */
	out->wide = search_wide(out, 0);
	ei.max_hyp = out->wide ? out->wide_hyp : out->narrow_hyp;
	ei.no_halving = out->wide && !out->wide_budget;
	ei.exact_wide = out->wide ? out->wide_budget : 0;
	if (order) {
		out->order = order_create();
		if (!out->order)
			return -ENOMEM;
		ei.order = order_add;
		ei.order_ctx = out->order;
	}
	ret = engine_infer_pass(t, &ei, src);
	if (ret)
		replay_answers_free(out);
	return ret;
}

void replay_answers_free(struct replay_answers *a)
{
	free(a->v);
	replay_order_free(a->order);
	a->v = NULL;
	a->order = NULL;
	a->n = a->cap = 0;
}

/* The model's prepare step: *@pol, the policy to infer with, or NULL (no prepass). */
int engine_prepare(struct replay *r, const struct sim_policy **pol)
{
	*pol = NULL;
	if (r->prepared)
		return 0;
	r->prepared = true;
	return r->p.model->prepare ? r->p.model->prepare(r, pol) : 0;
}

int replay_prepare(struct replay *r, struct replay_source *src)
{
	const struct sim_policy *pol;
	struct replay_order *o;
	double t0 = replay_now_s();
	uint64_t capped = 0, work = 0;
	struct engine_infer ei = {
		.max_hyp = r->p.max_hypotheses, .no_halving = r->p.no_halving,
		.progress = r->p.progress, .progress_ctx = r->p.progress_ctx,
		.capped = &capped, .work = &work,
	};
	int ret;

	ret = engine_prepare(r, &pol);
	if (ret < 0 || !pol)
		return ret;
	if (!src->rewind)
		return -EINVAL;
	ei.policy = pol;
	ei.checks = &r->inf_checks;
	ret = engine_order_infer(r->t, &ei, src, &o);
	if (!ret)
		ret = src->rewind(src->ctx);
	if (ret) {
		replay_order_free(o);
		return ret;
	}
	r->order = r->order_own = o;
	r->prep = (struct replay_prepass){ .policy = pol, .placed = replay_order_size(o),
					   .capped = capped, .work = work,
					   .seconds = replay_now_s() - t0 };
	return 0;
}

const struct replay_prepass *replay_prepass(const struct replay *r)
{
	return r->prep.policy ? &r->prep : NULL;
}

const struct replay_order *replay_validated_order(const struct replay *r)
{
	return r->order_kept;
}

/* memcg_flush_stats: a read of memcg id.  Every run decides with its own counters. */
static int engine_read(struct replay *r, const struct mcr_event *ev)
{
	bool force = ev->flags & MCR_FLUSH_FORCE, go[REPLAY_MAX_RUNS] = { false };
	struct rcg *c = rcg_find_added(r, ev->id);
	unsigned int p;
	int ret;

	if (!c)
		c = rcg_get(r, ev->ts, ev->id, false);
	if (!c)
		return -ENOMEM;
	r->st.flush_events++;
	if (r->val) {
		ret = val_flush_event(r, ev, c);
		if (ret < 0)
			return ret;
	} else if (r->inf) {
		/* inference for an order alone: the kernel's values still prune */
		bool su_ok, nf_ok;

		ret = infer_check(r->inf, ev->id, ev->val, ev->flags & MCR_FLUSH_NEEDS, &su_ok, &nf_ok);
		if (!ret && r->checked)
			ret = r->checked(r->checked_ctx, r->inf, su_ok, nf_ok);
		if (ret < 0)
			return ret;
	}
	for (p = 0; p < r->p.nr_runs; p++) {
		ret = reads_decide(r, p, ev, c, r->st.flush_events);
		if (ret < 0)
			return ret;
		go[p] = ret > 0;
	}
	/*
	 * Subtree(c) is reset in both only where both flushed: where the run
	 * flushed and the kernel did not (or the other way), the counters of
	 * one still hold what came before, and a mismatch can build up from it.
	 */
	if (r->val && go[0] && (force || (ev->flags & MCR_FLUSH_NEEDS)))
		val_went_ahead(r, c, ev->ts);
	ret = window_flush_request(r, ev, go);
	return ret < 0 ? ret : reads_settle(r, false);
}

/*
 * For statcheck.c: how run 0 places update @ev of @c, made on the CPU of the
 * kernel's open lock window, inside subtree(window): before its cgroup's
 * visit (the flush takes it), after it, or its cgroup not on the list.
 */
static int engine_placed(struct replay *r, const struct mcr_event *ev, struct rcg *c)
{
	const struct rcg *a;
	int st;

	if (!r->win.kwin_open || r->win.kwin_cpu != ev->cpu || !r->win.pol[0].open ||
	    !sim_window_open(r->sims[0]))
		return 0;
	for (a = c; a && a->id != r->win.kwin_id; a = a->parent)
		;
	if (!a)
		return 0;
	st = sim_window_state(r->sims[0], ev->id);
	return r->p.placed(r->p.placed_ctx, replay_tag(ev),
			   st > 0 ? REPLAY_PLACED_TAKEN : st == 0 ? REPLAY_PLACED_AFTER :
			   REPLAY_PLACED_UNLISTED);
}

static int engine_update(struct replay *r, const struct mcr_event *ev)
{
	struct rcg *c = rcg_find_added(r, ev->id);
	enum sim_item_kind kind = replay_item_kind(ev->kind);
	unsigned int p;
	int ret;

	if (!c)
		c = rcg_get(r, ev->ts, ev->id, true);
	if (!c)
		return -ENOMEM;
	window_update_hook(r, ev, c);
	ret = window_before_update(r, ev);
	if (ret < 0)
		return ret;
	if (r->val)
		val_update(r, ev, c);
	if (r->p.placed) {
		ret = engine_placed(r, ev, c);
		if (ret < 0)
			return ret;
	}
	for (p = 0; p < r->p.nr_runs; p++) {
		struct sim_prep h = r->upd_prep[p][r->prep_cur];

		if (r->prep_set[r->prep_cur] && sim_prep_ok(h))
			ret = sim_update_apply(r->sims[p], h, ev->ts, ev->val);
		else
			ret = sim_update(r->sims[p], ev->ts, (unsigned int)ev->cpu, ev->id, kind,
					 ev->item, ev->val);
		if (ret < 0)
			return ret;
	}
	/* no series cgroup yet (none ever, in a prepass): no path holds one */
	ret = r->nr_ser ? series_update(r, c, kind, ev->item) : 0;
	if (ret < 0)
		return ret;
	if (r->inf) {
		ret = infer_update(r->inf, ev->ts, r->cpu_prev_ts[ev->cpu], (unsigned int)ev->cpu,
				   ev->id, kind, ev->item, ev->val, replay_tag(ev));
		if (ret < 0)
			return ret;
	}
	r->st.updates++;
	return 0;
}

static int engine_cgroup_event(struct replay *r, const struct mcr_event *ev)
{
	struct rcg *c;
	unsigned int p;
	int ret;

	if (r->t->hierarchy_id >= 0 && ev->aux != r->t->hierarchy_id) {
		r->st.ignored_cgroup_events++;
		return 0;
	}
	if (ev->kind == MCR_EV_MKDIR)
		return rcg_mkdir(r, ev->ts, ev->id);
	c = rcg_find(r, ev->id);
	if (!c || !c->added)
		return 0;
	for (p = 0; p < r->p.nr_runs; p++) {
		ret = sim_cgroup_remove(r->sims[p], ev->ts, ev->id);
		if (ret < 0 && ret != -ENOENT)
			return ret;
	}
	if (r->inf) {
		ret = infer_cgroup_remove(r->inf, ev->ts, ev->id);
		if (ret < 0 && ret != -ENOENT)
			return ret;
	}
	return 0;
}

static int engine_event(struct replay *r, const struct mcr_event *ev)
{
	if ((unsigned int)ev->cpu >= r->t->nr_possible)
		return -MCR_E_CPU;	/* sources check this; arrays in tests may not */
	switch (ev->kind) {
	case MCR_EV_STATE:
	case MCR_EV_LRUVEC:
	case MCR_EV_EVENTS:
		return engine_update(r, ev);
	case MCR_EV_FLUSH:
		return engine_read(r, ev);
	case MCR_EV_LOCKED:
		return window_locked(r, ev);
	case MCR_EV_UNLOCK:
		return window_unlock(r, ev);
	case MCR_EV_VISIT:
		return window_visit(r, ev);
	case MCR_EV_MKDIR:
	case MCR_EV_RMDIR:
		return engine_cgroup_event(r, ev);
	default:
		return 0;	/* contended, and kinds newer than this build: nothing to do */
	}
}

/*
 * The next event, if it is an update, has every run's simulator look it up
 * and ask for the state it will touch while this one is applied
 * (sim_update_prepare(); engine_update() applies it from the handle):
 * the runs' states together, or one run's on a trace of many CPUs, are more
 * than a core's cache holds.  The next event is decoded one event early for
 * it; a source error there is the pass's error, as it would be one event
 * later.
 */
static int engine_prefetch(struct replay *r)
{
	const struct mcr_event *nx;
	unsigned int p, nxt;
	int ret;

	/* what was prepared for the next event is now for the one applied */
	r->prep_cur ^= 1;
	nxt = r->prep_cur ^ 1;
	r->prep_set[nxt] = false;
	/*
	 * With the runs on their threads (workers.c) the update is applied a
	 * block later, on another core: the run asks for it then itself.
	 */
	if (r->wk)
		return 0;
	ret = evq_peek(&r->q, 0, &nx);
	if (ret <= 0 || !mcr_event_is_update(nx))
		return ret;
	for (p = 0; p < r->p.nr_runs; p++)
		r->upd_prep[p][nxt] = sim_update_prepare(r->sims[p], (unsigned int)nx->cpu, nx->id,
						     replay_item_kind(nx->kind), nx->item);
	r->prep_set[nxt] = true;
	return 0;
}

int replay_run(struct replay *r, struct replay_source *src)
{
	/* in r: the inference's lookahead reads it (engine_peek()) */
	struct mcr_event *ev = &r->cur;
	unsigned int p;
	int ret;

	ret = replay_prepare(r, src);
	if (ret < 0)
		return ret;
	ret = workers_start(r);
	if (ret < 0)
		return ret;
	evq_init(&r->q, src);
	r->prep_set[0] = r->prep_set[1] = false;
	while ((ret = evq_get(&r->q, ev)) > 0) {
		ret = engine_prefetch(r);
		if (ret < 0)
			return ret;
		if (!r->st.events)
			r->st.first_ts = ev->ts;
		/* Replay order merges CPUs by ts; never let time run back for the simulators. */
		if (ev->ts < r->now)
			ev->ts = r->now;
		r->now = ev->ts;
		/* to the runs' threads, or (all queued work applied first) on here */
		ret = r->wk ? workers_take(r, ev) : 0;
		if (ret < 0)
			return ret;
		if (ret > 0)
			goto next;
		ret = series_due(r, ev->ts) ? series_until(r, ev->ts) : 0;
		if (ret < 0)
			return ret;
		ret = window_before_event(r, ev);
		/* a window that closed just now ends its reads before @ev changes anything */
		if (ret >= 0 && reads_waiting(r))
			ret = reads_settle(r, false);
		if (ret < 0)
			return ret;
		ret = engine_event(r, ev);
		if (ret < 0)
			return ret;
		if (reads_waiting(r))
			ret = reads_settle(r, false);
		if (ret >= 0)
			ret = series_after_event(r);
		if (ret < 0)
			return ret;
		if (r->wk)	/* the runs are drained */
			window_reads_note(r);
next:
		if (ev->cpu >= 0 && (unsigned int)ev->cpu < r->t->nr_possible)
			r->cpu_prev_ts[ev->cpu] = ev->ts;
		r->st.events++;
		r->st.last_ts = ev->ts;
		if (r->p.progress && !(r->st.events % REPLAY_PROGRESS_EVERY))
			r->p.progress(r->p.progress_ctx, r->p.progress_name, r->st.events);
		if (r->settled && !(r->st.events % REPLAY_BESIDE_EVERY)) {
			ret = r->settled(r->settled_ctx, r->inf, r->st.events);
			if (ret < 0)
				return ret;
		}
	}
	if (!ret)
		ret = workers_drain(r);
	workers_stop(r);
	if (ret < 0)
		return ret;
	ret = window_finish(r);
	if (!ret)
		ret = reads_settle(r, true);
	if (!ret)
		ret = series_after_event(r);
	for (p = 0; !ret && p < r->p.nr_runs; p++)
		ret = sim_episodes_close(r->sims[p], r->now);
	if (!ret)
		ret = series_finish(r);
	if (r->p.progress)
		r->p.progress(r->p.progress_ctx, r->p.progress_name, r->st.events);
	return ret;
}

const struct replay_params *replay_params(const struct replay *r)
{
	return &r->p;
}

const struct replay_trace *replay_trace(const struct replay *r)
{
	return r->t;
}

const struct replay_stats *replay_stats(const struct replay *r)
{
	return &r->st;
}

struct sim *replay_sim(struct replay *r, unsigned int pol)
{
	return pol < r->p.nr_runs ? r->sims[pol] : NULL;
}

size_t replay_cgroup_count(const struct replay *r)
{
	return r->nr_cg;
}

size_t replay_cgroup_unknown_parents(const struct replay *r)
{
	size_t i, n = 0;

	for (i = 0; i < r->nr_cg; i++)
		n += r->cg[i]->parent_unknown;
	return n;
}

uint64_t replay_cgroup_id(const struct replay *r, size_t i)
{
	return i < r->nr_cg ? r->cg[i]->id : 0;
}

const char *replay_cgroup_path(const struct replay *r, uint64_t id)
{
	struct rcg *c = rcg_find((struct replay *)r, id);

	return c ? c->path : NULL;
}

bool replay_cgroup_is_leaf(const struct replay *r, uint64_t id)
{
	struct rcg *c = rcg_find((struct replay *)r, id);

	return !c || !c->has_child;
}
