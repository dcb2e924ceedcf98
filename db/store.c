// SPDX-License-Identifier: GPL-2.0
/*
 * store.c - encoding, compressing and decoding one chunk of the event store
 * (the format is in store.h).  zstd level 1: the capture readers compress
 * while the ring buffer fills, so speed matters more than the last byte.
 */
#include <endian.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#define ZSTD_STATIC_LINKING_ONLY	/* ZSTD_compressSequences(), zstd 1.5 */
#include <zstd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "error.h"
#include "store.h"

#define DB_CHUNK_ZLEVEL		1
/*
 * Version 2: matches of 16 bytes at least, found here and coded by
 * ZSTD_compressSequences().  zstd decodes a sequence in ~130 instructions
 * and a Huffman-coded literal in ~7, so a match shorter than ~18 bytes
 * costs the reader more than its literals; zstd's own finder stops at
 * ZSTD_c_minMatch 7 and found a sequence every 5-8 bytes of the kind and
 * value columns.  db_rate --read under callgrind, zstd's instructions an
 * event: 115 to 89 on the 20 M fleet trace of 8 CPUs, 118 to 91 on 32
 * (all of reading: 299 to 273, 335 to 308), 77 to 66 on db_rate's worst
 * case, with 0.4, 0.1 and 1.0 % fewer bytes; a recording (synth pagecache,
 * 1.7 bytes an event) within 0.1 % in both.  Sealing costs no more.
 */
#define DB_CHUNK_V2_MATCH	16
/*
 * The header's runs of a byte (the bases' zero high bytes) are matched as
 * zstd did: Huffman-coding its 91 bytes instead costs the reader a table.
 */
#define DB_CHUNK_V2_HDR_RUN	4
/*
 * A column whose literals Huffman would shrink by less than a third is
 * stored raw: decoding a Huffman-coded byte costs the reader ~0.5 ns, where
 * a raw one costs what memcpy does.  In synth's 32-CPU fleet trace, whose
 * pids and cgroup ids are near random (Huffman saves 28 % of them), zstd
 * took a third of reading it; raw, the trace reads 11-25 % faster in 18 %
 * more bytes.  A capture's columns save far more (63-99 %) and keep their
 * tables.  Sampled every 31st byte; a column under 4 KiB is not judged, it
 * takes the choice of the column before it (no frame of its own).
 */
#define DB_CHUNK_V2_RAW_GAIN	3
#define DB_CHUNK_V2_SAMPLE	31
#define DB_CHUNK_V2_RAW_MIN	4096
/* A column is looked up every value, every 2nd after 256 values without a match, ... */
#define DB_CHUNK_V2_SKIP	8
/*
 * The finder's table: 16 KiB, which stays in the L1 while a capture reader
 * seals beside the traced workload (64 KiB cost it about 5 % more CPU in
 * bench/capture.sh); 4 and 16 times as many entries found no more (synth's
 * 2 M fleet trace: 12 446 367 bytes, 12 446 407 with 64 KiB)
 */
#define MTAB_BITS		12

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

/*
 * Room for @need items of @size bytes in *@buf, whose contents need not be
 * kept: half as much again as before at least, so that a chunk a little
 * larger than the last does not cost a copy and fresh pages every time.
 */
static int buf_reserve(void **buf, size_t *cap, size_t need, size_t size)
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
}

void db_chunk_take(struct db_chunk *c, struct db_chunk *out)
{
	void *z = out->z;
	size_t zcap = out->zcap;

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
	memset(c, 0, sizeof(*c));
}

static int db_chunk_add_v2(struct db_chunk *c, const struct mcr_event *ev);

int db_chunk_add(struct db_chunk *c, const struct mcr_event *ev)
{
	uint8_t *p, *h;
	bool extra;

	if (!ev->kind || ev->kind > MCR_EV_KIND_MAX)
		return -EINVAL;
	if (c->version == DB_STORE_V2)
		return db_chunk_add_v2(c, ev);
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

static inline unsigned int col_width(uint64_t spread)
{
	return !spread ? 0 : spread <= UINT8_MAX ? 1 : spread <= UINT16_MAX ? 2 :
	       spread <= UINT32_MAX ? 4 : 8;
}

/* The greatest number a column of width @w stores. */
static inline uint64_t col_lim(unsigned int w)
{
	return w >= 8 ? UINT64_MAX : ((uint64_t)1 << (8 * w)) - 1;
}

static inline void col_store(uint8_t *p, uint64_t v, unsigned int w)
{
	uint64_t v8 = htole64(v);
	uint32_t v4 = htole32((uint32_t)v);
	uint16_t v2 = htole16((uint16_t)v);

	switch (w) {
	case 1:
		*p = (uint8_t)v;
		break;
	case 2:
		memcpy(p, &v2, 2);
		break;
	case 4:
		memcpy(p, &v4, 4);
		break;
	default:
		memcpy(p, &v8, 8);
		break;
	}
}

static inline uint64_t load_le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return le64toh(v);
}

