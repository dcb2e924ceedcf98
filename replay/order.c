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
#include "replay-local.h"

struct ord_slot {
	uint64_t	tag;
	uint32_t	p;
	bool		used;
};

struct replay_order {
	struct ord_slot	*tab;
	size_t		mask, n;
};

static size_t ord_hash(uint64_t tag)
{
	return (size_t)((tag * 0x9e3779b97f4a7c15ull) >> 20);
}

static int ord_grow(struct replay_order *o)
{
	size_t cap = o->tab ? 2 * (o->mask + 1) : 1024, i;
	struct ord_slot *t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (i = 0; o->tab && i <= o->mask; i++) {
		size_t j;

		if (!o->tab[i].used)
			continue;
		for (j = ord_hash(o->tab[i].tag) & (cap - 1); t[j].used; j = (j + 1) & (cap - 1))
			;
		t[j] = o->tab[i];
	}
	free(o->tab);
	o->tab = t;
	o->mask = cap - 1;
	return 0;
}

/* The inference's order sink; a later decision for the same tag replaces it. */
int order_add(void *ctx, uint64_t tag, size_t p)
{
	struct replay_order *o = ctx;
	size_t j;
	int ret;

	if (p > UINT32_MAX)
		return -MCR_E_BAD_INPUT;
	if (!o->tab || 2 * (o->n + 1) > o->mask + 1) {
		ret = ord_grow(o);
		if (ret)
			return ret;
	}
	for (j = ord_hash(tag) & o->mask; o->tab[j].used; j = (j + 1) & o->mask) {
		if (o->tab[j].tag == tag) {
			o->tab[j].p = (uint32_t)p;
			return 0;
		}
	}
	o->tab[j] = (struct ord_slot){ .tag = tag, .p = (uint32_t)p, .used = true };
	o->n++;
	return 0;
}

bool replay_order_lookup(const struct replay_order *o, uint64_t tag, size_t *p)
{
	size_t j;

	if (!o || !o->tab)
		return false;
	for (j = ord_hash(tag) & o->mask; o->tab[j].used; j = (j + 1) & o->mask) {
		if (o->tab[j].tag == tag) {
			*p = o->tab[j].p;
			return true;
		}
	}
	return false;
}

size_t replay_order_size(const struct replay_order *o)
{
	return o ? o->n : 0;
}

void replay_order_free(struct replay_order *o)
{
	if (!o)
		return;
	free(o->tab);
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
