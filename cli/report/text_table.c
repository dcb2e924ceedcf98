// SPDX-License-Identifier: GPL-2.0
/*
 * text_table.c - the text ops' table of a host's lines (text_local.h): per
 * cgroup that was read its lines worst first, the policies side by side (a
 * grid's runs as a matrix of policy and batch by CPUs), then the cgroups
 * nobody read, then what memory.stat really printed where validate
 * compared logged reads.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "text_local.h"

#define REPORT_TABLE_LINES	8	/* lines of memory.stat per cgroup in the table */

/*
 * The table: one block per cgroup that was read, in tree order, its lines
 * worst first with the policies side by side; then the cgroups nobody read,
 * one line each, by what a reader would have seen.
 */
#define TABLE_UNREAD	10	/* unread cgroups listed */

/* A row of a grid's matrix: a policy at one batch (d: its d-th run at one point). */
struct grow {
	const char	*policy;
	int		rank, d;
	unsigned int	batch;
	char		label[REPORT_NAME_LEN];
};

struct tstate {
	FILE			*f;
	const struct report_host *h;
	int			label_w;	/* width of the label column: 10, more for a grid */
	char			(*labels)[REPORT_NAME_LEN + 24];	/* per run */
	/* a grid: its runs as a matrix, rows policy x batch, columns CPUs */
	struct grow		*rows;
	unsigned int		*cols;		/* the CPU counts, ascending */
	int			nr_rows, nr_cols, row_w;
	int			*row_of, *col_of;	/* per run */
};

/* A run's label in the table: its name, with #run where the name repeats. */
static const char *label(const struct tstate *ts, const struct report_line *l)
{
	return ts->labels[l->run - ts->h->runs];
}

/* "1.94 GiB" for a page line, "103898" for an event line. */
static const char *val_str(char *buf, size_t len, const struct report_line *t, double v,
			   int64_t page_size)
{
	return report_value_str(buf, len, v, t->events, page_size, false);
}

static int line_cmp_run(const void *a, const void *b)
{
	const struct report_line *x = *(const struct report_line *const *)a;
	const struct report_line *y = *(const struct report_line *const *)b;

	return report_rank_cmp(x->run->rank, x->run->id, y->run->rank, y->run->id);
}

static int table_labels(struct tstate *ts)
{
	int i;

	ts->labels = calloc(ts->h->nr_runs ? (size_t)ts->h->nr_runs : 1, sizeof(*ts->labels));
	if (!ts->labels)
		return -ENOMEM;
	for (i = 0; i < ts->h->nr_runs; i++) {
		const struct report_run *r = &ts->h->runs[i];

		if (r->repeated)
			snprintf(ts->labels[i], sizeof(ts->labels[i]), "%s#%" PRId64, r->name, r->id);
		else
			snprintf(ts->labels[i], sizeof(ts->labels[i]), "%s", r->name);
		if ((int)strlen(ts->labels[i]) > ts->label_w)
			ts->label_w = (int)strlen(ts->labels[i]);
	}
	return 0;
}

/* ", stranded 1.9 s in 16 episodes": only noticeable episodes are an alarm. */
static void stranded_str(FILE *f, const struct report_line *l)
{
	char b[32];

	if (!(l->stranded_ms > 0))
		return;
	fprintf(f, ", stranded %s in %" PRIu64 " episode%s", report_ms_str(b, sizeof(b), l->stranded_ms),
		l->stranded_episodes, l->stranded_episodes == 1 ? "" : "s");
	if (!l->noticeable)
		fprintf(f, ", none noticeable");
	else if (l->noticeable < l->stranded_episodes)
		fprintf(f, " (%" PRIu64 " noticeable)", l->noticeable);
}

/* "settled max 43.6 MiB, in flush 506 MiB" (results before the split: "visible max") */
static const char *visible_str(char *buf, size_t len, const struct report_line *l,
			       int64_t page_size)
{
	char a[32], b[32];

	if (!l->split)
		snprintf(buf, len, "visible max %s", val_str(a, sizeof(a), l,
							      (double)l->max_visible, page_size));
	else
		snprintf(buf, len, "settled max %s, in flush %s",
			 val_str(a, sizeof(a), l, (double)l->max_settled, page_size),
			 val_str(b, sizeof(b), l, (double)l->max_flush, page_size));
	return buf;
}

