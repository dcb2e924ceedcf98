// SPDX-License-Identifier: GPL-2.0
/*
 * live_statread.c - memcg-capture --read: log memory.stat reads while
 * tracing, each line as printed, with the trace clock around the read().
 *
 * A read of memory.stat runs the kernel's format code (memory_stat_show()),
 * which flushes the cgroup's stats first (memcg_flush_stats tracepoint) and
 * prints into the seq_file buffer, all inside the first read() call: the
 * clock taken just before and just after it brackets that flush.  Whatever a
 * second read() returns was printed by the first.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "timespec.h"
#include "db.h"
#include "live.h"
#include "live_local.h"
#include "statlog.h"

#define STATREAD_BUF	(64 * 1024)	/* memory.stat is one seq_buf page or so */
#define STATREAD_LINES	1024
#define STATREAD_NAME	128

struct statreader {
	struct live_statreads		*set;
	struct live_statread_opts	o;
	pthread_t			thread;
	bool				started;
	uint64_t			reads, lines;
	int				error;
};

struct live_statreads {
	struct live		*lv;
	pthread_mutex_t		lock;
	pthread_cond_t		wake;		/* CLOCK_MONOTONIC */
	bool			stop;
	_Atomic int64_t		next_read;
	size_t			n;
	struct statreader	r[];
};

/* Sleep until @until or the stop; true when stopping. */
static bool statread_wait(struct live_statreads *set, const struct timespec *until)
{
	bool stop;

	pthread_mutex_lock(&set->lock);
	while (!set->stop && pthread_cond_timedwait(&set->wake, &set->lock, until) != ETIMEDOUT)
		;
	stop = set->stop;
	pthread_mutex_unlock(&set->lock);
	return stop;
}

/*
 * One read: the file into @buf (@len bytes read), the trace clock around the
 * first read().  0 or a negative errno: of the file or of the clock, whose
 * failure would leave a read without its bracket.
 */
static int statread_once(struct statreader *r, char *buf, size_t *len, struct db_stat_read *rd)
{
	size_t have = 0;
	ssize_t got = 0;
	int fd, err, read_errno;

	*len = 0;
	buf[0] = '\0';
	fd = open(r->o.path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	rd->read = atomic_fetch_add(&r->set->next_read, 1);
	err = live_clock_now(r->set->lv, &rd->ts_before);
	if (!err) {
		got = read(fd, buf, STATREAD_BUF - 1);
		read_errno = errno;	/* the clock's own calls may set errno */
		err = live_clock_now(r->set->lv, &rd->ts_after);
		errno = read_errno;
	}
	while (!err && got > 0) {
		have += (size_t)got;
		if (have >= STATREAD_BUF - 1)
			break;
		got = read(fd, buf + have, STATREAD_BUF - 1 - have);
	}
	if (!err && got < 0)
		err = -errno;
	close(fd);
	buf[have] = '\0';
	*len = have;
	return err;
}

/* @buf's lines into @lines, their names into @names; the count. */
static size_t statread_split(const struct statreader *r, const char *buf, size_t len, char *names,
			     struct db_stat_line *lines)
{
	size_t n = 0, off = 0;

	while (off < len && n < STATREAD_LINES) {
		const char *line = buf + off, *nl = memchr(line, '\n', len - off);
		size_t ll = nl ? (size_t)(nl - line) : len - off;
		char *name = names + (size_t)n * STATREAD_NAME;

		off += ll + 1;
		statlog_line_row(r->o.version, line, ll, name, STATREAD_NAME, &lines[n]);
		n++;
	}
	return n;
}

static void *statread_main(void *arg)
{
	struct statreader *r = arg;
	struct live *lv = r->set->lv;
	char *buf = malloc(STATREAD_BUF), *names = malloc((size_t)STATREAD_LINES * STATREAD_NAME);
	struct db_stat_line *lines = calloc(STATREAD_LINES, sizeof(*lines));
	struct timespec next, now;

	if (!buf || !names || !lines) {
		r->error = -ENOMEM;
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		struct db_stat_read rd = { .cgroup = r->o.cgroup };
		size_t len, n;
		int ret;

		ret = statread_once(r, buf, &len, &rd);
		if (ret < 0) {
			r->error = ret;
			break;
		}
		n = statread_split(r, buf, len, names, lines);
		pthread_mutex_lock(&lv->db_lock);
		ret = db_stat_read_put(lv->db, &rd, lines, n);
		pthread_mutex_unlock(&lv->db_lock);
		if (ret < 0) {
			r->error = ret;
			break;
		}
		r->reads++;
		r->lines += n;
		/* the next slot; slots missed while busy are skipped, not caught up */
		mcr_ts_add_ms(&next, r->o.interval_ms);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (mcr_ts_before(&next, &now)) {
			next = now;
			mcr_ts_add_ms(&next, r->o.interval_ms);
		}
		if (statread_wait(r->set, &next))
			break;
	}
out:
	free(buf);
	free(names);
	free(lines);
	return NULL;
}

void live_statreads_stop(struct live_statreads *sr, struct live_statread_totals *t)
{
	size_t i;

	memset(t, 0, sizeof(*t));
	if (!sr)
		return;
	pthread_mutex_lock(&sr->lock);
	sr->stop = true;
	pthread_cond_broadcast(&sr->wake);
	pthread_mutex_unlock(&sr->lock);
	for (i = 0; i < sr->n; i++) {
		struct statreader *r = &sr->r[i];

		if (r->started)
			pthread_join(r->thread, NULL);
		t->reads += r->reads;
		t->lines += r->lines;
		if (r->error && !t->error) {
			t->error = r->error;
			t->failed = r->o.path;
			t->failed_reads = r->reads;
		}
	}
	pthread_cond_destroy(&sr->wake);
	pthread_mutex_destroy(&sr->lock);
	free(sr);
}

int live_statreads_start(struct live *lv, const struct live_statread_opts *o, size_t n,
			 struct live_statreads **out)
{
	struct live_statreads *sr;
	pthread_condattr_t ca;
	sigset_t all, old;
	size_t i;
	int ret = 0;

	*out = NULL;
	if (!n)
		return 0;
	for (i = 0; i < n; i++)
		if (!o[i].path || !o[i].interval_ms || (o[i].version != 1 && o[i].version != 2))
			return -EINVAL;
	sr = calloc(1, sizeof(*sr) + n * sizeof(sr->r[0]));
	if (!sr)
		return -ENOMEM;
	sr->lv = lv;
	sr->n = n;
	pthread_mutex_init(&sr->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&sr->wake, &ca);
	pthread_condattr_destroy(&ca);
	for (i = 0; i < n; i++) {
		sr->r[i].set = sr;
		sr->r[i].o = o[i];
	}
	/* as live_start()'s: signals go to the caller's thread, not into a read() here */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (i = 0; i < n && !ret; i++) {
		ret = pthread_create(&sr->r[i].thread, NULL, statread_main, &sr->r[i]);
		sr->r[i].started = !ret;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		struct live_statread_totals t;

		live_statreads_stop(sr, &t);
		return -ret;
	}
	*out = sr;
	return 0;
}
