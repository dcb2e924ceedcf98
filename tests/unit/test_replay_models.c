// SPDX-License-Identifier: GPL-2.0
/*
 * test_replay_models.c - the replay engine's flush models and run grid on
 * hand-built event arrays: the model table and a model from outside it,
 * the default and inferred models, the kernel policy beside the models,
 * grids of runs in one pass (full and refused), and a read after the last
 * window.
 */
#include "replay_fixture.h"

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
		/* an update's visits: the pass's half and each run's, both or neither */
		ASSERT(!m->before_update == !m->before_update_run);
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

TEST_MAIN(kernel_policy_and_models, model_table, model_outside_table, default_model,
	  inferred_model_prepares_order, grid_runs_one_pass, grid_full_and_refused,
	  read_waits_for_last_window)
