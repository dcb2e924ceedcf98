// SPDX-License-Identifier: GPL-2.0
/*
 * infer_walk.c - an update's walk on one hypothesis: its ancestor path,
 * built once per update, memcg_rstat_updated()'s walk on the hypothesis's
 * own counters through the policy's step (struct sim_policy, sim/policy.c),
 * the very function the simulator applies to its nodes, and the branches at
 * the visits of the path still to come.  infer_update.c drives them.
 */
#include <errno.h>

#include "infer-local.h"

/* The step input of @pa's update, field by field (a copy of a whole literal stalls). */
static inline void inf_step_in(const struct infer *in, const struct inf_path *pa,
			       struct sim_step_in *si)
{
	si->th = pa->th;
	si->abs_val = pa->abs_val;
	si->batch = sim_batch(in->s);
}

/* The policy's step at node @i of the path, on its counters @v, in place; true if it stops the walk. */
static inline bool inf_step_at(const struct infer *in, struct sim_step_in *si, int64_t *v,
			       size_t i)
{
	struct sim_step_out so;

	si->atomic = v[2 * i];
	si->pcpu = (uint32_t)v[2 * i + 1];
	so = in->pol->step(si);
	v[2 * i + 1] = so.pcpu;
	v[2 * i] += so.add;
	return so.walk == SIM_WALK_STOP;
}

/*
 * memcg_rstat_updated()'s walk on the path's counters @v (atomic, then
 * per-CPU, of each node), in place, from node @from (the walk went on past
 * those below): the policy's step at each node until one stops it.  Returns
 * how many nodes it stepped: the walk read nothing above.
 */
static size_t inf_steps(const struct infer *in, const struct inf_path *pa, int64_t *v, size_t from)
{
	struct sim_step_in si;
	size_t i;

	inf_step_in(in, pa, &si);
	for (i = from; i < pa->n; i++)
		if (inf_step_at(in, &si, v, i))
			return i + 1;
	return pa->n;
}

/*
 * Up to @max nodes from @nd up, appended to @pa with the base's counters;
 * returns whether nodes are left above them.
 */
static bool inf_path_fill(const struct infer *in, struct inf_path *pa, int32_t nd, size_t max)
{
	struct sim_path_node sp[INF_MAX_PATH];
	size_t i, n;
	bool more;

	n = sim_node_path_at(in->s, nd, pa->cpu, sp, max, &more);
	for (i = 0; i < n; i++) {
		size_t k = pa->n + i;

		pa->id[k] = sp[i].id;
		pa->nd[k] = sp[i].node;
		pa->vis[k] = inf_list_idx(in, sp[i].id);
		pa->base[2 * k] = pa->post[2 * k] = sp[i].stats_updates;
		pa->base[2 * k + 1] = pa->post[2 * k + 1] = sp[i].pcpu;
	}
	pa->n += n;
	return more;
}

/*
 * inf_path_build() - the path of an update of @id from @cpu, the base's
 * counters on it and the base's own walk (sim_update() takes it after the
 * hypotheses').  With @unheld, *@unheld says whether the list's tables hold
 * nothing the base's walk reads, as inf_lazy_unheld() would answer; then
 * @pa holds only the nodes that walk steps (partial until
 * inf_path_complete()): between windows most walks stop after a node or two
 * of a deep tree, and the open diagram takes most updates alike, reading
 * nothing above.  Where a node is held, the whole path, which the list reads.
 */
int inf_path_build(struct infer *in, uint64_t ts, unsigned int cpu, uint64_t id,
		   uint32_t abs_val, struct inf_path *pa, bool *unheld)
{
	struct sim_step_in si;
	int32_t nd;

	pa->added = false;
	nd = sim_node_handle(in->s, id);
	if (nd < 0) {
		/* the base attaches it under the root; then the path is known */
		int ret = sim_cgroup_add(in->s, ts, id, SIM_ROOT_ID);

		if (ret < 0 && ret != -EEXIST)
			return ret;
		nd = sim_node_handle(in->s, id);
		if (nd < 0)
			return -ENOENT;
		pa->added = true;
	}
	pa->n = 0;
	pa->th = sim_threshold(in->s);
	pa->abs_val = abs_val;
	pa->cpu = cpu;
	pa->partial = false;
	pa->cut = false;
	if (unheld)
		*unheld = false;
	/* a memcg just attached: not unheld, as inf_lazy_unheld() finds no handle for it */
	if (!unheld || pa->added || !inf_lazy_unheld_may(in) ||
	    sim_node_level_at(in->s, nd) >= INF_MAX_PATH) {
		pa->cut = inf_path_fill(in, pa, nd, INF_MAX_PATH);
		pa->reach = inf_steps(in, pa, pa->post, 0);
		return 0;
	}
	/* no deeper than INF_MAX_PATH: never cut */
	inf_step_in(in, pa, &si);
	for (;;) {
		bool more;

		if (!inf_lazy_node_unowned(in, nd)) {
			/* held: the rest at once, and the walk on from here */
			size_t from = pa->n;

			inf_path_fill(in, pa, nd, INF_MAX_PATH - pa->n);
			pa->reach = inf_steps(in, pa, pa->post, from);
			return 0;
		}
		more = inf_path_fill(in, pa, nd, 1);
		if (inf_step_at(in, &si, pa->post, pa->n - 1)) {
			pa->partial = more;
			break;
		}
		if (!more)
			break;
		nd = sim_node_parent_at(in->s, nd);
	}
	pa->reach = pa->n;
	*unheld = true;
	return 0;
}

