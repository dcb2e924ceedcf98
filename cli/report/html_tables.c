// SPDX-License-Identifier: GPL-2.0
/*
 * html_tables.c - report --format html: the legend, the per-line and cost
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
#include "costs.h"
#include "html.h"
#include "results.h"
#include "sim.h"
#include "svg.h"

#define TABLE_LINES	8

static const char *ms_str(char *buf, size_t len, double ms)
{
	if (ms >= 1000)
		snprintf(buf, len, "%.2f s", ms / 1000);
	else
		snprintf(buf, len, "%.1f ms", ms);
	return buf;
}

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
		"<span><i class=\"sw forced\"></i>periodic forced flush</span></p>\n");
}

void html_line_table(FILE *f, const struct hhost *hh, const struct hline *ln, size_t n)
{
	char a[32], c[32], d[32];
	size_t i, j;

	fprintf(f, "<table class=\"lines\"><thead><tr><th>line</th><th>policy</th><th>worst read"
		"</th><th>visible max</th><th>stale / reads</th><th>stranded <small>(episodes)</small></th>"
		"</tr></thead><tbody>\n");
	for (i = 0; i < n && i < TABLE_LINES; i++) {
		for (j = ln[i].from; j < ln[i].to; j++) {
			const struct hrow *r = &hh->rows[j];
			const struct hrun *ru = run_of((struct hhost *)hh, r->run_id);

			fprintf(f, "<tr%s>", j == ln[i].from ? " class=\"first\"" : "");
			if (j == ln[i].from) {
				fprintf(f, "<td rowspan=\"%zu\">", ln[i].to - ln[i].from);
				esc(f, r->item);
				fprintf(f, "%s</td>", r->events ? " <small>(events)</small>" : "");
			}
			fprintf(f, "<td class=\"pol\"><i class=\"sw\" style=\"background:%s\"></i>",
				ru ? ru->colour : "#888");
			esc(f, ru ? ru->label : r->policy);
			fprintf(f, "</td><td class=\"n\">%s</td><td class=\"n\">%s"
				"</td><td class=\"n%s\">%" PRIu64 " / %" PRIu64 "</td><td class=\"n\">",
				val_str(a, sizeof(a), r->events, (double)r->max_read, hh->page_size),
				val_str(c, sizeof(c), r->events, (double)r->max_visible, hh->page_size),
				r->stale_reads ? " bad" : "", r->stale_reads, r->reads);
			if (r->stranded_ms > 0)
				fprintf(f, "%s <small>(%" PRIu64 ")</small>",
					ms_str(d, sizeof(d), r->stranded_ms), r->stranded_episodes);
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
	int i, err;

	fprintf(f, "<table class=\"cost\"><caption>What each policy cost (simulated, whole trace)"
		"</caption><thead><tr><th>run</th><th>flush model</th><th>updates</th><th>walk steps"
		"</th><th>flushes / requests</th><th>visits</th><th>dropped batches</th><th>replay"
		"</th></tr></thead><tbody>\n");
	for (i = 0; i < hh->nr_runs; i++) {
		struct db_run_counters c = { 0 };

		err = db_run_counters_get(hh->h->db, hh->runs[i].run_id, &c);
		if (err && err != -ENOENT)
			return err;
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

/* ---- validation ---- */

struct vrun {
	int64_t	last;
	char	policy[32], flush_model[32];	/* of the last validate run */
};

static int find_validate(const struct db_run_info *r, void *ctx)
{
	struct vrun *v = ctx;

	if (!strcmp(r->kind, "validate")) {
		v->last = r->run_id;
		snprintf(v->policy, sizeof(v->policy), "%s", r->policy);
		snprintf(v->flush_model, sizeof(v->flush_model), "%s", r->flush_model);
	}
	return 0;
}

#define MAX_CAUSES 8

struct causes {
	char		*name[MAX_CAUSES];
	uint64_t	n[MAX_CAUSES];
	uint64_t	other, total;
};

static int count_cause(const struct db_mismatch *m, void *ctx)
{
	struct causes *c = ctx;
	const char *name = m->cause ? m->cause : "(none named)";
	int i;

	c->total++;
	for (i = 0; i < MAX_CAUSES && c->name[i]; i++)
		if (!strcmp(c->name[i], name)) {
			c->n[i]++;
			return 0;
		}
	if (i == MAX_CAUSES) {
		c->other++;
		return 0;
	}
	c->name[i] = strdup(name);
	if (!c->name[i])
		return -ENOMEM;
	c->n[i] = 1;
	return 0;
}

