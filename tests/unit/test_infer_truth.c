// SPDX-License-Identifier: GPL-2.0
/*
 * Inference against the ground truth: synth --hidden-order places each lock
 * window's visits at hidden random times, records the kernel's values from
 * that order and keeps it in true_order.  The order replay infers must give
 * the kernel's value at every compared read (with nothing dropped by the
 * cap), and where it places an update its place must agree with the truth
 * or explain the values as well (counted, printed).
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../harness.h"
#include "db.h"
#include "replay.h"
#include "replay-local.h"
#include "synth.h"

static char tmp_dir[256];

static void tmp_path(char *buf, size_t n, const char *name)
{
	if (!tmp_dir[0]) {
		const char *base = getenv("TMPDIR");

		snprintf(tmp_dir, sizeof(tmp_dir), "%s/test_infer_truth.XXXXXX", base ? base : "/tmp");
		if (!mkdtemp(tmp_dir))
			tmp_dir[0] = 0;
	}
	snprintf(buf, n, "%s/%s", tmp_dir, name);
}

/* Each test unlinks its database; the directory goes when the tests are done. */
__attribute__((destructor)) static void tmp_cleanup(void)
{
	if (tmp_dir[0])
		rmdir(tmp_dir);
}

/*
 * fleet's readers share one pid, and a task has one flush in flight: reads
 * come every reader_ms, longer than a flush (window_updates x cpus us at
 * fleet's 1 M updates/s).
 */
struct scale {
	const char	*cpus, *cgroups, *window_updates, *events, *reader_ms;
};

struct truth_count {
	uint64_t	rows, placed, agree;
};

