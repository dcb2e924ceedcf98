// SPDX-License-Identifier: GPL-2.0
/*
 * test_db_iter.c - the event iterator: the merge of the CPUs' streams in
 * time order, the checks made on each event read (fields, values, time
 * order within a CPU, CPUs beyond the possible ones), its page cache and
 * the read transaction it holds, and the chunks iterators of one connection
 * share.
 */
#include "db_fixture.h"
#include "iter_local.h"

TEST(test_time_backwards_within_cpu)
{
	const char *path = tmp_path("time.db");
	struct mcr_event evs[] = {
		ev_make(100, 0, 0, MCR_EV_STATE),
		ev_make(50, 1, 0, MCR_EV_STATE),	/* backwards across CPUs: fine */
		ev_make(100, 0, 1, MCR_EV_STATE),	/* equal within a CPU: fine */
		ev_make(60, 1, 1, MCR_EV_STATE),
		ev_make(99, 0, 2, MCR_EV_STATE),	/* backwards within CPU 0 */
		ev_make(200, 0, 3, MCR_EV_STATE),
	};
	struct mcr_event ev;
	struct db_iter *it;
	struct db *db;
	int i;

	ASSERT_EQ(make_db(path, 2, evs, 6), 0);
	ASSERT_EQ(db_open(path, false, &db), 0);
	ASSERT_EQ(db_iter_open(db, &it), 0);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(db_iter_next(it, &ev), 1);
	ASSERT_EQ(db_iter_next(it, &ev), -MCR_E_TIME);
	ASSERT_EQ(db_iter_next(it, &ev), -MCR_E_TIME);	/* sticky */
	db_iter_close(it);
	db_close(db);
}

static int iter_result(const char *path, int cpus, const struct mcr_event *evs, size_t n)
{
	struct mcr_event ev;
	struct db_iter *it;
	struct db *db;
	int r;

	if (make_db(path, cpus, evs, n) || db_open(path, false, &db))
		return -9999;
	if (db_iter_open(db, &it)) {
		db_close(db);
		return -9998;
	}
	while ((r = db_iter_next(it, &ev)) == 1)
		;
	db_iter_close(it);
	db_close(db);
	return r;
}

TEST(test_cpu_beyond_possible)
{
	const char *path = tmp_path("cpu.db");
	struct mcr_event ok[] = {
		ev_make(1, 0, 0, MCR_EV_LOCKED), ev_make(2, 1, 0, MCR_EV_UNLOCK),
		ev_make(3, 1, 1, MCR_EV_VISIT),
	};
	struct mcr_event bad_cpu[] = { ev_make(1, 0, 0, MCR_EV_STATE), ev_make(2, 2, 0, MCR_EV_STATE) };
	struct mcr_event bad_target = ev_make(1, 0, 0, MCR_EV_CONTENDED);
	struct mcr_event bad_visit = ev_make(1, 0, 0, MCR_EV_VISIT);
	struct db *db;

	ok[0].item = -1;	/* no target CPU */
	ok[1].item = 1;
	ok[2].item = 0;
	ASSERT_EQ(iter_result(path, 2, ok, 3), 0);
	ASSERT_EQ(iter_result(path, 2, bad_cpu, 2), -MCR_E_CPU);
	bad_target.item = 2;
	ASSERT_EQ(iter_result(path, 2, &bad_target, 1), -MCR_E_CPU);
	bad_visit.item = -2;
	ASSERT_EQ(iter_result(path, 2, &bad_visit, 1), -MCR_E_CPU);
	/* without nr_cpus_possible there is nothing to check against: refused at open */
	ASSERT_EQ(raw_exec(path, "DELETE FROM meta WHERE key = 'nr_cpus_possible'"), 0);
	ASSERT_EQ(db_open(path, false, &db), -MCR_E_BAD_INPUT);
}

/*
 * db_event_check()'s bounds, at each edge: a cgroup id in [1, 2^63), an
 * update's item in [0, 65535], a lock's target -1 or a possible CPU; the
 * item of a flush is not looked at.  Every refusal names the event.
 */
