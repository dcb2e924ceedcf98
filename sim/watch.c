// SPDX-License-Identifier: GPL-2.0
/*
 * watch.c - watched memcgs: the range of each line's visible error between
 * two looks of a caller (the replay's series: its minimum and maximum
 * between two samples), kept by the update path itself.
 *
 * The visible error of a line is what a reader arriving now would get: 0
 * while the memcg is flushable, else minus the line's missing amount.  An
 * update changes it at the memcgs of its path below the calm top
 * (update.c, sim_stale_update()): a calm memcg is flushable and stays so
 * through the update, so its lines show 0 before and after.  After the
 * update's walk, each watched memcg it changed that was not flushable
 * before sees its line (or every line, where the walk made it flushable)
 * widen the line's range; one that was flushable shows 0 still, which the
 * caller's range holds already (see sim_range_take()).  A visit moves the
 * visited memcg's lines and may end its flushable state: after each event
 * the caller asks sim_watch_visited(), and each watched memcg visited sees
 * every line.  States inside one update or event are not seen, as no
 * reader could see them.  CPU hotplug (sim_set_online()) the caller looks
 * at itself.
 *
 * Costs nothing where no memcg is watched: a simulator takes its own
 * instance of the update path at its first watch.  Then one byte per memcg
 * of the path below its calm top.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "sim-local.h"
#include "watch.h"

/* Grow the per-node arrays to @cap nodes, those from @from on not watched. */
int sim_watch_grow(struct sim *s, uint32_t from, uint32_t cap)
{
	uint8_t *w;
	struct sim_wnode *wn;

	w = realloc(s->watched, cap);
	if (!w)
		return -ENOMEM;
	s->watched = w;
	wn = realloc(s->wn, cap * sizeof(*wn));
	if (!wn)
		return -ENOMEM;
	s->wn = wn;
	memset(w + from, 0, cap - from);
	memset(wn + from, 0, (cap - from) * sizeof(*wn));
	return 0;
}

static int sim_watch_node(struct sim *s, int32_t node)
{
	int32_t *wp;
	int ret;

	if (!s->watched) {
		ret = sim_watch_grow(s, 0, s->cap_nodes);
		if (ret)
			return ret;
	}
	if (s->watched[node])
		return 0;
	/* an update's path holds each watched memcg once at most */
	wp = realloc(s->wpend, (s->nr_watched + 1) * sizeof(*wp));
	if (!wp)
		return -ENOMEM;
	s->wpend = wp;
	s->watched[node] = 1;
	/* the first: from now on the update path's instance that lists them */
	if (!s->nr_watched++) {
		const struct sim_policy *p = s->policy;
		bool own = p->update && p->apply && p->update_watched && p->apply_watched;

		s->update = own ? p->update_watched : sim_update_generic_watched;
		s->apply = own ? p->apply_watched : sim_update_generic_watched_apply;
	}
	return 0;
}

/**
 * sim_watch() - keep the ranges of @id's lines from now on
 * @s: the simulator (not counters_only)
 * @id: the memcg, known or not yet (then from its creation on)
 *
 * Every range starts empty.  Watching a memcg twice changes nothing.
 * Return: 0, -ENOMEM, -EINVAL for a counters-only simulator.
 */
