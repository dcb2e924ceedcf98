// SPDX-License-Identifier: GPL-2.0
/*
 * schema.c - the trace database schema, embedded so the binaries need no data
 * file.  Every column carries an SQL comment inside its CREATE statement, so
 * `sqlite3 FILE .schema` documents a file by itself.
 *
 * The trace part: meta, cgroups, items, cpu_stats, gaps, event_chunks (the
 * event store, store.h), event_kinds and one typed view per event kind over
 * the events table, which db_schema_events_table() creates on request
 * (memcg-replay events --table) and files of schema 1 hold instead of
 * event_chunks.  The result tables live in results_schema.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "db_local.h"
#include "error.h"

static const char db_trace_sql[] =
"CREATE TABLE meta (\n"
"	-- What the trace is, one row per key.  Keys written by memcg-replay (the four marked\n"
"	-- required are, or a reader refuses the file; those marked default are read as it when\n"
"	-- missing, with a warning):\n"
"	--   source              'memcg-capture' | 'trace-cmd import' | 'synth:<scenario>'\n"
"	--   tool_version        memcg-replay version that wrote the trace\n"
"	--   kernel_release      uname -r of the traced kernel ('synthetic' for synth); default unknown\n"
"	--   nr_cpus_online      CPUs online while tracing; TH = batch_size * nr_cpus_online (required)\n"
"	--   nr_cpus_possible    possible CPUs; every CPU an event names is below it (required)\n"
"	--   page_size           bytes per page (required)\n"
"	--   batch_size          MEMCG_CHARGE_BATCH of the traced kernel (64) (required)\n"
"	--   trace_clock         clock of every ts ('mono', 'boot', 'local', ... or 'synthetic');\n"
"	--                       default unknown\n"
"	--   capture_start_ns    ts at which tracing started\n"
"	--   capture_end_ns      ts at which tracing stopped\n"
"	--   options             the capture / import / synth options, JSON\n"
"	--   memory_hierarchy_id cgroup hierarchy id of the memory controller (events.aux of its rstat events);\n"
"	--                       default unknown\n"
"	--   cgroup_version      1 or 2\n"
"	--   warnings            what the reader should know about this trace, one per line\n"
"	--   event_count         rows in events, written when loading finished\n"
"	--   store_version       encoding of event_chunks (db/store.h): 2; missing = 1\n"
"	--   read_cgroups        ids of the cgroups read (non-forced memcg_flush_stats), sorted, comma-separated\n"
"	--   read_cgroups_events the events read_cgroups covers; not all of event_chunks': ignored\n"
"	key	TEXT PRIMARY KEY NOT NULL,	-- one of the keys above (others may be added)\n"
"	value	TEXT				-- always text; integers in decimal\n"
");\n"
"CREATE TABLE cgroups (\n"
"	-- Every cgroup of the traced hierarchy that the trace names or that existed.\n"
"	id		INTEGER PRIMARY KEY,	-- cgroup id = inode of the cgroup directory (events.id)\n"
"	parent		INTEGER NOT NULL,	-- parent's id; 0 for the root or unknown\n"
"	path		TEXT,			-- '/a/b' below the hierarchy root, '/' for the root; NULL unknown\n"
"	level		INTEGER NOT NULL,	-- depth: root 0; -1 unknown\n"
"	created_ts	INTEGER NOT NULL,	-- ts of its cgroup_mkdir; -1 if it existed before the trace\n"
"	removed_ts	INTEGER NOT NULL,	-- ts of its cgroup_rmdir; -1 if not removed during the trace\n"
"	parent_unknown	INTEGER NOT NULL	-- 1: attached under the root for lack of a known parent\n"
");\n"
"CREATE TABLE items (\n"
"	-- Names of the stat items that updates carry, from the kernel's BTF.\n"
"	kind	INTEGER NOT NULL,	-- event kind the enum belongs to: 1 state, 2 lruvec, 3 events\n"
"	item	INTEGER NOT NULL,	-- enum value as traced (events.item)\n"
"	name	TEXT NOT NULL,		-- enumerator name, e.g. 'NR_FILE_PAGES', 'PGFAULT'\n"
"	unit	TEXT,			-- unit of events.val: 'events' (kind 3) or 'pages' (kinds 1, 2: the\n"
"					-- kernel traces every state item in pages; the *_B ones and\n"
"					-- NR_KERNEL_STACK_KB, kept in bytes or kB, rounded to whole pages,\n"
"					-- a nonzero update to at least one); NULL unknown.  Files written\n"
"					-- before say 'bytes' or 'kB' for those: pages too (a writer\n"
"					-- relabels them)\n"
"	PRIMARY KEY (kind, item)\n"
") WITHOUT ROWID;\n"
"CREATE TABLE cpu_stats (\n"
"	-- Ring-buffer statistics per CPU (tracefs per_cpu/cpuN/stats) at start and end.\n"
"	cpu		INTEGER NOT NULL,	-- ring-buffer CPU\n"
"	phase		TEXT NOT NULL,		-- 'start' or 'end' of the recording\n"
"	entries		INTEGER NOT NULL,	-- 'entries': events in the buffer; -1 unknown\n"
"	overrun		INTEGER NOT NULL,	-- 'overrun': events overwritten before read; -1 unknown\n"
"	commit_overrun	INTEGER NOT NULL,	-- 'commit overrun': events lost inside a commit; -1 unknown\n"
"	bytes		INTEGER NOT NULL,	-- 'bytes': bytes in the buffer; -1 unknown\n"
"	dropped		INTEGER NOT NULL,	-- 'dropped events': events not recorded, buffer full; -1 unknown\n"
"	read		INTEGER NOT NULL,	-- 'read events': events consumed by the reader; -1 unknown\n"
"	PRIMARY KEY (cpu, phase)\n"
");\n"
"CREATE TABLE gaps (\n"
"	-- Places where the ring buffer lost events: replay cannot know what happened there.\n"
"	cpu	INTEGER NOT NULL,	-- CPU whose buffer lost events\n"
"	ts	INTEGER NOT NULL,	-- the loss happened just before this ts\n"
"	count	INTEGER NOT NULL	-- events lost; -1 unknown\n"
");\n"
"CREATE TABLE stat_reads (\n"
"	-- memcg-capture --read: every line of every memory.stat it read, as printed.  Each read is\n"
"	-- a real read: the trace holds its memcg_flush_stats of that cgroup between ts_before and\n"
"	-- ts_after.  Lines and units: sim/statlines.c.  Empty without --read.\n"
"	read		INTEGER NOT NULL,	-- read number from 0, in the order the reads began (all --read paths)\n"
"	cgroup		INTEGER NOT NULL,	-- cgroup id (cgroups.id) of the cgroup whose memory.stat was read\n"
"	ts_before	INTEGER NOT NULL,	-- trace clock (meta trace_clock) just before the read() call\n"
"	ts_after	INTEGER NOT NULL,	-- trace clock just after that read() returned (> ts_before)\n"
"	pos		INTEGER NOT NULL,	-- line number in the file, from 0\n"
"	line		TEXT NOT NULL,		-- the line as printed, without its newline\n"
"	name		TEXT NOT NULL,		-- its first field, e.g. 'total_rss' (v1), 'anon' (v2)\n"
"	value		INTEGER,		-- its number as printed; NULL if not a decimal below 2^63\n"
"	unit		TEXT,			-- of value: 'bytes' or 'count'; NULL for a line of no known unit\n"
"	PRIMARY KEY (read, pos)\n"
") WITHOUT ROWID;\n"
"CREATE TABLE event_chunks (\n"
"	-- The events, compactly: one row per chunk of one CPU's consecutive events, encoded and\n"
"	-- zstd-compressed (format: db/store.h).  Replay order merges the CPUs by (ts, cpu) and keeps\n"
"	-- ring-buffer order within one CPU.  For the events as rows (table events and the views\n"
"	-- below), run once: memcg-replay events FILE --table   (or --format csv for a range).\n"
"	chunk		INTEGER PRIMARY KEY,	-- insertion order; the order of one CPU's chunks\n"
"	cpu		INTEGER NOT NULL,	-- ring-buffer CPU of every event in it (< nr_cpus_possible)\n"
"	first_ts	INTEGER NOT NULL,	-- ts of its first event\n"
"	last_ts		INTEGER NOT NULL,	-- ts of its last event\n"
"	first_seq	INTEGER NOT NULL,	-- per-CPU sequence number of its first event\n"
"	count		INTEGER NOT NULL,	-- events in it\n"
"	kinds		INTEGER NOT NULL,	-- bit k set: holds events of kind k (event_kinds.kind)\n"
"	raw_bytes	INTEGER NOT NULL,	-- encoded size before compression\n"
"	data		BLOB NOT NULL		-- the encoded events, zstd\n"
");\n"
"CREATE INDEX event_chunks_by_cpu ON event_chunks (cpu, first_ts);\n"
/*
 * The views over the rare kinds say "kind > 3" so that the partial index
 * events_rare (created after the load) serves them: SQLite uses a partial
 * index only when the query repeats its WHERE term.  Every view lists its rows
 * in replay order.
 */
