// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_report.c - memcg-replay report FILE: how far each cgroup's memory.stat
 * lines were off under each policy, one row per (run, cgroup, line), from the
 * lag_report view (the latest replay run of each policy and flush model),
 * lag_report_all for --run, cgroup_lag_report for --worst.  Table for people
 * (policies side by side; the runs of a replay --batch / --cpus grid side by
 * side too, labelled "break b=32 cpus=2"), CSV and JSON for programs, with the
 * view's column names; HTML for people who would rather look.  Several
 * databases (a fleet, one per host) make one report with a host column, or one
 * HTML section per host under a fleet summary.  This file parses the
 * options, opens and checks the databases, loads the report's model once
 * (cli/report/model.h) and writes it with the chosen format's ops; no SQL
 * and no output format here.
 */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "num.h"
#include "outfile.h"
#include "report/html.h"
#include "report/model.h"
#include "results.h"
#include "sim.h"
#include "trace_check.h"

#define REPORT_MAX_RUNS		64
#define REPORT_MAX_FILES	1024

enum report_format { FMT_TABLE, FMT_CSV, FMT_JSON, FMT_HTML };

struct report_opts {
	const char		*file;		/* the one being checked */
	const char		*files[REPORT_MAX_FILES];
	int			nr_files;
	const char		*output;
	const char		*cgroup;
	char			*cgroup_path;	/* --cgroup ID: the path it has in the first file */
	enum report_format	format;
	int64_t			runs[REPORT_MAX_RUNS];
	int			nr_runs;
	bool			no_check;
	bool			worst;
	bool			cost;		/* --cost: the cost_report rows only */
	bool			force;		/* --force: -o replaces a file not a report */
	bool			fail_on_stale;	/* --fail-on-stale */
	const char		*calibration;	/* --calibration */
};

