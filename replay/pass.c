// SPDX-License-Identifier: GPL-2.0
/*
 * One run against the database, inside one transaction; the model's prepass
 * beside it.  Where the inference missed recorded values after its cap had
 * dropped orders, a wider search by inference alone; where it misses fewer,
 * the transaction is rolled back and the pass runs again on what it found.
 */
#include <errno.h>
#include <string.h>

#include "db.h"
#include "replay-local.h"

/*
 * The recorded values the inference could not explain after its cap had
 * dropped orders that might have: validate's mismatches of cause "orders
 * dropped by the cap", or the inferred model's prepass's misses after a
 * drop (infer_missed()).
 */
static uint64_t pass_missed(const struct replay *r)
{
	if (r->val)
		return r->val->v.causes[REPLAY_CAUSE_CAPPED];
	return r->prep.policy ? r->inf_checks.nr_miss : 0;
}

/* infer_work() of the pass's inference: validate's, or the prepass's. */
static uint64_t pass_infer_work(const struct replay *r)
{
	return r->val ? r->val->cur.work : r->prep.work;
}

static int pass_once(struct db *db, const struct replay_trace *t, const char *file,
		     const char *kind, struct replay_params *p, struct replay_pass *out)
{
	struct replay_source src = { 0 }, feed = { 0 }, gated, *run = &src;
	const struct replay_prepass *prep;
	struct replay_beside *bs = NULL;
	double t0 = replay_now_s();
	int ret;

	ret = db_begin(db);
	if (ret < 0)
		return ret;
	ret = replay_store_open(db, kind, file, p, t, &out->store);
	if (!ret)
		ret = replay_create(p, t, &out->r);
	if (!ret)
		ret = replay_source_db_open(db, &src);
	if (!ret && replay_prepass_beside(out->r)) {
		ret = replay_source_db_open(db, &feed);
		if (!ret)
			ret = replay_prepare_beside(out->r, &feed, &src, &gated, &bs);
	}
	if (ret > 0) {
		run = &gated;
		ret = 0;
	}
	if (!ret)
		ret = replay_run(out->r, run);
	replay_beside_free(bs);
	replay_source_db_close(&feed);
	replay_source_db_close(&src);
	prep = out->r ? replay_prepass(out->r) : NULL;
	out->wall_s = replay_now_s() - t0 - (prep && !prep->beside ? prep->seconds : 0);
	return ret;
}

/*
 * The wider search: the cap raised and never halved where the order is
 * kept or no diagram is held, else the exact diagram's budget raised, over
 * the flushes up to each the first pass missed (engine_search()).  It runs
 * from the trace's beginning, as the first pass elsewhere, and reads the
 * database inside the transaction.
 * Returns 1 with @p made the wider one and *@a its answers, 0 if it misses
 * as many as the first pass, or was given up (past its work, or worse than
 * the first pass so far), or -errno.
 */
static int pass_search(struct db *db, const struct replay_trace *t, struct replay_params *p,
		       struct replay_pass *out, struct replay_answers *a)
{
	const struct replay *r = out->r;
	const struct sim_policy *pol = p->validate ? p->runs[0].policy : r->prep.policy;
	bool order = !p->validate || (p->keep_order && pol == replay_policy_for_trace(t)), list;
	struct replay_source src = { 0 };
	uint64_t work = pass_infer_work(r);
	double t0 = replay_now_s();
	int ret;

