// SPDX-License-Identifier: GPL-2.0
/*
 * Per-cgroup engine state: a hash from cgroup id to struct rcg (and a flat
 * table for the small ids cgroups have, looked up once per event), adding
 * cgroups to every simulator parents first.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "replay-local.h"

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

/* replay.direct and direct_added cover @id (< RCG_DIRECT), doubling, the new entries 0. */
static int rcg_direct_reserve(struct replay *r, uint64_t id)
{
	size_t cap = r->cap_direct ? r->cap_direct : 1024;
	uint8_t *a;
	struct rcg **t;

	while (cap <= id)
		cap *= 2;
	if (cap == r->cap_direct)
		return 0;
	t = realloc(r->direct, cap * sizeof(*t));
	if (!t)
		return -ENOMEM;
	memset(t + r->cap_direct, 0, (cap - r->cap_direct) * sizeof(*t));
	r->direct = t;
	a = realloc(r->direct_added, cap);
	if (!a)
		return -ENOMEM;	/* direct is larger than cap_direct says: harmless */
	memset(a + r->cap_direct, 0, cap - r->cap_direct);
	r->direct_added = a;
	r->cap_direct = cap;
	return 0;
}

/* @c is known to the simulators now. */
static void rcg_set_added(struct replay *r, struct rcg *c)
{
	c->added = true;
	c->under_unknown = c->parent_unknown ||
			   (c->parent && c->parent != r->root && c->parent->under_unknown);
	if (c->id < r->cap_direct)
		r->direct_added[c->id] = 1;
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
	if (id < RCG_DIRECT && rcg_direct_reserve(r, id))
		return NULL;
	c = calloc(1, sizeof(*c) + r->p.nr_runs * sizeof(struct rcg_pol));
	if (!c)
		return NULL;
	c->id = id;
	c->table_idx = -1;
	h = mcr_hash64(id) & r->hmask;
	c->hnext = r->htab[h];
	r->htab[h] = c;
	if (id < RCG_DIRECT)
		r->direct[id] = c;
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
	for (i = 0; i < r->p.nr_runs; i++) {
		ret = sim_cgroup_add(r->sims[i], ts, c->id, parent->id);
		if (ret < 0 && ret != -EEXIST)
			return ret;
	}
	if (r->inf) {
		ret = infer_cgroup_add(r->inf, ts, c->id, parent->id);
		if (ret < 0 && ret != -EEXIST)
			return ret;
	}
	c->parent = parent;
	r->ser_gen++;
	parent->has_child = true;
	rcg_set_added(r, c);
	return series_mark(r, c);
}

/*
 * rcg_get() - the state of cgroup @id, made known to the simulators if it is
 * not yet.  An id first named by an update and absent from the cgroups table
 * is left to sim_update(), which attaches it under the root and counts it.
 * An update's path asks rcg_find_added() first, inline (replay-local.h).
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
			r->ser_gen++;
			r->root->has_child = true;
			rcg_set_added(r, c);
			return series_mark(r, c) < 0 ? NULL : c;
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
	r->ser_gen = 1;		/* rcg.ser_gen 0: no path cached */
	r->htab = calloc(r->hmask + 1, sizeof(*r->htab));
	if (!r->htab)
		return -ENOMEM;
	r->root = rcg_new(r, SIM_ROOT_ID);
	if (!r->root)
		return -ENOMEM;
	rcg_set_added(r, r->root);
	if (series_mark(r, r->root) < 0)
		return -ENOMEM;
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

int replay_cgroup_learn(struct replay *r, uint64_t id, uint64_t parent, const char *path)
{
	struct rcg *c = rcg_find(r, id);

	if (c && (c->added || c->parent_id || c->path))
		return -EEXIST;
	if (!c) {
		c = rcg_new(r, id);
		if (!c)
			return -ENOMEM;
	}
	c->own_path = path ? strdup(path) : NULL;
	if (path && !c->own_path)
		return -ENOMEM;
	c->path = c->own_path;
	c->parent_id = id == SIM_ROOT_ID ? 0 : parent;
	c->parent_unknown = !parent && id != SIM_ROOT_ID;
	return 0;
}

void rcg_free_all(struct replay *r)
{
	size_t i;

	for (i = 0; i < r->nr_cg; i++) {
		free(r->cg[i]->own_path);
		free(r->cg[i]);
	}
	free(r->cg);
	free(r->htab);
	free(r->direct);
	free(r->direct_added);
	r->direct_added = NULL;
	r->cg = NULL;
	r->htab = NULL;
	r->direct = NULL;
	r->cap_direct = 0;
	r->nr_cg = 0;
}
