// SPDX-License-Identifier: GPL-2.0
/*
 * db.c - opening, creating and identifying trace databases; the small tables.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db.h"
#include "db_file.h"
#include "db_local.h"
#include "utf8.h"
#include "error.h"

/*
 * SQLite opens any file and only fails at the first read, and an empty file
 * is a valid empty database to it: look at the header ourselves.  Its
 * application_id may not be there yet (a WAL not checkpointed): SQLite's
 * own answer decides that (db_check_identity()).
 */
static int db_check_magic(const char *path)
{
	int err = db_file_identify(path);

	return err == -MCR_E_NOT_OURS ? 0 : err;
}

/* application_id, then user_version: not ours, newer, older, or half-created. */
static int db_check_identity(struct db *db)
{
	int64_t app = 0, ver = 0;
	int err;

	err = db_query_ints(db, "PRAGMA application_id", &app, NULL);
	if (err)
		return err;
	if ((uint32_t)app != DB_APPLICATION_ID)
		return -MCR_E_NOT_OURS;
	err = db_query_ints(db, "PRAGMA user_version", &ver, NULL);
	if (err)
		return err;
	if (ver > DB_SCHEMA_VERSION)
		return -MCR_E_NEWER;
	if (ver < 1)
		return -MCR_E_SCHEMA;
	if (ver < DB_SCHEMA_VERSION) {
		if (db->writable)
			return db_schema_upgrade(db, ver);
		/* the trace reads fine; the results of 1 do not, those of 2 do */
		db->older = ver < 2;
	}
	return 0;
}

static int db_alloc(const char *path, int flags, struct db **out)
{
	struct db *db;
	int rc;

	db = calloc(1, sizeof(*db));
	if (!db)
		return -ENOMEM;
	db->path = strdup(path);
	if (!db->path) {
		free(db);
		return -ENOMEM;
	}
	/* a handle is used by one thread at a time: skip SQLite's per-call mutexes */
	rc = sqlite3_open_v2(path, &db->sql, flags | SQLITE_OPEN_NOMUTEX, db_vfs_name());
	if (rc != SQLITE_OK) {
		int err = db->sql ? db_err(sqlite3_extended_errcode(db->sql)) : -ENOMEM;

		sqlite3_close(db->sql);
		free(db->path);
		free(db);
		return err ? err : -EIO;
	}
	/* SQLite silently falls back to read-only for a write-protected file. */
	if ((flags & SQLITE_OPEN_READWRITE) && sqlite3_db_readonly(db->sql, "main") == 1) {
		sqlite3_close(db->sql);
		free(db->path);
		free(db);
		return -EACCES;
	}
	sqlite3_extended_result_codes(db->sql, 1);
	sqlite3_busy_timeout(db->sql, DB_BUSY_TIMEOUT_MS);
	db->writable = flags & SQLITE_OPEN_READWRITE;
	*out = db;
	return 0;
}

static void db_free(struct db *db)
{
	db_events_release(db);
	sqlite3_close(db->sql);
	free(db->path);
	free(db);
}

/* Remove @path and the sidecars an old database of that name may have left. */
static int db_unlink_all(const char *path)
{
	/* a stale -wal would be replayed into the new file */
	return db_file_unlink(path, 0, DB_FILE_SFX_DB);
}

/* db_create_scratch()'s settings: the only ones db_reopen() takes */
static const char db_pragmas_scratch[] = "PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF;"
					 "PRAGMA cache_size = -1024; PRAGMA temp_store = MEMORY;";

/*
 * Creates a new trace database at @path with @pragmas (the journal mode
 * among them) set before the schema is written.
 */
