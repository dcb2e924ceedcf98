/* SPDX-License-Identifier: GPL-2.0 */
/*
 * db.h - the trace database: one SQLite file with a trace and any number of
 * replay results.  Schema and column docs: db/schema.c
 * (also `sqlite3 FILE .schema`).
 *
 * Contract: db/ owns the schema, the file identity checks (application_id,
 * user_version), the event store (store.h: events written in per-CPU chunks and
 * streamed back in replay order), and reading the
 * other trace tables (meta, cgroups, gaps, event kinds) as plain structs.  It never
 * prints or exits; it returns negative errno or -MCR_E_* (sim/base/error.h).  Other
 * modules never run SQL on result tables: db/results.h is their interface.
 */
#ifndef MCR_DB_H
#define MCR_DB_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sqlite3.h>

#include "db_file.h"
#include "event.h"

/*
 * 2: events in event_chunks (the store; 1 had one row per event in events, still
 * read, and converted by db_events_convert()), and per-item errors at reads and
 * over time, stranded episodes (replacing the unflushed-volume results of 1).
 * 3: runs.batch_size and runs.nr_cpus (replay's parameter grid); the views
 * group by them.  A file of 2 is upgraded in place by a writer (its results
 * stay) and read as it is otherwise.
 * 4: event_chunks may hold store version 2 (meta store_version; store.h).
 * Nothing else changed: a file of 3 is read as it is and upgraded in place
 * by a writer, but a build of 3 refuses a file of 4 as newer (exit 6) instead
 * of failing on chunks it cannot decode.
 * 5: series is a view over series_lines, which stores a line's samples a
 * piece at a time (db/results_schema.c): the same rows.  A file of 2 to 4
 * is read as it is (its table series has the view's columns) and upgraded
 * in place by a writer, its series rows moved; a build of 4 refuses a file
 * of 5 as newer instead of failing at its first insert into the view.
 */
#define DB_SCHEMA_VERSION	5

struct db;

/*
 * Create a new trace database at @path (mode 0600; cgroup paths name tenants).
 * An existing file is replaced.  Fast bulk-load settings are used until
 * db_events_finish().
 */
int db_create(const char *path, struct db **out);
/*
 * The same, for a writer that removes the file if it fails (import): no
 * journal on disk, nothing beside the file; its final size is its peak.
 */
int db_create_scratch(const char *path, struct db **out);

/*
 * Open an existing trace database.  Refuses (with these codes) a file that is
 * not SQLite (-MCR_E_NOT_SQLITE), not ours (-MCR_E_NOT_OURS), of a newer
 * schema (-MCR_E_NEWER), or missing a table (-MCR_E_SCHEMA); -ENOENT if absent.
 * Results tables are created on demand when @writable.  A file of schema 1
 * (results of an older memcg-replay that this one cannot read): read-only,
 * its trace reads as usual and every result reader of db/results.h returns
 * -MCR_E_OLDER; opened @writable, its old results are dropped and it becomes
 * current: replaying it again is the way forward.
 * A file a writer left mid-transaction (a hot journal: replay or events
 * --table interrupted) is rolled back first, even for a read-only open, as
 * any SQLite writer opening it would; -EROFS when we may not write it.
 */
int db_open(const char *path, bool writable, struct db **out);
/*
 * db_open(), and then the one validation of the file's own values (db/validate.c):
 * meta ranges (nr_cpus_possible, nr_cpus_online, batch_size, page_size) and
 * the cgroup hierarchy (ids, unknown parents, cycles, levels).  A value out
 * of range is -MCR_E_BAD_INPUT with a sentence naming the row and the value in
 * @why (may be NULL); db_open() runs the same check without the sentence.
 */
int db_open_why(const char *path, bool writable, struct db **out, char *why, size_t len);
int db_close(struct db *db);	/* commits pending work; frees */
const char *db_path(const struct db *db);	/* the file name it was created or opened with */
/*
 * Another handle on the database db_create_scratch() made, with the same
 * settings, for a writer forked after it was made (SQLite connections never
 * cross a fork()); db_clear() empties one db_create*() made back to what it
 * wrote, for a writer that starts over.
 */
int db_reopen(struct db *db, struct db **out);
int db_clear(struct db *db);
/*
 * The optional meta values @db lacks (kernel_release, trace_clock,
 * memory_hierarchy_id), each with the default it is read as, in one
 * sentence into @buf; returns how many.  The required ones (nr_cpus_possible,
 * nr_cpus_online, batch_size, page_size) are db_open_why()'s: -MCR_E_BAD_INPUT.
 */
int db_meta_defaults(struct db *db, char *buf, size_t len);
sqlite3 *db_sqlite(struct db *db);

/* meta: key/value (see schema.c for the keys we write; nr_cpus_possible is required). */
int db_meta_set(struct db *db, const char *key, const char *value);
int db_meta_set_int(struct db *db, const char *key, int64_t value);
int db_meta_get(struct db *db, const char *key, char **value);	/* malloc'd; -ENOENT */
int db_meta_get_int(struct db *db, const char *key, int64_t *value);
/* @s as a JSON string literal, for the meta values that are JSON objects (options). */
void db_json_string(FILE *f, const char *s);

