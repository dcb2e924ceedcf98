// SPDX-License-Identifier: GPL-2.0
/*
 * iter.c - streaming the events in replay order, checking as it goes what
 * replay relies on: time never goes backwards within one CPU, and every CPU
 * an event names exists.
 *
 * The event store (store.h) is read one chunk per CPU at a time: a CPU's
 * chunks in insertion order, each checked whole and built DB_ITER_BATCH
 * events at a time (db_recs_*() for version 1, db_cols_*() for version 2).
 * Up to 64 CPUs are merged in rounds: the built batches of every CPU up to
 * a common horizon, by a merge tree of packed keys (ts and the CPU's index
 * in one u64; iter_merge.c), then checked and handed out a round at a time
 * as pointers into the CPUs' built batches (db_iter_next_batch()): no event
 * is copied.  Between rounds, a CPU with less than half a batch to go has
 * it topped up to a batch.  Every CPU's batch and chunk buffers lie in one
 * arena, in huge pages where the kernel gives them.
 * Otherwise, or once a ts does not fit the keys, the CPUs' heads are merged
 * one event at a time: up to 64 CPUs by packed keys (the least found by
 * conditional moves), beyond them or for a ts too far from the others by a
 * binary heap (a scan of up to DB_ITER_SCAN CPUs).
 * Memory is one chunk and a window of DB_ITER_WINDOW rows of the chunk
 * index per CPU, whatever the trace's length: the index is checked in one
 * pass when the reader is opened, then read again a window at a time (it
 * was held whole, 48 bytes a chunk, 0.3 MB at 100 M events).  Files of the
 * previous format (an events table, no chunks) are read row by row in rowid
 * order, which was the same replay order.
 *
 * This file opens the reader and hands the events out; iter_chunk.c reads a
 * CPU's chunks, iter_round.c merges in rounds, iter_event.c event by event,
 * iter_rows.c reads the previous format's rows (iter_local.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "db.h"
#include "db_local.h"
#include "error.h"
#include "store.h"
#include "iter_local.h"

#define DB_MAX_CPUS	(1 << 20)	/* sanity bound on meta nr_cpus_possible */

/*
 * The store's version, meta store_version: missing in files of version 1,
 * -MCR_E_NEWER above what this build reads, -MCR_E_CORRUPT if not a
 * version at all.
 */
static int db_store_version(struct db *db, int *version)
{
	int64_t v;
	int err = db_meta_get_int(db, "store_version", &v);

	if (err == -ENOENT) {
		*version = DB_STORE_V1;
		return 0;
	}
	if (err == -EINVAL || (!err && v < DB_STORE_V1))
		return -MCR_E_CORRUPT;
	if (err)
		return err;
	if (v > DB_STORE_LATEST)
		return -MCR_E_NEWER;
	*version = (int)v;
	return 0;
}

/* Rows in events (previous format): meta event_count once the load finished, else COUNT(*). */
static int db_iter_total(struct db *db, const char *sql, uint64_t *out)
{
	sqlite3_stmt *st;
	int64_t n;
	int rc;

	if (!db_meta_get_int(db, "event_count", &n) && n >= 0) {
		*out = (uint64_t)n;
		return 0;
	}
	rc = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_err(rc);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out = (uint64_t)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : db_err(rc);
}

#define DB_ITER_HUGE	(2u << 20)	/* a huge page */

static inline size_t db_iter_align(size_t n, size_t to)
{
	return (n + to - 1) / to * to;
}

/*
 * Every CPU's built events (+ DB_ITER_AHEAD, which db_iter_next_chunked()
 * prefetches) in one arena.  In huge pages where the kernel gives them, for
 * the TLB, once the arena is more than half of one (above 70 CPUs): an
 * arena of less is not rounded up to one, as the rest would be resident for
 * nothing, per iterator.  The chunks decompressed are db_chunk_buf's, apart
 * (iter_chunk.c): with them here, on huge pages, replay of a 32-CPU trace
 * was no faster than with them on pages of their own.
 */
static int db_iter_arena(struct db_iter *it)
{
	size_t stride = db_iter_align((DB_ITER_BATCH + DB_ITER_AHEAD) * sizeof(struct mcr_event), 64);
	size_t len, i;
	uint8_t *a;

	if (!it->nr_cpus)
		return 0;
	len = it->nr_cpus * stride;
	if (len < DB_ITER_HUGE / 2) {
		a = aligned_alloc(64, len);
	} else {
		len = db_iter_align(len, DB_ITER_HUGE);
		a = aligned_alloc(DB_ITER_HUGE, len);
		/* advice only: without huge pages the arena is read as well, a little slower */
		if (a)
			madvise(a, len, MADV_HUGEPAGE);
	}
	if (!a)
		return -ENOMEM;
	it->arena = a;
	for (i = 0; i < it->nr_cpus; i++)
		it->cpus[i].ev = (struct mcr_event *)(a + i * stride);
	return 0;
}

