/* SPDX-License-Identifier: GPL-2.0 */
/*
 * db_local.h - db/ internals shared by its files; not for other modules.
 */
#ifndef MCR_DB_LOCAL_H
#define MCR_DB_LOCAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

#include "event.h"
#include "store.h"

#define DB_BUSY_TIMEOUT_MS	5000

struct db {
	sqlite3			*sql;
	char			*path;		/* as created or opened */
	const char		*pragmas;	/* db_create*()'s settings; NULL if opened */
	sqlite3_stmt		*ins_chunk;
	uint64_t		txn_rows;	/* events in the open bulk transaction */
	uint64_t		appended;	/* events stored through this handle */
	uint64_t		kind_rows[MCR_EV_KIND_MAX + 1];	/* ... per kind, not yet counted */
	/*
	 * ... the cgroups they read (events.c, meta read_cgroups): sorted and
	 * unique up to nr_read_sorted, then as the chunks had them; stale once
	 * a rollback dropped events whose ids it holds
	 */
	uint64_t		*read_ids;
	size_t			nr_read_ids, nr_read_sorted, cap_read_ids;
	uint64_t		read_ids_counted;	/* appended when meta read_cgroups was written */
	bool			read_ids_stale;
	struct db_chunk		**open;		/* db_events_append(): open chunk per CPU */
	unsigned int		nr_open;
	int			store_version;	/* of the chunks put through this handle; 0 none yet */
	bool			writable;
	bool			older;		/* read-only open of a schema 1 file: no results */
	bool			runs_grid;	/* runs has batch_size and nr_cpus (not schema 2) */
	bool			settled;	/* item_summary has max_settled_error (db_schema_settled()) */
	bool			created;	/* by db_create: kind_rows are the whole table */
	bool			row_events;	/* previous format: an events table, no chunks */
	bool			in_txn;		/* a transaction is open (bulk or db_begin) */
	bool			bulk;		/* ... and it is the bulk one, ours to commit */
	char			why[192];	/* the value a reader refused: db_why() */
	/* iter.c: open chunked iterators, and the page cache they found */
	unsigned int		iters;
	int64_t			cache_size, cache_spill;
	struct db_chunk_buf	*chunk_bufs;	/* the chunks they hold decompressed (iter_local.h) */
};

/* schema.c */
/*
 * items.unit of the state items kept in bytes (*_B) and kB (NR_KERNEL_STACK_KB)
 * in files written before the units were fixed: their values are pages.
 */
#define DB_ITEM_UNITS_OLD	"('bytes', 'kB')"

int db_schema_create(struct db *db);
int db_schema_check(struct db *db);
int db_schema_events_table(struct db *db, bool chunks);

/* results_schema.c */
int db_schema_results(struct db *db, bool temp);
bool db_schema_has_results(struct db *db);
int db_schema_upgrade_v1(struct db *db);
int db_schema_upgrade(struct db *db, int64_t ver);
bool db_schema_runs_grid(struct db *db);

/*
 * The one rule for "the latest run": a replay run is reported when no later
 * replay run has its policy, flush model, batch and CPUs.  The lag_report
 * view is written with it (its text byte for byte as files store it) and
 * db_cost_rows_latest_foreach() filters with it.  @id: the SQL spelling of
 * the run's id.  _V2: a schema 2 runs table, which has th = b c and
 * stranded_limit = th + (b - 1) c in place of batch_size and nr_cpus (the
 * same pairs, one to one).
 */
#define DB_LATEST_RUN_SQL(id, batch, cpus) \
	id " = (SELECT max(r2.run_id) FROM runs r2 JOIN runs r1 ON r1.run_id = " id "\n" \
	"\t\t  WHERE r2.kind = 'replay' AND r2.policy = r1.policy\n" \
	"\t\t  AND r2.flush_model IS r1.flush_model AND r2." batch " IS r1." batch "\n" \
	"\t\t  AND r2." cpus " IS r1." cpus ")"
