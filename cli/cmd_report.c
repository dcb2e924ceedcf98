// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_report.c - memcg-replay report FILE: how far each cgroup's memory.stat
 * lines were off under each policy, one row per (run, cgroup, line), from the
 * lag_report view (the latest replay run of each policy and flush model),
 * lag_report_all for --run, cgroup_lag_report for --worst.  Table for people
 * (policies side by side; the runs of a replay --batch / --cpus grid side by
 * side too, labelled "break b=32 cpus=2"), CSV and JSON for programs, with the
 * view's column names; HTML (cli/html_report.c) for people who would rather look.  Several
 * databases (a fleet, one per host) make one report with a host column, or one
 * HTML section per host under a fleet summary.  The rows come from
 * db/results.h; no SQL here.
 */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "html_report.h"
#include "num.h"
#include "outfile.h"
#include "report_cost.h"
#include "results.h"
#include "sim.h"
#include "trace_check.h"

#define REPORT_MAX_RUNS		64
#define REPORT_TABLE_LINES	8	/* lines of memory.stat per cgroup in the table */
#define REPORT_MAX_FILES	1024

enum report_format { FMT_TABLE, FMT_CSV, FMT_JSON, FMT_HTML };

struct report_opts {
	const char		*file;		/* the one being checked */
	const char		*files[REPORT_MAX_FILES];
	int			nr_files;
	const char		*output;
	const char		*cgroup;
	enum report_format	format;
	int64_t			runs[REPORT_MAX_RUNS];
	int			nr_runs;
	bool			no_check;
	bool			worst;
	bool			cost;		/* --cost: the cost_report rows only */
	bool			force;		/* --force: -o replaces a file not a report */
	const char		*calibration;	/* --calibration */
};

static const char report_doc[] =
	"Print the lag report: how far each cgroup's memory.stat lines were off under each "
	"policy, per line in the line's own unit (pages shown as memory, events as counts).  "
	"By default the latest replay run of each policy, flush model, batch and CPU count; "
	"--run picks runs.  "
	"The same rows are in SQL: SELECT * FROM lag_report (and cgroup_lag_report for --worst).  "
	"--format html writes one self-contained page with charts of the visible error over time.  "
	"Several FILEs (one replayed database per host) make one report with a host column.  "
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
	"  stranded: not flushable while the updates pending since its last\n"
	"    flush exceed TH + 63 x online CPUs, more than per-CPU batching can\n"
	"    hold back: only an ancestor walk that stopped early explains it.\n"
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
	"stranded_ms, stranded_episodes, max_pending.  Errors are absolute values\n"
	"in the item's unit; reads, stale_reads, stranded_* and max_pending are\n"
	"the cgroup's, repeated on each of its lines.  A line whose error was 0\n"
	"throughout has no row.  When a run was made at another batch or CPU count\n"
	"than the trace's own (replay --batch, --cpus), two more columns end each\n"
	"row, batch_size and nr_cpus, and the table labels every run\n"
	"'POLICY b=BATCH cpus=N'.  With several FILEs a first column, host, names\n"
	"each row's host (meta host, else the trace's own uname, else synth:SCENARIO,\n"
	"else the file's name).\n"
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
	{ "cgroup", 'c', "PATH", 0, "only this cgroup (its path, e.g. / or /leaf)", 0 },
	{ "worst", 'w', NULL, 0, "one row per (run, cgroup): its worst line (cgroup_lag_report)", 0 },
	{ "no-check", 'n', NULL, 0, "do not re-read the events to check the trace (fast on huge traces)", 0 },
	{ "cost", 0x100, NULL, 0, "only the cost in time, one row per run (the view cost_report)", 0 },
	{ "calibration", 0x101, "CALIB", 0, "price the counts with this calibration file "
	  "(default: the one stored by calibrate --db)", 0 },
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
static int report_check(struct db *db, const struct report_opts *o)
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
		r = db_cgroup_by_path(db, o->cgroup, &id);
		if (r == -ENOENT) {
			cli_msg("%s: no cgroup '%s' in this trace", o->file, o->cgroup);
			return MCR_EXIT_BAD_INPUT;
		}
		if (r < 0)
			return cli_fail(r, "%s", o->file);
	}
	return MCR_EXIT_OK;
}