static int grow_cmp(const void *a, const void *b)
{
	const struct grow *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank - y->rank;
	if (strcmp(x->policy, y->policy))
		return strcmp(x->policy, y->policy);
	if (x->batch != y->batch)
		return x->batch < y->batch ? -1 : 1;
	return x->d - y->d;
}

static int uint_cmp(const void *a, const void *b)
{
	unsigned int x = *(const unsigned int *)a, y = *(const unsigned int *)b;

	return (x > y) - (x < y);
}

/* Runs of the same policy at the same point before @i: its d. */
static int grid_dup(const struct report_host *h, int i)
{
	int j, d = 0;

	for (j = 0; j < i; j++)
		d += !strcmp(h->runs[j].policy, h->runs[i].policy) &&
		     h->runs[j].batch == h->runs[i].batch && h->runs[j].cpus == h->runs[i].cpus;
	return d;
}

/* A grid's matrix: rows policy x batch (in policy order), columns the CPU counts. */
static int grid_setup(struct tstate *ts)
{
	const struct report_host *h = ts->h;
	size_t n = h->nr_runs ? (size_t)h->nr_runs : 1;
	bool again = false;
	int i, j;

	ts->rows = calloc(n, sizeof(*ts->rows));
	ts->cols = calloc(n, sizeof(*ts->cols));
	ts->row_of = calloc(n, sizeof(*ts->row_of));
	ts->col_of = calloc(n, sizeof(*ts->col_of));
	if (!ts->rows || !ts->cols || !ts->row_of || !ts->col_of)
		return -ENOMEM;
	for (i = 0; i < h->nr_runs; i++) {
		struct grow g = { .policy = h->runs[i].policy, .rank = h->runs[i].rank,
				  .batch = h->runs[i].batch, .d = grid_dup(h, i) };

		for (j = 0; j < ts->nr_rows && grow_cmp(&ts->rows[j], &g); j++)
			;
		if (j == ts->nr_rows)
			ts->rows[ts->nr_rows++] = g;
		again |= g.d > 0;
		for (j = 0; j < ts->nr_cols && ts->cols[j] != h->runs[i].cpus; j++)
			;
		if (j == ts->nr_cols)
			ts->cols[ts->nr_cols++] = h->runs[i].cpus;
	}
	qsort(ts->rows, (size_t)ts->nr_rows, sizeof(*ts->rows), grow_cmp);
	qsort(ts->cols, (size_t)ts->nr_cols, sizeof(*ts->cols), uint_cmp);
	ts->row_w = 0;
	for (j = 0; j < ts->nr_rows; j++) {
		struct grow *g = &ts->rows[j];

		if (again)
			snprintf(g->label, sizeof(g->label), "%s b=%u (%d)", g->policy, g->batch,
				 g->d + 1);
		else
			snprintf(g->label, sizeof(g->label), "%s b=%u", g->policy, g->batch);
		if ((int)strlen(g->label) > ts->row_w)
			ts->row_w = (int)strlen(g->label);
	}
	for (i = 0; i < h->nr_runs; i++) {
		struct grow g = { .policy = h->runs[i].policy, .rank = h->runs[i].rank,
				  .batch = h->runs[i].batch, .d = grid_dup(h, i) };

		for (j = 0; grow_cmp(&ts->rows[j], &g); j++)
			;
		ts->row_of[i] = j;
		for (j = 0; ts->cols[j] != h->runs[i].cpus; j++)
			;
		ts->col_of[i] = j;
	}
	return 0;
}

static void grid_free(struct tstate *ts)
{
	free(ts->rows);
	free(ts->cols);
	free(ts->row_of);
	free(ts->col_of);
}

#define GRID_CELL_LEN	48

/*
 * One line of memory.stat in a grid: a matrix of each run's worst read error
 * and stale reads of reads, policy x batch down, CPUs across ("-": no run
 * at that point; "0": the line was never wrong under that run).
 */
