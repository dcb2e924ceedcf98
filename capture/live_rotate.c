// SPDX-License-Identifier: GPL-2.0
/*
 * memcg-capture --rotate: the capture moves on to another database at a
 * point of the trace clock while tracing goes on (contract in live.h).  The
 * readers pass the boundary each on its own (live_reader.c), the writer puts
 * each chunk and gap into its file's database (live_writer.c); here the
 * capture's thread sets the boundary up and waits for both.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cgtrack.h"
#include "db.h"
#include "live_local.h"

/* How often live_rotate_end() looks whether every reader has passed the boundary. */
#define LIVE_ROTATE_POLL_NS	10000000

int live_rotate_begin(struct live *lv, struct db *next, uint64_t *boundary)
{
	unsigned int e = atomic_load(&lv->epoch);
	uint64_t before;
	int i, ret;

	/* a clock that cannot be read fails the rotation before anything changed */
	ret = live_clock_now(lv, &before);
	if (ret < 0)
		return ret;
	pthread_mutex_lock(&lv->db_lock);
	if (lv->opts.cgroups)
		ret = cgtrack_db_next(lv->opts.cgroups, next);
	if (!ret)
		lv->db = next;	/* --read's rows, the last file's end stats */
	pthread_mutex_unlock(&lv->db_lock);
	if (ret < 0)
		return ret;
	pthread_mutex_lock(&lv->lock);
	lv->dbs[(e + 1) & 1] = next;
	atomic_store(&lv->put_bytes[(e + 1) & 1], 0);
	pthread_mutex_unlock(&lv->lock);
	/*
	 * The new epoch before the boundary is taken: a reader that has not seen
	 * it yet reads only records from before the boundary, so none of those
	 * past it stays in the old file.  Meanwhile no record passes.
	 */
	atomic_store(&lv->boundary, UINT64_MAX);
	atomic_store(&lv->epoch, e + 1);
	if (live_clock_now(lv, boundary) < 0)
		*boundary = before;	/* it read a moment ago */
	atomic_store(&lv->boundary, *boundary);
	ret = 0;
	for (i = 0; i < lv->nr_cpus && !ret; i++)
		ret = live_stats_read(lv, lv->cpus[i].cpu, lv->cpus[i].stats_rot);
	pthread_mutex_lock(&lv->db_lock);
	for (i = 0; i < lv->nr_cpus && !ret; i++)
		ret = live_stats_put(next, lv->cpus[i].cpu, "start", lv->cpus[i].stats_rot);
	pthread_mutex_unlock(&lv->db_lock);
	/* the rotation is under way: a failure here is the new file's, said at its end */
	if (ret < 0)
		atomic_store(&lv->write_error, ret);
	return 0;
}

static bool live_readers_passed(struct live *lv, unsigned int e)
{
	int i;

	for (i = 0; i < lv->nr_cpus; i++) {
		struct live_cpu *c = &lv->cpus[i];

		if (atomic_load_explicit(&c->epoch, memory_order_acquire) != e &&
		    !atomic_load(&c->exited))
			return false;
	}
	return true;
}

int live_rotate_end(struct live *lv, struct live_seq *seq)
{
	unsigned int e = atomic_load(&lv->epoch);
	struct db *old;
	int i, ret = 0;

	/* readers wake at least every LIVE_POLL_MAX_MS: this ends soon after the boundary */
	while (!live_readers_passed(lv, e)) {
		struct timespec ts = { 0, LIVE_ROTATE_POLL_NS };

		nanosleep(&ts, NULL);
	}
	pthread_mutex_lock(&lv->lock);
	old = lv->dbs[(e - 1) & 1];
	if (lv->writer_started) {
		lv->flush_req = e;
		pthread_cond_signal(&lv->wake);
		while (lv->flushed != e && !lv->writer_done)
			pthread_cond_wait(&lv->flushed_cond, &lv->lock);
	}
	lv->dbs[(e - 1) & 1] = NULL;
	pthread_mutex_unlock(&lv->lock);
	pthread_mutex_lock(&lv->db_lock);
	if (lv->opts.cgroups)
		cgtrack_db_retire(lv->opts.cgroups);
	pthread_mutex_unlock(&lv->db_lock);
	ret = atomic_load(&lv->write_error);
	/* the old file is ours alone now */
	for (i = 0; i < lv->nr_cpus; i++) {
		struct live_cpu *c = &lv->cpus[i];
		bool passed = atomic_load(&c->epoch) == e;
		int r;

		if (passed) {
			seq[i] = c->done;
		} else {
			/* the reader ended before the boundary: all it read is the old file's */
			seq[i] = (struct live_seq){ c->cpu, c->seq_first, (int64_t)c->seq - 1,
						    c->nfiltered - c->filtered_base };
		}
		r = live_stats_put(old, c->cpu, "end", c->stats_rot);
		if (!r)
			r = live_gap_rest(old, c, c->stats_rot, passed ? c->done_missed :
					  atomic_load(&c->missed) - c->missed_base);
		memcpy(c->stats_start, c->stats_rot, sizeof(c->stats_start));
		if (r < 0 && !ret)
			ret = r;
	}
	return ret;
}

void live_seq_current(struct live *lv, struct live_seq *seq)
{
	int i;

	for (i = 0; i < lv->nr_cpus; i++) {
		struct live_cpu *c = &lv->cpus[i];

		seq[i] = (struct live_seq){ c->cpu, c->seq_first, (int64_t)c->seq - 1,
					    c->nfiltered - c->filtered_base };
	}
}

uint64_t live_file_bytes(struct live *lv)
{
	return atomic_load(&lv->put_bytes[atomic_load(&lv->epoch) & 1]);
}