"CREATE VIEW update_events AS SELECT\n"
"	-- mod_memcg_state, mod_memcg_lruvec_state and count_memcg_events.\n"
"	e.rowid AS event,		-- replay position (events.rowid)\n"
"	e.ts, e.cpu, e.seq,		-- as in events\n"
"	k.name AS kind,			-- tracepoint name\n"
"	e.id AS cgroup_id,		-- memcg updated\n"
"	c.path AS cgroup,		-- its path; NULL unknown\n"
"	e.item,				-- stat item (enum value)\n"
"	i.name AS item_name,		-- enumerator name; NULL unknown\n"
"	i.unit,				-- unit of val; NULL unknown\n"
"	e.val,				-- traced val (count_memcg_events: unsigned count bit for bit)\n"
"	e.pid				-- task that emitted it\n"
"FROM events e\n"
"LEFT JOIN event_kinds k ON k.kind = e.kind\n"
"LEFT JOIN cgroups c ON c.id = e.id\n"
"LEFT JOIN items i ON i.kind = e.kind AND i.item = e.item\n"
"WHERE e.kind IN (1, 2, 3);\n"
"CREATE VIEW flush_events AS SELECT\n"
"	-- memcg_flush_stats: a reader asked for fresh stats.\n"
"	e.rowid AS event,		-- replay position (events.rowid)\n"
"	e.ts, e.cpu, e.seq,		-- as in events\n"
"	e.id AS cgroup_id,		-- memcg whose stats were requested\n"
"	c.path AS cgroup,		-- its path; NULL unknown\n"
"	e.val AS stats_updates,		-- the kernel's atomic stats_updates of that memcg\n"
"	e.flags & 1 AS force,		-- 1: forced flush (flushes regardless of stats_updates)\n"
"	(e.flags >> 1) & 1 AS needs_flush,	-- 1: the kernel found stats_updates > TH\n"
"	e.pid				-- task that asked\n"
"FROM events e\n"
"LEFT JOIN cgroups c ON c.id = e.id\n"
"WHERE e.kind > 3 AND e.kind = 4;\n"
"CREATE VIEW rstat_lock_events AS SELECT\n"
"	-- cgroup_rstat_locked / _unlock / _lock_contended: one per-CPU flush window.\n"
"	e.rowid AS event,		-- replay position (events.rowid)\n"
"	e.ts, e.cpu, e.seq,		-- as in events\n"
"	CASE e.kind WHEN 5 THEN 'locked' WHEN 6 THEN 'unlock' ELSE 'contended' END AS op,	-- which one\n"
"	e.id AS cgroup_id,		-- cgroup being flushed\n"
"	c.path AS cgroup,		-- its path; NULL unknown\n"
"	e.item AS target_cpu,		-- CPU whose per-CPU tree is flushed; -1 none\n"
"	e.aux AS root,			-- hierarchy id (meta memory_hierarchy_id for memcg flushes)\n"
"	e.level,			-- level of the flushed cgroup\n"
"	e.flags & 1 AS contended,	-- 1: the lock was contended\n"
"	e.pid				-- task that flushed\n"
"FROM events e\n"
"LEFT JOIN cgroups c ON c.id = e.id\n"
"WHERE e.kind > 3 AND e.kind IN (5, 6, 7)\n"
"ORDER BY e.rowid;\n"
"CREATE VIEW cgroup_events AS SELECT\n"
"	-- cgroup_mkdir / cgroup_rmdir.\n"
"	e.rowid AS event,		-- replay position (events.rowid)\n"
"	e.ts, e.cpu, e.seq,		-- as in events\n"
"	CASE e.kind WHEN 8 THEN 'mkdir' ELSE 'rmdir' END AS op,	-- which one\n"
"	e.id AS cgroup_id,		-- cgroup created or removed\n"
"	c.path AS cgroup,		-- its path; NULL unknown\n"
"	e.aux AS root,			-- hierarchy id\n"
"	e.level,			-- its level\n"
"	e.pid				-- task that did it\n"
"FROM events e\n"
"LEFT JOIN cgroups c ON c.id = e.id\n"
"WHERE e.kind > 3 AND e.kind IN (8, 9)\n"
"ORDER BY e.rowid;\n"
"CREATE VIEW visit_events AS SELECT\n"
"	-- Explicit flush visits (synthetic traces): the flush visited one memcg on one CPU's tree.\n"
"	e.rowid AS event,		-- replay position (events.rowid)\n"
"	e.ts, e.cpu, e.seq,		-- as in events\n"
"	e.id AS cgroup_id,		-- memcg visited\n"
"	c.path AS cgroup,		-- its path; NULL unknown\n"
"	e.item AS target_cpu,		-- CPU whose per-CPU tree it was on\n"
"	e.pid				-- task that flushed\n"
"FROM events e\n"
"LEFT JOIN cgroups c ON c.id = e.id\n"
"WHERE e.kind > 3 AND e.kind = 10;\n";

