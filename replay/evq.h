/* SPDX-License-Identifier: GPL-2.0 */
/*
 * evq.h - the engine's view of its event source, with bounded lookahead.
 *
 * Contract: events come out of evq_get() in source order.  evq_peek() reads
 * ahead (to find the unlock that closes a lock window) into a ring that grows
 * up to EVQ_MAX_LOOKAHEAD events and no further: memory is bounded whatever
 * the trace's length.  Errors of the source are returned as they happen.
 * The engine peeks at the next event before taking each: the queued case of
 * both is inline, and a source with take() fills the ring many events at a
 * time.
 */
#ifndef MCR_REPLAY_EVQ_H
#define MCR_REPLAY_EVQ_H

#include <stddef.h>

#include "replay.h"

/* Lock windows last microseconds; this many events is many milliseconds of a busy host. */
#define EVQ_MAX_LOOKAHEAD	(1u << 18)

struct evq {
	struct replay_source	*src;
	struct mcr_event	*buf;
	size_t			cap, head, len;
	uint64_t		got;	/* events evq_get() handed out */
	int			end;	/* source returned 0 */
};

void evq_init(struct evq *q, struct replay_source *src);
void evq_free(struct evq *q);
/* evq_get() and evq_peek() when the event asked for is not queued */
int evq_get_slow(struct evq *q, struct mcr_event *ev);
int evq_peek_slow(struct evq *q, size_t i, const struct mcr_event **ev);

/* 1, 0 at the end, or < 0 */
static inline int evq_get(struct evq *q, struct mcr_event *ev)
{
	if (!q->len)
		return evq_get_slow(q, ev);
	*ev = q->buf[q->head];
	q->head = (q->head + 1) & (q->cap - 1);
	q->len--;
	q->got++;
	return 1;
}

/* Makes event @i ahead (0 = the next evq_get) available: 1, 0 past the end or the bound, < 0. */
static inline int evq_peek(struct evq *q, size_t i, const struct mcr_event **ev)
{
	if (i >= q->len)
		return evq_peek_slow(q, i, ev);
	*ev = &q->buf[(q->head + i) & (q->cap - 1)];
	return 1;
}

#endif