static void csv_field(const char *s)
{
	cli_csv_field(stdout, s);
}

static bool col_is_text(int c)
{
	return c == DB_LAG_POLICY || c == DB_LAG_FLUSH_MODEL || c == DB_LAG_CGROUP ||
	       c == DB_LAG_ITEM || c == DB_LAG_UNIT;
}

/* what a row callback needs besides the row: the host column when there is one */
struct out_ctx {
	const char	*host;		/* NULL: one database, no host column */
	unsigned long	n;
	bool		grid;		/* batch_size and nr_cpus columns end each row */
};

static int csv_row(const struct db_lag_row *row, void *ctx)
{
	const struct out_ctx *oc = ctx;
	int i;

	if (oc->host) {
		csv_field(oc->host);
		putchar(',');
	}
	for (i = 0; i < DB_LAG_NR_COLS; i++) {
		if (i)
			putchar(',');
		csv_field(row->text[i]);
	}
	if (oc->grid) {
		putchar(',');
		csv_field(row->batch_text);
		putchar(',');
		csv_field(row->cpus_text);
	}
	putchar('\n');
	return 0;
}

/*
 * A numeric column as SQLite prints it, if it is a JSON number: db/ refuses
 * non-finite results (SQLite prints "Inf"), so this only keeps a bug from
 * writing invalid JSON.
 */
static const char *json_number(const char *s)
{
	char *end;
	double d;

	if (!s)
		return "null";
	d = strtod(s, &end);
	return end != s && !*end && isfinite(d) ? s : "null";
}

static int json_row(const struct db_lag_row *row, void *ctx)
{
	struct out_ctx *oc = ctx;
	int i;

	printf("%s{", oc->n++ ? ",\n " : "");
	if (oc->host) {
		printf("\"host\":");
		db_json_string(stdout, oc->host);
		putchar(',');
	}
	for (i = 0; i < DB_LAG_NR_COLS; i++) {
		printf("%s\"%s\":", i ? "," : "", db_lag_col_name(i));
		if (!row->text[i])
			fputs("null", stdout);
		else if (col_is_text(i))
			db_json_string(stdout, row->text[i]);
		else
			fputs(json_number(row->text[i]), stdout);
	}
	if (oc->grid)
		printf(",\"batch_size\":%s,\"nr_cpus\":%s", json_number(row->batch_text),
		       json_number(row->cpus_text));
	putchar('}');
	return 0;
}

/*
 * The table: every row gathered, then one block per cgroup that was read, in
 * tree order, its lines worst first with the policies side by side; then the
 * cgroups nobody read, one line each, by what a reader would have seen.
 */
#define TABLE_UNREAD	10	/* unread cgroups listed */

struct trow {
	char		*cgroup;
	char		*policy;
	char		*item;
	const char	*label;		/* policy (b=, cpus= in a grid), #run when one repeats */
	unsigned int	batch, cpus;	/* the run's */
	uint64_t	cgroup_id;
	uint64_t	run_id;
	int		level;
	int		rank;		/* the policy's place in the policy table */
	bool		events;
	uint64_t	reads, stale_reads, stranded_episodes, max_pending;
	uint64_t	max_read, p99_read, max_visible;
	double		mean_read, mean_visible, age_ms, stranded_ms;
};

struct tstate {
	int64_t		page_size;
	bool		grid;		/* some run is not at the trace's batch and CPUs */
	int		label_w;	/* width of the label column: 10, more for a grid */
	struct trow	*rows;
	size_t		nr, cap;
	char		**labels;	/* one per row, owned */
};

/* "1.94 GiB" for a page line, "103898" for an event line. */
static const char *val_str(char *buf, size_t len, const struct trow *t, double v, int64_t page_size)
{
	if (t->events) {
		snprintf(buf, len, "%.0f", v);
		return buf;
	}
	return cli_pages_str(buf, len, v, page_size);
}

