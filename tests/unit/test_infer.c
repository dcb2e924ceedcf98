// SPDX-License-Identifier: GPL-2.0
/*
 * Hypothesis inference (replay/infer/): an order inside a lock window that
 * the base model (every visit at unlock) does not reproduce is found and
 * confirmed by the kernel's later values; what no order explains is counted
 * as a mismatch; identical hypotheses merge; the cap holds; the hypotheses'
 * walks, through the policy's step, agree with the simulator's, for the
 * table's policies and for one only the test knows.
 */
#include <stdlib.h>
#include <string.h>

#include "../harness.h"
#include "infer.h"
#include "infer/infer-local.h"	/* white box: no_cut, unmade_total (test_cut_exact) */
#include "self_policy.h"
#include "sim_new.h"

#define ROOT	SIM_ROOT_ID
#define P	10ULL
#define L	20ULL

static struct infer *mk_policy(const struct sim_policy *pol, unsigned int max_hyp)
{
	struct sim_params sp = { .policy = pol, .nr_possible = 2, .nr_online = 2,
				 .batch = SIM_CHARGE_BATCH };
	struct infer *in = infer_create(&sp, max_hyp);

	if (in) {
		sim_cgroup_add(infer_base(in), 0, P, ROOT);
		sim_cgroup_add(infer_base(in), 0, L, P);
		infer_set_synced(in);	/* every counter starts known: 0 */
	}
	return in;
}

static struct infer *mk(const char *pol, unsigned int max_hyp)
{
	return mk_policy(sim_policy_find(pol), max_hyp);
}

static int upd(struct infer *in, uint64_t ts, unsigned int cpu, uint64_t id, int64_t v)
{
	return infer_update(in, ts, ts, cpu, id, SIM_ITEM_STATE, 0, v, ts);
}

/*
 * break, 2 CPUs, TH 128; root -> P -> L.
 *   cpu0 L +64, cpu0 L +64, cpu1 L +64: each moves a batch of 64 into L, P
 *   and root, so all three are at 192 (> TH, flushable); cpu0's tree holds L, P, root.
 *   locked(cpu 0, root): visit list [L, P, root].  cpu1 L +64 inside the window:
 *     before all visits: L flushable, the walk stops; unlock zeroes all: 0/0/0
 *     after L:    L 0 -> 64, P still 192 stops the walk; unlock: L 64, P 0, root 0
 *     after P:    L 64, P 64, root 192 stops; unlock: L 64, P 64, root 0
 *     after root: L 64, P 64, root 64
 *   The base (every visit at unlock) says P = 0.  The kernel reads P = 64:
 *   two orders remain; then root = 64: only "after root" remains.
 */
static int setup_window(struct infer *in)
{
	int ret = upd(in, 1, 0, L, 64);

	ret = ret ? ret : upd(in, 2, 0, L, 64);
	ret = ret ? ret : upd(in, 3, 1, L, 64);
	ret = ret ? ret : infer_locked(in, 10, ROOT, 0, 100);
	ret = ret ? ret : upd(in, 50, 1, L, 64);
	return ret ? ret : infer_unlock(in, 110);
}

TEST(test_order_found)
{
	struct infer *in = mk("break", 0);
	bool su, nf;

	ASSERT(in);
	ASSERT_EQ(setup_window(in), 0);
	ASSERT_EQU(infer_nr_hyp(in), 4);
	ASSERT_EQ(infer_check(in, P, 64, false, &su, &nf), 0);
	ASSERT(su && nf);
	/* the check closed the window (late updates could still come before it) */
	ASSERT_EQ(sim_stats_updates(infer_base(in), P), 0);	/* the base alone misses */
	ASSERT_EQU(infer_nr_hyp(in), 2);
	ASSERT_EQ(infer_check(in, ROOT, 64, false, &su, &nf), 0);
	ASSERT(su);
	ASSERT_EQU(infer_nr_hyp(in), 1);
	/* folded into the base */
	ASSERT_EQ(sim_stats_updates(infer_base(in), ROOT), 64);
	ASSERT_EQ(sim_stats_updates(infer_base(in), L), 64);
	infer_destroy(in);
}

/*
 * Misses after the cap: setup_window's update inside the window makes four
 * orders (before L, after L, after P, after root); a cap of 1 keeps one and
 * drops three.  The cheapest is kept, one of the two whose P and root are 0
 * after the unlock (before L, after L), so the kernel's P = 64 is a miss the
 * cap explains: infer_missed() 1, at check 0.  The miss makes the kernel's
 * value the hypothesis's (P = 64), and the root's 64 at check 1 is a miss
 * too (the kept order says 0): at check 1.  Without the cap the
 * same checks miss nothing.  The work counts, for each update the
 * hypotheses walk, the orders it leaves, made or dropped: the three before
 * the window are taken by the one hypothesis lazily (nothing walked), the
 * one inside it leaves four: 4, with the cap (one kept, three dropped) as
 * without.
 */
TEST(test_missed_after_cap)
{
	struct infer *one = mk("break", 1), *all = mk("break", 0);
	const uint64_t *at;
	bool su, nf;

	ASSERT(one && all);
	ASSERT_EQ(setup_window(one), 0);
	ASSERT_EQ(setup_window(all), 0);
	ASSERT_EQU(infer_capped(one), 3);
	ASSERT_EQU(infer_capped(all), 0);
	ASSERT_EQ(infer_check(one, P, 64, false, &su, &nf), 0);
	ASSERT(!su);
	ASSERT_EQ(infer_check(one, ROOT, 64, false, &su, &nf), 0);
	ASSERT(!su);
	ASSERT_EQU(infer_missed(one), 2);
	ASSERT_EQU(infer_miss_at(one, &at), 2);
	ASSERT_EQU(at[0], 0);
	ASSERT_EQU(at[1], 1);
	ASSERT_EQ(infer_check(all, P, 64, false, &su, &nf), 0);
	ASSERT(su);
	ASSERT_EQ(infer_check(all, ROOT, 64, false, &su, &nf), 0);
	ASSERT(su);
	ASSERT_EQU(infer_missed(all), 0);
	ASSERT_EQU(infer_miss_at(all, &at), 0);
	ASSERT_EQU(infer_work(one), 4);
	ASSERT_EQU(infer_work(all), 4);
	infer_destroy(one);
	infer_destroy(all);
}

/*
 * Before sync no value is a miss: test_missed_after_cap's two checks, the
 * cap having dropped three orders, explained by none kept, are no misses
 * while the inference is not synced (the trace began with counters it does
 * not show); the kernel's values are taken all the same (P = 64, so root's
 * 64 at the next check is still unexplained: the kept order says 0).  Once
 * synced, the same kind of check, root = 128 where the hypothesis holds 64
 * (taken at the check before), is a miss, the third check: at 2.
 */
TEST(test_no_miss_before_sync)
{
	struct infer *in = mk("break", 1);
	const uint64_t *at;
	bool su, nf;

	ASSERT(in);
	in->syncing = in->synced = false;	/* as infer_create() makes it */
	ASSERT_EQ(setup_window(in), 0);
	ASSERT_EQU(infer_capped(in), 3);
	ASSERT_EQ(infer_check(in, P, 64, false, &su, &nf), 0);
	ASSERT(!su);
	ASSERT_EQ(infer_check(in, ROOT, 64, false, &su, &nf), 0);
	ASSERT(!su);
	ASSERT_EQU(infer_missed(in), 0);
	ASSERT_EQU(infer_miss_at(in, &at), 0);
	infer_set_synced(in);
	ASSERT_EQ(infer_check(in, ROOT, 128, false, &su, &nf), 0);
	ASSERT(!su);
	ASSERT_EQU(infer_missed(in), 1);
	ASSERT_EQU(infer_miss_at(in, &at), 1);
	ASSERT_EQU(at[0], 2);
	infer_destroy(in);
}

/*
 * infer_set_max_hyp(): the cap from the next update on, either way (the
 * wider search's stretches, pass.c).  setup_window's window update leaves
 * four orders: an inference made with a cap of 4 and narrowed to 1 before
 * it keeps one and drops three, as one made with a cap of 1; made with 1 and
 * widened to 4 before it, it keeps all four and drops none, and both of the
 * kernel's reads (P = 64, root = 64) are then explained, as with no cap.
 */
TEST(test_set_max_hyp)
{
	struct infer *narrowed = mk("break", 4), *widened = mk("break", 1);
	bool su, nf;

	ASSERT(narrowed && widened);
	infer_set_max_hyp(narrowed, 1);
	infer_set_max_hyp(widened, 4);
	ASSERT_EQ(setup_window(narrowed), 0);
	ASSERT_EQ(setup_window(widened), 0);
	ASSERT_EQU(infer_capped(narrowed), 3);
	ASSERT_EQU(infer_nr_hyp(narrowed), 1);
	ASSERT_EQU(infer_capped(widened), 0);
	ASSERT_EQU(infer_nr_hyp(widened), 4);
	ASSERT_EQ(infer_check(widened, P, 64, false, &su, &nf), 0);
	ASSERT(su);
	ASSERT_EQ(infer_check(widened, ROOT, 64, false, &su, &nf), 0);
	ASSERT(su);
	ASSERT_EQU(infer_missed(widened), 0);
	infer_destroy(narrowed);
	infer_destroy(widened);
}

/*
 * The counters every hypothesis holds alike go to the base (inf_consensus()).
 * setup_window's four orders, closed: P = 64 keeps "after P" (L 64, P 64,
 * root 0) and "after root" (L 64, P 64, root 64), against the base's 0 / 0 /
 * 0.  Both differ from the base in L's and P's atomics, alike: a compaction
 * outside the window gives the base L = 64 and P = 64, and leaves "after P"
 * no entry (root 0 is the base's) and "after root" one (root 64).  What each
 * stands for is unchanged: both still read P = 64 and L = 64, they are still
 * two, and the root's read at 64 leaves "after root" alone, folded: 64 / 64
 * / 64 in the base.  The per-CPU counters stay 0: cpu1's walk moved each
 * batch of 64 into the atomic.  With the fold off (no_consensus), the same
 * compaction leaves the base at 0 and both tables at their two or three.
 */
