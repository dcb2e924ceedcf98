// SPDX-License-Identifier: GPL-2.0
/*
 * test_db_store.c - the chunk store: both versions read back the same
 * events, the version 2 columns as written (against a reference encoder)
 * and their zstd framing, a chunk taken whole, an unknown version refused,
 * and time stepping back far into a file.
 */
#include "db_fixture.h"

/*
 * Both store versions hold every field of every kind bit for bit (version 1
 * as capture wrote it, version 2 as every writer does now), and
 * only version 2 files say so in meta.
 */
TEST(test_store_versions)
{
	static struct mcr_event evs[RT_N];
	char p1[8192], p2[8192];	/* tmp_path()'s buffer is one */
	struct db *db;

	snprintf(p1, sizeof(p1), "%s", tmp_path("v1.db"));
	snprintf(p2, sizeof(p2), "%s", tmp_path("v2.db"));

	rt_events(evs);
	ASSERT_EQ(make_db_version(p1, 4, evs, RT_N, DB_STORE_V1), 0);
	ASSERT_EQ(make_db(p2, 4, evs, RT_N), 0);
	ASSERT_EQ(read_same(p1, evs, RT_N), RT_N);
	ASSERT_EQ(read_same(p2, evs, RT_N), RT_N);
	ASSERT_EQ(db_open(p1, false, &db), 0);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM meta WHERE key = 'store_version'"), 0);
	db_close(db);
	ASSERT_EQ(db_open(p2, false, &db), 0);
	ASSERT_EQ(query_int(db, "SELECT value FROM meta WHERE key = 'store_version'"), 2);
	db_close(db);
}

/*
 * Version 2's matches, found by the writer itself: a full chunk and a short
 * one repeating with a period of 37 events, within a column and from one
 * column to another (aux holds item), a random event in every 11 (a match
 * ends and a new one starts), ids, values, ts deltas and seq skips 8 bytes
 * wide (a block of ZSTD_BLOCKSIZE_MAX); read back bit for bit, and smaller
 * than a quarter of its columns.
 */
TEST(test_store_matches)
{
	enum { N = DB_CHUNK_V2_EVENTS + 500 };
	static struct mcr_event evs[N];
	const char *path = tmp_path("match.db");
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	struct db *db;
	size_t i;

	for (i = 0; i < N; i++) {
		struct mcr_event *ev = &evs[i];
		uint64_t p = i % 37;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if (i % 11 == 0)
			p = 37 + x % 100000;
		ev->ts = 1000000 + i * 5 + p % 3 + (i >= 200 ? 1ULL << 34 : 0);
		ev->seq = i + (i >= 100 ? 1ULL << 33 : 0);
		/* kinds whose val may be any 64 bits: count_memcg_events, cgroup_mkdir, cgroup_rmdir */
		ev->kind = (uint8_t)(p % 3 ? MCR_EV_MKDIR - 1 + p % 3 : MCR_EV_EVENTS);
		ev->id = ((p * 0x10001ULL) << 20) + 1;
		ev->item = (int32_t)(p % 65536);
		ev->val = (int64_t)(p * 0x123456789ULL) - (1LL << 40);
		ev->pid = (int32_t)(p * 13);
		ev->aux = ev->item;
		ev->level = (int16_t)(p % 5);
		ev->flags = (uint8_t)(p % 2);
	}
	ASSERT_EQ(make_db(path, 1, evs, N), 0);
	ASSERT_EQ(read_same(path, evs, N), N);
	ASSERT_EQ(db_open(path, false, &db), 0);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM event_chunks"), 2);
	ASSERT_EQ(query_int(db, "SELECT sum(length(data)) * 4 < sum(raw_bytes) FROM event_chunks"), 1);
	db_close(db);
}

