/* SPDX-License-Identifier: GPL-2.0 */
/*
 * exit.h - the exit codes of memcg-capture and memcg-replay: one table with
 * each code's name, one-line meaning and the commands that can return it.
 *
 * Contract: every --help's "Exit status" section is printed from this table,
 * and `memcg-replay --exit-codes` prints it as the README's table (a test
 * compares the two).  The numbers themselves are enum mcr_exit (sim/base/error.h);
 * never renumber them.  Prints only where asked to, to the FILE given.
 */
#ifndef MCR_CLI_EXIT_H
#define MCR_CLI_EXIT_H

#include <stdio.h>

/* Which command: a bit each, so a code can name every command returning it. */
enum cli_tool {
	CLI_CAPTURE	= 1 << 0,	/* memcg-capture */
	CLI_SYNTH	= 1 << 1,	/* memcg-replay synth, and so on */
	CLI_IMPORT	= 1 << 2,
	CLI_REPLAY	= 1 << 3,
	CLI_VALIDATE	= 1 << 4,
	CLI_REPORT	= 1 << 5,
	CLI_INFO	= 1 << 6,
	CLI_EVENTS	= 1 << 7,
	CLI_CALIBRATE	= 1 << 8,
};

/* Prints "\nExit status:\n" and a line per code @tool (one CLI_*) can return. */
void cli_exit_help(FILE *f, unsigned int tool);

/*
 * For an argp help_filter with nothing else to add: at ARGP_KEY_HELP_EXTRA the
 * "Exit status" section of @tool (malloc'd), otherwise @text unchanged.
 */
char *cli_exit_help_filter(int key, const char *text, unsigned int tool);

/* The README's "Exit codes" table, Markdown, one row per code. */
void cli_exit_table(FILE *f);

#endif
