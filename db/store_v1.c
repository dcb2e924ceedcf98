// SPDX-License-Identifier: GPL-2.0
/*
 * store_v1.c - version 1 of the event store: a chunk of varint records,
 * written an event at a time and read in two passes (format in store.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "error.h"
#include "store.h"
#include "store_local.h"

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

int db_chunk_add_v1(struct db_chunk *c, const struct mcr_event *ev)
{
	uint8_t *p, *h;
	bool extra;

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

/*
 * Version 1 is read in two passes over the decompressed chunk, as version
 * 2 is: db_recs_open() checks every record, decoding only ts, then
 * db_recs_build() decodes DB_ITER_BATCH events at a time into the reader's
 * small buffer, which stays in cache where a whole chunk's events (3.5 MiB
 * a CPU) did not: their page faults alone were 17 % of reading a
 * recording (perf), and the merge read them back from beyond the L2.
 *
 * The varints a record holds after its header, ts included, by header
 * byte: 3 at least.  The kind is not the decoder's to judge: an unknown one
 * (0, 11 to 15) is refused by db_event_check() as the reader hands the
 * event out, naming it, like any other field out of range.
 */
#define REC_VARS(h) (3 + ((h) >> 7 & 1) + (~(h) >> 4 & 1) + (~(h) >> 5 & 1) + ((h) >> 5 & 2))
/* A varint of one byte, zigzag decoded: an item's, a val's */
#define REC_UNZZ(v)	((v) & 1 ? -((v) >> 1) - 1 : (v) >> 1)
#define REC_T4(F, v)	F(v), F((v) + 1), F((v) + 2), F((v) + 3)
#define REC_T16(F, v)	REC_T4(F, v), REC_T4(F, (v) + 4), REC_T4(F, (v) + 8), REC_T4(F, (v) + 12)
#define REC_T64(F, v)	REC_T16(F, v), REC_T16(F, (v) + 16), REC_T16(F, (v) + 32), REC_T16(F, (v) + 48)
#define REC_T256(F)	REC_T64(F, 0), REC_T64(F, 64), REC_T64(F, 128), REC_T64(F, 192)

static const uint8_t rec_vars[256] = { REC_T256(REC_VARS) };
static const int8_t rec_unzz8[256] = { REC_T256(REC_UNZZ) };

#define REC_HI	0x8080808080808080ULL

/*
 * @t, a set bit at the end of each varint after a header, with the ends of
 * the first @nv - 1 cleared: its lowest set bit ends the record's last
 * varint (none if it does not end there).  Every record has 3 at least.
 */
static inline uint64_t rec_last_end(uint64_t t, unsigned int nv)
{
	unsigned int k;

	t &= t - 1;
	t &= t - 1;
	for (k = 3; k < nv; k++)
		t &= t - 1;
	return t;
}

/* Bit i set: byte p[i] of 16 has its continuation bit. */
static inline unsigned int rec_cont16(const uint8_t *p)
{
#ifdef __SSE2__
	return (unsigned int)_mm_movemask_epi8(_mm_loadu_si128((const __m128i *)p));
#else
	/* each byte's top bit, gathered into the top byte by one multiply */
	uint64_t lo = (load_le64(p) & REC_HI) >> 7, hi = (load_le64(p + 8) & REC_HI) >> 7;

	return (unsigned int)((lo * 0x0102040810204080ULL) >> 56 |
			      (hi * 0x0102040810204080ULL) >> 56 << 8);
#endif
}

/*
 * The varint at the start of the 8 bytes @x (little-endian), which ends in
 * them: its bytes through the first without a continuation bit (@stop is
 * ~x & REC_HI), their 7-bit groups packed, no branch on its length: the ts
 * deltas of a recording take 2 bytes, one in six 3.  Up to 4 bytes (ts
 * deltas below 2^27 ns) in 32 bits, where the masks are immediates.
 */
