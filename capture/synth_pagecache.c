// SPDX-License-Identifier: GPL-2.0
/*
 * synth_pagecache.c - the patch's example: page cache growing in a leaf
 * directly under the root, a non-forced reader of the root, and the periodic
 * forced root flush.
 *
 * Why --flush-us defaults to 24 ms.  The race (synth-local.h) needs more
 * than TH pages credited to the leaf between its last
 * visit and the root's last visit of one flush.  Both happen in the last CPU's
 * window, where the list is leaf, [siblings,] root with visits at
 * (i + 1) / (n + 1) of the window, so the gap is at least a third of a window
 * (n = 2).  Up to 63 pages per CPU may sit in a per-CPU counter instead of
 * the atomic, so the gap must see TH + 4 x 63 = 508 pages: at 1 GiB/s
 * (262 pages/ms) that is 1.94 ms, a window of 5.8 ms, a flush of 23.3 ms on 4
 * CPUs.  That is the length of a flush on a busy host with thousands of
 * cgroups (0efc297a3c49 measured 45 ms with IRQs off for one flush on 400+
 * CPU machines), so on the synthetic 4-CPU machine each flush takes what the
 * whole host would: 24 ms, 6 ms per CPU window, a gap of >= 2 ms = 524 pages.
 */
#include <math.h>
#include <stdio.h>

#include "error.h"
#include "synth-local.h"

#define PC_T0		SYNTH_NS_PER_S	/* trace starts 1 s after "boot" */
#define PC_LEAF		100ull
#define PC_SIBLING	101ull		/* + i */
#define PC_FLUSHER	130		/* kworker running the periodic flush */
#define PC_READER	4100		/* cat memory.stat of the root */
#define PC_WRITER	5000		/* + cpu: the page-cache writers */
#define PC_SIB_PID	6000		/* + sibling index */
#define PC_NEVER	UINT64_MAX

enum { PC_LEAF_UPD, PC_SIB_UPD, PC_READ, PC_PERIODIC, PC_STREAMS };

const struct synth_param synth_pagecache_params[] = {
	{ "rate-mib", "MiB/s", "page-cache growth rate of the leaf", 1024, 1, 100000, false },
	{ "folio-pages", "pages", "pages per update (one folio)", 1, 1, 512, true },
	{ "cpus", "CPUs", "CPUs the writers spread over (possible = online = this)", 4, 1, 1024, true },
	{ "duration", "s", "trace length", 10, 0.001, 3600, false },
	{ "reader-ms", "ms", "non-forced reader of the root, every", 100, 0.01, 1e6, false },
	{ "period-ms", "ms", "periodic forced root flush, every", 2000, 1, 1e6, false },
	{ "flush-us", "us", "length of a flush that goes ahead, all CPU windows; 24 ms is a busy "
	  "host's flush, long enough that TH + 4 x 63 pages land between the leaf's and the "
	  "root's last visits at 1 GiB/s, so the race happens as on a real machine", 24000, 1, 1e7, false },
	{ "siblings", "cgroups", "light-activity siblings of the leaf", 3, 0, 100, true },
	{ "sibling-rate", "updates/s", "their updates (1-2 pages each) together; keep their "
	  "credit to the root below TH per period, or they unstick it", 40, 0, 1e7, false },
	{ .name = NULL },
};

struct pc_state {
	struct synth	*s;
	unsigned int	cpus;
	unsigned int	siblings;
	uint64_t	end;
	double		folio_ns;	/* between two leaf updates */
	int64_t		folio_pages;
	uint64_t	k;		/* leaf updates so far */
	double		sib_mean_ns;
	uint64_t	reader_ns;
	uint64_t	period_ns;
	/* the next event of each stream, merged by (ts, cpu) */
	uint64_t	t[PC_STREAMS];
	int		cpu[PC_STREAMS];
};

/* Round robin over the CPUs, each update up to half an interval late. */
static void next_leaf(struct pc_state *p)
{
	double base = (double)p->k * p->folio_ns;
	double jitter = synth_rng_unit(&p->s->rng) * p->folio_ns / 2;
	uint64_t t = PC_T0 + (uint64_t)(base + jitter);

	p->t[PC_LEAF_UPD] = t < p->end ? t : PC_NEVER;
	p->cpu[PC_LEAF_UPD] = (int)(p->k % p->cpus);
}

static void next_sibling(struct pc_state *p, uint64_t from)
{
	double gap;
	uint64_t t;

	if (!p->siblings || p->sib_mean_ns <= 0) {
		p->t[PC_SIB_UPD] = PC_NEVER;
		return;
	}
	gap = -log(1.0 - synth_rng_unit(&p->s->rng)) * p->sib_mean_ns;
	t = from + 1 + (uint64_t)gap;
	p->t[PC_SIB_UPD] = t < p->end ? t : PC_NEVER;
	p->cpu[PC_SIB_UPD] = (int)synth_rng_below(&p->s->rng, p->cpus);
}

static int leaf_update(struct pc_state *p)
{
	int cpu = p->cpu[PC_LEAF_UPD];
	int err = synth_update(p->s, p->t[PC_LEAF_UPD], cpu, PC_WRITER + cpu, MCR_EV_LRUVEC, PC_LEAF,
			       SYNTH_NR_FILE_PAGES, p->folio_pages);

	p->k++;
	next_leaf(p);
	return err;
}

/*
 * Anonymous memory coming and going, kernel memory, faults: small and signed.
 * Light on purpose: their credit reaches the root (the walk from a sibling
 * does not pass the leaf), and more than TH pages of it per period would make
 * the root flushable and end the stuck state that the scenario is about.  At
 * 40 updates/s of 1.5 pages the root gets 120 pages per 2 s period.
 */