/*
 * SQLite's page cache while chunks are read: 64 KiB of pages read, where
 * SQLite's default kept 2 MiB.  Every chunk's BLOB passes through the cache
 * (Debian's SQLite reads overflow pages into it), and a file that does not
 * fill the default cache took a fresh page, and a page fault, for every one
 * it read: a tenth of reading a 2 MB recording.  Set by the first iterator
 * opened on the connection, restored when the last is closed.
 *
 * The dirty pages of what is written meanwhile (replay's results, in one
 * transaction during the pass) spill at DB_ITER_SPILL, not at 64 KiB's,
 * where the hot pages (each table's last, the read index's) went out and
 * came back over and over.  Not at the count before either: SQLite spills
 * only when a page must be evicted and more pages than the spill size are
 * held, and that was the old cache's (2000 KiB, 483 pages, on a trace
 * opened with SQLite's default), so every page of reads, read_errors and
 * stranded_episodes stayed dirty in memory: 0.15 MB at 5 M events of the
 * 8-CPU fleet trace, 2.1 MB at 100 M.
 */
#define DB_ITER_CACHE	"-64"		/* KiB */
#define DB_ITER_SPILL	"-256"		/* KiB */

static int db_iter_cache(struct db *db)
{
	int err;

	if (db->iters++)
		return 0;
	err = db_query_ints(db, "PRAGMA cache_size", &db->cache_size, NULL) ?:
	      db_query_ints(db, "PRAGMA cache_spill", &db->cache_spill, NULL) ?:
	      db_exec(db, "PRAGMA cache_spill = " DB_ITER_SPILL "; PRAGMA cache_size = "
		      DB_ITER_CACHE);
	if (err)
		db->iters--;
	return err;
}

static void db_iter_uncache(struct db *db)
{
	char sql[96];

	if (--db->iters)
		return;
	snprintf(sql, sizeof(sql), "PRAGMA cache_size = %" PRId64 "; PRAGMA cache_spill = %" PRId64,
		 db->cache_size, db->cache_spill);
	db_exec(db, sql);
}

/*
 * What the read needs of the chunk index up front, in one pass over it in
 * its own order (cpu, first_ts, chunk) and no row kept: every row checked,
 * the CPUs and their chunks counted, the largest chunk decompressed, the
 * least and greatest ts, and whether each CPU's chunks come in chunk order
 * there (db_iter_window() reads them a window at a time).  Of the rows that
 * fail, the first in (cpu, chunk) order decides the error, as when the rows
 * were read in that order: -MCR_E_CPU or -MCR_E_CORRUPT in ->bad.
 */
struct db_iter_scan {
	uint64_t	n, lo, hi;
	size_t		cap;			/* of it->cpus */
	int64_t		bad_cpu, bad_chunk;	/* the first row that failed */
	int		bad;			/* its error, 0: none */
};

static void db_iter_scan_bad(struct db_iter_scan *s, int64_t cpu, int64_t chunk, int err)
{
	if (s->bad && (cpu > s->bad_cpu || (cpu == s->bad_cpu && chunk > s->bad_chunk)))
		return;
	s->bad_cpu = cpu;
	s->bad_chunk = chunk;
	s->bad = err;
}

/* A CPU's first row: its entry in it->cpus, in cpu order, its window's place. */
static int db_iter_scan_cpu(struct db_iter *it, struct db_iter_scan *s, int cpu)
{
	struct db_iter_cpu *c;

	if (it->nr_cpus == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 8;
		c = realloc(it->cpus, s->cap * sizeof(*c));
		if (!c)
			return -ENOMEM;
		it->cpus = c;
	}
	c = &it->cpus[it->nr_cpus++];
	memset(c, 0, sizeof(*c));
	c->cpu = cpu;
	c->ix_ts = INT64_MIN;
	c->ix_chunk = INT64_MIN;
	return 0;
}

