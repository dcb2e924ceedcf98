// SPDX-License-Identifier: GPL-2.0
/*
 * infer_walk.c - one traced update, on every hypothesis and on the base.
 *
 * An update in a window branches only on the remaining visits of its own
 * ancestor path: "before all of them", "after the first", ..., "after the
 * last"; every other visit commutes with it.  Each branch then takes
 * memcg_rstat_updated()'s walk on its own counters through the policy's step
 * (struct sim_policy, sim/policy.c), the very function the simulator applies
 * to its nodes, so inference knows every policy the simulator knows.
 *
 * Contract: the base simulator takes the update last, with its own walk;
 * a hypothesis whose path counters are all the base's takes no walk of its
 * own (it would compute the base's result).  Never prunes: merging and the
 * cap are infer_cap.c's, after the update.
 */
#include <errno.h>

#include "infer-local.h"

#define INF_COMPACT_EVERY	255	/* updates between full normalizations, minus 1 */

/* The update's ancestor path, with the base's counters before the update. */
struct inf_path {
	uint64_t	id[INF_MAX_PATH];
	size_t		vis[INF_MAX_PATH];	/* list index of its visit, INF_NONE */
	int64_t		base_a[INF_MAX_PATH];
	int64_t		base_p[INF_MAX_PATH];
	size_t		n;
	bool		cut;		/* deeper than INF_MAX_PATH: the base walks further */
	uint64_t	th;
};

static int inf_path_build(struct infer *in, uint64_t ts, unsigned int cpu, uint64_t id,
			  struct inf_path *pa)
{
	uint64_t x;

	if (!sim_cgroup_known(in->s, id)) {
		/* the base attaches it under the root; then the path is known */
		int ret = sim_cgroup_add(in->s, ts, id, SIM_ROOT_ID);

		if (ret < 0 && ret != -EEXIST)
			return ret;
	}
	pa->n = 0;
	pa->th = sim_threshold(in->s);
	for (x = id; x && pa->n < INF_MAX_PATH; x = sim_cgroup_parent(in->s, x)) {
		pa->id[pa->n] = x;
		pa->vis[pa->n] = inf_list_idx(in, x);
		pa->base_a[pa->n] = sim_stats_updates(in->s, x);
		pa->base_p[pa->n] = sim_pcpu_stats_updates(in->s, x, cpu);
		pa->n++;
	}
	pa->cut = x != 0;
	return 0;
}

/* The value of @h's counter of path node @i: its entry, 0 if visited, else the base. */
static int64_t inf_path_get(const struct infer *in, const struct inf_hyp *h,
			    const struct inf_path *pa, size_t i, bool atomic, unsigned int cpu)
{
	const struct idmap_ent *e = inf_find(h, inf_key(pa->id[i], atomic ? INF_ATOMIC : cpu));

	if (e)
		return e->val;
	if (pa->vis[i] != INF_NONE && pa->vis[i] < h->p && (atomic || cpu == in->wcpu))
		return 0;
	return atomic ? pa->base_a[i] : pa->base_p[i];
}

static bool inf_pinned(const struct inf_hyp *h, const struct inf_path *pa, unsigned int cpu)
{
	return h->pc_n && !h->pc_lazy && h->e.e && h->pc_gen == h->e.gen && h->pc_id == pa->id[0] &&
	       h->pc_cpu == cpu && h->pc_n == pa->n;
}

/*
 * Give every counter of @pa an entry in @h and note where they sit, so that
 * the walk, and the next walks of the same path, read and write in place.
 * The base is about to take its own walk, which may touch counters this one
 * leaves alone: pinned values stay this hypothesis's own.
 */
static int inf_pin(struct infer *in, struct inf_hyp *h, const struct inf_path *pa, unsigned int cpu)
{
	size_t i;
	int ret;

	if (inf_pinned(h, pa, cpu))
		return 0;
	for (i = 0; i < pa->n; i++) {
		uint64_t ka = inf_key(pa->id[i], INF_ATOMIC), kp = inf_key(pa->id[i], cpu);

		if (!inf_find(h, ka)) {
			ret = inf_set(h, ka, inf_path_get(in, h, pa, i, true, cpu));
			if (ret)
				return ret;
		}
		if (!inf_find(h, kp)) {
			ret = inf_set(h, kp, inf_path_get(in, h, pa, i, false, cpu));
			if (ret)
				return ret;
		}
	}
	if (pa->n > INF_PIN_NODES) {
		h->pc_n = 0;	/* deeper than pc_idx: inf_walk() finds each entry */
		return 0;
	}
	for (i = 0; i < pa->n; i++) {
		h->pc_idx[2 * i] = idmap_slot(&h->e, inf_key(pa->id[i], INF_ATOMIC));
		h->pc_idx[2 * i + 1] = idmap_slot(&h->e, inf_key(pa->id[i], cpu));
	}
	h->pc_gen = h->e.gen;
	h->pc_lazy = false;
	h->pc_id = pa->id[0];
	h->pc_cpu = cpu;
	h->pc_n = pa->n;
	return 0;
}

