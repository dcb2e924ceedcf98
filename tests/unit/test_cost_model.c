// SPDX-License-Identifier: GPL-2.0
/*
 * test_cost_model.c - the cost model (sim/cost_model.c) with numbers derived
 * by hand, the calibration file round trip (replay/cost_file.c), the share of
 * walk visits another CPU reached just before (replay/cost_share.c) on a
 * trace built here, and the calibration itself for structure only: every
 * figure positive and ordered within its spread, never a timing value.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../harness.h"
#include "calib.h"
#include "cost.h"
#include "cost_model.h"
#include "db.h"
#include "error.h"

/* Costs chosen so that every product below is exact in binary floating point. */
static struct sim_cost_table table(void)
{
	struct sim_cost_table t = { 0 };

	t.op[SIM_COST_PLAIN_ADD].ns = 0.25;
	t.op[SIM_COST_PCPU_ADD].ns = 1;
	t.op[SIM_COST_ATOMIC_ADD].ns = 10;
	t.op[SIM_COST_ATOMIC_CONTENDED].ns = 50;
	t.op[SIM_COST_FLUSHABLE_CHECK].ns = 0.5;
	t.op[SIM_COST_WALK_STEP].ns = 2;
	t.op[SIM_COST_WALK_STEP_COLD].ns = 100;
	return t;
}

static int near(double a, double b)
{
	return fabs(a - b) <= 1e-9 * (fabs(b) > 1 ? fabs(b) : 1);
}

/*
 * break on the seed race's counts (tests/cli/test_report.sh: 9 updates, 15
 * walk steps, 12 per-CPU adds, 10 atomic adds), a quarter of them shared,
 * over 6000 ns:
 *   checks    = walk_steps = 15 (the test comes first at every memcg)
 *   atomic_ns = 0.25 x 50 + 0.75 x 10 = 20
 *   ns        = 15 x 2 + 12 x 1 + 15 x 0.5 + 10 x 20 = 30 + 12 + 7.5 + 200 = 249.5
 *   ns/update = 249.5 / 9 = 27.7222...
 *   ns_max    = 15 x 100 + 12 + 7.5 + 10 x 50 = 2019.5, / 9 = 224.3888...
 *   CPU s/s   = 249.5 / 6000 = 0.0415833...
 */
TEST(test_estimate_break)
{
	struct sim_cost_table tb = table();
	struct sim_cost_counts c = {
		.updates = 9, .walk_steps = 15, .pcpu_adds = 12, .atomic_adds = 10,
		.trace_ns = 6000, .shared = 0.25, .legacy = sim_cost_policy_legacy("break"),
	};
	struct sim_cost_estimate e;

	ASSERT_EQ(sim_cost_estimate(&c, &tb, &e), 0);
	ASSERT_EQU(e.checks, 15);
	ASSERT(near(e.atomic_ns, 20));
	ASSERT(near(e.ns, 249.5));
	ASSERT(near(e.ns_per_update, 249.5 / 9));
	ASSERT(near(e.ns_max, 2019.5));
	ASSERT(near(e.ns_per_update_max, 2019.5 / 9));
	ASSERT(near(e.cpu_s_per_s, 249.5 / 6000));
}

/*
 * legacy (seed race: 18 steps, 18 per-CPU adds, 15 atomic adds, 1 dropped),
 * nothing shared: the test guards only the batches, checks = 15 + 1 = 16;
 *   ns = 18 x 2 + 18 x 1 + 16 x 0.5 + 15 x 10 = 36 + 18 + 8 + 150 = 212
 *   ns_max = 18 x 100 + 18 + 8 + 15 x 50 = 2576
 */
TEST(test_estimate_legacy)
{
	struct sim_cost_table tb = table();
	struct sim_cost_counts c = {
		.updates = 9, .walk_steps = 18, .pcpu_adds = 18, .atomic_adds = 15,
		.dropped_batches = 1, .trace_ns = 1000, .legacy = sim_cost_policy_legacy("legacy"),
	};
	struct sim_cost_estimate e;

	ASSERT(c.legacy);
	ASSERT_EQ(sim_cost_estimate(&c, &tb, &e), 0);
	ASSERT_EQU(e.checks, 16);
	ASSERT(near(e.ns, 212));
	ASSERT(near(e.ns_per_update, 212.0 / 9));
	ASSERT(near(e.ns_max, 2576));
	ASSERT(near(e.cpu_s_per_s, 0.212));
}

