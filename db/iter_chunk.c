// SPDX-License-Identifier: GPL-2.0
/*
 * iter_chunk.c - a CPU's chunks, one at a time: fetched, decompressed and
 * checked (store.h), then built DB_ITER_BATCH events at a time into its
 * batch.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "db_local.h"
#include "error.h"
#include "store.h"
#include "iter_local.h"

/*
 * The next events of @c's chunk, built into c->ev after the @at kept at its
 * start: up to a batch in all.  The fields every event of a version 2
 * chunk shares are written into the rest of the buffer with the chunk's
 * first build (@opened), and again only when built from below
 * c->foreign.
 */
void db_iter_build(const struct db_iter *it, struct db_iter_cpu *c, uint32_t at,
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

/*
 * The next window of @c's index rows, up to DB_ITER_WINDOW, into c->ix:
 * those from (c->ix_ts, c->ix_chunk) on, in the index's order (cpu,
 * first_ts, chunk), which db_iter_chunks() found to be the chunks' own, or
 * else from c->ix_chunk on in chunk order (a sort of the CPU's rows from
 * there, each window).  The rows were checked when the iterator was
 * opened, in the same read transaction: one that differs now is a damaged
 * file.  The number read (> 0), 0 if none is left, or a negative error.
 */
int db_iter_window(struct db_iter *it, struct db_iter_cpu *c)
{
	sqlite3_stmt *st = it->win;
	uint32_t want = c->ix_left < DB_ITER_WINDOW ? c->ix_left : DB_ITER_WINDOW, n = 0;
	int rc;

	c->nix = c->next_ix = 0;
	if (!want)
		return 0;
	sqlite3_bind_int64(st, 1, c->cpu);
	sqlite3_bind_int64(st, 2, c->ix_ts);
	sqlite3_bind_int64(st, 3, c->ix_chunk);
	sqlite3_bind_int64(st, 4, want);
	while (n < want && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct db_chunk_index *ix = &c->ix[n++];
		int64_t count = sqlite3_column_int64(st, 4), raw = sqlite3_column_int64(st, 5);

		if (count < 1 || count > DB_CHUNK_EVENTS || raw < count ||
		    (uint64_t)raw > db_chunk_raw_max(it->version, (uint64_t)count)) {
			sqlite3_reset(st);
			return -MCR_E_CORRUPT;
		}
		ix->chunk = sqlite3_column_int64(st, 0);
		ix->cpu = c->cpu;
		ix->first_ts = (uint64_t)sqlite3_column_int64(st, 1);
		ix->last_ts = (uint64_t)sqlite3_column_int64(st, 2);
		ix->first_seq = (uint64_t)sqlite3_column_int64(st, 3);
		ix->count = (uint32_t)count;
		ix->raw_bytes = (uint32_t)raw;
		/* the arena holds the largest chunk db_iter_chunks() saw, no more */
		if (db_iter_raw_size(it, ix) > it->raw_size) {
			sqlite3_reset(st);
			return -MCR_E_CORRUPT;
		}
	}
	rc = n == want ? SQLITE_OK : rc;
	sqlite3_reset(st);
	if (rc != SQLITE_OK && rc != SQLITE_DONE)
		return db_err(rc) ?: -EIO;
	if (n < want)
		return -MCR_E_CORRUPT;
	c->nix = n;
	c->ix_left -= n;
	/* the next window from the key after the last row's */
	c->ix_ts = (int64_t)c->ix[n - 1].first_ts;
	c->ix_chunk = c->ix[n - 1].chunk;
	if (c->ix_chunk < INT64_MAX) {
		c->ix_chunk++;
	} else if (c->ix_ts < INT64_MAX && !it->by_chunk) {
		c->ix_ts++;
		c->ix_chunk = INT64_MIN;
	} else if (c->ix_left) {
		return -MCR_E_CORRUPT;	/* no row can follow: the count was wrong */
	}
	return (int)n;
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

/* Let go of @c's chunk (struct db_chunk_buf): the next chunk opened may take it. */
void db_iter_unhold(struct db_iter_cpu *c)
{
	if (c->buf)
		c->buf->refs--;
	c->buf = NULL;
}

/* Free the buffers no iterator holds: one closed. */
void db_iter_bufs_trim(struct db *db)
{
	struct db_chunk_buf **p = &db->chunk_bufs, *b;

	while ((b = *p)) {
		if (b->refs) {
			p = &b->next;
			continue;
		}
		*p = b->next;
		free(b);
	}
}

/* @c starts on @b's chunk as it was opened: its own copy of the opened state. */
static void db_iter_start(struct db_iter_cpu *c, const struct db_chunk_buf *b)
{
	c->recs = b->recs;
	c->cols = b->cols;
	c->good = b->good;
}

/* Chunk @ix as an iterator of the connection opened it, taken by @c; NULL if none has. */
static struct db_chunk_buf *db_iter_share(struct db_iter *it, struct db_iter_cpu *c,
					  const struct db_chunk_index *ix)
{
	struct db_chunk_buf *b;

	for (b = it->db->chunk_bufs; b; b = b->next)
		if (b->ok && b->chunk == ix->chunk && b->cpu == c->cpu)
			break;
	if (!b)
		return NULL;
	if (b != c->buf) {
		db_iter_unhold(c);
		b->refs++;
		c->buf = b;
	}
	db_iter_start(c, b);
	return b;
}

/*
 * A buffer for @c to open chunk @ix in: the one it holds, if no other
 * iterator holds it, else one no one holds, else a new one.
 */
static struct db_chunk_buf *db_iter_own(struct db_iter *it, struct db_iter_cpu *c,
					const struct db_chunk_index *ix)
{
	size_t need = db_iter_raw_size(it, ix), size = it->raw_size > need ? it->raw_size : need;
	struct db_chunk_buf *b = c->buf;

	if (!b || b->refs > 1 || b->size < need) {
		db_iter_unhold(c);
		for (b = it->db->chunk_bufs; b && (b->refs || b->size < need); b = b->next)
			;
		if (!b) {
			b = aligned_alloc(64, (sizeof(*b) + size + 63) / 64 * 64);
			if (!b)
				return NULL;
			*b = (struct db_chunk_buf){ .next = it->db->chunk_bufs, .size = size };
			it->db->chunk_bufs = b;
		}
		b->refs = 1;
		c->buf = b;
	}
	b->ok = false;
	return b;
}

/*
 * Open the next chunk of @c: decompressed and checked whole, unless another
 * iterator of the connection holds it so already (db_iter_share()); its
 * events are built DB_ITER_BATCH at a time as the merge takes them: the
 * batches of every CPU stay in cache, where whole decoded chunks (3 MiB a
 * CPU) did not.  c->ev is left as it is.  1 opened, 0 none left, or a
 * negative error: also when the chunk's first event steps back, none of it
 * to go.
 */
int db_iter_open_chunk(struct db_iter *it, struct db_iter_cpu *c)
{
	struct db_chunk_index *ix;
	struct db_chunk_buf *b;
	const void *z = NULL;
	int err, zlen = 0;

	for (;;) {
		if (c->next_ix == c->nix) {
			err = db_iter_window(it, c);
			if (err <= 0)
				return err;
		}
		ix = &c->ix[c->next_ix++];
		if (ix->last_ts >= it->from && ix->first_ts <= it->to)
			break;
		c->last_ts = ix->last_ts;
	}
	if (ix->first_ts < c->last_ts)
		return -MCR_E_TIME;	/* backwards across two chunks */
	b = db_iter_share(it, c, ix);
	if (b) {
		err = b->err;
		goto opened;
	}
	err = db_iter_fetch(it, ix, &z, &zlen);
	if (err)
		return err;
	b = db_iter_own(it, c, ix);
	if (!b) {
		sqlite3_reset(it->st);
		err = -ENOMEM;
		goto opened;
	}
	/* opened into the buffer, as any iterator that takes the chunk next starts from */
	b->good = 0;
	if (!z)
		err = -MCR_E_CORRUPT;
	else if (it->version == DB_STORE_V2)
		err = db_cols_open(&it->dctx, ix, z, (size_t)zlen, b->raw, &b->cols, &b->good);
	else
		err = db_recs_open(&it->dctx, ix, z, (size_t)zlen, b->raw, &b->recs, &b->good);
	sqlite3_reset(it->st);
	b->chunk = ix->chunk;
	b->cpu = c->cpu;
	b->err = err;
	b->ok = !err || (err == -MCR_E_TIME && b->good);
	db_iter_start(c, b);
opened:
	c->last_ts = ix->last_ts;
	if (err && (err != -MCR_E_TIME || !c->good))
		return err;
	/* on a step back, deliver what comes before it, as the merge reaches it */
	c->err = err;
	c->built = 0;
	return 1;
}

/* The next chunk of @c, its first batch built: as db_iter_open_chunk(). */
int db_iter_load(struct db_iter *it, struct db_iter_cpu *c)
{
	int ret = db_iter_open_chunk(it, c);

	if (ret > 0)
		db_iter_build(it, c, 0, true);
	return ret;
}

/*
 * @c's batch went out whole: its next batch or chunk.  1: it has events;
 * 0: none left; or the error due after its last event.
 */
int db_iter_refill(struct db_iter *it, struct db_iter_cpu *c)
{
	if (db_iter_unbuilt(c)) {
		db_iter_build(it, c, 0, false);
		return 1;
	}
	return c->err ?: db_iter_load(it, c);
}
