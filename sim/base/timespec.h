/* SPDX-License-Identifier: GPL-2.0 */
/*
 * timespec.h - the arithmetic of the readers' schedules (memcg-capture --read,
 * memcg-statlog): a struct timespec moved on by whole ms, and compared.
 */
#ifndef MCR_TIMESPEC_H
#define MCR_TIMESPEC_H

#include <stdbool.h>
#include <time.h>

static inline void mcr_ts_add_ms(struct timespec *ts, unsigned long ms)
{
	ts->tv_sec += (time_t)(ms / 1000);
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static inline bool mcr_ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

#endif