static const char report_doc[] =
	"Print the lag report: how far each cgroup's memory.stat lines were off under each "
	"policy, per line in the line's own unit (pages shown as memory, events as counts).  "
	"It begins with a verdict per database: the cgroups whose readers got stale reads "
	"under the policy the traced kernel runs (6.16+ break, 6.8-6.15 legacy, synthetic "
	"traces break; its run at the trace's own batch and CPUs), how often and the worst "
	"read error, what continue gave them and its cost (with --cgroup, of that cgroup).  "
	"By default the latest replay run of each policy, flush model, batch and CPU count; "
	"--run picks runs.  "
	"The same rows are in SQL: SELECT * FROM lag_report (and cgroup_lag_report for --worst).  "
	"--format html writes one self-contained page with charts of the visible error over time.  "
	"Several FILEs (one replayed database per host) make one report with host and file columns.  "
	"Each policy's cost in time follows its staleness: estimated ns per update and CPU "
	"seconds per second of trace, from the run's operation counts at the costs measured by "
	"'memcg-replay calibrate' (its --help gives the formula; SELECT * FROM cost_report).  "
	REPORT_COST_LEAVES_OUT "  Without a calibration only the counts are shown."
	"\v"
	"Definitions (error = shown - truth of one memory.stat line):\n"
	"  read error: what a reader got: at each non-forced memcg_flush_stats\n"
	"    of the cgroup, the error after that read's flush decision (about 0\n"
	"    after a flush).\n"
	"  visible error: what a reader arriving at any moment would get: 0\n"
	"    while the cgroup is flushable (stats_updates > TH), else the error.\n"
	"    Settled while no flush is in progress: the headline (settled max),\n"
	"    what tells the policies apart; in flush, the transient while a\n"
	"    flush is in progress (the CPUs it has not reached yet still hold\n"
	"    updates), as large under every policy: shown apart, labelled 'in\n"
	"    flush', and off the HTML charts' scale.\n"
	"  stranded: not flushable while the updates pending since its last\n"
	"    flush exceed TH + 63 x online CPUs, more than per-CPU batching can\n"
	"    hold back: only an ancestor walk that stopped early explains it.\n"
	"  noticeable: a stranded episode that skipped a read (a stale read) or\n"
	"    lasted at least 1 ms.  Only these are flagged (red in HTML); a\n"
	"    shorter one with no read inside met no reader.\n"
	"  stale read: a read skipped while stranded.\n"
	"  pending: sum of |val| of updates not yet flushed into the cgroup, in\n"
	"    the kernel's stats_updates units (a fault and its free count\n"
	"    twice).  Not memory.\n"
	"  age: of the oldest update the reader missed (any line of the cgroup).\n"
	"\n"
	"Columns (CSV header, JSON keys, the views): policy, run_id, flush_model,\n"
	"cgroup (its path, '#<id>' when unknown), cgroup_id, level, item (BTF\n"
	"enumerator name, or kind:item), unit ('pages' or 'events', as traced:\n"
	"the items the kernel counts in bytes or kB, *_B and NR_KERNEL_STACK_KB,\n"
	"are traced in pages too, rounded by the kernel to whole pages, a\n"
	"nonzero update to at least one), reads,\n"
	"stale_reads, max_read_error, p99_read_error, mean_read_error,\n"
	"max_visible_error, mean_visible_error (time-weighted), max_error_age_ms,\n"
	"stranded_ms, stranded_episodes, max_pending, max_settled_error,\n"
	"max_flush_error (the visible maximum settled and in flush; empty where\n"
	"the results predate them), noticeable_episodes, then v1_line and v2_line:\n"
	"the memory.stat lines that print the item (cgroup v1's hierarchical\n"
	"total_* line where it prints one, as the errors are the subtree's; v2's\n"
	"line; empty where that version prints none); where validate compared\n"
	"logged memory.stat reads (stat_read_checks), printed_reads,\n"
	"printed_within2 and printed_max_error follow: of the line's cgroup and\n"
	"item, the reads compared, those within 2 units of the simulation, and the\n"
	"worst error the kernel really printed (printed - truth, in memory.stat's\n"
	"unit: bytes, or a count); the table and the page say it in words, and the\n"
	"page marks each logged read on the chart.  Errors are absolute values\n"
	"in the item's unit; reads, stale_reads, stranded_* and max_pending are\n"
	"the cgroup's, repeated on each of its lines.  A line whose error was 0\n"
	"throughout has no row.  When a run was made at another batch or CPU count\n"
	"than the trace's own (replay --batch, --cpus), two more columns end each\n"
	"row, batch_size and nr_cpus, and the table labels every run\n"
	"'POLICY b=BATCH cpus=N', each line a matrix of the runs (policy and batch\n"
	"down, CPUs across).  With several FILEs two first columns, host and file,\n"
	"name each row's host (meta host, else the trace's own uname, else\n"
	"synth:SCENARIO, else the file's name) and database (as named on the command\n"
	"line); the table then sums each up in one line, and where two databases\n"
	"have one host's name the page labels each 'host (file)'.  When one is a\n"
	"file of a 'memcg-capture --rotate' series a third, start_ns, gives each\n"
	"file's start (meta capture_start_ns, trace clock), and the files of one\n"
	"series follow one another by meta rotation_index, read as one timeline.\n"
	"A file of a series has these three columns even alone, so a report of a\n"
	"series keeps one shape as it grows.\n"
	"\n"
	"--cost (CSV, JSON; the view cost_report): one row per run: run_id, policy,\n"
	"flush_model, updates, walk_steps, pcpu_adds, atomic_adds, dropped_batches,\n"
	"flushable_checks, atomic_shared_fraction (share of atomic adds priced as\n"
	"contended), est_ns_per_update, est_ns_per_update_max (cold tree, all\n"
	"contended), est_cpu_s_per_s, reads, stale_reads, stranded_cgroups,\n"
	"max_read_error_pages, max_read_error_events, calibration (where the\n"
	"costs came from; empty, and the est_* too, without a calibration).\n"
	"\n"
	"HTML: for the " CLI_STR(HTML_TOP_CGROUPS) " cgroups with the largest read errors (--cgroup: that one)\n"
	"the visible error of their " CLI_STR(HTML_TOP_LINES) " worst lines over time, every policy on the\n"
	"same axes, reads as dots (stale reads outlined), stranded episodes\n"
	"shaded, forced flushes dashed; the per-line and cost tables, the\n"
	"validation result and the trace's metadata.  No script, nothing fetched.";

static char *report_help_filter(int key, const char *text, void *input)
{
	return cli_exit_help_filter(key, text, CLI_REPORT);
}