TEST(test_event_fields)
{
	const char *path = tmp_path("fields.db");
	struct mcr_event ok[] = {
		ev_make(1, 0, 0, MCR_EV_STATE), ev_make(2, 0, 1, MCR_EV_EVENTS),
		ev_make(3, 0, 2, MCR_EV_FLUSH), ev_make(4, 0, 3, MCR_EV_LOCKED),
		ev_make(5, 0, 4, MCR_EV_UNLOCK),
	};
	struct mcr_event bad = ev_make(7, 1, 5, MCR_EV_LRUVEC);
	struct mcr_event ev;
	struct db_iter *it;
	struct db *db;

	ok[0].item = 0;
	ok[1].item = 65535;
	ok[1].id = (uint64_t)INT64_MAX;
	ok[2].item = INT32_MIN;		/* unused by a flush */
	ok[3].item = -1;
	ok[4].item = 1;
	ASSERT_EQ(iter_result(path, 2, ok, 5), 0);
	bad.item = 65536;
	ASSERT_EQ(iter_result(path, 2, &bad, 1), -MCR_E_BAD_INPUT);
	bad.item = -1;
	ASSERT_EQ(iter_result(path, 2, &bad, 1), -MCR_E_BAD_INPUT);
	bad.item = 3;
	bad.id = 0;
	ASSERT_EQ(iter_result(path, 2, &bad, 1), -MCR_E_BAD_INPUT);
	bad.id = (uint64_t)INT64_MAX + 1;
	ASSERT_EQ(iter_result(path, 2, &bad, 1), -MCR_E_BAD_INPUT);
	bad.kind = MCR_EV_CONTENDED;
	bad.id = 1;
	bad.item = -2;
	ASSERT_EQ(iter_result(path, 2, &bad, 1), -MCR_E_CPU);
	bad.kind = MCR_EV_LRUVEC;
	bad.item = 70000;
	ASSERT_EQ(make_db(path, 2, &bad, 1), 0);
	ASSERT_EQ(db_open(path, false, &db), 0);
	ASSERT_EQ(db_iter_open(db, &it), 0);
	ASSERT_STR(db_why(db), "");
	ASSERT_EQ(db_iter_next(it, &ev), -MCR_E_BAD_INPUT);
	ASSERT_STR(db_why(db), "event cpu 1 seq 5 ts 7 (mod_memcg_lruvec_state): item 70000 out of "
		   "range [0, 65535]");
	db_iter_close(it);
	db_close(db);
}

/* iter_result() with meta's capture window [@start, @end] set before reading. */
static int iter_window(const char *path, const struct mcr_event *ev, const char *start,
		       const char *end, const char *clock)
{
	char sql[256];
	struct mcr_event e;
	struct db_iter *it;
	struct db *db;
	int r;

	snprintf(sql, sizeof(sql), "INSERT OR REPLACE INTO meta VALUES ('capture_start_ns', '%s'),"
		 " ('capture_end_ns', '%s'), ('trace_clock', '%s')", start, end, clock);
	if (make_db(path, 2, ev, 1) || raw_exec(path, sql) || db_open(path, false, &db))
		return -9999;
	r = db_iter_open(db, &it);
	if (!r) {
		while ((r = db_iter_next(it, &e)) == 1)
			;
		db_iter_close(it);
	}
	db_close(db);
	return r;
}

/*
 * db_event_check()'s val, ts and seq at each edge: an int for the state
 * updates, any 64 bits for count_memcg_events' unsigned long, stats_updates
 * never below 0; ts and seq below 2^63 and ts within a minute of meta's
 * capture window (when its clock counts ns).
 */
