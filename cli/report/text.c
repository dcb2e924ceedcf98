// SPDX-License-Identifier: GPL-2.0
/*
 * text.c - report's table for people: per cgroup that was read, its
 * lines worst first with the policies (and a grid's runs) side by side; then
 * the cgroups nobody read.
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

#define REPORT_TABLE_LINES	8	/* lines of memory.stat per cgroup in the table */

/*
 * The table: every row gathered, then one block per cgroup that was read, in
 * tree order, its lines worst first with the policies side by side; then the
 * cgroups nobody read, one line each, by what a reader would have seen.
 */
#define TABLE_UNREAD	10	/* unread cgroups listed */

struct trow {
	char		*cgroup;
	char		*policy;
	char		*item;
	const char	*label;		/* policy (b=, cpus= in a grid), #run when one repeats */
	unsigned int	batch, cpus;	/* the run's */
	uint64_t	cgroup_id;
	uint64_t	run_id;
	int		level;
	int		rank;		/* the policy's place in the policy table */
	bool		events;
	uint64_t	reads, stale_reads, stranded_episodes, max_pending;
	uint64_t	max_read, p99_read, max_visible;
	double		mean_read, mean_visible, age_ms, stranded_ms;
};

struct tstate {
	int64_t		page_size;
	bool		grid;		/* some run is not at the trace's batch and CPUs */
	int		label_w;	/* width of the label column: 10, more for a grid */
	struct trow	*rows;
	size_t		nr, cap;
	char		**labels;	/* one per row, owned */
};

/* "1.94 GiB" for a page line, "103898" for an event line. */
static const char *val_str(char *buf, size_t len, const struct trow *t, double v, int64_t page_size)
{
	if (t->events) {
		snprintf(buf, len, "%.0f", v);
		return buf;
	}
	return cli_pages_str(buf, len, v, page_size);
}

/* Policies in the order of their table (break, continue, legacy), then runs. */
static int trow_cmp_run(const void *a, const void *b)
{
	const struct trow *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank - y->rank;
	return (x->run_id > y->run_id) - (x->run_id < y->run_id);
}

