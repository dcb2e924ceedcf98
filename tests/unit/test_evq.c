// SPDX-License-Identifier: GPL-2.0
/*
 * The engine's event queue: a source with take() (many events a call) gives
 * the same events, the same lookahead bound and its error at the same event
 * as the same source read by next() alone.
 */
#include <errno.h>
#include <stdlib.h>

#include "../harness.h"
#include "evq.h"

/* Events ts 0 .. n - 1, then 0 or the error; next() calls counted. */
struct seq_src {
	uint64_t	n, i;
	int		err;
	int		batch, left;	/* take(): a batch's size, and what is left of it */
	uint64_t	calls;
};

static int seq_next(void *ctx, struct mcr_event *ev)
{
	struct seq_src *s = ctx;

	s->calls++;
	if (s->i == s->n)
		return s->err;
	*ev = (struct mcr_event){ .ts = s->i, .seq = s->i, .kind = MCR_EV_STATE };
	s->i++;
	return 1;
}

/* A batch of s->batch events at a time, as the database source: the error only past them. */
static int seq_take(void *ctx, struct mcr_event *ev, int max)
{
	struct seq_src *s = ctx;
	int k;

	if (!s->left) {
		if (s->i == s->n)
			return s->err;
		s->left = s->n - s->i < (uint64_t)s->batch ? (int)(s->n - s->i) : s->batch;
	}
	for (k = 0; k < max && k < s->left; k++) {
		ev[k] = (struct mcr_event){ .ts = s->i, .seq = s->i, .kind = MCR_EV_STATE };
		s->i++;
	}
	s->left -= k;
	return k;
}

/*
 * Peek @ahead events past each get, as the engine's prefetch and lock
 * windows do: the ts seen, in order, and the last return of each call.
 */
static int drain(struct replay_source *src, size_t ahead, uint64_t *got, int *peek_ret)
{
	struct evq q;
	struct mcr_event ev;
	const struct mcr_event *e;
	int ret;

	evq_init(&q, src);
	*got = 0;
	*peek_ret = 1;
	for (;;) {
		int pr = evq_peek(&q, ahead, &e);

		if (pr > 0 && e->ts != *got + ahead)
			pr = -EDOM;
		if (pr <= 0 && *peek_ret > 0)
			*peek_ret = pr;
		ret = evq_get(&q, &ev);
		if (ret <= 0)
			break;
		if (ev.ts != *got)
			return evq_free(&q), -EDOM;
		(*got)++;
	}
	evq_free(&q);
	return ret;
}

TEST(take_same_events_and_error_as_next)
{
	static const size_t aheads[] = { 0, 1, 255, 256, 257, 1000 };
	static const int batches[] = { 1, 3, 256, 1000 };
	size_t a, b;

	for (a = 0; a < sizeof(aheads) / sizeof(aheads[0]); a++) {
		for (b = 0; b < sizeof(batches) / sizeof(batches[0]); b++) {
			struct seq_src s1 = { .n = 5000, .err = -EIO };
			struct seq_src s2 = { .n = 5000, .err = -EIO, .batch = batches[b] };
			struct replay_source one = { .next = seq_next, .ctx = &s1 };
			struct replay_source many = { .next = seq_next, .ctx = &s2, .take = seq_take };
			uint64_t g1, g2;
			int p1, p2;

			ASSERT_EQ(drain(&one, aheads[a], &g1, &p1), -EIO);
			ASSERT_EQ(drain(&many, aheads[a], &g2, &p2), -EIO);
			ASSERT_EQU(g1, 5000);
			ASSERT_EQU(g2, 5000);
			ASSERT_EQ(p1, p2);
			ASSERT_EQ(s2.calls, 0);		/* take() alone */
		}
	}
}

TEST(take_same_end_and_bound)
{
	struct seq_src s1 = { .n = EVQ_MAX_LOOKAHEAD + 10 };
	struct seq_src s2 = { .n = EVQ_MAX_LOOKAHEAD + 10, .batch = 256 };
	struct replay_source one = { .next = seq_next, .ctx = &s1 };
	struct replay_source many = { .next = seq_next, .ctx = &s2, .take = seq_take };
	const struct mcr_event *e;
	struct evq q1, q2;

	evq_init(&q1, &one);
	evq_init(&q2, &many);
	/* the ring holds EVQ_MAX_LOOKAHEAD events and no more, whatever the source */
	ASSERT_EQ(evq_peek(&q1, EVQ_MAX_LOOKAHEAD - 1, &e), 1);
	ASSERT_EQU(e->ts, EVQ_MAX_LOOKAHEAD - 1);
	ASSERT_EQ(evq_peek(&q2, EVQ_MAX_LOOKAHEAD - 1, &e), 1);
	ASSERT_EQU(e->ts, EVQ_MAX_LOOKAHEAD - 1);
	ASSERT_EQ(evq_peek(&q1, EVQ_MAX_LOOKAHEAD, &e), 0);
	ASSERT_EQ(evq_peek(&q2, EVQ_MAX_LOOKAHEAD, &e), 0);
	ASSERT_EQU(q2.len, EVQ_MAX_LOOKAHEAD);
	evq_free(&q1);
	evq_free(&q2);
}

TEST_MAIN(take_same_events_and_error_as_next, take_same_end_and_bound)
