// SPDX-License-Identifier: GPL-2.0
/*
 * results.c - writing the result tables (db/results.h): run rows, then the
 * rows of a pass through statements prepared once, then summaries.
 *
 * series and cgroup_series rows come sample by sample, every key at one ts,
 * but the tables are WITHOUT ROWID B-trees keyed by (run, cgroup, [line,]
 * ts): inserted as they come, each row lands on the last leaf page of its
 * line, thousands of lines apart, and SQLite writes each such page out
 * again every time its cache spills.  So they are held until the pass ends
 * (db_results_flush()) and inserted then in key order: a pass's runs have
 * the largest run_ids, so the rows append to the table, every page written
 * once.  Held compactly, a line's rows after one another as varints of the
 * change from the row before (a series' ts step and most errors do not
 * change: about 4 bytes a row); past DB_HELD_BYTES they go out to an
 * unnamed temporary file, each line's bytes in one piece, and are read back
 * line by line at the flush.  The rows are the same; only the order and
 * time of the inserts differ.  They go DB_BULK_ROWS at a time through one
 * statement of as many VALUES rows, so the statement's run, reset and
 * bindings are paid once per batch, not per row.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
 * Encoded bytes of series or cgroup_series rows held in memory before they
 * are written out to the spill file: with the fleet trace's 10 000 series
 * lines, about 200 samples of each.  Bounded so that memory stays flat
 * however long the trace.
 */
#define DB_HELD_BYTES		(8u << 20)
#define DB_BULK_ROWS		64	/* rows per bulk INSERT: 512 parameters at most */
#define DB_LINE_COLS		5	/* values of a row at most, ts first */

/* Bytes of a line's rows written out to the spill file. */
struct held_piece {
	uint64_t		off, len;
};

/*
 * The rows of one key of a table but ts (a line: run, cgroup[, kind, item]),
 * in ts order, encoded: per row the change of the ts step (a series' step is
 * constant: one byte) and the change of every other value, zigzag varints.
 */
struct held_line {
	int64_t			key[4];		/* run_id, cgroup_id, kind, item */
	uint64_t		last[DB_LINE_COLS];	/* the last row's values */
	uint64_t		last_step;	/* its ts - the one before */
	uint64_t		rows;
	uint8_t			*buf;		/* rows not written out */
	size_t			len, cap;
	struct held_piece	*pieces;	/* rows written out, in order */
	size_t			nr_pieces;
};

/*
 * The rows of one table held until db_results_flush() inserts them, in key
 * order: each line's rows lie next to each other in the table's B-tree, and
 * a new run's (the largest run_id) after every row already there.
 */
struct held {
	struct held_line	*lines;
	size_t			nr, cap;
	uint32_t		*hash;		/* line index + 1, open addressing */
	size_t			hash_cap;	/* a power of 2, above 2 x nr */
	size_t			bytes;		/* of every line's buf */
	size_t			cols;		/* values of a row */
	int			spill;		/* spill file, -1 none yet */
	uint64_t		spill_len;
	void			(*bind)(sqlite3_stmt *st, int at, const uint64_t *key,
					const uint64_t *v);
	sqlite3_stmt		*bulk;		/* DB_BULK_ROWS rows */
	sqlite3_stmt		*one;		/* one row */
};

