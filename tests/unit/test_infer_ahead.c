// SPDX-License-Identifier: GPL-2.0
/*
 * The inference's lookahead (replay/infer/infer_ahead.c): per-CPU counters
 * that no update takes to the batch before their next visit are set back to
 * the base's, and the hypotheses that differed only there merge.  That must
 * change nothing any later step or traced value can see: two inferences fed
 * one random trace, one with the lookahead merging at every compaction, the
 * other without, with no cap, must hold the same set of (position, atomic
 * counters) after every event and answer every read alike, under each of
 * the table's policies; and the first must have merged some.
 */
#include <stdlib.h>
#include <string.h>

#include "../harness.h"
#include "infer.h"
#include "infer/infer-local.h"	/* white box: canon_always, the hypotheses' entries */

#define ROOT	SIM_ROOT_ID
#define AH_CPUS	4
#define AH_MAX	2048

static const uint64_t ah_ids[] = { 30, 31, 32, 40, 41 };	/* A, A1, A2, B, B1 */
static const uint64_t ah_par[] = { ROOT, 30, 30, ROOT, 40 };

/* MCR_EV_FLUSH in the trace: a read the driver answers from @b's hypotheses */
struct ah_trace {
	struct mcr_event	ev[AH_MAX];
	size_t			n;
	uint64_t		got;	/* events handed to the inferences so far */
};

static int ah_peek(void *ctx, uint64_t at, const struct mcr_event **ev)
{
	struct ah_trace *tr = ctx;

	if (at >= tr->n)
		return 0;
	*ev = &tr->ev[at];
	return 1;
}

static uint64_t ah_done(void *ctx)
{
	return ((struct ah_trace *)ctx)->got;
}

static uint64_t ah_rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void ah_push(struct ah_trace *tr, struct mcr_event ev)
{
	if (tr->n < AH_MAX)
		tr->ev[tr->n++] = ev;
}

/*
 * Rounds of a few updates, then a lock window on a random CPU (of the root,
 * or now and then A) with updates from every CPU inside, then a read.  Most
 * values are small, so that per-CPU counters stay below the batch for a
 * while and differ between orders; some are large, and cross it.
 */
