/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cgroup.h - the simulated memcg hierarchy (cgroup.c).
 */
#ifndef MCR_SIM_CGROUP_H
#define MCR_SIM_CGROUP_H

#include "sim-local.h"

int32_t sim_node_create(struct sim *s, uint64_t ts, uint64_t id, int32_t parent);

#endif
