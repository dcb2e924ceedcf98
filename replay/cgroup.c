// SPDX-License-Identifier: GPL-2.0
/*
 * Per-cgroup engine state: a hash from cgroup id to struct rcg, adding
 * cgroups to every simulator parents first, and series points.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "replay-local.h"

#define RCG_MAX_DEPTH	4096	/* deeper than any cgroup tree: a parent loop in the table */

struct rcg *rcg_find(struct replay *r, uint64_t id)
{
	struct rcg *c;

	for (c = r->htab[mcr_hash64(id) & r->hmask]; c; c = c->hnext)
		if (c->id == id)
			return c;
	return NULL;
}

static int rcg_rehash(struct replay *r)
{
	size_t nsize = (r->hmask + 1) * 2, i;
	struct rcg **nt = calloc(nsize, sizeof(*nt));

	if (!nt)
		return -ENOMEM;
	for (i = 0; i < r->nr_cg; i++) {
		struct rcg *c = r->cg[i];
		size_t h = mcr_hash64(c->id) & (nsize - 1);

		c->hnext = nt[h];
		nt[h] = c;
	}
	free(r->htab);
	r->htab = nt;
	r->hmask = nsize - 1;
	return 0;
}

static struct rcg *rcg_new(struct replay *r, uint64_t id)
{
	struct rcg *c;
	size_t h;

	if (r->nr_cg == r->cap_cg) {
		size_t ncap = r->cap_cg ? r->cap_cg * 2 : 64;
		struct rcg **n = realloc(r->cg, ncap * sizeof(*n));

		if (!n)
			return NULL;
		r->cg = n;
		r->cap_cg = ncap;
	}
	if (r->nr_cg + 1 > (r->hmask + 1) / 2 && rcg_rehash(r))
		return NULL;
	c = calloc(1, sizeof(*c) + r->p.nr_policies * sizeof(struct rcg_pol));
	if (!c)
		return NULL;
	c->id = id;
	c->table_idx = -1;
	h = mcr_hash64(id) & r->hmask;
	c->hnext = r->htab[h];
	r->htab[h] = c;
	r->cg[r->nr_cg++] = c;
	return c;
}

static int rcg_add_to_sims(struct replay *r, uint64_t ts, struct rcg *c, unsigned int depth)
{
	struct rcg *parent = NULL;
	unsigned int i;
	int ret;

	if (c->added)
		return 0;
	if (c->parent_id && depth < RCG_MAX_DEPTH)
		parent = rcg_find(r, c->parent_id);
	if (parent) {
		ret = rcg_add_to_sims(r, ts, parent, depth + 1);
		if (ret < 0)
			return ret;
	} else {
		/* Unknown parent: under the root, where every cgroup hangs at worst; counted. */
		if (c->id != SIM_ROOT_ID)
			c->parent_unknown = true;
		parent = r->root;
	}
	for (i = 0; i < r->p.nr_policies; i++) {
		ret = sim_cgroup_add(r->sims[i], ts, c->id, parent->id);
		if (ret < 0 && ret != -EEXIST)
			return ret;
	}
	if (r->inf) {
		ret = sim_cgroup_add(infer_base(r->inf), ts, c->id, parent->id);
		if (ret < 0 && ret != -EEXIST)
			return ret;
	}
	c->parent = parent;
	parent->has_child = true;
	c->added = true;
	return 0;
}

/*
 * rcg_get() - the state of cgroup @id, made known to the simulators if it is
 * not yet.  An id first named by an update and absent from the cgroups table
 * is left to sim_update(), which attaches it under the root and counts it.
 */
struct rcg *rcg_get(struct replay *r, uint64_t ts, uint64_t id, bool via_update)
{
	struct rcg *c = rcg_find(r, id);

	if (!c) {
		c = rcg_new(r, id);
		if (!c)
			return NULL;
		c->parent_unknown = true;
		if (via_update) {
			c->parent = r->root;
			r->root->has_child = true;
			c->added = true;
			return c;
		}
	}
	if (!c->added && rcg_add_to_sims(r, ts, c, 0) < 0)
		return NULL;
	return c;
}

