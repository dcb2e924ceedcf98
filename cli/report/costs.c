// SPDX-License-Identifier: GPL-2.0
/*
 * costs.c - report's cost in time (costs.h): the runs of
 * cost_report, the calibration and the trace's cost basis, and the estimate
 * of sim/cost_model.h for each run, in the report's formats.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib.h"
#include "cli.h"
#include "cost.h"
#include "costs.h"
#include "sim.h"
#include "svg.h"

struct crow {
	struct db_cost_row		r;	/* policy, flush_model owned */
	struct sim_cost_estimate	e;
};

struct cost_view {
	struct crow		*rows;
	size_t			nr, cap;
	struct sim_cost_calib	cal;
	struct db_cost_basis	basis;
	const char		*source;	/* "database" or the file's name */
	bool			have_cal;
	bool			grid;		/* a run at another batch or CPU count than the trace's */
	const struct report_cost_opts *o;
};

static const char *const cost_cols[] = {
	"run_id", "policy", "flush_model", "updates", "walk_steps", "pcpu_adds", "atomic_adds",
	"dropped_batches", "flushable_checks", "atomic_shared_fraction", "est_ns_per_update",
	"est_ns_per_update_max", "est_cpu_s_per_s", "reads", "stale_reads", "stranded_cgroups",
	"max_read_error_pages", "max_read_error_events", "calibration",
};
#define COST_NR_COLS	(sizeof(cost_cols) / sizeof(cost_cols[0]))

int report_cost_check(const char *calibration, char *why, size_t len)
{
	struct sim_cost_calib c;

	if (len)
		*why = '\0';
	return calibration ? cost_file_read_why(calibration, &c, why, len) : 0;
}

static int cost_row_none(const struct db_cost_row *r, void *ctx)
{
	return 0;
}

int report_cost_rows_check(struct db *db, const char *calibration)
{
	struct sim_cost_calib c;
	struct db_cost_basis b;
	int err = 0;

	if (!calibration)
		err = db_calibration_get(db, &c);
	if (!err || err == -ENOENT)
		err = db_cost_basis_get(db, &b);
	if (!err || err == -ENOENT)
		err = db_cost_rows_foreach(db, cost_row_none, NULL);
	return err == -ENOENT ? 0 : err;
}

static bool cost_wanted(const struct cost_view *v, int64_t run_id)
{
	int i;

	for (i = 0; i < v->o->nr_runs; i++)
		if (v->o->runs[i] == run_id)
			return true;
	return false;
}

