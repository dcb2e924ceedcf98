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

int evq_get(struct evq *q, struct mcr_event *ev)
{
	if (q->len) {
		*ev = q->buf[q->head];
		q->head = (q->head + 1) & (q->cap - 1);
		q->len--;
		return 1;
	}
	if (q->end)
		return 0;
	{
		int ret = q->src->next(q->src->ctx, ev);

		if (ret == 0)
			q->end = 1;
		return ret;
	}
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

int evq_peek(struct evq *q, size_t i, const struct mcr_event **ev)
{
	while (q->len <= i) {
		int ret;

		if (q->end)
			return 0;
		if (q->len == q->cap) {
			ret = evq_grow(q);
			if (ret <= 0)
				return ret;
		}
		ret = q->src->next(q->src->ctx, &q->buf[(q->head + q->len) & (q->cap - 1)]);
		if (ret < 0)
			return ret;
		if (ret == 0) {
			q->end = 1;
			return 0;
		}
		q->len++;
	}
	*ev = &q->buf[(q->head + i) & (q->cap - 1)];
	return 1;
}
