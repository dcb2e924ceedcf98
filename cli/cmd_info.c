// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_info.c - memcg-replay info FILE: what a trace database holds.  Reads
 * every event once (the same checks as replay), so a damaged trace is
 * reported here too.
 */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "results.h"
#include "trace_check.h"

static const char info_doc[] =
	"Describe a trace database: source, kernel, CPUs and threshold, time span, events by "
	"kind, cgroups, lost events, and the replay / validate runs stored in it.";

static char *info_help_filter(int key, const char *text, void *input)
{
	return cli_exit_help_filter(key, text, CLI_INFO);
}

struct info_opts {
	const char	*file;
	bool		no_check;
};

static error_t info_parse(int key, char *arg, struct argp_state *state)
{
	struct info_opts *o = state->input;

	switch (key) {
	case 'n':
		o->no_check = true;
		return 0;
	default:
		return cli_arg_file(key, arg, state, &o->file);
	}
}

static void meta_line(struct db *db, const char *label, const char *key)
{
	char *v = NULL;

	if (db_meta_get(db, key, &v) < 0 || !v || !*v)
		printf("%-14s (unknown: meta %s missing or empty)\n", label, key);
	else
		printf("%-14s %s\n", label, v);
	free(v);
}

/* A file of a memcg-capture --rotate series: its place in it (meta rotation_*). */
static void print_rotation(struct db *db)
{
	char *prefix = NULL, *prev = NULL;
	int64_t index;

	if (db_meta_get_int(db, "rotation_index", &index) < 0)
		return;
	db_meta_get(db, "rotation_prefix", &prefix);
	if (db_meta_get(db, "rotation_prev", &prev) < 0)
		prev = NULL;
	printf("%-14s file %" PRId64 " of the series %s-*.db%s%s\n", "rotation:", index,
	       prefix ? prefix : "?", prev ? ", after " : "", prev ? prev : "");
	free(prefix);
	free(prev);
}

static void print_cpus_span(struct db *db)
{
	int64_t online = -1, possible = -1, batch = 64, start, end;

	db_meta_get_int(db, "nr_cpus_online", &online);
	db_meta_get_int(db, "nr_cpus_possible", &possible);
	db_meta_get_int(db, "batch_size", &batch);
	printf("%-14s %" PRId64 " online, %" PRId64 " possible; TH = %" PRId64 " x %" PRId64
	       " = %" PRId64 " (flushable: stats_updates > TH)\n", "CPUs:", online, possible,
	       batch, online, batch * online);
	meta_line(db, "trace clock:", "trace_clock");
	if (db_meta_get_int(db, "capture_start_ns", &start) < 0 ||
	    db_meta_get_int(db, "capture_end_ns", &end) < 0) {
		start = end = 0;
		db_events_span(db, &start, &end);
	}
	/* the events' span is not checked at open: a difference of int64s fits a uint64 */
	printf("%-14s %.6f s (ts %" PRId64 " .. %" PRId64 " ns)\n", "time span:",
	       end >= start ? (double)((uint64_t)end - (uint64_t)start) / 1e9 : 0.0, start, end);
}

static void print_events(int64_t total, const uint64_t *by_kind)
{
	unsigned int k;

	printf("%-14s %" PRId64 "\n", "events:", total);
	for (k = 1; k <= MCR_EV_KIND_MAX; k++)
		if (by_kind[k])
			printf("  %-28s %12" PRIu64 "\n", mcr_event_kind_name(k), by_kind[k]);
}

/*
 * Cgroups of unknown parent as replay and validate count them (the census);
 * ids the events name without a row are cgroups without a path too.  Under
 * --no-check the events were not read: the table's rows only.
 */
static void print_cgroups_lost(struct db *db, const struct db_summary *sum,
			       const struct db_cgroup_census *census, bool no_check, int *err)
{
	struct db_trace_lost lost;
	uint64_t unlisted = census ? db_cgroup_census_unlisted(census) : 0;
	int ret;

	/* a table that cannot be read is a damaged file (it was there at open) */
	if (sum->cgroups_err && !*err)
		*err = sum->cgroups_err;
	printf("%-14s %" PRId64 ", max depth %" PRId64 ", %" PRIu64 " with unknown parent"
	       " (attached under the root), %" PRId64 " without a path%s\n", "cgroups:",
	       sum->cgroups + (int64_t)unlisted, sum->cgroup_max_level,
	       census ? db_cgroup_census_unknown(census) : 0,
	       sum->cgroups_no_path + (int64_t)unlisted,
	       no_check ? " (--no-check: the table's rows only)" : "");
	/*
	 * What the ring buffers overwrote or dropped between start and end; a
	 * CPU without its end row (or with -1 counters) is unknown, not 0.
	 */
	ret = db_trace_lost(db, &lost);
	if (ret < 0) {
		if (!*err)
			*err = ret;
		printf("%-14s (unreadable)\n", "lost events:");
		return;
	}
	printf("%-14s %" PRId64 " gaps (%" PRId64 " events counted, %" PRId64 " of unknown size);",
	       "lost events:", lost.gaps, lost.gap_events, lost.gaps_unknown);
	if (!lost.cpus_end)
		printf(" ring buffers: unknown (the file has no per-CPU counters from the end)\n");
	else
		printf(" ring buffers: %" PRId64 " overrun, %" PRId64 " dropped%s\n", lost.overrun,
		       lost.dropped, lost.cpus_unknown > 0 || lost.cpus_no_end > 0 ?
		       " (some CPUs unknown)" : "");
}

