// SPDX-License-Identifier: GPL-2.0
/*
 * infer.c - which order inside a lock window explains the kernel's values:
 * the inference's lifecycle, its pruning by the traced memcg_flush_stats
 * values, and the order it hands to its sink.
 *
 * Contract: the base simulator plus the hypotheses (infer-local.h) always
 * hold every order still consistent with the kernel's values, up to the cap.
 * A traced value keeps the hypotheses that agree with it; a lone survivor
 * outside a window becomes the base again.  With an order sink, every branch
 * records the position it chose in a chain shared between hypotheses; when
 * one hypothesis is left (or at the end, the cheapest) its chain is final and
 * goes to the sink, oldest first.
 */
#include <errno.h>
#include <stdlib.h>

#include "grow.h"
#include "infer-local.h"

struct infer *infer_create(const struct sim_params *sp, unsigned int max_hyp)
{
	struct infer *in = calloc(1, sizeof(*in));
	struct sim_params base = *sp;
	struct inf_hyp h0 = { 0 };

	if (!in)
		return NULL;
	/* the hypotheses read the base's counters, never what a memcg misses */
	base.counters_only = true;
	in->s = sim_create(&base);
	in->pol = sp->policy;
	in->nr_possible = sp->nr_possible;
	in->max_hyp = in->cap = max_hyp ? max_hyp : INFER_MAX_HYP_DEFAULT;
	in->patience = 1;
	if (!in->s || sp->nr_possible >= INF_ATOMIC || inf_push(in, &h0) < 0) {
		infer_destroy(in);
		return NULL;
	}
	in->max_kept = 1;
	/* the table's steps: monotone tests, which inf_lazy_alike() decides on bounds */
	in->agg = sp->policy->update != NULL;
	in->relist_slack = INF_RELIST_SLACK;
	in->dd_scale = 1;
	inf_lazy_begin(in);
	return in;
}

void infer_destroy(struct infer *in)
{
	size_t i;

	if (!in)
		return;
	for (i = 0; i < in->nr_h; i++)
		inf_hyp_free(in, &in->h[i]);
	free(in->h);
	free(in->miss_at);
	free(in->work_at);
	inf_ahead_free(in);
	for (i = 0; i < in->nr_dec_blk; i++)
		free(in->dec_blk[i]);
	free(in->dec_blk);
	free(in->keys);
	free(in->skip);
	free(in->undo);
	free(in->costs);
	free(in->cons);
	free(in->cand);
	free(in->cref);
	free(in->gslot);
	free(in->grp);
	free(in->gheap);
	free(in->list);
	idmap_free(&in->list_idx);
	idmap_free(&in->wkeys);
	idmap_free(&in->wkeys_hi);
	idmap_free(&in->owned);
	free(in->own_node);
	free(in->lseen);
	free(in->own);
	free(in->ka);
	free(in->dirty);
	inf_ddw_free(in->ddw);
	sim_destroy(in->s);
	free(in);
}

struct sim *infer_base(struct infer *in)
{
	return in->s;
}

int infer_cgroup_add(struct infer *in, uint64_t ts, uint64_t id, uint64_t parent_id)
{
	int ret = inf_unhold(in);

	return ret ? ret : sim_cgroup_add(in->s, ts, id, parent_id);
}

int infer_cgroup_remove(struct infer *in, uint64_t ts, uint64_t id)
{
	int ret = inf_unhold(in);

	return ret ? ret : sim_cgroup_remove(in->s, ts, id);
}

uint64_t infer_max_kept(const struct infer *in)
{
	return in->max_kept;
}

uint64_t infer_cap_lowered(const struct infer *in)
{
	return in->lowered;
}

uint64_t infer_capped(const struct infer *in)
{
	return in->capped;
}

uint64_t infer_missed(const struct infer *in)
{
	return in->missed;
}

void infer_set_syncing(struct infer *in)
{
	in->syncing = true;
}

void infer_set_synced(struct infer *in)
{
	in->syncing = true;
	in->synced = true;
}

size_t infer_miss_at(const struct infer *in, const uint64_t **at)
{
	*at = in->miss_at;
	return in->missed;
}

size_t infer_work_at(const struct infer *in, const uint64_t **at)
{
	*at = in->work_at;
	return in->checks;
}

uint64_t infer_work(const struct infer *in)
{
	return in->walks + in->dd_work + (in->ddw ? inf_ddw_work(in->ddw) : 0);
}

void infer_set_patience(struct infer *in, unsigned int k)
{
	in->patience = k;
}

void infer_set_max_hyp(struct infer *in, unsigned int max_hyp)
{
	in->max_hyp = in->cap = max_hyp ? max_hyp : INFER_MAX_HYP_DEFAULT;
	in->sat_work = 0;
}

size_t infer_nr_hyp(const struct infer *in)
{
	uint64_t n;

	if (in->ddw && !inf_ddw_count(in->ddw, &n))
		return n > SIZE_MAX ? SIZE_MAX : (size_t)n;
	return in->nr_h;
}