/* memcg_rstat_updated()'s walk on @h's counters: the policy's step at each node. */
static int inf_walk(struct infer *in, struct inf_hyp *h, const struct inf_path *pa,
		    unsigned int cpu, uint32_t abs_val)
{
	struct sim_step_in si = { .th = pa->th, .abs_val = abs_val, .batch = sim_batch(in->s) };
	size_t i;
	int ret;

	ret = inf_pin(in, h, pa, cpu);
	if (ret)
		return ret;
	for (i = 0; i < pa->n; i++) {
		struct idmap_ent *at, *pcpu;
		struct sim_step_out so;

		if (h->pc_n) {
			at = &h->e.e[h->pc_idx[2 * i]];
			pcpu = &h->e.e[h->pc_idx[2 * i + 1]];
		} else {
			at = inf_find(h, inf_key(pa->id[i], INF_ATOMIC));
			pcpu = inf_find(h, inf_key(pa->id[i], cpu));
		}

		si.atomic = at->val;
		si.pcpu = (uint32_t)pcpu->val;
		so = in->pol->step(&si);
		inf_ent_set(h, pcpu, so.pcpu);
		inf_ent_set(h, at, at->val + so.add);
		if (so.walk == SIM_WALK_STOP)
			break;
	}
	return 0;
}

/*
 * The visits of @pa that @h still has to make, ascending, into @vis; returns
 * how many.  *@same says whether @h's walk would read only the base's
 * counters: none of the path visited yet, no entry of its own on the path.
 */
static size_t inf_branch_points(const struct inf_hyp *h, const struct inf_path *pa,
				unsigned int cpu, size_t *vis, bool *same)
{
	size_t i, nv = 0;

	/* a pinned path has entries: it may differ from the base */
	*same = !inf_pinned(h, pa, cpu);
	for (i = 0; i < pa->n; i++) {
		size_t v = pa->vis[i];

		if (v != INF_NONE && v >= h->p)
			vis[nv++] = v;
		if (v != INF_NONE && v < h->p)
			*same = false;
		if (*same && idmap_count(&h->e) && (inf_find(h, inf_key(pa->id[i], INF_ATOMIC)) ||
						    inf_find(h, inf_key(pa->id[i], cpu))))
			*same = false;
	}
	return nv;
}

/*
 * Hypothesis @k takes the update at @ts: one new hypothesis per visit of the
 * path still to come ("after vis[i]"), pushed at the end of in->h, and @k
 * itself for "before all of them".
 */
static int inf_hyp_update(struct infer *in, size_t k, const struct inf_path *pa,
			  unsigned int cpu, uint32_t abs_val, uint64_t ts, uint64_t tag)
{
	size_t vis[INF_MAX_PATH + 1], i, nv;
	struct inf_hyp *h, b;
	bool same;
	int ret;

	nv = inf_branch_points(&in->h[k], pa, cpu, vis, &same);
	if (!nv && same)
		return 0;	/* its walk reads what the base's reads: the same */
	vis[nv] = in->n_list;	/* the end of the last branch's interval */
	/*
	 * Branches "after vis[i]", ascending (children come first in the list).
	 * Each next one is copied from this one after its visits and before
	 * its walk, so it makes only the visits between the two: a copy of @k
	 * for each would make all of them again, or scan its whole table.
	 */
	if (nv) {
		ret = inf_hyp_copy(&b, &in->h[k]);
		if (ret) {
			inf_hyp_free(&b);
			return ret;
		}
	}
	for (i = 0; i < nv; i++) {
		struct inf_hyp next = { 0 };

		inf_visit_upto(in, &b, vis[i]);
		ret = i + 1 < nv ? inf_hyp_copy(&next, &b) : 0;
		if (!ret) {
			/* visit vis[i] came after this order's last decision, before ts */
			b.cost += inf_visit_cost(in, vis[i], b.t_last, ts);
			b.t_last = ts;
			ret = inf_dec_push(in, &b, tag);
		}
		if (!ret)
			ret = inf_walk(in, &b, pa, cpu, abs_val);
		if (!ret)
			ret = inf_push(in, &b);
		if (ret) {
			inf_hyp_free(&b);
			inf_hyp_free(&next);
			return ret;
		}
		b = next;
	}
	/* before all of them; in->h may have moved */
	h = &in->h[k];
	if (nv) {
		/* a visit still to come that was due is charged when it comes */
		h->t_last = ts;
		ret = inf_dec_push(in, h, tag);
		if (ret)
			return ret;
	}
	return inf_walk(in, h, pa, cpu, abs_val);
}

