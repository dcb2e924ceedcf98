// SPDX-License-Identifier: GPL-2.0
/*
 * memcg-replay: offline replay of memcg rstat traces against walk policies.
 * One subcommand per file; this table names them.
 */
#include <argp.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

const char *cli_prog = "memcg-replay";

static const struct cli_cmd {
	const char	*name;
	int		(*main)(int argc, char **argv);
	const char	*summary;
} cli_cmds[] = {
	{ "synth",	cmd_synth,	"write a synthetic trace database (seed-race, pagecache, fleet)" },
	{ "import",	cmd_import,	"import a trace-cmd recording (trace.dat) into a trace database" },
	{ "replay",	cmd_replay,	"replay a trace against walk policies; store and summarize staleness" },
	{ "validate",	cmd_validate,	"check the simulator reproduces the kernel's own recorded counters" },
	{ "report",	cmd_report,	"print the lag report: policies side by side (table, CSV, JSON)" },
	{ "events",	cmd_events,	"the events as CSV rows or the SQL table events; convert an old file" },
	{ "calibrate",	cmd_calibrate,	"measure what the update path's operations cost on this host" },
	{ "info",	cmd_info,	"describe a trace database: source, kernel, CPUs, events, runs" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "Usage: memcg-replay COMMAND [OPTION...] FILE\n\n"
		"Replays memcg stat-update traces against the kernel's ancestor-walk policies\n"
		"(break: 6.16+, continue: the proposed fix, legacy: 6.8-6.15) and measures how\n"
		"stale each cgroup's memory.stat gets.\n\nCommands:\n");
	for (i = 0; i < sizeof(cli_cmds) / sizeof(cli_cmds[0]); i++)
		fprintf(f, "  %-10s %s\n", cli_cmds[i].name, cli_cmds[i].summary);
	fprintf(f, "\nTypical use:\n"
		"  memcg-capture -o host.db -d 60          # on the host, as root\n"
		"  memcg-replay replay host.db             # offline, no root\n"
		"  memcg-replay report host.db --format csv\n"
		"  sqlite3 host.db 'SELECT * FROM lag_report'\n"
		"\n'memcg-replay COMMAND --help' describes each command and its exit codes.\n");
}

int main(int argc, char **argv)
{
	size_t i;

	argp_err_exit_status = MCR_EXIT_USAGE;
	if (argc < 2) {
		usage(stderr);
		return MCR_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return MCR_EXIT_OK;
	}
	/* undocumented: the README's exit-code table, which a test compares */
	if (!strcmp(argv[1], "--exit-codes")) {
		cli_exit_table(stdout);
		return MCR_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("memcg-replay %s\n", MCR_VERSION);
		return MCR_EXIT_OK;
	}
	for (i = 0; i < sizeof(cli_cmds) / sizeof(cli_cmds[0]); i++) {
		char name[64];

		if (strcmp(argv[1], cli_cmds[i].name))
			continue;
		/* argp names the program by argv[0] in its messages and usage lines */
		snprintf(name, sizeof(name), "%s %s", cli_prog, cli_cmds[i].name);
		argv[1] = name;
		return cli_cmds[i].main(argc - 1, argv + 1);
	}
	cli_msg("unknown command '%s' (try 'memcg-replay --help')", argv[1]);
	return MCR_EXIT_USAGE;
}
