// SPDX-License-Identifier: GPL-2.0
/*
 * replay_mem FILE [MAX_EVENTS]: replay throughput with the events already in
 * memory (no SQLite in the loop), one policy (the baseline) and then three
 * policies, through the engine with no sink, on one thread and on the
 * engine's default threads (wall time); and the bare simulators driven
 * directly (updates and instant flushes), together and each policy alone, in
 * CPU time.  Prints events/s and ratios against the baseline.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "db.h"
#include "error.h"
#include "replay.h"

struct mem_src {
	struct mcr_event	*ev;
	size_t			n, i;
};

static int mem_next(void *ctx, struct mcr_event *ev)
{
	struct mem_src *m = ctx;

	if (m->i == m->n)
		return 0;
	*ev = m->ev[m->i++];
	return 1;
}

static double clock_s(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* The bare simulators run on this thread alone: its CPU time does not count other load. */
static double cpu_s(void)
{
	return clock_s(CLOCK_THREAD_CPUTIME_ID);
}

/* The engine, wall time; @threads 0: its default (replay_params.threads). */
static double bench_engine(struct mem_src *m, const struct replay_trace *t, const char *pols,
			   unsigned int threads)
{
	struct replay_params p = { .model = &replay_model_spread, .sample_ns = 100000000 };
	struct replay_source src = { .next = mem_next, .ctx = m };
	char buf[64], *save = NULL, *tok;
	struct replay *r;
	double t0;
	int ret;

#ifndef BENCH_NO_THREADS
	p.threads = threads;
#endif
	snprintf(buf, sizeof(buf), "%s", pols);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		p.runs[p.nr_runs++] = replay_run_own(t, sim_policy_find(tok));
	m->i = 0;
	if (replay_create(&p, t, &r))
		return -1;
	t0 = now_s();
	ret = replay_run(r, &src);
	t0 = now_s() - t0;
	replay_destroy(r);
	return ret ? -1 : t0;
}

static const char *const names[] = { "break", "continue", "legacy" };

static enum sim_item_kind bench_kind(unsigned int kind)
{
	return kind == MCR_EV_STATE ? SIM_ITEM_STATE :
	       kind == MCR_EV_LRUVEC ? SIM_ITEM_LRUVEC : SIM_ITEM_EVENT;
}

/*
 * The simulators alone: updates and instant flushes, nothing else; policies
 * @first.. on this thread, timed in its CPU time.
 */
static double bench_sims(struct mem_src *m, const struct replay_trace *t, unsigned int first,
			 unsigned int n)
{
	struct sim *s[3];
	struct sim_prep h[3], nh[3] = { { .slot = -1 }, { .slot = -1 }, { .slot = -1 } };
	double t0;
	size_t i;
	unsigned int k;

	for (k = 0; k < n; k++) {
		struct sim_params sp = { .policy = sim_policy_find(names[first + k]),
					 .nr_possible = t->nr_possible, .nr_online = t->nr_online,
					 .batch = t->batch };

		s[k] = sim_create(&sp);
		for (i = 0; i < t->nr_cgroups; i++)
			sim_cgroup_add(s[k], 0, t->cgroups[i].id,
				       t->cgroups[i].parent ? t->cgroups[i].parent : SIM_ROOT_ID);
	}
	t0 = cpu_s();
	for (i = 0; i < m->n; i++) {
		const struct mcr_event *ev = &m->ev[i];

		/*
		 * The preloaded events stream from memory, where the engine's
		 * come decoded into a small buffer: ask for them ahead, or the
		 * stream's misses count as the simulators' (a fifth of break's
		 * time without this).
		 */
		if (i + 16 < m->n)
			__builtin_prefetch(&m->ev[i + 16]);
		/* as the engine does (engine_prefetch()): the next update prepared */
		for (k = 0; k < n; k++) {
			h[k] = nh[k];
			nh[k].slot = -1;
		}
#ifndef BENCH_NO_PREFETCH
		if (i + 1 < m->n && mcr_event_is_update(&m->ev[i + 1]))
			for (k = 0; k < n; k++)
#ifndef BENCH_NO_PREPARE
				nh[k] = sim_update_prepare(s[k], (unsigned int)m->ev[i + 1].cpu,
							   m->ev[i + 1].id,
							   bench_kind(m->ev[i + 1].kind),
							   m->ev[i + 1].item);
#else
				sim_update_prefetch(s[k], (unsigned int)m->ev[i + 1].cpu,
						    m->ev[i + 1].id, bench_kind(m->ev[i + 1].kind),
						    m->ev[i + 1].item);
#endif
#endif
		for (k = 0; k < n; k++) {
#ifndef BENCH_NO_PREPARE
			if (mcr_event_is_update(ev) && sim_prep_ok(h[k]))
				sim_update_apply(s[k], h[k], ev->ts, ev->val);
			else
#endif
			if (mcr_event_is_update(ev))
				sim_update(s[k], ev->ts, (unsigned int)ev->cpu, ev->id,
					   bench_kind(ev->kind), ev->item, ev->val);
			else if (ev->kind == MCR_EV_FLUSH &&
				 sim_flush_request(s[k], ev->ts, ev->id, ev->flags & MCR_FLUSH_FORCE) > 0)
				sim_flush(s[k], ev->ts, ev->id);
		}
	}
	t0 = cpu_s() - t0;
	for (k = 0; k < n; k++)
		sim_destroy(s[k]);
	return t0;
}