static int table_row(const struct db_lag_row *row, void *ctx)
{
	struct tstate *ts = ctx;
	struct trow *t;

	if (ts->nr == ts->cap) {
		size_t ncap = ts->cap ? ts->cap * 2 : 64;
		struct trow *n = realloc(ts->rows, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		ts->rows = n;
		ts->cap = ncap;
	}
	t = &ts->rows[ts->nr];
	*t = (struct trow){
		.cgroup = strdup(row->cgroup), .policy = strdup(row->policy),
		.item = strdup(row->item), .cgroup_id = row->cgroup_id,
		.run_id = (uint64_t)row->run_id, .level = row->level,
		.rank = sim_policy_rank(row->policy), .events = !strcmp(row->unit, "events"),
		.reads = row->reads, .stale_reads = row->stale_reads,
		.stranded_episodes = row->stranded_episodes, .max_pending = row->max_pending,
		.max_read = row->max_read_error, .p99_read = row->p99_read_error,
		.max_visible = row->max_visible_error, .mean_read = row->mean_read_error,
		.mean_visible = row->mean_visible_error, .age_ms = row->max_error_age_ms,
		.stranded_ms = row->stranded_ms, .batch = row->batch_size, .cpus = row->nr_cpus,
	};
	if (!t->cgroup || !t->policy || !t->item) {
		free(t->cgroup);
		free(t->policy);
		free(t->item);
		return -ENOMEM;
	}
	ts->nr++;
	return 0;
}

/*
 * Labels: the policy's name ("break b=32 cpus=2" when the report has a grid),
 * with #run where one such name has several runs.
 */
static int table_labels(struct tstate *ts)
{
	size_t i, j;

	ts->labels = calloc(ts->nr ? ts->nr : 1, sizeof(*ts->labels));
	if (!ts->labels)
		return -ENOMEM;
	for (i = 0; i < ts->nr; i++) {
		struct trow *t = &ts->rows[i];
		bool several = false;
		char name[96];

		if (ts->grid)
			snprintf(name, sizeof(name), "%s b=%u cpus=%u", t->policy, t->batch, t->cpus);
		else
			snprintf(name, sizeof(name), "%s", t->policy);
		for (j = 0; j < ts->nr && !several; j++)
			several = ts->rows[j].run_id != t->run_id &&
				  !strcmp(ts->rows[j].policy, t->policy) &&
				  (!ts->grid || (ts->rows[j].batch == t->batch &&
						 ts->rows[j].cpus == t->cpus));
		if (several) {
			if (asprintf(&ts->labels[i], "%s#%" PRIu64, name, t->run_id) < 0)
				ts->labels[i] = NULL;
		} else {
			ts->labels[i] = strdup(name);
		}
		if (!ts->labels[i])
			return -ENOMEM;
		t->label = ts->labels[i];
		if ((int)strlen(t->label) > ts->label_w)
			ts->label_w = (int)strlen(t->label);
	}
	return 0;
}

/* One line of memory.stat, every policy in one sentence, then their details. */
static void table_item(const struct tstate *ts, struct trow *r, size_t n)
{
	char a[32], b[32], c[32], d[32], e[32];
	size_t i;

	qsort(r, n, sizeof(*r), trow_cmp_run);
	printf("  %s%s:", r[0].item, r[0].events ? " (events)" : "");
	for (i = 0; i < n; i++) {
		printf("%s %s worst %s", i ? ";" : "", r[i].label,
		       val_str(a, sizeof(a), &r[i], (double)r[i].max_read, ts->page_size));
		if (!r[i].stale_reads && !r[i].stranded_ms) {
			printf(", 0 stale");
			continue;
		}
		printf(", %" PRIu64 " of %" PRIu64 " reads stale", r[i].stale_reads, r[i].reads);
		if (r[i].stranded_ms)
			printf(", stranded %s in %" PRIu64 " episode%s",
			       cli_ms_str(b, sizeof(b), r[i].stranded_ms), r[i].stranded_episodes,
			       r[i].stranded_episodes == 1 ? "" : "s");
	}
	printf("\n");
	for (i = 0; i < n; i++)
		printf("      %-*s read p99 %s, mean %s; visible max %s, mean %s; oldest missed %s;"
		       " max pending %" PRIu64 "\n", ts->label_w, r[i].label,
		       val_str(a, sizeof(a), &r[i], (double)r[i].p99_read, ts->page_size),
		       val_str(b, sizeof(b), &r[i], r[i].mean_read, ts->page_size),
		       val_str(c, sizeof(c), &r[i], (double)r[i].max_visible, ts->page_size),
		       val_str(d, sizeof(d), &r[i], r[i].mean_visible, ts->page_size),
		       cli_ms_str(e, sizeof(e), r[i].age_ms), r[i].max_pending);
}

/* The rows of one line of one cgroup: adjacent (rows come by cgroup, item, policy). */
struct titem {
	struct trow	*r;
	size_t		n;
	double		key;	/* worst read error over the policies, visible as tie-break */
};

static int titem_cmp(const void *a, const void *b)
{
	const struct titem *x = a, *y = b;

	if (x->r->events != y->r->events)
		return x->r->events ? 1 : -1;
	return x->key < y->key ? 1 : x->key > y->key ? -1 : strcmp(x->r->item, y->r->item);
}

/* A cgroup's rows [from, to): the full block. */
static int table_cgroup(const struct tstate *ts, size_t from, size_t to)
{
	struct trow *rows = ts->rows;
	size_t i, j, n = 0, shown = 0, quiet = 0;
	struct titem *it = calloc(to - from, sizeof(*it));

	if (!it)
		return -ENOMEM;
	for (i = from; i < to; i = j) {
		double key = 0;

		for (j = i; j < to && !strcmp(rows[j].item, rows[i].item); j++) {
			double v = (double)rows[j].max_read + 1e-9 * (double)rows[j].max_visible;

			if (v > key)
				key = v;
		}
		it[n++] = (struct titem){ .r = &rows[i], .n = j - i, .key = key };
	}
	qsort(it, n, sizeof(*it), titem_cmp);
	printf("\n%s (id %" PRIu64 ", level %d): %" PRIu64 " reads\n", rows[from].cgroup,
	       rows[from].cgroup_id, rows[from].level, rows[from].reads);
	for (i = 0; i < n; i++) {
		if (it[i].key == 0) {
			quiet++;
			continue;
		}
		if (shown == REPORT_TABLE_LINES)
			continue;
		table_item(ts, it[i].r, it[i].n);
		shown++;
	}
	if (n - quiet > shown)
		printf("  ... %zu more lines (--format csv lists every one)\n", n - quiet - shown);
	if (quiet)
		printf("  %zu line%s never wrong at a read (only while nobody read)\n", quiet,
		       quiet == 1 ? "" : "s");
	free(it);
	return 0;
}

struct tunread {
	size_t		from, to;
	uint64_t	worst;	/* largest visible error of a page line, any policy */
};

static int tunread_cmp(const void *a, const void *b)
{
	const struct tunread *x = a, *y = b;

	return x->worst < y->worst ? 1 : x->worst > y->worst ? -1 : (x->from > y->from) - (x->from < y->from);
}

/* An unread cgroup in one line: each policy's largest visible error of a page line. */
static void table_unread(const struct tstate *ts, const struct tunread *u)
{
	char a[32], b[32];
	size_t i, k;

	printf("  %s (id %" PRIu64 "):", ts->rows[u->from].cgroup, ts->rows[u->from].cgroup_id);
	for (i = u->from, k = 0; i < u->to; i++) {
		const struct trow *best = NULL;
		size_t j;

		/* the first row of each run: find its worst page line */
		for (j = u->from; j < i; j++)
			if (ts->rows[j].run_id == ts->rows[i].run_id)
				break;
		if (j < i)
			continue;
		for (j = i; j < u->to; j++)
			if (ts->rows[j].run_id == ts->rows[i].run_id && !ts->rows[j].events &&
			    (!best || ts->rows[j].max_visible > best->max_visible))
				best = &ts->rows[j];
		if (!best)
			continue;
		printf("%s %s %s (%s)", k++ ? ";" : "", best->label,
		       cli_pages_str(a, sizeof(a), (double)best->max_visible, ts->page_size),
		       best->item);
		if (best->stranded_ms)
			printf(", stranded %s", cli_ms_str(b, sizeof(b), best->stranded_ms));
	}
	printf("\n");
}

static void table_header(int64_t page_size, int64_t online, int64_t batch, bool grid,
			 bool rounded)
{
	printf("Lag report: how far each memory.stat line was off, policies side by side\n"
	       "  worst      largest |shown - truth| a reader got: the error after its read's flush\n"
	       "             decision (non-forced memcg_flush_stats of the cgroup)\n"
	       "  p99, mean  the same over all the cgroup's reads\n"
	       "  visible    what a reader arriving at any moment would get (0 while flushable):\n"
	       "             its max and time-weighted mean\n"
	       "  stale      reads skipped while the cgroup was stranded: not flushable (stats_updates\n"
	       "             <= TH = %" PRId64 ") with more than TH + %" PRId64 " x %" PRId64
	       " = %" PRId64 " updates pending,\n"
	       "             more than per-CPU batching can hold back\n"
	       "  oldest missed  age of the oldest update a reader missed (any line of the cgroup)\n"
	       "  max pending    sum of |val| not yet flushed, stats_updates units: not memory\n"
	       "  Page lines in bytes (page %" PRId64 " B); (events) lines are counts.\n",
	       batch * online, batch - 1, online, batch * online + (batch - 1) * online, page_size);
	if (rounded)
		printf("  *_B and NR_KERNEL_STACK_KB lines are page lines too: the kernel traces\n"
		       "  them in pages, rounded from bytes or kB (a nonzero update to at least one).\n");
	if (grid)
		printf("  A run labelled b=B cpus=N simulated MEMCG_CHARGE_BATCH B on N online CPUs:\n"
		       "  its TH is B x N and its stranded limit TH + (B - 1) x N; the trace's own\n"
		       "  are b=%" PRId64 " cpus=%" PRId64 ".\n", batch, online);
}

int report_table(struct db *db, const struct db_lag_filter *f, int64_t page_size,
		 int64_t online, int64_t batch, bool grid)
{
	struct tstate ts = { .page_size = page_size, .grid = grid, .label_w = 10 };
	struct tunread *unread = NULL;
	size_t i, j, nu = 0;
	bool rounded = false;
	int err;

	err = db_lag_foreach(db, f, table_row, &ts);
	if (!err)
		err = table_labels(&ts);
	if (!err && !(unread = calloc(ts.nr ? ts.nr : 1, sizeof(*unread))))
		err = -ENOMEM;
	for (i = 0; i < ts.nr; i++)
		rounded |= !ts.rows[i].events && mcr_item_rounded_from(MCR_EV_STATE, ts.rows[i].item);
	if (!err)
		table_header(page_size, online, batch, grid, rounded);
	/* rows come in tree order: a cgroup's rows are adjacent */
	for (i = 0; !err && i < ts.nr; i = j) {
		bool read = false;
		uint64_t worst = 0;

		for (j = i; j < ts.nr && ts.rows[j].cgroup_id == ts.rows[i].cgroup_id &&
		     !strcmp(ts.rows[j].cgroup, ts.rows[i].cgroup); j++) {
			read |= ts.rows[j].reads > 0;
			if (!ts.rows[j].events && ts.rows[j].max_visible > worst)
				worst = ts.rows[j].max_visible;
		}
		if (read)
			err = table_cgroup(&ts, i, j);
		else
			unread[nu++] = (struct tunread){ .from = i, .to = j, .worst = worst };
	}
	if (!err && nu) {
		qsort(unread, nu, sizeof(*unread), tunread_cmp);
		printf("\nCgroups nobody read: the largest visible error of a page line, what a reader\n"
		       "would have got at the worst moment\n");
		for (i = 0; i < nu && i < TABLE_UNREAD; i++)
			table_unread(&ts, &unread[i]);
		if (nu > TABLE_UNREAD)
			printf("  ... %zu more (--format csv, or --cgroup PATH)\n", nu - TABLE_UNREAD);
	}
	for (i = 0; i < ts.nr; i++) {
		free(ts.rows[i].cgroup);
		free(ts.rows[i].policy);
		free(ts.rows[i].item);
		if (ts.labels)
			free(ts.labels[i]);
	}
	free(ts.labels);
	free(ts.rows);
	free(unread);
	return err;
}
