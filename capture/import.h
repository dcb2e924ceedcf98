/* SPDX-License-Identifier: GPL-2.0 */
/*
 * import.h - turn a trace-cmd recording (trace.dat) into a trace database.
 *
 * Contract: import_run() reads a trace.dat with libtracecmd (file versions 6
 * and 7, compressed or not, events in the top buffer or in a -B instance),
 * keeps the memcg events and the rstat/mkdir/rmdir events of the memory
 * hierarchy, and writes them to a new database in replay order (merged by
 * (ts, cpu), ring-buffer order within a CPU, per-CPU seq from 0).  It also
 * writes meta, the cgroup hierarchy, missed-event gaps and the kernel's
 * per-CPU ring-buffer stats when the file has them.
 *
 * It never prints or exits: libtracecmd's and libtraceevent's own messages
 * are silenced (their log level is process-wide).  It returns 0 or a negative
 * errno / -MCR_E_*: -ENOENT etc. for an unreadable input, -MCR_E_CORRUPT for
 * anything libtracecmd cannot open (not a trace.dat, truncated, corrupt),
 * -MCR_E_NO_EVENTS for a valid trace.dat without memcg events.  What it
 * wrote is checked by the readers' own checks before it is renamed into
 * place (import_check.c): their error (-MCR_E_TIME, -MCR_E_BAD_INPUT, ...)
 * and res->refused with res->why if a reader would refuse it.  The output
 * is written into @db, a new trace database the caller made (db_create()
 * or, for an output that takes no more disk than its final size,
 * db_create_scratch(): the caller writes it under a temporary name, and
 * publishes or discards it, as every writer's).  On failure @db holds
 * anything: the caller discards it.
 *
 * A compressed (v7) trace.dat of IMPORT_PLAIN_MIN bytes or more is first
 * decompressed by libtracecmd's own copy (what trace-cmd convert
 * --compression none does) beside @db, under its name with DB_FILE_SCRATCH
 * appended, and removed before import_run() returns: libtracecmd reads a
 * compressed file in time that grows with the square of its length
 * (import_plain.c).  No other name is written.
 *
 * libtracecmd 1.3.1 crashes on some damaged files (tracecmd_open() on a
 * truncated v6 file, a v7 file with a byte flipped, tracecmd_copy()'s input
 * closed): the import runs in a child process (import_child.c) that writes
 * the database through a handle of its own (db_reopen(): an SQLite
 * connection never crosses a fork(); @db is not used meanwhile, nor may the
 * caller use it), and the decompressed copy is made in a child of its own.  A
 * crash is -MCR_E_CORRUPT with res->detail naming the signal, and its files
 * are removed.  A v6 file is first opened in a short-lived child of its
 * own, whose crash report, under a sanitizer, is not shown.  The caller
 * must not ignore SIGCHLD; SIGINT, SIGTERM and SIGHUP reaching it while the
 * child runs are passed to the child, and raised again once it has ended.
 */
#ifndef MCR_IMPORT_H
#define MCR_IMPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "db.h"
#include "event.h"

/* Called every few thousand records; @total is 0 when unknown. */
typedef void (*import_progress_fn)(void *ctx, uint64_t done, uint64_t total);

/* When to decompress a compressed trace.dat into a plain copy before reading it. */
enum import_plain {
	IMPORT_PLAIN_AUTO,	/* IMPORT_PLAIN_MIN bytes or more; if the copy fails, read directly */
	IMPORT_PLAIN_ALWAYS,	/* any compressed file; the copy's failure is the import's */
	IMPORT_PLAIN_NEVER,
};

#define IMPORT_PLAIN_MIN	(8ull << 20)

struct import_opts {
	const char		*trace_path;	/* the trace.dat */
	bool			in_process;	/* no child: a crash of libtracecmd is the
						 * caller's (a fuzzer, which wants coverage) */
	enum import_plain	plain;
	const char		*cgroupfs;	/* live cgroup tree to walk, or NULL */
	const char		*options;	/* the command line, stored in meta "options" */
	import_progress_fn	progress;	/* may be NULL */
	void			*progress_ctx;
};

struct import_result {
	uint64_t	records;			/* records read from the chosen buffer */
	uint64_t	events;				/* events kept and written */
	uint64_t	per_kind[MCR_EV_KIND_MAX + 1];	/* kept events by kind */
	uint64_t	other_hierarchy;		/* rstat/mkdir/rmdir events dropped: not memcg */
	uint64_t	gaps;				/* sub-buffers flagged with missed events */
	uint64_t	missed;				/* events counted as missed by those flags */
	uint64_t	gaps_unknown;			/* flagged sub-buffers whose count is unknown */
	int64_t		overrun;			/* sum of the kernel's overrun stats; -1 unknown */
	int64_t		unaccounted;			/* kernel read+entries minus records; -1 unknown */
	uint64_t	cgroups;			/* cgroups written */
	uint64_t	parent_unknown;			/* ids attached under root for lack of a parent */
	uint64_t	first_ts, last_ts;
	int		nr_cpus;
	int		file_version;			/* 6 or 7; 0 if unknown */
	int		hierarchy_id;			/* memory hierarchy id, -1 unknown */
	const char	*hierarchy_how;			/* how it was found (static string) */
	char		buffer[64];			/* -B instance name, "" for the top buffer */
	bool		items_named;			/* item names came from BTF */
	const char	*detail;			/* on -MCR_E_CORRUPT: why (static string) */
	bool		refused;			/* the readers' check refused the output */
	bool		plain;				/* read from a decompressed copy */
	int		plain_err;			/* AUTO: why the copy failed (read directly) */
	char		why[256];			/* ... and why: the value and where */
};

/**
 * import_run() - import a trace.dat into a new trace database
 * @o:   what to read, and how
 * @db:  the new, empty database to write, no transaction open
 * @res: filled with counts and findings (also on failure, as far as known)
 *
 * Return: 0 on success, negative errno or -MCR_E_* on failure.
 */
int import_run(const struct import_opts *o, struct db *db, struct import_result *res);

#endif