static void consensus_run(struct test_ctx *t, bool off)
{
	struct infer *in = mk("break", 0);
	size_t i, entries = 0;
	bool su, nf;

	ASSERT(in);
	in->no_consensus = off;
	ASSERT_EQ(setup_window(in), 0);
	ASSERT_EQ(infer_check(in, P, 64, false, &su, &nf), 0);
	ASSERT(su);
	ASSERT_EQU(infer_nr_hyp(in), 2);
	ASSERT_EQ(inf_compact(in, true), 0);
	ASSERT_EQU(infer_nr_hyp(in), 2);
	for (i = 0; i < in->nr_h; i++) {
		entries += idmap_count(&in->h[i].e);
		ASSERT_EQ(inf_get(in, &in->h[i], inf_key(P, INF_ATOMIC)), 64);
		ASSERT_EQ(inf_get(in, &in->h[i], inf_key(L, INF_ATOMIC)), 64);
	}
	ASSERT_EQ(sim_stats_updates(infer_base(in), ROOT), 0);
	if (off) {
		ASSERT_EQU(entries, 5);
		ASSERT_EQ(sim_stats_updates(infer_base(in), P), 0);
		ASSERT_EQU(in->consensus_keys, 0);
	} else {
		ASSERT_EQU(entries, 1);
		ASSERT_EQ(sim_stats_updates(infer_base(in), P), 64);
		ASSERT_EQ(sim_stats_updates(infer_base(in), L), 64);
		ASSERT_EQU(in->consensus_keys, 2);
	}
	ASSERT_EQ(infer_check(in, P, 64, false, &su, &nf), 0);
	ASSERT(su && nf);
	ASSERT_EQU(infer_nr_hyp(in), 2);
	ASSERT_EQ(infer_check(in, ROOT, 64, false, &su, &nf), 0);
	ASSERT(su);
	ASSERT_EQU(infer_nr_hyp(in), 1);
	ASSERT_EQ(sim_stats_updates(infer_base(in), ROOT), 64);
	ASSERT_EQ(sim_stats_updates(infer_base(in), P), 64);
	ASSERT_EQ(sim_stats_updates(infer_base(in), L), 64);
	ASSERT_EQU(sim_pcpu_stats_updates(infer_base(in), L, 1), 0);
	infer_destroy(in);
}

TEST(test_consensus)
{
	consensus_run(t, false);
	consensus_run(t, true);
}

/*
 * test_order_found on a path deeper than a hypothesis keeps entry slots for
 * (16 nodes): root -> A1 -> ... -> A17 -> P -> L, 20 nodes.  The three
 * updates before the window credit every node alike (64, 128, 192), so the
 * window's list on CPU 0 is [L, P, A17, ..., A1, root] and the update inside
 * it branches 21 ways: before all visits (everything 0 at unlock) and after
 * the visit of each node N, which leaves L up to N at 64 (the walk stops at
 * N's parent, still at 192, and the unlock zeroes it).  P = 64 keeps "after
 * P" to "after root", 19 orders; root = 64 keeps "after root" alone, whose
 * walk reached every node: all 20 at 64 once folded.
 */
#define DEEP_A	17
#define DEEP_ID(i)	(100ULL + (i))		/* A1 .. A17 */

TEST(test_order_found_deep)
{
	struct sim_params sp = { .policy = sim_policy_find("break"), .nr_possible = 2,
				 .nr_online = 2, .batch = SIM_CHARGE_BATCH };
	struct infer *in = infer_create(&sp, 0);
	uint64_t up = ROOT;
	unsigned int i;
	bool su, nf;

	ASSERT(in);
	for (i = 1; i <= DEEP_A; i++) {
		ASSERT_EQ(sim_cgroup_add(infer_base(in), 0, DEEP_ID(i), up), 0);
		up = DEEP_ID(i);
	}
	ASSERT_EQ(sim_cgroup_add(infer_base(in), 0, P, up), 0);
	ASSERT_EQ(sim_cgroup_add(infer_base(in), 0, L, P), 0);
	ASSERT_EQ(setup_window(in), 0);
	ASSERT_EQU(infer_nr_hyp(in), 21);
	ASSERT_EQ(infer_check(in, P, 64, false, &su, &nf), 0);
	ASSERT(su && nf);
	ASSERT_EQU(infer_nr_hyp(in), 19);
	ASSERT_EQ(infer_check(in, ROOT, 64, false, &su, &nf), 0);
	ASSERT(su);
	ASSERT_EQU(infer_nr_hyp(in), 1);
	ASSERT_EQ(sim_stats_updates(infer_base(in), L), 64);
	ASSERT_EQ(sim_stats_updates(infer_base(in), P), 64);
	for (i = 1; i <= DEEP_A; i++)
		ASSERT_EQ(sim_stats_updates(infer_base(in), DEEP_ID(i)), 64);
	ASSERT_EQ(sim_stats_updates(infer_base(in), ROOT), 64);
	infer_destroy(in);
}

/*
 * P = 100 is no sum of batches of 64 any order gives: a mismatch, nothing
 * pruned, and every hypothesis takes the kernel's 100 so that the next read
 * of P does not miss again.  Two of the four differed only in P's atomic:
 * they merge.
 */
TEST(test_no_order)
{
	struct infer *in = mk("break", 0);
	bool su, nf;

	ASSERT(in);
	ASSERT_EQ(setup_window(in), 0);
	ASSERT_EQ(infer_check(in, P, 100, false, &su, &nf), 0);
	ASSERT(!su);
	ASSERT_EQU(infer_nr_hyp(in), 3);
	ASSERT_EQ(infer_check(in, P, 100, false, &su, &nf), 0);
	ASSERT(su);
	ASSERT_EQU(infer_nr_hyp(in), 3);
	infer_destroy(in);
}

/*
 * After the fold (L, P, root at 64, per-CPU counters 0), a window on CPU 1
 * (list [L, P, root]) and 20 updates of +1 on CPU 0 to L: CPU 1's visits do
 * not touch CPU 0's counters and no batch fills, so each update commutes
 * with the visits of its path: a branch "after vis[i]" would be "before
 * all" with those visits made, a state the hypothesis reaches by moving on.
 * No branch at all: 1 hypothesis (once 4, p = 0..3), not 4^20.  With a cap
 * of 2: 1 too ("after P", which the cap kept and P = 64 leaves alone:
 * test_cap_keeps_nearest), and never more kept than the cap.
 */
static void merge_run(struct test_ctx *t, unsigned int cap, size_t want)
{
	struct infer *in = mk("break", cap);
	bool su, nf;
	int i;

	ASSERT(in);
	ASSERT_EQ(setup_window(in), 0);
	ASSERT_EQ(infer_check(in, P, 64, false, &su, &nf), 0);
	ASSERT_EQ(infer_check(in, ROOT, 64, false, &su, &nf), 0);
	ASSERT_EQ(infer_locked(in, 200, ROOT, 1, 100), 0);
	for (i = 0; i < 20; i++)
		ASSERT_EQ(upd(in, 201 + (uint64_t)i, 0, L, 1), 0);
	ASSERT_EQU(infer_nr_hyp(in), want);
	ASSERT(infer_max_kept(in) <= (cap ? cap : 64));
	infer_destroy(in);
}

TEST(test_merge)
{
	merge_run(t, 1000, 1);
}

TEST(test_cap)
{
	merge_run(t, 2, 1);
}

/*
 * The merge (inf_compact()): of identical hypotheses (same position, same
 * table) one stays, the one of least cost, then of the looser bounds on
 * its visits to come (inf_twin_cmp()); a table one counter apart stays
 * beside it.  Copies of the first hypothesis at costs 4, 3 (its visits
 * bounded from time 7 on), 3 (from 2) and 5, and one with L's atomic at 5,
 * cost 1.  Two stay, in the order of their first copies; costs less the
 * least (1): the twin of cost 3 and bound 2 at 2, the other at 0.
 */
TEST(test_merge_twins)
{
	static const uint64_t cost[] = { 4, 3, 3, 5, 1 }, lo[] = { 0, 7, 2, 0, 0 };
	struct infer *in = mk("break", 0);
	size_t i;

	ASSERT(in);
	if (t->failed)
		return;
	ASSERT_EQU(in->nr_h, 1);
	for (i = 0; i < 5 && !t->failed; i++) {
		struct inf_hyp c;

		ASSERT_EQ(inf_hyp_copy(&c, &in->h[0]), 0);
		c.cost = cost[i];
		c.front = (struct inf_front){ .n = 0 };
		if (lo[i])
			inf_front_push(&c.front, lo[i], 0);
		if (i == 4)
			ASSERT_EQ(inf_put(&c, inf_key(L, INF_ATOMIC), 5, 0), 0);
		ASSERT_EQ(inf_push(in, &c), 0);
	}
	inf_hyp_free(in, &in->h[0]);
	in->h[0] = in->h[--in->nr_h];	/* the original goes: the fifth copy takes its place */
	ASSERT_EQ(inf_compact(in, false), 0);
	ASSERT_EQU(in->nr_h, 2);
	ASSERT_EQU(idmap_count(&in->h[0].e), 1);
	ASSERT_EQU(in->h[0].cost, 0);
	ASSERT_EQU(idmap_count(&in->h[1].e), 0);
	ASSERT_EQU(in->h[1].cost, 2);
	ASSERT_EQU(in->h[1].front.n, 1);
	ASSERT_EQU(in->h[1].front.lo[0], 2);
	infer_destroy(in);
}

/*
 * The mirrored walk against the simulator: X (under root) is visited on
 * CPU 0 before an update to X in the window, which leaves a hypothesis
 * different from the base; random updates after that take that hypothesis's
 * own walk through the policy's step.  A reference sim that flushes X's window
 * the same way must end with counters some hypothesis holds, for every node,
 * every policy.
 */
