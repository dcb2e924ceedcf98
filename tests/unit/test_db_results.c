// SPDX-License-Identifier: GPL-2.0
/*
 * test_db_results.c - the result tables replay writes into the database:
 * written while the events are read, the lag report, the rows held and
 * inserted in key order (spilled to a file past the memory limit), and the
 * tables created on demand in an older file.
 */
#include "db_fixture.h"
#include "calib.h"
#include "db_local.h"
#include "results_local.h"

/* Replay's pattern: stream the events and commit results on the same handle. */
TEST(test_results_while_iterating)
{
	static struct mcr_event evs[RT_N];
	const char *path = tmp_path("rt.db");
	struct mcr_event ev;
	struct db_iter *it;
	struct db *db;
	int n = 0, r;

	rt_events(evs);
	ASSERT_EQ(make_db(path, 4, evs, RT_N), 0);
	ASSERT_EQ(db_open(path, true, &db), 0);
	ASSERT_EQ(db_iter_open(db, &it), 0);
	while ((r = db_iter_next(it, &ev)) == 1) {
		if (++n % 500)
			continue;
		if (db_begin(db) || sqlite3_exec(db_sqlite(db), "INSERT INTO runs (kind, policy)"
						 " VALUES ('replay', 'x')", NULL, NULL, NULL) || db_commit(db))
			break;
	}
	db_iter_close(it);
	ASSERT_EQ(r, 0);
	ASSERT_EQ(n, RT_N);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM runs"), RT_N / 500);
	ASSERT_EQ(db_close(db), 0);
}

TEST(test_results_and_lag_report)
{
	const char *path = tmp_path("results.db");
	struct db_cgroup root = { .id = 1, .path = "/", .created_ts = -1, .removed_ts = -1 };
	struct db_cgroup leaf = { .id = 9, .parent = 1, .path = "/x", .level = 1, .created_ts = -1,
				  .removed_ts = -1 };
	sqlite3 *s;
	struct db *db;

	ASSERT_EQ(make_db(path, 1, NULL, 0), 0);
	ASSERT_EQ(db_open(path, true, &db), 0);
	ASSERT_EQ(db_cgroup_put(db, &root), 0);
	ASSERT_EQ(db_cgroup_put(db, &leaf), 0);
	ASSERT_EQ(db_item_put(db, MCR_EV_LRUVEC, 5, "NR_FILE_PAGES", "pages"), 0);
	ASSERT_EQ(db_item_put(db, MCR_EV_EVENTS, 7, "PGFAULT", "events"), 0);
	s = db_sqlite(db);
	ASSERT_EQ(db_begin(db), 0);
	/*
	 * run 1 is superseded by run 3 (same policy and flush model).  Run 3: the
	 * root has a page line (state 5, named by its lruvec twin), an event line
	 * and an unnamed line 9; its worst is the page line with the larger
	 * max_read_error (state 9: 700 > 500), events never win over pages.
	 */
	ASSERT_EQ(sqlite3_exec(s,
		"INSERT INTO runs (run_id, kind, policy, flush_model) VALUES"
		" (1, 'replay', 'break', 'window'), (2, 'replay', 'continue', 'window'),"
		" (3, 'replay', 'break', 'window'), (4, 'validate', 'break', 'window');"
		"INSERT INTO cgroup_summary (run_id, cgroup_id, reads, flushed_reads, stale_reads,"
		" stranded_ms, stranded_episodes, max_pending) VALUES"
		" (1, 1, 5, 5, 0, 0, 0, 10), (2, 1, 5, 5, 0, 0, 0, 20), (3, 1, 99, 0, 19, 9800, 5, 4096),"
		" (3, 9, 3, 3, 0, 0, 0, 1), (3, 4242, 0, 0, 0, 0, 0, 1), (4, 1, 1, 1, 1, 1, 1, 1);"
		"INSERT INTO item_summary (run_id, cgroup_id, kind, item, max_read_error,"
		" p99_read_error, mean_read_error, max_visible_error, mean_visible_error,"
		" max_error_age_ms) VALUES"
		" (1, 1, 1, 5, 111, 0, 0, 0, 0, 0), (2, 1, 1, 5, 300, 0, 0, 0, 0, 0),"
		" (3, 1, 1, 5, 500, 400, 10, 600, 5, 9), (3, 1, 3, 7, 100000, 0, 0, 0, 0, 0),"
		" (3, 1, 1, 9, 700, 0, 0, 0, 0, 0), (3, 9, 1, 5, 5, 0, 0, 0, 0, 0),"
		" (3, 4242, 1, 5, 7, 0, 0, 0, 0, 0), (4, 1, 1, 5, 1, 1, 1, 1, 1, 1);",
		NULL, NULL, NULL), SQLITE_OK);
	ASSERT_EQ(db_commit(db), 0);
	/* latest replay runs 2 and 3: 1 + 3 + 1 + 1 rows */
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM lag_report"), 6);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM lag_report_all"), 7);
	ASSERT_EQ(query_int(db, "SELECT max_read_error FROM lag_report"
			    " WHERE policy = 'break' AND cgroup = '/' AND item = 'NR_FILE_PAGES'"), 500);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM lag_report WHERE item = 'PGFAULT'"
			    " AND unit = 'events' AND max_read_error = 100000"), 1);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM lag_report WHERE item = 'state:9'"
			    " AND unit = 'pages'"), 1);
	ASSERT_EQ(query_int(db, "SELECT stale_reads FROM lag_report WHERE cgroup = '/' AND run_id = 3"
			    " AND item = 'PGFAULT'"), 19);
	ASSERT_EQ(query_int(db, "SELECT level FROM lag_report WHERE cgroup = '/x'"), 1);
	ASSERT_EQ(query_int(db, "SELECT max_read_error FROM lag_report WHERE cgroup = '#4242'"), 7);
	/* one row per (run, cgroup): runs 2 and 3, root, /x, #4242 */
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM cgroup_lag_report"), 4);
	ASSERT_EQ(query_int(db, "SELECT max_read_error FROM cgroup_lag_report WHERE run_id = 3"
			    " AND cgroup = '/'"), 700);
	ASSERT_EQ(query_int(db, "SELECT stranded_episodes FROM cgroup_lag_report WHERE run_id = 3"
			    " AND cgroup = '/'"), 5);
	ASSERT_EQ(db_begin(db), 0);
	ASSERT_EQ(sqlite3_exec(s, "INSERT INTO runs (run_id, kind, policy) VALUES (5, 'replay', 'x')",
			       NULL, NULL, NULL), SQLITE_OK);
	ASSERT_EQ(db_rollback(db), 0);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM runs"), 4);
	db_close(db);
}

