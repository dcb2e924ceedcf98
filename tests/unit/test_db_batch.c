// SPDX-License-Identifier: GPL-2.0
/*
 * test_db_batch.c - the batch reader (events handed out by pointer into
 * the decoded chunks) in both store versions: chunk fields, windows, chunk
 * ends and errors far into a file; and the read-ahead of db/vfs.c, never
 * stale after the file changed.
 */
#include "db_fixture.h"

/*
 * @cpus CPUs taking turns at random, @per events each, ts steps of 1-8 ns:
 * the events in replay order ((ts, cpu), each CPU's own order kept), val
 * their place in it.  Freed by the caller.
 */
static struct mcr_event *batch_events(int cpus, uint64_t per)
{
	uint64_t next[80] = { 0 }, ts[80], x = 88172645463325252ULL;
	size_t k, total = (size_t)cpus * per;
	struct mcr_event *evs = calloc(total, sizeof(*evs));
	int c;

	if (!evs || cpus > 80)
		return NULL;
	for (c = 0; c < cpus; c++)
		ts[c] = 1000;
	for (k = 0; k < total; k++) {
		int best = -1;

		for (c = 0; c < cpus; c++)
			if (next[c] < per && (best < 0 || ts[c] < ts[best]))
				best = c;
		evs[k] = ev_make(ts[best], best, next[best]++, MCR_EV_STATE);
		evs[k].val = (int64_t)k;
		evs[k].pid = (int32_t)(x & 0xffff);
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		ts[best] += 1 + x % 8;
	}
	return evs;
}

/*
 * Read @path to the end or the first error, taking a batch, or with @mix
 * sometimes one event by db_iter_next(), and check each against @evs in
 * order.  A batch is held while it is walked, then walked again: the events
 * it points to are still what they were when it was handed out (a CPU's
 * batch is not built over while the round's pointers are out).  Returns the
 * error (or 0 at the end), *n the events read, -10000 on a mismatch.
 */
static int read_batches(const char *path, uint64_t from, uint64_t to, const struct mcr_event *evs,
			size_t nr, bool mix, size_t *n)
{
	static struct mcr_event copy[4096];
	struct db_iter *it;
	struct db *db;
	unsigned int c = 0;
	int r, i;

	*n = 0;
	if (db_open(path, false, &db))
		return -9999;
	r = db_iter_open_range(db, from, to, &it);
	while (!r) {
		const struct mcr_event *const *b;
		struct mcr_event ev;
		size_t first = *n;

		/* a batch, then one, two or none taken singly */
		if (mix && c++ % 4 != 0) {
			r = db_iter_next(it, &ev);
			if (r <= 0)
				break;
			r = *n < nr && ev_same(&ev, &evs[(*n)++]) ? 0 : -10000;
			continue;
		}
		r = db_iter_next_batch(it, &b);
		if (r <= 0)
			break;
		if (r > (int)(sizeof(copy) / sizeof(copy[0])) || *n + (size_t)r > nr) {
			r = -10000;
			break;
		}
		for (i = 0; i < r; i++) {
			copy[i] = *b[i];
			if (!ev_same(b[i], &evs[first + (size_t)i]))
				break;
		}
		if (i < r) {
			r = -10000;
			break;
		}
		for (i = 0; i < r; i++)
			if (!ev_same(b[i], &copy[i]))
				break;
		if (i < r) {
			r = -10000;
			break;
		}
		*n += (size_t)r;
		r = 0;
	}
	db_iter_close(it);
	db_close(db);
	return r;
}

/*
 * db_iter_next_batch() hands out pointers: into the CPUs' built batches
 * (version 1: windows of their decoded chunks) in rounds (up to 64 CPUs), to
 * its own copies otherwise (70 CPUs: the heap).  Every event comes out once,
 * in order, intact while its batch is held, taken by batches alone, mixed
 * with db_iter_next(), and within a range.  @total_events over each count
 * of CPUs in @cpus (a hundredth of them a CPU for 70): version 1 needs more
 * for a CPU's second chunk, and the heap a CPU's second window.
 */
