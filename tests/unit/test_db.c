// SPDX-License-Identifier: GPL-2.0
/*
 * test_db.c - the trace database: round trips, identity checks, the checks
 * made while reading, result tables, crash consistency.
 *
 * Over 700 lines: every case opens, writes and reopens real databases
 * through the same helpers; a split would repeat them in each file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include "../harness.h"
#include "db.h"
#include "results.h"
#include "error.h"
#include "store.h"
#include "db_local.h"

static char tmp_dir[4096];

static const char *tmp_path(const char *name)
{
	static char path[8192];

	if (!tmp_dir[0]) {
		const char *base = getenv("TMPDIR");

		snprintf(tmp_dir, sizeof(tmp_dir), "%s/test_db.XXXXXX", base ? base : P_tmpdir);
		if (!mkdtemp(tmp_dir)) {
			perror("mkdtemp");
			exit(2);
		}
	}
	snprintf(path, sizeof(path), "%s/%s", tmp_dir, name);
	return path;
}

__attribute__((destructor)) static void tmp_cleanup(void)
{
	struct dirent *de;
	char path[8192];
	DIR *d;

	if (!tmp_dir[0] || !(d = opendir(tmp_dir)))
		return;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", tmp_dir, de->d_name);
			unlink(path);
		}
	closedir(d);
	rmdir(tmp_dir);
}

static struct mcr_event ev_make(uint64_t ts, int cpu, uint64_t seq, int kind)
{
	struct mcr_event ev = { .ts = ts, .cpu = cpu, .seq = seq, .kind = (uint8_t)kind, .id = 1 };

	return ev;
}

static bool ev_same(const struct mcr_event *a, const struct mcr_event *b)
{
	return a->ts == b->ts && a->cpu == b->cpu && a->seq == b->seq && a->kind == b->kind &&
	       a->id == b->id && a->item == b->item && a->val == b->val && a->aux == b->aux &&
	       a->level == b->level && a->flags == b->flags && a->pid == b->pid;
}

/* The meta values a reader requires (db/validate.c), for @cpus CPUs. */
static int set_required_meta(struct db *db, int cpus)
{
	return db_meta_set_int(db, "nr_cpus_possible", cpus) ?:
	       db_meta_set_int(db, "nr_cpus_online", cpus) ?:
	       db_meta_set_int(db, "batch_size", 64) ?: db_meta_set_int(db, "page_size", 4096);
}

/* A database with nr_cpus_possible = @cpus and @n events from @evs, finished. */
static int make_db(const char *path, int cpus, const struct mcr_event *evs, size_t n)
{
	struct db *db;
	size_t i;
	int err;

	err = db_create(path, &db);
	if (err)
		return err;
	err = set_required_meta(db, cpus);
	for (i = 0; !err && i < n; i++)
		err = db_events_append(db, &evs[i]);
	if (!err)
		err = db_events_finish(db);
	return db_close(db) ?: err;
}

/*
 * As make_db(), in chunks of store version @version put one by one, as
 * memcg-capture does (version 1, no meta store_version: the files of builds
 * before version 2, and what capture wrote until it wrote version 2).
 */
static uint32_t chunk_limit;	/* make_db_version(): events a chunk at most, if not 0 */

static int make_db_version(const char *path, int cpus, const struct mcr_event *evs, size_t n,
			   int version)
{
	struct db_chunk *ch = calloc((size_t)cpus, sizeof(*ch));
	struct db *db;
	size_t i;
	int c, err;

	if (!ch)
		return -ENOMEM;
	for (c = 0; c < cpus; c++) {
		db_chunk_init(&ch[c], c);
		ch[c].version = version;
	}
	err = db_create(path, &db);
	if (!err)
		err = set_required_meta(db, cpus);
	for (i = 0; !err && i <= n; i++) {
		for (c = 0; !err && c < cpus; c++) {
			/* a full chunk, or every chunk after the last event */
			if (!ch[c].count || (i < n && !db_chunk_full(&ch[c]) &&
					     (!chunk_limit || ch[c].count < chunk_limit)))
				continue;
			err = db_chunk_seal(&ch[c]) ?: db_chunk_put(db, &ch[c]);
			db_chunk_reset(&ch[c]);
		}
		if (!err && i < n)
			err = db_chunk_add(&ch[evs[i].cpu], &evs[i]);
	}
	for (c = 0; c < cpus; c++)
		db_chunk_free(&ch[c]);
	free(ch);
	if (err) {
		db_close(db);
		return err;
	}
	err = db_events_finish(db);
	return db_close(db) ?: err;
}

