// SPDX-License-Identifier: GPL-2.0
/*
 * test_replay.c - the replay engine on hand-built event arrays (no
 * database): the seed race with explicit visits and as inference finds it,
 * flush models that disagree, a lock-only release flush, a policy flushing
 * where the kernel did not, validation, a CPU out of range.
 */
#include "replay_fixture.h"

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

/*
 * The seed race (SEED_RACE_PLAIN) with its update at 1030 traced late: at
 * 1115, after CPU 0's window unlocked at 1110 and CPU 1's locked at 1112,
 * nothing on CPU 0 since 100.  A forced root flush at 50 syncs first, so
 * that the flush at 1000 and the read at 3000 are both compared.
 *   t=100  L +64 cpu0: L = R = 64; the flush at 1000 reads R = 64: a match.
 *   Made inside CPU 0's window after L's visit, before R's (the kernel's
 *   order), the update leaves L 64 and R wiped; CPU 1's six L +64 then take
 *   R to 256 = TH and the walk stops at flushable L: R = 256 at 3000.
 *   Made after the window, it leaves L = R = 64 and R reaches 320.
 * CPU 1's window visits nothing on L's path (CPU 1's tree is empty), so
 * inference keeps CPU 0's window open past its lock for the late update and
 * finds the kernel's 256.  With a read of L traced at 1113 (L = 0 after the
 * window's visits: not flushable, skipped, a match) CPU 0's window closes
 * first: the update comes after it, R = 320 against 256, and validate names
 * the late update as the cause.
 */
#define LATE_HEAD \
	FLUSH(50, R, 0, MCR_FLUSH_FORCE), LOCK(60, R, 0), UNLOCK(61, R, 0), \
	REST_OF_WINDOWS(62, R), \
	UPD(100, 0, L, 64), \
	FLUSH(1000, R, 64, MCR_FLUSH_FORCE), \
	LOCK(1010, R, 0), UNLOCK(1110, R, 0), LOCK(1112, R, 1)
#define LATE_TAIL \
	UPD(1115, 0, L, 64), UNLOCK(1116, R, 1), \
	LOCK(1202, R, 2), UNLOCK(1203, R, 2), LOCK(1204, R, 3), UNLOCK(1205, R, 3), \
	UPD(2000, 1, L, 64), UPD(2010, 1, L, 64), UPD(2020, 1, L, 64), UPD(2030, 1, L, 64), \
	UPD(2100, 1, L, 64), UPD(2110, 1, L, 64), \
	FLUSH(3000, R, 256, 0)

TEST(validate_late_update_past_next_lock)
{
	static const struct mcr_event held[] = { LATE_HEAD, LATE_TAIL };
	static const struct mcr_event closed[] = { LATE_HEAD, FLUSH(1113, L, 0, 0), LATE_TAIL };
	static const char *const brk[] = { "break", NULL };
	struct replay_trace tr = trace4(false);
	const struct replay_validation *v;
	struct rec rc = { 0 };
	struct replay *r = NULL;

	ASSERT_EQ(run(held, N(held), &tr, brk, &replay_model_spread, true, &rc, &r), 0);
	v = replay_validation(r);
	ASSERT_EQ(v->compared, 2);
	ASSERT_EQ(v->stats_updates_match, 2);
	ASSERT_EQ(v->mismatches, 0);
	replay_destroy(r);

	memset(&rc, 0, sizeof(rc));
	ASSERT_EQ(run(closed, N(closed), &tr, brk, &replay_model_spread, true, &rc, &r), 0);
	v = replay_validation(r);
	ASSERT_EQ(v->compared, 3);
	ASSERT_EQ(v->stats_updates_match, 2);
	ASSERT_EQ(v->mismatches, 1);
	ASSERT_EQ(rc.nr_mm, 1);
	ASSERT_EQ(rc.mm[0].kernel_stats_updates, 256);
	ASSERT_EQ(rc.mm[0].sim_stats_updates, 320);
	ASSERT_EQ(v->causes[REPLAY_CAUSE_LATE], 1);
	replay_destroy(r);
}

/*
 * More credit than the trace holds (val_untraced()).  After the sync (the
 * forced root flush requested at 1000 and its windows), one update, L +64
 * on CPU 0 at 2000: it moves a batch into L and R, so the simulation reads
 * R = 64 at 3000.  Since the request, no order of the traced updates gives
 * R more than the |val| of those in its subtree, 64, plus one update per
 * CPU in flight at the read, counted at the largest |val| that CPU traced:
 * CPU 0's 64, the others' none: 128.  A kernel reading 129 is named "more
 * than the traced updates can add"; one reading 128, a mismatch all the
 * same, is not (no cause named).
 */
#define CREDIT_HEAD \
	FLUSH(1000, R, 0, MCR_FLUSH_FORCE), LOCK(1010, R, 0), UNLOCK(1020, R, 0), \
	REST_OF_WINDOWS(1030, R), \
	UPD(2000, 0, L, 64)

