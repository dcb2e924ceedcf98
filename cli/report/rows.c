// SPDX-License-Identifier: GPL-2.0
/*
 * rows.c - the report's CSV and JSON ops (model.h): each line with the
 * lag_report view's column names and values as SQLite prints them, or with
 * --cost each run's cost with cost_report's; the memory.stat lines of each
 * item (v1_line, v2_line) after the view's columns; first the columns host and
 * file (the database as named on the command line) with several databases,
 * then start_ns (meta capture_start_ns) when one of them is a file of a
 * memcg-capture --rotate series, and batch_size, nr_cpus last when some host
 * is a grid.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "model.h"

static const char *const cost_cols[] = {
	"run_id", "policy", "flush_model", "updates", "walk_steps", "pcpu_adds", "atomic_adds",
	"dropped_batches", "flushable_checks", "atomic_shared_fraction", "est_ns_per_update",
	"est_ns_per_update_max", "est_cpu_s_per_s", "reads", "stale_reads", "stranded_cgroups",
	"max_read_error_pages", "max_read_error_events", "calibration",
};
#define COST_NR_COLS	(sizeof(cost_cols) / sizeof(cost_cols[0]))

/* the host column, with several databases or a file of a --rotate series */
static const char *host_col(const struct report_out *o, const struct report_host *h)
{
	/*
	 * A file of a --rotate series has them even alone: a report of the
	 * series (the service's report.csv) keeps one shape from its first file.
	 */
	return o->m->nr_hosts > 1 || o->m->rotation ? h->host : NULL;
}

