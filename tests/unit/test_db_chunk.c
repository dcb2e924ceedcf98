// SPDX-License-Identifier: GPL-2.0
/*
 * test_db_chunk.c - the checks the chunk decoders make: version 2 columns
 * and version 1 records, well formed and damaged, against a reference
 * decoder; the varint length limit.
 */
#include "db_fixture.h"

/*
 * db_cols_open() on a version 2 chunk made by hand: ts deltas @dts of
 * width @tw over base @tb, kinds @kinds of width @kw over base @kb, every
 * other column of width 0.  Compressed as the writer does, so the checks
 * run on what a reader decompresses.
 */
static int cols_chunk(unsigned int tw, const uint64_t *dts, uint64_t tb,
		      unsigned int kw, const uint64_t *kinds, uint64_t kb, uint32_t n,
		      uint64_t first_ts, uint64_t last_ts, uint32_t *good)
{
	size_t len = DB_CHUNK_V2_HDR + (size_t)(tw + kw) * n, zcap = ZSTD_compressBound(len), zlen;
	uint8_t *raw = malloc(len), *back = malloc(len), *p = raw;
	struct db_chunk_index ix = {
		.first_ts = first_ts, .last_ts = last_ts, .first_seq = 1,
		.count = n, .raw_bytes = (uint32_t)len,
	};
	void *z = malloc(zcap), *dctx = NULL;
	struct db_cols cols;
	uint32_t i;
	int k, ret;

	if (!raw || !back || !z) {
		ret = -ENOMEM;
		goto out;
	}
	*p++ = DB_STORE_V2_MAGIC;
	for (k = 0; k < DB_COLS; k++)
		*p++ = (uint8_t)(k == DB_COL_TS ? tw : k == DB_COL_KIND ? kw : 0);
	for (k = 0; k < DB_COLS; k++, p += 8)
		cols_put(p, k == DB_COL_TS ? tb : k == DB_COL_KIND ? kb : k == DB_COL_ID ? 1 : 0, 8);
	for (i = 0; i < n; i++, p += tw)
		cols_put(p, dts[i], tw);
	for (i = 0; i < n; i++, p += kw)
		cols_put(p, kinds[i], kw);
	zlen = ZSTD_compress(z, zcap, raw, len, 1);
	ret = ZSTD_isError(zlen) ? -EIO : db_cols_open(&dctx, &ix, z, zlen, back, &cols, good);
out:
	db_chunk_dctx_free(dctx);
	free(z);
	free(back);
	free(raw);
	return ret;
}

/*
 * A chunk's checks (ts adding up to last_ts, ts never below the one before)
 * run 16 bytes at a time with scalar tails: every width at counts around
 * the vector's, a bad entry in the body and in the tail.
 */
