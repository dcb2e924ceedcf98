// SPDX-License-Identifier: GPL-2.0
/* PLACEHOLDER: replaced by the owner of this subcommand. */
#include "cli.h"

int cmd_validate(int argc, char **argv)
{
	cli_msg("validate: not built yet");
	return MCR_EXIT_FAILURE;
}
