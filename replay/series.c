// SPDX-License-Identifier: GPL-2.0
/*
 * series.c - the fixed-interval series: for each series cgroup (the ones
 * replay_params names and their ancestors) and each line of memory.stat
 * updated in its subtree, the visible error at every sample from the first
 * event to the last, with its minimum and maximum since the previous sample.
 *
 * No sample is skipped.  A line or cgroup that joins late had error 0 before
 * (nothing of it was updated, so truth and shown were both 0): its earlier
 * rows are written as zeros when it joins.  The minimum and maximum hold
 * the visible error after every event that can change it: an update below
 * the cgroup (that line; all lines if the update made the cgroup
 * flushable) and any event during which a policy made visits.  States
 * inside one event (the visits of an instant flush) are not seen, as no
 * reader could see them either.  Each run's simulator keeps them, its
 * series cgroups watched (sim_watch()): in the update path, on the lines it
 * touches anyway and only at cgroups that are not flushable, and after an
 * event that visited them (sim_watch_visited()); each sample takes the
 * ranges.  Looked at here after every update, one run's look was a few
 * cache misses per series ancestor, most of them flushable, and most of
 * the series' cost.  What is left per update here is making a line where
 * the update is the first of its item below a series cgroup: one bit of
 * the updated cgroup says it is not.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "replay-local.h"

static bool series_wanted(const struct replay *r, uint64_t id)
{
	size_t i;

	for (i = 0; i < r->p.nr_series_ids; i++)
		if (r->p.series_ids[i] == id)
			return true;
	return false;
}

static int series_add(struct replay *r, struct rcg *c)
{
	struct rser *s;
	unsigned int p;

	if (c->ser)
		return 0;
	if (r->nr_ser == r->cap_ser) {
		size_t ncap = r->cap_ser ? r->cap_ser * 2 : 16;
		struct rser **n = realloc(r->ser, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		r->ser = n;
		r->cap_ser = ncap;
	}
	/* its first cache line is what an update reads of it (replay-local.h) */
	s = aligned_alloc(64, (sizeof(*s) + 63) & ~(size_t)63);
	if (!s)
		return -ENOMEM;
	memset(s, 0, sizeof(*s));
	s->c = c;
	for (p = 0; p < REPLAY_MAX_RUNS; p++)
		s->pol[p].node = -1;
	c->ser = s;
	r->ser_gen++;
	r->ser[r->nr_ser++] = s;
	return 0;
}

/**
 * series_mark() - cgroup @c just became known: if it is a series cgroup, it
 * and its ancestors get series from now on (zeros before).
 */
