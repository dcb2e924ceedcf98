// SPDX-License-Identifier: GPL-2.0
/*
 * Replay engine on hand-built event arrays (no database): the seed race with
 * explicit visits, flush models that disagree, a lock-only release flush,
 * a policy flushing where the kernel did not, validation.
 *
 * Every trace: 4 possible and online CPUs, TH = 64 * 4 = 256; root R (id 1)
 * and one leaf L (id 2).  An update of 64 pages fills a per-CPU counter to the
 * batch at once, so each one moves 64 into the atomic of each node the walk
 * reaches (memcg_rstat_updated() in mm/memcontrol.c).
 *
 * Over 700 lines: one shared trace setup and its helpers serve every case,
 * each a few dozen lines; split, each file would repeat the setup.
 */
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
static int arr_next(void *ctx, struct mcr_event *ev)
{
	struct arr_src *a = ctx;

	if (a->i == a->n)
		return 0;
	*ev = a->ev[a->i++];
	ev->seq = a->seq[ev->cpu & 7]++;
	return 1;
}

static int arr_rewind(void *ctx)
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

static int rec_read(void *ctx, unsigned int pol, const struct replay_read *r)
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

static int rec_sample(void *ctx, unsigned int pol, const struct replay_sample *s)
{
	((struct rec *)ctx)->points++;
	return 0;
}

static int rec_mismatch(void *ctx, const struct replay_mismatch *m)
{
	struct rec *rc = ctx;

	if (rc->nr_mm < 8) {
		rc->mm[rc->nr_mm] = *m;
		rc->mm[rc->nr_mm].context = NULL;
		rc->mm[rc->nr_mm].cause = NULL;
		rc->nr_mm++;
	}
	return 0;
}

static struct replay_cgroup tcg[] = {
	{ .id = R, .parent = 0, .path = "/", .created_ts = -1, .level = 0 },
	{ .id = L, .parent = R, .path = "/leaf", .created_ts = -1, .level = 1 },
};

static struct replay_trace trace4(bool visits)
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

static int run(const struct mcr_event *ev, size_t n, struct replay_trace *t, const char *const *pols,
	       const struct replay_model *model, bool validate, struct rec *rc, struct replay **out)
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

TEST(inferred_order_reproduces_kernel)
{
	static const char *const pols[] = { "break", "continue", NULL };
	struct replay_trace tr = trace4(false);
	struct arr_src a = { .ev = seed_race_plain, .n = N(seed_race_plain) };
	struct replay_source src = { .next = arr_next, .rewind = arr_rewind, .ctx = &a };
	struct replay_params p = { .model = &replay_model_inferred };
	struct replay_order *o = NULL;
	struct rec rc = { 0 };
	struct replay *r = NULL;
	size_t k;

	ASSERT_EQ(replay_order_infer(&tr, sim_policy_find("break"), 0, &src, NULL, NULL, &o), 0);
	ASSERT_EQU(replay_order_size(o), 1);
	/* the update at 1030 is CPU 0's second event (seq 1) */
	ASSERT(replay_order_lookup(o, 1, &k));
	ASSERT_EQU(k, 1);
	ASSERT(!replay_order_lookup(o, 0, &k));

	ASSERT_EQ(run(seed_race_plain, N(seed_race_plain), &tr, pols, &replay_model_spread, false,
		      &rc, &r), 0);
	ASSERT_EQ(rc.reads[0][1].sim_stats_updates, 320);	/* spread: not the kernel's */
	replay_destroy(r);

	memset(&rc, 0, sizeof(rc));
	a = (struct arr_src){ .ev = seed_race_plain, .n = N(seed_race_plain) };
	p.runs[0] = replay_run_own(&tr, sim_policy_find("break"));
	p.runs[1] = replay_run_own(&tr, sim_policy_find("continue"));
	p.nr_runs = 2;
	p.order = o;
	p.sink = (struct replay_sink){ .read = rec_read, .ctx = &rc };
	ASSERT_EQ(replay_create(&p, &tr, &r), 0);
	ASSERT_EQ(replay_run(r, &src), 0);
	ASSERT_EQ(replay_stats(r)->win.inferred_updates, 1);
	ASSERT_EQ(rc.reads[0][1].sim_stats_updates, 256);	/* break: the kernel's value */
	/*
	 * R shows the 64 of t=100 (L's visit, then R's, took them up); truth is
	 * 8 x 64: the reader gets 64 - 512 = -448.  Pending 448 is below the
	 * stranded limit 256 + 63 x 4 = 508: not a stale read.
	 */
	ASSERT_EQ(rc.err0[0][1], -448);
	ASSERT(!rc.reads[0][1].stale);
	/* continue in the same order: R 320 at the read, flushes, nothing stale */
	ASSERT_EQ(rc.reads[1][1].sim_stats_updates, 320);
	ASSERT(!rc.reads[1][1].stale);
	replay_destroy(r);
	replay_order_free(o);
}