static int db_create_with(const char *path, const char *pragmas, struct db **out)
{
	struct db *db;
	int fd, err;

	err = db_unlink_all(path);
	if (err)
		return err;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	close(fd);
	err = db_alloc(path, SQLITE_OPEN_READWRITE, &db);
	if (err)
		goto fail_unlink;
	db->created = true;
	db->pragmas = pragmas;
	err = db_exec(db, pragmas);
	if (!err)
		err = db_schema_create(db);
	if (err) {
		db_free(db);
		goto fail_unlink;
	}
	*out = db;
	return 0;

fail_unlink:
	db_unlink_all(path);
	return err;
}

/**
 * db_create() - create a new trace database, replacing any file at @path.
 * @path: file name
 * @out:  the open database
 *
 * The file is created 0600 by us (cgroup paths name tenants), not by SQLite,
 * whose journals then inherit the mode.  WAL with synchronous=NORMAL keeps
 * every committed batch across a crash of the writer.  The cache holds one
 * bulk transaction (~3.5 MB): a larger one only costs page faults while
 * loading (measured with bench/db_rate), as no large index is built.
 */
int db_create(const char *path, struct db **out)
{
	/*
	 * Writers append chunks, whose pages are never read again: a small page
	 * cache.  An 8 MiB one grew a page at a time through a capture's first
	 * 8 MiB of output, a fault and an mprotect() each, and was a tenth of
	 * the writer's CPU.
	 */
	return db_create_with(path, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
			      "PRAGMA cache_size = -1024; PRAGMA temp_store = MEMORY;", out);
}

/**
 * db_create_scratch() - db_create() for a writer that removes the file if
 * it fails before db_events_finish() (import): the rollback journal is kept
 * in memory, and nothing is written beside the file, no -wal, -shm or
 * -journal.  The file only grows: its size at the end is the most the
 * writer took on disk.  Nothing is synced until db_events_finish()'s last
 * commit; a crash of the writer leaves the file inconsistent.
 */
int db_create_scratch(const char *path, struct db **out)
{
	return db_create_with(path, db_pragmas_scratch, out);
}

/**
 * db_open() - open an existing trace database and check that it is ours.
 * @path:     file name; never created
 * @writable: open read-write (results can be written) or read-only
 * @out:      the open database
 *
 * A trace that has no result tables yet gets them: in the file when
 * @writable, as empty TEMP tables otherwise.
 */
int db_open(const char *path, bool writable, struct db **out)
{
	return db_open_why(path, writable, out, NULL, 0);
}

/*
 * What a read-only handle cannot do: roll back the hot journal a writer
 * interrupted mid-transaction left (replay, events --table), or recover its
 * WAL.  SQLite refuses every read until a handle that may write did.
 */
static bool db_needs_recovery(struct db *db)
{
	switch (sqlite3_extended_errcode(db->sql)) {
	case SQLITE_READONLY_ROLLBACK:
	case SQLITE_READONLY_RECOVERY:
	case SQLITE_READONLY_CANTINIT:
		return true;
	default:
		return false;
	}
}

/*
 * Let SQLite roll back (recover) @path as any writer opening it would: the
 * file is then as its last committed transaction left it.  -EROFS, with the
 * reason, when we may not write it.
 */
static int db_recover(const char *path, char *why, size_t len)
{
	struct db *db;
	int64_t n = 0;
	int err;

	err = db_alloc(path, SQLITE_OPEN_READWRITE, &db);
	if (!err) {
		err = db_query_ints(db, "SELECT count(*) FROM sqlite_master", &n, NULL);
		db_free(db);
	}
	if (err == -EACCES || err == -EROFS) {
		if (why && len)
			snprintf(why, len, "a writer of it was interrupted mid-transaction; "
				 "its journal must be rolled back by a user who may write the file "
				 "(any memcg-replay command run by them does it)");
		return -EROFS;
	}
	return err;
}