/*
 * inf_path_complete() - the nodes of a partial @pa above its reach, with
 * the base's counters (its walk did not step them: post is base).
 */
void inf_path_complete(const struct infer *in, struct inf_path *pa)
{
	if (!pa->partial)
		return;
	inf_path_fill(in, pa, sim_node_parent_at(in->s, pa->nd[pa->n - 1]), INF_MAX_PATH - pa->n);
	pa->partial = false;
}

/* Has @h made the visit that resets counter @j of the path (0 then)? */
static inline bool inf_path_visited(const struct infer *in, const struct inf_hyp *h,
				    const struct inf_path *pa, size_t j, unsigned int cpu)
{
	size_t v = pa->vis[j / 2];

	return v != INF_NONE && v < h->p && (!(j & 1) || cpu == in->wcpu);
}

/*
 * @h's entries for the path's keys, atomic and per-CPU per node, NULL if
 * none.  Their slots, absent ones too, are kept while the path repeats and
 * the table is not rebuilt (pc_gen): a run of updates on one cgroup looks
 * them up once.
 */
void inf_path_find(const struct infer *in, struct inf_hyp *h, const struct inf_path *pa,
		   unsigned int cpu, struct idmap_ent **ent)
{
	bool cache = pa->n <= INF_PIN_NODES;
	size_t j;

	if (cache && h->pc_n == pa->n && h->pc_gen == h->e.gen && h->pc_id == pa->id[0] &&
	    h->pc_cpu == cpu) {
		for (j = 0; j < 2 * pa->n; j++)
			ent[j] = h->pc_idx[j] == UINT32_MAX ? NULL : &h->e.e[h->pc_idx[j]];
		return;
	}
	for (j = 0; j < 2 * pa->n; j++)
		ent[j] = in->pk_on && !in->pk_maybe[j] ? NULL : inf_find(h, inf_path_key(pa, j, cpu));
	if (cache) {
		for (j = 0; j < 2 * pa->n; j++)
			h->pc_idx[j] = ent[j] ? (uint32_t)(ent[j] - h->e.e) : UINT32_MAX;
		h->pc_gen = h->e.gen;
		h->pc_id = pa->id[0];
		h->pc_cpu = cpu;
		h->pc_n = pa->n;
	}
}

/*
 * @h's counters of the path take the walk's values @v, compared with what @h
 * reads without an entry once the base has taken its own walk (@virt): an
 * entry where they differ, none where they agree.  So the table stays
 * canonical.  Entries store each value less @off[j] (lazy mode's pend; NULL:
 * none), and in lazy mode a changed entry is listed again (inf_lazy_own()).
 */
