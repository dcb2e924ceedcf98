// SPDX-License-Identifier: GPL-2.0
/*
 * test_synth.c - the synthetic trace generator: determinism for a seed, the
 * shape of what it emits (replay order, per-CPU windows), the database round
 * trip, and the seed-race timeline checked by hand (capture/synth_race.c)
 * against fresh simulators fed from the emitted events.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../harness.h"
#include "db.h"
#include "error.h"
#include "sim.h"
#include "sim_new.h"
#include "synth.h"

#define LEAF	100ull	/* seed-race and pagecache: the leaf's id */

/* FNV-1a over the fields, as a test-side witness of the stream. */
static uint64_t hash_ev(uint64_t h, const struct mcr_event *ev)
{
	const uint64_t w[] = {
		ev->ts, ev->seq, ev->id, (uint64_t)ev->val, (uint64_t)(uint32_t)ev->cpu,
		(uint64_t)(uint32_t)ev->item, (uint64_t)(uint32_t)ev->aux, (uint64_t)(uint32_t)ev->pid,
		(uint64_t)(uint16_t)ev->level, ev->kind, ev->flags,
	};
	size_t i;

	for (i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		h = (h ^ w[i]) * 0x100000001b3ull;
	return h;
}

struct shape {
	uint64_t	hash;
	uint64_t	n;
	uint64_t	last_ts;
	int		last_cpu;
	uint64_t	next_seq[64];
	int		bad;		/* first broken rule, 0 none */
	uint64_t	bad_at;
	/* flushes that went ahead, FIFO (they wait for the rstat lock), and their windows */
	int		fl_pid[256];
	int		fl_cpu[256];
	unsigned int	fl_head;
	unsigned int	fl_tail;
	int		fl_next_win;	/* next locked() must name this CPU */
	bool		fl_open;
	uint64_t	windows;
};

#define NR_CPUS	4	/* every scenario below runs on 4 CPUs */

/* Replay order, per-CPU seq, and css_rstat_flush()'s window shape. */
static int shape_tap(void *ctx, const struct mcr_event *ev)
{
	struct shape *s = ctx;
	int bad = 0;

	s->hash = hash_ev(s->hash, ev);
	if (s->n && (ev->ts < s->last_ts || (ev->ts == s->last_ts && ev->cpu < s->last_cpu)))
		bad = 1;			/* not merged by (ts, cpu) */
	else if (ev->cpu < 0 || ev->cpu >= 64 || ev->seq != s->next_seq[ev->cpu])
		bad = 2;			/* per-CPU seq not 0, 1, 2, ... */
	else if (ev->kind == MCR_EV_FLUSH && (ev->flags & (MCR_FLUSH_FORCE | MCR_FLUSH_NEEDS))) {
		s->fl_pid[s->fl_tail % 256] = ev->pid;
		s->fl_cpu[s->fl_tail++ % 256] = ev->cpu;
	} else if (ev->kind == MCR_EV_LOCKED) {
		if (s->fl_open || s->fl_head == s->fl_tail || ev->item != s->fl_next_win ||
		    ev->pid != s->fl_pid[s->fl_head % 256] || ev->cpu != s->fl_cpu[s->fl_head % 256] ||
		    ev->aux != 4)
			bad = 3;		/* windows: one CPU after another, by the requester */
		s->fl_open = true;
	} else if (ev->kind == MCR_EV_UNLOCK) {
		if (!s->fl_open || ev->item != s->fl_next_win)
			bad = 4;
		s->fl_open = false;
		s->fl_next_win = (s->fl_next_win + 1) % NR_CPUS;
		if (!s->fl_next_win)
			s->fl_head++;
		s->windows++;
	}
	if (ev->cpu >= 0 && ev->cpu < 64)
		s->next_seq[ev->cpu] = ev->seq + 1;
	s->last_ts = ev->ts;
	s->last_cpu = ev->cpu;
	s->n++;
	if (bad && !s->bad) {
		s->bad = bad;
		s->bad_at = s->n;
	}
	return 0;
}

static int run_dry(const char *scenario, uint64_t seed, const char *const *opts,
		   struct shape *sh, struct synth_stats *st)
{
	struct synth_out out = { .event = shape_tap, .ctx = sh };
	struct synth_args a;
	int err;

	memset(sh, 0, sizeof(*sh));
	sh->hash = 0xcbf29ce484222325ull;
	synth_args_init(&a, synth_scenario_find(scenario), seed);
	for (; opts && *opts; opts += 2) {
		err = synth_args_set(&a, opts[0], opts[1]);
		if (err)
			return err;
	}
	return synth_run(&a, &out, st);
}

static const char *const pc_short[] = { "duration", "0.3", "reader-ms", "20", "period-ms", "100", NULL };
static const char *const fleet_small[] = { "cgroups", "200", "events", "50000", "reader-ms", "2",
					   "period-ms", "20", "cpus", "4", NULL };

TEST(test_synth_table)
{
	const struct synth_scenario *sc;
	struct synth_args a;

	ASSERT(synth_scenario_find("seed-race"));
	ASSERT(synth_scenario_find("pagecache"));
	ASSERT(synth_scenario_find("fleet"));
	ASSERT(!synth_scenario_find("nope"));
	ASSERT(synth_scenario_at(0) && !synth_scenario_at(3));
	sc = synth_scenario_find("pagecache");
	synth_args_init(&a, sc, 7);
	ASSERT_EQ(synth_args_set(&a, "rate-mib", "512"), 0);
	ASSERT_EQ(synth_args_set(&a, "cgroups", "5"), -ENOENT);	/* fleet's, not pagecache's */
	ASSERT_EQ(synth_args_set(&a, "rate-mib", "fast"), -EINVAL);
	ASSERT_EQ(synth_args_set(&a, "rate-mib", "0"), -EINVAL);	/* below the minimum */
	ASSERT_EQ(synth_args_set(&a, "folio-pages", "1.5"), -EINVAL);	/* integer */
	ASSERT_EQ(synth_args_set(&a, "duration", "nan"), -EINVAL);
}

TEST(test_synth_deterministic)
{
	static const char *const scen[] = { "seed-race", "pagecache", "fleet" };
	const char *const *opts[] = { NULL, pc_short, fleet_small };
	struct synth_stats st1, st2;
	struct shape a, b;
	size_t i;

	for (i = 0; i < 3; i++) {
		ASSERT_EQ(run_dry(scen[i], 42, opts[i], &a, &st1), 0);
		ASSERT_EQ(run_dry(scen[i], 42, opts[i], &b, &st2), 0);
		ASSERT(a.n > 0);
		ASSERT_EQU(a.n, b.n);
		ASSERT_EQU(a.hash, b.hash);
		ASSERT_EQU(st1.hash, st2.hash);
		ASSERT_EQU(st1.events, a.n);
	}
	/* a different seed changes the random scenarios (seed-race has no randomness) */
	for (i = 1; i < 3; i++) {
		ASSERT_EQ(run_dry(scen[i], 42, opts[i], &a, &st1), 0);
		ASSERT_EQ(run_dry(scen[i], 43, opts[i], &b, &st2), 0);
		ASSERT(a.hash != b.hash);
		ASSERT(st1.hash != st2.hash);
	}
}

TEST(test_synth_shape)
{
	static const char *const scen[] = { "seed-race", "pagecache", "fleet" };
	const char *const *opts[] = { NULL, pc_short, fleet_small };
	struct synth_stats st;
	struct shape sh;
	size_t i;

	for (i = 0; i < 3; i++) {
		ASSERT_EQ(run_dry(scen[i], 1, opts[i], &sh, &st), 0);
		if (sh.bad)
			FAILF("%s: rule %d broken at event %llu", scen[i], sh.bad,
			      (unsigned long long)sh.bad_at);
		/* every flush that went ahead: one locked/unlock pair per possible CPU */
		ASSERT_EQU(st.by_kind[MCR_EV_LOCKED], st.flushes * st.nr_cpus);
		ASSERT_EQU(st.by_kind[MCR_EV_UNLOCK], st.flushes * st.nr_cpus);
		ASSERT_EQU(st.by_kind[MCR_EV_FLUSH], st.flush_requests);
		ASSERT(i == 0 || st.by_kind[MCR_EV_VISIT] == 0);	/* only seed-race */
		ASSERT(!sh.fl_open && sh.fl_head == sh.fl_tail);
	}
	/* fleet stops at --events, finishing the flush it is in */
	ASSERT(st.events >= 50000 && st.events < 50000 + 2 * 4 + 1);
}

TEST(test_synth_pagecache_defaults_meta)
{
	struct synth_args a;

	synth_args_init(&a, synth_scenario_find("pagecache"), 1);
	/* the defaults */
	ASSERT(a.val[0] == 1024 && a.val[1] == 1 && a.val[2] == 4 && a.val[3] == 10);
	ASSERT(a.val[4] == 100 && a.val[5] == 2000);
}

static char tmp_dir[256];

static void tmp_path(char *buf, size_t n, const char *name)
{
	if (!tmp_dir[0]) {
		const char *base = getenv("TMPDIR");

		snprintf(tmp_dir, sizeof(tmp_dir), "%s/test_synth.XXXXXX", base ? base : "/tmp");
		if (!mkdtemp(tmp_dir))
			tmp_dir[0] = 0;
	}
	snprintf(buf, n, "%s/%s", tmp_dir, name);
}

/* What the generator wrote is what a reader gets back, in the same order. */
TEST(test_synth_db_round_trip)
{
	struct synth_args a;
	struct synth_stats st;
	struct shape sh = { .hash = 0xcbf29ce484222325ull };
	struct synth_out out = { .event = shape_tap, .ctx = &sh };
	struct db *db;
	struct db_iter *it;
	struct mcr_event ev;
	uint64_t h = 0xcbf29ce484222325ull, n = 0;
	char path[512], *src = NULL;
	int64_t v;
	int r;

	tmp_path(path, sizeof(path), "rt.db");
	ASSERT_EQ(db_create(path, &db), 0);
	out.db = db;
	synth_args_init(&a, synth_scenario_find("pagecache"), 5);
	ASSERT_EQ(synth_args_set(&a, "duration", "0.2"), 0);
	ASSERT_EQ(synth_run(&a, &out, &st), 0);
	ASSERT_EQ(db_close(db), 0);

	ASSERT_EQ(db_open(path, false, &db), 0);
	ASSERT_EQ(db_meta_get(db, "source", &src), 0);
	ASSERT_STR(src, "synth:pagecache");
	free(src);
	ASSERT_EQ(db_meta_get_int(db, "nr_cpus_possible", &v), 0);
	ASSERT_EQ(v, 4);
	ASSERT_EQ(db_meta_get_int(db, "batch_size", &v), 0);
	ASSERT_EQ(v, 64);
	ASSERT_EQ(db_meta_get_int(db, "capture_start_ns", &v), 0);
	ASSERT_EQU(v, st.first_ts);
	ASSERT_EQ(db_iter_open(db, &it), 0);
	while ((r = db_iter_next(it, &ev)) > 0) {
		h = hash_ev(h, &ev);
		n++;
	}
	db_iter_close(it);
	db_close(db);
	unlink(path);
	rmdir(tmp_dir);
	ASSERT_EQ(r, 0);
	ASSERT_EQU(n, st.events);
	ASSERT_EQU(h, sh.hash);
}

/*
 * A minimal replay of the seed-race trace into a BREAK and a CONTINUE
 * simulator, checking the counters of the timeline in capture/synth_race.c.
 * CONTINUE flushes that the BREAK kernel did not make have no windows in the
 * trace: they happen at the request (sim_flush).
 */
struct race {
	struct sim	*brk;
	struct sim	*cont;
	int		fails;
	char		why[160];
	int		reads;
	int64_t		traced[8];
	int		traced_flags[8];
	uint64_t	brk_missing_at_read[8];
	uint64_t	cont_missing_at_read[8];
	int		cont_flushed[8];
};

#define RACE_EXPECT(r, cond) do {							\
	if (!(cond) && !(r)->fails++)							\
		snprintf((r)->why, sizeof((r)->why), "ts %llu: %s",			\
			 (unsigned long long)ev->ts, #cond);				\
} while (0)

static void race_check(struct race *r, const struct mcr_event *ev)
{
	switch (ev->ts) {
	case 2027666:	/* window 2 visited root: the +64 at 2025 us stays credited to leaf only */
		RACE_EXPECT(r, sim_stats_updates(r->brk, LEAF) == 64);
		RACE_EXPECT(r, sim_stats_updates(r->brk, SIM_ROOT_ID) == 0);
		break;
	case 3300000:	/* fifth batch: leaf 320, root 256 under both */
		RACE_EXPECT(r, sim_stats_updates(r->brk, LEAF) == 320);
		RACE_EXPECT(r, sim_stats_updates(r->brk, SIM_ROOT_ID) == 256);
		RACE_EXPECT(r, sim_stats_updates(r->cont, SIM_ROOT_ID) == 256);
		RACE_EXPECT(r, sim_needs_flush(r->brk, LEAF) && !sim_needs_flush(r->brk, SIM_ROOT_ID));
		break;
	case 3400000:	/* break stops at leaf; continue skips it and credits root */
		RACE_EXPECT(r, sim_stats_updates(r->brk, SIM_ROOT_ID) == 256);
		RACE_EXPECT(r, sim_stats_updates(r->cont, SIM_ROOT_ID) == 320);
		RACE_EXPECT(r, sim_needs_flush(r->cont, SIM_ROOT_ID));
		break;
	}
}

static int race_tap(void *ctx, const struct mcr_event *ev)
{
	struct race *r = ctx;
	struct sim_stale sb, sc;
	int got;

	switch (ev->kind) {
	case MCR_EV_LRUVEC:
		sim_update(r->brk, ev->ts, (unsigned int)ev->cpu, ev->id, SIM_ITEM_LRUVEC, ev->item, ev->val);
		sim_update(r->cont, ev->ts, (unsigned int)ev->cpu, ev->id, SIM_ITEM_LRUVEC, ev->item, ev->val);
		break;
	case MCR_EV_FLUSH:
		/* the ground truth is BREAK: it must reproduce what was traced exactly */
		RACE_EXPECT(r, sim_stats_updates(r->brk, ev->id) == ev->val);
		RACE_EXPECT(r, sim_needs_flush(r->brk, ev->id) == !!(ev->flags & MCR_FLUSH_NEEDS));
		sim_stale_get(r->brk, ev->id, &sb);
		sim_stale_get(r->cont, ev->id, &sc);
		if (r->reads < 8) {
			r->traced[r->reads] = ev->val;
			r->traced_flags[r->reads] = ev->flags;
			r->brk_missing_at_read[r->reads] = sb.missing;
			r->cont_missing_at_read[r->reads] = sc.missing;
		}
		sim_flush_request(r->brk, ev->ts, ev->id, ev->flags & MCR_FLUSH_FORCE);
		got = sim_flush_request(r->cont, ev->ts, ev->id, ev->flags & MCR_FLUSH_FORCE);
		if (r->reads < 8)
			r->cont_flushed[r->reads] = got;
		if (got == 1 && !(ev->flags & (MCR_FLUSH_FORCE | MCR_FLUSH_NEEDS)))
			sim_flush(r->cont, ev->ts, ev->id);
		r->reads++;
		break;
	case MCR_EV_LOCKED:
		sim_window_begin(r->brk, ev->ts, ev->id, (unsigned int)ev->item);
		sim_window_begin(r->cont, ev->ts, ev->id, (unsigned int)ev->item);
		break;
	case MCR_EV_VISIT:
		RACE_EXPECT(r, sim_window_visit(r->brk, ev->ts, ev->id) == 0);
		sim_window_visit(r->cont, ev->ts, ev->id);	/* may be gone after its own flush */
		break;
	case MCR_EV_UNLOCK:
		RACE_EXPECT(r, sim_window_remaining(r->brk) == 0);	/* every visit was explicit */
		sim_window_end(r->brk, ev->ts);
		sim_window_end(r->cont, ev->ts);
		break;
	}
	race_check(r, ev);
	return 0;
}

TEST(test_synth_seed_race_timeline)
{
	struct race r = {
		.brk = sim_new(sim_policy_find("break"), 4, 4),
		.cont = sim_new(sim_policy_find("continue"), 4, 4),
	};
	struct synth_out out = { .event = race_tap, .ctx = &r };
	struct synth_args a;
	struct synth_stats st;
	struct sim_stale sb;

	ASSERT(r.brk && r.cont);
	sim_cgroup_add(r.brk, 0, LEAF, SIM_ROOT_ID);
	sim_cgroup_add(r.cont, 0, LEAF, SIM_ROOT_ID);
	synth_args_init(&a, synth_scenario_find("seed-race"), 1);
	ASSERT_EQ(synth_run(&a, &out, &st), 0);
	if (r.fails)
		FAILF("%s", r.why);
	ASSERT_EQ(r.reads, 4);
	/* by hand: forced 0; reads 256, 256 not flushable; forced 256 */
	ASSERT(r.traced[0] == 0 && r.traced_flags[0] == MCR_FLUSH_FORCE);
	ASSERT(r.traced[1] == 256 && r.traced_flags[1] == 0);
	ASSERT(r.traced[2] == 256 && r.traced_flags[2] == 0);
	ASSERT(r.traced[3] == 256 && r.traced_flags[3] == MCR_FLUSH_FORCE);
	/* missing pages at the reads: break 384 then 512 (stale: > 256); continue flushes at 4 ms */
	ASSERT_EQU(r.brk_missing_at_read[1], 384);
	ASSERT_EQU(r.brk_missing_at_read[2], 512);
	ASSERT_EQ(r.cont_flushed[1], 1);
	ASSERT_EQU(r.cont_missing_at_read[1], 384);
	ASSERT_EQU(r.cont_missing_at_read[2], 128);
	ASSERT_EQ(r.cont_flushed[2], 0);
	/* the final forced flush leaves nothing behind */
	ASSERT_EQ(sim_stale_get(r.brk, SIM_ROOT_ID, &sb), 0);
	ASSERT_EQU(sb.missing, 0);
	ASSERT_EQ(sim_stats_updates(r.brk, LEAF), 0);
	/* the generator's own ground truth saw the root stuck from the fifth batch (3.3 ms) */
	ASSERT_EQU(st.first_stuck_ts, 3300000);
	ASSERT_EQU(st.by_kind[MCR_EV_VISIT], 6);	/* leaf, root at 2 ms; 2 x (leaf, root) at 7 ms */
	sim_destroy(r.brk);
	sim_destroy(r.cont);
}

TEST_MAIN(test_synth_table, test_synth_deterministic, test_synth_shape,
	  test_synth_pagecache_defaults_meta, test_synth_db_round_trip, test_synth_seed_race_timeline)