/*
 * Lazy mode (infer_lazy.c): a hypothesis whose own entries on the path all
 * equal the base's takes the base's walk, and what that walk would pin is in
 * in->touch from its first walk (t_pin) on: it needs no work of its own.
 * Another walks with the policy's step on its own counters, the base's
 * elsewhere, and keeps an entry only where it differs from the base after
 * the walk (@post_*) or already had one.  Only tables holding a key of the
 * path (in->owned) are asked.
 */

/*
 * @h's entries for the path's keys, atomic and per-CPU per node, NULL if
 * none; true if they were those of its last path too.
 */
static bool inf_lazy_find(struct inf_hyp *h, const struct inf_path *pa, unsigned int cpu,
			  struct idmap_ent **ent)
{
	bool cache = pa->n <= INF_PIN_NODES;
	size_t j;

	if (cache && h->pc_n == pa->n && h->pc_gen == h->e.gen && h->pc_id == pa->id[0] &&
	    h->pc_cpu == cpu) {
		for (j = 0; j < 2 * pa->n; j++)
			ent[j] = h->pc_idx[j] == UINT32_MAX ? NULL : &h->e.e[h->pc_idx[j]];
		return true;
	}
	for (j = 0; j < 2 * pa->n; j++)
		ent[j] = inf_find(h, inf_key(pa->id[j / 2], j & 1 ? cpu : INF_ATOMIC));
	if (cache) {
		h->pc_lazy = false;
		for (j = 0; j < 2 * pa->n; j++) {
			h->pc_idx[j] = ent[j] ? (uint32_t)(ent[j] - h->e.e) : UINT32_MAX;
			h->pc_lazy |= !ent[j];
		}
		h->pc_gen = h->e.gen;
		h->pc_id = pa->id[0];
		h->pc_cpu = cpu;
		h->pc_n = pa->n;
	}
	return false;
}

/*
 * memcg_rstat_updated()'s walk on the path's counters @v (atomic, then
 * per-CPU, of each node), in place: the policy's step at each node until one
 * stops it.
 */
static void inf_lazy_steps(const struct infer *in, const struct inf_path *pa, uint32_t abs_val,
			   int64_t *v)
{
	struct sim_step_in si = { .th = pa->th, .abs_val = abs_val, .batch = sim_batch(in->s) };
	size_t i;

	for (i = 0; i < pa->n; i++) {
		struct sim_step_out so;

		si.atomic = v[2 * i];
		si.pcpu = (uint32_t)v[2 * i + 1];
		so = in->pol->step(&si);
		v[2 * i + 1] = so.pcpu;
		v[2 * i] += so.add;
		if (so.walk == SIM_WALK_STOP)
			break;
	}
}

static int inf_lazy_walk(struct infer *in, struct inf_hyp *h, const struct inf_path *pa,
			 unsigned int cpu, uint32_t abs_val, struct idmap_ent **ent,
			 const int64_t *post)
{
	int64_t v[2 * INF_MAX_PATH];
	uint32_t gen;
	size_t i, j;
	int ret;

	for (i = 0; i < pa->n; i++) {
		v[2 * i] = ent[2 * i] ? ent[2 * i]->val : pa->base_a[i];
		v[2 * i + 1] = ent[2 * i + 1] ? ent[2 * i + 1]->val : pa->base_p[i];
	}
	inf_lazy_steps(in, pa, abs_val, v);
	/* in place first: an insert may move every slot */
	for (j = 0; j < 2 * pa->n; j++)
		if (ent[j])
			inf_ent_set(h, ent[j], v[j]);
	gen = h->e.gen;
	for (j = 0; j < 2 * pa->n; j++) {
		uint64_t key = inf_key(pa->id[j / 2], j & 1 ? cpu : INF_ATOMIC);

		if (ent[j] || v[j] == post[j])
			continue;
		ret = inf_set(h, key, v[j]);
		if (!ret)
			ret = idmap_put(&in->owned, key, 1);
		if (ret)
			return ret;
		if (h->pc_n == pa->n && h->pc_gen == gen && h->e.gen == gen && j < 2 * INF_PIN_NODES)
			h->pc_idx[j] = idmap_slot(&h->e, key);
	}
	if (h->e.gen != gen)
		h->pc_n = 0;	/* rebuilt: the slots are stale */
	return 0;
}