void infer_set_order_sink(struct infer *in, infer_order_fn fn, void *ctx)
{
	in->order_fn = fn;
	in->order_ctx = ctx;
}

/* Hand the decisions from @d up to the first one sent to the sink, oldest first. */
static int inf_send(struct infer *in, struct inf_dec *d)
{
	struct inf_dec *e, **v;
	size_t n = 0, i;
	int ret = 0;

	for (e = d; e && !e->sent; e = e->up)
		n++;
	if (!n)
		return 0;
	v = malloc(n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = n, e = d; i; e = e->up)
		v[--i] = e;
	for (i = 0; i < n && !ret; i++)
		ret = in->order_fn(in->order_ctx, v[i]->tag, v[i]->p);
	free(v);
	return ret;
}

/* @h's decisions are final: hand them to the sink, oldest first, and drop them. */
static int inf_emit(struct infer *in, struct inf_hyp *h)
{
	int ret = inf_send(in, h->d);

	inf_dec_put(in, h->d);
	h->d = NULL;
	return ret;
}

/* The newest decision both chains stand on, or NULL; walks what they do not share. */
static struct inf_dec *inf_dec_common(struct inf_dec *a, struct inf_dec *b)
{
	size_t na = 0, nb = 0;
	struct inf_dec *e;

	if (a == b)
		return a;
	for (e = a; e && !e->sent; e = e->up)
		na++;
	for (e = b; e && !e->sent; e = e->up)
		nb++;
	for (; na > nb; na--)
		a = a->up;
	for (; nb > na; nb--)
		b = b->up;
	while (a != b && na) {
		a = a->up;
		b = b->up;
		na--;
	}
	/* below every unsent decision: a sent one, the same for both if any */
	return a == b ? a : NULL;
}

/**
 * infer_settle() - what every hypothesis has decided is final: the decisions
 * all their chains share go to the order sink now, oldest first (the same
 * ones, in the same order, infer_check()'s fold or infer_finish() would
 * hand it later).  @pending is called with the tag of each hypothesis's
 * oldest decision not yet final; every update before those, in the order
 * the caller fed them, has its final decision in the sink.
 * Return: the decisions walked (its cost), or -errno.
 */
int infer_settle(struct infer *in, void (*pending)(void *ctx, uint64_t tag), void *ctx)
{
	struct inf_dec *c, *up, *d;
	size_t i, walked = 0;
	int ret;

	if (!in->order_fn || !in->nr_h)
		return 0;
	c = in->h[0].d;
	for (i = 1; i < in->nr_h && c; i++)
		c = inf_dec_common(c, in->h[i].d);
	for (i = 0; i < in->nr_h; i++) {
		struct inf_dec *below = NULL;

		for (d = in->h[i].d; d != c; d = d->up, walked++)
			below = d;
		if (below)
			pending(ctx, below->tag);
	}
	if (walked > INT32_MAX)
		walked = INT32_MAX;
	if (!c || c->sent)
		return (int)walked;
	ret = inf_send(in, c);
	if (ret)
		return ret;
	/* what it stands on was sent before it: no chain needs it again */
	c->sent = true;
	up = c->up;
	c->up = NULL;
	inf_dec_put(in, up);
	return (int)walked;
}

/**
 * infer_finish() - the end of the trace: the cheapest hypothesis's decisions
 * go to the order sink; of equal cost, the one of least hash, whatever the
 * array's order (which merges do not keep).
 */
int infer_finish(struct infer *in, uint64_t ts)
{
	size_t i, best = 0;
	int ret;

	ret = inf_unhold(in);
	if (ret)
		return ret;
	if (in->win && !in->closing)
		infer_unlock(in, ts);
	ret = inf_close(in);
	/* the order of a compaction now, as if none had been skipped since the last change */
	if (!ret && in->stale)
		ret = inf_compact(in, true);
	if (ret)
		return ret;
	for (i = 1; i < in->nr_h; i++)
		if (in->h[i].cost < in->h[best].cost ||
		    (in->h[i].cost == in->h[best].cost &&
		     inf_hyp_hash(&in->h[i]) < inf_hyp_hash(&in->h[best])))
			best = i;
	return in->nr_h ? inf_emit(in, &in->h[best]) : 0;
}

/* A lone hypothesis outside a window becomes the base. */
static int inf_fold(struct infer *in)
{
	struct inf_hyp *h = &in->h[0];
	const struct idmap_ent *e;
	uint32_t pos = 0;
	int ret = 0;

	if (in->nr_h != 1 || in->win)
		return 0;
	ret = inf_emit(in, h);
	h->cost = 0;
	while (!ret && (e = idmap_next(&h->e, &pos))) {
		uint64_t id = inf_key_id(e->key);
		unsigned int cpu = inf_key_cpu(e->key);

		if (cpu == INF_ATOMIC)
			ret = sim_stats_updates_set(in->s, id, e->val);
		else
			ret = sim_pcpu_set(in->s, id, cpu, (uint32_t)e->val);
	}
	idmap_free(&h->e);
	h->ehash = 0;	/* it is the base: nothing of its own left */
	return ret;
}