TEST(validate_names_untraced_credit)
{
	static const struct mcr_event over[] = { CREDIT_HEAD, FLUSH(3000, R, 129, 0) };
	static const struct mcr_event at[] = { CREDIT_HEAD, FLUSH(3000, R, 128, 0) };
	static const char *const brk[] = { "break", NULL };
	struct replay_trace tr = trace4(false);
	const struct replay_validation *v;
	struct rec rc = { 0 };
	struct replay *r = NULL;

	ASSERT_EQ(run(over, N(over), &tr, brk, &replay_model_spread, true, &rc, &r), 0);
	v = replay_validation(r);
	ASSERT_EQ(v->compared, 1);
	ASSERT_EQ(v->mismatches, 1);
	ASSERT_EQ(rc.mm[0].sim_stats_updates, 64);
	ASSERT_EQ(v->causes[REPLAY_CAUSE_UNTRACED], 1);
	ASSERT_STR(rc.mm[0].cause, "more than the traced updates can add");
	replay_destroy(r);

	memset(&rc, 0, sizeof(rc));
	ASSERT_EQ(run(at, N(at), &tr, brk, &replay_model_spread, true, &rc, &r), 0);
	v = replay_validation(r);
	ASSERT_EQ(v->mismatches, 1);
	ASSERT_EQ(v->causes[REPLAY_CAUSE_UNTRACED], 0);
	ASSERT_EQ(v->causes[REPLAY_CAUSE_NONE], 1);
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

/* The root's series rows of item 0, per run (series_sink()). */
struct ser_rec {
	struct replay_sample	s[3][4];
	unsigned int		n[3];
};

static int series_sink(void *ctx, unsigned int pol, const struct replay_sample *sm)
{
	struct ser_rec *sr = ctx;

	if (sm->id == R && sm->kind == SIM_ITEM_STATE && sm->item == 0 && sr->n[pol] < 4)
		sr->s[pol][sr->n[pol]++] = *sm;
	return 0;
}

/*
 * A series' minimum and maximum between samples hold every update's visible
 * error: the first one a run sees of a series cgroup (series_show()) and
 * those its simulator keeps (sim_watch()).  Series of R every 1000 ns from
 * the first event (100); L's updates on CPU 0, nothing flushable (per-CPU
 * |val| sums 40, 60, then 90 >= 64 moves 90 to the atomics, then 45, 46;
 * TH = 256), so R's visible error is minus what is missing there: -40, -20,
 * -50, -5, -6.
 *   t=100  +40 -> -40; t=200 -20 -> -20
 *   sample at 1100, before the update there: error -20, min -40 (the first
 *     look), max 0 (the line's value before it existed)
 *   t=1100 +30 -> -50; t=1200 -45 -> -5
 *   sample at 2100: error -5, min -50, max -5 (the simulator's range: the
 *     interval starts from the last sample's -20)
 *   t=2100 +1 -> -6, the last event: its sample, 2100, was taken before it.
 * The same under every policy (nothing is flushable), on one thread and
 * with the runs on threads of their own.
 */
TEST(series_min_max_from_updates)
{
	static const char *const pols[] = { "break", "continue", "legacy" };
	static const struct mcr_event ev[] = {
		UPD(100, 0, L, 40), UPD(200, 0, L, -20), UPD(1100, 0, L, 30), UPD(1200, 0, L, -45),
		UPD(2100, 0, L, 1),
	};
	static const uint64_t ids[] = { R };
	struct replay_trace tr = trace4(false);
	unsigned int threads, p, k;

	for (threads = 1; threads <= 3; threads += 2) {
		struct ser_rec sr = { 0 };
		struct arr_src a = { .ev = ev, .n = N(ev) };
		struct replay_source src = { .next = arr_next, .rewind = arr_rewind, .ctx = &a };
		struct replay_params prm = {
			.model = &replay_model_window, .sample_ns = 1000, .series_ids = ids,
			.nr_series_ids = 1, .threads = threads,
			.sink = { .sample = series_sink, .ctx = &sr },
		};
		struct replay *r = NULL;

		for (p = 0; p < 3; p++)
			prm.runs[prm.nr_runs++] = replay_run_own(&tr, sim_policy_find(pols[p]));
		ASSERT_EQ(replay_create(&prm, &tr, &r), 0);
		ASSERT_EQ(replay_run(r, &src), 0);
		replay_destroy(r);
		for (p = 0; p < 3; p++) {
			/* sample 0 (100, before the line), 1100, 2100 */
			ASSERT_EQ(sr.n[p], 3);
			for (k = 0; k < 3; k++)
				ASSERT_EQ(sr.s[p][k].ts, 100 + 1000 * k);
			ASSERT(sr.s[p][0].error == 0 && sr.s[p][0].min_error == 0 &&
			       sr.s[p][0].max_error == 0);
			ASSERT_EQ(sr.s[p][1].error, -20);
			ASSERT_EQ(sr.s[p][1].min_error, -40);
			ASSERT_EQ(sr.s[p][1].max_error, 0);
			ASSERT_EQ(sr.s[p][2].error, -5);
			ASSERT_EQ(sr.s[p][2].min_error, -50);
			ASSERT_EQ(sr.s[p][2].max_error, -5);
		}
	}
}

TEST_MAIN(seed_race_explicit_visits, flush_models_place_visits, lock_only_release_flush,
	  policy_flushes_where_kernel_did_not, validate_seed_race, bad_cpu_stops,
	  inferred_order_reproduces_kernel, validate_names_unknown_parent,
	  validate_late_update_past_next_lock, validate_names_untraced_credit,
	  series_min_max_from_updates)