#define DB_LATEST_RUN(id)	DB_LATEST_RUN_SQL(id, "batch_size", "nr_cpus")
#define DB_LATEST_RUN_V2(id)	DB_LATEST_RUN_SQL(id, "th", "stranded_limit")
bool db_schema_settled(struct db *db);
int db_schema_results_columns(struct db *db);

/* sql.c: the helpers under every other file of db/ */
int db_err(int rc);
int db_exec(struct db *db, const char *sql);
int db_prepare(struct db *db, const char *sql, sqlite3_stmt **st);
int db_query_ints(struct db *db, const char *sql, int64_t *a, int64_t *b);
int db_step_reset(sqlite3_stmt *st);
int db_rows_foreach(struct db *db, const char *sql, int (*row)(sqlite3_stmt *st, void *ctx),
		    void *ctx);
int db_stmt_rows(sqlite3_stmt *st, int (*row)(sqlite3_stmt *st, void *ctx), void *ctx);
int db_done(int rc);
int db_rows_end(sqlite3_stmt *st, int rc, int ret);
int db_row_end(sqlite3_stmt *st, int rc);
const char *db_col_text(sqlite3_stmt *st, int i);
bool db_schema_has(struct db *db, const char *name);

/* results_check.c: the rules a result row is read back by (its comment) */
struct db_lag_row;
struct db_run_info;
struct db_validation;

struct db_lag_check {
	struct db	*db;
	double		span_ms;	/* < 0: not computed yet */
};

