// SPDX-License-Identifier: GPL-2.0
/*
 * import_check.c - what an import wrote, checked as the readers check it,
 * before it is renamed into place.
 *
 * Contract: imp_check() opens the finished temporary database the way every
 * reader does (db_open_why(): meta ranges, the cgroup hierarchy, ring-buffer
 * counters) and reads every event through db_iter (per-CPU time order, CPUs,
 * kinds, ids, items), so that an import never writes a file that info,
 * replay or report would refuse: it fails instead, with the readers' error
 * and their sentence.  The same code, not a copy of its rules.  Reading the
 * store back costs a small part of the import (tens of millions of events a
 * second against a few million decoded from trace.dat).  Never prints.
 */
#include <stdio.h>

#include "db.h"
#include "error.h"
#include "import-local.h"

int imp_check(struct imp *im, const char *path)
{
	struct import_result *res = im->res;
	const struct mcr_event *const *evs;
	struct db_iter *it = NULL;
	struct db *db = NULL;
	int err;

	err = db_open_why(path, false, &db, res->why, sizeof(res->why));
	if (!err)
		err = db_iter_open(db, &it);
	/* a batch at a time: the same checks, no event copied out */
	if (!err)
		while ((err = db_iter_next_batch(it, &evs)) > 0)
			;
	if (err < 0 && !res->why[0] && db)
		snprintf(res->why, sizeof(res->why), "%s", db_why(db));
	if (err == -MCR_E_TIME && !res->why[0])
		snprintf(res->why, sizeof(res->why), "%llu timestamps go backwards within a CPU "
			 "in the trace", (unsigned long long)im->ts_backwards);
	db_iter_close(it);
	res->refused = err < 0;
	if (db)
		db_close(db);
	return err;
}
