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
 * reader could see them either.  That look costs no lookup: an update's
 * lines are resolved once for every run (struct rser_hit), and each run keeps
 * its simulator's node and line handles (sim_node_handle()).  What a run
 * reads and writes at the look sits in its own struct rser_pol and line
 * array: the look is a few cache misses per series ancestor and run, on
 * every update, and it was most of the series' cost.
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
	/* its first cache line is what an update's look at it reads (replay-local.h) */
	s = aligned_alloc(64, (sizeof(*s) + 63) & ~(size_t)63);
	if (!s)
		return -ENOMEM;
	memset(s, 0, sizeof(*s));
	s->c = c;
	for (p = 0; p < REPLAY_MAX_RUNS; p++)
		s->pol[p].node = -1;
	/* no run has seen it flushable yet */
	s->open = r->p.nr_runs >= 64 ? ~0ull : (1ull << r->p.nr_runs) - 1;
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

/*
 * The slot of line (@kind, @item) of @s, or -1 if it has none: one load for
 * the items the kernel has (kind STATE or EVENT, LRUVEC folded), a search
 * for any other.
 */
static long series_line_find(const struct rser *s, enum sim_item_kind kind, int item)
{
	const struct rser_item *it;

	it = line_find(s->items, s->nr_items, sizeof(*s->items), kind, item, NULL);
	return it ? (long)it->slot : -1;
}

static inline long series_line(const struct rser *s, enum sim_item_kind kind, int item)
{
	if (item < 0 || item >= RSER_DIRECT)
		return series_line_find(s, kind, item);
	return (long)s->direct[kind == SIM_ITEM_EVENT][item] - 1;
}