/* Load a little-endian column entry of @w bytes: what x86 and arm64 do with a plain load. */
static inline uint64_t col_load(const uint8_t *p, unsigned int w)
{
	uint32_t v4;
	uint16_t v2;

	switch (w) {
	case 1:
		return *p;
	case 2:
		memcpy(&v2, p, 2);
		return le16toh(v2);
	case 4:
		memcpy(&v4, p, 4);
		return le32toh(v4);
	case 8:
		return load_le64(p);
	default:
		return 0;
	}
}

/* Column @k of an open chunk: DB_CHUNK_V2_EVENTS values of 8 bytes at most, and 8 to spare */
#define DB_CHUNK_V2_COL		(DB_CHUNK_V2_EVENTS * 8 + 8)
/* Values a field column is scanned and narrowed by at a time (col_span_*(), col_narrow_*()) */
#define COL_BLOCK		64
/* What a field column's last block may write past the chunk's columns: a block of 4 bytes a value */
#define DB_CHUNK_V2_PAD		(COL_BLOCK * 4)
/* Passes over a column before db_chunk_widen() leaves it room to fall */
#define DB_CHUNK_V2_REBASES	16

static inline uint8_t *col_of(const struct db_chunk *c, int k)
{
	return c->cols + (size_t)k * DB_CHUNK_V2_COL;
}

/*
 * The @n values of column @k, now @w bytes each above @base, rewritten as
 * @nw bytes each above @nbase, in place: back to front when widening, front
 * to back when narrowing.  Every value is in [nbase, nbase + col_lim(nw)].
 */
static void col_rewrite(uint8_t *col, uint32_t n, unsigned int w, int64_t base,
			unsigned int nw, int64_t nbase)
{
	uint64_t shift = (uint64_t)base - (uint64_t)nbase;
	uint32_t i;

	if (nw > w)
		for (i = n; i-- > 0;)
			col_store(col + (size_t)nw * i, col_load(col + (size_t)w * i, w) + shift, nw);
	else
		for (i = 0; i < n; i++)
			col_store(col + (size_t)nw * i, col_load(col + (size_t)w * i, w) + shift, nw);
}

/* The least and greatest of column @k's values as int64: every stored number above its base. */
static void col_range(const struct db_chunk *c, int k, int64_t *lo, int64_t *hi)
{
	const uint8_t *col = col_of(c, k);
	unsigned int w = c->col_w[k];
	uint64_t umin = UINT64_MAX, umax = 0, u;
	uint32_t i, n = c->count;

	/* n > 0: a chunk with events (width 0 loads 0) */
	for (i = 0; i < n; i++) {
		u = col_load(col + (size_t)w * i, w);
		umin = u < umin ? u : umin;
		umax = u > umax ? u : umax;
	}
	*lo = (int64_t)((uint64_t)c->col_base[k] + umin);
	*hi = (int64_t)((uint64_t)c->col_base[k] + umax);
}

/*
 * Value @v does not fit column @k: widen it, or move its base, so that it
 * holds its values and @v.  The base stays the least value and the width
 * the least that holds the values, so db_chunk_columns() has nothing left
 * to do; each new least value costs a pass over the column, which random
 * values make once a chunk on average (the ith value is the least so far
 * with probability 1/i).  A column whose values fall steadily would be
 * rewritten at every event: after DB_CHUNK_V2_REBASES passes its base is
 * set as far below its values as they spread, and the seal narrows it.
 * The column keeps its values in int64 order: base + col_lim(w) never
 * passes INT64_MAX, and a column of 8 bytes has base INT64_MIN.
 */
static void db_chunk_widen(struct db_chunk *c, int k, int64_t v)
{
	unsigned int w = c->col_w[k], nw;
	int64_t lo = v, hi = v, nbase;
	uint64_t spread, lim, slack = 0;

	if (c->count) {
		col_range(c, k, &lo, &hi);
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
	}
	spread = (uint64_t)hi - (uint64_t)lo;
	if (!(c->col_loose & 1u << k) && ++c->col_passes[k] > DB_CHUNK_V2_REBASES)
		c->col_loose |= 1u << k;
	if (c->col_loose & 1u << k)
		slack = spread;
	nw = col_width(spread > UINT64_MAX - slack ? UINT64_MAX : spread + slack);
	if (nw == 8) {
		nbase = INT64_MIN;
	} else {
		lim = col_lim(nw);
		slack = (lim - spread) / 2;
		if (!(c->col_loose & 1u << k))
			nbase = lo;
		else if ((uint64_t)lo - (uint64_t)INT64_MIN < slack)
			nbase = INT64_MIN;
		else
			nbase = (int64_t)((uint64_t)lo - slack);
		if ((uint64_t)INT64_MAX - (uint64_t)nbase < lim)
			nbase = (int64_t)((uint64_t)INT64_MAX - lim);
	}
	if (nbase != lo || nw != col_width(spread))
		c->col_loose |= 1u << k;
	col_rewrite(col_of(c, k), c->count, w, c->col_base[k], nw, nbase);
	c->col_w[k] = (uint8_t)nw;
	c->col_base[k] = nbase;
	c->col_lim[k] = col_lim(nw);
}

