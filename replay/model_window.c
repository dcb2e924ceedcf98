// SPDX-License-Identifier: GPL-2.0
/*
 * Flush model "window": CPU c's visits all at cgroup_rstat_locked(cpu=c), the
 * start of its lock window in css_rstat_flush(), so an update inside the
 * window always comes after every visit.  No hooks: a window the model does
 * not keep open has all its visits when it opens.
 */
#include "flush_model.h"

const struct replay_model replay_model_window = {
	.name		= "window",
	.summary	= "CPU c's visits all at cgroup_rstat_locked(cpu=c)",
};
