// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_report.c - memcg-replay report FILE: the lag report, policies side by
 * side, one row per (run, cgroup), from the lag_report view (the latest
 * replay run of each policy and flush model) or lag_report_all for --run.
 * Table for people, CSV and JSON for programs; the JSON is built by SQLite's
 * json functions so every path string comes out valid.
 */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "trace_check.h"

#define REPORT_MAX_RUNS	64

enum report_format { FMT_TABLE, FMT_CSV, FMT_JSON };

struct report_opts {
	const char		*file;
	const char		*cgroup;
	enum report_format	format;
	int64_t			runs[REPORT_MAX_RUNS];
	int			nr_runs;
	bool			no_check;
};

/* The columns, in output order; the CSV header and JSON keys are these names. */
static const char report_cols[] =
	"policy, run_id, flush_model, cgroup, cgroup_id, level, max_missing_pages,"
	" p50_missing_pages, p99_missing_pages, mean_missing_pages, max_age_ms, reads,"
	" stale_reads, stale_max_pages, stuck_ms";

enum {
	COL_POLICY, COL_RUN, COL_MODEL, COL_CGROUP, COL_ID, COL_LEVEL, COL_MAX, COL_P50, COL_P99,
	COL_MEAN, COL_AGE, COL_READS, COL_STALE, COL_STALE_MAX, COL_STUCK, NR_COLS
};

static const char report_doc[] =
	"Print the lag report: for every cgroup, each policy's staleness side by side "
	"(missing pages: max, p99, time-weighted mean; age of the oldest unflushed update; "
	"stale reads, i.e. reads that skipped flushing while missing > TH; stuck time).  "
	"By default the latest replay run of each policy; --run picks runs.  "
	"The same rows are in SQL: SELECT * FROM lag_report."
	"\v"
	"CSV columns: policy,run_id,flush_model,cgroup,cgroup_id,level,max_missing_pages,"
	"p50_missing_pages,p99_missing_pages,mean_missing_pages,max_age_ms,reads,stale_reads,"
	"stale_max_pages,stuck_ms (cgroup is its path, '#<id>' when unknown).  JSON: an array "
	"of objects with the same keys.";

static char *report_help_filter(int key, const char *text, void *input)
{
	return cli_exit_help_filter(key, text, CLI_REPORT);
}

static const struct argp_option report_options[] = {
	{ "run", 'r', "ID[,ID...]", 0, "report these runs (repeatable; default: the latest replay "
	  "run of each policy and flush model)", 0 },
	{ "format", 'f', "FMT", 0, "table (default), csv or json", 0 },
	{ "cgroup", 'c', "PATH", 0, "only this cgroup (its path, e.g. / or /leaf)", 0 },
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
	case 'n':
		o->no_check = true;
		return 0;
	default:
		return cli_arg_file(key, arg, state, &o->file);
	}
}

/* 1 if @sql with one bound value yields a row, 0 if not, negative on error. */
static int exists(struct db *db, const char *sql, const char *text, int64_t num)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db_sqlite(db), sql, -1, &st, NULL) != SQLITE_OK)
		return -MCR_E_SCHEMA;
	if (text)
		sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
	else if (sqlite3_bind_parameter_count(st))
		sqlite3_bind_int64(st, 1, num);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -EIO;
}

/* Refuse what cannot be reported, with the reason; returns an exit code. */
static int report_check(struct db *db, const struct report_opts *o)
{
	int i, r;

	r = exists(db, "SELECT 1 FROM runs WHERE kind = 'replay'", NULL, 0);
	if (r <= 0)
		return r < 0 ? cli_fail(r, "%s", o->file) : cli_fail(-MCR_E_NO_RUNS, "%s", o->file);
	for (i = 0; i < o->nr_runs; i++) {
		r = exists(db, "SELECT 1 FROM runs WHERE kind = 'replay' AND run_id = ?", NULL, o->runs[i]);
		if (r < 0)
			return cli_fail(r, "%s", o->file);
		if (!r) {
			cli_msg("%s: no replay run %" PRId64 " (see 'memcg-replay info %s')", o->file,
				o->runs[i], o->file);
			return MCR_EXIT_BAD_INPUT;
		}
	}
	if (o->cgroup) {
		r = exists(db, "SELECT 1 FROM cgroups WHERE path = ?", o->cgroup, 0);
		if (r < 0)
			return cli_fail(r, "%s", o->file);
		if (!r) {
			cli_msg("%s: no cgroup '%s' in this trace", o->file, o->cgroup);
			return MCR_EXIT_BAD_INPUT;
		}
	}
	return MCR_EXIT_OK;
}

