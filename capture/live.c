// SPDX-License-Identifier: GPL-2.0
/* Live capture: the life cycle of the instance, the readers and the writer. */
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "db.h"
#include "error.h"
#include "live_local.h"

int live_cpu_list(const char *path, int **cpus)
{
	char buf[4096], *tok, *save;
	int n = 0, alloc = 16, a, b;
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	*cpus = malloc(alloc * sizeof(**cpus));
	if (!*cpus)
		return -ENOMEM;
	for (tok = strtok_r(buf, ",\n", &save); tok; tok = strtok_r(NULL, ",\n", &save)) {
		int k = sscanf(tok, "%d-%d", &a, &b);

		if (k < 1)
			continue;
		if (k == 1)
			b = a;
		for (; a <= b; a++) {
			if (n == alloc) {
				int *more = realloc(*cpus, (alloc *= 2) * sizeof(**cpus));

				if (!more) {
					free(*cpus);
					*cpus = NULL;
					return -ENOMEM;
				}
				*cpus = more;
			}
			(*cpus)[n++] = a;
		}
	}
	return n;
}

static void live_chunks_free(struct live_sealed *s)
{
	while (s) {
		struct live_sealed *next = s->next;

		db_chunk_free(&s->chunk);
		free(s);
		s = next;
	}
}

/*
 * @cpu's trace_pipe_raw, read a sub-buffer at a time: opened here, not by
 * tracefs_cpu_open(), which takes the sub-buffer for a page and keeps the
 * descriptor the reader polls.
 */
static struct tracefs_cpu *live_cpu_open(struct live *lv, int cpu, int *fdp)
{
	struct tracefs_cpu *tc;
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "per_cpu/cpu%d/trace_pipe_raw", cpu);
	fd = tracefs_instance_file_open(lv->inst, path, O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	tc = tracefs_cpu_alloc_fd(fd, lv->subbuf_size, true);
	if (tc)
		*fdp = fd;
	else
		close(fd);
	return tc;
}

int live_open(const struct live_opts *opts, struct db *db, struct live **out)
{
	struct live *lv = calloc(1, sizeof(*lv));
	int *cpus = NULL, i, ret;

	if (!lv)
		return -ENOMEM;
	lv->opts = *opts;
	lv->db = db;
	lv->dbs[0] = db;
	pthread_mutex_init(&lv->lock, NULL);
	pthread_mutex_init(&lv->db_lock, NULL);
	pthread_cond_init(&lv->wake, NULL);
	pthread_cond_init(&lv->flushed_cond, NULL);
	lv->sealed_tail = &lv->sealed;
	*out = lv;
	lv->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (lv->stop_fd < 0)
		return -errno;
	ret = live_decoder_init(&lv->dec);
	if (ret < 0)
		return ret;
	ret = live_instance_setup(lv);
	if (ret < 0)
		return ret;
	ret = live_cpu_list("/sys/devices/system/cpu/online", &cpus);
	if (ret < 0)
		return ret;
	lv->cpus = calloc(ret, sizeof(*lv->cpus));
	if (!lv->cpus) {
		free(cpus);
		return -ENOMEM;
	}
	lv->nr_cpus = ret;
	for (i = 0; i < lv->nr_cpus; i++) {
		struct live_cpu *c = &lv->cpus[i];

		c->lv = lv;
		c->cpu = cpus[i];
		db_chunk_init(&c->enc, c->cpu);
		/* non-blocking: an idle CPU must still seal its aged chunk */
		c->tc = live_cpu_open(lv, c->cpu, &c->fd);
		if (!c->tc) {
			ret = -errno ? -errno : -EIO;
			break;
		}
		c->page_size = tracefs_cpu_read_size(c->tc);
		c->page = c->page_size > 0 ? malloc(c->page_size) : NULL;
		if (!c->page) {
			ret = -ENOMEM;
			break;
		}
	}
	free(cpus);
	return ret < 0 ? ret : 0;
}

int live_start(struct live *lv)
{
	sigset_t all, old;
	int i, ret;

	ret = live_stats_store(lv, "start");
	if (ret < 0)
		return ret;
	/* signals go to the caller's thread, whose sleep they are to end */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (i = 0; i < lv->nr_cpus; i++) {
		ret = -pthread_create(&lv->cpus[i].thread, NULL, live_reader_main, &lv->cpus[i]);
		if (ret < 0)
			break;
		lv->cpus[i].started = true;
	}
	if (!ret) {
		ret = -pthread_create(&lv->writer, NULL, live_writer_main, lv);
		lv->writer_started = !ret;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret < 0)
		return ret;
	return tracefs_trace_on(lv->inst) < 0 ? -errno : 0;
}

