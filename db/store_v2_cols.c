// SPDX-License-Identifier: GPL-2.0
/*
 * store_v2_cols.c - version 2 of the event store: a chunk of columns, built
 * an event at a time, narrowed at the seal, and read a column at a time
 * (format in store.h).
 */
#include <endian.h>
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
int db_chunk_add_v2(struct db_chunk *c, const struct mcr_event *ev)
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
int db_chunk_columns(struct db_chunk *c)
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
