// SPDX-License-Identifier: GPL-2.0
/*
 * Flush model "instant": the whole flush at its memcg_flush_stats request,
 * as if flushing took no time; a flush without request (css release) at its
 * first lock window.  The simplest reading of a trace, and the one that never
 * lets an update land inside a flush.
 */
#include "flush_model.h"

const struct replay_model replay_model_instant = {
	.name		= "instant",
	.summary	= "the whole flush at the memcg_flush_stats request",
	.whole_flush	= true,
};
