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
#include <string.h>

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

/* Node @nd is marked: some key of owned may name it. */
static int inf_lazy_mark(struct infer *in, uint64_t id)
{
	int32_t nd = sim_node_handle(in->s, id);

	if (nd < 0) {
		in->own_any_node = true;
		return 0;
	}
	if (inf_grow_zero(&in->own_node, &in->cap_own_node, (size_t)nd + 1, 1))
		return -ENOMEM;
	in->own_node[nd] = 1;
	return 0;
}

/* No key of owned names node @nd: its counters need no lookup. */
static bool inf_lazy_unowned(const struct infer *in, int32_t nd)
{
	return !in->own_any_node && nd >= 0 &&
	       ((size_t)nd >= in->cap_own_node || !in->own_node[nd]);
}

static void inf_lazy_unmark_all(struct infer *in)
{
	if (in->own_node)
		memset(in->own_node, 0, in->cap_own_node);
	in->own_any_node = false;
}

static struct inf_kagg *inf_lazy_ka(const struct infer *in, uint64_t key)
{
	int64_t x = idmap_get(&in->owned, key, -1);

	return x < 0 ? NULL : &in->ka[x];
}

/* @a's bounds take @val in (empty bounds: INT64_MAX..INT64_MIN). */
static inline void inf_kagg_take(struct inf_kagg *a, int64_t val)
{
	if (val < a->lo)
		a->lo = val;
	if (val > a->hi)
		a->hi = val;
}

/*
 * Key ka[@x] has adds not yet written: on the dirty list (the caller made
 * room for it), once.  Return: the key, whose pend the caller sets.
 */
static struct inf_kagg *inf_lazy_dirty(struct infer *in, uint32_t x)
{
	struct inf_kagg *a = &in->ka[x];

	if (!a->dirty) {
		in->dirty[in->nr_dirty++] = x;
		a->dirty = true;
	}
	return a;
}

/* @k's table holds @key now, at @val: one node more in its list. */
int inf_lazy_own(struct infer *in, uint64_t key, size_t k, int64_t val)
{
	int64_t x = idmap_get(&in->owned, key, -1);
	int ret;

	if (in->nr_own == in->cap_own) {
		size_t cap = in->cap_own ? 2 * in->cap_own : 256;
		struct inf_own *o = cap < UINT32_MAX ? realloc(in->own, cap * sizeof(*o)) : NULL;

		if (!o)
			return -ENOMEM;
		in->own = o;
		in->cap_own = cap;
	}
	if (x < 0) {
		if (inf_grow(&in->ka, &in->cap_ka, in->nr_ka + 1, sizeof(*in->ka)) ||
		    inf_lazy_mark(in, inf_key_id(key)))
			return -ENOMEM;
		x = (int64_t)in->nr_ka;
		ret = idmap_put(&in->owned, key, x);
		if (ret)
			return ret;
		in->ka[in->nr_ka++] = (struct inf_kagg){ .key = key, .lo = val, .hi = val,
							  .head = UINT32_MAX };
	}
	in->own[in->nr_own] = (struct inf_own){ .hyp = (uint32_t)k, .next = in->ka[x].head,
						.val = val };
	in->ka[x].head = (uint32_t)in->nr_own++;
	inf_kagg_take(&in->ka[x], val);	/* its bounds take the entry's value in */
	return 0;
}

/* Can an update be unheld at all: lazy mode between windows, the owned lists whole. */
bool inf_lazy_unheld_may(const struct infer *in)
{
	return in->lazy && !in->win && in->agg && !in->owned_lost;
}

/* inf_lazy_unowned(), for inf_path_build()'s walk to the reach. */
bool inf_lazy_node_unowned(const struct infer *in, int32_t nd)
{
	return inf_lazy_unowned(in, nd);
}

/*
 * Before an update's path is built: does the base's walk step only nodes
 * that no key of owned names?  Then no table holding a counter of the path
 * is asked and none is written (inf_lazy_alike() would find every node
 * unowned), and the update needs no path: most updates between windows
 * stop after a node or two of a deep tree.  Reads the base's counters node
 * by node, as inf_path_build() would, until the base's walk stops or a node
 * is named; a node without a handle, a path deeper than INF_MAX_PATH (the
 * hypotheses would stop walking lazily) or steps of a policy built
 * elsewhere: no.
 */
