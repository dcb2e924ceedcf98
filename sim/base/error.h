/* SPDX-License-Identifier: GPL-2.0 */
/*
 * error.h - the project's error codes beyond errno.
 *
 * Contract: library functions return 0 or a positive count on success and a
 * negative errno or a negative MCR_E_* on failure.  They never print.  Only
 * cli/ and capture's main turn an error into a message (mcr_strerror) and an
 * exit code (mcr_exit_code).  Exit codes are documented in --help and README;
 * never renumber them.
 */
#ifndef MCR_ERROR_H
#define MCR_ERROR_H

enum mcr_error {
	MCR_E_BASE = 4096,	/* above every errno value */
	MCR_E_NOT_SQLITE,	/* file is not an SQLite database */
	MCR_E_NOT_OURS,		/* SQLite, but not a memcg-replay trace database */
	MCR_E_NEWER,		/* schema newer than this build understands */
	MCR_E_SCHEMA,		/* a table or column we need is missing */
	MCR_E_TIME,		/* time went backwards within one CPU */
	MCR_E_CPU,		/* event names a CPU beyond the recorded possible CPUs */
	MCR_E_NO_EVENTS,	/* the input holds no memcg events */
	MCR_E_CORRUPT,		/* truncated or corrupt trace.dat */
	MCR_E_LOST,		/* events were lost while recording */
	MCR_E_NOT_ROOT,		/* capture needs root */
	MCR_E_NO_TRACEFS,	/* tracefs not available */
	MCR_E_NO_MEMCG_EVENTS,	/* kernel lacks the memcg tracepoints (before 6.13) */
	MCR_E_MATCH,		/* validation below --min-match */
	MCR_E_BAD_INPUT,	/* other malformed input (unknown policy, bad value) */
	MCR_E_NO_RUNS,		/* the database holds no replay results yet */
	MCR_E_OLDER,		/* results of an older schema: replay the file again */
	MCR_E_MAX,
};

/* Exit codes; 0 is success. */
enum mcr_exit {
	MCR_EXIT_OK		= 0,
	MCR_EXIT_FAILURE	= 1,	/* unexpected: I/O error, out of memory */
	MCR_EXIT_USAGE		= 2,	/* bad command line */
	MCR_EXIT_NOFILE		= 3,	/* input file missing or unreadable */
	MCR_EXIT_NOT_SQLITE	= 4,
	MCR_EXIT_NOT_OURS	= 5,
	MCR_EXIT_NEWER		= 6,
	MCR_EXIT_SCHEMA		= 7,
	MCR_EXIT_TIME		= 8,
	MCR_EXIT_CPU		= 9,
	MCR_EXIT_MATCH		= 10,
	MCR_EXIT_LOST		= 11,
	MCR_EXIT_NOT_ROOT	= 12,
	MCR_EXIT_NO_TRACEFS	= 13,
	MCR_EXIT_NO_MEMCG_EVENTS = 14,
	MCR_EXIT_CORRUPT	= 15,
	MCR_EXIT_NO_EVENTS	= 16,
	MCR_EXIT_BAD_INPUT	= 17,
	MCR_EXIT_NO_RUNS	= 18,
	MCR_EXIT_COMMAND	= 19,	/* memcg-capture: its COMMAND failed */
	MCR_EXIT_OLDER		= 20,	/* results written by an older memcg-replay */
	MCR_EXIT_STALE		= 21,	/* report --fail-on-stale: stale reads found */
};

const char *mcr_strerror(int err);	/* err negative: -errno or -MCR_E_* */
int mcr_exit_code(int err);		/* err negative; maps to enum mcr_exit */

#endif
