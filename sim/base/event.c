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

const char *mcr_item_unit(unsigned int kind)
{
	if (kind == MCR_EV_EVENTS)
		return "events";
	if (kind == MCR_EV_STATE || kind == MCR_EV_LRUVEC)
		return "pages";
	return NULL;
}

/* The kernel's memcg_page_state_unit(): 1 for the *_B items, SZ_1K for NR_KERNEL_STACK_KB. */
const char *mcr_item_rounded_from(unsigned int kind, const char *name)
{
	size_t len = name ? strlen(name) : 0;

	if (kind != MCR_EV_STATE && kind != MCR_EV_LRUVEC)
		return NULL;
	if (len > 2 && !strcmp(name + len - 2, "_B"))
		return "bytes";
	if (len && !strcmp(name, "NR_KERNEL_STACK_KB"))
		return "kB";
	return NULL;
}