int sim_watch(struct sim *s, uint64_t id)
{
	int32_t node;
	uint32_t i;

	if (s->counters_only)
		return -EINVAL;
	node = sim_node_lookup(s, id);
	if (node != SIM_NONE)
		return sim_watch_node(s, node);
	for (i = 0; i < s->nr_watch_ids; i++)
		if (s->watch_ids[i] == id)
			return 0;
	if (s->nr_watch_ids == s->cap_watch_ids) {
		uint32_t cap = s->cap_watch_ids ? 2 * s->cap_watch_ids : 8;
		uint64_t *v = realloc(s->watch_ids, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->watch_ids = v;
		s->cap_watch_ids = cap;
	}
	s->watch_ids[s->nr_watch_ids++] = id;
	return 0;
}

/* Node @node of @id was made: watched if @id was asked for before. */
int sim_watch_created(struct sim *s, int32_t node, uint64_t id)
{
	uint32_t i;

	for (i = 0; i < s->nr_watch_ids; i++) {
		if (s->watch_ids[i] != id)
			continue;
		s->watch_ids[i] = s->watch_ids[--s->nr_watch_ids];
		return sim_watch_node(s, node);
	}
	return 0;
}

/* @node's ranges cover item index @k (new ones empty). */
int sim_ranges_reserve(struct sim *s, int32_t node, uint32_t k)
{
	struct sim_wnode *w = &s->wn[node];
	uint32_t cap = s->nr_items > k ? s->nr_items : k + 1, i;
	struct sim_range *r;

	if (k < w->cap)
		return 0;
	r = realloc(w->r, cap * sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (i = w->cap; i < cap; i++)
		r[i] = (struct sim_range){ .lo = INT64_MAX, .hi = INT64_MIN };
	w->r = r;
	w->cap = cap;
	return 0;
}

/*
 * Every line the simulator knows sees watched memcg @node's visible error
 * (0 for all where it is flushable, or where it has no line yet): after
 * the walk that made it flushable (sim_watch_look()), after the visits of
 * an event (sim_watch_visited()).
 */
int sim_watch_all(struct sim *s, int32_t node)
{
	const struct sim_node *n = &s->nodes[node];
	uint32_t j;
	int ret;

	if (!s->nr_items)
		return 0;
	ret = sim_ranges_reserve(s, node, s->nr_items - 1);
	for (j = 0; !ret && j < s->nr_items; j++)
		sim_range_see(&s->wn[node].r[j],
			      n->flushable || j >= n->cap_it ? 0 : -n->lines[j].miss);
	return ret;
}

/**
 * sim_watch_visited() - after an event: each watched memcg visited during
 * it sees the visible error of every line it has (its visits moved them,
 * and may have ended its flushable state); the visited list is emptied,
 * as by sim_visited_drain()
 * @s: the simulator
 *
 * Return: 0, -ENOMEM.
 */
int sim_watch_visited(struct sim *s)
{
	uint32_t i;
	int ret = 0;

	/* replay asks after every event; most events visit nothing */
	for (i = 0; i < s->nr_visited; i++) {
		int32_t node = s->visited[i];

		s->nodes[node].vis_listed = false;
		if (!ret && s->watched && s->watched[node])
			ret = sim_watch_all(s, node);
	}
	s->nr_visited = 0;
	return ret;
}

/**
 * sim_range_take() - the range of line @line of watched node @node since
 * it was last taken, which starts again empty
 * @s: the simulator
 * @node: a node handle (sim_node_handle())
 * @line: a line handle (sim_line_handle())
 * @lo: its least visible error seen
 * @hi: its largest
 *
 * Only what the updates and visits changed: a caller that takes a range at
 * each of its samples holds the value at the sample and what it saw itself,
 * and takes the least and largest of those and this.
 * Return: true if something was seen (else @lo and @hi are untouched).
 */
bool sim_range_take(struct sim *s, int32_t node, int32_t line, int64_t *lo, int64_t *hi)
{
	struct sim_range *r;

	if (!s->wn || node < 0 || (uint32_t)node >= s->nr_nodes || line < 0 ||
	    (uint32_t)line >= s->wn[node].cap)
		return false;
	r = &s->wn[node].r[line];
	if (r->lo > r->hi)
		return false;
	*lo = r->lo;
	*hi = r->hi;
	*r = (struct sim_range){ .lo = INT64_MAX, .hi = INT64_MIN };
	return true;
}

void sim_watch_destroy(struct sim *s)
{
	uint32_t i;

	for (i = 0; s->wn && i < s->nr_nodes; i++)
		free(s->wn[i].r);
	free(s->wn);
	free(s->watched);
	free(s->watch_ids);
	free(s->wpend);
}