struct db_results {
	struct db		*db;
	sqlite3_stmt		*st[W_NR];
	struct held		ser;		/* series rows */
	struct held		cs;		/* cgroup_series rows */
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

static int held_line_cmp(const void *pa, const void *pb)
{
	const struct held_line *a = pa, *b = pb;
	int i, c = 0;

	for (i = 0; !c && i < 4; i++)
		c = cmp_i64(a->key[i], b->key[i]);
	return c;
}

/* Bind a row as the row whose first parameter is @at + 1; v[0] is its ts. */
static void series_bind(sqlite3_stmt *st, int at, const uint64_t *key, const uint64_t *v)
{
	sqlite3_bind_int64(st, at + 1, (int64_t)key[0]);
	sqlite3_bind_int64(st, at + 2, (int64_t)key[1]);
	sqlite3_bind_int64(st, at + 3, (int64_t)key[2]);
	sqlite3_bind_int64(st, at + 4, (int64_t)key[3]);
	sqlite3_bind_int64(st, at + 5, (int64_t)v[0]);
	sqlite3_bind_int64(st, at + 6, (int64_t)v[1]);
	sqlite3_bind_int64(st, at + 7, (int64_t)v[2]);
	sqlite3_bind_int64(st, at + 8, (int64_t)v[3]);
}

static void csample_bind(sqlite3_stmt *st, int at, const uint64_t *key, const uint64_t *v)
{
	sqlite3_bind_int64(st, at + 1, (int64_t)key[0]);
	sqlite3_bind_int64(st, at + 2, (int64_t)key[1]);
	sqlite3_bind_int64(st, at + 3, (int64_t)v[0]);
	sqlite3_bind_int64(st, at + 4, (int64_t)v[1]);
	sqlite3_bind_int64(st, at + 5, (int64_t)v[2]);
	sqlite3_bind_int(st, at + 6, (int)v[3]);
	sqlite3_bind_int(st, at + 7, (int)v[4]);
}

/* A line's bytes grow by a row: at most a 10-byte varint a value. */
static int held_reserve(struct held_line *l, size_t more)
{
	size_t cap;
	uint8_t *v;

	if (l->len + more <= l->cap)
		return 0;
	cap = l->cap ? l->cap * 2 : 64;
	while (cap < l->len + more)
		cap *= 2;
	v = realloc(l->buf, cap);
	if (!v)
		return -ENOMEM;
	l->buf = v;
	l->cap = cap;
	return 0;
}

static size_t put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	for (; v >= 0x80; v >>= 7)
		p[n++] = (uint8_t)(v | 0x80);
	p[n++] = (uint8_t)v;
	return n;
}

/* Return: bytes read, 0 if the varint runs past @end. */
static size_t get_varint(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;
	size_t n;

	for (n = 0; p + n < end && n < 10; n++) {
		x |= (uint64_t)(p[n] & 0x7f) << (7 * n);
		if (!(p[n] & 0x80)) {
			*v = x;
			return n + 1;
		}
	}
	return 0;
}

/* Differences wrap around: every 64-bit value comes back as it went in. */
static uint64_t zigzag(uint64_t d)
{
	return (d << 1) ^ (uint64_t)((int64_t)d >> 63);
}

static uint64_t unzigzag(uint64_t z)
{
	return (z >> 1) ^ (0 - (z & 1));
}

static uint64_t held_hash(const int64_t *key)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;
	int i;

	for (i = 0; i < 4; i++) {
		h ^= (uint64_t)key[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 33;
	}
	return h;
}

/* Index @h's lines in a table of @cap slots, a power of 2 above 2 x nr. */
static int held_rehash(struct held *h, size_t cap)
{
	uint32_t *t = calloc(cap, sizeof(*t));
	size_t i, j;

	if (!t)
		return -ENOMEM;
	for (i = 0; i < h->nr; i++) {
		for (j = held_hash(h->lines[i].key) & (cap - 1); t[j]; j = (j + 1) & (cap - 1))
			;
		t[j] = (uint32_t)(i + 1);
	}
	free(h->hash);
	h->hash = t;
	h->hash_cap = cap;
	return 0;
}

/* The line of @key, made if new; NULL: no memory. */
static struct held_line *held_line_get(struct held *h, const int64_t *key)
{
	struct held_line *l;
	size_t j;

	if (2 * (h->nr + 1) > h->hash_cap &&
	    (h->nr >= UINT32_MAX / 4 || held_rehash(h, h->hash_cap ? h->hash_cap * 2 : 1024)))
		return NULL;
	for (j = held_hash(key) & (h->hash_cap - 1); h->hash[j]; j = (j + 1) & (h->hash_cap - 1)) {
		l = &h->lines[h->hash[j] - 1];
		if (!memcmp(l->key, key, sizeof(l->key)))
			return l;
	}
	if (h->nr == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 256;

		l = realloc(h->lines, cap * sizeof(*l));
		if (!l)
			return NULL;
		h->lines = l;
		h->cap = cap;
	}
	l = &h->lines[h->nr];
	*l = (struct held_line){ .key = { key[0], key[1], key[2], key[3] } };
	h->hash[j] = (uint32_t)++h->nr;
	return l;
}