struct db_cgroup {
	uint64_t	id;		/* cgroup id = inode of the cgroup directory */
	uint64_t	parent;		/* 0 for the root or unknown */
	const char	*path;		/* "/a/b", "/" for the root; NULL if unknown */
	int		level;		/* root = 0; -1 unknown */
	int64_t		created_ts;	/* -1: existed before the trace */
	int64_t		removed_ts;	/* -1: not removed during the trace */
	bool		parent_unknown;	/* attached under root for lack of a parent */
};
int db_cgroup_put(struct db *db, const struct db_cgroup *cg);	/* insert or replace */
/* Every cgroup, parents first (by level, unknown last, then id); stops on non-zero. */
int db_cgroups_foreach(struct db *db, int (*fn)(const struct db_cgroup *cg, void *arg), void *arg);

/*
 * Cgroups of unknown parent, as every command counts them (replay hangs them
 * under the root): a row marked parent_unknown, a row other than the root's
 * without a parent, or an id the events name (update, flush, rstat lock,
 * mkdir of the traced hierarchy) without a row.  The first two are
 * db_cgroup_parent_unknown(); the census adds the third while its caller
 * reads the events: open, one db_cgroup_census_event() per event (-ENOMEM),
 * then db_cgroup_census_unknown() (rows and ids without a row).
 */
bool db_cgroup_parent_unknown(const struct db_cgroup *cg);
struct db_cgroup_census;
int db_cgroup_census_open(struct db *db, struct db_cgroup_census **out);
int db_cgroup_census_event(struct db_cgroup_census *c, const struct mcr_event *ev);
uint64_t db_cgroup_census_unknown(const struct db_cgroup_census *c);
uint64_t db_cgroup_census_unlisted(const struct db_cgroup_census *c);	/* ids without a row */
void db_cgroup_census_free(struct db_cgroup_census *c);

/* BTF names of stat items: kind is MCR_EV_STATE, MCR_EV_LRUVEC or MCR_EV_EVENTS. */
int db_item_put(struct db *db, int kind, int item, const char *name, const char *unit);
/* Its name ("NR_FILE_PAGES"), or "kind:item" when the trace has none; returns @buf. */
const char *db_item_name(struct db *db, int kind, int item, char *buf, size_t len);

struct db_cpu_stats {
	int		cpu;
	const char	*phase;		/* "start" or "end" */
	int64_t		entries, overrun, commit_overrun, bytes, dropped, read;	/* -1 unknown */
};
int db_cpu_stats_put(struct db *db, const struct db_cpu_stats *st);

/* A gap: events lost on @cpu just before @ts; @count -1 when unknown. */
struct db_gap {
	uint64_t	ts;
	int64_t		count;
	int		cpu;
};
int db_gap_put(struct db *db, int cpu, uint64_t ts, int64_t count);
/* Every gap, by ts; stops on non-zero. */
int db_gaps_foreach(struct db *db, int (*fn)(const struct db_gap *gap, void *arg), void *arg);

/*
 * What a trace holds, read from its tables without a pass over the events
 * (info): the cgroups table's rows, deepest level and rows without a path
 * (cgroups_err: -MCR_E_CORRUPT or -EIO when it cannot be read, the counts
 * 0), and the per-kind event counts stored when the load finished (events
 * their sum, or -MCR_E_SCHEMA without them).
 */
struct db_summary {
	int64_t		cgroups, cgroup_max_level, cgroups_no_path;
	int		cgroups_err;
	int64_t		events;
	uint64_t	by_kind[MCR_EV_KIND_MAX + 1];
};
int db_summary(struct db *db, struct db_summary *out);

/*
 * Event writing (the store: db/store.h).  The producer appends in replay
 * order: merged across CPUs by (ts, cpu), ring-buffer order (seq increasing)
 * within a CPU.  db_events_append() keeps one open chunk per CPU and writes
 * each when full (committing every few chunks: what is committed survives a
 * crash); capture's readers make their own chunks (db_chunk_put()).
 * db_events_finish() commits, counts and switches to safe settings.
 */
int db_events_append(struct db *db, const struct mcr_event *ev);
int db_events_commit(struct db *db);	/* make what was appended durable now */
int db_events_finish(struct db *db);
/* Bit k of *out set if the trace holds an event of kind k (from the index, no decoding). */
int db_events_kinds(struct db *db, uint32_t *out);
/*
 * ts of the first and last event, within the ts the readers accept (the
 * capture window, give or take a minute); left alone if there is none.
 */
int db_events_span(struct db *db, int64_t *first, int64_t *last);
/* (Re)write the events table (and so the typed views) from the store; *out rows. */
int db_events_table(struct db *db, uint64_t *out);
/* Convert a file of the previous format (events table only); -EALREADY if current. */
int db_events_convert(struct db *db, uint64_t *out);
/* True for a file of the previous format (it is read as rows). */
bool db_events_are_rows(struct db *db);