static int inf_walk_store(struct infer *in, struct inf_hyp *h, const struct inf_path *pa,
			  unsigned int cpu, struct idmap_ent **ent, const int64_t *v,
			  const int64_t *virt, const int64_t *off)
{
	size_t j, k = (size_t)(h - in->h);
	bool drop = false;
	uint32_t gen;
	int ret;

	/* in place first: a delete or an insert may move every slot */
	for (j = 0; j < 2 * pa->n; j++) {
		int64_t st = v[j] - (off ? off[j] : 0);

		/*
		 * Above where the walk stopped nothing changed: an unchanged entry
		 * leaves the hash as it is: re-mixing it cost two hashes per counter.
		 */
		if (ent[j] && v[j] != virt[j] && st != ent[j]->val) {
			inf_ent_set(h, ent[j], st);
			ret = in->lazy ? inf_lazy_own(in, ent[j]->key, k, st) : 0;
			if (ret)
				return ret;
			inf_win_key(in, ent[j]->key, st);
		}
		drop |= ent[j] && v[j] == virt[j];
	}
	for (j = 0; j < 2 * pa->n && drop; j++)
		if (ent[j] && v[j] == virt[j])
			inf_ent_del(h, inf_path_key(pa, j, cpu));
	gen = h->e.gen;
	for (j = 0; j < 2 * pa->n; j++) {
		uint64_t key = inf_path_key(pa, j, cpu);
		int64_t st = v[j] - (off ? off[j] : 0);

		if (ent[j] || v[j] == virt[j])
			continue;
		ret = inf_put(h, key, st, virt[j] - (off ? off[j] : 0));
		inf_win_key(in, key, st);
		/*
		 * A table walks once an update, from what it held before it, so
		 * no lookup of this update reads this entry; kept true to the
		 * mask's word all the same (read only while pk_on).
		 */
		in->pk_maybe[j] = true;
		if (!ret && in->lazy)
			ret = inf_lazy_own(in, key, k, st);
		if (ret)
			return ret;
		if (h->pc_n == pa->n && h->pc_gen == gen && h->e.gen == gen && pa->n <= INF_PIN_NODES)
			h->pc_idx[j] = idmap_slot(&h->e, key);
	}
	if (h->e.gen != gen)
		h->pc_n = 0;	/* rebuilt: the slots are stale */
	return 0;
}

/*
 * memcg_rstat_updated()'s walk on @h's counters: the policy's step at each
 * node, on its entry, else 0 past its visit, else the base's value; then
 * inf_walk_store() against 0 past its visit, else the base's post-walk value.
 */
int inf_walk(struct infer *in, struct inf_hyp *h, const struct inf_path *pa,
	     unsigned int cpu, struct inf_undo *undo)
{
	struct idmap_ent *ent[2 * INF_MAX_PATH];
	int64_t v[2 * INF_MAX_PATH], virt[2 * INF_MAX_PATH];
	size_t j;

	inf_path_find(in, h, pa, cpu, ent);
	for (j = 0; undo && j < 2 * pa->n; j++)
		undo[j] = (struct inf_undo){ .key = inf_path_key(pa, j, cpu),
					     .val = ent[j] ? ent[j]->val : 0, .had = ent[j] != NULL };
	for (j = 0; j < 2 * pa->n; j++) {
		bool visited = inf_path_visited(in, h, pa, j, cpu);

		v[j] = ent[j] ? ent[j]->val : visited ? 0 : pa->base[j];
		virt[j] = visited ? 0 : pa->post[j];
	}
	inf_steps(in, pa, v, 0);
	return inf_walk_store(in, h, pa, cpu, ent, v, virt, NULL);
}

/*
 * Lazy mode, an update that is not alike on every table (inf_lazy_alike()):
 * @h's own walk, its entries read as stored plus their key's pending add
 * @pold and stored back less @pend, the key's pending add once this update
 * has been taken (0 for a key nobody held before it).  If the walk moved each
 * counter of the path as much as the base's walk moved the base's own, the
 * pending adds carry it and nothing is written: returns 1.  Else the table
 * takes the walk's values (inf_walk_store() against the base's post-walk
 * values), and 0.  Outside a window only: nothing is visited.
 */
int inf_walk_lazy(struct infer *in, struct inf_hyp *h, const struct inf_path *pa,
		  unsigned int cpu, const int64_t *pold, const int64_t *pend)
{
	struct idmap_ent *ent[2 * INF_MAX_PATH];
	int64_t v[2 * INF_MAX_PATH], v0[2 * INF_MAX_PATH];
	bool same = true;
	size_t j;

	inf_path_find(in, h, pa, cpu, ent);
	for (j = 0; j < 2 * pa->n; j++)
		v[j] = v0[j] = ent[j] ? ent[j]->val + pold[j] : pa->base[j];
	inf_steps(in, pa, v, 0);
	for (j = 0; j < 2 * pa->n && same; j++)
		same = v[j] - v0[j] == pa->post[j] - pa->base[j];
	if (same)
		return 1;
	return inf_walk_store(in, h, pa, cpu, ent, v, pa->post, pend);
}

/*
 * Would @h's walk differ from the base's?  Not if, on the nodes the base's
 * walk steps (most stop at the first: the per-CPU counter stays under the
 * batch), @h reads the base's very counters, i.e. has neither an entry (the
 * table is canonical) nor a visit made there: it then steps them the same
 * way and stops where the base stops, and what it holds above is neither
 * read nor written.
 */
