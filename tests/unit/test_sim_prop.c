// SPDX-License-Identifier: GPL-2.0
/*
 * test_sim_prop.c - seeded random property test of sim/ against a naive
 * reference model written straight from the kernel's code (dense arrays,
 * brute-force subtree sums): memcg_rstat_updated() and
 * mem_cgroup_css_rstat_flush() of mm/memcontrol.c, css_rstat_updated_list()
 * of kernel/cgroup/rstat.c (children before parents).
 *
 * Random hierarchies, updates on random CPUs (signed, THP-sized, truncated
 * event counts), flush windows with updates from other CPUs interleaved
 * between visits, explicit out-of-order visits, flush requests, CPU hotplug,
 * cgroups added, removed and first seen in updates, under all three
 * policies.  After every operation:
 *   - every counter (per-CPU, atomic), flushable flag and cost counter equals
 *     the reference's;
 *   - the sim's O(1) missing, oldest ts, stuck flag and signed per-item
 *     missing equal a brute-force recomputation over the subtree;
 *   - missing >= |signed missing| of every item; missing(M) >= the sum of its
 *     children's missing;
 *   - CONTINUE and LEGACY: atomic + sum of per-CPU counters of every memcg
 *     equals the |v| of every update in its subtree that reached it while it
 *     was not flushable (LEGACY: minus the batches it dropped), minus what
 *     visits reset: no descendant can keep credit from an ancestor;
 *   - the time integrals equal a brute-force integration;
 *   - each visit list is subtree(S) on that CPU, children before parents.
 * After a completed forced root flush with nothing concurrent, every counter
 * and every missing value is zero.
 * The seed is fixed; MCR_SEED=<n> overrides it, and a failure prints it.
 */
#include <errno.h>
#include <stdarg.h>

#include "../harness.h"
#include "sim.h"
#include "sim_new.h"
#include "sim-local.h"
#include "rstat.h"

#define MAXN	24
#define MAXC	6
#define NITEM	4
#define NKEY	(3 * NITEM)
#define ROUNDS	300
#define OPS	600
#define NONE_TS	UINT64_MAX

struct ref {
	int		pol;		/* 0 break, 1 continue, 2 legacy */
	bool		offline;	/* some possible CPU was ever offline */
	unsigned int	possible;
	int64_t		th;
	int		n;
	uint64_t	id[MAXN];
	int		parent[MAXN];
	uint32_t	pcpu[MAXN][MAXC];
	int64_t		atomic[MAXN];
	bool		on[MAXC][MAXN];
	uint64_t	unfl[MAXN][MAXC];
	uint64_t	unfl_since[MAXN][MAXC];
	int64_t		unfl_it[MAXN][MAXC][NKEY];
	uint64_t	pend[MAXN];
	uint64_t	pend_since[MAXN];
	int64_t		pend_it[MAXN][NKEY];
	int64_t		credit[MAXN];
	/* brute-force subtree aggregates, recomputed by ref_sums() */
	uint64_t	sub_missing[MAXN];
	uint64_t	sub_oldest[MAXN];
	int64_t		sub_it[MAXN][NKEY];
	bool		sub_flushable_desc[MAXN];
	/* time accounting */
	uint64_t	last_ts;
	uint64_t	first_ts[MAXN];
	unsigned __int128 area[MAXN];	/* exact; the sim rounds it once, when read */
	uint64_t	stuck_ns[MAXN];
	uint64_t	max_missing[MAXN];
	uint64_t	max_age[MAXN];
	struct sim_cost	cost;
	bool		ghost;		/* an update whose (int)val is 0: never linked */
	bool		disorder;	/* a parent visited before a child of its window */
	/* the open window: what is left, in the sim's order */
	bool		open;
	unsigned int	wcpu;
	int		list[MAXN];
	int		len;
};

static uint64_t rng_state;
static unsigned long nr_stuck_seen, nr_zero_checks, nr_window_updates, nr_out_of_order;
static unsigned long nr_stranded_seen, nr_free_checks;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned int rndn(unsigned int n)
{
	return (unsigned int)(rnd() % n);
}

static char why[256];

static int bad(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return -1;
}

static bool ref_flushable(const struct ref *r, int x)
{
	return r->atomic[x] > r->th;
}

static bool ref_in_subtree(const struct ref *r, int x, int m)
{
	for (; x >= 0; x = r->parent[x])
		if (x == m)
			return true;
	return false;
}