/* Run one SQL statement on a file with plain SQLite. */
static int raw_exec(const char *path, const char *sql)
{
	sqlite3 *s;
	int rc;

	if (sqlite3_open(path, &s) != SQLITE_OK)
		return -1;
	rc = sqlite3_exec(s, sql, NULL, NULL, NULL);
	sqlite3_close(s);
	return rc == SQLITE_OK ? 0 : -1;
}

static int64_t query_int(struct db *db, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = -12345;

	if (sqlite3_prepare_v2(db_sqlite(db), sql, -1, &st, NULL) != SQLITE_OK)
		return -12345;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* Every field, every kind, four CPUs. */
#define RT_N	1037

static void rt_event(size_t i, struct mcr_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->ts = 1000000000000ULL + i * 7;
	ev->cpu = (int)(i % 4);
	ev->seq = i / 4;
	ev->kind = (uint8_t)(1 + i % MCR_EV_KIND_MAX);
	ev->id = i % 5 == 0 ? (uint64_t)INT64_MAX - i : i + 1;	/* the largest ids readers take */
	ev->item = (int32_t)(i % 3);
	ev->val = i % 2 ? -(int64_t)i * 512 : (int64_t)(0xfffffffffffffff0ULL - i);
	ev->aux = (int32_t)i * 3;
	ev->level = (int16_t)(i % 7);
	ev->flags = (uint8_t)(i % 4);
	ev->pid = (int32_t)(100000 + i);
	if (ev->kind >= MCR_EV_LOCKED && ev->kind <= MCR_EV_CONTENDED)
		ev->item = (int32_t)(i % 5) - 1;	/* a target CPU: -1..3 */
	if (ev->kind == MCR_EV_VISIT)
		ev->item = (int32_t)(i % 4);
	if (ev->kind == MCR_EV_FLUSH)
		ev->val = (int64_t)i * 512;	/* stats_updates: never below 0 */
}

TEST(test_events_round_trip)
{
	static struct mcr_event evs[RT_N];
	const char *path = tmp_path("rt.db");
	struct mcr_event ev;
	struct db_iter *it;
	struct db *db;
	size_t i, n = 0;
	uint64_t rows = 0;
	int r;

	for (i = 0; i < RT_N; i++)
		rt_event(i, &evs[i]);
	ASSERT_EQ(make_db(path, 4, evs, RT_N), 0);
	ASSERT_EQ(db_open(path, false, &db), 0);
	ASSERT_EQ(db_iter_open(db, &it), 0);
	ASSERT_EQU(db_iter_count(it), RT_N);
	while ((r = db_iter_next(it, &ev)) == 1) {
		const struct mcr_event *w = &evs[n++];

		if (ev.ts != w->ts || ev.cpu != w->cpu || ev.seq != w->seq || ev.kind != w->kind ||
		    ev.id != w->id || ev.item != w->item || ev.val != w->val || ev.aux != w->aux ||
		    ev.level != w->level || ev.flags != w->flags || ev.pid != w->pid)
			break;
	}
	db_iter_close(it);
	db_close(db);
	ASSERT_EQ(r, 0);
	ASSERT_EQU(n, RT_N);
	/* the one step to rows in SQL */
	ASSERT_EQ(db_open(path, true, &db), 0);
	ASSERT_EQ(db_events_table(db, &rows), 0);
	ASSERT_EQU(rows, RT_N);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM events"), RT_N);
	/* count_memcg_events keeps the unsigned count bit for bit */
	ASSERT_EQU(query_int(db, "SELECT val FROM events WHERE rowid = 1"), 0xfffffffffffffff0ULL);
	ASSERT_EQ(query_int(db, "SELECT value FROM meta WHERE key = 'event_count'"), RT_N);
	/* kind k (1..10) is every 10th event from i = k - 1: 104 for k <= 7, 103 after */
	ASSERT_EQ(query_int(db, "SELECT events FROM event_kinds WHERE kind = 1"), 104);
	ASSERT_EQ(query_int(db, "SELECT events FROM event_kinds WHERE kind = 10"), 103);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM flush_events"), 104);
	/* i = 3 is the first flush: flags 3 = force | needs_flush */
	ASSERT_EQ(query_int(db, "SELECT force + 2 * needs_flush FROM flush_events LIMIT 1"), 3);
	db_close(db);
}

TEST(test_views_use_partial_index)
{
	static const char *const views[] = {
		"flush_events", "rstat_lock_events", "cgroup_events", "visit_events",
	};
	const char *path = tmp_path("rt.db");	/* from the round trip */
	char sql[128];
	sqlite3_stmt *st;
	struct db *db;
	size_t i;
	int used;

	ASSERT_EQ(db_open(path, false, &db), 0);
	for (i = 0; i < sizeof(views) / sizeof(views[0]); i++) {
		snprintf(sql, sizeof(sql), "EXPLAIN QUERY PLAN SELECT * FROM %s", views[i]);
		ASSERT_EQ(sqlite3_prepare_v2(db_sqlite(db), sql, -1, &st, NULL), SQLITE_OK);
		used = 0;
		while (sqlite3_step(st) == SQLITE_ROW)
			used |= strstr((const char *)sqlite3_column_text(st, 3), "events_rare") != NULL;
		sqlite3_finalize(st);
		if (!used)
			FAILF("%s does not use events_rare", views[i]);
	}
	/* kinds 5..7 of the round trip, in replay order: first i = 4, then 5 */
	ASSERT_EQ(query_int(db, "SELECT event FROM rstat_lock_events LIMIT 1"), 5);
	ASSERT_EQ(query_int(db, "SELECT event FROM rstat_lock_events LIMIT 1 OFFSET 1"), 6);
	db_close(db);
}

/* Replay's pattern: stream the events and commit results on the same handle. */
TEST(test_results_while_iterating)
{
	const char *path = tmp_path("rt.db");	/* from the round trip */
	struct mcr_event ev;
	struct db_iter *it;
	struct db *db;
	int n = 0, r;

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

TEST(test_meta_round_trip)
{
	const char *path = tmp_path("meta.db");
	struct db *db;
	char *v = NULL;
	int64_t n = 0;

	ASSERT_EQ(db_create(path, &db), 0);
	ASSERT_EQ(set_required_meta(db, 4), 0);
	ASSERT_EQ(db_meta_set(db, "source", "synth:seed-race"), 0);
	ASSERT_EQ(db_meta_set(db, "source", "memcg-capture"), 0);	/* replaces */
	ASSERT_EQ(db_meta_set_int(db, "capture_start_ns", 42), 0);
	ASSERT_EQ(db_meta_set_int(db, "capture_end_ns", INT64_MAX), 0);
	ASSERT_EQ(db_meta_set_int(db, "command_exit_status", -42), 0);
	ASSERT_EQ(db_close(db), 0);

	ASSERT_EQ(db_open(path, false, &db), 0);
	ASSERT_EQ(db_meta_get(db, "source", &v), 0);
	ASSERT_STR(v, "memcg-capture");
	free(v);
	ASSERT_EQ(db_meta_get_int(db, "capture_start_ns", &n), 0);
	ASSERT_EQ(n, 42);
	ASSERT_EQ(db_meta_get_int(db, "command_exit_status", &n), 0);
	ASSERT_EQ(n, -42);
	ASSERT_EQ(db_meta_get_int(db, "capture_end_ns", &n), 0);
	ASSERT(n == INT64_MAX);
	ASSERT_EQ(db_meta_get(db, "kernel_release", &v), -ENOENT);
	ASSERT_EQ(db_meta_get_int(db, "source", &n), -EINVAL);
	db_close(db);
}

struct cg_seen {
	int		n;
	uint64_t	ids[4];
	int		bad;
};

static int cg_check(const struct db_cgroup *cg, void *arg)
{
	struct cg_seen *s = arg;

	if (s->n < 4)
		s->ids[s->n] = cg->id;
	s->n++;
	if (cg->id == 1 && (cg->parent || strcmp(cg->path, "/") || cg->level || cg->created_ts != -1 ||
			    cg->removed_ts != -1 || cg->parent_unknown))
		s->bad = 1;
	if (cg->id == 77 && (cg->parent != 1 || strcmp(cg->path, "/a") || cg->level != 1 ||
			     cg->created_ts != 500 || cg->removed_ts != 900 || cg->parent_unknown))
		s->bad = 2;
	if (cg->id == 1ULL << 62 && (cg->path || cg->level != -1 || !cg->parent_unknown ||
				     cg->parent != 0))
		s->bad = 3;
	return 0;
}

TEST(test_small_tables_round_trip)
{
	const char *path = tmp_path("small.db");
	struct db_cgroup cgs[] = {
		{ .id = 1ULL << 62, .parent = 0, .path = NULL, .level = -1, .created_ts = -1,
		  .removed_ts = -1, .parent_unknown = true },
		{ .id = 77, .parent = 1, .path = "/a", .level = 1, .created_ts = 500, .removed_ts = 900 },
		{ .id = 1, .parent = 0, .path = "/", .level = 0, .created_ts = -1, .removed_ts = -1 },
	};
	struct db_cpu_stats cs = { .cpu = 1, .phase = "end", .entries = 10, .overrun = -1,
				   .commit_overrun = 0, .bytes = 1ULL << 40, .dropped = 3, .read = 7 };
	struct cg_seen seen = { 0 };
	struct db *db;
	size_t i;

	ASSERT_EQ(db_create(path, &db), 0);
	ASSERT_EQ(set_required_meta(db, 4), 0);
	for (i = 0; i < sizeof(cgs) / sizeof(cgs[0]); i++)
		ASSERT_EQ(db_cgroup_put(db, &cgs[i]), 0);
	ASSERT_EQ(db_item_put(db, MCR_EV_STATE, 5, "NR_FILE_PAGES", "pages"), 0);
	ASSERT_EQ(db_item_put(db, MCR_EV_EVENTS, 9, "PGFAULT", NULL), 0);
	ASSERT_EQ(db_item_put(db, MCR_EV_FLUSH, 9, "X", NULL), -EINVAL);
	ASSERT_EQ(db_cpu_stats_put(db, &cs), 0);
	cs.phase = "middle";
	ASSERT_EQ(db_cpu_stats_put(db, &cs), -EINVAL);
	ASSERT_EQ(db_gap_put(db, 3, 123456789, -1), 0);
	ASSERT_EQ(db_gap_put(db, 0, 5, 1000), 0);
	ASSERT_EQ(db_close(db), 0);

	ASSERT_EQ(db_open(path, false, &db), 0);
	ASSERT_EQ(db_cgroups_foreach(db, cg_check, &seen), 0);
	ASSERT_EQ(seen.bad, 0);
	ASSERT_EQ(seen.n, 3);
	/* parents first: level 0, level 1, then the unknown level */
	ASSERT_EQU(seen.ids[0], 1);
	ASSERT_EQU(seen.ids[1], 77);
	ASSERT_EQU(seen.ids[2], 1ULL << 62);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM items WHERE kind = 1 AND item = 5"
			    " AND name = 'NR_FILE_PAGES' AND unit = 'pages'"), 1);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM items WHERE kind = 3 AND unit IS NULL"), 1);
	ASSERT_EQ(query_int(db, "SELECT bytes FROM cpu_stats WHERE cpu = 1 AND phase = 'end'"),
		  1LL << 40);
	ASSERT_EQ(query_int(db, "SELECT overrun + dropped + read + entries FROM cpu_stats"), 19);
	ASSERT_EQ(query_int(db, "SELECT count FROM gaps WHERE cpu = 3 AND ts = 123456789"), -1);
	ASSERT_EQ(query_int(db, "SELECT count FROM gaps WHERE cpu = 0 AND ts = 5"), 1000);
	db_close(db);
}

