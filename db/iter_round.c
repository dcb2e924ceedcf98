// SPDX-License-Identifier: GPL-2.0
/*
 * iter_round.c - the merge in rounds: every CPU's built batch merged at once
 * up to a common horizon by iter_merge.c, checked, and handed out as
 * pointers into the batches (db_iter_next_batch()).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "db_local.h"
#include "error.h"
#include "store.h"
#include "iter_local.h"

/* Events of @c not built yet, or an error to return after its last. */
static inline bool db_iter_more(const struct db_iter_cpu *c)
{
	return db_iter_unbuilt(c) || c->err || db_iter_chunks_left(c);
}

/* Leave rounds for the per-event merge, from every CPU's head. */
static void db_iter_unround(struct db_iter *it)
{
	unsigned int i;

	it->rounds = false;
	it->run = false;
	it->nr_heap = 0;
	for (i = 0; i < it->nr_cpus; i++) {
		struct db_iter_cpu *c = &it->cpus[i];

		if (c->pos < c->n)
			it->heap[it->nr_heap++] = (struct db_iter_head){ c->ev[c->pos].ts, c->cpu, c };
	}
	if (!it->packed || !db_iter_pack(it))
		db_iter_heapify(it);
}

/*
 * Top up @c's events to go, when fewer than half a batch are left, to a
 * batch: those left moved to the front of its buffer, then its chunk's next
 * events built after them, or its next chunk's.  Refilling only the CPU
 * whose batch went out whole made rounds of one batch in all, 17 events a
 * CPU on 32 CPUs; every CPU half a batch ahead makes them half a batch a
 * CPU.  A next chunk that fails leaves the CPU's events to go, its error
 * due after them: the horizon ends a round at its last.  *@fits is cleared
 * if the events built do not fit the keys or step back from those before.
 * 0, or the error due now: the CPU has no event left.
 */
static int db_iter_topup(struct db_iter *it, struct db_iter_cpu *c, bool *fits)
{
	uint32_t left = c->n - c->pos;
	bool opened = false;
	uint64_t prev;
	int ret;

	if (left >= DB_ITER_BATCH / 2)
		return 0;
	prev = c->n ? c->ev[c->n - 1].ts : 0;
	if (!db_iter_unbuilt(c)) {
		if (c->err)
			return left ? 0 : c->err;
		ret = db_iter_open_chunk(it, c);
		if (ret < 0) {
			c->err = ret;
			c->built = c->good;
			return left ? 0 : ret;
		}
		if (!ret)
			return 0;
		opened = true;
	}
	memmove(c->ev, c->ev + c->pos, left * sizeof(*c->ev));
	/*
	 * What lies below c->foreign may be another chunk's: the events moved
	 * come from c->pos on, and those it did not reach stay where they were.
	 */
	if (left >= c->foreign)
		c->foreign = c->foreign > c->pos ? c->foreign - c->pos : 0;
	db_iter_build(it, c, left, opened);
	if (!db_iter_round_fits(it, c, left, prev))
		*fits = false;
	return 0;
}

/*
 * Every CPU's events to go topped up, now that the caller is done with the
 * last round's events.  A batch that does not fit the keys or steps back
 * from the CPU's last event leaves rounds for the per-event merge.  0, or
 * the error of the first that failed (the events before it went out with
 * the last round).
 */
static int db_iter_round_topup(struct db_iter *it)
{
	unsigned int i;
	bool fits = true;

	for (i = 0; i < it->nr_cpus; i++) {
		int ret = db_iter_topup(it, &it->cpus[i], &fits);

		if (ret < 0)
			return ret;
	}
	if (!fits)
		db_iter_unround(it);
	return 0;
}

/*
 * Check @out[0 .. n): the count before the first that fails, whose error
 * (and db_why()) is set in *@err, or @n.
 */
static uint32_t db_iter_check(struct db_iter *it, const struct mcr_event **out, uint32_t n,
			      int *err)
{
	uint32_t q;

	for (q = 0; q < n; q++) {
		int ret = db_event_check(out[q], &it->bounds, it->db->why, sizeof(it->db->why));

		if (ret < 0) {
			*err = ret;
			break;
		}
	}
	return q;
}