/* No updates, no span: 0, not a division by zero; bad inputs refused. */
TEST(test_estimate_edges)
{
	struct sim_cost_table tb = table();
	struct sim_cost_counts c = { .walk_steps = 3, .pcpu_adds = 3 };
	struct sim_cost_estimate e;

	ASSERT_EQ(sim_cost_estimate(&c, &tb, &e), 0);
	ASSERT(near(e.ns, 3 * 2 + 3 * 1 + 3 * 0.5));
	ASSERT(e.ns_per_update == 0 && e.cpu_s_per_s == 0);
	c.shared = 1.5;
	ASSERT_EQ(sim_cost_estimate(&c, &tb, &e), -EINVAL);
	c.shared = NAN;
	ASSERT_EQ(sim_cost_estimate(&c, &tb, &e), -EINVAL);
	c.shared = 0;
	tb.op[SIM_COST_PCPU_ADD].ns = -1;
	ASSERT_EQ(sim_cost_estimate(&c, &tb, &e), -EINVAL);
	tb.op[SIM_COST_PCPU_ADD].ns = INFINITY;
	ASSERT_EQ(sim_cost_estimate(&c, &tb, &e), -EINVAL);
}

TEST(test_op_names)
{
	unsigned int i;

	for (i = 0; i < SIM_COST_NR_OPS; i++)
		ASSERT_EQ(sim_cost_op_find(sim_cost_op_name(i)), (int)i);
	ASSERT(!sim_cost_op_name(SIM_COST_NR_OPS));
	ASSERT_EQ(sim_cost_op_find("atomic"), -1);
	ASSERT_EQ(sim_cost_op_find(NULL), -1);
	ASSERT(!sim_cost_policy_legacy("continue") && !sim_cost_policy_legacy(NULL));
}

static char tmp_dir[4096];

static const char *tmp_path(const char *name)
{
	static char path[4200];

	if (!tmp_dir[0]) {
		const char *base = getenv("TMPDIR");

		snprintf(tmp_dir, sizeof(tmp_dir), "%s/test_cost.XXXXXX", base ? base : P_tmpdir);
		if (!mkdtemp(tmp_dir))
			return NULL;
	}
	snprintf(path, sizeof(path), "%s/%s", tmp_dir, name);
	return path;
}

__attribute__((destructor)) static void tmp_cleanup(void)
{
	const char *names[] = { "c.json", "bad.json", "share.db", "share.db-wal", "share.db-shm" };
	char path[4200];
	size_t i;

	if (!tmp_dir[0])
		return;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", tmp_dir, names[i]);
		unlink(path);
	}
	rmdir(tmp_dir);
}

TEST(test_file_round_trip)
{
	struct sim_cost_calib c = { .t = table(), .samples = 21, .cpus = 2, .llc_bytes = 1 << 20 };
	struct sim_cost_calib back;
	const char *path = tmp_path("c.json");
	unsigned int i;
	FILE *f;

	ASSERT(path);
	snprintf(c.host, sizeof(c.host), "a\"host");	/* a quote cannot break the file */
	snprintf(c.measured_at, sizeof(c.measured_at), "2026-01-01T00:00:00Z");
	for (i = 0; i < SIM_COST_NR_OPS; i++) {
		c.t.op[i].lo_ns = c.t.op[i].ns / 2;
		c.t.op[i].hi_ns = c.t.op[i].ns * 2;
	}
	f = fopen(path, "w");
	ASSERT(f);
	ASSERT_EQ(cost_file_write(f, &c), 0);
	fclose(f);
	ASSERT_EQ(cost_file_read(path, &back), 0);
	for (i = 0; i < SIM_COST_NR_OPS; i++) {
		ASSERT(near(back.t.op[i].ns, c.t.op[i].ns));
		ASSERT(near(back.t.op[i].lo_ns, c.t.op[i].lo_ns));
		ASSERT(near(back.t.op[i].hi_ns, c.t.op[i].hi_ns));
	}
	ASSERT_EQ(back.samples, 21);
	ASSERT_EQ(back.cpus, 2);
	ASSERT_STR(back.host, "ahost");
	ASSERT_STR(back.measured_at, "2026-01-01T00:00:00Z");
	/* a file without one operation, or not ours, is refused */
	f = fopen(tmp_path("bad.json"), "w");
	ASSERT(f);
	fprintf(f, "{\"format\": \"memcg-replay-calibration\", \"version\": 1, \"ops\": "
		"{\"pcpu_add\": {\"ns\": 1, \"lo_ns\": 1, \"hi_ns\": 1}}}\n");
	fclose(f);
	ASSERT_EQ(cost_file_read(tmp_path("bad.json"), &back), -MCR_E_BAD_INPUT);
	f = fopen(tmp_path("bad.json"), "w");
	ASSERT(f);
	fprintf(f, "{\"format\": \"something-else\", \"version\": 1}\n");
	fclose(f);
	ASSERT_EQ(cost_file_read(tmp_path("bad.json"), &back), -MCR_E_BAD_INPUT);
	ASSERT_EQ(cost_file_read(tmp_path("missing.json"), &back), -ENOENT);
}