static void mirror_run(struct test_ctx *t, const struct sim_policy *pol)
{
	static const uint64_t ids[] = { ROOT, P, L, 30, 31 };
	struct infer *in = mk_policy(pol, 1000);
	struct sim *ref = sim_new(pol, 2, 2);
	unsigned int seed = 7;
	uint64_t ts = 1, id;
	size_t i;

	ASSERT(in && ref);
	sim_cgroup_add(ref, 0, P, ROOT);
	sim_cgroup_add(ref, 0, L, P);
	for (i = 3; i < 5; i++) {
		sim_cgroup_add(ref, 0, ids[i], i == 4 ? 30 : ROOT);
		sim_cgroup_add(infer_base(in), 0, ids[i], i == 4 ? 30 : ROOT);
	}
	for (i = 0; i < 40; i++, ts++) {
		unsigned int cpu;
		int64_t v;

		id = ids[1 + rand_r(&seed) % 4];
		cpu = rand_r(&seed) % 2;
		v = 1 + rand_r(&seed) % 90;
		ASSERT_EQ(upd(in, ts, cpu, id, v), 0);
	}
	/* replay the same stream on ref: same seed */
	seed = 7;
	for (i = 0, ts = 1; i < 40; i++, ts++) {
		unsigned int cpu;
		int64_t v;

		id = ids[1 + rand_r(&seed) % 4];
		cpu = rand_r(&seed) % 2;
		v = 1 + rand_r(&seed) % 90;
		ASSERT_EQ(sim_update(ref, ts, cpu, id, SIM_ITEM_STATE, 0, v), 0);
	}
	ASSERT_EQ(upd(in, ts, 0, 31, 64), 0);		/* X = 30 on CPU 0's tree */
	ASSERT_EQ(sim_update(ref, ts++, 0, 31, SIM_ITEM_STATE, 0, 64), 0);
	ASSERT_EQ(infer_locked(in, ts, 30, 0, 0), 0);
	ASSERT_EQ(sim_window_begin(ref, ts, 30, 0), 0);
	while (sim_window_visit_next(ref, ts, NULL) > 0)
		;
	ASSERT_EQ(upd(in, ++ts, 1, 31, 70), 0);
	ASSERT_EQ(sim_update(ref, ts, 1, 31, SIM_ITEM_STATE, 0, 70), 0);
	ASSERT_EQ(infer_unlock(in, ++ts), 0);
	ASSERT_EQ(sim_window_end(ref, ts), 0);
	for (i = 0; i < 200; i++, ts++) {
		unsigned int cpu = rand_r(&seed) % 2;
		int64_t v = 1 + rand_r(&seed) % 90;

		id = ids[1 + rand_r(&seed) % 4];
		ASSERT_EQ(upd(in, ts, cpu, id, v), 0);
		ASSERT_EQ(sim_update(ref, ts, cpu, id, SIM_ITEM_STATE, 0, v), 0);
	}
	for (i = 0; i < 5; i++) {
		bool su, nf;

		ASSERT_EQ(infer_check(in, ids[i], sim_stats_updates(ref, ids[i]),
				      sim_needs_flush(ref, ids[i]), &su, &nf), 0);
		if (!(su && nf))
			FAILF("%s: id %" PRIu64 " ref %" PRId64 " su %d nf %d", pol->name, ids[i],
			      sim_stats_updates(ref, ids[i]), su, nf);
	}
	sim_destroy(ref);
	infer_destroy(in);
}

TEST(test_mirror)
{
	mirror_run(t, sim_policy_find("break"));
	mirror_run(t, sim_policy_find("continue"));
	mirror_run(t, sim_policy_find("legacy"));
	mirror_run(t, &self_policy);
}

/*
 * setup_window under the "self" policy, which inference has never heard of.
 * Each +64 goes into L's atomic alone: L 192, P 0, root 0 at the lock;
 * cpu 0's tree still holds L, P, root (css_rstat_updated() links the path
 * whatever the walk does), so the list is [L, P, root].  The +64 inside:
 *   before all visits: L 256, then visited: L 0
 *   after L, after P, after root: L 64 (P and root untouched, visited to 0)
 * so L is 0 or 64 and P, root always 0, where break's orders made P 64
 * possible (test_order_found).  The simulator running the same policy with
 * L visited before the update says L 64, P 0, root 0: inference explains
 * all three, and rejects P = 64.
 */
TEST(test_policy_from_caller)
{
	struct infer *in = mk_policy(&self_policy, 0);
	struct sim *ref = sim_new(&self_policy, 2, 2);
	static const uint64_t ids[] = { L, P, ROOT };
	bool su, nf;
	size_t i;

	ASSERT(in && ref);
	ASSERT_EQ(sim_cgroup_add(ref, 0, P, ROOT), 0);
	ASSERT_EQ(sim_cgroup_add(ref, 0, L, P), 0);
	ASSERT_EQ(sim_update(ref, 1, 0, L, SIM_ITEM_STATE, 0, 64), 0);
	ASSERT_EQ(sim_update(ref, 2, 0, L, SIM_ITEM_STATE, 0, 64), 0);
	ASSERT_EQ(sim_update(ref, 3, 1, L, SIM_ITEM_STATE, 0, 64), 0);
	ASSERT_EQ(sim_window_begin(ref, 10, ROOT, 0), 0);
	ASSERT_EQ(sim_window_visit_next(ref, 10, NULL), 1);	/* L */
	ASSERT_EQ(sim_update(ref, 50, 1, L, SIM_ITEM_STATE, 0, 64), 0);
	ASSERT_EQ(sim_window_end(ref, 110), 0);
	ASSERT_EQ(sim_stats_updates(ref, L), 64);
	ASSERT_EQ(sim_stats_updates(ref, P), 0);
	ASSERT_EQ(sim_stats_updates(ref, ROOT), 0);

	ASSERT_EQ(setup_window(in), 0);
	ASSERT_EQU(infer_nr_hyp(in), 4);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(infer_check(in, ids[i], sim_stats_updates(ref, ids[i]),
				      sim_needs_flush(ref, ids[i]), &su, &nf), 0);
		ASSERT(su && nf);
	}
	ASSERT_EQU(infer_nr_hyp(in), 1);			/* the three "after" orders merged */
	ASSERT_EQ(sim_stats_updates(infer_base(in), L), 64);	/* and folded into the base */
	sim_destroy(ref);
	infer_destroy(in);

	in = mk_policy(&self_policy, 0);
	ASSERT(in);
	ASSERT_EQ(setup_window(in), 0);
	ASSERT_EQ(infer_check(in, P, 64, false, &su, &nf), 0);
	ASSERT(!su);		/* no order of this policy gives P 64 */
	infer_destroy(in);
}

struct order_rec {
	uint64_t	tag[4];
	size_t		p[4];
	unsigned int	n;
};

static int order_rec(void *ctx, uint64_t tag, size_t p)
{
	struct order_rec *o = ctx;

	if (o->n < 4) {
		o->tag[o->n] = tag;
		o->p[o->n] = p;
	}
	o->n++;
	return 0;
}

/*
 * The order sink: in setup_window the update at ts 50 (tag 50) is the only
 * one that branched.  Nothing is final while two orders explain the reads;
 * once root = 64 leaves "after root" alone, its decision comes out: all 3
 * visits came before it.
 */
TEST(test_order_sink)
{
	struct infer *in = mk("break", 0);
	struct order_rec o = { 0 };
	bool su, nf;

	ASSERT(in);
	infer_set_order_sink(in, order_rec, &o);
	ASSERT_EQ(setup_window(in), 0);
	ASSERT_EQ(infer_check(in, P, 64, false, &su, &nf), 0);
	ASSERT_EQU(o.n, 0);
	ASSERT_EQ(infer_check(in, ROOT, 64, false, &su, &nf), 0);
	ASSERT_EQU(o.n, 1);
	ASSERT_EQU(o.tag[0], 50);
	ASSERT_EQU(o.p[0], 3);
	ASSERT_EQ(infer_finish(in, 200), 0);
	ASSERT_EQU(o.n, 1);	/* nothing twice */
	infer_destroy(in);
}

/*
 * infer_finish() of two hypotheses of equal cost (one with L's atomic at 5,
 * one at 6, each a decision of its own, tags 5 and 6): the one of least hash
 * goes to the sink, whichever comes first in the array.
 */
TEST(test_finish_tie)
{
	uint64_t want = inf_hash_of(0, inf_mix(inf_key(L, INF_ATOMIC), 5)) <
			inf_hash_of(0, inf_mix(inf_key(L, INF_ATOMIC), 6)) ? 5 : 6;
	int swap;

	for (swap = 0; swap < 2 && !t->failed; swap++) {
		struct infer *in = mk("break", 0);
		struct order_rec o = { 0 };
		int i;

		ASSERT(in);
		if (t->failed)
			return;
		infer_set_order_sink(in, order_rec, &o);
		for (i = 0; i < 2 && !t->failed; i++) {
			struct inf_hyp c;
			uint64_t v = (uint64_t)(swap ? 6 - i : 5 + i);

			ASSERT_EQ(inf_hyp_copy(&c, &in->h[0]), 0);
			ASSERT_EQ(inf_put(&c, inf_key(L, INF_ATOMIC), (int64_t)v, 0), 0);
			ASSERT_EQ(inf_dec_push(in, &c, v), 0);
			ASSERT_EQ(inf_push(in, &c), 0);
		}
		inf_hyp_free(in, &in->h[0]);
		in->h[0] = in->h[--in->nr_h];
		ASSERT_EQ(infer_finish(in, 1000), 0);
		ASSERT_EQU(o.n, 1);
		ASSERT_EQU(o.tag[0], want);
		infer_destroy(in);
	}
}

/*
 * The cost of an update's branches (inf_branch_costs()), by hand.  A window
 * [100, 500] of 3 visits: spread has visit k due at 100 + 100 (k + 1), i.e.
 * at (k + 1) * 1024 in the cost's units (1/1024 visit); an update at 350
 * is at 2.5 visits (2560), one at 360 at 2.6 (2662.4, floored: 2662).
 * At 350, an update whose path has visits 0 and 2 (1 is another subtree's),
 * from position 0, no bounds:
 *   after 0: visit 0 (due 1024) made before 2560, on time; visit 2, the
 *     path's next, is bounded by 2560 and due at 3072: not late.   0
 *   after 2: visits 0..2 made before 2560: 2 early by 3072 - 2560.  512
 *   before all: visits from 0 on bounded by 2560: 0 is late by 1536,
 *     1 by 512.                                                    2048
 * At 360, an update whose path has visits 1 and 2:
 *   from "after 0" (position 1, visit 2 on bounded by 2560): nothing bounds
 *     visit 1, which the first update's path did not hold (it may have come
 *     before 350, as spread has it at 300): after 1: 0; after 2: 3072 - 2662
 *     = 410; before all: 1 late by 2662 - 2048 = 614.
 *   from "before all" (position 0, cost 2048, visits from 0 on bounded by
 *     2560): after 1: visits 0 and 1 made, their lateness charged already:
 *     2048; after 2: 2048 + 410 = 2458; before all: visit 1's bound rises
 *     to 2662, 614 late instead of 512: 2048 + 102 = 2150.
 * The spread model's order ("after 0" then "after 1") costs nothing.  The
 * cost charged only the visit a branch places, from the order's last
 * decision, had "after 1" from "after 0" at 2560 - 2048 = 512.
 */