static const struct argp_option report_options[] = {
	{ "run", 'r', "ID[,ID...]", 0, "report these runs (repeatable; default: the latest replay "
	  "run of each policy and flush model)", 0 },
	{ "format", 'f', "FMT", 0, "table (default), csv, json or html", 0 },
	{ "output", 'o', "FILE", 0, "write the report to FILE instead of standard output (a "
	  "report it wrote before is replaced, any other file only with --force, never an input)",
	  0 },
	{ "force", 0x102, NULL, 0, "let -o replace a file that is not a report (a trace "
	  "database too)", 0 },
	{ "cgroup", 'c', "CGROUP", 0, "only this cgroup: its path (e.g. / or /leaf) or its id "
	  "(cgroups.id, resolved in the first file)", 0 },
	{ "worst", 'w', NULL, 0, "one row per (run, cgroup): its worst line (cgroup_lag_report)", 0 },
	{ "no-check", 'n', NULL, 0, "do not re-read the events to check the trace (fast on huge traces)", 0 },
	{ "cost", 0x100, NULL, 0, "only the cost in time, one row per run (the view cost_report)", 0 },
	{ "calibration", 0x101, "CALIB", 0, "price the counts with this calibration file "
	  "(default: the one stored by calibrate --db)", 0 },
	{ "fail-on-stale", 0x103, NULL, 0, "exit 21 (STALE) once the report is "
	  "written if readers got stale reads under the traced kernel's policy (the verdict)", 0 },
	{ 0 }
};

static void parse_runs(struct report_opts *o, char *arg, struct argp_state *state)
{
	char *tok, *save = NULL;
	int64_t v;

	if (!cli_list_ok(arg))
		argp_error(state, "--run: '%s' has an empty or repeated run id", arg);
	for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (cli_num_i64(tok, 1, INT64_MAX, &v))
			argp_error(state, "--run: '%s' is not a run id", tok);
		if (o->nr_runs == REPORT_MAX_RUNS)
			argp_error(state, "--run: at most %d runs", REPORT_MAX_RUNS);
		o->runs[o->nr_runs++] = v;
	}
}

