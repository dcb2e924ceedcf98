/* SPDX-License-Identifier: GPL-2.0 */
/*
 * db_fixture.h - what the test_db*.c files share: a temporary directory
 * emptied at exit, events made to order, databases written with them (in
 * either store version), raw SQL on the file, the whole file read back, and
 * a reference decoder of the chunk varints.
 */
#ifndef MCR_TEST_DB_FIXTURE_H
#define MCR_TEST_DB_FIXTURE_H

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

static inline const char *tmp_path(const char *name)
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

static inline struct mcr_event ev_make(uint64_t ts, int cpu, uint64_t seq, int kind)
{
	struct mcr_event ev = { .ts = ts, .cpu = cpu, .seq = seq, .kind = (uint8_t)kind, .id = 1 };

	return ev;
}

static inline bool ev_same(const struct mcr_event *a, const struct mcr_event *b)
{
	return a->ts == b->ts && a->cpu == b->cpu && a->seq == b->seq && a->kind == b->kind &&
	       a->id == b->id && a->item == b->item && a->val == b->val && a->aux == b->aux &&
	       a->level == b->level && a->flags == b->flags && a->pid == b->pid;
}

/* The meta values a reader requires (db/validate.c), for @cpus CPUs. */
static inline int set_required_meta(struct db *db, int cpus)
{
	return db_meta_set_int(db, "nr_cpus_possible", cpus) ?:
	       db_meta_set_int(db, "nr_cpus_online", cpus) ?:
	       db_meta_set_int(db, "batch_size", 64) ?: db_meta_set_int(db, "page_size", 4096);
}

/* A database with nr_cpus_possible = @cpus and @n events from @evs, finished. */
static inline int make_db(const char *path, int cpus, const struct mcr_event *evs, size_t n)
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

static inline int make_db_version(const char *path, int cpus, const struct mcr_event *evs, size_t n,
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
static inline int raw_exec(const char *path, const char *sql)
{
	sqlite3 *s;
	int rc;

	if (sqlite3_open(path, &s) != SQLITE_OK)
		return -1;
	rc = sqlite3_exec(s, sql, NULL, NULL, NULL);
	sqlite3_close(s);
	return rc == SQLITE_OK ? 0 : -1;
}

static inline int64_t query_int(struct db *db, const char *sql)
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

static inline void rt_event(size_t i, struct mcr_event *ev)
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

/* rt_event() 0 .. RT_N - 1 into @evs. */
static inline void rt_events(struct mcr_event *evs)
{
	size_t i;

	for (i = 0; i < RT_N; i++)
		rt_event(i, &evs[i]);
}

/* Read every event; the first error or 0. */
static inline int read_all(const char *path, uint64_t *n)
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

/* Every event of @path, in order, against @evs[@n]: the count read, or a negative error. */
static inline int64_t read_same(const char *path, const struct mcr_event *evs, size_t n)
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

/* 64 random bits from rand(), seeded by the test: its 31 bits at a time */
static inline uint64_t cols_rng(void)
{
	return (uint64_t)rand() << 62 ^ (uint64_t)rand() << 31 ^ (uint64_t)rand();
}

static inline void cols_put(uint8_t *p, uint64_t v, unsigned int w)
{
	unsigned int b;

	for (b = 0; b < w; b++)
		p[b] = (uint8_t)(v >> (8 * b));
}

/* A varint below @end, as get_varint() in store_v1.c: 10 bytes at most. */
static inline bool ref_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
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

static inline int64_t ref_unzz(uint64_t v)
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
static inline int ref_decode(const struct db_chunk_index *ix, const uint8_t *raw, size_t len,
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

#endif
