// SPDX-License-Identifier: GPL-2.0
/*
 * series.c - the fixed-interval series: for each series cgroup (the ones
 * replay_params names and their ancestors) and each line of memory.stat
 * updated in its subtree, the visible error at every sample from the first
 * event to the last, with its minimum and maximum since the previous sample.
 *
 * No sample is skipped.  A line or cgroup that joins late had error 0 before
 * (nothing of it was updated, so truth and shown were both 0): its earlier
 * rows are written as zeros when it joins.  The minimum and maximum are kept
 * by looking at the visible error after every event that can change it: an
 * update below the cgroup (that line; all lines if the cgroup's flushable
 * state flipped) and any event during which a policy made visits.  States
 * inside one event (the visits of an instant flush) are not seen, as no
 * reader could see them either.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->c = c;
	c->ser = s;
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

/* min = max = 0 for a new line: the value held since the last sample, before it existed */
static struct rser_item *series_item(const struct replay *r, struct rser *s,
				     enum sim_item_kind kind, int item)
{
	struct rser_item *it = line_get((void **)&s->items, &s->nr_items, &s->cap_items,
					sizeof(*s->items), kind, item);

	if (it && !it->mm)
		it->mm = calloc(2 * (size_t)r->p.nr_runs, sizeof(*it->mm));
	return it && it->mm ? it : NULL;
}

static int64_t *series_min(struct rser_item *it, unsigned int p)
{
	return &it->mm[p];
}

static int64_t *series_max(const struct replay *r, struct rser_item *it, unsigned int p)
{
	return &it->mm[r->p.nr_runs + p];
}

/* The visible error of (@id, line) under policy @p now. */
static int series_visible(struct replay *r, unsigned int p, uint64_t id, bool flushable,
			  const struct rser_item *it, int64_t *v)
{
	int ret;

	*v = 0;
	if (flushable)
		return 0;
	ret = sim_item_error(r->sims[p], id, (enum sim_item_kind)it->key.kind, it->key.item, v);
	return ret == -ENOENT ? 0 : ret;
}

static int series_see(struct replay *r, unsigned int p, struct rser *s, struct rser_item *it)
{
	int64_t v;
	int ret = series_visible(r, p, s->c->id, s->flushable[p], it, &v);

	if (ret < 0)
		return ret;
	if (v < *series_min(it, p))
		*series_min(it, p) = v;
	if (v > *series_max(r, it, p))
		*series_max(r, it, p) = v;
	return 0;
}

