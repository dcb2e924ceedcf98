// SPDX-License-Identifier: GPL-2.0
/*
 * events.c - writing the event store (store.h): chunks into event_chunks.
 *
 * Two producers.  The capture readers seal their own chunks and the capture
 * writer calls db_chunk_put() alone.  Producers with one merged stream
 * (import, synth, conversion) call db_events_append(), which splits it into
 * one open chunk per CPU and puts each chunk when it is full: per-CPU order
 * is the append order, and the readers' (ts, cpu) merge restores the rest.
 * A transaction is begun lazily and committed once it holds DB_COMMIT_EVENTS
 * events (four chunks of version 1, sixteen of version 2) or by
 * db_events_commit(), so a crash loses at most what was not committed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "db_local.h"
#include "error.h"
#include "grow.h"
#include "store.h"

#define DB_COMMIT_EVENTS	(4 * DB_CHUNK_EVENTS)	/* 256k events a transaction */

/**
 * db_bulk_begin() - begin the bulk transaction unless one is open.
 * @db: database
 *
 * A transaction already open (the bulk one, or a caller's db_begin()) is
 * joined.  The bulk one is committed by db_events_commit() or, in a live
 * capture, by its writer.
 *
 * Return: 0 or a negative errno.
 */
int db_bulk_begin(struct db *db)
{
	int err;

	if (db->in_txn)
		return 0;
	err = db_exec(db, "BEGIN IMMEDIATE");
	if (err)
		return err;
	db->in_txn = true;
	db->bulk = true;
	db->txn_rows = 0;
	return 0;
}

static int db_events_commit_bulk(struct db *db)
{
	int err;

	if (!db->bulk)
		return 0;
	err = db_exec(db, "COMMIT");
	if (err)
		return err;
	db->in_txn = false;
	db->bulk = false;
	db->txn_rows = 0;
	return 0;
}

/*
 * One store version per file (store.h): the first chunk put through this
 * handle settles it, against the chunks already there.  Version 1 files
 * carry no meta store_version, so that builds before version 2 read them.
 */
static int db_chunk_version(struct db *db, int version)
{
	int64_t have = DB_STORE_V1, any = 0;
	int err;

	if (db->store_version)
		return db->store_version == version ? 0 : -EINVAL;
	err = db_meta_get_int(db, "store_version", &have);
	if (err == -ENOENT) {
		err = db_query_ints(db, "SELECT EXISTS (SELECT 1 FROM event_chunks)", &any, NULL);
		have = any ? DB_STORE_V1 : version;
	}
	if (err)
		return err;
	if (have != version)
		return -EINVAL;
	if (version != DB_STORE_V1) {
		err = db_meta_set_int(db, "store_version", version);
		if (err)
			return err;
	}
	db->store_version = version;
	return 0;
}

static int db_u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Sort db->read_ids and drop the repeats. */
static void db_read_ids_compact(struct db *db)
{
	size_t i, n = 0;

	if (db->nr_read_sorted == db->nr_read_ids)
		return;
	qsort(db->read_ids, db->nr_read_ids, sizeof(*db->read_ids), db_u64_cmp);
	for (i = 0; i < db->nr_read_ids; i++)
		if (!n || db->read_ids[i] != db->read_ids[n - 1])
			db->read_ids[n++] = db->read_ids[i];
	db->nr_read_ids = db->nr_read_sorted = n;
}

/*
 * The read ids of chunk @c into db->read_ids.  Compacted when full, so it
 * holds about twice the cgroups read at most, however many reads.
 */
static int db_read_ids_add_one(struct db *db, uint64_t id)
{
	if (db->nr_read_ids == db->cap_read_ids) {
		db_read_ids_compact(db);
		/* compacted to at most half: room enough; else doubled */
		if (2 * db->nr_read_ids >= db->cap_read_ids &&
		    mcr_grow((void **)&db->read_ids, &db->cap_read_ids, db->cap_read_ids + 1,
			     sizeof(*db->read_ids)) < 0)
			return -ENOMEM;
	}
	db->read_ids[db->nr_read_ids++] = id;
	return 0;
}

static int db_read_ids_add(struct db *db, const struct db_chunk *c)
{
	uint32_t i;
	int err;

	for (i = 0; i < c->nr_read_ids; i++) {
		err = db_read_ids_add_one(db, c->read_ids[i]);
		if (err)
			return err;
	}
	return 0;
}

/**
 * db_chunk_put() - insert one sealed chunk.
 * @db: database opened writable
 * @c:  the chunk, sealed; not modified
 *
 * Returns 0, -EINVAL for an empty or unsealed chunk or one of another store
 * version than the file's, or an SQLite failure.
 */
