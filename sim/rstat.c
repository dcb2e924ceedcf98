// SPDX-License-Identifier: GPL-2.0
/*
 * rstat.c - per (memcg, cpu) slots and the per-CPU "updated" trees of
 * kernel/cgroup/rstat.c: css_rstat_updated() links a memcg and its ancestors
 * on a CPU's tree, css_rstat_updated_list() detaches a subtree from it and
 * orders it children first.
 *
 * The kernel keeps singly linked updated_children/updated_next lists and
 * searches the parent's list to unlink; the prev link here only makes that
 * unlink O(1), the lists are the same.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rstat.h"

/* Make slot_of cover node @node (doubling, the new rows SIM_NONE). */
static int sim_slot_of_reserve(struct sim *s, int32_t node)
{
	uint32_t cap = s->cap_slot_of ? s->cap_slot_of : 16;
	size_t i;
	int32_t *t;

	while (cap <= (uint32_t)node)
		cap *= 2;
	t = realloc(s->slot_of, sizeof(*t) * cap * s->nr_possible);
	if (!t)
		return -ENOMEM;
	for (i = (size_t)s->cap_slot_of * s->nr_possible; i < (size_t)cap * s->nr_possible; i++)
		t[i] = SIM_NONE;
	s->slot_of = t;
	s->cap_slot_of = cap;
	return 0;
}

static int32_t sim_slot_new(struct sim *s, int32_t node, unsigned int cpu, int32_t parent)
{
	struct sim_pcpu *sl;
	int32_t idx;
	int ret;

	if ((uint32_t)node >= s->cap_slot_of) {
		ret = sim_slot_of_reserve(s, node);
		if (ret)
			return ret;
	}
	if (s->nr_slots == s->cap_slots) {
		uint32_t cap = s->cap_slots ? s->cap_slots * 2 : 256;
		struct sim_pcpu *slots;
		struct sim_tree *tree;
		struct sim_ctr *ctr;

		if (cap > INT32_MAX)
			return -ENOMEM;
		tree = realloc(s->tree, sizeof(*tree) * cap);
		if (!tree)
			return -ENOMEM;
		s->tree = tree;
		ctr = sim_array_grow(s->ctr, sizeof(*ctr) * s->cap_slots, sizeof(*ctr) * cap);
		if (!ctr)
			return -ENOMEM;
		s->ctr = ctr;
		if (!s->counters_only) {
			slots = sim_array_grow(s->slots, sizeof(*slots) * s->cap_slots,
					       sizeof(*slots) * cap);
			if (!slots)
				return -ENOMEM;
			s->slots = slots;
		}
		s->cap_slots = cap;
	}
	idx = (int32_t)s->nr_slots;
	s->slot_of[(size_t)node * s->nr_possible + cpu] = idx;
	s->nr_slots++;

	s->ctr[idx] = (struct sim_ctr) {
		.node			= node,
		.parent			= parent,
	};
	s->tree[idx] = (struct sim_tree) {
		.updated_children	= SIM_NONE,
		.updated_next		= SIM_NONE,
		.updated_prev		= SIM_NONE,
	};
	if (s->counters_only)
		return idx;
	sl = &s->slots[idx];
	*sl = (struct sim_pcpu) {
		.unfl_since		= SIM_TS_NONE,
		.chunks			= SIM_NONE,
		.dirty_prev		= SIM_NONE,
		.dirty_next		= SIM_NONE,
	};
	memset(sl->k, 0xff, sizeof(sl->k));
	return idx;
}

/*
 * The slot of (@node, @cpu), made on first use together with the missing
 * slots of its ancestors on @cpu (the kernel has them for every possible CPU
 * from mem_cgroup_alloc(); we only make the ones an update reaches).
 * Returns the slot index or -ENOMEM.
 */
int32_t sim_slot_get(struct sim *s, int32_t node, unsigned int cpu)
{
	int32_t idx = sim_slot_find(s, node, cpu);
	int32_t parent;

	if (idx != SIM_NONE)
		return idx;
	parent = s->nodes[node].parent;
	if (parent != SIM_NONE) {
		/* depth is bounded by the hierarchy; recursion is at most one per level */
		parent = sim_slot_get(s, parent, cpu);
		if (parent < 0)
			return parent;
	}
	return sim_slot_new(s, node, cpu, parent);
}

/*
 * css_rstat_updated(): link the slot and its ancestors on the slot's CPU
 * until one is already linked.  The newest child goes to the head of the
 * parent's updated_children list, as in the kernel.
 */
void sim_rstat_updated(struct sim *s, int32_t idx)
{
	while (idx != SIM_NONE) {
		struct sim_ctr *sl = &s->ctr[idx];
		struct sim_tree *t = &s->tree[idx], *pt;

		if (sl->on_tree)
			return;
		sl->on_tree = true;
		if (sl->parent == SIM_NONE)
			return;
		pt = &s->tree[sl->parent];
		t->updated_prev = SIM_NONE;
		t->updated_next = pt->updated_children;
		if (pt->updated_children != SIM_NONE)
			s->tree[pt->updated_children].updated_prev = idx;
		pt->updated_children = idx;
		idx = sl->parent;
	}
}

static int sim_win_push(struct sim *s, int32_t idx)
{
	if (s->win_len == s->win_cap) {
		size_t cap = s->win_cap ? s->win_cap * 2 : 64;
		int32_t *win = realloc(s->win, sizeof(*win) * cap);

		if (!win)
			return -ENOMEM;
		s->win = win;
		s->win_cap = cap;
	}
	s->win[s->win_len++] = idx;
	return 0;
}

/*
 * css_rstat_updated_list(): detach the subtree rooted at slot @idx from its
 * CPU's updated tree and store it in s->win in reverse BFS order, so every
 * child comes before its parent and the subtree root comes last.  The nodes
 * are off the tree afterwards; an update during the window links them again
 * for a later flush (6.17+ llist behaviour).
 */
int sim_rstat_updated_list(struct sim *s, int32_t idx)
{
	struct sim_ctr *sl = &s->ctr[idx];
	struct sim_tree *t = &s->tree[idx];
	size_t i, j;
	int ret;

	s->win_len = 0;
	s->win_pos = 0;
	if (!sl->on_tree)
		return 0;
	if (sl->parent != SIM_NONE) {
		struct sim_tree *pt = &s->tree[sl->parent];

		if (t->updated_prev != SIM_NONE)
			s->tree[t->updated_prev].updated_next = t->updated_next;
		else
			pt->updated_children = t->updated_next;
		if (t->updated_next != SIM_NONE)
			s->tree[t->updated_next].updated_prev = t->updated_prev;
	}
	ret = sim_win_push(s, idx);
	for (i = 0; !ret && i < s->win_len; i++) {
		int32_t c, next;

		t = &s->tree[s->win[i]];
		for (c = t->updated_children; c != SIM_NONE; c = next) {
			next = s->tree[c].updated_next;
			ret = sim_win_push(s, c);
			if (ret)
				break;
		}
		t = &s->tree[s->win[i]];
		s->ctr[s->win[i]].on_tree = false;
		t->updated_children = SIM_NONE;
		t->updated_next = SIM_NONE;
		t->updated_prev = SIM_NONE;
	}
	if (ret)
		return ret;
	for (i = 0, j = s->win_len - 1; i < j; i++, j--) {
		int32_t w = s->win[i];

		s->win[i] = s->win[j];
		s->win[j] = w;
	}
	return 0;
}