TEST(test_cost_bounds)
{
	static const size_t vis_a[] = { 0, 2 }, vis_b[] = { 1, 2 };
	struct infer *in = mk("break", 0);
	struct inf_front f0 = { .n = 0 }, fa, fb;
	uint64_t c[2], at_a, at_b;

	ASSERT(in);
	ASSERT_EQ(upd(in, 1, 0, L, 64), 0);	/* CPU 0's list: [L, P, root] */
	ASSERT_EQ(infer_locked(in, 100, ROOT, 0, 400), 0);
	ASSERT_EQU(in->n_list, 3);
	at_a = inf_branch_at(in, 350);
	at_b = inf_branch_at(in, 360);
	ASSERT_EQU(at_a, 2560);
	ASSERT_EQU(at_b, 2662);

	ASSERT_EQU(inf_branch_costs(in, &f0, 0, 0, at_a, vis_a, 2, c), 2048);
	ASSERT_EQU(c[0], 0);
	ASSERT_EQU(c[1], 512);

	fa = f0;	/* after 0: position 1, the path's next visit (2) bounded */
	inf_front_placed(&fa, 1);
	inf_front_push(&fa, at_a, 2);
	ASSERT_EQU(inf_branch_costs(in, &fa, 1, 0, at_b, vis_b, 2, c), 614);
	ASSERT_EQU(c[0], 0);
	ASSERT_EQU(c[1], 410);

	fb = f0;	/* before all: position 0, visit 0 on bounded */
	inf_front_push(&fb, at_a, 0);
	ASSERT_EQU(inf_branch_costs(in, &fb, 0, 2048, at_b, vis_b, 2, c), 2150);
	ASSERT_EQU(c[0], 2048);
	ASSERT_EQU(c[1], 2458);

	/* a bound from an earlier visit on replaces those after it */
	inf_front_push(&fa, at_b, 1);
	ASSERT_EQU(fa.n, 1);
	ASSERT_EQU(fa.lo[0], at_b);
	ASSERT_EQU(fa.w[0], 1);
	infer_destroy(in);
}

/*
 * The cap keeps the orders whose visits sit nearest the spread model's times.
 * Window [10, 110] over [L, P, root] (n = 3): spread has visit k due at
 * 10 + 25 (k + 1), i.e. at k + 1 in units of 25 ns; the update at 50 is at
 * 1.6 (test_cost_bounds has the rule):
 *   after L: L made on time, P (the path's next, due 2) bounded by 1.6: 0
 *   after P: P early by 2 - 1.6:                                        0.4
 *   after root: P and root early:              0.4 + 3 - 1.6 =          1.8
 *   before all: L (due 1) bounded by 1.6, late:                         0.6
 * A cap of 2 keeps "after L" (L/P/root 64/0/0 at unlock) and "after P"
 * (64/64/0): root = 0 keeps both; L = 0 ("before all" alone) is not
 * explained; P = 64 leaves "after P".
 */
TEST(test_cap_keeps_nearest)
{
	struct infer *in = mk("break", 2);
	bool su, nf;

	ASSERT(in);
	ASSERT_EQ(setup_window(in), 0);
	ASSERT_EQU(infer_nr_hyp(in), 2);
	ASSERT_EQ(infer_check(in, ROOT, 0, false, &su, &nf), 0);
	ASSERT(su);
	ASSERT_EQU(infer_nr_hyp(in), 2);
	ASSERT_EQ(infer_check(in, L, 0, false, &su, &nf), 0);
	ASSERT(!su);	/* the cap dropped the one order that explains it */
	ASSERT_EQU(infer_nr_hyp(in), 2);
	ASSERT_EQ(infer_check(in, P, 64, false, &su, &nf), 0);
	ASSERT(su);
	ASSERT_EQU(infer_nr_hyp(in), 1);
	infer_destroy(in);
}

/*
 * test_cap_keeps_nearest with the diagram switched on: with no order sink, the
 * update in the window would take the 1 hypothesis to 4 (before all, after
 * L, P, root), past the cap of 2, so the window's orders become a diagram
 * (infer_ddwin.c) and all 4 stay: 4 orders while the window is open, then
 * P = 64 is explained after all (after P, after root: 2, within the cap,
 * so the list again), root = 64 leaves "after root" alone, folded: L, P
 * and root at 64 in the base, as test_order_found with no cap.
 */
TEST(test_cap_dd)
{
	struct infer *in = mk("break", 2);
	bool su, nf;

	ASSERT(in);
	infer_set_exact(in, true);
	ASSERT_EQ(setup_window(in), 0);
	ASSERT_EQU(in->dd_switches, 1);
	ASSERT_EQU(in->nr_h, 2);	/* the list goes on beside it, capped */
	ASSERT(in->ddw);
	ASSERT_EQU(infer_nr_hyp(in), 4);
	ASSERT_EQ(infer_check(in, P, 64, false, &su, &nf), 0);
	ASSERT(su && nf);
	ASSERT(!in->ddw);	/* 2 left, the list holds them */
	ASSERT_EQU(infer_nr_hyp(in), 2);
	ASSERT_EQU(infer_capped(in), 0);
	ASSERT_EQ(infer_check(in, ROOT, 64, false, &su, &nf), 0);
	ASSERT(su);
	ASSERT_EQU(infer_nr_hyp(in), 1);
	ASSERT_EQ(sim_stats_updates(infer_base(in), ROOT), 64);
	ASSERT_EQ(sim_stats_updates(infer_base(in), P), 64);
	ASSERT_EQ(sim_stats_updates(infer_base(in), L), 64);
	infer_destroy(in);
}

/*
 * test_cap_dd before a forced flush of the root is requested: no diagram
 * opens (infer_set_syncing()), so the list alone takes the window's update,
 * capped at 2 of its 4 orders (2 dropped).  The same inference, told of the
 * request, opens one at the next such update: setup_window's updates and
 * window again (cpu0's tree holds L, P and root once more), where each of
 * the 2 orders kept branches 4 ways, past the cap: one switch.
 */
TEST(test_cap_dd_not_before_syncing)
{
	struct infer *in = mk("break", 2);

	ASSERT(in);
	in->syncing = in->synced = false;	/* as infer_create() makes it */
	infer_set_exact(in, true);
	ASSERT_EQ(setup_window(in), 0);
	ASSERT(!in->ddw);
	ASSERT_EQU(in->dd_switches, 0);
	ASSERT_EQU(infer_nr_hyp(in), 2);
	ASSERT_EQU(infer_capped(in), 2);
	infer_set_syncing(in);
	ASSERT(!in->synced);	/* misses count only once it completes */
	ASSERT_EQ(upd(in, 201, 0, L, 64), 0);
	ASSERT_EQ(upd(in, 202, 0, L, 64), 0);
	ASSERT_EQ(upd(in, 203, 1, L, 64), 0);
	ASSERT_EQ(infer_locked(in, 210, ROOT, 0, 100), 0);
	ASSERT_EQ(upd(in, 250, 1, L, 64), 0);
	ASSERT_EQU(in->dd_switches, 1);
	ASSERT(in->ddw);
	infer_destroy(in);
}

/*
 * test_cap_dd with the diagrams' budget spent (as if earlier windows had
 * spent it) once the window is open: the read gives the diagram up, and
 * the list beside it answers as test_cap_keeps_nearest's: the cap kept
 * "after L" and "after P", so L = 0 is not explained, and the 2 orders the
 * cap dropped beside the diagram count now.  With an order sink no diagram
 * opens at all: it keeps no history to hand out.
 */
TEST(test_cap_dd_given_up)
{
	struct infer *in = mk("break", 2);
	struct order_rec o = { 0 };
	bool su, nf;

	ASSERT(in);
	infer_set_exact(in, true);
	ASSERT_EQ(setup_window(in), 0);
	ASSERT(in->ddw);
	ASSERT_EQU(infer_capped(in), 0);
	in->dd_work = UINT64_MAX / 2;
	ASSERT_EQ(infer_check(in, L, 0, false, &su, &nf), 0);
	ASSERT(!su);
	ASSERT(!in->ddw);
	ASSERT_EQU(infer_exact_given_up(in), 1);
	ASSERT_EQU(infer_capped(in), 2);
	infer_destroy(in);

	in = mk("break", 2);
	ASSERT(in);
	infer_set_exact(in, true);
	infer_set_order_sink(in, order_rec, &o);
	ASSERT_EQ(setup_window(in), 0);
	ASSERT(!in->ddw);
	ASSERT_EQU(in->dd_switches, 0);
	infer_destroy(in);
}

/*
 * The budget's scale (infer_set_exact(), validate --exact-budget):
 * test_cap_dd_given_up's window, the diagrams having spent one step more
 * than the default budget allows (INF_DD_FIRST_STEPS, and INF_DD_STEPS per
 * update taken).  At 1 the read gives the diagram up, and the capped list
 * misses L = 0; at 2 the diagram stays, and its exact set explains L = 0
 * ("before all visits": L, P and root all 0).
 */
TEST(test_cap_dd_budget_scale)
{
	unsigned int scale;
	struct infer *in;
	bool su, nf;

	for (scale = 1; scale <= 2; scale++) {
		in = mk("break", 2);
		ASSERT(in);
		infer_set_exact(in, scale);
		ASSERT_EQ(setup_window(in), 0);
		ASSERT(in->ddw);
		in->dd_work = INF_DD_FIRST_STEPS + INF_DD_STEPS * in->nr_upd + 1;
		ASSERT_EQ(infer_check(in, L, 0, false, &su, &nf), 0);
		ASSERT(su == (scale == 2));
		ASSERT_EQU(infer_exact_given_up(in), scale == 1);
		infer_destroy(in);
	}
}