bool inf_lazy_unheld(const struct infer *in, uint64_t id, unsigned int cpu, uint32_t abs_val)
{
	struct sim_step_in si = { .th = sim_threshold(in->s), .abs_val = abs_val,
				  .batch = sim_batch(in->s) };
	int32_t nd = sim_node_handle(in->s, id);

	if (!inf_lazy_unheld_may(in) || nd < 0 || sim_node_level_at(in->s, nd) >= INF_MAX_PATH)
		return false;
	for (; nd >= 0; nd = sim_node_parent_at(in->s, nd)) {
		if (!inf_lazy_unowned(in, nd))
			return false;
		si.atomic = sim_stats_updates_at(in->s, nd);
		si.pcpu = sim_pcpu_stats_updates_at(in->s, nd, cpu);
		if (in->pol->step(&si).walk == SIM_WALK_STOP)
			break;
	}
	return true;
}

/* The adds pending on @key go into its holders' entries; its bounds become exact. */
static void inf_lazy_sync_key(struct infer *in, uint64_t key, struct inf_kagg *a)
{
	uint32_t x;

	a->lo = INT64_MAX;
	a->hi = INT64_MIN;
	in->useq++;
	for (x = a->head; x != UINT32_MAX; x = in->own[x].next) {
		struct inf_hyp *h = &in->h[in->own[x].hyp];
		struct idmap_ent *e;

		in->own[x].val += a->pend;	/* every node: the listed values move alike */
		if (h->useq == in->useq)
			continue;	/* listed twice: its entry went and came back */
		h->useq = in->useq;
		e = inf_find(h, key);
		if (!e)
			continue;
		/* the base moved as much: it still differs, the table stays canonical */
		if (a->pend)
			inf_ent_set(h, e, e->val + a->pend);
		inf_kagg_take(a, e->val);
	}
	a->pend = 0;
}

/* Before anything reads the tables but a lazy update: every pending add is written. */
void inf_lazy_sync(struct infer *in)
{
	size_t i;

	for (i = 0; i < in->nr_dirty; i++) {
		struct inf_kagg *a = &in->ka[in->dirty[i]];

		if (a->pend)
			inf_lazy_sync_key(in, a->key, a);
		a->dirty = false;
	}
	in->nr_dirty = 0;
}

/* Before hypotheses walk @pa: its counters' pending adds are written. */
void inf_lazy_sync_path(struct infer *in, const struct inf_path *pa, unsigned int cpu)
{
	size_t j;

	for (j = 0; j < 2 * pa->n; j++) {
		uint64_t key = inf_path_key(pa, j, cpu);
		struct inf_kagg *a = inf_lazy_ka(in, key);

		if (a && a->pend)
			inf_lazy_sync_key(in, key, a);
	}
}

/* Would the step, on these counters, do what it does on the base's (@so), moved as much? */
static bool inf_step_alike(const struct infer *in, struct sim_step_in si, int64_t atomic,
			   int64_t pcpu, const struct sim_step_out *so, int64_t d)
{
	struct sim_step_out o;

	si.atomic = atomic;
	si.pcpu = (uint32_t)pcpu;
	o = in->pol->step(&si);
	return o.walk == so->walk && o.add == so->add && o.drop == so->drop &&
	       (int64_t)o.pcpu - pcpu == d;
}

/*
 * A lazy update whose walk, on every table holding one of its path's
 * counters, would do what the base's does: the same decision at each node
 * the base's walk steps, nothing moved into an atomic, each per-CPU counter
 * raised as much as the base's.  Then every entry stays what it is, but the
 * per-CPU ones, which all take the base's add: that is written into the
 * key's pend, not into each table.  Decided on the bounds of the holders'
 * values (the corners of the box they lie in), which holds for the table's
 * steps (a flushable test on the atomic, a batch test on the per-CPU
 * counter: each monotone); a policy built elsewhere always walks.
 */
bool inf_lazy_alike(struct infer *in, const struct inf_path *pa, unsigned int cpu)
{
	struct sim_step_in si = { .th = pa->th, .abs_val = pa->abs_val, .batch = sim_batch(in->s) };
	int64_t d[INF_MAX_PATH];
	size_t i, x, y;

	if (!in->agg || in->owned_lost || pa->cut)
		return false;
	for (i = 0; i < pa->reach; i++) {
		int64_t av[3] = { pa->base[2 * i] }, cv[3] = { pa->base[2 * i + 1] };
		struct inf_kagg *a, *c;
		size_t na = 1, nc = 1;
		struct sim_step_out so;

		si.atomic = pa->base[2 * i];
		si.pcpu = (uint32_t)pa->base[2 * i + 1];
		so = in->pol->step(&si);
		d[i] = (int64_t)so.pcpu - pa->base[2 * i + 1];
		if (inf_lazy_unowned(in, pa->nd[i]))
			continue;
		a = inf_lazy_ka(in, inf_path_key(pa, 2 * i, cpu));
		c = inf_lazy_ka(in, inf_path_key(pa, 2 * i + 1, cpu));
		if (a && a->head != UINT32_MAX) {
			av[na++] = a->lo + a->pend;
			av[na++] = a->hi + a->pend;
		}
		if (c && c->head != UINT32_MAX) {
			cv[nc++] = c->lo + c->pend;
			cv[nc++] = c->hi + c->pend;
		}
		if (na == 1 && nc == 1)
			continue;
		/* a batch into the base's atomic: the holders' entries move */
		if (so.add || so.drop)
			return false;
		for (x = 0; x < na; x++)
			for (y = 0; y < nc; y++)
				if ((x || y) && !inf_step_alike(in, si, av[x], cv[y], &so, d[i]))
					return false;
	}
	/* room first: a key must not take its add unless every one does */
	if (inf_grow(&in->dirty, &in->cap_dirty, in->nr_dirty + pa->reach, sizeof(*in->dirty)))
		return false;
	for (i = 0; i < pa->reach; i++) {
		uint64_t key = inf_path_key(pa, 2 * i + 1, cpu);
		int64_t xk;

		if (!d[i] || inf_lazy_unowned(in, pa->nd[i]))
			continue;
		xk = idmap_get(&in->owned, key, -1);
		if (xk >= 0)
			inf_lazy_dirty(in, (uint32_t)xk)->pend += d[i];
	}
	in->lazy_alike++;
	return true;
}