/* A database with one replay run open for results, and its writer. */
static int results_open(const char *path, struct db **db, int64_t *run_id, struct db_results **w)
{
	int ret = make_db(path, 1, NULL, 0);

	ret = ret ?: db_open(path, true, db);
	ret = ret ?: db_begin(*db);
	ret = ret ?: db_run_add(*db, &(struct db_run){ .kind = "replay", .policy = "break",
						     .flush_model = "spread", .file = "f",
						     .policies = "break" }, run_id);
	return ret ?: db_results_open(*db, w);
}

/*
 * series and cgroup_series rows are held and inserted in key order in bulk:
 * rows added as a pass makes them (every key at one ts, then the next ts),
 * none in before db_results_flush(), all in by it, each with its own
 * values; a duplicate key shows there.
 */
#define HELD_KEYS	1000
#define HELD_TS		300
TEST(test_results_held_rows)
{
	const char *path = tmp_path("held.db");
	struct db_results *w;
	struct db *db;
	int64_t run_id;
	int c, k;

	ASSERT_EQ(results_open(path, &db, &run_id, &w), 0);
	for (k = 0; k < HELD_TS; k++)
		for (c = 0; c < HELD_KEYS; c++) {
			struct db_series sr = {
				.run_id = run_id, .cgroup_id = (uint64_t)c + 1, .ts = (uint64_t)k * 50,
				.error = c * 1000 + k, .min_error = -k, .max_error = c,
				.kind = 1, .item = 5,
			};
			struct db_cgroup_sample cs = {
				.run_id = run_id, .cgroup_id = (uint64_t)c + 1,
				.ts = (uint64_t)k * 50, .pending = (uint64_t)k, .stats_updates = c,
			};

			ASSERT_EQ(db_series_add(w, &sr), 0);
			ASSERT_EQ(db_cgroup_sample_add(w, &cs), 0);
		}
	/* held: none is in yet */
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM series"), 0);
	ASSERT_EQ(db_results_flush(w), 0);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM series"), HELD_KEYS * HELD_TS);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM cgroup_series"), HELD_KEYS * HELD_TS);
	/* sum of c * 1000 + k over c < 1000, k < 300: 300 * 1000 * 499500 + 1000 * 44850 */
	ASSERT_EQ(query_int(db, "SELECT sum(error) FROM series"), 149894850000LL);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM series WHERE error = (cgroup_id - 1) * 1000"
			    " + ts / 50 AND min_error = -(ts / 50) AND max_error = cgroup_id - 1"),
		  HELD_KEYS * HELD_TS);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM cgroup_series WHERE pending = ts / 50"
			    " AND stats_updates = cgroup_id - 1"), HELD_KEYS * HELD_TS);
	/* the same key again: refused at the flush */
	ASSERT_EQ(db_series_add(w, &(struct db_series){ .run_id = run_id, .cgroup_id = 1,
							.kind = 1, .item = 5 }), 0);
	ASSERT(db_results_flush(w) < 0);
	db_results_close(w);
	ASSERT_EQ(db_rollback(db), 0);
	db_close(db);
}

/*
 * More held rows than memory keeps (8 MiB encoded: these values take about
 * 22 bytes a row) go out to a temporary file and come back, in order, every
 * value whole.
 */