int db_open_why(const char *path, bool writable, struct db **out, char *why, size_t len)
{
	struct db *db;
	int err;

	if (why && len)
		*why = '\0';

	err = db_check_magic(path);
	if (err)
		return err;
	err = db_alloc(path, writable ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY, &db);
	if (err)
		return err;
	err = db_check_identity(db);
	if (err == -EROFS && !writable && db_needs_recovery(db)) {
		db_free(db);
		err = db_recover(path, why, len);
		if (err)
			return err;
		err = db_alloc(path, SQLITE_OPEN_READONLY, &db);
		if (err)
			return err;
		err = db_check_identity(db);
	}
	if (!err)
		err = db_schema_check(db);
	if (!err && !db->older && writable)
		err = db_schema_results_columns(db);
	if (!err && !db->older && !db_schema_has_results(db))
		err = db_schema_results(db, !writable);
	if (!err) {
		db->runs_grid = db_schema_runs_grid(db);
		db->settled = db_schema_settled(db);
	}
	if (!err)
		err = db_validate(db, why, len);
	if (err) {
		db_free(db);
		return err;
	}
	*out = db;
	return 0;
}

/**
 * db_close() - commit pending work and free the handle.
 * @db: database; NULL is fine
 *
 * Events appended since the last commit are committed, as is an open
 * db_begin() transaction.  Returns 0 or the first error.
 */
int db_close(struct db *db)
{
	int err = 0, rc;

	if (!db)
		return 0;
	err = db_events_commit(db);
	if (!err)
		err = db_commit(db);
	db_events_release(db);
	rc = sqlite3_close(db->sql);
	free(db->read_ids);
	free(db->path);
	free(db);
	return err ? err : db_err(rc);
}

const char *db_path(const struct db *db)
{
	return db->path;
}

/**
 * db_reopen() - another handle on a database db_create_scratch() made.
 * @db:  as db_create_scratch() returned it, no transaction open
 * @out: the new handle, with the settings @db was created with
 *
 * For a writer in a process forked after @db was created: an SQLite
 * connection is never used on both sides of a fork(), so the child opens
 * its own.  Only a database with nothing beside it: a WAL database's -shm
 * is mapped once per process and shared by its handles, a mapping and
 * locks a fork would copy without their owner.  -EINVAL for any other.
 */
int db_reopen(struct db *db, struct db **out)
{
	struct db *n;
	int err;

	if (db->pragmas != db_pragmas_scratch || db->in_txn)
		return -EINVAL;
	err = db_alloc(db->path, SQLITE_OPEN_READWRITE, &n);
	if (err)
		return err;
	n->created = true;
	n->pragmas = db->pragmas;
	err = db_exec(n, n->pragmas);
	if (err) {
		db_free(n);
		return err;
	}
	*out = n;
	return 0;
}

/* The one row of text @st returns, into *(char **)@ctx. */
static int db_text_row(sqlite3_stmt *st, void *ctx)
{
	const char *t = db_col_text(st, 0);

	*(char **)ctx = t ? strdup(t) : NULL;
	return t && !*(char **)ctx ? -ENOMEM : 0;
}

/**
 * db_clear() - empty a database db_create() made back to what it wrote.
 * @db: as db_create(), db_create_scratch() or db_reopen() returned it
 *
 * Every table and view is dropped and the schema written again, in two
 * transactions: what the handle appended is gone, and what it appends next
 * is the whole trace (a writer that starts over: import's second pass).
 */
int db_clear(struct db *db)
{
	char *drop = NULL;
	int err;

	if (!db->created || db->in_txn)
		return -EINVAL;
	db_events_release(db);
	db->appended = 0;
	db->store_version = 0;
	memset(db->kind_rows, 0, sizeof(db->kind_rows));
	db->nr_read_ids = db->nr_read_sorted = 0;
	db->read_ids_counted = 0;
	db->read_ids_stale = false;
	/* the statements first: a table is not dropped while a read of the schema runs */
	err = db_rows_foreach(db, "SELECT group_concat('DROP ' || type || ' IF EXISTS \"'"
			      " || replace(name, '\"', '\"\"') || '\"', ';') FROM (SELECT type,"
			      " name FROM sqlite_master WHERE type IN ('view', 'table') AND name"
			      " NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY type = 'table')",
			      db_text_row, &drop);
	if (!err && drop) {
		err = db_exec(db, "BEGIN");
		err = err ?: db_exec(db, drop);
		if (err)
			db_exec(db, "ROLLBACK");
		else
			err = db_exec(db, "COMMIT");
	}
	free(drop);
	return err ?: db_schema_create(db);
}