static int ref_add(struct ref *r, uint64_t ts, uint64_t id, int parent)
{
	int i = r->n++;

	r->id[i] = id;
	r->parent[i] = parent;
	r->pend_since[i] = NONE_TS;
	for (unsigned int c = 0; c < MAXC; c++)
		r->unfl_since[i][c] = NONE_TS;
	r->first_ts[i] = ts;
	return i;
}

static int ref_find(const struct ref *r, uint64_t id)
{
	for (int i = 0; i < r->n; i++)
		if (r->id[i] == id)
			return i;
	return -1;
}

/* Brute-force subtree sums; parents come before children in the arrays. */
static void ref_sums(struct ref *r)
{
	int i, k;

	for (i = 0; i < r->n; i++) {
		r->sub_missing[i] = r->pend[i];
		r->sub_oldest[i] = r->pend[i] ? r->pend_since[i] : NONE_TS;
		r->sub_flushable_desc[i] = false;
		for (k = 0; k < NKEY; k++)
			r->sub_it[i][k] = r->pend_it[i][k];
		for (unsigned int c = 0; c < r->possible; c++) {
			r->sub_missing[i] += r->unfl[i][c];
			if (r->unfl[i][c] && r->unfl_since[i][c] < r->sub_oldest[i])
				r->sub_oldest[i] = r->unfl_since[i][c];
			for (k = 0; k < NKEY; k++)
				r->sub_it[i][k] += r->unfl_it[i][c][k];
		}
	}
	for (i = r->n - 1; i > 0; i--) {
		int p = r->parent[i];

		r->sub_missing[p] += r->sub_missing[i];
		if (r->sub_oldest[i] < r->sub_oldest[p])
			r->sub_oldest[p] = r->sub_oldest[i];
		if (r->sub_flushable_desc[i] || ref_flushable(r, i))
			r->sub_flushable_desc[p] = true;
		for (k = 0; k < NKEY; k++)
			r->sub_it[p][k] += r->sub_it[i][k];
	}
}

static bool ref_stuck(const struct ref *r, int i)
{
	return !ref_flushable(r, i) && r->sub_missing[i] && r->sub_flushable_desc[i];
}

/* Integrate every node's missing and stuck time up to @ts (before the op). */
static void ref_advance(struct ref *r, uint64_t ts)
{
	uint64_t dt = ts - r->last_ts;

	ref_sums(r);
	for (int i = 0; i < r->n; i++) {
		if (!r->sub_missing[i])
			continue;
		r->area[i] += (unsigned __int128)r->sub_missing[i] * dt;
		if (ref_stuck(r, i))
			r->stuck_ns[i] += dt;
		if (ts - r->sub_oldest[i] > r->max_age[i])
			r->max_age[i] = ts - r->sub_oldest[i];
	}
	r->last_ts = ts;
}

static void ref_update(struct ref *r, int x, unsigned int c, int key, int64_t val, bool event)
{
	uint64_t mag = event ? (uint64_t)val : (val < 0 ? -(uint64_t)val : (uint64_t)val);
	int32_t w = mcr_walk_val(val);
	uint32_t a;
	int m;

	if (!val)
		return;
	r->cost.updates++;
	r->unfl[x][c] += mag;
	if (r->unfl_since[x][c] == NONE_TS)
		r->unfl_since[x][c] = r->last_ts;
	r->unfl_it[x][c][key] += val;
	if (!w) {
		r->ghost = true;
		return;
	}
	a = w < 0 ? -(uint32_t)w : (uint32_t)w;
	for (m = x; m >= 0; m = r->parent[m])
		r->on[c][m] = true;
	/* the credit each ancestor must get, from its own state only */
	for (m = x; m >= 0; m = r->parent[m]) {
		if (r->pol == 1 && !ref_flushable(r, m))
			r->credit[m] += a;
		if (r->pol == 2) {
			r->credit[m] += a;
			if (ref_flushable(r, m) && r->pcpu[m][c] + a >= SIM_CHARGE_BATCH)
				r->credit[m] -= r->pcpu[m][c] + a;
		}
	}
	/* memcg_rstat_updated(), per policy, as the kernel writes it */
	for (m = x; m >= 0; m = r->parent[m]) {
		bool f = ref_flushable(r, m);
		uint32_t b;

		r->cost.walk_steps++;
		if (r->pol == 0 && f)
			break;
		if (r->pol == 1 && f)
			continue;
		r->pcpu[m][c] += a;
		r->cost.pcpu_adds++;
		if (r->pcpu[m][c] < SIM_CHARGE_BATCH)
			continue;
		b = r->pcpu[m][c];
		r->pcpu[m][c] = 0;
		if (r->pol == 2 && f) {
			r->cost.dropped_batches++;
		} else {
			r->atomic[m] += b;
			r->cost.atomic_adds++;
		}
	}
}

