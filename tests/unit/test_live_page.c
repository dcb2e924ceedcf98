// SPDX-License-Identifier: GPL-2.0
/*
 * test_live_page.c - the capture readers' walk of a ring-buffer sub-buffer
 * (capture/live_page.c) against libtraceevent's kbuffer on crafted pages:
 * the same records, timestamps and sizes for every record type the kernel
 * writes (kernel/trace/ring_buffer.c), the missed-events count from the
 * commit word, and no read past the commit where a length is wrong.
 */
#include <stdint.h>
#include <string.h>

#include <kbuffer.h>

#include "../harness.h"
#include "live_page.h"

#define PAGE		4096
#define HDR		(8 + sizeof(long))	/* timestamp, local_t commit */
#define T_PAD		29
#define T_EXTEND	30
#define T_STAMP		31

struct page {
	uint8_t		b[PAGE];
	uint32_t	len;		/* of the records */
};

static void pg_init(struct page *p, uint64_t ts)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->b, &ts, sizeof(ts));
}

static void put4(struct page *p, uint32_t v)
{
	memcpy(p->b + HDR + p->len, &v, 4);
	p->len += 4;
}

/* A data record of @n payload bytes (a multiple of 4), each byte @fill. */
static void put_data(struct page *p, uint32_t delta, uint32_t n, uint8_t fill)
{
	if (n <= 28 * 4) {
		put4(p, delta << 5 | n / 4);
	} else {
		put4(p, delta << 5);
		put4(p, n + 4);		/* array[0]: the length, itself included */
	}
	memset(p->b + HDR + p->len, fill, n);
	p->len += n;
}

static void put_extend(struct page *p, uint64_t delta)
{
	put4(p, (uint32_t)(delta & ((1u << 27) - 1)) << 5 | T_EXTEND);
	put4(p, (uint32_t)(delta >> 27));
}

static void put_stamp(struct page *p, uint64_t ts)
{
	put4(p, (uint32_t)(ts & ((1u << 27) - 1)) << 5 | T_STAMP);
	put4(p, (uint32_t)(ts >> 27));
}

/* A discarded record of @n bytes after its length word, as rb_event_discard() leaves it. */
static void put_pad(struct page *p, uint32_t delta, uint32_t n)
{
	put4(p, delta << 5 | T_PAD);
	put4(p, n);
	p->len += n - 4;
}

static void pg_commit(struct page *p, unsigned long flags, long missed)
{
	unsigned long commit = p->len | flags;

	memcpy(p->b + 8, &commit, sizeof(commit));
	if (flags & (1UL << 30))
		memcpy(p->b + HDR + p->len, &missed, sizeof(missed));
}

/* Walk @p with both; every record must agree.  *@n: the records. */
static void walk_both(struct test_ctx *t, struct page *p, int *n)
{
	struct kbuffer *kb = kbuffer_alloc(KBUFFER_LSIZE_SAME_AS_HOST, KBUFFER_ENDIAN_SAME_AS_HOST);
	unsigned long long kts;
	struct live_page pg;
	unsigned int size;
	const void *d;
	void *kd;
	uint64_t ts;

	*n = 0;
	if (!kb)
		FAILF("kbuffer_alloc");
	ASSERT_EQ(kbuffer_load_subbuffer(kb, p->b), 0);
	ASSERT_EQ(live_page_load(&pg, p->b, PAGE), 0);
	kd = kbuffer_read_event(kb, &kts);
	ASSERT_EQ((int)pg.missed, kbuffer_missed_events(kb));
	for (d = live_page_next(&pg, &ts, &size); d || kd;
	     d = live_page_next(&pg, &ts, &size), kd = kbuffer_next_event(kb, &kts)) {
		if (d != kd || ts != kts || (int)size != kbuffer_event_size(kb)) {
			kbuffer_free(kb);
			FAILF("record %d: %p ts %llu size %u, kbuffer %p ts %llu size %d", *n, d,
			      (unsigned long long)ts, size, kd, kts, kbuffer_event_size(kb));
			break;
		}
		(*n)++;
	}
	kbuffer_free(kb);
	ASSERT_EQU(pg.bad, 0);
}

