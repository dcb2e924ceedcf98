// SPDX-License-Identifier: GPL-2.0
/*
 * results.c - writing the result tables (db/results.h): run rows, then the
 * rows of a pass through statements prepared once, then summaries.
 *
 * series and cgroup_series rows are not inserted as they come: they are
 * held (results_held.c) until the pass ends, db_results_flush() inserts
 * them then in key order; series rows as pieces of their line into
 * series_lines, which the view series reads (results_schema.c).  item_summary rows go in DB_BULK_ROWS at a time,
 * the last of them at db_results_flush() too.  This file owns every
 * table's INSERT and the binding of its rows, the held ones' too.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "db.h"
#include "db_local.h"
#include "results.h"
#include "results_local.h"

enum {
	W_READ, W_READ_ERROR, W_EPISODE, W_SERIES, W_CGROUP_SAMPLE, W_CGROUP_SUMMARY,
	W_ITEM_SUMMARY, W_MISMATCH, W_NR
};

static const char *const db_results_insert[W_NR] = {
	[W_READ] = "INSERT INTO reads (run_id, ts, cpu, pid, cgroup_id, force, flushed, stranded,"
		   " stale, pending, items_wrong, sim_stats_updates, kernel_stats_updates,"
		   " kernel_needs_flush, pending_since_flush) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[W_READ_ERROR] = "INSERT INTO read_errors (read_id, kind, item, error, age_ns)"
			 " VALUES (?,?,?,?,?)",
	[W_EPISODE] = "INSERT INTO stranded_episodes (run_id, cgroup_id, start_ts, end_ts, open,"
		      " worst_kind, worst_item, worst_error, reads_skipped, max_pending)"
		      " VALUES (?,?,?,?,?,?,?,?,?,?)",
	/* the view series' rows, a piece of a line at a time (results_held.c) */
	[W_SERIES] = "INSERT INTO series_lines (run_id, cgroup_id, kind, item, ts, step, rows)"
		     " VALUES (?,?,?,?,?,?,?)",
	[W_CGROUP_SAMPLE] = "INSERT INTO cgroup_series (run_id, cgroup_id, ts, pending,"
			    " stats_updates, flushable, stranded) VALUES (?,?,?,?,?,?,?)",
	[W_CGROUP_SUMMARY] = "INSERT INTO cgroup_summary (run_id, cgroup_id, reads, flushed_reads,"
			     " stale_reads, stranded_ms, stranded_episodes, max_pending,"
			     " mean_pending, final_pending, noticeable_episodes)"
			     " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
	[W_ITEM_SUMMARY] = "INSERT INTO item_summary (run_id, cgroup_id, kind, item,"
			   " max_read_error, p99_read_error, mean_read_error, max_visible_error,"
			   " mean_visible_error, max_error_age_ms, final_error, max_settled_error,"
			   " max_flush_error) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[W_MISMATCH] = "INSERT INTO validation_mismatch (run_id, ts, cpu, cgroup_id,"
		       " kernel_stats_updates, sim_stats_updates, kernel_needs_flush,"
		       " sim_needs_flush, cause, context) VALUES (?,?,?,?,?,?,?,?,?,?)",
};

struct db_results {
	struct db		*db;
	sqlite3_stmt		*st[W_NR];
	struct held		ser;		/* series rows */
	struct held		cs;		/* cgroup_series rows */
	/*
	 * item_summary rows, DB_BULK_ROWS at a time through item_bulk: one
	 * statement run a row cost twice a row's insert (33 k rows, three
	 * policies: 10 % of a 1 M-event replay); the rest at the flush
	 */
	sqlite3_stmt		*item_bulk;
	struct db_item_summary	items[DB_BULK_ROWS];
	unsigned int		nr_items;
};

static int db_items_flush(struct db_results *w);

/*
 * Step one row and ready the statement for the next: an episode without a
 * worst line leaves worst_* unbound, which must then be NULL, not the last
 * episode's.
 */
static int db_results_step(sqlite3_stmt *st)
{
	int err = db_step_reset(st);

	sqlite3_clear_bindings(st);
	return err;
}

static void bind_u64(sqlite3_stmt *st, int i, uint64_t v)
{
	sqlite3_bind_int64(st, i, (int64_t)v);
}

/**
 * db_run_add() - one runs row; its options go into params as JSON.
 * @run_id: the new row's run_id
 */
