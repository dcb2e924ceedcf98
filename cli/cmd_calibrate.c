// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_calibrate.c - memcg-replay calibrate: what each operation of the
 * update path costs on this host (replay/cost.h), printed with its spread,
 * written to a calibration file (-o) and/or into a trace database (--db),
 * where report and the cost_report view turn each run's counts into time.
 */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib.h"
#include "cli.h"
#include "cost.h"
#include "num.h"
#include "outfile.h"

#define CAL_QUICK_SCALE		0.1
#define CAL_QUICK_SAMPLES	11
#define CAL_KEY_QUICK		0x100

struct cal_opts {
	const char	*output;
	const char	*db;
	const char	*from;
	unsigned int	samples;
	uint64_t	window_ns;
	bool		quick;
	bool		quiet;
	bool		force;
};

static const char cal_doc[] =
	"Measure what each operation of memcg_rstat_updated()'s walk costs on this host, with "
	"user-space proxies: a per-CPU add (a counter on a line private to the thread), an atomic "
	"add on a shared line (alone, and contended: one thread per online CPU adding in turn, "
	"so that every add takes the line from another CPU's cache), the "
	"flushable check (load the shared atomic, compare), one step up the tree (the parent "
	"pointer and its per-CPU counter, on a tree in cache and on one larger than the "
	"last-level cache), and a plain add as the baseline.  Each figure is the median over "
	"timed samples (threads pinned with sched_setaffinity, CLOCK_MONOTONIC), with the 10th "
	"and 90th percentiles as its spread.  -o writes them to a calibration file that "
	"'report --calibration FILE' loads; --db writes them into a trace database (table "
	"calibration), with what the estimate needs of its trace (table cost_basis), so that "
	"report, its HTML page and the SQL view cost_report show each run's estimated cost in "
	"time: ns per update and CPU seconds per second of trace."
	"\v"
	"The estimate, per run: walk_steps x walk_step + pcpu_adds x pcpu_add +\n"
	"flushable checks x flushable_check + atomic_adds x (f x\n"
	"atomic_add_contended + (1 - f) x atomic_add), divided by the updates, or\n"
	"by the trace's span. Flushable checks are the walk steps (break, continue;\n"
	"the check comes first at every memcg) or the batches moved or dropped\n"
	"(legacy). f is the share of the walks' visits to a memcg that another\n"
	"CPU's update reached less than --window-us before (read from the trace by\n"
	"--db): those atomic adds find the line in another CPU's cache. report also\n"
	"gives an upper bound: cold-tree steps and every atomic add contended.\n"
	"\n"
	"What it leaves out: the real kernel's cache effects (memcg structs and\n"
	"per-CPU areas competing with everything else the kernel touches), lock\n"
	"contention, that every figure is a user-space proxy of a kernel operation\n"
	"(a thread-local add for this_cpu_add(), a lock add for atomic_add(),\n"
	"preemption and the %gs segment aside), interrupts, and the flush side\n"
	"(visits, resets), which readers pay. It ranks policies by the work their\n"
	"walks do on this host; it is not a measured kernel throughput. Figures\n"
	"vary with the machine's load: measure on an idle host, and compare\n"
	"policies within one calibration.";

static char *cal_help_filter(int key, const char *text, void *input)
{
	return cli_exit_help_filter(key, text, CLI_CALIBRATE);
}

static const struct argp_option cal_options[] = {
	{ "output", 'o', "FILE", 0, "write the figures to the calibration file FILE (JSON)", 0 },
	{ "db", 'd', "FILE", 0, "write them into the trace database FILE, with its cost basis", 0 },
	{ "from", 'F', "CALIB", 0, "take the figures from the calibration file CALIB instead of "
	  "measuring (with --db: apply one calibration to many traces)", 0 },
	{ "samples", 's', "N", 0, "timed samples per operation, 3 to 1000 (default "
	  CLI_STR(COST_SAMPLES_DEFAULT) ")", 0 },
	{ "quiet", 'q', NULL, 0, "print nothing on success (with -o or --db)", 0 },
	/* long only: -q is --quiet, as in every other command */
	{ "quick", CAL_KEY_QUICK, NULL, 0, "short loops and " CLI_STR(CAL_QUICK_SAMPLES) " samples: a rough "
	  "figure in a fraction of a second (tests)", 0 },
	{ "window-us", 'w', "US", 0, "with --db: another CPU's update this recent shares the line "
	  "(default 10)", 0 },
	{ "force", 'f', NULL, 0, "let -o replace a file that is not a calibration file (a "
	  "trace database too; never --db FILE or --from CALIB)", 0 },
	{ 0 }
};

