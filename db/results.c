// SPDX-License-Identifier: GPL-2.0
/*
 * results.c - writing the result tables (db/results.h): run rows, then the
 * rows of a pass through statements prepared once, then summaries.
 *
 * series and cgroup_series rows come sample by sample, every key at one ts,
 * but the tables are WITHOUT ROWID B-trees keyed by (run, cgroup, [line,]
 * ts): inserted as they come, each row lands on another leaf page, and once
 * the table outgrows the page cache every row costs a page read and write.
 * So they are held in a bounded buffer and inserted sorted by key when it
 * fills: each key's held samples then go in together, onto the same leaf.
 * The rows are the same; only the order of the inserts differs.  They go
 * DB_BULK_ROWS at a time through one statement of as many VALUES rows, so
 * the statement's run, reset and bindings are paid once per batch, not per
 * row.
 *
 * A full buffer is not inserted at once: it is sorted and handed over whole
 * to a second buffer, which db_results_pump() inserts a batch at a time
 * while the first fills again (or, if it fills first, the rest at once).
 * The caller pumps when it has a moment, e.g. while other threads simulate:
 * one insert of a few hundred thousand rows would stop them all.  SQLite
 * stays on the caller's thread.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "db_local.h"
#include "error.h"
#include "results.h"

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
	[W_SERIES] = "INSERT INTO series (run_id, cgroup_id, kind, item, ts, error, min_error,"
		     " max_error) VALUES (?,?,?,?,?,?,?,?)",
	[W_CGROUP_SAMPLE] = "INSERT INTO cgroup_series (run_id, cgroup_id, ts, pending,"
			    " stats_updates, flushable, stranded) VALUES (?,?,?,?,?,?,?)",
	[W_CGROUP_SUMMARY] = "INSERT INTO cgroup_summary (run_id, cgroup_id, reads, flushed_reads,"
			     " stale_reads, stranded_ms, stranded_episodes, max_pending,"
			     " mean_pending, final_pending) VALUES (?,?,?,?,?,?,?,?,?,?)",
	[W_ITEM_SUMMARY] = "INSERT INTO item_summary (run_id, cgroup_id, kind, item,"
			   " max_read_error, p99_read_error, mean_read_error, max_visible_error,"
			   " mean_visible_error, max_error_age_ms, final_error)"
			   " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
	[W_MISMATCH] = "INSERT INTO validation_mismatch (run_id, ts, cpu, cgroup_id,"
		       " kernel_stats_updates, sim_stats_updates, kernel_needs_flush,"
		       " sim_needs_flush, cause, context) VALUES (?,?,?,?,?,?,?,?,?,?)",
};

/*
 * Bytes of series and cgroup_series rows held before they are inserted:
 * with the fleet trace's 8448 series lines, about 13 samples of each.
 * Bounded so that memory stays flat however long the trace.
 */
#define DB_SERIES_BUF_BYTES	(6u << 20)
#define DB_CSAMPLE_BUF_BYTES	(2u << 20)
#define DB_BULK_ROWS		64	/* rows per bulk INSERT: 512 parameters at most */

/*
 * Rows of one table held for it: @v fills; @out, sorted, is being inserted
 * (rows @pos..@nr_out left).
 */
struct rows_buf {
	void			*v, *out;
	size_t			nr, nr_out, pos;
	size_t			size, cap;	/* bytes a row; rows a buffer */
	int			(*cmp)(const void *, const void *);
	void			(*bind)(sqlite3_stmt *st, int at, const void *row);
	sqlite3_stmt		*bulk;		/* DB_BULK_ROWS rows */
	sqlite3_stmt		*one;		/* one row */
};

struct db_results {
	struct db		*db;
	sqlite3_stmt		*st[W_NR];
	struct rows_buf		ser;		/* series rows */
	struct rows_buf		cs;		/* cgroup_series rows */
};

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

/* Key order of the tables, as SQLite compares them (the integers as signed). */
static int cmp_i64(int64_t a, int64_t b)
{
	return (a > b) - (a < b);
}