bool inf_path_same(const struct infer *in, const struct inf_hyp *h, const struct inf_path *pa,
		   unsigned int cpu, struct idmap_ent *const *ent)
{
	size_t j;

	for (j = 0; j < 2 * pa->reach; j++) {
		if (inf_path_visited(in, h, pa, j, cpu))
			return false;
		if (ent ? ent[j] != NULL :
		    idmap_count(&h->e) && inf_find(h, inf_path_key(pa, j, cpu)))
			return false;
	}
	return true;
}

/*
 * Does the update commute with every visit of its path that @h still has to
 * make?  A visit sets its node's atomic and the window CPU's per-CPU counter
 * to 0.  At each such node the policy's step, on @h's counters as they are
 * and on them as the visit leaves them, must decide the same walk, leave
 * the atomic as the visit would (nothing added to the 0), and leave the
 * per-CPU counter the visit keeps (of another CPU) alike, or the one it
 * resets (the window's CPU) at 0.  Then the walk reads and writes the same
 * whether the visits came before it or after, and each branch "after
 * vis[i]" is the branch "before all" with those visits made: a state that
 * one reaches by moving its position on.  Nodes below the pending ones feed
 * the same counters into both, so one check per node suffices.
 */
bool inf_commutes(const struct infer *in, const struct inf_hyp *h, const struct inf_path *pa,
		  unsigned int cpu, struct idmap_ent *const *ent)
{
	struct sim_step_in si = { .th = pa->th, .abs_val = pa->abs_val, .batch = sim_batch(in->s) };
	size_t i;

	for (i = 0; i < pa->n; i++) {
		size_t v = pa->vis[i];
		const struct idmap_ent *a = NULL, *c = NULL;
		struct sim_step_out so, sv;
		bool visited = v != INF_NONE && v < h->p;

		if (ent) {
			a = ent[2 * i];
			c = ent[2 * i + 1];
		} else if (idmap_count(&h->e)) {
			a = inf_find(h, inf_path_key(pa, 2 * i, cpu));
			c = inf_find(h, inf_path_key(pa, 2 * i + 1, cpu));
		}
		si.atomic = a ? a->val : visited ? 0 : pa->base[2 * i];
		si.pcpu = (uint32_t)(c ? c->val : visited && cpu == in->wcpu ? 0 : pa->base[2 * i + 1]);
		so = in->pol->step(&si);
		if (v != INF_NONE && !visited) {
			struct sim_step_in sw = si;

			sw.atomic = 0;
			if (cpu == in->wcpu)
				sw.pcpu = 0;
			sv = in->pol->step(&sw);
			if (sv.walk != so.walk || sv.add ||
			    (cpu == in->wcpu ? sv.pcpu != 0 : sv.pcpu != so.pcpu))
				return false;
		}
		if (so.walk == SIM_WALK_STOP)
			return true;
		/* the next node's counters do not depend on this one's */
	}
	return true;
}

/* The visits of @pa that @h still has to make, ascending, into @vis; returns how many. */
size_t inf_branch_points(const struct inf_hyp *h, const struct inf_path *pa, size_t *vis)
{
	size_t i, nv = 0;

	for (i = 0; i < pa->n; i++)
		if (pa->vis[i] != INF_NONE && pa->vis[i] >= h->p)
			vis[nv++] = pa->vis[i];
	return nv;
}

/*
 * The branches "after vis[i]" of @src for each bit i of @mask, at the costs
 * @costs (inf_branch_costs(); NULL: worked out here), pushed at the
 * end of in->h (which may move: @src must not be in it, or be read before
 * the first push).  @src is left as it is, or with @take consumed (the first
 * branch is made of it, not of a copy).  Ascending (children come first in
 * the list): each next one is copied from this one after its visits and
 * before its walk, so it makes only the visits between the two: a copy of
 * @src for each would make all of them again, or scan its whole table.
 */