/*
 * JSON text is UTF-8 (RFC 8259), but a cgroup's name is any bytes the
 * kernel took: each byte that does not belong to a well-formed UTF-8
 * sequence is written as U+FFFD, the replacement character, as "\ufffd".
 * The row keeps its cgroup_id, which tells such names apart.
 */
void db_json_string(FILE *f, const char *s)
{
	size_t n;

	fputc('"', f);
	for (; *s; s += n ? n : 1) {
		n = mcr_utf8_len(s);
		if (!n)
			fputs("\\ufffd", f);
		else if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fwrite(s, 1, n, f);
	}
	fputc('"', f);
}

/* The small tables */

static int db_step_done(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_err(rc);
}

int db_cgroup_put(struct db *db, const struct db_cgroup *cg)
{
	sqlite3_stmt *st;
	int rc;

	rc = sqlite3_prepare_v2(db->sql,
				"INSERT OR REPLACE INTO cgroups (id, parent, path, level, created_ts,"
				" removed_ts, parent_unknown) VALUES (?, ?, ?, ?, ?, ?, ?)",
				-1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_err(rc);
	sqlite3_bind_int64(st, 1, (int64_t)cg->id);
	sqlite3_bind_int64(st, 2, (int64_t)cg->parent);
	if (cg->path)
		sqlite3_bind_text(st, 3, cg->path, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 4, cg->level);
	sqlite3_bind_int64(st, 5, cg->created_ts);
	sqlite3_bind_int64(st, 6, cg->removed_ts);
	sqlite3_bind_int(st, 7, cg->parent_unknown);
	return db_step_done(st);
}

struct db_cgroups_walk {
	int	(*fn)(const struct db_cgroup *cg, void *arg);
	void	*arg;
};

static int db_cgroup_row(sqlite3_stmt *st, void *ctx)
{
	const struct db_cgroups_walk *w = ctx;
	struct db_cgroup cg = {
		.id = (uint64_t)sqlite3_column_int64(st, 0),
		.parent = (uint64_t)sqlite3_column_int64(st, 1),
		.path = (const char *)sqlite3_column_text(st, 2),
		.level = sqlite3_column_int(st, 3),
		.created_ts = sqlite3_column_int64(st, 4),
		.removed_ts = sqlite3_column_int64(st, 5),
		.parent_unknown = sqlite3_column_int(st, 6),
	};

	return w->fn(&cg, w->arg);
}

/**
 * db_cgroups_foreach() - call @fn for every cgroup, parents before children.
 * @fn:  callback; cg->path is valid during the call only.  A non-zero return
 *       stops the walk and is returned.
 *
 * Order: level (unknown levels last), then id.
 */
int db_cgroups_foreach(struct db *db, int (*fn)(const struct db_cgroup *cg, void *arg), void *arg)
{
	struct db_cgroups_walk w = { fn, arg };

	return db_rows_foreach(db, "SELECT id, parent, path, level, created_ts, removed_ts,"
			       " parent_unknown FROM cgroups ORDER BY level < 0, level, id",
			       db_cgroup_row, &w);
}

int db_item_put(struct db *db, int kind, int item, const char *name, const char *unit)
{
	sqlite3_stmt *st;
	int rc;

	if (kind < MCR_EV_STATE || kind > MCR_EV_EVENTS || !name)
		return -EINVAL;
	rc = sqlite3_prepare_v2(db->sql,
				"INSERT OR REPLACE INTO items (kind, item, name, unit) VALUES (?, ?, ?, ?)",
				-1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_err(rc);
	sqlite3_bind_int(st, 1, kind);
	sqlite3_bind_int(st, 2, item);
	sqlite3_bind_text(st, 3, name, -1, SQLITE_STATIC);
	if (unit)
		sqlite3_bind_text(st, 4, unit, -1, SQLITE_STATIC);
	return db_step_done(st);
}

int db_cpu_stats_put(struct db *db, const struct db_cpu_stats *cs)
{
	sqlite3_stmt *st;
	int rc;

	if (!cs->phase || (strcmp(cs->phase, "start") && strcmp(cs->phase, "end")))
		return -EINVAL;
	rc = sqlite3_prepare_v2(db->sql,
				"INSERT OR REPLACE INTO cpu_stats (cpu, phase, entries, overrun,"
				" commit_overrun, bytes, dropped, read) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
				-1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_err(rc);
	sqlite3_bind_int(st, 1, cs->cpu);
	sqlite3_bind_text(st, 2, cs->phase, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, cs->entries);
	sqlite3_bind_int64(st, 4, cs->overrun);
	sqlite3_bind_int64(st, 5, cs->commit_overrun);
	sqlite3_bind_int64(st, 6, cs->bytes);
	sqlite3_bind_int64(st, 7, cs->dropped);
	sqlite3_bind_int64(st, 8, cs->read);
	return db_step_done(st);
}

int db_gap_put(struct db *db, int cpu, uint64_t ts, int64_t count)
{
	sqlite3_stmt *st;
	int rc;

	rc = sqlite3_prepare_v2(db->sql, "INSERT INTO gaps (cpu, ts, count) VALUES (?, ?, ?)",
				-1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_err(rc);
	sqlite3_bind_int(st, 1, cpu);
	sqlite3_bind_int64(st, 2, (int64_t)ts);
	sqlite3_bind_int64(st, 3, count < 0 ? -1 : count);
	return db_step_done(st);
}

/* Transactions for results.  Events appended before are committed first. */

int db_begin(struct db *db)
{
	int err;

	err = db_events_commit(db);
	if (err)
		return err;
	err = db_exec(db, "BEGIN IMMEDIATE");
	if (!err)
		db->in_txn = true;
	return err;
}

int db_commit(struct db *db)
{
	int err;

	err = db_events_flush(db);
	if (err || !db->in_txn)
		return err;
	err = db_exec(db, "COMMIT");
	if (!err) {
		db->in_txn = false;
		db->bulk = false;
		db->txn_rows = 0;
	}
	return err;
}

int db_rollback(struct db *db)
{
	if (!db->in_txn)
		return 0;
	db->in_txn = false;
	db->bulk = false;
	db_events_discard(db);
	return db_exec(db, "ROLLBACK");
}

/**
 * db_item_name() - the BTF name of a stat item, or "kind:item" when unknown.
 * @kind: items.kind; a state line also answers to its lruvec name
 * @buf:  filled in; returned
 */
const char *db_item_name(struct db *db, int kind, int item, char *buf, size_t len)
{
	sqlite3_stmt *st;
	const unsigned char *name;

	snprintf(buf, len, "%s:%d", kind == MCR_EV_EVENTS ? "events" :
		 kind == MCR_EV_LRUVEC ? "lruvec" : "state", item);
	if (sqlite3_prepare_v2(db->sql, "SELECT name FROM items WHERE item = ?2 AND (kind = ?1"
			       " OR (?1 = 1 AND kind = 2)) ORDER BY kind LIMIT 1", -1, &st,
			       NULL) != SQLITE_OK)
		return buf;
	sqlite3_bind_int(st, 1, kind);
	sqlite3_bind_int(st, 2, item);
	if (sqlite3_step(st) == SQLITE_ROW && (name = sqlite3_column_text(st, 0)))
		snprintf(buf, len, "%s", (const char *)name);
	sqlite3_finalize(st);
	return buf;
}
