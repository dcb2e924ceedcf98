// SPDX-License-Identifier: GPL-2.0
/*
 * db_rate.c - event store write and read rates.
 *
 *   db_rate [EVENTS] [ROUNDS] [DIR]   (default 2000000 events, 3 rounds, DIR = $TMPDIR)
 *   db_rate --read FILE...            the read rate of existing trace databases
 *   db_rate --write EVENTS FILE       write the events of the first form into FILE,
 *                                     to profile or compare reading them alone
 *   db_rate --encode FILE [ROUNDS [VERSION]]
 *                                     what a capture reader spends encoding and
 *                                     sealing FILE's events: store version 1
 *                                     against 2, alternating (ns/event, CPU),
 *                                     or VERSION alone (to profile it)
 *
 * Writes fleet-like events on 4 CPUs through db_events_append() (encode, zstd,
 * BLOB rows), then reads them back in replay order with db_iter (decompress,
 * decode, (ts, cpu) merge).  The generator alone is timed in the same run as
 * the baseline of the write.  Prints events/s of each, the chunk rows and
 * bytes per event.  Rates are over CPU time (user + sys), best of ROUNDS
 * rounds, so other load on the machine does not decide the figure.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db.h"
#include "error.h"
#include "store.h"

#define NR_CPUS		4

/* CPU time of this process: the machine is shared, wall time would measure the others. */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Mostly updates over 1000 cgroups, 1% flushes, a few rstat lock windows. */
static void gen_event(uint64_t i, uint64_t *seq, struct mcr_event *ev)
{
	uint64_t r = rng();
	unsigned int pick = r % 1000;

	memset(ev, 0, sizeof(*ev));
	ev->ts = 5000000000000ULL + i * 97;
	ev->cpu = (int)(i % NR_CPUS);
	ev->seq = seq[ev->cpu]++;
	ev->id = 100 + (r >> 10) % 1000;
	ev->pid = 1000 + (int)((r >> 20) % 40000);
	if (pick < 600) {
		ev->kind = MCR_EV_STATE;
		ev->item = (int)((r >> 40) % 40);
		ev->val = (int64_t)((r >> 48) % 512) - 200;
	} else if (pick < 900) {
		ev->kind = MCR_EV_LRUVEC;
		ev->item = (int)((r >> 40) % 40);
		ev->val = (int64_t)((r >> 48) % 64) - 32;
	} else if (pick < 980) {
		ev->kind = MCR_EV_EVENTS;
		ev->item = (int)((r >> 40) % 80);
		ev->val = 1;
	} else if (pick < 990) {
		ev->kind = MCR_EV_FLUSH;
		ev->val = (int64_t)((r >> 40) % 1024);
		ev->flags = (uint8_t)((r >> 50) % 4);
	} else {
		ev->kind = pick < 995 ? MCR_EV_LOCKED : MCR_EV_UNLOCK;
		ev->item = (int)((r >> 40) % NR_CPUS);
		ev->aux = 4;
		ev->level = 1;
	}
}

static volatile uint64_t sink;

static double gen_only(uint64_t n)
{
	uint64_t seq[NR_CPUS] = { 0 }, i, x = 0;
	struct mcr_event ev;
	double t0 = now_s();

	rng_state = 0x9e3779b97f4a7c15ULL;
	for (i = 0; i < n; i++) {
		gen_event(i, seq, &ev);
		x += ev.id;
	}
	sink = x;
	return now_s() - t0;
}