/*
 * infer_set_exact_wide(): test_cap_dd_budget_scale's window at the default
 * budget, the diagrams having spent one step more than it allows (A, its
 * allowance: left 0).  Widened to 2 before the read, the allowance is 2 A
 * as though from the start, A - 1 left, and the diagram stays and explains
 * L = 0 (at 1 it is given up, test_cap_dd_budget_scale).  5 more steps
 * spent while wide (S1 + 5 in all, S1 after the read) are forgiven with the
 * read's when it narrows: S1 + 5 - (A + 1), and the budget is again one
 * step over: 0 left, 1 once 2 steps are taken back.  Narrowed again without
 * a widening, nothing more is forgiven.
 */
TEST(test_cap_dd_budget_wide)
{
	struct infer *in = mk("break", 2);
	uint64_t allowed, s1;
	bool su, nf;

	ASSERT(in);
	infer_set_exact(in, 1);
	ASSERT_EQ(setup_window(in), 0);
	ASSERT(in->ddw);
	allowed = INF_DD_FIRST_STEPS + INF_DD_STEPS * in->nr_upd;
	in->dd_work = allowed + 1 - inf_ddw_work(in->ddw);
	ASSERT_EQU(inf_ddw_left(in, in->ddw), 0);
	infer_set_exact_wide(in, 2);
	ASSERT_EQU(inf_ddw_left(in, in->ddw), allowed - 1);
	ASSERT_EQ(infer_check(in, L, 0, false, &su, &nf), 0);
	ASSERT(su);
	ASSERT_EQU(infer_exact_given_up(in), 0);
	s1 = in->dd_work + (in->ddw ? inf_ddw_work(in->ddw) : 0);
	in->dd_work += 5;
	infer_set_exact_wide(in, 0);
	ASSERT_EQU(in->dd_forgiven, s1 + 5 - (allowed + 1));
	ASSERT_EQU(inf_ddw_left(in, in->ddw), 0);
	in->dd_work -= 2;
	ASSERT_EQU(inf_ddw_left(in, in->ddw), 1);
	infer_set_exact_wide(in, 0);
	ASSERT_EQU(in->dd_forgiven, s1 + 5 - (allowed + 1));
	infer_destroy(in);
}

/*
 * The cap's budget (inf_budget()): a count held above the floor (64) for a
 * budget of walks halves the cap, and each further budget halves it again,
 * every step after as many walks: 1024, 512, 256, 128, 64, and never below
 * the floor.  A count down to a quarter of the floor (16) gives the cap back.
 */
TEST(test_cap_halved)
{
	static const unsigned int caps[] = { 512, 256, 128, 64 };
	struct infer *in = mk("break", 1024);
	uint64_t calls, first = 0;
	size_t i;

	ASSERT(in);
	ASSERT_EQU(in->cap, 1024);
	for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		unsigned int cap = in->cap;

		for (calls = 1; calls < 100000 && in->cap == cap; calls++)
			inf_budget(in, 1u << 20);	/* 2^20 hypotheses' walks an update */
		ASSERT_EQU(in->cap, caps[i]);
		ASSERT_EQU(in->lowered, i + 1);
		if (!i)
			first = calls;
		ASSERT_EQU(calls, first);	/* each step after the same budget */
	}
	for (calls = 0; calls < 4 * first; calls++)
		inf_budget(in, 1u << 20);
	ASSERT_EQU(in->cap, 64);
	ASSERT_EQU(in->lowered, 4);
	inf_budget(in, 0);	/* one hypothesis: at most 16 */
	ASSERT_EQU(in->cap, 1024);
	infer_destroy(in);
}

/*
 * setup_window's update, but traced at 50, after the window's unlock at 40.
 * A tracepoint fires after the change it reports, so if the last event
 * before it on its CPU came before the unlock (t_min 30), the change may have
 * been made inside the window: the same 4 orders stand, and root = 0 ("before
 * all visits": the walk stopped at flushable L) is explained.  If that CPU
 * had traced something after the unlock (t_min 45), the change came after
 * every visit: one order, in which L, P and root were reset and the +64
 * moved a batch into each: root = 64, and 0 is a miss.
 */
static int setup_late(struct infer *in, uint64_t t_min)
{
	int ret = upd(in, 1, 0, L, 64);

	ret = ret ? ret : upd(in, 2, 0, L, 64);
	ret = ret ? ret : upd(in, 3, 1, L, 64);
	ret = ret ? ret : infer_locked(in, 10, ROOT, 0, 30);
	ret = ret ? ret : infer_unlock(in, 40);
	return ret ? ret : infer_update(in, 50, t_min, 1, L, SIM_ITEM_STATE, 0, 64, 50);
}

TEST(test_late_update)
{
	struct infer *in = mk("break", 0);
	bool su, nf;

	ASSERT(in);
	ASSERT_EQ(setup_late(in, 30), 0);
	ASSERT_EQU(infer_nr_hyp(in), 4);
	ASSERT_EQ(infer_check(in, ROOT, 0, false, &su, &nf), 0);
	ASSERT(su);	/* "before all visits": the walk stopped at flushable L */
	infer_destroy(in);

	in = mk("break", 0);
	ASSERT(in);
	ASSERT_EQ(setup_late(in, 45), 0);
	ASSERT_EQU(infer_nr_hyp(in), 1);
	ASSERT_EQ(infer_check(in, ROOT, 64, false, &su, &nf), 0);
	ASSERT(su);
	ASSERT_EQ(infer_check(in, ROOT, 0, false, &su, &nf), 0);
	ASSERT(!su);
	infer_destroy(in);
}

/*
 * The late update with the next window's lock traced before it.  break, 2
 * CPUs, TH 128; root -> P -> L.  Three cpu0 L +64 move a batch each into L,
 * P and root: all at 192, flushable; cpu0's tree holds L, P, root, cpu1's
 * is empty (@cpu1_too: the third update is cpu1's instead, which links the
 * path on cpu1's tree; the counters are the same).  Window on cpu 0 over
 * root [10, 40], list [L, P, root]; the next CPU's window (cpu 1, root)
 * locks at 42; cpu0 L +64 is traced at 50, nothing on cpu 0 since 3.
 * Made inside the first window, the orders are:
 *   before all visits: L flushable, the walk stops; the visits zero all: 0/0/0
 *   after L:    L 0 -> 64 (a batch), P flushable stops it; visits: 64/0/0
 *   after P:    L and P take it, root stops it: 64/64/0
 *   after root: 64/64/64
 * Made after it: the visits first, then the batch into all three: 64/64/64,
 * the one order of a window closed at 42 (cpu 1's list is empty).  The
 * kernel reads root = 0: only the first window held open past the next
 * one's lock explains it.  Not held:
 *   - with an order sink (the replay would have closed the window);
 *   - after another event (@between: cpu1 L +64 at 45, not late: after the
 *     visits it moves 64 into L, P and root, then the update at 50 another
 *     64: 128 each, one order);
 *   - where cpu 1's window visits L's path (@cpu1_too: its list is
 *     [L, P, root]).  There the update is in cpu 1's window, and its visits
 *     reset the atomics: before them 64/64/64 zeroed, after L 64/0/0, after
 *     P 64/64/0, after root 64/64/64: 4 orders, root = 0 explained again.
 */
static int late_rec(void *ctx, uint64_t tag, size_t p)
{
	(void)ctx;
	(void)tag;
	(void)p;
	return 0;
}

static int setup_late_held(struct infer *in, bool cpu1_too, bool between)
{
	int ret = upd(in, 1, 0, L, 64);

	ret = ret ? ret : upd(in, 2, 0, L, 64);
	ret = ret ? ret : upd(in, 3, cpu1_too ? 1 : 0, L, 64);
	ret = ret ? ret : infer_locked(in, 10, ROOT, 0, 30);
	ret = ret ? ret : infer_unlock(in, 40);
	ret = ret ? ret : infer_locked(in, 42, ROOT, 1, 10);
	if (between)
		ret = ret ? ret : upd(in, 45, 1, L, 64);
	ret = ret ? ret : infer_update(in, 50, 3, 0, L, SIM_ITEM_STATE, 0, 64, 50);
	return ret ? ret : infer_unlock(in, 52);
}

TEST(test_late_past_next_lock)
{
	static const struct { bool cpu1_too, between, sink; size_t hyp; uint64_t held; } c[] = {
		{ false, false, false, 4, 1 },
		{ true, false, false, 4, 0 },
		{ false, true, false, 1, 0 },
		{ false, false, true, 1, 0 },
	};
	struct infer *in;
	size_t i;
	bool su, nf;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		in = mk("break", 0);
		ASSERT(in);
		if (c[i].sink)
			infer_set_order_sink(in, late_rec, NULL);
		ASSERT_EQ(setup_late_held(in, c[i].cpu1_too, c[i].between), 0);
		ASSERT_EQU(infer_nr_hyp(in), c[i].hyp);
		ASSERT_EQU(in->late_held, c[i].held);
		ASSERT_EQ(infer_check(in, ROOT, 0, false, &su, &nf), 0);
		ASSERT(su == (c[i].hyp == 4));
		infer_destroy(in);
	}
}

/*
 * The cut (infer_cut.c) does not make the branches the cap would drop: the
 * same random trace through an inference that makes every branch (no_cut)
 * must keep the very same hypotheses after every event (where each lies in
 * the array is read by nothing), answer every read the same, say "the cap
 * dropped some" at the same events
 * and hand the same order to the sink.  Tree root -> A (-> A1, A2), B
 * (-> B1), 3 CPUs, cap 16 (saturated most of the time); windows over the root
 * or A on a random CPU with 4-11 updates of -80..80 inside; a read of a
 * random node after most windows, with the value one of the hypotheses holds
 * (so that reads prune without emptying).  Per policy.  Nor does it hold
 * them all at once: fewer hypotheses after an update's branches, where
 * some updates' cut is the cap + 2-th cheapest candidate's.
 */
