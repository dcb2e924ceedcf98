// SPDX-License-Identifier: GPL-2.0
/*
 * html.c - the report's HTML ops (see html.h for the page).
 *
 * The ancestors of each host of the model are ranked by
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
#include "html.h"
#include "model.h"
#include "results.h"
#include "sim.h"
#include "svg.h"

/* policy colours: break red, continue blue, legacy green (colour-blind safe enough with the dashes) */
static const char *const policy_colour[] = { "#d62728", "#1f77b4", "#2ca02c", "#9467bd" };

/*
 * The runs of a host as the page draws them, in policy order; colours by
 * policy, dashes for repeats.  Labels are the run's name, with the run and
 * its model where the name repeats.
 */
void html_host_init(struct hhost *hh, const struct report_host *h)
{
	int j;

	memset(hh, 0, sizeof(*hh));
	hh->h = h;
	for (j = 0; j < h->nr_runs && j < MAX_RUNS; j++) {
		const struct report_run *ru = &h->runs[j];
		struct hrun *r = &hh->runs[hh->nr_runs++];

		*r = (struct hrun){
			.run = ru, .run_id = ru->id, .policy = ru->policy,
			.flush_model = ru->flush_model, .batch = ru->batch, .cpus = ru->cpus,
			.colour = policy_colour[ru->rank < 3 ? ru->rank : 3],
			.dashed = j > 0 && !strcmp(h->runs[j - 1].policy, ru->policy),
		};
		if (ru->repeated)
			snprintf(r->label, sizeof(r->label), "%s #%" PRId64 " (%s)", ru->name, ru->id,
				 ru->flush_model);
		else
			snprintf(r->label, sizeof(r->label), "%s", ru->name);
	}
}

/* ---- ranking ---- */

struct hcg {
	size_t		from, to;	/* its rows */
	double		key_pages;	/* worst read error of a page line, pages */
	double		key_events;
	double		key_visible;	/* worst settled visible error of a page line */
	bool		stranded;	/* a noticeable stranded episode */
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
	const struct report_line *rows = hh->h->lines;
	size_t i, j, n = 0;