/* SELECT <cols> FROM the right view, filtered, in tree order then policy. */
static char *report_sql(const struct report_opts *o, const char *cols)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int i;

	if (!f)
		return NULL;
	fprintf(f, "SELECT %s FROM %s WHERE 1", cols, o->nr_runs ? "lag_report_all" : "lag_report");
	if (o->nr_runs) {
		fprintf(f, " AND run_id IN (");
		for (i = 0; i < o->nr_runs; i++)
			fprintf(f, "%s%" PRId64, i ? "," : "", o->runs[i]);
		fprintf(f, ")");
	}
	if (o->cgroup)
		fprintf(f, " AND cgroup = ?1");
	fprintf(f, " ORDER BY level IS NULL, level, cgroup, policy, run_id");
	fclose(f);
	return buf;
}

static int report_prepare(struct db *db, const struct report_opts *o, const char *sql,
			  sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(db_sqlite(db), sql, -1, st, NULL) != SQLITE_OK)
		return -MCR_E_SCHEMA;
	if (o->cgroup)
		sqlite3_bind_text(*st, 1, o->cgroup, -1, SQLITE_STATIC);
	return 0;
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

static int report_csv(sqlite3_stmt *st)
{
	const char *p;
	int i, rc;

	for (p = report_cols; *p; p++)
		if (*p != ' ')
			putchar(*p);
	putchar('\n');
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (i = 0; i < NR_COLS; i++) {
			if (i)
				putchar(',');
			csv_field((const char *)sqlite3_column_text(st, i));
		}
		putchar('\n');
	}
	return rc == SQLITE_DONE ? 0 : -EIO;
}

static int report_json(struct db *db, const struct report_opts *o)
{
	static const char obj[] =
		"json_object('policy', policy, 'run_id', run_id, 'flush_model', flush_model,"
		" 'cgroup', cgroup, 'cgroup_id', cgroup_id, 'level', level,"
		" 'max_missing_pages', max_missing_pages, 'p50_missing_pages', p50_missing_pages,"
		" 'p99_missing_pages', p99_missing_pages, 'mean_missing_pages', mean_missing_pages,"
		" 'max_age_ms', max_age_ms, 'reads', reads, 'stale_reads', stale_reads,"
		" 'stale_max_pages', stale_max_pages, 'stuck_ms', stuck_ms) AS o";
	char *inner = report_sql(o, obj), *sql = NULL;
	sqlite3_stmt *st = NULL;
	int err = -ENOMEM;

	if (inner && asprintf(&sql, "SELECT json_group_array(json(o)) FROM (%s)", inner) < 0)
		sql = NULL;
	if (sql)
		err = report_prepare(db, o, sql, &st);
	if (!err && sqlite3_step(st) == SQLITE_ROW)
		printf("%s\n", sqlite3_column_text(st, 0));
	else if (!err)
		err = -EIO;
	sqlite3_finalize(st);
	free(sql);
	free(inner);
	return err;
}

/* "523105 (2043.4 MiB)": pages, and what they are in memory. */
static char *pages_str(sqlite3_stmt *st, int col, int64_t page_size)
{
	char *s = NULL;
	double p;

	if (sqlite3_column_type(st, col) == SQLITE_NULL)
		return strdup("-");
	p = sqlite3_column_double(st, col);
	if (asprintf(&s, "%.0f (%.1f MiB)", p, p * (double)page_size / (1 << 20)) < 0)
		return NULL;
	return s;
}

static char *num_str(sqlite3_stmt *st, int col, int decimals)
{
	char *s = NULL;

	if (sqlite3_column_type(st, col) == SQLITE_NULL)
		return strdup("-");
	if (asprintf(&s, "%.*f", decimals, sqlite3_column_double(st, col)) < 0)
		return NULL;
	return s;
}

#define TABLE_COLS	10

struct table {
	char	**cells;	/* rows x TABLE_COLS */
	size_t	rows;
	size_t	cap;
	int	width[TABLE_COLS];
};

