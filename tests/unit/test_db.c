// SPDX-License-Identifier: GPL-2.0
/*
 * test_db.c - the trace database as a file: events, meta and the small
 * tables round trip, the file's mode, the files refused at open (missing,
 * not SQLite, not ours, newer, a table missing), the older schema read,
 * and what a close or a crash leaves committed.
 */
#include "db_fixture.h"

TEST(test_events_round_trip)
{
	static struct mcr_event evs[RT_N];
	const char *path = tmp_path("rt.db");
	struct mcr_event ev;
	struct db_iter *it;
	struct db *db;
	size_t n = 0;
	uint64_t rows = 0;
	int r;

	rt_events(evs);
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
	ASSERT_EQ(raw_exec(path, "DROP VIEW series; DROP TABLE series_lines; CREATE TABLE series"
			   " (run_id, cgroup_id, ts, missing_pages); INSERT INTO series VALUES"
			   " (1, 1, 1, 5); PRAGMA user_version = 1"), 0);
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

/*
 * A schema 4 file's series is a table: a read-only open reads it as it is;
 * a writer moves its rows into series_lines (a piece each) and the view
 * series gives back the same rows, the extremes whole.
 */
TEST(test_series_table_moved)
{
	const char *path = tmp_path("series4.db");
	static const char same[] =
		"SELECT group_concat(run_id || ':' || cgroup_id || ':' || kind || ':' || item || ':'"
		" || ts || ':' || error || ':' || min_error || ':' || max_error, ' ') ="
		" '1:1:1:2:10:-5:-7:0 1:1:1:2:20:3:-5:9 1:2:3:0:10:-9223372036854775808:"
		"-9223372036854775808:9223372036854775807' FROM (SELECT * FROM series"
		" ORDER BY cgroup_id, ts)";
	struct db *db;

	ASSERT_EQ(make_db(path, 1, NULL, 0), 0);
	ASSERT_EQ(raw_exec(path, "DROP VIEW series; DROP TABLE series_lines; CREATE TABLE series"
			   " (run_id INTEGER NOT NULL, cgroup_id INTEGER NOT NULL, kind INTEGER NOT"
			   " NULL, item INTEGER NOT NULL, ts INTEGER NOT NULL, error INTEGER NOT NULL,"
			   " min_error INTEGER NOT NULL, max_error INTEGER NOT NULL, PRIMARY KEY"
			   " (run_id, cgroup_id, kind, item, ts)) WITHOUT ROWID; INSERT INTO series"
			   " VALUES (1, 1, 1, 2, 10, -5, -7, 0), (1, 1, 1, 2, 20, 3, -5, 9), (1, 2, 3,"
			   " 0, 10, -9223372036854775808, -9223372036854775808, 9223372036854775807);"
			   " PRAGMA user_version = 4"), 0);
	ASSERT_EQ(db_open(path, false, &db), 0);
	ASSERT_EQ(query_int(db, same), 1);
	ASSERT_EQ(query_int(db, "PRAGMA user_version"), 4);
	db_close(db);
	ASSERT_EQ(db_open(path, true, &db), 0);
	ASSERT_EQ(query_int(db, "PRAGMA user_version"), DB_SCHEMA_VERSION);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM main.sqlite_master WHERE name = 'series'"
			    " AND type = 'view'"), 1);
	ASSERT_EQ(query_int(db, "SELECT count(*) FROM series_lines"), 3);
	ASSERT_EQ(query_int(db, same), 1);
	db_close(db);
}

/*
 * Logged memory.stat reads: an empty stat_reads table (a capture without
 * --read) holds none, so validate runs no comparison pass for them.
 */