#define CUT_ORDERS	4096

struct cut_rec {
	uint64_t	tag[CUT_ORDERS];
	size_t		p[CUT_ORDERS];
	size_t		n;
};

static int cut_rec(void *ctx, uint64_t tag, size_t p)
{
	struct cut_rec *o = ctx;

	if (o->n < CUT_ORDERS) {
		o->tag[o->n] = tag;
		o->p[o->n] = p;
	}
	o->n++;
	return 0;
}

static uint64_t cut_rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* A hypothesis as cut_same() compares it. */
struct cut_id {
	uint64_t	hash, cost, p;
};

static int cut_id_cmp(const void *a, const void *b)
{
	const struct cut_id *x = a, *y = b;

	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	if (x->cost != y->cost)
		return x->cost < y->cost ? -1 : 1;
	return (x->p > y->p) - (x->p < y->p);
}

/* The hypotheses of @in, by hash, into @id (nr_h of them). */
static void cut_ids(const struct infer *in, struct cut_id *id)
{
	size_t i;

	for (i = 0; i < in->nr_h; i++)
		id[i] = (struct cut_id){ .hash = inf_hyp_hash(&in->h[i]), .cost = in->h[i].cost,
					 .p = in->h[i].p };
	qsort(id, in->nr_h, sizeof(*id), cut_id_cmp);
}

/* The same hypotheses (where they lie in the array is read by nothing: inf_keep()). */
static bool cut_same(const struct infer *a, const struct infer *b)
{
	struct cut_id *x, *y;
	bool same;

	if (a->nr_h != b->nr_h || a->max_kept != b->max_kept)
		return false;
	x = calloc(a->nr_h + 1, sizeof(*x));
	y = calloc(b->nr_h + 1, sizeof(*y));
	if (!x || !y) {
		free(x);
		free(y);
		return false;
	}
	cut_ids(a, x);
	cut_ids(b, y);
	same = !memcmp(x, y, a->nr_h * sizeof(*x));
	free(x);
	free(y);
	return same;
}

/*
 * Two inferences of one policy fed the same random trace: @a takes the fast
 * path under test, @b the path it must equal.  The tree root -> A (-> A1,
 * A2), B (-> B1); the orders each hands to its sink are kept.
 */
static const uint64_t pair_ids[] = { 30, 31, 32, 40, 41 };	/* A, A1, A2, B, B1 */
static const uint64_t pair_par[] = { ROOT, 30, 30, ROOT, 40 };

struct settle_log;

struct pair {
	struct infer		*a, *b;
	struct cut_rec		*oa, *ob;
	struct settle_log	*sl;	/* infer_settle() on @a after each update (test_settle) */
};

static void settle_step(struct test_ctx *t, struct pair *pr, uint64_t fed);

static void pair_open(struct test_ctx *t, struct pair *pr, const char *pol, unsigned int cpus,
		      size_t max_hyp)
{
	struct sim_params sp = { .policy = sim_policy_find(pol), .nr_possible = cpus,
				 .nr_online = cpus, .batch = SIM_CHARGE_BATCH };
	size_t j;

	pr->oa = calloc(1, sizeof(*pr->oa));
	pr->ob = calloc(1, sizeof(*pr->ob));
	pr->a = infer_create(&sp, max_hyp);
	pr->b = infer_create(&sp, max_hyp);
	ASSERT(pr->a && pr->b && pr->oa && pr->ob);
	infer_set_order_sink(pr->a, cut_rec, pr->oa);
	infer_set_order_sink(pr->b, cut_rec, pr->ob);
	for (j = 0; j < 5; j++) {
		ASSERT_EQ(sim_cgroup_add(infer_base(pr->a), 0, pair_ids[j], pair_par[j]), 0);
		ASSERT_EQ(sim_cgroup_add(infer_base(pr->b), 0, pair_ids[j], pair_par[j]), 0);
	}
}

/*
 * After most windows (3 in 4), a read of a random node, or now and then the
 * root, with the value one of @a's hypotheses holds for its atomic (so that
 * reads prune without emptying), flushable above @th: both answer alike and
 * stay @same.  @close_b: @b's window is closed first like @a's.
 */
static void pair_read(struct test_ctx *t, struct pair *pr, uint64_t *x, uint64_t *ts, int64_t th,
		      bool close_b, bool (*same)(const struct infer *, const struct infer *))
{
	uint64_t id;
	bool su[2], nf[2];
	int64_t v;

	if (!(cut_rnd(x) % 4))
		return;
	id = cut_rnd(x) % 6 ? pair_ids[cut_rnd(x) % 5] : ROOT;
	*ts += 100;
	ASSERT_EQ(inf_close_unless_late(pr->a, *ts, *ts), 0);
	if (close_b)
		ASSERT_EQ(inf_close_unless_late(pr->b, *ts, *ts), 0);
	v = inf_get(pr->a, &pr->a->h[cut_rnd(x) % pr->a->nr_h], inf_key(id, INF_ATOMIC));
	ASSERT_EQ(infer_check(pr->a, id, v, v > th, &su[0], &nf[0]), 0);
	ASSERT_EQ(infer_check(pr->b, id, v, v > th, &su[1], &nf[1]), 0);
	ASSERT(su[0] == su[1] && nf[0] == nf[1]);
	ASSERT(same(pr->a, pr->b));
}

/* Both finish and handed the same orders to their sinks. */
static void pair_finish(struct test_ctx *t, struct pair *pr, uint64_t ts)
{
	size_t j;

	ASSERT_EQ(infer_finish(pr->a, ts + 1), 0);
	ASSERT_EQ(infer_finish(pr->b, ts + 1), 0);
	ASSERT_EQU(pr->oa->n, pr->ob->n);
	for (j = 0; j < pr->oa->n && j < CUT_ORDERS; j++)
		ASSERT(pr->oa->tag[j] == pr->ob->tag[j] && pr->oa->p[j] == pr->ob->p[j]);
}

static void pair_free(struct pair *pr)
{
	infer_destroy(pr->a);
	infer_destroy(pr->b);
	free(pr->oa);
	free(pr->ob);
}

/*
 * How pair_windows() drives a pair: @cpus CPUs, an update's value from
 * @value, reads flushable above @read_th (pair_read()'s @close_b and @same).
 */
struct pair_drive {
	unsigned int	cpus;
	int64_t		(*value)(uint64_t *x);
	int64_t		read_th;
	bool		close_b;
	bool		(*same)(const struct infer *, const struct infer *);
};

/*
 * 400 rounds of a lock window (of the root, or now and then A, on a random
 * CPU) holding 4-11 updates on random CPUs and nodes, after 3 updates
 * outside it, then a read (pair_read()).  After every update both hold
 * @d->same hypotheses and the cap dropped on both or on neither.  *@ret_out:
 * the first error @a gave (@b must give the same).
 */
static void pair_windows(struct test_ctx *t, struct pair *pr, uint64_t *x, uint64_t *ts,
			 const struct pair_drive *d, int *ret_out)
{
	uint64_t ca = 0, cb = 0;
	int round, i, ret = 0;

	*ret_out = 0;
	for (round = 0; round < 400 && !ret && !t->failed; round++) {
		int n = 4 + (int)(cut_rnd(x) % 8);
		uint64_t top = cut_rnd(x) % 3 ? ROOT : 30;
		unsigned int wcpu = (unsigned int)(cut_rnd(x) % d->cpus);

		for (i = -3; i < n && !ret; i++) {
			unsigned int cpu = (unsigned int)(cut_rnd(x) % d->cpus);
			uint64_t id = pair_ids[cut_rnd(x) % 5];
			int64_t v = d->value(x);

			if (!i) {
				ret = infer_locked(pr->a, *ts, top, wcpu, 40 * (uint64_t)n);
				ASSERT_EQ(ret, infer_locked(pr->b, *ts, top, wcpu, 40 * (uint64_t)n));
			}
			*ts += 1 + cut_rnd(x) % 30;
			ret = ret ? ret : infer_update(pr->a, *ts, *ts, cpu, id, SIM_ITEM_STATE, 0, v, *ts);
			ASSERT_EQ(ret, infer_update(pr->b, *ts, *ts, cpu, id, SIM_ITEM_STATE, 0, v, *ts));
			if (pr->sl && !ret)
				settle_step(t, pr, *ts);
			ASSERT(d->same(pr->a, pr->b));
			ASSERT_EQ(pr->a->capped > ca, pr->b->capped > cb);
			ca = pr->a->capped;
			cb = pr->b->capped;
		}
		*ts += 5;
		ASSERT_EQ(infer_unlock(pr->a, *ts), 0);
		ASSERT_EQ(infer_unlock(pr->b, *ts), 0);
		pair_read(t, pr, x, ts, d->read_th, d->close_b, d->same);
		*ret_out = ret;
	}
}

/* pair_windows() from @seed, then pair_finish(): both end without error. */
static void pair_run(struct test_ctx *t, struct pair *pr, const struct pair_drive *d, uint64_t seed)
{
	uint64_t x = seed, ts = 1;
	int ret;

	pair_windows(t, pr, &x, &ts, d, &ret);
	if (t->failed)
		return;
	ASSERT_EQ(ret, 0);
	pair_finish(t, pr, ts);
}

/* -80..80 */
static int64_t cut_value(uint64_t *x)
{
	return (int64_t)(cut_rnd(x) % 161) - 80;
}

static void cut_run(struct test_ctx *t, const char *pol)
{
	static const struct pair_drive d = { .cpus = 3, .value = cut_value, .read_th = 128,
					     .close_b = false, .same = cut_same };
	struct pair pr = { 0 };

	pair_open(t, &pr, pol, 3, 16);
	if (t->failed)
		goto out;
	pr.b->no_cut = true;
	pair_run(t, &pr, &d, 88172645463325252ull);
	if (t->failed)
		goto out;
	ASSERT(pr.a->unmade_total > 0);	/* the cut did leave branches out */
	ASSERT_EQU(pr.b->unmade_total, 0);
	/* nor held them all at once, the cut set by the candidates' ranks too */
	ASSERT(pr.a->max_held < pr.b->max_held);
	ASSERT(pr.a->cut_ranked > 0);
out:
	pair_free(&pr);
}