static error_t cal_parse(int key, char *arg, struct argp_state *state)
{
	struct cal_opts *o = state->input;
	int64_t v;

	switch (key) {
	case 'o':
		o->output = arg;
		return 0;
	case 'd':
		o->db = arg;
		return 0;
	case 'F':
		o->from = arg;
		return 0;
	case 's':
		if (cli_num_i64(arg, 3, 1000, &v))
			argp_error(state, "--samples: '%s' is not a count from 3 to 1000", arg);
		o->samples = (unsigned int)v;
		return 0;
	case 'q':
		o->quiet = true;
		return 0;
	case CAL_KEY_QUICK:
		o->quick = true;
		return 0;
	case 'w':
		if (cli_num_i64(arg, 1, 1000000, &v))
			argp_error(state, "--window-us: '%s' is not a number of us from 1 to 1000000",
				   arg);
		o->window_ns = (uint64_t)v * 1000;
		return 0;
	case 'f':
		o->force = true;
		return 0;
	case ARGP_KEY_ARG:
		argp_error(state, "no FILE operand: the output is -o FILE or --db FILE");
		return 0;
	case ARGP_KEY_END:
		if (o->from && !o->db && !o->output)
			argp_error(state, "--from: give --db FILE (or -o FILE) to apply it to");
		if (o->quiet && !o->db && !o->output)
			argp_error(state, "--quiet: give -o FILE or --db FILE, or nothing is seen");
		if (o->from && (o->quick || o->samples))
			argp_error(state, "--from takes the figures as they are: no --quick or --samples");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static void cal_print(const struct sim_cost_calib *c, bool measured)
{
	double base = c->t.op[SIM_COST_PLAIN_ADD].ns;
	unsigned int i;

	if (measured)
		printf("Calibration of %s, %s: %u samples per operation, contended add with %u "
		       "thread%s (one per online CPU), cold tree %" PRIu64 " MiB (last-level cache %"
		       PRIu64 " KiB)\n", c->host, c->measured_at, c->samples, c->cpus,
		       c->cpus == 1 ? "" : "s", c->tree_bytes >> 20, c->llc_bytes >> 10);
	else
		printf("Calibration of %s, %s (from a file)\n", c->host, c->measured_at);
	printf("  %-22s %10s  %-19s %s\n", "operation", "ns (median)", "spread (p10 - p90)",
	       "x plain add");
	for (i = 0; i < SIM_COST_NR_OPS; i++) {
		char spread[48];

		snprintf(spread, sizeof(spread), "%.2f - %.2f", c->t.op[i].lo_ns, c->t.op[i].hi_ns);
		printf("  %-22s %10.2f  %-19s ", sim_cost_op_name(i), c->t.op[i].ns, spread);
		if (base > 0)
			printf("%.1f\n", c->t.op[i].ns / base);
		else
			printf("-\n");
	}
	if (c->cpus == 1)
		printf("  (one CPU allowed: the contended add had nobody to contend with)\n");

}

static bool cal_is_ours(const char *path)
{
	struct sim_cost_calib old;

	return !cost_file_read(path, &old);
}

/*
 * -o: a calibration file may be replaced, anything else only with --force,
 * and never the trace database of --db or the file of --from.
 */
static struct outfile_policy cal_policy(const struct cal_opts *o, const char **inputs)
{
	size_t n = 0;

	if (o->db)
		inputs[n++] = o->db;
	if (o->from)
		inputs[n++] = o->from;
	inputs[n] = NULL;
	return (struct outfile_policy){
		.inputs = inputs, .force = o->force, .ours = cal_is_ours,
		.not_ours = "exists and is not a memcg-replay calibration file (--force replaces it)",
		.is_db = "is a trace database: -o writes a calibration file (JSON); --db FILE "
			 "writes the figures into a trace database (--force replaces it)",
	};
}

static int cal_write_file(const struct cal_opts *o, const struct sim_cost_calib *c)
{
	const char *inputs[3];
	struct outfile_policy pol = cal_policy(o, inputs);
	struct outfile of;
	FILE *f;
	int rc, err;

	rc = cli_outfile_begin("calibrate", &of, o->output, &pol);
	if (rc)
		return rc;
	f = fopen(of.tmp, "w");
	if (!f) {
		err = -errno;
		outfile_abort(&of);
		return cli_fail(err, "%s", o->output);
	}
	err = cost_file_write(f, c);
	if (fclose(f) && !err)
		err = -errno;
	if (err) {
		outfile_abort(&of);
		return cli_fail(err, "writing %s", o->output);
	}
	return cli_outfile_commit("calibrate", &of);
}

/* --db: the figures and what the trace says about sharing, in one transaction. */
static int cal_write_db(const struct cal_opts *o, const struct sim_cost_calib *c)
{
	struct db_cost_basis b = { 0 };
	struct cost_share sh;
	struct db *db;
	int rc = MCR_EXIT_OK, err;

	db = cli_open_db(o->db, true, &rc);
	if (!db)
		return rc;
	err = cost_share_scan(db, o->window_ns, &sh);
	if (err) {
		rc = cli_fail(err, "%s", o->db);
		goto out;
	}
	b = (struct db_cost_basis){
		.trace_ns = sh.last_ts - sh.first_ts, .updates = sh.updates,
		.window_ns = sh.window_ns, .node_visits = sh.node_visits,
		.shared_visits = sh.shared_visits, .shared_fraction = sh.fraction,
	};
	err = db_begin(db);
	if (!err)
		err = db_calibration_put(db, c);
	if (!err)
		err = db_cost_basis_put(db, &b);
	if (!err)
		err = db_commit(db);
	else
		db_rollback(db);
	if (err) {
		rc = cli_fail(err, "%s", o->db);
		goto out;
	}
	if (o->quiet)
		goto out;
	printf("%s: %" PRIu64 " updates over %.3f s; atomic adds priced as contended: %.1f %% "
	       "(walk visits to a memcg another CPU's update reached < %" PRIu64 " us before), "
	       "the rest uncontended\n", o->db, b.updates, (double)b.trace_ns / 1e9,
	       100 * b.shared_fraction, b.window_ns / 1000);
	printf("  see: memcg-replay report %s  (or SELECT * FROM cost_report)\n", o->db);
out:
	err = db_close(db);
	if (err && !rc)
		rc = cli_fail(err, "%s", o->db);
	return rc;
}

int cmd_calibrate(int argc, char **argv)
{
	struct argp argp = { cal_options, cal_parse, NULL, cal_doc, NULL, cal_help_filter, NULL };
	struct cal_opts o = { .window_ns = COST_SHARE_WINDOW_NS };
	struct sim_cost_calib c;
	int rc, err;

	if (argp_parse(&argp, argc, argv, 0, NULL, &o))
		return MCR_EXIT_USAGE;
	/* refuse an output before a second of measuring */
	if (o.output) {
		const char *inputs[3];
		struct outfile_policy pol = cal_policy(&o, inputs);

		rc = cli_outfile_check("calibrate", o.output, &pol);
		if (rc)
			return rc;
	}
	if (o.from) {
		char why[256] = "";

		rc = cli_input_check("--from ", o.from);
		if (rc)
			return rc;
		err = cost_file_read_why(o.from, &c, why, sizeof(why));
		if (err)
			return cli_fail(err, "%s%s%s%s", o.from,
					err == -MCR_E_BAD_INPUT ?
					" is not a memcg-replay calibration file" : "",
					*why ? ": " : "", why);
	} else {
		struct cost_opts co = {
			.samples = o.samples ? o.samples : o.quick ? CAL_QUICK_SAMPLES :
				   COST_SAMPLES_DEFAULT,
			.scale = o.quick ? CAL_QUICK_SCALE : 1,
		};

		err = cost_calibrate(&co, &c);
		if (err)
			return cli_fail(err, "calibrate");
	}
	if (!o.quiet)
		cal_print(&c, !o.from);
	rc = MCR_EXIT_OK;
	if (o.output)
		rc = cal_write_file(&o, &c);
	if (!rc && o.db)
		rc = cal_write_db(&o, &c);
	if (!rc && !o.output && !o.db)
		printf("(nothing written: -o FILE keeps the figures, --db FILE applies them to a "
		       "trace)\n");
	return rc;
}
