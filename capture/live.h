/* SPDX-License-Identifier: GPL-2.0 */
/*
 * live.h - live capture of the memcg and cgroup rstat tracepoints into a
 * trace database, through a private tracefs instance.
 *
 * Contract: live_open() creates and configures the instance (buffer size,
 * clock, 64 KiB sub-buffers where the kernel has them, the nine events, a
 * kernel filter on the hierarchy id); live_start() records per-CPU stats and
 * starts one reader thread per online CPU and one writer thread.  Readers
 * sleep until the kernel says their buffer is a quarter full (or 100 ms),
 * read a sub-buffer a syscall, decode it (with per-CPU sequence numbers)
 * straight into their own chunk of the event store (db/store.h), filter by
 * the cgroup scope, queue gaps, and seal (compress) each chunk when full or
 * 0.4 s old; they wait for SQLite only under --cgroup (below).  The writer
 * only inserts the sealed chunks and the gaps, and commits at least twice a
 * second.  live_stop() turns tracing off, drains everything, and records the
 * end stats; live_close() removes the instance.  The database is shared
 * under one lock: the writer per chunk and gap, readers for cgroup_mkdir/
 * rmdir and, under --cgroup, for each event's scope test (the cgroup table
 * shares the lock).
 * Never prints; returns negative errno or -MCR_E_*.
 */
#ifndef MCR_LIVE_H
#define MCR_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct db;
struct cgtrack;
struct live;

#define LIVE_INSTANCE_PREFIX	"memcg_capture_"

struct live_opts {
	const char	*instance;	/* unique instance name */
	const char	*clock;		/* trace_clock value */
	unsigned int	buffer_kb;	/* ring buffer per CPU */
	int		hierarchy_id;	/* memory hierarchy: "root" of cgroup events */
	struct cgtrack	*cgroups;	/* cgroup table and scope; used by the readers */
	bool		scoped;		/* --cgroup below the root: filter every event */
};

/* Totals so far; safe to call while running. */
struct live_totals {
	uint64_t	records;	/* decoded from the ring buffers */
	uint64_t	stored;		/* put into chunks for the database */
	uint64_t	filtered;	/* dropped by the --cgroup scope */
	uint64_t	missed;		/* lost events counted by in-band markers */
	uint64_t	missed_unknown;	/* sub-buffers flagged with an unknown loss */
	uint64_t	kernel_lost;	/* overrun + dropped from the stats, end or last poll */
	uint64_t	kernel_read;	/* "read events" from the stats, at the end */
	uint64_t	first_ts, last_ts;	/* trace clock of the first and last record */
	int		write_error;	/* first database error of the writer, or 0 */
};

/* tracefs mounted?  Mounts it when not (*mounted set); -MCR_E_NO_TRACEFS on failure. */
int live_tracefs_check(bool *mounted, const char **dir);

/* memcg tracepoints present?  -MCR_E_NO_MEMCG_EVENTS if not. */
int live_events_check(void);

/* Called with each stale instance removed (its pid is gone). */
typedef void (*live_stale_fn)(void *ctx, const char *name);

/* live_remove_stale - remove LIVE_INSTANCE_PREFIX<pid> instances of dead pids. */
int live_remove_stale(live_stale_fn fn, void *ctx);

int live_open(const struct live_opts *opts, struct db *db, struct live **out);

/*
 * live_cpu_list - a sysfs CPU list ("0-1,4", e.g. /sys/devices/system/cpu/online)
 * into a malloc'd array *@cpus; returns the count or a negative errno.
 */
int live_cpu_list(const char *path, int **cpus);
int live_start(struct live *lv);
/* Async-signal-unsafe; call from the main thread.  Idempotent. */
int live_stop(struct live *lv);
void live_totals(struct live *lv, struct live_totals *t);
/* live_poll_loss - reread the per-CPU stats for the lost-so-far figure. */
int live_poll_loss(struct live *lv);
/* Online CPUs being read; capture start and end in the trace clock. */
int live_nr_cpus(const struct live *lv);
/* Bytes of a ring-buffer sub-buffer, the unit of each read. */
int live_subbuf_size(const struct live *lv);
int live_clock_now(struct live *lv, uint64_t *ns);
/*
 * memcg-capture --read: one thread per target reads its memory.stat every
 * interval while tracing, takes the trace clock (live_clock_now()) just
 * before and just after the read() call that makes the kernel print it (and
 * flush), and stores each line as printed into stat_reads (db.h), under the
 * database lock.  Reads are numbered across all targets as they begin.  A
 * target whose read fails (its cgroup removed) stops; the others go on.
 */
struct live_statread_opts {
	const char	*path;		/* the memory.stat file */
	uint64_t	cgroup;		/* its cgroup's id (stat_reads.cgroup) */
	int		version;	/* cgroup version: the line table (statlines.h) */
	unsigned int	interval_ms;	/* > 0 */
};
struct live_statread_totals {
	uint64_t	reads, lines;
	int		error;		/* first error of a target, 0 if none */
	const char	*failed;	/* that target's path */
	uint64_t	failed_reads;	/* reads it made before */
};
struct live_statreads;
/* Start one thread per target; after live_start(), so that the trace holds the reads' flushes. */
int live_statreads_start(struct live *lv, const struct live_statread_opts *o, size_t n,
			 struct live_statreads **out);