static int cost_row(const struct db_cost_row *r, void *ctx)
{
	struct cost_view *v = ctx;
	struct crow *c;

	if (v->o->runs && !cost_wanted(v, r->run_id))
		return 0;
	if (v->nr == v->cap) {
		size_t ncap = v->cap ? v->cap * 2 : 16;
		struct crow *n = realloc(v->rows, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		v->rows = n;
		v->cap = ncap;
	}
	c = &v->rows[v->nr];
	*c = (struct crow){ .r = *r };
	c->r.policy = strdup(r->policy);
	c->r.flush_model = strdup(r->flush_model);
	v->nr++;
	if (!c->r.policy || !c->r.flush_model)
		return -ENOMEM;
	return 0;
}

static void cost_free(struct cost_view *v)
{
	size_t i;

	for (i = 0; i < v->nr; i++) {
		free((char *)v->rows[i].r.policy);
		free((char *)v->rows[i].r.flush_model);
	}
	free(v->rows);
}

static bool crow_same_point(const struct crow *x, const struct crow *y)
{
	return x->r.batch_size == y->r.batch_size && x->r.nr_cpus == y->r.nr_cpus;
}

/*
 * Without --run: the latest run of each (policy, flush model, batch, CPUs),
 * as lag_report has them.
 */
static void cost_latest(struct cost_view *v)
{
	size_t i, j, k = 0;

	for (i = 0; i < v->nr; i++) {
		bool later = false;

		for (j = 0; j < v->nr && !later; j++)
			later = v->rows[j].r.run_id > v->rows[i].r.run_id &&
				!strcmp(v->rows[j].r.policy, v->rows[i].r.policy) &&
				!strcmp(v->rows[j].r.flush_model, v->rows[i].r.flush_model) &&
				crow_same_point(&v->rows[j], &v->rows[i]);
		if (later) {
			free((char *)v->rows[i].r.policy);
			free((char *)v->rows[i].r.flush_model);
			continue;
		}
		v->rows[k++] = v->rows[i];
	}
	v->nr = k;
}

static int crow_cmp(const void *a, const void *b)
{
	const struct crow *x = a, *y = b;
	int rx = sim_policy_rank(x->r.policy), ry = sim_policy_rank(y->r.policy);

	if (rx != ry)
		return rx - ry;
	return (x->r.run_id > y->r.run_id) - (x->r.run_id < y->r.run_id);
}

/* A grid: some run is at another batch or CPU count than the trace's own, as report_grid() decides. */
static void cost_grid(struct cost_view *v, struct db *db)
{
	int64_t batch, online;
	size_t i;

	cli_trace_own(db, &batch, &online);
	for (i = 0; i < v->nr; i++)
		if (v->rows[i].r.batch_size != batch || v->rows[i].r.nr_cpus != online)
			v->grid = true;
}

/* The run's name: its policy, and in a grid its batch and CPUs ("break b=32 cpus=2"). */
static const char *cost_label(const struct cost_view *v, const struct crow *c, char *buf,
			      size_t len)
{
	if (!v->grid)
		return c->r.policy;
	snprintf(buf, len, "%s b=%u cpus=%u", c->r.policy, c->r.batch_size, c->r.nr_cpus);
	return buf;
}

/*
 * The rows, the calibration (the file, else the database's table) and the
 * trace's cost basis (the database's, else one read of the events), and each
 * row's estimate.  No calibration is not an error: have_cal stays false.
 */
static int cost_load(struct cost_view *v, struct db *db, const struct report_cost_opts *o)
{
	size_t i;
	int err;

	memset(v, 0, sizeof(*v));
	v->o = o;
	err = db_cost_rows_foreach(db, cost_row, v);
	if (err)
		return err;
	if (!o->runs)
		cost_latest(v);
	qsort(v->rows, v->nr, sizeof(*v->rows), crow_cmp);
	cost_grid(v, db);
	if (o->calibration) {
		err = cost_file_read(o->calibration, &v->cal);
		if (err)
			return err;
		v->source = o->calibration;
	} else {
		err = db_calibration_get(db, &v->cal);
		if (err == -ENOENT)
			return 0;
		if (err)
			return err;
		v->source = "database";
	}
	v->have_cal = true;
	err = db_cost_basis_get(db, &v->basis);
	if (err == -ENOENT) {
		struct cost_share sh;

		err = cost_share_scan(db, COST_SHARE_WINDOW_NS, &sh);
		v->basis = (struct db_cost_basis){
			.trace_ns = sh.last_ts - sh.first_ts, .updates = sh.updates,
			.window_ns = sh.window_ns, .node_visits = sh.node_visits,
			.shared_visits = sh.shared_visits, .shared_fraction = sh.fraction,
		};
	}
	if (err)
		return err;
	for (i = 0; i < v->nr; i++) {
		struct crow *c = &v->rows[i];
		struct sim_cost_counts cc = {
			.updates = c->r.updates, .walk_steps = c->r.walk_steps,
			.pcpu_adds = c->r.pcpu_adds, .atomic_adds = c->r.atomic_adds,
			.dropped_batches = c->r.dropped_batches, .trace_ns = v->basis.trace_ns,
			.shared = v->basis.shared_fraction,
			.legacy = sim_cost_policy_legacy(c->r.policy),
		};

		err = sim_cost_estimate(&cc, &v->cal.t, &c->e);
		if (err)
			return -MCR_E_BAD_INPUT;
	}
	return 0;
}

/* ---- text ---- */

/* @text in lines of at most 78 columns, indented by two. */
static void cost_wrap(FILE *f, const char *text)
{
	const char *p = text;

	while (*p) {
		const char *end = p, *brk = NULL;

		while (*end && end - p < 76) {
			if (*end == ' ')
				brk = end;
			end++;
		}
		if (*end && brk)
			end = brk;
		fprintf(f, "  %.*s\n", (int)(end - p), p);
		p = end;
		while (*p == ' ')
			p++;
	}
}

/* The break run at @c's batch and CPUs, what "vs break" compares with; NULL none. */
static const struct crow *cost_baseline(const struct cost_view *v, const struct crow *c)
{
	size_t i;

	for (i = 0; i < v->nr; i++)
		if (!strcmp(v->rows[i].r.policy, "break") && crow_same_point(&v->rows[i], c))
			return &v->rows[i];
	return NULL;
}

int report_cost_table(FILE *f, struct db *db, const struct report_cost_opts *o)
{
	const struct crow *base;
	struct cost_view v;
	size_t i;
	int err;

	err = cost_load(&v, db, o);
	if (err)
		goto out;
	fprintf(f, "\nCost in time of each policy's update path (memcg_rstat_updated() walk)\n");
	if (!v.have_cal) {
		cost_wrap(f, "No calibration: 'memcg-replay calibrate --db FILE' measures this "
			  "host's costs into FILE (or report --calibration CALIB with a file of "
			  "calibrate -o); counts only.");
	} else {
		char *msg = NULL;

		if (asprintf(&msg, "Costs measured on %s at %s (%s).  Atomic adds priced as "
			     "contended: %.1f %%, the share of walk visits to a memcg that another "
			     "CPU's update reached < %" PRIu64 " us before; the rest uncontended.",
			     v.cal.host, v.cal.measured_at, v.source, 100 * v.basis.shared_fraction,
			     v.basis.window_ns / 1000) < 0) {
			err = -ENOMEM;
			goto out;
		}
		cost_wrap(f, msg);
		free(msg);
	}
	fprintf(f, "  %-*s %-9s %10s %8s %11s %11s", v.grid ? 28 : 12, "policy", "model",
		"updates", "steps/up", "atomic adds", "stale reads");
	if (v.have_cal)
		fprintf(f, " %10s %10s %11s %11s", "ns/update", "(max)", "ns vs break", "CPU s/s");
	fprintf(f, "\n");
	for (i = 0; i < v.nr; i++) {
		const struct crow *c = &v.rows[i];
		double up = c->r.updates ? (double)c->r.updates : 1;
		char name[48], label[64], stale[32];

		base = cost_baseline(&v, c);
		snprintf(label, sizeof(label), "%s#%" PRId64, cost_label(&v, c, name, sizeof(name)),
			 c->r.run_id);
		snprintf(stale, sizeof(stale), "%" PRIu64 "/%" PRIu64, c->r.stale_reads, c->r.reads);
		fprintf(f, "  %-*s %-9s %10" PRIu64 " %8.2f %11" PRIu64 " %11s", v.grid ? 28 : 12, label,
			c->r.flush_model, c->r.updates, (double)c->r.walk_steps / up,
			c->r.atomic_adds, stale);
		if (v.have_cal) {
			fprintf(f, " %10.2f %10.2f ", c->e.ns_per_update, c->e.ns_per_update_max);
			if (base && base != c)
				fprintf(f, "%+11.2f", c->e.ns_per_update - base->e.ns_per_update);
			else
				fprintf(f, "%11s", "-");
			fprintf(f, " %11.3g", c->e.cpu_s_per_s);
		}
		fprintf(f, "\n");
	}
	if (v.have_cal)
		cost_wrap(f, "(max): every step on a cold tree, every atomic add contended.  "
			  REPORT_COST_LEAVES_OUT);
out:
	cost_free(&v);
	return err;
}

/* ---- CSV, JSON ---- */

/* Column @i of row @c as text into @buf; NULL for no value (SQL NULL). */
static const char *cost_cell(const struct cost_view *v, const struct crow *c, size_t i,
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

int report_cost_csv(FILE *f, struct db *db, const struct report_cost_opts *o, const char *host,
		    bool header)
{
	struct cost_view v;
	size_t i, j;
	int err;

	err = cost_load(&v, db, o);
	if (!err && header) {
		fprintf(f, "%s", host ? "host," : "");
		for (j = 0; j < COST_NR_COLS; j++)
			fprintf(f, "%s%s", j ? "," : "", cost_cols[j]);
		fprintf(f, "%s\n", v.grid ? ",batch_size,nr_cpus" : "");
	}
	for (i = 0; !err && i < v.nr; i++) {
		char buf[64];

		if (host) {
			cli_csv_field(f, host);
			fputc(',', f);
		}
		for (j = 0; j < COST_NR_COLS; j++) {
			if (j)
				fputc(',', f);
			cli_csv_field(f, cost_cell(&v, &v.rows[i], j, buf, sizeof(buf)));
		}
		if (v.grid)
			fprintf(f, ",%u,%u", v.rows[i].r.batch_size, v.rows[i].r.nr_cpus);
		fputc('\n', f);
	}
	cost_free(&v);
	return err;
}

int report_cost_json(FILE *f, struct db *db, const struct report_cost_opts *o, const char *host,
		     unsigned long *n)
{
	struct cost_view v;
	size_t i, j;
	int err;

	err = cost_load(&v, db, o);
	for (i = 0; !err && i < v.nr; i++) {
		char buf[64];

		fprintf(f, "%s{", (*n)++ ? ",\n " : "");
		if (host) {
			fprintf(f, "\"host\":");
			db_json_string(f, host);
			fputc(',', f);
		}
		for (j = 0; j < COST_NR_COLS; j++) {
			const char *s = cost_cell(&v, &v.rows[i], j, buf, sizeof(buf));

			fprintf(f, "%s\"%s\":", j ? "," : "", cost_cols[j]);
			if (!s)
				fputs("null", f);
			else if (cost_col_text(j))
				db_json_string(f, s);
			else
				fputs(s, f);
		}
		if (v.grid)
			fprintf(f, ",\"batch_size\":%u,\"nr_cpus\":%u", v.rows[i].r.batch_size,
				v.rows[i].r.nr_cpus);
		fputc('}', f);
	}
	cost_free(&v);
	return err;
}

/* ---- HTML ---- */

int report_cost_html(FILE *f, struct db *db, const struct report_cost_opts *o)
{
	const struct crow *base;
	struct cost_view v;
	size_t i;
	int err;

	err = cost_load(&v, db, o);
	if (err)
		goto out;
	fprintf(f, "<table class=\"cost\" id=\"cost-time\"><caption>Cost in time of the update "
		"path, beside the staleness");
	if (v.have_cal) {
		fprintf(f, " <small>(costs measured on ");
		svg_escape(f, v.cal.host);
		fprintf(f, " at ");
		svg_escape(f, v.cal.measured_at);
		fprintf(f, "; atomic adds contended: %.1f %%)</small>", 100 * v.basis.shared_fraction);
	}
	fprintf(f, "</caption><thead><tr><th>run</th><th>updates</th><th>walk steps / update</th>"
		"<th>atomic adds</th><th>stale reads</th><th>worst read error (pages)</th>");
	if (v.have_cal)
		fprintf(f, "<th>ns / update <small>(max)</small></th><th>ns / update vs break</th>"
			"<th>CPU s / s of trace</th>");
	fprintf(f, "</tr></thead><tbody>\n");
	for (i = 0; i < v.nr; i++) {
		const struct crow *c = &v.rows[i];
		double up = c->r.updates ? (double)c->r.updates : 1;
		char name[48];

		base = cost_baseline(&v, c);
		fprintf(f, "<tr><td class=\"pol\">");
		svg_escape(f, cost_label(&v, c, name, sizeof(name)));
		fprintf(f, " <small>#%" PRId64 " ", c->r.run_id);
		svg_escape(f, c->r.flush_model);
		fprintf(f, "</small></td><td class=\"n\">%" PRIu64 "</td><td class=\"n\">%.2f</td>"
			"<td class=\"n\">%" PRIu64 "</td><td class=\"n\">%" PRIu64 " / %" PRIu64 "</td>"
			"<td class=\"n\">", c->r.updates, (double)c->r.walk_steps / up,
			c->r.atomic_adds, c->r.stale_reads, c->r.reads);
		if (c->r.max_read_error_pages >= 0)
			fprintf(f, "%" PRId64, c->r.max_read_error_pages);
		else
			fprintf(f, "0");
		fprintf(f, "</td>");
		if (v.have_cal) {
			fprintf(f, "<td class=\"n\">%.2f <small>(%.2f)</small></td><td class=\"n\">",
				c->e.ns_per_update, c->e.ns_per_update_max);
			if (base && base != c)
				fprintf(f, "%+.2f", c->e.ns_per_update - base->e.ns_per_update);
			else
				fprintf(f, "-");
			fprintf(f, "</td><td class=\"n\">%.3g</td>", c->e.cpu_s_per_s);
		}
		fprintf(f, "</tr>\n");
	}
	fprintf(f, "</tbody></table>\n<p class=\"note\">");
	if (v.have_cal)
		fprintf(f, "Estimate: operation counts times costs measured by memcg-replay "
			"calibrate; (max) with every walk step on a cold tree and every atomic add "
			"contended. %s</p>\n", REPORT_COST_LEAVES_OUT);
	else
		fprintf(f, "No calibration in this database: <code>memcg-replay calibrate --db "
			"FILE</code> measures this host's costs, and the page then shows each run's "
			"estimated cost in time. Counts only.</p>\n");
out:
	cost_free(&v);
	return err;
}