int series_mark(struct replay *r, struct rcg *c)
{
	struct rcg *a;
	unsigned int depth = 0;
	int ret;

	if (!r->p.sample_ns || !r->p.nr_series_ids || c->ser || !series_wanted(r, c->id))
		return 0;
	for (a = c; a && depth < RCG_MAX_DEPTH; a = a->parent, depth++) {
		ret = series_add(r, a);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* The slot of line (@kind, @item) of @s (LRUVEC folded), or -1 if it has none. */
static long series_line_find(const struct rser *s, enum sim_item_kind kind, int item)
{
	const struct rser_item *it;

	it = line_find(s->items, s->nr_items, sizeof(*s->items), kind, item, NULL);
	return it ? (long)it->slot : -1;
}

/*
 * Line (@kind, @item), which @s lacks, joins it: its slot, the next one
 * (-1: ENOMEM).  The runs' lines are theirs: each run adds its own at the
 * update that made the line (series_show()).
 */
static long series_item_new(struct rser *s, enum sim_item_kind kind, int item)
{
	uint32_t slot = (uint32_t)s->nr_items;
	struct rser_item *it;

	it = line_get((void **)&s->items, &s->nr_items, &s->cap_items, sizeof(*s->items), kind,
		      item);
	if (!it)
		return -1;
	it->slot = slot;
	if (item >= 0 && item < RSER_DIRECT)
		s->have[kind == SIM_ITEM_EVENT][item / 64] |= 1ull << (item % 64);
	return (long)slot;
}

/*
 * The simulator's node of @s under run @p, looked up until it exists and
 * then kept: the series read their lines after every update, and a lookup
 * there cost more than the simulator's own update.
 */
static int32_t series_node(struct replay *r, unsigned int p, struct rser *s)
{
	struct rser_pol *pp = &s->pol[p];

	if (pp->node < 0)
		pp->node = sim_node_handle(r->sims[p], s->c->id);
	return pp->node;
}

/* @ru's sim line under run @p, looked up until the sim knows it. */
static inline int32_t series_run_line(struct replay *r, unsigned int p, struct rser_run *ru)
{
	if (ru->line < 0)
		ru->line = sim_line_handle(r->sims[p], (enum sim_item_kind)ru->key.kind,
					   ru->key.item);
	return ru->line;
}

/*
 * The visible error of the line in slot @i of @s under policy @p now:
 * sim_item_error() unless flushable.
 */
static int64_t series_visible(struct replay *r, unsigned int p, struct rser *s, size_t i)
{
	int32_t n = series_node(r, p, s);

	if (n < 0 || sim_node_flushable_at(r->sims[p], n))
		return 0;
	return sim_line_error_at(r->sims[p], n, series_run_line(r, p, &s->pol[p].lines[i]));
}

/*
 * Run @p is shown the line in slot @slot of @s, (@kind, @item), at the
 * update that made it: a slot it has not been shown (@slot >= nr_lines),
 * the next of its own lines.  min = max = 0: the value held since the last
 * sample, before it existed.  The update that made a line shows it to
 * every run (series_show(), the hits a block carries), so a run's
 * lines are the slots up to the newest it was shown.  Return: 0, -ENOMEM,
 * -EPROTO for a slot past the next (a line some run was not shown: a bug).
 */
static int series_run_show(struct rser_pol *pp, size_t slot, enum sim_item_kind kind, int item)
{
	size_t cap = pp->cap_lines;
	int ret;

	if (slot > pp->nr_lines)
		return -EPROTO;
	/* a cgroup has a line per item of the trace at most: far below 2^32 */
	ret = mcr_grow((void **)&pp->lines, &cap, (size_t)pp->nr_lines + 1, sizeof(*pp->lines));
	if (ret)
		return ret;
	pp->cap_lines = (uint32_t)cap;
	pp->lines[pp->nr_lines++] = (struct rser_run){
		.line = -1, .key = { .kind = (uint8_t)kind, .item = item },
	};
	return 0;
}

static int series_hits_grow(struct rser_hits *h)
{
	size_t cap = h->cap ? h->cap * 2 : 64;
	struct rser_hit *v = realloc(h->v, cap * sizeof(*v));

	if (!v)
		return -ENOMEM;
	h->v = v;
	h->cap = cap;
	return 0;
}

/* Inline: it runs for every series line an update reaches, mostly with room. */
static inline int series_hit_add(struct rser_hits *h, struct rser *s, size_t i)
{
	if (h->nr == h->cap && series_hits_grow(h) < 0)
		return -ENOMEM;
	h->v[h->nr++] = (struct rser_hit){ .s = s, .i = i };
	return 0;
}

/*
 * The series cgroups on @c's path, itself first, into c->ser_path: an
 * update's look at them read every ancestor's struct rcg before.  Made
 * again when a series cgroup or a parent link was made since (ser_gen).
 */
static void series_path_cache(const struct replay *r, struct rcg *c)
{
	unsigned int depth = 0, n = 0;
	const struct rcg *a;

	for (a = c; a && depth < RCG_MAX_DEPTH; a = a->parent, depth++) {
		if (!a->ser)
			continue;
		if (n == RCG_SER_PATH) {
			n++;
			break;
		}
		c->ser_path[n++] = a->ser;
	}
	c->nr_ser_path = n;
	c->ser_gen = r->ser_gen;
	memset(c->ser_full, 0, sizeof(c->ser_full));
}

/* Has @s the line (@kind, @item)?  One bit for the items the kernel has. */
static inline bool series_has(const struct rser *s, enum sim_item_kind kind, int item)
{
	if (item >= 0 && item < RSER_DIRECT)
		return s->have[kind == SIM_ITEM_EVENT][item / 64] >> (item % 64) & 1;
	return series_line_find(s, kind, item) >= 0;
}

/* A series line an update reaches and made: appended to @out, or -ENOMEM. */
static int series_made(struct rser *s, enum sim_item_kind kind, int item, struct rser_hits *out)
{
	long i = series_item_new(s, kind, item);

	return i < 0 ? -ENOMEM : series_hit_add(out, s, (size_t)i);
}

/*
 * The series lines an update of (@kind, @item) to @c reaches and makes (one
 * per series cgroup on its path that lacks it), appended to @out.  Most
 * updates make none: a bit of @c says so, once each series cgroup of the
 * path had the line.  Return: 1, -ENOMEM (@out unchanged).
 */
static int series_path_new(const struct replay *r, struct rcg *c, enum sim_item_kind kind,
			   int item, struct rser_hits *out)
{
	size_t nr0 = out->nr;
	unsigned int depth = 0, j;
	struct rcg *a;
	bool direct;
	int ret = 0;

	if (kind == SIM_ITEM_LRUVEC)
		kind = SIM_ITEM_STATE;	/* one line of memory.stat (sim.h) */
	if (c->ser_gen != r->ser_gen)
		series_path_cache(r, c);
	direct = item >= 0 && item < RSER_DIRECT;
	if (direct && c->ser_full[kind == SIM_ITEM_EVENT][item / 64] >> (item % 64) & 1)
		return 1;	/* nearly every update: one cache line of @c */
	if (c->nr_ser_path <= RCG_SER_PATH) {
		for (j = 0; j < c->nr_ser_path && !ret; j++)
			if (!series_has(c->ser_path[j], kind, item))
				ret = series_made(c->ser_path[j], kind, item, out);
	} else {
		for (a = c; a && depth < RCG_MAX_DEPTH && !ret; a = a->parent, depth++)
			if (a->ser && !series_has(a->ser, kind, item))
				ret = series_made(a->ser, kind, item, out);
	}
	if (ret < 0) {
		out->nr = nr0;
		return ret;
	}
	if (direct)
		c->ser_full[kind == SIM_ITEM_EVENT][item / 64] |= 1ull << (item % 64);
	return 1;
}

/*
 * Run @p is shown line @i of @s, (@kind, @item), after it applied the
 * update that made it: a slot it has not been shown, the next of its own
 * (series_run_show(), min = max = 0: the value before the line existed),
 * and its visible error now.  The first line a run is shown of @s starts
 * the watch of its memcg by the run's simulator (sim_watch()), which keeps
 * the ranges from then on; what its range holds of the line from before
 * (the visits' looks see every line) is dropped.
 */
static int series_show(struct replay *r, unsigned int p, struct rser *s, size_t i,
		       enum sim_item_kind kind, int item)
{
	struct rser_pol *pp = &s->pol[p];
	struct rser_run *ru;
	int64_t v, lo, hi;
	int32_t n;
	int ret;

	if (i < pp->nr_lines)
		return 0;
	ret = series_run_show(pp, i, kind, item);
	if (ret < 0)
		return ret;
	if (!pp->watched) {
		ret = sim_watch(r->sims[p], s->c->id);
		if (ret < 0)
			return ret;
		pp->watched = true;
	}
	ru = &pp->lines[i];
	n = series_node(r, p, s);
	if (n >= 0)
		sim_range_take(r->sims[p], n, series_run_line(r, p, ru), &lo, &hi);
	v = series_visible(r, p, s, i);
	if (v < ru->min)
		ru->min = v;
	if (v > ru->max)
		ru->max = v;
	return 0;
}

/* series_update(), the new lines listed in @hits. */
static int series_update_hits(struct replay *r, struct rcg *c, enum sim_item_kind kind,
			      int item, struct rser_hits *hits)
{
	unsigned int p;
	int ret;

	hits->nr = 0;
	ret = series_path_new(r, c, kind, item, hits);
	if (ret >= 0 && !hits->nr)
		return 0;	/* nearly every update */
	for (p = 0; ret >= 0 && p < r->p.nr_runs; p++)
		ret = series_update_run(r, hits->v, hits->nr, p, kind, item);
	return ret < 0 ? ret : 0;
}

/**
 * series_update() - after an update of (@kind, @item) to @c was applied to
 * every run: the series lines on @c's path made where new, and shown to
 * every run.  What the update changed in the lines of series cgroups that
 * are not flushable each run's simulator keeps itself (sim_watch()).
 */
int series_update(struct replay *r, struct rcg *c, enum sim_item_kind kind, int item)
{
	return series_update_hits(r, c, kind, item, &r->hits);
}

/**
 * series_update_one() - series_update() of a pass with a single run, on the
 * run's own thread (workers.c): with one run the series lines are the run's
 * alone until the next sample, which the pass takes serially, so a line can
 * join here without stopping the pass.  The new lines go through @hits, the
 * run's own (the pass keeps r->hits).
 */
int series_update_one(struct replay *r, struct rcg *c, enum sim_item_kind kind, int item,
		      struct rser_hits *hits)
{
	return series_update_hits(r, c, kind, item, hits);
}

/*
 * The per-run half of series_update() of (@kind, @item), for a run's own
 * thread, after it applied the update: the lines the update made
 * (series_lines_resolve()), @nr of them, shown to run @p.  Only run @p's
 * lines and handles are written.  Return: 0 or -errno.
 */
int series_update_run(struct replay *r, const struct rser_hit *hit, size_t nr, unsigned int p,
		      enum sim_item_kind kind, int item)
{
	size_t i;
	int ret;

	if (kind == SIM_ITEM_LRUVEC)
		kind = SIM_ITEM_STATE;	/* one line of memory.stat (sim.h) */
	for (i = 0; i < nr; i++) {
		ret = series_show(r, p, hit[i].s, hit[i].i, kind, item);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/**
 * series_lines_resolve() - the series lines an update of (@kind, @item) to
 * @c makes, appended to @out, for the runs' threads to show
 * (series_update_run()).  Only the pass's thread.
 * Return: 1, -ENOMEM.
 */
int series_lines_resolve(struct replay *r, struct rcg *c, enum sim_item_kind kind,
			 int item, struct rser_hits *out)
{
	return series_path_new(r, c, kind, item, out);
}

/**
 * series_after_event() - after an event: the series cgroups a run visited
 * during it see every line again (visits change what is shown and reset
 * stats_updates), which each run's simulator does (sim_watch_visited()).
 * Only the visited ones: a visit changes nothing else's visible error, and
 * a state already seen adds nothing to a minimum or maximum.
 */
int series_after_event(struct replay *r)
{
	unsigned int p;
	int ret;

	for (p = 0; p < r->p.nr_runs; p++) {
		ret = series_after_event_run(r, p);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* series_after_event() for run @p alone, on its own thread: only its simulator is written. */
int series_after_event_run(struct replay *r, unsigned int p)
{
	return sim_watch_visited(r->sims[p]);
}

/*
 * Saturated: past 2^64 - 1 no sample is due, since the readers hand out no
 * ts above 2^63 - 1 (db_event_check()); series_until() cannot wrap around.
 */
static uint64_t series_ts(const struct replay *r, uint64_t k)
{
	uint64_t ts;

	if (__builtin_mul_overflow(k, r->p.sample_ns, &ts) ||
	    __builtin_add_overflow(ts, r->st.first_ts, &ts))
		return UINT64_MAX;
	return ts;
}

/* Run @p's cgroup row of @s at @ts: its state @st (NULL: unknown or before it joined, zeros). */
static int series_cgroup_row(struct replay *r, unsigned int p, struct rser *s, uint64_t ts,
			     const struct sim_stale *st)
{
	struct replay_cgroup_sample cs = { .ts = ts, .id = s->c->id };

	if (st) {
		cs.pending = st->missing;
		cs.stats_updates = st->stats_updates;
		cs.flushable = st->flushable;
		cs.stranded = st->stranded;
	}
	return r->p.sink.cgroup_sample ? r->p.sink.cgroup_sample(r->p.sink.ctx, p, &cs) : 0;
}

/* Run @p's row of line @i of @s at @ts: its values @v (NULL: before it joined, zeros). */
static int series_item_row(struct replay *r, unsigned int p, struct rser *s, size_t i,
			   uint64_t ts, const struct series_val *v)
{
	const struct rser_item *it = &s->items[i];
	struct replay_sample sm = {
		.ts = ts, .id = s->c->id, .kind = (enum sim_item_kind)it->key.kind, .item = it->key.item,
	};

	if (v) {
		sm.error = v->error;
		sm.min_error = v->min;
		sm.max_error = v->max;
	}
	return r->p.sink.sample ? r->p.sink.sample(r->p.sink.ctx, p, &sm) : 0;
}

/*
 * series_sample_run() - run @p's half of a sample: for every series cgroup,
 * its state and each of the run's lines' visible error now, with the
 * minimum and maximum since the last sample (which start again from it),
 * into @out.  The run's lines are every line made before the sample (each
 * was shown to the run at the update that made it).  Touches run @p's
 * state alone: a run's thread may do it (workers.c).  Return: 0, -errno.
 */
int series_sample_run(struct replay *r, unsigned int p, struct series_vals *out)
{
	size_t i, k;
	int32_t n;
	int ret;

	out->nr_v = 0;
	ret = mcr_grow((void **)&out->cg, &out->cap_cg, r->nr_ser, sizeof(*out->cg));
	if (ret < 0)
		return ret;
	for (i = 0; i < r->nr_ser; i++) {
		struct rser *s = r->ser[i];
		struct rser_pol *pp = &s->pol[p];
		struct series_cg_val *cg = &out->cg[i];

		ret = sim_stale_get(r->sims[p], s->c->id, &cg->st);
		if (ret < 0 && ret != -ENOENT)
			return ret;
		cg->known = !ret;
		cg->nr_lines = pp->nr_lines;
		cg->v0 = out->nr_v;
		ret = mcr_grow((void **)&out->v, &out->cap_v, out->nr_v + pp->nr_lines,
			       sizeof(*out->v));
		if (ret < 0)
			return ret;
		n = series_node(r, p, s);
		for (k = 0; k < pp->nr_lines; k++) {
			struct rser_run *ru = &pp->lines[k];
			int64_t e = series_visible(r, p, s, k), lo, hi;
			struct series_val *sv = &out->v[out->nr_v++];

			*sv = (struct series_val){
				.error = e, .min = ru->min < e ? ru->min : e,
				.max = ru->max > e ? ru->max : e,
			};
			/* and what the run's updates changed (series_show()) */
			if (n >= 0 && sim_range_take(r->sims[p], n, series_run_line(r, p, ru), &lo, &hi)) {
				if (lo < sv->min)
					sv->min = lo;
				if (hi > sv->max)
					sv->max = hi;
			}
			/* held into the next interval */
			ru->min = ru->max = e;
		}
	}
	out->nr_cg = r->nr_ser;
	return 0;
}

/*
 * series_sample_emit() - the rows of sample @k from every run's half
 * (@v[p], series_sample_run()): for every series cgroup, and every line of
 * it the sample saw, rows missed by late joiners first, as zeros.  Lines
 * made after the sample (by updates the pass took since) wait for the
 * next.  Only the pass's thread.
 */
int series_sample_emit(struct replay *r, uint64_t k, const struct series_vals *v)
{
	uint64_t ts = series_ts(r, k);
	unsigned int p;
	size_t i, j;
	int ret;

	for (i = 0; i < v[0].nr_cg; i++) {
		struct rser *s = r->ser[i];

		for (; s->emitted < k; s->emitted++)
			for (p = 0; p < r->p.nr_runs; p++) {
				ret = series_cgroup_row(r, p, s, series_ts(r, s->emitted), NULL);
				if (ret < 0)
					return ret;
			}
		for (p = 0; p < r->p.nr_runs; p++) {
			const struct series_cg_val *cg = &v[p].cg[i];

			ret = series_cgroup_row(r, p, s, ts, cg->known ? &cg->st : NULL);
			if (ret < 0)
				return ret;
		}
		s->emitted = k + 1;
		for (j = 0; j < s->nr_items; j++) {
			struct rser_item *it = &s->items[j];

			if (it->slot >= v[0].cg[i].nr_lines)
				continue;
			for (; it->emitted < k; it->emitted++)
				for (p = 0; p < r->p.nr_runs; p++) {
					ret = series_item_row(r, p, s, j, series_ts(r, it->emitted),
							      NULL);
					if (ret < 0)
						return ret;
				}
			for (p = 0; p < r->p.nr_runs; p++) {
				if (it->slot >= v[p].cg[i].nr_lines)	/* a run not shown it: a bug */
					return -EPROTO;
				ret = series_item_row(r, p, s, j, ts, &v[p].v[v[p].cg[i].v0 + it->slot]);
				if (ret < 0)
					return ret;
			}
			it->emitted = k + 1;
		}
	}
	return 0;
}

/**
 * series_sample_take() - the next sample is taken now as far as the pass
 * goes: its index, for a sample whose runs' halves (series_sample_run())
 * come later, and series_sample_emit() after them.
 */
uint64_t series_sample_take(struct replay *r)
{
	uint64_t k = r->nr_samples++;

	r->sample_due = series_ts(r, r->nr_samples);
	return k;
}

/**
 * series_sample() - the sample r->nr_samples, at its ts, for every series
 * cgroup and line; rows missed by late joiners first, as zeros.
 */
int series_sample(struct replay *r)
{
	unsigned int p;
	int ret;

	for (p = 0; p < r->p.nr_runs; p++) {
		ret = series_sample_run(r, p, &r->svals[p]);
		if (ret < 0)
			return ret;
	}
	return series_sample_emit(r, series_sample_take(r), r->svals);
}

/**
 * series_until() - every sample due before an event at @ts: a sample at T
 * shows the state after the events before T.  The sample at the first
 * event's ts is the state before anything happened.
 */
int series_until(struct replay *r, uint64_t ts)
{
	int ret;

	if (!r->p.sample_ns)
		return 0;
	while (ts >= series_next_ts(r)) {
		ret = series_sample(r);
		if (ret < 0)
			return ret;
	}
	return 0;
}

void series_free(struct replay *r)
{
	size_t i, j;

	for (i = 0; i < r->nr_ser; i++) {
		for (j = 0; j < REPLAY_MAX_RUNS; j++)
			free(r->ser[i]->pol[j].lines);
		free(r->ser[i]->items);
		free(r->ser[i]);
	}
	free(r->ser);
	r->ser = NULL;
	r->nr_ser = 0;
	free(r->hits.v);
	r->hits = (struct rser_hits){ 0 };
	for (j = 0; j < REPLAY_MAX_RUNS; j++)
		series_vals_free(&r->svals[j]);
}

void series_vals_free(struct series_vals *v)
{
	free(v->cg);
	free(v->v);
	*v = (struct series_vals){ 0 };
}

size_t replay_series_count(const struct replay *r)
{
	return r->nr_ser;
}

/* End of the pass: lines and cgroups that joined after the last sample get its zero rows. */
int series_finish(struct replay *r)
{
	unsigned int p;
	size_t i, j;
	int ret;

	for (i = 0; i < r->nr_ser; i++) {
		struct rser *s = r->ser[i];

		for (; s->emitted < r->nr_samples; s->emitted++)
			for (p = 0; p < r->p.nr_runs; p++) {
				ret = series_cgroup_row(r, p, s, series_ts(r, s->emitted), NULL);
				if (ret < 0)
					return ret;
			}
		for (j = 0; j < s->nr_items; j++) {
			struct rser_item *it = &s->items[j];

			for (; it->emitted < r->nr_samples; it->emitted++)
				for (p = 0; p < r->p.nr_runs; p++) {
					ret = series_item_row(r, p, s, j, series_ts(r, it->emitted),
							      NULL);
					if (ret < 0)
						return ret;
				}
		}
	}
	return 0;
}

uint64_t replay_sample_count(const struct replay *r)
{
	return r->nr_samples;
}