/*
 * The columns whose values change from event to event in ways no type
 * bounds (ts and seq as deltas, id, val): one expansion of @X per column
 * (ev the event, prev the one before), built by db_chunk_add_v2() at the
 * width their values so far need.
 */
#define DB_WIDE_COLUMNS(X) \
	X(DB_COL_TS, ev->ts - prev->ts) \
	X(DB_COL_SEQ, ev->seq - prev->seq - 1) \
	X(DB_COL_ID, ev->id) \
	X(DB_COL_VAL, ev->val)

/*
 * The columns of fields of 4 bytes or fewer: one expansion of @Y per column
 * (its field and the field's type), kept as the field is until the seal
 * narrows them (col_span_*(), col_narrow_*()): a store an event, no check.
 */
#define DB_FIELD_COLUMNS(Y) \
	Y(DB_COL_KIND, kind, uint8_t) \
	Y(DB_COL_ITEM, item, int32_t) \
	Y(DB_COL_PID, pid, int32_t) \
	Y(DB_COL_AUX, aux, int32_t) \
	Y(DB_COL_LEVEL, level, int16_t) \
	Y(DB_COL_FLAGS, flags, uint8_t)

/*
 * Field column @col of @n values of type T (n > 0): its least value and the
 * least width that holds the spread, what db_chunk_columns() writes.  The
 * field columns are scanned and narrowed in blocks of COL_BLOCK values,
 * which the compiler turns into vector code with no tail loop (at -O2 it
 * vectorizes only such loops): a column is padded to a whole block with
 * its first value, and each narrowed column is written in whole blocks,
 * the next column's bytes (or DB_CHUNK_V2_PAD bytes of spare room) taking
 * what runs past its end.
 */
#define COL_SPAN(T) \
static void col_span_##T(uint8_t *col, uint32_t n, int64_t *lo, unsigned int *w) \
{ \
	T lo_v[COL_BLOCK], hi_v[COL_BLOCK], x; \
	uint32_t i, b, j; \
 \
	memcpy(&x, col, sizeof(T)); \
	for (i = n; i % COL_BLOCK; i++) \
		memcpy(col + sizeof(T) * i, &x, sizeof(T)); \
	for (j = 0; j < COL_BLOCK; j++) \
		lo_v[j] = hi_v[j] = x; \
	for (b = 0; b < i; b += COL_BLOCK) \
		for (j = 0; j < COL_BLOCK; j++) { \
			memcpy(&x, col + sizeof(T) * (b + j), sizeof(T)); \
			lo_v[j] = x < lo_v[j] ? x : lo_v[j]; \
			hi_v[j] = x > hi_v[j] ? x : hi_v[j]; \
		} \
	for (j = 1; j < COL_BLOCK; j++) { \
		lo_v[0] = lo_v[j] < lo_v[0] ? lo_v[j] : lo_v[0]; \
		hi_v[0] = hi_v[j] > hi_v[0] ? hi_v[j] : hi_v[0]; \
	} \
	*lo = lo_v[0]; \
	*w = col_width((uint64_t)((int64_t)hi_v[0] - (int64_t)lo_v[0])); \
}

/*
 * Field column @col of @n values of type T, written at @dst as @W bytes
 * each above @lo: a block at a time into @tmp, then copied.
 */
#define COL_NARROW_W(T, U, W) \
	for (b = 0; b < n; b += COL_BLOCK) { \
		U tmp_[COL_BLOCK]; \
 \
		for (j = 0; j < COL_BLOCK; j++) { \
			T x_; \
 \
			memcpy(&x_, col + sizeof(T) * (b + j), sizeof(T)); \
			tmp_[j] = (U)((uint32_t)(int32_t)x_ - (uint32_t)lo); \
			tmp_[j] = (W) == 1 ? tmp_[j] : (W) == 2 ? (U)htole16(tmp_[j]) : \
				  (U)htole32(tmp_[j]); \
		} \
		memcpy(dst + (size_t)(W) * b, tmp_, sizeof(tmp_)); \
	}

#define COL_NARROW(T) \
static void col_narrow_##T(uint8_t *restrict dst, const uint8_t *restrict col, uint32_t n, \
			   int64_t lo, unsigned int w) \
{ \
	uint32_t b, j; \
 \
	switch (w) { \
	case 0: break; \
	case 1: COL_NARROW_W(T, uint8_t, 1) break; \
	case 2: COL_NARROW_W(T, uint16_t, 2) break; \
	default: COL_NARROW_W(T, uint32_t, 4) break; \
	} \
}

COL_SPAN(uint8_t)
COL_SPAN(int16_t)
COL_SPAN(int32_t)
COL_NARROW(uint8_t)
COL_NARROW(int16_t)
COL_NARROW(int32_t)

/*
 * Version 2: each field goes straight into its column.  A wide column
 * (DB_WIDE_COLUMNS) holds its value at the width and above the base the
 * chunk's values so far need (db_chunk_widen()), stored as 8 bytes whose
 * bytes past the width are zero (the next value overwrites them): no
 * branch on the width.  A field column (DB_FIELD_COLUMNS) holds the field
 * as it is, narrowed at the seal.  Keeping the events (56 bytes each) and
 * transposing them at the seal read a chunk's 900 KiB back from memory, as
 * a live capture shares the caches with the traced workload: encoding and
 * sealing took 32 ns an event of a recording, 21 now (db_rate --encode).
 */
