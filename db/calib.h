/* SPDX-License-Identifier: GPL-2.0 */
/*
 * calib.h - the cost tables of a trace database: calibration (what each
 * operation of the update path costs on a host), cost_basis (what the
 * estimate needs of the trace) and the rows of the cost_report view.
 * Columns are documented in db/results_schema.c.
 *
 * Contract: db/ owns their SQL; callers pass and get plain structs.  A put
 * replaces what was there, inside the caller's db_begin() transaction.  Never prints; returns 0, or
 * -ENOENT when there is nothing to get, or a negative errno / -MCR_E_*.
 */
#ifndef MCR_DB_CALIB_H
#define MCR_DB_CALIB_H

#include <stdbool.h>
#include <stdint.h>

#include "cost_model.h"

struct db;

int db_calibration_put(struct db *db, const struct sim_cost_calib *c);
/* -ENOENT unless every operation of enum sim_cost_op has its row. */
int db_calibration_get(struct db *db, struct sim_cost_calib *c);

struct db_cost_basis {
	uint64_t	trace_ns, updates, window_ns, node_visits, shared_visits;
	double		shared_fraction;
};
int db_cost_basis_put(struct db *db, const struct db_cost_basis *b);
int db_cost_basis_get(struct db *db, struct db_cost_basis *b);

/* A row of cost_report; has_est false where its est_* are NULL (no calibration). */
struct db_cost_row {
	int64_t		run_id;
	const char	*policy, *flush_model;	/* valid during the call; flush_model "-" if NULL */
	uint64_t	updates, walk_steps, pcpu_adds, atomic_adds, dropped_batches,
			flushable_checks;
	double		atomic_shared_fraction;
	double		est_ns_per_update, est_ns_per_update_max, est_cpu_s_per_s;
	uint64_t	reads, stale_reads, stranded_cgroups;
	/*
	 * Of stranded_cgroups, those with a noticeable episode (a read skipped,
	 * or 1 ms: cgroup_summary.noticeable_episodes); -1 where the file's
	 * results predate the column.  Not a column of the view: SQL sums
	 * noticeable_episodes > 0 itself.
	 */
	int64_t		noticeable_cgroups;
	int64_t		max_read_error_pages, max_read_error_events;	/* -1: no line wrong */
	unsigned int	batch_size, nr_cpus;	/* the run's MEMCG_CHARGE_BATCH and online CPUs */
	bool		has_est;
};
/* The rows of cost_report in run order; @fn's non-zero return stops and is returned. */
int db_cost_rows_foreach(struct db *db, int (*fn)(const struct db_cost_row *r, void *ctx),
			 void *ctx);
/*
 * The same, of the runs lag_report shows only: the latest replay run of each
 * policy, flush model, batch and CPUs, by the view's own rule.
 */
int db_cost_rows_latest_foreach(struct db *db,
				int (*fn)(const struct db_cost_row *r, void *ctx), void *ctx);

#endif