static int table_item_grid(const struct tstate *ts, const struct report_line **r, size_t n)
{
	const struct report_host *h = ts->h;
	size_t cells = (size_t)ts->nr_rows * (size_t)ts->nr_cols;
	char (*cell)[GRID_CELL_LEN] = calloc(cells ? cells : 1, sizeof(*cell));
	int *w = calloc(ts->nr_cols ? (size_t)ts->nr_cols : 1, sizeof(*w));
	FILE *f = ts->f;
	int i, j;
	size_t k;

	if (!cell || !w) {
		free(cell);
		free(w);
		return -ENOMEM;
	}
	for (k = 0; k < cells; k++)
		snprintf(cell[k], GRID_CELL_LEN, "-");
	for (i = 0; i < h->nr_runs; i++)
		snprintf(cell[ts->row_of[i] * ts->nr_cols + ts->col_of[i]], GRID_CELL_LEN, "0");
	for (k = 0; k < n; k++) {
		int ri = (int)(r[k]->run - h->runs);
		char a[32];

		snprintf(cell[ts->row_of[ri] * ts->nr_cols + ts->col_of[ri]], GRID_CELL_LEN,
			 "%s %" PRIu64 "/%" PRIu64, val_str(a, sizeof(a), r[k], (double)r[k]->max_read,
							    h->page_size),
			 r[k]->stale_reads, r[k]->reads);
	}
	for (j = 0; j < ts->nr_cols; j++) {
		char hd[24];

		w[j] = snprintf(hd, sizeof(hd), "cpus=%u", ts->cols[j]);
		for (i = 0; i < ts->nr_rows; i++)
			if ((int)strlen(cell[i * ts->nr_cols + j]) > w[j])
				w[j] = (int)strlen(cell[i * ts->nr_cols + j]);
	}
	char nm[2 * REPORT_NAME_LEN];

	fprintf(f, "  %s%s%s: worst read error, stale reads of reads\n", r[0]->item,
		report_line_names(nm, sizeof(nm), r[0]), r[0]->events ? " (events)" : "");
	fprintf(f, "    %-*s", ts->row_w, "");
	for (j = 0; j < ts->nr_cols; j++) {
		char hd[24];

		snprintf(hd, sizeof(hd), "cpus=%u", ts->cols[j]);
		fprintf(f, "  %*s", w[j], hd);
	}
	fputc('\n', f);
	for (i = 0; i < ts->nr_rows; i++) {
		fprintf(f, "    %-*s", ts->row_w, ts->rows[i].label);
		for (j = 0; j < ts->nr_cols; j++)
			fprintf(f, "  %*s", w[j], cell[i * ts->nr_cols + j]);
		fputc('\n', f);
	}
	free(cell);
	free(w);
	return 0;
}

/* One line of memory.stat, every policy in one sentence, then their details. */
static void table_item(const struct tstate *ts, const struct report_line **r, size_t n)
{
	char a[32], b[32], d[32], e[32], v[2 * REPORT_NAME_LEN];
	int64_t ps = ts->h->page_size;
	FILE *f = ts->f;
	size_t i;

	qsort(r, n, sizeof(*r), line_cmp_run);
	fprintf(f, "  %s%s%s:", r[0]->item, report_line_names(v, sizeof(v), r[0]),
		r[0]->events ? " (events)" : "");
	for (i = 0; i < n; i++) {
		fprintf(f, "%s %s worst %s", i ? ";" : "", label(ts, r[i]),
			val_str(a, sizeof(a), r[i], (double)r[i]->max_read, ps));
		if (!r[i]->stale_reads)
			fprintf(f, ", 0 stale");
		else
			fprintf(f, ", %" PRIu64 " of %" PRIu64 " reads stale", r[i]->stale_reads,
				r[i]->reads);
		stranded_str(f, r[i]);
	}
	fprintf(f, "\n");
	for (i = 0; i < n; i++)
		fprintf(f, "      %-*s read p99 %s, mean %s; %s; visible mean %s; oldest missed %s;"
			" max pending %" PRIu64 "\n", ts->label_w, label(ts, r[i]),
			val_str(a, sizeof(a), r[i], (double)r[i]->p99_read, ps),
			val_str(b, sizeof(b), r[i], r[i]->mean_read, ps),
			visible_str(v, sizeof(v), r[i], ps),
			val_str(d, sizeof(d), r[i], r[i]->mean_visible, ps),
			report_ms_str(e, sizeof(e), r[i]->age_ms), r[i]->max_pending);
}

