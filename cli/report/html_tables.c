// SPDX-License-Identifier: GPL-2.0
/*
 * html_tables.c - the report's HTML ops: the legend, the per-line and cost
 * tables, the validation result and the trace's metadata of one host.
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

#define TABLE_LINES	8

/* ---- tables ---- */

void html_legend(FILE *f, const struct hhost *hh)
{
	int i;

	fprintf(f, "<p class=\"legend\">");
	for (i = 0; i < hh->nr_runs; i++) {
		fprintf(f, "<span><i class=\"sw\" style=\"background:%s\"></i>", hh->runs[i].colour);
		esc(f, hh->runs[i].label);
		fprintf(f, "</span> ");
	}
	fprintf(f, "<span><i class=\"dot\"></i>a read (its error after the flush decision)</span> "
		"<span><i class=\"dot big\"></i>a stale read</span> "
		"<span><i class=\"sw shade\"></i>stranded (shaded in the policy's colour)</span> "
		"<span><i class=\"sw forced\"></i>periodic forced flush</span>");
	if (hh->h->statlog.have)
		fprintf(f, " <span><i class=\"sq\"></i>a logged read: what memory.stat printed"
			" &#8722; truth (validate)</span>");
	fprintf(f, "</p>\n");
}

void html_line_table(FILE *f, const struct hhost *hh, const struct hline *ln, size_t n)
{
	char a[32], c[32], d[32], e[32], nm[2 * REPORT_NAME_LEN];
	size_t i, j;

	fprintf(f, "<table class=\"lines\"><thead><tr><th>line</th><th>policy</th><th>worst read"
		"</th><th>settled max</th><th>in flush <small>(transient)</small></th><th>stale / reads"
		"</th><th>stranded <small>(noticeable / episodes)</small></th></tr></thead><tbody>\n");
	for (i = 0; i < n && i < TABLE_LINES; i++) {
		for (j = ln[i].from; j < ln[i].to; j++) {
			const struct report_line *r = &hh->h->lines[j];
			const struct hrun *ru = run_of((struct hhost *)hh, r->run_id);

			fprintf(f, "<tr%s>", j == ln[i].from ? " class=\"first\"" : "");
			if (j == ln[i].from) {
				fprintf(f, "<td rowspan=\"%zu\">", ln[i].to - ln[i].from);
				esc(f, r->item);
				if (*report_line_names(nm, sizeof(nm), r)) {
					fprintf(f, "<br><small>");
					esc(f, nm + 1);
					fprintf(f, "</small>");
				}
				fprintf(f, "%s</td>", r->events ? " <small>(events)</small>" : "");
			}
			fprintf(f, "<td class=\"pol\"><i class=\"sw\" style=\"background:%s\"></i>",
				ru ? ru->colour : "#888");
			esc(f, ru ? ru->label : r->run->policy);
			fprintf(f, "</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
				"<td class=\"n flush\">%s</td><td class=\"n%s\">%" PRIu64 " / %" PRIu64
				"</td><td class=\"n%s\">",
				val_str(a, sizeof(a), r->events, (double)r->max_read, hh->h->page_size),
				val_str(c, sizeof(c), r->events, (double)r->max_settled, hh->h->page_size),
				r->split ? val_str(e, sizeof(e), r->events, (double)r->max_flush,
						   hh->h->page_size) : "?",
				r->stale_reads ? " bad" : "", r->stale_reads, r->reads,
				r->noticeable ? " bad" : "");
			if (r->stranded_ms > 0)
				fprintf(f, "%s <small>(%" PRIu64 " / %" PRIu64 ")</small>",
					report_ms_fixed_str(d, sizeof(d), r->stranded_ms), r->noticeable,
					r->stranded_episodes);
			else
				fprintf(f, "&#8211;");
			fprintf(f, "</td></tr>\n");
		}
	}
	fprintf(f, "</tbody></table>\n");
	if (n > TABLE_LINES)
		fprintf(f, "<p class=\"note\">%zu more lines: report --format csv lists every one.</p>\n",
			n - TABLE_LINES);
}