static int gap_collect(const struct db_gap *gap, void *arg)
{
	struct db_gap *out = arg;
	int i = out[2].cpu++;	/* out[2] counts */

	if (i < 2)
		out[i] = *gap;
	return 0;
}

static int gap_stop(const struct db_gap *gap, void *arg)
{
	return 42;
}

/* The gaps of test_small_tables_round_trip come back by ts, whatever order they were put in. */
TEST(test_gaps_foreach)
{
	const char *path = tmp_path("small.db");
	struct db_gap got[3] = { 0 };
	struct db *db;

	ASSERT_EQ(db_open(path, false, &db), 0);
	ASSERT_EQ(db_gaps_foreach(db, gap_collect, got), 0);
	ASSERT_EQ(got[2].cpu, 2);
	ASSERT_EQ(got[0].cpu, 0);
	ASSERT_EQU(got[0].ts, 5);
	ASSERT_EQ(got[0].count, 1000);
	ASSERT_EQ(got[1].cpu, 3);
	ASSERT_EQU(got[1].ts, 123456789);
	ASSERT_EQ(got[1].count, -1);
	ASSERT_EQ(db_gaps_foreach(db, gap_stop, NULL), 42);
	db_close(db);
}

/* Which kinds a trace holds, from the chunk index: a lock without its unlock, no visit. */
TEST(test_events_kinds)
{
	const char *path = tmp_path("kinds.db");
	const struct mcr_event evs[] = {
		ev_make(1, 0, 0, MCR_EV_STATE), ev_make(2, 0, 1, MCR_EV_LOCKED),
		ev_make(3, 1, 0, MCR_EV_FLUSH),
	};
	uint32_t kinds = 0;
	struct db *db;

	ASSERT_EQ(make_db(path, 2, evs, 3), 0);
	ASSERT_EQ(db_open(path, false, &db), 0);
	ASSERT_EQ(db_events_kinds(db, &kinds), 0);
	ASSERT_EQU(kinds, 1u << MCR_EV_STATE | 1u << MCR_EV_LOCKED | 1u << MCR_EV_FLUSH);
	db_close(db);
}