static void held_free(struct held *h)
{
	size_t i;

	for (i = 0; i < h->nr; i++) {
		free(h->lines[i].buf);
		free(h->lines[i].pieces);
	}
	free(h->lines);
	free(h->hash);
	if (h->spill >= 0)
		close(h->spill);
	h->lines = NULL;
	h->hash = NULL;
	h->nr = h->cap = h->hash_cap = h->bytes = 0;
	h->spill = -1;
	h->spill_len = 0;
}

/* Put @h's lines in key order (the index follows). */
static int held_sort(struct held *h)
{
	if (!h->nr)
		return 0;
	qsort(h->lines, h->nr, sizeof(*h->lines), held_line_cmp);
	return held_rehash(h, h->hash_cap);
}

/* An unnamed file in @dir, gone when closed: O_TMPFILE, or a name unlinked at once. */
static int held_spill_in(const char *dir)
{
	char path[4096];
	int fd;

	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	if ((size_t)snprintf(path, sizeof(path), "%s/mcr-rows.XXXXXX", dir) >= sizeof(path))
		return -ENAMETOOLONG;
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	unlink(path);
	return fd;
}

/*
 * The file for the rows written out: in $TMPDIR (as SQLite's own temporary
 * files), else, or if that cannot have one, in /tmp.
 */
static int held_spill_open(void)
{
	const char *dir = getenv("TMPDIR");
	int fd = -ENOENT;

	if (dir && *dir)
		fd = held_spill_in(dir);
	return fd >= 0 ? fd : held_spill_in("/tmp");
}