TEST(test_event_values)
{
	const char *path = tmp_path("values.db");
	struct mcr_event ok[] = {
		ev_make(1, 0, 0, MCR_EV_STATE), ev_make(2, 0, 1, MCR_EV_LRUVEC),
		ev_make(3, 0, 2, MCR_EV_EVENTS), ev_make(4, 0, 3, MCR_EV_EVENTS),
		ev_make(5, 0, 4, MCR_EV_FLUSH), ev_make(6, 0, 5, MCR_EV_FLUSH),
		ev_make(7, 0, 6, MCR_EV_MKDIR), ev_make(INT64_MAX, 0, INT64_MAX, MCR_EV_RMDIR),
	};
	struct mcr_event bad = ev_make(7, 1, 5, MCR_EV_LRUVEC);
	struct mcr_event ev;
	struct db_iter *it;
	struct db *db;

	ok[0].val = INT32_MIN;
	ok[1].val = INT32_MAX;
	ok[2].val = INT64_MIN;		/* an unsigned long of 2^63 */
	ok[3].val = -1;
	ok[4].val = 0;
	ok[5].val = INT64_MAX;
	ok[6].val = INT64_MIN;		/* unused */
	ASSERT_EQ(iter_result(path, 2, ok, 8), 0);
	bad.val = (int64_t)INT32_MAX + 1;
	ASSERT_EQ(iter_result(path, 2, &bad, 1), -MCR_E_BAD_INPUT);
	bad.val = (int64_t)INT32_MIN - 1;
	ASSERT_EQ(iter_result(path, 2, &bad, 1), -MCR_E_BAD_INPUT);
	bad.val = INT64_MAX;
	bad.kind = MCR_EV_STATE;
	ASSERT_EQ(iter_result(path, 2, &bad, 1), -MCR_E_BAD_INPUT);
	bad.kind = MCR_EV_FLUSH;
	bad.val = -1;
	ASSERT_EQ(iter_result(path, 2, &bad, 1), -MCR_E_BAD_INPUT);
	bad.val = 0;
	bad.ts = (uint64_t)INT64_MAX + 1;
	ASSERT_EQ(iter_result(path, 2, &bad, 1), -MCR_E_BAD_INPUT);
	bad.ts = 7;
	bad.seq = (uint64_t)INT64_MAX + 1;
	ASSERT_EQ(iter_result(path, 2, &bad, 1), -MCR_E_BAD_INPUT);

	/* the window [100 s, 200 s]: 40 s before it and 60 s after pass, a ns more does not */
	bad.seq = 5;
	bad.ts = 60000000000ULL;
	ASSERT_EQ(iter_window(path, &bad, "100000000000", "200000000000", "mono"), 0);
	bad.ts = 40000000000ULL - 1;
	ASSERT_EQ(iter_window(path, &bad, "100000000000", "200000000000", "mono"), -MCR_E_BAD_INPUT);
	bad.ts = 260000000000ULL;
	ASSERT_EQ(iter_window(path, &bad, "100000000000", "200000000000", "mono"), 0);
	bad.ts++;
	ASSERT_EQ(iter_window(path, &bad, "100000000000", "200000000000", "mono"), -MCR_E_BAD_INPUT);
	/* a window near 0 or 2^63 saturates; a clock that does not count ns has none */
	bad.ts = 0;
	ASSERT_EQ(iter_window(path, &bad, "5", "10", "mono"), 0);
	bad.ts = INT64_MAX;
	ASSERT_EQ(iter_window(path, &bad, "5", "9223372036854775000", "mono"), 0);
	ASSERT_EQ(iter_window(path, &bad, "5", "10", "x86-tsc"), 0);
	/* a window backwards or below 0 is refused when the file is opened */
	ASSERT_EQ(make_db(path, 2, &bad, 1), 0);
	ASSERT_EQ(raw_exec(path, "INSERT OR REPLACE INTO meta VALUES ('capture_start_ns', '10'),"
			   " ('capture_end_ns', '5')"), 0);
	ASSERT_EQ(db_open(path, false, &db), -MCR_E_BAD_INPUT);
	ASSERT_EQ(raw_exec(path, "INSERT OR REPLACE INTO meta VALUES ('capture_start_ns',"
			   " '-9223372036854775808'), ('capture_end_ns', '10')"), 0);
	ASSERT_EQ(db_open(path, false, &db), -MCR_E_BAD_INPUT);

	bad.ts = 4000000000000000000ULL;
	ASSERT_EQ(iter_window(path, &bad, "1000000000", "1500000000", "mono"), -MCR_E_BAD_INPUT);
	ASSERT_EQ(db_open(path, false, &db), 0);
	ASSERT_EQ(db_iter_open(db, &it), 0);
	ASSERT_EQ(db_iter_next(it, &ev), -MCR_E_BAD_INPUT);
	ASSERT_STR(db_why(db), "event cpu 1 seq 5 ts 4000000000000000000 (memcg_flush_stats): ts "
		   "more than 60 s outside the capture window [1000000000, 1500000000] of meta "
		   "capture_start_ns, capture_end_ns");
	db_iter_close(it);
	db_close(db);
	bad.kind = MCR_EV_LRUVEC;
	bad.ts = 7;
	bad.val = INT64_MAX;
	ASSERT_EQ(make_db(path, 2, &bad, 1), 0);
	ASSERT_EQ(db_open(path, false, &db), 0);
	ASSERT_EQ(db_iter_open(db, &it), 0);
	ASSERT_EQ(db_iter_next(it, &ev), -MCR_E_BAD_INPUT);
	ASSERT_STR(db_why(db), "event cpu 1 seq 5 ts 7 (mod_memcg_lruvec_state): val "
		   "9223372036854775807 out of range [-2147483648, 2147483647] (the tracepoint's int)");
	db_iter_close(it);
	db_close(db);
}

/*
 * Merge order: three CPUs whose chunks overlap in time, ties on ts, and more
 * than one chunk per CPU (DB_CHUNK_EVENTS + 100 events on CPU 0).  Replay
 * order is (ts, cpu), each CPU's own order kept: the events are appended in
 * exactly that order, so the reader must give them back as appended.  CPU 0
 * steps by 2 ns from 0, CPU 1 by 3 from 0, CPU 2 has every ts twice (equal
 * ts within one CPU stay in seq order).
 */