int live_stop(struct live *lv)
{
	int i, ret = 0;

	if (lv->stopped)
		return 0;
	lv->stopped = true;
	/* writers first, so that the drain below sees the last event */
	if (lv->inst)
		tracefs_trace_off(lv->inst);
	atomic_store(&lv->stop, true);
	/* readable from now on: every reader's poll returns */
	if (eventfd_write(lv->stop_fd, 1) < 0)
		ret = -errno;
	for (i = 0; i < lv->nr_cpus; i++) {
		if (lv->cpus[i].started) {
			pthread_join(lv->cpus[i].thread, NULL);
			lv->cpus[i].started = false;
		}
		/* a reader that never started has nothing more for --watch either */
		if (lv->cpus[i].wq)
			live_watch_mark(&lv->cpus[i], UINT64_MAX);
	}
	if (lv->writer_started) {
		/* every reader shipped its last chunk before it ended */
		pthread_mutex_lock(&lv->lock);
		atomic_store(&lv->readers_done, true);
		pthread_cond_broadcast(&lv->wake);
		pthread_mutex_unlock(&lv->lock);
		pthread_join(lv->writer, NULL);
		lv->writer_started = false;
		ret = atomic_load(&lv->write_error);
	}
	if (lv->inst && lv->nr_cpus) {
		int r = live_stats_store(lv, "end");

		if (!ret)
			ret = r;
	}
	return ret;
}

void live_totals(struct live *lv, struct live_totals *t)
{
	int i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < lv->nr_cpus; i++) {
		struct live_cpu *c = &lv->cpus[i];
		uint64_t first = atomic_load_explicit(&c->first_ts, memory_order_relaxed);
		uint64_t last = atomic_load_explicit(&c->last_ts, memory_order_relaxed);

		t->records += atomic_load_explicit(&c->records, memory_order_relaxed);
		t->missed += atomic_load_explicit(&c->missed, memory_order_relaxed);
		t->missed_unknown += atomic_load_explicit(&c->missed_unknown, memory_order_relaxed);
		t->stored += atomic_load_explicit(&c->stored, memory_order_relaxed);
		t->filtered += atomic_load_explicit(&c->filtered, memory_order_relaxed);
		if (first && (!t->first_ts || first < t->first_ts))
			t->first_ts = first;
		if (last > t->last_ts)
			t->last_ts = last;
	}
	t->kernel_lost = atomic_load(&lv->kernel_lost);
	t->kernel_read = atomic_load(&lv->kernel_read);
	t->write_error = atomic_load(&lv->write_error);
}

int live_subbuf_size(const struct live *lv)
{
	return lv->subbuf_size;
}

int live_nr_cpus(const struct live *lv)
{
	return lv->nr_cpus;
}

int live_close(struct live *lv, char *name, size_t len)
{
	int i, ret = 0;

	if (!lv)
		return 0;
	live_stop(lv);
	for (i = 0; i < lv->nr_cpus; i++) {
		struct live_cpu *c = &lv->cpus[i];

		db_chunk_free(&c->enc);
		live_chunks_free(c->spare);
		if (c->tc)
			tracefs_cpu_close(c->tc);
		free(c->page);
	}
	live_watch_free(lv);
	live_chunks_free(lv->sealed);	/* left by a writer that failed */
	free(lv->gaps);
	free(lv->cpus);
	if (lv->stop_fd >= 0)
		close(lv->stop_fd);
	if (lv->inst) {
		/*
		 * rmdir also disables the instance's events.  It is refused (EBUSY)
		 * while any process still has one of its files open: give such a
		 * process a moment to go.
		 */
		for (i = 1;; i++) {
			ret = tracefs_instance_destroy(lv->inst) ? -errno : 0;
			if (ret != -EBUSY || i == LIVE_DESTROY_TRIES)
				break;
			usleep(LIVE_DESTROY_WAIT_US);
		}
		if (name && len)
			snprintf(name, len, "%s", tracefs_instance_get_name(lv->inst));
		tracefs_instance_free(lv->inst);
	}
	live_decoder_free(&lv->dec);
	pthread_cond_destroy(&lv->wake);
	pthread_cond_destroy(&lv->flushed_cond);
	pthread_mutex_destroy(&lv->db_lock);
	pthread_mutex_destroy(&lv->lock);
	free(lv);
	return ret;
}