extern const char *const db_lag_cols[];
int db_res_bad(struct db *db, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int db_lag_check_row(struct db_lag_check *c, sqlite3_stmt *st, const struct db_lag_row *r);
int db_run_info_check(struct db *db, sqlite3_stmt *st, const struct db_run_info *ri);
int db_run_check(sqlite3_stmt *st, void *ctx);
int db_validation_check(struct db *db, sqlite3_stmt *st, const struct db_validation *v);

/* results_lag.c: the lag report's rows; @all also the runs lag_report leaves out */
struct db_lag_filter;
int db_lag_walk(struct db *db, const struct db_lag_filter *f, bool all,
		int (*fn)(const struct db_lag_row *row, void *ctx), void *ctx);

/* validate.c: meta ranges and the hierarchy at open, and every event as read;
 * -MCR_E_BAD_INPUT (or -MCR_E_CPU) and @why */
int db_validate(struct db *db, char *why, size_t len);
struct db_event_bounds;
int db_event_refuse(const struct mcr_event *ev, const struct db_event_bounds *b, char *why,
		    size_t len) __attribute__((cold));

/*
 * Stat items are enum indexes (enum node_stat_item, memcg_stat_item in
 * include/linux/mmzone.h and memcontrol.h, enum vm_event_item in
 * include/linux/vm_event_item.h): a few hundred values in any config.
 */
#define DB_MAX_ITEM		65535

/*
 * An event's ts lies within meta's capture window, give or take this much:
 * memcg-capture reads its clock before it starts tracing and right before
 * it stops, import and synth write the first and last event's ts.  An
 * event a minute outside it is not of that recording.
 */
#define DB_TS_SLACK_NS		(INT64_C(60) * 1000000000)

/*
 * What a kind's fields may be: lo <= item < lo + item_lim (as an unsigned
 * 32-bit difference, so that item_lim 0 refuses every item: the unknown
 * kinds), val_lo <= val <= val_lo + val_span (unsigned 64-bit).
 */
struct db_kind_bounds {
	uint64_t	item_lim;
	uint64_t	val_span;
	int64_t		val_lo;
	int32_t		item_lo;
};

/*
 * What an event may be, by kind, and its ts: ts_lo <= ts <= ts_lo + ts_span
 * (the capture window and DB_TS_SLACK_NS, within [0, 2^63 - 1]).  Built
 * once per reader by db_event_bounds(), for its nr_cpus_possible and
 * db_event_window().
 */
struct db_event_bounds {
	struct db_kind_bounds	k[256];
	uint64_t		ts_lo, ts_span;
	int64_t			win_start, win_end;	/* meta's window; win_end < 0: none */
};

/*
 * meta's capture window [capture_start_ns, capture_end_ns] into *@start and
 * *@end, when both are there, 0 <= start <= end, and the trace clock counts
 * ns (not uptime, counter or x86-tsc: memcg-capture's window is then not in
 * the events' unit); else *@end = -1 (*@start is set either way, -1 when
 * meta has none).  The ts a reader accepts are then
 * [start - DB_TS_SLACK_NS, end + DB_TS_SLACK_NS] within [0, 2^63 - 1].
 */
void db_event_window(struct db *db, int64_t *start, int64_t *end);
void db_event_bounds(struct db_event_bounds *b, unsigned int nr_possible, int64_t win_start,
		     int64_t win_end);

/**
 * db_event_check() - the check of one event as read, whatever the format.
 * @ev:  the event, as decoded from a chunk or a row
 * @b:   db_event_bounds() for the file's nr_cpus_possible and window
 * @why: a sentence naming the event (cpu, seq, ts) and the value on failure
 *
 * The one check every event of a file passes before anything sees it: the
 * readers run it on every event they return; import reads what it wrote
 * back through them, and conversion reads the rows through them.
 *
 * Every kind names a cgroup by the inode of its directory (cgroup_id()):
 * never 0, the id tables' empty key, and below 2^63, SQLite's INTEGER.  The
 * kind must be known and the item within its kind's bounds.  val is what
 * the tracepoint's field can hold: an int for mod_memcg_state and
 * mod_memcg_lruvec_state, stats_updates of memcg_flush_stats a sum of
 * unsigned ints from 0 (never negative), count_memcg_events' unsigned long
 * any 64 bits.  ts within the window (none: below 2^63) and seq below 2^63,
 * as SQLite stores them.  Returns 0, -MCR_E_BAD_INPUT, or -MCR_E_CPU for a
 * lock's target CPU at or above nr_cpus_possible.  The good path is a few
 * compares and no branch among them; db_event_refuse() (validate.c) says
 * which field failed.
 */
static inline int db_event_check(const struct mcr_event *ev, const struct db_event_bounds *b,
				 char *why, size_t len)
{
	const struct db_kind_bounds *k = &b->k[ev->kind];

	if (__builtin_expect((ev->id - 1 < (uint64_t)INT64_MAX) &
			     ((uint64_t)((uint32_t)ev->item - (uint32_t)k->item_lo) < k->item_lim) &
			     ((uint64_t)ev->val - (uint64_t)k->val_lo <= k->val_span) &
			     (ev->ts - b->ts_lo <= b->ts_span) & (ev->seq <= (uint64_t)INT64_MAX), 1))
		return 0;
	return db_event_refuse(ev, b, why, len);
}

/*
 * vfs.c: the name of the VFS a trace is opened with, registered on first
 * use: SQLite's default one with read-ahead for the pages of the event
 * store's BLOBs; NULL (the default VFS) if it could not be registered.
 */
#define DB_VFS_NAME	"memcg-replay-ahead"
const char *db_vfs_name(void);

/* iter_merge.c */
uint64_t *db_keys_merge(uint64_t *a, uint64_t *tmp, uint32_t *len, unsigned int nr);

/* events.c */
int db_bulk_begin(struct db *db);	/* join or begin the bulk transaction */
int db_events_flush(struct db *db);	/* put the open chunks, no commit */
void db_events_discard(struct db *db);
int db_read_ids_meta(struct db *db, uint64_t **ids, size_t *nr, int64_t *covers);
int64_t db_chunk_events(struct db *db);	/* events in event_chunks, or -errno */	/* forget the open chunks (rollback) */
void db_events_release(struct db *db);

#endif