static int sibling_update(struct pc_state *p)
{
	struct synth_rng *r = &p->s->rng;
	unsigned int i = (unsigned int)synth_rng_below(r, p->siblings);
	int cpu = p->cpu[PC_SIB_UPD];
	uint64_t what = synth_rng_below(r, 4);
	int64_t v = 1 + (int64_t)synth_rng_below(r, 2);
	uint64_t t = p->t[PC_SIB_UPD];
	int err;

	if (synth_rng_below(r, 3) == 0)
		v = -v;
	if (what < 2)
		err = synth_update(p->s, t, cpu, PC_SIB_PID + (int)i, MCR_EV_LRUVEC, PC_SIBLING + i,
				   SYNTH_NR_ANON_MAPPED, v);
	else if (what == 2)
		err = synth_update(p->s, t, cpu, PC_SIB_PID + (int)i, MCR_EV_STATE, PC_SIBLING + i,
				   SYNTH_MEMCG_KMEM, v);
	else
		err = synth_update(p->s, t, cpu, PC_SIB_PID + (int)i, MCR_EV_EVENTS, PC_SIBLING + i,
				   SYNTH_PGFAULT, v < 0 ? -v : v);
	next_sibling(p, t);
	return err;
}

static int setup(struct synth *s, struct pc_state *p)
{
	double pages_per_s = synth_arg(s, "rate-mib") * SYNTH_PAGES_PER_MIB;
	uint64_t flush_ns = (uint64_t)(synth_arg(s, "flush-us") * SYNTH_NS_PER_US);
	char path[32];
	unsigned int i;
	int err;

	p->s = s;
	p->cpus = (unsigned int)synth_arg(s, "cpus");
	p->siblings = (unsigned int)synth_arg(s, "siblings");
	p->end = PC_T0 + (uint64_t)(synth_arg(s, "duration") * SYNTH_NS_PER_S);
	p->folio_pages = (int64_t)synth_arg(s, "folio-pages");
	p->folio_ns = (double)SYNTH_NS_PER_S * (double)p->folio_pages / pages_per_s;
	p->reader_ns = (uint64_t)(synth_arg(s, "reader-ms") * SYNTH_NS_PER_MS);
	p->period_ns = (uint64_t)(synth_arg(s, "period-ms") * SYNTH_NS_PER_MS);
	p->sib_mean_ns = synth_arg(s, "sibling-rate") > 0 ?
			 SYNTH_NS_PER_S / synth_arg(s, "sibling-rate") : 0;
	if (p->folio_ns < 4)
		return -MCR_E_BAD_INPUT;	/* updates would collide within one ns */

	err = synth_machine(s, p->cpus, flush_ns, false);
	err = err ?: synth_cgroup(s, SIM_ROOT_ID, 0, "/");
	err = err ?: synth_cgroup(s, PC_LEAF, SIM_ROOT_ID, "/leaf");
	for (i = 0; !err && i < p->siblings; i++) {
		snprintf(path, sizeof(path), "/sibling%u", i + 1);
		err = synth_cgroup(s, PC_SIBLING + i, SIM_ROOT_ID, path);
	}
	err = err ?: synth_item(s, MCR_EV_LRUVEC, SYNTH_NR_FILE_PAGES, "NR_FILE_PAGES", "pages");
	err = err ?: synth_item(s, MCR_EV_LRUVEC, SYNTH_NR_ANON_MAPPED, "NR_ANON_MAPPED", "pages");
	err = err ?: synth_item(s, MCR_EV_STATE, SYNTH_MEMCG_KMEM, "MEMCG_KMEM", "pages");
	err = err ?: synth_item(s, MCR_EV_EVENTS, SYNTH_PGFAULT, "PGFAULT", "events");
	if (err)
		return err;

	next_leaf(p);
	next_sibling(p, PC_T0);
	/* half a reader interval out of phase, so readers do not land on the periodic flush */
	p->t[PC_READ] = PC_T0 + p->reader_ns / 2;
	p->cpu[PC_READ] = (int)synth_rng_below(&s->rng, p->cpus);
	p->t[PC_PERIODIC] = PC_T0 + p->period_ns;
	p->cpu[PC_PERIODIC] = (int)synth_rng_below(&s->rng, p->cpus);
	return 0;
}

static int timer_fire(struct pc_state *p, int which)
{
	bool periodic = which == PC_PERIODIC;
	int err = synth_read(p->s, p->t[which], p->cpu[which], periodic ? PC_FLUSHER : PC_READER,
			     SIM_ROOT_ID, periodic);

	p->t[which] += periodic ? p->period_ns : p->reader_ns;
	p->cpu[which] = (int)synth_rng_below(&p->s->rng, p->cpus);
	return err;
}

/* Emits the streams merged by (ts, cpu) until the end of the trace. */
int synth_pagecache(struct synth *s)
{
	struct pc_state p = { 0 };
	int i, next, err = setup(s, &p);

	while (!err) {
		next = 0;
		for (i = 1; i < PC_STREAMS; i++)
			if (p.t[i] < p.t[next] || (p.t[i] == p.t[next] && p.cpu[i] < p.cpu[next]))
				next = i;
		if (p.t[next] >= p.end)
			break;
		if (next == PC_LEAF_UPD)
			err = leaf_update(&p);
		else if (next == PC_SIB_UPD)
			err = sibling_update(&p);
		else
			err = timer_fire(&p, next);
	}
	return err;
}