static int write_all(int fd, const uint8_t *p, size_t len, uint64_t off)
{
	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/*
 * Write every line's held bytes out to the spill file, one piece a line,
 * the lines in key order (so that the merge reads the file forward).
 */
static int held_spill(struct held *h)
{
	size_t i;
	int err;

	if (h->spill < 0) {
		h->spill = held_spill_open();
		if (h->spill < 0) {
			err = h->spill;
			h->spill = -1;
			return err;
		}
	}
	err = held_sort(h);
	for (i = 0; !err && i < h->nr; i++) {
		struct held_line *l = &h->lines[i];
		struct held_piece *p;

		if (!l->len)
			continue;
		p = realloc(l->pieces, (l->nr_pieces + 1) * sizeof(*p));
		if (!p) {
			err = -ENOMEM;
			break;
		}
		l->pieces = p;
		err = write_all(h->spill, l->buf, l->len, h->spill_len);
		if (err)
			break;
		p[l->nr_pieces++] = (struct held_piece){ .off = h->spill_len, .len = l->len };
		h->spill_len += l->len;
		l->len = 0;
	}
	if (!err)
		h->bytes = 0;
	return err;
}

/*
 * One row of line @key: @v[0] its ts, after the line's last row's (in the
 * order SQLite compares them), then @h->cols - 1 more values.
 */
static int held_add(struct held *h, const int64_t *key, const uint64_t *v)
{
	struct held_line *l = held_line_get(h, key);
	uint64_t step;
	size_t i, n;
	int err;

	if (!l)
		return -ENOMEM;
	if (l->rows && (int64_t)v[0] <= (int64_t)l->last[0])
		return -EINVAL;	/* a line's rows come in ts order, once each */
	err = held_reserve(l, 10 * h->cols);
	if (err)
		return err;
	step = v[0] - l->last[0];
	n = put_varint(l->buf + l->len, zigzag(step - l->last_step));
	for (i = 1; i < h->cols; i++)
		n += put_varint(l->buf + l->len + n, zigzag(v[i] - l->last[i]));
	l->len += n;
	h->bytes += n;
	l->last_step = step;
	memcpy(l->last, v, h->cols * sizeof(*v));
	l->rows++;
	return h->bytes > DB_HELD_BYTES ? held_spill(h) : 0;
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
	w->ser = (struct held){ .cols = 4, .spill = -1, .bind = series_bind,
				.bulk = w->ser.bulk, .one = w->st[W_SERIES] };
	w->cs = (struct held){ .cols = 5, .spill = -1, .bind = csample_bind,
			       .bulk = w->cs.bulk, .one = w->st[W_CGROUP_SAMPLE] };
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
	held_free(&w->ser);
	held_free(&w->cs);
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

/* Decoded rows on their way in: DB_BULK_ROWS at a time through the bulk statement. */
struct held_ins {
	struct held		*h;
	int			nr;
	uint64_t		key[DB_BULK_ROWS][4];
	uint64_t		v[DB_BULK_ROWS][DB_LINE_COLS];
};

/* Insert the rows gathered: through the bulk statement if @in is full, else one by one. */
static int held_ins_flush(struct held_ins *in)
{
	struct held *h = in->h;
	int cols = sqlite3_bind_parameter_count(h->one), i, err = 0;

	if (in->nr == DB_BULK_ROWS) {
		for (i = 0; i < in->nr; i++)
			h->bind(h->bulk, i * cols, in->key[i], in->v[i]);
		err = db_step_reset(h->bulk);
	} else {
		for (i = 0; !err && i < in->nr; i++) {
			h->bind(h->one, 0, in->key[i], in->v[i]);
			err = db_step_reset(h->one);
		}
	}
	in->nr = 0;
	return err;
}

/* Decode @len bytes of line @l's rows, continuing from @v (the row before), and insert them. */
static int held_decode(struct held_ins *in, const struct held_line *l, const uint8_t *p,
		       size_t len, uint64_t *v, uint64_t *step)
{
	const uint8_t *end = p + len;
	size_t i, n;
	uint64_t d;
	int err;

	while (p < end) {
		n = get_varint(p, end, &d);
		if (!n)
			return -MCR_E_CORRUPT;
		p += n;
		*step += unzigzag(d);
		v[0] += *step;
		for (i = 1; i < in->h->cols; i++) {
			n = get_varint(p, end, &d);
			if (!n)
				return -MCR_E_CORRUPT;
			p += n;
			v[i] += unzigzag(d);
		}
		memcpy(in->key[in->nr], l->key, sizeof(l->key));
		memcpy(in->v[in->nr], v, in->h->cols * sizeof(*v));
		if (++in->nr == DB_BULK_ROWS) {
			err = held_ins_flush(in);
			if (err)
				return err;
		}
	}
	return 0;
}

static int read_all(int fd, uint8_t *p, size_t len, uint64_t off)
{
	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/*
 * Insert every row @h holds, in key order: line by line, each line's pieces
 * from the spill file in order, then its bytes still in memory.  Then @h is
 * empty again.
 */
static int held_insert(struct held *h)
{
	struct held_ins *in = malloc(sizeof(*in));
	uint8_t *buf = NULL;
	size_t i, j, cap = 0;
	int err;

	if (!in)
		return -ENOMEM;
	in->h = h;
	in->nr = 0;
	err = held_sort(h);
	for (i = 0; !err && i < h->nr; i++) {
		const struct held_line *l = &h->lines[i];
		uint64_t v[DB_LINE_COLS] = { 0 }, step = 0;

		for (j = 0; !err && j < l->nr_pieces; j++) {
			const struct held_piece *pc = &l->pieces[j];

			if (pc->len > cap) {
				uint8_t *b = realloc(buf, pc->len);

				if (!b) {
					err = -ENOMEM;
					break;
				}
				buf = b;
				cap = pc->len;
			}
			err = read_all(h->spill, buf, pc->len, pc->off);
			if (!err)
				err = held_decode(in, l, buf, pc->len, v, &step);
		}
		if (!err)
			err = held_decode(in, l, l->buf, l->len, v, &step);
	}
	if (!err)
		err = held_ins_flush(in);
	free(buf);
	free(in);
	held_free(h);
	return err;
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

	return held_add(&w->ser, key, v);
}

/** db_cgroup_sample_add() - one cgroup_series row, held as db_series_add()'s are. */
int db_cgroup_sample_add(struct db_results *w, const struct db_cgroup_sample *s)
{
	const int64_t key[4] = { s->run_id, (int64_t)s->cgroup_id, 0, 0 };
	const uint64_t v[5] = { s->ts, s->pending, (uint64_t)s->stats_updates, s->flushable,
				s->stranded };

	return held_add(&w->cs, key, v);
}

/**
 * db_results_flush() - insert every held row; before the transaction commits
 * or anything reads the tables.  Returns 0 or a negative error (a duplicate
 * key shows here, not at the add).
 */
int db_results_flush(struct db_results *w)
{
	int err = held_insert(&w->ser);
	int err2 = held_insert(&w->cs);

	return err ? err : err2;
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