	out->narrow_missed = pass_missed(r);
	out->narrow_hypotheses = p->max_hypotheses ? p->max_hypotheses : REPLAY_MAX_HYP_DEFAULT;
	out->narrow_budget = order ? 0 : replay_exact_budget(p);	/* a kept order: no diagram */
	out->narrow_s = out->wall_s;
	out->narrow_work = work;
	/* with no diagram (the order kept, or --cap-only) the list is all there is */
	list = order || !out->narrow_budget;
	out->wide_hypotheses = out->narrow_hypotheses;
	out->wide_budget = out->narrow_budget;
	if (list)
		out->wide_hypotheses = out->narrow_hypotheses * REPLAY_WIDER_CAP > 1u << 20 ?
				       1u << 20 : out->narrow_hypotheses * REPLAY_WIDER_CAP;
	else
		out->wide_budget = out->narrow_budget * REPLAY_WIDER_BUDGET > REPLAY_EXACT_BUDGET_MAX ?
				   REPLAY_EXACT_BUDGET_MAX : out->narrow_budget * REPLAY_WIDER_BUDGET;
	*a = (struct replay_answers){
		.limit = (uint64_t)(p->retry * (double)work * 9 / 8),
		.retry = p->retry, .first_whole = (double)work,
		.first_miss = r->inf_checks.miss_at, .first_nr_miss = r->inf_checks.nr_miss,
		.first_work = r->inf_checks.work_at, .first_nr_checks = r->inf_checks.nr_checks,
		.narrow_hyp = out->narrow_hypotheses, .wide_hyp = out->wide_hypotheses,
		.narrow_budget = out->narrow_budget, .wide_budget = out->wide_budget,
	};
	if (r->inf) {	/* validate's, on the pass's thread */
		a->first_nr_miss = infer_miss_at(r->inf, &a->first_miss);
		a->first_nr_checks = infer_work_at(r->inf, &a->first_work);
	}
	ret = replay_source_db_open(db, &src);
	if (!ret)
		ret = engine_search(t, p, pol, p->validate, order, &src, a);
	replay_source_db_close(&src);
	out->wide_s = replay_now_s() - t0;
	out->wide_work = a->work;
	out->wide_checks = a->wide_checks;
	out->wide_reached = a->checks;
	out->wide_missed = ret == -ETIME ? -1 : ret == -ERANGE ? -2 : (int64_t)a->missed;
	if (ret == -ETIME || ret == -ERANGE)
		return 0;
	if (ret < 0)
		return ret;
	if (a->missed >= a->first_nr_miss) {	/* infer_missed(), the first pass's */
		replay_answers_free(a);
		return 0;
	}
	if (list) {
		p->max_hypotheses = out->wide_hypotheses;
		p->no_halving = true;
	} else {
		p->exact_budget = out->wide_budget;
	}
	return 1;
}

int replay_pass_db(struct db *db, const struct replay_trace *t, const char *file, const char *kind,
		   struct replay_params *p, struct replay_pass *out)
{
	struct replay_answers a = { 0 };
	int ret;

	memset(out, 0, sizeof(*out));
	ret = pass_once(db, t, file, kind, p, out);
	if (!ret && p->retry > 0 && out->r && pass_missed(out->r) &&
	    (p->validate || replay_prepass(out->r))) {
		struct replay_pass first = *out;

		ret = pass_search(db, t, p, out, &a);
		if (ret > 0) {
			/* the first pass's rows go; the pass runs on the search's findings */
			db_rollback(db);
			replay_pass_free(&first);
			out->r = NULL;
			out->store = NULL;
			if (p->validate) {
				p->answers = &a;
			} else {
				out->order = a.order;
				a.order = NULL;
				p->order = out->order;
			}
			p->progress_name = "again";
			ret = pass_once(db, t, file, kind, p, out);
			p->progress_name = NULL;
			p->answers = NULL;
			out->widened = true;
			out->wall_s += out->narrow_s + out->wide_s;	/* what the run cost */
		}
		replay_answers_free(&a);
	}
	if (!ret)
		ret = replay_store_finish(out->store, out->r, out->wall_s);
	if (!ret)
		ret = db_commit(db);
	if (ret < 0) {
		db_rollback(db);
		replay_pass_free(out);
	}
	return ret;
}

void replay_pass_free(struct replay_pass *ps)
{
	replay_store_close(ps->store);
	replay_destroy(ps->r);
	replay_order_free(ps->order);
	ps->store = NULL;
	ps->r = NULL;
	ps->order = NULL;
}