static int db_iter_scan(struct db_iter *it, struct db_iter_scan *s)
{
	int64_t prev_cpu = 0, prev_chunk = 0;
	sqlite3_stmt *st;
	int rc;

	rc = sqlite3_prepare_v2(it->db->sql,
				"SELECT cpu, chunk, first_ts, last_ts, count, raw_bytes FROM event_chunks"
				" ORDER BY cpu, first_ts, chunk", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_err(rc);
	s->lo = UINT64_MAX;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t cpu = sqlite3_column_int64(st, 0), chunk = sqlite3_column_int64(st, 1);
		int64_t count = sqlite3_column_int64(st, 4), raw = sqlite3_column_int64(st, 5);
		struct db_chunk_index ix = {
			.first_ts = (uint64_t)sqlite3_column_int64(st, 2),
			.last_ts = (uint64_t)sqlite3_column_int64(st, 3),
			.count = (uint32_t)count, .raw_bytes = (uint32_t)raw,
		};
		size_t need;

		if (cpu < 0 || cpu >= it->nr_possible) {
			db_iter_scan_bad(s, cpu, chunk, -MCR_E_CPU);
			continue;
		}
		if (count < 1 || count > DB_CHUNK_EVENTS || raw < count ||
		    (uint64_t)raw > db_chunk_raw_max(it->version, (uint64_t)count)) {
			db_iter_scan_bad(s, cpu, chunk, -MCR_E_CORRUPT);
			continue;
		}
		if (!s->n || cpu != prev_cpu) {
			if (db_iter_scan_cpu(it, s, (int)cpu) < 0) {
				sqlite3_finalize(st);
				return -ENOMEM;
			}
		} else if (chunk < prev_chunk) {
			it->by_chunk = true;
		}
		it->cpus[it->nr_cpus - 1].ix_left++;
		s->n++;
		prev_cpu = cpu;
		prev_chunk = chunk;
		need = db_iter_raw_size(it, &ix);
		it->raw_size = need > it->raw_size ? need : it->raw_size;
		s->lo = ix.first_ts < s->lo ? ix.first_ts : s->lo;
		s->hi = ix.last_ts > s->hi ? ix.last_ts : s->hi;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_err(rc);
}

/*
 * Take the read transaction, check the chunk index and set the CPUs up to
 * read it a window at a time (db_iter_window()): memory stays one window
 * and one chunk per CPU, whatever the trace's length.
 */
static int db_iter_chunks(struct db_iter *it)
{
	struct db_iter_scan s = { 0 };
	size_t n, i;
	int err, rc;

	/*
	 * A read transaction for as long as the iterator is open, when the
	 * caller has none: the windows of the index and the chunks are read
	 * from the snapshot checked here, and SQLite does not lock, check and
	 * unlock the file around every chunk (four fcntl(), three stat() and
	 * a pread() a chunk, microseconds each on a VM), nor does the
	 * read-ahead forget its buffer (vfs.c).  Any statement stepped to a
	 * row and not reset holds it.
	 */
	rc = sqlite3_prepare_v2(it->db->sql, "SELECT 1 FROM event_chunks", -1, &it->hold, NULL);
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(it->hold);
		rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
	}
	if (rc != SQLITE_OK)
		return db_err(rc);
	err = db_iter_scan(it, &s);
	if (err)
		return err;
	if (s.bad == -MCR_E_CPU) {
		/* reported by the first db_iter_next(), as rows were */
		it->nr_cpus = 0;
		it->err = -MCR_E_CPU;
		return 0;
	}
	if (s.bad)
		return s.bad;
	n = s.n;
	it->heap = calloc(it->nr_cpus + 1, sizeof(*it->heap));	/* + a sentinel */
	it->ix = malloc(((size_t)it->nr_cpus * DB_ITER_WINDOW ?: 1) * sizeof(*it->ix));
	if (!it->heap || !it->ix)
		return -ENOMEM;
	for (i = 0; i < it->nr_cpus; i++)
		it->cpus[i].ix = &it->ix[i * DB_ITER_WINDOW];
	err = db_iter_arena(it);
	if (err)
		return err;
	/*
	 * Packed keys: few enough CPUs for a group scan, and every ts the
	 * index names within 2^(63 - KEY_BITS) ns (146 years) of the least.
	 */
	if (n && it->nr_cpus <= DB_ITER_KEY_CPUS) {
		size_t keys = (size_t)it->nr_cpus * (DB_ITER_BATCH + 2);
		uint64_t lo = s.lo, hi = s.hi;

		it->key_base = lo;
		it->key_lim = (1ULL << (63 - DB_ITER_KEY_BITS)) - 1;
		it->nr_groups = (it->nr_cpus + DB_ITER_GROUP - 1) / DB_ITER_GROUP;
		it->key = malloc(it->nr_groups * DB_ITER_GROUP * sizeof(*it->key));
		it->gmin = malloc(it->nr_groups * sizeof(*it->gmin));
		if (!it->key || !it->gmin)
			return -ENOMEM;
		it->packed = hi >= lo && hi - lo <= it->key_lim;
		it->mk = malloc(keys * sizeof(*it->mk));
		it->mk_tmp = malloc(keys * sizeof(*it->mk_tmp));
		it->mlen = malloc(it->nr_cpus * sizeof(*it->mlen));
		it->out = malloc((size_t)it->nr_cpus * DB_ITER_BATCH * sizeof(*it->out));
		if (!it->mk || !it->mk_tmp || !it->mlen || !it->out)
			return -ENOMEM;
	}
	rc = sqlite3_prepare_v2(it->db->sql, it->by_chunk ?
				"SELECT chunk, first_ts, last_ts, first_seq, count, raw_bytes"
				" FROM event_chunks WHERE cpu = ?1 AND chunk >= ?3"
				" ORDER BY chunk LIMIT ?4" :
				"SELECT chunk, first_ts, last_ts, first_seq, count, raw_bytes"
				" FROM event_chunks WHERE cpu = ?1 AND (first_ts, chunk) >= (?2, ?3)"
				" ORDER BY first_ts, chunk LIMIT ?4", -1, &it->win, NULL);
	if (rc != SQLITE_OK)
		return db_err(rc);
	rc = sqlite3_prepare_v2(it->db->sql, "SELECT data FROM event_chunks WHERE chunk = ?",
				-1, &it->st, NULL);
	return db_err(rc);
}