/* Event @i's value of every column, as store.h defines them. */
static void cols_values(const struct mcr_event *evs, uint32_t i, int64_t *v)
{
	uint64_t pts = i ? evs[i - 1].ts : evs[0].ts;
	uint64_t pseq = i ? evs[i - 1].seq : evs[0].seq - 1;

	v[DB_COL_TS] = (int64_t)(evs[i].ts - pts);
	v[DB_COL_SEQ] = (int64_t)(evs[i].seq - pseq - 1);
	v[DB_COL_KIND] = evs[i].kind;
	v[DB_COL_ID] = (int64_t)evs[i].id;
	v[DB_COL_ITEM] = evs[i].item;
	v[DB_COL_VAL] = evs[i].val;
	v[DB_COL_PID] = evs[i].pid;
	v[DB_COL_AUX] = evs[i].aux;
	v[DB_COL_LEVEL] = evs[i].level;
	v[DB_COL_FLAGS] = evs[i].flags;
}

/*
 * The reference for a version 2 chunk's bytes, from @evs alone: every
 * column's least value as int64 its base, the least width that holds the
 * spread, the values above it.  Returns the length written into @out.
 */
static size_t cols_reference(const struct mcr_event *evs, uint32_t n, uint8_t *out)
{
	int64_t v[DB_COLS], lo[DB_COLS], hi[DB_COLS];
	unsigned int w[DB_COLS];
	uint8_t *p = out, *col[DB_COLS];
	uint64_t spread;
	uint32_t i;
	int k;

	for (k = 0; k < DB_COLS; k++) {
		lo[k] = INT64_MAX;
		hi[k] = INT64_MIN;
	}
	for (i = 0; i < n; i++) {
		cols_values(evs, i, v);
		for (k = 0; k < DB_COLS; k++) {
			lo[k] = v[k] < lo[k] ? v[k] : lo[k];
			hi[k] = v[k] > hi[k] ? v[k] : hi[k];
		}
	}
	*p++ = DB_STORE_V2_MAGIC;
	for (k = 0; k < DB_COLS; k++) {
		spread = (uint64_t)hi[k] - (uint64_t)lo[k];
		w[k] = !spread ? 0 : spread < 1ULL << 8 ? 1 : spread < 1ULL << 16 ? 2 :
		       spread < 1ULL << 32 ? 4 : 8;
		*p++ = (uint8_t)w[k];
	}
	for (k = 0; k < DB_COLS; k++) {
		cols_put(p, (uint64_t)lo[k], 8);
		p += 8;
	}
	for (k = 0; k < DB_COLS; k++) {
		col[k] = p;
		p += (size_t)w[k] * n;
	}
	for (i = 0; i < n; i++) {
		cols_values(evs, i, v);
		for (k = 0; k < DB_COLS; k++)
			cols_put(col[k] + (size_t)w[k] * i, (uint64_t)v[k] - (uint64_t)lo[k], w[k]);
	}
	return (size_t)(p - out);
}

/*
 * The first chunk's BLOB of @path into @z (@cap bytes): its length, or 0.
 */