TEST(test_cols_checks)
{
	static const uint32_t counts[] = { 1, 7, 16, 17, 33, 100, 1000 };
	static const unsigned int widths[] = { 1, 2, 4, 8 };
	static const int bad_kinds[] = { 0, MCR_EV_KIND_MAX + 1, 255 };
	uint64_t dts[1000], kinds[1000];
	uint32_t good, i, c, pos;
	unsigned int w, wi, b;

	srand(7);
	for (wi = 0; wi < 4; wi++)
		for (c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
			uint32_t n = counts[c];
			uint64_t tb = wi & 1 ? 3 : 0, sum = 0, mask;

			w = widths[wi];
			/* below 2^40 at width 8: a sum that does not wrap, on the exact path */
			mask = w == 8 ? (1ULL << 40) - 1 : (1ULL << (8 * w)) - 1;
			for (i = 0; i < n; i++) {
				dts[i] = cols_rng() & mask;
				sum += dts[i] + tb;
				kinds[i] = cols_rng() % MCR_EV_KIND_MAX;	/* kinds 1..MAX over base 1 */
			}
			ASSERT_EQ(cols_chunk(w, dts, tb, 1, kinds, 1, n, 1000, 1000 + sum, &good), 0);
			ASSERT_EQ(good, n);
			ASSERT_EQ(cols_chunk(w, dts, tb, 1, kinds, 1, n, 1000, 1000 + sum + 1, &good),
				  -MCR_E_CORRUPT);
			ASSERT_EQ(cols_chunk(w, dts, tb, 1, kinds, 1, n, 1000, 1000 + sum - 1, &good),
				  -MCR_E_CORRUPT);
		}

	/*
	 * The kind is not the decoder's to judge (db_event_check() refuses an
	 * unknown one as the reader hands the event out, naming it): any
	 * entry, at any width and place, in the body or the tail, passes.
	 */
	for (wi = 0; wi < 4; wi++)
		for (c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
			uint32_t n = counts[c], where[3] = { 0, n / 2, n - 1 };

			w = widths[wi];
			for (i = 0; i < n; i++) {
				dts[i] = 0;
				kinds[i] = (cols_rng() % MCR_EV_KIND_MAX) |
					   (w > 1 ? (cols_rng() << 8) & ((1ULL << (8 * w - 1)) - 1) : 0);
			}
			for (pos = 0; pos < 3; pos++)
				for (b = 0; b < 3; b++) {
					uint64_t keep = kinds[where[pos]];

					kinds[where[pos]] = (keep & ~0xffULL) | (uint8_t)(bad_kinds[b] - 1);
					ASSERT_EQ(cols_chunk(1, dts, 0, w, kinds, 1, n, 5, 5, &good), 0);
					kinds[where[pos]] = keep;
				}
		}
	ASSERT_EQ(cols_chunk(1, dts, 0, 0, kinds, MCR_EV_KIND_MAX + 1, 40, 5, 5, &good), 0);
	ASSERT_EQ(cols_chunk(1, dts, 0, 0, kinds, 0, 40, 5, 5, &good), 0);

	for (i = 0; i < 3; i++)
		kinds[i] = 1;
	/* width 8, a delta of -3 made up by the next: ts 1005, 1002, 1005; the second steps back */
	dts[0] = 5;
	dts[1] = (uint64_t)-3;
	dts[2] = 3;
	ASSERT_EQ(cols_chunk(8, dts, 0, 1, kinds, 1, 3, 1000, 1005, &good), -MCR_E_TIME);
	ASSERT_EQ(good, 1);
	/* a ts passing 2^64: 2^64 - 6, then 14, ending where the index says */
	dts[0] = 4;
	dts[1] = 20;
	ASSERT_EQ(cols_chunk(1, dts, 0, 1, kinds, 1, 2, (uint64_t)-10, 14, &good), -MCR_E_TIME);
	ASSERT_EQ(good, 1);
	/* deltas of 2^63 each over a base of 2^63 - 1: 1000 + 2^63, then 1000 again */
	dts[0] = 1;
	dts[1] = 1;
	ASSERT_EQ(cols_chunk(1, dts, (1ULL << 63) - 1, 1, kinds, 1, 2, 1000, 1000, &good),
		  -MCR_E_TIME);
	ASSERT_EQ(good, 1);
	/* the first event below the index's first_ts: nothing of the chunk is delivered */
	dts[0] = (uint64_t)-1;
	dts[1] = 2;
	ASSERT_EQ(cols_chunk(8, dts, 0, 1, kinds, 1, 2, 1000, 1001, &good), -MCR_E_TIME);
	ASSERT_EQ(good, 0);
}

/* A value of @bits random bits at most, all of them or fewer at random: varints of every length */
static uint64_t recs_val(unsigned int bits)
{
	unsigned int b = 1 + (unsigned int)(cols_rng() % bits);

	return b >= 64 ? cols_rng() : cols_rng() & ((1ULL << b) - 1);
}

/*
 * @n version 1 events of one CPU with every header bit and varints of every
 * length, ts deltas of 1 to 9 bytes, none below its predecessor's (unless
 * @back: some), encoded by db_chunk_add() into @ch.
 */
static int recs_events(struct db_chunk *ch, struct mcr_event *evs, uint32_t n, bool back)
{
	uint64_t ts = 1ULL << 40, seq = 77;
	uint32_t i;
	int err = 0;

	db_chunk_reset(ch);
	for (i = 0; i < n && !err; i++) {
		struct mcr_event *ev = &evs[i];
		unsigned int r = (unsigned int)(cols_rng() % 16);

		memset(ev, 0, sizeof(*ev));
		/* mostly a recording's: ts deltas of 2-3 bytes, item and val of one */
		ts += r < 10 ? 100 + cols_rng() % 20000 : recs_val(r < 15 ? 40 : 62);
		if (back && cols_rng() % 8 == 0)
			ts -= 1 + cols_rng() % 50;
		ev->ts = ts;
		seq += cols_rng() % 8 ? 1 : recs_val(64);
		ev->seq = seq;
		ev->cpu = 3;
		ev->kind = (uint8_t)(1 + cols_rng() % MCR_EV_KIND_MAX);
		ev->id = i && cols_rng() % 4 ? evs[i - 1].id : recs_val(64);
		ev->item = (int32_t)(r < 12 ? cols_rng() % 40 : recs_val(32));
		ev->val = (int64_t)(r < 12 ? cols_rng() % 64 - 32 : recs_val(64));
		ev->pid = i && cols_rng() % 4 ? evs[i - 1].pid : (int32_t)recs_val(32);
		if (cols_rng() % 6 == 0) {
			ev->aux = (int32_t)recs_val(32);
			ev->level = (int16_t)recs_val(16);
			ev->flags = (uint8_t)cols_rng();
		}
		err = db_chunk_add(ch, ev);
	}
	return err;
}