/*
 * The lists anew from the tables, each key's pend kept: a node per entry,
 * at its value, and exact bounds.  Every walk that writes lists its table
 * again, so between compactions a burst of them leaves lists mostly of
 * nodes that are no longer anyone's value; this bounds them (and memory)
 * by a multiple of the entries.  Never allocates: there are no more
 * entries than nodes.
 */
static void inf_lazy_relist(struct infer *in)
{
	const struct idmap_ent *e;
	size_t i, x;

	for (x = 0; x < in->nr_ka; x++) {
		in->ka[x].head = UINT32_MAX;
		in->ka[x].lo = INT64_MAX;	/* empty, as inf_lazy_sync_key() leaves a key no one holds */
		in->ka[x].hi = INT64_MIN;
	}
	in->nr_own = 0;
	for (i = 0; i < in->nr_h; i++) {
		uint32_t pos = 0;

		while ((e = idmap_next(&in->h[i].e, &pos))) {
			struct inf_kagg *a = &in->ka[idmap_get(&in->owned, e->key, -1)];

			inf_kagg_take(a, e->val);
			in->own[in->nr_own] = (struct inf_own){ .hyp = (uint32_t)i, .next = a->head,
								.val = e->val };
			a->head = (uint32_t)in->nr_own++;
		}
	}
	in->nr_live = in->nr_own;
	in->relists++;
}

/*
 * A lazy update that inf_lazy_alike() could not decide on the bounds: each
 * table whose step could differ from the base's is asked on its own values
 * (@ask: inf_walk_lazy(), the driver's to pass); the others, and most of
 * those asked, walk as the base does and take its adds through the keys'
 * pend, as an alike update's tables do, atomics included; only the rest
 * write, relative to the pend this update leaves.  A key first held during
 * the update has no pend yet: its new entries are what they read.
 *
 * Which could differ is read from the values the lists hold, without
 * touching the tables: the table's steps (in->agg) read the atomic only
 * against the threshold and the per-CPU counter only against the batch
 * (sim_step_flushable(), sim_step_charge()), so at a node a table whose
 * atomic is on the base's side, and whose per-CPU counter stays under the
 * batch as the base's does or is not charged (the base skipped the node),
 * steps as the base's.  A table with no entry there reads the base's counter.
 */
