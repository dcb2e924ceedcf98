/* SPDX-License-Identifier: GPL-2.0 */
/*
 * html_local.h - what the files of report --format html share: the rows of
 * a host gathered once, its runs, and the few helpers every section uses.
 * html.c gathers and ranks, lays out the page and each host's
 * section; html_chart.c draws one line's chart; html_tables.c writes the
 * tables, the validation result and the metadata.  Not for the rest of cli/.
 */
#ifndef MCR_HTML_LOCAL_H
#define MCR_HTML_LOCAL_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "html.h"
#include "svg.h"

#define MAX_RUNS	64	/* replay's REPLAY_MAX_RUNS: a whole grid of one pass */

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

/* A line of one cgroup: its rows, adjacent (rows come by cgroup, item, policy). */
struct hline {
	size_t		from, to;
	bool		events;
	double		key;
};

static inline void esc(FILE *f, const char *s)
{
	svg_escape(f, s ? s : "");
}

static inline struct hrun *run_of(struct hhost *hh, int64_t run_id)
{
	int i;

	for (i = 0; i < hh->nr_runs; i++)
		if (hh->runs[i].run_id == run_id)
			return &hh->runs[i];
	return NULL;
}

/* "1.94 GiB" for pages, "103898 events" for events. */
static inline const char *val_str(char *buf, size_t len, bool events, double v, int64_t page_size)
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

/* html_chart.c */
int html_chart_write(FILE *f, struct hhost *hh, const struct hrow *r0, int kind, int item);
int html_line_has_series(struct hhost *hh, const struct hrow *r);

/* html_tables.c */
void html_legend(FILE *f, const struct hhost *hh);
void html_line_table(FILE *f, const struct hhost *hh, const struct hline *ln, size_t n);
int html_cost_table(FILE *f, struct hhost *hh);
int html_validation_section(FILE *f, struct hhost *hh);
int html_meta_section(FILE *f, struct hhost *hh);

#endif /* MCR_HTML_LOCAL_H */
