// SPDX-License-Identifier: GPL-2.0
/*
 * infer_window.c - the kernel's lock window the inference has open.
 *
 * Contract: the window's visit list is fixed at infer_locked() in the base
 * simulator's order (sim_window_peek(): children before parents); each
 * hypothesis moves its own position through it, and at the close every
 * hypothesis makes the visits it has left while the base makes the whole
 * window at once.  A window stays open a little past its traced unlock for
 * updates whose change may have been made inside it, past the next window's
 * lock too (held) for those the next window's visits commute with.  Never
 * decides between hypotheses (infer_cap.c does).
 */
#include <errno.h>
#include <stdlib.h>

#include "infer-local.h"

/*
 * Visits p..upto of @h happen now: listed counters of those nodes become 0,
 * which is what @h reads past their visit without an entry, so their entries
 * go.  Either walk the visits and look their two counters up (the atomic and
 * the window CPU's), or walk the entries and look their visit up, whichever
 * is fewer lookups: a short stretch of a window must not cost a scan of a
 * table that holds counters from all over the tree.  Both drop the same
 * entries; the scan notes their keys first, a delete moves entries.
 */
void inf_visit_upto(struct infer *in, struct inf_hyp *h, size_t upto)
{
	uint64_t gone[64];
	struct idmap_ent *e;
	size_t v, n, i;
	uint32_t pos;

	if (upto < h->p || !idmap_count(&h->e)) {
		h->p = upto + 1;
		return;
	}
	if (2 * (upto - h->p + 1) < idmap_count(&h->e)) {
		for (v = h->p; v <= upto; v++) {
			inf_ent_del(h, inf_key(in->list[v], INF_ATOMIC));
			inf_ent_del(h, inf_key(in->list[v], in->wcpu));
		}
		h->p = upto + 1;
		return;
	}
	do {
		/* a full buffer: delete those and scan again, the rest is still there */
		for (n = 0, pos = 0; n < 64 && (e = idmap_next(&h->e, &pos)); ) {
			v = inf_vis(in, e->key);
			if (v != INF_NONE && v >= h->p && v <= upto)
				gone[n++] = e->key;
		}
		for (i = 0; i < n; i++)
			inf_ent_del(h, gone[i]);
	} while (n == 64);
	h->p = upto + 1;
}

/* The base's visit list of the window just begun, and each id's place in it. */
static int inf_list_fill(struct infer *in)
{
	size_t i, n = sim_window_remaining(in->s);
	int ret;

	if (n > in->cap_list) {
		uint64_t *l = realloc(in->list, n * sizeof(*l));

		if (!l)
			return -ENOMEM;
		in->list = l;
		in->cap_list = n;
	}
	ret = idmap_reset(&in->list_idx, n);
	for (i = 0; i < n && !ret; i++) {
		in->list[i] = sim_window_peek(in->s, i);
		ret = idmap_put(&in->list_idx, in->list[i], (int64_t)i);
	}
	in->n_list = i;
	return ret;
}

/* A table holds @key at @val in the open window: the key's bounds take it in. */
static int inf_win_put(struct infer *in, uint64_t key, int64_t val)
{
	struct idmap_ent *lo = idmap_find(&in->wkeys, key), *hi;

	if (!lo)
		return idmap_put(&in->wkeys, key, val) ?: idmap_put(&in->wkeys_hi, key, val);
	hi = idmap_find(&in->wkeys_hi, key);
	if (val < lo->val)
		lo->val = val;
	if (hi && val > hi->val)
		hi->val = val;
	return 0;
}

void inf_win_key(struct infer *in, uint64_t key, int64_t val)
{
	if (in->win && !in->wkeys_lost && inf_win_put(in, key, val))
		in->wkeys_lost = true;
}

/* The keys the tables hold as the window opens. */
static void inf_win_keys(struct infer *in)
{
	const struct idmap_ent *e;
	size_t i;

	in->wkeys_lost = idmap_reset(&in->wkeys, 64) || idmap_reset(&in->wkeys_hi, 64);
	for (i = 0; i < in->nr_h && !in->wkeys_lost; i++) {
		uint32_t pos = 0;

		while (!in->wkeys_lost && (e = idmap_next(&in->h[i].e, &pos)))
			in->wkeys_lost = inf_win_put(in, e->key, e->val) != 0;
	}
}

/* Does the step on these counters do what it does on the base's (@so)? */
static bool inf_win_step_alike(const struct infer *in, struct sim_step_in si, int64_t atomic,
			       const struct sim_step_out *so)
{
	struct sim_step_out o;

	si.atomic = atomic;
	o = in->pol->step(&si);
	return !o.add && o.walk == so->walk && o.pcpu == so->pcpu;
}

