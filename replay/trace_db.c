// SPDX-License-Identifier: GPL-2.0
/*
 * The trace side of the database: what the engine needs up front, built from
 * what db/ reads (meta, cgroups, gaps, event kinds), and the event source.
 * No SQL here: the tables are db/'s.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "db.h"
#include "error.h"
#include "event.h"
#include "replay.h"

struct trace_load {
	struct replay_trace	*t;
	size_t			cap;
};

static int trace_add_cgroup(const struct db_cgroup *cg, void *arg)
{
	struct trace_load *l = arg;
	struct replay_trace *t = l->t;
	struct replay_cgroup *c;

	if (mcr_grow((void **)&t->cgroups, &l->cap, t->nr_cgroups + 1, sizeof(*t->cgroups)) < 0)
		return -ENOMEM;
	c = &t->cgroups[t->nr_cgroups];
	c->id = cg->id;
	c->parent = cg->parent;
	c->level = cg->level;
	c->created_ts = cg->created_ts;
	c->parent_unknown = db_cgroup_parent_unknown(cg);
	c->path = cg->path ? strdup(cg->path) : NULL;
	if (cg->path && !c->path)
		return -ENOMEM;
	t->nr_cgroups++;
	return 0;
}

/* The engine registers cgroups by (level, id): those of unknown level (-1) first. */
static int trace_cgroup_cmp(const void *a, const void *b)
{
	const struct replay_cgroup *x = a, *y = b;

	if (x->level != y->level)
		return x->level < y->level ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int trace_add_gap(const struct db_gap *gap, void *arg)
{
	struct trace_load *l = arg;
	struct replay_trace *t = l->t;

	if (mcr_grow((void **)&t->gaps, &l->cap, t->nr_gaps + 1, sizeof(*t->gaps)) < 0)
		return -ENOMEM;
	t->gaps[t->nr_gaps].cpu = gap->cpu;
	t->gaps[t->nr_gaps].ts = gap->ts;
	t->gaps[t->nr_gaps].count = gap->count;
	t->nr_gaps++;
	return 0;
}

static int trace_load_tables(struct db *db, struct replay_trace *t)
{
	struct trace_load cgroups = { .t = t }, gaps = { .t = t };
	uint32_t kinds = 0;
	int ret;

	/* a window shows as its lock or its unlock, whichever the trace kept */
	ret = db_events_kinds(db, &kinds);
	if (ret < 0)
		return ret;
	t->windows_traced = kinds & (1u << MCR_EV_LOCKED | 1u << MCR_EV_UNLOCK);
	t->visits_traced = kinds & 1u << MCR_EV_VISIT;
	ret = db_cgroups_foreach(db, trace_add_cgroup, &cgroups);
	if (ret < 0)
		return ret;
	if (t->nr_cgroups)
		qsort(t->cgroups, t->nr_cgroups, sizeof(*t->cgroups), trace_cgroup_cmp);
	return db_gaps_foreach(db, trace_add_gap, &gaps);
}

/**
 * replay_trace_load() - CPUs, batch, hierarchy id, cgroups, gaps and which
 * event kinds the trace has.  meta nr_cpus_possible is required (-MCR_E_SCHEMA).
 */
int replay_trace_load(struct db *db, struct replay_trace *t)
{
	int64_t v;
	int ret;

	memset(t, 0, sizeof(*t));
	ret = db_meta_get_int(db, "nr_cpus_possible", &v);
	if (ret < 0)
		return ret == -ENOENT ? -MCR_E_SCHEMA : ret;
	if (v <= 0 || v > REPLAY_MAX_CPUS)
		return -MCR_E_BAD_INPUT;
	t->nr_possible = (unsigned int)v;
	t->nr_online = t->nr_possible;
	if (db_meta_get_int(db, "nr_cpus_online", &v) == 0 && v > 0 && v <= t->nr_possible)
		t->nr_online = (unsigned int)v;
	/* MEMCG_CHARGE_BATCH of the traced kernel; 64 in every version that has the tracepoints */
	t->batch = SIM_CHARGE_BATCH;
	if (db_meta_get_int(db, "batch_size", &v) == 0) {
		if (v <= 0 || v > REPLAY_MAX_BATCH)
			return -MCR_E_BAD_INPUT;
		t->batch = (unsigned int)v;
	}
	t->hierarchy_id = -1;
	if (db_meta_get_int(db, "memory_hierarchy_id", &v) == 0)
		t->hierarchy_id = (int)v;
	if (db_meta_get_int(db, "event_count", &v) == 0 && v > 0)
		t->nr_events = (uint64_t)v;
	db_meta_get(db, "kernel_release", &t->kernel_release);
	db_meta_get(db, "source", &t->source);
	ret = trace_load_tables(db, t);
	if (ret < 0)
		replay_trace_free(t);
	return ret;
}

void replay_trace_free(struct replay_trace *t)
{
	size_t i;

	for (i = 0; i < t->nr_cgroups; i++)
		free((char *)t->cgroups[i].path);
	free(t->cgroups);
	free(t->gaps);
	free(t->kernel_release);
	free(t->source);
	memset(t, 0, sizeof(*t));
}

struct source_db {
	struct db		*db;
	struct db_iter		*it;
	const struct mcr_event	*const *evs;	/* the iterator's batch, *evs[i] next */
	int			i, n;
};

/*
 * Up to @max events of the iterator's batch; the next batch only once it is
 * all taken.  db_iter_next_batch() checks every event's fields
 * (db_event_check()): nothing is left to check.
 */
static int source_db_take(void *ctx, struct mcr_event *ev, int max)
{
	struct source_db *sd = ctx;
	const struct mcr_event *const *evs;
	int i, n;

	if (sd->i == sd->n) {
		int ret = db_iter_next_batch(sd->it, &sd->evs);

		if (ret <= 0)
			return ret;
		sd->n = ret;
		sd->i = 0;
	}
	n = sd->n - sd->i < max ? sd->n - sd->i : max;
	evs = sd->evs + sd->i;
	for (i = 0; i < n; i++)
		ev[i] = *evs[i];
	sd->i += n;
	return n;
}

/* One event: source_db_take() of one. */
static int source_db_next(void *ctx, struct mcr_event *ev)
{
	return source_db_take(ctx, ev, 1);
}

/* A fresh iterator: the events again from the first, in the same order. */
static int source_db_rewind(void *ctx)
{
	struct source_db *sd = ctx;
	struct db_iter *it;
	int ret = db_iter_open(sd->db, &it);

	if (ret < 0)
		return ret;
	db_iter_close(sd->it);
	sd->it = it;
	sd->i = sd->n = 0;
	return 0;
}

int replay_source_db_open(struct db *db, struct replay_source *src)
{
	struct source_db *sd = calloc(1, sizeof(*sd));
	int ret;

	if (!sd)
		return -ENOMEM;
	sd->db = db;
	ret = db_iter_open(db, &sd->it);
	if (ret < 0) {
		free(sd);
		return ret;
	}
	src->next = source_db_next;
	src->take = source_db_take;
	src->rewind = source_db_rewind;
	src->ctx = sd;
	return 0;
}

void replay_source_db_close(struct replay_source *src)
{
	struct source_db *sd = src->ctx;

	if (sd) {
		db_iter_close(sd->it);
		free(sd);
	}
	src->ctx = NULL;
}