static void ah_make(struct ah_trace *tr, uint64_t seed)
{
	uint64_t x = seed, ts = 1;
	int round, i;

	tr->n = tr->got = 0;
	for (round = 0; tr->n + 40 < AH_MAX; round++) {
		int n = 2 + (int)(ah_rnd(&x) % 5);
		int wcpu = (int)(ah_rnd(&x) % AH_CPUS);
		uint64_t top = ah_rnd(&x) % 4 ? ROOT : 30;

		for (i = -3; i < n; i++) {
			int64_t v = ah_rnd(&x) % 8 ? 1 + (int64_t)(ah_rnd(&x) % 6) :
				    40 + (int64_t)(ah_rnd(&x) % 40);

			if (!i)
				ah_push(tr, (struct mcr_event){ .ts = ts, .kind = MCR_EV_LOCKED,
					.id = top, .item = wcpu, .cpu = wcpu });
			ts += 1 + ah_rnd(&x) % 30;
			ah_push(tr, (struct mcr_event){ .ts = ts, .kind = MCR_EV_STATE,
				.cpu = (int)(ah_rnd(&x) % AH_CPUS), .id = ah_ids[ah_rnd(&x) % 5],
				.val = ah_rnd(&x) % 3 ? v : -v });
		}
		ts += 5;
		ah_push(tr, (struct mcr_event){ .ts = ts, .kind = MCR_EV_UNLOCK, .id = top,
						.item = wcpu, .cpu = wcpu });
		ts += 100;
		if (ah_rnd(&x) % 3)
			ah_push(tr, (struct mcr_event){ .ts = ts, .kind = MCR_EV_FLUSH,
				.id = ah_rnd(&x) % 6 ? ah_ids[ah_rnd(&x) % 5] : ROOT,
				.item = (int)(ah_rnd(&x) % 1000) });
		ts += 100000;	/* past INF_LATE_NS: the next window's updates are not late */
	}
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/*
 * The distinct (position, atomic counters) of @in's hypotheses, sorted, into
 * @out: the values each reads, entry or base (a lone survivor of a read is
 * folded into the base, so the two inferences' bases may differ); the adds
 * lazy mode holds back written first, as a compaction does.
 */
static size_t ah_atomics(struct infer *in, uint64_t *out)
{
	size_t i, j, n = 0;

	inf_lazy_sync(in);
	for (i = 0; i < in->nr_h; i++) {
		const struct inf_hyp *h = &in->h[i];
		uint64_t sum = 0;

		for (j = 0; j <= 5; j++) {
			uint64_t key = inf_key(j < 5 ? ah_ids[j] : ROOT, INF_ATOMIC);

			sum += inf_mix(key, inf_get(in, h, key));
		}
		out[i] = inf_hash_of(in->win ? h->p : 0, sum);
	}
	qsort(out, in->nr_h, sizeof(*out), u64_cmp);
	for (i = 0; i < in->nr_h; i++)
		if (!i || out[i] != out[i - 1])
			out[n++] = out[i];
	return n;
}

static bool ah_same(struct infer *a, struct infer *b)
{
	uint64_t *x = calloc(a->nr_h + 1, sizeof(*x)), *y = calloc(b->nr_h + 1, sizeof(*y));
	size_t nx, ny;
	bool same;

	if (!x || !y) {
		free(x);
		free(y);
		return false;
	}
	nx = ah_atomics(a, x);
	ny = ah_atomics(b, y);
	same = nx == ny && !memcmp(x, y, nx * sizeof(*x));
	free(x);
	free(y);
	return same;
}

/* An inference with no cap to speak of, on the test's tree; NULL on failure. */
static struct infer *ah_new(const char *pol)
{
	struct sim_params sp = { .policy = sim_policy_find(pol), .nr_possible = AH_CPUS,
				 .nr_online = AH_CPUS, .batch = SIM_CHARGE_BATCH };
	struct infer *in = infer_create(&sp, 1u << 20);
	size_t j;

	for (j = 0; in && j < 5; j++)
		if (sim_cgroup_add(infer_base(in), 0, ah_ids[j], ah_par[j])) {
			infer_destroy(in);
			return NULL;
		}
	return in;
}

/* Event @ev to both; a read is answered with a value one of @b's hypotheses holds. */
static void ah_feed(struct test_ctx *t, struct infer *a, struct infer *b,
		    const struct mcr_event *ev)
{
	struct infer *in[2] = { a, b };
	bool su[2], nf[2];
	int64_t v;
	int k;

	switch (ev->kind) {
	case MCR_EV_LOCKED:
		for (k = 0; k < 2; k++)
			ASSERT_EQ(infer_locked(in[k], ev->ts, ev->id, (unsigned int)ev->item, 30), 0);
		break;
	case MCR_EV_UNLOCK:
		for (k = 0; k < 2; k++)
			ASSERT_EQ(infer_unlock(in[k], ev->ts), 0);
		break;
	case MCR_EV_FLUSH:
		for (k = 0; k < 2; k++)
			ASSERT_EQ(inf_close_unless_late(in[k], ev->ts, ev->ts), 0);
		v = inf_get(b, &b->h[(size_t)ev->item % b->nr_h], inf_key(ev->id, INF_ATOMIC));
		for (k = 0; k < 2; k++)
			ASSERT_EQ(infer_check(in[k], ev->id, v, v > 4 * SIM_CHARGE_BATCH, &su[k],
					      &nf[k]), 0);
		ASSERT(su[0] == su[1] && nf[0] == nf[1]);
		break;
	default:
		for (k = 0; k < 2; k++)
			ASSERT_EQ(infer_update(in[k], ev->ts, ev->ts, (unsigned int)ev->cpu, ev->id,
					       SIM_ITEM_STATE, 0, ev->val, ev->ts), 0);
	}
}

static void ah_run(struct test_ctx *t, const char *pol, uint64_t seed)
{
	struct ah_trace *tr = calloc(1, sizeof(*tr));
	struct infer *a = NULL, *b = NULL;
	struct infer_ahead ahead = { .peek = ah_peek, .done = ah_done, .ctx = tr };
	bool fewer = false;

	a = ah_new(pol);
	b = ah_new(pol);
	if (!tr || !a || !b)
		FAILF("out of memory");	/* leaks what was made: the test has failed */
	infer_set_ahead(a, &ahead);
	a->canon_always = true;
	ah_make(tr, seed);
	while (tr->got < tr->n && !t->failed) {
		const struct mcr_event *ev = &tr->ev[tr->got++];

		ah_feed(t, a, b, ev);
		if (t->failed)
			break;
		ASSERT(ah_same(a, b));
		fewer |= a->nr_h < b->nr_h;
	}
	if (t->failed)
		goto out;
	ASSERT(infer_inert_keys(a) > 0);	/* some counters were inert */
	ASSERT(fewer);				/* and that merged hypotheses */
	ASSERT_EQU(infer_inert_keys(b), 0);
	ASSERT_EQU(infer_capped(a) + infer_capped(b), 0);
out:
	infer_destroy(a);
	infer_destroy(b);
	free(tr);
}

TEST(test_inert_merge_exact)
{
	ah_run(t, "break", 88172645463325252ull);
	ah_run(t, "break", 1234567);
	ah_run(t, "continue", 88172645463325252ull);
	ah_run(t, "legacy", 88172645463325252ull);
}

TEST_MAIN(test_inert_merge_exact)