/* The lines of one item of one cgroup: adjacent (lines come by cgroup, item, policy). */
struct titem {
	const struct report_line	**r;
	size_t				n;
	double				key;	/* worst read error over the policies, visible as tie-break */
};

static int titem_cmp(const void *a, const void *b)
{
	const struct titem *x = a, *y = b;

	if (x->r[0]->events != y->r[0]->events)
		return x->r[0]->events ? 1 : -1;
	return x->key < y->key ? 1 : x->key > y->key ? -1 : strcmp(x->r[0]->item, y->r[0]->item);
}

/* A cgroup's lines [from, to): the full block. */
static int table_cgroup(const struct tstate *ts, size_t from, size_t to)
{
	const struct report_line *rows = ts->h->lines;
	size_t i, j, n = 0, shown = 0, quiet = 0;
	struct titem *it = calloc(to - from, sizeof(*it));
	const struct report_line **ptr = calloc(to - from, sizeof(*ptr));
	FILE *f = ts->f;

	if (!it || !ptr) {
		free(it);
		free(ptr);
		return -ENOMEM;
	}
	for (i = from; i < to; i++)
		ptr[i - from] = &rows[i];
	for (i = from; i < to; i = j) {
		double key = 0;

		for (j = i; j < to && !strcmp(rows[j].item, rows[i].item); j++) {
			double v = (double)rows[j].max_read + 1e-9 * (double)rows[j].max_settled;

			if (v > key)
				key = v;
		}
		it[n++] = (struct titem){ .r = &ptr[i - from], .n = j - i, .key = key };
	}
	qsort(it, n, sizeof(*it), titem_cmp);
	fprintf(f, "\n%s (id %" PRIu64 ", level %d): %" PRIu64 " reads\n", rows[from].cgroup,
		rows[from].cgroup_id, rows[from].level, rows[from].reads);
	for (i = 0; i < n; i++) {
		if (it[i].key == 0) {
			quiet++;
			continue;
		}
		if (shown == REPORT_TABLE_LINES)
			continue;
		if (ts->h->grid) {
			int err = table_item_grid(ts, it[i].r, it[i].n);

			if (err) {
				free(it);
				free(ptr);
				return err;
			}
		} else {
			table_item(ts, it[i].r, it[i].n);
		}
		shown++;
	}
	if (n - quiet > shown)
		fprintf(f, "  ... %zu more lines (--format csv lists every one)\n", n - quiet - shown);
	if (quiet)
		fprintf(f, "  %zu line%s never wrong at a read (only while nobody read)\n", quiet,
			quiet == 1 ? "" : "s");
	free(it);
	free(ptr);
	return 0;
}

struct tunread {
	size_t		from, to;
	uint64_t	worst;	/* largest settled visible error of a page line, any policy */
};

static int tunread_cmp(const void *a, const void *b)
{
	const struct tunread *x = a, *y = b;

	return x->worst < y->worst ? 1 : x->worst > y->worst ? -1 : (x->from > y->from) - (x->from < y->from);
}

/* An unread cgroup in one line: each policy's largest settled visible error of a page line. */
static void table_unread(const struct tstate *ts, const struct tunread *u)
{
	const struct report_line *hi = NULL, *lo = NULL;
	char a[32], b[32];
	size_t i, k;

	fprintf(ts->f, "  %s (id %" PRIu64 "):", ts->h->lines[u->from].cgroup,
		ts->h->lines[u->from].cgroup_id);
	for (i = u->from, k = 0; i < u->to; i++) {
		const struct report_line *best = NULL;
		size_t j;

		/* the first row of each run: find its worst page line */
		for (j = u->from; j < i; j++)
			if (ts->h->lines[j].run_id == ts->h->lines[i].run_id)
				break;
		if (j < i)
			continue;
		for (j = i; j < u->to; j++)
			if (ts->h->lines[j].run_id == ts->h->lines[i].run_id && !ts->h->lines[j].events &&
			    (!best || ts->h->lines[j].max_settled > best->max_settled))
				best = &ts->h->lines[j];
		if (!best)
			continue;
		/* a grid: only its largest and smallest, the line stays short */
		if (ts->h->grid) {
			if (!hi || best->max_settled > hi->max_settled)
				hi = best;
			if (!lo || best->max_settled < lo->max_settled)
				lo = best;
			continue;
		}
		fprintf(ts->f, "%s %s %s (%s)", k++ ? ";" : "", label(ts, best),
			report_pages_str(a, sizeof(a), (double)best->max_settled, ts->h->page_size),
			best->item);
		if (best->noticeable)
			fprintf(ts->f, ", stranded %s", report_ms_str(b, sizeof(b), best->stranded_ms));
	}
	if (hi)
		fprintf(ts->f, " largest %s (%s) under %s",
			report_pages_str(a, sizeof(a), (double)hi->max_settled, ts->h->page_size),
			hi->item, label(ts, hi));
	if (lo && lo != hi)
		fprintf(ts->f, ";\n    smallest %s (%s) under %s",
			report_pages_str(a, sizeof(a), (double)lo->max_settled, ts->h->page_size),
			lo->item, label(ts, lo));
	fprintf(ts->f, "\n");
}

