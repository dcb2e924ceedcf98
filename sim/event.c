// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>

#include "event.h"

static const char *const mcr_kind_names[MCR_EV_KIND_MAX + 1] = {
	[MCR_EV_STATE]		= "mod_memcg_state",
	[MCR_EV_LRUVEC]		= "mod_memcg_lruvec_state",
	[MCR_EV_EVENTS]		= "count_memcg_events",
	[MCR_EV_FLUSH]		= "memcg_flush_stats",
	[MCR_EV_LOCKED]		= "cgroup_rstat_locked",
	[MCR_EV_UNLOCK]		= "cgroup_rstat_unlock",
	[MCR_EV_CONTENDED]	= "cgroup_rstat_lock_contended",
	[MCR_EV_MKDIR]		= "cgroup_mkdir",
	[MCR_EV_RMDIR]		= "cgroup_rmdir",
	[MCR_EV_VISIT]		= "flush_visit",
};

const char *mcr_event_kind_name(unsigned int kind)
{
	return kind <= MCR_EV_KIND_MAX ? mcr_kind_names[kind] : NULL;
}

int mcr_event_kind_parse(const char *name)
{
	unsigned int k;

	for (k = 1; k <= MCR_EV_KIND_MAX; k++)
		if (mcr_kind_names[k] && !strcmp(mcr_kind_names[k], name))
			return (int)k;
	return -EINVAL;
}
