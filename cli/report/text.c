// SPDX-License-Identifier: GPL-2.0
/*
 * text.c - the report's text ops (model.h): for each host, the table of its
 * lines (text_table.c), then the cost table; with several hosts a "== host"
 * header before each.  First of all, each host's verdict (verdict.c) and,
 * with several databases, a summary line per database.  The same ops write replay's
 * end-of-pass summary from the model pass.c fills: its ancestors and each
 * run's counts.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "text_local.h"

/* ---- replay's end-of-pass summary (pass.c made the model) ---- */

/* The label column's width: 10 as it always was, wider for a grid's names. */
static int pass_label_width(const struct report_host *h)
{
	int i, w = 10;

	for (i = 0; i < h->nr_runs; i++)
		if ((int)strlen(h->runs[i].name) > w)
			w = (int)strlen(h->runs[i].name);
	return w;
}

/* The ancestors, worst first, each run's worst page line a reader got. */
static int pass_lines(struct report_out *o, const struct report_host *h)
{
	int lw = pass_label_width(h);
	FILE *f = o->f;
	size_t i;

	fprintf(f, "Ancestors by the worst error a reader got on a page line of memory.stat:\n");
	if (!h->nr_lines)
		fprintf(f, "  (no cgroup with children)\n");
	for (i = 0; i < h->nr_lines; i++) {
		const struct report_line *l = &h->lines[i];
		char a[32], b[32], v[32], reads[48];

		if (!i || l->cgroup_id != h->lines[i - 1].cgroup_id) {
			fprintf(f, "  %s (id %" PRIu64 ")\n", l->cgroup, l->cgroup_id);
			fprintf(f, "    %-*s %-12s %-24s %-13s %-13s %s\n", lw, "policy", "worst read",
				"line", "stale reads", "settled max", "stranded");
		}
		snprintf(reads, sizeof(reads), "%" PRIu64 " of %" PRIu64, l->stale_reads, l->reads);
		if (!l->reads)
			snprintf(a, sizeof(a), "not read");
		else
			report_pages_str(a, sizeof(a), (double)l->max_read, h->page_size);
		fprintf(f, "    %-*s %-12s %-24s %-13s %-13s %s in %" PRIu64 "\n", lw, l->run->name, a,
			l->item, reads, report_pages_str(v, sizeof(v), (double)l->max_settled,
							 h->page_size),
			report_ms_str(b, sizeof(b), l->stranded_ms), l->stranded_episodes);
	}
	return 0;
}

/* Each run's counts, in the order of the pass. */
static int pass_costs(struct report_out *o, const struct report_host *h)
{
	int lw = pass_label_width(h), i;
	FILE *f = o->f;

	fprintf(f, "\nCost per %s:\n  %-*s %12s %12s %12s %10s %10s %12s %12s %8s\n",
		h->grid ? "run" : "policy", lw, "policy", "walk_steps", "pcpu_adds", "atomic_adds",
		"dropped", "flushes", "visits", "atomic_resets", "run_id");
	for (i = 0; i < h->nr_runs; i++) {
		const struct report_run *r = &h->runs[i];
		const struct db_run_counters *c = &r->counters;

		fprintf(f, "  %-*s %12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %10" PRIu64 " %10" PRIu64
			" %12" PRIu64 " %12" PRIu64 " %8" PRId64 "\n", lw, r->name, c->walk_steps,
			c->pcpu_adds, c->atomic_adds, c->dropped_batches, c->flushes, c->visits,
			c->atomic_resets, r->id);
	}
	return 0;
}

/* ---- the cost table ---- */

static int text_costs(struct report_out *o, const struct report_host *h, int idx)
{
	const struct report_costs *v = &h->costs;
	const struct report_cost *base;
	FILE *f = o->f;
	size_t i;
	int err = 0;

	if (h->pass)
		return pass_costs(o, h);
	fprintf(f, "\nCost in time of each policy's update path (memcg_rstat_updated() walk)\n");
	if (!v->have_cal) {
		report_wrap(f, "No calibration: 'memcg-replay calibrate --db FILE' measures this "
			  "host's costs into FILE (or report --calibration CALIB with a file of "
			  "calibrate -o); counts only.");
	} else {
		char *msg = NULL;

		if (asprintf(&msg, "Costs measured on %s at %s (%s).  Atomic adds priced as "
			     "contended: %.1f %%, the share of walk visits to a memcg that another "
			     "CPU's update reached < %" PRIu64 " us before; the rest uncontended.",
			     v->cal.host, v->cal.measured_at, v->source, 100 * v->basis.shared_fraction,
			     v->basis.window_ns / 1000) < 0) {
			err = -ENOMEM;
			goto out;
		}
		report_wrap(f, msg);
		free(msg);
	}
	fprintf(f, "  %-*s %-9s %10s %8s %11s %11s", v->grid ? 28 : 12, "policy", "model",
		"updates", "steps/up", "atomic adds", "stale reads");
	if (v->have_cal)
		fprintf(f, " %10s %10s %11s %11s", "ns/update", "(max)", "ns vs break", "CPU s/s");
	fprintf(f, "\n");
	for (i = 0; i < v->nr; i++) {
		const struct report_cost *c = &v->rows[i];
		double up = c->r.updates ? (double)c->r.updates : 1;
		char label[REPORT_NAME_LEN + 24], stale[32];

		base = report_cost_baseline(v, c);
		snprintf(label, sizeof(label), "%s#%" PRId64, c->name, c->r.run_id);
		snprintf(stale, sizeof(stale), "%" PRIu64 "/%" PRIu64, c->r.stale_reads, c->r.reads);
		fprintf(f, "  %-*s %-9s %10" PRIu64 " %8.2f %11" PRIu64 " %11s", v->grid ? 28 : 12, label,
			c->r.flush_model, c->r.updates, (double)c->r.walk_steps / up,
			c->r.atomic_adds, stale);
		if (v->have_cal) {
			fprintf(f, " %10.2f %10.2f ", c->e.ns_per_update, c->e.ns_per_update_max);
			if (base && base != c)
				fprintf(f, "%+11.2f", c->e.ns_per_update - base->e.ns_per_update);
			else
				fprintf(f, "%11s", "-");
			fprintf(f, " %11.3g", c->e.cpu_s_per_s);
		}
		fprintf(f, "\n");
	}
	if (v->have_cal)
		report_wrap(f, "(max): every step on a cold tree, every atomic add contended.  "
			  REPORT_COST_LEAVES_OUT);
out:
	return err;
}