TEST(seed_race_explicit_visits)
{
	static const char *const pols[] = { "break", "continue", "legacy", NULL };
	struct replay_trace tr = trace4(true);
	struct rec rc = { 0 };
	struct replay_summary sb, sc;
	struct replay *r = NULL;
	const struct replay_model *m;
	size_t i;

	/* Explicit visits override every model: same result under each. */
	for (i = 0; (m = replay_model_at(i)); i++) {
		memset(&rc, 0, sizeof(rc));
		ASSERT_EQ(run(seed_race, N(seed_race), &tr, pols, m, false, &rc, &r), 0);
		ASSERT_EQ(replay_stats(r)->win.explicit_windows, 1);
		ASSERT_EQ(replay_stats(r)->win.visits_unmatched, 0);
		/* break: leaf 320, root stuck at 256, the read skipped and stale */
		ASSERT_EQ(sim_stats_updates(replay_sim(r, 0), L), 320);
		ASSERT_EQ(sim_stats_updates(replay_sim(r, 0), R), 256);
		ASSERT_EQ(rc.nr_reads[0], 2);
		ASSERT_EQ(rc.reads[0][1].sim_stats_updates, 256);
		ASSERT_EQ(rc.reads[0][1].flushed, 0);
		ASSERT_EQ(rc.reads[0][1].stale, 0);
		ASSERT_EQ(rc.reads[0][1].stranded, 0);
		ASSERT_EQU(rc.reads[0][1].pending, 448);
		ASSERT_EQ(rc.err0[0][1], -448);
		ASSERT_EQ(rc.err0[1][1], 0);
		/* continue and legacy: root at 320, the read flushes, at once: everything 0 */
		ASSERT_EQ(rc.reads[1][1].sim_stats_updates, 320);
		ASSERT_EQ(rc.reads[1][1].flushed, 1);
		ASSERT_EQ(rc.reads[1][1].stale, 0);
		ASSERT_EQ(sim_stats_updates(replay_sim(r, 1), R), 0);
		ASSERT_EQ(sim_stats_updates(replay_sim(r, 1), L), 0);
		ASSERT_EQ(rc.reads[2][1].sim_stats_updates, 320);
		ASSERT_EQ(rc.reads[2][1].flushed, 1);
		ASSERT_EQ(replay_summary_get(r, 0, R, &sb), 0);
		ASSERT_EQ(replay_summary_get(r, 1, R, &sc), 0);
		ASSERT_EQ(sb.stale_reads, 0);
		ASSERT_EQ(sc.stale_reads, 0);
		ASSERT_EQ(sb.reads, 1);		/* the forced flush is not a reader */
		ASSERT_EQU(sb.final_pending, 448);
		ASSERT_EQU(sc.final_pending, 0);
		ASSERT_EQU(sb.max_pending, 448);
		ASSERT(!replay_cgroup_is_leaf(r, R));
		ASSERT(replay_cgroup_is_leaf(r, L));
		replay_destroy(r);
		r = NULL;
	}
}

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

TEST(flush_models_place_visits)
{
	static const char *const pols[] = { "break", NULL };
	static const struct {
		const char	*model;
		int64_t		l, r;
	} want[] = {
		{ "instant",	128, 128 },
		{ "window",	64, 64 },
		{ "spread",	64, 0 },
		{ "inferred",	64, 0 },	/* without an order (kernel unknown): spread */
	};
	struct replay_trace tr = trace4(false);
	struct rec rc = { 0 };
	struct replay *r = NULL;
	const struct replay_model *m;
	size_t i;

	for (i = 0; i < N(want); i++) {
		ASSERT_EQ(replay_model_find(want[i].model, &m), 0);
		ASSERT_EQ(run(placement, N(placement), &tr, pols, m, false, &rc, &r), 0);
		if (sim_stats_updates(replay_sim(r, 0), L) != want[i].l ||
		    sim_stats_updates(replay_sim(r, 0), R) != want[i].r)
			FAILF("model %s: L=%lld R=%lld, want %lld %lld", m->name,
			      (long long)sim_stats_updates(replay_sim(r, 0), L),
			      (long long)sim_stats_updates(replay_sim(r, 0), R),
			      (long long)want[i].l, (long long)want[i].r);
		ASSERT_EQ(replay_stats(r)->win.owned, 4);
		ASSERT_EQ(replay_stats(r)->win.lock_only, 0);
		/* the update at 1013 is inside the kernel's window over R: order unknown */
		ASSERT_EQ(replay_stats(r)->win.in_window_updates, 1);
		replay_destroy(r);
		r = NULL;
	}
}