/* mem_cgroup_css_rstat_flush(x, c) */
static void ref_visit(struct ref *r, int x, unsigned int c)
{
	int p = r->parent[x];
	uint64_t amt = r->unfl[x][c] + r->pend[x];

	r->credit[x] -= r->pcpu[x][c] + r->atomic[x];
	if (amt) {
		uint64_t since = r->pend[x] ? r->pend_since[x] : NONE_TS;

		if (r->unfl[x][c] && r->unfl_since[x][c] < since)
			since = r->unfl_since[x][c];
		if (p >= 0) {
			r->pend[p] += amt;
			if (since < r->pend_since[p])
				r->pend_since[p] = since;
		}
		for (int k = 0; k < NKEY; k++) {
			if (p >= 0)
				r->pend_it[p][k] += r->unfl_it[x][c][k] + r->pend_it[x][k];
			r->unfl_it[x][c][k] = 0;
			r->pend_it[x][k] = 0;
		}
		r->unfl[x][c] = 0;
		r->unfl_since[x][c] = NONE_TS;
		r->pend[x] = 0;
		r->pend_since[x] = NONE_TS;
	}
	r->pcpu[x][c] = 0;
	if (r->atomic[x]) {
		r->atomic[x] = 0;
		r->cost.atomic_resets++;
	}
	r->cost.visits++;
}

static enum sim_item_kind key_kind(int key)
{
	return (enum sim_item_kind)(key / NITEM);
}