/*
 * Line (@kind, @item), which @s lacks, joins it: its slot, the next one
 * (-1: ENOMEM).  The runs' lines are theirs: each run adds its own at the
 * update that made the line (series_see_line()).
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
	if (item >= 0 && item < RSER_DIRECT) {
		s->direct[kind == SIM_ITEM_EVENT][item] = slot + 1;
		s->have[kind == SIM_ITEM_EVENT][item / 64] |= 1ull << (item % 64);
	}
	return (long)slot;
}

/* Inline for the lines that exist, which is nearly every update's. */
static inline long series_item(struct rser *s, enum sim_item_kind kind, int item)
{
	long i = series_line(s, kind, item);

	return i >= 0 ? i : series_item_new(s, kind, item);
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

static bool series_needs_flush(struct replay *r, unsigned int p, struct rser *s)
{
	int32_t n = series_node(r, p, s);

	return n >= 0 && sim_node_flushable_at(r->sims[p], n);
}

/*
 * Run @p sees @s flushable (@f) or not: its flag, and its bit of s->open
 * if that changed.  A run's flag changes on the run's own thread, so the
 * bits of one word change atomically; they change far less often than an
 * update reads them (series_update_hits()).
 */
static void series_flushable_set(struct rser *s, unsigned int p, bool f)
{
	if (s->pol[p].flushable == f)
		return;
	s->pol[p].flushable = f;
	if (f)
		__atomic_fetch_and(&s->open, ~(1ull << p), __ATOMIC_RELAXED);
	else
		__atomic_fetch_or(&s->open, 1ull << p, __ATOMIC_RELAXED);
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
	struct rser_pol *pp = &s->pol[p];
	int32_t n;

	if (pp->flushable)
		return 0;
	n = series_node(r, p, s);
	if (n < 0)
		return 0;
	return sim_line_error_at(r->sims[p], n, series_run_line(r, p, &pp->lines[i]));
}

/*
 * Run @p is shown the line in slot @slot of @s, (@kind, @item), at the
 * update that made it: a slot it has not been shown (@slot >= nr_lines),
 * the next of its own lines.  min = max = 0: the value held since the last
 * sample, before it existed.  The update that made a line shows it to
 * every run (series_update_at(), the hits a block carries), so a run's
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

/*
 * Every line of @s under run @p is seen: its visible error now widens its
 * minimum and maximum since the last sample.  The node and its flag are
 * looked at once.
 */
static void series_see_all(struct replay *r, unsigned int p, struct rser *s)
{
	struct rser_pol *pp = &s->pol[p];
	int32_t n = pp->flushable ? -1 : series_node(r, p, s);
	size_t i;

	for (i = 0; i < pp->nr_lines; i++) {
		struct rser_run *ru = &pp->lines[i];
		int64_t v = 0;

		/* series_visible() */
		if (n >= 0)
			v = sim_line_error_at(r->sims[p], n, series_run_line(r, p, ru));
		if (v < ru->min)
			ru->min = v;
		if (v > ru->max)
			ru->max = v;
	}
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
}

/*
 * The series lines an update of (@kind, @item) to @c reaches, appended to
 * @out, made where new.  Return: 1 appended, -ENOMEM (@out unchanged).
 */
static int series_path(const struct replay *r, struct rcg *c, enum sim_item_kind kind,
		       int item, struct rser_hits *out)
{
	size_t nr0 = out->nr;
	unsigned int depth = 0, j;
	const struct rcg *a;
	int ret = 1;

	if (kind == SIM_ITEM_LRUVEC)
		kind = SIM_ITEM_STATE;	/* one line of memory.stat (sim.h) */
	if (c->ser_gen != r->ser_gen)
		series_path_cache(r, c);
	if (c->nr_ser_path <= RCG_SER_PATH) {
		for (j = 0; j < c->nr_ser_path && ret > 0; j++) {
			struct rser *s = c->ser_path[j];
			long i = series_item(s, kind, item);

			if (i < 0)
				ret = -ENOMEM;
			else if (series_hit_add(out, s, (size_t)i) < 0)
				ret = -ENOMEM;
		}
		goto out;
	}
	for (a = c; a && depth < RCG_MAX_DEPTH && ret > 0; a = a->parent, depth++) {
		long i;

		if (!a->ser)
			continue;
		i = series_item(a->ser, kind, item);
		if (i < 0)
			ret = -ENOMEM;
		else if (series_hit_add(out, a->ser, (size_t)i) < 0)
			ret = -ENOMEM;
	}
out:
	if (ret <= 0)
		out->nr = nr0;
	return ret;
}

/*
 * Run @p sees line @i of @s change, as series_see_all() sees each: if the
 * cgroup's flushable state changed, every line's visible error did.  A
 * cgroup seen flushable is left alone: an update cannot end that (only a
 * visit resets its stats_updates, and a visited cgroup is looked at again
 * after the event, series_visited()), and its lines' visible error, 0, is
 * in their minimum and maximum already.
 */
static inline int series_see_line(struct replay *r, struct sim *sim, unsigned int p,
				  struct rser *s, size_t i, enum sim_item_kind kind, int item)
{
	struct rser_pol *pp = &s->pol[p];
	struct rser_run *ru;
	int32_t n;
	int64_t v = 0;

	if (__builtin_expect(i >= pp->nr_lines, 0)) {
		int ret = series_run_show(pp, i, kind, item);

		if (ret < 0)
			return ret;
	}
	if (pp->flushable)
		return 0;
	ru = &pp->lines[i];
	n = series_node(r, p, s);
	if (n >= 0 && sim_node_flushable_at(sim, n)) {	/* every line is 0 now, this one too */
		series_flushable_set(s, p, true);
		series_see_all(r, p, s);
		return 0;
	}
	/* series_visible() */
	if (n >= 0)
		v = sim_line_error_at(sim, n, series_run_line(r, p, ru));
	if (v < ru->min)
		ru->min = v;
	if (v > ru->max)
		ru->max = v;
	return 0;
}

/*
 * Does every run see @s flushable, and has it the line whose bit of
 * s->have is @bit of word @have (NULL: an item out of the direct range)?
 * Then an update of the line changes nothing a run sees
 * (series_see_line() leaves at once): one cache line read, not two.  Only
 * where no run's thread changes s->open meanwhile (series_update_hits()).
 */
static inline bool series_flushable_has(const struct rser *s, size_t have, uint64_t bit)
{
	return !__atomic_load_n(&s->open, __ATOMIC_RELAXED) && have != SIZE_MAX &&
	       ((const uint64_t *)s->have)[have] & bit;
}

/*
 * series_update_hits() at series cgroup @s, which some run does not see
 * flushable or which lacks the line: made where new, seen by every run.
 * Out of line, as the path deeper than the cache: the update's look at
 * the ancestors every run sees flushable, most of them, stays a small
 * function with a small frame.
 */
static __attribute__((noinline)) int series_update_at(struct replay *r, struct rser *s,
						       enum sim_item_kind kind, int item)
{
	long i = series_item(s, kind, item);
	unsigned int p;
	int ret;

	if (i < 0)
		return -ENOMEM;
	for (p = 0; p < r->p.nr_runs; p++) {
		ret = series_see_line(r, r->sims[p], p, s, (size_t)i, kind, item);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* series_update_hits() of a path deeper than the cache, listed in @hits. */
static __attribute__((noinline)) int series_update_deep(struct replay *r, struct rcg *c,
							 enum sim_item_kind kind, int item,
							 struct rser_hits *hits)
{
	unsigned int p;
	int ret;

	hits->nr = 0;
	ret = series_path(r, c, kind, item, hits);
	for (p = 0; ret >= 0 && p < r->p.nr_runs; p++)
		ret = series_update_run(r, hits->v, hits->nr, p, kind, item);
	return ret < 0 ? ret : 0;
}

/* series_update(), the deep path's list in @hits. */
static inline int series_update_hits(struct replay *r, struct rcg *c, enum sim_item_kind kind,
				     int item, struct rser_hits *hits)
{
	size_t have;
	uint64_t bit;
	unsigned int j;
	int ret;

	if (kind == SIM_ITEM_LRUVEC)
		kind = SIM_ITEM_STATE;	/* one line of memory.stat (sim.h) */
	if (c->ser_gen != r->ser_gen)
		series_path_cache(r, c);
	if (c->nr_ser_path > RCG_SER_PATH)
		return series_update_deep(r, c, kind, item, hits);
	/* the line's word and bit of rser.have, the same in every series cgroup */
	have = item >= 0 && item < RSER_DIRECT ?
	       (size_t)(kind == SIM_ITEM_EVENT) * (RSER_DIRECT / 64) + (size_t)item / 64 : SIZE_MAX;
	bit = 1ull << ((unsigned int)item % 64);
	for (j = 0; j < c->nr_ser_path; j++) {
		struct rser *s = c->ser_path[j];

		/* a line there and every run's cgroup flushable: nothing to see */
		if (series_flushable_has(s, have, bit))
			continue;
		ret = series_update_at(r, s, kind, item);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/**
 * series_update() - after an update of (@kind, @item) to @c was applied to
 * every policy: the series cgroups on @c's path see the line change, made
 * where new.  Each series cgroup's line is looked at by every run at once,
 * as series_update_run() would (a run's look at one series cgroup reads
 * and writes nothing of another's): no hits array in between, since most
 * of them, at flushable ancestors, are left at once.
 */
int series_update(struct replay *r, struct rcg *c, enum sim_item_kind kind, int item)
{
	return series_update_hits(r, c, kind, item, &r->hits);
}

/**
 * series_update_one() - series_update() of a pass with a single run, on the
 * run's own thread (workers.c): with one run the series lines are the run's
 * alone until the next sample, which the pass takes serially, so a line can
 * join here without stopping the pass.  Each line is seen as it is found,
 * with no list of them; a deep path's list goes through @hits, the run's
 * own (the pass keeps r->hits).
 */
int series_update_one(struct replay *r, struct rcg *c, enum sim_item_kind kind, int item,
		      struct rser_hits *hits)
{
	return series_update_hits(r, c, kind, item, hits);
}

/*
 * The per-run half of series_update() of (@kind, @item), for a run's own
 * thread: the lines are resolved already (series_lines_resolve()), so
 * nothing shared changes; only run @p's lines, min, max, handles and
 * flushable entries are written.  Return: 0 or -errno.
 */
int series_update_run(struct replay *r, const struct rser_hit *hit, size_t nr, unsigned int p,
		      enum sim_item_kind kind, int item)
{
	struct sim *sim = r->sims[p];
	size_t i;
	int ret;

	if (kind == SIM_ITEM_LRUVEC)
		kind = SIM_ITEM_STATE;	/* one line of memory.stat (sim.h) */
	for (i = 0; i < nr; i++) {
		ret = series_see_line(r, sim, p, hit[i].s, hit[i].i, kind, item);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/**
 * series_lines_resolve() - the series lines an update of (@kind, @item) to
 * @c reaches, appended to @out, made where a series cgroup sees the line
 * first.  Making one changes nothing a run reads: its slot is new, and each
 * run is shown it as it applies this update (series_update_run()), which
 * the caller must then queue for every run.
 * Return: 1 appended, -ENOMEM.
 */
int series_lines_resolve(struct replay *r, struct rcg *c, enum sim_item_kind kind,
			 int item, struct rser_hits *out)
{
	return series_path(r, c, kind, item, out);
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

	if (!c || !c->ser)
		return 0;
	series_flushable_set(c->ser, v->p, series_needs_flush(v->r, v->p, c->ser));
	series_see_all(v->r, v->p, c->ser);
	return 0;
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
	int ret;

	out->nr_v = 0;
	ret = mcr_grow((void **)&out->cg, &out->cap_cg, r->nr_ser, sizeof(*out->cg));
	if (ret < 0)
		return ret;
	for (i = 0; i < r->nr_ser; i++) {
		struct rser *s = r->ser[i];
		struct rser_pol *pp = &s->pol[p];
		struct series_cg_val *cg = &out->cg[i];

		series_flushable_set(s, p, series_needs_flush(r, p, s));
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
		for (k = 0; k < pp->nr_lines; k++) {
			struct rser_run *ru = &pp->lines[k];
			int64_t e = series_visible(r, p, s, k);

			out->v[out->nr_v++] = (struct series_val){
				.error = e, .min = ru->min < e ? ru->min : e,
				.max = ru->max > e ? ru->max : e,
			};
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
