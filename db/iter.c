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

#define DB_MAX_CPUS	(1 << 20)	/* sanity bound on meta nr_cpus_possible */
#define DB_ITER_SCAN	4		/* CPUs merged by a scan, more by the heap */
#define DB_ITER_AHEAD	8		/* events prefetched ahead on the CPU read */
#define DB_ITER_BATCH	256		/* events built at a time per CPU */
#define DB_ITER_FILL	256		/* db_iter_next_batch() event by event */
#define DB_ITER_GROUP	8		/* packed keys: CPUs per group */
#define DB_ITER_KEY_BITS 6		/* packed keys: bits of the CPU's index */
#define DB_ITER_KEY_CPUS (1u << DB_ITER_KEY_BITS)

struct db_iter_cpu {
	int			cpu;
	struct db_chunk_index	*ix;		/* its chunks, in order */
	uint32_t		nix, next_ix;
	struct mcr_event	*ev;		/* a batch of the chunk: ev[pos .. n) to go */
	uint32_t		n, pos;
	uint64_t		last_ts;	/* of the previous chunk */
	/* the chunk: its records or columns, events built from them DB_ITER_BATCH at a time */
	struct db_recs		recs;		/* version 1 */
	struct db_cols		cols;		/* version 2 */
	uint32_t		built;		/* events of the chunk built so far */
	uint32_t		foreign;	/* ev[0 .. foreign) may hold another chunk's fields */
	uint32_t		good;		/* events to deliver: before a step back in ts */
	int			err;		/* after those: the chunk went wrong */
	uint8_t			*raw;		/* the chunk decompressed */
};

/* A heap entry: a CPU with events left, keyed by its head's (ts, cpu). */
struct db_iter_head {
	uint64_t		ts;
	int			cpu;
	struct db_iter_cpu	*c;
};

struct db_iter {
	struct db		*db;
	sqlite3_stmt		*st;		/* rows, or the BLOB of one chunk */
	sqlite3_stmt		*hold;		/* at a row: the read transaction, db_iter_chunks() */
	uint64_t		count;
	uint64_t		from, to;
	int			err;		/* sticky: once failed, always failed */
	bool			done;		/* the end was returned: a statement would start over */
	bool			primed;		/* every CPU's first chunk loaded */
	bool			cached;		/* counted in db->iters: db_iter_cache() */
	unsigned int		nr_possible;
	int			version;	/* of the store: DB_STORE_V* */
	struct db_chunk_index	*ix;
	struct db_iter_cpu	*cpus;		/* CPUs that have chunks */
	unsigned int		nr_cpus, nr_heap;
	struct db_iter_head	*heap;		/* min-heap of the CPUs with a head event */
	uint64_t		next_ts;	/* the least key below heap[0]: */
	int			next_cpu;	/* heap[0] is taken from while before it */
	/*
	 * Packed keys, instead of the heap while every ts fits: per CPU (by
	 * index in cpus[], which is in cpu order) (ts - key_base) << KEY_BITS
	 * | index, UINT64_MAX once it has no events left, and the least key
	 * of each group of DB_ITER_GROUP CPUs.
	 */
	bool			packed;
	bool			run;		/* cpus[run_idx] is taken from while below run_lim */
	unsigned int		run_idx;
	uint64_t		run_lim;
	uint64_t		key_base, key_lim;
	uint64_t		*key, *gmin;
	unsigned int		nr_groups;
	/*
	 * Rounds (packed keys): every CPU's built batch merged at once up
	 * to a horizon, into out[], checked, then handed out with no
	 * comparison per event (db_iter_round()).  out[] points into the
	 * CPUs' batches, so the CPUs are topped up only at the next round
	 * (db_iter_round_topup()), once the caller is done with
	 * those events.
	 */
	bool			rounds;
	uint64_t		*mk, *mk_tmp;	/* key runs, DB_ITER_BATCH + 2 a CPU */
	uint32_t		*mlen;
	const struct mcr_event	**out;		/* the round's events, checked */
	uint32_t		out_n, out_pos;
	int			out_err;	/* after *out[out_n - 1] */
	/* db_iter_next_batch() without rounds: events copied, and pointers to them */
	struct mcr_event	*fill;
	const struct mcr_event	**fill_p;
	struct db_event_bounds	bounds;		/* db_event_check() */
	void			*dctx;		/* ZSTD_DCtx, kept across chunks */
	uint8_t			*arena;		/* every CPU's ev and raw: db_iter_arena() */
	uint64_t		last_ts[];	/* rows: per ring-buffer CPU */
};

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