/*
 * Lock windows with no memcg_flush_stats before them (css release of L): an
 * unconditional flush of subtree(L) for every policy.
 *   t=100 L +64 cpu0: L=64 R=64.  Windows over L, pid 9: L visited on cpu0:
 *   L=0; R is outside the subtree and keeps 64.  L's 64 pages moved into R's
 *   pending: missing(L)=0, missing(R)=64.
 */
TEST(lock_only_release_flush)
{
	static const char *const pols[] = { "break", "continue", NULL };
	static const struct mcr_event ev[] = {
		UPD(100, 0, L, 64),
		{ .ts = 200, .cpu = 2, .id = L, .item = 0, .kind = MCR_EV_LOCKED, .pid = 9 },
		{ .ts = 201, .cpu = 2, .id = L, .item = 0, .kind = MCR_EV_UNLOCK, .pid = 9 },
		{ .ts = 202, .cpu = 2, .id = L, .item = 1, .kind = MCR_EV_LOCKED, .pid = 9 },
		{ .ts = 203, .cpu = 2, .id = L, .item = 1, .kind = MCR_EV_UNLOCK, .pid = 9 },
		{ .ts = 204, .cpu = 2, .id = L, .item = 2, .kind = MCR_EV_LOCKED, .pid = 9 },
		{ .ts = 205, .cpu = 2, .id = L, .item = 2, .kind = MCR_EV_UNLOCK, .pid = 9 },
		{ .ts = 206, .cpu = 2, .id = L, .item = 3, .kind = MCR_EV_LOCKED, .pid = 9 },
		{ .ts = 207, .cpu = 2, .id = L, .item = 3, .kind = MCR_EV_UNLOCK, .pid = 9 },
	};
	struct replay_trace tr = trace4(false);
	struct rec rc = { 0 };
	struct replay *r = NULL;
	const struct replay_model *m;
	unsigned int p;
	size_t i;

	for (i = 0; (m = replay_model_at(i)); i++) {
		ASSERT_EQ(run(ev, N(ev), &tr, pols, m, false, &rc, &r), 0);
		ASSERT_EQ(replay_stats(r)->win.lock_only, 4);
		for (p = 0; p < 2; p++) {
			struct sim_stale sl, sr;

			ASSERT_EQ(sim_stats_updates(replay_sim(r, p), L), 0);
			ASSERT_EQ(sim_stats_updates(replay_sim(r, p), R), 64);
			ASSERT_EQ(sim_stale_get(replay_sim(r, p), L, &sl), 0);
			ASSERT_EQ(sim_stale_get(replay_sim(r, p), R, &sr), 0);
			ASSERT_EQU(sl.missing, 0);
			ASSERT_EQU(sr.missing, 64);
		}
		replay_destroy(r);
		r = NULL;
	}
}

/*
 * A policy flushes where the kernel did not.  5 x L +64 cpu0: L=320 R=320,
 * both flushable under every policy.  A read of L where the (pretend) kernel
 * said needs_flush=0: no windows follow.  Every policy decides with its own
 * counters: 320 > 256, flush; the kernel has no window for it, so at once
 * whatever the model: L=0, R untouched (320).  Then windows of an unrelated
 * pid over L arrive: a lock-only flush, nothing left to do.
 */
TEST(policy_flushes_where_kernel_did_not)
{
	static const char *const pols[] = { "break", "continue", "legacy", NULL };
	static const struct mcr_event ev[] = {
		UPD(100, 0, L, 64), UPD(110, 0, L, 64), UPD(120, 0, L, 64), UPD(130, 0, L, 64),
		UPD(140, 0, L, 64),
		FLUSH(500, L, 320, 0),
	};
	struct replay_trace tr = trace4(false);
	struct rec rc;
	struct replay *r = NULL;
	const struct replay_model *m;
	unsigned int p;
	size_t i;

	for (i = 0; (m = replay_model_at(i)); i++) {
		memset(&rc, 0, sizeof(rc));
		ASSERT_EQ(run(ev, N(ev), &tr, pols, m, false, &rc, &r), 0);
		for (p = 0; p < 3; p++) {
			ASSERT_EQ(rc.nr_reads[p], 1);
			ASSERT_EQ(rc.reads[p][0].flushed, 1);
			ASSERT_EQ(rc.reads[p][0].kernel_needs_flush, 0);
			ASSERT_EQ(rc.reads[p][0].sim_stats_updates, 320);
			ASSERT_EQ(sim_stats_updates(replay_sim(r, p), L), 0);
			ASSERT_EQ(sim_stats_updates(replay_sim(r, p), R), 320);
		}
		ASSERT_EQ(replay_stats(r)->win.missing, 0);
		replay_destroy(r);
		r = NULL;
	}
}

