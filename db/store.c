// SPDX-License-Identifier: GPL-2.0
/*
 * store.c - one chunk of the event store (the format is in store.h): its
 * life, and the event added and the chunk sealed in the chunk's format.
 * The formats are store_v1.c (records) and store_v2_cols.c (columns), each
 * writing and reading its own; store_frame.c compresses and decompresses
 * both.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#define ZSTD_STATIC_LINKING_ONLY	/* ZSTD_compressSequences(), zstd 1.5 */
#include <zstd.h>

#include "error.h"
#include "grow.h"
#include "store.h"
#include "store_local.h"

void db_chunk_init(struct db_chunk *c, int cpu)
{
	memset(c, 0, sizeof(*c));
	c->cpu = cpu;
	c->version = DB_STORE_LATEST;
}

void db_chunk_reset(struct db_chunk *c)
{
	c->count = 0;
	c->len = 0;
	c->zlen = 0;
	c->kinds = 0;
	memset(c->kind_count, 0, sizeof(c->kind_count));
	c->nr_read_ids = 0;
}

void db_chunk_take(struct db_chunk *c, struct db_chunk *out)
{
	void *z = out->z;
	size_t zcap = out->zcap;
	uint64_t *ids = out->read_ids;
	uint32_t ids_cap = out->cap_read_ids;

	out->cpu = c->cpu;
	out->version = c->version;
	out->count = c->count;
	out->first_ts = c->first_ts;
	out->last_ts = c->last_ts;
	out->first_seq = c->first_seq;
	out->kinds = c->kinds;
	memcpy(out->kind_count, c->kind_count, sizeof(out->kind_count));
	out->len = c->len;
	out->z = c->z;
	out->zlen = c->zlen;
	out->zcap = c->zcap;
	c->z = z;
	c->zcap = zcap;
	out->read_ids = c->read_ids;
	out->nr_read_ids = c->nr_read_ids;
	out->cap_read_ids = c->cap_read_ids;
	c->read_ids = ids;
	c->cap_read_ids = ids_cap;
	db_chunk_reset(c);
}

void db_chunk_free(struct db_chunk *c)
{
	free(c->cols);
	free(c->raw);
	free(c->z);
	ZSTD_freeCCtx(c->cctx);
	free(c->mtab);
	free(c->seqs);
	free(c->read_ids);
	memset(c, 0, sizeof(*c));
}

/*
 * A read of @id: into the chunk's read ids unless it repeats the last one.
 * Return: 1 added, 0 a repeat, -ENOMEM.
 */
static int db_chunk_read_id(struct db_chunk *c, uint64_t id)
{
	if (c->nr_read_ids && c->read_ids[c->nr_read_ids - 1] == id)
		return 0;
	if (mcr_grow((void **)&c->read_ids, &c->cap_read_ids, c->nr_read_ids + 1,
		     sizeof(*c->read_ids)) < 0)
		return -ENOMEM;
	c->read_ids[c->nr_read_ids++] = id;
	return 1;
}

int db_chunk_add(struct db_chunk *c, const struct mcr_event *ev)
{
	int err, added = 0;

	if (!ev->kind || ev->kind > MCR_EV_KIND_MAX)
		return -EINVAL;
	/* the read's id first: a chunk holds no read whose id it lacks */
	if (ev->kind == MCR_EV_FLUSH && !(ev->flags & MCR_FLUSH_FORCE)) {
		added = db_chunk_read_id(c, ev->id);
		if (added < 0)
			return added;
	}
	err = c->version == DB_STORE_V2 ? db_chunk_add_v2(c, ev) : db_chunk_add_v1(c, ev);
	if (err && added)
		c->nr_read_ids--;	/* nor an id without its read */
	return err;
}

int db_chunk_seal(struct db_chunk *c)
{
	int err;

	if (c->version == DB_STORE_V2 && c->count) {
		err = db_chunk_columns(c);
		if (err)
			return err;
	}
	return db_chunk_compress(c);
}