int html_validation_section(FILE *f, struct hhost *hh)
{
	struct db_validation v = { 0 };
	struct causes cs = { 0 };
	struct vrun vr = { 0 };
	char *hist = NULL;
	int i, err;

	err = db_runs_foreach(hh->h->db, find_validate, &vr);
	if (err)
		return err;
	fprintf(f, "<h4>Does the simulator reproduce this kernel? (validate)</h4>\n");
	if (!vr.last) {
		fprintf(f, "<p class=\"note\">Not validated: run <code>memcg-replay validate</code> on"
			" this database to compare the simulator with the kernel's own counters.</p>\n");
		return 0;
	}
	err = db_validation_get(hh->h->db, vr.last, &v, &hist);
	free(hist);
	if (err == -ENOENT) {
		fprintf(f, "<p class=\"note\">Validate run %" PRId64 " stored no result.</p>\n", vr.last);
		return 0;
	}
	if (err)
		return err;
	err = db_mismatches_foreach(hh->h->db, vr.last, 100000, count_cause, &cs);
	if (!err) {
		double cmp = v.compared ? (double)v.compared : 1;

		fprintf(f, "<p>Run %" PRId64 " (", vr.last);
		esc(f, vr.policy);
		fprintf(f, ", flush model ");
		esc(f, vr.flush_model);
		fprintf(f, "): of %" PRIu64 " flush events, %" PRIu64 " compared; stats_updates matched"
			" <b>%.1f %%</b> (%" PRIu64 "), needs_flush %.1f %% (%" PRIu64 "); without"
			" allowing for races %.1f %% and %.1f %%.</p>\n", v.flush_events, v.compared,
			100.0 * (double)v.stats_updates_match / cmp, v.stats_updates_match,
			100.0 * (double)v.needs_flush_match / cmp, v.needs_flush_match,
			100.0 * (double)v.stats_updates_match_plain / cmp,
			100.0 * (double)v.needs_flush_match_plain / cmp);
		if (cs.total) {
			fprintf(f, "<p>Mismatches by cause (first %" PRIu64 "): ", cs.total);
			for (i = 0; i < MAX_CAUSES && cs.name[i]; i++) {
				fprintf(f, "%s", i ? "; " : "");
				esc(f, cs.name[i]);
				fprintf(f, " %" PRIu64, cs.n[i]);
			}
			if (cs.other)
				fprintf(f, "; other %" PRIu64, cs.other);
			fprintf(f, ".</p>\n");
		}
	}
	for (i = 0; i < MAX_CAUSES; i++)
		free(cs.name[i]);
	return err;
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

int html_meta_section(FILE *f, struct hhost *hh)
{
	struct db_trace_lost lost;
	int64_t online = -1, possible = -1, events = -1;
	char *warn = NULL;
	int err;

	err = db_trace_lost(hh->h->db, &lost);
	if (err)
		return err;
	if (lost.gaps || lost.overrun > 0 || lost.dropped > 0)
		fprintf(f, "<p class=\"banner\">This trace lost events: %" PRId64 " gap%s in the ring"
			" buffers (%" PRId64 " events counted%s), %" PRId64 " overwritten and %" PRId64
			" dropped.  What the kernel did in those gaps is unknown: errors near them may be"
			" wrong in either direction.</p>\n", lost.gaps, lost.gaps == 1 ? "" : "s",
			lost.gap_events, lost.gaps_unknown ? ", some of unknown size" : "",
			lost.overrun, lost.dropped);
	db_meta_get_int(hh->h->db, "nr_cpus_online", &online);
	db_meta_get_int(hh->h->db, "nr_cpus_possible", &possible);
	db_meta_get_int(hh->h->db, "event_count", &events);
	fprintf(f, "<dl class=\"meta\">");
	meta_cell(f, hh->h->db, "source", "source");
	meta_cell(f, hh->h->db, "kernel", "kernel_release");
	fprintf(f, "<dt>CPUs</dt><dd>%" PRId64 " online, %" PRId64 " possible</dd>", online, possible);
	meta_cell(f, hh->h->db, "clock", "trace_clock");
	fprintf(f, "<dt>span</dt><dd>%.3f s</dd>", (double)(hh->t1 - hh->t0) / 1e9);
	if (events >= 0)
		fprintf(f, "<dt>events</dt><dd>%" PRId64 "</dd>", events);
	fprintf(f, "<dt>lost events</dt><dd>%s</dd>", lost.gaps || lost.overrun > 0 ||
		lost.dropped > 0 ? "<b>yes, see above</b>" : "none");
	fprintf(f, "</dl>\n");
	if (db_meta_get(hh->h->db, "warnings", &warn) >= 0 && warn && *warn) {
		fprintf(f, "<pre class=\"warn\">");
		esc(f, warn);
		fprintf(f, "</pre>\n");
	}
	free(warn);
	return 0;
}