static int table_add(struct table *t, char **row)
{
	int i, w;

	if (t->rows == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		char **c = realloc(t->cells, cap * TABLE_COLS * sizeof(*c));

		if (!c)
			return -ENOMEM;
		t->cells = c;
		t->cap = cap;
	}
	for (i = 0; i < TABLE_COLS; i++) {
		if (!row[i])
			return -ENOMEM;
		t->cells[t->rows * TABLE_COLS + i] = row[i];
		w = (int)strlen(row[i]);
		if (w > t->width[i])
			t->width[i] = w;
	}
	t->rows++;
	return 0;
}

static void table_print(const struct table *t)
{
	size_t r;
	int i;

	for (r = 0; r < t->rows; r++) {
		for (i = 0; i < TABLE_COLS; i++) {
			const char *c = t->cells[r * TABLE_COLS + i];

			/* text left, numbers right */
			if (i < 3)
				printf("%-*s  ", t->width[i], c);
			else
				printf("%*s%s", t->width[i], c, i + 1 < TABLE_COLS ? "  " : "\n");
		}
		if (r == 0) {
			for (i = 0; i < TABLE_COLS; i++)
				printf("%.*s%s", t->width[i],
				       "------------------------------------------------------------",
				       i + 1 < TABLE_COLS ? "  " : "\n");
		}
	}
}

static int report_table(sqlite3_stmt *st, int64_t page_size, int64_t th)
{
	static const char *const head[TABLE_COLS] = {
		"cgroup", "policy", "run/model", "max missing", "p99 missing", "mean missing",
		"max age ms", "reads", "stale reads", "stuck ms",
	};
	struct table t = { 0 };
	char *row[TABLE_COLS];
	size_t i;
	int rc, err = 0;

	for (i = 0; i < TABLE_COLS; i++)
		row[i] = strdup(head[i]);
	err = table_add(&t, row);
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		row[0] = strdup((const char *)sqlite3_column_text(st, COL_CGROUP));
		row[1] = strdup((const char *)sqlite3_column_text(st, COL_POLICY));
		if (asprintf(&row[2], "%lld/%s", sqlite3_column_int64(st, COL_RUN),
			     sqlite3_column_type(st, COL_MODEL) == SQLITE_NULL ? "-" :
			     (const char *)sqlite3_column_text(st, COL_MODEL)) < 0)
			row[2] = NULL;
		row[3] = pages_str(st, COL_MAX, page_size);
		row[4] = pages_str(st, COL_P99, page_size);
		row[5] = pages_str(st, COL_MEAN, page_size);
		row[6] = num_str(st, COL_AGE, 1);
		row[7] = num_str(st, COL_READS, 0);
		row[8] = num_str(st, COL_STALE, 0);
		row[9] = num_str(st, COL_STUCK, 1);
		err = table_add(&t, row);
	}
	if (!err && rc != SQLITE_DONE)
		err = -EIO;
	if (!err) {
		printf("Lag report: pages each cgroup's memory.stat was missing (TH = %" PRId64
		       " pages; page %" PRId64 " bytes)\n\n", th, page_size);
		table_print(&t);
	}
	for (i = 0; i < t.rows * TABLE_COLS; i++)
		free(t.cells[i]);
	free(t.cells);
	return err;
}

int cmd_report(int argc, char **argv)
{
	struct argp argp = { report_options, report_parse, "FILE", report_doc, NULL,
			     report_help_filter, NULL };
	struct report_opts o = { .format = FMT_TABLE };
	int64_t page_size = 4096, online = 0, batch = 64, n;
	sqlite3_stmt *st = NULL;
	struct db *db;
	char *sql = NULL;
	int err, rc = MCR_EXIT_OK;

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
	if (o.format == FMT_JSON) {
		err = report_json(db, &o);
	} else {
		sql = report_sql(&o, report_cols);
		err = sql ? report_prepare(db, &o, sql, &st) : -ENOMEM;
		if (!err)
			err = o.format == FMT_CSV ? report_csv(st) : report_table(st, page_size, batch * online);
	}
	if (err)
		rc = cli_fail(err, "%s", o.file);
	else if (fflush(stdout))
		rc = cli_fail(-errno, "writing the report");
out:
	sqlite3_finalize(st);
	free(sql);
	db_close(db);
	return rc;
}