static int write_store(const char *path, uint64_t n, double *secs)
{
	uint64_t seq[NR_CPUS] = { 0 }, i;
	struct mcr_event ev;
	struct db *db;
	double t0;
	int err;

	err = db_create(path, &db);
	if (!err)
		err = db_meta_set_int(db, "nr_cpus_possible", NR_CPUS) ?:
		      db_meta_set_int(db, "nr_cpus_online", NR_CPUS) ?:
		      db_meta_set_int(db, "batch_size", 64) ?: db_meta_set_int(db, "page_size", 4096);
	rng_state = 0x9e3779b97f4a7c15ULL;
	t0 = now_s();
	for (i = 0; i < n && !err; i++) {
		gen_event(i, seq, &ev);
		err = db_events_append(db, &ev);
	}
	if (!err)
		err = db_events_finish(db);
	*secs = now_s() - t0;
	err = db_close(db) ?: err;
	if (err)
		fprintf(stderr, "db_rate: writing %s: %s\n", path, mcr_strerror(err));
	return err;
}

/* n = 0: any count */
static int read_store(const char *path, uint64_t n, double *secs)
{
	const struct mcr_event *const *evs;
	struct mcr_event ev;
	struct db_iter *it;
	struct db *db;
	uint64_t got = 0, x = 0;
	double t0;
	int err, i;

	err = db_open(path, false, &db);
	if (err)
		return err;
	t0 = now_s();
	err = db_iter_open(db, &it);
	if (!err) {
		/* as replay's source takes them: a batch, each event copied out */
		while ((err = db_iter_next_batch(it, &evs)) > 0) {
			for (i = 0; i < err; i++) {
				ev = *evs[i];
				x += ev.val;
			}
			got += (uint64_t)err;
		}
		db_iter_close(it);
	}
	*secs = now_s() - t0;
	sink = x;
	db_close(db);
	if (!err && n && got != n)
		err = -EIO;
	if (!n)
		printf("%s: %llu events read in %.3f s CPU: %.0f events/s\n", path,
		       (unsigned long long)got, *secs, got / *secs);
	if (err)
		fprintf(stderr, "db_rate: reading %s: %s\n", path, mcr_strerror(err));
	return err;
}

/* FILE's events, in memory, one array per CPU in ring-buffer order. */
struct enc_cpu {
	struct mcr_event *ev;
	size_t n, cap;
};

static int enc_load(const char *path, struct enc_cpu *cpus, int max_cpus, uint64_t *total)
{
	const struct mcr_event *const *evs;
	struct db_iter *it = NULL;
	struct db *db;
	int err, i;

	err = db_open(path, false, &db);
	if (err)
		return err;
	err = db_iter_open(db, &it);
	while (!err && (err = db_iter_next_batch(it, &evs)) > 0) {
		int nr = err;

		err = 0;
		for (i = 0; i < nr && !err; i++) {
			struct enc_cpu *c;

			if (evs[i]->cpu < 0 || evs[i]->cpu >= max_cpus) {
				err = -ERANGE;
				break;
			}
			c = &cpus[evs[i]->cpu];
			if (c->n == c->cap) {
				size_t cap = c->cap ? 2 * c->cap : 65536;
				struct mcr_event *ev = realloc(c->ev, cap * sizeof(*ev));

				if (!ev) {
					err = -ENOMEM;
					break;
				}
				c->ev = ev;
				c->cap = cap;
			}
			c->ev[c->n++] = *evs[i];
			++*total;
		}
	}
	db_iter_close(it);
	db_close(db);
	return err;
}

/* Every CPU's events into chunks of @version, sealed as capture's readers seal them. */
static int enc_run(struct enc_cpu *cpus, int nr, int version, double *secs, uint64_t *zbytes)
{
	struct db_chunk ch;
	double t0 = now_s();
	size_t i;
	int cpu, err = 0;

	*zbytes = 0;
	for (cpu = 0; cpu < nr && !err; cpu++) {
		db_chunk_init(&ch, cpu);
		ch.version = version;
		for (i = 0; i < cpus[cpu].n && !err; i++) {
			err = db_chunk_add(&ch, &cpus[cpu].ev[i]);
			if (!err && (db_chunk_full(&ch) || i + 1 == cpus[cpu].n)) {
				err = db_chunk_seal(&ch);
				*zbytes += ch.zlen;
				db_chunk_reset(&ch);
			}
		}
		db_chunk_free(&ch);
	}
	*secs = now_s() - t0;
	return err;
}

