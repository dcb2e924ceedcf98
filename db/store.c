// SPDX-License-Identifier: GPL-2.0
/*
 * store.c - encoding, compressing and decoding one chunk of the event store
 * (the format is in store.h).  zstd level 1: the capture readers compress
 * while the ring buffer fills, so speed matters more than the last byte.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "error.h"
#include "store.h"

#define DB_CHUNK_ZLEVEL		1

#define H_KIND		0x0f
#define H_ID_SAME	0x10
#define H_PID_SAME	0x20
#define H_EXTRA		0x40
#define H_SEQ_SKIP	0x80

static inline uint64_t zz(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t unzz(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static inline uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

void db_chunk_init(struct db_chunk *c, int cpu)
{
	memset(c, 0, sizeof(*c));
	c->cpu = cpu;
}

void db_chunk_reset(struct db_chunk *c)
{
	c->count = 0;
	c->len = 0;
	c->zlen = 0;
	c->kinds = 0;
	memset(c->kind_count, 0, sizeof(c->kind_count));
}

void db_chunk_free(struct db_chunk *c)
{
	free(c->raw);
	free(c->z);
	ZSTD_freeCCtx(c->cctx);
	memset(c, 0, sizeof(*c));
}

int db_chunk_add(struct db_chunk *c, const struct mcr_event *ev)
{
	uint8_t *p, *h;
	bool extra;

	if (!ev->kind || ev->kind > MCR_EV_KIND_MAX)
		return -EINVAL;
	if (c->cap - c->len < DB_CHUNK_REC_MAX) {
		size_t cap = c->cap ? 2 * c->cap : 64 * 1024;
		uint8_t *raw = realloc(c->raw, cap);

		if (!raw)
			return -ENOMEM;
		c->raw = raw;
		c->cap = cap;
	}
	if (!c->count) {
		c->first_ts = c->last_ts = ev->ts;
		c->first_seq = ev->seq;
		c->prev_seq = ev->seq - 1;
		c->prev_id = 0;
		c->prev_pid = 0;
	}
	h = p = c->raw + c->len;
	*p++ = ev->kind;
	p = put_varint(p, zz((int64_t)(ev->ts - c->last_ts)));
	if (ev->seq != c->prev_seq + 1) {
		*h |= H_SEQ_SKIP;
		p = put_varint(p, zz((int64_t)(ev->seq - c->prev_seq - 1)));
	}
	if (ev->id == c->prev_id)
		*h |= H_ID_SAME;
	else
		p = put_varint(p, ev->id);
	p = put_varint(p, zz(ev->item));
	p = put_varint(p, zz(ev->val));
	if (ev->pid == c->prev_pid)
		*h |= H_PID_SAME;
	else
		p = put_varint(p, zz(ev->pid));
	extra = ev->aux || ev->level || ev->flags;
	if (extra) {
		*h |= H_EXTRA;
		p = put_varint(p, zz(ev->aux));
		p = put_varint(p, zz(ev->level));
		*p++ = ev->flags;
	}
	c->len = (size_t)(p - c->raw);
	c->last_ts = ev->ts;
	c->prev_seq = ev->seq;
	c->prev_id = ev->id;
	c->prev_pid = ev->pid;
	c->kinds |= 1u << ev->kind;
	c->kind_count[ev->kind]++;
	c->count++;
	return 0;
}

int db_chunk_seal(struct db_chunk *c)
{
	size_t bound = ZSTD_compressBound(c->len), n;

	if (!c->cctx) {
		c->cctx = ZSTD_createCCtx();
		if (!c->cctx)
			return -ENOMEM;
	}
	if (c->zcap < bound) {
		void *z = realloc(c->z, bound);

		if (!z)
			return -ENOMEM;
		c->z = z;
		c->zcap = bound;
	}
	n = ZSTD_compressCCtx(c->cctx, c->z, c->zcap, c->raw, c->len, DB_CHUNK_ZLEVEL);
	if (ZSTD_isError(n))
		return -EIO;
	c->zlen = n;
	return 0;
}

/* Read a varint below @end; false if it runs past @end or past 64 bits. */
static inline bool get_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t r = 0;
	unsigned int shift = 0;

	/* most fields are below 128 */
	if (p < end && !(*p & 0x80)) {
		*v = *p;
		*pp = p + 1;
		return true;
	}
	while (p < end && shift < 64) {
		uint8_t b = *p++;

		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*pp = p;
			*v = r;
			return true;
		}
		shift += 7;
	}
	return false;
}

void db_chunk_dctx_free(void *dctx)
{
	ZSTD_freeDCtx(dctx);
}

int db_chunk_decode(void **dctx, const struct db_chunk_index *ix, const void *z, size_t zlen,
		    uint8_t *raw, struct mcr_event *out)
{
	const uint8_t *p = raw, *end;
	uint64_t ts = ix->first_ts, seq = ix->first_seq - 1, id = 0, v;
	int32_t pid = 0;
	bool backwards = false;
	size_t n;
	uint32_t i;

	/*
	 * ZSTD_decompress() would make and free a context of ~100 KiB per
	 * chunk: mmap, page faults and munmap each time.
	 */
	if (!*dctx) {
		*dctx = ZSTD_createDCtx();
		if (!*dctx)
			return -ENOMEM;
	}
	n = ZSTD_decompressDCtx(*dctx, raw, ix->raw_bytes, z, zlen);
	if (ZSTD_isError(n) || n != ix->raw_bytes)
		return -MCR_E_CORRUPT;
	end = raw + n;
	for (i = 0; i < ix->count; i++) {
		struct mcr_event *ev = &out[i];
		uint8_t h;
		int64_t d;

		if (p >= end)
			return -MCR_E_CORRUPT;
		h = *p++;
		if (!get_varint(&p, end, &v))
			return -MCR_E_CORRUPT;
		d = unzz(v);
		if (d < 0)
			backwards = true;
		ts += (uint64_t)d;
		seq++;
		if (h & H_SEQ_SKIP) {
			if (!get_varint(&p, end, &v))
				return -MCR_E_CORRUPT;
			seq += (uint64_t)unzz(v);
		}
		if (!(h & H_ID_SAME) && !get_varint(&p, end, &id))
			return -MCR_E_CORRUPT;
		ev->ts = ts;
		ev->seq = seq;
		ev->id = id;
		ev->cpu = ix->cpu;
		ev->kind = h & H_KIND;
		if (!ev->kind || ev->kind > MCR_EV_KIND_MAX || !get_varint(&p, end, &v))
			return -MCR_E_CORRUPT;
		ev->item = (int32_t)unzz(v);
		if (!get_varint(&p, end, &v))
			return -MCR_E_CORRUPT;
		ev->val = unzz(v);
		if (!(h & H_PID_SAME)) {
			if (!get_varint(&p, end, &v))
				return -MCR_E_CORRUPT;
			pid = (int32_t)unzz(v);
		}
		ev->pid = pid;
		ev->aux = 0;
		ev->level = 0;
		ev->flags = 0;
		if (h & H_EXTRA) {
			if (!get_varint(&p, end, &v))
				return -MCR_E_CORRUPT;
			ev->aux = (int32_t)unzz(v);
			if (!get_varint(&p, end, &v) || p >= end)
				return -MCR_E_CORRUPT;
			ev->level = (int16_t)unzz(v);
			ev->flags = *p++;
		}
	}
	if (p != end || ts != ix->last_ts)
		return -MCR_E_CORRUPT;
	return backwards ? -MCR_E_TIME : 0;
}
