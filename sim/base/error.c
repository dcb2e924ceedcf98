// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>

#include "error.h"

static const struct {
	const char	*msg;
	int		exit;
} mcr_errors[MCR_E_MAX - MCR_E_BASE] = {
	[MCR_E_NOT_SQLITE - MCR_E_BASE]	= { "not an SQLite database", MCR_EXIT_NOT_SQLITE },
	[MCR_E_NOT_OURS - MCR_E_BASE]	= { "not a memcg-replay trace database (wrong application_id)", MCR_EXIT_NOT_OURS },
	[MCR_E_NEWER - MCR_E_BASE]	= { "database schema is newer than this memcg-replay understands", MCR_EXIT_NEWER },
	[MCR_E_SCHEMA - MCR_E_BASE]	= { "database is missing a table or column (damaged or incomplete)", MCR_EXIT_SCHEMA },
	[MCR_E_TIME - MCR_E_BASE]	= { "timestamps go backwards within one CPU", MCR_EXIT_TIME },
	[MCR_E_CPU - MCR_E_BASE]	= { "event names a CPU beyond the recorded possible CPUs", MCR_EXIT_CPU },
	[MCR_E_NO_EVENTS - MCR_E_BASE]	= { "no memcg events in the input", MCR_EXIT_NO_EVENTS },
	[MCR_E_CORRUPT - MCR_E_BASE]	= { "truncated or corrupt trace file", MCR_EXIT_CORRUPT },
	[MCR_E_LOST - MCR_E_BASE]	= { "events were lost while recording", MCR_EXIT_LOST },
	[MCR_E_NOT_ROOT - MCR_E_BASE]	= { "capture needs root (CAP_SYS_ADMIN for tracefs)", MCR_EXIT_NOT_ROOT },
	[MCR_E_NO_TRACEFS - MCR_E_BASE]	= { "tracefs is not available", MCR_EXIT_NO_TRACEFS },
	[MCR_E_NO_MEMCG_EVENTS - MCR_E_BASE] = { "this kernel has no memcg tracepoints (needs Linux 6.13 or later)", MCR_EXIT_NO_MEMCG_EVENTS },
	[MCR_E_MATCH - MCR_E_BASE]	= { "validation match rate below --min-match", MCR_EXIT_MATCH },
	[MCR_E_BAD_INPUT - MCR_E_BASE]	= { "invalid input", MCR_EXIT_BAD_INPUT },
	[MCR_E_NO_RUNS - MCR_E_BASE]	= { "no replay results yet (run 'memcg-replay replay FILE' first)", MCR_EXIT_NO_RUNS },
	[MCR_E_OLDER - MCR_E_BASE]	= { "written by an older memcg-replay whose results this one cannot read; replay it again ('memcg-replay replay FILE')", MCR_EXIT_OLDER },
};

const char *mcr_strerror(int err)
{
	int e = -err;

	if (e > MCR_E_BASE && e < MCR_E_MAX)
		return mcr_errors[e - MCR_E_BASE].msg;
	return strerror(e);
}

int mcr_exit_code(int err)
{
	int e = -err;

	if (e > MCR_E_BASE && e < MCR_E_MAX)
		return mcr_errors[e - MCR_E_BASE].exit;
	switch (e) {
	case ENOENT:
	case EACCES:
	case EPERM:
	case EROFS:
	case EISDIR:
		return MCR_EXIT_NOFILE;
	case EINVAL:
		return MCR_EXIT_BAD_INPUT;
	default:
		return MCR_EXIT_FAILURE;
	}
}
