/* SPDX-License-Identifier: GPL-2.0 */
/*
 * report_local.h - what the files of report share: cmd_report.c parses the
 * options, opens and checks the databases and sends each to its format;
 * text.c writes the table, rows.c the CSV and JSON rows
 * (html.c the page, costs.c the cost tables).  Not for the
 * rest of cli/.
 */
#ifndef MCR_REPORT_LOCAL_H
#define MCR_REPORT_LOCAL_H

#include <stdbool.h>
#include <stdint.h>

#include "results.h"

/* what a row callback needs besides the row: the host column when there is one */
struct out_ctx {
	const char	*host;		/* NULL: one database, no host column */
	unsigned long	n;
	bool		grid;		/* batch_size and nr_cpus columns end each row */
};

/* rows.c: db_lag_foreach() callbacks, @ctx a struct out_ctx */
int report_csv_row(const struct db_lag_row *row, void *ctx);
int report_json_row(const struct db_lag_row *row, void *ctx);

/* text.c */
int report_table(struct db *db, const struct db_lag_filter *f, int64_t page_size,
		 int64_t online, int64_t batch, bool grid);

#endif /* MCR_REPORT_LOCAL_H */