static int inf_lazy_update(struct infer *in, const struct inf_path *pa, unsigned int cpu,
			   uint32_t abs_val)
{
	struct idmap_ent *ent[2 * INF_MAX_PATH];
	int64_t base[2 * INF_MAX_PATH], post[2 * INF_MAX_PATH];
	bool hit = in->owned_lost, pinned = false;
	size_t i, j, k;
	int ret;

	in->seq++;
	for (i = 0; i < pa->n && !hit && idmap_count(&in->owned); i++)
		hit = idmap_find(&in->owned, inf_key(pa->id[i], INF_ATOMIC)) ||
		      idmap_find(&in->owned, inf_key(pa->id[i], cpu));
	if (hit) {
		/* the base's walk, on the values it starts from */
		for (i = 0; i < pa->n; i++) {
			base[2 * i] = post[2 * i] = pa->base_a[i];
			base[2 * i + 1] = post[2 * i + 1] = pa->base_p[i];
		}
		inf_lazy_steps(in, pa, abs_val, post);
	}
	for (k = 0; k < in->nr_h; k++) {
		struct inf_hyp *h = &in->h[k];
		bool differs = false, own = false, again = false;

		if (hit && inf_pinned(h, pa, cpu)) {
			/* walked this path last and has every key: walk, as in a window */
			if (!h->t_pin)
				h->t_pin = in->seq;
			pinned = true;
			ret = inf_walk(in, h, pa, cpu, abs_val);
			if (ret)
				return ret;
			continue;
		}
		if (hit && idmap_count(&h->e)) {
			again = inf_lazy_find(h, pa, cpu, ent);
			for (j = 0; j < 2 * pa->n; j++) {
				if (!ent[j])
					continue;
				own = true;
				differs |= ent[j]->val != base[j];
			}
		}
		if (!own && !h->t_pin)
			continue;	/* no entry on the path: no walk */
		if (!h->t_pin)
			h->t_pin = in->seq;
		pinned = true;
		if (differs && again) {
			/* the same path again: pin it, the next walks find their entries */
			ret = inf_walk(in, h, pa, cpu, abs_val);
			for (i = 0; i < pa->n && !ret; i++) {
				ret = idmap_put(&in->owned, inf_key(pa->id[i], INF_ATOMIC), 1);
				if (!ret)
					ret = idmap_put(&in->owned, inf_key(pa->id[i], cpu), 1);
			}
			if (ret)
				return ret;
			continue;
		}
		if (differs) {
			ret = inf_lazy_walk(in, h, pa, cpu, abs_val, ent, post);
			if (ret)
				return ret;
			continue;
		}
		for (j = 0; j < 2 * pa->n && own; j++)
			if (ent[j])
				inf_ent_set(h, ent[j], post[j]);
	}
	/* before anybody's first walk, the keys would never be asked for */
	for (i = 0; i < pa->n && pinned; i++) {
		ret = idmap_put(&in->touch, inf_key(pa->id[i], INF_ATOMIC), (int64_t)in->seq);
		if (!ret)
			ret = idmap_put(&in->touch, inf_key(pa->id[i], cpu), (int64_t)in->seq);
		if (ret)
			return ret;
	}
	return 0;
}

static bool inf_trivial(const struct infer *in)
{
	return in->nr_h == 1 && !idmap_count(&in->h[0].e) && !in->h[0].p && !in->h[0].t_pin;
}

/**
 * infer_update() - one traced update; see sim_update() for the arguments.
 */
int infer_update(struct infer *in, uint64_t ts, uint64_t t_min, unsigned int cpu, uint64_t id,
		 enum sim_item_kind kind, int item, int64_t val, uint64_t tag)
{
	uint32_t abs_val = sim_walk_abs(val);
	struct inf_path pa;
	size_t k, nr_old;
	bool lazy;
	int ret;

	ret = inf_close_unless_late(in, ts, t_min);
	if (ret)
		return ret;
	if (ts > in->last_ts)
		in->last_ts = ts;
	if (!abs_val || (!in->win && inf_trivial(in)))
		return sim_update(in->s, ts, cpu, id, kind, item, val);
	ret = inf_path_build(in, ts, cpu, id, &pa);
	if (ret)
		return ret;
	if (in->lazy && pa.cut)
		ret = inf_lazy_end(in);	/* the base walks nodes the hypotheses do not */
	else if (in->lazy)
		ret = inf_lazy_update(in, &pa, cpu, abs_val);
	if (ret)
		return ret;
	/* lazy, the hypotheses took the update above: nothing branches between windows */
	lazy = in->lazy;
	nr_old = in->nr_h;
	for (k = 0; !lazy && k < nr_old; k++) {
		ret = inf_hyp_update(in, k, &pa, cpu, abs_val, ts, tag);
		if (ret)
			return ret;
	}
	ret = sim_update(in->s, ts, cpu, id, kind, item, val);
	if (ret)
		return ret;
	inf_budget(in);
	/*
	 * Entries equal to the base are only redundant: drop them now and
	 * then; after a branch, merge what is identical as it stands.
	 */
	if (!(++in->quiet & INF_COMPACT_EVERY))
		inf_compact(in, true);
	else if (in->nr_h != nr_old)
		inf_compact(in, false);
	return 0;
}
