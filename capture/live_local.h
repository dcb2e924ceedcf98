/* SPDX-License-Identifier: GPL-2.0 */
/*
 * live_local.h - private to capture/live_*.c: the chunk hand-over between
 * readers and writer, the decoder, and struct live.
 */
#ifndef MCR_LIVE_LOCAL_H
#define LIVE_DESTROY_TRIES	40	/* instance rmdir while EBUSY, every 50 ms */
#define LIVE_DESTROY_WAIT_US	50000
#define MCR_LIVE_LOCAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include <event-parse.h>
#include <tracefs.h>

#include "error.h"
#include "event.h"
#include "store.h"
#include "tp_decode.h"
#include "live.h"
#include "live_page.h"

/*
 * A reader seals its chunk once its first event is this old (and when full):
 * with LIVE_POLL_MAX_MS and LIVE_COMMIT_NS, an event is committed within a
 * second of the kernel writing it.
 */
#define LIVE_SEAL_NS		400000000ull
/*
 * Ring-buffer sub-buffers this big where the kernel lets us choose (6.8+),
 * at most 1/LIVE_SUBBUF_SHARE of the buffer.
 */
#define LIVE_SUBBUF_KB		64
#define LIVE_SUBBUF_SHARE	16
/* The writer commits what it has at least this often: kill -9 loses ~1 s at most. */
#define LIVE_COMMIT_NS		500000000ull
/* A reader wakes the writer early once this many chunks wait for it. */
#define LIVE_QUEUE_WAKE		4
/*
 * A reader sleeps until its ring buffer is LIVE_BUFFER_PERCENT full (the
 * kernel wakes it), its open chunk is due to be sealed, or LIVE_POLL_MAX_MS.
 */
#define LIVE_BUFFER_PERCENT	"25"
#define LIVE_POLL_MAX_MS	100

/*
 * --rotate: a reader with no record past the boundary passes it once it has
 * drained its buffer this long after the boundary: a record stamped before
 * the boundary is committed within the kernel's reserve-to-commit window
 * (preemption off, microseconds), so it has been read by then.
 */
#define LIVE_ROTATE_SLACK_NS	10000000ull

/* An in-band missed-events marker on its way from a reader to the writer. */
struct live_gap {
	int		cpu;
	unsigned int	epoch;		/* the file it belongs to (live_rotate_begin()) */
	uint64_t	ts;
	int64_t		count;		/* -1: unknown */
};

/* A sealed chunk on its way from a reader to the writer, or spare for reuse. */
struct live_sealed {
	struct live_sealed	*next;
	unsigned int		epoch;	/* the file it belongs to */
	struct db_chunk		chunk;
};
/* The nine formats read from tracefs, and the shared decoder over them (tp_decode.h). */
struct live_decoder {
	struct tep_handle	*tep;
	struct tp_decoder	tp;
};

/*
 * --watch: one reader's queue to the consumer (live_watch.c).  The reader
 * writes buf and tail, the consumer head; drained is the reader's promise
 * that every event of a ts below it is in the queue (UINT64_MAX: it ended).
 */
struct live_watchq {
	struct mcr_event	*buf;		/* mask + 1 */
	uint64_t		mask;
	_Atomic uint64_t	tail;		/* published by the reader */
	_Atomic uint64_t	drained;
	uint64_t		put;		/* the reader's: written, not yet published */
	uint64_t		head_seen;	/* the reader's: the consumer's head last read */
	uint64_t		queued;		/* the reader's count */
	_Alignas(64) _Atomic uint64_t head;	/* published by the consumer */
	uint64_t		take;		/* the consumer's: next to take */
	uint64_t		tail_seen;	/* the consumer's: tail last read */
};

struct live_cpu {
	struct live		*lv;
	struct live_watchq	*wq;		/* --watch, else NULL */
	struct tracefs_cpu	*tc;
	int			fd;		/* tc's trace_pipe_raw, polled */
	void			*page;
	int			page_size;
	int			cpu;
	pthread_t		thread;
	bool			started;
	uint64_t		seq;
	uint64_t		read_ts;	/* of the last record decoded */
	struct db_chunk		enc;		/* the chunk being filled, and the encoder's buffers */
	uint64_t		open_ns;	/* CLOCK_MONOTONIC of its first event */
	struct live_sealed	*spare;		/* put chunks back for reuse (lv->lock) */
	_Atomic uint64_t	records, missed, missed_unknown, stored, filtered;
	_Atomic uint64_t	first_ts, last_ts;	/* of stored events; first 0 = none */
	int64_t			stats_start[6];	/* of the current file */
	/*
	 * --rotate: the reader's file (epoch), the sequence number its first
	 * event there took, and its filtered and missed counts when that file
	 * began; done is the previous file's, valid once epoch passed it.
	 */
	_Atomic unsigned int	epoch;
	int64_t			seq_first;
	uint64_t		nfiltered, filtered_base, missed_base;
	struct live_seq		done;
	uint64_t		done_missed;
	_Atomic bool		exited;		/* the reader ended (stop or an error) */
	int64_t			stats_rot[6];	/* read at the boundary: end of one file, start of the next */
};