static void batch_pointers(struct test_ctx *t, int version, const int *cpus, size_t nr_cpus,
			   uint64_t total_events)
{
	const char *path = tmp_path("batch.db");
	size_t ci, n, lo, hi;

	for (ci = 0; ci < nr_cpus; ci++) {
		uint64_t per = total_events / (cpus[ci] == 70 ? 100 : (uint64_t)cpus[ci]);
		size_t total = (size_t)cpus[ci] * per;
		struct mcr_event *evs = batch_events(cpus[ci], per);

		ASSERT(evs != NULL);
		ASSERT_EQ(make_db_version(path, cpus[ci], evs, total, version), 0);
		ASSERT_EQ(read_batches(path, 0, UINT64_MAX, evs, total, false, &n), 0);
		ASSERT_EQU(n, total);
		ASSERT_EQ(read_batches(path, 0, UINT64_MAX, evs, total, true, &n), 0);
		ASSERT_EQU(n, total);
		/* a range: the events from a third to two thirds of the stream */
		lo = total / 3;
		hi = 2 * total / 3;
		while (lo > 0 && evs[lo - 1].ts == evs[lo].ts)
			lo--;
		while (hi + 1 < total && evs[hi + 1].ts == evs[hi].ts)
			hi++;
		ASSERT_EQ(read_batches(path, evs[lo].ts, evs[hi].ts, evs + lo, hi + 1 - lo, true, &n),
			  0);
		ASSERT_EQU(n, hi + 1 - lo);
		free(evs);
	}
}

/*
 * A CPU's fields that are the same within a chunk, stored once a chunk (aux,
 * level and flags here, width 0), change from one chunk to the next: the
 * reader writes them into its buffer again where that still holds the
 * chunk before's.  CPU 0 has an event a ns and CPU 1 one every 1 to 5 ns
 * at random, so rounds end on CPU 0, and CPU 1 opens its next chunk (200
 * events) with events of the last still to go, then builds below where
 * those were.
 */
TEST(test_iter_chunk_fields)
{
	const char *path = tmp_path("fields.db");
	enum { N0 = 30000, PER = 200 };
	struct mcr_event *evs = calloc(2 * N0, sizeof(*evs));
	uint64_t seq[2] = { 0 }, next1 = 0, x = 88172645463325252ULL;
	size_t k = 0, n;
	uint64_t ts;

	ASSERT(evs != NULL);
	for (ts = 0; ts < N0; ts++) {
		int c;

		for (c = 0; c < 2; c++) {
			uint32_t chunk = (uint32_t)(seq[c] / PER);

			if (c && ts != next1)
				continue;
			if (c) {
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				next1 += 1 + x % 5;
			}
			evs[k] = ev_make(ts, c, seq[c]++, MCR_EV_STATE);
			evs[k].aux = (int32_t)(c * 100000 + chunk);
			evs[k].level = (int16_t)(chunk % 7);
			evs[k].flags = (uint8_t)(chunk % 5 + 1);
			evs[k].val = (int64_t)k;
			k++;
		}
	}
	chunk_limit = PER;
	ASSERT_EQ(make_db_version(path, 2, evs, k, DB_STORE_V2), 0);
	chunk_limit = 0;
	ASSERT_EQ(read_batches(path, 0, UINT64_MAX, evs, k, false, &n), 0);
	ASSERT_EQU(n, k);
	ASSERT_EQ(read_batches(path, 0, UINT64_MAX, evs, k, true, &n), 0);
	ASSERT_EQU(n, k);
	free(evs);
}

TEST(test_iter_batch_pointers)
{
	static const int cpus[] = { 1, 4, 70 };

	batch_pointers(t, DB_STORE_V2, cpus, sizeof(cpus) / sizeof(cpus[0]), 40000);
}