/*
 * Validation of the seed race against its own kernel values: the forced root
 * flush completes at the unlock of CPU 3 (t=1205); the only read after it is
 * at t=3000, traced 256 / needs_flush 0, which break reproduces.  Validating
 * continue instead: 320 / needs_flush 1, a mismatch of +64 in bucket "+64..127".
 */
TEST(validate_seed_race)
{
	static const char *const brk[] = { "break", NULL }, *const cont[] = { "continue", NULL };
	struct replay_trace tr = trace4(true);
	const struct replay_validation *v;
	struct rec rc = { 0 };
	struct replay *r = NULL;
	unsigned int b, hit = 0;

	ASSERT_EQ(run(seed_race, N(seed_race), &tr, brk, &replay_model_spread, true, &rc, &r), 0);
	v = replay_validation(r);
	ASSERT(v);
	ASSERT_EQ(v->flush_events, 2);
	ASSERT_EQ(v->skipped_before_sync, 1);
	ASSERT_EQ(v->compared, 1);
	ASSERT_EQ(v->stats_updates_match_plain, 1);
	ASSERT_EQ(v->stats_updates_match, 1);
	ASSERT_EQ(v->needs_flush_match, 1);
	ASSERT_EQU(v->sync_ts, 1205);
	ASSERT_EQ(rc.nr_mm, 0);
	replay_destroy(r);

	memset(&rc, 0, sizeof(rc));
	ASSERT_EQ(run(seed_race, N(seed_race), &tr, cont, &replay_model_spread, true, &rc, &r), 0);
	v = replay_validation(r);
	ASSERT_EQ(v->compared, 1);
	ASSERT_EQ(v->stats_updates_match_plain, 0);
	ASSERT_EQ(v->needs_flush_match_plain, 0);
	ASSERT_EQ(rc.nr_mm, 1);
	ASSERT_EQ(rc.mm[0].sim_stats_updates, 320);
	ASSERT_EQ(rc.mm[0].kernel_stats_updates, 256);
	for (b = 0; b < REPLAY_DIFF_BUCKETS; b++)
		if (v->diff_hist[b]) {
			ASSERT_STR(replay_diff_bucket_name(b), "+64..127");
			hit++;
		}
	ASSERT_EQ(hit, 1);
	replay_destroy(r);
}

/*
 * A dying memcg removed before the trace (id 9, in no table: parent unknown)
 * hangs under the root in the simulator.  After the sync (the forced root
 * flush at 1000 and its windows), 9 +64 on CPU 0 moves a batch into 9 and,
 * with no ancestor between, into R: the simulation says R = 64.  The kernel,
 * where 9's real parent stopped the walk, read R = 0.  The mismatch is
 * named: an update under a cgroup of unknown parent since the last flush.
 */
static const struct mcr_event orphan_update[] = {
	FLUSH(1000, R, 0, MCR_FLUSH_FORCE),
	LOCK(1010, R, 0), UNLOCK(1020, R, 0), REST_OF_WINDOWS(1030, R),
	UPD(2000, 0, 9, 64),
	FLUSH(3000, R, 0, 0),
};

TEST(validate_names_unknown_parent)
{
	static const char *const brk[] = { "break", NULL };
	struct replay_trace tr = trace4(false);
	const struct replay_validation *v;
	struct rec rc = { 0 };
	struct replay *r = NULL;

	ASSERT_EQ(run(orphan_update, N(orphan_update), &tr, brk, &replay_model_spread, true, &rc, &r), 0);
	v = replay_validation(r);
	ASSERT_EQ(v->compared, 1);
	ASSERT_EQ(v->stats_updates_match, 0);
	ASSERT_EQ(rc.mm[0].sim_stats_updates, 64);
	ASSERT_EQ(v->causes[REPLAY_CAUSE_UNKNOWN_PARENT], 1);
	replay_destroy(r);
}

/* An event naming a CPU beyond nr_possible stops the pass with -MCR_E_CPU. */
TEST(bad_cpu_stops)
{
	static const char *const pols[] = { "break", NULL };
	static const struct mcr_event ev[] = { UPD(100, 0, L, 64), UPD(110, 9, L, 64) };
	struct replay_trace tr = trace4(false);
	struct rec rc = { 0 };
	struct replay *r = NULL;

	ASSERT_EQ(run(ev, N(ev), &tr, pols, &replay_model_window, false, &rc, &r), -MCR_E_CPU);
	replay_destroy(r);
}