/* Load every CPU's first chunk: on the first db_iter_next(), so errors come from it. */
static int db_iter_prime(struct db_iter *it)
{
	unsigned int i;
	int ret;

	it->primed = true;
	for (i = 0; i < it->nr_cpus; i++) {
		struct db_iter_cpu *c = &it->cpus[i];

		ret = db_iter_load(it, c);
		if (ret < 0)
			return ret;
		if (ret)
			it->heap[it->nr_heap++] = (struct db_iter_head){ c->ev[0].ts, c->cpu, c };
	}
	if (!it->packed || !db_iter_pack(it)) {
		db_iter_heapify(it);
		return 0;
	}
	it->rounds = it->out != NULL;
	for (i = 0; i < it->nr_cpus; i++) {
		struct db_iter_cpu *c = &it->cpus[i];

		if (c->pos < c->n && !db_iter_round_fits(it, c, c->pos, 0))
			it->rounds = false;
	}
	return 0;
}

/**
 * db_iter_open_range() - start reading the events in replay order, only those
 * with @from <= ts <= @to.
 * @db:   open database
 * @from: first ts wanted
 * @to:   last ts wanted
 * @out:  the iterator
 *
 * Chunks outside the range are not read.  Needs meta nr_cpus_possible
 * (-MCR_E_SCHEMA without a sane one).  -MCR_E_CPU if a chunk's CPU is not
 * below it, -MCR_E_CORRUPT for an impossible index row.
 */
int db_iter_open_range(struct db *db, uint64_t from, uint64_t to, struct db_iter **out)
{
	struct db_iter *it;
	int64_t possible, win_start, win_end;
	uint64_t count = 0;
	int err, rc;

	err = db_meta_get_int(db, "nr_cpus_possible", &possible);
	if (err == -ENOENT || err == -EINVAL || (!err && (possible < 1 || possible > DB_MAX_CPUS)))
		return -MCR_E_SCHEMA;
	if (err)
		return err;
	err = db_iter_total(db, db->row_events ? "SELECT count(*) FROM events" :
			    "SELECT coalesce(sum(count), 0) FROM event_chunks", &count);
	if (err)
		return err;
	it = calloc(1, sizeof(*it) + (size_t)possible * sizeof(it->last_ts[0]));
	if (!it)
		return -ENOMEM;
	it->db = db;
	it->count = count;
	it->from = from;
	it->to = to;
	it->nr_possible = (unsigned int)possible;
	db_event_window(db, &win_start, &win_end);
	db_event_bounds(&it->bounds, it->nr_possible, win_start, win_end);
	if (db->row_events) {
		rc = sqlite3_prepare_v2(db->sql,
					"SELECT ts, cpu, seq, kind, id, item, val, aux, level, flags, pid,"
					" rowid FROM events ORDER BY rowid", -1, &it->st, NULL);
		err = db_err(rc);
	} else {
		err = db_store_version(db, &it->version) ?: db_iter_cache(db);
		it->cached = !err;
		err = err ?: db_iter_chunks(it);
	}
	if (err) {
		db_iter_close(it);
		return err;
	}
	*out = it;
	return 0;
}

int db_iter_open(struct db *db, struct db_iter **out)
{
	return db_iter_open_range(db, 0, UINT64_MAX, out);
}