static void table_header(FILE *f, int64_t page_size, int64_t online, int64_t batch, bool grid,
			 bool rounded)
{
	fprintf(f, "Lag report: how far each memory.stat line was off, policies side by side\n"
		"  worst      largest |shown - truth| a reader got: the error after its read's flush\n"
		"             decision (non-forced memcg_flush_stats of the cgroup)\n"
		"  p99, mean  the same over all the cgroup's reads\n"
		"  visible    what a reader arriving at any moment would get (0 while flushable):\n"
		"             settled max: while no flush was in progress (what tells the\n"
		"             policies apart); in flush: the transient while one was, as large\n"
		"             under every policy; mean: time-weighted, over both\n"
		"  stale      reads skipped while the cgroup was stranded: not flushable (stats_updates\n"
		"             <= TH = %" PRId64 ") with more than TH + %" PRId64 " x %" PRId64
		" = %" PRId64 " updates pending,\n"
		"             more than per-CPU batching can hold back; an episode is noticeable\n"
		"             if it skipped a read or lasted >= 1 ms (shorter ones met no reader)\n"
		"  oldest missed  age of the oldest update a reader missed (any line of the cgroup)\n"
		"  max pending    sum of |val| not yet flushed, stats_updates units: not memory\n"
		"  Page lines in bytes (page %" PRId64 " B); (events) lines are counts.\n",
		batch * online, batch - 1, online, batch * online + (batch - 1) * online, page_size);
	if (rounded)
		fprintf(f, "  *_B and NR_KERNEL_STACK_KB lines are page lines too: the kernel traces\n"
			"  them in pages, rounded from bytes or kB (a nonzero update to at least one).\n");
	if (grid)
		fprintf(f, "  A run labelled b=B cpus=N simulated MEMCG_CHARGE_BATCH B on N online CPUs:\n"
			"  its TH is B x N and its stranded limit TH + (B - 1) x N; the trace's own\n"
			"  are b=%" PRId64 " cpus=%" PRId64 ".\n"
			"  Each line is a matrix of the runs, policy and batch down, CPUs across: the\n"
			"  worst read error and stale reads of reads (\"-\" no run there, \"0\" never\n"
			"  wrong); --format csv has every column of each run.\n",
			batch, online);
}


/* ---- memory.stat as printed ---- */

/* "-32.3 MiB" of a bytes line, "-12" of a count */
static const char *printed_str(char *buf, size_t len, const struct report_printed *p,
			       int64_t page_size)
{
	if (p->bytes)
		return report_pages_str(buf, len, (double)p->printed_error / (double)page_size,
					page_size);
	snprintf(buf, len, "%" PRId64, p->printed_error);
	return buf;
}

/* |printed - truth| in traced units (pages, counts): a cgroup's lines compared */
static double printed_key(const struct report_printed *p)
{
	double v = (double)p->printed_error / (double)(p->per > 0 ? p->per : 1);

	return fabs(v);
}

/*
 * What validate found of the logged reads: how many the simulation matched
 * within 2 units, and per cgroup the worst error the kernel really printed
 * (its line of largest |printed - truth|, a bytes line before a count).
 */
