// SPDX-License-Identifier: GPL-2.0
/*
 * The hand-over of finished chunks and the writer thread.  A reader seals its
 * own chunk (encoding and zstd happen on the reader's CPU) and queues it; the
 * writer only inserts the BLOBs, in queue order (so each CPU's chunks keep
 * their order), commits at least every LIVE_COMMIT_NS, and gives the chunk
 * back to its reader for reuse.  No per-event work happens here.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "db.h"
#include "live_local.h"

static uint64_t live_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * A sealed chunk's holder for @c: a spare one (its compressed buffer already
 * faulted in) or a new one.  It holds no encoder buffers: those stay in
 * c->enc (db_chunk_take()).
 */
static struct live_sealed *live_sealed_get(struct live_cpu *c)
{
	struct live *lv = c->lv;
	struct live_sealed *s;

	pthread_mutex_lock(&lv->lock);
	s = c->spare;
	if (s)
		c->spare = s->next;
	pthread_mutex_unlock(&lv->lock);
	if (!s) {
		s = malloc(sizeof(*s));
		if (!s)
			return NULL;
		db_chunk_init(&s->chunk, c->cpu);
	}
	s->next = NULL;
	return s;
}

int live_chunk_ship(struct live_cpu *c)
{
	struct live *lv = c->lv;
	struct live_sealed *s;
	int err;

	if (!c->enc.count)
		return 0;
	err = db_chunk_seal(&c->enc);
	s = err ? NULL : live_sealed_get(c);
	if (!s) {
		err = err ?: -ENOMEM;
		atomic_store(&lv->write_error, err);
		db_chunk_reset(&c->enc);
		return err;
	}
	db_chunk_take(&c->enc, &s->chunk);
	s->epoch = atomic_load_explicit(&c->epoch, memory_order_relaxed);
	c->open_ns = 0;
	pthread_mutex_lock(&lv->lock);
	*lv->sealed_tail = s;
	lv->sealed_tail = &s->next;
	if (++lv->queued == LIVE_QUEUE_WAKE)
		pthread_cond_signal(&lv->wake);
	pthread_mutex_unlock(&lv->lock);
	return 0;
}

static struct live_cpu *live_cpu_of(struct live *lv, int cpu)
{
	int i;

	for (i = 0; i < lv->nr_cpus; i++)
		if (lv->cpus[i].cpu == cpu)
			return &lv->cpus[i];
	return NULL;
}

/*
 * Put every queued gap and chunk, each into its file's database (@dirty: bit
 * epoch & 1 set for each one written); returns how many or a negative error.
 */
static int live_put_sealed(struct live *lv, unsigned int *dirty)
{
	struct live_sealed *list, *s;
	struct live_gap *gaps;
	struct db *dbs[2];
	size_t nr_gaps, i;
	int n = 0, err = 0;

	pthread_mutex_lock(&lv->lock);
	dbs[0] = lv->dbs[0];
	dbs[1] = lv->dbs[1];
	list = lv->sealed;
	lv->sealed = NULL;
	lv->sealed_tail = &lv->sealed;
	lv->queued = 0;
	/* gaps are rare: the array is the writer's now, and a reader starts another */
	gaps = lv->gaps;
	nr_gaps = lv->nr_gaps;
	lv->gaps = NULL;
	lv->nr_gaps = lv->gaps_cap = 0;
	pthread_mutex_unlock(&lv->lock);
	if (nr_gaps) {
		pthread_mutex_lock(&lv->db_lock);
		for (i = 0; i < nr_gaps && !err; i++) {
			struct db *db = dbs[gaps[i].epoch & 1];

			/* a file retired holds all of its own: none can come after */
			err = db ? db_gap_put(db, gaps[i].cpu, gaps[i].ts, gaps[i].count) : -EIO;
			*dirty |= 1u << (gaps[i].epoch & 1);
		}
		pthread_mutex_unlock(&lv->db_lock);
		n += (int)nr_gaps;
	}
	free(gaps);
	while ((s = list)) {
		struct live_cpu *c = live_cpu_of(lv, s->chunk.cpu);

		list = s->next;
		if (!err) {
			pthread_mutex_lock(&lv->db_lock);
			err = dbs[s->epoch & 1] ? db_chunk_put(dbs[s->epoch & 1], &s->chunk) : -EIO;
			pthread_mutex_unlock(&lv->db_lock);
			atomic_fetch_add(&lv->put_bytes[s->epoch & 1], s->chunk.zlen);
			*dirty |= 1u << (s->epoch & 1);
			n++;
		}
		pthread_mutex_lock(&lv->lock);
		s->next = c->spare;
		c->spare = s;
		pthread_mutex_unlock(&lv->lock);
	}
	return err ? err : n;
}