/**
 * db_iter_next() - the next event in replay order.
 * @it: iterator
 * @ev: filled when 1 is returned
 *
 * Returns 1, 0 at the end, or a negative error that every later call returns
 * again: -MCR_E_TIME if ts goes backwards within one CPU, -MCR_E_CPU if the
 * event's CPU (or the CPU a lock or visit event targets) is not below meta
 * nr_cpus_possible, -MCR_E_CORRUPT for a chunk that does not decode to what
 * its index row says.
 */
int db_iter_next(struct db_iter *it, struct mcr_event *ev)
{
	int ret;

	if (it->out_pos < it->out_n) {
		*ev = *it->out[it->out_pos++];
		return 1;
	}
	if (it->err)
		return it->err;
	if (it->done)
		return 0;
	if (!it->db->row_events && !it->primed && (ret = db_iter_prime(it)) < 0)
		return it->err = ret;
	if (it->rounds) {
		ret = db_iter_fill(it);
		if (ret <= 0)
			return ret;
		if (it->out_pos < it->out_n) {
			*ev = *it->out[it->out_pos++];
			return 1;
		}
	}
	do {
		if (it->err)
			return it->err;
		ret = it->db->row_events ? db_iter_next_row(it, ev) : db_iter_next_chunked(it, ev);
		if (ret <= 0) {
			if (ret < 0)
				it->err = ret;
			it->done = !ret;
			return ret;
		}
	} while (ev->ts < it->from || ev->ts > it->to);
	ret = db_event_check(ev, &it->bounds, it->db->why, sizeof(it->db->why));
	if (ret < 0)
		return it->err = ret;
	return 1;
}

/**
 * db_iter_next_batch() - the next events in replay order, as many as come.
 * @it:  iterator
 * @evs: set to an array of pointers to them, in replay order, when a count
 *       above 0 is returned; the array and the events it points to are
 *       valid until the next call on @it
 *
 * Rounds hand out pointers into the CPUs' built batches, no event copied;
 * the other paths (rows, the heap) copy events one by one into a small
 * array of their own and point to those.  Returns the count, 0 at the end, or a negative error as
 * db_iter_next() (which it may be mixed with), after every event before it.
 */
int db_iter_next_batch(struct db_iter *it, const struct mcr_event *const **evs)
{
	uint32_t n;
	int ret = 0;

	if (it->out_pos == it->out_n && !it->err) {
		if (!it->db->row_events && !it->primed && (ret = db_iter_prime(it)) < 0)
			return it->err = ret;
		if (it->rounds && (ret = db_iter_fill(it)) <= 0)
			return ret;
	}
	if (it->out_pos < it->out_n) {
		*evs = it->out + it->out_pos;
		n = it->out_n - it->out_pos;
		it->out_pos = it->out_n;
		return (int)n;
	}
	/* no rounds: rows, the heap */
	if (!it->fill) {
		it->fill = malloc(DB_ITER_FILL * sizeof(*it->fill));
		it->fill_p = malloc(DB_ITER_FILL * sizeof(*it->fill_p));
		if (!it->fill || !it->fill_p) {
			free(it->fill);
			free(it->fill_p);
			it->fill = NULL;
			it->fill_p = NULL;
			return -ENOMEM;
		}
		for (n = 0; n < DB_ITER_FILL; n++)
			it->fill_p[n] = &it->fill[n];
	}
	for (n = 0; n < DB_ITER_FILL; n++) {
		ret = db_iter_next(it, &it->fill[n]);
		if (ret <= 0)
			break;
	}
	if (!n)
		return ret;
	*evs = it->fill_p;
	return (int)n;
}

const char *db_why(const struct db *db)
{
	return db->why;
}

uint64_t db_iter_count(const struct db_iter *it)
{
	return it->count;
}

void db_iter_close(struct db_iter *it)
{
	if (!it)
		return;
	sqlite3_finalize(it->st);
	sqlite3_finalize(it->win);
	sqlite3_finalize(it->hold);
	for (unsigned int i = 0; it->cpus && i < it->nr_cpus; i++)
		db_iter_unhold(&it->cpus[i]);
	db_iter_bufs_trim(it->db);
	if (it->cached)
		db_iter_uncache(it->db);
	free(it->arena);
	free(it->cpus);
	free(it->heap);
	free(it->key);
	free(it->gmin);
	free(it->mk);
	free(it->mk_tmp);
	free(it->mlen);
	free(it->out);
	free(it->fill);
	free(it->fill_p);
	free(it->ix);
	db_chunk_dctx_free(it->dctx);
	free(it);
}