static int inf_list_check(struct infer *in, uint64_t id, int64_t su, bool nf, bool *su_ok,
			  bool *nf_ok);

/* A check's number, the work by then and, unexplained after a drop, its miss. */
static int inf_check_note(struct infer *in, bool explained)
{
	if (!explained && in->capped && in->synced) {
		if (mcr_grow((void **)&in->miss_at, &in->cap_miss_at, in->missed + 1,
			     sizeof(*in->miss_at)))
			return -ENOMEM;
		in->miss_at[in->missed++] = in->checks;
	}
	if (mcr_grow((void **)&in->work_at, &in->cap_work_at, in->checks + 1,
		     sizeof(*in->work_at)))
		return -ENOMEM;
	in->work_at[in->checks++] = infer_work(in);
	return 0;
}

int infer_check(struct infer *in, uint64_t id, int64_t su, bool nf, bool *su_ok, bool *nf_ok)
{
	bool lsu, lnf;	/* the list's answer beside a diagram's */
	bool *answer = su_ok;
	int ret;

	ret = inf_unhold(in);
	if (ret)
		return ret;
	if (in->closing) {
		ret = inf_close(in);
		if (ret)
			return ret;
	}

	if (in->ddw) {
		/* the diagram's answer; the list beside it is pruned alike */
		ret = inf_dd_give_up(in, inf_ddw_check(in, in->ddw, id, su, nf, su_ok, nf_ok));
		if (ret)
			return ret;
		if (in->ddw) {	/* else given up: the list's answer */
			su_ok = &lsu;
			nf_ok = &lnf;
		}
	}
	ret = inf_list_check(in, id, su, nf, su_ok, nf_ok);
	if (!ret)
		ret = inf_check_note(in, *answer);
	if (!ret)
		ret = inf_dd_back(in);	/* outside a window only */
	/* no fold while the diagram's tuples are read against the base */
	return ret || in->ddw ? ret : inf_fold(in);
}

/* infer_check() on the list alone, without the fold. */
static int inf_list_check(struct infer *in, uint64_t id, int64_t su, bool nf, bool *su_ok,
			  bool *nf_ok)
{
	int64_t th = (int64_t)sim_threshold(in->s);
	uint64_t key = inf_key(id, INF_ATOMIC);
	size_t i, n = 0;
	int ret;

	inf_lazy_sync(in);	/* a read may drop hypotheses: their lists are rebuilt */
	*su_ok = *nf_ok = false;
	for (i = 0; i < in->nr_h; i++) {
		int64_t v = inf_get(in, &in->h[i], key);

		if ((v > th) == nf)
			*nf_ok = true;
		if (v == su)
			*su_ok = true;
	}
	if (!*su_ok) {
		/*
		 * Nothing explains it (the cap dropped the kernel's order, or the
		 * trace misses something): take the kernel's value, which is
		 * exact, so that one miss does not become many.
		 */
		ret = inf_lazy_end(in);
		if (ret)
			return ret;
		for (i = 0; i < in->nr_h; i++) {
			ret = inf_put(&in->h[i], key, su, inf_virtual(in, &in->h[i], key));
			inf_win_key(in, key, su);
			if (ret)
				return ret;
			in->h[i].pc_n = 0;	/* its path's slots may say the key is absent */
		}
		return inf_compact(in, false);
	}
	for (i = 0; i < in->nr_h; i++) {
		if (inf_get(in, &in->h[i], key) == su)
			in->h[n++] = in->h[i];
		else
			inf_hyp_free(in, &in->h[i]);
	}
	in->nr_h = n;
	if (in->lazy)
		in->owned_lost = inf_lazy_owned(in) != 0;	/* the array moved */
	return 0;
}

void infer_set_exact(struct infer *in, unsigned int budget)
{
	in->dd = budget > 0;
	in->dd_scale = !budget ? 1 : budget > INFER_EXACT_BUDGET_MAX ? INFER_EXACT_BUDGET_MAX : budget;
}

/*
 * The budget's scale from here on: as though it had been @budget from the
 * start (the whole trace's allowance grows at once); narrow again (@budget
 * 0), what the diagrams spent meanwhile no longer counts against it, so the
 * stretches after a wide one have what they would have had without it.
 */
void infer_set_exact_wide(struct infer *in, unsigned int budget)
{
	uint64_t spent = in->dd_work + (in->ddw ? inf_ddw_work(in->ddw) : 0);

	if (budget) {
		if (!in->dd_narrow_scale) {
			in->dd_narrow_scale = in->dd_scale;
			in->dd_wide_from = spent;
		}
		in->dd_scale = budget > INFER_EXACT_BUDGET_MAX ? INFER_EXACT_BUDGET_MAX : budget;
	} else if (in->dd_narrow_scale) {
		in->dd_forgiven += spent - in->dd_wide_from;
		in->dd_scale = in->dd_narrow_scale;
		in->dd_narrow_scale = 0;
	}
}

uint64_t infer_exact_max(const struct infer *in)
{
	return in->dd_max;
}

uint64_t infer_exact_given_up(const struct infer *in)
{
	return in->dd_given_up;
}