#define ENC_MAX_CPUS	1024

static int encode_rate(const char *path, int rounds, int only)
{
	static struct enc_cpu cpus[ENC_MAX_CPUS];
	double best[3] = { 1e30, 1e30, 1e30 }, t;
	uint64_t total = 0, z[3] = { 0 };
	int err, r, v, nr = 0;

	err = enc_load(path, cpus, ENC_MAX_CPUS, &total);
	for (r = 0; r < ENC_MAX_CPUS; r++)
		nr = cpus[r].n ? r + 1 : nr;
	for (r = 0; r < rounds && !err && total; r++)
		for (v = DB_STORE_V1; v <= DB_STORE_V2 && !err; v++) {
			if (only && v != only)
				continue;
			err = enc_run(cpus, nr, v, &t, &z[v]);
			best[v] = t < best[v] ? t : best[v];
		}
	if (!err && total) {
		printf("%s: %llu events on %d CPUs, encode and seal, best of %d:\n", path,
		       (unsigned long long)total, nr, rounds);
		for (v = DB_STORE_V1; v <= DB_STORE_V2; v++)
			if (!only || v == only)
				printf("  version %d  %6.1f ns/event  %12.0f events/s  %5.2f bytes/event\n",
				       v, best[v] * 1e9 / total, total / best[v], (double)z[v] / total);
		if (!only)
			printf("  version 2 / version 1: %.2f x the CPU\n", best[2] / best[1]);
	}
	for (r = 0; r < ENC_MAX_CPUS; r++)
		free(cpus[r].ev);
	if (err)
		fprintf(stderr, "db_rate: encoding %s: %s\n", path, mcr_strerror(err));
	return err;
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000;
	int rounds = argc > 2 ? atoi(argv[2]) : 3, r;
	const char *dir = argc > 3 ? argv[3] : getenv("TMPDIR");
	double g = 1e30, w = 1e30, rd = 1e30, t;
	char path[4096];
	struct stat sb;

	if (argc == 4 && !strcmp(argv[1], "--write"))
		return write_store(argv[3], strtoull(argv[2], NULL, 10), &t) ? 1 : 0;
	if (argc > 2 && !strcmp(argv[1], "--encode")) {
		rounds = argc > 3 ? atoi(argv[3]) : 5;
		r = argc > 4 ? atoi(argv[4]) : 0;
		if (rounds < 1 || (r && r != DB_STORE_V1 && r != DB_STORE_V2)) {
			fprintf(stderr, "db_rate: --encode FILE [ROUNDS >= 1 [VERSION 1 or 2]]\n");
			return 2;
		}
		return encode_rate(argv[2], rounds, r) ? 1 : 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--read")) {
		for (r = 2; r < argc; r++)
			if (read_store(argv[r], 0, &t))
				return 1;
		return 0;
	}
	snprintf(path, sizeof(path), "%s/db_rate.%d.db", dir ? dir : "/tmp", (int)getpid());
	for (r = 0; r < rounds; r++) {
		t = gen_only(n);
		g = t < g ? t : g;
		if (write_store(path, n, &t))
			return 1;
		w = t < w ? t : w;
		if (read_store(path, n, &t))
			return 1;
		rd = t < rd ? t : rd;
	}
	if (stat(path, &sb))
		return 1;
	printf("event store, %llu events on %d CPUs, best of %d:\n", (unsigned long long)n, NR_CPUS,
	       rounds);
	printf("  generator alone  %12.0f events/s\n", n / g);
	printf("  write (append)   %12.0f events/s  (generator included)\n", n / w);
	printf("  read (iterate)   %12.0f events/s  (decompress, decode, merge)\n", n / rd);
	printf("  file             %12.2f bytes/event (%lld bytes)\n", (double)sb.st_size / n,
	       (long long)sb.st_size);
	unlink(path);
	return 0;
}
