/* SPDX-License-Identifier: GPL-2.0 */
/*
 * html.h - the report's HTML ops (report_html_ops, model.h): one
 * self-contained page (inline CSS and SVG, nothing fetched, no script) for
 * one or more replayed trace databases: the trace's metadata and lost
 * events, the visible error over time of the worst lines of the ancestors
 * with the largest read errors (every policy on the same axes, reads as
 * markers, stale reads highlighted, stranded episodes shaded, forced flushes
 * marked), the per-line and cost tables, the validation result; with several
 * databases a fleet summary on top and one section per host.
 *
 * Contract: writes the model it is given, reading the databases only for
 * the charts' series, reads and episodes (db/results.h), and draws with
 * cli/svg.h; writes to the FILE it is given and nothing else; never prints
 * to the user or exits.  Returns 0 or a negative errno / -MCR_E_*.
 */
#ifndef MCR_HTML_REPORT_H
#define MCR_HTML_REPORT_H

#define HTML_TOP_CGROUPS	4	/* ancestors plotted by default */
#define HTML_TOP_LINES		3	/* lines of memory.stat plotted per ancestor */

#endif
