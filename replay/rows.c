// SPDX-License-Identifier: GPL-2.0
/*
 * rows.c - the rows a run makes on a runs' thread (workers.c): stranded
 * episodes and reads, kept per block and run with the event and phase
 * each came in, and handed to the sink by the pass's thread in the order
 * one thread would have made them: event by event, phase by phase (enum
 * rows_phase), runs in order in each.  So the rows are the same for any
 * thread count.  The engine, the reads and the windows send a run's rows
 * here while replay_ep_ctx.buf is set (the run applies a block), to the
 * sink otherwise.
 *
 * Owns the blocks' row lists; never prints.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "replay-local.h"

/*
 * The next row of @ec's run in the block it applies, at the event and phase
 * it is in; NULL: no memory.
 */
static struct rows_row *rows_next(struct replay_ep_ctx *ec)
{
	struct rows_cursor *cur = ec->buf;
	struct rows_list *b = cur->list;

	if (mcr_grow((void **)&b->v, &b->cap, b->nr + 1, sizeof(*b->v)) < 0)
		return NULL;
	b->v[b->nr] = (struct rows_row){ .at = cur->at, .phase = cur->phase };
	return &b->v[b->nr++];
}

/* Run ec->pol's stranded episode @ep, ended on the run's thread: kept for rows_emit(). */
int rows_episode(struct replay_ep_ctx *ec, const struct sim_episode *ep)
{
	struct rows_row *e = rows_next(ec);

	if (!e)
		return -ENOMEM;
	e->ep = *ep;
	return 0;
}

/*
 * Run ec->pol's read @rd, its value fixed on the run's thread: kept, errors
 * and all, for rows_emit().
 */
int rows_read(struct replay_ep_ctx *ec, const struct replay_read *rd)
{
	struct rows_list *b = ec->buf->list;
	struct rows_row *e;
	int ret;

	ret = mcr_grow((void **)&b->errs, &b->cap_errs, b->nr_errs + rd->nr_errors,
		       sizeof(*b->errs));
	if (ret < 0)
		return ret;
	e = rows_next(ec);
	if (!e)
		return -ENOMEM;
	e->rd = *rd;
	e->rd.errors = NULL;
	e->err0 = b->nr_errs;
	e->read = true;
	if (rd->nr_errors)
		memcpy(b->errs + b->nr_errs, rd->errors, rd->nr_errors * sizeof(*b->errs));
	b->nr_errs += rd->nr_errors;
	return 0;
}

/* Run ec->pol's rows come in phase @ph of the event it applies, if on a runs' thread. */
void rows_phase(struct replay_ep_ctx *ec, enum rows_phase ph)
{
	if (ec->buf)
		ec->buf->phase = (uint8_t)ph;
}

/* Run @p starts on a block: its rows go to @l, empty now. */
void rows_begin(struct replay_ep_ctx *ec, struct rows_cursor *cur, struct rows_list *l)
{
	l->nr = 0;
	l->nr_errs = 0;
	cur->list = l;
	ec->buf = cur;
}

/**
 * rows_emit() - the rows of a block of @nr events that every one of @nr_runs
 * runs has applied (@l[p]: run p's) to @sk, in one thread's order.
 * Return: 0 or the sink's error.
 */
int rows_emit(const struct replay_sink *sk, struct rows_list *l, unsigned int nr_runs, uint32_t nr)
{
	size_t pos[REPLAY_MAX_RUNS] = { 0 }, left = 0;
	unsigned int p, ph;
	uint32_t i = UINT32_MAX;
	int ret;

	/* from the first event that made one to the last: most blocks have none */
	for (p = 0; p < nr_runs; p++) {
		left += l[p].nr;
		if (l[p].nr && l[p].v[0].at < i)
			i = l[p].v[0].at;
	}
	for (; left && i < nr; i++)
		for (ph = ROWS_VISITS; ph < ROWS_PHASES; ph++)
			for (p = 0; p < nr_runs; p++)
				for (; pos[p] < l[p].nr && l[p].v[pos[p]].at == i &&
				       l[p].v[pos[p]].phase == ph; pos[p]++, left--) {
					struct rows_row *e = &l[p].v[pos[p]];

					if (e->read) {
						/* no errors: the buffer may be NULL */
						e->rd.errors = e->rd.nr_errors ?
							       l[p].errs + e->err0 : NULL;
						ret = sk->read ? sk->read(sk->ctx, p, &e->rd) : 0;
					} else {
						ret = sk->episode ? sk->episode(sk->ctx, p, &e->ep) : 0;
					}
					if (ret < 0)
						return ret;
				}
	return 0;
}

void rows_free(struct rows_list *l)
{
	free(l->v);
	free(l->errs);
}
