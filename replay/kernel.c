// SPDX-License-Identifier: GPL-2.0
/* The walk policy a traced kernel runs, from its release or the trace's source. */
#include <stdio.h>
#include <string.h>

#include "replay.h"

bool replay_trace_is_synth(const struct replay_trace *t)
{
	return t->source && !strncmp(t->source, "synth", 5);
}

const struct sim_policy *replay_policy_for_trace(const struct replay_trace *t)
{
	if (replay_trace_is_synth(t))
		return sim_policy_find("break");
	return replay_policy_for_kernel(t->kernel_release);
}

/* 6.16+ runs break (60cada258dfe); 6.8-6.15 legacy (8d59d2214c23, 9cee7e8ef3e3). */
const struct sim_policy *replay_policy_for_kernel(const char *release)
{
	unsigned int major, minor;

	if (!release || sscanf(release, "%u.%u", &major, &minor) != 2)
		return NULL;
	if (major > 6 || (major == 6 && minor >= 16))
		return sim_policy_find("break");
	if (major == 6 && minor >= 8)
		return sim_policy_find("legacy");
	return NULL;
}
