/* SPDX-License-Identifier: GPL-2.0 */
/*
 * store_local.h - what the files of the event store share, from the
 * bottom up: store_frame.c the zstd framing of both formats, store_v1.c the
 * records, store_v2_cols.c the columns, and store.c the chunk's life, which
 * sends each event and the seal to the chunk's format.  Not for the rest of
 * db/, which sees store.h.
 */
#ifndef MCR_STORE_LOCAL_H
#define MCR_STORE_LOCAL_H

#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "store.h"

static inline uint64_t load_le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return le64toh(v);
}

/*
 * Room for @need items of @size bytes in *@buf, whose contents need not be
 * kept: half as much again as before at least, so that a chunk a little
 * larger than the last does not cost a copy and fresh pages every time.
 */
static inline int buf_reserve(void **buf, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap + *cap / 2;
	void *p;

	if (need <= *cap)
		return 0;
	n = n > need ? n : need;
	p = malloc(n * size);
	if (!p)
		return -ENOMEM;
	free(*buf);
	*buf = p;
	*cap = n;
	return 0;
}

/* store_v1.c, store_v2_cols.c: one event into the open chunk of their format */
int db_chunk_add_v1(struct db_chunk *c, const struct mcr_event *ev);
int db_chunk_add_v2(struct db_chunk *c, const struct mcr_event *ev);

/* store_v2_cols.c: a version 2 chunk's columns into c->raw, for the seal */
int db_chunk_columns(struct db_chunk *c);

/* store_frame.c: the sealed chunk's raw bytes compressed, for db_chunk_seal() */
int db_chunk_compress(struct db_chunk *c);

/* store_frame.c: @ix's BLOB into @raw, for either format's reader */
ssize_t db_chunk_decompress(void **dctx, const struct db_chunk_index *ix, const void *z,
			    size_t zlen, uint8_t *raw);

#endif /* MCR_STORE_LOCAL_H */
