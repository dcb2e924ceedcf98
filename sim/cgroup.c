// SPDX-License-Identifier: GPL-2.0
/*
 * cgroup.c - the simulated memcg hierarchy: ids, parents, levels.
 *
 * Mirrors what mem_cgroup_alloc() fixes for the update path: a memcg's parent
 * never changes, so the per-CPU parent links cached in slots stay valid.
 * Removed memcgs stay: a dying memcg is still charged and updated.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "watch.h"

/* The ancestors of @idx: @parent, then the parent's own list shifted by one. */
static void sim_path_fill(struct sim *s, int32_t idx, int32_t parent)
{
	int32_t *a = &s->path[(size_t)idx * SIM_PATH];
	unsigned int i;

	a[0] = parent;
	for (i = 1; i < SIM_PATH; i++)
		a[i] = parent == SIM_NONE ? SIM_NONE : s->path[(size_t)parent * SIM_PATH + i - 1];
}

/* id_direct covers @id (< SIM_ID_DIRECT), doubling, and maps it to @idx. */
static int sim_id_direct_put(struct sim *s, uint64_t id, int32_t idx)
{
	uint32_t cap = s->cap_id_direct ? s->cap_id_direct : 1024, i;
	int32_t *t;

	while (cap <= id)
		cap *= 2;
	if (cap > s->cap_id_direct) {
		t = realloc(s->id_direct, sizeof(*t) * cap);
		if (!t)
			return -ENOMEM;
		for (i = s->cap_id_direct; i < cap; i++)
			t[i] = SIM_NONE;
		s->id_direct = t;
		s->cap_id_direct = cap;
	}
	s->id_direct[id] = idx;
	return 0;
}

/* Makes node @id under @parent (SIM_NONE only for the root); returns its index. */
int32_t sim_node_create(struct sim *s, uint64_t ts, uint64_t id, int32_t parent)
{
	struct sim_node *n;
	int32_t idx;
	int ret;

	if (s->nr_nodes == s->cap_nodes) {
		uint32_t cap = s->cap_nodes ? s->cap_nodes * 2 : 64;
		struct sim_node *nodes;
		uint64_t *dirty;
		int32_t *path;
		uint8_t *calm;

		if (cap > INT32_MAX / SIM_PATH)
			return -ENOMEM;
		path = realloc(s->path, sizeof(*path) * SIM_PATH * cap);
		if (!path)
			return -ENOMEM;
		s->path = path;
		calm = realloc(s->calm_up, cap);
		if (!calm)
			return -ENOMEM;
		s->calm_up = calm;
		/* cap is a multiple of 64 */
		dirty = realloc(s->owe_dirty, cap / 8);
		if (!dirty)
			return -ENOMEM;
		memset(dirty + s->cap_nodes / 64, 0, (cap - s->cap_nodes) / 8);
		s->owe_dirty = dirty;
		if (s->watched && sim_watch_grow(s, s->cap_nodes, cap))
			return -ENOMEM;
		nodes = sim_array_grow(s->nodes, sizeof(*nodes) * s->cap_nodes,
				       sizeof(*nodes) * cap);
		if (!nodes)
			return -ENOMEM;
		s->nodes = nodes;
		s->cap_nodes = cap;
	}
	idx = (int32_t)s->nr_nodes;
	ret = id < SIM_ID_DIRECT ? sim_id_direct_put(s, id, idx) : idmap_put(&s->ids, id, idx);
	if (ret)
		return ret;
	s->nr_nodes++;

	n = &s->nodes[idx];
	memset(n, 0, sizeof(*n));
	n->id = id;
	n->parent = parent;
	n->first_child = SIM_NONE;
	n->next_sibling = SIM_NONE;
	n->dirty_head = SIM_NONE;
	n->dirty_tail = SIM_NONE;
	n->pend_since = SIM_TS_NONE;
	n->oldest = SIM_TS_NONE;
	n->owe_first = SIM_TS_NONE;
	if (ts > s->ts_hi)
		s->ts_hi = ts;
	s->calm_up[idx] = 0;
	n->first_ts = ts;
	n->last_ts = ts;
	n->nf_last = ts;
	n->sn_g = sim_settled(s, ts);
	sim_path_fill(s, idx, parent);
	if (parent != SIM_NONE) {
		struct sim_node *p = &s->nodes[parent];

		n->level = p->level + 1;
		n->next_sibling = p->first_child;
		p->first_child = idx;
	}
	if (s->nr_watch_ids) {
		ret = sim_watch_created(s, idx, id);
		if (ret)
			return ret;
	}
	return idx;
}

/**
 * sim_cgroup_add() - a memcg appears (cgroup_mkdir)
 * @s: the simulator
 * @ts: when
 * @id: its cgroup id (not 0)
 * @parent_id: its parent's id; unknown (or 0) attaches it under the root
 *
 * Return: 0, -EEXIST if @id is known (nothing is re-parented), -EINVAL for a
 * bad id, -ENOMEM.
 */
int sim_cgroup_add(struct sim *s, uint64_t ts, uint64_t id, uint64_t parent_id)
{
	int32_t parent, idx;

	if (!id || id == SIM_KEY_EMPTY)
		return -EINVAL;
	sim_clock(s, ts);
	if (sim_node_lookup(s, id) != SIM_NONE)
		return -EEXIST;
	parent = sim_node_lookup(s, parent_id);
	if (parent == SIM_NONE)
		parent = 0;
	idx = sim_node_create(s, ts, id, parent);
	return idx < 0 ? idx : 0;
}

/**
 * sim_cgroup_remove() - a memcg is removed (cgroup_rmdir)
 * @s: the simulator
 * @ts: when
 * @id: its cgroup id
 *
 * The node stays: a dying memcg is still charged, updated and flushed.
 * Return: 0, -ENOENT if unknown, -EINVAL for the root.
 */
int sim_cgroup_remove(struct sim *s, uint64_t ts, uint64_t id)
{
	int32_t idx = sim_node_lookup(s, id);

	sim_clock(s, ts);
	if (idx == SIM_NONE)
		return -ENOENT;
	if (idx == 0)
		return -EINVAL;
	s->nodes[idx].removed = true;
	return 0;
}

bool sim_cgroup_known(const struct sim *s, uint64_t id)
{
	return sim_node_lookup(s, id) != SIM_NONE;
}

/* The parent's id; 0 for the root and for unknown ids. */
uint64_t sim_cgroup_parent(const struct sim *s, uint64_t id)
{
	int32_t idx = sim_node_lookup(s, id);

	if (idx == SIM_NONE || s->nodes[idx].parent == SIM_NONE)
		return 0;
	return s->nodes[s->nodes[idx].parent].id;
}

size_t sim_cgroup_count(const struct sim *s)
{
	return s->nr_nodes;
}

uint64_t sim_cgroup_at(const struct sim *s, size_t i)
{
	return i < s->nr_nodes ? s->nodes[i].id : 0;
}

/* Depth below the root (root = 0), -ENOENT if unknown. */
int sim_cgroup_level(const struct sim *s, uint64_t id)
{
	int32_t idx = sim_node_lookup(s, id);

	return idx == SIM_NONE ? -ENOENT : (int)s->nodes[idx].level;
}