#define SPILL_TS	500
TEST(test_results_spill)
{
	const char *path = tmp_path("spill.db");
	struct db_results *w;
	struct db *db;
	int64_t run_id;
	int c, k;

	ASSERT_EQ(results_open(path, &db, &run_id, &w), 0);
	for (k = 0; k < SPILL_TS; k++)
		for (c = 0; c < HELD_KEYS; c++) {
			int64_t e = ((int64_t)c * 1000003 + (int64_t)k * 7919) % 1000000007 *
				    9000000000LL;
			struct db_series sr = {
				.run_id = run_id, .cgroup_id = (uint64_t)c + 1, .ts = (uint64_t)k * 50,
				.error = e, .min_error = -e, .max_error = k, .kind = 3, .item = c % 7,
			};

			ASSERT_EQ(db_series_add(w, &sr), 0);
		}
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM series"), 0);
	ASSERT_EQ(db_results_flush(w), 0);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM series WHERE error = ((cgroup_id - 1) *"
			    " 1000003 + ts / 50 * 7919) % 1000000007 * 9000000000 AND min_error ="
			    " -error AND max_error = ts / 50 AND item = (cgroup_id - 1) % 7"),
		  HELD_KEYS * SPILL_TS);
	db_results_close(w);
	ASSERT_EQ(db_rollback(db), 0);
	db_close(db);
}

/*
 * However many runs the spill file gets (a run per DB_HELD_BYTES of rows,
 * so as many as the trace is long), the insert reads at most @ways of them
 * at once (0: DB_HELD_WAYS), a buffer each: memory does not grow with the
 * trace.  Here a tiny limit (@limit bytes) makes hundreds of runs: merged
 * in two rounds with 16 ways, in one with the default; the rows come back
 * in key order, every value whole, new lines joining late too.
 */
#define WAYS_KEYS	300
#define WAYS_TS		400
static void spill_ways(struct test_ctx *t, size_t ways, size_t limit, int rounds,
		       const char *name)
{
	const char *path = tmp_path(name);
	const char *one = "INSERT INTO series_lines (run_id, cgroup_id, kind, item, ts, step, rows)"
			  " VALUES (?,?,?,?,?,?,?)";
	struct db_results *w;
	struct held h = { .keys = 4, .cols = 4, .spill = -1, .limit = limit, .ways = ways };
	size_t max = ways ? ways : DB_HELD_WAYS, runs;
	struct db *db;
	int64_t run_id;
	int c, k;

	ASSERT_EQ(results_open(path, &db, &run_id, &w), 0);
	ASSERT_EQ(db_prepare(db, one, &h.piece), 0);
	for (k = 0; k < WAYS_TS; k++)
		for (c = 0; c < WAYS_KEYS; c++) {
			/* a third of the lines join halfway */
			const int64_t key[4] = { run_id, c + 1, 1, c % 3 == 2 && k < WAYS_TS / 2 ?
						 -1 : c % 5 };
			const uint64_t v[4] = { (uint64_t)k * 50, (uint64_t)(c * 1000 + k) * 7919,
						(uint64_t)-k, (uint64_t)c };

			if (key[3] < 0)
				continue;
			ASSERT_EQ(db_held_add(&h, key, v), 0);
		}
	runs = h.nr_runs;
	/* more than one round of groups needs more than max * max runs */
	ASSERT(runs > max && (rounds == 1 ? runs <= max * max : runs > max * max));
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM series"), 0);
	ASSERT_EQ(db_held_insert(&h), 0);
	ASSERT(h.ways_max <= max);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM series"),
		  WAYS_KEYS * WAYS_TS - WAYS_KEYS / 3 * WAYS_TS / 2);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM series WHERE error = ((cgroup_id - 1) * 1000"
			    " + ts / 50) * 7919 AND min_error = -(ts / 50) AND max_error ="
			    " cgroup_id - 1 AND item = (cgroup_id - 1) % 5"),
		  WAYS_KEYS * WAYS_TS - WAYS_KEYS / 3 * WAYS_TS / 2);
	sqlite3_finalize(h.piece);
	db_results_close(w);
	ASSERT_EQ(db_rollback(db), 0);
	db_close(db);
}

TEST(test_results_spill_ways)
{
	spill_ways(t, 16, 1024, 2, "ways16.db");
	if (!t->failed)
		spill_ways(t, 0, 200, 1, "ways.db");
}

/*
 * item_summary rows go in DB_BULK_ROWS at a time and the rest at the flush:
 * every one, each with its own values (the REALs to the bit), NULL in none.
 */