static inline uint64_t rec_pack(uint64_t x, uint64_t stop)
{
	uint32_t v;

	x &= stop ^ (stop - 1);
	if (__builtin_expect(!(stop & 0x80808080), 0)) {
		x = (x & 0x007f007f007f007fULL) | (x & 0x7f007f007f007f00ULL) >> 1;
		x = (x & 0x00003fff00003fffULL) | (x & 0x3fff00003fff0000ULL) >> 2;
		return (x & 0x000000000fffffffULL) | (x & 0x0fffffff00000000ULL) >> 4;
	}
	v = (uint32_t)x;
	v = (v & 0x007f007f) | (v & 0x7f007f00) >> 1;
	return (v & 0x3fff) | (v & 0x3fff0000) >> 2;
}

/* A varint of a checked chunk, of any length up to 10 bytes; no bounds. */
static uint64_t rec_varint_long(const uint8_t **pp)
{
	const uint8_t *p = *pp;
	uint64_t r = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		b = *p++;
		r |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	*pp = p;
	return r;
}

/* A varint of a checked chunk, most of them one byte: item, val, ids and pids as they change. */
static inline uint64_t rec_varint(const uint8_t **pp)
{
	uint8_t b = **pp;

	if (__builtin_expect(!(b & 0x80), 1)) {
		(*pp)++;
		return b;
	}
	return rec_varint_long(pp);
}

/*
 * Check the record at *@pp below @end with every bound, as
 * its bytes come: the records the fast paths of db_recs_open() do not
 * take, the last few of a chunk among them.  Its ts delta in *@dts.
 */
static bool rec_check_slow(const uint8_t **pp, const uint8_t *end, uint64_t *dts)
{
	const uint8_t *p = *pp;
	uint8_t h = *p++;
	unsigned int k, nv = rec_vars[h];
	uint64_t v;

	if (!get_varint(&p, end, dts))
		return false;
	for (k = 1; k < nv; k++)
		if (!get_varint(&p, end, &v))
			return false;
	if (h & H_EXTRA) {
		if (p >= end)
			return false;
		p++;
	}
	*pp = p;
	return true;
}

/*
 * The record at @p (@nv varints), if its varints end within
 * the 16 bytes after its header with 9 continuation bytes at most among
 * them (so none is over 10 bytes): its length, its ts delta in *@dts;
 * else 0.  A byte past the chunk is 0, the end of a varint: a record that
 * runs over is caught by the next one's p >= end, or the last's p != end.
 */
static inline unsigned int rec_check16(const uint8_t *p, unsigned int nv, uint64_t *dts)
{
	unsigned int t = (unsigned int)rec_last_end(~rec_cont16(p + 1) & 0xffff, nv), at;
	uint64_t x;

	if (!t || (at = (unsigned int)__builtin_ctz(t)) + 1 - nv > 9)
		return 0;
	/* ts within the first 8 bytes, packed; a longer one the careful way */
	x = load_le64(p + 1);
	if (!(~x & REC_HI))
		return 0;
	*dts = rec_pack(x, ~x & REC_HI);
	return 2 + at + (*p >> 6 & 1);
}

