// SPDX-License-Identifier: GPL-2.0
/*
 * test_db_corrupt.c - damaged files: a chunk that does not decode, the
 * old row format, version 1 chunks damaged in their middle or at their end,
 * an unknown record kind, and a first event stepping back from its index.
 */
#include "db_fixture.h"

/* A damaged chunk is reported as such, never read as other events. */
TEST(test_corrupt_chunk)
{
	static struct mcr_event evs[RT_N];
	const char *path = tmp_path("corrupt.db");
	static const char *const damage[] = {
		/* truncated BLOB */
		"UPDATE event_chunks SET data = substr(data, 1, length(data) / 2) WHERE cpu = 1",
		/* garbage of the same length */
		"UPDATE event_chunks SET data = randomblob(length(data)) WHERE cpu = 2",
		/* index and content disagree */
		"UPDATE event_chunks SET count = count - 1 WHERE cpu = 3",
		"UPDATE event_chunks SET last_ts = last_ts + 1 WHERE cpu = 0",
		"UPDATE event_chunks SET raw_bytes = raw_bytes + 1 WHERE cpu = 0",
		"UPDATE event_chunks SET data = x'' WHERE cpu = 0",
	};
	uint64_t n;
	size_t i;

	rt_events(evs);
	for (i = 0; i < sizeof(damage) / sizeof(damage[0]); i++) {
		ASSERT_EQ(make_db(path, 4, evs, RT_N), 0);
		ASSERT_EQ(read_all(path, &n), 0);
		ASSERT_EQ(raw_exec(path, damage[i]), 0);
		if (read_all(path, &n) != -MCR_E_CORRUPT)
			FAILF("damage %zu not reported as corrupt", i);
		/* each CPU has one chunk, loaded before the first event is returned */
		ASSERT_EQU(n, 0);
	}
}

/*
 * A file of the previous format (events as rows, no chunks) is read as
 * before and converted by db_events_convert() into the store, same events.
 * It is made from a current file: rows written out, then the chunks dropped.
 */
TEST(test_old_format)
{
	static struct mcr_event evs[RT_N];
	const char *path = tmp_path("old.db");
	uint64_t n, rows;
	struct db *db;

	rt_events(evs);
	ASSERT_EQ(make_db(path, 4, evs, RT_N), 0);
	ASSERT_EQ(db_open(path, true, &db), 0);
	ASSERT_EQ(db_events_table(db, &rows), 0);
	db_close(db);
	ASSERT_EQ(raw_exec(path, "DROP TABLE event_chunks; UPDATE event_kinds SET events = NULL"), 0);
	ASSERT_EQ(db_open(path, true, &db), 0);
	ASSERT(db_events_are_rows(db));
	ASSERT_EQ(db_events_table(db, &rows), -EINVAL);
	db_close(db);
	ASSERT_EQ(read_all(path, &n), 0);
	ASSERT_EQU(n, RT_N);
	ASSERT_EQ(db_open(path, true, &db), 0);
	ASSERT_EQ(db_events_convert(db, &n), 0);
	ASSERT_EQU(n, RT_N);
	ASSERT(!db_events_are_rows(db));
	ASSERT_EQ(db_events_convert(db, &n), -EALREADY);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'events'"), 0);
	ASSERT_EQ(query_int(db, "SELECT events FROM event_kinds WHERE kind = 10"), 103);
	db_close(db);
	ASSERT_EQ(read_all(path, &n), 0);
	ASSERT_EQU(n, RT_N);
}

/* The offset of record @k of the version 1 records @raw, by ref_decode()'s rules. */
static size_t ref_record_at(const uint8_t *raw, size_t len, uint32_t k)
{
	const uint8_t *p = raw, *end = raw + len;
	uint64_t v;
	uint32_t i;

	for (i = 0; i < k; i++) {
		uint8_t h = *p++;
		int f, nv = 3 + !!(h & 0x80) + !(h & 0x10) + !(h & 0x20) + 2 * !!(h & 0x40);

		for (f = 0; f < nv; f++)
			ref_varint(&p, end, &v);
		p += !!(h & 0x40);
	}
	return (size_t)(p - raw);
}

/*
 * Rewrite the first chunk of CPU @cpu in @path: its bytes decompressed,
 * changed by @fn (which may change @ix too), put back compressed, the
 * index row as @ix then says.
 */
