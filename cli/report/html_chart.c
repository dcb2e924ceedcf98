// SPDX-License-Identifier: GPL-2.0
/*
 * html_chart.c - report --format html: one line's chart, every run on the
 * same axes (series reduced per pixel column, reads as markers, stale reads
 * highlighted, stranded episodes shaded, forced flushes marked).
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
#include "results.h"
#include "sim.h"
#include "svg.h"

/* chart geometry, SVG user units (the SVG scales to the column's width) */
#define CH_W		900
#define CH_H		250
#define CH_L		62	/* plot area: x from CH_L to CH_W - CH_R */
#define CH_R		12
#define CH_T		14
#define CH_B		40	/* y from CH_T to CH_H - CH_B */
#define PLOT_W		(CH_W - CH_L - CH_R)
#define PLOT_H		(CH_H - CH_T - CH_B)


/* ---- one chart ---- */

struct chart {
	struct hhost		*hh;
	struct svg_reduce	red[MAX_RUNS];
	struct svg_reduce	marks[MAX_RUNS][2];	/* reads: [0] fresh or right, [1] stale */
	struct svg_reduce	printed;	/* logged reads: memory.stat's printed - truth */
	const struct report_printed *pline;	/* the line that prints this item; NULL */
	double			scale;		/* item unit -> axis unit */
	double			ymin, ymax;	/* the reads' */
	double			smin, smax;	/* the series' */
	int			cur;		/* run being read */
	bool			any;
};

static double ts_s(const struct hhost *hh, uint64_t ts)
{
	return ((double)(int64_t)ts - (double)hh->h->t0) / 1e9;
}

static int chart_sample(const struct db_series *s, void *ctx)
{
	struct chart *c = ctx;
	double lo = (double)s->min_error * c->scale, hi = (double)s->max_error * c->scale;

	svg_reduce_add(&c->red[c->cur], ts_s(c->hh, s->ts), lo, hi);
	c->smin = fmin(c->smin, lo);
	c->smax = fmax(c->smax, hi);
	c->any = true;
	return 0;
}

/* Keep, per column, the read with the largest |error| (separately for stale reads). */
static int chart_read(const struct db_item_read *r, void *ctx)
{
	struct chart *c = ctx;
	struct svg_reduce *m = &c->marks[c->cur][r->stale];
	double v = (double)r->error * c->scale;
	struct svg_col *col = &m->col[svg_reduce_col(m, ts_s(c->hh, r->ts))];

	if (!col->set || fabs(v) > fabs(col->hi))
		*col = (struct svg_col){ .lo = v, .hi = v, .set = true };
	c->ymin = fmin(c->ymin, v);
	c->ymax = fmax(c->ymax, v);
	return 0;
}

/* A logged read of the line: printed - truth, in the chart's unit, anchors aside. */
static int chart_printed(const struct db_stat_check *r, void *ctx)
{
	struct chart *c = ctx;
	double v;
	struct svg_col *col;

	if (r->verdict == DB_STAT_ANCHOR || strcmp(r->name, c->pline->name))
		return 0;
	v = (double)(r->printed - r->truth) / (double)(r->per > 0 ? r->per : 1) * c->scale;
	col = &c->printed.col[svg_reduce_col(&c->printed, ts_s(c->hh, r->request_ts))];
	if (!col->set || fabs(v) > fabs(col->hi))
		*col = (struct svg_col){ .lo = v, .hi = v, .set = true };
	c->ymin = fmin(c->ymin, v);
	c->ymax = fmax(c->ymax, v);
	return 0;
}

struct shade {
	FILE			*f;
	const struct hhost	*hh;
	const struct svg_scale	*x;
	const char		*colour;
	int			n;
};

static int chart_episode(const struct db_episode *e, void *ctx)
{
	struct shade *s = ctx;
	double a = svg_map(s->x, ts_s(s->hh, e->start_ts)), b = svg_map(s->x, ts_s(s->hh, e->end_ts));

	fprintf(s->f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\""
		" fill-opacity=\"0.13\"/>\n", a, CH_T, fmax(b - a, 1), PLOT_H, s->colour);
	s->n++;
	return 0;
}

struct forced {
	FILE			*f;
	const struct hhost	*hh;
	const struct svg_scale	*x;
	int			last_px, n;
};

static int chart_forced(const struct db_item_read *r, void *ctx)
{
	struct forced *fc = ctx;
	int px = (int)lround(svg_map(fc->x, ts_s(fc->hh, r->ts)));

	if (px == fc->last_px)
		return 0;
	fc->last_px = px;
	fprintf(fc->f, "M%d %dv%d", px, CH_T, PLOT_H);
	fc->n++;
	return 0;
}

static void chart_marks(FILE *f, const struct svg_reduce *m, const struct svg_scale *y,
			const char *attrs)
{
	int i, n = 0;

	for (i = 0; i < m->width; i++)
		if (m->col[i].set)
			n++;
	if (!n)
		return;
	fprintf(f, "<path %s d=\"", attrs);
	for (i = 0; i < m->width; i++)
		if (m->col[i].set)
			fprintf(f, "M%d %.0fh0", CH_L + i, round(svg_map(y, m->col[i].hi)));
	fprintf(f, "\"/>\n");
}