int main(int argc, char **argv)
{
	struct mem_src m = { 0 };
	struct replay_trace t;
	struct db_iter *it;
	struct rusage ru;
	struct db *db;
	size_t cap = 1 << 20, max = argc > 2 ? strtoull(argv[2], NULL, 10) : SIZE_MAX;
	double b1, b3, b3t, s1, s3, sp[3];
	unsigned int k;
	int ret;

	if (argc < 2) {
		fprintf(stderr, "usage: replay_mem FILE [MAX_EVENTS]\n");
		return 2;
	}
	ret = db_open(argv[1], false, &db);
	if (!ret)
		ret = replay_trace_load(db, &t);
	if (!ret)
		ret = db_iter_open(db, &it);
	if (ret) {
		fprintf(stderr, "replay_mem: %s: %s\n", argv[1], mcr_strerror(ret));
		return 1;
	}
	m.ev = malloc(cap * sizeof(*m.ev));
	while (m.ev && m.n < max && (ret = db_iter_next(it, &m.ev[m.n])) > 0)
		if (++m.n == cap)
			m.ev = realloc(m.ev, (cap *= 2) * sizeof(*m.ev));
	db_iter_close(it);
	if (!m.ev || ret < 0) {
		fprintf(stderr, "replay_mem: loading: %s\n", ret < 0 ? mcr_strerror(ret) : "no memory");
		return 1;
	}
	b1 = bench_engine(&m, &t, "break", 1);
	b3 = bench_engine(&m, &t, "break,continue,legacy", 1);
#ifndef BENCH_NO_THREADS
	b3t = bench_engine(&m, &t, "break,continue,legacy", 0);
#else
	b3t = 0;
#endif
	s1 = bench_sims(&m, &t, 0, 1);
	s3 = bench_sims(&m, &t, 0, 3);
	for (k = 0; k < 3; k++)
		sp[k] = bench_sims(&m, &t, k, 1);
	if (b1 < 0 || b3 < 0 || b3t < 0) {
		fprintf(stderr, "replay_mem: replay failed\n");
		return 1;
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("events in memory: %zu (%.0f MiB)\n", m.n, (double)m.n * sizeof(*m.ev) / 1048576);
	printf("engine, 1 policy (baseline): %10.0f events/s\n", (double)m.n / b1);
	printf("engine, 3 policies:          %10.0f events/s  time ratio %.2f x baseline\n",
	       (double)m.n / b3, b3 / b1);
#ifndef BENCH_NO_THREADS
	printf("engine, 3 policies, threads: %10.0f events/s  time ratio %.2f x baseline"
	       " (%ld online CPUs)\n", (double)m.n / b3t, b3t / b1, sysconf(_SC_NPROCESSORS_ONLN));
#endif
	printf("bare sims, 1 policy:         %10.0f events/s  time ratio %.2f x baseline\n",
	       (double)m.n / s1, s1 / b1);
	printf("bare sims, 3 policies:       %10.0f events/s  time ratio %.2f x baseline\n",
	       (double)m.n / s3, s3 / b1);
	for (k = 0; k < 3; k++)
		printf("bare sim, %-8s           %10.0f events/s\n", names[k], (double)m.n / sp[k]);
	printf("peak RSS %.0f MiB (includes the preloaded events)\n", (double)ru.ru_maxrss / 1024);
	replay_trace_free(&t);
	free(m.ev);
	db_close(db);
	return 0;
}