int db_chunk_put(struct db *db, const struct db_chunk *c)
{
	sqlite3_stmt *st;
	unsigned int k;
	int err, rc;

	if (!c->count || !c->zlen || c->cpu < 0)
		return -EINVAL;
	if (!db->ins_chunk) {
		rc = sqlite3_prepare_v3(db->sql,
					"INSERT INTO event_chunks (cpu, first_ts, last_ts, first_seq,"
					" count, kinds, raw_bytes, data) VALUES (?,?,?,?,?,?,?,?)",
					-1, SQLITE_PREPARE_PERSISTENT, &db->ins_chunk, NULL);
		if (rc != SQLITE_OK)
			return db_err(rc);
	}
	err = db_bulk_begin(db) ?: db_chunk_version(db, c->version);
	if (err)
		return err;
	st = db->ins_chunk;
	/* uint64 fields are stored bit for bit as SQLite's int64. */
	sqlite3_bind_int(st, 1, c->cpu);
	sqlite3_bind_int64(st, 2, (int64_t)c->first_ts);
	sqlite3_bind_int64(st, 3, (int64_t)c->last_ts);
	sqlite3_bind_int64(st, 4, (int64_t)c->first_seq);
	sqlite3_bind_int64(st, 5, c->count);
	sqlite3_bind_int64(st, 6, c->kinds);
	sqlite3_bind_int64(st, 7, (int64_t)c->len);
	sqlite3_bind_blob(st, 8, c->z, (int)c->zlen, SQLITE_STATIC);
	err = db_step_reset(st);
	sqlite3_clear_bindings(st);
	if (err)
		return err;
	for (k = 1; k <= MCR_EV_KIND_MAX; k++)
		db->kind_rows[k] += c->kind_count[k];
	err = db_read_ids_add(db, c);
	if (err)
		return err;
	db->appended += c->count;
	db->txn_rows += c->count;
	if (db->txn_rows >= DB_COMMIT_EVENTS)
		return db_events_commit_bulk(db);
	return 0;
}

/* Seal and put the open chunk of @cpu, if it has events. */
static int db_events_put_open(struct db *db, struct db_chunk *c)
{
	int err;

	if (!c->count)
		return 0;
	err = db_chunk_seal(c);
	if (!err)
		err = db_chunk_put(db, c);
	db_chunk_reset(c);
	return err;
}

/* The open chunk of @cpu, allocated on first use. */
static struct db_chunk *db_events_chunk(struct db *db, int cpu)
{
	if ((unsigned int)cpu >= db->nr_open) {
		unsigned int n = (unsigned int)cpu + 1, i;
		struct db_chunk **open = realloc(db->open, n * sizeof(*open));

		if (!open)
			return NULL;
		for (i = db->nr_open; i < n; i++)
			open[i] = NULL;
		db->open = open;
		db->nr_open = n;
	}
	if (!db->open[cpu]) {
		db->open[cpu] = malloc(sizeof(**db->open));
		if (!db->open[cpu])
			return NULL;
		db_chunk_init(db->open[cpu], cpu);
	}
	return db->open[cpu];
}

/**
 * db_events_append() - append one event in replay order.
 * @db: database opened writable
 * @ev: the event; copied
 *
 * Returns 0, -EINVAL for an unknown kind or a negative cpu, or an SQLite
 * failure mapped to a negative errno.
 */
int db_events_append(struct db *db, const struct mcr_event *ev)
{
	struct db_chunk *c;
	int err;

	if (!ev->kind || ev->kind > MCR_EV_KIND_MAX || ev->cpu < 0)
		return -EINVAL;
	c = db_events_chunk(db, ev->cpu);
	if (!c)
		return -ENOMEM;
	err = db_chunk_add(c, ev);
	if (err)
		return err;
	if (db_chunk_full(c))
		return db_events_put_open(db, c);
	return 0;
}

/**
 * db_events_flush() - put every open chunk, without committing.
 * @db: database
 */
int db_events_flush(struct db *db)
{
	unsigned int i;
	int err;

	for (i = 0; i < db->nr_open; i++) {
		if (!db->open[i])
			continue;
		err = db_events_put_open(db, db->open[i]);
		if (err)
			return err;
	}
	return 0;
}

/**
 * db_events_commit() - make every event appended so far durable now.
 * @db: database
 *
 * Inside a caller's db_begin() transaction the chunks are written but the
 * commit is left to db_commit().
 */
