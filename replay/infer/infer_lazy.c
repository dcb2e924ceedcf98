// SPDX-License-Identifier: GPL-2.0
/*
 * infer_lazy.c - the hypotheses between lock windows, where most updates are.
 *
 * Outside a window nothing branches, and a hypothesis whose own counters on
 * an update's path are all the base's takes the base's very walk: it needs
 * no work of its own, and its table stays as it is, since after both walks
 * its counters there still are the base's.  in->owned, for every key the
 * tables holding it (a superset), lets an update ask only those: its cost
 * follows the hypotheses that differ where it walks, not how many there are.  Lazy mode begins at a full compaction outside a window, when the
 * tables hold only what differs from the base, and ends when a window opens.
 *
 * Contract: in lazy mode every (key, table) pair is in in->owned (unless
 * owned_lost, and then every table is asked).  Never changes the base.
 */
#include <errno.h>
#include <stdlib.h>

#include "infer-local.h"

/* After a full compaction outside a window. */
void inf_lazy_begin(struct infer *in)
{
	size_t i;

	/* the lazy walks cache absent keys too (inf_lazy_find): not a pinned path */
	for (i = 0; i < in->nr_h; i++)
		in->h[i].pc_n = 0;
	in->lazy = true;
}

/* @k's table holds @key now: one node more in its list. */
int inf_lazy_own(struct infer *in, uint64_t key, size_t k)
{
	int64_t head = idmap_get(&in->owned, key, -1);

	if (in->nr_own == in->cap_own) {
		size_t cap = in->cap_own ? 2 * in->cap_own : 256;
		struct inf_own *o = cap < UINT32_MAX ? realloc(in->own, cap * sizeof(*o)) : NULL;

		if (!o)
			return -ENOMEM;
		in->own = o;
		in->cap_own = cap;
	}
	in->own[in->nr_own] = (struct inf_own){ .hyp = (uint32_t)k,
						.next = head < 0 ? UINT32_MAX : (uint32_t)head };
	return idmap_put(&in->owned, key, (int64_t)in->nr_own++);
}

/*
 * After a compaction in lazy mode (its merge moves hypotheses), or when a
 * read drops some: the keys the tables hold now.
 */
int inf_lazy_owned(struct infer *in)
{
	const struct idmap_ent *e;
	size_t i, n = 0;
	int ret;

	for (i = 0; i < in->nr_h; i++)
		n += idmap_count(&in->h[i].e);
	ret = idmap_reset(&in->owned, n);
	in->nr_own = 0;
	for (i = 0; i < in->nr_h && !ret; i++) {
		uint32_t pos = 0;

		while (!ret && (e = idmap_next(&in->h[i].e, &pos)))
			ret = inf_lazy_own(in, e->key, i);
	}
	return ret;
}

/* A window opens, or a traced value is set into every table: walk eagerly again. */
int inf_lazy_end(struct infer *in)
{
	size_t i;

	if (!in->lazy)
		return 0;
	for (i = 0; i < in->nr_h; i++)
		in->h[i].pc_n = 0;	/* see inf_lazy_begin() */
	idmap_free(&in->owned);
	in->nr_own = 0;
	in->lazy = false;
	return 0;
}