/*
 * The table, used only through what every entry has: a name the lookup finds
 * it by, a summary for --help, and hooks consistent with each other.  Names
 * outside the table fail with -EINVAL, and a replay needs a model.
 */
TEST(model_table)
{
	static const char *const pols[] = { "break", NULL };
	struct replay_trace tr = trace4(false);
	const struct replay_model *m, *f;
	struct rec rc = { 0 };
	struct replay *r = NULL;
	size_t i, n;

	for (n = 0; (m = replay_model_at(n)); n++) {
		ASSERT(m->name && *m->name && m->summary && *m->summary);
		ASSERT_EQ(replay_model_find(m->name, &f), 0);
		ASSERT(f == m);
		for (i = 0; i < n; i++)
			ASSERT(strcmp(replay_model_at(i)->name, m->name));
		/* visits are placed only in a window the model kept open */
		if (m->visit || m->window_end || m->needs_unlock)
			ASSERT(m->window_begin);
		/* a model that prepares says what a trace must have; a plain one runs on any */
		ASSERT(!replay_model_is_plain(m) == !!m->unmet);
		ASSERT(replay_model_is_plain(m) || replay_model_unmet(m, &tr));
		ASSERT_EQ(run(placement, N(placement), &tr, pols, m, false, &rc, &r), 0);
		ASSERT_EQ(replay_stats(r)->win.owned, 4);
		replay_destroy(r);
		r = NULL;
	}
	ASSERT_EQU(n, 4);	/* instant, window, spread, inferred */
	ASSERT(!replay_model_at(n));
	ASSERT_EQ(replay_model_find("Spread", &f), -EINVAL);
	ASSERT_EQ(replay_model_find("", &f), -EINVAL);
	ASSERT_EQ(replay_model_find(NULL, &f), -EINVAL);
	ASSERT_EQ(run(placement, N(placement), &tr, pols, NULL, false, &rc, &r), -EINVAL);
}

/*
 * A model the table does not have, which the engine can know only through
 * its hooks: every visit of a window at its unlock.  On the placement trace:
 * 1005 -> L=128 R=128; CPU 0's window opens at 1010 and stays open; the update
 * at 1013 comes before both visits: L=192 R=192; the unlock at 1020 visits L
 * and R: L=0 R=0.  No model of the table gives that (128/128, 64/64, 64/0).
 */
static int late_window_begin(struct replay *r, unsigned int pol, struct model_window *w,
			     const struct model_lock *lk)
{
	return 1;
}

static const struct replay_model model_late = {
	.name		= "late",
	.summary	= "every visit of a window at its unlock",
	.window_begin	= late_window_begin,
};

TEST(model_outside_table)
{
	static const char *const pols[] = { "break", "continue", NULL };
	struct replay_trace tr = trace4(false);
	const struct replay_model *f;
	struct rec rc = { 0 };
	struct replay *r = NULL;
	unsigned int p;

	ASSERT_EQ(replay_model_find(model_late.name, &f), -EINVAL);
	ASSERT_EQ(run(placement, N(placement), &tr, pols, &model_late, false, &rc, &r), 0);
	for (p = 0; p < 2; p++) {
		ASSERT_EQ(sim_stats_updates(replay_sim(r, p), L), 0);
		ASSERT_EQ(sim_stats_updates(replay_sim(r, p), R), 0);
	}
	ASSERT_EQ(replay_stats(r)->win.in_window_updates, 1);
	ASSERT(!replay_prepass(r));
	replay_destroy(r);
}

/*
 * Which model replay takes when none is named: inferred where a recording has
 * lock windows and the kernel's policy is known (a 6.8+ release), else spread,
 * which is also the plain default; spread on a synthetic trace, whose visits
 * synth placed where spread does, though inferred would run there (break).
 */
TEST(default_model)
{
	struct replay_trace tr = trace4(false);
	const struct replay_model *m;
	size_t i;

	ASSERT(replay_model_default(NULL) == &replay_model_spread);
	ASSERT(replay_model_is_plain(replay_model_default(NULL)));
	ASSERT(replay_model_default(&tr) == &replay_model_spread);	/* no kernel release */
	ASSERT_STR(replay_model_unmet(&replay_model_inferred, &tr),
		   "needs a kernel release 6.8+ (the kernel's policy); using spread");
	tr.kernel_release = "6.15.2";
	ASSERT(replay_model_default(&tr) == &replay_model_inferred);
	tr.kernel_release = NULL;
	tr.source = "synth:seed-race";
	ASSERT(replay_model_default(&tr) == &replay_model_spread);
	ASSERT(!replay_model_unmet(&replay_model_inferred, &tr));
	tr.source = "capture";
	tr.kernel_release = "6.18.0";
	ASSERT(replay_model_default(&tr) == &replay_model_inferred);
	tr.kernel_release = NULL;
	tr.source = "synth:seed-race";
	tr.windows_traced = false;
	ASSERT(replay_model_default(&tr) == &replay_model_spread);
	ASSERT_STR(replay_model_unmet(&replay_model_inferred, &tr),
		   "needs rstat lock windows in the trace; using spread");
	for (i = 0; (m = replay_model_at(i)); i++)
		ASSERT(!replay_model_is_plain(m) || !replay_model_unmet(m, &tr));
}