TEST(test_merge_order)
{
	const char *path = tmp_path("merge.db");
	enum { N0 = 65536 + 100, N1 = 40000, N2 = 30000 };
	struct mcr_event *evs = calloc(N0 + N1 + N2, sizeof(*evs)), ev;
	uint64_t i0 = 0, i1 = 0, i2 = 0, n = 0;
	struct db_iter *it;
	struct db *db;
	size_t k = 0;
	int r;

	ASSERT(evs != NULL);
	while (i0 < N0 || i1 < N1 || i2 < N2) {
		uint64_t t0 = i0 < N0 ? 2 * i0 : UINT64_MAX, t1 = i1 < N1 ? 3 * i1 : UINT64_MAX;
		uint64_t t2 = i2 < N2 ? i2 / 2 * 5 : UINT64_MAX;

		if (t0 <= t1 && t0 <= t2)
			evs[k] = ev_make(t0, 0, i0++, MCR_EV_STATE);
		else if (t1 <= t2)
			evs[k] = ev_make(t1, 1, i1++, MCR_EV_LRUVEC);
		else
			evs[k] = ev_make(t2, 2, i2++, MCR_EV_EVENTS);
		evs[k].val = (int64_t)k;
		k++;
	}
	ASSERT_EQ(make_db(path, 3, evs, k), 0);
	ASSERT_EQ(db_open(path, false, &db), 0);
	/* CPU 0 needed five chunks: 65636 events, 4 * 16384 + 100 */
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM event_chunks WHERE cpu = 0"),
		  (N0 + DB_CHUNK_V2_EVENTS - 1) / DB_CHUNK_V2_EVENTS);
	ASSERT_EQ(db_iter_open(db, &it), 0);
	while ((r = db_iter_next(it, &ev)) == 1 && n < k) {
		if (ev.val != (int64_t)n || ev.seq != evs[n].seq || ev.cpu != evs[n].cpu)
			break;
		n++;
	}
	ASSERT_EQ(r, 0);
	ASSERT_EQU(n, k);
	db_iter_close(it);
	/* a range: events 1000 <= ts <= 2000 of the same stream, in the same order */
	ASSERT_EQ(db_iter_open_range(db, 1000, 2000, &it), 0);
	n = 0;
	for (k = 0; k < N0 + N1 + N2; k++) {
		if (evs[k].ts < 1000 || evs[k].ts > 2000)
			continue;
		if (db_iter_next(it, &ev) != 1 || ev.val != (int64_t)k)
			break;
		n++;
	}
	ASSERT_EQ(db_iter_next(it, &ev), 0);
	/* 501 on CPU 0 (ts 1000..2000 step 2), 333 on CPU 1 (1002..1998 step 3), 2 * 201 on CPU 2 */
	ASSERT_EQU(n, 501 + 333 + 402);
	db_iter_close(it);
	db_close(db);
	free(evs);
}

/*
 * Replay order with more CPUs than the reader scans (it keeps a heap beyond
 * four): 12 of 13 possible CPUs (none on CPU 5), ts steps of 0-3 ns so that
 * equal ts within and across CPUs are common, CPUs that run out early (the
 * heap shrinks back to a scan) and one CPU of two chunks.  The expected order
 * is the definition, (ts, cpu) with each CPU's own order kept, found here by
 * taking the least head each time.
 */
/*
 * @cpus CPUs (one without events, the 13th with five chunks, the 2nd and
 * 10th with three at the same time) taking turns at random.  Up to 64 CPUs the merge uses packed keys, beyond them the heap.
 * aux, level and flags are the same within a chunk and differ between a
 * CPU's chunks: stored once a chunk (width 0), and written into the reader's
 * buffers where it holds the events of the chunk before.
 */
static void merge_many(struct test_ctx *t, int cpus, const char *name)
{
	const char *path = tmp_path(name);
	enum { CPUS_MAX = 80 };
	uint64_t len[CPUS_MAX], next[CPUS_MAX] = { 0 }, ts[CPUS_MAX] = { 0 };
	uint64_t x = 88172645463325252ULL;
	uint64_t total = 0, n = 0;
	struct mcr_event *evs, ev;
	struct db_iter *it;
	struct db *db;
	size_t k = 0;
	int c, r;

	ASSERT(cpus <= CPUS_MAX);
	for (c = 0; c < cpus; c++) {
		len[c] = c == 5 ? 0 : c == 12 ? 65536 + 10 : c == 1 || c == 9 ? 35000 :
			 1000 + 3000 * (uint64_t)(c % 4);
		total += len[c];
	}
	evs = calloc(total, sizeof(*evs));
	ASSERT(evs != NULL);
	while (k < total) {
		int best = -1;

		for (c = 0; c < cpus; c++)
			if (next[c] < len[c] && (best < 0 || ts[c] < ts[best]))
				best = c;
		evs[k] = ev_make(ts[best], best, next[best], MCR_EV_STATE);
		evs[k].val = (int64_t)k;
		evs[k].aux = best * 10 + (int32_t)(next[best] / DB_CHUNK_V2_EVENTS);
		evs[k].level = (int16_t)(next[best] / DB_CHUNK_V2_EVENTS);
		evs[k].flags = (uint8_t)(1 + next[best]++ / DB_CHUNK_V2_EVENTS);
		k++;
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		ts[best] += x % 4;
	}
	ASSERT_EQ(make_db(path, cpus, evs, k), 0);
	ASSERT_EQ(db_open(path, false, &db), 0);
	/* 65546 events: 4 * 16384 + 10 */
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM event_chunks WHERE cpu = 12"), 5);
	ASSERT_EQ(db_iter_open(db, &it), 0);
	while ((r = db_iter_next(it, &ev)) == 1 && n < k) {
		if (!ev_same(&ev, &evs[n]))
			break;
		n++;
	}
	ASSERT_EQ(r, 0);
	ASSERT_EQU(n, k);
	db_iter_close(it);
	/* the same through db_iter_next_batch(), every third batch taken by db_iter_next() */
	ASSERT_EQ(db_iter_open(db, &it), 0);
	for (n = 0, c = 0; n < k; c++) {
		const struct mcr_event *one = &ev, *const *b = &one;
		int i;

		r = c % 3 == 2 ? db_iter_next(it, &ev) : db_iter_next_batch(it, &b);
		if (r < 1)
			break;
		for (i = 0; i < r && n < k; i++, n++)
			if (!ev_same(b[i], &evs[n]))
				break;
		if (i < r)
			break;
	}
	ASSERT_EQU(n, k);
	ASSERT_EQ(db_iter_next_batch(it, &(const struct mcr_event *const *){ NULL }), 0);
	db_iter_close(it);
	db_close(db);
	free(evs);
}