int db_recs_open(void **dctx, const struct db_chunk_index *ix, const void *z, size_t zlen,
		 uint8_t *raw, struct db_recs *recs, uint32_t *good)
{
	const uint8_t *p = raw, *end;
	uint8_t *len = raw + ix->raw_bytes + DB_RECS_PAD;
	uint64_t ts = ix->first_ts;
	uint32_t i, n = ix->count;
	ssize_t got;

	got = db_chunk_decompress(dctx, ix, z, zlen, raw);
	if (got < 0)
		return (int)got;
	end = raw + got;
	/* the fast paths and the build read past the end: zeros, ends of varints */
	memset(raw + got, 0, DB_RECS_PAD);
	*good = n;
	for (i = 0; i < n; i++) {
		unsigned int nv, l;
		uint64_t d, x, stop, t;

		if (p >= end)
			return -MCR_E_CORRUPT;
		nv = rec_vars[*p];
		/*
		 * Most records end within the 8 bytes after their header: the
		 * ends of their varints are the first nv bytes there without a
		 * continuation bit, found in one load and a few bit clears.
		 */
		x = load_le64(p + 1);
		stop = ~x & REC_HI;
		t = rec_last_end(stop, nv);
		if (__builtin_expect(t != 0, 1)) {
			d = rec_pack(x, stop);
			l = 2 + (unsigned int)__builtin_ctzll(t) / 8 + (*p >> 6 & 1);
		} else if (!(l = rec_check16(p, nv, &d))) {
			const uint8_t *q = p;

			if (!rec_check_slow(&q, end, &d))
				return -MCR_E_CORRUPT;
			l = (unsigned int)(q - p);
		}
		len[i] = (uint8_t)l;
		p += l;
		/* a step back as the reader sees it: unsigned, a wrap included */
		if (__builtin_expect(ts + (uint64_t)unzz(d) < ts, 0) && *good == n)
			*good = i;
		ts += (uint64_t)unzz(d);
	}
	if (p != end || ts != ix->last_ts)
		return -MCR_E_CORRUPT;
	recs->p = raw;
	recs->len = len;
	recs->cpu = ix->cpu;
	recs->next = 0;
	recs->ts = ix->first_ts;
	recs->seq = ix->first_seq - 1;
	recs->id = 0;
	recs->pid = 0;
	return *good < n ? -MCR_E_TIME : 0;
}

void db_recs_build(struct db_recs *recs, uint32_t n, struct mcr_event *out)
{
	const uint8_t *p = recs->p, *len = recs->len + recs->next;
	uint64_t ts = recs->ts, seq = recs->seq, id = recs->id;
	int32_t pid = recs->pid;
	uint32_t i;

	for (i = 0; i < n; i++) {
		struct mcr_event *ev = &out[i];
		const uint8_t *q = p + 1;
		uint8_t h = *p, flags = 0;
		uint64_t x = load_le64(q), stop = ~x & REC_HI;
		unsigned int l = len[i], tsl = (unsigned int)__builtin_ctzll(stop | 1ULL << 63) / 8;
		int32_t item, aux = 0;
		int16_t level = 0;
		int64_t val;

		/* the next record's start from the check's lengths: no chain through the decode */
		p += l;
		seq++;
		/*
		 * A recording's record: id and pid as before, no seq skip, no
		 * aux; ts of 4 bytes at most (its stop in the low 4), then item
		 * and val of a byte each (the length says so).  Decoded from the
		 * one load, with no branch on what it holds.
		 */
		if (__builtin_expect((h & ~H_KIND) == (H_ID_SAME | H_PID_SAME) && l == tsl + 4 &&
				     (stop & 0x80808080), 1)) {
			uint64_t iv = x >> (8 * tsl + 8);

			ts += (uint64_t)unzz(rec_pack(x, stop));
			item = rec_unzz8[(uint8_t)iv];
			val = rec_unzz8[(uint8_t)(iv >> 8)];
		} else {
			if (__builtin_expect(stop != 0, 1)) {
				ts += (uint64_t)unzz(rec_pack(x, stop));
				q += tsl + 1;
			} else {
				ts += (uint64_t)unzz(rec_varint_long(&q));
			}
			if (h & H_SEQ_SKIP)
				seq += (uint64_t)unzz(rec_varint(&q));
			if (!(h & H_ID_SAME))
				id = rec_varint(&q);
			item = (int32_t)unzz(rec_varint(&q));
			val = unzz(rec_varint(&q));
			if (!(h & H_PID_SAME))
				pid = (int32_t)unzz(rec_varint(&q));
			if (h & H_EXTRA) {
				aux = (int32_t)unzz(rec_varint(&q));
				level = (int16_t)unzz(rec_varint(&q));
				flags = *q;
			}
		}
		ev->ts = ts;
		ev->seq = seq;
		ev->id = id;
		ev->val = val;
		ev->cpu = recs->cpu;
		ev->item = item;
		ev->aux = aux;
		ev->pid = pid;
		ev->level = level;
		ev->kind = h & H_KIND;
		ev->flags = flags;
	}
	recs->p = p;
	recs->ts = ts;
	recs->seq = seq;
	recs->id = id;
	recs->pid = pid;
	recs->next += n;
}