struct runs_ctx {
	int	n;
	int64_t	batch, online;	/* the trace's own */
};

/* A run of replay --batch / --cpus at other values than the trace's says so at the end. */
static int print_run(const struct db_run_info *ri, void *ctx)
{
	struct runs_ctx *rc = ctx;

	if (!rc->n++)
		printf("runs:\n  %4s  %-8s  %-9s  %-8s  %12s  %9s  %s\n", "id", "kind", "policy",
		       "model", "events", "wall", "started");
	printf("  %4" PRId64 "  %-8s  %-9s  %-8s  %12" PRId64 "  %7.2f s  %s", ri->run_id,
	       ri->kind, ri->policy, ri->flush_model, ri->events, ri->wall_s, ri->started_at);
	if (ri->batch_size != rc->batch || ri->nr_cpus != rc->online)
		printf("  b=%u cpus=%u", ri->batch_size, ri->nr_cpus);
	printf("\n");
	return 0;
}

static void print_runs(struct db *db, bool check, int *errp)
{
	struct runs_ctx rc = { 0 };
	int err;

	cli_trace_own(db, &rc.batch, &rc.online);
	err = db_runs_foreach(db, print_run, &rc);
	if (err == -MCR_E_OLDER) {
		printf("%-14s written by an older memcg-replay: replay the file again\n", "runs:");
		return;
	}
	if (err == -MCR_E_SCHEMA && !rc.n) {
		printf("%-14s (none)\n", "runs:");
		return;
	}
	if (err < 0) {
		/* a damaged page: say so and exit non-zero, not "(none)" */
		printf("%-14s (unreadable)\n", "runs:");
		if (!*errp)
			*errp = err;
		return;
	}
	if (!rc.n) {
		printf("%-14s none yet (memcg-replay replay FILE)\n", "runs:");
		return;
	}
	/* what report would print of them: a damaged result row is damage too */
	err = check ? db_results_check(db) : 0;
	if (err < 0) {
		printf("%-14s the result tables are damaged: replay the file again\n", "");
		if (!*errp)
			*errp = err;
	}
}

int cmd_info(int argc, char **argv)
{
	static const struct argp_option opts[] = {
		{ "no-check", 'n', NULL, 0, "do not read every event: counts as of the load, "
		  "damage not detected (fast on huge traces)", 0 },
		{ 0 }
	};
	struct argp argp = { opts, info_parse, "FILE", info_doc, NULL, info_help_filter, NULL };
	uint64_t by_kind[MCR_EV_KIND_MAX + 1];
	struct db_cgroup_census *census = NULL;
	struct db_summary sum;
	struct info_opts o = { 0 };
	const char *file;
	struct db *db;
	int64_t total;
	char *warnings = NULL, why[256];
	int rc = MCR_EXIT_OK, err = 0;

	if (argp_parse(&argp, argc, argv, 0, NULL, &o))
		return MCR_EXIT_USAGE;
	file = o.file;
	db = cli_open_db(file, false, &rc);
	if (!db)
		return rc;
	err = db_cgroup_census_open(db, &census);
	if (err == -ENOMEM) {
		db_close(db);
		return cli_fail_bare(err);
	}
	/* an unreadable cgroups table: said with the other tables below */
	db_summary(db, &sum);
	if (o.no_check) {
		total = sum.events;
		memcpy(by_kind, sum.by_kind, sizeof(by_kind));
	} else {
		total = cli_trace_scan(db, by_kind, census);
	}
	if (total < 0) {
		rc = cli_fail_db(db, (int)total, file);
		db_cgroup_census_free(census);
		db_close(db);
		return rc;
	}
	printf("%-14s %s\n", "file:", file);
	meta_line(db, "source:", "source");
	meta_line(db, "written by:", "tool_version");
	meta_line(db, "kernel:", "kernel_release");
	if (cli_capture_incomplete(db, why, sizeof(why)))
		printf("%-14s incomplete: %s\n", "capture:", why);
	print_rotation(db);
	print_cpus_span(db);
	print_events(total, by_kind);
	print_cgroups_lost(db, &sum, census, o.no_check, &err);
	print_runs(db, !o.no_check, &err);
	if (!db_meta_get(db, "warnings", &warnings) && *warnings)
		printf("warnings:\n%s\n", warnings);
	free(warnings);
	if (err && (err == -MCR_E_BAD_INPUT || *db_why(db)))	/* the sentence names the value */
		rc = cli_fail_db(db, err, file);
	else if (err)
		rc = cli_fail(err, "%s: its cgroups, gaps, cpu_stats or result tables cannot be read",
			      file);
	db_cgroup_census_free(census);
	db_close(db);
	return rc;
}