TEST(test_file_mode_0600)
{
	const char *path = tmp_path("mode.db");
	struct mcr_event ev = ev_make(1, 0, 0, MCR_EV_STATE);
	char wal[8200];
	struct stat st;
	mode_t old = umask(0);
	struct db *db;
	int err;

	/* An older file of that name with loose permissions is replaced. */
	close(open(path, O_WRONLY | O_CREAT, 0666));
	err = db_create(path, &db);
	umask(old);
	ASSERT_EQ(err, 0);
	ASSERT_EQ(db_events_append(db, &ev), 0);
	ASSERT_EQ(db_events_commit(db), 0);
	ASSERT_EQ(stat(path, &st), 0);
	ASSERT_EQ(st.st_mode & 0777, 0600);
	snprintf(wal, sizeof(wal), "%s-wal", path);
	ASSERT_EQ(stat(wal, &st), 0);
	ASSERT_EQ(st.st_mode & 0777, 0600);
	ASSERT_EQ(db_close(db), 0);
}

static int open_err(const char *path)
{
	struct db *db;
	int err = db_open(path, false, &db);

	if (!err)
		db_close(db);
	return err;
}

static int write_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, buf, len);
	close(fd);
	return n == (ssize_t)len ? 0 : -1;
}

TEST(test_refuse_missing)
{
	const char *path = tmp_path("absent.db");
	struct db *db;

	ASSERT_EQ(open_err(path), -ENOENT);
	ASSERT_EQ(db_open(path, true, &db), -ENOENT);
	ASSERT(access(path, F_OK) < 0);		/* never created */
}

