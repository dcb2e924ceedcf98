/* SPDX-License-Identifier: GPL-2.0 */
/*
 * replay_fixture.h - what test_replay.c and test_replay_models.c share: an
 * event-array source, a sink that records reads and mismatches, the trace
 * (4 possible and online CPUs, TH = 64 * 4 = 256; root R (id 1) and one leaf
 * L (id 2)), the event constructors and the traces several cases replay.
 *
 * An update of 64 pages fills a per-CPU counter to the batch at once, so
 * each one moves 64 into the atomic of each node the walk reaches
 * (memcg_rstat_updated() in mm/memcontrol.c).
 */
#ifndef MCR_TEST_REPLAY_FIXTURE_H
#define MCR_TEST_REPLAY_FIXTURE_H

#include <errno.h>

#include "../harness.h"
#include "error.h"
#include "replay.h"

#define R	1
#define L	2
#define FLUSHER	3	/* ring-buffer CPU of the flushing task */
#define PID	77

struct arr_src {
	const struct mcr_event	*ev;
	size_t			n, i;
	uint64_t		seq[8];
};

/* Per-CPU sequence numbers as the database has them: they name events across passes. */
static inline int arr_next(void *ctx, struct mcr_event *ev)
{
	struct arr_src *a = ctx;

	if (a->i == a->n)
		return 0;
	*ev = a->ev[a->i++];
	ev->seq = a->seq[ev->cpu & 7]++;
	return 1;
}

static inline int arr_rewind(void *ctx)
{
	struct arr_src *a = ctx;

	a->i = 0;
	memset(a->seq, 0, sizeof(a->seq));
	return 0;
}

/* What the sink saw, per policy. */
struct rec {
	struct replay_read	reads[4][8];
	int64_t			err0[4][8];	/* the read's error on item 0; 0 if right */
	unsigned int		nr_reads[4];
	struct replay_mismatch	mm[8];
	unsigned int		nr_mm;
	unsigned int		points;
};

static inline int rec_read(void *ctx, unsigned int pol, const struct replay_read *r)
{
	struct rec *rc = ctx;

	size_t i;

	if (rc->nr_reads[pol] < 8) {
		for (i = 0; i < r->nr_errors; i++)
			if (r->errors[i].item == 0)
				rc->err0[pol][rc->nr_reads[pol]] = r->errors[i].error;
		rc->reads[pol][rc->nr_reads[pol]] = *r;
		rc->reads[pol][rc->nr_reads[pol]++].errors = NULL;	/* the engine's buffer */
	}
	return 0;
}

static inline int rec_sample(void *ctx, unsigned int pol, const struct replay_sample *s)
{
	((struct rec *)ctx)->points++;
	return 0;
}

static inline int rec_mismatch(void *ctx, const struct replay_mismatch *m)
{
	struct rec *rc = ctx;

	if (rc->nr_mm < 8) {
		rc->mm[rc->nr_mm] = *m;
		rc->mm[rc->nr_mm].context = NULL;	/* the caller's buffer; the cause is a static name */
		rc->nr_mm++;
	}
	return 0;
}

static struct replay_cgroup tcg[] = {
	{ .id = R, .parent = 0, .path = "/", .created_ts = -1, .level = 0 },
	{ .id = L, .parent = R, .path = "/leaf", .created_ts = -1, .level = 1 },
};

static inline struct replay_trace trace4(bool visits)
{
	return (struct replay_trace){
		.nr_possible = 4, .nr_online = 4, .batch = 64, .hierarchy_id = -1,
		.windows_traced = true,
		.visits_traced = visits, .cgroups = tcg, .nr_cgroups = 2,
	};
}

#define UPD(t, c, g, v)	{ .ts = (t), .cpu = (c), .id = (g), .val = (v), .kind = MCR_EV_STATE, .pid = 1 }
#define FLUSH(t, g, su, fl)	{ .ts = (t), .cpu = FLUSHER, .id = (g), .val = (su), .kind = MCR_EV_FLUSH, \
				  .flags = (fl), .pid = PID }
#define LOCK(t, g, c)		{ .ts = (t), .cpu = FLUSHER, .id = (g), .item = (c), .kind = MCR_EV_LOCKED, .pid = PID }
#define UNLOCK(t, g, c)	{ .ts = (t), .cpu = FLUSHER, .id = (g), .item = (c), .kind = MCR_EV_UNLOCK, .pid = PID }
#define VISIT(t, g, c)		{ .ts = (t), .cpu = FLUSHER, .id = (g), .item = (c), .kind = MCR_EV_VISIT, .pid = PID }
#define REST_OF_WINDOWS(t, g)	LOCK((t), g, 1), UNLOCK((t) + 1, g, 1), LOCK((t) + 2, g, 2), \
				UNLOCK((t) + 3, g, 2), LOCK((t) + 4, g, 3), UNLOCK((t) + 5, g, 3)

