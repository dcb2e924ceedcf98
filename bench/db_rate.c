// SPDX-License-Identifier: GPL-2.0
/*
 * db_rate.c - events table write and read rates.
 *
 *   db_rate [ROWS] [ROUNDS] [DIR]   (default 2000000 rows, 3 rounds, DIR = $TMPDIR)
 *
 * Writes the same fleet-like events twice, with the same settings db_create()
 * uses: first one row per INSERT (the baseline), then through
 * db_events_append() (64-row INSERTs), and reads them back with db_iter.
 * Prints rows/s, the ratio against the baseline, the cost of
 * db_events_finish(), bytes per event, and what a full events(kind) index
 * would cost compared with the partial one db/ builds.  The writers alternate
 * for ROUNDS rounds and the best round of each counts, so that other load on
 * the machine does not favour one of them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db.h"
#include "error.h"

#define NR_CPUS		4
#define COMMIT_ROWS	102400

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Mostly updates over 1000 cgroups, 1% flushes, a few rstat lock windows. */
static void gen_event(uint64_t i, uint64_t *seq, struct mcr_event *ev)
{
	uint64_t r = rng();
	unsigned int pick = r % 1000;

	memset(ev, 0, sizeof(*ev));
	ev->ts = 5000000000000ULL + i * 97;
	ev->cpu = (int)(i % NR_CPUS);
	ev->seq = seq[ev->cpu]++;
	ev->id = 100 + (r >> 10) % 1000;
	ev->pid = 1000 + (int)((r >> 20) % 40000);
	if (pick < 600) {
		ev->kind = MCR_EV_STATE;
		ev->item = (int)((r >> 40) % 40);
		ev->val = (int64_t)((r >> 48) % 512) - 200;
	} else if (pick < 900) {
		ev->kind = MCR_EV_LRUVEC;
		ev->item = (int)((r >> 40) % 40);
		ev->val = (int64_t)((r >> 48) % 64) - 32;
	} else if (pick < 980) {
		ev->kind = MCR_EV_EVENTS;
		ev->item = (int)((r >> 40) % 80);
		ev->val = 1;
	} else if (pick < 990) {
		ev->kind = MCR_EV_FLUSH;
		ev->val = (int64_t)((r >> 40) % 1024);
		ev->flags = (uint8_t)((r >> 50) % 4);
	} else {
		ev->kind = pick < 995 ? MCR_EV_LOCKED : MCR_EV_UNLOCK;
		ev->item = (int)((r >> 40) % NR_CPUS);
		ev->aux = 4;
		ev->level = 1;
	}
}

static int start_db(const char *path, struct db **db)
{
	int err = db_create(path, db);

	if (!err)
		err = db_meta_set_int(*db, "nr_cpus_possible", NR_CPUS);
	if (err)
		fprintf(stderr, "db_rate: %s: %s\n", path, mcr_strerror(err));
	return err;
}

/* The baseline: one prepared single-row INSERT, bind/step/reset, same commits. */
static int write_single(const char *path, uint64_t rows, double *secs)
{
	uint64_t seq[NR_CPUS] = { 0 }, i;
	struct mcr_event ev;
	sqlite3_stmt *st;
	struct db *db;
	sqlite3 *s;
	double t0;
	int rc = SQLITE_OK;

	if (start_db(path, &db))
		return -1;
	s = db_sqlite(db);
	sqlite3_prepare_v2(s, "INSERT INTO events (ts, cpu, seq, kind, id, item, val, aux, level,"
			   " flags, pid) VALUES (?,?,?,?,?,?,?,?,?,?,?)", -1, &st, NULL);
	rng_state = 0x9e3779b97f4a7c15ULL;
	t0 = now_s();
	sqlite3_exec(s, "BEGIN", NULL, NULL, NULL);
	for (i = 0; i < rows && rc == SQLITE_OK; i++) {
		gen_event(i, seq, &ev);
		sqlite3_bind_int64(st, 1, (int64_t)ev.ts);
		sqlite3_bind_int(st, 2, ev.cpu);
		sqlite3_bind_int64(st, 3, (int64_t)ev.seq);
		sqlite3_bind_int(st, 4, ev.kind);
		sqlite3_bind_int64(st, 5, (int64_t)ev.id);
		sqlite3_bind_int(st, 6, ev.item);
		sqlite3_bind_int64(st, 7, ev.val);
		sqlite3_bind_int(st, 8, ev.aux);
		sqlite3_bind_int(st, 9, ev.level);
		sqlite3_bind_int(st, 10, ev.flags);
		sqlite3_bind_int(st, 11, ev.pid);
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
		sqlite3_reset(st);
		if ((i + 1) % COMMIT_ROWS == 0)
			sqlite3_exec(s, "COMMIT; BEGIN", NULL, NULL, NULL);
	}
	sqlite3_exec(s, "COMMIT", NULL, NULL, NULL);
	*secs = now_s() - t0;
	sqlite3_finalize(st);
	db_close(db);
	return rc == SQLITE_OK ? 0 : -1;
}

