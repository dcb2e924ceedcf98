// SPDX-License-Identifier: GPL-2.0
/*
 * cgroups.c - which cgroups of a trace are of unknown parent: the one
 * definition that info counts and replay (validate) hangs under the root.
 *
 * Contract: a cgroup is of unknown parent when its row is marked so, when its
 * row (other than the root's) has no parent, or when the events name its id
 * (an update, a flush, an rstat lock or a cgroup_mkdir of the traced
 * hierarchy) and the cgroups table has no row for it.  The census reads the
 * table once and then sees the events one by one; memory grows with the
 * cgroups only.  Never prints.
 */
#include <errno.h>
#include <stdlib.h>

#include "db.h"
#include "idmap.h"
#include "sim.h"

struct db_cgroup_census {
	struct idmap	ids;		/* id -> 1: a row; 0: named by events only */
	uint64_t	rows_unknown;	/* rows of unknown parent */
	uint64_t	events_only;	/* ids without a row */
	int64_t		hierarchy_id;	/* -1: unknown, every event counts */
};

bool db_cgroup_parent_unknown(const struct db_cgroup *cg)
{
	return cg->parent_unknown || (!cg->parent && cg->id != SIM_ROOT_ID);
}

static int census_row(const struct db_cgroup *cg, void *arg)
{
	struct db_cgroup_census *c = arg;

	c->rows_unknown += db_cgroup_parent_unknown(cg);
	return idmap_put(&c->ids, cg->id, 1);
}

int db_cgroup_census_open(struct db *db, struct db_cgroup_census **out)
{
	struct db_cgroup_census *c = calloc(1, sizeof(*c));
	int err;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	if (db_meta_get_int(db, "memory_hierarchy_id", &c->hierarchy_id) < 0)
		c->hierarchy_id = -1;
	/* the root is known to every command, whether or not it has a row */
	err = idmap_put(&c->ids, SIM_ROOT_ID, 1);
	if (!err)
		err = db_cgroups_foreach(db, census_row, c);
	if (err) {
		db_cgroup_census_free(c);
		return err;
	}
	*out = c;
	return 0;
}

int db_cgroup_census_event(struct db_cgroup_census *c, const struct mcr_event *ev)
{
	switch (ev->kind) {
	case MCR_EV_LOCKED:
	case MCR_EV_MKDIR:
		if (c->hierarchy_id >= 0 && ev->aux != c->hierarchy_id)
			return 0;
		break;
	case MCR_EV_FLUSH:
		break;
	default:
		if (!mcr_event_is_update(ev))
			return 0;
	}
	if (idmap_find(&c->ids, ev->id))
		return 0;
	c->events_only++;
	return idmap_put(&c->ids, ev->id, 0);
}

uint64_t db_cgroup_census_unknown(const struct db_cgroup_census *c)
{
	return c->rows_unknown + c->events_only;
}

uint64_t db_cgroup_census_unlisted(const struct db_cgroup_census *c)
{
	return c->events_only;
}

void db_cgroup_census_free(struct db_cgroup_census *c)
{
	if (!c)
		return;
	idmap_free(&c->ids);
	free(c);
}