static int series_cmp(const void *pa, const void *pb)
{
	const struct db_series *a = pa, *b = pb;
	int c = cmp_i64(a->run_id, b->run_id);

	if (!c)
		c = cmp_i64((int64_t)a->cgroup_id, (int64_t)b->cgroup_id);
	if (!c)
		c = cmp_i64(a->kind, b->kind);
	if (!c)
		c = cmp_i64(a->item, b->item);
	return c ? c : cmp_i64((int64_t)a->ts, (int64_t)b->ts);
}

static int csample_cmp(const void *pa, const void *pb)
{
	const struct db_cgroup_sample *a = pa, *b = pb;
	int c = cmp_i64(a->run_id, b->run_id);

	if (!c)
		c = cmp_i64((int64_t)a->cgroup_id, (int64_t)b->cgroup_id);
	return c ? c : cmp_i64((int64_t)a->ts, (int64_t)b->ts);
}

/* Bind row @row as the row whose first parameter is @at + 1. */
static void series_bind(sqlite3_stmt *st, int at, const void *row)
{
	const struct db_series *s = row;

	sqlite3_bind_int64(st, at + 1, s->run_id);
	bind_u64(st, at + 2, s->cgroup_id);
	sqlite3_bind_int(st, at + 3, s->kind);
	sqlite3_bind_int(st, at + 4, s->item);
	bind_u64(st, at + 5, s->ts);
	sqlite3_bind_int64(st, at + 6, s->error);
	sqlite3_bind_int64(st, at + 7, s->min_error);
	sqlite3_bind_int64(st, at + 8, s->max_error);
}

static void csample_bind(sqlite3_stmt *st, int at, const void *row)
{
	const struct db_cgroup_sample *s = row;

	sqlite3_bind_int64(st, at + 1, s->run_id);
	bind_u64(st, at + 2, s->cgroup_id);
	bind_u64(st, at + 3, s->ts);
	bind_u64(st, at + 4, s->pending);
	sqlite3_bind_int64(st, at + 5, s->stats_updates);
	sqlite3_bind_int(st, at + 6, s->flushable);
	sqlite3_bind_int(st, at + 7, s->stranded);
}

/*
 * @one's INSERT with its "VALUES (?,...)" repeated DB_BULK_ROWS times,
 * prepared: the parameters of row i are i * (parameters of a row) + 1...
 */
