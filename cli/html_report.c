// SPDX-License-Identifier: GPL-2.0
/*
 * html_report.c - report --format html (see html_report.h for the contract).
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
#include "html_report.h"
#include "report_cost.h"
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
#define MAX_RUNS	64	/* replay's REPLAY_MAX_RUNS: a whole grid of one pass */
#define TABLE_LINES	8

/* policy colours: break red, continue blue, legacy green (colour-blind safe enough with the dashes) */
static const char *const policy_colour[] = { "#d62728", "#1f77b4", "#2ca02c", "#9467bd" };

struct hrow {
	char		*cgroup, *item, *policy, *flush_model;
	uint64_t	cgroup_id;
	int64_t		run_id;
	int		level;
	unsigned int	batch, cpus;	/* the run's MEMCG_CHARGE_BATCH and online CPUs */
	bool		events;
	uint64_t	reads, stale_reads, stranded_episodes, max_pending;
	uint64_t	max_read, p99_read, max_visible;
	double		mean_read, mean_visible, age_ms, stranded_ms;
};

struct hrun {
	int64_t		run_id;
	const char	*policy, *flush_model;	/* owned by a row */
	unsigned int	batch, cpus;
	char		label[64];
	const char	*colour;
	bool		dashed;		/* a second run of one policy */
};

struct hhost {
	const struct html_host	*h;
	struct hrow		*rows;
	size_t			nr, cap;
	struct hrun		runs[MAX_RUNS];
	int			nr_runs;
	int64_t			page_size, t0, t1;
	int64_t			batch, online;	/* the trace's own */
};

static void esc(FILE *f, const char *s)
{
	svg_escape(f, s ? s : "");
}

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

static struct hrun *run_of(struct hhost *hh, int64_t run_id)
{
	int i;

	for (i = 0; i < hh->nr_runs; i++)
		if (hh->runs[i].run_id == run_id)
			return &hh->runs[i];
	return NULL;
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

/* "1.94 GiB" for pages, "103898 events" for events. */
static const char *val_str(char *buf, size_t len, bool events, double v, int64_t page_size)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int u = 0;

	if (events) {
		snprintf(buf, len, "%.0f", v);
		return buf;
	}
	v *= (double)page_size;
	while (fabs(v) >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, u && fabs(v) < 10 ? "%.2f %s" : u && fabs(v) < 100 ? "%.1f %s" : "%.0f %s",
		 v, unit[u]);
	return buf;
}

