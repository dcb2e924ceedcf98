// SPDX-License-Identifier: GPL-2.0
/*
 * store_frame.c - the zstd framing of a chunk: compressing it at the seal
 * (zstd level 1: the capture readers compress while the ring buffer fills,
 * so speed matters more than the last byte; a version 2 chunk's matches
 * found here) and decompressing it, for both formats.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#define ZSTD_STATIC_LINKING_ONLY	/* ZSTD_compressSequences(), zstd 1.5 */
#include <zstd.h>

#include "error.h"
#include "store.h"
#include "store_local.h"

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

/* c->raw into c->z: the columns' frames for version 2, one frame of it all for version 1 */
int db_chunk_compress(struct db_chunk *c)
{
	size_t bound, n;

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

void db_chunk_dctx_free(void *dctx)
{
	ZSTD_freeDCtx(dctx);
}

/*
 * Decompress @ix's BLOB into @raw: exactly raw_bytes, or -MCR_E_CORRUPT.
 * Through the caller's context: ZSTD_decompress() would make and free one
 * of ~100 KiB per chunk (mmap, page faults and munmap each time).
 */
ssize_t db_chunk_decompress(void **dctx, const struct db_chunk_index *ix, const void *z,
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