/* Whether @c's chunk has events past its batch. */
static inline bool db_iter_unbuilt(const struct db_iter_cpu *c)
{
	return c->built < c->good;
}

/*
 * The next events of @c's chunk, built into c->ev after the @at kept at its
 * start: up to a batch in all.  The fields every event of a version 2
 * chunk shares are written into the rest of the buffer with the chunk's
 * first build (@opened), and again only when built from below
 * c->foreign.
 */
static void db_iter_build(const struct db_iter *it, struct db_iter_cpu *c, uint32_t at,
			  bool opened)
{
	uint32_t n = c->good - c->built, fill = 0;

	if (n > DB_ITER_BATCH - at)
		n = DB_ITER_BATCH - at;
	if (opened || at < c->foreign) {
		fill = DB_ITER_BATCH - at;
		c->foreign = at;
	}
	if (it->version == DB_STORE_V1)
		db_recs_build(&c->recs, n, c->ev + at);
	else
		db_cols_build(&c->cols, n, c->ev + at, fill);
	c->built += n;
	c->n = at + n;
	c->pos = 0;
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
 * Step to chunk @ix's row: its blob stays valid, and it->st must be reset,
 * once the caller has decoded it.  A missing row is a damaged index.
 */
static int db_iter_fetch(struct db_iter *it, const struct db_chunk_index *ix, const void **z,
			 int *zlen)
{
	int rc;

	sqlite3_bind_int64(it->st, 1, ix->chunk);
	rc = sqlite3_step(it->st);
	if (rc != SQLITE_ROW) {
		sqlite3_reset(it->st);
		return rc == SQLITE_DONE ? -MCR_E_CORRUPT : db_err(rc) ? db_err(rc) : -EIO;
	}
	*z = sqlite3_column_blob(it->st, 0);
	*zlen = sqlite3_column_bytes(it->st, 0);
	return 0;
}

/*
 * Open the next chunk of @c: decompressed into the CPU's own buffer and
 * checked whole; its events are built DB_ITER_BATCH at a time as the merge
 * takes them: the batches of every CPU stay in cache, where whole decoded
 * chunks (3 MiB a CPU) did not.  c->ev is left as it is.  1 opened, 0 none
 * left, or a negative error: also when the chunk's first event steps back,
 * none of it to go.
 */
static int db_iter_open_chunk(struct db_iter *it, struct db_iter_cpu *c)
{
	struct db_chunk_index *ix;
	const void *z = NULL;
	int err, zlen = 0;

	for (;;) {
		if (c->next_ix == c->nix)
			return 0;
		ix = &c->ix[c->next_ix++];
		if (ix->last_ts >= it->from && ix->first_ts <= it->to)
			break;
		c->last_ts = ix->last_ts;
	}
	if (ix->first_ts < c->last_ts)
		return -MCR_E_TIME;	/* backwards across two chunks */
	err = db_iter_fetch(it, ix, &z, &zlen);
	if (err)
		return err;
	if (!z)
		err = -MCR_E_CORRUPT;
	else if (it->version == DB_STORE_V2)
		err = db_cols_open(&it->dctx, ix, z, (size_t)zlen, c->raw, &c->cols, &c->good);
	else
		err = db_recs_open(&it->dctx, ix, z, (size_t)zlen, c->raw, &c->recs, &c->good);
	sqlite3_reset(it->st);
	c->last_ts = ix->last_ts;
	if (err && (err != -MCR_E_TIME || !c->good))
		return err;
	/* on a step back, deliver what comes before it, as the merge reaches it */
	c->err = err;
	c->built = 0;
	return 1;
}

/* The next chunk of @c, its first batch built: as db_iter_open_chunk(). */
static int db_iter_load(struct db_iter *it, struct db_iter_cpu *c)
{
	int ret = db_iter_open_chunk(it, c);

	if (ret > 0)
		db_iter_build(it, c, 0, true);
	return ret;
}

/*
 * SQLite's page cache while chunks are read: 64 KiB of pages read, where
 * SQLite's default kept 2 MiB.  Every chunk's BLOB passes through the cache
 * (Debian's SQLite reads overflow pages into it), and a file that does not
 * fill the default cache took a fresh page, and a page fault, for every one
 * it read: a tenth of reading a 2 MB recording.  The cache spills dirty
 * pages (replay's results, written in one transaction during the pass) at
 * the same count as before, not at 64 KiB's.  Set by the first iterator
 * opened on the connection, restored when the last is closed.
 */
#define DB_ITER_CACHE	"-64"		/* KiB */

static int db_iter_cache(struct db *db)
{
	char sql[96];
	int err;

	if (db->iters++)
		return 0;
	err = db_query_ints(db, "PRAGMA cache_size", &db->cache_size, NULL) ?:
	      db_query_ints(db, "PRAGMA cache_spill", &db->cache_spill, NULL);
	if (!err) {
		snprintf(sql, sizeof(sql), "PRAGMA cache_spill = %" PRId64 "; PRAGMA cache_size = "
			 DB_ITER_CACHE, db->cache_spill);
		err = db_exec(db, sql);
	}
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

/* (a_ts, a_cpu) before (b_ts, b_cpu) */
static inline bool db_iter_before(uint64_t a_ts, int a_cpu, uint64_t b_ts, int b_cpu)
{
	return a_ts < b_ts || (a_ts == b_ts && a_cpu < b_cpu);
}

static inline bool db_iter_head_before(const struct db_iter_head *a, const struct db_iter_head *b)
{
	return db_iter_before(a->ts, a->cpu, b->ts, b->cpu);
}

/* Move heap[i] down to its place. */
static void db_iter_sift(struct db_iter *it, unsigned int i)
{
	struct db_iter_head *h = it->heap, x = h[i];
	unsigned int n = it->nr_heap, k;

	while ((k = 2 * i + 1) < n) {
		if (k + 1 < n && db_iter_head_before(&h[k + 1], &h[k]))
			k++;
		if (!db_iter_head_before(&h[k], &x))
			break;
		h[i] = h[k];
		i = k;
	}
	h[i] = x;
}

/* The least key below the top: the lesser of its two children. */
static void db_iter_next_key(struct db_iter *it)
{
	const struct db_iter_head *h = it->heap;

	if (it->nr_heap > 2 && db_iter_head_before(&h[2], &h[1]))
		h = &h[2];
	else if (it->nr_heap > 1)
		h = &h[1];
	else
		h = NULL;
	it->next_ts = h ? h->ts : UINT64_MAX;
	it->next_cpu = h ? h->cpu : INT32_MAX;
}

/*
 * Put the least head on top and note the next least.  A few CPUs are
 * scanned, their keys in one or two cache lines: as fast as the heap and its
 * branches predicted better, as when CPUs take turns.  Beyond, the heap.
 * The count only falls, so a scan never leaves a heap's order broken.
 */
static void db_iter_reorder(struct db_iter *it)
{
	struct db_iter_head *h = it->heap, t;
	unsigned int i, n = it->nr_heap, best = 0, next = n;

	if (n > DB_ITER_SCAN) {
		db_iter_sift(it, 0);
		db_iter_next_key(it);
		return;
	}
	/* h[n], past the last, is the sentinel that comes after every head */
	h[n] = (struct db_iter_head){ UINT64_MAX, INT32_MAX, NULL };
	for (i = 1; i < n; i++) {
		if (db_iter_head_before(&h[i], &h[best])) {
			next = best;
			best = i;
		} else if (db_iter_head_before(&h[i], &h[next])) {
			next = i;
		}
	}
	it->next_ts = h[next].ts;
	it->next_cpu = h[next].cpu;
	t = h[0];
	h[0] = h[best];
	h[best] = t;
}

static void db_iter_heapify(struct db_iter *it)
{
	unsigned int i;

	for (i = it->nr_heap / 2; i-- > 0;)
		db_iter_sift(it, i);
	db_iter_next_key(it);
}

static inline uint64_t db_iter_min(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* The least of a group's keys: a tree of conditional moves, no branch. */
static inline uint64_t db_iter_group_min(const uint64_t *k)
{
	return db_iter_min(db_iter_min(db_iter_min(k[0], k[1]), db_iter_min(k[2], k[3])),
			   db_iter_min(db_iter_min(k[4], k[5]), db_iter_min(k[6], k[7])));
}

/* A round's key of @ts on cpus[@idx]: 0 and UINT64_MAX stay free for the merge's sentinels. */
static inline uint64_t db_iter_round_key(const struct db_iter *it, uint64_t ts, unsigned int idx)
{
	return (ts - it->key_base + 1) << DB_ITER_KEY_BITS | idx;
}

/*
 * Whether @c's fresh batch can be merged in rounds: its ts within the keys
 * and its first not below @prev, the last handed out of the CPU (the first
 * event of a chunk that steps back in time may be).  Within a batch ts only
 * grows: db_recs_open() and db_cols_open() cut the chunk before any step
 * back.
 */
static inline bool db_iter_round_fits(const struct db_iter *it, const struct db_iter_cpu *c,
				      uint32_t from, uint64_t prev)
{
	uint64_t lo = c->ev[from].ts, hi = c->ev[c->n - 1].ts;

	return lo >= prev && lo >= it->key_base && hi - it->key_base < it->key_lim;
}

/* The heap's heads as packed keys; false (and the heap kept) if a ts does not fit. */
static bool db_iter_pack(struct db_iter *it)
{
	unsigned int i;

	for (i = 0; i < it->nr_groups * DB_ITER_GROUP; i++)
		it->key[i] = UINT64_MAX;
	for (i = 0; i < it->nr_heap; i++) {
		uint64_t rel = it->heap[i].ts - it->key_base;
		unsigned int idx = (unsigned int)(it->heap[i].c - it->cpus);

		if (rel > it->key_lim) {
			it->packed = false;
			return false;
		}
		it->key[idx] = rel << DB_ITER_KEY_BITS | idx;
	}
	for (i = 0; i < it->nr_groups; i++)
		it->gmin[i] = db_iter_group_min(&it->key[i * DB_ITER_GROUP]);
	return true;
}

/*
 * Leave the packed keys for the heap, over every CPU's head: a ts beyond
 * what the index promised (a chunk that steps back in time has them).
 */
static void db_iter_unpack(struct db_iter *it)
{
	unsigned int i;

	it->packed = false;
	it->nr_heap = 0;
	for (i = 0; i < it->nr_cpus; i++) {
		struct db_iter_cpu *c = &it->cpus[i];

		if (it->key[i] != UINT64_MAX)
			it->heap[it->nr_heap++] = (struct db_iter_head){ c->ev[c->pos].ts, c->cpu, c };
	}
	db_iter_heapify(it);
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

/* The previous format: one row per event. */
static int db_iter_next_row(struct db_iter *it, struct mcr_event *ev)
{
	sqlite3_stmt *st = it->st;
	int64_t cpu, kind, item, aux, level, flags, pid;
	const char *field = NULL;
	int64_t v = 0;
	int rc;

	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return 0;
	if (rc != SQLITE_ROW)
		return db_err(rc) ? db_err(rc) : -EIO;
	cpu = sqlite3_column_int64(st, 1);
	kind = sqlite3_column_int64(st, 3);
	item = sqlite3_column_int64(st, 5);
	aux = sqlite3_column_int64(st, 7);
	level = sqlite3_column_int64(st, 8);
	flags = sqlite3_column_int64(st, 9);
	pid = sqlite3_column_int64(st, 10);
	if (cpu < 0 || cpu >= it->nr_possible) {
		snprintf(it->db->why, sizeof(it->db->why), "events row %" PRId64 ": cpu %" PRId64
			 " not below nr_cpus_possible %u", (int64_t)sqlite3_column_int64(st, 11), cpu,
			 it->nr_possible);
		return -MCR_E_CPU;
	}
	/* what does not fit the event's fields; the rest is db_event_check()'s */
	if (kind < 0 || kind > UINT8_MAX)
		field = "kind", v = kind;
	else if (item != (int32_t)item)
		field = "item", v = item;
	else if (aux != (int32_t)aux)
		field = "aux", v = aux;
	else if (level != (int16_t)level)
		field = "level", v = level;
	else if (flags < 0 || flags > UINT8_MAX)
		field = "flags", v = flags;
	else if (pid != (int32_t)pid)
		field = "pid", v = pid;
	if (field) {
		char what[64] = "";

		if (strcmp(field, "kind"))
			snprintf(what, sizeof(what), " %s %" PRId64, field, v);
		snprintf(it->db->why, sizeof(it->db->why), "events row %" PRId64 " (cpu %" PRId64
			 " seq %" PRId64 "): kind %" PRId64 "%s out of range",
			 (int64_t)sqlite3_column_int64(st, 11), cpu,
			 (int64_t)sqlite3_column_int64(st, 2), kind, what);
		return -MCR_E_BAD_INPUT;
	}
	ev->ts = (uint64_t)sqlite3_column_int64(st, 0);
	ev->cpu = (int32_t)cpu;
	ev->seq = (uint64_t)sqlite3_column_int64(st, 2);
	ev->kind = (uint8_t)kind;
	ev->id = (uint64_t)sqlite3_column_int64(st, 4);
	ev->item = (int32_t)item;
	ev->val = sqlite3_column_int64(st, 6);
	ev->aux = (int32_t)aux;
	ev->level = (int16_t)level;
	ev->flags = (uint8_t)flags;
	ev->pid = (int32_t)pid;
	if (ev->ts < it->last_ts[cpu]) {
		snprintf(it->db->why, sizeof(it->db->why), "events row %" PRId64 " (cpu %" PRId64
			 " seq %" PRIu64 "): ts %" PRIu64 " before the CPU's previous %" PRIu64,
			 (int64_t)sqlite3_column_int64(st, 11), cpu, ev->seq, ev->ts,
			 it->last_ts[cpu]);
		return -MCR_E_TIME;
	}
	it->last_ts[cpu] = ev->ts;
	return 1;
}

/*
 * @c's batch went out whole: its next batch or chunk.  1: it has events;
 * 0: none left; or the error due after its last event.
 */
static int db_iter_refill(struct db_iter *it, struct db_iter_cpu *c)
{
	if (db_iter_unbuilt(c)) {
		db_iter_build(it, c, 0, false);
		return 1;
	}
	return c->err ?: db_iter_load(it, c);
}

/*
 * Move @c past the event just handed out: its next event from the batch,
 * the chunk's next batch or the next chunk.  1: it has a head; 0: none left;
 * or the error, which the event handed out does not share (it is good: the
 * failure is returned by the next call).
 */
static inline __attribute__((always_inline)) int db_iter_advance(struct db_iter *it,
								  struct db_iter_cpu *c)
{
	if (__builtin_expect(++c->pos < c->n, 1))
		return 1;
	return db_iter_refill(it, c);
}

/* The least key of all groups. */
static inline uint64_t db_iter_least(const struct db_iter *it)
{
	uint64_t k = it->gmin[0];
	unsigned int g;

	for (g = 1; g < it->nr_groups; g++)
		k = db_iter_min(k, it->gmin[g]);
	return k;
}

static inline void db_iter_regroup(struct db_iter *it, unsigned int idx)
{
	unsigned int g = idx / DB_ITER_GROUP;

	it->gmin[g] = db_iter_group_min(&it->key[g * DB_ITER_GROUP]);
}

/*
 * Hand out the head of cpus[@idx] and move it on.  Returns its next packed
 * key, UINT64_MAX if it has no events left, or 0 after leaving the packed
 * keys for the heap (a ts beyond them) or an error (it->err, sticky).
 */
static inline __attribute__((always_inline)) uint64_t db_iter_take(struct db_iter *it, unsigned int idx, struct mcr_event *ev)
{
	struct db_iter_cpu *c = &it->cpus[idx];
	uint64_t rel;
	int ret;

	*ev = c->ev[c->pos];
	ret = db_iter_advance(it, c);
	if (ret < 0) {
		it->err = ret;
		return 0;
	}
	if (!ret)
		return UINT64_MAX;
	rel = c->ev[c->pos].ts - it->key_base;
	if (__builtin_expect(rel > it->key_lim, 0)) {
		it->key[idx] = 0;	/* not UINT64_MAX: it has a head */
		it->run = false;
		db_iter_unpack(it);
		return 0;
	}
	return rel << DB_ITER_KEY_BITS | idx;
}

/*
 * Packed keys: the least key of the least group names the CPU; its next
 * key is one shift and or, and only its group's least is done again.  No
 * branch depends on which CPU comes next, which the heap's sift did at
 * every level when CPUs alternate at random, mispredicting half of them.
 * A CPU that comes twice in a row starts a run: its key is taken out, the
 * least of the others noted, and while its next key is below that, one
 * comparison an event, as for the long runs of one CPU of a recording.
 */
static int db_iter_next_packed(struct db_iter *it, struct mcr_event *ev)
{
	unsigned int idx;
	uint64_t k;

	if (it->run) {
		idx = it->run_idx;
		k = db_iter_take(it, idx, ev);
		if (k < it->run_lim && k)
			return 1;
		it->run = false;
		if (k) {
			it->key[idx] = k;
			db_iter_regroup(it, idx);
		}
		return 1;
	}
	k = db_iter_least(it);
	if (k == UINT64_MAX)
		return 0;
	idx = (unsigned int)(k & (DB_ITER_KEY_CPUS - 1));
	k = db_iter_take(it, idx, ev);
	if (!k)
		return 1;
	if (idx == it->run_idx) {
		it->key[idx] = UINT64_MAX;
		db_iter_regroup(it, idx);
		it->run_lim = db_iter_least(it);
		if (k < it->run_lim) {
			it->run = true;
			return 1;
		}
	}
	it->run_idx = idx;
	it->key[idx] = k;
	db_iter_regroup(it, idx);
	return 1;
}

/*
 * The store: the head of the heap's top CPU.  It stays on top, with no heap
 * work, while its next event is before the least of the others (next_ts,
 * next_cpu): one comparison an event for the long runs of one CPU of a
 * recording; a sift down the heap's log2(CPUs) levels when CPUs alternate,
 * where a scan of every CPU's head cost one cache miss per CPU.
 */
static int db_iter_next_chunked(struct db_iter *it, struct mcr_event *ev)
{
	struct db_iter_head *top;
	struct db_iter_cpu *c;
	int ret;

	if (!it->primed && (ret = db_iter_prime(it)) < 0)
		return ret;
	if (it->packed)
		return db_iter_next_packed(it, ev);
	if (!it->nr_heap)
		return 0;
	top = &it->heap[0];
	c = top->c;
	*ev = c->ev[c->pos];
	ret = db_iter_advance(it, c);
	if (ret < 0) {
		it->err = ret;
		return 1;
	}
	if (!ret) {
		*top = it->heap[--it->nr_heap];
		db_iter_reorder(it);
		return 1;
	}
	top->ts = c->ev[c->pos].ts;
	if (!db_iter_before(top->ts, top->cpu, it->next_ts, it->next_cpu)) {
		/*
		 * Many CPUs taking turns read as many streams of built batches,
		 * too many for the hardware prefetcher: fetch the next lines of
		 * the CPU left while the others are read.  A run of one CPU
		 * streams, and needs none.
		 */
		__builtin_prefetch(&c->ev[c->pos + DB_ITER_AHEAD]);
		db_iter_reorder(it);
	}
	return 1;
}

/* Events of @c not built yet, or an error to return after its last. */
static inline bool db_iter_more(const struct db_iter_cpu *c)
{
	return db_iter_unbuilt(c) || c->err || c->next_ix < c->nix;
}

/* Leave rounds for the per-event merge, from every CPU's head. */
static void db_iter_unround(struct db_iter *it)
{
	unsigned int i;

	it->rounds = false;
	it->run = false;
	it->nr_heap = 0;
	for (i = 0; i < it->nr_cpus; i++) {
		struct db_iter_cpu *c = &it->cpus[i];

		if (c->pos < c->n)
			it->heap[it->nr_heap++] = (struct db_iter_head){ c->ev[c->pos].ts, c->cpu, c };
	}
	if (!it->packed || !db_iter_pack(it))
		db_iter_heapify(it);
}

/*
 * Top up @c's events to go, when fewer than half a batch are left, to a
 * batch: those left moved to the front of its buffer, then its chunk's next
 * events built after them, or its next chunk's.  Refilling only the CPU
 * whose batch went out whole made rounds of one batch in all, 17 events a
 * CPU on 32 CPUs; every CPU half a batch ahead makes them half a batch a
 * CPU.  A next chunk that fails leaves the CPU's events to go, its error
 * due after them: the horizon ends a round at its last.  *@fits is cleared
 * if the events built do not fit the keys or step back from those before.
 * 0, or the error due now: the CPU has no event left.
 */
static int db_iter_topup(struct db_iter *it, struct db_iter_cpu *c, bool *fits)
{
	uint32_t left = c->n - c->pos;
	bool opened = false;
	uint64_t prev;
	int ret;

	if (left >= DB_ITER_BATCH / 2)
		return 0;
	prev = c->n ? c->ev[c->n - 1].ts : 0;
	if (!db_iter_unbuilt(c)) {
		if (c->err)
			return left ? 0 : c->err;
		ret = db_iter_open_chunk(it, c);
		if (ret < 0) {
			c->err = ret;
			c->built = c->good;
			return left ? 0 : ret;
		}
		if (!ret)
			return 0;
		opened = true;
	}
	memmove(c->ev, c->ev + c->pos, left * sizeof(*c->ev));
	/*
	 * What lies below c->foreign may be another chunk's: the events moved
	 * come from c->pos on, and those it did not reach stay where they were.
	 */
	if (left >= c->foreign)
		c->foreign = c->foreign > c->pos ? c->foreign - c->pos : 0;
	db_iter_build(it, c, left, opened);
	if (!db_iter_round_fits(it, c, left, prev))
		*fits = false;
	return 0;
}

/*
 * Every CPU's events to go topped up, now that the caller is done with the
 * last round's events.  A batch that does not fit the keys or steps back
 * from the CPU's last event leaves rounds for the per-event merge.  0, or
 * the error of the first that failed (the events before it went out with
 * the last round).
 */
static int db_iter_round_topup(struct db_iter *it)
{
	unsigned int i;
	bool fits = true;

	for (i = 0; i < it->nr_cpus; i++) {
		int ret = db_iter_topup(it, &it->cpus[i], &fits);

		if (ret < 0)
			return ret;
	}
	if (!fits)
		db_iter_unround(it);
	return 0;
}

/*
 * Check @out[0 .. n): the count before the first that fails, whose error
 * (and db_why()) is set in *@err, or @n.
 */
static uint32_t db_iter_check(struct db_iter *it, const struct mcr_event **out, uint32_t n,
			      int *err)
{
	uint32_t q;

	for (q = 0; q < n; q++) {
		int ret = db_event_check(out[q], &it->bounds, it->db->why, sizeof(it->db->why));

		if (ret < 0) {
			*err = ret;
			break;
		}
	}
	return q;
}

/*
 * One round: every CPU's built events up to the horizon, merged into out[]
 * (pointers into the CPUs' batches) and checked.  The horizon is the least
 * key of a CPU's last built event, over the CPUs with events not built yet:
 * none of those can come before it.  Only the CPU that set it can have its
 * events go out to the last (any other with events left has its last key
 * above), so a chunk that fails is refused after the same events as the
 * per-event merge refuses it.  The CPUs are topped up at the next round
 * (db_iter_round_topup()): out[] points into the buffers that moves.
 * Returns 0 when no CPU has events left, else 1 (out[] may be empty:
 * --from/--to).
 */
static int db_iter_round(struct db_iter *it)
{
	const struct mcr_event *head[DB_ITER_KEY_CPUS];
	uint64_t lim = UINT64_MAX, *k = it->mk, *m;
	const struct mcr_event **out = it->out;
	unsigned int i, nr = 0;
	uint32_t q, n = 0;
	int err = 0;

	it->out_n = it->out_pos = 0;
	for (i = 0; i < it->nr_cpus; i++) {
		struct db_iter_cpu *c = &it->cpus[i];

		if (c->pos < c->n && db_iter_more(c))
			lim = db_iter_min(lim, db_iter_round_key(it, c->ev[c->n - 1].ts, i));
	}
	for (i = 0; i < it->nr_cpus; i++) {
		struct db_iter_cpu *c = &it->cpus[i];
		uint64_t *run = k;
		uint32_t p;

		if (c->pos >= c->n)
			continue;
		*k++ = 0;
		for (p = c->pos; p < c->n; p++) {
			uint64_t key = db_iter_round_key(it, c->ev[p].ts, i);

			if (key > lim)
				break;
			*k++ = key;
		}
		if (p == c->pos) {
			k = run;
			continue;
		}
		*k++ = UINT64_MAX;
		it->mlen[nr++] = p - c->pos;
		n += p - c->pos;
	}
	if (!nr)
		return 0;
	m = db_keys_merge(it->mk, it->mk_tmp, it->mlen, nr) + 1;
	/* each CPU's next event by index: a small array, not a field of each CPU's struct */
	for (i = 0; i < it->nr_cpus; i++)
		head[i] = &it->cpus[i].ev[it->cpus[i].pos];
	if (it->from || it->to != UINT64_MAX) {
		uint32_t w = 0;

		for (q = 0; q < n; q++) {
			const struct mcr_event *ev = head[m[q] & (DB_ITER_KEY_CPUS - 1)]++;

			if (ev->ts >= it->from && ev->ts <= it->to)
				out[w++] = ev;
		}
		n = w;
		q = db_iter_check(it, out, n, &err);
	} else {
		/* checked as handed out: out[q] is in a register */
		for (q = 0; q < n; q++) {
			const struct mcr_event *ev = head[m[q] & (DB_ITER_KEY_CPUS - 1)]++;

			out[q] = ev;
			if (__builtin_expect(db_event_check(ev, &it->bounds, NULL, 0) < 0, 0))
				break;
		}
		if (q < n)
			q = db_iter_check(it, out, q + 1, &err);
	}
	for (i = 0; i < it->nr_cpus; i++)
		it->cpus[i].pos = (uint32_t)(head[i] - it->cpus[i].ev);
	if (err)
		n = q;
	it->out_n = n;
	it->out_err = err;
	return 1;
}

/*
 * Rounds until one has events: 1 (or 1 with none, having left rounds for
 * the per-event merge), 0 at the end, or the error due after the last
 * round's events.
 */
static int db_iter_fill(struct db_iter *it)
{
	int ret;

	for (;;) {
		if (it->out_err)
			return it->err = it->out_err;
		if ((ret = db_iter_round_topup(it)) < 0)
			return it->err = ret;
		if (!it->rounds)
			return 1;
		if (!db_iter_round(it))
			return 0;
		if (it->out_n)
			return 1;
	}
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