TEST(test_cut_exact)
{
	cut_run(t, "break");
	cut_run(t, "continue");
	cut_run(t, "legacy");
}

/*
 * infer_settle() hands the decisions every hypothesis shares to the sink
 * early: the same random trace as test_cut_exact's (cap 16, mostly
 * saturated), @a settled after every update and @b never, must keep the same
 * hypotheses, and both sinks must get the very same decisions in the same
 * order (pair_finish()).  And what a settle says is open must be all that is:
 * every decision of the final order not yet handed over at a settle is for
 * an update fed after it, or at or after the oldest it named (the tags are
 * the updates' ts, in feed order).  Not vacuous: settles hand over decisions a fold would not
 * yet have, and name open ones.
 */
#define SETTLE_MAX	8192

struct settle_log {
	size_t		sent[SETTLE_MAX];	/* decisions in @a's sink at the settle */
	uint64_t	oldest[SETTLE_MAX];	/* the oldest tag it named open */
	uint64_t	fed[SETTLE_MAX];	/* the last update's tag before it */
	size_t		n, early, named;
};

static void settle_open(void *ctx, uint64_t tag)
{
	uint64_t *oldest = ctx;

	if (tag < *oldest)
		*oldest = tag;
}

static void settle_step(struct test_ctx *t, struct pair *pr, uint64_t fed)
{
	struct settle_log *sl = pr->sl;
	uint64_t oldest = UINT64_MAX;
	size_t before = pr->oa->n;
	int ret = infer_settle(pr->a, settle_open, &oldest);

	ASSERT(ret >= 0);
	if (sl->n == SETTLE_MAX)
		return;
	sl->early += pr->oa->n > before;
	sl->named += oldest != UINT64_MAX;
	sl->sent[sl->n] = pr->oa->n;
	sl->fed[sl->n] = fed;
	sl->oldest[sl->n++] = oldest;
}

static void settle_run(struct test_ctx *t, const char *pol)
{
	static const struct pair_drive d = { .cpus = 3, .value = cut_value, .read_th = 128,
					     .close_b = true, .same = cut_same };
	struct pair pr = { 0 };
	size_t i, j;

	pr.sl = calloc(1, sizeof(*pr.sl));
	ASSERT(pr.sl);
	pair_open(t, &pr, pol, 3, 16);
	if (t->failed)
		goto out;
	pair_run(t, &pr, &d, 88172645463325252ull);
	if (t->failed)
		goto out;
	ASSERT(pr.oa->n <= CUT_ORDERS);
	for (i = 0; i < pr.sl->n; i++)
		for (j = pr.sl->sent[i]; j < pr.oa->n; j++)
			ASSERT(pr.oa->tag[j] > pr.sl->fed[i] || pr.oa->tag[j] >= pr.sl->oldest[i]);
	ASSERT(pr.sl->early > 0);
	ASSERT(pr.sl->named > 0);
out:
	pair_free(&pr);
	free(pr.sl);
}

TEST(test_settle)
{
	settle_run(t, "break");
	settle_run(t, "continue");
	settle_run(t, "legacy");
}

/*
 * Between windows, an update whose walk every table holding a counter of its
 * path would take as the base's does writes no table (inf_lazy_alike()):
 * the per-CPU adds wait in the key's pend.  The same random trace through an
 * inference that walks every such table (agg off) must hold the same
 * hypotheses (as a set: a skipped compaction leaves an older order) with the
 * same counters after every event, answer every read the same and hand the
 * same order to the sink.  Where the bounds cannot tell, only the tables the
 * lists' values name are asked (inf_lazy_select()), relative to the pend,
 * and the lists are made anew whenever they hold 4 nodes an entry.
 * The cut's tree and CPUs; windows of 2-6 updates,
 * then 0-199 updates of -3..3 (now and then -80..80) between windows, most
 * of them alike.  Per policy.
 */
static uint64_t lazy_hash(const struct infer *in, const struct inf_hyp *h)
{
	const struct idmap_ent *e;
	uint64_t sum = 0;
	uint32_t pos = 0;

	while ((e = idmap_next(&h->e, &pos))) {
		int64_t x = in->lazy ? idmap_get(&in->owned, e->key, -1) : -1;

		sum += inf_mix(e->key, e->val + (x < 0 ? 0 : in->ka[x].pend));
	}
	return inf_hash_of(h->p, sum) ^ h->cost * 0x9e3779b97f4a7c15ull;
}

static int lazy_u64_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return (*x > *y) - (*x < *y);
}

static bool lazy_same(const struct infer *a, const struct infer *b)
{
	uint64_t ha[64], hb[64];
	size_t i;

	if (a->nr_h != b->nr_h || a->nr_h > 64)
		return false;
	for (i = 0; i < a->nr_h; i++) {
		ha[i] = lazy_hash(a, &a->h[i]);
		hb[i] = lazy_hash(b, &b->h[i]);
	}
	qsort(ha, a->nr_h, sizeof(*ha), lazy_u64_cmp);
	qsort(hb, b->nr_h, sizeof(*hb), lazy_u64_cmp);
	return !memcmp(ha, hb, a->nr_h * sizeof(*ha));
}

static void lazy_run(struct test_ctx *t, const char *pol)
{
	struct pair pr = { 0 };
	uint64_t x = 0x2545f4914f6cdd1dull, ts = 1;
	int round, i, ret = 0;

	pair_open(t, &pr, pol, 3, 64);
	if (t->failed)
		goto out;
	ASSERT(pr.a->agg);
	pr.b->agg = false;
	pr.a->relist_slack = 0;	/* lists made anew as soon as they hold 4 nodes an entry */
	for (round = 0; round < 300 && !ret && !t->failed; round++) {
		int n = 2 + (int)(cut_rnd(&x) % 5), m = (int)(cut_rnd(&x) % 200);
		uint64_t top = cut_rnd(&x) % 3 ? ROOT : 30;
		unsigned int wcpu = (unsigned int)(cut_rnd(&x) % 3);

		ASSERT_EQ(infer_locked(pr.a, ts, top, wcpu, 40 * (uint64_t)n), 0);
		ASSERT_EQ(infer_locked(pr.b, ts, top, wcpu, 40 * (uint64_t)n), 0);
		for (i = 0; i < n + m && !ret; i++) {
			unsigned int cpu = (unsigned int)(cut_rnd(&x) % 3);
			uint64_t id = pair_ids[cut_rnd(&x) % 5];
			int64_t v = cut_rnd(&x) % 16 ? (int64_t)(cut_rnd(&x) % 7) - 3 :
						       (int64_t)(cut_rnd(&x) % 161) - 80;

			if (i == n) {
				ts += 5;
				ASSERT_EQ(infer_unlock(pr.a, ts), 0);
				ASSERT_EQ(infer_unlock(pr.b, ts), 0);
				ts += 100;
			}
			ts += 1 + cut_rnd(&x) % 30;
			ret = infer_update(pr.a, ts, ts, cpu, id, SIM_ITEM_STATE, 0, v, ts);
			ASSERT_EQ(ret, infer_update(pr.b, ts, ts, cpu, id, SIM_ITEM_STATE, 0, v, ts));
			ASSERT(lazy_same(pr.a, pr.b));
		}
		if (n + m == n) {
			ts += 5;
			ASSERT_EQ(infer_unlock(pr.a, ts), 0);
			ASSERT_EQ(infer_unlock(pr.b, ts), 0);
		}
		/* an atomic, the value read: never pending */
		pair_read(t, &pr, &x, &ts, 128, true, lazy_same);
	}
	if (t->failed)
		goto out;
	ASSERT_EQ(ret, 0);
	pair_finish(t, &pr, ts);
	if (t->failed)
		goto out;
	ASSERT(pr.a->lazy_alike > 1000);	/* most lazy updates wrote no table */
	ASSERT_EQU(pr.b->lazy_alike, 0);
	/* the others asked only the tables whose lists name a step apart, some of which wrote */
	ASSERT(pr.a->lazy_asked < pr.a->lazy_listed);
	ASSERT(pr.a->lazy_walked > 0 && pr.a->lazy_walked < pr.a->lazy_asked);
	ASSERT_EQU(pr.b->lazy_listed, 0);
	ASSERT(pr.a->relists > 0);
out:
	pair_free(&pr);
}

TEST(test_lazy_exact)
{
	lazy_run(t, "break");
	lazy_run(t, "continue");
	lazy_run(t, "legacy");
}

/*
 * An update's path built asking whether the list holds its reach
 * (inf_path_build() with @unheld, as infer_update() builds it beside an open
 * diagram) answers as inf_lazy_unheld()'s own walk, and holds only the nodes
 * to the reach where the answer is yes; completed (inf_path_complete()), it
 * is the path built whole, field by field.
 * The deep chain of test_order_found_deep (root -> A1 .. A17 -> P -> L),
 * break / continue / legacy, 2 CPUs: first three updates of L and a window
 * over the root with one inside it (20 orders left once P is read, which
 * hold nearly every node), then 3000 random updates of -80..80 on random
 * nodes of the chain, reads of P now and then, and every 40 or so a flush
 * of a random memcg with no update inside (resets, no branch); half way,
 * every memcg read at one order's value leaves that one, holding little.
 * Break's walks stop at every depth as counters fill and flushes empty
 * them: its paths are partial at many lengths; continue's and legacy's
 * walks go to the root, never partial.
 */