int db_run_add(struct db *db, const struct db_run *run, int64_t *run_id)
{
	sqlite3_stmt *st;
	int err;

	/* json_object() does the quoting of the file name. */
	err = db_prepare(db, "INSERT INTO runs (kind, policy, flush_model, params, started_at,"
			 " sample_ns, th, stranded_limit, tool_version, batch_size, nr_cpus) VALUES"
			 " (?1, ?2, ?3,"
			 " json_object('file', ?4, 'policies', ?5, 'flush_model', ?3, 'sample_ms',"
			 " ?6 / 1e6, 'validate', json(?7), 'max_mismatches', ?8),"
			 " strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), ?6, ?10, ?11, ?9, ?12, ?13)", &st);
	if (err)
		return err;
	sqlite3_bind_text(st, 1, run->kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, run->policy, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, run->flush_model, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, run->file, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, run->policies, -1, SQLITE_STATIC);
	bind_u64(st, 6, run->sample_ns);
	sqlite3_bind_text(st, 7, run->validate ? "true" : "false", -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 8, (int)run->max_mismatches);
	sqlite3_bind_text(st, 9, MCR_VERSION, -1, SQLITE_STATIC);
	bind_u64(st, 10, run->th);
	bind_u64(st, 11, run->stranded_limit);
	sqlite3_bind_int64(st, 12, run->batch_size);
	sqlite3_bind_int64(st, 13, run->nr_cpus);
	err = db_results_step(st);
	sqlite3_finalize(st);
	if (!err)
		*run_id = sqlite3_last_insert_rowid(db->sql);
	return err;
}

int db_run_counters_set(struct db *db, int64_t run_id, const struct db_run_counters *c)
{
	sqlite3_stmt *st;
	int err;

	err = db_prepare(db, "UPDATE runs SET wall_s = ?, events = ?, updates = ?, flush_requests = ?,"
			 " flushes = ?, visits = ?, walk_steps = ?, pcpu_adds = ?, atomic_adds = ?,"
			 " dropped_batches = ?, atomic_resets = ?, unknown_ids = ? WHERE run_id = ?",
			 &st);
	if (err)
		return err;
	sqlite3_bind_double(st, 1, c->wall_s);
	bind_u64(st, 2, c->events);
	bind_u64(st, 3, c->updates);
	bind_u64(st, 4, c->flush_requests);
	bind_u64(st, 5, c->flushes);
	bind_u64(st, 6, c->visits);
	bind_u64(st, 7, c->walk_steps);
	bind_u64(st, 8, c->pcpu_adds);
	bind_u64(st, 9, c->atomic_adds);
	bind_u64(st, 10, c->dropped_batches);
	bind_u64(st, 11, c->atomic_resets);
	bind_u64(st, 12, c->unknown_ids);
	sqlite3_bind_int64(st, 13, run_id);
	err = db_results_step(st);
	sqlite3_finalize(st);
	return err;
}

int db_results_open(struct db *db, struct db_results **out)
{
	struct db_results *w = calloc(1, sizeof(*w));
	int i, err = 0;

	if (!w)
		return -ENOMEM;
	w->db = db;
	for (i = 0; i < W_NR && !err; i++)
		err = db_prepare(db, db_results_insert[i], &w->st[i]);
	if (!err)
		err = db_results_bulk(db, db_results_insert[W_CGROUP_SAMPLE], &w->cs.bulk);
	if (!err)
		err = db_results_bulk(db, db_results_insert[W_ITEM_SUMMARY], &w->item_bulk);
	w->ser = (struct held){ .keys = 4, .cols = 4, .spill = -1, .piece = w->st[W_SERIES] };
	w->cs = (struct held){ .keys = 2, .cols = 5, .spill = -1,
			       .bulk = w->cs.bulk, .one = w->st[W_CGROUP_SAMPLE] };
	w->ser.peer = &w->cs;
	w->cs.peer = &w->ser;
	if (err) {
		db_results_close(w);
		return err;
	}
	*out = w;
	return 0;
}

void db_results_close(struct db_results *w)
{
	int i;

	if (!w)
		return;
	for (i = 0; i < W_NR; i++)
		sqlite3_finalize(w->st[i]);
	sqlite3_finalize(w->cs.bulk);
	sqlite3_finalize(w->item_bulk);
	db_held_free(&w->ser);
	db_held_free(&w->cs);
	free(w);
}