/*
 * An update in the window, on another CPU than the window's, that no
 * hypothesis needs to take.  No table holds a per-CPU counter of its path
 * where the base's walk steps, so each hypothesis reads, node by node, the
 * base's per-CPU counter and as atomic the base's, or 0 past that node's
 * visit (which leaves another CPU's per-CPU counter alone), or its own
 * entry.  If at each node the step does the same on all of them (the same
 * walk, nothing moved into the atomic, the per-CPU counter alike), every
 * hypothesis commutes with its visits still to come (inf_commutes(): no
 * branch) and its walk leaves each counter as it reads it without or with
 * its entry once the base has taken the update: no entry comes, goes or
 * changes.  The base's and the visited states are asked as they are (any
 * policy); the atomics tables hold, between their bounds, only with the
 * table's steps, whose flushable test is monotone (in->agg).
 */
bool inf_win_alike(struct infer *in, const struct inf_path *pa, unsigned int cpu)
{
	struct sim_step_in si = { .th = pa->th, .abs_val = pa->abs_val, .batch = sim_batch(in->s) };
	size_t i;

	if (!in->win || cpu == in->wcpu || in->wkeys_lost || pa->cut || in->no_win_alike)
		return false;
	for (i = 0; i < pa->reach; i++) {
		const struct idmap_ent *lo = idmap_find(&in->wkeys, inf_path_key(pa, 2 * i, cpu));
		const struct idmap_ent *hi = lo ? idmap_find(&in->wkeys_hi, lo->key) : NULL;
		struct sim_step_out so;

		if (idmap_find(&in->wkeys, inf_path_key(pa, 2 * i + 1, cpu)) ||
		    (lo && (!in->agg || !hi)))
			return false;
		if (pa->vis[i] == INF_NONE && !lo)
			continue;	/* every hypothesis reads the base's */
		si.atomic = pa->base[2 * i];
		si.pcpu = (uint32_t)pa->base[2 * i + 1];
		so = in->pol->step(&si);
		if (so.add)
			return false;
		if (pa->vis[i] != INF_NONE && !inf_win_step_alike(in, si, 0, &so))
			return false;
		if (lo && (!inf_win_step_alike(in, si, lo->val, &so) ||
			   !inf_win_step_alike(in, si, hi->val, &so)))
			return false;
	}
	in->win_alike++;
	return true;
}

/* The kernel's window on @cpu for subtree(@id) opens: the one open closes. */
static int inf_open(struct infer *in, uint64_t ts, uint64_t id, unsigned int cpu, uint64_t dur)
{
	size_t i;
	int ret;

	/* the next window opens at once: no lazy mode to begin for it (inf_compact()) */
	in->reopening = true;
	ret = inf_close(in);
	in->reopening = false;
	if (!ret)
		ret = inf_lazy_end(in);	/* in a window, every entry is its own */
	if (ret)
		return ret;
	ret = sim_window_begin(in->s, ts, id, cpu);
	if (ret)
		return ret;
	ret = inf_list_fill(in);
	if (ret)
		return ret;
	in->win = true;
	in->closing = false;
	inf_win_keys(in);
	in->wcpu = cpu;
	in->t0 = in->last_ts = ts;
	in->dur = dur;
	if (in->ddw)
		inf_ddw_reopen(in, in->ddw);
	for (i = 0; i < in->nr_h; i++) {
		in->h[i].p = 0;
		in->h[i].front.n = 0;
	}
	return 0;
}

/**
 * infer_locked() - the kernel's window on @cpu for subtree(@id) opens.
 *
 * On a machine with several CPUs the next CPU's window of a flush often
 * locks within a microsecond of the last one's unlock, before an update
 * made inside that one is traced (a tracepoint fires after the change):
 * closed at this lock, the window would take it as made after its visits.
 * So without an order sink a lock that comes while the open window is
 * closing, within INFER_LATE_NS of its unlock, is held (in->held): the
 * window stays open for late updates whose paths the held window does not
 * visit (inf_late_past_held()), which commute with its visits wherever
 * they fell, and the held window opens at the first other event
 * (inf_unhold()).  With a sink the order would name positions of a window
 * the replay has closed already: no hold.
 */
int infer_locked(struct infer *in, uint64_t ts, uint64_t id, unsigned int cpu, uint64_t dur)
{
	int ret = inf_unhold(in);

	if (ret)
		return ret;
	if (in->win && in->closing && !in->order_fn && ts >= in->unlock_ts &&
	    ts - in->unlock_ts <= INF_LATE_NS) {
		in->held = (struct inf_held){ .ts = ts, .id = id, .dur = dur, .cpu = cpu, .on = true };
		return 0;
	}
	return inf_open(in, ts, id, cpu, dur);
}