static int check_all(struct sim *s, struct ref *r)
{
	struct sim_cost sc;
	int i, k;

	ref_sums(r);
	for (i = 0; i < r->n; i++) {
		uint64_t id = r->id[i], child_sum = 0;
		struct sim_stale st;
		struct sim_acct ac;

		if (r->sub_missing[i] > r->max_missing[i])
			r->max_missing[i] = r->sub_missing[i];
		if (sim_stale_get(s, id, &st))
			return bad("stale_get %llu", (unsigned long long)id);
		if (st.stats_updates != r->atomic[i])
			return bad("atomic[%llu] %lld != %lld", (unsigned long long)id,
				   (long long)st.stats_updates, (long long)r->atomic[i]);
		if (st.flushable != ref_flushable(r, i) || sim_needs_flush(s, id) != st.flushable)
			return bad("flushable[%llu]", (unsigned long long)id);
		for (unsigned int c = 0; c < r->possible; c++)
			if (sim_pcpu_stats_updates(s, id, c) != r->pcpu[i][c])
				return bad("pcpu[%llu][%u] %u != %u", (unsigned long long)id, c,
					   sim_pcpu_stats_updates(s, id, c), r->pcpu[i][c]);
		if (st.missing != r->sub_missing[i])
			return bad("missing[%llu] %llu != brute %llu", (unsigned long long)id,
				   (unsigned long long)st.missing,
				   (unsigned long long)r->sub_missing[i]);
		if (st.oldest_ts != (r->sub_missing[i] ? r->sub_oldest[i] : 0))
			return bad("oldest[%llu] %llu != brute %llu", (unsigned long long)id,
				   (unsigned long long)st.oldest_ts,
				   (unsigned long long)r->sub_oldest[i]);
		nr_stuck_seen += st.stuck;
		nr_stranded_seen += st.stranded;
		nr_free_checks += r->pol && !r->offline;
		if (st.stuck != ref_stuck(r, i))
			return bad("stuck[%llu] %d", (unsigned long long)id, st.stuck);
		/* what is pending since the last flush is part of what is pending */
		if (st.stranded && (st.flushable || st.missing <= sim_stranded_threshold(s)))
			return bad("stranded[%llu] flushable %d missing %llu", (unsigned long long)id,
				   st.flushable, (unsigned long long)st.missing);
		/*
		 * continue and legacy credit every update since a memcg's last
		 * flush to its counters unless it is flushable: never stranded,
		 * as long as every CPU with updates counts in TH.
		 */
		if (st.stranded && r->pol && !r->offline)
			return bad("stranded[%llu] under %s", (unsigned long long)id,
				   sim_policy_at((size_t)r->pol)->name);
		for (k = 0; k < NKEY; k++) {
			int64_t v, want = r->sub_it[i][k], e;

			/* STATE and LRUVEC of one idx are one line of memory.stat */
			if (key_kind(k) != SIM_ITEM_EVENT)
				want = r->sub_it[i][k % NITEM] + r->sub_it[i][NITEM + k % NITEM];
			if (sim_item_missing(s, id, key_kind(k), k % NITEM, &v) ||
			    sim_item_error(s, id, key_kind(k), k % NITEM, &e))
				return bad("item_missing");
			if (v != want || e != -want)
				return bad("item[%llu][%d] %lld (error %lld) != brute %lld",
					   (unsigned long long)id, k, (long long)v, (long long)e,
					   (long long)want);
			if ((uint64_t)(v < 0 ? -v : v) > st.missing)
				return bad("|item| > missing at %llu", (unsigned long long)id);
		}
		for (int j = i + 1; j < r->n; j++)
			if (r->parent[j] == i)
				child_sum += r->sub_missing[j];
		if (child_sum > st.missing)
			return bad("children miss more than %llu", (unsigned long long)id);
		if (r->pol != 0) {
			int64_t have = r->atomic[i];

			for (unsigned int c = 0; c < r->possible; c++)
				have += sim_pcpu_stats_updates(s, id, c);
			if (have != r->credit[i])
				return bad("credit[%llu] %lld != %lld", (unsigned long long)id,
					   (long long)have, (long long)r->credit[i]);
		}
		if (sim_acct_get(s, id, r->last_ts, &ac))
			return bad("acct_get");
		if (ac.max_missing != r->max_missing[i] || ac.stuck_ns != r->stuck_ns[i] ||
		    ac.missing_area != (double)r->area[i] || ac.first_ts != r->first_ts[i])
			return bad("acct[%llu] max %llu/%llu stuck %llu/%llu area %.0f/%.0f",
				   (unsigned long long)id, (unsigned long long)ac.max_missing,
				   (unsigned long long)r->max_missing[i],
				   (unsigned long long)ac.stuck_ns,
				   (unsigned long long)r->stuck_ns[i], ac.missing_area, (double)r->area[i]);
		if (ac.max_age_ns != r->max_age[i])
			return bad("max_age[%llu] %llu != %llu", (unsigned long long)id,
				   (unsigned long long)ac.max_age_ns,
				   (unsigned long long)r->max_age[i]);
	}
	sim_cost_get(s, &sc);
	if (memcmp(&sc, &r->cost, sizeof(sc)))
		return bad("cost: steps %llu/%llu adds %llu/%llu visits %llu/%llu",
			   (unsigned long long)sc.walk_steps,
			   (unsigned long long)r->cost.walk_steps,
			   (unsigned long long)sc.pcpu_adds, (unsigned long long)r->cost.pcpu_adds,
			   (unsigned long long)sc.visits, (unsigned long long)r->cost.visits);
	return 0;
}

static int check_zero(struct sim *s, struct ref *r)
{
	nr_zero_checks++;
	for (int i = 0; i < r->n; i++) {
		struct sim_stale st;

		sim_stale_get(s, r->id[i], &st);
		if (st.missing || st.stats_updates || st.oldest_ts || st.stuck)
			return bad("not zero after forced root flush at %llu: missing %llu "
				   "atomic %lld oldest %llu stuck %d", (unsigned long long)r->id[i],
				   (unsigned long long)st.missing, (long long)st.stats_updates,
				   (unsigned long long)st.oldest_ts, st.stuck);
		for (unsigned int c = 0; c < r->possible; c++)
			if (sim_pcpu_stats_updates(s, r->id[i], c))
				return bad("pcpu not zero after forced root flush");
		for (int k = 0; k < NKEY; k++)
			if (r->sub_it[i][k])
				return bad("item not zero after forced root flush");
	}
	return 0;
}

