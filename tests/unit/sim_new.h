/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sim_new.h - sim_create() at the kernel's MEMCG_CHARGE_BATCH, for the tests
 * whose machine is only a policy and CPU counts.
 */
#ifndef MCR_TEST_SIM_NEW_H
#define MCR_TEST_SIM_NEW_H

#include "sim.h"

static inline struct sim *sim_new(const struct sim_policy *policy, unsigned int nr_possible,
				  unsigned int nr_online)
{
	struct sim_params sp = { .policy = policy, .nr_possible = nr_possible,
				 .nr_online = nr_online, .batch = SIM_CHARGE_BATCH };

	return sim_create(&sp);
}

#endif
