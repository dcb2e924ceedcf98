// SPDX-License-Identifier: GPL-2.0
/*
 * iter_merge.c - merging sorted runs of u64 keys in cache: the reader's
 * (ts, cpu) merge of one round of per-CPU batches (iter.c).
 *
 * Contract: pure (no allocation, no I/O, no state).  Each run is laid out as
 * a low sentinel 0, its keys in increasing order, then a high sentinel
 * UINT64_MAX; keys are unique across the runs and lie strictly between the
 * two sentinels.  Runs are merged two by two, log2(runs) passes, each pair
 * from both ends at once: two independent chains of conditional moves (no
 * branch on which run holds the lesser key), where one chain would wait on
 * each load before the next comparison.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "db_local.h"

/* A merge of two runs from both ends: front and back pointers into each run and the output. */
struct db_merge {
	const uint64_t	*fa, *fb, *ba, *bb;
	uint64_t	*fo, *bo;
	uint32_t	steps;		/* front steps: half the keys; the back takes one more if odd */
	bool		odd;
};

/* Merge the runs at @a (@na keys) and @b (@nb) into @d, laid out the same way. */
static inline void db_merge_init(struct db_merge *m, const uint64_t *a, uint32_t na,
				 const uint64_t *b, uint32_t nb, uint64_t *d)
{
	uint32_t total = na + nb;

	m->fa = a + 1;
	m->fb = b + 1;
	m->ba = a + na;
	m->bb = b + nb;
	m->fo = d + 1;
	m->bo = d + total;
	m->steps = total / 2;
	m->odd = total & 1;
	d[0] = 0;
	d[total + 1] = UINT64_MAX;
}

/*
 * The front takes the half least keys, the back the rest from the greatest:
 * disjoint since keys are unique.  Past its run's end, the front meets the
 * high sentinel and the back the low one, which lose every comparison.
 */
static inline __attribute__((always_inline)) void db_merge_step(struct db_merge *m)
{
	uint64_t x = *m->fa, y = *m->fb, u = *m->ba, v = *m->bb;
	bool t = y < x, s = v > u;

	*m->fo++ = t ? y : x;
	m->fa += !t;
	m->fb += t;
	*m->bo-- = s ? v : u;
	m->ba -= !s;
	m->bb -= s;
}

static inline void db_merge_end(struct db_merge *m)
{
	uint32_t k;

	for (k = 0; k < m->steps; k++)
		db_merge_step(m);
	if (m->odd) {
		uint64_t u = *m->ba, v = *m->bb;

		*m->bo = v > u ? v : u;
	}
}

/*
 * Two merges in one loop: four independent chains of load, compare and
 * pointer step, where one merge's two leave the core waiting on each load.
 */
static void db_merge_two(struct db_merge *m, struct db_merge *n)
{
	struct db_merge a = *m, b = *n;
	uint32_t k, common = a.steps < b.steps ? a.steps : b.steps;

	for (k = 0; k < common; k++) {
		db_merge_step(&a);
		db_merge_step(&b);
	}
	a.steps -= common;
	b.steps -= common;
	db_merge_end(&a);
	db_merge_end(&b);
}

/**
 * db_keys_merge() - merge @nr runs into one.
 * @a:   the runs back to back (run r: @len[r] keys between its sentinels)
 * @tmp: scratch as large as @a
 * @len: keys per run, each > 0; overwritten
 * @nr:  runs, > 0
 *
 * Returns @a or @tmp, whichever holds the merged run (sentinels included).
 */
uint64_t *db_keys_merge(uint64_t *a, uint64_t *tmp, uint32_t *len, unsigned int nr)
{
	while (nr > 1) {
		const uint64_t *src = a;
		uint64_t *dst = tmp, *t;
		unsigned int r, out = 0;

		struct db_merge pend, m;
		bool pending = false;

		for (r = 0; r + 1 < nr; r += 2) {
			const uint64_t *b = src + len[r] + 2;

			db_merge_init(&m, src, len[r], b, len[r + 1], dst);
			if (pending)
				db_merge_two(&pend, &m);
			else
				pend = m;
			pending = !pending;
			len[out] = len[r] + len[r + 1];
			src = b + len[r + 1] + 2;
			dst += len[out++] + 2;
		}
		if (pending)
			db_merge_end(&pend);
		if (r < nr) {
			memcpy(dst, src, (len[r] + 2) * sizeof(*dst));
			len[out++] = len[r];
		}
		nr = out;
		t = a;
		a = tmp;
		tmp = t;
	}
	return a;
}
