// SPDX-License-Identifier: GPL-2.0
/*
 * infer_lazy.c - the hypotheses between lock windows, where most updates are.
 *
 * Outside a window nothing branches, and a hypothesis whose own counters on
 * an update's path are all the base's takes the base's very walk.  Its
 * entries would still change: a walk pins every counter of its path (the
 * atomic of each node, the per-CPU counter of the update's CPU) to the values
 * the base has after it, and the hypotheses' hashes and merges (infer_cap.c)
 * see those entries.  Once a hypothesis has walked, it walks at every update
 * (each path ends at the root, whose atomic it then holds), so the entries
 * pinned since are exactly the keys of every path since its first walk
 * (t_pin), each at the base's value unless a walk of its own changed it, and
 * then its table has it.  One table of keys and the last update on them
 * (in->touch) stands for all of those: inf_lazy_end() writes them into each
 * hypothesis when a window opens or a traced value is set into all of them,
 * and a full compaction outside a window drops them all (they equal the
 * base), which is where lazy mode begins again.  in->owned, every key some
 * table holds, lets an update whose path no table holds skip them all.
 *
 * Contract: in lazy mode a hypothesis's entries, as the eager walks would
 * have left them, are its table plus, from t_pin on, the keys in touch at the
 * base's values; inf_lazy_end() makes its table exactly that again.  Never
 * changes the base.
 */
#include "infer-local.h"

/*
 * After a full compaction outside a window: the tables hold only what
 * differs from the base, nobody has walked since.
 */
void inf_lazy_begin(struct infer *in)
{
	size_t i;

	/* the lazy walks cache absent keys too (inf_lazy_find): not a pinned path */
	for (i = 0; i < in->nr_h; i++) {
		in->h[i].t_pin = 0;
		in->h[i].pc_n = 0;
	}
	/* keeps the table's size: the next stretch touches about as many keys */
	if (idmap_count(&in->touch) && idmap_reset(&in->touch, idmap_count(&in->touch)))
		idmap_free(&in->touch);
	in->seq = 0;
	in->lazy = true;
}

/* After the full compaction's merge and cap: the keys the tables hold now. */
int inf_lazy_owned(struct infer *in)
{
	const struct idmap_ent *e;
	size_t i, n = 0;
	int ret;

	for (i = 0; i < in->nr_h; i++)
		n += idmap_count(&in->h[i].e);
	ret = idmap_reset(&in->owned, n);
	for (i = 0; i < in->nr_h && !ret; i++) {
		uint32_t pos = 0;

		while (!ret && (e = idmap_next(&in->h[i].e, &pos)))
			ret = idmap_put(&in->owned, e->key, 1);
	}
	return ret;
}

/* The entries the walks since each hypothesis's t_pin would have pinned. */
int inf_lazy_end(struct infer *in)
{
	const struct idmap_ent *t;
	size_t i;
	int ret;

	if (!in->lazy)
		return 0;
	for (i = 0; i < in->nr_h; i++) {
		struct inf_hyp *h = &in->h[i];
		uint32_t pos = 0;

		h->pc_n = 0;	/* see inf_lazy_begin() */
		if (!h->t_pin)
			continue;
		while ((t = idmap_next(&in->touch, &pos))) {
			if ((uint64_t)t->val < h->t_pin || inf_find(h, t->key))
				continue;
			ret = inf_set(h, t->key, inf_get(in, h, t->key));
			if (ret)
				return ret;
		}
		h->t_pin = 0;
	}
	idmap_free(&in->touch);
	idmap_free(&in->owned);
	in->seq = 0;
	in->lazy = false;
	return 0;
}