#define ITEM_ROWS	(2 * DB_BULK_ROWS + 7)
TEST(test_results_item_rows)
{
	const char *path = tmp_path("items.db");
	struct db_results *w;
	struct db *db;
	int64_t run_id;
	int i;

	ASSERT_EQ(results_open(path, &db, &run_id, &w), 0);
	for (i = 0; i < ITEM_ROWS; i++) {
		struct db_item_summary r = {
			.run_id = run_id, .cgroup_id = (uint64_t)i / 3 + 1, .kind = 1, .item = i % 3,
			.max_read_error = (uint64_t)i, .p99_read_error = (uint64_t)i / 2,
			.mean_read_error = i / 4.0, .max_visible_error = (uint64_t)i * 3,
			.mean_visible_error = i / 8.0, .max_error_age_ms = i / 16.0,
			.final_error = -i, .max_settled_error = (uint64_t)i * 2,
			.max_flush_error = (uint64_t)i + 5,
		};

		ASSERT_EQ(db_item_summary_add(w, &r), 0);
	}
	ASSERT_EQ(db_results_flush(w), 0);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM item_summary WHERE max_read_error ="
			    " (cgroup_id - 1) * 3 + item AND p99_read_error = max_read_error / 2"
			    " AND mean_read_error = max_read_error / 4.0 AND max_visible_error ="
			    " 3 * max_read_error AND mean_visible_error = max_read_error / 8.0 AND"
			    " max_error_age_ms = max_read_error / 16.0 AND final_error ="
			    " -max_read_error AND max_settled_error = 2 * max_read_error AND"
			    " max_flush_error = max_read_error + 5 AND kind = 1"), ITEM_ROWS);
	db_results_close(w);
	ASSERT_EQ(db_rollback(db), 0);
	db_close(db);
}

/*
 * The series and cgroup_series rows share one limit (held.peer): together
 * they never hold more than it, the smaller table's rows spill with the
 * larger's, and every row of both comes back.  With a limit each, the
 * fewer cgroup_series rows reached theirs only much later in a trace, and
 * memory grew by a limit's worth until then.
 */
#define SHARED_KEYS	40
#define SHARED_TS	200
TEST(test_results_held_shared)
{
	const char *path = tmp_path("shared.db");
	const char *one_s = "INSERT INTO series_lines (run_id, cgroup_id, kind, item, ts, step,"
			    " rows) VALUES (?,?,?,?,?,?,?)";
	const char *one_c = "INSERT INTO cgroup_series (run_id, cgroup_id, ts, pending,"
			    " stats_updates, flushable, stranded) VALUES (?,?,?,?,?,?,?)";
	struct held s = { .keys = 4, .cols = 4, .spill = -1, .limit = 4096 };
	struct held c = { .keys = 2, .cols = 5, .spill = -1, .limit = 4096 };
	struct db_results *w;
	struct db *db;
	int64_t run_id;
	int g, k, i;

	s.peer = &c;
	c.peer = &s;
	ASSERT_EQ(results_open(path, &db, &run_id, &w), 0);
	ASSERT_EQ(db_prepare(db, one_s, &s.piece), 0);
	ASSERT_EQ(db_prepare(db, one_c, &c.one), 0);
	ASSERT_EQ(db_results_bulk(db, one_c, &c.bulk), 0);
	for (k = 0; k < SHARED_TS; k++)
		for (g = 0; g < SHARED_KEYS; g++) {
			const int64_t ck[4] = { run_id, g + 1, 0, 0 };
			const uint64_t cv[5] = { (uint64_t)k * 50, (uint64_t)k * g, 7, k & 1, 0 };

			ASSERT_EQ(db_held_add(&c, ck, cv), 0);
			ASSERT(s.bytes + c.bytes <= 4096);
			for (i = 0; i < 8; i++) {
				const int64_t sk[4] = { run_id, g + 1, 1, i };
				const uint64_t sv[4] = { (uint64_t)k * 50, (uint64_t)(k * 1000 + g) * 7919,
							 (uint64_t)-k, (uint64_t)i };

				ASSERT_EQ(db_held_add(&s, sk, sv), 0);
				ASSERT(s.bytes + c.bytes <= 4096);
			}
		}
	ASSERT(c.nr_runs > 1 && s.nr_runs > 1);
	ASSERT_EQ(db_held_insert(&s), 0);
	ASSERT_EQ(db_held_insert(&c), 0);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM series WHERE error = (ts / 50 * 1000 +"
			    " cgroup_id - 1) * 7919 AND min_error = -(ts / 50) AND max_error = item"),
		  SHARED_KEYS * SHARED_TS * 8);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM cgroup_series WHERE pending = ts / 50 *"
			    " (cgroup_id - 1) AND stats_updates = 7 AND flushable = (ts / 50) % 2"),
		  SHARED_KEYS * SHARED_TS);
	sqlite3_finalize(s.piece);
	sqlite3_finalize(c.one);
	sqlite3_finalize(c.bulk);
	db_results_close(w);
	ASSERT_EQ(db_rollback(db), 0);
	db_close(db);
}

/*
 * A key's rows come in increasing ts: one at or before the last is refused
 * at the add.  The extremes of every column come back as they went in.
 */
