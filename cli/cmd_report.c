// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_report.c - memcg-replay report FILE: how far each cgroup's memory.stat
 * lines were off under each policy, one row per (run, cgroup, line), from the
 * lag_report view (the latest replay run of each policy and flush model),
 * lag_report_all for --run, cgroup_lag_report for --worst.  Table for people
 * (policies side by side), CSV and JSON for programs, with the view's column
 * names.  The rows come from db/results.h; no SQL here.
 */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "results.h"
#include "sim.h"
#include "trace_check.h"

#define REPORT_MAX_RUNS		64
#define REPORT_TABLE_LINES	8	/* lines of memory.stat per cgroup in the table */

enum report_format { FMT_TABLE, FMT_CSV, FMT_JSON };

struct report_opts {
	const char		*file;
	const char		*cgroup;
	enum report_format	format;
	int64_t			runs[REPORT_MAX_RUNS];
	int			nr_runs;
	bool			no_check;
	bool			worst;
};

static const char report_doc[] =
	"Print the lag report: how far each cgroup's memory.stat lines were off under each "
	"policy, per line in the line's own unit (pages shown as memory, events as counts).  "
	"By default the latest replay run of each policy and flush model; --run picks runs.  "
	"The same rows are in SQL: SELECT * FROM lag_report (and cgroup_lag_report for --worst)."
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
	"enumerator name, or kind:item), unit ('pages' or 'events'), reads,\n"
	"stale_reads, max_read_error, p99_read_error, mean_read_error,\n"
	"max_visible_error, mean_visible_error (time-weighted), max_error_age_ms,\n"
	"stranded_ms, stranded_episodes, max_pending.  Errors are absolute values\n"
	"in the item's unit; reads, stale_reads, stranded_* and max_pending are\n"
	"the cgroup's, repeated on each of its lines.  A line whose error was 0\n"
	"throughout has no row.\n"
	"\n"
	"Exit codes: 0 ok, 1 unexpected failure, 2 bad command line, 3 FILE missing or "
	"unreadable, 4 not an SQLite file, 5 not a memcg-replay database, 6 newer schema, "
	"7 missing table, 8 timestamps go backwards within one CPU, 9 an event names a CPU "
	"beyond the possible CPUs, 17 unknown --run or --cgroup, 18 no replay runs yet, "
	"20 results written by an older memcg-replay (replay the file again).";

static const struct argp_option report_options[] = {
	{ "run", 'r', "ID[,ID...]", 0, "report these runs (repeatable; default: the latest replay "
	  "run of each policy and flush model)", 0 },
	{ "format", 'f', "FMT", 0, "table (default), csv or json", 0 },
	{ "cgroup", 'c', "PATH", 0, "only this cgroup (its path, e.g. / or /leaf)", 0 },
	{ "worst", 'w', NULL, 0, "one row per (run, cgroup): its worst line (cgroup_lag_report)", 0 },
	{ "no-check", 'n', NULL, 0, "do not re-read the events to check the trace (fast on huge traces)", 0 },
	{ 0 }
};

static void parse_runs(struct report_opts *o, char *arg, struct argp_state *state)
{
	char *tok, *save = NULL, *end;
	long long v;

	for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		errno = 0;
		v = strtoll(tok, &end, 10);
		if (errno || end == tok || *end || v < 1)
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
		else
			argp_error(state, "--format: '%s' is not table, csv or json", arg);
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
	default:
		return cli_arg_file(key, arg, state, &o->file);
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

/* RFC 4180: quote a field that holds a comma, quote or line break. */
static void csv_field(const char *s)
{
	if (!s)
		return;
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, stdout);
		return;
	}
	putchar('"');
	for (; *s; s++) {
		if (*s == '"')
			putchar('"');
		putchar(*s);
	}
	putchar('"');
}

static bool col_is_text(int c)
{
	return c == DB_LAG_POLICY || c == DB_LAG_FLUSH_MODEL || c == DB_LAG_CGROUP ||
	       c == DB_LAG_ITEM || c == DB_LAG_UNIT;
}

static int csv_row(const struct db_lag_row *row, void *ctx)
{
	int i;

	for (i = 0; i < DB_LAG_NR_COLS; i++) {
		if (i)
			putchar(',');
		csv_field(row->text[i]);
	}
	putchar('\n');
	return 0;
}

static int json_row(const struct db_lag_row *row, void *ctx)
{
	unsigned long *n = ctx;
	int i;

	printf("%s{", (*n)++ ? ",\n " : "");
	for (i = 0; i < DB_LAG_NR_COLS; i++) {
		printf("%s\"%s\":", i ? "," : "", db_lag_col_name(i));
		if (!row->text[i])
			fputs("null", stdout);
		else if (col_is_text(i))
			db_json_string(stdout, row->text[i]);
		else
			fputs(row->text[i], stdout);
	}
	putchar('}');
	return 0;
}

