/* SPDX-License-Identifier: GPL-2.0 */
/*
 * trace_check.h - one streaming pass over a trace's events for the commands
 * that only read (info, report): counts by kind and the same checks replay
 * relies on (time never goes backwards within one CPU, every CPU named
 * exists), so a damaged trace is refused the same way by every command.
 */
#ifndef MCR_TRACE_CHECK_H
#define MCR_TRACE_CHECK_H

#include <stdint.h>

#include "db.h"

/*
 * cli_trace_scan - read every event once; memory does not grow with them.
 * @by_kind: if not NULL, filled with event counts by kind (index = kind)
 * @census: if not NULL, sees every event (db_cgroup_census_event())
 * Returns the number of events, or the iterator's error (-MCR_E_TIME,
 * -MCR_E_CPU, -MCR_E_SCHEMA, ...).  A progress line shows on a TTY.
 */
int64_t cli_trace_scan(struct db *db, uint64_t by_kind[MCR_EV_KIND_MAX + 1],
		       struct db_cgroup_census *census);

#endif