static int chunk_rewrite(const char *path, int cpu,
		      void (*fn)(uint8_t *raw, size_t *len, struct db_chunk_index *ix))
{
	static uint8_t raw[DB_CHUNK_EVENTS * 4], z[DB_CHUNK_EVENTS * 4];
	struct db_chunk_index ix = { 0 };
	sqlite3_stmt *st = NULL;
	size_t len = 0, zlen;
	sqlite3 *s;
	int rc = -1;

	if (sqlite3_open(path, &s) != SQLITE_OK)
		return -1;
	if (sqlite3_prepare_v2(s, "SELECT chunk, data, raw_bytes, count, first_ts, last_ts"
			       " FROM event_chunks WHERE cpu = ? ORDER BY chunk LIMIT 1",
			       -1, &st, NULL) != SQLITE_OK)
		goto out;
	sqlite3_bind_int(st, 1, cpu);
	if (sqlite3_step(st) != SQLITE_ROW)
		goto out;
	ix.chunk = sqlite3_column_int64(st, 0);
	ix.raw_bytes = (uint32_t)sqlite3_column_int64(st, 2);
	ix.count = (uint32_t)sqlite3_column_int64(st, 3);
	ix.first_ts = (uint64_t)sqlite3_column_int64(st, 4);
	ix.last_ts = (uint64_t)sqlite3_column_int64(st, 5);
	len = ZSTD_decompress(raw, sizeof(raw), sqlite3_column_blob(st, 1),
			      (size_t)sqlite3_column_bytes(st, 1));
	sqlite3_finalize(st);
	st = NULL;
	if (ZSTD_isError(len) || len != ix.raw_bytes)
		goto out;
	fn(raw, &len, &ix);
	zlen = ZSTD_compress(z, sizeof(z), raw, len, 1);
	if (ZSTD_isError(zlen) ||
	    sqlite3_prepare_v2(s, "UPDATE event_chunks SET data = ?, raw_bytes = ?, count = ?,"
			       " first_ts = ?, last_ts = ? WHERE chunk = ?", -1, &st, NULL) != SQLITE_OK)
		goto out;
	sqlite3_bind_blob(st, 1, z, (int)zlen, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, (int64_t)len);
	sqlite3_bind_int64(st, 3, ix.count);
	sqlite3_bind_int64(st, 4, (int64_t)ix.first_ts);
	sqlite3_bind_int64(st, 5, (int64_t)ix.last_ts);
	sqlite3_bind_int64(st, 6, ix.chunk);
	rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
out:
	sqlite3_finalize(st);
	sqlite3_close(s);
	return rc;
}

/* The damage of test_corrupt_chunk_v1: in the middle record, or the last. */
static void v1_kind_mid(uint8_t *raw, size_t *len, struct db_chunk_index *ix)
{
	raw[ref_record_at(raw, *len, ix->count / 2)] &= 0xf0;
}

static void v1_kind_last(uint8_t *raw, size_t *len, struct db_chunk_index *ix)
{
	raw[ref_record_at(raw, *len, ix->count - 1)] |= 0x0f;
}

static void v1_cut_last(uint8_t *raw, size_t *len, struct db_chunk_index *ix)
{
	(*len)--;
}

/* the middle record's header and ts, then 11 bytes for what was a 1-byte ts delta */
static void v1_varint_mid(uint8_t *raw, size_t *len, struct db_chunk_index *ix)
{
	size_t at = ref_record_at(raw, *len, ix->count / 2) + 1;

	memmove(raw + at + 10, raw + at, *len - at);
	memset(raw + at, 0x80, 10);
	*len += 10;
}

/* a byte cut from the middle record's ts: every record after it read askew */
static void v1_cut_mid(uint8_t *raw, size_t *len, struct db_chunk_index *ix)
{
	size_t at = ref_record_at(raw, *len, ix->count / 2) + 1;

	memmove(raw + at, raw + at + 1, *len - at - 1);
	(*len)--;
}

static void v1_count_more(uint8_t *raw, size_t *len, struct db_chunk_index *ix)
{
	ix->count++;
}

static void v1_count_less(uint8_t *raw, size_t *len, struct db_chunk_index *ix)
{
	ix->count--;
}

static void v1_last_ts(uint8_t *raw, size_t *len, struct db_chunk_index *ix)
{
	ix->last_ts--;
}

/* the first event 5 ns before the index's first_ts: a step back before any event */
static void v1_back_first(uint8_t *raw, size_t *len, struct db_chunk_index *ix)
{
	ix->first_ts += 5;
	raw[1] = 9;	/* zz(-5); the writer's first delta is zz(0), one byte */
}