/*
 * Streaming read in replay order.  Memory does not grow with the number of
 * events.  db_iter_next() returns 1 with *ev filled, 0 at the end, or a
 * negative error: -MCR_E_TIME if ts goes backwards within one CPU, -MCR_E_CPU
 * if an event names a CPU >= meta nr_cpus_possible, -MCR_E_CORRUPT if a chunk
 * does not decode, -MCR_E_BAD_INPUT for a field out of range (an unknown
 * kind, cgroup id 0, an item beyond any stat enum, a val the tracepoint
 * cannot hold, a ts a minute outside the capture window: db_event_check()).
 * Files of the previous format (rows) are read too.
 * While an iterator of the store is open, it holds a read transaction (the
 * caller's, or its own: other connections cannot commit to a file in
 * rollback-journal mode until it is closed), and the connection's page
 * cache keeps 64 KiB of pages read, spilling dirty pages at the count it
 * had before.  Iterators open on one connection at once (one thread only,
 * as for any use of a connection) share the chunks they are in: a chunk is
 * decompressed and checked once, whichever reaches it first, and held in
 * memory once for all of them.
 */
struct db_iter;
int db_iter_open(struct db *db, struct db_iter **out);
/* Only the events with from <= ts <= to; chunks outside are skipped unread. */
int db_iter_open_range(struct db *db, uint64_t from, uint64_t to, struct db_iter **out);
int db_iter_next(struct db_iter *it, struct mcr_event *ev);
/*
 * The next events, as many as come: *evs is set to an array of pointers to
 * them, in replay order; the array and the events stay valid until the next
 * call on the iterator (either function), which may overwrite them.  Returns
 * the count (> 0), 0 at the end, or a negative error as db_iter_next().
 */
int db_iter_next_batch(struct db_iter *it, const struct mcr_event *const **evs);
uint64_t db_iter_count(const struct db_iter *it);	/* events total, for progress */
void db_iter_close(struct db_iter *it);
/*
 * The sentence naming the event (cpu, seq, ts or row) and the value behind
 * the last error a db_iter_next() on @db returned; "" if it has none.
 */
const char *db_why(const struct db *db);

/*
 * One memory.stat read of memcg-capture --read (table stat_reads): its
 * number, the cgroup read, the trace clock around the read() call, and each
 * line as printed.  @value is valid when @has_value; @unit "bytes", "count"
 * or NULL.
 */
struct db_stat_line {
	const char	*line;		/* as printed, without the newline */
	size_t		len;
	const char	*name;		/* first field, NUL-terminated */
	int64_t		value;
	bool		has_value;
	const char	*unit;
};
struct db_stat_read {
	int64_t		read;
	uint64_t	cgroup;
	uint64_t	ts_before, ts_after;
};
/*
 * db_stat_read_put - store @n lines of read @r.  Joins the open transaction
 * (the capture's bulk one, committed with its events) or opens one.
 */
int db_stat_read_put(struct db *db, const struct db_stat_read *r, const struct db_stat_line *lines,
		     size_t n);
/*
 * Where synth's hidden-order kernel made each update inside a lock window
 * (table true_order, which replay never reads): @visits of the window's
 * visits came before it, and any count in [@lo, @hi] is the same order for it.
 */
struct db_true_order {
	int		cpu;
	uint64_t	seq;
	uint32_t	visits, lo, hi;
};
/*
 * db_true_order_put - create true_order if missing and store @n rows (@n may
 * be 0).  Joins the open transaction or opens the bulk one.
 */
int db_true_order_put(struct db *db, const struct db_true_order *rows, size_t n);
/*
 * Does @db hold a logged memory.stat read (files written before the
 * stat_reads table, and captures without --read, do not)?
 */
bool db_has_stat_reads(struct db *db);
/*
 * Every stored line, by (read, pos); the strings live until @fn returns.
 * Stops on non-zero.  -ENOENT without a stat_reads table.
 */
int db_stat_reads_foreach(struct db *db, int (*fn)(const struct db_stat_read *r,
						   const struct db_stat_line *l, void *ctx),
			  void *ctx);

/*
 * The first non-forced read of run @run_id of @cgroup with @lo <= ts <= @hi
 * (the traced request of a logged read): its read_id, ts, the run's decision
 * and the kernel's.  -ENOENT if none.
 */
struct db_read_match {
	int64_t		read_id;
	uint64_t	ts;
	bool		flushed;		/* the run's decision */
	bool		kernel_needs_flush;	/* the kernel's, as traced */
};
int db_read_in_window(struct db *db, int64_t run_id, uint64_t cgroup, uint64_t lo, uint64_t hi,
		      struct db_read_match *m);
/* The request ts of run @run_id's first forced read (the periodic root flush); -ENOENT none. */
int db_first_forced_read(struct db *db, int64_t run_id, uint64_t *ts);
/* Every read_errors row of @read_id. */
int db_read_errors_foreach(struct db *db, int64_t read_id,
			   int (*fn)(int kind, int item, int64_t error, void *ctx), void *ctx);

/* Run results: one transaction around everything written for a run. */
int db_begin(struct db *db);
int db_commit(struct db *db);
int db_rollback(struct db *db);

#endif