static int text_statlog(FILE *f, const struct report_host *h)
{
	const struct report_statlog *sl = &h->statlog;
	const struct db_stat_check_summary *s = &sl->sum;
	size_t i, j;
	char *msg = NULL;

	if (!sl->have)
		return 0;
	fprintf(f, "\nmemory.stat as printed: %" PRIu64 " of %" PRIu64 " printed lines within 2 units of the"
		" simulation\n", s->within2, s->pairs);
	if (asprintf(&msg, "(each line of each logged read; validate run %" PRId64 ", flush model"
		     " %s): %" PRIu64 " exact, %" PRIu64 " off: %" PRIu64 " a flush decided"
		     " otherwise, %" PRIu64 " within the lock windows' updates, %" PRIu64 " no cause"
		     " named", s->run_id, s->flush_model, s->exact, s->off, s->off_decision,
		     s->off_window, s->off - s->off_decision - s->off_window) < 0)
		return -ENOMEM;
	report_wrap(f, msg);
	free(msg);
	if (!sl->nr)
		return 0;
	fprintf(f, "  worst error the kernel really printed (printed - truth), per cgroup:\n");
	/* lines come by cgroup path, then line */
	for (i = 0; i < sl->nr; i = j) {
		const struct report_printed *w = &sl->lines[i];
		char a[32];

		for (j = i; j < sl->nr && sl->lines[j].cgroup_id == sl->lines[i].cgroup_id; j++)
			if ((sl->lines[j].bytes && !w->bytes) ||
			    (sl->lines[j].bytes == w->bytes && printed_key(&sl->lines[j]) >
			     printed_key(w)))
				w = &sl->lines[j];
		fprintf(f, "    %s (id %" PRIu64 "): %s of %s at read %" PRId64 "; %" PRIu64 " of %"
			PRIu64 " reads of that line within 2 units\n", w->cgroup, w->cgroup_id,
			printed_str(a, sizeof(a), w, h->page_size), w->name, w->read, w->within2,
			w->pairs);
	}
	return 0;
}

/* The lines of a host as the table. */
int text_table(struct report_out *o, const struct report_host *h)
{
	struct tstate ts = { .f = o->f, .h = h, .label_w = 10 };
	struct tunread *unread = NULL;
	const struct report_line *rows = h->lines;
	size_t i, j, nu = 0;
	bool rounded = false;
	int err;

	err = table_labels(&ts);
	if (!err && h->grid)
		err = grid_setup(&ts);
	if (!err && !(unread = calloc(h->nr_lines ? h->nr_lines : 1, sizeof(*unread))))
		err = -ENOMEM;
	for (i = 0; i < h->nr_lines; i++)
		rounded |= !rows[i].events && mcr_item_rounded_from(MCR_EV_STATE, rows[i].item);
	if (!err)
		table_header(o->f, h->page_size, h->online, h->batch, h->grid, rounded);
	/* lines come in tree order: a cgroup's lines are adjacent */
	for (i = 0; !err && i < h->nr_lines; i = j) {
		bool read = false;
		uint64_t worst = 0;

		for (j = i; j < h->nr_lines && rows[j].cgroup_id == rows[i].cgroup_id &&
		     !strcmp(rows[j].cgroup, rows[i].cgroup); j++) {
			read |= rows[j].reads > 0;
			if (!rows[j].events && rows[j].max_settled > worst)
				worst = rows[j].max_settled;
		}
		if (read)
			err = table_cgroup(&ts, i, j);
		else
			unread[nu++] = (struct tunread){ .from = i, .to = j, .worst = worst };
	}
	if (!err && nu) {
		qsort(unread, nu, sizeof(*unread), tunread_cmp);
		fprintf(o->f, "\nCgroups nobody read: the largest settled visible error of a page line, what\n"
			"a reader would have got at the worst moment outside a flush\n");
		for (i = 0; i < nu && i < TABLE_UNREAD; i++)
			table_unread(&ts, &unread[i]);
		if (nu > TABLE_UNREAD)
			fprintf(o->f, "  ... %zu more (--format csv, or --cgroup PATH)\n", nu - TABLE_UNREAD);
	}
	if (!err)
		err = text_statlog(o->f, h);
	free(ts.labels);
	grid_free(&ts);
	free(unread);
	return err;
}