int inf_lazy_select(struct infer *in, const struct inf_path *pa, unsigned int cpu,
		    inf_ask_fn ask)
{
	int64_t pold[2 * INF_MAX_PATH], pend[2 * INF_MAX_PATH], xk[2 * INF_MAX_PATH];
	int64_t abs_val = pa->abs_val, batch = sim_batch(in->s), th = (int64_t)pa->th;
	struct sim_step_in si = { .th = pa->th, .abs_val = pa->abs_val, .batch = batch };
	size_t j;
	int ret;

	if (inf_grow(&in->dirty, &in->cap_dirty, in->nr_dirty + 2 * pa->reach, sizeof(*in->dirty)))
		return -ENOMEM;
	if (in->nr_own > 4 * in->nr_live + in->relist_slack)
		inf_lazy_relist(in);
	if (inf_grow_zero(&in->lseen, &in->cap_lseen, in->nr_h, sizeof(*in->lseen)))
		return -ENOMEM;
	for (j = 0; j < 2 * pa->n; j++) {
		xk[j] = inf_lazy_unowned(in, pa->nd[j / 2]) ? -1 :
			idmap_get(&in->owned, inf_path_key(pa, j, cpu), -1);
		pold[j] = pend[j] = xk[j] < 0 ? 0 : in->ka[xk[j]].pend;
		if (xk[j] >= 0)
			pend[j] += pa->post[j] - pa->base[j];
	}
	in->useq++;
	for (j = 0; j < 2 * pa->reach; j++) {
		uint32_t x = xk[j] < 0 ? UINT32_MAX : in->ka[xk[j]].head, prev = UINT32_MAX;
		int64_t b = pa->base[j];
		bool pcpu = j & 1, b_side = pcpu ? b + abs_val >= batch : b > th;
		struct sim_step_out so;

		if (pcpu) {
			si.atomic = pa->base[j - 1];
			si.pcpu = (uint32_t)b;
			so = in->pol->step(&si);
			/* not charged: the same skip for every counter */
			if (!so.charged)
				continue;
		}

		/*
		 * Per-CPU: unless the base's add crosses the batch, a counter
		 * that stays under it steps as the base's; atomic: one on the
		 * base's side of the threshold.  Not read: an empty list, or one
		 * whose bounds hold no value that could be asked.
		 */
		if (x == UINT32_MAX ||
		    (pcpu ? !b_side && in->ka[xk[j]].hi + pold[j] + abs_val < batch :
		     b_side ? in->ka[xk[j]].lo + pold[j] > th : in->ka[xk[j]].hi + pold[j] <= th))
			continue;
		/*
		 * A walk may add nodes (own[] moves) but only at the head, before
		 * x.  A table's first node is its entry's value now: the later
		 * ones are unlinked, and so is a first whose entry is gone.  The
		 * bounds anew: of the nodes kept (the head always is) and of
		 * those listed meanwhile.
		 */
		in->ka[xk[j]].lo = INT64_MAX;
		in->ka[xk[j]].hi = INT64_MIN;
		in->lseq++;
		for (; x != UINT32_MAX; x = in->own[x].next) {
			int64_t c = in->own[x].val + pold[j];
			uint32_t hyp = in->own[x].hyp;
			const struct idmap_ent *e;
			struct inf_hyp *h;

			in->lazy_listed++;
			if (in->lseen[hyp] == in->lseq) {
				in->own[prev].next = in->own[x].next;
				continue;
			}
			in->lseen[hyp] = in->lseq;
			h = &in->h[hyp];
			if ((pcpu ? !b_side && c + abs_val < batch : (c > th) == b_side) ||
			    h->useq == in->useq) {
				inf_kagg_take(&in->ka[xk[j]], in->own[prev = x].val);
				continue;
			}
			h->useq = in->useq;
			in->lazy_asked++;
			ret = ask(in, h, pa, cpu, pold, pend);
			if (ret < 0)
				return ret;
			if (!ret) {
				in->lazy_walked++;
				in->changed = true;
			}
			/* its entry went, or its walk moved it and listed it again */
			e = inf_find(h, inf_path_key(pa, j, cpu));
			if (prev != UINT32_MAX && (!e || (!ret && e->val != in->own[x].val)))
				in->own[prev].next = in->own[x].next;
			else
				inf_kagg_take(&in->ka[xk[j]], in->own[prev = x].val);
		}
	}
	for (j = 0; j < 2 * pa->reach; j++)
		if (xk[j] >= 0 && pend[j] != pold[j])
			inf_lazy_dirty(in, (uint32_t)xk[j])->pend = pend[j];
	return 0;
}

/*
 * After a compaction in lazy mode (its merge moves hypotheses), or when a
 * read drops some: the keys the tables hold now.  Nothing is pending then.
 */
int inf_lazy_owned(struct infer *in)
{
	const struct idmap_ent *e;
	size_t i, n = 0;
	int ret;

	for (i = 0; i < in->nr_h; i++)
		n += idmap_count(&in->h[i].e);
	ret = idmap_reset(&in->owned, n);
	inf_lazy_unmark_all(in);
	in->nr_own = 0;
	in->nr_ka = 0;
	in->nr_dirty = 0;
	for (i = 0; i < in->nr_h && !ret; i++) {
		uint32_t pos = 0;

		while (!ret && (e = idmap_next(&in->h[i].e, &pos)))
			ret = inf_lazy_own(in, e->key, i, e->val);
	}
	in->nr_live = in->nr_own;
	return ret;
}

/* A window opens, or a traced value is set into every table: walk eagerly again. */
int inf_lazy_end(struct infer *in)
{
	size_t i;

	if (!in->lazy)
		return 0;
	inf_lazy_sync(in);
	for (i = 0; i < in->nr_h; i++)
		in->h[i].pc_n = 0;	/* see inf_lazy_begin() */
	idmap_free(&in->owned);
	inf_lazy_unmark_all(in);
	in->nr_own = 0;
	in->nr_ka = 0;
	in->lazy = false;
	return 0;
}