/*
 * The inferred model prepares its own order: on a synthetic trace (its kernel
 * runs break) the engine runs the inference prepass over the source, rewinds
 * it, and the replay sees the order inferred_order_reproduces_kernel gives by
 * hand: one update placed (seq 1 on CPU 0, after L's visit), break reads the
 * kernel's 256, continue 320.  The break read is skipped but not stale: 448
 * pages pending since the root's last visit do not exceed the stranded limit
 * 256 + 63 x 4 = 508 (seed_race_reads above).  A source that cannot rewind cannot serve a
 * prepass: -EINVAL; spread runs none.
 */
TEST(inferred_model_prepares_order)
{
	static const char *const pols[] = { "break", "continue", NULL };
	struct replay_trace tr = trace4(false);
	struct arr_src a = { .ev = seed_race_plain, .n = N(seed_race_plain) };
	struct replay_source once = { .next = arr_next, .ctx = &a };
	struct replay_params p = { .model = &replay_model_inferred, .nr_runs = 1 };
	const struct replay_prepass *pp;
	struct rec rc = { 0 };
	struct replay *r = NULL;

	tr.source = "synth:seed-race";
	ASSERT_EQ(run(seed_race_plain, N(seed_race_plain), &tr, pols, &replay_model_inferred, false,
		      &rc, &r), 0);
	pp = replay_prepass(r);
	ASSERT(pp);
	ASSERT_STR(pp->policy->name, "break");
	ASSERT_EQU(pp->placed, 1);
	ASSERT_EQ(replay_stats(r)->win.inferred_updates, 1);
	ASSERT_EQ(rc.nr_reads[0], 2);
	ASSERT_EQ(rc.reads[0][1].sim_stats_updates, 256);
	ASSERT(!rc.reads[0][1].flushed && !rc.reads[0][1].stale);
	ASSERT_EQ(rc.reads[1][1].sim_stats_updates, 320);
	replay_destroy(r);

	p.runs[0] = replay_run_own(&tr, sim_policy_find("break"));
	ASSERT_EQ(replay_create(&p, &tr, &r), 0);
	ASSERT_EQ(replay_run(r, &once), -EINVAL);
	replay_destroy(r);

	memset(&rc, 0, sizeof(rc));
	ASSERT_EQ(run(seed_race_plain, N(seed_race_plain), &tr, pols, &replay_model_spread, false,
		      &rc, &r), 0);
	ASSERT(!replay_prepass(r));
	ASSERT_EQ(rc.reads[0][1].sim_stats_updates, 320);
	replay_destroy(r);
}

TEST(kernel_policy_and_models)
{
	const struct replay_model *m;

	ASSERT_STR(replay_policy_for_kernel("6.18.3-arch1")->name, "break");
	ASSERT_STR(replay_policy_for_kernel("6.16.0")->name, "break");
	ASSERT_STR(replay_policy_for_kernel("6.15.9")->name, "legacy");
	ASSERT_STR(replay_policy_for_kernel("6.8.0-45-generic")->name, "legacy");
	ASSERT(!replay_policy_for_kernel("6.6.1"));
	ASSERT(!replay_policy_for_kernel("synthetic"));
	ASSERT_EQ(replay_model_find("spread", &m), 0);
	ASSERT(m == &replay_model_spread);
	ASSERT_EQ(replay_model_find("nope", &m), -EINVAL);
}

/* replay_create()'s runs[] for run(): one policy at (batch, CPUs) each. */
static int run_grid(const struct mcr_event *ev, size_t n, struct replay_trace *t,
		    const struct replay_run *runs, unsigned int nr, struct replay_sink sink,
		    struct replay **out)
{
	struct arr_src a = { .ev = ev, .n = n };
	struct replay_source src = { .next = arr_next, .rewind = arr_rewind, .ctx = &a };
	struct replay_params p = { .model = &replay_model_instant, .sink = sink };
	int ret;