static void chart_axes(FILE *f, const struct svg_scale *x, const struct svg_scale *y,
		       double span_s, const char *yunit)
{
	struct svg_ticks xt, yt;
	char b[32];
	int i;

	svg_ticks(0, span_s > 0 ? span_s : 1, 11, &xt);
	svg_ticks(y->d0, y->d1, 6, &yt);
	fprintf(f, "<g class=\"grid\">");
	for (i = 0; i < yt.n; i++)
		fprintf(f, "<path d=\"M%d %.1fh%d\"/>", CH_L, svg_map(y, yt.v[i]), PLOT_W);
	fprintf(f, "</g>\n<g class=\"tick\">");
	for (i = 0; i < yt.n; i++)
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>", CH_L - 5,
			svg_map(y, yt.v[i]) + 4, svg_num(b, sizeof(b), yt.v[i], yt.decimals));
	for (i = 0; i < xt.n && xt.v[i] <= x->d1 + 1e-9; i++)
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>",
			svg_map(x, xt.v[i]), CH_H - CH_B + 16, svg_num(b, sizeof(b), xt.v[i], xt.decimals));
	fprintf(f, "</g>\n<path class=\"zero\" d=\"M%d %.1fh%d\"/>\n", CH_L, svg_map(y, 0), PLOT_W);
	fprintf(f, "<rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>\n", CH_L,
		CH_T, PLOT_W, PLOT_H);
	fprintf(f, "<text class=\"axis\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">seconds from trace"
		" start</text>\n", CH_L + PLOT_W / 2, CH_H - 6);
	fprintf(f, "<text class=\"axis\" transform=\"translate(13 %d) rotate(-90)\""
		" text-anchor=\"middle\">shown \xe2\x88\x92 truth, %s</text>\n", CH_T + PLOT_H / 2, yunit);
}

/*
 * The largest settled and in-flush visible errors of this line over the
 * runs, in the item's unit; false when some run's results predate the split.
 */
static bool line_split(const struct hhost *hh, const struct report_line *r0, double *settled,
		       double *flush)
{
	const struct report_host *h = hh->h;
	size_t i;

	*settled = *flush = 0;
	for (i = 0; i < h->nr_lines; i++) {
		const struct report_line *l = &h->lines[i];

		if (l->cgroup_id != r0->cgroup_id || strcmp(l->item, r0->item) ||
		    strcmp(l->cgroup, r0->cgroup))
			continue;
		if (!l->split)
			return false;
		*settled = fmax(*settled, (double)l->max_settled);
		*flush = fmax(*flush, (double)l->max_flush);
	}
	return true;
}

/*
 * One line of one cgroup: every run's visible error, reads, episodes, forced
 * flushes.  The scale is the settled error's and the reads': the in-flush
 * transient (as large under every policy) would dwarf what tells the
 * policies apart, so it runs off the scale, clipped, and a note says how far.
 */