TEST(test_has_stat_reads)
{
	const char *path = tmp_path("statreads.db");
	struct db_stat_read rd = { .read = 1, .cgroup = 1, .ts_before = 10, .ts_after = 20 };
	struct db_stat_line l = { .line = "anon 4096", .len = 9, .name = "anon", .value = 4096,
				  .has_value = true };
	struct db *db;

	ASSERT_EQ(make_db(path, 1, NULL, 0), 0);
	ASSERT_EQ(db_open(path, true, &db), 0);
	ASSERT(!db_has_stat_reads(db));
	ASSERT_EQ(db_stat_read_put(db, &rd, &l, 1), 0);
	ASSERT(db_has_stat_reads(db));
	db_close(db);
	ASSERT_EQ(raw_exec(path, "DROP TABLE stat_reads"), 0);
	ASSERT_EQ(db_open(path, false, &db), 0);
	ASSERT(!db_has_stat_reads(db));
	db_close(db);
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
 * A writer forked after the database was made writes it through a handle
 * of its own (db_reopen()); one that starts over empties it first
 * (db_clear()): what the first wrote is gone, the kinds count the second's
 * events only, and the maker's own handle closes over the child's work.
 * Only a database with nothing beside it is reopened (not WAL).
 */
TEST(test_reopen_clear)
{
	struct mcr_event a[3] = { ev_make(10, 0, 0, MCR_EV_STATE), ev_make(11, 1, 0, MCR_EV_FLUSH),
				  ev_make(12, 0, 1, MCR_EV_STATE) };
	struct mcr_event b[2] = { ev_make(20, 1, 0, MCR_EV_EVENTS),
				  ev_make(21, 1, 1, MCR_EV_EVENTS) };
	const char *path = tmp_path("reopen.db");
	struct db *db, *w, *r;
	struct db_iter *it;
	struct mcr_event ev;
	uint32_t kinds = 0;
	int status = -1;
	size_t i;
	pid_t pid;

	ASSERT_EQ(db_create_scratch(path, &db), 0);
	ASSERT_STR(db_path(db), path);
	pid = fork();
	ASSERT(pid >= 0);
	if (!pid) {
		int err = db_reopen(db, &w);

		err = err ?: set_required_meta(w, 2);
		for (i = 0; !err && i < 3; i++)
			err = db_events_append(w, &a[i]);
		err = err ?: db_close(w);
		err = err ?: db_reopen(db, &w);
		err = err ?: db_clear(w);
		err = err ?: set_required_meta(w, 2);
		for (i = 0; !err && i < 2; i++)
			err = db_events_append(w, &b[i]);
		err = err ?: db_events_finish(w);
		_exit(err || db_close(w) ? 1 : 0);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT_EQ(db_close(db), 0);

	ASSERT_EQ(db_open(path, false, &r), 0);
	ASSERT_EQ(db_reopen(r, &w), -EINVAL);	/* opened, not made */
	ASSERT_EQ(query_int(r, "SELECT sum(events) FROM event_kinds"), 2);
	ASSERT_EQ(db_events_kinds(r, &kinds), 0);
	ASSERT_EQU(kinds, 1u << MCR_EV_EVENTS);
	ASSERT_EQ(db_iter_open(r, &it), 0);
	for (i = 0; db_iter_next(it, &ev) == 1; i++)
		ASSERT(i < 2 && ev_same(&ev, &b[i]));
	db_iter_close(it);
	ASSERT_EQU(i, 2);
	db_close(r);
	ASSERT_EQ(db_create(tmp_path("reopen_wal.db"), &db), 0);
	ASSERT_EQ(db_reopen(db, &w), -EINVAL);
	ASSERT_EQ(db_close(db), 0);
}

TEST_MAIN(test_events_round_trip, test_views_use_partial_index, test_meta_round_trip,
	  test_small_tables_round_trip, test_gaps_foreach, test_events_kinds, test_file_mode_0600,
	  test_refuse_missing, test_refuse_not_sqlite, test_refuse_not_ours, test_refuse_newer,
	  test_refuse_missing_table, test_older_schema, test_series_table_moved,
	  test_has_stat_reads, test_close_commits,
	  test_crash_keeps_committed, test_reopen_clear)
