// SPDX-License-Identifier: GPL-2.0
/*
 * infer_hyp.c - one hypothesis: the counters in which it differs from the
 * base, copies of it, and the chain of its branch decisions.
 *
 * Contract: a hypothesis reads a counter from its own entry, else 0 if it
 * already made the visit that resets it, else the base simulator's value; it
 * never changes the base.  Entry slots move only when the table is rebuilt
 * (idmap gen), so the walk may keep slot numbers.  Decision chains are shared
 * between the copies of a hypothesis and reference counted.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "infer-local.h"

static int64_t inf_base(const struct infer *in, uint64_t key)
{
	unsigned int cpu = inf_key_cpu(key);

	if (cpu == INF_ATOMIC)
		return sim_stats_updates(in->s, inf_key_id(key));
	return sim_pcpu_stats_updates(in->s, inf_key_id(key), cpu);
}

/* What @h's counter @key would be without its own entry. */
int64_t inf_virtual(const struct infer *in, const struct inf_hyp *h, uint64_t key)
{
	size_t v = inf_vis(in, key);

	return v != INF_NONE && v < h->p ? 0 : inf_base(in, key);
}

int64_t inf_get(const struct infer *in, const struct inf_hyp *h, uint64_t key)
{
	const struct idmap_ent *e = inf_find(h, key);

	return e ? e->val : inf_virtual(in, h, key);
}

int inf_set(struct inf_hyp *h, uint64_t key, int64_t val)
{
	struct idmap_ent *e = inf_find(h, key);
	int ret;

	if (e) {
		inf_ent_set(h, e, val);
		return 0;
	}
	ret = idmap_put(&h->e, key, val);
	if (!ret && h->ehash_ok)
		h->ehash += inf_mix(key, val);
	return ret;
}

struct inf_differs_ctx {
	const struct infer	*in;
	const struct inf_hyp	*h;
	uint64_t		dropped;	/* their mixes */
};

static bool inf_differs(const struct idmap_ent *e, void *ctx)
{
	struct inf_differs_ctx *c = ctx;

	if (e->val != inf_virtual(c->in, c->h, e->key))
		return true;
	c->dropped += inf_mix(e->key, e->val);
	return false;
}

/* Drop what equals the virtual value: a canonical form for merging. */
int inf_normalize(struct infer *in, struct inf_hyp *h)
{
	struct inf_differs_ctx c = { in, h, 0 };
	int ret = idmap_filter(&h->e, inf_differs, &c);

	if (!ret && h->ehash_ok)
		h->ehash -= c.dropped;
	return ret;
}

/*
 * Make @h->ehash the sum over its entries again if it went stale, and say
 * whether entry changes keep it from now on (@keep).
 */
void inf_hash_sync(struct inf_hyp *h, bool keep)
{
	const struct idmap_ent *e;
	uint32_t pos = 0;

	if (!h->ehash_ok) {
		h->ehash = 0;
		while ((e = idmap_next(&h->e, &pos)))
			h->ehash += inf_mix(e->key, e->val);
	}
	h->ehash_ok = keep;
}

/*
 * A copy of @src that shares its decisions.  The table is copied slot for
 * slot, so @src's pinned path stays valid in the copy: a branch walks the
 * path its parent just pinned without looking its entries up again.
 */
int inf_hyp_copy(struct inf_hyp *dst, const struct inf_hyp *src)
{
	*dst = (struct inf_hyp){ .p = src->p, .cost = src->cost, .t_last = src->t_last, .d = src->d,
				 .ehash = src->ehash, .ehash_ok = src->ehash_ok };
	if (dst->d)
		dst->d->ref++;
	if (idmap_clone(&dst->e, &src->e)) {
		dst->ehash = 0;
		dst->ehash_ok = true;
		return -ENOMEM;
	}
	if (src->pc_n && !src->pc_lazy && src->e.e && src->pc_gen == src->e.gen) {
		dst->pc_gen = dst->e.gen;
		dst->pc_cpu = src->pc_cpu;
		dst->pc_n = src->pc_n;
		dst->pc_id = src->pc_id;
		memcpy(dst->pc_idx, src->pc_idx, 2 * src->pc_n * sizeof(*src->pc_idx));
	}
	return 0;
}

/* Appends *@h to the hypotheses (which may move); the array owns it then. */
int inf_push(struct infer *in, struct inf_hyp *h)
{
	if (in->nr_h == in->cap_h) {
		size_t cap = in->cap_h ? in->cap_h * 2 : 16;
		struct inf_hyp *nh = realloc(in->h, cap * sizeof(*nh));

		if (!nh)
			return -ENOMEM;
		in->h = nh;
		in->cap_h = cap;
	}
	in->h[in->nr_h++] = *h;
	return 0;
}

void inf_hyp_free(struct inf_hyp *h)
{
	idmap_free(&h->e);
	h->ehash = 0;
	h->ehash_ok = true;
	inf_dec_put(h->d);
	h->d = NULL;
}

void inf_dec_put(struct inf_dec *d)
{
	while (d && !--d->ref) {
		struct inf_dec *up = d->up;

		free(d);
		d = up;
	}
}

/* @h decides that update @tag came after its h->p visits; only with a sink. */
int inf_dec_push(struct infer *in, struct inf_hyp *h, uint64_t tag)
{
	struct inf_dec *d;

	if (!in->order_fn)
		return 0;
	d = malloc(sizeof(*d));
	if (!d)
		return -ENOMEM;
	*d = (struct inf_dec){ .up = h->d, .tag = tag, .p = h->p, .ref = 1 };
	h->d = d;	/* takes over h's reference to the old head */
	return 0;
}