static int op_window_begin(struct sim *s, struct ref *r, uint64_t ts, int m, unsigned int c)
{
	int want = 0, i, j;

	if (sim_window_begin(s, ts, r->id[m], c))
		return bad("window_begin");
	for (i = 0; i < r->n; i++)
		if (r->on[c][i] && ref_in_subtree(r, i, m)) {
			r->on[c][i] = false;
			want++;
		}
	if ((int)sim_window_remaining(s) != want)
		return bad("window of %llu on cpu %u: %zu visits, want %d",
			   (unsigned long long)r->id[m], c, sim_window_remaining(s), want);
	r->len = 0;
	for (i = 0; i < want; i++) {
		int x = ref_find(r, sim_window_peek(s, i));

		if (x < 0 || !ref_in_subtree(r, x, m))
			return bad("window lists a node outside the subtree");
		for (j = 0; j < i; j++)
			if (r->list[j] == x)
				return bad("window lists a node twice");
		for (j = 0; j < i; j++)
			if (r->list[j] != x && ref_in_subtree(r, x, r->list[j]))
				return bad("parent before child in the window");
		r->list[r->len++] = x;
	}
	r->open = true;
	r->wcpu = c;
	return 0;
}

static int op_visit_at(struct sim *s, struct ref *r, uint64_t ts, int pos, bool next)
{
	int x = r->list[pos];
	uint64_t id = 0;

	if (next) {
		if (sim_window_visit_next(s, ts, &id) != 1 || id != r->id[x])
			return bad("visit_next");
	} else if (sim_window_visit(s, ts, r->id[x])) {
		return bad("visit %llu", (unsigned long long)r->id[x]);
	} else {
		nr_out_of_order++;
		/* the kernel never does this; deltas then wait in x's pending */
		for (int j = 0; j < r->len; j++)
			if (j != pos && ref_in_subtree(r, r->list[j], x))
				r->disorder = true;
	}
	ref_visit(r, x, r->wcpu);
	memmove(&r->list[pos], &r->list[pos + 1], sizeof(r->list[0]) * (r->len - pos - 1));
	r->len--;
	return 0;
}

static int op_window_end(struct sim *s, struct ref *r, uint64_t ts)
{
	for (int i = 0; i < r->len; i++)
		ref_visit(r, r->list[i], r->wcpu);
	r->len = 0;
	r->open = false;
	return sim_window_end(s, ts) ? bad("window_end") : 0;
}

static int op_flush(struct sim *s, struct ref *r, uint64_t ts, int m)
{
	for (unsigned int c = 0; c < r->possible; c++) {
		if (op_window_begin(s, r, ts, m, c) || op_window_end(s, r, ts))
			return -1;
	}
	return 0;
}

static int op_update(struct sim *s, struct ref *r, uint64_t ts, uint64_t *next_id)
{
	unsigned int c = rndn(r->possible);
	int key = (int)rndn(NKEY);
	bool event = key_kind(key) == SIM_ITEM_EVENT;
	unsigned int pick = rndn(100);
	int64_t val;
	int x;

	if (pick < 3)
		val = 0;
	else if (pick < 8)
		val = 512;
	else if (pick < 12)
		val = event ? 64 : -512;
	else if (pick < 14 && event)
		val = (int64_t)(1ULL << 32) + rndn(3);	/* (int) is 0..2 */
	else
		val = (int64_t)rndn(40) + 1;
	if (!event && rndn(3) == 0)
		val = -val;
	if (rndn(40) == 0 && r->n < MAXN) {
		/* an id never seen: attaches under the root */
		x = -1;
		if (val) {
			x = ref_add(r, ts, (*next_id)++, 0);
			r->cost.unknown_ids++;
		}
		if (sim_update(s, ts, c, x < 0 ? 999999 : r->id[x], key_kind(key), key % NITEM, val))
			return bad("update of a new id");
		if (x < 0)
			return 0;
	} else {
		x = (int)rndn(r->n);
		if (sim_update(s, ts, c, r->id[x], key_kind(key), key % NITEM, val))
			return bad("update");
	}
	ref_update(r, x, c, key, val, event);
	return 0;
}