/* The table: rows of one cgroup gathered, then printed policies side by side. */
struct trow {
	char		*label;		/* policy, or policy#run when a policy repeats */
	char		*item;
	bool		events;
	int		rank;		/* the policy's place in the policy table */
	uint64_t	run_id;
	uint64_t	reads, stale_reads, stranded_episodes, max_pending;
	uint64_t	max_read, p99_read, max_visible;
	double		mean_read, mean_visible, age_ms, stranded_ms;
};

struct tstate {
	int64_t		page_size;
	int64_t		runs_seen[REPORT_MAX_RUNS];
	char		*runs_policy[REPORT_MAX_RUNS];
	int		nr_runs_seen;
	uint64_t	cgroup_id;
	char		*cgroup;
	int		level;
	struct trow	*rows;
	size_t		nr, cap;
	int		err;
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

/* Order of the runs as first met: the policies' columns stay in one order. */
static int run_index(struct tstate *ts, int64_t run_id, const char *policy)
{
	int i;

	for (i = 0; i < ts->nr_runs_seen; i++)
		if (ts->runs_seen[i] == run_id)
			return i;
	if (ts->nr_runs_seen == REPORT_MAX_RUNS)
		return REPORT_MAX_RUNS - 1;
	ts->runs_seen[ts->nr_runs_seen] = run_id;
	ts->runs_policy[ts->nr_runs_seen] = strdup(policy);
	return ts->nr_runs_seen++;
}

static char *run_label(struct tstate *ts, int64_t run_id, const char *policy)
{
	char *s = NULL;
	int i, same = 0;

	for (i = 0; i < ts->nr_runs_seen; i++)
		same += ts->runs_policy[i] && !strcmp(ts->runs_policy[i], policy);
	if (same > 1) {
		if (asprintf(&s, "%s#%" PRId64, policy, run_id) < 0)
			return NULL;
		return s;
	}
	return strdup(policy);
}

/* Policies in the order of their table (break, continue, legacy), then runs. */
static int trow_cmp_run(const void *a, const void *b)
{
	const struct trow *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank - y->rank;
	return (x->run_id > y->run_id) - (x->run_id < y->run_id);
}

static int policy_rank(const char *name)
{
	const struct sim_policy *pol;
	int i;

	for (i = 0; (pol = sim_policy_at((size_t)i)); i++)
		if (!strcmp(pol->name, name))
			return i;
	return i;
}

static void table_cgroup_head(struct tstate *ts)
{
	printf("%s (id %" PRIu64 ", level %d): %" PRIu64 " reads\n", ts->cgroup, ts->cgroup_id,
	       ts->level, ts->nr ? ts->rows[0].reads : 0);
}

/* One line of memory.stat, every policy in one sentence, then their details. */
static void table_item(struct tstate *ts, struct trow *r, size_t n)
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
		printf("      %-10s read p99 %s, mean %s; visible max %s, mean %s; oldest missed %s;"
		       " max pending %" PRIu64 "\n", r[i].label,
		       val_str(a, sizeof(a), &r[i], (double)r[i].p99_read, ts->page_size),
		       val_str(b, sizeof(b), &r[i], r[i].mean_read, ts->page_size),
		       val_str(c, sizeof(c), &r[i], (double)r[i].max_visible, ts->page_size),
		       val_str(d, sizeof(d), &r[i], r[i].mean_visible, ts->page_size),
		       cli_ms_str(e, sizeof(e), r[i].age_ms), r[i].max_pending);
}

struct titem {
	struct trow	*r;
	size_t		n;
	double		key;	/* worst over the policies, pages first */
};

static int titem_cmp(const void *a, const void *b)
{
	const struct titem *x = a, *y = b;

	if (x->r->events != y->r->events)
		return x->r->events ? 1 : -1;
	return x->key < y->key ? 1 : x->key > y->key ? -1 : strcmp(x->r->item, y->r->item);
}

static void table_flush_cgroup(struct tstate *ts)
{
	struct titem *it;
	size_t i, j, n = 0, shown = 0, quiet = 0;

	if (!ts->nr)
		return;
	it = calloc(ts->nr, sizeof(*it));
	if (!it) {
		ts->err = -ENOMEM;
		return;
	}
	/* rows arrive by item then policy: runs of one item are adjacent */
	for (i = 0; i < ts->nr; i = j) {
		double key = 0;

		for (j = i; j < ts->nr && !strcmp(ts->rows[j].item, ts->rows[i].item); j++) {
			double v = (double)ts->rows[j].max_read + 1e-9 * (double)ts->rows[j].max_visible;

			if (v > key)
				key = v;
		}
		it[n++] = (struct titem){ .r = &ts->rows[i], .n = j - i, .key = key };
	}
	qsort(it, n, sizeof(*it), titem_cmp);
	table_cgroup_head(ts);
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
		printf("  %zu line%s never wrong at a read nor while visible\n", quiet,
		       quiet == 1 ? "" : "s");
	free(it);
	for (i = 0; i < ts->nr; i++) {
		free(ts->rows[i].label);
		free(ts->rows[i].item);
	}
	ts->nr = 0;
}