static int db_chunk_add_v2(struct db_chunk *c, const struct mcr_event *ev)
{
	struct mcr_event before;
	const struct mcr_event *prev = &before;
	uint64_t u[DB_COLS];
	unsigned int w[DB_COLS];
	uint32_t n = c->count;
	uint8_t *cols;
	bool fits = true;
	int k;

	if (!c->cols) {
		c->cols = malloc((size_t)DB_COLS * DB_CHUNK_V2_COL);
		if (!c->cols)
			return -ENOMEM;
	}
	if (n >= DB_CHUNK_V2_EVENTS)
		return -ENOSPC;
	if (!n) {
		c->first_ts = c->last_ts = ev->ts;
		c->first_seq = ev->seq;
		c->prev_seq = ev->seq - 1;
		c->col_loose = 0;
		before.ts = ev->ts;
		before.seq = ev->seq - 1;
		/* every wide column of width 0, its base the first event's value */
#define X(k, VALUE) c->col_base[k] = (int64_t)(VALUE);
		DB_WIDE_COLUMNS(X)
#undef X
		for (k = 0; k < DB_COLS; k++) {
			c->col_w[k] = 0;
			c->col_lim[k] = 0;
			c->col_passes[k] = 0;
		}
	}
	before.ts = c->last_ts;
	before.seq = c->prev_seq;
#define X(k, VALUE) \
	u[k] = (uint64_t)(int64_t)(VALUE) - (uint64_t)c->col_base[k]; \
	fits &= u[k] <= c->col_lim[k];
	DB_WIDE_COLUMNS(X)
#undef X
	if (__builtin_expect(!fits, 0)) {
#define X(k, VALUE) \
		if (u[k] > c->col_lim[k]) { \
			db_chunk_widen(c, k, (int64_t)(VALUE)); \
			u[k] = (uint64_t)(int64_t)(VALUE) - (uint64_t)c->col_base[k]; \
		}
		DB_WIDE_COLUMNS(X)
#undef X
	}
	/* the widths first: a store through cols could be to them as far as the compiler knows */
#define X(k, VALUE) w[k] = c->col_w[k];
	DB_WIDE_COLUMNS(X)
#undef X
	cols = c->cols;
#define X(k, VALUE) { \
		uint64_t le_ = htole64(u[k]); \
		memcpy(cols + (size_t)(k) * DB_CHUNK_V2_COL + (size_t)w[k] * n, &le_, 8); \
	}
	DB_WIDE_COLUMNS(X)
#undef X
#define Y(k, F, T) { \
		T f_ = ev->F; \
		memcpy(cols + (size_t)(k) * DB_CHUNK_V2_COL + sizeof(T) * n, &f_, sizeof(T)); \
	}
	DB_FIELD_COLUMNS(Y)
#undef Y
	c->last_ts = ev->ts;
	c->prev_seq = ev->seq;
	c->kinds |= 1u << ev->kind;
	c->kind_count[ev->kind]++;
	c->count = n + 1;
	return 0;
}

/*
 * Write the chunk's columns into c->raw (format in store.h), each narrowed
 * first to its least width above its least value, as if the values had
 * been known before the first: the bytes do not depend on the order the
 * columns grew in.
 */
static int db_chunk_columns(struct db_chunk *c)
{
	uint32_t n = c->count;
	size_t len = DB_CHUNK_V2_HDR;
	void *raw;
	int64_t lo, hi;
	unsigned int w;
	uint8_t *p;
	int k;

#define Y(k, F, T) { \
		col_span_##T(col_of(c, k), n, &lo, &w); \
		c->col_w[k] = (uint8_t)w; \
		c->col_base[k] = lo; \
	}
	DB_FIELD_COLUMNS(Y)
#undef Y
	/* the wide columns db_chunk_widen() left room in; the others are as narrow as can be */
	for (k = 0; k < DB_COLS; k++) {
		if (c->col_loose & 1u << k) {
			col_range(c, k, &lo, &hi);
			w = col_width((uint64_t)hi - (uint64_t)lo);
			col_rewrite(col_of(c, k), n, c->col_w[k], c->col_base[k], w, lo);
			c->col_w[k] = (uint8_t)w;
			c->col_base[k] = lo;
		}
		len += (size_t)c->col_w[k] * n;
	}
	raw = c->raw;
	if (buf_reserve(&raw, &c->cap, len + DB_CHUNK_V2_PAD, 1))
		return -ENOMEM;
	p = c->raw = raw;
	*p++ = DB_STORE_V2_MAGIC;
	for (k = 0; k < DB_COLS; k++)
		*p++ = c->col_w[k];
	for (k = 0; k < DB_COLS; k++) {
		col_store(p, (uint64_t)c->col_base[k], 8);
		p += 8;
	}
	/* in column order: a field column's last block runs into the next column */
	for (k = 0; k < DB_COLS; k++) {
		switch (k) {
#define Y(k, F, T) case k: col_narrow_##T(p, col_of(c, k), n, c->col_base[k], c->col_w[k]); break;
		DB_FIELD_COLUMNS(Y)
#undef Y
		default:
			memcpy(p, col_of(c, k), (size_t)c->col_w[k] * n);
			break;
		}
		p += (size_t)c->col_w[k] * n;
	}
	c->len = len;
	return 0;
}