/* Policies in the order of their table (break, continue, legacy), then runs. */
static int trow_cmp_run(const void *a, const void *b)
{
	const struct trow *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank - y->rank;
	return (x->run_id > y->run_id) - (x->run_id < y->run_id);
}

static int table_row(const struct db_lag_row *row, void *ctx)
{
	struct tstate *ts = ctx;
	struct trow *t;

	if (ts->nr == ts->cap) {
		size_t ncap = ts->cap ? ts->cap * 2 : 64;
		struct trow *n = realloc(ts->rows, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		ts->rows = n;
		ts->cap = ncap;
	}
	t = &ts->rows[ts->nr];
	*t = (struct trow){
		.cgroup = strdup(row->cgroup), .policy = strdup(row->policy),
		.item = strdup(row->item), .cgroup_id = row->cgroup_id,
		.run_id = (uint64_t)row->run_id, .level = row->level,
		.rank = sim_policy_rank(row->policy), .events = !strcmp(row->unit, "events"),
		.reads = row->reads, .stale_reads = row->stale_reads,
		.stranded_episodes = row->stranded_episodes, .max_pending = row->max_pending,
		.max_read = row->max_read_error, .p99_read = row->p99_read_error,
		.max_visible = row->max_visible_error, .mean_read = row->mean_read_error,
		.mean_visible = row->mean_visible_error, .age_ms = row->max_error_age_ms,
		.stranded_ms = row->stranded_ms, .batch = row->batch_size, .cpus = row->nr_cpus,
	};
	if (!t->cgroup || !t->policy || !t->item) {
		free(t->cgroup);
		free(t->policy);
		free(t->item);
		return -ENOMEM;
	}
	ts->nr++;
	return 0;
}

/*
 * Labels: the policy's name ("break b=32 cpus=2" when the report has a grid),
 * with #run where one such name has several runs.
 */
static int table_labels(struct tstate *ts)
{
	size_t i, j;

	ts->labels = calloc(ts->nr ? ts->nr : 1, sizeof(*ts->labels));
	if (!ts->labels)
		return -ENOMEM;
	for (i = 0; i < ts->nr; i++) {
		struct trow *t = &ts->rows[i];
		bool several = false;
		char name[96];

		if (ts->grid)
			snprintf(name, sizeof(name), "%s b=%u cpus=%u", t->policy, t->batch, t->cpus);
		else
			snprintf(name, sizeof(name), "%s", t->policy);
		for (j = 0; j < ts->nr && !several; j++)
			several = ts->rows[j].run_id != t->run_id &&
				  !strcmp(ts->rows[j].policy, t->policy) &&
				  (!ts->grid || (ts->rows[j].batch == t->batch &&
						 ts->rows[j].cpus == t->cpus));
		if (several) {
			if (asprintf(&ts->labels[i], "%s#%" PRIu64, name, t->run_id) < 0)
				ts->labels[i] = NULL;
		} else {
			ts->labels[i] = strdup(name);
		}
		if (!ts->labels[i])
			return -ENOMEM;
		t->label = ts->labels[i];
		if ((int)strlen(t->label) > ts->label_w)
			ts->label_w = (int)strlen(t->label);
	}
	return 0;
}

/* One line of memory.stat, every policy in one sentence, then their details. */
static void table_item(const struct tstate *ts, struct trow *r, size_t n)
{
	char a[32], b[32], c[32], d[32], e[32];
	size_t i;

	qsort(r, n, sizeof(*r), trow_cmp_run);
	printf("  %s%s:", r[0].item, r[0].events ? " (events)" : "");
	for (i = 0; i < n; i++) {
		printf("%s %s worst %s", i ? ";" : "", r[i].label,
		       val_str(a, sizeof(a), &r[i], (double)r[i].max_read, ts->page_size));
		if (!r[i].stale_reads && !r[i].stranded_ms) {
			printf(", 0 stale");
			continue;
		}
		printf(", %" PRIu64 " of %" PRIu64 " reads stale", r[i].stale_reads, r[i].reads);
		if (r[i].stranded_ms)
			printf(", stranded %s in %" PRIu64 " episode%s",
			       cli_ms_str(b, sizeof(b), r[i].stranded_ms), r[i].stranded_episodes,
			       r[i].stranded_episodes == 1 ? "" : "s");
	}
	printf("\n");
	for (i = 0; i < n; i++)
		printf("      %-*s read p99 %s, mean %s; visible max %s, mean %s; oldest missed %s;"
		       " max pending %" PRIu64 "\n", ts->label_w, r[i].label,
		       val_str(a, sizeof(a), &r[i], (double)r[i].p99_read, ts->page_size),
		       val_str(b, sizeof(b), &r[i], r[i].mean_read, ts->page_size),
		       val_str(c, sizeof(c), &r[i], (double)r[i].max_visible, ts->page_size),
		       val_str(d, sizeof(d), &r[i], r[i].mean_visible, ts->page_size),
		       cli_ms_str(e, sizeof(e), r[i].age_ms), r[i].max_pending);
}

/* The rows of one line of one cgroup: adjacent (rows come by cgroup, item, policy). */
struct titem {
	struct trow	*r;
	size_t		n;
	double		key;	/* worst read error over the policies, visible as tie-break */
};

static int titem_cmp(const void *a, const void *b)
{
	const struct titem *x = a, *y = b;

	if (x->r->events != y->r->events)
		return x->r->events ? 1 : -1;
	return x->key < y->key ? 1 : x->key > y->key ? -1 : strcmp(x->r->item, y->r->item);
}

/* A cgroup's rows [from, to): the full block. */
static int table_cgroup(const struct tstate *ts, size_t from, size_t to)
{
	struct trow *rows = ts->rows;
	size_t i, j, n = 0, shown = 0, quiet = 0;
	struct titem *it = calloc(to - from, sizeof(*it));

	if (!it)
		return -ENOMEM;
	for (i = from; i < to; i = j) {
		double key = 0;

		for (j = i; j < to && !strcmp(rows[j].item, rows[i].item); j++) {
			double v = (double)rows[j].max_read + 1e-9 * (double)rows[j].max_visible;

			if (v > key)
				key = v;
		}
		it[n++] = (struct titem){ .r = &rows[i], .n = j - i, .key = key };
	}
	qsort(it, n, sizeof(*it), titem_cmp);
	printf("\n%s (id %" PRIu64 ", level %d): %" PRIu64 " reads\n", rows[from].cgroup,
	       rows[from].cgroup_id, rows[from].level, rows[from].reads);
	for (i = 0; i < n; i++) {
		if (it[i].key == 0) {
			quiet++;
			continue;
		}
		if (shown == REPORT_TABLE_LINES)
			continue;
		table_item(ts, it[i].r, it[i].n);
		shown++;
	}
	if (n - quiet > shown)
		printf("  ... %zu more lines (--format csv lists every one)\n", n - quiet - shown);
	if (quiet)
		printf("  %zu line%s never wrong at a read (only while nobody read)\n", quiet,
		       quiet == 1 ? "" : "s");
	free(it);
	return 0;
}

struct tunread {
	size_t		from, to;
	uint64_t	worst;	/* largest visible error of a page line, any policy */
};

static int tunread_cmp(const void *a, const void *b)
{
	const struct tunread *x = a, *y = b;

	return x->worst < y->worst ? 1 : x->worst > y->worst ? -1 : (x->from > y->from) - (x->from < y->from);
}

/* An unread cgroup in one line: each policy's largest visible error of a page line. */
static void table_unread(const struct tstate *ts, const struct tunread *u)
{
	char a[32], b[32];
	size_t i, k;

	printf("  %s (id %" PRIu64 "):", ts->rows[u->from].cgroup, ts->rows[u->from].cgroup_id);
	for (i = u->from, k = 0; i < u->to; i++) {
		const struct trow *best = NULL;
		size_t j;

		/* the first row of each run: find its worst page line */
		for (j = u->from; j < i; j++)
			if (ts->rows[j].run_id == ts->rows[i].run_id)
				break;
		if (j < i)
			continue;
		for (j = i; j < u->to; j++)
			if (ts->rows[j].run_id == ts->rows[i].run_id && !ts->rows[j].events &&
			    (!best || ts->rows[j].max_visible > best->max_visible))
				best = &ts->rows[j];
		if (!best)
			continue;
		printf("%s %s %s (%s)", k++ ? ";" : "", best->label,
		       cli_pages_str(a, sizeof(a), (double)best->max_visible, ts->page_size),
		       best->item);
		if (best->stranded_ms)
			printf(", stranded %s", cli_ms_str(b, sizeof(b), best->stranded_ms));
	}
	printf("\n");
}

static void table_header(int64_t page_size, int64_t online, int64_t batch, bool grid,
			 bool rounded)
{
	printf("Lag report: how far each memory.stat line was off, policies side by side\n"
	       "  worst      largest |shown - truth| a reader got: the error after its read's flush\n"
	       "             decision (non-forced memcg_flush_stats of the cgroup)\n"
	       "  p99, mean  the same over all the cgroup's reads\n"
	       "  visible    what a reader arriving at any moment would get (0 while flushable):\n"
	       "             its max and time-weighted mean\n"
	       "  stale      reads skipped while the cgroup was stranded: not flushable (stats_updates\n"
	       "             <= TH = %" PRId64 ") with more than TH + %" PRId64 " x %" PRId64
	       " = %" PRId64 " updates pending,\n"
	       "             more than per-CPU batching can hold back\n"
	       "  oldest missed  age of the oldest update a reader missed (any line of the cgroup)\n"
	       "  max pending    sum of |val| not yet flushed, stats_updates units: not memory\n"
	       "  Page lines in bytes (page %" PRId64 " B); (events) lines are counts.\n",
	       batch * online, batch - 1, online, batch * online + (batch - 1) * online, page_size);
	if (rounded)
		printf("  *_B and NR_KERNEL_STACK_KB lines are page lines too: the kernel traces\n"
		       "  them in pages, rounded from bytes or kB (a nonzero update to at least one).\n");
	if (grid)
		printf("  A run labelled b=B cpus=N simulated MEMCG_CHARGE_BATCH B on N online CPUs:\n"
		       "  its TH is B x N and its stranded limit TH + (B - 1) x N; the trace's own\n"
		       "  are b=%" PRId64 " cpus=%" PRId64 ".\n", batch, online);
}

static int report_table(struct db *db, const struct db_lag_filter *f, int64_t page_size,
			int64_t online, int64_t batch, bool grid)
{
	struct tstate ts = { .page_size = page_size, .grid = grid, .label_w = 10 };
	struct tunread *unread = NULL;
	size_t i, j, nu = 0;
	bool rounded = false;
	int err;

	err = db_lag_foreach(db, f, table_row, &ts);
	if (!err)
		err = table_labels(&ts);
	if (!err && !(unread = calloc(ts.nr ? ts.nr : 1, sizeof(*unread))))
		err = -ENOMEM;
	for (i = 0; i < ts.nr; i++)
		rounded |= !ts.rows[i].events && mcr_item_rounded_from(MCR_EV_STATE, ts.rows[i].item);
	if (!err)
		table_header(page_size, online, batch, grid, rounded);
	/* rows come in tree order: a cgroup's rows are adjacent */
	for (i = 0; !err && i < ts.nr; i = j) {
		bool read = false;
		uint64_t worst = 0;

		for (j = i; j < ts.nr && ts.rows[j].cgroup_id == ts.rows[i].cgroup_id &&
		     !strcmp(ts.rows[j].cgroup, ts.rows[i].cgroup); j++) {
			read |= ts.rows[j].reads > 0;
			if (!ts.rows[j].events && ts.rows[j].max_visible > worst)
				worst = ts.rows[j].max_visible;
		}
		if (read)
			err = table_cgroup(&ts, i, j);
		else
			unread[nu++] = (struct tunread){ .from = i, .to = j, .worst = worst };
	}
	if (!err && nu) {
		qsort(unread, nu, sizeof(*unread), tunread_cmp);
		printf("\nCgroups nobody read: the largest visible error of a page line, what a reader\n"
		       "would have got at the worst moment\n");
		for (i = 0; i < nu && i < TABLE_UNREAD; i++)
			table_unread(&ts, &unread[i]);
		if (nu > TABLE_UNREAD)
			printf("  ... %zu more (--format csv, or --cgroup PATH)\n", nu - TABLE_UNREAD);
	}
	for (i = 0; i < ts.nr; i++) {
		free(ts.rows[i].cgroup);
		free(ts.rows[i].policy);
		free(ts.rows[i].item);
		if (ts.labels)
			free(ts.labels[i]);
	}
	free(ts.labels);
	free(ts.rows);
	free(unread);
	return err;
}

/*
 * The host a trace was recorded on: meta host (memcg-capture), else the node
 * name in the trace's own uname (trace-cmd import: "Linux NAME 6.18 ..."),
 * else synth:SCENARIO, else the file's name.  malloc'd.
 */
static char *report_host(struct db *db, const char *file)
{
	const char *base = strrchr(file, '/');
	char *v = NULL, *name = NULL;

	if (db_meta_get(db, "host", &v) >= 0 && v && *v)
		return v;
	free(v);
	v = NULL;
	if (db_meta_get(db, "uname", &v) >= 0 && v && sscanf(v, "%*s %ms", &name) == 1) {
		free(v);
		return name;
	}
	free(v);
	v = NULL;
	if (db_meta_get(db, "source", &v) >= 0 && v && !strncmp(v, "synth:", 6))
		return v;
	free(v);
	return strdup(base ? base + 1 : file);
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

static struct db_lag_filter report_filter(const struct report_opts *o)
{
	return (struct db_lag_filter){
		.runs = o->nr_runs ? o->runs : NULL, .nr_runs = o->nr_runs, .cgroup = o->cgroup,
		.worst_only = o->worst,
	};
}

struct grid_ctx {
	int64_t	batch, online;
};

static int grid_row(const struct db_lag_row *row, void *ctx)
{
	const struct grid_ctx *g = ctx;

	return row->batch_size != g->batch || row->nr_cpus != g->online;
}

/* 1 if some row reported is of a run at another batch or CPU count than the trace's. */
static int report_grid(struct db *db, const struct report_opts *o)
{
	struct db_lag_filter f = report_filter(o);
	struct grid_ctx g;

	cli_trace_own(db, &g.batch, &g.online);
	return db_lag_foreach(db, &f, grid_row, &g);
}

static int report_text(struct db *db, const struct report_opts *o, const char *host, bool first,
		       struct out_ctx *oc)
{
	int64_t page_size = 4096, online, batch;
	struct db_lag_filter f = report_filter(o);
	struct report_cost_opts co = {
		.calibration = o->calibration, .runs = o->nr_runs ? o->runs : NULL,
		.nr_runs = o->nr_runs,
	};
	int i, grid;

	db_meta_get_int(db, "page_size", &page_size);
	cli_trace_own(db, &batch, &online);
	oc->host = o->nr_files > 1 ? host : NULL;
	switch (o->format) {
	case FMT_CSV:
		if (o->cost)
			return report_cost_csv(stdout, db, &co, oc->host, first);
		if (first) {
			printf("%s", oc->host ? "host," : "");
			for (i = 0; i < DB_LAG_NR_COLS; i++)
				printf("%s%s", i ? "," : "", db_lag_col_name(i));
			printf("%s\n", oc->grid ? ",batch_size,nr_cpus" : "");
		}
		return db_lag_foreach(db, &f, csv_row, oc);
	case FMT_JSON:
		if (o->cost)
			return report_cost_json(stdout, db, &co, oc->host, &oc->n);
		return db_lag_foreach(db, &f, json_row, oc);
	default:
		if (oc->host)
			printf("%s== host %s (%s)\n", first ? "" : "\n", host, o->file);
		if (!o->cost) {
			grid = report_grid(db, o);
			if (grid < 0)
				return grid;
			grid = report_table(db, &f, page_size, online, batch, grid);
			if (grid)
				return grid;
		}
		return report_cost_table(stdout, db, &co);
	}
}

/* A failure while writing: the sentence of the database that refused a value, if one did. */
static int report_fail(const struct html_host *hosts, int nr, int err, const char *file)
{
	int i;

	for (i = 0; i < nr; i++)
		if (*db_why(hosts[i].db))
			return cli_fail_db(hosts[i].db, err, hosts[i].file);
	return cli_fail(err, "%s", file);
}

/*
 * A file report -o may replace without --force: one that begins as a report
 * of any format begins (a table, the cost table, several hosts' table, CSV
 * of either, JSON, the HTML page).
 */
static bool report_is_ours(const char *path)
{
	static const char *const heads[] = {
		"Lag report: ", "\nCost in time of each policy", "== host ",
		"policy,run_id,", "host,policy,run_id,", "run_id,policy,", "host,run_id,policy,",
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

int cmd_report(int argc, char **argv)
{
	struct argp argp = { report_options, report_parse, "FILE...", report_doc, NULL,
			     report_help_filter, NULL };
	struct report_opts o = { .format = FMT_TABLE };
	struct html_host *hosts = NULL;
	const char *inputs[REPORT_MAX_FILES + 2];
	struct outfile_policy pol;
	struct out_ctx oc = { 0 };
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
	hosts = calloc((size_t)o.nr_files, sizeof(*hosts));
	if (!hosts)
		return cli_fail(-ENOMEM, "report");
	for (nr = 0; nr < o.nr_files; nr++) {
		hosts[nr].db = report_open(&o, o.files[nr], &rc);
		if (!hosts[nr].db)
			goto out;
		hosts[nr].file = o.files[nr];
		hosts[nr].host = report_host(hosts[nr].db, o.files[nr]);
		if (!hosts[nr].host) {
			nr++;
			rc = cli_fail(-ENOMEM, "report");
			goto out;
		}
	}
	/* every database checked before the output is created */
	if (o.output) {
		rc = cli_outfile_begin("report", &of, o.output, &pol);
		if (rc)
			goto out;
		out = o.format == FMT_HTML ? fopen(of.tmp, "w") : freopen(of.tmp, "w", stdout);
		if (!out) {
			rc = cli_fail(-errno, "%s", o.output);
			outfile_abort(&of);
			goto out;
		}
	}
	if (o.format == FMT_HTML) {
		struct html_opts ho = {
			.runs = o.nr_runs ? o.runs : NULL, .nr_runs = o.nr_runs, .cgroup = o.cgroup,
			.calibration = o.calibration,
		};

		err = html_report_write(out, hosts, nr, &ho);
	} else {
		/* CSV and JSON: one set of columns for every host */
		for (i = 0; i < nr && !err && o.format != FMT_TABLE && !oc.grid; i++) {
			o.file = hosts[i].file;
			err = report_grid(hosts[i].db, &o);
			oc.grid = err > 0;
			err = err > 0 ? 0 : err;
		}
		if (o.format == FMT_JSON)
			printf("[");
		for (i = 0; i < nr && !err; i++) {
			o.file = hosts[i].file;
			err = report_text(hosts[i].db, &o, hosts[i].host, i == 0, &oc);
		}
		if (o.format == FMT_JSON)
			printf("]\n");
	}
	if (err) {
		rc = report_fail(hosts, nr, err, o.file);
	} else if (o.output ? fclose(out) : fflush(stdout)) {
		rc = cli_fail(-errno, "writing %s", o.output ? o.output : "the report");
		out = NULL;
	} else {
		out = NULL;
		if (o.output)
			rc = cli_outfile_commit("report", &of);
	}
	if (rc && o.output) {
		if (out)
			fclose(out);
		outfile_abort(&of);
	}
out:
	for (i = 0; i < nr; i++) {
		if (hosts[i].db)
			db_close(hosts[i].db);
		free((char *)hosts[i].host);
	}
	free(hosts);
	return rc;
}