/*
 * db_recs_open() on the records @raw[@len] (zstd-compressed here) of index
 * row @ix, then db_recs_build() @batch events at a time into @out: its
 * return, *@good, and the events, as ref_decode() has them.  1 if the two
 * disagree.
 */
static int recs_open_build(const struct db_chunk_index *ix, const uint8_t *raw, size_t len,
			   uint32_t batch, struct mcr_event *out, uint32_t *good)
{
	static struct mcr_event want[300];
	size_t zcap = ZSTD_compressBound(len), zlen;
	uint8_t *back = malloc(db_recs_size(ix));
	void *z = malloc(zcap), *dctx = NULL;
	uint32_t ref_good, at, n, i;
	struct db_recs recs;
	int ret, ref;

	if (!back || !z || ix->count > 300) {
		ret = -ENOMEM;
		goto out;
	}
	/* what was there before: the decoder must not rely on it */
	memset(back, 0xff, db_recs_size(ix));
	zlen = ZSTD_compress(z, zcap, raw, len, 1);
	ret = ZSTD_isError(zlen) ? -EIO : db_recs_open(&dctx, ix, z, zlen, back, &recs, good);
	ref = ref_decode(ix, raw, len, want, &ref_good);
	if (ret != ref || (!ret && *good != ix->count) ||
	    ((!ret || ret == -MCR_E_TIME) && *good != ref_good)) {
		ret = 1;
		goto out;
	}
	if (ret && ret != -MCR_E_TIME)
		goto out;
	for (at = 0; at < *good; at += n) {
		n = *good - at < batch ? *good - at : batch;
		db_recs_build(&recs, n, out + at);
		for (i = at; i < at + n; i++)
			if (!ev_same(&out[i], &want[i])) {
				ret = 1;
				goto out;
			}
	}
out:
	db_chunk_dctx_free(dctx);
	free(z);
	free(back);
	return ret;
}

/*
 * Version 1 chunks checked whole by db_recs_open(), built a batch at a
 * time by db_recs_build(): every field back as written, records of every
 * length through the 8-byte, 16-byte and careful paths, the last few
 * against the end of the chunk.  Any damage (a byte changed, the records
 * cut or grown, count or last_ts off by one) is refused or read exactly
 * as the reference decoder reads it, never otherwise.
 */