/* Version 1, as capture wrote it: chunks of DB_CHUNK_EVENTS, two a CPU of 3, four of 1. */
TEST(test_iter_batch_pointers_v1)
{
	static const int cpus[] = { 1, 3, 70 };

	batch_pointers(t, DB_STORE_V1, cpus, sizeof(cpus) / sizeof(cpus[0]),
		       3 * (DB_CHUNK_EVENTS + 4000));
}

/*
 * A step back in ts far into CPU 0's stream, after many rounds: within a
 * chunk's later batch, at a chunk's first event (the index says so) and
 * within the second chunk (@chunk events, the store @version's).  Every
 * event before the last good one of CPU 0, in replay order, comes out,
 * through batches and mixed alike, then -MCR_E_TIME, every call after.  A
 * field out of range far in (CPU 2's event @bad) is refused the same way,
 * after the events before it, naming it.
 */
static void batch_errors_far(struct test_ctx *t, int version, uint64_t chunk, uint64_t per,
			     uint64_t bad)
{
	const uint64_t step[] = { 3000, chunk, chunk + 700 };
	const char *path = tmp_path("batch_far.db");
	enum { CPUS = 4 };
	const struct mcr_event *const *b;
	struct mcr_event *evs = batch_events(CPUS, per), saved;
	struct db_iter *it;
	struct db *db;
	size_t k, at, n;
	char want[64];
	int mix, s;

	ASSERT(evs != NULL);
	for (s = 0; s < (int)(sizeof(step) / sizeof(step[0])); s++) {
		/* the step: CPU 0's event @step[s] one ns before the one before it */
		for (k = 0, at = SIZE_MAX; k < (size_t)CPUS * per; k++) {
			if (evs[k].cpu == 0 && evs[k].seq == step[s] - 1)
				at = k;
			if (evs[k].cpu == 0 && evs[k].seq == step[s])
				break;
		}
		ASSERT(at != SIZE_MAX && k < (size_t)CPUS * per);
		saved = evs[k];
		evs[k].ts = evs[at].ts - 1;
		ASSERT_EQ(make_db_version(path, CPUS, evs, (size_t)CPUS * per, version), 0);
		evs[k] = saved;
		for (mix = 0; mix < 2; mix++) {
			ASSERT_EQ(read_batches(path, 0, UINT64_MAX, evs, at + 1, mix, &n),
				  -MCR_E_TIME);
			ASSERT_EQU(n, at + 1);
		}
		ASSERT_EQ(db_open(path, false, &db), 0);
		ASSERT_EQ(db_iter_open(db, &it), 0);
		while (db_iter_next_batch(it, &b) > 0)
			;
		ASSERT_EQ(db_iter_next_batch(it, &b), -MCR_E_TIME);	/* sticky */
		ASSERT_EQ(db_iter_next(it, &saved), -MCR_E_TIME);
		db_iter_close(it);
		db_close(db);
	}
	/* CPU 2's event @bad: an update's item beyond any stat enum */
	for (k = 0; evs[k].cpu != 2 || evs[k].seq != bad; k++)
		;
	evs[k].kind = MCR_EV_LRUVEC;
	evs[k].item = 70000;
	ASSERT_EQ(make_db_version(path, CPUS, evs, (size_t)CPUS * per, version), 0);
	for (mix = 0; mix < 2; mix++) {
		ASSERT_EQ(read_batches(path, 0, UINT64_MAX, evs, k, mix, &n), -MCR_E_BAD_INPUT);
		ASSERT_EQU(n, k);
	}
	ASSERT_EQ(db_open(path, false, &db), 0);
	ASSERT_EQ(db_iter_open(db, &it), 0);
	while (db_iter_next_batch(it, &b) > 0)
		;
	ASSERT_EQ(db_iter_next_batch(it, &b), -MCR_E_BAD_INPUT);
	snprintf(want, sizeof(want), "event cpu 2 seq %" PRIu64 " ", bad);
	ASSERT(strstr(db_why(db), want) == db_why(db));
	ASSERT(strstr(db_why(db), "item 70000 out of range") != NULL);
	db_iter_close(it);
	db_close(db);
	free(evs);
}

