/* SPDX-License-Identifier: GPL-2.0 */
/*
 * msg.h - how memcg-capture and memcg-replay tell the user something went
 * wrong: one line on stderr, prefixed by the program's name, and the exit code
 * that goes with the error.
 *
 * Contract: the only code that turns a library's negative errno / -MCR_E_*
 * into words (mcr_strerror) and an exit code (mcr_exit_code) for the user.
 * Each program defines cli_prog.
 */
#ifndef MCR_CLI_MSG_H
#define MCR_CLI_MSG_H

#include <stdio.h>

extern const char *cli_prog;	/* "memcg-replay", "memcg-capture" */

/* "<prog>: <msg>\n" on stderr. */
void cli_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints "<prog>: <what>: <mcr_strerror(err)>" and returns mcr_exit_code(err). */
int cli_fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints "<prog>: <mcr_strerror(err)>" and returns mcr_exit_code(err). */
int cli_fail_bare(int err);

/*
 * One item of a --help list: @lead ("  spread    "), then the words of @text
 * filled to 78 columns, each further line indented by @indent blanks.  argp
 * leaves lines that fit as they are, where it would wrap a longer one at
 * column 0.  A word of one or two characters ("-m", "11") stays on the line
 * of the word after it.
 */
void cli_help_fill(FILE *f, const char *lead, const char *text, int indent);

#endif
