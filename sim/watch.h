/* SPDX-License-Identifier: GPL-2.0 */
/*
 * watch.h - watched memcgs' line ranges (watch.c): the update path's half.
 */
#ifndef MCR_SIM_WATCH_H
#define MCR_SIM_WATCH_H

#include "sim-local.h"

int sim_watch_grow(struct sim *s, uint32_t from, uint32_t cap);
int sim_watch_created(struct sim *s, int32_t node, uint64_t id);
int sim_ranges_reserve(struct sim *s, int32_t node, uint32_t k);
int sim_watch_all(struct sim *s, int32_t node);
void sim_watch_destroy(struct sim *s);

static inline void sim_range_see(struct sim_range *r, int64_t v)
{
	if (v < r->lo)
		r->lo = v;
	if (v > r->hi)
		r->hi = v;
}

/*
 * After the walk of an update of line @k: each watched memcg it changed
 * below its calm top that was not flushable (s->wpend) sees the visible
 * error of @k, or of every line where the walk made it flushable
 * (watch.c).  Inline in the update path.  Return: 0, -ENOMEM.
 */
static inline int sim_watch_look(struct sim *s, uint32_t k)
{
	uint32_t i;
	int ret = 0;

	for (i = 0; i < s->nr_wpend && !ret; i++) {
		int32_t node = s->wpend[i];
		const struct sim_node *n = &s->nodes[node];
		struct sim_wnode *w = &s->wn[node];

		if (n->flushable)
			ret = sim_watch_all(s, node);
		else if (k < w->cap || !(ret = sim_ranges_reserve(s, node, k)))
			sim_range_see(&w->r[k], -n->lines[k].miss);
	}
	s->nr_wpend = 0;
	return ret;
}

#endif