/* The chunk buffers of @db held by an iterator (@held), or kept at all. */
static size_t chunk_bufs(const struct db *db, bool held)
{
	const struct db_chunk_buf *b;
	size_t n = 0;

	for (b = db->chunk_bufs; b; b = b->next)
		n += !held || b->refs;
	return n;
}

static bool next_is(struct db_iter *it, const struct mcr_event *want)
{
	struct mcr_event ev;

	return db_iter_next(it, &ev) == 1 && ev_same(&ev, want);
}

/*
 * Two iterators of one connection at once, as replay's pass and its second
 * reader (the prepass's, validate's inference's): each gets every event in
 * order whether they go in step, one far ahead of the other, or one closed
 * midway; a chunk both are in is decompressed once and held by both (struct
 * db_chunk_buf).  In step, the chunks held after each pair of reads are at
 * most one a CPU (two iterators of their own would hold two), and fewer
 * than two a CPU are kept at any time; none is kept once both are closed;
 * and a chunk that does not decompress fails for both.  Six CPUs at random,
 * chunks of at most 700 events (5 to 12 a CPU), store version @version.
 */
static void shared_chunks(struct test_ctx *t, int version, const char *name)
{
	enum { CPUS = 6, N = 30000 };
	const char *path = tmp_path(name);
	struct mcr_event *evs = calloc(N, sizeof(*evs)), ev;
	uint64_t x = 88172645463325252ULL, ts = 0, seq[CPUS] = { 0 };
	struct db_iter *a, *b;
	size_t k, n, most = 0;
	struct db *db;

	ASSERT(evs != NULL);
	for (k = 0; k < N; k++) {
		int cpu;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		cpu = (int)(x % CPUS);
		ts += 1 + x % 3;	/* the merge's order is (ts, cpu): one ts an event */
		evs[k] = ev_make(ts, cpu, seq[cpu]++, MCR_EV_STATE);
		evs[k].val = (int64_t)k;
	}
	chunk_limit = 700;
	ASSERT_EQ(make_db_version(path, CPUS, evs, N, version), 0);
	chunk_limit = 0;
	ASSERT_EQ(db_open(path, false, &db), 0);
	ASSERT(query_int(db, "SELECT count(*) FROM event_chunks") >= 5 * CPUS);

	/* in step */
	ASSERT_EQ(db_iter_open(db, &a), 0);
	ASSERT_EQ(db_iter_open(db, &b), 0);
	for (n = 0; n < N && next_is(a, &evs[n]) && next_is(b, &evs[n]); n++) {
		most = chunk_bufs(db, true) > most ? chunk_bufs(db, true) : most;
		/* and those let go of are taken by the next chunks opened */
		if (chunk_bufs(db, false) > 2 * CPUS - 1)
			break;
	}
	ASSERT_EQU(n, N);
	ASSERT(most >= 1 && most <= CPUS);
	ASSERT_EQ(db_iter_next(a, &ev), 0);
	ASSERT_EQ(db_iter_next(b, &ev), 0);
	db_iter_close(a);
	db_iter_close(b);
	ASSERT_EQU(chunk_bufs(db, false), 0);

	/* one half the trace ahead, then in step until it ends */
	ASSERT_EQ(db_iter_open(db, &a), 0);
	ASSERT_EQ(db_iter_open(db, &b), 0);
	for (n = 0; n < N / 2 && next_is(a, &evs[n]); n++)
		;
	ASSERT_EQU(n, N / 2);
	for (k = 0; k < N && next_is(b, &evs[k]) && (n == N || next_is(a, &evs[n++])); k++)
		;
	ASSERT_EQU(k, N);
	ASSERT_EQU(n, N);
	db_iter_close(b);
	db_iter_close(a);

	/* the one ahead closed midway: the other reads on from the chunks they shared */
	ASSERT_EQ(db_iter_open(db, &a), 0);
	ASSERT_EQ(db_iter_open(db, &b), 0);
	for (n = 0; n < 5000 && next_is(a, &evs[n]); n++)
		;
	for (k = 0; k < 2000 && next_is(b, &evs[k]); k++)
		;
	ASSERT_EQU(n + k, 7000);
	db_iter_close(a);
	for (; k < N && next_is(b, &evs[k]); k++)
		;
	ASSERT_EQU(k, N);
	db_iter_close(b);
	ASSERT_EQU(chunk_bufs(db, false), 0);
	db_close(db);

	/* CPU 3's fourth chunk damaged: both iterators fail there */
	ASSERT_EQ(raw_exec(path, "UPDATE event_chunks SET data = randomblob(length(data)) "
			   "WHERE rowid = (SELECT rowid FROM event_chunks WHERE cpu = 3 "
			   "ORDER BY first_ts LIMIT 1 OFFSET 3)"), 0);
	ASSERT_EQ(db_open(path, false, &db), 0);
	ASSERT_EQ(db_iter_open(db, &a), 0);
	ASSERT_EQ(db_iter_open(db, &b), 0);
	for (n = 0; n < N && next_is(a, &evs[n]) && next_is(b, &evs[n]); n++)
		;
	ASSERT(n < N);
	ASSERT(db_iter_next(a, &ev) < 0 || db_iter_next(b, &ev) < 0);
	ASSERT(db_iter_next(a, &ev) < 0);
	ASSERT(db_iter_next(b, &ev) < 0);
	db_iter_close(a);
	db_iter_close(b);
	ASSERT_EQU(chunk_bufs(db, false), 0);
	db_close(db);
	free(evs);
}