TEST(test_recs_checks)
{
	static const uint32_t counts[] = { 1, 2, 3, 5, 17, 100, 300 };
	static const uint32_t batches[] = { 1, 7, 512 };
	static struct mcr_event evs[300], out[300];
	static uint8_t raw[300 * DB_CHUNK_REC_MAX + 8];
	struct db_chunk_index ix;
	struct db_chunk ch;
	uint32_t c, b, good, round;
	int ret, seen[3] = { 0 };

	srand(11);
	db_chunk_init(&ch, 3);
	ch.version = DB_STORE_V1;
	for (c = 0; c < sizeof(counts) / sizeof(counts[0]); c++)
		for (b = 0; b < 2 * sizeof(batches) / sizeof(batches[0]); b++) {
			uint32_t n = counts[c], i;

			ASSERT_EQ(recs_events(&ch, evs, n, b >= 3), 0);
			ix = (struct db_chunk_index){
				.cpu = 3, .first_ts = ch.first_ts, .last_ts = ch.last_ts,
				.first_seq = ch.first_seq, .count = n, .raw_bytes = (uint32_t)ch.len,
			};
			ret = recs_open_build(&ix, ch.raw, ch.len, batches[b % 3], out, &good);
			ASSERT_EQ(ret, good < n ? -MCR_E_TIME : 0);
			for (i = 0; i < good; i++)
				ASSERT(ev_same(&out[i], &evs[i]));
			if (b < 3)
				ASSERT_EQU(good, n);
		}

	for (round = 0; round < 4000; round++) {
		uint32_t n = 1 + (uint32_t)(cols_rng() % 60), what = round % 8, at;
		size_t len;

		ASSERT_EQ(recs_events(&ch, evs, n, round % 3 == 0), 0);
		len = ch.len;
		memcpy(raw, ch.raw, len);
		ix = (struct db_chunk_index){
			.cpu = 3, .first_ts = ch.first_ts, .last_ts = ch.last_ts,
			.first_seq = ch.first_seq, .count = n,
		};
		at = (uint32_t)(cols_rng() % len);
		switch (what) {
		case 0:		/* a byte changed */
		case 1:
			raw[at] = (uint8_t)cols_rng();
			break;
		case 2:		/* a continuation bit set or cleared */
			raw[at] ^= 0x80;
			break;
		case 3:		/* a header's kind */
			raw[at] = (uint8_t)((raw[at] & 0xf0) | cols_rng() % 16);
			break;
		case 4:		/* cut */
			len -= 1 + cols_rng() % (len < 4 ? len : 4);
			break;
		case 5:		/* grown by continuation bytes, or a byte */
			raw[len++] = (uint8_t)(cols_rng() % 3 ? 0x80 | cols_rng() : cols_rng());
			break;
		case 6:
			ix.count += cols_rng() % 2 ? 1 : -1;
			break;
		default:
			ix.last_ts += cols_rng() % 2 ? 1 : -1;
			break;
		}
		ix.raw_bytes = (uint32_t)len;
		if (!ix.count || !len)
			continue;
		ret = recs_open_build(&ix, raw, len, 1 + (uint32_t)(cols_rng() % 9), out, &good);
		if (ret == 1)
			FAILF("round %u, damage %u at %u of %zu bytes, %u events: not as the reference",
			      round, what, at, len, n);
		seen[ret == -MCR_E_CORRUPT ? 0 : ret == -MCR_E_TIME ? 1 : 2]++;
	}
	db_chunk_free(&ch);
	/* the damage was refused, read up to a step back, and read whole (a byte that did not matter) */
	ASSERT(seen[0] > 1000 && seen[1] > 20 && seen[2] > 200);
}

/*
 * Varints at the limit: 10 bytes (bits past the 64th dropped) are read, 11
 * refused, as the ts, the item or the val of a chunk's only record, of the
 * middle one of three (the 16-byte path) and of the last (the careful
 * one).  A record of header, ts, item, val: kind 1, id and pid as before.
 */
TEST(test_recs_varint_limit)
{
	static struct mcr_event out[4];
	static uint8_t raw[64];
	unsigned int field, where, vlen, k, f;
	struct db_chunk_index ix;
	uint32_t good, r, n;
	size_t len;

	for (field = 0; field < 3; field++)
		for (where = 0; where < 3; where++)
			for (vlen = 9; vlen <= 11; vlen++) {
				n = where ? 3 : 1;
				len = 0;
				for (r = 0; r < n; r++) {
					raw[len++] = MCR_EV_STATE | 0x10 | 0x20;
					for (f = 0; f < 3; f++) {
						if (f != field || r != (where ? where : 0)) {
							raw[len++] = 0;
							continue;
						}
						/* continuation bytes, then 0x02: 2 << 7 * (vlen - 1) */
						for (k = 0; k + 1 < vlen; k++)
							raw[len++] = 0x80;
						raw[len++] = 0x02;
					}
				}
				ix = (struct db_chunk_index){
					.first_ts = 1000, .first_seq = 1, .count = n,
					.raw_bytes = (uint32_t)len,
					/* a ts delta of 2^56 in 9 bytes; in 10, bit 64 is dropped: 0 */
					.last_ts = 1000 + (!field && vlen == 9 ? 1ULL << 56 : 0),
				};
				if (recs_open_build(&ix, raw, len, 2, out, &good) !=
				    (vlen == 11 ? -MCR_E_CORRUPT : 0))
					FAILF("field %u, record %u of %u, %u bytes: not as the reference",
					      field, where, n, vlen);
			}
}

TEST_MAIN(test_cols_checks, test_recs_checks, test_recs_varint_limit)
