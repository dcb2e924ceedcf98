/* SPDX-License-Identifier: GPL-2.0 */
/*
 * self_policy.h - a walk policy no table lists, for the tests that show the
 * simulator and the inference run any struct sim_policy they are given: the
 * whole |val| goes straight into the updated memcg's atomic, with no per-CPU
 * batching, and no ancestor is credited.
 */
#ifndef MCR_TEST_SELF_POLICY_H
#define MCR_TEST_SELF_POLICY_H

#include "sim.h"

static struct sim_step_out self_step(const struct sim_step_in *in)
{
	return (struct sim_step_out){ .pcpu = in->pcpu, .add = in->abs_val, .walk = SIM_WALK_STOP };
}

static const struct sim_policy self_policy = {
	.name = "self", .kernels = "test", .summary = "credit only the updated memcg",
	.step = self_step,
};

#endif