TEST(test_refuse_not_sqlite)
{
	const char *path = tmp_path("junk.db");
	char buf[8192];
	size_t i;

	ASSERT_EQ(write_file(path, "", 0), 0);
	ASSERT_EQ(open_err(path), -MCR_E_NOT_SQLITE);
	ASSERT_EQ(write_file(path, "SQLite format", 13), 0);	/* short header */
	ASSERT_EQ(open_err(path), -MCR_E_NOT_SQLITE);
	srand(1);
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (char)rand();
	ASSERT_EQ(write_file(path, buf, sizeof(buf)), 0);
	ASSERT_EQ(open_err(path), -MCR_E_NOT_SQLITE);
	/* The right magic followed by junk: SQLite itself must refuse it; never a crash. */
	memcpy(buf, "SQLite format 3", 16);
	ASSERT_EQ(write_file(path, buf, sizeof(buf)), 0);
	ASSERT(open_err(path) == -MCR_E_NOT_SQLITE || open_err(path) == -MCR_E_CORRUPT);
	ASSERT_EQ(open_err(tmp_dir), -EISDIR);
	unlink(path);
	ASSERT_EQ(mkfifo(path, 0600), 0);	/* must not hang */
	ASSERT_EQ(open_err(path), -MCR_E_NOT_SQLITE);
	unlink(path);
}

TEST(test_refuse_not_ours)
{
	const char *path = tmp_path("other.db");

	unlink(path);
	ASSERT_EQ(raw_exec(path, "CREATE TABLE events (x); CREATE TABLE meta (key, value)"), 0);
	ASSERT_EQ(open_err(path), -MCR_E_NOT_OURS);
	ASSERT_EQ(raw_exec(path, "PRAGMA application_id = 1"), 0);
	ASSERT_EQ(open_err(path), -MCR_E_NOT_OURS);
}

TEST(test_refuse_newer)
{
	const char *path = tmp_path("newer.db");
	char sql[64];

	ASSERT_EQ(make_db(path, 1, NULL, 0), 0);
	ASSERT_EQ(open_err(path), 0);
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", DB_SCHEMA_VERSION + 1);
	ASSERT_EQ(raw_exec(path, sql), 0);
	ASSERT_EQ(open_err(path), -MCR_E_NEWER);
}

/*
 * A schema 1 file: its results (unflushed volume, not errors) cannot be read;
 * read-only opens refuse it, a writer drops the old result tables and makes
 * the file current, trace untouched.
 */