int db_read_add(struct db_results *w, const struct db_read *r, int64_t *read_id)
{
	sqlite3_stmt *st = w->st[W_READ];
	int err;

	sqlite3_bind_int64(st, 1, r->run_id);
	bind_u64(st, 2, r->ts);
	sqlite3_bind_int(st, 3, r->cpu);
	sqlite3_bind_int(st, 4, r->pid);
	bind_u64(st, 5, r->cgroup_id);
	sqlite3_bind_int(st, 6, r->force);
	sqlite3_bind_int(st, 7, r->flushed);
	sqlite3_bind_int(st, 8, r->stranded);
	sqlite3_bind_int(st, 9, r->stale);
	bind_u64(st, 10, r->pending);
	sqlite3_bind_int(st, 11, (int)r->items_wrong);
	sqlite3_bind_int64(st, 12, r->sim_stats_updates);
	sqlite3_bind_int64(st, 13, r->kernel_stats_updates);
	sqlite3_bind_int(st, 14, r->kernel_needs_flush);
	bind_u64(st, 15, r->pending_since_flush);
	err = db_results_step(st);
	if (!err && read_id)
		*read_id = sqlite3_last_insert_rowid(w->db->sql);
	return err;
}

int db_read_error_add(struct db_results *w, const struct db_read_error *e)
{
	sqlite3_stmt *st = w->st[W_READ_ERROR];

	sqlite3_bind_int64(st, 1, e->read_id);
	sqlite3_bind_int(st, 2, e->kind);
	sqlite3_bind_int(st, 3, e->item);
	sqlite3_bind_int64(st, 4, e->error);
	bind_u64(st, 5, e->age_ns);
	return db_results_step(st);
}

int db_episode_add(struct db_results *w, const struct db_episode *e)
{
	sqlite3_stmt *st = w->st[W_EPISODE];

	sqlite3_bind_int64(st, 1, e->run_id);
	bind_u64(st, 2, e->cgroup_id);
	bind_u64(st, 3, e->start_ts);
	bind_u64(st, 4, e->end_ts);
	sqlite3_bind_int(st, 5, e->open);
	if (e->worst_kind) {
		sqlite3_bind_int(st, 6, e->worst_kind);
		sqlite3_bind_int(st, 7, e->worst_item);
		sqlite3_bind_int64(st, 8, e->worst_error);
	}
	bind_u64(st, 9, e->reads_skipped);
	bind_u64(st, 10, e->max_pending);
	return db_results_step(st);
}

/**
 * db_series_add() - one series row, held until db_results_flush().  The rows
 * of one (run, cgroup, kind, item) must come in increasing ts (-EINVAL).
 */
int db_series_add(struct db_results *w, const struct db_series *s)
{
	const int64_t key[4] = { s->run_id, (int64_t)s->cgroup_id, s->kind, s->item };
	const uint64_t v[4] = { s->ts, (uint64_t)s->error, (uint64_t)s->min_error,
				(uint64_t)s->max_error };

	return db_held_add(&w->ser, key, v);
}

/** db_cgroup_sample_add() - one cgroup_series row, held as db_series_add()'s are. */
int db_cgroup_sample_add(struct db_results *w, const struct db_cgroup_sample *s)
{
	const int64_t key[4] = { s->run_id, (int64_t)s->cgroup_id, 0, 0 };
	const uint64_t v[5] = { s->ts, s->pending, (uint64_t)s->stats_updates, s->flushable,
				s->stranded };

	return db_held_add(&w->cs, key, v);
}

/**
 * db_results_flush() - insert every held row; before the transaction commits
 * or anything reads the tables.  Returns 0 or a negative error (a duplicate
 * key shows here, not at the add).
 */
int db_results_flush(struct db_results *w)
{
	int err = db_held_insert(&w->ser);
	int err2 = db_held_insert(&w->cs);
	int err3 = db_items_flush(w);

	return err ? err : err2 ? err2 : err3;
}

int db_cgroup_summary_add(struct db_results *w, const struct db_cgroup_summary *s)
{
	sqlite3_stmt *st = w->st[W_CGROUP_SUMMARY];

	sqlite3_bind_int64(st, 1, s->run_id);
	bind_u64(st, 2, s->cgroup_id);
	bind_u64(st, 3, s->reads);
	bind_u64(st, 4, s->flushed_reads);
	bind_u64(st, 5, s->stale_reads);
	sqlite3_bind_double(st, 6, s->stranded_ms);
	bind_u64(st, 7, s->stranded_episodes);
	bind_u64(st, 8, s->max_pending);
	sqlite3_bind_double(st, 9, s->mean_pending);
	bind_u64(st, 10, s->final_pending);
	bind_u64(st, 11, s->noticeable_episodes);
	return db_results_step(st);
}

