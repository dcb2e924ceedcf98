// SPDX-License-Identifier: GPL-2.0
/*
 * Error and notice lines of both programs.  Each first flushes stdout, so a
 * message lands after what was printed before it when both go to one file.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "msg.h"

void cli_msg(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", cli_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_fail(int err, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", cli_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", mcr_strerror(err));
	return mcr_exit_code(err);
}

int cli_fail_bare(int err)
{
	cli_msg("%s", mcr_strerror(err));
	return mcr_exit_code(err);
}

#define CLI_HELP_RMARGIN	78	/* the longest line argp (rmargin 79) leaves alone */

void cli_help_fill(FILE *f, const char *lead, const char *text, int indent)
{
	int col = fprintf(f, "%s", lead), first = 1;
	const char *w = text;

	for (;;) {
		size_t n;

		w += strspn(w, " \n");
		if (!*w)
			break;
		n = strcspn(w, " \n");
		/*
		 * A word of one or two characters ends no line: "-m inferred",
		 * "11 wins" and "TH 256" stay together.
		 */
		if (n <= 2 && w[n] == ' ' && w[n + 1] && w[n + 1] != ' ')
			n += 1 + strcspn(w + n + 1, " \n");
		if (!first && col + 1 + (int)n > CLI_HELP_RMARGIN)
			col = fprintf(f, "\n%*s", indent, "") - 1;
		else if (!first)
			col += fprintf(f, " ");
		col += fprintf(f, "%.*s", (int)n, w);
		first = 0;
		w += n;
	}
	fputc('\n', f);
}