TEST(test_iter_shared_chunks)
{
	shared_chunks(t, DB_STORE_V2, "shared_v2.db");
	if (!t->failed)
		shared_chunks(t, DB_STORE_V1, "shared_v1.db");
}

TEST(test_merge_order_many_cpus)
{
	merge_many(t, 13, "merge_many.db");
	if (!t->failed)
		merge_many(t, 70, "merge_70.db");
}

/*
 * db_keys_merge() on its own, against the keys in order: 1 to 64 runs, runs
 * of one key, odd and even totals, pairs of unequal lengths, keys next to the
 * sentinels and keys one apart.
 */
TEST(test_keys_merge)
{
	enum { MAX_RUNS = 64, MAX_LEN = 40 };
	static uint64_t sorted[MAX_RUNS * MAX_LEN];
	static uint64_t a[MAX_RUNS * (MAX_LEN + 2)], tmp[MAX_RUNS * (MAX_LEN + 2)];
	static uint8_t label[MAX_RUNS * MAX_LEN];
	uint32_t len[MAX_RUNS], fill[MAX_RUNS];
	unsigned int round;

	srand(11);
	for (round = 0; round < 3000; round++) {
		unsigned int nr = 1 + round % MAX_RUNS, r;
		uint32_t total = 0, i, step = round % 5 ? 1000 : 1;
		uint64_t lo, *m, *p;

		for (r = 0; r < nr; r++) {
			len[r] = 1 + rand() % (round % 3 ? MAX_LEN : 2);
			for (i = 0; i < len[r]; i++)
				label[total + i] = (uint8_t)r;
			total += len[r];
		}
		/* which run each key in order goes to: a shuffle of the labels */
		for (i = total - 1; i > 0; i--) {
			uint32_t j = rand() % (i + 1);
			uint8_t l = label[i];

			label[i] = label[j];
			label[j] = l;
		}
		lo = round & 1 ? UINT64_MAX - 1 - (uint64_t)total * step : 1;
		for (i = 0; i < total; i++)
			sorted[i] = lo + (uint64_t)i * step + (uint64_t)rand() % step;
		if (round & 1)
			sorted[total - 1] = UINT64_MAX - 1;
		else
			sorted[0] = 1;
		for (r = 0, p = a; r < nr; r++) {
			fill[r] = 0;
			p[0] = 0;
			p[len[r] + 1] = UINT64_MAX;
			p += len[r] + 2;
		}
		for (i = 0; i < total; i++) {
			uint32_t at = label[i];

			for (r = 0, p = a; r < at; r++)
				p += len[r] + 2;
			p[1 + fill[at]++] = sorted[i];
		}
		m = db_keys_merge(a, tmp, len, nr);
		ASSERT(m == a || m == tmp);
		ASSERT_EQU(len[0], total);
		ASSERT_EQU(m[0], 0);
		ASSERT_EQU(m[total + 1], UINT64_MAX);
		for (i = 0; i < total; i++)
			if (m[1 + i] != sorted[i])
				FAILF("round %u, %u runs: key %u is %" PRIu64 ", not %" PRIu64,
				      round, nr, i, m[1 + i], sorted[i]);
	}
}

/*
 * While iterators are open, SQLite's page cache keeps 64 KiB of pages (the
 * BLOBs pass through it) and spills dirty pages at 256 KiB: more than 64
 * KiB's, less than before; the last iterator closed puts both back.
 */
