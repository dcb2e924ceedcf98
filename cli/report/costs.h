/* SPDX-License-Identifier: GPL-2.0 */
/*
 * costs.h - the cost in time beside the staleness, for report: each
 * reported run's counts (cost_report view) turned into estimated ns per
 * update and CPU seconds per second of trace (sim/cost_model.h) at the costs
 * of a calibration (the database's calibration table, or a calibration file),
 * as a text table, CSV, JSON or an HTML table.
 *
 * Contract: reads through db/calib.h and replay/cost.h only; writes to the
 * FILE given and never prints elsewhere or exits.  Without a calibration the
 * counts are shown with no figure in time, and the text and HTML say how to
 * get one.  Returns 0 or a negative errno / -MCR_E_*.
 */
#ifndef MCR_CLI_REPORT_COST_H
#define MCR_CLI_REPORT_COST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct db;

struct report_cost_opts {
	const char	*calibration;	/* a calibration file; NULL: the database's table */
	const int64_t	*runs;		/* NULL: the latest replay run of each policy and flush model */
	int		nr_runs;
};

/* The calibration file can be used: 0, or the error of reading it (the field refused in @why). */
int report_cost_check(const char *calibration, char *why, size_t len);
/*
 * What --cost reads of @db checked before any output: its calibration table
 * (unless @calibration names a file), cost_basis and the cost_report rows.
 * 0, or the error with db_why() saying which row.
 */
int report_cost_rows_check(struct db *db, const char *calibration);

int report_cost_table(FILE *f, struct db *db, const struct report_cost_opts *o);
/* @host: a first column (NULL: none); @header: print the header line first. */
int report_cost_csv(FILE *f, struct db *db, const struct report_cost_opts *o, const char *host,
		    bool header);
/* Objects of a JSON array; *@n counts those written so far (commas). */
int report_cost_json(FILE *f, struct db *db, const struct report_cost_opts *o, const char *host,
		     unsigned long *n);
int report_cost_html(FILE *f, struct db *db, const struct report_cost_opts *o);

/* What every estimate leaves out, one sentence, for help texts and pages. */
#define REPORT_COST_LEAVES_OUT \
	"The estimate leaves out the real kernel's cache effects, lock contention, " \
	"interrupts and the flush side, and prices kernel operations by user-space " \
	"proxies (a thread-local add for this_cpu_add(), a lock add for atomic_add())."

#endif