/* ---- the verdict ---- */

/* "450 MiB" of a page line, "9 events" of an event line, "0" */
static const char *sum_worst(char *buf, size_t len, const struct report_host *h,
			     const struct report_run_sum *s)
{
	const struct report_line *w = s->worst;

	if (!w || !w->max_read)
		snprintf(buf, len, "0");
	else if (w->events)
		snprintf(buf, len, "%" PRIu64 " event%s", w->max_read, w->max_read == 1 ? "" : "s");
	else
		report_pages_str(buf, len, (double)w->max_read, h->page_size);
	return buf;
}

/* One run's three columns of the summary; "-" when the run is not in the report. */
static void sum_cells(FILE *f, const struct report_host *h, const struct report_run *r,
		      bool whole)
{
	struct report_run_sum s;
	char a[32], b[48];

	if (!r) {
		fprintf(f, " %7s %11s %9s", "-", "-", "-");
		return;
	}
	report_run_sum(h, r, whole, &s);
	snprintf(b, sizeof(b), "%" PRIu64 "/%" PRIu64, s.stale_reads, s.reads);
	fprintf(f, " %7zu %11s %9s", s.stale_cgroups, b, sum_worst(a, sizeof(a), h, &s));
}

/*
 * Several databases: one line per host, under its traced kernel's policy and
 * under continue: the cgroups with stale reads, stale reads of reads and the
 * worst read error (the verdict's runs).
 */
static void text_summary(struct report_out *o)
{
	const struct report_model *m = o->m;
	bool whole = !m->o.cgroup;
	FILE *f = o->f;
	int i, w = 4, wf = 4;

	for (i = 0; i < m->nr_hosts; i++) {
		if ((int)strlen(m->hosts[i].host) > w)
			w = (int)strlen(m->hosts[i].host);
		if ((int)strlen(m->hosts[i].file) > wf)
			wf = (int)strlen(m->hosts[i].file);
	}
	fprintf(f, "\nSummary of %d databases: cgroups with stale reads, stale reads of reads and\n"
		"the worst read error, under the traced kernel's policy, then under continue\n",
		m->nr_hosts);
	fprintf(f, "  %-*s %-*s %-8s %7s %11s %9s |%7s %11s %9s\n", w, "host", wf, "file", "policy",
		"cgroups", "stale/reads", "worst", "cgroups", "stale/reads", "worst");
	for (i = 0; i < m->nr_hosts; i++) {
		const struct report_host *h = &m->hosts[i];
		const struct report_verdict *v = &h->verdict;

		fprintf(f, "  %-*s %-*s %-8s", w, h->host, wf, h->file, v->policy ? v->policy : "?");
		sum_cells(f, h, v->run, whole);
		fprintf(f, " |");
		sum_cells(f, h, v->cont, whole);
		fputc('\n', f);
	}
}

/* First: per host, the verdict on its traced kernel's policy. */
static int text_begin(struct report_out *o)
{
	char buf[REPORT_SENTENCE_LEN];
	FILE *f = o->f;
	size_t k;
	int i;

	if (o->m->nr_hosts && o->m->hosts[0].pass)
		return 0;	/* replay's summary: no verdict yet, the runs were just made */
	for (i = 0; i < o->m->nr_hosts; i++) {
		const struct report_host *h = &o->m->hosts[i];
		const struct report_verdict *v = &h->verdict;

		fprintf(f, "%s\n", report_verdict_head(buf, sizeof(buf), h, true));
		for (k = 0; k < v->nr_flags && k < REPORT_VERDICT_CGROUPS; k++) {
			fprintf(f, "  %s\n", report_verdict_flag(buf, sizeof(buf), h, &v->flags[k]));
			fprintf(f, "    %s\n", report_verdict_cont(buf, sizeof(buf), h, &v->flags[k]));
		}
		if (v->nr_flags > REPORT_VERDICT_CGROUPS)
			fprintf(f, "  ... %zu more cgroups with stale reads (the table below)\n",
				v->nr_flags - REPORT_VERDICT_CGROUPS);
		if (*report_verdict_cost(buf, sizeof(buf), h))
			report_wrap(f, buf);
	}
	if (o->m->nr_hosts > 1)
		text_summary(o);
	fputc('\n', f);
	return 0;
}

/* ---- the ops ---- */

static int text_host(struct report_out *o, const struct report_host *h, int idx)
{
	if (o->m->nr_hosts > 1)
		fprintf(o->f, "%s== host %s (%s)\n", idx ? "\n" : "", h->host, h->file);
	return 0;
}

static int text_lines(struct report_out *o, const struct report_host *h, int idx)
{
	return h->pass ? pass_lines(o, h) : text_table(o, h);
}

const struct report_ops report_text_ops = {
	.name = "table", .need = REPORT_NEED_COSTS | REPORT_NEED_VERDICT | REPORT_NEED_STATLOG,
	 .costs_always = true,
	.begin = text_begin, .host = text_host, .lines = text_lines, .costs = text_costs,
};