TEST(test_results_order)
{
	const char *path = tmp_path("order.db");
	struct db_results *w;
	struct db *db;
	int64_t run_id;
	struct db_series a = { .cgroup_id = UINT64_MAX, .ts = 0, .error = INT64_MIN,
			       .min_error = INT64_MIN, .max_error = INT64_MAX, .kind = 1,
			       .item = INT32_MIN };
	struct db_cgroup_sample cs = { .cgroup_id = 7, .ts = 100, .pending = UINT64_MAX,
				       .stats_updates = INT64_MIN, .flushable = true };

	ASSERT_EQ(results_open(path, &db, &run_id, &w), 0);
	a.run_id = cs.run_id = run_id;
	ASSERT_EQ(db_series_add(w, &a), 0);
	ASSERT_EQ(db_series_add(w, &a), -EINVAL);
	a.ts = INT64_MAX;
	a.error = INT64_MAX;
	a.min_error = 0;
	ASSERT_EQ(db_series_add(w, &a), 0);
	a.ts = 5;
	ASSERT_EQ(db_series_add(w, &a), -EINVAL);
	a.item = 0;	/* another key: its own order */
	ASSERT_EQ(db_series_add(w, &a), 0);
	a.ts = INT64_MAX;
	ASSERT_EQ(db_series_add(w, &a), 0);
	ASSERT_EQ(db_cgroup_sample_add(w, &cs), 0);
	cs.ts = 99;
	ASSERT_EQ(db_cgroup_sample_add(w, &cs), -EINVAL);
	cs.ts = 101;
	cs.pending = 0;
	cs.stats_updates = INT64_MAX;
	cs.flushable = false;
	cs.stranded = true;
	ASSERT_EQ(db_cgroup_sample_add(w, &cs), 0);
	ASSERT_EQ(db_results_flush(w), 0);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM series"), 4);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM series WHERE item = 0 AND ts = 5"), 1);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM series WHERE cgroup_id = -1 AND kind = 1"
			    " AND ((item = -2147483648 AND ts = 0 AND error = min_error AND error ="
			    " -9223372036854775807 - 1 AND max_error = 9223372036854775807) OR"
			    " (ts = 9223372036854775807 AND error = max_error AND min_error = 0 AND"
			    " error = 9223372036854775807 AND item IN (0, -2147483648)))"), 3);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM cgroup_series WHERE cgroup_id = 7 AND"
			    " ((ts = 100 AND pending = -1 AND stats_updates = -9223372036854775807 - 1"
			    " AND flushable AND NOT stranded) OR (ts = 101 AND pending = 0 AND"
			    " stats_updates = 9223372036854775807 AND NOT flushable AND stranded))"), 2);
	db_results_close(w);
	ASSERT_EQ(db_rollback(db), 0);
	db_close(db);
}

/*
 * series_lines holds a line a piece at a time: consecutive rows at one ts
 * step, at most DB_PIECE_TEXT bytes of JSON rows.  Line 1: ts 0, 50, 100
 * (step 50), 170, 240 (step 70), 250: three pieces.  Line 2: 30 rows of
 * three INT64_MIN values, 64 bytes each, 65 with the comma: n rows take
 * 65 n bytes and a row joins while 65 n + 1 + 64 + 1 <= 960, so 14 rows a
 * piece: 14, 14 and 2.  The view gives back every row as it went in.
 */
TEST(test_results_pieces)
{
	static const uint64_t ts1[] = { 0, 50, 100, 170, 240, 250 };
	const char *path = tmp_path("pieces.db");
	struct db_results *w;
	struct db *db;
	int64_t run_id;
	size_t k;

	ASSERT_EQ(results_open(path, &db, &run_id, &w), 0);
	for (k = 0; k < sizeof(ts1) / sizeof(ts1[0]); k++) {
		struct db_series sr = { .run_id = run_id, .cgroup_id = 1, .ts = ts1[k],
					.error = (int64_t)k, .min_error = -(int64_t)k,
					.max_error = (int64_t)k * 2, .kind = 1, .item = 3 };

		ASSERT_EQ(db_series_add(w, &sr), 0);
	}
	for (k = 0; k < 30; k++) {
		struct db_series sr = { .run_id = run_id, .cgroup_id = 2, .ts = 1000 + k * 7,
					.error = INT64_MIN, .min_error = INT64_MIN,
					.max_error = INT64_MIN, .kind = 3, .item = 0 };

		ASSERT_EQ(db_series_add(w, &sr), 0);
	}
	ASSERT_EQ(db_results_flush(w), 0);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM series_lines WHERE cgroup_id = 1"), 3);
	ASSERT_EQ(query_int(db, "SELECT group_concat(ts || ':' || step || ':' ||"
			    " json_array_length(rows), ' ') = '0:50:3 170:70:2 250:0:1' FROM"
			    " (SELECT * FROM series_lines WHERE cgroup_id = 1 ORDER BY ts)"), 1);
	ASSERT_EQ(query_int(db, "SELECT group_concat(json_array_length(rows), ' ') = '14 14 2'"
			    " FROM (SELECT * FROM series_lines WHERE cgroup_id = 2 ORDER BY ts)"), 1);
	ASSERT_EQ(query_int(db, "SELECT max(length(rows)) FROM series_lines"), 14 * 65 + 1);
	ASSERT_EQ(query_int(db, "SELECT group_concat(ts || ':' || error || ':' || min_error || ':'"
			    " || max_error, ' ') = '0:0:0:0 50:1:-1:2 100:2:-2:4 170:3:-3:6 240:4:-4:8"
			    " 250:5:-5:10' FROM (SELECT * FROM series WHERE cgroup_id = 1 ORDER BY ts)"),
		  1);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM series WHERE cgroup_id = 2 AND kind = 3 AND"
			    " item = 0 AND (ts - 1000) % 7 = 0 AND ts BETWEEN 1000 AND 1203 AND"
			    " error = -9223372036854775807 - 1 AND min_error = error AND max_error ="
			    " error AND typeof(ts) = 'integer' AND typeof(error) = 'integer'"), 30);
	ASSERT_EQ(query_int(db, "SELECT count(DISTINCT ts) FROM series WHERE cgroup_id = 2"), 30);
	db_results_close(w);
	ASSERT_EQ(db_rollback(db), 0);
	db_close(db);
}