TEST(test_older_schema)
{
	const char *path = tmp_path("older.db");
	struct db *db;

	ASSERT_EQ(make_db(path, 1, NULL, 0), 0);
	ASSERT_EQ(raw_exec(path, "DROP TABLE series; CREATE TABLE series (run_id, cgroup_id, ts,"
			   " missing_pages); INSERT INTO series VALUES (1, 1, 1, 5);"
			   " PRAGMA user_version = 1"), 0);
	ASSERT_EQ(db_open(path, false, &db), 0);	/* the trace reads, the results do not */
	ASSERT_EQ(db_replay_run_exists(db, 0), -MCR_E_OLDER);
	db_close(db);
	ASSERT_EQ(db_open(path, true, &db), 0);
	ASSERT_EQ(query_int(db, "PRAGMA user_version"), DB_SCHEMA_VERSION);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM series"), 0);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM meta WHERE key = 'nr_cpus_possible'"), 1);
	db_close(db);
	ASSERT_EQ(open_err(path), 0);
}

TEST(test_refuse_missing_table)
{
	const char *path = tmp_path("dropped.db");
	struct db *db;

	ASSERT_EQ(make_db(path, 1, NULL, 0), 0);
	ASSERT_EQ(raw_exec(path, "DROP TABLE event_chunks"), 0);
	ASSERT_EQ(open_err(path), -MCR_E_SCHEMA);
	ASSERT_EQ(db_open(path, true, &db), -MCR_E_SCHEMA);
	/* a missing column counts too */
	ASSERT_EQ(raw_exec(path, "CREATE TABLE event_chunks (ts, cpu)"), 0);
	ASSERT_EQ(open_err(path), -MCR_E_SCHEMA);
}

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

TEST(test_results_created_on_demand)
{
	const char *path = tmp_path("ondemand.db");
	static const char drop[] =
		"DROP VIEW cgroup_lag_report; DROP VIEW lag_report; DROP VIEW lag_report_all;"
		" DROP TABLE runs; DROP TABLE series; DROP TABLE cgroup_series; DROP TABLE reads;"
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
			    " ('runs', 'series', 'cgroup_series', 'reads', 'read_errors',"
			    " 'stranded_episodes', 'cgroup_summary', 'item_summary', 'validation',"
			    " 'validation_mismatch', 'lag_report', 'lag_report_all', 'cgroup_lag_report',"
			    " 'episodes_by_cgroup', 'reads_by_cgroup')"), 15);
	db_close(db);
}

TEST(test_close_commits)
{
	const char *path = tmp_path("close.db");
	struct mcr_event ev = ev_make(5, 0, 0, MCR_EV_EVENTS);
	struct db *db;
	int i;

	ASSERT_EQ(db_create(path, &db), 0);
	ASSERT_EQ(set_required_meta(db, 4), 0);
	for (i = 0; i < 10; i++)
		ASSERT_EQ(db_events_append(db, &ev), 0);
	ev.kind = 0;
	ASSERT_EQ(db_events_append(db, &ev), -EINVAL);
	ASSERT_EQ(db_close(db), 0);
	ASSERT_EQ(db_open(path, false, &db), 0);
	ASSERT_EQ(query_int(db, "SELECT sum(count) FROM event_chunks"), 10);
	db_close(db);
}

/*
 * A writer that dies between commits: everything committed is there and the
 * file is sound.  600000 events alternate over 2 CPUs: 300000 each, so 4 full
 * chunks of 65536 per CPU were put (8 chunks), committed every 4 chunks: 2
 * commits, 8 * 65536 = 524288 events, which are events 0..524287 (each CPU's
 * first 262144).  The open chunks (the last 37856 per CPU) are lost.
 */
TEST(test_crash_keeps_committed)
{
	const char *path = tmp_path("crash.db");
	struct mcr_event ev;
	struct db_iter *it;
	struct db *db;
	uint64_t n = 0;
	int status, r;
	pid_t pid;

	pid = fork();
	ASSERT(pid >= 0);
	if (!pid) {
		uint64_t i;

		if (db_create(path, &db) || set_required_meta(db, 4))
			_exit(1);
		for (i = 0; i < 600000; i++) {
			ev = ev_make(1000 + i, (int)(i % 2), i / 2, MCR_EV_STATE);
			ev.val = (int64_t)i;
			if (db_events_append(db, &ev))
				_exit(1);
		}
		_exit(0);	/* no finish, no close */
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT_EQ(db_open(path, false, &db), 0);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM pragma_integrity_check"
			    " WHERE integrity_check = 'ok'"), 1);
	ASSERT_EQ(db_iter_open(db, &it), 0);
	ASSERT_EQU(db_iter_count(it), 524288);
	while ((r = db_iter_next(it, &ev)) == 1) {
		if ((uint64_t)ev.val != n)
			break;
		n++;
	}
	ASSERT_EQ(r, 0);
	ASSERT_EQU(n, db_iter_count(it));
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