/*
 * Root 1, child 2; updates (ts, cpu, cgroup), window 10 us:
 *   1000 cpu0 /2:  visits 2 and 1, nobody before           0 of 2 shared
 *   5000 cpu1 /2:  cpu0 reached both 4 us before            2 of 2
 *   100000 cpu0 /2: cpu1's last, at 5000, is 95 us old      0 of 2
 *   103000 cpu1 /:  cpu0 reached the root 3 us before       1 of 1
 * a flush event (not an update) between them changes nothing.
 * 3 of 7 visits shared; span 103000 - 1000 = 102000 ns.
 */
TEST(test_share_scan)
{
	static const struct { uint64_t ts, id; int cpu, kind; } evs[] = {
		{ 1000, 2, 0, MCR_EV_STATE }, { 5000, 2, 1, MCR_EV_LRUVEC },
		{ 50000, 1, 0, MCR_EV_FLUSH }, { 100000, 2, 0, MCR_EV_EVENTS },
		{ 103000, 1, 1, MCR_EV_STATE },
	};
	struct db_cgroup root = { .id = 1, .path = "/", .level = 0, .created_ts = -1,
				  .removed_ts = -1 };
	struct db_cgroup child = { .id = 2, .parent = 1, .path = "/a", .level = 1,
				   .created_ts = -1, .removed_ts = -1 };
	const char *path = tmp_path("share.db");
	uint64_t seq[2] = { 0, 0 };
	struct cost_share sh;
	struct db *db;
	size_t i;

	ASSERT(path);
	ASSERT_EQ(db_create(path, &db), 0);
	ASSERT_EQ(db_meta_set_int(db, "nr_cpus_possible", 2), 0);
	ASSERT_EQ(db_cgroup_put(db, &root), 0);
	ASSERT_EQ(db_cgroup_put(db, &child), 0);
	for (i = 0; i < sizeof(evs) / sizeof(evs[0]); i++) {
		struct mcr_event ev = {
			.ts = evs[i].ts, .seq = seq[evs[i].cpu]++, .id = evs[i].id, .val = 1,
			.cpu = evs[i].cpu, .kind = (uint8_t)evs[i].kind,
		};

		ASSERT_EQ(db_events_append(db, &ev), 0);
	}
	ASSERT_EQ(db_events_finish(db), 0);
	ASSERT_EQ(cost_share_scan(db, 10000, &sh), 0);
	ASSERT_EQU(sh.updates, 4);
	ASSERT_EQU(sh.node_visits, 7);
	ASSERT_EQU(sh.shared_visits, 3);
	ASSERT(near(sh.fraction, 3.0 / 7));
	ASSERT_EQU(sh.last_ts - sh.first_ts, 102000);
	/* 3.001 us: only the root visit 3 us after cpu0 is still shared */
	ASSERT_EQ(cost_share_scan(db, 3001, &sh), 0);
	ASSERT_EQU(sh.shared_visits, 1);
	ASSERT_EQ(cost_share_scan(db, 0, &sh), -EINVAL);
	db_close(db);
}

/* Structure only: what the host measures is the host's; never assert a time. */
TEST(test_calibrate_structure)
{
	struct cost_opts o = { .samples = 3, .scale = 0.01 };
	struct sim_cost_calib c;
	unsigned int i;

	ASSERT_EQ(cost_calibrate(&o, &c), 0);
	for (i = 0; i < SIM_COST_NR_OPS; i++) {
		ASSERT(isfinite(c.t.op[i].ns) && c.t.op[i].ns >= 0);
		ASSERT(c.t.op[i].lo_ns <= c.t.op[i].ns && c.t.op[i].ns <= c.t.op[i].hi_ns);
	}
	ASSERT(c.t.op[SIM_COST_WALK_STEP_COLD].ns > 0);
	ASSERT(c.cpus >= 1);
	ASSERT(c.tree_bytes >= (16u << 20));
	ASSERT_EQ(c.samples, 3);
	ASSERT(c.measured_at[0]);
	o.samples = 2;
	ASSERT_EQ(cost_calibrate(&o, &c), -EINVAL);
	o.samples = 3;
	o.scale = 0;
	ASSERT_EQ(cost_calibrate(&o, &c), -EINVAL);
}

TEST_MAIN(test_estimate_break, test_estimate_legacy, test_estimate_edges, test_op_names,
	  test_file_round_trip, test_share_scan, test_calibrate_structure)