/* Commit the databases of @dirty (bits: dbs[] slots); clears them. */
static int live_commit(struct live *lv, unsigned int *dirty)
{
	struct db *dbs[2];
	int i, ret = 0;

	pthread_mutex_lock(&lv->lock);
	dbs[0] = lv->dbs[0];
	dbs[1] = lv->dbs[1];
	pthread_mutex_unlock(&lv->lock);
	pthread_mutex_lock(&lv->db_lock);
	for (i = 0; i < 2 && !ret; i++)
		if ((*dirty & (1u << i)) && dbs[i])
			ret = db_events_commit(dbs[i]);
	pthread_mutex_unlock(&lv->db_lock);
	*dirty = 0;
	return ret;
}

/*
 * --rotate: every reader has passed the boundary of epoch @req and queued
 * all the old file's chunks and gaps before live_rotate_end() asked (@req was
 * read before this round's put): commit them, and say so.
 */
static int live_flush_ack(struct live *lv, unsigned int req, unsigned int *dirty)
{
	int ret = live_commit(lv, dirty);

	pthread_mutex_lock(&lv->lock);
	lv->flushed = req;
	pthread_cond_broadcast(&lv->flushed_cond);
	pthread_mutex_unlock(&lv->lock);
	return ret;
}

void *live_writer_main(void *arg)
{
	struct live *lv = arg;
	uint64_t last_commit = live_mono_ns(), now, wait;
	unsigned int dirty = 0, req;
	bool done = false;
	int ret = 0;

	while (!done) {
		struct timespec until;

		/* readers were done before this round: nothing can follow it */
		done = atomic_load(&lv->readers_done);
		pthread_mutex_lock(&lv->lock);
		req = lv->flush_req != lv->flushed ? lv->flush_req : 0;
		pthread_mutex_unlock(&lv->lock);
		ret = live_put_sealed(lv, &dirty);
		if (ret < 0)
			break;
		if (req) {
			ret = live_flush_ack(lv, req, &dirty);
			if (ret < 0)
				break;
			last_commit = live_mono_ns();
		}
		now = live_mono_ns();
		if (dirty && now - last_commit >= LIVE_COMMIT_NS) {
			ret = live_commit(lv, &dirty);
			if (ret < 0)
				break;
			last_commit = now;
		}
		if (done)
			break;
		/*
		 * Until the next commit is due (a chunk queued meanwhile waits for
		 * it), or LIVE_QUEUE_WAKE chunks wait, or the readers are done, or a
		 * rotation asks for a flush.
		 */
		wait = dirty && last_commit + LIVE_COMMIT_NS > now ? last_commit + LIVE_COMMIT_NS - now
								   : LIVE_COMMIT_NS;
		clock_gettime(CLOCK_REALTIME, &until);
		wait += (uint64_t)until.tv_nsec;
		until.tv_sec += (time_t)(wait / 1000000000);
		until.tv_nsec = (long)(wait % 1000000000);
		pthread_mutex_lock(&lv->lock);
		if (lv->queued < LIVE_QUEUE_WAKE && !atomic_load(&lv->readers_done) &&
		    lv->flush_req == lv->flushed)
			pthread_cond_timedwait(&lv->wake, &lv->lock, &until);
		pthread_mutex_unlock(&lv->lock);
	}
	if (ret < 0) {
		atomic_store(&lv->write_error, ret);
	} else if (!atomic_load(&lv->write_error)) {
		/* everything goes to the last file (a rotation ends before the stop) */
		dirty |= 1u << (atomic_load(&lv->epoch) & 1);
		atomic_store(&lv->write_error, live_commit(lv, &dirty));
	}
	/* a rotation waiting for a flush that will not come */
	pthread_mutex_lock(&lv->lock);
	lv->writer_done = true;
	pthread_cond_broadcast(&lv->flushed_cond);
	pthread_mutex_unlock(&lv->lock);
	return NULL;
}