static int db_results_bulk(struct db *db, const char *one, sqlite3_stmt **st)
{
	const char *tuple = strstr(one, "VALUES ");
	size_t head, len, i;
	char *sql, *p;
	int err;

	if (!tuple)
		return -EINVAL;
	tuple += strlen("VALUES ");
	head = (size_t)(tuple - one);
	len = strlen(tuple);
	sql = malloc(head + DB_BULK_ROWS * (len + 1) + 1);
	if (!sql)
		return -ENOMEM;
	memcpy(sql, one, head);
	p = sql + head;
	for (i = 0; i < DB_BULK_ROWS; i++) {
		if (i)
			*p++ = ',';
		memcpy(p, tuple, len);
		p += len;
	}
	*p = 0;
	err = db_prepare(db, sql, st);
	free(sql);
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
		err = db_results_bulk(db, db_results_insert[W_SERIES], &w->ser.bulk);
	if (!err)
		err = db_results_bulk(db, db_results_insert[W_CGROUP_SAMPLE], &w->cs.bulk);
	w->ser.one = w->st[W_SERIES];
	w->ser.size = sizeof(struct db_series);
	w->ser.cap = DB_SERIES_BUF_BYTES / w->ser.size;
	w->ser.cmp = series_cmp;
	w->ser.bind = series_bind;
	w->cs.one = w->st[W_CGROUP_SAMPLE];
	w->cs.size = sizeof(struct db_cgroup_sample);
	w->cs.cap = DB_CSAMPLE_BUF_BYTES / w->cs.size;
	w->cs.cmp = csample_cmp;
	w->cs.bind = csample_bind;
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
	sqlite3_finalize(w->ser.bulk);
	sqlite3_finalize(w->cs.bulk);
	free(w->ser.v);
	free(w->ser.out);
	free(w->cs.v);
	free(w->cs.out);
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

/*
 * Insert up to @batches of @b's sorted rows: DB_BULK_ROWS at a time through
 * the bulk statement, the last few through the one-row statement (all of
 * them if @batches is 0).  Every parameter is bound each time: no clearing
 * between batches.
 */
static int rows_insert(struct rows_buf *b, size_t batches)
{
	const int cols = sqlite3_bind_parameter_count(b->one);
	const char *r = b->out;
	size_t j, left = batches ? batches : SIZE_MAX;
	int err = 0;

	for (; b->pos + DB_BULK_ROWS <= b->nr_out && !err; b->pos += DB_BULK_ROWS) {
		if (!left--)
			return 0;
		for (j = 0; j < DB_BULK_ROWS; j++)
			b->bind(b->bulk, (int)j * cols, r + (b->pos + j) * b->size);
		err = db_step_reset(b->bulk);
	}
	for (; b->pos < b->nr_out && !err; b->pos++) {
		b->bind(b->one, 0, r + b->pos * b->size);
		err = db_step_reset(b->one);
	}
	return err;
}

/* Hand @b's filled rows over, sorted, for insertion; the rest of the last ones first. */
static int rows_hand_over(struct rows_buf *b)
{
	void *t;
	int err;

	if (!b->nr)
		return 0;
	err = rows_insert(b, 0);
	if (err)
		return err;
	if (!b->out) {
		b->out = malloc(b->cap * b->size);
		if (!b->out)
			return -ENOMEM;
	}
	qsort(b->v, b->nr, b->size, b->cmp);
	t = b->out;
	b->out = b->v;
	b->v = t;
	b->nr_out = b->nr;
	b->pos = 0;
	b->nr = 0;
	return 0;
}

/* One row into @b, handed over when full. */
static int rows_add(struct rows_buf *b, const void *row)
{
	if (!b->v) {
		b->v = malloc(b->cap * b->size);
		if (!b->v)
			return -ENOMEM;
	}
	memcpy((char *)b->v + b->nr * b->size, row, b->size);
	return ++b->nr == b->cap ? rows_hand_over(b) : 0;
}

/** db_series_add() - one series row, held until its buffer fills or db_results_flush(). */
int db_series_add(struct db_results *w, const struct db_series *s)
{
	return rows_add(&w->ser, s);
}

/** db_cgroup_sample_add() - one cgroup_series row, held as db_series_add()'s are. */
int db_cgroup_sample_add(struct db_results *w, const struct db_cgroup_sample *s)
{
	return rows_add(&w->cs, s);
}

/**
 * db_results_pump() - insert one batch of the held rows that a full buffer
 * handed over, if any.  Return: 1 a batch went in, 0 none was waiting,
 * or a negative error.
 */
int db_results_pump(struct db_results *w)
{
	struct rows_buf *b = w->ser.pos < w->ser.nr_out ? &w->ser : &w->cs;
	int err;

	if (b->pos >= b->nr_out)
		return 0;
	err = rows_insert(b, 1);
	return err ? err : 1;
}

/**
 * db_results_flush() - insert every held row; before the transaction commits
 * or anything reads the tables.  Returns 0 or a negative error (a duplicate
 * key shows here, not at the add).
 */
int db_results_flush(struct db_results *w)
{
	int err = rows_hand_over(&w->ser);

	if (!err)
		err = rows_insert(&w->ser, 0);
	if (!err)
		err = rows_hand_over(&w->cs);
	return err ? err : rows_insert(&w->cs, 0);
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
	return db_results_step(st);
}

int db_item_summary_add(struct db_results *w, const struct db_item_summary *s)
{
	sqlite3_stmt *st = w->st[W_ITEM_SUMMARY];

	sqlite3_bind_int64(st, 1, s->run_id);
	bind_u64(st, 2, s->cgroup_id);
	sqlite3_bind_int(st, 3, s->kind);
	sqlite3_bind_int(st, 4, s->item);
	bind_u64(st, 5, s->max_read_error);
	bind_u64(st, 6, s->p99_read_error);
	sqlite3_bind_double(st, 7, s->mean_read_error);
	bind_u64(st, 8, s->max_visible_error);
	sqlite3_bind_double(st, 9, s->mean_visible_error);
	sqlite3_bind_double(st, 10, s->max_error_age_ms);
	sqlite3_bind_int64(st, 11, s->final_error);
	return db_results_step(st);
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
