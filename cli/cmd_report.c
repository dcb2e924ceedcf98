// SPDX-License-Identifier: GPL-2.0
/* PLACEHOLDER: replaced by the owner of this subcommand. */
#include "cli.h"

int cmd_report(int argc, char **argv)
{
	cli_msg("report: not built yet");
	return MCR_EXIT_FAILURE;
}
