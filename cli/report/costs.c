// SPDX-License-Identifier: GPL-2.0
/*
 * costs.c - the cost in time beside the staleness, in the report's model
 * (model.h): each reported run's counts (the cost_report view) turned into
 * estimated ns per update and CPU seconds per second of trace
 * (sim/cost_model.h) at the costs of a calibration (the database's
 * calibration table, or a calibration file).  Without a calibration the
 * counts are kept with no figure in time (have_cal false): not an error.
 * Reads through db/calib.h and replay/cost.h only.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib.h"
#include "cli.h"
#include "cost.h"
#include "model.h"
#include "sim.h"

int report_cost_check(const char *calibration, char *why, size_t len)
{
	struct sim_cost_calib c;

	if (len)
		*why = '\0';
	return calibration ? cost_file_read_why(calibration, &c, why, len) : 0;
}

static int cost_row_none(const struct db_cost_row *r, void *ctx)
{
	return 0;
}

int report_cost_rows_check(struct db *db, const char *calibration)
{
	struct sim_cost_calib c;
	struct db_cost_basis b;
	int err = 0;

	if (!calibration)
		err = db_calibration_get(db, &c);
	if (!err || err == -ENOENT)
		err = db_cost_basis_get(db, &b);
	if (!err || err == -ENOENT)
		err = db_cost_rows_foreach(db, cost_row_none, NULL);
	return err == -ENOENT ? 0 : err;
}

struct cost_ctx {
	struct report_costs		*v;
	const struct report_load	*o;
};

static bool cost_wanted(const struct report_load *o, int64_t run_id)
{
	int i;

	for (i = 0; i < o->nr_runs; i++)
		if (o->runs[i] == run_id)
			return true;
	return false;
}

static int cost_row(const struct db_cost_row *r, void *ctx)
{
	struct cost_ctx *cc = ctx;
	struct report_costs *v = cc->v;
	struct report_cost *c;

	if (cc->o->nr_runs && !cost_wanted(cc->o, r->run_id))
		return 0;
	if (v->nr == v->cap) {
		size_t ncap = v->cap ? v->cap * 2 : 16;
		struct report_cost *n = realloc(v->rows, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		v->rows = n;
		v->cap = ncap;
	}
	c = &v->rows[v->nr];
	*c = (struct report_cost){ .r = *r };
	c->r.policy = strdup(r->policy);
	c->r.flush_model = strdup(r->flush_model);
	v->nr++;
	if (!c->r.policy || !c->r.flush_model)
		return -ENOMEM;
	return 0;
}

void report_costs_free(struct report_costs *v)
{
	size_t i;

	for (i = 0; i < v->nr; i++) {
		free((char *)v->rows[i].r.policy);
		free((char *)v->rows[i].r.flush_model);
	}
	free(v->rows);
	memset(v, 0, sizeof(*v));
}

static bool cost_same_point(const struct report_cost *x, const struct report_cost *y)
{
	return x->r.batch_size == y->r.batch_size && x->r.nr_cpus == y->r.nr_cpus;
}

static int cost_cmp(const void *a, const void *b)
{
	const struct report_cost *x = a, *y = b;

	return report_rank_cmp(sim_policy_rank(x->r.policy), x->r.run_id,
			       sim_policy_rank(y->r.policy), y->r.run_id);
}

const struct report_cost *report_cost_baseline(const struct report_costs *v,
					       const struct report_cost *c)
{
	size_t i;

	for (i = 0; i < v->nr; i++)
		if (!strcmp(v->rows[i].r.policy, "break") && cost_same_point(&v->rows[i], c))
			return &v->rows[i];
	return NULL;
}

/* The calibration (the file, else the database's table) and the trace's cost basis. */
static int cost_calibration(struct report_costs *v, struct db *db, const char *calibration)
{
	int err;

	if (calibration) {
		err = cost_file_read(calibration, &v->cal);
		if (err)
			return err;
		v->source = calibration;
	} else {
		err = db_calibration_get(db, &v->cal);
		if (err == -ENOENT)
			return 0;
		if (err)
			return err;
		v->source = "database";
	}
	v->have_cal = true;
	err = db_cost_basis_get(db, &v->basis);
	if (err == -ENOENT) {
		struct cost_share sh;

		err = cost_share_scan(db, COST_SHARE_WINDOW_NS, &sh);
		v->basis = (struct db_cost_basis){
			.trace_ns = sh.last_ts - sh.first_ts, .updates = sh.updates,
			.window_ns = sh.window_ns, .node_visits = sh.node_visits,
			.shared_visits = sh.shared_visits, .shared_fraction = sh.fraction,
		};
	}
	return err;
}

int report_costs_load(struct report_host *h, const struct report_load *o)
{
	struct report_costs *v = &h->costs;
	struct cost_ctx cc = { v, o };
	size_t i;
	int err;

	/* without --run: the runs lag_report shows, by its rule (db/) */
	err = o->nr_runs ? db_cost_rows_foreach(h->db, cost_row, &cc) :
			   db_cost_rows_latest_foreach(h->db, cost_row, &cc);
	if (err)
		return err;
	if (v->nr)
		qsort(v->rows, v->nr, sizeof(*v->rows), cost_cmp);
	for (i = 0; i < v->nr; i++)
		v->grid |= report_is_grid_point(v->rows[i].r.batch_size, v->rows[i].r.nr_cpus,
						h->batch, h->online);
	for (i = 0; i < v->nr; i++)
		report_run_name(v->rows[i].name, sizeof(v->rows[i].name), v->rows[i].r.policy,
				v->rows[i].r.batch_size, v->rows[i].r.nr_cpus, v->grid);
	err = cost_calibration(v, h->db, o->calibration);
	if (err || !v->have_cal)
		return err;
	for (i = 0; i < v->nr; i++) {
		struct report_cost *c = &v->rows[i];
		struct sim_cost_counts n = {
			.updates = c->r.updates, .walk_steps = c->r.walk_steps,
			.pcpu_adds = c->r.pcpu_adds, .atomic_adds = c->r.atomic_adds,
			.dropped_batches = c->r.dropped_batches, .trace_ns = v->basis.trace_ns,
			.shared = v->basis.shared_fraction,
			.legacy = sim_cost_policy_legacy(c->r.policy),
		};

		err = sim_cost_estimate(&n, &v->cal.t, &c->e);
		if (err)
			return -MCR_E_BAD_INPUT;
	}
	return 0;
}