int html_cost_table(FILE *f, struct hhost *hh)
{
	int i;

	fprintf(f, "<table class=\"cost\"><caption>What each policy cost (simulated, whole trace)"
		"</caption><thead><tr><th>run</th><th>flush model</th><th>updates</th><th>walk steps"
		"</th><th>flushes / requests</th><th>visits</th><th>dropped batches</th><th>replay"
		"</th></tr></thead><tbody>\n");
	for (i = 0; i < hh->nr_runs; i++) {
		static const struct db_run_counters none;
		const struct db_run_counters c = hh->runs[i].run->have_counters ?
						 hh->runs[i].run->counters : none;

		fprintf(f, "<tr><td class=\"pol\"><i class=\"sw\" style=\"background:%s\"></i>",
			hh->runs[i].colour);
		esc(f, hh->runs[i].label);
		fprintf(f, " <small>#%" PRId64 "</small></td><td>", hh->runs[i].run_id);
		esc(f, hh->runs[i].flush_model);
		fprintf(f, "</td><td class=\"n\">%" PRIu64 "</td><td class=\"n\">%" PRIu64 " <small>"
			"(%.2f / update)</small></td><td class=\"n\">%" PRIu64 " / %" PRIu64 "</td>"
			"<td class=\"n\">%" PRIu64 "</td><td class=\"n\">%" PRIu64 "</td><td class=\"n\">"
			"%.1f s</td></tr>\n", c.updates, c.walk_steps,
			c.updates ? (double)c.walk_steps / (double)c.updates : 0.0, c.flushes,
			c.flush_requests, c.visits, c.dropped_batches, c.wall_s);
	}
	fprintf(f, "</tbody></table>\n");
	return 0;
}

/* memory.stat as printed: validate's comparison of the logged reads. */
static void statlog_section(FILE *f, const struct report_host *h)
{
	const struct report_statlog *sl = &h->statlog;
	char a[32];
	size_t i;

	if (!sl->have)
		return;
	fprintf(f, "<p><b>memory.stat as printed: %" PRIu64 " of %" PRIu64 " printed lines within 2 units"
		" of the simulation</b> <small>(each line of each logged read; validate run %" PRId64
		"; %" PRIu64 " exact, %" PRIu64 " off: %" PRIu64 " a flush decided otherwise, %" PRIu64
		" within the lock windows' updates)</small></p>\n", sl->sum.within2, sl->sum.pairs,
		sl->sum.run_id, sl->sum.exact, sl->sum.off, sl->sum.off_decision,
		sl->sum.off_window);
	if (!sl->nr)
		return;
	fprintf(f, "<table class=\"printed\"><caption>The worst error the kernel really printed"
		" (printed &#8722; truth)</caption><thead><tr><th>cgroup</th><th>line</th>"
		"<th>printed &#8722; truth</th><th>read</th><th>within 2 units</th></tr></thead>"
		"<tbody>\n");
	for (i = 0; i < sl->nr; i++) {
		const struct report_printed *p = &sl->lines[i];

		fprintf(f, "<tr><td>");
		esc(f, p->cgroup);
		fprintf(f, "</td><td>");
		esc(f, p->name);
		if (p->bytes)
			report_pages_str(a, sizeof(a), (double)p->printed_error / (double)h->page_size,
					 h->page_size);
		else
			snprintf(a, sizeof(a), "%" PRId64, p->printed_error);
		fprintf(f, "</td><td class=\"n\">%s</td><td class=\"n\">%" PRId64 "</td><td"
			" class=\"n\">%" PRIu64 " / %" PRIu64 "</td></tr>\n", a, p->read, p->within2,
			p->pairs);
	}
	fprintf(f, "</tbody></table>\n");
}

/* ---- validation ---- */

int html_validation_section(FILE *f, const struct report_host *h)
{
	const struct report_validation *vr = &h->val;
	const struct db_validation *v = &vr->v;
	double cmp = v->compared ? (double)v->compared : 1;
	int i;

	fprintf(f, "<h4>Does the simulator reproduce this kernel? (validate)</h4>\n");
	statlog_section(f, h);
	if (!vr->run_id) {
		fprintf(f, "<p class=\"note\">Not validated: run <code>memcg-replay validate</code> on"
			" this database to compare the simulator with the kernel's own counters.</p>\n");
		return 0;
	}
	if (!vr->stored) {
		fprintf(f, "<p class=\"note\">Validate run %" PRId64 " stored no result.</p>\n",
			vr->run_id);
		return 0;
	}
	fprintf(f, "<p>Run %" PRId64 " (", vr->run_id);
	esc(f, vr->policy);
	fprintf(f, ", flush model ");
	esc(f, vr->flush_model);
	fprintf(f, "): of %" PRIu64 " flush events, %" PRIu64 " compared; stats_updates matched"
		" <b>%.1f %%</b> (%" PRIu64 "), needs_flush %.1f %% (%" PRIu64 "); without"
		" allowing for races %.1f %% and %.1f %%.</p>\n", v->flush_events, v->compared,
		100.0 * (double)v->stats_updates_match / cmp, v->stats_updates_match,
		100.0 * (double)v->needs_flush_match / cmp, v->needs_flush_match,
		100.0 * (double)v->stats_updates_match_plain / cmp,
		100.0 * (double)v->needs_flush_match_plain / cmp);
	if (vr->total) {
		fprintf(f, "<p>Mismatches by cause (first %" PRIu64 "): ", vr->total);
		for (i = 0; i < REPORT_MAX_CAUSES && vr->cause[i]; i++) {
			fprintf(f, "%s", i ? "; " : "");
			esc(f, vr->cause[i]);
			fprintf(f, " %" PRIu64, vr->nr_cause[i]);
		}
		if (vr->other)
			fprintf(f, "; other %" PRIu64, vr->other);
		fprintf(f, ".</p>\n");
	}
	return 0;
}