/* Short and long records, time extends, a discarded one, an absolute stamp. */
TEST(test_page_records_as_kbuffer)
{
	struct page p;
	int n;

	pg_init(&p, 1000000000000ull);
	put_data(&p, 0, 24, 1);			/* a memcg update: 24 bytes */
	put_data(&p, 7, 112, 2);		/* the longest short record */
	put_data(&p, 9, 116, 3);		/* the shortest long one */
	put_extend(&p, 5ull << 27 | 11);	/* a delta too large for 27 bits */
	put_data(&p, 0, 40, 4);
	put_pad(&p, 13, 32);			/* discarded: its delta still counts */
	put_data(&p, 2, 24, 5);
	put_data(&p, 0, 200, 6);		/* a cgroup_mkdir with its path */
	put_stamp(&p, 1000000500000ull);
	put_data(&p, 3, 28, 7);
	pg_commit(&p, 0, 0);
	walk_both(t, &p, &n);
	ASSERT_EQ(n, 7);
}

/* The commit word's flags: missed events counted, or flagged without a count. */
TEST(test_page_missed_events)
{
	struct live_page pg;
	struct page p;
	int n;

	pg_init(&p, 5000);
	put_data(&p, 0, 24, 1);
	put_data(&p, 1, 24, 2);
	pg_commit(&p, 1UL << 31 | 1UL << 30, 1234);
	walk_both(t, &p, &n);
	ASSERT_EQ(n, 2);
	ASSERT_EQ(live_page_load(&pg, p.b, PAGE), 0);
	ASSERT_EQ(pg.missed, 1234);

	pg_commit(&p, 1UL << 31, 0);
	walk_both(t, &p, &n);
	ASSERT_EQ(n, 2);
	ASSERT_EQ(live_page_load(&pg, p.b, PAGE), 0);
	ASSERT_EQ(pg.missed, -1);

	/* an empty page still carries its flag (nothing to walk) */
	pg_init(&p, 5000);
	pg_commit(&p, 1UL << 31 | 1UL << 30, 7);
	walk_both(t, &p, &n);
	ASSERT_EQ(n, 0);
}

/*
 * A page that starts with a time extend: kbuffer_missed_events() only
 * answers for a first record at offset 0 and says 0; the count is the
 * page's, whatever its first record.
 */
TEST(test_page_missed_before_extend)
{
	struct live_page pg;
	unsigned int size;
	struct page p;
	uint64_t ts;

	pg_init(&p, 100);
	put_extend(&p, 1ull << 27);
	put_data(&p, 0, 24, 1);
	pg_commit(&p, 1UL << 31 | 1UL << 30, 42);
	ASSERT_EQ(live_page_load(&pg, p.b, PAGE), 0);
	ASSERT(live_page_next(&pg, &ts, &size));
	ASSERT_EQU(ts, 100 + (1ull << 27));
	ASSERT_EQ(pg.missed, 42);
}

/* Lengths that run past the commit end the walk there: nothing beyond is read. */
TEST(test_page_bad_length)
{
	struct live_page pg;
	unsigned int size;
	struct page p;
	uint64_t ts;

	pg_init(&p, 100);
	put_data(&p, 0, 24, 1);
	put4(&p, 0);			/* a long record ... */
	put4(&p, 4000);			/* ... longer than what is committed */
	put4(&p, 0);
	pg_commit(&p, 0, 0);
	ASSERT_EQ(live_page_load(&pg, p.b, PAGE), 0);
	ASSERT(live_page_next(&pg, &ts, &size));
	ASSERT_EQU(size, 24);
	ASSERT(!live_page_next(&pg, &ts, &size));
	ASSERT_EQU(pg.bad, 1);

	/* a long record whose length word says less than itself */
	pg_init(&p, 100);
	put4(&p, 0);
	put4(&p, 2);
	pg_commit(&p, 0, 0);
	ASSERT_EQ(live_page_load(&pg, p.b, PAGE), 0);
	ASSERT(!live_page_next(&pg, &ts, &size));
	ASSERT_EQU(pg.bad, 1);

	/* a commit beyond the page is cut to the page */
	pg_init(&p, 100);
	p.len = PAGE;
	pg_commit(&p, 0, 0);
	ASSERT_EQ(live_page_load(&pg, p.b, PAGE), 0);
	ASSERT_EQU(pg.size, PAGE - HDR);
	ASSERT_EQU(pg.bad, 1);
	ASSERT_EQ(live_page_load(&pg, p.b, 4), -1);
}

TEST_MAIN(test_page_records_as_kbuffer, test_page_missed_events, test_page_missed_before_extend,
	  test_page_bad_length)
