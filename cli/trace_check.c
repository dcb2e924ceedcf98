// SPDX-License-Identifier: GPL-2.0
/* trace_check.c - the streaming check shared by info and report. */
#include <string.h>

#include "cli.h"
#include "trace_check.h"

int64_t cli_trace_scan(struct db *db, uint64_t by_kind[MCR_EV_KIND_MAX + 1],
		       struct db_cgroup_census *census)
{
	struct cli_progress progress;
	struct db_iter *it;
	struct mcr_event ev;
	uint64_t n = 0;
	int err;

	if (by_kind)
		memset(by_kind, 0, (MCR_EV_KIND_MAX + 1) * sizeof(by_kind[0]));
	err = db_iter_open(db, &it);
	if (err < 0)
		return err;
	cli_progress_init(&progress, "checking events", db_iter_count(it));
	while ((err = db_iter_next(it, &ev)) > 0) {
		if (by_kind && ev.kind <= MCR_EV_KIND_MAX)
			by_kind[ev.kind]++;
		if (census && (err = db_cgroup_census_event(census, &ev)) < 0)
			break;
		if (!(++n & 0xfffff))
			cli_progress_update(&progress, n);
	}
	cli_progress_done(&progress, n);
	db_iter_close(it);
	return err < 0 ? err : (int64_t)n;
}