static error_t report_parse(int key, char *arg, struct argp_state *state)
{
	struct report_opts *o = state->input;

	switch (key) {
	case 'r':
		parse_runs(o, arg, state);
		return 0;
	case 'f':
		if (!strcmp(arg, "table"))
			o->format = FMT_TABLE;
		else if (!strcmp(arg, "csv"))
			o->format = FMT_CSV;
		else if (!strcmp(arg, "json"))
			o->format = FMT_JSON;
		else if (!strcmp(arg, "html"))
			o->format = FMT_HTML;
		else
			argp_error(state, "--format: '%s' is not table, csv, json or html", arg);
		return 0;
	case 'o':
		o->output = arg;
		return 0;
	case 'c':
		o->cgroup = arg;
		return 0;
	case 'w':
		o->worst = true;
		return 0;
	case 'n':
		o->no_check = true;
		return 0;
	case 0x100:
		o->cost = true;
		return 0;
	case 0x101:
		o->calibration = arg;
		return 0;
	case 0x102:
		o->force = true;
		return 0;
	case 0x103:
		o->fail_on_stale = true;
		return 0;
	case ARGP_KEY_ARG:
		if (o->nr_files == REPORT_MAX_FILES)
			argp_error(state, "at most %d FILEs", REPORT_MAX_FILES);
		o->files[o->nr_files++] = arg;
		return 0;
	case ARGP_KEY_END:
		if (!o->nr_files)
			argp_error(state, "FILE missing");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

/* Refuse what cannot be reported, with the reason; returns an exit code. */
static int report_check(struct db *db, struct report_opts *o)
{
	uint64_t id;
	int i, r;

	r = db_replay_run_exists(db, 0);
	if (r <= 0)
		return cli_fail(r < 0 ? r : -MCR_E_NO_RUNS, "%s", o->file);
	/* a damaged result row is refused before any output, naming it */
	r = db_results_check(db);
	if (!r && (o->cost || o->format == FMT_HTML))	/* the page has the cost table */
		r = report_cost_rows_check(db, o->calibration);
	if (r < 0)
		return cli_fail_db(db, r, o->file);
	for (i = 0; i < o->nr_runs; i++) {
		r = db_replay_run_exists(db, o->runs[i]);
		if (r < 0)
			return cli_fail(r, "%s", o->file);
		if (!r) {
			cli_msg("%s: no replay run %" PRId64 " (see 'memcg-replay info %s')", o->file,
				o->runs[i], o->file);
			return MCR_EXIT_BAD_INPUT;
		}
	}
	if (o->cgroup) {
		char *path = NULL;

		r = db_cgroup_lookup(db, o->cgroup, &id, o->cgroup[0] == '/' ? NULL : &path);
		if (r == -ENOENT) {
			cli_msg("%s: no cgroup '%s' in this trace", o->file, o->cgroup);
			return MCR_EXIT_BAD_INPUT;
		}
		if (r < 0)
			return cli_fail(r, "%s", o->file);
		if (o->cgroup[0] != '/') {
			/* an id: the report filters by the path it has here */
			if (!path) {
				cli_msg("%s: cgroup id %s has no path in this trace (its parent is "
					"unknown): --cgroup needs a path to filter by", o->file, o->cgroup);
				return MCR_EXIT_BAD_INPUT;
			}
			free(o->cgroup_path);
			o->cgroup = o->cgroup_path = path;
		}
	}
	return MCR_EXIT_OK;
}

/* Open and check one database; NULL with *rc set when it cannot be reported. */
static struct db *report_open(struct report_opts *o, const char *file, int *rc)
{
	struct db *db;
	int64_t n;

	o->file = file;
	db = cli_open_db(file, false, rc);
	if (!db)
		return NULL;
	/* results of a damaged trace are refused as replay would refuse the trace */
	n = o->no_check ? 0 : cli_trace_scan(db, NULL, NULL);
	if (n < 0)
		*rc = cli_fail_db(db, (int)n, file);
	else
		*rc = report_check(db, o);
	if (*rc) {
		db_close(db);
		return NULL;
	}
	return db;
}

/* A failure while writing: the sentence of the database that refused a value, if one did. */
static int report_fail(const struct report_source *src, int nr, int err, const char *file)
{
	int i;

	for (i = 0; i < nr; i++)
		if (*db_why(src[i].db))
			return cli_fail_db(src[i].db, err, src[i].file);
	return cli_fail(err, "%s", file);
}

/*
 * A file report -o may replace without --force: one that begins as a report
 * of any format begins (a table with its verdict, or as this build's
 * predecessors wrote it: the cost table, several hosts' table; CSV of either,
 * JSON, the HTML page).
 */
static bool report_is_ours(const char *path)
{
	static const char *const heads[] = {
		"Verdict for ", "Lag report: ", "\nCost in time of each policy", "== host ",
		"policy,run_id,", "host,policy,run_id,", "run_id,policy,", "host,run_id,policy,",
		"host,file,policy,run_id,", "host,file,run_id,policy,",
		"host,file,start_ns,policy,run_id,", "host,file,start_ns,run_id,policy,",
		"[{\"policy\":", "[{\"host\":", "[{\"run_id\":", "[]\n",
		"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		"<title>memcg-replay: ",
	};
	char head[256];
	size_t i, n;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return false;
	n = fread(head, 1, sizeof(head), f);
	fclose(f);
	for (i = 0; i < sizeof(heads) / sizeof(heads[0]); i++)
		if (n >= strlen(heads[i]) && !memcmp(head, heads[i], strlen(heads[i])))
			return true;
	return false;
}

/* -o: never an input (a database, the calibration); a trace database only forced */
static struct outfile_policy report_policy(const struct report_opts *o, const char **inputs)
{
	int i, n = 0;

	for (i = 0; i < o->nr_files; i++)
		inputs[n++] = o->files[i];
	if (o->calibration)
		inputs[n++] = o->calibration;
	inputs[n] = NULL;
	return (struct outfile_policy){
		.inputs = inputs, .force = o->force, .ours = report_is_ours,
		.not_ours = "exists and is not a report of memcg-replay (--force replaces it)",
		.is_db = "is a memcg-replay trace database, not a report (--force replaces it)",
	};
}

/* --fail-on-stale: each host whose traced policy had stale reads, then the exit code */
static int report_stale_exit(const struct report_model *m)
{
	int i;

	for (i = 0; i < m->nr_hosts; i++) {
		const struct report_verdict *v = &m->hosts[i].verdict;

		if (v->nr_flags)
			cli_msg("%s: stale reads under %s, the traced kernel's policy, in %zu "
				"cgroup%s", m->hosts[i].file, v->policy, v->nr_flags,
				v->nr_flags == 1 ? "" : "s");
	}
	return MCR_EXIT_STALE;
}

static const struct report_ops *const report_formats[] = {
	[FMT_TABLE] = &report_text_ops, [FMT_CSV] = &report_csv_ops,
	[FMT_JSON] = &report_json_ops, [FMT_HTML] = &report_html_ops,
};

int cmd_report(int argc, char **argv)
{
	struct argp argp = { report_options, report_parse, "FILE...", report_doc, NULL,
			     report_help_filter, NULL };
	struct report_opts o = { .format = FMT_TABLE };
	const char *inputs[REPORT_MAX_FILES + 2];
	const struct report_ops *ops;
	struct report_source *src = NULL;
	struct report_model m = { 0 };
	struct report_load lo;
	struct outfile_policy pol;
	int i, nr = 0, err = 0, rc = MCR_EXIT_OK;
	struct outfile of = { 0 };
	FILE *out = stdout;
	char why[256];

	if (argp_parse(&argp, argc, argv, 0, NULL, &o))
		return MCR_EXIT_USAGE;
	pol = report_policy(&o, inputs);
	/* refused before any database is read */
	if (o.output && (rc = cli_outfile_check("report", o.output, &pol)))
		return rc;
	if (o.calibration && (rc = cli_input_check("--calibration ", o.calibration)))
		return rc;
	err = report_cost_check(o.calibration, why, sizeof(why));
	if (err)
		return cli_fail(err, "--calibration %s%s%s%s", o.calibration,
				err == -MCR_E_BAD_INPUT ?
				": not a memcg-replay calibration file" : "",
				*why ? ": " : "", why);
	src = calloc((size_t)o.nr_files, sizeof(*src));
	if (!src)
		return cli_fail(-ENOMEM, "report");
	for (nr = 0; nr < o.nr_files; nr++) {
		src[nr].db = report_open(&o, o.files[nr], &rc);
		if (!src[nr].db)
			goto out;
		src[nr].file = o.files[nr];
	}
	/* the model, whole, before any output: the page has no --worst nor --cost alone */
	ops = report_formats[o.format];
	lo = (struct report_load){
		.runs = o.nr_runs ? o.runs : NULL, .nr_runs = o.nr_runs, .cgroup = o.cgroup,
		.worst = o.worst && o.format != FMT_HTML, .cost_only = o.cost && o.format != FMT_HTML,
		.calibration = o.calibration, .need = REPORT_NEED_LINES | ops->need |
		(o.fail_on_stale ? REPORT_NEED_VERDICT : 0),
	};
	err = report_model_load(&m, src, nr, &lo);
	if (err) {
		rc = report_fail(src, nr, err, src[m.failed].file);
		goto out;
	}
	/* every database checked before the output is created */
	if (o.output) {
		rc = cli_outfile_begin("report", &of, o.output, &pol);
		if (rc)
			goto out;
		out = fopen(of.tmp, "w");
		if (!out) {
			rc = cli_fail(-errno, "%s", o.output);
			outfile_abort(&of);
			goto out;
		}
	}
	err = report_write(out, &m, ops);
	if (err) {
		rc = report_fail(src, nr, err, o.file);
	} else if (o.output ? fclose(out) : fflush(stdout)) {
		rc = cli_fail(-errno, "writing %s", o.output ? o.output : "the report");
		out = NULL;
	} else {
		out = NULL;
		if (o.output)
			rc = cli_outfile_commit("report", &of);
		if (!rc && o.fail_on_stale && report_model_stale(&m))
			rc = report_stale_exit(&m);
	}
	if (rc && o.output) {
		if (out)
			fclose(out);
		outfile_abort(&of);
	}
out:
	report_model_free(&m);
	free(o.cgroup_path);
	for (i = 0; i < nr; i++)
		db_close(src[i].db);
	free(src);
	return rc;
}
