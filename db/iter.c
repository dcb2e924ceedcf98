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
 * Memory is one chunk per CPU, whatever the trace's length.  Files of the
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
 * Every CPU's buffers in one arena: its built events (+ DB_ITER_AHEAD, which
 * db_iter_next_chunked() prefetches), then room for the largest chunk of
 * the trace decompressed.  In huge pages where the kernel gives them: a
 * round reads the batches and columns of up to 64 CPUs, a quarter of a MiB
 * apart, more 4 KiB pages than the TLB holds (a tenth of reading 32 CPUs).
 */
static int db_iter_arena(struct db_iter *it)
{
	size_t ev = db_iter_align((DB_ITER_BATCH + DB_ITER_AHEAD) * sizeof(struct mcr_event), 64);
	size_t raw = 0, stride, len, i;
	uint8_t *a;

	if (!it->nr_cpus)
		return 0;
	for (i = 0; i < it->nr_cpus; i++) {
		const struct db_iter_cpu *c = &it->cpus[i];
		uint32_t k;

		for (k = 0; k < c->nix; k++) {
			size_t need = it->version == DB_STORE_V2 ? c->ix[k].raw_bytes :
				      db_recs_size(&c->ix[k]);

			raw = need > raw ? need : raw;
		}
	}
	stride = ev + db_iter_align(raw, 64);
	if (it->nr_cpus > SIZE_MAX / 2 / stride)
		return -ENOMEM;
	len = db_iter_align(it->nr_cpus * stride, DB_ITER_HUGE);
	a = aligned_alloc(DB_ITER_HUGE, len);
	if (!a)
		return -ENOMEM;
	/* advice only: without huge pages the arena is read as well, a little slower */
	madvise(a, len, MADV_HUGEPAGE);
	it->arena = a;
	for (i = 0; i < it->nr_cpus; i++) {
		it->cpus[i].ev = (struct mcr_event *)(a + i * stride);
		it->cpus[i].raw = a + i * stride + ev;
	}
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

/* Read the chunk index, group it by CPU and load every CPU's first chunk. */
static int db_iter_chunks(struct db_iter *it)
{
	sqlite3_stmt *st;
	size_t n = 0, cap = 0, nr = 0, i;
	int err, rc;

	rc = sqlite3_prepare_v2(it->db->sql,
				"SELECT chunk, cpu, first_ts, last_ts, first_seq, count, raw_bytes"
				" FROM event_chunks ORDER BY cpu, chunk", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_err(rc);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct db_chunk_index *ix;
		int64_t cpu = sqlite3_column_int64(st, 1), count = sqlite3_column_int64(st, 5);
		int64_t raw = sqlite3_column_int64(st, 6);

		if (cpu < 0 || cpu >= it->nr_possible) {
			/* reported by the first db_iter_next(), as rows were */
			sqlite3_finalize(st);
			it->err = -MCR_E_CPU;
			return 0;
		}
		if (count < 1 || count > DB_CHUNK_EVENTS || raw < count ||
		    (uint64_t)raw > db_chunk_raw_max(it->version, (uint64_t)count)) {
			sqlite3_finalize(st);
			return -MCR_E_CORRUPT;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			ix = realloc(it->ix, cap * sizeof(*ix));
			if (!ix) {
				sqlite3_finalize(st);
				return -ENOMEM;
			}
			it->ix = ix;
		}
		ix = &it->ix[n++];
		ix->chunk = sqlite3_column_int64(st, 0);
		ix->cpu = (int)cpu;
		ix->first_ts = (uint64_t)sqlite3_column_int64(st, 2);
		ix->last_ts = (uint64_t)sqlite3_column_int64(st, 3);
		ix->first_seq = (uint64_t)sqlite3_column_int64(st, 4);
		ix->count = (uint32_t)count;
		ix->raw_bytes = (uint32_t)raw;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_err(rc);
	/*
	 * The index stays for the whole pass, the one thing here that grows
	 * with the trace (48 bytes a chunk, ~60 chunks per million events of
	 * the fleet trace): not with the doubling's room too, up to as much
	 * again.
	 */
	if (n && n < cap) {
		struct db_chunk_index *ix = realloc(it->ix, n * sizeof(*ix));

		if (ix)
			it->ix = ix;
	}
	for (i = 0; i < n; i++)
		if (!i || it->ix[i].cpu != it->ix[i - 1].cpu)
			nr++;
	it->cpus = calloc(nr ? nr : 1, sizeof(*it->cpus));
	it->heap = calloc(nr + 1, sizeof(*it->heap));	/* + a sentinel */
	if (!it->cpus || !it->heap)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct db_iter_cpu *c;

		if (!i || it->ix[i].cpu != it->ix[i - 1].cpu) {
			c = &it->cpus[it->nr_cpus++];
			c->cpu = it->ix[i].cpu;
			c->ix = &it->ix[i];
		}
		it->cpus[it->nr_cpus - 1].nix++;
	}
	err = db_iter_arena(it);
	if (err)
		return err;
	/*
	 * Packed keys: few enough CPUs for a group scan, and every ts the
	 * index names within 2^(63 - KEY_BITS) ns (146 years) of the least.
	 */
	if (n && it->nr_cpus <= DB_ITER_KEY_CPUS) {
		size_t keys = (size_t)it->nr_cpus * (DB_ITER_BATCH + 2);
		uint64_t lo = UINT64_MAX, hi = 0;

		for (i = 0; i < n; i++) {
			lo = it->ix[i].first_ts < lo ? it->ix[i].first_ts : lo;
			hi = it->ix[i].last_ts > hi ? it->ix[i].last_ts : hi;
		}
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
	/*
	 * A read transaction for as long as the iterator is open, when the
	 * caller has none: the chunks are read from the snapshot the index
	 * came from, and SQLite does not lock, check and unlock the file
	 * around every chunk (four fcntl(), three stat() and a pread() a
	 * chunk, microseconds each on a VM), nor does the read-ahead forget
	 * its buffer (vfs.c).  Any statement stepped to a row and not reset
	 * holds it.
	 */
	rc = sqlite3_prepare_v2(it->db->sql, "SELECT 1 FROM event_chunks", -1, &it->hold, NULL);
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(it->hold);
		rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
	}
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
	sqlite3_finalize(it->hold);
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