/* Stop and join them (before live_stop()), sum up into @t, and free; NULL is a no-op. */
void live_statreads_stop(struct live_statreads *sr, struct live_statread_totals *t);

/*
 * Rotation (memcg-capture --rotate): the capture goes on into another
 * database from a point of the trace clock on, without stopping.
 * live_rotate_begin() writes the cgroup table as it is to @next and keeps
 * both tables current, makes @next the database of the --read threads,
 * tells the readers a boundary comes, then takes it (now, *@boundary: so a
 * reader that has not looked yet has read nothing past it), and reads the
 * per-CPU stats there (the old file's end and @next's start rows).  Each
 * reader then seals its open chunk at its first record with ts >= boundary,
 * or, when it has none, once its ring buffer reads empty 10 ms after the
 * clock passed the boundary: every record before goes to the old file,
 * every one from there on to @next, so each chunk and gap belongs to exactly
 * one file.  (A record the kernel stamped before the boundary but committed
 * after that, past its own reserve-to-commit window, would go to @next: the
 * sequence numbers stay exact either way.)  live_rotate_end() waits for
 * every reader to pass the boundary and the writer to put and commit all of
 * the old file's; the old database is then the caller's alone, with its
 * cpu_stats 'end' rows and its remaining-loss gap written, and @seq
 * (live_nr_cpus() entries) its per-CPU sequence numbers.  One rotation at a
 * time, from the thread that calls live_stop(); not before live_start().
 */
struct live_seq {
	int		cpu;
	int64_t		first, last;	/* per-CPU sequence numbers; last = first - 1: none */
	uint64_t	filtered;	/* numbered but not stored (--cgroup, other hierarchies) */
};
int live_rotate_begin(struct live *lv, struct db *next, uint64_t *boundary);
int live_rotate_end(struct live *lv, struct live_seq *seq);
/* The events' bytes (compressed chunks) put into the current database so far. */
uint64_t live_file_bytes(struct live *lv);
/* After live_stop(): the last database's per-CPU sequence numbers. */
void live_seq_current(struct live *lv, struct live_seq *seq);

/*
 * memcg-capture --watch: a copy of the events the readers store, for a
 * consumer in this process, in the order replay reads the database: each
 * CPU's in ring-buffer order, merged by (ts, cpu).  Each reader puts what it
 * stores into its own single-producer queue (of the size below) and,
 * after each drain of its ring buffer, publishes the time up to which the
 * buffer is drained (the trace clock just before the drain, less
 * LIVE_WATCH_SLACK_NS for records reserved but not yet committed then).
 * live_watch_next() hands out an event once no CPU can still deliver an
 * earlier one: below every empty queue's drained time.  A reader never
 * waits for the consumer: when its queue is full, the watch has overflowed,
 * every reader stops queueing, and live_watch_next() says so from then on;
 * the capture itself loses nothing.
 */
/*
 * Queue events per CPU: LIVE_WATCH_BUDGET over the CPUs, a power of two
 * between LIVE_WATCH_QUEUE_MIN and _MAX: 1M events (56 MiB, over a second of
 * a busy CPU's events) each on a small machine.  The consumer merges only
 * below every CPU's drained time, and a reader's comes every 100 ms at most,
 * so a queue holds at least that much of its CPU's events at all times.
 */
#define LIVE_WATCH_BUDGET	(1u << 22)
#define LIVE_WATCH_QUEUE_MIN	(1u << 16)
#define LIVE_WATCH_QUEUE_MAX	(1u << 20)
#define LIVE_WATCH_SLACK_NS	2000000ull
/*
 * Before live_start().  The drained time needs a trace clock this process
 * can read (mono, mono_raw, boot, tai: live_watch_clock_ok()):
 * -MCR_E_BAD_INPUT for another.
 */
bool live_watch_clock_ok(const char *clock);
int live_watch_enable(struct live *lv);
/*
 * The next event: 1 with *@ev, 0 once the readers ended and every queue is
 * empty, -EAGAIN when none can go yet, -ENOBUFS once a queue overflowed.
 * One consumer thread.
 */
int live_watch_next(struct live *lv, struct mcr_event *ev);
struct live_watch_totals {
	uint64_t	queued;		/* events put into the queues */
	uint64_t	taken;		/* by live_watch_next() */
	uint64_t	overflow_ts;	/* ts of the first event that did not fit */
	uint32_t	queue;		/* events each CPU's queue holds */
	int		overflow_cpu;	/* its CPU, -1 none */
	bool		overflow;
};
void live_watch_totals(struct live *lv, struct live_watch_totals *t);
/*
 * The cgroup table's entry of @id (cgtrack_info()), under the lock the
 * readers update it under.
 */
int live_cgroup_info(struct live *lv, uint64_t id, uint64_t *parent, char *path, size_t len);

/*
 * Stops, frees @lv and removes its instance; -EBUSY (and the instance's name in
 * @name) when the instance stayed busy for LIVE_DESTROY_TRIES tries.
 */
int live_close(struct live *lv, char *name, size_t len);

#endif