/*
 * The seed race (mem_cgroup_css_rstat_flush() sets R's atomic to 0 after L's
 * last visit, and 60cada258dfe's break keeps L's later credit from R) with
 * explicit visits:
 *   t=100  L +64 cpu0        L=64  R=64
 *   t=1000 forced flush of R; window cpu0: visit L (L=0), then
 *   t=1030 L +64 cpu0        L=64  R=128 (R not visited yet on cpu0)
 *   t=1100 visit R           R=0: L's credit is wiped from R
 *   cpus 1-3: nothing on their trees.
 *   t=2000.. 4 x L +64 cpu1  L=128,192,256,320 (flushable)  R=64,128,192,256
 *   t=2100.. 2 x L +64 cpu1  break: L flushable, walk stops; R stays 256 = TH (not > TH)
 *                            continue: skips L, R=320 (flushable); legacy: R=320 too
 *   t=3000 read of R (the kernel, a break host, traced stats_updates=256, needs_flush=0)
 *     break: skipped; truth 8 x 64 = 512, shown 64 (t=100, through L's visit at 1020
 *            and R's at 1100): read error 64 - 512 = -448.  Pending = every update
 *            since L's visit, all still at L: 64 + 4*64 + 2*64 = 448, not above the
 *            stranded limit TH + 63 x 4 = 508: per-CPU remainders could hold that
 *            much back, so the read is not stale.
 *     continue: 320 > 256 -> flushes (the kernel did not: no windows, so at once);
 *            the reader gets every update: error 0.
 */
static const struct mcr_event seed_race[] = {
	UPD(100, 0, L, 64),
	FLUSH(1000, R, 64, MCR_FLUSH_FORCE),
	LOCK(1010, R, 0), VISIT(1020, L, 0), UPD(1030, 0, L, 64), VISIT(1100, R, 0), UNLOCK(1110, R, 0),
	REST_OF_WINDOWS(1200, R),
	UPD(2000, 1, L, 64), UPD(2010, 1, L, 64), UPD(2020, 1, L, 64), UPD(2030, 1, L, 64),
	UPD(2100, 1, L, 64), UPD(2110, 1, L, 64),
	FLUSH(3000, R, 256, 0),
};

static inline int run(const struct mcr_event *ev, size_t n, struct replay_trace *t,
		      const char *const *pols, const struct replay_model *model, bool validate,
		      struct rec *rc, struct replay **out)
{
	struct arr_src a = { .ev = ev, .n = n };
	struct replay_source src = { .next = arr_next, .rewind = arr_rewind, .ctx = &a };
	struct replay_params p = {
		.model = model, .validate = validate, .max_mismatches = 8,
		.sink = { .read = rec_read, .sample = rec_sample, .mismatch = rec_mismatch, .ctx = rc },
	};
	int ret;

	for (; *pols; pols++)
		p.runs[p.nr_runs++] = replay_run_own(t, sim_policy_find(*pols));
	ret = replay_create(&p, t, out);
	if (ret)
		return ret;
	return replay_run(*out, &src);
}

#define N(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * The seed race as the kernel traces it, without visit events: the update at
 * 1030 lands in CPU 0's window [1010, 1110] over [L, R].  Spread puts L's
 * visit at 1010 + 100/3 = 1043 and R's at 1076, so the update comes before
 * both: L=R=128, both visits wipe it, L=R=0.  Then 6 x L +64 on CPU 1: L and
 * R reach 256 after 4; the 5th: L=320, R=320 (neither was > 256); the 6th
 * stops at L.  Spread says R=320 at the read; the kernel said 256.
 * Only "after L's visit, before R's" (p = 1) gives 256: L keeps 64, R is
 * wiped, then L 128..320 and R 64..256, R stuck at TH.  Inference finds that
 * order from the kernel's 256, and the inferred replay of break reproduces it.
 */
#define SEED_RACE_PLAIN \
	UPD(100, 0, L, 64), \
	FLUSH(1000, R, 64, MCR_FLUSH_FORCE), \
	LOCK(1010, R, 0), UPD(1030, 0, L, 64), UNLOCK(1110, R, 0), \
	REST_OF_WINDOWS(1200, R), \
	UPD(2000, 1, L, 64), UPD(2010, 1, L, 64), UPD(2020, 1, L, 64), UPD(2030, 1, L, 64), \
	UPD(2100, 1, L, 64), UPD(2110, 1, L, 64), \
	FLUSH(3000, R, 256, 0)

static const struct mcr_event seed_race_plain[] = { SEED_RACE_PLAIN };

/*
 * Visit placement decides.  No visit events; the kernel's window for CPU 0 is
 * [1010, 1020]; CPUs 1-3 have nothing on their trees.
 *   t=100  L +64 cpu0   L=64  R=64
 *   t=1000 forced flush of R
 *   t=1005 L +64 cpu0   (before the window)
 *   t=1013 L +64 cpu0   (inside the window)
 * instant: flush at 1000 -> 0,0; then 1005 and 1013 -> L=128 R=128.
 * window:  1005 -> 128,128; visits at 1010 -> 0,0; 1013 -> L=64 R=64.
 * spread:  1005 -> 128,128; cpu0's list is [L, R], n=2 over 10 ns: L due at
 *          1010 + 10/3 = 1013, R at 1010 + 20/3 = 1016.  At 1013 the visit of L
 *          comes first (L=0), then the update: L=64, R=192; R's visit at 1016:
 *          R=0.  -> L=64 R=0.
 */
static const struct mcr_event placement[] = {
	UPD(100, 0, L, 64),
	FLUSH(1000, R, 64, MCR_FLUSH_FORCE),
	UPD(1005, 0, L, 64),
	LOCK(1010, R, 0), UPD(1013, 0, L, 64), UNLOCK(1020, R, 0),
	REST_OF_WINDOWS(1030, R),
};


#endif
