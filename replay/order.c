// SPDX-License-Identifier: GPL-2.0
/*
 * The inferred order inside the trace's lock windows, for counterfactual
 * replays: a first pass runs inference with the kernel's own policy
 * and keeps, for every update that landed in a window before some visit of
 * its own path, how many of the window's visits came before it.  The replay
 * of any policy then makes exactly those visits before that update, so where
 * the trace has a window every policy sees the order the kernel most likely
 * had; flushes the trace does not have still follow the flush model.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "error.h"
#include "idmap.h"
#include "replay-local.h"

/* Update tag -> visits before it; a zeroed struct is an empty order. */
struct replay_order {
	struct idmap	tab;
};

/* The inference's order sink; a later decision for the same tag replaces it. */
int order_add(void *ctx, uint64_t tag, size_t p)
{
	struct replay_order *o = ctx;

	if (p > UINT32_MAX)
		return -MCR_E_BAD_INPUT;
	return idmap_put(&o->tab, tag, (int64_t)p);
}

bool replay_order_lookup(const struct replay_order *o, uint64_t tag, size_t *p)
{
	const struct idmap_ent *e;

	if (!o)
		return false;
	e = idmap_find(&o->tab, tag);
	if (e)
		*p = (size_t)e->val;
	return e != NULL;
}

size_t replay_order_size(const struct replay_order *o)
{
	return o ? idmap_count(&o->tab) : 0;
}

void replay_order_free(struct replay_order *o)
{
	if (!o)
		return;
	idmap_free(&o->tab);
	free(o);
}

int replay_order_infer(const struct replay_trace *t, const struct sim_policy *pol,
		       unsigned int max_hyp, struct replay_source *src,
		       void (*progress)(void *ctx, uint64_t done), void *progress_ctx,
		       struct replay_order **out)
{
	struct replay_params p = {
		.policies = { pol }, .nr_policies = 1, .model = REPLAY_MODEL_SPREAD,
		.max_hypotheses = max_hyp, .progress = progress, .progress_ctx = progress_ctx,
	};
	struct replay_order *o;
	struct replay *r;
	int ret;

	*out = NULL;
	if (!pol)
		return -EINVAL;
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	p.order_out = o;
	ret = replay_create(&p, t, &r);
	if (ret) {
		free(o);
		return ret;
	}
	ret = replay_run(r, src);
	replay_destroy(r);
	if (ret) {
		replay_order_free(o);
		return ret;
	}
	*out = o;
	return 0;
}

int replay_order_infer_db(struct db *db, const struct replay_trace *t,
			  const struct sim_policy *pol, unsigned int max_hyp,
			  void (*progress)(void *ctx, uint64_t done), void *progress_ctx,
			  struct replay_order **out)
{
	struct replay_source src;
	int ret;

	*out = NULL;
	ret = replay_source_db_open(db, &src);
	if (!ret)
		ret = replay_order_infer(t, pol, max_hyp, &src, progress, progress_ctx, out);
	replay_source_db_close(&src);
	return ret;
}