static inline uint32_t mtab_hash(const uint8_t *p)
{
	uint64_t x;

	memcpy(&x, p, 8);
	return (uint32_t)((x * 0x9e3779b185ebca87ULL) >> (64 - MTAB_BITS));
}

/* The first position from @x on of a whole value of a column at @at, @w bytes each (a power of 2). */
static inline size_t align_up(size_t x, size_t at, size_t w)
{
	return x + ((at - x) & (w - 1));
}

/* How many bytes of @a[@max] and @b[@max] are the same from the start. */
static inline size_t same_len(const uint8_t *a, const uint8_t *b, size_t max)
{
	uint64_t x, y;
	size_t n = 0;

	for (; max - n >= 8; n += 8) {
		x = load_le64(a + n);
		y = load_le64(b + n);
		if (x != y)
			return n + (size_t)__builtin_ctzll(x ^ y) / 8;
	}
	while (n < max && a[n] == b[n])
		n++;
	return n;
}

/*
 * Greedy matches of DB_CHUNK_V2_MATCH bytes at least in the column
 * raw[at, end) of @w bytes a value (a power of 2), each against the last earlier position
 * of its first 8 bytes' hash at or after @lo (the start of its zstd frame: the earlier
 * columns too), into @s ending with
 * the block's delimiter.  Returns the number of sequences.  Only the
 * positions of whole values are looked up (a match longer than a value
 * holds one, and extends back to where it starts), and ever fewer while
 * none matches (as zstd's fast finder does): a column of random values
 * costs little.
 */
static size_t db_chunk_matches(uint32_t *tab, const uint8_t *raw, size_t lo, size_t at,
			       size_t end, size_t w, ZSTD_Sequence *s)
{
	size_t i = at, anchor = at, n = 0, ml, j, head;
	/* no division in the loop: widths are powers of 2 */
	unsigned int wlog = (unsigned int)__builtin_ctzll(w);
	uint32_t cand;

	while (i + DB_CHUNK_V2_MATCH <= end) {
		uint32_t *slot = &tab[mtab_hash(raw + i)];

		cand = *slot;
		*slot = (uint32_t)i;
		if (cand == UINT32_MAX || cand < lo || memcmp(raw + cand, raw + i, DB_CHUNK_V2_MATCH)) {
			i += w * (1 + ((i - anchor) >> (wlog + DB_CHUNK_V2_SKIP)));
			continue;
		}
		ml = DB_CHUNK_V2_MATCH;
		ml += same_len(raw + cand + ml, raw + i + ml, end - i - ml);
		while (i > anchor && cand > lo && raw[cand - 1] == raw[i - 1]) {
			i--;
			cand--;
			ml++;
		}
		s[n++] = (ZSTD_Sequence){ .offset = (unsigned int)(i - cand),
					  .litLength = (unsigned int)(i - anchor),
					  .matchLength = (unsigned int)ml };
		/* the values' positions in its first and last 16 bytes: as many found as with all */
		head = i + (ml < DB_CHUNK_V2_MATCH ? ml : DB_CHUNK_V2_MATCH);
		for (j = align_up(i + 1, at, w); j < head && j + DB_CHUNK_V2_MATCH <= end; j += w)
			tab[mtab_hash(raw + j)] = (uint32_t)j;
		j = align_up(ml > 2 * DB_CHUNK_V2_MATCH ? i + ml - DB_CHUNK_V2_MATCH : head, at, w);
		for (; j < i + ml && j + DB_CHUNK_V2_MATCH <= end; j += w)
			tab[mtab_hash(raw + j)] = (uint32_t)j;
		i += ml;
		anchor = i;
		i = align_up(i, at, w);
	}
	s[n++] = (ZSTD_Sequence){ .litLength = (unsigned int)(end - anchor) };
	return n;
}

/* The header's block: its runs of DB_CHUNK_V2_HDR_RUN bytes or more, as offset 1 matches. */
static size_t db_chunk_header_runs(const uint8_t *raw, ZSTD_Sequence *s)
{
	size_t i = 1, anchor = 0, n = 0, r;

	while (i < DB_CHUNK_V2_HDR) {
		for (r = 0; i + r < DB_CHUNK_V2_HDR && raw[i + r] == raw[i - 1]; r++)
			;
		if (r < DB_CHUNK_V2_HDR_RUN) {
			i++;
			continue;
		}
		s[n++] = (ZSTD_Sequence){ .offset = 1, .litLength = (unsigned int)(i - anchor),
					  .matchLength = (unsigned int)r };
		i += r;
		anchor = i;
	}
	s[n++] = (ZSTD_Sequence){ .litLength = (unsigned int)(DB_CHUNK_V2_HDR - anchor) };
	return n;
}