TEST(test_results_created_on_demand)
{
	const char *path = tmp_path("ondemand.db");
	static const char drop[] =
		"DROP VIEW cgroup_lag_report; DROP VIEW lag_report; DROP VIEW lag_report_all;"
		" DROP TABLE runs; DROP VIEW series; DROP TABLE series_lines; DROP TABLE cgroup_series;"
		" DROP TABLE reads;"
		" DROP TABLE read_errors; DROP TABLE stranded_episodes; DROP TABLE cgroup_summary;"
		" DROP TABLE item_summary; DROP TABLE validation; DROP TABLE validation_mismatch";
	struct db *db;

	ASSERT_EQ(make_db(path, 1, NULL, 0), 0);
	ASSERT_EQ(raw_exec(path, drop), 0);
	/* read-only: empty stand-ins, the file is not touched */
	ASSERT_EQ(db_open(path, false, &db), 0);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM lag_report"), 0);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM main.sqlite_master WHERE name = 'runs'"), 0);
	db_close(db);
	/* writable: created in the file */
	ASSERT_EQ(db_open(path, true, &db), 0);
	db_close(db);
	ASSERT_EQ(db_open(path, false, &db), 0);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM main.sqlite_master WHERE name IN"
			    " ('runs', 'series', 'series_lines', 'cgroup_series', 'reads', 'read_errors',"
			    " 'stranded_episodes', 'cgroup_summary', 'item_summary', 'validation',"
			    " 'validation_mismatch', 'lag_report', 'lag_report_all', 'cgroup_lag_report',"
			    " 'episodes_by_cgroup', 'reads_by_cgroup')"), 16);
	db_close(db);
}

/* What db_lag_foreach() and db_cost_rows_foreach() gave, by run. */
struct split_seen {
	uint64_t	settled[4], flush[4], visible[4], noticeable[4];
	bool		has[4];
	int64_t		noticeable_cgroups[4];
	int		rows;
};

static int split_lag_row(const struct db_lag_row *r, void *ctx)
{
	struct split_seen *v = ctx;

	if (r->run_id < 1 || r->run_id > 3 || r->cgroup_id != 1)
		return 0;
	v->settled[r->run_id] = r->max_settled_error;
	v->flush[r->run_id] = r->max_flush_error;
	v->visible[r->run_id] = r->max_visible_error;
	v->noticeable[r->run_id] = r->noticeable_episodes;
	v->has[r->run_id] = r->has_settled;
	v->rows++;
	return 0;
}

static int split_cost_row(const struct db_cost_row *r, void *ctx)
{
	struct split_seen *v = ctx;

	if (r->run_id >= 1 && r->run_id <= 3)
		v->noticeable_cgroups[r->run_id] = r->noticeable_cgroups;
	return 0;
}

/*
 * The visible error's split and the noticeable episodes as a reader gets
 * them: run 1 (break) settled 640 of a visible 640, in flush 65, 3 of 5
 * episodes noticeable at the root, 1 at /x: 2 noticeable cgroups; run 2
 * (continue) settled 320, in flush 65, none: 0; run 3's rows predate the
 * columns (NULL): has_settled false, and its cost row's count -1 only when
 * the whole file does (here it is 0: NULL counts as none).
 */