static void path_reach_run(struct test_ctx *t, const char *pol)
{
	struct sim_params sp = { .policy = sim_policy_find(pol), .nr_possible = 2,
				 .nr_online = 2, .batch = SIM_CHARGE_BATCH };
	struct infer *in = infer_create(&sp, 0);
	uint64_t ids[DEEP_A + 3], x = 0x2545f4914f6cdd1dull, ts = 200;
	size_t i, j, partial = 0, lens = 0, nr_unheld = 0, held = 0;
	bool su, nf;

	ASSERT(in);
	ids[0] = ROOT;
	for (i = 1; i <= DEEP_A; i++) {
		ids[i] = DEEP_ID(i);
		ASSERT_EQ(sim_cgroup_add(infer_base(in), 0, ids[i], ids[i - 1]), 0);
	}
	ids[DEEP_A + 1] = P;
	ids[DEEP_A + 2] = L;
	ASSERT_EQ(sim_cgroup_add(infer_base(in), 0, P, ids[DEEP_A]), 0);
	ASSERT_EQ(sim_cgroup_add(infer_base(in), 0, L, P), 0);
	ASSERT_EQ(setup_window(in), 0);
	ASSERT_EQ(infer_check(in, P, sim_stats_updates(infer_base(in), P), false, &su, &nf), 0);
	for (i = 0; i < 3000 && !t->failed; i++) {
		unsigned int cpu = (unsigned int)(cut_rnd(&x) % 2);
		uint64_t id = ids[DEEP_A + 2 - cut_rnd(&x) % 6 * cut_rnd(&x) % (DEEP_A + 3)];
		int64_t val = (int64_t)(cut_rnd(&x) % 161) - 80;
		uint32_t abs_val = sim_walk_abs(val);
		struct inf_path whole, part;
		bool unheld;

		ts += 1 + cut_rnd(&x) % 5;
		if (abs_val) {
			ASSERT_EQ(inf_path_build(in, ts, cpu, id, abs_val, &whole, NULL), 0);
			ASSERT_EQ(inf_path_build(in, ts, cpu, id, abs_val, &part, &unheld), 0);
			ASSERT(!whole.partial && !whole.cut);
			ASSERT(unheld == inf_lazy_unheld(in, id, cpu, abs_val));
			ASSERT(!part.partial || unheld);	/* the list reads the whole path */
			nr_unheld += unheld;
			held += inf_lazy_unheld_may(in) && !unheld;
			if (part.partial) {
				ASSERT(part.n == part.reach && part.n < whole.n);
				partial++;
				lens |= 1u << part.n;
			}
			inf_path_complete(in, &part);
			ASSERT(!part.partial);
			ASSERT_EQU(part.n, whole.n);
			ASSERT_EQU(part.reach, whole.reach);
			ASSERT(part.cut == whole.cut);
			for (j = 0; j < whole.n && !t->failed; j++) {
				ASSERT_EQU(part.id[j], whole.id[j]);
				ASSERT_EQ(part.nd[j], whole.nd[j]);
				ASSERT_EQU(part.vis[j], whole.vis[j]);
				ASSERT_EQ(part.base[2 * j], whole.base[2 * j]);
				ASSERT_EQ(part.base[2 * j + 1], whole.base[2 * j + 1]);
				ASSERT_EQ(part.post[2 * j], whole.post[2 * j]);
				ASSERT_EQ(part.post[2 * j + 1], whole.post[2 * j + 1]);
			}
		}
		ASSERT_EQ(upd(in, ts, cpu, id, val), 0);
		/* now and then a flush of a random memcg with no update inside: resets, no branch */
		if (cut_rnd(&x) % 40 == 0) {
			ts += 2;
			ASSERT_EQ(infer_locked(in, ts, ids[cut_rnd(&x) % (DEEP_A + 3)],
					       (unsigned int)(cut_rnd(&x) % 2), 1), 0);
			ASSERT_EQ(infer_unlock(in, ts + 1), 0);
			ts += 2;
		}
		if (cut_rnd(&x) % 200 == 0)
			ASSERT_EQ(infer_check(in, P, sim_stats_updates(infer_base(in), P),
					      sim_needs_flush(infer_base(in), P), &su, &nf), 0);
		/*
		 * Half way, every memcg read at the first order's value: the
		 * orders left agree on every atomic, most tables empty, few
		 * nodes held from then on.
		 */
		for (j = 0; i == 1500 && j < DEEP_A + 3 && !t->failed; j++) {
			int64_t v = inf_get(in, &in->h[0], inf_key(ids[j], INF_ATOMIC));

			ASSERT_EQ(infer_check(in, ids[j], v, v > (int64_t)sim_threshold(infer_base(in)),
					      &su, &nf), 0);
		}
	}
	/* the unheld answer both ways */
	ASSERT(nr_unheld > 100 && held > 100);
	if (strcmp(pol, "break")) {
		/* continue's and legacy's steps never stop a walk: every path is whole */
		ASSERT_EQU(partial, 0);
	} else {
		/* partial paths of at least ten lengths */
		ASSERT(partial > 100);
		ASSERT(__builtin_popcountll(lens) >= 10);
	}
	infer_destroy(in);
}

TEST(test_path_to_reach)
{
	path_reach_run(t, "break");
	path_reach_run(t, "continue");
	path_reach_run(t, "legacy");
}

/* -6..6, now and then -80..80 */
static int64_t win_value(uint64_t *x)
{
	return cut_rnd(x) % 8 ? (int64_t)(cut_rnd(x) % 13) - 6 : (int64_t)(cut_rnd(x) % 161) - 80;
}

/*
 * In a window, an update on another CPU whose path's counters no table
 * holds (or only atomics the step treats alike) is asked of no hypothesis
 * (inf_win_alike()).  The same random trace through an inference that asks
 * every hypothesis must keep the very same hypotheses after every event,
 * answer every read the same and hand the same order to the sink.  The cut's tree, 4 CPUs, windows of 4-11 updates of -6..6 (now
 * and then -80..80) over the root or A; reads as there.  Per policy.
 * @pk: against an inference that looks every path counter up in every
 * table instead (test_path_mask_exact).
 */
static void win_run(struct test_ctx *t, const char *pol, bool pk)
{
	static const struct pair_drive d = { .cpus = 4, .value = win_value, .read_th = 256,
					     .close_b = true, .same = cut_same };
	struct pair pr = { 0 };

	pair_open(t, &pr, pol, 4, 64);
	if (t->failed)
		goto out;
	if (pk)
		pr.b->no_pk = true;
	else
		pr.b->no_win_alike = true;
	pair_run(t, &pr, &d, pk ? 0x2545f4914f6cdd1dull : 0x9e3779b97f4a7c15ull);
	if (t->failed)
		goto out;
	if (pk) {
		ASSERT(pr.a->pk_masked > 100);	/* many updates looked some counter up in no table */
		ASSERT_EQU(pr.b->pk_masked, 0);
	} else {
		ASSERT(pr.a->win_alike > 100);	/* many window updates asked no hypothesis */
		ASSERT_EQU(pr.b->win_alike, 0);
	}
out:
	pair_free(&pr);
}

TEST(test_win_exact)
{
	win_run(t, "break", false);
	win_run(t, "continue", false);
	win_run(t, "legacy", false);
}

/*
 * In a window, the path's counters no table holds are looked up in no
 * table (in->pk_maybe, from wkeys once per update, set as a walk gives a
 * table one).  win_run()'s windows, on another seed, through an inference
 * that looks every counter up in every table: the same hypotheses after
 * every event, the same answers and the same order.  Per policy.
 */
TEST(test_path_mask_exact)
{
	win_run(t, "break", true);
	win_run(t, "continue", true);
	win_run(t, "legacy", true);
}

/*
 * The cap's selection (inf_keys_select(), which inf_keep() runs) against
 * qsort_r() with the order's comparison: random keys with many equal hashes
 * and costs, every size and k of a few; the first k + 1 must be, as keys,
 * the k + 1 first of the sorted reference, and none after them may come
 * before the (k + 1)-th.
 */
static int key_val_cmp(const void *a, const void *b)
{
	return inf_cost_cmp(a, b, NULL);
}

TEST(test_key_select)
{
	static const size_t sizes[] = { 1, 2, 3, 17, 33, 100, 257, 1000, 4096 };
	static const uint64_t costs[] = { 0, 1, 2, 255, 256, 1ULL << 40, UINT64_MAX - 1, UINT64_MAX };
	uint64_t hashes[8], x = 12345;
	size_t s, i, r, q;

	for (i = 0; i < 8; i++)
		hashes[i] = cut_rnd(&x) << 32 ^ cut_rnd(&x);
	hashes[0] = 0;
	hashes[1] = UINT64_MAX;
	for (r = 0; r < 4; r++)
	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
	for (q = 0; q < 4; q++) {
		size_t n = sizes[s], kk = q == 0 ? 0 : q == 1 ? n - 1 : cut_rnd(&x) % n;
		struct inf_sort_key *k = calloc(n, sizeof(*k)), *ref = calloc(n, sizeof(*ref));

		ASSERT(k && ref);
		if (t->failed)
			return;
		for (i = 0; i < n; i++) {
			/* r = 0: few distinct keys, long runs of ties; 3: mostly random */
			unsigned int m = r ? 4 * (unsigned int)r : 2;

			ref[i] = (struct inf_sort_key){
				.hash = cut_rnd(&x) % 16 >= m ? hashes[cut_rnd(&x) % 8] :
						cut_rnd(&x) << 32 ^ cut_rnd(&x),
				.cost = cut_rnd(&x) % 16 >= m ? costs[cut_rnd(&x) % 8] :
						cut_rnd(&x) << 32 ^ cut_rnd(&x),
				.idx = (uint32_t)i };
		}
		memcpy(k, ref, n * sizeof(*k));
		inf_keys_select(k, n, kk);
		qsort(ref, n, sizeof(*ref), key_val_cmp);
		for (i = kk + 1; i < n && !t->failed; i++)
			ASSERT(key_val_cmp(&k[i], &ref[kk]) >= 0);
		qsort(k, kk + 1, sizeof(*k), key_val_cmp);
		for (i = 0; i <= kk && !t->failed; i++)
			ASSERT(!key_val_cmp(&k[i], &ref[i]));
		free(k);
		free(ref);
		if (t->failed)
			return;
	}
}

TEST_MAIN(test_order_found, test_missed_after_cap, test_no_miss_before_sync, test_cap_dd_not_before_syncing, test_set_max_hyp, test_consensus, test_order_found_deep, test_no_order, test_merge, test_merge_twins,
	  test_finish_tie, test_cap, test_mirror, test_order_sink, test_cost_bounds,
	  test_cap_keeps_nearest, test_cap_dd, test_cap_dd_given_up, test_cap_dd_budget_scale, test_cap_dd_budget_wide, test_cap_halved, test_late_update, test_late_past_next_lock,
	  test_policy_from_caller, test_cut_exact, test_lazy_exact, test_win_exact, test_path_mask_exact, test_key_select,
	  test_settle, test_path_to_reach)