static int table_row(const struct db_lag_row *row, void *ctx)
{
	struct tstate *ts = ctx;
	struct trow *t;

	if (ts->cgroup && (ts->cgroup_id != row->cgroup_id || strcmp(ts->cgroup, row->cgroup))) {
		table_flush_cgroup(ts);
		printf("\n");
	}
	if (ts->err)
		return ts->err;
	if (!ts->cgroup || ts->cgroup_id != row->cgroup_id) {
		free(ts->cgroup);
		ts->cgroup = strdup(row->cgroup);
		ts->cgroup_id = row->cgroup_id;
		ts->level = row->level;
		if (!ts->cgroup)
			return -ENOMEM;
	}
	if (ts->nr == ts->cap) {
		size_t ncap = ts->cap ? ts->cap * 2 : 32;
		struct trow *n = realloc(ts->rows, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		ts->rows = n;
		ts->cap = ncap;
	}
	run_index(ts, row->run_id, row->policy);
	t = &ts->rows[ts->nr];
	*t = (struct trow){
		.label = run_label(ts, row->run_id, row->policy), .item = strdup(row->item),
		.events = !strcmp(row->unit, "events"), .rank = policy_rank(row->policy),
		.run_id = (uint64_t)row->run_id,
		.reads = row->reads, .stale_reads = row->stale_reads,
		.stranded_episodes = row->stranded_episodes, .max_pending = row->max_pending,
		.max_read = row->max_read_error, .p99_read = row->p99_read_error,
		.max_visible = row->max_visible_error, .mean_read = row->mean_read_error,
		.mean_visible = row->mean_visible_error, .age_ms = row->max_error_age_ms,
		.stranded_ms = row->stranded_ms,
	};
	if (!t->label || !t->item) {
		free(t->label);
		free(t->item);
		return -ENOMEM;
	}
	ts->nr++;
	return 0;
}

static void table_header(int64_t page_size, int64_t online, int64_t batch)
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
	       "  Page lines in bytes (page %" PRId64 " B); (events) lines are counts.\n\n",
	       batch * online, batch - 1, online, batch * online + (batch - 1) * online, page_size);
}

static int report_table(struct db *db, const struct db_lag_filter *f, int64_t page_size,
			int64_t online, int64_t batch)
{
	struct tstate ts = { .page_size = page_size };
	int err, i;

	table_header(page_size, online, batch);
	err = db_lag_foreach(db, f, table_row, &ts);
	if (!err) {
		table_flush_cgroup(&ts);
		err = ts.err;
	}
	for (i = 0; i < (int)ts.nr; i++) {
		free(ts.rows[i].label);
		free(ts.rows[i].item);
	}
	for (i = 0; i < ts.nr_runs_seen; i++)
		free(ts.runs_policy[i]);
	free(ts.rows);
	free(ts.cgroup);
	return err;
}

int cmd_report(int argc, char **argv)
{
	struct argp argp = { report_options, report_parse, "FILE", report_doc, NULL, NULL, NULL };
	struct report_opts o = { .format = FMT_TABLE };
	int64_t page_size = 4096, online = 0, batch = 64, n;
	struct db_lag_filter f;
	unsigned long nr = 0;
	struct db *db;
	int i, err, rc = MCR_EXIT_OK;

	if (argp_parse(&argp, argc, argv, 0, NULL, &o))
		return MCR_EXIT_USAGE;
	db = cli_open_db(o.file, false, &rc);
	if (!db)
		return rc;
	/* results of a damaged trace are refused as replay would refuse the trace */
	n = o.no_check ? 0 : cli_trace_scan(db, NULL);
	if (n < 0) {
		rc = cli_fail((int)n, "%s", o.file);
		goto out;
	}
	rc = report_check(db, &o);
	if (rc)
		goto out;
	db_meta_get_int(db, "page_size", &page_size);
	db_meta_get_int(db, "nr_cpus_online", &online);
	db_meta_get_int(db, "batch_size", &batch);
	f = (struct db_lag_filter){
		.runs = o.nr_runs ? o.runs : NULL, .nr_runs = o.nr_runs, .cgroup = o.cgroup,
		.worst_only = o.worst,
	};
	switch (o.format) {
	case FMT_CSV:
		for (i = 0; i < DB_LAG_NR_COLS; i++)
			printf("%s%s", i ? "," : "", db_lag_col_name(i));
		printf("\n");
		err = db_lag_foreach(db, &f, csv_row, NULL);
		break;
	case FMT_JSON:
		printf("[");
		err = db_lag_foreach(db, &f, json_row, &nr);
		printf("]\n");
		break;
	default:
		err = report_table(db, &f, page_size, online, batch);
	}
	if (err)
		rc = cli_fail(err, "%s", o.file);
	else if (fflush(stdout))
		rc = cli_fail(-errno, "writing the report");
out:
	db_close(db);
	return rc;
}
