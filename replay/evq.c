// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "evq.h"

void evq_init(struct evq *q, struct replay_source *src)
{
	memset(q, 0, sizeof(*q));
	q->src = src;
}

void evq_free(struct evq *q)
{
	free(q->buf);
	q->buf = NULL;
	q->cap = q->head = q->len = 0;
}

/* The source's next event, or up to @max of them with take(). */
static int evq_src(struct evq *q, struct mcr_event *ev, size_t max)
{
	if (q->src->take)
		return q->src->take(q->src->ctx, ev, (int)max);
	return q->src->next(q->src->ctx, ev);
}

/* evq_get() with nothing queued: straight from the source. */
int evq_get_slow(struct evq *q, struct mcr_event *ev)
{
	int ret;

	if (q->end)
		return 0;
	ret = evq_src(q, ev, 1);
	if (ret == 0)
		q->end = 1;
	if (ret > 0)
		q->got++;
	return ret;
}

/* The ring's capacity is a power of two (256 doubling): positions wrap with a mask. */
static int evq_grow(struct evq *q)
{
	size_t ncap = q->cap ? q->cap * 2 : 256, i;
	struct mcr_event *nb;

	if (ncap > EVQ_MAX_LOOKAHEAD)
		return 0;
	nb = malloc(ncap * sizeof(*nb));
	if (!nb)
		return -ENOMEM;
	for (i = 0; i < q->len; i++)
		nb[i] = q->buf[(q->head + i) & (q->cap - 1)];
	free(q->buf);
	q->buf = nb;
	q->cap = ncap;
	q->head = 0;
	return 1;
}

/*
 * Queues events until event @i is.  With take(), the ring's free run at its
 * tail is filled at once: take() hands out what the source has already read
 * and reads on only when asked past that, as next() would, so its errors
 * come at the same event.
 */
int evq_peek_slow(struct evq *q, size_t i, const struct mcr_event **ev)
{
	while (q->len <= i) {
		size_t pos, room;
		int ret;

		if (q->end)
			return 0;
		if (q->len == q->cap) {
			ret = evq_grow(q);
			if (ret <= 0)
				return ret;
		}
		pos = (q->head + q->len) & (q->cap - 1);
		room = q->cap - q->len < q->cap - pos ? q->cap - q->len : q->cap - pos;
		ret = evq_src(q, &q->buf[pos], room);
		if (ret < 0)
			return ret;
		if (ret == 0) {
			q->end = 1;
			return 0;
		}
		q->len += (size_t)ret;
	}
	*ev = &q->buf[(q->head + i) & (q->cap - 1)];
	return 1;
}
