// SPDX-License-Identifier: GPL-2.0
/* The trace side of the database: what the engine needs up front, and the event source. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "error.h"
#include "replay.h"

static int trace_sql_err(sqlite3 *sq, int rc)
{
	(void)sq;
	return rc == SQLITE_NOMEM ? -ENOMEM : -MCR_E_SCHEMA;
}

static int trace_load_cgroups(sqlite3 *sq, struct replay_trace *t)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc = sqlite3_prepare_v2(sq, "SELECT id, parent, path, level, created_ts, parent_unknown "
				    "FROM cgroups ORDER BY level, id", -1, &st, NULL);

	if (rc != SQLITE_OK)
		return trace_sql_err(sq, rc);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct replay_cgroup *c;
		const unsigned char *path = sqlite3_column_text(st, 2);

		if (t->nr_cgroups == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			void *n = realloc(t->cgroups, ncap * sizeof(*t->cgroups));

			if (!n) {
				rc = SQLITE_NOMEM;
				break;
			}
			t->cgroups = n;
			cap = ncap;
		}
		c = &t->cgroups[t->nr_cgroups];
		c->id = (uint64_t)sqlite3_column_int64(st, 0);
		c->parent = (uint64_t)sqlite3_column_int64(st, 1);
		c->level = sqlite3_column_int(st, 3);
		c->created_ts = sqlite3_column_int64(st, 4);
		c->parent_unknown = sqlite3_column_int(st, 5);
		c->path = path ? strdup((const char *)path) : NULL;
		if (path && !c->path) {
			rc = SQLITE_NOMEM;
			break;
		}
		t->nr_cgroups++;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : trace_sql_err(sq, rc);
}

static int trace_load_gaps(sqlite3 *sq, struct replay_trace *t)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc = sqlite3_prepare_v2(sq, "SELECT cpu, ts, count FROM gaps ORDER BY ts", -1, &st, NULL);

	if (rc != SQLITE_OK)
		return trace_sql_err(sq, rc);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (t->nr_gaps == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			void *n = realloc(t->gaps, ncap * sizeof(*t->gaps));

			if (!n) {
				rc = SQLITE_NOMEM;
				break;
			}
			t->gaps = n;
			cap = ncap;
		}
		t->gaps[t->nr_gaps].cpu = sqlite3_column_int(st, 0);
		t->gaps[t->nr_gaps].ts = (uint64_t)sqlite3_column_int64(st, 1);
		t->gaps[t->nr_gaps].count = sqlite3_column_int64(st, 2);
		t->nr_gaps++;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : trace_sql_err(sq, rc);
}

/**
 * replay_trace_load() - CPUs, hierarchy id, cgroups, gaps and which event
 * kinds the trace has.  meta nr_cpus_possible is required (-MCR_E_SCHEMA).
 */
int replay_trace_load(struct db *db, struct replay_trace *t)
{
	sqlite3 *sq = db_sqlite(db);
	uint32_t kinds = 0;
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
	t->hierarchy_id = -1;
	if (db_meta_get_int(db, "memory_hierarchy_id", &v) == 0)
		t->hierarchy_id = (int)v;
	if (db_meta_get_int(db, "event_count", &v) == 0 && v > 0)
		t->nr_events = (uint64_t)v;
	db_meta_get(db, "kernel_release", &t->kernel_release);
	db_meta_get(db, "source", &t->source);
	ret = db_events_kinds(db, &kinds);
	t->windows_traced = kinds & (1u << MCR_EV_LOCKED | 1u << MCR_EV_UNLOCK);
	t->visits_traced = kinds & 1u << MCR_EV_VISIT;
	if (!ret)
		ret = trace_load_cgroups(sq, t);
	if (!ret)
		ret = trace_load_gaps(sq, t);
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

static int source_db_next(void *ctx, struct mcr_event *ev)
{
	return db_iter_next(ctx, ev);
}

int replay_source_db_open(struct db *db, struct replay_source *src)
{
	struct db_iter *it;
	int ret = db_iter_open(db, &it);

	if (ret < 0)
		return ret;
	src->next = source_db_next;
	src->ctx = it;
	return 0;
}

void replay_source_db_close(struct replay_source *src)
{
	if (src->ctx)
		db_iter_close(src->ctx);
	src->ctx = NULL;
}