/* Bind item_summary row @s as the row whose first parameter is @at + 1. */
static void item_bind(sqlite3_stmt *st, int at, const struct db_item_summary *s)
{
	sqlite3_bind_int64(st, at + 1, s->run_id);
	bind_u64(st, at + 2, s->cgroup_id);
	sqlite3_bind_int(st, at + 3, s->kind);
	sqlite3_bind_int(st, at + 4, s->item);
	bind_u64(st, at + 5, s->max_read_error);
	bind_u64(st, at + 6, s->p99_read_error);
	sqlite3_bind_double(st, at + 7, s->mean_read_error);
	bind_u64(st, at + 8, s->max_visible_error);
	sqlite3_bind_double(st, at + 9, s->mean_visible_error);
	sqlite3_bind_double(st, at + 10, s->max_error_age_ms);
	sqlite3_bind_int64(st, at + 11, s->final_error);
	bind_u64(st, at + 12, s->max_settled_error);
	bind_u64(st, at + 13, s->max_flush_error);
}

static void items_bind(void *ctx, sqlite3_stmt *st, int at, int i)
{
	const struct db_results *w = ctx;

	item_bind(st, at, &w->items[i]);
}

/* The item_summary rows gathered (db_results_rows()); then none are. */
static int db_items_flush(struct db_results *w)
{
	int err = db_results_rows(w->item_bulk, w->st[W_ITEM_SUMMARY], (int)w->nr_items,
				  items_bind, w);

	w->nr_items = 0;
	return err;
}

/** db_item_summary_add() - one item_summary row, in by the next db_results_flush(). */
int db_item_summary_add(struct db_results *w, const struct db_item_summary *s)
{
	w->items[w->nr_items++] = *s;
	return w->nr_items == DB_BULK_ROWS ? db_items_flush(w) : 0;
}

int db_mismatch_add(struct db_results *w, const struct db_mismatch *m)
{
	sqlite3_stmt *st = w->st[W_MISMATCH];

	sqlite3_bind_int64(st, 1, m->run_id);
	bind_u64(st, 2, m->ts);
	sqlite3_bind_int(st, 3, m->cpu);
	bind_u64(st, 4, m->cgroup_id);
	sqlite3_bind_int64(st, 5, m->kernel_stats_updates);
	sqlite3_bind_int64(st, 6, m->sim_stats_updates);
	sqlite3_bind_int(st, 7, m->kernel_needs_flush);
	sqlite3_bind_int(st, 8, m->sim_needs_flush);
	if (m->cause)
		sqlite3_bind_text(st, 9, m->cause, -1, SQLITE_TRANSIENT);
	if (m->context)
		sqlite3_bind_text(st, 10, m->context, -1, SQLITE_TRANSIENT);
	return db_results_step(st);
}

int db_validation_add(struct db *db, const struct db_validation *v)
{
	sqlite3_stmt *st;
	int err;

	err = db_prepare(db, "INSERT INTO validation (run_id, policy, flush_model, flush_events,"
			 " compared, skipped_before_sync, stats_updates_match, needs_flush_match,"
			 " stats_updates_match_plain, needs_flush_match_plain, max_hypotheses,"
			 " diff_hist) VALUES (?,?,?,?,?,?,?,?,?,?,?,json(?))", &st);
	if (err)
		return err;
	sqlite3_bind_int64(st, 1, v->run_id);
	sqlite3_bind_text(st, 2, v->policy, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, v->flush_model, -1, SQLITE_STATIC);
	bind_u64(st, 4, v->flush_events);
	bind_u64(st, 5, v->compared);
	bind_u64(st, 6, v->skipped_before_sync);
	bind_u64(st, 7, v->stats_updates_match);
	bind_u64(st, 8, v->needs_flush_match);
	bind_u64(st, 9, v->stats_updates_match_plain);
	bind_u64(st, 10, v->needs_flush_match_plain);
	bind_u64(st, 11, v->max_hypotheses);
	sqlite3_bind_text(st, 12, v->diff_hist ? v->diff_hist : "{}", -1, SQLITE_STATIC);
	err = db_results_step(st);
	sqlite3_finalize(st);
	return err;
}