static int series_see_all(struct replay *r, unsigned int p, struct rser *s)
{
	size_t i;
	int ret;

	for (i = 0; i < s->nr_items; i++) {
		ret = series_see(r, p, s, &s->items[i]);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Did @s's flushable state change under @p?  Then every line's visible error did. */
static int series_flip(struct replay *r, unsigned int p, struct rser *s)
{
	bool f = sim_needs_flush(r->sims[p], s->c->id);

	if (f == s->flushable[p])
		return 0;
	s->flushable[p] = f;
	return series_see_all(r, p, s);
}

/**
 * series_update() - after an update of (@kind, @item) to @c was applied to
 * every policy: the series cgroups on @c's path see the line change.  The
 * lines are made here; then each run sees them as series_update_run() does.
 */
int series_update(struct replay *r, struct rcg *c, enum sim_item_kind kind, int item)
{
	unsigned int p, depth = 0;
	struct rcg *a;
	int ret;

	if (kind == SIM_ITEM_LRUVEC)
		kind = SIM_ITEM_STATE;	/* one line of memory.stat (sim.h) */
	for (a = c; a && depth < RCG_MAX_DEPTH; a = a->parent, depth++)
		if (a->ser && !series_item(r, a->ser, kind, item))
			return -ENOMEM;
	for (p = 0; p < r->p.nr_runs; p++) {
		ret = series_update_run(r, c, kind, item, p);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/*
 * The per-run half of series_update(), for a run's own thread: the lines
 * must exist already (series_lines_known()), so nothing shared changes; only
 * run @p's min, max and flushable entries are written.
 */
int series_update_run(struct replay *r, struct rcg *c, enum sim_item_kind kind, int item,
		      unsigned int p)
{
	unsigned int depth = 0;
	struct rcg *a;
	int ret;

	if (kind == SIM_ITEM_LRUVEC)
		kind = SIM_ITEM_STATE;
	for (a = c; a && depth < RCG_MAX_DEPTH; a = a->parent, depth++) {
		struct rser_item *it;

		if (!a->ser)
			continue;
		it = line_find(a->ser->items, a->ser->nr_items, sizeof(*it), kind, item, NULL);
		if (!it)
			return -EINVAL;	/* the caller checked series_lines_known() */
		ret = series_flip(r, p, a->ser);
		if (!ret)
			ret = series_see(r, p, a->ser, it);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/*
 * Would series_update() for this line of @c add nothing shared (every series
 * cgroup on the path has the line already)?  A line joins only where a series
 * cgroup sees it first: serial there, since it changes what every run sees.
 */
bool series_lines_known(const struct replay *r, const struct rcg *c, enum sim_item_kind kind,
			int item)
{
	unsigned int depth = 0;
	const struct rcg *a;

	if (kind == SIM_ITEM_LRUVEC)
		kind = SIM_ITEM_STATE;
	for (a = c; a && depth < RCG_MAX_DEPTH; a = a->parent, depth++)
		if (a->ser && !line_find(a->ser->items, a->ser->nr_items, sizeof(*a->ser->items),
					 kind, item, NULL))
			return false;
	return true;
}

struct series_vis {
	struct replay	*r;
	unsigned int	p;
};

/* Memcg @id was visited under run v->p: if it has series, its lines are seen again. */
static int series_visited(uint64_t id, void *ctx)
{
	struct series_vis *v = ctx;
	struct rcg *c = rcg_find(v->r, id);
	int ret;

	if (!c || !c->ser)
		return 0;
	c->ser->flushable[v->p] = sim_needs_flush(v->r->sims[v->p], id);
	ret = series_see_all(v->r, v->p, c->ser);
	return ret < 0 ? ret : 0;
}

/**
 * series_after_event() - the series cgroups a run visited during the last
 * event are looked at again: visits change what is shown and reset
 * stats_updates.  Only the visited ones: a visit changes nothing else's
 * visible error (sim_visited_drain()), and a state already seen adds nothing
 * to a minimum or maximum.
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

/* series_after_event() for run @p alone, on its own thread: only its entries are written. */
int series_after_event_run(struct replay *r, unsigned int p)
{
	struct series_vis v = { .r = r, .p = p };
	int ret = sim_visited_drain(r->sims[p], series_visited, &v);

	return ret < 0 ? ret : 0;
}

static uint64_t series_ts(const struct replay *r, uint64_t k)
{
	return r->st.first_ts + k * r->p.sample_ns;
}

static int series_cgroup_row(struct replay *r, unsigned int p, struct rser *s, uint64_t ts,
			     bool zero)
{
	struct replay_cgroup_sample cs = { .ts = ts, .id = s->c->id };
	struct sim_stale st;
	int ret;

	if (!zero) {
		ret = sim_stale_get(r->sims[p], s->c->id, &st);
		if (ret < 0 && ret != -ENOENT)
			return ret;
		if (!ret) {
			cs.pending = st.missing;
			cs.stats_updates = st.stats_updates;
			cs.flushable = st.flushable;
			cs.stranded = st.stranded;
		}
	}
	return r->p.sink.cgroup_sample ? r->p.sink.cgroup_sample(r->p.sink.ctx, p, &cs) : 0;
}

static int series_item_row(struct replay *r, unsigned int p, struct rser *s,
			   struct rser_item *it, uint64_t ts, bool zero)
{
	struct replay_sample sm = {
		.ts = ts, .id = s->c->id, .kind = (enum sim_item_kind)it->key.kind, .item = it->key.item,
	};
	int ret;

	if (!zero) {
		ret = series_visible(r, p, s->c->id, s->flushable[p], it, &sm.error);
		if (ret < 0)
			return ret;
		sm.min_error = *series_min(it, p) < sm.error ? *series_min(it, p) : sm.error;
		sm.max_error = *series_max(r, it, p) > sm.error ? *series_max(r, it, p) : sm.error;
		/* held into the next interval */
		*series_min(it, p) = *series_max(r, it, p) = sm.error;
	}
	return r->p.sink.sample ? r->p.sink.sample(r->p.sink.ctx, p, &sm) : 0;
}

/**
 * series_sample() - the sample r->nr_samples, at its ts, for every series
 * cgroup and line; rows missed by late joiners first, as zeros.
 */
int series_sample(struct replay *r)
{
	uint64_t k = r->nr_samples, ts = series_ts(r, k);
	unsigned int p;
	size_t i, j;
	int ret;

	for (i = 0; i < r->nr_ser; i++) {
		struct rser *s = r->ser[i];

		for (; s->emitted < k; s->emitted++)
			for (p = 0; p < r->p.nr_runs; p++) {
				ret = series_cgroup_row(r, p, s, series_ts(r, s->emitted), true);
				if (ret < 0)
					return ret;
			}
		for (p = 0; p < r->p.nr_runs; p++) {
			s->flushable[p] = sim_needs_flush(r->sims[p], s->c->id);
			ret = series_cgroup_row(r, p, s, ts, false);
			if (ret < 0)
				return ret;
		}
		s->emitted = k + 1;
		for (j = 0; j < s->nr_items; j++) {
			struct rser_item *it = &s->items[j];

			for (; it->emitted < k; it->emitted++)
				for (p = 0; p < r->p.nr_runs; p++) {
					ret = series_item_row(r, p, s, it, series_ts(r, it->emitted),
							      true);
					if (ret < 0)
						return ret;
				}
			for (p = 0; p < r->p.nr_runs; p++) {
				ret = series_item_row(r, p, s, it, ts, false);
				if (ret < 0)
					return ret;
			}
			it->emitted = k + 1;
		}
	}
	r->nr_samples++;
	return 0;
}

/* Is a sample due before an event at @ts (series_until() would write rows)? */
bool series_due(const struct replay *r, uint64_t ts)
{
	return r->p.sample_ns && ts >= series_ts(r, r->nr_samples);
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
	while (ts >= series_ts(r, r->nr_samples)) {
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
		for (j = 0; j < r->ser[i]->nr_items; j++)
			free(r->ser[i]->items[j].mm);
		free(r->ser[i]->items);
		free(r->ser[i]);
	}
	free(r->ser);
	r->ser = NULL;
	r->nr_ser = 0;
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
				ret = series_cgroup_row(r, p, s, series_ts(r, s->emitted), true);
				if (ret < 0)
					return ret;
			}
		for (j = 0; j < s->nr_items; j++) {
			struct rser_item *it = &s->items[j];

			for (; it->emitted < r->nr_samples; it->emitted++)
				for (p = 0; p < r->p.nr_runs; p++) {
					ret = series_item_row(r, p, s, it, series_ts(r, it->emitted),
							      true);
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