TEST(test_iter_page_cache)
{
	const char *path = tmp_path("cache.db");
	struct mcr_event evs[2] = { ev_make(1, 0, 0, MCR_EV_STATE), ev_make(2, 1, 0, MCR_EV_STATE) };
	struct db_iter *a, *b;
	int64_t size, spill, open_spill;
	struct db *db;

	ASSERT_EQ(make_db(path, 2, evs, 2), 0);
	ASSERT_EQ(db_open(path, false, &db), 0);
	size = query_int(db, "PRAGMA cache_size");
	spill = query_int(db, "PRAGMA cache_spill");
	ASSERT(size != -64 && spill > 16);
	ASSERT_EQ(db_iter_open(db, &a), 0);
	ASSERT_EQ(query_int(db, "PRAGMA cache_size"), -64);
	open_spill = query_int(db, "PRAGMA cache_spill");
	ASSERT(open_spill > 16 && open_spill * 4096 <= 256 << 10);
	ASSERT_EQ(db_iter_open(db, &b), 0);
	db_iter_close(a);
	ASSERT_EQ(query_int(db, "PRAGMA cache_size"), -64);
	ASSERT_EQ(query_int(db, "PRAGMA cache_spill"), open_spill);
	db_iter_close(b);
	ASSERT_EQ(query_int(db, "PRAGMA cache_size"), size);
	ASSERT_EQ(query_int(db, "PRAGMA cache_spill"), spill);
	db_close(db);
}

/*
 * What is written in one transaction while an iterator is open (replay's
 * reads, read_errors and episodes during its pass) does not stay in
 * memory: 4 MB of rows leave at most the spill size's pages in SQLite's
 * cache.  Those pages spilled only at the size of the cache before the
 * iterator (SQLite's default, 2000 KiB): the replay's peak grew with the
 * trace's length until there.
 */
TEST(test_iter_write_spills)
{
	const char *path = tmp_path("spill.db");
	struct mcr_event evs[2] = { ev_make(1, 0, 0, MCR_EV_STATE), ev_make(2, 1, 0, MCR_EV_STATE) };
	int cur = 0, hi = 0;
	struct db_iter *it;
	struct db *db;

	ASSERT_EQ(make_db(path, 2, evs, 2), 0);
	ASSERT_EQ(db_open(path, true, &db), 0);
	ASSERT_EQ(db_exec(db, "CREATE TABLE w (k INTEGER PRIMARY KEY, v BLOB)"), 0);
	ASSERT_EQ(db_begin(db), 0);
	ASSERT_EQ(db_iter_open(db, &it), 0);
	ASSERT_EQ(db_exec(db, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n"
			  " WHERE i < 40000) INSERT INTO w SELECT i, zeroblob(100) FROM n"), 0);
	ASSERT_EQ(sqlite3_db_status(db->sql, SQLITE_DBSTATUS_CACHE_USED, &cur, &hi, 0), SQLITE_OK);
	if (cur > 512 << 10)
		FAILF("%d bytes of SQLite's page cache after 4 MB written", cur);
	db_iter_close(it);
	ASSERT_EQ(db_commit(db), 0);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM w"), 40000);
	db_close(db);
}

/*
 * An iterator holds a read transaction while it is open: another connection
 * cannot commit a write into a file in rollback-journal mode until it is
 * closed (the chunks it reads are those its index named), and the lock is
 * not dropped and taken again between chunks.
 */