/*
 * An update at @ts, the last event on its CPU at @t_min, is late for the
 * closing window: traced just after its unlock, with nothing else seen on
 * its CPU since before it, so possibly made inside it.
 */
static bool inf_late(const struct infer *in, uint64_t ts, uint64_t t_min)
{
	return in->closing && t_min < in->unlock_ts && ts - in->unlock_ts <= INF_LATE_NS;
}

/* A held lock (infer_locked()) opens its window now; 0 if none is held. */
int inf_unhold(struct infer *in)
{
	struct inf_held h = in->held;

	if (!h.on)
		return 0;
	in->held.on = false;
	return inf_open(in, h.ts, h.id, h.cpu, h.dur);
}

/*
 * May the update of @id on @cpu at @ts (the last event on @cpu at @t_min) be
 * taken as a late update of the closing window while a lock is held?  Late
 * for it (inf_late()), on another CPU than the held
 * window's (an update on that CPU before its lock would be on its list,
 * one after not), and none of its path's nodes under the held window's
 * cgroup linked on that CPU's tree: the held window's visits touch none of
 * the counters its walk reads or writes.
 */
bool inf_late_past_held(struct infer *in, uint64_t ts, uint64_t t_min, unsigned int cpu,
			uint64_t id)
{
	uint64_t a;
	int32_t n;

	if (!in->held.on || !inf_late(in, ts, t_min) || cpu == in->held.cpu ||
	    sim_node_handle(in->s, id) < 0)
		return false;
	/* the path's nodes under the held window's cgroup: from @id up to it */
	for (a = id; a && a != in->held.id; a = sim_cgroup_parent(in->s, a))
		;
	if (!a)
		return true;
	for (a = id; a; a = sim_cgroup_parent(in->s, a)) {
		n = sim_node_handle(in->s, a);
		if (n < 0 || sim_pcpu_on_tree_at(in->s, n, in->held.cpu))
			return false;
		if (a == in->held.id)
			break;
	}
	return true;
}

/* The window is over: every hypothesis makes its remaining visits. */
int inf_close(struct infer *in)
{
	size_t i;
	int ret;

	if (!in->win)
		return 0;
	if (in->ddw) {
		ret = inf_dd_give_up(in, inf_ddw_close(in, in->ddw));
		if (ret)
			return ret;
	}
	/* the lateness of what each has left was charged with its bounds */
	for (i = 0; i < in->nr_h; i++)
		if (in->n_list)
			inf_visit_upto(in, &in->h[i], in->n_list - 1);
	ret = sim_window_end(in->s, in->last_ts > in->unlock_ts ? in->last_ts : in->unlock_ts);
	in->win = in->closing = false;
	for (i = 0; i < in->nr_h; i++)
		in->h[i].p = 0;
	if (!ret)
		ret = inf_compact(in, true);
	return ret ? ret : inf_dd_back(in);
}

/*
 * Before an update at @ts: a window whose unlock was traced closes unless the
 * update is late, i.e. traced just after the unlock but made after nothing
 * else seen on its CPU before the unlock (@t_min).
 */
int inf_close_unless_late(struct infer *in, uint64_t ts, uint64_t t_min)
{
	if (in->closing && !inf_late(in, ts, t_min))
		return inf_close(in);
	return 0;
}

/**
 * infer_unlock() - the kernel traced the window's unlock.  A tracepoint fires
 * after the update it reports, so an update traced just after the unlock may
 * have been made inside the window: the window stays open for those (see
 * inf_close_unless_late()) and closes at the first event that cannot be one.
 */
int infer_unlock(struct infer *in, uint64_t ts)
{
	int ret = inf_unhold(in);

	if (ret)
		return ret;
	if (!in->win)
		return 0;
	in->closing = true;
	in->unlock_ts = ts;
	return 0;
}

/**
 * infer_flush_all() - a window we cannot split (the 6.10-6.14 loop over every
 * CPU under one lock): every possible CPU's visits at once, in order.
 */
int infer_flush_all(struct infer *in, uint64_t ts, uint64_t id)
{
	unsigned int cpu;
	int ret;

	for (cpu = 0; cpu < in->nr_possible; cpu++) {
		ret = infer_locked(in, ts, id, cpu, 0);
		if (!ret)
			ret = infer_unlock(in, ts);
		if (!ret)
			ret = inf_close(in);
		if (ret)
			return ret;
	}
	return 0;
}