static int run_round(uint64_t seed, int *op_out)
{
	static struct ref r;
	struct sim *s;
	uint64_t ts = 1000, next_id = 100;
	int op, ret = 0;
	unsigned int online;

	rng_state = seed;
	memset(&r, 0, sizeof(r));
	r.pol = (int)(seed % 3);
	r.possible = 1 + rndn(MAXC);
	online = 1 + rndn(r.possible);
	r.th = SIM_CHARGE_BATCH * online;
	r.offline = online < r.possible;
	s = sim_new(sim_policy_at((size_t)r.pol), r.possible, online);
	if (!s)
		return bad("sim_create");
	ref_add(&r, ts, SIM_ROOT_ID, -1);
	r.last_ts = ts;
	for (int i = 0, n = 1 + (int)rndn(10); i < n; i++) {
		int p = (int)rndn(r.n);

		if (sim_cgroup_add(s, ts, next_id, r.id[p])) {
			ret = bad("cgroup_add");
			goto out;
		}
		ref_add(&r, ts, next_id++, p);
	}
	for (op = 0; op < OPS && !ret; op++) {
		unsigned int pick = rndn(100);

		*op_out = op;
		ts += 1 + rndn(5);
		ref_advance(&r, ts);
		if (r.open && pick < 40) {
			if (!r.len)
				ret = op_window_end(s, &r, ts);
			else if (pick < 25)
				ret = op_visit_at(s, &r, ts, 0, true);
			else if (pick < 33)
				ret = op_visit_at(s, &r, ts, (int)rndn(r.len), false);
			else
				ret = op_window_end(s, &r, ts);
		} else if (pick < 80) {
			nr_window_updates += r.open;
			ret = op_update(s, &r, ts, &next_id);
		} else if (pick < 86 && !r.open) {
			ret = op_window_begin(s, &r, ts, (int)rndn(r.n), rndn(r.possible));
		} else if (pick < 92) {
			int m = (int)rndn(r.n);
			bool force = rndn(4) == 0;
			bool go = force || ref_flushable(&r, m);

			r.cost.flush_requests++;
			r.cost.flushes += go;
			if (sim_flush_request(s, ts, r.id[m], force) != go)
				ret = bad("flush_request %llu", (unsigned long long)r.id[m]);
			else if (go && !r.open)
				ret = op_flush(s, &r, ts, m);
		} else if (pick < 94) {
			online = 1 + rndn(r.possible);
			r.th = SIM_CHARGE_BATCH * online;
			r.offline |= online < r.possible;
			if (sim_set_online(s, ts, online))
				ret = bad("set_online");
		} else if (pick < 97 && r.n < MAXN) {
			int p = (int)rndn(r.n);

			if (sim_cgroup_add(s, ts, next_id, r.id[p]))
				ret = bad("cgroup_add");
			ref_add(&r, ts, next_id++, p);
		} else if (pick < 98 && r.n > 1) {
			if (sim_cgroup_remove(s, ts, r.id[1 + rndn(r.n - 1)]))
				ret = bad("cgroup_remove");
		} else if (pick < 100 && !r.open && !r.ghost && !r.disorder) {
			/* the periodic forced root flush, nothing concurrent */
			r.cost.flush_requests++;
			r.cost.flushes++;
			if (sim_flush_request(s, ts, SIM_ROOT_ID, true) != 1)
				ret = bad("forced request");
			else if (!(ret = op_flush(s, &r, ts, 0)) && !(ret = check_all(s, &r)))
				ret = check_zero(s, &r);
		}
		if (!ret)
			ret = check_all(s, &r);
	}
	*op_out = op;
	if (!ret && r.open) {
		ts++;
		ref_advance(&r, ts);
		ret = op_window_end(s, &r, ts);
	}
	if (!ret) {
		ts++;
		ref_advance(&r, ts);
		r.cost.flush_requests++;
		r.cost.flushes++;
		if (sim_flush_request(s, ts, SIM_ROOT_ID, true) != 1)
			ret = bad("final forced request");
		if (!ret)
			ret = op_flush(s, &r, ts, 0);
		if (!ret)
			ret = check_all(s, &r);
		if (!ret && !r.ghost && !r.disorder)
			ret = check_zero(s, &r);
	}
out:
	sim_destroy(s);
	return ret;
}

TEST(random_interleavings)
{
	const char *env = getenv("MCR_SEED");
	uint64_t base = env ? strtoull(env, NULL, 0) : 0x5eed0001ULL;
	int round, op = 0;

	for (round = 0; round < ROUNDS; round++) {
		uint64_t seed = base + (uint64_t)round;

		if (run_round(seed, &op))
			FAILF("MCR_SEED=%llu (round %d, op %d, policy %s): %s",
			      (unsigned long long)base, round, op,
			      sim_policy_at(seed % 3)->name, why);
	}
	printf("# %d rounds x %d ops from MCR_SEED=%llu: %lu updates inside windows, %lu "
	       "out-of-order visits, %lu all-zero checks after forced root flushes, %lu stuck "
	       "and %lu stranded (memcg, op) pairs, %lu never-stranded checks (continue, "
	       "legacy)\n", ROUNDS, OPS, (unsigned long long)base, nr_window_updates,
	       nr_out_of_order, nr_zero_checks, nr_stuck_seen, nr_stranded_seen, nr_free_checks);
}

TEST_MAIN(random_interleavings)
