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
 * each load before the next comparison.  Two merges run in one loop, four
 * chains; a pass's merge left without a partner (its last of an odd number,
 * the last pass's only one) is split at its middle into two.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "db_local.h"

/*
 * The read cursors are addresses divided by 8 (the keys are aligned): a
 * cursor steps by the comparison's carry (one adc or sbb, no setcc, movzx
 * and lea) and loads as (,cursor,8), with no base register.  With four
 * chains, eight cursors and four outputs hold in the registers, where
 * pointers stepped by lea spilled to the stack.
 */
static inline uint64_t db_merge_key(uintptr_t c)
{
	return *(const uint64_t *)(c * sizeof(uint64_t));
}

static inline uintptr_t db_merge_cursor(const uint64_t *p)
{
	return (uintptr_t)p / sizeof(uint64_t);
}

/* A merge of two runs from both ends: front and back cursors into each run, and the output. */
struct db_merge {
	uintptr_t	fa, fb, ba, bb;
	uint64_t	*fo, *bo;
	uint32_t	steps;		/* front steps: half the keys; the back takes one more if odd */
	bool		odd;
};

/*
 * Merge the keys from @a and @b up to @ea and @eb (their last) into @n keys
 * at @o: those keys are the @n least of what lies at and beyond @a and @b,
 * and the @n greatest of what lies at and before @ea and @eb.
 */
static inline void db_merge_set(struct db_merge *m, const uint64_t *a, const uint64_t *b,
				const uint64_t *ea, const uint64_t *eb, uint64_t *o, uint32_t n)
{
	m->fa = db_merge_cursor(a);
	m->fb = db_merge_cursor(b);
	m->ba = db_merge_cursor(ea);
	m->bb = db_merge_cursor(eb);
	m->fo = o;
	m->bo = o + n - 1;
	m->steps = n / 2;
	m->odd = n & 1;
}

/* Merge the runs at @a (@na keys) and @b (@nb) into @d, laid out the same way. */
static inline void db_merge_init(struct db_merge *m, const uint64_t *a, uint32_t na,
				 const uint64_t *b, uint32_t nb, uint64_t *d)
{
	uint32_t total = na + nb;

	db_merge_set(m, a + 1, b + 1, a + na, b + nb, d + 1, total);
	d[0] = 0;
	d[total + 1] = UINT64_MAX;
}

/*
 * The front takes the half least keys, the back the rest from the greatest:
 * disjoint since keys are unique, so of the two comparisons exactly one holds
 * and exactly one cursor steps.  Past its run's end, the front meets the high
 * sentinel and the back the low one, which lose every comparison.
 */
static inline __attribute__((always_inline)) uint64_t db_merge_front(uintptr_t *a, uintptr_t *b)
{
	uint64_t x = db_merge_key(*a), y = db_merge_key(*b);
	uint64_t v = x < y ? x : y;

	*b += y < x;
	*a += x < y;
	return v;
}

static inline __attribute__((always_inline)) uint64_t db_merge_back(uintptr_t *a, uintptr_t *b)
{
	uint64_t x = db_merge_key(*a), y = db_merge_key(*b);
	uint64_t v = x < y ? y : x;

	*a -= y < x;
	*b -= x < y;
	return v;
}

static inline void db_merge_end(struct db_merge *m)
{
	uint32_t k;

	for (k = 0; k < m->steps; k++) {
		m->fo[k] = db_merge_front(&m->fa, &m->fb);
		*m->bo-- = db_merge_back(&m->ba, &m->bb);
	}
	if (m->odd) {
		uint64_t u = db_merge_key(m->ba), v = db_merge_key(m->bb);

		*m->bo = v > u ? v : u;
	}
}

/*
 * Two merges in one loop: four independent chains of load, compare and
 * cursor step, where one merge's two leave the core waiting on each load.
 * The fronts write at one index, counted up to 0 so that it is also the
 * loop's end.
 */
static void db_merge_two(struct db_merge *m, struct db_merge *n)
{
	struct db_merge a = *m, b = *n;
	uint32_t common = a.steps < b.steps ? a.steps : b.steps;
	uint64_t *afo = a.fo + common, *bfo = b.fo + common;
	intptr_t k;

	for (k = -(intptr_t)common; k; k++) {
		afo[k] = db_merge_front(&a.fa, &a.fb);
		*a.bo-- = db_merge_back(&a.ba, &a.bb);
		bfo[k] = db_merge_front(&b.fa, &b.fb);
		*b.bo-- = db_merge_back(&b.ba, &b.bb);
	}
	a.fo = afo;
	b.fo = bfo;
	a.steps -= common;
	b.steps -= common;
	db_merge_end(&a);
	db_merge_end(&b);
}

/*
 * A merge with no other to pair with (the pass's last when it has an odd
 * number), split at its middle into two to pair with each other: with h the
 * keys of the lower half, a binary search on the sentinel-bounded runs finds
 * i, the keys of @a among them (a[i - 1] < b[h - i], b[h - i - 1] < a[i]).
 * The lower half's front then stops at the upper's first keys, greater than
 * its own, and the upper's back at the lower's last, lesser: four chains
 * where the last pass would have two.
 */
static void db_merge_one(const uint64_t *a, uint32_t na, const uint64_t *b, uint32_t nb,
			 uint64_t *d)
{
	uint32_t total = na + nb, h = total / 2;
	uint32_t lo = h > nb ? h - nb : 0, hi = h < na ? h : na;
	struct db_merge lower, upper;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (a[1 + mid] < b[1 + h - mid - 1])
			lo = mid + 1;
		else
			hi = mid;
	}
	db_merge_set(&lower, a + 1, b + 1, a + lo, b + h - lo, d + 1, h);
	db_merge_set(&upper, a + 1 + lo, b + 1 + h - lo, a + na, b + nb, d + 1 + h, total - h);
	d[0] = 0;
	d[total + 1] = UINT64_MAX;
	db_merge_two(&lower, &upper);
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
		const uint64_t *src = a, *pa = NULL, *pb = NULL;
		uint64_t *dst = tmp, *pd = NULL, *t;
		unsigned int r, out = 0;
		uint32_t pna = 0, pnb = 0;

		/* pa, pb into pd: the pair waiting for the next one to merge with */
		for (r = 0; r + 1 < nr; r += 2) {
			const uint64_t *b = src + len[r] + 2;

			if (pa) {
				struct db_merge m, n;

				db_merge_init(&m, pa, pna, pb, pnb, pd);
				db_merge_init(&n, src, len[r], b, len[r + 1], dst);
				db_merge_two(&m, &n);
				pa = NULL;
			} else {
				pa = src;
				pb = b;
				pd = dst;
				pna = len[r];
				pnb = len[r + 1];
			}
			len[out] = len[r] + len[r + 1];
			src = b + len[r + 1] + 2;
			dst += len[out++] + 2;
		}
		if (pa)
			db_merge_one(pa, pna, pb, pnb, pd);
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
