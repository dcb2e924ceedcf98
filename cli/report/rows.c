// SPDX-License-Identifier: GPL-2.0
/*
 * rows.c - report --format csv and json: each lag row as it comes,
 * with the view's column names (and a host column for several databases).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "report_local.h"
#include "results.h"
#include "sim.h"

static void csv_field(const char *s)
{
	cli_csv_field(stdout, s);
}

static bool col_is_text(int c)
{
	return c == DB_LAG_POLICY || c == DB_LAG_FLUSH_MODEL || c == DB_LAG_CGROUP ||
	       c == DB_LAG_ITEM || c == DB_LAG_UNIT;
}

int report_csv_row(const struct db_lag_row *row, void *ctx)
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

int report_json_row(const struct db_lag_row *row, void *ctx)
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