int rcg_add_initial(struct replay *r)
{
	const struct replay_trace *t = r->t;
	size_t i;

	r->hmask = 255;
	r->htab = calloc(r->hmask + 1, sizeof(*r->htab));
	if (!r->htab)
		return -ENOMEM;
	r->root = rcg_new(r, SIM_ROOT_ID);
	if (!r->root)
		return -ENOMEM;
	r->root->added = true;
	for (i = 0; i < t->nr_cgroups; i++) {
		const struct replay_cgroup *tc = &t->cgroups[i];
		struct rcg *c = rcg_find(r, tc->id);

		if (!c) {
			c = rcg_new(r, tc->id);
			if (!c)
				return -ENOMEM;
		}
		c->table_idx = (int)i;
		c->parent_id = tc->id == SIM_ROOT_ID ? 0 : tc->parent;
		c->path = tc->path;
		c->parent_unknown = tc->parent_unknown;
	}
	/* Cgroups that existed before the trace; rcg_add_to_sims() puts parents first. */
	for (i = 0; i < t->nr_cgroups; i++) {
		int ret;

		if (t->cgroups[i].created_ts >= 0)
			continue;
		ret = rcg_add_to_sims(r, 0, rcg_find(r, t->cgroups[i].id), 0);
		if (ret < 0)
			return ret;
	}
	return 0;
}

int rcg_mkdir(struct replay *r, uint64_t ts, uint64_t id)
{
	return rcg_get(r, ts, id, false) ? 0 : -ENOMEM;
}

void rcg_free_all(struct replay *r)
{
	size_t i;
	unsigned int p;

	for (i = 0; i < r->nr_cg; i++) {
		for (p = 0; p < r->p.nr_policies; p++) {
			hist_free(&r->cg[i]->pol[p].hist);
			free(r->cg[i]->pol[p].items);
		}
		free(r->cg[i]);
	}
	free(r->cg);
	free(r->htab);
	r->cg = NULL;
	r->htab = NULL;
	r->nr_cg = 0;
}

struct item_ctx {
	struct rcg_pol	*cp;
	int64_t		sum;
	int		err;
};

static struct rcg_item *rcg_item_slot(struct rcg_pol *cp, enum sim_item_kind kind, int item)
{
	size_t lo = 0, hi = cp->nr_items;
	long key = (long)kind * 0x100000000l + item;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		long k = (long)cp->items[mid].kind * 0x100000000l + cp->items[mid].item;

		if (k == key)
			return &cp->items[mid];
		if (k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (cp->nr_items == cp->cap_items) {
		size_t ncap = cp->cap_items ? cp->cap_items * 2 : 16;
		struct rcg_item *n = realloc(cp->items, ncap * sizeof(*n));

		if (!n)
			return NULL;
		cp->items = n;
		cp->cap_items = ncap;
	}
	memmove(&cp->items[lo + 1], &cp->items[lo], (cp->nr_items - lo) * sizeof(*cp->items));
	cp->nr_items++;
	cp->items[lo] = (struct rcg_item){ .kind = (uint8_t)kind, .item = item };
	return &cp->items[lo];
}

static int rcg_item_cb(enum sim_item_kind kind, int item, int64_t missing, void *ctx)
{
	struct item_ctx *ic = ctx;
	struct rcg_item *it = rcg_item_slot(ic->cp, kind, item);
	int64_t a = missing < 0 ? -missing : missing;

	if (!it) {
		ic->err = -ENOMEM;
		return 1;
	}
	ic->sum += missing;
	if (a > it->max_abs)
		it->max_abs = a;
	return 0;
}

/* Tracks the largest |missing| of each item at series points; returns the signed sum. */
int rcg_track_items(struct replay *r, unsigned int pol, struct rcg *c, int64_t *sum)
{
	struct item_ctx ic = { .cp = &c->pol[pol] };
	int ret = sim_items_foreach(r->sims[pol], c->id, rcg_item_cb, &ic);

	*sum = ic.sum;
	return ic.err ? ic.err : (ret < 0 ? ret : 0);
}

/*
 * rcg_point() - one staleness series point of (@pol, @c) at @ts from @st:
 * into the histogram, the item maxima and the sink.
 */
int rcg_point(struct replay *r, unsigned int pol, struct rcg *c, uint64_t ts, bool is_read,
	      const struct sim_stale *st)
{
	struct rcg_pol *cp = &c->pol[pol];
	struct replay_point pt = {
		.ts = ts, .id = c->id, .missing = st->missing,
		.stats_updates = st->stats_updates, .flushable = st->flushable,
		.stuck = st->stuck, .is_read = is_read,
	};
	int ret;

	if (st->missing && st->oldest_ts && ts > st->oldest_ts)
		pt.age_ns = ts - st->oldest_ts;
	ret = rcg_track_items(r, pol, c, &pt.signed_missing);
	if (ret < 0)
		return ret;
	ret = hist_add(&cp->hist, st->missing);
	if (ret < 0)
		return ret;
	cp->last = *st;
	cp->has_row = true;
	if (r->p.sink.point)
		return r->p.sink.point(r->p.sink.ctx, pol, &pt);
	return 0;
}