static bool col_is_text(int c)
{
	return c == DB_LAG_POLICY || c == DB_LAG_FLUSH_MODEL || c == DB_LAG_CGROUP ||
	       c == DB_LAG_ITEM || c == DB_LAG_UNIT;
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

/* Column @i of row @c as text into @buf; NULL for no value (SQL NULL). */
static const char *cost_cell(const struct report_costs *v, const struct report_cost *c, size_t i,
			     char *buf, size_t len)
{
	double x;

	switch (i) {
	case 0: snprintf(buf, len, "%" PRId64, c->r.run_id); return buf;
	case 1: return c->r.policy;
	case 2: return c->r.flush_model;
	case 3: snprintf(buf, len, "%" PRIu64, c->r.updates); return buf;
	case 4: snprintf(buf, len, "%" PRIu64, c->r.walk_steps); return buf;
	case 5: snprintf(buf, len, "%" PRIu64, c->r.pcpu_adds); return buf;
	case 6: snprintf(buf, len, "%" PRIu64, c->r.atomic_adds); return buf;
	case 7: snprintf(buf, len, "%" PRIu64, c->r.dropped_batches); return buf;
	case 8: snprintf(buf, len, "%" PRIu64, c->r.flushable_checks); return buf;
	case 13: snprintf(buf, len, "%" PRIu64, c->r.reads); return buf;
	case 14: snprintf(buf, len, "%" PRIu64, c->r.stale_reads); return buf;
	case 15: snprintf(buf, len, "%" PRIu64, c->r.stranded_cgroups); return buf;
	case 16:
		if (c->r.max_read_error_pages < 0)
			return NULL;
		snprintf(buf, len, "%" PRId64, c->r.max_read_error_pages);
		return buf;
	case 17:
		if (c->r.max_read_error_events < 0)
			return NULL;
		snprintf(buf, len, "%" PRId64, c->r.max_read_error_events);
		return buf;
	case 18: return v->have_cal ? v->source : NULL;
	}
	if (!v->have_cal)
		return NULL;
	switch (i) {
	case 9: x = v->basis.shared_fraction; break;
	case 10: x = c->e.ns_per_update; break;
	case 11: x = c->e.ns_per_update_max; break;
	case 12: x = c->e.cpu_s_per_s; break;
	default: return NULL;
	}
	/* the inputs are checked (finite figures, counts): inf or nan is a bug, not printed */
	if (!isfinite(x))
		return NULL;
	snprintf(buf, len, "%.12g", x);
	return buf;
}

static bool cost_col_text(size_t i)
{
	return i == 1 || i == 2 || i == 18;
}

/*
 * memory.stat as printed, with validate's checks of logged reads: of the
 * line's cgroup and item, the reads compared, those within 2 units of the
 * simulation and the worst error the kernel printed (printed - truth, in
 * memory.stat's unit: bytes, or a count); "" where none.
 */
#define PRINTED_COLS	"printed_reads,printed_within2,printed_max_error"

static void printed_cells(const struct report_host *h, const struct report_line *l,
			  char a[3][32])
{
	const struct report_printed *p = report_line_printed(h, l);

	if (!p) {
		a[0][0] = a[1][0] = a[2][0] = '\0';
		return;
	}
	snprintf(a[0], 32, "%" PRIu64, p->pairs);
	snprintf(a[1], 32, "%" PRIu64, p->within2);
	snprintf(a[2], 32, "%" PRId64, p->printed_error);
}

/* ---- CSV ---- */

/* The host and file columns' names, with several databases, and start_ns with a --rotate file. */
static const char *csv_host_cols(const struct report_out *o, const char *host)
{
	return !host ? "" : o->m->rotation ? "host,file,start_ns," : "host,file,";
}

/* Their fields. */
static void csv_host(const struct report_out *o, const char *host, const struct report_host *h)
{
	FILE *f = o->f;

	if (host) {
		cli_csv_field(f, host);
		fputc(',', f);
		cli_csv_field(f, h->file);
		fputc(',', f);
		if (o->m->rotation) {
			if (h->have_t0)
				fprintf(f, "%" PRId64, h->t0);
			fputc(',', f);
		}
	}
}

static int csv_lines(struct report_out *o, const struct report_host *h, int idx)
{
	const char *host = host_col(o, h);
	FILE *f = o->f;
	size_t l;
	int i;

	if (!idx) {
		fprintf(f, "%s", csv_host_cols(o, host));
		for (i = 0; i < DB_LAG_NR_COLS; i++)
			fprintf(f, "%s%s", i ? "," : "", db_lag_col_name(i));
		fprintf(f, ",v1_line,v2_line%s%s\n", o->m->statlog ? "," PRINTED_COLS : "",
			o->m->grid ? ",batch_size,nr_cpus" : "");
	}
	for (l = 0; l < h->nr_lines; l++) {
		char *const *text = h->lines[l].text;
		char v1[REPORT_NAME_LEN];

		csv_host(o, host, h);
		for (i = 0; i < DB_LAG_NR_COLS; i++) {
			if (i)
				fputc(',', f);
			cli_csv_field(f, text[i]);
		}
		fputc(',', f);
		cli_csv_field(f, report_v1_line(v1, sizeof(v1), &h->lines[l]));
		fputc(',', f);
		cli_csv_field(f, h->lines[l].names.v2);
		if (o->m->statlog) {
			char a[3][32];

			printed_cells(h, &h->lines[l], a);
			fprintf(f, ",%s,%s,%s", a[0], a[1], a[2]);
		}
		if (o->m->grid) {
			fputc(',', f);
			cli_csv_field(f, text[REPORT_TEXT_BATCH]);
			fputc(',', f);
			cli_csv_field(f, text[REPORT_TEXT_CPUS]);
		}
		fputc('\n', f);
	}
	return 0;
}

static int csv_costs(struct report_out *o, const struct report_host *h, int idx)
{
	const struct report_costs *v = &h->costs;
	const char *host = host_col(o, h);
	FILE *f = o->f;
	size_t i, j;

	if (!idx) {
		fprintf(f, "%s", csv_host_cols(o, host));
		for (j = 0; j < COST_NR_COLS; j++)
			fprintf(f, "%s%s", j ? "," : "", cost_cols[j]);
		fprintf(f, "%s\n", v->grid ? ",batch_size,nr_cpus" : "");
	}
	for (i = 0; i < v->nr; i++) {
		char buf[64];

		csv_host(o, host, h);
		for (j = 0; j < COST_NR_COLS; j++) {
			if (j)
				fputc(',', f);
			cli_csv_field(f, cost_cell(v, &v->rows[i], j, buf, sizeof(buf)));
		}
		if (v->grid)
			fprintf(f, ",%u,%u", v->rows[i].r.batch_size, v->rows[i].r.nr_cpus);
		fputc('\n', f);
	}
	return 0;
}

const struct report_ops report_csv_ops = {
	.name = "csv", .need = REPORT_NEED_TEXT | REPORT_NEED_STATLOG, .lines = csv_lines, .costs = csv_costs,
};

/* ---- JSON ---- */

static int json_begin(struct report_out *o)
{
	fputc('[', o->f);
	return 0;
}

static int json_end(struct report_out *o)
{
	fputs("]\n", o->f);
	return 0;
}

static void json_open(struct report_out *o, const struct report_host *h)
{
	const char *host = host_col(o, h);

	fprintf(o->f, "%s{", o->n++ ? ",\n " : "");
	if (host) {
		fprintf(o->f, "\"host\":");
		db_json_string(o->f, host);
		fprintf(o->f, ",\"file\":");
		db_json_string(o->f, h->file);
		if (o->m->rotation && h->have_t0)
			fprintf(o->f, ",\"start_ns\":%" PRId64, h->t0);
		else if (o->m->rotation)
			fprintf(o->f, ",\"start_ns\":null");
		fputc(',', o->f);
	}
}

/* ,"key":"name" or ,"key":null */
static void json_name(FILE *f, const char *key, const char *name)
{
	fprintf(f, ",\"%s\":", key);
	if (name)
		db_json_string(f, name);
	else
		fputs("null", f);
}

static int json_lines(struct report_out *o, const struct report_host *h, int idx)
{
	FILE *f = o->f;
	size_t l;
	int i;

	for (l = 0; l < h->nr_lines; l++) {
		char *const *text = h->lines[l].text;
		char v1[REPORT_NAME_LEN];

		json_open(o, h);
		for (i = 0; i < DB_LAG_NR_COLS; i++) {
			fprintf(f, "%s\"%s\":", i ? "," : "", db_lag_col_name(i));
			if (!text[i])
				fputs("null", f);
			else if (col_is_text(i))
				db_json_string(f, text[i]);
			else
				fputs(json_number(text[i]), f);
		}
		json_name(f, "v1_line", report_v1_line(v1, sizeof(v1), &h->lines[l]));
		json_name(f, "v2_line", h->lines[l].names.v2);
		if (o->m->statlog) {
			char a[3][32];

			printed_cells(h, &h->lines[l], a);
			fprintf(f, ",\"printed_reads\":%s,\"printed_within2\":%s,"
				"\"printed_max_error\":%s", *a[0] ? a[0] : "null",
				*a[1] ? a[1] : "null", *a[2] ? a[2] : "null");
		}
		if (o->m->grid)
			fprintf(f, ",\"batch_size\":%s,\"nr_cpus\":%s",
				json_number(text[REPORT_TEXT_BATCH]), json_number(text[REPORT_TEXT_CPUS]));
		fputc('}', f);
	}
	return 0;
}

static int json_costs(struct report_out *o, const struct report_host *h, int idx)
{
	const struct report_costs *v = &h->costs;
	FILE *f = o->f;
	size_t i, j;

	for (i = 0; i < v->nr; i++) {
		char buf[64];

		json_open(o, h);
		for (j = 0; j < COST_NR_COLS; j++) {
			const char *s = cost_cell(v, &v->rows[i], j, buf, sizeof(buf));

			fprintf(f, "%s\"%s\":", j ? "," : "", cost_cols[j]);
			if (!s)
				fputs("null", f);
			else if (cost_col_text(j))
				db_json_string(f, s);
			else
				fputs(s, f);
		}
		if (v->grid)
			fprintf(f, ",\"batch_size\":%u,\"nr_cpus\":%u", v->rows[i].r.batch_size,
				v->rows[i].r.nr_cpus);
		fputc('}', f);
	}
	return 0;
}

const struct report_ops report_json_ops = {
	.name = "json", .need = REPORT_NEED_TEXT | REPORT_NEED_STATLOG, .begin = json_begin, .lines = json_lines,
	.costs = json_costs,
	.end = json_end,
};