/* Read every event; the first error or 0. */
static int read_all(const char *path, uint64_t *n)
{
	struct mcr_event ev;
	struct db_iter *it;
	struct db *db;
	int r;

	*n = 0;
	if (db_open(path, false, &db))
		return -9999;
	r = db_iter_open(db, &it);
	if (!r) {
		while ((r = db_iter_next(it, &ev)) == 1)
			(*n)++;
		db_iter_close(it);
	}
	db_close(db);
	return r;
}

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

	for (i = 0; i < RT_N; i++)
		rt_event(i, &evs[i]);
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
	size_t i;

	for (i = 0; i < RT_N; i++)
		rt_event(i, &evs[i]);
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

/* Every event of @path, in order, against @evs[@n]: the count read, or a negative error. */
static int64_t read_same(const char *path, const struct mcr_event *evs, size_t n)
{
	struct mcr_event ev;
	struct db_iter *it;
	struct db *db;
	int64_t k = 0;
	int r;

	if (db_open(path, false, &db))
		return -9999;
	r = db_iter_open(db, &it);
	if (!r) {
		while ((r = db_iter_next(it, &ev)) == 1) {
			if ((size_t)k >= n || !ev_same(&ev, &evs[k]))
				break;
			k++;
		}
		db_iter_close(it);
	}
	db_close(db);
	return r < 0 ? r : r == 1 ? -10000 - k : k;
}

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
	size_t i;

	snprintf(p1, sizeof(p1), "%s", tmp_path("v1.db"));
	snprintf(p2, sizeof(p2), "%s", tmp_path("v2.db"));

	for (i = 0; i < RT_N; i++)
		rt_event(i, &evs[i]);
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

/* 64 random bits from rand(), seeded by the test: its 31 bits at a time */
static uint64_t cols_rng(void)
{
	return (uint64_t)rand() << 62 ^ (uint64_t)rand() << 31 ^ (uint64_t)rand();
}

static void cols_put(uint8_t *p, uint64_t v, unsigned int w)
{
	unsigned int b;

	for (b = 0; b < w; b++)
		p[b] = (uint8_t)(v >> (8 * b));
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
	for (i = 0; i < RT_N; i++)
		rt_event(i, &evs[i]);
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

/* A varint below @end, as get_varint() in store_v1.c: 10 bytes at most. */
static bool ref_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t r = 0;
	unsigned int shift;

	for (shift = 0; p < end && shift < 64; shift += 7) {
		uint8_t b = *p++;

		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*pp = p;
			*v = r;
			return true;
		}
	}
	return false;
}

