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
	sqlite3_stmt		*ins_chunk;
	uint64_t		txn_rows;	/* events in the open bulk transaction */
	uint64_t		appended;	/* events stored through this handle */
	uint64_t		kind_rows[MCR_EV_KIND_MAX + 1];	/* ... per kind, not yet counted */
	struct db_chunk		**open;		/* db_events_append(): open chunk per CPU */
	unsigned int		nr_open;
	int			store_version;	/* of the chunks put through this handle; 0 none yet */
	bool			writable;
	bool			older;		/* read-only open of a schema 1 file: no results */
	bool			runs_grid;	/* runs has batch_size and nr_cpus (not schema 2) */
	bool			created;	/* by db_create: kind_rows are the whole table */
	bool			row_events;	/* previous format: an events table, no chunks */
	bool			in_txn;		/* a transaction is open (bulk or db_begin) */
	bool			bulk;		/* ... and it is the bulk one, ours to commit */
	char			why[192];	/* the value a reader refused: db_why() */
	/* iter.c: open chunked iterators, and the page cache they found */
	unsigned int		iters;
	int64_t			cache_size, cache_spill;
};

/* schema.c */
int db_schema_create(struct db *db);
int db_schema_check(struct db *db);
int db_schema_events_table(struct db *db, bool chunks);

bool db_schema_has(struct db *db, const char *name);

/* results_schema.c */
int db_schema_results(struct db *db, bool temp);
bool db_schema_has_results(struct db *db);
int db_schema_upgrade_v1(struct db *db);
int db_schema_upgrade(struct db *db, int64_t ver);
bool db_schema_runs_grid(struct db *db);

/* db.c */
int db_err(int rc);
int db_exec(struct db *db, const char *sql);
int db_prepare(struct db *db, const char *sql, sqlite3_stmt **st);
int db_query_ints(struct db *db, const char *sql, int64_t *a, int64_t *b);
int db_step_reset(sqlite3_stmt *st);
int db_rows_foreach(struct db *db, const char *sql, int (*row)(sqlite3_stmt *st, void *ctx),
		    void *ctx);
int db_stmt_rows(sqlite3_stmt *st, int (*row)(sqlite3_stmt *st, void *ctx), void *ctx);

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
 * What an event's item may be, by kind: lo <= item < lo + lim (as unsigned
 * 64-bit, so that lim 0 refuses every item: the unknown kinds).  Built once
 * per reader by db_event_bounds(), for its nr_cpus_possible.
 */
struct db_event_bounds {
	int32_t		lo[256];
	uint64_t	lim[256];
};
void db_event_bounds(struct db_event_bounds *b, unsigned int nr_possible);

/**
 * db_event_check() - the check of one event as read, whatever the format.
 * @ev:  the event, as decoded from a chunk or a row
 * @b:   db_event_bounds() for the file's nr_cpus_possible
 * @why: a sentence naming the event (cpu, seq, ts) and the value on failure
 *
 * Every kind names a cgroup by the inode of its directory (cgroup_id()):
 * never 0, the id tables' empty key, and below 2^63, SQLite's INTEGER.  The
 * kind must be known and the item within its kind's bounds.  Returns 0,
 * -MCR_E_BAD_INPUT, or -MCR_E_CPU for a lock's target CPU at or above
 * nr_cpus_possible.  db_iter_next() runs it on every event it returns: the
 * good path is two compares; db_event_refuse() (validate.c) says which
 * field failed.
 */
static inline int db_event_check(const struct mcr_event *ev, const struct db_event_bounds *b,
				 char *why, size_t len)
{
	if (__builtin_expect(ev->id - 1 < (uint64_t)INT64_MAX &&
			     (uint64_t)(uint32_t)(ev->item - b->lo[ev->kind]) < b->lim[ev->kind], 1))
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
int db_events_flush(struct db *db);	/* put the open chunks, no commit */
void db_events_discard(struct db *db);	/* forget the open chunks (rollback) */
void db_events_release(struct db *db);

#endif