TEST(test_visible_split_rows)
{
	const char *path = tmp_path("split.db");
	struct db_cgroup root = { .id = 1, .path = "/", .created_ts = -1, .removed_ts = -1 };
	struct db_cgroup leaf = { .id = 9, .parent = 1, .path = "/x", .level = 1, .created_ts = -1,
				  .removed_ts = -1 };
	struct db_lag_filter f = { .nr_runs = 0 };
	int64_t runs[] = { 1, 2, 3 };
	struct split_seen v = { .rows = 0 };
	int kind = 0, item = 0;
	const char *kname = NULL;
	struct db *db;

	ASSERT_EQ(make_db(path, 1, NULL, 0), 0);
	ASSERT_EQ(db_open(path, true, &db), 0);
	ASSERT_EQ(db_cgroup_put(db, &root), 0);
	ASSERT_EQ(db_cgroup_put(db, &leaf), 0);
	ASSERT_EQ(db_item_put(db, MCR_EV_LRUVEC, 5, "NR_FILE_PAGES", "pages"), 0);
	ASSERT_EQ(db_item_put(db, MCR_EV_STATE, 17, "NR_ANON_MAPPED", "pages"), 0);
	ASSERT_EQ(db_item_put(db, MCR_EV_EVENTS, 7, "PGFAULT", "events"), 0);
	ASSERT_EQ(db_begin(db), 0);
	ASSERT_EQ(sqlite3_exec(db_sqlite(db),
		"INSERT INTO runs (run_id, kind, policy, flush_model, events) VALUES"
		" (1, 'replay', 'break', 'window', 100), (2, 'replay', 'continue', 'window', 100),"
		" (3, 'replay', 'legacy', 'window', 100);"
		"INSERT INTO cgroup_summary (run_id, cgroup_id, reads, flushed_reads, stale_reads,"
		" stranded_ms, stranded_episodes, max_pending, noticeable_episodes) VALUES"
		" (1, 1, 9, 0, 2, 0, 5, 900, 3), (1, 9, 1, 0, 0, 0, 1, 9, 1),"
		" (2, 1, 9, 9, 0, 0, 0, 100, 0), (3, 1, 9, 9, 0, 0, 0, 100, NULL);"
		"INSERT INTO item_summary (run_id, cgroup_id, kind, item, max_read_error,"
		" p99_read_error, mean_read_error, max_visible_error, mean_visible_error,"
		" max_error_age_ms, max_settled_error, max_flush_error) VALUES"
		" (1, 1, 1, 5, 640, 640, 300, 640, 100, 0, 640, 65),"
		" (2, 1, 1, 5, 0, 0, 0, 320, 50, 0, 320, 65),"
		" (3, 1, 1, 5, 0, 0, 0, 320, 50, 0, NULL, NULL);",
		NULL, NULL, NULL), SQLITE_OK);
	ASSERT_EQ(db_commit(db), 0);
	f.runs = runs;
	f.nr_runs = 3;
	if (db_lag_foreach(db, &f, split_lag_row, &v))
		printf("# %s\n", db_why(db));
	ASSERT_EQ(v.rows, 3);
	ASSERT(v.has[1] && v.has[2] && !v.has[3]);
	ASSERT_EQU(v.settled[1], 640);
	ASSERT_EQU(v.flush[1], 65);
	ASSERT_EQU(v.settled[2], 320);
	ASSERT_EQU(v.flush[2], 65);
	ASSERT_EQU(v.visible[2], 320);
	ASSERT_EQU(v.noticeable[1], 3);
	ASSERT_EQU(v.noticeable[2], 0);
	ASSERT_EQU(v.settled[3] + v.flush[3] + v.noticeable[3], 0);
	ASSERT_EQ(db_cost_rows_foreach(db, split_cost_row, &v), 0);
	ASSERT_EQ(v.noticeable_cgroups[1], 2);
	ASSERT_EQ(v.noticeable_cgroups[2], 0);
	ASSERT_EQ(v.noticeable_cgroups[3], 0);

	/* --line: the kernel's name, or memory.stat's v1 or v2 name of the line */
	ASSERT_EQ(db_item_by_line(db, "NR_ANON_MAPPED", &kind, &item, &kname), 0);
	ASSERT_EQ(kind, 1);
	ASSERT_EQ(item, 17);
	ASSERT_STR(kname, "NR_ANON_MAPPED");
	ASSERT_EQ(db_item_by_line(db, "total_rss", &kind, &item, &kname), 0);
	ASSERT_EQ(item, 17);
	ASSERT_STR(kname, "NR_ANON_MAPPED");
	ASSERT_EQ(db_item_by_line(db, "anon", &kind, &item, NULL), 0);
	ASSERT_EQ(item, 17);
	ASSERT_EQ(db_item_by_line(db, "file", &kind, &item, NULL), 0);
	ASSERT_EQ(kind, 1);	/* the lruvec item, merged into state */
	ASSERT_EQ(item, 5);
	ASSERT_EQ(db_item_by_line(db, "pgfault", &kind, &item, NULL), 0);
	ASSERT_EQ(kind, 3);
	ASSERT_EQ(item, 7);
	ASSERT_EQ(db_item_by_line(db, "swap", &kind, &item, &kname), -ENODATA);
	ASSERT_STR(kname, "MEMCG_SWAP");
	ASSERT_EQ(db_item_by_line(db, "no_such", &kind, &item, NULL), -ENOENT);
	db_close(db);
}

struct sc_seen {
	uint64_t	lines, rows;
	int64_t		worst_rss, worst_read;
};

static int sc_worst(const struct db_stat_check_worst *w, void *ctx)
{
	struct sc_seen *s = ctx;

	s->lines++;
	if (!strcmp(w->name, "total_rss")) {
		s->worst_rss = w->printed_error;
		s->worst_read = w->read;
	}
	return 0;
}

static int sc_each(const struct db_stat_check *r, void *ctx)
{
	((struct sc_seen *)ctx)->rows++;
	return 0;
}