struct live {
	struct live_opts		opts;
	struct db			*db;
	struct tracefs_instance		*inst;
	struct live_decoder		dec;
	struct live_cpu			*cpus;
	int				subbuf_size;	/* bytes: LIVE_SUBBUF_KB, or a page on old kernels */
	int				nr_cpus;	/* readers */
	int				max_cpu;	/* highest online CPU + 1 */
	pthread_t			writer;
	bool				writer_started, stopped;
	_Atomic bool			stop;		/* readers: drain and end */
	_Atomic bool			readers_done;	/* writer: put what is left and end */
	_Atomic uint64_t		kernel_lost, kernel_read;
	_Atomic int			write_error;
	/* --watch (live_watch.c) */
	bool				watching;
	uint32_t			watch_queue;	/* events per CPU */
	clockid_t			watch_clock;
	_Atomic bool			watch_overflow;
	_Atomic uint64_t		watch_overflow_ts;
	_Atomic int			watch_overflow_cpu;
	uint64_t			watch_taken;
	int				stop_fd;	/* eventfd: readable once readers must drain and end */
	pthread_mutex_t			lock;		/* sealed list, spare lists, wake */
	pthread_cond_t			wake;		/* the writer's */
	struct live_sealed		*sealed, **sealed_tail;	/* FIFO to the writer */
	int				queued;		/* chunks in it */
	struct live_gap			*gaps;		/* to the writer too */
	size_t				nr_gaps, gaps_cap;
	/*
	 * --rotate (live_rotate.c): the file readers move to once past the
	 * boundary, its database beside the previous one (dbs[epoch & 1]), and the
	 * epoch whose chunks the writer is to commit (flush_req) and has
	 * (flushed, signalled by flushed_cond), all under lock but epoch and
	 * boundary, which readers read without it (boundary set first).
	 */
	_Atomic unsigned int		epoch;
	_Atomic uint64_t		boundary;
	struct db			*dbs[2];
	_Atomic uint64_t		put_bytes[2];	/* compressed chunk bytes put into dbs[] */
	unsigned int			flush_req, flushed;
	bool				writer_done;
	pthread_cond_t			flushed_cond;
	/*
	 * The database and the cgroup table: the writer for chunks, gaps and
	 * commits, readers for mkdir/rmdir and, under --cgroup, for the scope
	 * test of each event.
	 */
	pthread_mutex_t			db_lock;
};

/* live_decode.c */
int live_decoder_init(struct live_decoder *dec);
void live_decoder_free(struct live_decoder *dec);
/* Decode one record; returns the kind, 0 if not ours.  *path set for mkdir/rmdir. */
int live_decode(const struct live_decoder *dec, void *data, unsigned int size,
		struct mcr_event *ev, const char **path, int *path_len);

/* live_writer.c */
/* Seal c->enc (if it has events), queue it for the writer; 0 or the error, also in write_error. */
int live_chunk_ship(struct live_cpu *c);
/* live_reader.c / live_writer.c */
void *live_reader_main(void *arg);
void *live_writer_main(void *arg);

/* live_watch.c: the reader's side */
void live_watch_push(struct live_cpu *c, const struct mcr_event *ev);
/* Publish what was pushed, and that the buffer is drained up to @ts (UINT64_MAX: the end). */
void live_watch_mark(struct live_cpu *c, uint64_t ts);
uint64_t live_watch_now(const struct live *lv);
void live_watch_free(struct live *lv);

/* live_instance.c */
int live_instance_setup(struct live *lv);
int live_stats_read(struct live *lv, int cpu, int64_t st[6]);
int live_stats_store(struct live *lv, const char *phase);
/* The CPU's stats as row @phase of @db. */
int live_stats_put(struct db *db, int cpu, const char *phase, const int64_t st[6]);
/* The gap row at @c's last event for what @end's stats lost beyond the markers counted (@missed). */
int live_gap_rest(struct db *db, struct live_cpu *c, const int64_t end[6], uint64_t missed);

static inline void live_atomic_max(_Atomic uint64_t *a, uint64_t v)
{
	uint64_t cur = atomic_load_explicit(a, memory_order_relaxed);

	while (cur < v && !atomic_compare_exchange_weak(a, &cur, v))
		;
}

#endif