int html_chart_write(FILE *f, struct hhost *hh, const struct report_line *r0, int kind, int item)
{
	struct chart c = { .hh = hh, .ymin = 0, .ymax = 0 };
	double span_s = (double)(hh->h->t1 - hh->h->t0) / 1e9;
	double settled, flush, lo, hi;
	bool split = line_split(hh, r0, &settled, &flush), clipped;
	struct svg_scale x, y;
	struct svg_ticks yt;
	int i, err = 0;

	if (!(span_s > 0))
		span_s = 1;
	c.scale = r0->events ? 1 : (double)hh->h->page_size / 1048576.0;
	for (i = 0; i < hh->nr_runs && !err; i++) {
		struct db_reads_filter rf = {
			.run_id = hh->runs[i].run_id, .cgroup_id = r0->cgroup_id, .kind = kind,
			.item = item,
		};

		err = svg_reduce_init(&c.red[i], 0, span_s, PLOT_W) ?:
		      svg_reduce_init(&c.marks[i][0], 0, span_s, PLOT_W) ?:
		      svg_reduce_init(&c.marks[i][1], 0, span_s, PLOT_W);
		c.cur = i;
		err = err ?: db_series_foreach(hh->h->db, hh->runs[i].run_id, r0->cgroup_id, kind,
					       item, chart_sample, &c);
		err = err ?: db_item_reads_foreach(hh->h->db, &rf, chart_read, &c);
	}
	/* memory.stat as printed, where validate compared logged reads of this line */
	c.pline = hh->h->statlog.have ? report_line_printed(hh->h, r0) : NULL;
	if (!err && c.pline) {
		err = svg_reduce_init(&c.printed, 0, span_s, PLOT_W) ?:
		      db_stat_checks_foreach(hh->h->db, hh->h->statlog.sum.run_id, r0->cgroup_id,
					     chart_printed, &c);
		if (err == -ENOENT)
			err = 0;
	}
	if (err)
		goto out;
	if (!c.any) {
		fprintf(f, "<p class=\"note\">No series stored for ");
		esc(f, r0->cgroup);
		fprintf(f, ": replay with --series-cgroup ");
		esc(f, r0->cgroup);
		fprintf(f, " to plot it.</p>\n");
		goto out;
	}
	/* the axis: 1-2-5 ticks around the reads, the settled error and 0 */
	lo = split ? fmax(c.smin, -settled * c.scale) : c.smin;
	hi = split ? fmin(c.smax, settled * c.scale) : c.smax;
	lo = fmin(c.ymin, lo);
	hi = fmax(c.ymax, hi);
	svg_ticks(lo, hi > lo ? hi : lo + 1, 6, &yt);
	clipped = c.smin < yt.v[0] || c.smax > yt.v[yt.n - 1];
	x = (struct svg_scale){ 0, span_s, CH_L, CH_L + PLOT_W };
	y = (struct svg_scale){ yt.v[0], yt.v[yt.n - 1], CH_T + PLOT_H, CH_T };
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 %d %d\""
		" role=\"img\"><title>", CH_W, CH_H);
	esc(f, r0->cgroup);
	fprintf(f, " ");
	esc(f, r0->item);
	fprintf(f, ": visible error over time</title>\n");
	/* stranded episodes under everything, then forced flushes */
	for (i = 0; i < hh->nr_runs && !err; i++) {
		struct shade s = { f, hh, &x, hh->runs[i].colour, 0 };

		err = db_episodes_foreach(hh->h->db, hh->runs[i].run_id, r0->cgroup_id,
					  chart_episode, &s);
	}
	if (!err && hh->nr_runs) {
		struct forced fc = { f, hh, &x, -1, 0 };
		struct db_reads_filter rf = { .run_id = hh->runs[0].run_id, .forced = true };

		/* an empty d is valid SVG: a trace without forced flushes draws none */
		fprintf(f, "<path class=\"forced\" d=\"");
		err = db_item_reads_foreach(hh->h->db, &rf, chart_forced, &fc);
		fprintf(f, "\"/>\n");
	}
	chart_axes(f, &x, &y, span_s, r0->events ? "events" : "MiB");
	/* a nested svg clips what runs off the scale to the plot area */
	if (clipped)
		fprintf(f, "<svg x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" viewBox=\"%d %d %d %d\""
			" overflow=\"hidden\">\n", CH_L, CH_T, PLOT_W, PLOT_H, CH_L, CH_T, PLOT_W,
			PLOT_H);
	/*
	 * Last policy first, each under the next with a wider stroke: where two
	 * policies agree (continue and legacy often do) both colours still show.
	 */
	for (i = hh->nr_runs - 1; i >= 0; i--) {
		char a[160];

		snprintf(a, sizeof(a), "class=\"line\" stroke=\"%s\" stroke-width=\"%.1f\"%s",
			 hh->runs[i].colour, 1.5 + 1.3 * i,
			 hh->runs[i].dashed ? " stroke-dasharray=\"6 3\"" : "");
		svg_path_reduced(f, &c.red[i], &y, CH_L, a);
	}
	if (clipped)
		fprintf(f, "</svg>\n");
	for (i = 0; i < hh->nr_runs; i++) {
		char a[160];

		snprintf(a, sizeof(a), "class=\"read\" stroke=\"%s\"", hh->runs[i].colour);
		chart_marks(f, &c.marks[i][0], &y, a);
		chart_marks(f, &c.marks[i][1], &y, "class=\"stale-o\"");
		snprintf(a, sizeof(a), "class=\"stale\" stroke=\"%s\"", hh->runs[i].colour);
		chart_marks(f, &c.marks[i][1], &y, a);
	}
	if (c.pline)
		chart_marks(f, &c.printed, &y, "class=\"printed\"");
	fprintf(f, "</svg>\n");
	if (clipped) {
		char a[32], b[32];

		fprintf(f, "<p class=\"note flush\">Off the scale, clipped: the in-flush transient"
			" (while a flush is in progress, as large under every policy) reaching %s."
			"  The scale is the settled error's (at most %s) and the reads'.</p>\n",
			val_str(a, sizeof(a), r0->events, flush, hh->h->page_size),
			val_str(b, sizeof(b), r0->events, settled, hh->h->page_size));
	}
out:
	for (i = 0; i < hh->nr_runs; i++) {
		svg_reduce_free(&c.red[i]);
		svg_reduce_free(&c.marks[i][0]);
		svg_reduce_free(&c.marks[i][1]);
	}
	svg_reduce_free(&c.printed);
	return err;
}

static int first_sample(const struct db_series *s, void *ctx)
{
	return 1;
}

/* 1 if the first run stored a series for this line of the cgroup (replay keeps them for some). */
int html_line_has_series(struct hhost *hh, const struct report_line *r)
{
	int kind, item, err;

	if (!hh->nr_runs)
		return 0;
	err = db_item_by_name(hh->h->db, r->item, &kind, &item);
	if (err)
		return err == -ENOENT ? 0 : err;
	return db_series_foreach(hh->h->db, hh->runs[0].run_id, r->cgroup_id, kind, item,
				 first_sample, NULL);
}
