// SPDX-License-Identifier: GPL-2.0
/* One run against the database, inside one transaction; the model's prepass beside it. */
#include <errno.h>
#include <string.h>

#include "db.h"
#include "replay-local.h"

int replay_pass_db(struct db *db, const struct replay_trace *t, const char *file, const char *kind,
		   struct replay_params *p, struct replay_pass *out)
{
	struct replay_source src = { 0 }, feed = { 0 }, gated, *run = &src;
	const struct replay_prepass *prep;
	struct replay_beside *bs = NULL;
	double t0 = replay_now_s();
	int ret;

	memset(out, 0, sizeof(*out));
	ret = db_begin(db);
	if (ret < 0)
		return ret;
	ret = replay_store_open(db, kind, file, p, t, &out->store);
	if (!ret)
		ret = replay_create(p, t, &out->r);
	if (!ret)
		ret = replay_source_db_open(db, &src);
	if (!ret && replay_prepass_beside(out->r)) {
		ret = replay_source_db_open(db, &feed);
		if (!ret)
			ret = replay_prepare_beside(out->r, &feed, &src, &gated, &bs);
	}
	if (ret > 0) {
		run = &gated;
		ret = 0;
	}
	if (!ret)
		ret = replay_run(out->r, run);
	replay_beside_free(bs);
	replay_source_db_close(&feed);
	replay_source_db_close(&src);
	prep = out->r ? replay_prepass(out->r) : NULL;
	out->wall_s = replay_now_s() - t0 - (prep && !prep->beside ? prep->seconds : 0);
	if (!ret)
		ret = replay_store_finish(out->store, out->r, out->wall_s);
	if (!ret)
		ret = db_commit(db);
	if (ret < 0) {
		db_rollback(db);
		replay_pass_free(out);
	}
	return ret;
}

void replay_pass_free(struct replay_pass *ps)
{
	replay_store_close(ps->store);
	replay_destroy(ps->r);
	ps->store = NULL;
	ps->r = NULL;
}
