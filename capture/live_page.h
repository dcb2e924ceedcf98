/* SPDX-License-Identifier: GPL-2.0 */
/*
 * live_page.h - walking one ring-buffer sub-buffer, as read from
 * trace_pipe_raw, record by record.
 *
 * Contract: the page is the kernel's struct buffer_data_page in the host's
 * byte order (a live capture reads its own kernel): the timestamp, the
 * commit word (data size and the missed-events flags), then the records,
 * each a struct ring_buffer_event (kernel/trace/ring_buffer.c).  The walk is
 * libtraceevent's kbuffer_next_event(), the same timestamps, data and sizes,
 * without its indirect calls per record; it also never reads past the
 * commit or the page, where kbuffer trusts the lengths.  No allocation, no
 * I/O, no state beyond the struct.
 */
#ifndef MCR_LIVE_PAGE_H
#define MCR_LIVE_PAGE_H

#include <stddef.h>
#include <stdint.h>

struct live_page {
	const uint8_t	*data;		/* the first record */
	uint64_t	ts;		/* of the record last returned */
	int64_t		missed;		/* lost before this page: > 0 counted, -1 unknown, 0 none */
	uint32_t	size;		/* bytes of records (the commit) */
	uint32_t	next;		/* offset of the next record's header */
	uint32_t	bad;		/* the walk stopped at a malformed record */
};

/* Start on @page (@page_size bytes).  -1 if the header does not fit in it. */
int live_page_load(struct live_page *pg, const void *page, size_t page_size);
/* The next data record, its timestamp and payload size; NULL after the last. */
const void *live_page_next(struct live_page *pg, uint64_t *ts, unsigned int *size);

#endif