TEST(test_iter_read_transaction)
{
	const char *path = tmp_path("hold.db");
	struct mcr_event evs[2] = { ev_make(1, 0, 0, MCR_EV_STATE), ev_make(2, 1, 0, MCR_EV_STATE) };
	struct mcr_event ev;
	struct db_iter *it;
	struct db *db;
	sqlite3 *w;

	ASSERT_EQ(make_db(path, 2, evs, 2), 0);
	ASSERT_EQ(db_open(path, false, &db), 0);
	ASSERT_EQ(sqlite3_open(path, &w), SQLITE_OK);
	ASSERT_EQ(sqlite3_exec(w, "INSERT INTO meta VALUES ('x', 1)", NULL, NULL, NULL), SQLITE_OK);
	ASSERT_EQ(db_iter_open(db, &it), 0);
	ASSERT_EQ(db_iter_next(it, &ev), 1);
	ASSERT_EQ(sqlite3_exec(w, "INSERT INTO meta VALUES ('y', 1)", NULL, NULL, NULL), SQLITE_BUSY);
	ASSERT_EQ(db_iter_next(it, &ev), 1);
	ASSERT_EQ(db_iter_next(it, &ev), 0);
	ASSERT_EQ(sqlite3_exec(w, "INSERT INTO meta VALUES ('y', 1)", NULL, NULL, NULL), SQLITE_BUSY);
	db_iter_close(it);
	ASSERT_EQ(sqlite3_exec(w, "INSERT INTO meta VALUES ('y', 1)", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(w);
	db_close(db);
}

/*
 * The chunk index read a window of DB_ITER_WINDOW (32) rows per CPU at a
 * time: in chunks of 3 events, CPU 0 has 67 chunks (200 events: two full
 * windows and a third of 3), CPU 1 exactly 32 (96 events: one full window,
 * then none), CPU 2 three and CPU 3 none.  Every CPU steps by 3 ns from its
 * own start (0, 1, 2), so the stream is (ts, cpu) order as appended, in
 * both store versions, whole and in a range that starts inside CPU 0's
 * second window (chunk 40 holds its ts 360, 363, 366).
 */
TEST(test_index_windows)
{
	const char *path = tmp_path("windows.db");
	enum { N0 = 200, N1 = 96, N2 = 9 };
	struct mcr_event evs[N0 + N1 + N2], ev;
	uint64_t i0 = 0, i1 = 0, i2 = 0;
	struct db_iter *it;
	struct db *db;
	size_t k = 0, n;
	int v;

	while (i0 < N0 || i1 < N1 || i2 < N2) {
		uint64_t t0 = i0 < N0 ? 3 * i0 : UINT64_MAX, t1 = i1 < N1 ? 3 * i1 + 1 : UINT64_MAX;
		uint64_t t2 = i2 < N2 ? 3 * i2 + 2 : UINT64_MAX;

		if (t0 <= t1 && t0 <= t2)
			evs[k] = ev_make(t0, 0, i0++, MCR_EV_STATE);
		else if (t1 <= t2)
			evs[k] = ev_make(t1, 1, i1++, MCR_EV_STATE);
		else
			evs[k] = ev_make(t2, 2, i2++, MCR_EV_STATE);
		k++;
	}
	chunk_limit = 3;
	for (v = DB_STORE_V1; v <= DB_STORE_V2; v++) {
		ASSERT_EQ(make_db_version(path, 4, evs, k, v), 0);
		ASSERT_EQ(read_same(path, evs, k), (int64_t)k);
		ASSERT_EQ(db_open(path, false, &db), 0);
		ASSERT_EQ(query_int(db, "SELECT count(*) FROM event_chunks WHERE cpu = 0"), 67);
		ASSERT_EQ(query_int(db, "SELECT count(*) FROM event_chunks WHERE cpu = 1"), 32);
		ASSERT_EQ(db_iter_open_range(db, 361, 600, &it), 0);
		n = 0;
		for (size_t q = 0; q < k; q++) {
			if (evs[q].ts < 361 || evs[q].ts > 600)
				continue;
			if (db_iter_next(it, &ev) != 1 || !ev_same(&ev, &evs[q]))
				break;
			n++;
		}
		ASSERT_EQ(db_iter_next(it, &ev), 0);
		/* CPU 0: 363..597 (79), nothing of CPU 1 (its last is 286) or CPU 2 (26) */
		ASSERT_EQU(n, 79);
		db_iter_close(it);
		db_close(db);
	}
	chunk_limit = 0;
}

/*
 * A CPU whose chunks, in insertion order, do not start in time order: CPU
 * 0's 41st chunk (of 2 events) steps back from 158 to 10, after 40 chunks
 * of 0, 2, .., 158; CPU 1 has 1, 3, .., 99 in 25 chunks.  The index's
 * order (cpu, first_ts) is not the chunks' then: the windows are read in
 * chunk order, and the 130 events up to 158 come out in (ts, cpu) order
 * before -MCR_E_TIME, in both store versions.
 */
TEST(test_index_out_of_order)
{
	const char *path = tmp_path("unordered.db");
	enum { N0 = 80, N1 = 50 };
	struct mcr_event evs[N0 + N1 + 2], ev;
	uint64_t i0 = 0, i1 = 0;
	struct db_iter *it;
	struct db *db;
	size_t k = 0, n;
	int v, r;

	while (i0 < N0 || i1 < N1) {
		uint64_t t0 = i0 < N0 ? 2 * i0 : UINT64_MAX, t1 = i1 < N1 ? 2 * i1 + 1 : UINT64_MAX;

		if (t0 <= t1)
			evs[k] = ev_make(t0, 0, i0++, MCR_EV_STATE);
		else
			evs[k] = ev_make(t1, 1, i1++, MCR_EV_STATE);
		k++;
	}
	evs[k++] = ev_make(10, 0, N0, MCR_EV_STATE);
	evs[k++] = ev_make(12, 0, N0 + 1, MCR_EV_STATE);
	chunk_limit = 2;
	for (v = DB_STORE_V1; v <= DB_STORE_V2; v++) {
		ASSERT_EQ(make_db_version(path, 2, evs, k, v), 0);
		ASSERT_EQ(db_open(path, false, &db), 0);
		ASSERT_EQ(query_int(db, "SELECT count(*) FROM event_chunks WHERE cpu = 0"), 41);
		ASSERT_EQ(db_iter_open(db, &it), 0);
		n = 0;
		while ((r = db_iter_next(it, &ev)) == 1 && n < N0 + N1 && ev_same(&ev, &evs[n]))
			n++;
		ASSERT_EQ(r, -MCR_E_TIME);
		ASSERT_EQU(n, N0 + N1);
		db_iter_close(it);
		db_close(db);
	}
	chunk_limit = 0;
}

TEST_MAIN(test_iter_page_cache, test_iter_shared_chunks, test_iter_write_spills,
	  test_iter_read_transaction, test_merge_order,
	  test_merge_order_many_cpus, test_keys_merge, test_time_backwards_within_cpu,
	  test_cpu_beyond_possible, test_event_fields, test_event_values, test_index_windows,
	  test_index_out_of_order)