	for (i = 0; i < hh->h->nr_lines; i = j) {
		struct hcg c = { .from = i };

		for (j = i; j < hh->h->nr_lines && rows[j].cgroup_id == rows[i].cgroup_id &&
		     !strcmp(rows[j].cgroup, rows[i].cgroup); j++) {
			const struct report_line *r = &rows[j];

			if (r->events) {
				c.key_events = fmax(c.key_events, (double)r->max_read);
			} else {
				c.key_pages = fmax(c.key_pages, (double)r->max_read);
				c.key_visible = fmax(c.key_visible, (double)r->max_settled);
			}
			c.stranded |= r->noticeable > 0;
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
	const struct report_line *rows = hh->h->lines;
	size_t i, j, n = 0;

	for (i = c->from; i < c->to; i = j) {
		struct hline l = { .from = i, .events = rows[i].events };

		for (j = i; j < c->to && !strcmp(rows[j].item, rows[i].item); j++)
			l.key = fmax(l.key, (double)rows[j].max_read +
				     1e-9 * (double)rows[j].max_settled);
		l.to = j;
		if (l.key > 0)
			ln[n++] = l;
	}
	qsort(ln, n, sizeof(*ln), hline_cmp);
	return n;
}

/* ---- a host ---- */

static void host_anchor(FILE *f, int i)
{
	fprintf(f, "host-%d", i);
}

/* A host's section: its name and file, the trace's metadata. */
static int html_host(struct report_out *o, const struct report_host *h, int idx)
{
	FILE *f = o->f;

	fprintf(f, "<section class=\"host\" id=\"");
	host_anchor(f, idx);
	fprintf(f, "\">\n<h2>%s", o->m->nr_hosts > 1 ? "" : "Trace: ");
	esc(f, h->host);
	fprintf(f, " <small>");
	esc(f, h->file);
	fprintf(f, "</small></h2>\n");
	return html_meta_section(f, h);
}

/* The ancestors with the largest read errors: their worst lines' charts and table. */
static int html_lines(struct report_out *out, const struct report_host *h, int idx)
{
	const struct report_load *o = &out->m->o;
	size_t n = h->nr_lines ? h->nr_lines : 1;
	struct hcg *cg = calloc(n, sizeof(*cg));
	struct hline *ln = calloc(n, sizeof(*ln));
	size_t ncg, i, nl, j, shown = 0;
	FILE *f = out->f;
	struct hhost hh_;
	struct hhost *hh = &hh_;
	int err = 0;

	html_host_init(hh, h);
	if (!cg || !ln) {
		err = -ENOMEM;
		goto out;
	}
	ncg = host_cgroups(hh, cg);
	if (!ncg) {
		fprintf(f, "<p class=\"note\">No lag rows%s: nothing was ever wrong, or the runs"
			" asked for hold none.</p>\n", o->cgroup ? " for this cgroup" : "");
	}
	html_legend(f, hh);
	for (i = 0, shown = 0; i < ncg && shown < (o->cgroup ? 1 : HTML_TOP_CGROUPS) && !err; i++) {
		const struct report_line *r0 = &h->lines[cg[i].from];
		char a[32];

		nl = cgroup_lines(hh, &cg[i], ln);
		/* by default only what can be drawn: cgroups whose series replay stored */
		if (!o->cgroup && nl) {
			err = html_line_has_series(hh, &h->lines[ln[0].from]);
			if (err <= 0)
				continue;
			err = 0;
		}
		shown++;
		fprintf(f, "<h3>");
		esc(f, r0->cgroup);
		fprintf(f, " <small>id %" PRIu64 ", level %d, %" PRIu64 " reads; worst read error %s%s"
			"</small></h3>\n", r0->cgroup_id, r0->level, r0->reads,
			cg[i].key_pages > 0 ? val_str(a, sizeof(a), false, cg[i].key_pages, h->page_size)
					    : "0",
			cg[i].stranded ? "; <b class=\"bad\">stranded</b>" : "");
		fprintf(f, "<div class=\"row\"><div class=\"plots\">\n");
		for (j = 0; j < nl && j < HTML_TOP_LINES && !err; j++) {
			const struct report_line *lr = &h->lines[ln[j].from];
			char nm[2 * REPORT_NAME_LEN];
			const char *from;
			int kind, item;

			fprintf(f, "<figure><figcaption>");
			esc(f, lr->item);
			esc(f, report_line_names(nm, sizeof(nm), lr));
			from = lr->events ? NULL : mcr_item_rounded_from(MCR_EV_STATE, lr->item);
			if (from)
				fprintf(f, " <small>pages, rounded by the kernel from %s, shown in"
					" MiB</small></figcaption>\n", from);
			else
				fprintf(f, " <small>%s</small></figcaption>\n", lr->events ?
					"events: a count" : "pages, shown in MiB");
			err = db_item_by_name(h->db, lr->item, &kind, &item);
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
out:
	free(cg);
	free(ln);
	return err;
}

/* What each run cost: the counts, then the estimate in time. */
static int html_costs(struct report_out *o, const struct report_host *h, int idx)
{
	struct hhost hh;
	int err;

	html_host_init(&hh, h);
	fprintf(o->f, "<div class=\"row2\"><div>\n");
	err = html_cost_table(o->f, &hh);
	if (!err)
		err = html_cost_estimates(o->f, h);
	fprintf(o->f, "</div><div>\n");
	return err;
}

static int html_validation(struct report_out *o, const struct report_host *h, int idx)
{
	int err = html_validation_section(o->f, h);

	fprintf(o->f, "</div></div>\n");
	return err;
}

static int html_host_end(struct report_out *o, const struct report_host *h, int idx)
{
	fprintf(o->f, "</section>\n");
	return 0;
}

/* ---- the verdict ---- */

/* One host's verdict under the page's title. */
static void verdict_block(FILE *f, const struct report_host *h)
{
	const struct report_verdict *v = &h->verdict;
	char buf[REPORT_SENTENCE_LEN];
	size_t k;

	fprintf(f, "<div class=\"verdict%s\"><p><b>", v->nr_flags ? "" : " ok");
	esc(f, report_verdict_head(buf, sizeof(buf), h, false));
	fprintf(f, "</b></p>\n");
	if (v->nr_flags) {
		fprintf(f, "<ul>\n");
		for (k = 0; k < v->nr_flags && k < REPORT_VERDICT_CGROUPS; k++) {
			fprintf(f, "<li>");
			esc(f, report_verdict_flag(buf, sizeof(buf), h, &v->flags[k]));
			fprintf(f, "<br><small>");
			esc(f, report_verdict_cont(buf, sizeof(buf), h, &v->flags[k]));
			fprintf(f, "</small></li>\n");
		}
		if (v->nr_flags > REPORT_VERDICT_CGROUPS)
			fprintf(f, "<li>%zu more cgroups with stale reads (the tables below)</li>\n",
				v->nr_flags - REPORT_VERDICT_CGROUPS);
		fprintf(f, "</ul>\n");
	}
	if (*report_verdict_cost(buf, sizeof(buf), h)) {
		fprintf(f, "<p>");
		esc(f, buf);
		fprintf(f, "</p>\n");
	}
	fprintf(f, "</div>\n");
}

/* The verdict's columns of the fleet summary: the flagged cgroups, continue, its cost. */
static void verdict_cells(FILE *f, const struct report_host *h)
{
	const struct report_verdict *v = &h->verdict;
	char buf[REPORT_SENTENCE_LEN];
	size_t k;

	fprintf(f, "<td%s>", v->nr_flags ? " class=\"bad\"" : "");
	if (!v->nr_flags)
		esc(f, report_verdict_head(buf, sizeof(buf), h, false));
	for (k = 0; k < v->nr_flags && k < REPORT_VERDICT_CGROUPS; k++) {
		fprintf(f, "%s", k ? "<br>" : "");
		esc(f, report_verdict_flag(buf, sizeof(buf), h, &v->flags[k]));
	}
	if (v->nr_flags > REPORT_VERDICT_CGROUPS)
		fprintf(f, "<br>%zu more", v->nr_flags - REPORT_VERDICT_CGROUPS);
	fprintf(f, "</td><td>");
	for (k = 0; k < v->nr_flags && k < REPORT_VERDICT_CGROUPS; k++) {
		fprintf(f, "%s", k ? "<br>" : "");
		esc(f, report_verdict_cont(buf, sizeof(buf), h, &v->flags[k]));
	}
	fprintf(f, "</td><td>");
	esc(f, report_verdict_cost(buf, sizeof(buf), h));
	fprintf(f, "</td>");
}

/* ---- the fleet summary ---- */

static void fleet_row(FILE *f, const struct report_host *h, int idx)
{
	const struct report_line *worst = NULL, *worst_ev = NULL, *rows = h->lines;
	char a[32];
	size_t i, j, stranded = 0;
	int64_t lost_gaps = 0;
	struct db_trace_lost lost;
	struct hhost hh_, *hh = &hh_;

	html_host_init(hh, h);
	for (i = 0; i < h->nr_lines; i++) {
		const struct report_line *r = &rows[i];

		if (!r->events && (!worst || r->max_read > worst->max_read))
			worst = r;
		if (r->events && (!worst_ev || r->max_read > worst_ev->max_read))
			worst_ev = r;
	}
	/* ancestors noticeably stranded under some policy: distinct cgroups */
	for (i = 0; i < h->nr_lines; i++) {
		if (!rows[i].noticeable)
			continue;
		for (j = 0; j < i; j++)
			if (rows[j].cgroup_id == rows[i].cgroup_id && rows[j].noticeable)
				break;
		if (j == i)
			stranded++;
	}
	if (!db_trace_lost(h->db, &lost))
		lost_gaps = lost.gaps + (lost.overrun > 0) + (lost.dropped > 0);
	fprintf(f, "<tr><td><a href=\"#");
	host_anchor(f, idx);
	fprintf(f, "\">");
	esc(f, h->label);
	fprintf(f, "</a>%s</td><td>", lost_gaps ? " <b class=\"bad\">lost events</b>" : "");
	esc(f, h->file);
	fprintf(f, "</td><td class=\"n%s\">%zu</td><td>", stranded ? " bad" : "", stranded);
	if (worst && worst->max_read) {
		const struct hrun *ru = run_of(hh, worst->run_id);

		fprintf(f, "%s ", val_str(a, sizeof(a), false, (double)worst->max_read, h->page_size));
		esc(f, worst->item);
		fprintf(f, " of ");
		esc(f, worst->cgroup);
		fprintf(f, " under ");
		esc(f, ru ? ru->label : worst->run->policy);
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
	fprintf(f, "</td>");
	verdict_cells(f, h);
	fprintf(f, "</tr>\n");
}

static const char css[] =
	"*{box-sizing:border-box}"
	"body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;"
	"color:#222;background:#fff;margin:0 auto;padding:16px 24px;max-width:1500px}"
	"h1{font-size:22px;margin:0 0 4px}h2{font-size:19px;border-bottom:2px solid #ccc;"
	"padding-bottom:2px;margin:28px 0 8px}h3{font-size:16px;margin:22px 0 6px}h4{margin:14px 0 4px}"
	"small{color:#666;font-weight:normal}"
	".intro{color:#444;max-width:75em;margin:4px 0 10px}"
	".verdict{border-left:4px solid #b00;padding:2px 12px;margin:8px 0 12px}"
	".verdict.ok{border-left-color:#2ca02c}.verdict ul{margin:4px 0}"
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
	"svg .printed{stroke:#000;stroke-width:5;stroke-linecap:square}"
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
	"i.sq{display:inline-block;width:6px;height:6px;background:#000;margin:0 4px 1px 0;"
	"vertical-align:middle}"
	"@page{size:A4 landscape;margin:12mm}"
	"@media print{body{max-width:none;padding:0;font-size:10pt}"
	".row,.row2{grid-template-columns:minmax(0,3fr) minmax(0,2fr)}"
	"figure,table,.host h3{break-inside:avoid}section.host{break-before:page}"
	"section.host:first-of-type{break-before:auto}a{color:inherit;text-decoration:none}"
	".banner{border:2px solid #000}}";

static int html_begin(struct report_out *o)
{
	const struct report_model *m = o->m;
	bool fleet = m->nr_hosts > 1;
	FILE *f = o->f;
	int i;

	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		"<title>memcg-replay: how stale memory.stat got");
	if (!fleet) {
		fprintf(f, " (");
		esc(f, m->hosts[0].host);
		fprintf(f, ")");
	}
	fprintf(f, "</title>\n<style>%s</style></head><body>\n", css);
	fprintf(f, "<h1>How far off memory.stat was, per walk policy</h1>\n"
		"<p class=\"intro\">Each chart is one line of a cgroup's memory.stat: its <b>visible"
		" error</b> (shown &#8722; truth, what a reader arriving at that moment would get; 0"
		" while the cgroup is flushable) over time, every policy on the same axes, each"
		" column of pixels the min and max of its stretch of time, so short spikes show."
		"  The scale is the <b>settled</b> error's (while no flush is in progress: what"
		" tells the policies apart) and the reads'; the <b>in-flush</b> transient (while a"
		" flush is in progress, as large under every policy) runs off it, clipped, with a"
		" note.  Only a <b>noticeable</b> stranded episode (a read skipped, or at least"
		" 1 ms) is flagged."
		"  Dots are the traced reads at the error the reader got after its read's flush"
		" decision; big outlined dots are <b>stale reads</b>, skipped while the cgroup was"
		" <b>stranded</b> (not flushable with more updates pending than per-CPU batching can"
		" hold back; shaded).  Dashed grey verticals are the periodic forced flushes.  Page"
		" lines in MiB, event lines as counts; time in seconds from the trace's start."
		"</p>\n");
	if (fleet) {
		fprintf(f, "<h2>Fleet: %d hosts</h2>\n<table class=\"fleet\"><thead><tr><th>host</th>"
			"<th>file</th>"
			"<th>cgroups noticeably stranded</th><th>worst read error of a page line</th>"
			"<th>worst read error of an event line</th><th>stale reads under the traced"
			" kernel's policy</th><th>under continue</th><th>continue's cost</th></tr>"
			"</thead><tbody>\n", m->nr_hosts);
		for (i = 0; i < m->nr_hosts; i++)
			fleet_row(f, &m->hosts[i], i);
		fprintf(f, "</tbody></table>\n");
	} else {
		verdict_block(f, &m->hosts[0]);
	}
	return 0;
}

static int html_end(struct report_out *o)
{
	fprintf(o->f, "<p class=\"note\">Written by memcg-replay " MCR_VERSION " (report --format html)."
		"</p>\n</body></html>\n");
	return 0;
}

const struct report_ops report_html_ops = {
	.name = "html", .costs_always = true,
	.need = REPORT_NEED_COSTS | REPORT_NEED_VALIDATION | REPORT_NEED_COUNTERS |
		REPORT_NEED_STATLOG |
		REPORT_NEED_VERDICT,
	.begin = html_begin, .host = html_host, .lines = html_lines, .costs = html_costs,
	.validation = html_validation, .host_end = html_host_end, .end = html_end,
};