/*
 * stat_read_checks: rows as validate puts them, the summary ("N of M within
 * 2 units", anchors not counted), the worst printed - truth per line, every
 * row back; a row that breaks the rules is refused on the way in (-EINVAL)
 * and, damaged in the file, on the way out (-MCR_E_CORRUPT naming it).
 */
TEST(test_stat_checks)
{
	const char *path = tmp_path("statchecks.db");
	const struct db_stat_check rows[] = {
		{ 0, 7, "total_rss", "bytes", 4096, 100, 40960, 40960, 8192, 0, DB_STAT_ANCHOR, 0, false },
		{ 0, 7, "total_pgfault", "count", 1, 100, 50, 50, 50, 0, DB_STAT_ANCHOR, 0, false },
		{ 1, 7, "total_rss", "bytes", 4096, 200, 40960, 40960, 409600, 0, DB_STAT_EXACT, 0, false },
		{ 1, 7, "total_pgfault", "count", 1, 200, 90, 92, 150, -2, DB_STAT_WITHIN2, 0, false },
		{ 2, 7, "total_rss", "bytes", 4096, 300, 450560, 40960, 450560, 100,
		  DB_STAT_OFF, DB_STAT_CAUSE_NONE, false },
		{ 2, 7, "total_pgfault", "count", 1, 300, 200, 190, 300, 10, DB_STAT_OFF,
		  DB_STAT_CAUSE_WINDOW, true },
	};
	struct db_stat_check bad = rows[2];
	struct db_stat_check_summary sum;
	struct sc_seen seen = { 0 };
	struct db *db;
	int64_t run;

	ASSERT_EQ(make_db(path, 1, NULL, 0), 0);
	ASSERT_EQ(db_open(path, true, &db), 0);
	ASSERT_EQ(db_stat_check_summary(db, &sum), -ENOENT);
	ASSERT_EQ(db_begin(db), 0);
	ASSERT_EQ(db_run_add(db, &(struct db_run){ .kind = "validate", .policy = "break",
						 .flush_model = "spread", .file = "f",
						 .policies = "break", .batch_size = 64,
						 .nr_cpus = 2 }, &run), 0);
	bad.verdict = DB_STAT_WITHIN2;		/* diff 0 is exact */
	ASSERT_EQ(db_stat_checks_put(db, run, "inferred", &bad, 1), -EINVAL);
	bad = rows[4];
	bad.shown += 4096;			/* printed - shown is not diff x per */
	ASSERT_EQ(db_stat_checks_put(db, run, "inferred", &bad, 1), -EINVAL);
	bad = rows[2];
	bad.cause = DB_STAT_CAUSE_WINDOW;	/* a cause on a line that is not off */
	ASSERT_EQ(db_stat_checks_put(db, run, "inferred", &bad, 1), -EINVAL);
	ASSERT_EQ(db_stat_checks_put(db, run, "inferred", rows, 6), 0);
	ASSERT_EQ(db_commit(db), 0);

	ASSERT_EQ(db_stat_check_summary(db, &sum), 0);
	ASSERT_EQ(sum.run_id, run);
	ASSERT_STR(sum.flush_model, "inferred");
	ASSERT_EQU(sum.pairs, 4);
	ASSERT_EQU(sum.within2, 2);
	ASSERT_EQU(sum.exact, 1);
	ASSERT_EQU(sum.off, 2);
	ASSERT_EQU(sum.off_window, 1);
	ASSERT_EQU(sum.reads, 3);
	ASSERT_EQ(db_stat_check_worst_foreach(db, run, sc_worst, &seen), 0);
	ASSERT_EQU(seen.lines, 2);
	ASSERT_EQ(seen.worst_rss, 40960 - 409600);	/* read 1's, not read 2's 0 */
	ASSERT_EQ(seen.worst_read, 1);
	ASSERT_EQ(db_stat_checks_foreach(db, run, 7, sc_each, &seen), 0);
	ASSERT_EQU(seen.rows, 6);
	ASSERT_EQ(db_stat_checks_foreach(db, run, 8, sc_each, &seen), 0);
	ASSERT_EQU(seen.rows, 6);
	if (db_results_check(db))
		FAILF("results check: %s", db_why(db));

	ASSERT_EQ(sqlite3_exec(db_sqlite(db), "UPDATE stat_read_checks SET diff = 1 WHERE read = 2"
			       " AND name = 'total_rss'", NULL, NULL, NULL), SQLITE_OK);
	ASSERT_EQ(db_stat_check_summary(db, &sum), -MCR_E_CORRUPT);
	ASSERT(strstr(db_why(db), "stat_read_checks row (run"));
	ASSERT_EQ(db_results_check(db), -MCR_E_CORRUPT);
	db_close(db);
}

TEST_MAIN(test_visible_split_rows, test_stat_checks, test_results_while_iterating, test_results_and_lag_report, test_results_held_rows,
	  test_results_spill, test_results_spill_ways, test_results_held_shared, test_results_item_rows, test_results_order, test_results_pieces,
	  test_results_created_on_demand)
