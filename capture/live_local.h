/* SPDX-License-Identifier: GPL-2.0 */
/*
 * live_local.h - private to capture/live_*.c: the reader/writer queue, the
 * decoder, and struct live.
 */
#ifndef MCR_LIVE_LOCAL_H
#define LIVE_DESTROY_TRIES	40	/* instance rmdir while EBUSY, every 50 ms */
#define LIVE_DESTROY_WAIT_US	50000
#define MCR_LIVE_LOCAL_H

#include <pthread.h>
#include <stdatomic.h>

#include <event-parse.h>
#include <kbuffer.h>
#include <tracefs.h>

#include "error.h"
#include "event.h"
#include "tp_decode.h"
#include "live.h"

/* Not a trace event: a gap marker travelling in order through a queue. */
#define LIVE_EV_GAP	0

#define LIVE_CHUNK_EVENTS	4096

/*
 * One chunk of a per-CPU single-producer single-consumer queue.  The reader
 * fills ev[count] and then publishes count (release); the writer reads up to
 * count (acquire) and frees a chunk once it is consumed and next is set.
 * path[] is only valid for MKDIR/RMDIR events (malloc'd, owned by the queue).
 */
struct live_chunk {
	struct live_chunk *_Atomic	next;
	_Atomic unsigned int		count;
	struct mcr_event		ev[LIVE_CHUNK_EVENTS];
	char				*path[LIVE_CHUNK_EVENTS];
};

struct live_queue {
	struct live_chunk	*tail;		/* reader side */
	struct live_chunk	*head;		/* writer side */
	unsigned int		head_pos;
	/* every event of this CPU with ts below wm has been published */
	_Atomic uint64_t	wm;
	_Atomic bool		done;		/* reader finished: drain to the end */
	_Atomic int		chunks;		/* in use, for backpressure */
	/* consumed chunks for reuse: fresh memory would fault (and charge memcg) */
	struct live_chunk *_Atomic	spare;
	unsigned int		tail_pos;	/* reader side */
};

/* The nine formats read from tracefs, and the shared decoder over them (tp_decode.h). */
struct live_decoder {
	struct tep_handle	*tep;
	struct tp_decoder	tp;
};

struct live_cpu {
	struct live		*lv;
	struct tracefs_cpu	*tc;
	struct kbuffer		*kb;
	void			*page;
	int			page_size;
	int			cpu;
	pthread_t		thread;
	bool			started;
	uint64_t		seq;
	struct live_queue	q;
	_Atomic uint64_t	records, missed, missed_unknown;
	int64_t			stats_start[6];
};

struct live {
	struct live_opts		opts;
	struct db			*db;
	struct tracefs_instance		*inst;
	struct live_decoder		dec;
	struct live_cpu			*cpus;
	int				nr_cpus;	/* readers */
	int				max_cpu;	/* highest online CPU + 1 */
	pthread_t			writer;
	bool				writer_started, stopped;
	_Atomic bool			stop;
	_Atomic uint64_t		global_max_ts;
	_Atomic int64_t			queued_bytes;
	_Atomic uint64_t		stored, filtered, first_ts, last_ts, kernel_lost, kernel_read;
	_Atomic int			write_error;
	pthread_mutex_t			lock;
	pthread_cond_t			wake;
};

/* live_decode.c */
int live_decoder_init(struct live_decoder *dec);
void live_decoder_free(struct live_decoder *dec);
/* Decode one record; returns the kind, 0 if not ours.  *path set for mkdir/rmdir. */
int live_decode(const struct live_decoder *dec, void *data, unsigned int size,
		struct mcr_event *ev, const char **path, int *path_len);

/* live_queue.c */
int live_queue_init(struct live_queue *q);
struct mcr_event *live_queue_slot(struct live *lv, struct live_queue *q, char ***path);
void live_queue_publish(struct live_queue *q);
/* Writer side: next unconsumed event (NULL if none published), then advance. */
struct mcr_event *live_queue_peek(struct live *lv, struct live_queue *q, char **path);
void live_queue_advance(struct live_queue *q);
void live_queue_free(struct live *lv, struct live_queue *q);

/* live_reader.c / live_writer.c */
void *live_reader_main(void *arg);
void *live_writer_main(void *arg);

/* live_instance.c */
int live_instance_setup(struct live *lv);
int live_stats_read(struct live *lv, int cpu, int64_t st[6]);
int live_stats_store(struct live *lv, const char *phase);

static inline void live_atomic_max(_Atomic uint64_t *a, uint64_t v)
{
	uint64_t cur = atomic_load_explicit(a, memory_order_relaxed);

	while (cur < v && !atomic_compare_exchange_weak(a, &cur, v))
		;
}

#endif
