// SPDX-License-Identifier: GPL-2.0
/*
 * html.c - report --format html (see html.h for the contract).
 *
 * Each host's lag_report rows are gathered once; the ancestors are ranked by
 * the worst read error of a page line (bytes), then of an event line, then by
 * the visible error; each plotted line gets one SVG chart with every run on
 * the same axes.  Long series are reduced to one (min, max) per pixel column
 * (cli/svg.c) from series' own min_error/max_error, so a spike shorter than
 * a sample still shows, and the page stays small whatever the trace's length.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "html_local.h"
#include "costs.h"
#include "html.h"
#include "results.h"
#include "sim.h"
#include "svg.h"

/* policy colours: break red, continue blue, legacy green (colour-blind safe enough with the dashes) */
static const char *const policy_colour[] = { "#d62728", "#1f77b4", "#2ca02c", "#9467bd" };

static int gather_row(const struct db_lag_row *row, void *ctx)
{
	struct hhost *hh = ctx;
	struct hrow *t;

	if (hh->nr == hh->cap) {
		size_t ncap = hh->cap ? hh->cap * 2 : 256;
		struct hrow *n = realloc(hh->rows, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		hh->rows = n;
		hh->cap = ncap;
	}
	t = &hh->rows[hh->nr];
	*t = (struct hrow){
		.cgroup = strdup(row->cgroup), .item = strdup(row->item),
		.policy = strdup(row->policy),
		.flush_model = strdup(row->flush_model ? row->flush_model : "-"),
		.cgroup_id = row->cgroup_id, .run_id = row->run_id, .level = row->level,
		.events = !strcmp(row->unit, "events"), .reads = row->reads,
		.stale_reads = row->stale_reads, .stranded_episodes = row->stranded_episodes,
		.max_pending = row->max_pending, .max_read = row->max_read_error,
		.p99_read = row->p99_read_error, .max_visible = row->max_visible_error,
		.mean_read = row->mean_read_error, .mean_visible = row->mean_visible_error,
		.age_ms = row->max_error_age_ms, .stranded_ms = row->stranded_ms,
		.batch = row->batch_size, .cpus = row->nr_cpus,
	};
	hh->nr++;
	if (!t->cgroup || !t->item || !t->policy || !t->flush_model)
		return -ENOMEM;
	return 0;
}

static void host_free(struct hhost *hh)
{
	size_t i;

	for (i = 0; i < hh->nr; i++) {
		free(hh->rows[i].cgroup);
		free(hh->rows[i].item);
		free(hh->rows[i].policy);
		free(hh->rows[i].flush_model);
	}
	free(hh->rows);
}

static int hrun_cmp(const void *a, const void *b)
{
	const struct hrun *x = a, *y = b;
	int rx = sim_policy_rank(x->policy), ry = sim_policy_rank(y->policy);

	if (rx != ry)
		return rx - ry;
	return (x->run_id > y->run_id) - (x->run_id < y->run_id);
}

/*
 * The runs the rows name, in policy order; colours by policy, dashes for
 * repeats.  Labels are the policy, "break b=32 cpus=2" when some run is not at
 * the trace's own batch and CPUs (a grid), and the run and model where a
 * label repeats.
 */
static void host_runs(struct hhost *hh)
{
	bool grid = false;
	char name[48];
	size_t i;
	int j, k;

	for (i = 0; i < hh->nr; i++) {
		if (run_of(hh, hh->rows[i].run_id) || hh->nr_runs == MAX_RUNS)
			continue;
		hh->runs[hh->nr_runs++] = (struct hrun){
			.run_id = hh->rows[i].run_id, .policy = hh->rows[i].policy,
			.flush_model = hh->rows[i].flush_model, .batch = hh->rows[i].batch,
			.cpus = hh->rows[i].cpus,
		};
		grid |= hh->rows[i].batch != hh->batch || hh->rows[i].cpus != hh->online;
	}
	qsort(hh->runs, (size_t)hh->nr_runs, sizeof(hh->runs[0]), hrun_cmp);
	for (j = 0; j < hh->nr_runs; j++) {
		struct hrun *r = &hh->runs[j];
		int rank = sim_policy_rank(r->policy), same = 0;

		for (k = 0; k < hh->nr_runs; k++)
			if (k != j && !strcmp(hh->runs[k].policy, r->policy) &&
			    (!grid || (hh->runs[k].batch == r->batch && hh->runs[k].cpus == r->cpus)))
				same++;
		r->dashed = j > 0 && !strcmp(hh->runs[j - 1].policy, r->policy);
		r->colour = policy_colour[rank < 3 ? rank : 3];
		if (grid)
			snprintf(name, sizeof(name), "%s b=%u cpus=%u", r->policy, r->batch, r->cpus);
		else
			snprintf(name, sizeof(name), "%s", r->policy);
		if (same)
			snprintf(r->label, sizeof(r->label), "%s #%" PRId64 " (%s)", name, r->run_id,
				 r->flush_model);
		else
			snprintf(r->label, sizeof(r->label), "%s", name);
	}
}

/* ---- ranking ---- */

struct hcg {
	size_t		from, to;	/* its rows */
	double		key_pages;	/* worst read error of a page line, pages */
	double		key_events;
	double		key_visible;	/* worst visible error of a page line */
	bool		stranded;
};

static int hcg_cmp(const void *a, const void *b)
{
	const struct hcg *x = a, *y = b;

	if (x->key_pages != y->key_pages)
		return x->key_pages < y->key_pages ? 1 : -1;
	if (x->key_events != y->key_events)
		return x->key_events < y->key_events ? 1 : -1;
	if (x->key_visible != y->key_visible)
		return x->key_visible < y->key_visible ? 1 : -1;
	return (x->from > y->from) - (x->from < y->from);
}

static size_t host_cgroups(const struct hhost *hh, struct hcg *cg)
{
	size_t i, j, n = 0;

	for (i = 0; i < hh->nr; i = j) {
		struct hcg c = { .from = i };

		for (j = i; j < hh->nr && hh->rows[j].cgroup_id == hh->rows[i].cgroup_id &&
		     !strcmp(hh->rows[j].cgroup, hh->rows[i].cgroup); j++) {
			const struct hrow *r = &hh->rows[j];

			if (r->events) {
				c.key_events = fmax(c.key_events, (double)r->max_read);
			} else {
				c.key_pages = fmax(c.key_pages, (double)r->max_read);
				c.key_visible = fmax(c.key_visible, (double)r->max_visible);
			}
			c.stranded |= r->stranded_ms > 0;
		}
		c.to = j;
		cg[n++] = c;
	}
	qsort(cg, n, sizeof(*cg), hcg_cmp);
	return n;
}

static int hline_cmp(const void *a, const void *b)
{
	const struct hline *x = a, *y = b;

	if (x->events != y->events)
		return x->events ? 1 : -1;
	return x->key < y->key ? 1 : x->key > y->key ? -1 : (x->from > y->from) - (x->from < y->from);
}

static size_t cgroup_lines(const struct hhost *hh, const struct hcg *c, struct hline *ln)
{
	size_t i, j, n = 0;

	for (i = c->from; i < c->to; i = j) {
		struct hline l = { .from = i, .events = hh->rows[i].events };

		for (j = i; j < c->to && !strcmp(hh->rows[j].item, hh->rows[i].item); j++)
			l.key = fmax(l.key, (double)hh->rows[j].max_read +
				     1e-9 * (double)hh->rows[j].max_visible);
		l.to = j;
		if (l.key > 0)
			ln[n++] = l;
	}
	qsort(ln, n, sizeof(*ln), hline_cmp);
	return n;
}

/* ---- a host ---- */

static int host_load(struct hhost *hh, const struct html_host *h, const struct html_opts *o)
{
	struct db_lag_filter lf = {
		.runs = o->nr_runs ? o->runs : NULL, .nr_runs = o->nr_runs, .cgroup = o->cgroup,
	};
	int64_t v;
	int err;

	*hh = (struct hhost){ .h = h, .page_size = 4096 };
	db_meta_get_int(h->db, "page_size", &hh->page_size);
	cli_trace_own(h->db, &hh->batch, &hh->online);
	err = db_lag_foreach(h->db, &lf, gather_row, hh);
	if (err)
		return err;
	host_runs(hh);
	hh->t0 = db_meta_get_int(h->db, "capture_start_ns", &v) < 0 ? 0 : v;
	/* db_open() saw 0 <= t0 <= t1 when both are there: t1 - t0 cannot overflow */
	if (db_meta_get_int(h->db, "capture_end_ns", &v) < 0)
		v = hh->t0 > INT64_MAX - 1000000000 ? INT64_MAX : hh->t0 + 1000000000;
	hh->t1 = v;
	return 0;
}

static void host_anchor(FILE *f, int i)
{
	fprintf(f, "host-%d", i);
}

static int host_section(FILE *f, struct hhost *hh, int idx, bool fleet, const struct html_opts *o)
{
	struct hcg *cg = calloc(hh->nr ? hh->nr : 1, sizeof(*cg));
	struct hline *ln = calloc(hh->nr ? hh->nr : 1, sizeof(*ln));
	size_t ncg, i, nl, j, shown = 0;
	int err = 0;

	if (!cg || !ln) {
		err = -ENOMEM;
		goto out;
	}
	fprintf(f, "<section class=\"host\" id=\"");
	host_anchor(f, idx);
	fprintf(f, "\">\n<h2>%s", fleet ? "" : "Trace: ");
	esc(f, hh->h->host);
	fprintf(f, " <small>");
	esc(f, hh->h->file);
	fprintf(f, "</small></h2>\n");
	err = html_meta_section(f, hh);
	if (err)
		goto out;
	ncg = host_cgroups(hh, cg);
	if (!ncg) {
		fprintf(f, "<p class=\"note\">No lag rows%s: nothing was ever wrong, or the runs"
			" asked for hold none.</p>\n", o->cgroup ? " for this cgroup" : "");
	}
	html_legend(f, hh);
	for (i = 0, shown = 0; i < ncg && shown < (o->cgroup ? 1 : HTML_TOP_CGROUPS) && !err; i++) {
		const struct hrow *r0 = &hh->rows[cg[i].from];
		char a[32];

		nl = cgroup_lines(hh, &cg[i], ln);
		/* by default only what can be drawn: cgroups whose series replay stored */
		if (!o->cgroup && nl) {
			err = html_line_has_series(hh, &hh->rows[ln[0].from]);
			if (err <= 0)
				continue;
			err = 0;
		}
		shown++;
		fprintf(f, "<h3>");
		esc(f, r0->cgroup);
		fprintf(f, " <small>id %" PRIu64 ", level %d, %" PRIu64 " reads; worst read error %s%s"
			"</small></h3>\n", r0->cgroup_id, r0->level, r0->reads,
			cg[i].key_pages > 0 ? val_str(a, sizeof(a), false, cg[i].key_pages, hh->page_size)
					    : "0",
			cg[i].stranded ? "; <b class=\"bad\">stranded</b>" : "");
		fprintf(f, "<div class=\"row\"><div class=\"plots\">\n");
		for (j = 0; j < nl && j < HTML_TOP_LINES && !err; j++) {
			const struct hrow *lr = &hh->rows[ln[j].from];
			const char *from;
			int kind, item;

			fprintf(f, "<figure><figcaption>");
			esc(f, lr->item);
			from = lr->events ? NULL : mcr_item_rounded_from(MCR_EV_STATE, lr->item);
			if (from)
				fprintf(f, " <small>pages, rounded by the kernel from %s, shown in"
					" MiB</small></figcaption>\n", from);
			else
				fprintf(f, " <small>%s</small></figcaption>\n", lr->events ?
					"events: a count" : "pages, shown in MiB");
			err = db_item_by_name(hh->h->db, lr->item, &kind, &item);
			if (err == -ENOENT) {
				err = 0;
				fprintf(f, "<p class=\"note\">unknown item</p>");
			} else if (!err) {
				err = html_chart_write(f, hh, lr, kind, item);
			}
			fprintf(f, "</figure>\n");
		}
		if (!nl)
			fprintf(f, "<p class=\"note\">No line of this cgroup was ever wrong.</p>\n");
		fprintf(f, "</div><div class=\"side\">\n");
		html_line_table(f, hh, ln, nl);
		fprintf(f, "</div></div>\n");
	}
	if (!err && ncg > shown && !o->cgroup)
		fprintf(f, "<p class=\"note\">%zu more cgroups with a wrong line: report --cgroup PATH"
			" --format html shows one; --format csv lists every row.</p>\n", ncg - shown);
	if (!err) {
		fprintf(f, "<div class=\"row2\"><div>\n");
		err = html_cost_table(f, hh);
		if (!err) {
			struct report_cost_opts co = {
				.calibration = o->calibration, .runs = o->runs, .nr_runs = o->nr_runs,
			};

			err = report_cost_html(f, hh->h->db, &co);
		}
		fprintf(f, "</div><div>\n");
		if (!err)
			err = html_validation_section(f, hh);
		fprintf(f, "</div></div>\n");
	}
	fprintf(f, "</section>\n");
out:
	free(cg);
	free(ln);
	return err;
}

/* ---- the fleet summary ---- */

static void fleet_row(FILE *f, struct hhost *hh, int idx)
{
	const struct hrow *worst = NULL, *worst_ev = NULL;
	char a[32];
	size_t i, j, stranded = 0;
	int64_t lost_gaps = 0;
	struct db_trace_lost lost;

	for (i = 0; i < hh->nr; i++) {
		const struct hrow *r = &hh->rows[i];

		if (!r->events && (!worst || r->max_read > worst->max_read))
			worst = r;
		if (r->events && (!worst_ev || r->max_read > worst_ev->max_read))
			worst_ev = r;
	}
	/* ancestors stranded under some policy: distinct cgroups */
	for (i = 0; i < hh->nr; i++) {
		if (!(hh->rows[i].stranded_ms > 0))
			continue;
		for (j = 0; j < i; j++)
			if (hh->rows[j].cgroup_id == hh->rows[i].cgroup_id && hh->rows[j].stranded_ms > 0)
				break;
		if (j == i)
			stranded++;
	}
	if (!db_trace_lost(hh->h->db, &lost))
		lost_gaps = lost.gaps + (lost.overrun > 0) + (lost.dropped > 0);
	fprintf(f, "<tr><td><a href=\"#");
	host_anchor(f, idx);
	fprintf(f, "\">");
	esc(f, hh->h->host);
	fprintf(f, "</a>%s</td><td class=\"n%s\">%zu</td><td>", lost_gaps ? " <b class=\"bad\">lost"
		" events</b>" : "", stranded ? " bad" : "", stranded);
	if (worst && worst->max_read) {
		const struct hrun *ru = run_of(hh, worst->run_id);

		fprintf(f, "%s ", val_str(a, sizeof(a), false, (double)worst->max_read, hh->page_size));
		esc(f, worst->item);
		fprintf(f, " of ");
		esc(f, worst->cgroup);
		fprintf(f, " under ");
		esc(f, ru ? ru->label : worst->policy);
	} else {
		fprintf(f, "0");
	}
	fprintf(f, "</td><td>");
	if (worst_ev && worst_ev->max_read) {
		fprintf(f, "%" PRIu64 " ", worst_ev->max_read);
		esc(f, worst_ev->item);
		fprintf(f, " of ");
		esc(f, worst_ev->cgroup);
	} else {
		fprintf(f, "0");
	}
	fprintf(f, "</td></tr>\n");
}

static const char css[] =
	"*{box-sizing:border-box}"
	"body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;"
	"color:#222;background:#fff;margin:0 auto;padding:16px 24px;max-width:1500px}"
	"h1{font-size:22px;margin:0 0 4px}h2{font-size:19px;border-bottom:2px solid #ccc;"
	"padding-bottom:2px;margin:28px 0 8px}h3{font-size:16px;margin:22px 0 6px}h4{margin:14px 0 4px}"
	"small{color:#666;font-weight:normal}"
	".intro{color:#444;max-width:75em;margin:4px 0 10px}"
	".banner{background:#fdecea;border:1px solid #d62728;color:#8b1a1a;padding:8px 12px;"
	"font-weight:bold}"
	"dl.meta{display:flex;flex-wrap:wrap;gap:2px 18px;margin:6px 0}dl.meta dt{color:#666}"
	"dl.meta dt:after{content:':'}dl.meta dd{margin:0 0 0 -12px}"
	"pre.warn{background:#fff8e1;padding:6px;white-space:pre-wrap}"
	".row{display:grid;grid-template-columns:minmax(0,11fr) minmax(0,9fr);gap:16px;"
	"align-items:start}"
	".row2{display:grid;grid-template-columns:1fr 1fr;gap:18px}"
	"@media (max-width:1100px){.row,.row2{grid-template-columns:minmax(0,1fr)}}"
	"figure{margin:0 0 10px}figcaption{font-weight:600}"
	"svg.chart{width:100%;height:auto;display:block;font-size:12px}"
	"svg .grid path{stroke:#e6e6e6}svg .zero{stroke:#777}"
	"svg .frame{fill:none;stroke:#999}svg .tick text{fill:#444}svg .axis{fill:#333;font-size:12px}"
	"svg .line{fill:none;stroke-linejoin:round}"
	"svg .forced{stroke:#888;stroke-dasharray:2 3;stroke-width:1}"
	"svg .read{stroke-width:3.5;stroke-linecap:round}"
	"svg .stale-o{stroke:#000;stroke-width:9;stroke-linecap:round}"
	"svg .stale{stroke-width:6.5;stroke-linecap:round}"
	"table{border-collapse:collapse;font-size:13px;margin:4px 0;width:100%}"
	".side{overflow-x:auto}.side table{font-size:12.5px}td.pol{white-space:nowrap}"
	".lines td:first-child{word-break:break-all;font-size:12px}"
	"th,td{padding:2px 4px;border-bottom:1px solid #eee;text-align:left;vertical-align:top}"
	"th{background:#f4f4f4}td.n{text-align:right;font-variant-numeric:tabular-nums;"
	"white-space:nowrap}tr.first td{border-top:1px solid #ccc}"
	"caption{text-align:left;font-weight:600;padding:2px 0}"
	".bad{color:#b00}.note{color:#666;font-style:italic}"
	".legend span{margin-right:14px;white-space:nowrap}"
	"i.sw{display:inline-block;width:14px;height:4px;margin:0 4px 3px 0;vertical-align:middle}"
	"i.sw.shade{height:10px;background:#d6272822;border:1px solid #d6272855}"
	"i.sw.forced{height:10px;width:0;border-left:1px dashed #888;margin:0 6px 0 4px}"
	"i.dot{display:inline-block;width:6px;height:6px;border-radius:50%;background:#555;"
	"margin:0 4px 1px 0;vertical-align:middle}"
	"i.dot.big{width:9px;height:9px;border:1.5px solid #000;background:#d62728}"
	"@page{size:A4 landscape;margin:12mm}"
	"@media print{body{max-width:none;padding:0;font-size:10pt}"
	".row,.row2{grid-template-columns:minmax(0,3fr) minmax(0,2fr)}"
	"figure,table,.host h3{break-inside:avoid}section.host{break-before:page}"
	"section.host:first-of-type{break-before:auto}a{color:inherit;text-decoration:none}"
	".banner{border:2px solid #000}}";

int html_report_write(FILE *f, const struct html_host *hosts, int nr_hosts,
		      const struct html_opts *o)
{
	struct hhost *hh = calloc((size_t)nr_hosts, sizeof(*hh));
	bool fleet = nr_hosts > 1;
	int i, err = 0;

	if (!hh)
		return -ENOMEM;
	for (i = 0; i < nr_hosts && !err; i++)
		err = host_load(&hh[i], &hosts[i], o);
	if (err)
		goto out;
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		"<title>memcg-replay: how stale memory.stat got");
	if (!fleet) {
		fprintf(f, " (");
		esc(f, hosts[0].host);
		fprintf(f, ")");
	}
	fprintf(f, "</title>\n<style>%s</style></head><body>\n", css);
	fprintf(f, "<h1>How far off memory.stat was, per walk policy</h1>\n"
		"<p class=\"intro\">Each chart is one line of a cgroup's memory.stat: its <b>visible"
		" error</b> (shown &#8722; truth, what a reader arriving at that moment would get; 0"
		" while the cgroup is flushable) over time, every policy on the same axes, each"
		" column of pixels the min and max of its stretch of time, so short spikes show."
		"  Dots are the traced reads at the error the reader got after its read's flush"
		" decision; big outlined dots are <b>stale reads</b>, skipped while the cgroup was"
		" <b>stranded</b> (not flushable with more updates pending than per-CPU batching can"
		" hold back; shaded).  Dashed grey verticals are the periodic forced flushes.  Page"
		" lines in MiB, event lines as counts; time in seconds from the trace's start."
		"</p>\n");
	if (fleet) {
		fprintf(f, "<h2>Fleet: %d hosts</h2>\n<table class=\"fleet\"><thead><tr><th>host</th>"
			"<th>ancestors stranded</th><th>worst read error of a page line</th>"
			"<th>worst read error of an event line</th></tr></thead><tbody>\n", nr_hosts);
		for (i = 0; i < nr_hosts; i++)
			fleet_row(f, &hh[i], i);
		fprintf(f, "</tbody></table>\n");
	}
	for (i = 0; i < nr_hosts && !err; i++)
		err = host_section(f, &hh[i], i, fleet, o);
	fprintf(f, "<p class=\"note\">Written by memcg-replay " MCR_VERSION " (report --format html)."
		"</p>\n</body></html>\n");
out:
	for (i = 0; i < nr_hosts; i++)
		host_free(&hh[i]);
	free(hh);
	return err;
}