int inf_branches(struct infer *in, struct inf_hyp *src, bool take, const struct inf_path *pa,
		 unsigned int cpu, uint64_t ts, uint64_t tag, const size_t *vis, size_t nv,
		 uint64_t mask, const uint64_t *costs)
{
	uint64_t c[INF_MAX_PATH + 1], at = inf_branch_at(in, ts);
	size_t i, last = nv;
	struct inf_hyp b;
	int ret;

	for (i = 0; i < nv; i++)
		if (mask >> i & 1)
			last = i;
	if (last == nv) {
		if (take)
			inf_hyp_free(in, src);
		return 0;
	}
	if (!costs) {
		inf_branch_costs(in, &src->front, src->p, src->cost, at, vis, nv, c);
		costs = c;
	}
	ret = take ? 0 : inf_hyp_copy(&b, src);
	if (take)
		b = *src;
	if (ret) {
		inf_hyp_free(in, &b);
		return ret;
	}
	for (i = 0; i <= last; i++) {
		struct inf_hyp next = { 0 };

		if (!(mask >> i & 1))
			continue;
		inf_visit_upto(in, &b, vis[i]);
		ret = i < last ? inf_hyp_copy(&next, &b) : 0;
		if (!ret) {
			b.cost = costs[i];
			inf_front_placed(&b.front, b.p);
			inf_front_push(&b.front, at, i + 1 < nv ? vis[i + 1] : INF_NONE);
			ret = inf_dec_push(in, &b, tag);
		}
		if (!ret)
			ret = inf_walk(in, &b, pa, cpu, NULL);
		if (!ret)
			ret = inf_push(in, &b);
		if (ret) {
			inf_hyp_free(in, &b);
			inf_hyp_free(in, &next);
			return ret;
		}
		b = next;
	}
	return 0;
}

/*
 * The hashes (inf_hyp_hash()) the branches "after vis[i]" of a hypothesis
 * would have, for each bit i of @mask, into @hash, without making them.  The
 * hypothesis is @h as it was before its walk: its table with the path's
 * counters of @u.  A branch's table is that, less the entries its visits
 * from h->p to vis[i] reset, then its walk: inf_visit_upto() and
 * inf_walk() on sums of inf_mix() instead of on a table.
 */
void inf_branch_hashes(const struct infer *in, const struct inf_hyp *h, const struct inf_undo *u,
		       const struct inf_path *pa, unsigned int cpu, const size_t *vis, size_t nv,
		       uint64_t mask, uint64_t *hash)
{
	uint64_t ehash = h->ehash, gone[INF_MAX_PATH + 1] = { 0 };
	const struct idmap_ent *e;
	uint32_t pos = 0;
	size_t i, j, v;

	/* the sum of what each visit from h->p resets, by the branch it is first in */
#define INF_BUCKET(v)	({ size_t b_ = 0; while (b_ < nv && vis[b_] < (v)) b_++; b_; })
	while ((e = idmap_next(&h->e, &pos))) {
		v = inf_vis(in, e->key);
		if (v != INF_NONE && v >= h->p)
			gone[INF_BUCKET(v)] += inf_mix(e->key, e->val);
	}
	/* the path's counters as they were before the walk */
	for (j = 0; j < 2 * pa->n; j++) {
		const struct idmap_ent *f = inf_find(h, u[j].key);

		v = inf_vis(in, u[j].key);
		if (f) {
			ehash -= inf_mix(f->key, f->val);
			if (v != INF_NONE && v >= h->p)
				gone[INF_BUCKET(v)] -= inf_mix(f->key, f->val);
		}
		if (u[j].had) {
			ehash += inf_mix(u[j].key, u[j].val);
			if (v != INF_NONE && v >= h->p)
				gone[INF_BUCKET(v)] += inf_mix(u[j].key, u[j].val);
		}
	}
#undef INF_BUCKET
	for (i = 0; i < nv; i++) {
		int64_t val[2 * INF_MAX_PATH], virt[2 * INF_MAX_PATH];
		uint64_t sum;

		ehash -= gone[i];	/* the visits up to vis[i] */
		if (!(mask >> i & 1))
			continue;
		sum = ehash;
		for (j = 0; j < 2 * pa->n; j++) {
			size_t vj = pa->vis[j / 2];
			bool visited = vj != INF_NONE && vj <= vis[i] && (!(j & 1) || cpu == in->wcpu);
			bool has = u[j].had && !(visited && vj >= h->p);

			if (has)
				sum -= inf_mix(u[j].key, u[j].val);
			val[j] = has ? u[j].val : visited ? 0 : pa->base[j];
			virt[j] = visited ? 0 : pa->post[j];
		}
		inf_steps(in, pa, val, 0);
		for (j = 0; j < 2 * pa->n; j++)
			if (val[j] != virt[j])
				sum += inf_mix(u[j].key, val[j]);
		hash[i] = inf_hash_of(vis[i] + 1, sum);
	}
}