static int64_t ref_unzz(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/*
 * The version 1 decoder as db_chunk_decode() was (one careful pass, every
 * bound checked at every byte), on the decompressed records @raw[@len] of
 * index row @ix: the reference db_recs_open() and db_recs_build() must
 * agree with.  Returns 0, -MCR_E_CORRUPT or -MCR_E_TIME, the events in
 * @out, *@good the events before the first step back in ts.
 */
static int ref_decode(const struct db_chunk_index *ix, const uint8_t *raw, size_t len,
		      struct mcr_event *out, uint32_t *good)
{
	const uint8_t *p = raw, *end = raw + len;
	uint64_t ts = ix->first_ts, seq = ix->first_seq - 1, id = 0, v;
	int32_t pid = 0;
	uint32_t i;

	*good = ix->count;
	for (i = 0; i < ix->count; i++) {
		struct mcr_event *ev = &out[i];
		uint64_t d;
		uint8_t h;

		if (p >= end)
			return -MCR_E_CORRUPT;
		h = *p++;
		memset(ev, 0, sizeof(*ev));
		ev->kind = h & 0x0f;	/* any: an unknown kind is the reader's check's to refuse */
		if (!ref_varint(&p, end, &d))
			return -MCR_E_CORRUPT;
		if (ts + (uint64_t)ref_unzz(d) < ts && *good == ix->count)
			*good = i;
		ts += (uint64_t)ref_unzz(d);
		seq++;
		if (h & 0x80) {
			if (!ref_varint(&p, end, &v))
				return -MCR_E_CORRUPT;
			seq += (uint64_t)ref_unzz(v);
		}
		if (!(h & 0x10) && !ref_varint(&p, end, &id))
			return -MCR_E_CORRUPT;
		if (!ref_varint(&p, end, &v))
			return -MCR_E_CORRUPT;
		ev->item = (int32_t)ref_unzz(v);
		if (!ref_varint(&p, end, &v))
			return -MCR_E_CORRUPT;
		ev->val = ref_unzz(v);
		if (!(h & 0x20)) {
			if (!ref_varint(&p, end, &v))
				return -MCR_E_CORRUPT;
			pid = (int32_t)ref_unzz(v);
		}
		if (h & 0x40) {
			if (!ref_varint(&p, end, &v))
				return -MCR_E_CORRUPT;
			ev->aux = (int32_t)ref_unzz(v);
			if (!ref_varint(&p, end, &v) || p >= end)
				return -MCR_E_CORRUPT;
			ev->level = (int16_t)ref_unzz(v);
			ev->flags = *p++;
		}
		ev->ts = ts;
		ev->seq = seq;
		ev->id = id;
		ev->pid = pid;
		ev->cpu = ix->cpu;
	}
	if (p != end || ts != ix->last_ts)
		return -MCR_E_CORRUPT;
	return *good < ix->count ? -MCR_E_TIME : 0;
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

/*
 * While iterators are open, SQLite's page cache keeps 64 KiB of pages (the
 * BLOBs pass through it) and still spills dirty pages where it did before;
 * the last iterator closed puts both back.
 */
TEST(test_iter_page_cache)
{
	const char *path = tmp_path("cache.db");
	struct mcr_event evs[2] = { ev_make(1, 0, 0, MCR_EV_STATE), ev_make(2, 1, 0, MCR_EV_STATE) };
	struct db_iter *a, *b;
	int64_t size, spill;
	struct db *db;

	ASSERT_EQ(make_db(path, 2, evs, 2), 0);
	ASSERT_EQ(db_open(path, false, &db), 0);
	size = query_int(db, "PRAGMA cache_size");
	spill = query_int(db, "PRAGMA cache_spill");
	ASSERT(size != -64 && spill > 16);
	ASSERT_EQ(db_iter_open(db, &a), 0);
	ASSERT_EQ(query_int(db, "PRAGMA cache_size"), -64);
	ASSERT_EQ(query_int(db, "PRAGMA cache_spill"), spill);
	ASSERT_EQ(db_iter_open(db, &b), 0);
	db_iter_close(a);
	ASSERT_EQ(query_int(db, "PRAGMA cache_size"), -64);
	db_iter_close(b);
	ASSERT_EQ(query_int(db, "PRAGMA cache_size"), size);
	ASSERT_EQ(query_int(db, "PRAGMA cache_spill"), spill);
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
	size_t i;
	int v;

	for (i = 0; i < RT_N; i++)
		rt_event(i, &evs[i]);
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

	for (i = 0; i < RT_N; i++)
		rt_event(i, &evs[i]);
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

	for (i = 0; i < RT_N; i++)
		rt_event(i, &evs[i]);
	for (i = 0; i < sizeof(damage) / sizeof(damage[0]); i++) {
		ASSERT_EQ(make_db_version(path, 4, evs, RT_N, DB_STORE_V1), 0);
		ASSERT_EQ(chunk_rewrite(path, (int)i, damage[i]), 0);
		ASSERT_EQ(read_all(path, &n), -MCR_E_BAD_INPUT);
		if (!n || n >= RT_N)
			FAILF("damage %zu: %" PRIu64 " events before the refusal", i, n);
	}
}

TEST_MAIN(test_events_round_trip, test_iter_chunk_fields, test_iter_page_cache, test_iter_read_transaction, test_cols_checks, test_recs_checks, test_recs_varint_limit, test_store_versions, test_store_matches, test_store_raw_literals, test_store_columns_as_written, test_store_chunk_take, test_store_version_refused,
	  test_time_backwards_far, test_iter_batch_pointers, test_iter_batch_errors_far,
	  test_iter_batch_pointers_v1, test_iter_batch_errors_far_v1, test_iter_batch_chunk_ends_v1,
	  test_corrupt_chunk_v1, test_unknown_kind_v1, test_back_at_first_event, test_vfs_ahead_fresh,
	  test_merge_order, test_merge_order_many_cpus, test_keys_merge, test_corrupt_chunk, test_old_format, test_views_use_partial_index, test_results_while_iterating, test_meta_round_trip,
	  test_small_tables_round_trip, test_gaps_foreach, test_events_kinds, test_file_mode_0600, test_refuse_missing,
	  test_refuse_not_sqlite, test_refuse_not_ours, test_refuse_newer,
	  test_refuse_missing_table, test_time_backwards_within_cpu, test_cpu_beyond_possible,
	  test_event_fields, test_event_values,
	  test_results_and_lag_report, test_results_held_rows, test_results_spill, test_results_order, test_results_created_on_demand, test_older_schema, test_close_commits,
	  test_crash_keeps_committed)