static size_t chunk_blob(const char *path, uint8_t *z, size_t cap)
{
	sqlite3_stmt *st = NULL;
	size_t len = 0;
	sqlite3 *s;

	if (sqlite3_open_v2(path, &s, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		return 0;
	if (sqlite3_prepare_v2(s, "SELECT data FROM event_chunks ORDER BY chunk LIMIT 1", -1, &st,
			       NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
	    (size_t)sqlite3_column_bytes(st, 0) <= cap) {
		len = (size_t)sqlite3_column_bytes(st, 0);
		memcpy(z, sqlite3_column_blob(st, 0), len);
	}
	sqlite3_finalize(st);
	sqlite3_close(s);
	return len;
}

/* zstd frames in @z, back to back; 0 if they do not end at @len. */
static int zstd_frames(const uint8_t *z, size_t len)
{
	size_t at = 0, f;
	int n = 0;

	while (at < len) {
		f = ZSTD_findFrameCompressedSize(z + at, len - at);
		if (ZSTD_isError(f))
			return 0;
		at += f;
		n++;
	}
	return n;
}

/* Times @needle (@n bytes) occurs in @hay (@len). */
static int occurrences(const uint8_t *hay, size_t len, const uint8_t *needle, size_t n)
{
	const uint8_t *p = hay, *q;
	int k = 0;

	while ((q = memmem(p, len - (size_t)(p - hay), needle, n))) {
		k++;
		p = q + 1;
	}
	return k;
}

/*
 * A column of near-random bytes is stored raw, in a zstd frame of its own
 * that the reader takes as one with the others.  One full chunk: id random
 * over 16 bits (width 2, 8 bits of entropy a byte: Huffman would save
 * nothing), pid the same values, the other columns of a few values each.
 * By column order (ts seq kind | id | item val | pid aux level flags: seq,
 * aux, level and flags are width 0 and join the frame before them) that is
 * four frames, Huffman, raw, Huffman, raw; both random columns stored
 * byte for byte, twice in all, though pid repeats id: a match from pid back
 * into id's frame would be refused by zstd (seal fails).  Read back bit for
 * bit.  Then the same chunk with ids of 16 values (4 bits a byte): one frame, id's bytes
 * not stored as they are.
 */
TEST(test_store_raw_literals)
{
	enum { N = DB_CHUNK_V2_EVENTS };
	static struct mcr_event evs[N];
	static uint8_t ref[DB_CHUNK_V2_HDR + 8 * DB_COLS * N], z[4 * 8 * DB_COLS * N];
	const char *path = tmp_path("rawlit.db"), *path1 = tmp_path("rawlit1.db");
	const uint8_t *id_col;
	size_t len, at;
	int round, k;

	srand(30);
	for (round = 0; round < 2; round++) {
		const char *p = round ? path1 : path;

		for (uint32_t i = 0; i < N; i++) {
			struct mcr_event *ev = &evs[i];

			memset(ev, 0, sizeof(*ev));
			ev->ts = 1000000 + (uint64_t)i * 5 + cols_rng() % 3;
			ev->seq = i;
			ev->kind = (uint8_t)(1 + cols_rng() % 3);
			ev->id = 1 + (round ? cols_rng() % 16 * 4099 : cols_rng() % 65536);
			ev->item = (int32_t)(i % 7);
			ev->val = (int64_t)(cols_rng() % 5);
			ev->pid = (int32_t)ev->id;
		}
		ASSERT_EQ(make_db(p, 1, evs, N), 0);
		ASSERT_EQ(read_same(p, evs, N), N);
		len = chunk_blob(p, z, sizeof(z));
		ASSERT(len > 0);
		cols_reference(evs, N, ref);
		for (at = DB_CHUNK_V2_HDR, k = 0; k < DB_COL_ID; k++)
			at += (size_t)ref[1 + k] * N;
		ASSERT_EQ(ref[1 + DB_COL_ID], 2);
		id_col = ref + at;
		if (!round) {
			ASSERT_EQ(zstd_frames(z, len), 4);
			ASSERT_EQ(occurrences(z, len, id_col, 2 * N), 2);
		} else {
			ASSERT_EQ(zstd_frames(z, len), 1);
			ASSERT_EQ(occurrences(z, len, id_col, 2 * N), 0);
		}
	}
}

/*
 * The writer builds version 2 columns as the events come, widening them
 * and moving their bases as it goes: its bytes are the reference's whatever
 * the order values arrive in.  Columns that fall one by one past the
 * writer's limit of passes (val, then ts stepping back), a value far out
 * at the last event, int64's two ends in one column (width 8) and near
 * either end (bases clamped at INT64_MIN and INT64_MAX - lim), random
 * int32 pids, negative levels, and one event alone.
 */
TEST(test_store_columns_as_written)
{
	enum { N = DB_CHUNK_V2_EVENTS, CASES = 8 };
	static struct mcr_event evs[N];
	static uint8_t want[DB_CHUNK_V2_HDR + 8 * DB_COLS * N];
	struct db_chunk ch;
	size_t len, b;
	uint32_t i, n;
	int c;

	srand(12);
	for (c = 0; c < CASES; c++) {
		n = c == 7 ? 1 : N - (uint32_t)c * 1000;
		for (i = 0; i < n; i++) {
			struct mcr_event *ev = &evs[i];
			uint64_t r = cols_rng();

			memset(ev, 0, sizeof(*ev));
			ev->ts = 5000000000ULL + (uint64_t)i * 100 + r % 7;
			ev->seq = 77 + i + (r % 97 == 0);
			ev->kind = (uint8_t)(1 + r % 3);
			ev->id = 100 + (r >> 8) % 50;
			ev->item = (int32_t)((r >> 16) % 40);
			ev->val = (int64_t)((r >> 24) % 512) - 200;
			ev->pid = 1000 + (int32_t)((r >> 40) % 30);
			switch (c) {
			case 0:	/* falls by one at every event: past the passes' limit */
				ev->val = 1000000 - (int64_t)i;
				break;
			case 1:	/* ts steps back by more and more: negative deltas, falling */
				ev->ts = 1ULL << 40;
				ev->ts -= (uint64_t)i * i;
				break;
			case 2:	/* constant, then one far value at the last event */
				ev->val = 7;
				if (i == n - 1)
					ev->val = -(1LL << 40);
				break;
			case 3:	/* both ends of int64 in one column */
				ev->id = i % 2 ? (uint64_t)INT64_MAX : (uint64_t)INT64_MIN;
				ev->val = i % 3 ? INT64_MIN : INT64_MAX;
				break;
			case 4:
				/*
				 * near INT64_MAX, spreading: the base clamped below
				 * it, or INT64_MIN, the third, would fit above it
				 */
				ev->val = INT64_MAX - (int64_t)(i % 300) - (i > n / 2 ? 70000 : 0);
				if (i == 2)
					ev->val = INT64_MIN;
				break;
			case 5:
				/*
				 * near INT64_MIN, falling past the passes' limit: the
				 * base clamped at it, or INT64_MAX, the last, would fit
				 */
				ev->val = INT64_MIN + 1000 - (int64_t)(i < 1000 ? i : 1000);
				if (i == n - 1)
					ev->val = INT64_MAX;
				break;
			case 6:	/* random int32s, negative levels, all flags */
				ev->pid = (int32_t)(uint32_t)r;
				ev->level = (int16_t)-(int)(r % 9);
				ev->flags = (uint8_t)(r >> 32);
				ev->aux = (int32_t)(r >> 33) - (1 << 29);
				break;
			}
		}
		db_chunk_init(&ch, 3);
		for (i = 0; i < n; i++)
			ASSERT_EQ(db_chunk_add(&ch, &evs[i]), 0);
		ASSERT_EQ(db_chunk_seal(&ch), 0);
		len = cols_reference(evs, n, want);
		for (b = 0; b < len && b < ch.len && ch.raw[b] == want[b]; b++)
			;
		if (ch.len != len || b != len)
			FAILF("case %d: %zu bytes written, the reference %zu, the first different at %zu",
			      c, ch.len, len, b);
		/* a full chunk takes no more */
		if (n == N)
			ASSERT_EQ(db_chunk_add(&ch, &evs[0]), -ENOSPC);
		db_chunk_free(&ch);
	}
}

/*
 * memcg-capture's hand-over: one encoder chunk filled, sealed and taken three
 * times, into two holders put in turn (so the second take of a holder swaps
 * back a buffer the encoder already used).  The encoder keeps its columns
 * and comes back empty; the holders carry what db_chunk_put() needs; the
 * file holds the 3 runs, 5000, 1 and 16384 events, as added.
 */
TEST(test_store_chunk_take)
{
	static const uint32_t runs[3] = { 5000, 1, DB_CHUNK_V2_EVENTS };
	static struct mcr_event evs[5000 + 1 + DB_CHUNK_V2_EVENTS];
	const char *path = tmp_path("take.db");
	struct db_chunk enc, held[2];
	struct mcr_event ev;
	struct db_iter *it;
	struct db *db;
	size_t i, n = 0;
	uint8_t *cols;
	void *z;
	int r, k;

	for (i = 0; i < sizeof(evs) / sizeof(evs[0]); i++) {
		evs[i] = ev_make(1000 + 7 * i, 0, i, 1 + (int)(i % 3));
		evs[i].id = 2 + i % 5;
		evs[i].item = (int32_t)(i % 11);
		evs[i].val = (int64_t)(i % 13) - 6;
		evs[i].pid = 100 + (int32_t)(i % 2);
	}
	ASSERT_EQ(db_create(path, &db), 0);
	ASSERT_EQ(set_required_meta(db, 1), 0);
	db_chunk_init(&enc, 0);
	db_chunk_init(&held[0], 0);
	db_chunk_init(&held[1], 0);
	for (k = 0; k < 3; k++) {
		struct db_chunk *h = &held[k % 2];
		size_t first = n;

		for (; n < first + runs[k]; n++)
			ASSERT_EQ(db_chunk_add(&enc, &evs[n]), 0);
		ASSERT_EQ(db_chunk_seal(&enc), 0);
		cols = enc.cols;
		z = enc.z;
		db_chunk_take(&enc, h);
		ASSERT_EQU(enc.count, 0);
		ASSERT_EQU(enc.zlen, 0);
		ASSERT(enc.cols == cols);
		ASSERT(h->z == z && enc.z != z);
		ASSERT_EQU(h->count, runs[k]);
		ASSERT_EQU(h->first_seq, first);
		ASSERT_EQU(h->first_ts, evs[first].ts);
		ASSERT_EQU(h->last_ts, evs[n - 1].ts);
		ASSERT(h->zlen > 0 && h->cols == NULL);
		ASSERT_EQ(db_chunk_put(db, h), 0);
	}
	db_chunk_free(&enc);
	db_chunk_free(&held[0]);
	db_chunk_free(&held[1]);
	ASSERT_EQ(db_events_finish(db), 0);
	ASSERT_EQ(db_close(db), 0);
	ASSERT_EQ(db_open(path, false, &db), 0);
	ASSERT_EQ(db_iter_open(db, &it), 0);
	ASSERT_EQU(db_iter_count(it), n);
	for (i = 0; (r = db_iter_next(it, &ev)) == 1 && i < n && ev_same(&ev, &evs[i]); i++)
		;
	db_iter_close(it);
	db_close(db);
	ASSERT_EQ(r, 0);
	ASSERT_EQU(i, n);
}

/*
 * A file is of one store version: a version this build does not know is
 * refused as newer (exit 6), no version at all and chunks of the other
 * version as corrupt (15), and a writer does not mix them.
 */
TEST(test_store_version_refused)
{
	static struct mcr_event evs[RT_N];
	char p1[8192], p2[8192];	/* tmp_path()'s buffer is one */
	struct mcr_event lo[2] = { ev_make(10, 0, 0, MCR_EV_STATE), ev_make(20, 1, 0, MCR_EV_STATE) };
	struct mcr_event hi[2] = { ev_make(30, 2, 0, MCR_EV_STATE), ev_make(40, 3, 0, MCR_EV_STATE) };
	static const char *const meta[] = { "'3'", "'0'", "'two'" };
	static const int want[] = { -MCR_E_NEWER, -MCR_E_CORRUPT, -MCR_E_CORRUPT };
	struct db_chunk ch;
	struct db *db;
	uint64_t n;
	size_t i;
	char sql[8192 + 256];

	snprintf(p1, sizeof(p1), "%s", tmp_path("mix1.db"));
	snprintf(p2, sizeof(p2), "%s", tmp_path("mix2.db"));
	rt_events(evs);
	for (i = 0; i < sizeof(meta) / sizeof(meta[0]); i++) {
		ASSERT_EQ(make_db(p2, 4, evs, RT_N), 0);
		snprintf(sql, sizeof(sql), "UPDATE meta SET value = %s WHERE key = 'store_version'",
			 meta[i]);
		ASSERT_EQ(raw_exec(p2, sql), 0);
		if (read_all(p2, &n) != want[i])
			FAILF("store_version %s not refused with %d", meta[i], want[i]);
	}
	/* version 2 chunks in a file without store_version: read as version 1, corrupt */
	ASSERT_EQ(make_db(p2, 4, evs, RT_N), 0);
	ASSERT_EQ(raw_exec(p2, "DELETE FROM meta WHERE key = 'store_version'"), 0);
	ASSERT_EQ(read_all(p2, &n), -MCR_E_CORRUPT);
	ASSERT_EQU(n, 0);
	/* CPUs 0, 1 in one version, 2, 3 in the other, in either order */
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(make_db_version(p1, 4, hi, 2, i ? DB_STORE_V2 : DB_STORE_V1), 0);
		ASSERT_EQ(make_db_version(p2, 4, lo, 2, i ? DB_STORE_V1 : DB_STORE_V2), 0);
		snprintf(sql, sizeof(sql), "ATTACH '%s' AS o; INSERT INTO event_chunks (cpu,"
			 " first_ts, last_ts, first_seq, count, kinds, raw_bytes, data) SELECT cpu,"
			 " first_ts, last_ts, first_seq, count, kinds, raw_bytes, data FROM"
			 " o.event_chunks", p1);
		ASSERT_EQ(raw_exec(p2, sql), 0);
		ASSERT_EQ(read_all(p2, &n), -MCR_E_CORRUPT);
		ASSERT_EQU(n, 0);
	}
	/* the writer refuses a chunk of the other version */
	ASSERT_EQ(make_db(p2, 4, lo, 2), 0);
	ASSERT_EQ(db_open(p2, true, &db), 0);
	db_chunk_init(&ch, 2);
	ch.version = DB_STORE_V1;
	ASSERT_EQ(db_chunk_add(&ch, &hi[0]), 0);
	ASSERT_EQ(db_chunk_seal(&ch), 0);
	ASSERT_EQ(db_chunk_put(db, &ch), -EINVAL);
	db_chunk_free(&ch);
	db_close(db);
}

/*
 * A chunk that steps back in time within a CPU (cpu 0: 100, 2^62, 150) is
 * read, in both versions, up to the step, in (ts, cpu) order with cpu 1's
 * (120, 130), then refused: 100, 120, 130, 2^62, then -MCR_E_TIME.  2^62 is
 * beyond what the merge's packed keys hold (2^57 ns past the least first_ts
 * of the index, 100): the merge goes on with the heap.
 */
TEST(test_time_backwards_far)
{
	const char *path = tmp_path("far.db");
	struct mcr_event evs[] = {
		ev_make(100, 0, 0, MCR_EV_STATE),
		ev_make(120, 1, 0, MCR_EV_STATE),
		ev_make(130, 1, 1, MCR_EV_STATE),
		ev_make(1ULL << 62, 0, 1, MCR_EV_STATE),
		ev_make(150, 0, 2, MCR_EV_STATE),
	};
	int v;

	for (v = DB_STORE_V1; v <= DB_STORE_V2; v++) {
		ASSERT_EQ(make_db_version(path, 2, evs, 5, v), 0);
		ASSERT_EQ(read_same(path, evs, 4), -MCR_E_TIME);
		/* the four before it came out: read_same() breaks at the fifth */
		ASSERT_EQ(read_same(path, evs, 5), -MCR_E_TIME);
	}
}

TEST_MAIN(test_store_versions, test_store_matches, test_store_raw_literals,
	  test_store_columns_as_written, test_store_chunk_take, test_store_version_refused,
	  test_time_backwards_far)