/* The order's place of each update true_order lists, against its true range. */
static int truth_compare(const char *path, const struct replay_order *o, struct truth_count *c)
{
	sqlite3 *sql;
	sqlite3_stmt *st;
	int rc;

	memset(c, 0, sizeof(*c));
	if (sqlite3_open_v2(path, &sql, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		return -1;
	rc = sqlite3_prepare_v2(sql, "SELECT cpu, seq, lo, hi FROM true_order", -1, &st, NULL);
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		uint64_t tag = ((uint64_t)(uint32_t)sqlite3_column_int(st, 0) << 48) ^
			       (uint64_t)sqlite3_column_int64(st, 1);
		size_t p;

		rc = SQLITE_OK;
		c->rows++;
		if (!replay_order_lookup(o, tag, &p))
			continue;
		c->placed++;
		c->agree += (int64_t)p >= sqlite3_column_int64(st, 2) &&
			    (int64_t)p <= sqlite3_column_int64(st, 3);
	}
	sqlite3_finalize(st);
	sqlite3_close(sql);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* 0 if @a and @b place every update of @src alike, else -1 */
static int orders_same(struct replay_source *src, const struct replay_order *a,
		       const struct replay_order *b)
{
	struct mcr_event ev;
	int ret;

	while ((ret = src->next(src->ctx, &ev)) > 0) {
		size_t pa = 0, pb = 0;
		bool ha, hb;

		if (!mcr_event_is_update(&ev))
			continue;
		ha = replay_order_lookup(a, replay_tag(&ev), &pa);
		hb = replay_order_lookup(b, replay_tag(&ev), &pb);
		if (ha != hb || pa != pb)
			return -1;
	}
	return ret;
}

static void run_scale(struct test_ctx *t, const struct scale *sc, uint64_t seed)
{
	const struct sim_policy *brk = sim_policy_find("break");
	struct replay_params p = { .model = &replay_model_inferred, .validate = true };
	const struct replay_validation *v;
	struct replay_source src;
	struct replay_trace tr;
	struct replay_order *o = NULL;
	struct replay *r = NULL;
	struct synth_args a;
	struct synth_stats st;
	struct synth_out out = { 0 };
	struct truth_count c;
	struct db *db;
	char path[512], name[64];

	snprintf(name, sizeof(name), "h-%s-%s-%s.db", sc->cpus, sc->cgroups, sc->window_updates);
	tmp_path(path, sizeof(path), name);
	unlink(path);
	ASSERT_EQ(db_create(path, &db), 0);
	out.db = db;
	synth_args_init(&a, synth_scenario_find("fleet"), seed);
	ASSERT_EQ(synth_args_set(&a, "hidden-order", "1"), 0);
	ASSERT_EQ(synth_args_set(&a, "cpus", sc->cpus), 0);
	ASSERT_EQ(synth_args_set(&a, "cgroups", sc->cgroups), 0);
	ASSERT_EQ(synth_args_set(&a, "window-updates", sc->window_updates), 0);
	ASSERT_EQ(synth_args_set(&a, "events", sc->events), 0);
	ASSERT_EQ(synth_args_set(&a, "period-ms", "5"), 0);
	ASSERT_EQ(synth_args_set(&a, "reader-ms", sc->reader_ms), 0);
	ASSERT_EQ(synth_run(&a, &out, &st), 0);
	ASSERT_EQ(db_close(db), 0);

	ASSERT_EQ(db_open(path, false, &db), 0);
	ASSERT_EQ(replay_trace_load(db, &tr), 0);
	ASSERT_EQ(replay_source_db_open(db, &src), 0);
	ASSERT_EQ(replay_order_infer(&tr, brk, 0, &src, NULL, NULL, &o), 0);
	ASSERT_EQ(src.rewind(src.ctx), 0);
	/* the order's own results (plain: the inferred model alone) and validate's */
	p.runs[0] = replay_run_own(&tr, brk);
	p.nr_runs = 1;
	p.order = o;
	p.keep_order = true;
	ASSERT_EQ(replay_create(&p, &tr, &r), 0);
	ASSERT_EQ(replay_run(r, &src), 0);
	v = replay_validation(r);
	/* validate's inference kept the very order the prepass found */
	ASSERT(replay_validated_order(r));
	ASSERT_EQU(replay_order_size(replay_validated_order(r)), replay_order_size(o));
	ASSERT_EQ(src.rewind(src.ctx), 0);
	ASSERT_EQ(orders_same(&src, o, replay_validated_order(r)), 0);
	ASSERT_EQ(truth_compare(path, o, &c), 0);
	printf("# hidden order, %s CPUs, %s cgroups, %s updates a window: %llu compared, "
	       "%llu matched (order alone %llu), hypotheses %llu, %llu dropped by the cap; %llu "
	       "updates in windows, %llu placed, %llu as the truth\n", sc->cpus, sc->cgroups,
	       sc->window_updates, (unsigned long long)v->compared,
	       (unsigned long long)v->stats_updates_match,
	       (unsigned long long)v->stats_updates_match_plain,
	       (unsigned long long)v->max_hypotheses, (unsigned long long)v->capped,
	       (unsigned long long)c.rows,
	       (unsigned long long)c.placed, (unsigned long long)c.agree);
	ASSERT(v->compared > 10);
	ASSERT(c.rows > 0);
	ASSERT_EQU(v->causes[REPLAY_CAUSE_CAPPED], 0);
	ASSERT_EQU(v->stats_updates_match, v->compared);
	ASSERT_EQU(v->needs_flush_match, v->compared);
	ASSERT_EQU(v->stats_updates_match_plain, v->compared);
	replay_destroy(r);
	replay_order_free(o);
	replay_source_db_close(&src);
	replay_trace_free(&tr);
	db_close(db);
	unlink(path);
}

TEST(test_truth_8cpus)
{
	static const struct scale sc = { "8", "100", "10", "30000", "1" };

	run_scale(t, &sc, 1);
}

/* more CPUs: most updates are made on CPUs other than the window's and commute */
TEST(test_truth_32cpus)
{
	static const struct scale sc = { "32", "300", "10", "30000", "1" };

	run_scale(t, &sc, 3);
}

/* synth without --hidden-order still writes true_order, empty */
TEST(test_truth_table_empty_unhidden)
{
	struct synth_args a;
	struct synth_stats st;
	struct synth_out out = { 0 };
	sqlite3 *sql;
	sqlite3_stmt *q;
	struct db *db;
	char path[512];

	tmp_path(path, sizeof(path), "plain.db");
	unlink(path);
	ASSERT_EQ(db_create(path, &db), 0);
	out.db = db;
	synth_args_init(&a, synth_scenario_find("fleet"), 1);
	ASSERT_EQ(synth_args_set(&a, "events", "5000"), 0);
	ASSERT_EQ(synth_run(&a, &out, &st), 0);
	ASSERT_EQ(db_close(db), 0);
	ASSERT_EQ(sqlite3_open_v2(path, &sql, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	ASSERT_EQ(sqlite3_prepare_v2(sql, "SELECT count(*) FROM true_order", -1, &q, NULL), SQLITE_OK);
	ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
	ASSERT_EQ(sqlite3_column_int(q, 0), 0);
	sqlite3_finalize(q);
	sqlite3_close(sql);
	unlink(path);
}

TEST_MAIN(test_truth_table_empty_unhidden, test_truth_8cpus, test_truth_32cpus)