/* The events as rows: memcg-replay events FILE --table (db_events_table()). */
static const char db_events_table_sql[] =
"CREATE TABLE events (\n"
"	-- One row per event, written from event_chunks by memcg-replay events FILE --table\n"
"	-- (files of schema 1 held only this table).  rowid order is the replay order: merged\n"
"	-- across CPUs by (ts, cpu), ring-buffer order within one CPU.\n"
"	ts	INTEGER NOT NULL,	-- ns in meta trace_clock; never decreases within one cpu\n"
"	cpu	INTEGER NOT NULL,	-- ring-buffer CPU the event was recorded on (< nr_cpus_possible)\n"
"	seq	INTEGER NOT NULL,	-- per-CPU sequence number from 0, in ring-buffer order\n"
"	kind	INTEGER NOT NULL,	-- event kind: event_kinds.kind\n"
"	id	INTEGER NOT NULL,	-- cgroup id (cgroups.id): memcg updated, flushed, visited, created or removed\n"
"	item	INTEGER NOT NULL,	-- updates: stat item (items.item); rstat lock events and visits:\n"
"					-- CPU whose per-CPU tree is flushed, -1 none; otherwise 0\n"
"	val	INTEGER NOT NULL,	-- state/lruvec: traced val (pages, signed); count_memcg_events: the\n"
"					-- unsigned long count bit for bit; memcg_flush_stats: stats_updates; otherwise 0\n"
"	aux	INTEGER NOT NULL,	-- rstat lock events and mkdir/rmdir: hierarchy id (root); otherwise 0\n"
"	level	INTEGER NOT NULL,	-- rstat lock events and mkdir/rmdir: level of the cgroup; otherwise 0\n"
"	flags	INTEGER NOT NULL,	-- memcg_flush_stats: 1 force | 2 needs_flush; rstat: 1 contended\n"
"	pid	INTEGER NOT NULL	-- pid of the task that emitted the event; 0 unknown or synthetic\n"
");\n"
"CREATE INDEX events_rare ON events (kind) WHERE kind > 3;\n";
/* What readers rely on: a prepare fails if a table or one of these columns is missing. */
static const char *const db_trace_columns[] = {
	"SELECT key, value FROM meta",
	"SELECT id, parent, path, level, created_ts, removed_ts, parent_unknown FROM cgroups",
	"SELECT kind, item, name, unit FROM items",
	"SELECT cpu, phase, entries, overrun, commit_overrun, bytes, dropped, read FROM cpu_stats",
	"SELECT cpu, ts, count FROM gaps",
	"SELECT chunk, cpu, first_ts, last_ts, first_seq, count, kinds, raw_bytes, data FROM event_chunks",
};