/*
 * One round: every CPU's built events up to the horizon, merged into out[]
 * (pointers into the CPUs' batches) and checked.  The horizon is the least
 * key of a CPU's last built event, over the CPUs with events not built yet:
 * none of those can come before it.  Only the CPU that set it can have its
 * events go out to the last (any other with events left has its last key
 * above), so a chunk that fails is refused after the same events as the
 * per-event merge refuses it.  The CPUs are topped up at the next round
 * (db_iter_round_topup()): out[] points into the buffers that moves.
 * Returns 0 when no CPU has events left, else 1 (out[] may be empty:
 * --from/--to).
 */
static int db_iter_round(struct db_iter *it)
{
	const struct mcr_event *head[DB_ITER_KEY_CPUS];
	uint64_t lim = UINT64_MAX, *k = it->mk, *m;
	const struct mcr_event **out = it->out;
	unsigned int i, nr = 0;
	uint32_t q, n = 0;
	int err = 0;

	it->out_n = it->out_pos = 0;
	for (i = 0; i < it->nr_cpus; i++) {
		struct db_iter_cpu *c = &it->cpus[i];

		if (c->pos < c->n && db_iter_more(c))
			lim = db_iter_min(lim, db_iter_round_key(it, c->ev[c->n - 1].ts, i));
	}
	for (i = 0; i < it->nr_cpus; i++) {
		struct db_iter_cpu *c = &it->cpus[i];
		uint64_t *run = k;
		uint32_t p;

		if (c->pos >= c->n)
			continue;
		*k++ = 0;
		for (p = c->pos; p < c->n; p++) {
			uint64_t key = db_iter_round_key(it, c->ev[p].ts, i);

			if (key > lim)
				break;
			*k++ = key;
		}
		if (p == c->pos) {
			k = run;
			continue;
		}
		*k++ = UINT64_MAX;
		it->mlen[nr++] = p - c->pos;
		n += p - c->pos;
	}
	if (!nr)
		return 0;
	m = db_keys_merge(it->mk, it->mk_tmp, it->mlen, nr) + 1;
	/* each CPU's next event by index: a small array, not a field of each CPU's struct */
	for (i = 0; i < it->nr_cpus; i++)
		head[i] = &it->cpus[i].ev[it->cpus[i].pos];
	if (it->from || it->to != UINT64_MAX) {
		uint32_t w = 0;

		for (q = 0; q < n; q++) {
			const struct mcr_event *ev = head[m[q] & (DB_ITER_KEY_CPUS - 1)]++;

			if (ev->ts >= it->from && ev->ts <= it->to)
				out[w++] = ev;
		}
		n = w;
		q = db_iter_check(it, out, n, &err);
	} else {
		/* checked as handed out: out[q] is in a register */
		for (q = 0; q < n; q++) {
			const struct mcr_event *ev = head[m[q] & (DB_ITER_KEY_CPUS - 1)]++;

			out[q] = ev;
			if (__builtin_expect(db_event_check(ev, &it->bounds, NULL, 0) < 0, 0))
				break;
		}
		if (q < n)
			q = db_iter_check(it, out, q + 1, &err);
	}
	for (i = 0; i < it->nr_cpus; i++)
		it->cpus[i].pos = (uint32_t)(head[i] - it->cpus[i].ev);
	if (err)
		n = q;
	it->out_n = n;
	it->out_err = err;
	return 1;
}

/*
 * Rounds until one has events: 1 (or 1 with none, having left rounds for
 * the per-event merge), 0 at the end, or the error due after the last
 * round's events.
 */
int db_iter_fill(struct db_iter *it)
{
	int ret;

	for (;;) {
		if (it->out_err)
			return it->err = it->out_err;
		if ((ret = db_iter_round_topup(it)) < 0)
			return it->err = ret;
		if (!it->rounds)
			return 1;
		if (!db_iter_round(it))
			return 0;
		if (it->out_n)
			return 1;
	}
}