	memcpy(p.runs, runs, nr * sizeof(*runs));
	p.nr_runs = nr;
	ret = replay_create(&p, t, out);
	return ret ? ret : replay_run(*out, &src);
}

/*
 * The seed race (explicit visits, above) at three (batch, CPUs) points in one
 * pass; the read of R at t=3000 under break:
 *   b=64 cpus=4 (the trace's): R = 256 (above), TH 256: skipped; stranded
 *        limit 256 + 63 x 4 = 508, not stale (above).
 *   b=64 cpus=8: TH 512.  t=100 L 64, R 64; visit L at 1020: L 0; t=1030
 *        L 64, R 128; visit R at 1100: R 0; t=2000..2110 six batches of 64,
 *        L never > 512: L 64 + 6 x 64 = 448, R 6 x 64 = 384: skipped
 *        (384 <= 512); limit 512 + 63 x 8 = 1016: not stale.
 *   b=32 cpus=4: TH 128; every +64 reaches 32 and moves at once.  t=100
 *        L 64, R 64; visit L: L 0; t=1030 L 64, R 128; visit R: R 0;
 *        t=2000 L 128, R 64; t=2010 L 128 <= 128: L 192, R 128; t=2020 on:
 *        L 192 > 128, break stops: R stays 128, skipped (128 <= 128).  Limit
 *        128 + 31 x 4 = 252, and the four updates R missed since its visit
 *        alone are 4 x 64 = 256 more than that: stranded, a stale read.
 * Every run's sink index is its place in runs[].
 */
TEST(grid_runs_one_pass)
{
	struct replay_trace tr = trace4(true);
	const struct sim_policy *brk = sim_policy_find("break");
	struct replay_run runs[] = {
		replay_run_own(&tr, brk),
		{ .policy = brk, .batch = 64, .nr_online = 8 },
		{ .policy = brk, .batch = 32, .nr_online = 4 },
	};
	struct rec rc = { 0 };
	struct replay *r = NULL;
	unsigned int i;

	ASSERT(replay_run_is_own(&runs[0], &tr));
	ASSERT(!replay_run_is_own(&runs[1], &tr));
	ASSERT_EQ(run_grid(seed_race, N(seed_race), &tr, runs, 3,
			   (struct replay_sink){ .read = rec_read, .ctx = &rc }, &r), 0);
	for (i = 0; i < 3; i++) {
		ASSERT_EQU(rc.nr_reads[i], 2);
		ASSERT(!rc.reads[i][1].flushed);
		ASSERT_EQ(rc.reads[i][1].kernel_stats_updates, 256);
	}
	ASSERT_EQ(rc.reads[0][1].sim_stats_updates, 256);
	ASSERT(!rc.reads[0][1].stale);
	ASSERT_EQ(rc.reads[1][1].sim_stats_updates, 384);
	ASSERT(!rc.reads[1][1].stale);
	ASSERT_EQ(rc.reads[2][1].sim_stats_updates, 128);
	ASSERT(rc.reads[2][1].stranded && rc.reads[2][1].stale);
	ASSERT_EQU(sim_threshold(replay_sim(r, 1)), 512);
	ASSERT_EQU(sim_threshold(replay_sim(r, 2)), 128);
	replay_destroy(r);
}

/* Per run of a full grid: reads seen, the last one's decision. */
struct rec64 {
	unsigned int	reads[REPLAY_MAX_RUNS];
	bool		flushed[REPLAY_MAX_RUNS];
};

static int rec64_read(void *ctx, unsigned int pol, const struct replay_read *rd)
{
	struct rec64 *rc = ctx;

	if (pol >= REPLAY_MAX_RUNS)
		return -EINVAL;
	rc->reads[pol]++;
	rc->flushed[pol] = rd->flushed;
	return 0;
}

/*
 * REPLAY_MAX_RUNS runs, break and continue in turn at the trace's values:
 * the last run (index 63, the top bit of the engine's run sets) decides as
 * continue does (the read at t=3000 flushes, above), every even one as break.
 */
