/* SPDX-License-Identifier: GPL-2.0 */
/*
 * html_local.h - what the files of the report's HTML ops share: a host of
 * the model with its runs' colours and labels, and the few helpers every
 * section uses.  html.c lays out the page, the fleet summary and each host's
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
#include "model.h"
#include "svg.h"

#define MAX_RUNS	64	/* replay's REPLAY_MAX_RUNS: a whole grid of one pass */

/* A run as the page draws it. */
struct hrun {
	const struct report_run	*run;
	int64_t		run_id;
	const char	*policy, *flush_model;	/* the model's */
	unsigned int	batch, cpus;
	char		label[REPORT_NAME_LEN + 64];	/* its name, " #run (model)" where it repeats */
	const char	*colour;
	bool		dashed;		/* a second run of one policy */
};

struct hhost {
	const struct report_host	*h;
	struct hrun			runs[MAX_RUNS];
	int				nr_runs;
};

/* A line of one cgroup: its lines of the model, adjacent (they come by cgroup, item, policy). */
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

/* "1.94 GiB" for pages (0 is "0 B"), "103898" for events. */
static inline const char *val_str(char *buf, size_t len, bool events, double v, int64_t page_size)
{
	return report_value_str(buf, len, v, events, page_size, true);
}

/* html.c */
void html_host_init(struct hhost *hh, const struct report_host *h);

/* html_chart.c */
int html_chart_write(FILE *f, struct hhost *hh, const struct report_line *r0, int kind, int item);
int html_line_has_series(struct hhost *hh, const struct report_line *r);

/* html_tables.c */
void html_legend(FILE *f, const struct hhost *hh);
void html_line_table(FILE *f, const struct hhost *hh, const struct hline *ln, size_t n);
int html_cost_table(FILE *f, struct hhost *hh);
int html_cost_estimates(FILE *f, const struct report_host *h);
int html_validation_section(FILE *f, const struct report_host *h);
int html_meta_section(FILE *f, const struct report_host *h);

#endif /* MCR_HTML_LOCAL_H */
