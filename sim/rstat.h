/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rstat.h - per (memcg, cpu) slots and the per-CPU updated trees (rstat.c).
 */
#ifndef MCR_SIM_RSTAT_H
#define MCR_SIM_RSTAT_H

#include "sim-local.h"

/* The slot of (@node, @cpu), SIM_NONE where the pair never occurred: one load. */
static inline int32_t sim_slot_find(const struct sim *s, int32_t node, unsigned int cpu)
{
	return (uint32_t)node < s->cap_slot_of ?
	       s->slot_of[(size_t)node * s->nr_possible + cpu] : SIM_NONE;
}
int32_t sim_slot_get(struct sim *s, int32_t node, unsigned int cpu);
void sim_rstat_updated(struct sim *s, int32_t slot);
int sim_rstat_updated_list(struct sim *s, int32_t slot);

#endif