/*
 * Version 2: the ts column of width 1 over a base of -5 (every entry 5
 * more), the first entry 0: the first event 5 ns before the index's
 * first_ts, every other where it was.
 */
static void v2_back_first(uint8_t *raw, size_t *len, struct db_chunk_index *ix)
{
	uint8_t *base = raw + 1 + DB_COLS + 8 * DB_COL_TS, *col = raw + DB_CHUNK_V2_HDR;
	uint64_t b = (uint64_t)-5;
	uint32_t i;

	if (raw[1 + DB_COL_TS] != 1)
		return;		/* the test fails: nothing steps back */
	for (i = 0; i < 8; i++)
		base[i] = (uint8_t)(b >> (8 * i));
	for (i = 0; i < ix->count; i++)
		col[i] += 5;
	col[0] = 0;
	ix->first_ts += 5;
}

/*
 * A chunk whose first event is before its index row's first_ts steps back
 * before any of its events: refused as it is loaded, none of it
 * delivered, in both versions (each CPU has one chunk, all loaded before
 * the first event is returned).
 */
TEST(test_back_at_first_event)
{
	static struct mcr_event evs[RT_N];
	const char *path = tmp_path("back_first.db");
	uint64_t n;
	int v;

	rt_events(evs);
	for (v = DB_STORE_V1; v <= DB_STORE_V2; v++) {
		ASSERT_EQ(make_db_version(path, 4, evs, RT_N, v), 0);
		ASSERT_EQ(chunk_rewrite(path, 2, v == DB_STORE_V1 ? v1_back_first : v2_back_first), 0);
		ASSERT_EQ(read_all(path, &n), -MCR_E_TIME);
		ASSERT_EQU(n, 0);
	}
}

/*
 * A version 1 chunk damaged in its middle or at its end (a record cut, a
 * varint over 64 bits, count or last_ts off) is refused
 * whole when it is loaded, before any of its events is delivered; one whose
 * first event steps back from the index's first_ts is refused the same way,
 * as a step back.  Each CPU has one chunk, all loaded before the first
 * event is returned.
 */
TEST(test_corrupt_chunk_v1)
{
	static void (*const damage[])(uint8_t *, size_t *, struct db_chunk_index *) = {
		v1_cut_last, v1_varint_mid, v1_cut_mid,
		v1_count_more, v1_count_less, v1_last_ts, v1_back_first,
	};
	static struct mcr_event evs[RT_N];
	const char *path = tmp_path("corrupt_v1.db");
	uint64_t n;
	size_t i;
	int ret;

	rt_events(evs);
	for (i = 0; i < sizeof(damage) / sizeof(damage[0]); i++) {
		ASSERT_EQ(make_db_version(path, 4, evs, RT_N, DB_STORE_V1), 0);
		ASSERT_EQ(read_all(path, &n), 0);
		ASSERT_EQU(n, RT_N);
		ASSERT_EQ(chunk_rewrite(path, (int)i % 4, damage[i]), 0);
		ret = read_all(path, &n);
		if (ret != (damage[i] == v1_back_first ? -MCR_E_TIME : -MCR_E_CORRUPT))
			FAILF("damage %zu read as %d", i, ret);
		ASSERT_EQU(n, 0);
	}
}

/*
 * A version 1 record of an unknown kind (0, or 11 to 15 of the header's
 * four bits) is well formed: the chunk decodes, and the reader refuses the
 * event as any field out of range, -MCR_E_BAD_INPUT after the events before
 * it (a damaged chunk, -MCR_E_CORRUPT, before).
 */
TEST(test_unknown_kind_v1)
{
	static void (*const damage[])(uint8_t *, size_t *, struct db_chunk_index *) = {
		v1_kind_mid, v1_kind_last,
	};
	static struct mcr_event evs[RT_N];
	const char *path = tmp_path("kind_v1.db");
	uint64_t n;
	size_t i;

	rt_events(evs);
	for (i = 0; i < sizeof(damage) / sizeof(damage[0]); i++) {
		ASSERT_EQ(make_db_version(path, 4, evs, RT_N, DB_STORE_V1), 0);
		ASSERT_EQ(chunk_rewrite(path, (int)i, damage[i]), 0);
		ASSERT_EQ(read_all(path, &n), -MCR_E_BAD_INPUT);
		if (!n || n >= RT_N)
			FAILF("damage %zu: %" PRIu64 " events before the refusal", i, n);
	}
}

TEST_MAIN(test_corrupt_chunk_v1, test_unknown_kind_v1, test_back_at_first_event,
	  test_corrupt_chunk, test_old_format)