/*
 * log2(@x), @x > 0, within 0.009: its exponent, and its fraction f by
 * f (1.3466 - 0.3466 f).  libm's log2() for each count of each column
 * cost a capture reader 1.5 ns an event.
 */
static inline double col_log2(uint32_t x)
{
	int e = 31 - __builtin_clz(x);
	double f = (double)((x << (31 - e)) & 0x7fffffffu) * (1.0 / 2147483648.0);

	return e + f * (1.3466 - 0.3466 * f);
}

/*
 * Whether Huffman would shrink the @len bytes at @p (DB_CHUNK_V2_RAW_MIN
 * at least) by less than 1/DB_CHUNK_V2_RAW_GAIN: their order-0 entropy,
 * estimated on every DB_CHUNK_V2_SAMPLE-th byte (prime to every width, so
 * every byte of a value is sampled alike).
 */
static bool col_literals_poor(const uint8_t *p, size_t len)
{
	uint32_t hist[256] = { 0 };
	double bits;
	size_t i, k = 0;

	for (i = 0; i < len; i += DB_CHUNK_V2_SAMPLE, k++)
		hist[p[i]]++;
	/*
	 * The sum of c log2(k / c) over the counts c, plus Miller and Madow's
	 * (m - 1) / (2 ln 2) for m values seen: a sample's entropy falls short
	 * of its column's by about that much (20 % of 8 bits for 264 random
	 * bytes, the least sampled).
	 */
	bits = (double)k * col_log2((uint32_t)k) - 0.5 / M_LN2;
	for (i = 0; i < 256; i++)
		if (hist[i])
			bits += 0.5 / M_LN2 - hist[i] * col_log2(hist[i]);
	return bits / 8 > k * (1 - 1.0 / DB_CHUNK_V2_RAW_GAIN);
}

/*
 * zstd frames back to back, which the reader decompresses as one: a block
 * for the header and one for each column, with the matches of
 * db_chunk_matches() alone.  Each column's literals get a Huffman table of
 * their own, except a column's whose bytes are near random (a fleet's
 * pids): stored as they are, they decompress at memcpy's speed.  zstd sets
 * literal coding per frame, so a new frame starts where a column's choice
 * differs from the one before (none does in a recording of this kernel); a
 * match stays within its frame.
 */
static int db_chunk_seal_columns(struct db_chunk *c)
{
	size_t at = DB_CHUNK_V2_HDR, end, seg, n, cap, z, from, zlen = 0;
	size_t col_at[DB_COLS + 1];
	bool raw_lit[DB_COLS];
	ZSTD_Sequence *s;
	int k, j, wlog;

	for (k = 0; k < DB_COLS; k++) {
		size_t len = (size_t)c->raw[1 + k] * c->count;

		col_at[k] = at;
		/* an empty or short column goes with the one before: no frame of its own */
		raw_lit[k] = len >= DB_CHUNK_V2_RAW_MIN ? col_literals_poor(c->raw + at, len) :
			     k && raw_lit[k - 1];
		at += len;
	}
	col_at[DB_COLS] = at;
	/* a match takes 16 bytes, a header run 4; a delimiter per block */
	cap = DB_CHUNK_V2_HDR / DB_CHUNK_V2_HDR_RUN + c->len / DB_CHUNK_V2_MATCH +
	      c->len / ZSTD_BLOCKSIZE_MAX + DB_COLS + 3;
	if (buf_reserve(&c->seqs, &c->seqs_cap, cap, sizeof(*s)))
		return -ENOMEM;
	if (!c->mtab) {
		c->mtab = malloc(sizeof(*c->mtab) << MTAB_BITS);
		if (!c->mtab)
			return -ENOMEM;
	}
	memset(c->mtab, 0xff, sizeof(*c->mtab) << MTAB_BITS);
	for (k = 0; k < DB_COLS; k = j) {
		from = k ? col_at[k] : 0;
		s = c->seqs;
		n = k ? 0 : db_chunk_header_runs(c->raw, s);
		for (j = k; j < DB_COLS && raw_lit[j] == raw_lit[k]; j++) {
			for (at = col_at[j], end = col_at[j + 1]; at < end; at += seg) {
				seg = end - at < ZSTD_BLOCKSIZE_MAX ? end - at : ZSTD_BLOCKSIZE_MAX;
				n += db_chunk_matches(c->mtab, c->raw, from, at, at + seg,
						      c->raw[1 + j], s + n);
			}
		}
		end = col_at[j];
		/*
		 * The whole frame in the window, so every offset is valid; zstd
		 * checks the sequences all the same (an error here, not a
		 * corrupt chunk).
		 */
		for (wlog = ZSTD_WINDOWLOG_MIN; wlog < ZSTD_WINDOWLOG_MAX &&
		     ((size_t)1 << wlog) < end - from; wlog++)
			;
		ZSTD_CCtx_reset(c->cctx, ZSTD_reset_session_and_parameters);
		if (ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_compressionLevel,
							DB_CHUNK_ZLEVEL)) ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_windowLog, wlog)) ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_blockDelimiters,
							ZSTD_sf_explicitBlockDelimiters)) ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_validateSequences, 1)) ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_literalCompressionMode,
							raw_lit[k] ? ZSTD_ps_disable : ZSTD_ps_auto)))
			return -EIO;
		z = ZSTD_compressSequences(c->cctx, (uint8_t *)c->z + zlen, c->zcap - zlen, s, n,
					   c->raw + from, end - from);
		if (ZSTD_isError(z))
			return -EIO;
		zlen += z;
	}
	c->zlen = zlen;
	return 0;
}

