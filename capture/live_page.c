// SPDX-License-Identifier: GPL-2.0
/*
 * live_page.c - the records of one ring-buffer sub-buffer (contract in
 * live_page.h).  Layout from kernel/trace/ring_buffer.c: a record header is
 * one 32-bit word, type_len in bits 0-4 and time_delta in bits 5-31;
 * type_len 1-28 is a data record of type_len * 4 bytes, 0 one whose length
 * (header word included) is in array[0], 29 padding (a discarded record or
 * the page's unused tail, its length in array[0]), 30 a time extend
 * (array[0] << 27 added to the delta), 31 an absolute timestamp (its top 5
 * bits are the previous timestamp's: rb_fix_abs_ts()).  Every record's
 * timestamp is the previous one plus its delta, starting at the page's.
 */
#include <string.h>

#include "live_page.h"

#define RB_TYPE_PADDING		29
#define RB_TYPE_TIME_EXTEND	30
#define RB_TYPE_TIME_STAMP	31
#define RB_TS_SHIFT		27
#define RB_TS_MSB		(0xf8ULL << 56)
#define RB_MISSED_EVENTS	(1UL << 31)
#define RB_MISSED_STORED	(1UL << 30)
#define RB_COMMIT_MASK		((1UL << 27) - 1)

static inline uint32_t rd4(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

int live_page_load(struct live_page *pg, const void *page, size_t page_size)
{
	const size_t start = sizeof(uint64_t) + sizeof(long);	/* timestamp, local_t commit */
	unsigned long commit;

	memset(pg, 0, sizeof(*pg));
	if (page_size < start)
		return -1;
	memcpy(&pg->ts, page, sizeof(pg->ts));
	memcpy(&commit, (const uint8_t *)page + sizeof(uint64_t), sizeof(commit));
	pg->data = (const uint8_t *)page + start;
	pg->size = (uint32_t)(commit & RB_COMMIT_MASK);
	if (pg->size > page_size - start) {
		pg->size = (uint32_t)(page_size - start);
		pg->bad = 1;
	}
	if (commit & RB_MISSED_EVENTS) {
		pg->missed = -1;
		/* the count follows the data when there was room for it */
		if ((commit & RB_MISSED_STORED) && pg->size + sizeof(long) <= page_size - start) {
			long n;

			memcpy(&n, pg->data + pg->size, sizeof(n));
			pg->missed = n;
		}
	}
	return 0;
}

const void *live_page_next(struct live_page *pg, uint64_t *ts, unsigned int *size)
{
	while (pg->next + 4 <= pg->size) {
		uint32_t w = rd4(pg->data + pg->next), at = pg->next + 4, len;
		uint64_t delta = w >> 5;

		switch (w & 31) {
		case RB_TYPE_PADDING:
		case RB_TYPE_TIME_EXTEND:
		case RB_TYPE_TIME_STAMP:
			if (at + 4 > pg->size)
				goto bad;
			len = rd4(pg->data + at);
			if ((w & 31) == RB_TYPE_PADDING) {
				pg->ts += delta;
				if (len > pg->size - at)
					goto bad;
				pg->next = at + len;
			} else {
				delta |= (uint64_t)len << RB_TS_SHIFT;
				if ((w & 31) == RB_TYPE_TIME_STAMP)
					pg->ts = delta | (pg->ts & RB_TS_MSB);
				else
					pg->ts += delta;
				pg->next = at + 4;
			}
			continue;
		case 0:
			if (at + 4 > pg->size)
				goto bad;
			len = rd4(pg->data + at);
			if (len < 4)
				goto bad;
			len = (len - 4 + 3) & ~3u;
			at += 4;
			break;
		default:
			len = (w & 31) * 4;
			break;
		}
		if (len > pg->size - at)
			goto bad;
		pg->ts += delta;
		pg->next = at + len;
		*ts = pg->ts;
		*size = len;
		return pg->data + at;
	}
	return NULL;
bad:
	pg->bad = 1;
	pg->next = pg->size;
	return NULL;
}