TEST(test_iter_batch_errors_far)
{
	batch_errors_far(t, DB_STORE_V2, 16384, 20000, 9000);
}

/* Version 1: a step back at CPU 0's event 3000, at its second chunk and within it. */
TEST(test_iter_batch_errors_far_v1)
{
	batch_errors_far(t, DB_STORE_V1, DB_CHUNK_EVENTS, DB_CHUNK_EVENTS + 3000,
			 DB_CHUNK_EVENTS + 1000);
}

/* Read-ahead (db/vfs.c): BLOBs of many pages, each byte a function of @seed and its place. */
#define AHEAD_ROWS	6
#define AHEAD_BYTES	(60 * 1024 + 123)

static void ahead_fill(uint8_t *b, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;
	size_t i;

	for (i = 0; i < AHEAD_BYTES; i++) {
		x = x * 1103515245u + 12345;
		b[i] = (uint8_t)(x >> 16);
	}
}

/* Insert row @id of table ahead, the BLOB of @seed, through @s. */
static int ahead_put(sqlite3 *s, int id, uint32_t seed, uint8_t *b)
{
	sqlite3_stmt *st;
	int rc;

	ahead_fill(b, seed);
	if (sqlite3_prepare_v2(s, "INSERT INTO ahead (id, data) VALUES (?, ?)", -1, &st,
			       NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int(st, 1, id);
	sqlite3_bind_blob(st, 2, b, AHEAD_BYTES, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Overwrite row @id's BLOB with that of @seed in place: the same pages, other bytes. */
static int ahead_rewrite(sqlite3 *s, int id, uint32_t seed, uint8_t *b)
{
	sqlite3_blob *bl;
	int rc;

	ahead_fill(b, seed);
	if (sqlite3_blob_open(s, "main", "ahead", "data", id, 1, &bl) != SQLITE_OK)
		return -1;
	rc = sqlite3_blob_write(bl, b, AHEAD_BYTES, 0);
	return sqlite3_blob_close(bl) == SQLITE_OK && rc == SQLITE_OK ? 0 : -1;
}

/* Whether rows @first..@last of ahead, read through @s, are the BLOBs of seed @base + id. */
static bool ahead_holds(sqlite3 *s, int first, int last, uint32_t base, uint8_t *want)
{
	sqlite3_stmt *st;
	bool ok = true;
	int id;

	if (sqlite3_prepare_v2(s, "SELECT data FROM ahead WHERE id = ?", -1, &st, NULL) != SQLITE_OK)
		return false;
	for (id = first; ok && id <= last; id++) {
		sqlite3_bind_int(st, 1, id);
		ahead_fill(want, base + (uint32_t)id);
		ok = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_bytes(st, 0) == AHEAD_BYTES &&
		     !memcmp(sqlite3_column_blob(st, 0), want, AHEAD_BYTES);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return ok;
}

/* WAL: every page into the file, or -1 (busy: someone reads). */
static int ahead_checkpoint(sqlite3 *s)
{
	sqlite3_stmt *st;
	int ok;

	if (sqlite3_prepare_v2(s, "PRAGMA wal_checkpoint(TRUNCATE)", -1, &st, NULL) != SQLITE_OK)
		return -1;
	ok = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == 0;
	sqlite3_finalize(st);
	return ok ? 0 : -1;
}

/*
 * What the read-ahead buffer holds is never read once the file may have
 * changed: rewritten in place by another connection (the same pages, other
 * bytes) in rollback-journal mode and in WAL mode (moved into the file by
 * a checkpoint), and by the reader's own connection.  The rows are a few
 * pages each, one after the other in the file: reading the first fills the
 * buffer with the next ones, which are read first after each change.
 */
TEST(test_vfs_ahead_fresh)
{
	static uint8_t b[AHEAD_BYTES], want[AHEAD_BYTES];
	const char *path = tmp_path("ahead.db");
	struct mcr_event ev = ev_make(1000, 0, 0, MCR_EV_STATE);
	static const char *const mode[] = { "DELETE", "WAL" };
	sqlite3_vfs *vfs = NULL;
	struct db *db;
	sqlite3 *s;
	char sql[64];
	size_t m;
	int id;

	for (m = 0; m < 2; m++) {
		ASSERT_EQ(make_db(path, 1, &ev, 1), 0);
		ASSERT_EQ(sqlite3_open(path, &s), SQLITE_OK);
		snprintf(sql, sizeof(sql), "PRAGMA journal_mode = %s", mode[m]);
		ASSERT_EQ(sqlite3_exec(s, sql, NULL, NULL, NULL), SQLITE_OK);
		ASSERT_EQ(sqlite3_exec(s, "CREATE TABLE ahead (id INTEGER PRIMARY KEY, data BLOB)",
				       NULL, NULL, NULL), SQLITE_OK);
		for (id = 1; id <= AHEAD_ROWS; id++)
			ASSERT_EQ(ahead_put(s, id, 100 + (uint32_t)id, b), 0);
		ASSERT_EQ(db_open(path, true, &db), 0);
		ASSERT_EQ(sqlite3_file_control(db_sqlite(db), "main", SQLITE_FCNTL_VFS_POINTER, &vfs),
			  SQLITE_OK);
		ASSERT(vfs && vfs == sqlite3_vfs_find(DB_VFS_NAME));
		if (!ahead_holds(db_sqlite(db), 1, 1, 100, want))
			FAILF("%s: the reader does not read what was written", mode[m]);
		/* another connection rewrites every row (WAL: into the file, by a checkpoint) */
		for (id = 1; id <= AHEAD_ROWS; id++)
			ASSERT_EQ(ahead_rewrite(s, id, 200 + (uint32_t)id, b), 0);
		ASSERT_EQ(ahead_checkpoint(s), 0);
		if (!ahead_holds(db_sqlite(db), 2, AHEAD_ROWS, 200, want) ||
		    !ahead_holds(db_sqlite(db), 1, 1, 200, want))
			FAILF("%s: the reader read what another connection overwrote", mode[m]);
		/* and the reader's own */
		ASSERT(ahead_holds(db_sqlite(db), 1, 1, 200, want));
		for (id = 1; id <= AHEAD_ROWS; id++)
			ASSERT_EQ(ahead_rewrite(db_sqlite(db), id, 300 + (uint32_t)id, b), 0);
		if (!ahead_holds(db_sqlite(db), 2, AHEAD_ROWS, 300, want) ||
		    !ahead_holds(s, 1, AHEAD_ROWS, 300, want))
			FAILF("%s: a write through the reader is not what both read", mode[m]);
		ASSERT_EQ(db_close(db), 0);
		sqlite3_close(s);
	}
}

/*
 * Version 1 in chunks of 1000 events, not a multiple of a batch: builds
 * that end at a chunk's end, every event once and in order; a step back in ts at a
 * chunk's first event and in its middle delivers exactly the events before
 * it.
 */
TEST(test_iter_batch_chunk_ends_v1)
{
	static const int cpus[] = { 1, 3 };

	chunk_limit = 1000;
	batch_pointers(t, DB_STORE_V1, cpus, sizeof(cpus) / sizeof(cpus[0]), 7777);
	batch_errors_far(t, DB_STORE_V1, 1000, 5000, 2500);
	chunk_limit = 0;
}

TEST_MAIN(test_iter_chunk_fields, test_iter_batch_pointers, test_iter_batch_errors_far,
	  test_iter_batch_pointers_v1, test_iter_batch_errors_far_v1,
	  test_iter_batch_chunk_ends_v1, test_vfs_ahead_fresh)
