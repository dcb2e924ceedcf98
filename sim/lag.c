// SPDX-License-Identifier: GPL-2.0
/*
 * lag.c - staleness as a reader of memory.stat sees it: per line the signed
 * error, the visible error over time, read errors; per memcg stranded state
 * and episodes.  Not implemented yet: every call returns -ENOSYS.
 */
#include <errno.h>

#include "sim-local.h"

enum sim_unit sim_item_unit(enum sim_item_kind kind)
{
	return kind == SIM_ITEM_EVENT ? SIM_UNIT_EVENTS : SIM_UNIT_PAGES;
}

uint64_t sim_stranded_threshold(const struct sim *s)
{
	return (uint64_t)s->th + (uint64_t)(SIM_CHARGE_BATCH - 1) * s->nr_online;
}

int sim_item_error(const struct sim *s, uint64_t id, enum sim_item_kind kind, int item,
		   int64_t *out)
{
	return -ENOSYS;
}

int sim_item_stats_get(const struct sim *s, uint64_t id, enum sim_item_kind kind, int item,
		       uint64_t now, struct sim_item_stats *out)
{
	return -ENOSYS;
}

int sim_item_stats_foreach(const struct sim *s, uint64_t id, uint64_t now,
			   int (*fn)(enum sim_item_kind kind, int item,
				     const struct sim_item_stats *st, void *ctx),
			   void *ctx)
{
	return -ENOSYS;
}

int sim_cgroup_stats_get(const struct sim *s, uint64_t id, uint64_t now,
			 struct sim_cgroup_stats *out)
{
	return -ENOSYS;
}

int sim_read_begin(struct sim *s, uint64_t ts, uint64_t id, bool flushed,
		   struct sim_read_info *out)
{
	return -ENOSYS;
}

int sim_read_end(struct sim *s, uint64_t ts, uint64_t id,
		 int (*fn)(enum sim_item_kind kind, int item, int64_t error, uint64_t age_ns,
			   void *ctx),
		 void *ctx, struct sim_read_info *out)
{
	return -ENOSYS;
}

void sim_episode_sink(struct sim *s, int (*fn)(const struct sim_episode *ep, void *ctx),
		      void *ctx)
{
}

int sim_episodes_close(struct sim *s, uint64_t ts)
{
	return -ENOSYS;
}