/* The previous format: the events as rows, no chunks. */
static const char db_row_events_columns[] =
	"SELECT ts, cpu, seq, kind, id, item, val, aux, level, flags, pid FROM events";

static const char db_kinds_sql[] =
"CREATE TABLE IF NOT EXISTS event_kinds (\n"
"	-- Names of events.kind, for joins.\n"
"	kind	INTEGER PRIMARY KEY,	-- events.kind\n"
"	name	TEXT NOT NULL,		-- tracepoint name; 'flush_visit' for explicit visits of synthetic traces\n"
"	events	INTEGER			-- rows of this kind in events, counted when loading finished; NULL before\n"
");\n";

static int db_fill_kinds(struct db *db)
{
	sqlite3_stmt *st;
	unsigned int k;
	int rc;

	rc = sqlite3_prepare_v2(db->sql,
				"INSERT OR IGNORE INTO event_kinds (kind, name) VALUES (?, ?)",
				-1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_err(rc);
	for (k = 1; k <= MCR_EV_KIND_MAX && rc == SQLITE_OK; k++) {
		const char *name = mcr_event_kind_name(k);

		if (!name)
			continue;
		sqlite3_bind_int(st, 1, (int)k);
		sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
		rc = sqlite3_step(st);
		rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return db_err(rc);
}

/**
 * db_schema_create() - create the whole schema in an empty database.
 * @db: a fresh database, no transaction open
 *
 * application_id and user_version are set in the same transaction as the
 * tables: a file either is complete or does not identify as ours.
 */
int db_schema_create(struct db *db)
{
	char *pragmas;
	int err;

	pragmas = sqlite3_mprintf("PRAGMA application_id = %d; PRAGMA user_version = %d;",
				  DB_APPLICATION_ID, DB_SCHEMA_VERSION);
	if (!pragmas)
		return -ENOMEM;
	err = db_exec(db, "BEGIN");
	if (!err)
		err = db_exec(db, db_trace_sql);
	if (!err)
		err = db_exec(db, db_kinds_sql);
	if (!err)
		err = db_fill_kinds(db);
	if (!err)
		err = db_schema_results(db, false);
	if (!err)
		err = db_exec(db, pragmas);
	sqlite3_free(pragmas);
	if (!err)
		return db_exec(db, "COMMIT");
	db_exec(db, "ROLLBACK");
	return err;
}

/*
 * Files written before the units were fixed label the kernel's byte and kB
 * items of kinds 1 and 2 DB_ITEM_UNITS_OLD, but their traced values are pages
 * (mcr_item_unit()): a writer relabels them, so that SQL on the file reads
 * right.  Readers of a file that no writer opened map the old labels.
 */
static int db_items_fix_units(struct db *db)
{
	int64_t n = 0;
	int err;

	err = db_query_ints(db, "SELECT count(*) FROM items WHERE kind IN (1, 2) AND unit IN "
			    DB_ITEM_UNITS_OLD, &n, NULL);
	if (err || !n)
		return err;
	return db_exec(db, "UPDATE items SET unit = 'pages' WHERE kind IN (1, 2) AND unit IN "
		       DB_ITEM_UNITS_OLD);
}

/**
 * db_schema_check() - refuse a database that lacks what readers need.
 * @db: an open database whose identity was checked
 *
 * Returns 0, or -MCR_E_SCHEMA if a trace table or one of its columns is
 * missing.  When writable, relabels the items of an earlier version's units
 * (db_items_fix_units()) and recreates event_kinds if it was dropped (only
 * the views need it).
 */
int db_schema_check(struct db *db)
{
	sqlite3_stmt *st;
	size_t i;
	int rc, err;

	for (i = 0; i < sizeof(db_trace_columns) / sizeof(db_trace_columns[0]); i++) {
		rc = sqlite3_prepare_v2(db->sql, db_trace_columns[i], -1, &st, NULL);
		sqlite3_finalize(st);
		if (rc == SQLITE_ERROR && strstr(db_trace_columns[i], "event_chunks") &&
		    !db_schema_has(db, "event_chunks")) {
			/* the previous format: readable as rows, convertible */
			rc = sqlite3_prepare_v2(db->sql, db_row_events_columns, -1, &st, NULL);
			sqlite3_finalize(st);
			db->row_events = rc == SQLITE_OK;
		}
		if (rc == SQLITE_ERROR)
			return -MCR_E_SCHEMA;
		if (rc != SQLITE_OK)
			return db_err(rc);
	}
	if (!db->writable)
		return 0;
	err = db_items_fix_units(db);
	if (err || db_schema_has(db, "event_kinds"))
		return err;
	err = db_exec(db, db_kinds_sql);
	return err ? err : db_fill_kinds(db);
}

/**
 * db_schema_events_table() - create the empty events table, or the empty
 * event_chunks table (converting a file of the previous format).
 * @db:     open writable database, inside a transaction
 * @chunks: which one
 */
int db_schema_events_table(struct db *db, bool chunks)
{
	const char *tbl = strstr(db_trace_sql, "CREATE TABLE event_chunks");
	char *sql;
	int err;

	if (chunks) {
		sql = strndup(tbl, (size_t)(strstr(tbl, "CREATE VIEW") - tbl));
		if (!sql)
			return -ENOMEM;
		err = db_exec(db, sql);
		free(sql);
		return err;
	}
	return db_exec(db, db_events_table_sql);
}