int db_events_commit(struct db *db)
{
	int err = db_events_flush(db);

	return err ? err : db_events_commit_bulk(db);
}

/* The events in event_chunks; -errno. */
int64_t db_chunk_events(struct db *db)
{
	sqlite3_stmt *st;
	int64_t total = 0;
	int rc;

	rc = sqlite3_prepare_v2(db->sql, "SELECT coalesce(sum(count), 0) FROM event_chunks",
				-1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_err(rc);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		total = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? total : db_err(rc);
}

/**
 * db_read_ids_meta() - the cgroups read in the trace, as meta read_cgroups
 * holds them: sorted, each once, in *@ids (malloc'd, NULL when none).
 * @covers: the events it covers (meta read_cgroups_events)
 *
 * Return: 0, -ENOENT if the keys are missing or do not parse (a file from
 * before them, or damaged: the caller reads the events instead), -ENOMEM.
 */
int db_read_ids_meta(struct db *db, uint64_t **ids, size_t *nr, int64_t *covers)
{
	uint64_t *v = NULL;
	size_t cnt = 0, cap = 0;
	char *text = NULL, *p, *end;
	int err;

	*ids = NULL;
	*nr = 0;
	err = db_meta_get_int(db, "read_cgroups_events", covers);
	if (!err)
		err = db_meta_get(db, "read_cgroups", &text);
	if (err)
		return err < 0 && err != -ENOMEM ? -ENOENT : err;
	for (p = text; p && *p; p = *end ? end + 1 : end) {
		unsigned long long id;

		errno = 0;
		id = strtoull(p, &end, 10);
		if (errno || end == p || !id || (*end && *end != ',') || *p < '0' || *p > '9' ||
		    (cnt && id <= v[cnt - 1])) {
			err = -ENOENT;
			break;
		}
		if (mcr_grow((void **)&v, &cap, cnt + 1, sizeof(*v)) < 0) {
			err = -ENOMEM;
			break;
		}
		v[cnt++] = id;
	}
	free(text);
	if (err) {
		free(v);
		return err;
	}
	*ids = v;
	*nr = cnt;
	return 0;
}

/*
 * meta read_cgroups: the ids read, and read_cgroups_events: the events they
 * cover, all of the file's if the set is whole.  It is whole when the ids
 * this handle collected cover every event (the events before it were
 * covered by the stored set, or there were none) and no rollback lost some;
 * else the keys are left alone, and cover fewer events than the file has.
 */
static int db_read_ids_store(struct db *db, int64_t total)
{
	int64_t before = total - (int64_t)(db->appended - db->read_ids_counted), covers = 0;
	uint64_t *old = NULL;
	size_t nr_old = 0, i, len = 0;
	char *text;
	int err;

	if (db->read_ids_stale)
		return 0;
	if (before > 0) {
		err = db_read_ids_meta(db, &old, &nr_old, &covers);
		if (err == -ENOENT || (!err && covers != before)) {
			free(old);
			return 0;
		}
		if (err)
			return err;
	}
	for (i = 0; i < nr_old; i++) {
		err = db_read_ids_add_one(db, old[i]);
		if (err) {
			free(old);
			return err;
		}
	}
	free(old);
	db_read_ids_compact(db);
	text = malloc(db->nr_read_ids * 21 + 1);
	if (!text)
		return -ENOMEM;
	text[0] = 0;
	for (i = 0; i < db->nr_read_ids; i++)
		len += (size_t)sprintf(text + len, "%s%" PRIu64, i ? "," : "", db->read_ids[i]);
	err = db_meta_set(db, "read_cgroups", text);
	free(text);
	if (!err)
		err = db_meta_set_int(db, "read_cgroups_events", total);
	if (!err)
		db->read_ids_counted = db->appended;
	return err;
}

/*
 * Per-kind counts into event_kinds (added to what they were), the total into
 * meta event_count, the cgroups read into meta read_cgroups.
 */
static int db_events_count(struct db *db)
{
	sqlite3_stmt *st;
	unsigned int k;
	int64_t total = 0;
	int rc, err = 0;

	rc = sqlite3_prepare_v2(db->sql, "UPDATE event_kinds SET events = coalesce(events, 0) + ?"
				" WHERE kind = ?", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_err(rc);
	for (k = 1; k <= MCR_EV_KIND_MAX; k++) {
		sqlite3_bind_int64(st, 1, (int64_t)db->kind_rows[k]);
		sqlite3_bind_int(st, 2, (int)k);
		err = db_step_reset(st);
		if (err)
			break;
	}
	sqlite3_finalize(st);
	if (err)
		return err;
	memset(db->kind_rows, 0, sizeof(db->kind_rows));
	total = db_chunk_events(db);
	if (total < 0)
		return (int)total;
	err = db_meta_set_int(db, "event_count", total);
	return err ? err : db_read_ids_store(db, total);
}

/**
 * db_events_finish() - end the load: commit, count, leave WAL.
 * @db: database the events were appended to
 *
 * The file goes back to a rollback journal so a finished trace is a single
 * file.
 */
int db_events_finish(struct db *db)
{
	int err;

	err = db_events_commit(db);
	if (err)
		return err;
	if (db->in_txn)		/* inside the caller's db_begin() */
		return -EBUSY;
	/* the last commit syncs the file, also of db_create_scratch() (synchronous off) */
	err = db_exec(db, "PRAGMA synchronous = NORMAL; BEGIN IMMEDIATE");
	if (err)
		return err;
	err = db_events_count(db);
	if (err) {
		db_exec(db, "ROLLBACK");
		return err;
	}
	err = db_exec(db, "COMMIT");
	if (!err)
		err = db_exec(db, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE;");
	return err;
}

void db_events_release(struct db *db)
{
	unsigned int i;

	sqlite3_finalize(db->ins_chunk);
	db->ins_chunk = NULL;
	for (i = 0; i < db->nr_open; i++) {
		if (db->open[i])
			db_chunk_free(db->open[i]);
		free(db->open[i]);
	}
	free(db->open);
	db->open = NULL;
	db->nr_open = 0;
}

void db_events_discard(struct db *db)
{
	unsigned int i;

	for (i = 0; i < db->nr_open; i++)
		if (db->open[i])
			db_chunk_reset(db->open[i]);
	memset(db->kind_rows, 0, sizeof(db->kind_rows));
	db->read_ids_stale = true;	/* it may hold ids of the events dropped */
}

/**
 * db_events_kinds() - which event kinds the trace holds, from the chunk index.
 * @db:  open database
 * @out: bit k set if there is an event of kind k
 */
int db_events_kinds(struct db *db, uint32_t *out)
{
	int64_t mask = 0, k;
	int err;

	for (k = 1; k <= MCR_EV_KIND_MAX; k++) {
		char sql[96];
		int64_t any = 0;

		if (!db->row_events) {
			/* bitwise OR over the rows: SQLite has no such aggregate; kinds are few */
			snprintf(sql, sizeof(sql), "SELECT EXISTS (SELECT 1 FROM event_chunks"
				 " WHERE kinds & %lld)", 1LL << k);
		} else {
			/* "kind > 3" lets the partial index events_rare serve the rare kinds */
			snprintf(sql, sizeof(sql), "SELECT EXISTS (SELECT 1 FROM events WHERE %s"
				 " kind = %lld)", k > 3 ? "kind > 3 AND" : "", (long long)k);
		}
		err = db_query_ints(db, sql, &any, NULL);
		if (err)
			return err;
		if (any)
			mask |= 1LL << k;
	}
	*out = (uint32_t)mask;
	return 0;
}

/**
 * db_events_span() - the first and last ts of the trace's events.
 * @db:    open database
 * @first: set unless the trace has no events
 * @last:  likewise
 *
 * From the chunk index (or the rows), within the ts a reader accepts
 * (db_event_check()): an event beyond them is refused when it is read, so a
 * span from it would only mislead (a series sampled over 126 years).
 */
int db_events_span(struct db *db, int64_t *first, int64_t *last)
{
	int64_t f = INT64_MIN, l = INT64_MIN, start, end, lo = 0, hi = INT64_MAX;
	int err;

	err = db_query_ints(db, db->row_events ? "SELECT min(ts), max(ts) FROM events" :
			    "SELECT min(first_ts), max(last_ts) FROM event_chunks", &f, &l);
	if (err || (f == INT64_MIN && l == INT64_MIN))	/* no events: both NULL */
		return err;
	db_event_window(db, &start, &end);
	if (end >= 0) {
		lo = start > DB_TS_SLACK_NS ? start - DB_TS_SLACK_NS : 0;
		hi = end < INT64_MAX - DB_TS_SLACK_NS ? end + DB_TS_SLACK_NS : INT64_MAX;
	}
	/* stored bit for bit: a ts past 2^63 - 1 is negative here */
	f = f < lo ? lo : f > hi ? hi : f;
	l = l < f ? f : l > hi ? hi : l;
	*first = f;
	*last = l;
	return 0;
}