/* ---- metadata ---- */

static void meta_cell(FILE *f, struct db *db, const char *label, const char *key)
{
	char *v = NULL;

	if (db_meta_get(db, key, &v) < 0 || !v)
		return;
	fprintf(f, "<dt>%s</dt><dd>", label);
	esc(f, v);
	fprintf(f, "</dd>");
	free(v);
}

int html_meta_section(FILE *f, const struct report_host *h)
{
	struct db_trace_lost lost;
	int64_t online = -1, possible = -1, events = -1;
	char *warn = NULL;
	int err;

	err = db_trace_lost(h->db, &lost);
	if (err)
		return err;
	if (lost.gaps || lost.overrun > 0 || lost.dropped > 0)
		fprintf(f, "<p class=\"banner\">This trace lost events: %" PRId64 " gap%s in the ring"
			" buffers (%" PRId64 " events counted%s), %" PRId64 " overwritten and %" PRId64
			" dropped.  What the kernel did in those gaps is unknown: errors near them may be"
			" wrong in either direction.</p>\n", lost.gaps, lost.gaps == 1 ? "" : "s",
			lost.gap_events, lost.gaps_unknown ? ", some of unknown size" : "",
			lost.overrun, lost.dropped);
	db_meta_get_int(h->db, "nr_cpus_online", &online);
	db_meta_get_int(h->db, "nr_cpus_possible", &possible);
	db_meta_get_int(h->db, "event_count", &events);
	fprintf(f, "<dl class=\"meta\">");
	meta_cell(f, h->db, "source", "source");
	meta_cell(f, h->db, "kernel", "kernel_release");
	fprintf(f, "<dt>CPUs</dt><dd>%" PRId64 " online, %" PRId64 " possible</dd>", online, possible);
	meta_cell(f, h->db, "clock", "trace_clock");
	fprintf(f, "<dt>span</dt><dd>%.3f s</dd>", (double)(h->t1 - h->t0) / 1e9);
	if (events >= 0)
		fprintf(f, "<dt>events</dt><dd>%" PRId64 "</dd>", events);
	fprintf(f, "<dt>lost events</dt><dd>%s</dd>", lost.gaps || lost.overrun > 0 ||
		lost.dropped > 0 ? "<b>yes, see above</b>" : "none");
	fprintf(f, "</dl>\n");
	if (db_meta_get(h->db, "warnings", &warn) >= 0 && warn && *warn) {
		fprintf(f, "<pre class=\"warn\">");
		esc(f, warn);
		fprintf(f, "</pre>\n");
	}
	free(warn);
	return 0;
}

/* ---- the cost in time ---- */

/* Each run's estimated cost in time, beside its staleness. */
int html_cost_estimates(FILE *f, const struct report_host *h)
{
	const struct report_costs *v = &h->costs;
	const struct report_cost *base;
	size_t i;

	fprintf(f, "<table class=\"cost\" id=\"cost-time\"><caption>Cost in time of the update "
		"path, beside the staleness");
	if (v->have_cal) {
		fprintf(f, " <small>(costs measured on ");
		svg_escape(f, v->cal.host);
		fprintf(f, " at ");
		svg_escape(f, v->cal.measured_at);
		fprintf(f, "; atomic adds contended: %.1f %%)</small>", 100 * v->basis.shared_fraction);
	}
	fprintf(f, "</caption><thead><tr><th>run</th><th>updates</th><th>walk steps / update</th>"
		"<th>atomic adds</th><th>stale reads</th><th>worst read error (pages)</th>");
	if (v->have_cal)
		fprintf(f, "<th>ns / update <small>(max)</small></th><th>ns / update vs break</th>"
			"<th>CPU s / s of trace</th>");
	fprintf(f, "</tr></thead><tbody>\n");
	for (i = 0; i < v->nr; i++) {
		const struct report_cost *c = &v->rows[i];
		double up = c->r.updates ? (double)c->r.updates : 1;

		base = report_cost_baseline(v, c);
		fprintf(f, "<tr><td class=\"pol\">");
		svg_escape(f, c->name);
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
		if (v->have_cal) {
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
	if (v->have_cal)
		fprintf(f, "Estimate: operation counts times costs measured by memcg-replay "
			"calibrate; (max) with every walk step on a cold tree and every atomic add "
			"contended. %s</p>\n", REPORT_COST_LEAVES_OUT);
	else
		fprintf(f, "No calibration in this database: <code>memcg-replay calibrate --db "
			"FILE</code> measures this host's costs, and the page then shows each run's "
			"estimated cost in time. Counts only.</p>\n");
	return 0;
}