int db_chunk_seal(struct db_chunk *c)
{
	size_t bound, n;
	int err;

	if (c->version == DB_STORE_V2 && c->count) {
		err = db_chunk_columns(c);
		if (err)
			return err;
	}
	/*
	 * version 2: a block header for the chunk's header and for each column,
	 * and up to a frame for each (its header, and what the bound of a small
	 * input adds)
	 */
	bound = ZSTD_compressBound(c->len) + 3 * (DB_COLS + 1 + c->len / ZSTD_BLOCKSIZE_MAX) +
		DB_COLS * (ZSTD_FRAMEHEADERSIZE_MAX + ZSTD_compressBound(0));

	if (!c->cctx) {
		c->cctx = ZSTD_createCCtx();
		if (!c->cctx)
			return -ENOMEM;
	}
	if (buf_reserve(&c->z, &c->zcap, bound, 1))
		return -ENOMEM;
	if (c->version == DB_STORE_V2 && c->count)
		return db_chunk_seal_columns(c);
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

/*
 * Decompress @ix's BLOB into @raw: exactly raw_bytes, or -MCR_E_CORRUPT.
 * Through the caller's context: ZSTD_decompress() would make and free one
 * of ~100 KiB per chunk (mmap, page faults and munmap each time).
 */
static ssize_t db_chunk_decompress(void **dctx, const struct db_chunk_index *ix, const void *z,
				   size_t zlen, uint8_t *raw)
{
	size_t n;

	if (!*dctx) {
		*dctx = ZSTD_createDCtx();
		if (!*dctx)
			return -ENOMEM;
	}
	n = ZSTD_decompressDCtx(*dctx, raw, ix->raw_bytes, z, zlen);
	if (ZSTD_isError(n) || n != ix->raw_bytes)
		return -MCR_E_CORRUPT;
	return (ssize_t)n;
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

/*
 * The sum of a column's entries, modulo 2^64 as the reader adds them up.
 * Widths 1 and 2 by psadbw, a byte position at a time; 4 and 8 in 64-bit
 * lanes.  The ts check was half of a chunk's open before.
 */
static uint64_t col_sum(const uint8_t *c, unsigned int w, uint32_t n)
{
	uint64_t sum = 0;
	uint32_t i = 0;

	if (!w)
		return 0;
#ifdef __SSE2__
	{
		const __m128i zero = _mm_setzero_si128(), lo8 = _mm_set1_epi16(0xff);
		__m128i s0 = zero, s1 = zero;
		uint32_t step = 16 / w;
		uint64_t l[2], h[2];

		for (; i + step <= n; i += step) {
			__m128i x = _mm_loadu_si128((const __m128i *)(c + (size_t)w * i));

			switch (w) {
			case 1:
				s0 = _mm_add_epi64(s0, _mm_sad_epu8(x, zero));
				break;
			case 2:
				s0 = _mm_add_epi64(s0, _mm_sad_epu8(_mm_and_si128(x, lo8), zero));
				s1 = _mm_add_epi64(s1, _mm_sad_epu8(_mm_srli_epi16(x, 8), zero));
				break;
			case 4:
				s0 = _mm_add_epi64(s0, _mm_unpacklo_epi32(x, zero));
				s0 = _mm_add_epi64(s0, _mm_unpackhi_epi32(x, zero));
				break;
			default:
				s0 = _mm_add_epi64(s0, x);
				break;
			}
		}
		_mm_storeu_si128((__m128i *)l, s0);
		_mm_storeu_si128((__m128i *)h, s1);
		sum = l[0] + l[1] + ((h[0] + h[1]) << 8);
	}
#endif
	for (; i < n; i++)
		sum += col_load(c + (size_t)w * i, w);
	return sum;
}

int db_cols_open(void **dctx, const struct db_chunk_index *ix, const void *z, size_t zlen,
		 uint8_t *raw, struct db_cols *cols, uint32_t *good)
{
	const uint8_t *p = raw;
	uint64_t len = DB_CHUNK_V2_HDR, ts, base;
	uint32_t i, n = ix->count;
	unsigned int w;
	bool backwards = false;
	ssize_t got;
	int k;

	got = db_chunk_decompress(dctx, ix, z, zlen, raw);
	if (got < 0)
		return (int)got;
	if ((size_t)got < DB_CHUNK_V2_HDR || *p++ != DB_STORE_V2_MAGIC)
		return -MCR_E_CORRUPT;
	for (k = 0; k < DB_COLS; k++) {
		cols->width[k] = *p++;
		if (cols->width[k] > 8 || (cols->width[k] & (cols->width[k] - 1)))
			return -MCR_E_CORRUPT;
		len += (uint64_t)cols->width[k] * n;
	}
	if (len != (uint64_t)got)
		return -MCR_E_CORRUPT;
	for (k = 0; k < DB_COLS; k++) {
		cols->base[k] = col_load(p, 8);
		p += 8;
	}
	for (k = 0; k < DB_COLS; k++) {
		cols->col[k] = p;
		p += (size_t)cols->width[k] * n;
	}
	cols->cpu = ix->cpu;
	cols->count = n;
	cols->next = 0;
	cols->ts = ix->first_ts;
	cols->seq = ix->first_seq - 1;

	/*
	 * ts: the deltas add up to last_ts.  Entries of 4 bytes at most cannot
	 * wrap their sum (a chunk is under 2^32 bytes); when first_ts + base *
	 * count + sum does not pass 2^64 either, every ts is at least the one
	 * before it and a sum is all there is to check.  Otherwise (a gap of
	 * 4 s within a chunk, or a crafted one) every ts is compared with the
	 * one before it as the reader delivers them, unsigned.
	 */
	*good = n;
	w = cols->width[DB_COL_TS];
	base = cols->base[DB_COL_TS];
	if (w > 4 ||
	    __builtin_mul_overflow(base, (uint64_t)n, &ts) ||
	    __builtin_add_overflow(ts, col_sum(cols->col[DB_COL_TS], w, n), &ts) ||
	    __builtin_add_overflow(ts, ix->first_ts, &ts)) {
		uint64_t prev = ix->first_ts;

		ts = ix->first_ts;
		for (i = 0; i < n; i++) {
			ts += base + col_load(cols->col[DB_COL_TS] + (size_t)w * i, w);
			/* what the reader delivers: up to the first ts below its predecessor */
			if (ts < prev && !backwards) {
				*good = i;
				backwards = true;
			}
			prev = ts;
		}
	}
	if (ts != ix->last_ts)
		return -MCR_E_CORRUPT;
	return backwards ? -MCR_E_TIME : 0;
}

/*
 * Each column's loop unrolled by four: the loop's own count, compare and
 * branch were a third of the build's instructions (66 -> 41 an event).
 */
#define COL_UNROLL	_Pragma("GCC unroll 4")

/* One column into one field of every event built: no branch on the width inside. */
#define COL_FIELD(field, type, k) do { \
	const uint8_t *src = cols->col[k] + (size_t)cols->width[k] * first; \
	uint64_t b = cols->base[k]; \
	switch (cols->width[k]) { \
	case 0: COL_UNROLL for (i = 0; i < fill; i++) out[i].field = (type)b; break; \
	case 1: COL_UNROLL for (i = 0; i < n; i++) out[i].field = (type)(b + col_load(src + i, 1)); break; \
	case 2: COL_UNROLL for (i = 0; i < n; i++) out[i].field = (type)(b + col_load(src + 2 * i, 2)); break; \
	case 4: COL_UNROLL for (i = 0; i < n; i++) out[i].field = (type)(b + col_load(src + 4 * i, 4)); break; \
	default: COL_UNROLL for (i = 0; i < n; i++) out[i].field = (type)(b + col_load(src + 8 * i, 8)); break; \
	} \
} while (0)

/* ts and seq: running sums of their deltas. */
#define COL_SUM(field, k, run, one) do { \
	const uint8_t *src = cols->col[k] + (size_t)cols->width[k] * first; \
	uint64_t b = cols->base[k] + (one), r = (run); \
	switch (cols->width[k]) { \
	case 0: COL_UNROLL for (i = 0; i < n; i++) out[i].field = r += b; break; \
	case 1: COL_UNROLL for (i = 0; i < n; i++) out[i].field = r += b + col_load(src + i, 1); break; \
	case 2: COL_UNROLL for (i = 0; i < n; i++) out[i].field = r += b + col_load(src + 2 * i, 2); break; \
	case 4: COL_UNROLL for (i = 0; i < n; i++) out[i].field = r += b + col_load(src + 4 * i, 4); break; \
	default: COL_UNROLL for (i = 0; i < n; i++) out[i].field = r += b + col_load(src + 8 * i, 8); break; \
	} \
	(run) = r; \
} while (0)

void db_cols_build(struct db_cols *cols, uint32_t n, struct mcr_event *out, uint32_t fill)
{
	uint32_t first = cols->next, i;

	COL_SUM(ts, DB_COL_TS, cols->ts, 0);
	COL_SUM(seq, DB_COL_SEQ, cols->seq, 1);
	COL_FIELD(kind, uint8_t, DB_COL_KIND);
	COL_FIELD(id, uint64_t, DB_COL_ID);
	COL_FIELD(item, int32_t, DB_COL_ITEM);
	COL_FIELD(val, int64_t, DB_COL_VAL);
	COL_FIELD(pid, int32_t, DB_COL_PID);
	COL_FIELD(aux, int32_t, DB_COL_AUX);
	COL_FIELD(level, int16_t, DB_COL_LEVEL);
	COL_FIELD(flags, uint8_t, DB_COL_FLAGS);
	for (i = 0; i < fill; i++)
		out[i].cpu = cols->cpu;
	cols->next += n;
}
