/* SPDX-License-Identifier: GPL-2.0 */
/*
 * html.h - report --format html: one self-contained page (inline CSS
 * and SVG, nothing fetched, no script) for one or more replayed trace
 * databases: the trace's metadata and lost events, the visible error over
 * time of the worst lines of the ancestors with the largest read errors
 * (every policy on the same axes, reads as markers, stale reads highlighted,
 * stranded episodes shaded, forced flushes marked), the per-line and cost
 * tables, the validation result; with several databases a fleet summary on
 * top and one section per host.
 *
 * Contract: reads the databases only through db/db.h and db/results.h and
 * draws with cli/svg.h; writes to the FILE it is given and nothing else;
 * never prints to the user or exits.  Returns 0 or a negative errno /
 * -MCR_E_*.
 */
#ifndef MCR_HTML_REPORT_H
#define MCR_HTML_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "db.h"

#define HTML_TOP_CGROUPS	4	/* ancestors plotted by default */
#define HTML_TOP_LINES		3	/* lines of memory.stat plotted per ancestor */

struct html_host {
	struct db	*db;
	const char	*file;		/* as named on the command line */
	const char	*host;		/* the host name the trace records, or what stands for it */
};

struct html_opts {
	const int64_t	*runs;		/* NULL: the latest replay run of each policy and flush model */
	int		nr_runs;
	const char	*cgroup;	/* NULL: the HTML_TOP_CGROUPS with the largest read errors */
	const char	*calibration;	/* a calibration file; NULL: each database's own */
};

int html_report_write(FILE *f, const struct html_host *hosts, int nr_hosts,
		      const struct html_opts *o);

#endif
