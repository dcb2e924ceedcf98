// SPDX-License-Identifier: GPL-2.0
/* Error and notice lines of both programs. */
#include <stdarg.h>
#include <stdio.h>

#include "error.h"
#include "msg.h"

void cli_msg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", cli_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_fail(int err, const char *fmt, ...)
{
	va_list ap;

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