TEST(grid_full_and_refused)
{
	static struct replay_run runs[REPLAY_MAX_RUNS + 1];
	struct replay_trace tr = trace4(true);
	static struct rec64 rc;
	struct replay_params p = { .model = &replay_model_instant };
	struct replay *r = NULL;
	unsigned int i;

	for (i = 0; i <= REPLAY_MAX_RUNS; i++)
		runs[i] = replay_run_own(&tr, sim_policy_find(i % 2 ? "continue" : "break"));
	ASSERT_EQ(run_grid(seed_race, N(seed_race), &tr, runs, REPLAY_MAX_RUNS,
			   (struct replay_sink){ .read = rec64_read, .ctx = &rc }, &r), 0);
	replay_destroy(r);
	for (i = 0; i < REPLAY_MAX_RUNS; i++) {
		ASSERT_EQU(rc.reads[i], 2);
		ASSERT_EQ(rc.flushed[i], i % 2 == 1);
	}

	memcpy(p.runs, runs, sizeof(p.runs));
	p.nr_runs = REPLAY_MAX_RUNS + 1;
	ASSERT_EQ(replay_create(&p, &tr, &r), -EINVAL);
	p.nr_runs = 1;
	p.runs[0].batch = 0;
	ASSERT_EQ(replay_create(&p, &tr, &r), -EINVAL);
	p.runs[0].batch = REPLAY_MAX_BATCH + 1;
	ASSERT_EQ(replay_create(&p, &tr, &r), -EINVAL);
	p.runs[0].batch = 64;
	p.runs[0].nr_online = REPLAY_MAX_CPUS + 1;
	ASSERT_EQ(replay_create(&p, &tr, &r), -EINVAL);
	/* validation compares the kernel's values with its own machine only */
	p.runs[0].nr_online = 8;
	p.validate = true;
	ASSERT_EQ(replay_create(&p, &tr, &r), -EINVAL);
	p.runs[0].nr_online = 4;
	ASSERT_EQ(replay_create(&p, &tr, &r), 0);
	replay_destroy(r);
}

/*
 * A reader gets memory.stat only once its flush made every visit: under the
 * inferred model the last CPU's window stays open past its unlock (an update
 * traced after it may belong before its visits), and the read waits for it.
 * seed_race_plain, then (break, in the order inference finds, as above):
 *   t=4000 L +64 cpu3: L (320 > 256) is flushable, break stops at once;
 *          the 64 sit unflushed on CPU 3, L on CPU 3's tree.
 *   t=5000 read of L: the kernel flushed it (stats_updates 320, needs_flush).
 *          L shows 64 (t=100, moved up by L's visit at 1010 on CPU 0); truth
 *          9 x 64 = 576; unflushed: CPU 0 64 (t=1030, after L's visit), CPU 1
 *          6 x 64 = 384 (t=2000..2110), CPU 3 64.
 *          Windows 0..3 visit L on each CPU: CPU 3's visit comes at the first
 *          event after its unlock (t=6000, which the order does not put
 *          inside), then the reader reads: error 64 + 512 - 576 = 0.  Valued
 *          at the unlock, before that visit, it would be -64.
 *   t=6000 R +1 cpu2: closes CPU 3's window.
 * continue flushed everything at t=3000 (R at 320 > 256; the kernel did not,
 * so at once): at 5000 L's atomic is 64, not flushable: skipped, the reader
 * sees the error as it stands, -64 (CPU 3's update).
 */
static const struct mcr_event read_after_last_window[] = {
	SEED_RACE_PLAIN,
	UPD(4000, 3, L, 64),
	FLUSH(5000, L, 320, MCR_FLUSH_NEEDS),
	LOCK(5010, L, 0), UNLOCK(5011, L, 0), REST_OF_WINDOWS(5020, L),
	UPD(6000, 2, R, 1),
};

TEST(read_waits_for_last_window)
{
	static const char *const pols[] = { "break", "continue", NULL };
	struct replay_trace tr = trace4(false);
	struct rec rc = { 0 };
	struct replay *r = NULL;

	tr.source = "synth:seed-race";
	ASSERT_EQ(run(read_after_last_window, N(read_after_last_window), &tr, pols,
		      &replay_model_inferred, false, &rc, &r), 0);
	ASSERT_EQ(replay_stats(r)->win.inferred_updates, 1);
	ASSERT_EQ(rc.nr_reads[0], 3);
	ASSERT_EQ(rc.reads[0][2].sim_stats_updates, 320);
	ASSERT(rc.reads[0][2].flushed);
	ASSERT_EQ(rc.err0[0][2], 0);
	ASSERT_EQ(rc.reads[0][2].nr_errors, 0);
	ASSERT(!rc.reads[1][2].flushed);
	ASSERT_EQ(rc.err0[1][2], -64);
	replay_destroy(r);
}

TEST_MAIN(seed_race_explicit_visits, flush_models_place_visits, lock_only_release_flush,
	  policy_flushes_where_kernel_did_not, validate_seed_race, bad_cpu_stops,
	  kernel_policy_and_models, inferred_order_reproduces_kernel, validate_names_unknown_parent,
	  model_table, model_outside_table, default_model, inferred_model_prepares_order,
	  grid_runs_one_pass, grid_full_and_refused, read_waits_for_last_window)