static int write_multi(const char *path, uint64_t rows, double *secs, double *finish_secs)
{
	uint64_t seq[NR_CPUS] = { 0 }, i;
	struct mcr_event ev;
	struct db *db;
	double t0;
	int err = 0;

	if (start_db(path, &db))
		return -1;
	rng_state = 0x9e3779b97f4a7c15ULL;
	t0 = now_s();
	for (i = 0; i < rows && !err; i++) {
		gen_event(i, seq, &ev);
		err = db_events_append(db, &ev);
	}
	if (!err)
		err = db_events_commit(db);
	*secs = now_s() - t0;
	t0 = now_s();
	if (!err)
		err = db_events_finish(db);
	*finish_secs = now_s() - t0;
	db_close(db);
	if (err)
		fprintf(stderr, "db_rate: %s: %s\n", path, mcr_strerror(err));
	return err ? -1 : 0;
}

static int read_all(const char *path, uint64_t *rows, double *secs)
{
	struct mcr_event ev;
	struct db_iter *it;
	struct db *db;
	uint64_t sum = 0;
	double t0;
	int r;

	if (db_open(path, false, &db))
		return -1;
	t0 = now_s();
	if (db_iter_open(db, &it)) {
		db_close(db);
		return -1;
	}
	*rows = 0;
	while ((r = db_iter_next(it, &ev)) == 1) {
		sum += ev.ts + (uint64_t)ev.val;	/* touch the record */
		(*rows)++;
	}
	*secs = now_s() - t0;
	db_iter_close(it);
	db_close(db);
	if (r < 0)
		fprintf(stderr, "db_rate: read: %s\n", mcr_strerror(r));
	return r < 0 || !sum ? -1 : 0;
}

static long long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : (long long)st.st_size;
}

/* What a full index on events(kind) would add, for comparison. */
static void full_index_cost(const char *path, uint64_t rows)
{
	long long before = file_size(path);
	sqlite3 *s;
	double t0, t;

	if (sqlite3_open(path, &s) != SQLITE_OK)
		return;
	sqlite3_exec(s, "PRAGMA cache_size = -131072; PRAGMA temp_store = MEMORY", NULL, NULL, NULL);
	t0 = now_s();
	if (sqlite3_exec(s, "CREATE INDEX bench_kind ON events (kind)", NULL, NULL, NULL) == SQLITE_OK) {
		t = now_s() - t0;
		sqlite3_close(s);
		printf("full events(kind) index (not built by db/): %.2f s, +%.1f B/event\n", t,
		       (double)(file_size(path) - before) / (double)rows);
		return;
	}
	sqlite3_close(s);
}

static void unlink_db(const char *path)
{
	char side[4200];

	unlink(path);
	snprintf(side, sizeof(side), "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", path);
	unlink(side);
}

int main(int argc, char **argv)
{
	uint64_t rows = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000, got = 0;
	int rounds = argc > 2 ? atoi(argv[2]) : 3, i, ret = 1;
	const char *dir = argc > 3 ? argv[3] : getenv("TMPDIR");
	double t1 = 1e30, tm = 1e30, tf = 1e30, tr = 1e30, a, b;
	char single[4096], multi[4096];

	if (!rows || rounds < 1) {
		fprintf(stderr, "usage: db_rate [ROWS] [ROUNDS] [DIR]\n");
		return 2;
	}
	snprintf(single, sizeof(single), "%s/db_rate_single.%d.db", dir ? dir : P_tmpdir, getpid());
	snprintf(multi, sizeof(multi), "%s/db_rate_multi.%d.db", dir ? dir : P_tmpdir, getpid());

	for (i = 0; i < rounds; i++) {
		if (write_single(single, rows, &a))
			goto out;
		t1 = a < t1 ? a : t1;
		if (write_multi(multi, rows, &a, &b))
			goto out;
		tm = a < tm ? a : tm;
		tf = b < tf ? b : tf;
		if (read_all(multi, &got, &a) || got != rows)
			goto out;
		tr = a < tr ? a : tr;
	}
	printf("rows: %llu, best of %d rounds, sqlite %s, WAL + synchronous=NORMAL, commit every %d rows\n",
	       (unsigned long long)rows, rounds, sqlite3_libversion(), COMMIT_ROWS);
	printf("write, 1-row INSERT (baseline):   %6.2f M rows/s\n", rows / t1 / 1e6);
	printf("write, db_events_append (64-row): %6.2f M rows/s  (%.2fx baseline)\n",
	       rows / tm / 1e6, t1 / tm);
	printf("db_events_finish (counts, partial index, checkpoint): %.2f s\n", tf);
	printf("read, db_iter:                    %6.2f M rows/s\n", rows / tr / 1e6);
	printf("file: %.1f B/event (%.1f MB)\n", (double)file_size(multi) / (double)rows,
	       file_size(multi) / 1e6);
	full_index_cost(multi, rows);
	ret = 0;
out:
	if (ret)
		fprintf(stderr, "db_rate: failed\n");
	unlink_db(single);
	unlink_db(multi);
	return ret;
}