static const char *ms_str(char *buf, size_t len, double ms)
{
	if (ms >= 1000)
		snprintf(buf, len, "%.2f s", ms / 1000);
	else
		snprintf(buf, len, "%.1f ms", ms);
	return buf;
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

/* A line of one cgroup: its rows, adjacent (rows come by cgroup, item, policy). */
struct hline {
	size_t		from, to;
	bool		events;
	double		key;
};

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

/* ---- one chart ---- */

struct chart {
	struct hhost		*hh;
	struct svg_reduce	red[MAX_RUNS];
	struct svg_reduce	marks[MAX_RUNS][2];	/* reads: [0] fresh or right, [1] stale */
	double			scale;		/* item unit -> axis unit */
	double			ymin, ymax;
	int			cur;		/* run being read */
	bool			any;
};

static double ts_s(const struct hhost *hh, uint64_t ts)
{
	return ((double)(int64_t)ts - (double)hh->t0) / 1e9;
}

static int chart_sample(const struct db_series *s, void *ctx)
{
	struct chart *c = ctx;
	double lo = (double)s->min_error * c->scale, hi = (double)s->max_error * c->scale;

	svg_reduce_add(&c->red[c->cur], ts_s(c->hh, s->ts), lo, hi);
	c->ymin = fmin(c->ymin, lo);
	c->ymax = fmax(c->ymax, hi);
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

/* One line of one cgroup: every run's visible error, reads, episodes, forced flushes. */
static int chart_write(FILE *f, struct hhost *hh, const struct hrow *r0, int kind, int item)
{
	struct chart c = { .hh = hh, .ymin = 0, .ymax = 0 };
	double span_s = (double)(hh->t1 - hh->t0) / 1e9;
	struct svg_scale x, y;
	struct svg_ticks yt;
	int i, err = 0;

	if (!(span_s > 0))
		span_s = 1;
	c.scale = r0->events ? 1 : (double)hh->page_size / 1048576.0;
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
	/* the axis: 1-2-5 ticks around the data and 0 */
	svg_ticks(c.ymin, c.ymax > c.ymin ? c.ymax : c.ymin + 1, 6, &yt);
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
	for (i = 0; i < hh->nr_runs; i++) {
		char a[160];

		snprintf(a, sizeof(a), "class=\"read\" stroke=\"%s\"", hh->runs[i].colour);
		chart_marks(f, &c.marks[i][0], &y, a);
		chart_marks(f, &c.marks[i][1], &y, "class=\"stale-o\"");
		snprintf(a, sizeof(a), "class=\"stale\" stroke=\"%s\"", hh->runs[i].colour);
		chart_marks(f, &c.marks[i][1], &y, a);
	}
	fprintf(f, "</svg>\n");
out:
	for (i = 0; i < hh->nr_runs; i++) {
		svg_reduce_free(&c.red[i]);
		svg_reduce_free(&c.marks[i][0]);
		svg_reduce_free(&c.marks[i][1]);
	}
	return err;
}

static int first_sample(const struct db_series *s, void *ctx)
{
	return 1;
}

/* 1 if the first run stored a series for this line of the cgroup (replay keeps them for some). */
static int line_has_series(struct hhost *hh, const struct hrow *r)
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

/* ---- tables ---- */

static void legend(FILE *f, const struct hhost *hh)
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

static void line_table(FILE *f, const struct hhost *hh, const struct hline *ln, size_t n)
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

static int cost_table(FILE *f, struct hhost *hh)
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

static int validation_section(FILE *f, struct hhost *hh)
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

static int meta_section(FILE *f, struct hhost *hh)
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
	err = meta_section(f, hh);
	if (err)
		goto out;
	ncg = host_cgroups(hh, cg);
	if (!ncg) {
		fprintf(f, "<p class=\"note\">No lag rows%s: nothing was ever wrong, or the runs"
			" asked for hold none.</p>\n", o->cgroup ? " for this cgroup" : "");
	}
	legend(f, hh);
	for (i = 0, shown = 0; i < ncg && shown < (o->cgroup ? 1 : HTML_TOP_CGROUPS) && !err; i++) {
		const struct hrow *r0 = &hh->rows[cg[i].from];
		char a[32];

		nl = cgroup_lines(hh, &cg[i], ln);
		/* by default only what can be drawn: cgroups whose series replay stored */
		if (!o->cgroup && nl) {
			err = line_has_series(hh, &hh->rows[ln[0].from]);
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
				err = chart_write(f, hh, lr, kind, item);
			}
			fprintf(f, "</figure>\n");
		}
		if (!nl)
			fprintf(f, "<p class=\"note\">No line of this cgroup was ever wrong.</p>\n");
		fprintf(f, "</div><div class=\"side\">\n");
		line_table(f, hh, ln, nl);
		fprintf(f, "</div></div>\n");
	}
	if (!err && ncg > shown && !o->cgroup)
		fprintf(f, "<p class=\"note\">%zu more cgroups with a wrong line: report --cgroup PATH"
			" --format html shows one; --format csv lists every row.</p>\n", ncg - shown);
	if (!err) {
		fprintf(f, "<div class=\"row2\"><div>\n");
		err = cost_table(f, hh);
		if (!err) {
			struct report_cost_opts co = {
				.calibration = o->calibration, .runs = o->runs, .nr_runs = o->nr_runs,
			};

			err = report_cost_html(f, hh->h->db, &co);
		}
		fprintf(f, "</div><div>\n");
		if (!err)
			err = validation_section(f, hh);
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
