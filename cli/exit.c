// SPDX-License-Identifier: GPL-2.0
/* The one table of exit codes, and the --help sections and README table made from it. */
#include <argp.h>
#include <stdlib.h>

#include "error.h"
#include "exit.h"
#include "msg.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Every subcommand that opens an existing trace database through db_open(). */
#define CLI_READERS	(CLI_REPLAY | CLI_VALIDATE | CLI_REPORT | CLI_INFO | CLI_EVENTS | \
			 CLI_CALIBRATE)
#define CLI_ALL		(CLI_CAPTURE | CLI_SYNTH | CLI_IMPORT | CLI_READERS)

static const struct {
	const char	*name;
	const char	*meaning;
	unsigned int	tools;
} cli_exits[] = {
	[MCR_EXIT_OK]		= { "OK", "success", CLI_ALL },
	[MCR_EXIT_FAILURE]	= { "FAILURE", "unexpected failure (I/O, out of memory)", CLI_ALL },
	[MCR_EXIT_USAGE]	= { "USAGE", "bad command line", CLI_ALL },
	[MCR_EXIT_NOFILE]	= { "NOFILE", "input file missing, unreadable or not a regular "
				    "file; or the output cannot be created, is refused, or "
				    "was taken by another process meanwhile", CLI_ALL },
	[MCR_EXIT_NOT_SQLITE]	= { "NOT_SQLITE", "not an SQLite file", CLI_READERS },
	[MCR_EXIT_NOT_OURS]	= { "NOT_OURS", "SQLite, but not a memcg-replay trace database",
				    CLI_READERS },
	[MCR_EXIT_NEWER]	= { "NEWER", "database schema newer than this build", CLI_READERS },
	[MCR_EXIT_SCHEMA]	= { "SCHEMA", "database missing a table (damaged or incomplete)",
				    CLI_READERS },
	/* import: what it would write, checked as the readers check it */
	[MCR_EXIT_TIME]		= { "TIME", "timestamps go backwards within one CPU",
				    CLI_IMPORT | CLI_READERS },
	[MCR_EXIT_CPU]		= { "CPU", "an event names a CPU beyond the recorded possible CPUs",
				    CLI_IMPORT | CLI_READERS },
	[MCR_EXIT_MATCH]	= { "MATCH", "stats_updates match rate below --min-match, or nothing "
				    "compared", CLI_VALIDATE },
	[MCR_EXIT_LOST]		= { "LOST", "events were lost (the database is complete up to each "
				    "loss)", CLI_CAPTURE },
	[MCR_EXIT_NOT_ROOT]	= { "NOT_ROOT", "not root", CLI_CAPTURE },
	[MCR_EXIT_NO_TRACEFS]	= { "NO_TRACEFS", "no tracefs", CLI_CAPTURE },
	[MCR_EXIT_NO_MEMCG_EVENTS] = { "NO_MEMCG_EVENTS", "kernel without memcg tracepoints (before "
				       "6.13)", CLI_CAPTURE },
	[MCR_EXIT_CORRUPT]	= { "CORRUPT", "not a trace.dat, truncated or corrupt; or a corrupt "
				    "event chunk or result row in a database", CLI_IMPORT | CLI_READERS },
	[MCR_EXIT_NO_EVENTS]	= { "NO_EVENTS", "no memcg events in the input; or a capture stopped "
				    "by a signal before it stored one (-o FILE is not written)",
				    CLI_CAPTURE | CLI_IMPORT },
	[MCR_EXIT_BAD_INPUT]	= { "BAD_INPUT", "other invalid input (an unknown name, path or "
				    "value; a database value out of range or a broken cgroup "
				    "hierarchy)", CLI_CAPTURE | CLI_IMPORT | CLI_READERS },
	[MCR_EXIT_NO_RUNS]	= { "NO_RUNS", "the database holds no replay results yet", CLI_REPORT },
	[MCR_EXIT_COMMAND]	= { "COMMAND", "its -- COMMAND exited non-zero on its own (the "
				    "recording is complete; 11 wins)", CLI_CAPTURE },
	[MCR_EXIT_OLDER]	= { "OLDER", "the results were written by an older memcg-replay: "
				    "replay the file again", CLI_REPORT },
	[MCR_EXIT_STALE]	= { "STALE", "--fail-on-stale: readers got stale reads under the traced "
				    "kernel's policy (the report is complete)", CLI_REPORT },
};
_Static_assert(ARRAY_SIZE(cli_exits) == MCR_EXIT_STALE + 1, "an exit code without its row");

static const char *const cli_tool_names[] = {
	"memcg-capture", "synth", "import", "replay", "validate", "report", "info", "events",
	"calibrate",
};

static void exit_help(FILE *f, unsigned int tool, const char *lead_blank)
{
	size_t i;
	char lead[16];

	fprintf(f, "%sExit status:\n", lead_blank);
	for (i = 0; i < ARRAY_SIZE(cli_exits); i++)
		if (cli_exits[i].tools & tool) {
			snprintf(lead, sizeof(lead), "  %2zu  ", i);
			cli_help_fill(f, lead, cli_exits[i].meaning, 6);
		}
}

void cli_exit_help(FILE *f, unsigned int tool)
{
	exit_help(f, tool, "\n");
}

char *cli_exit_help_filter(int key, const char *text, unsigned int tool)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (key != ARGP_KEY_HELP_EXTRA)
		return (char *)text;
	f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	exit_help(f, tool, "");	/* argp separates it from what precedes */
	fclose(f);
	return buf;
}

void cli_exit_table(FILE *f)
{
	size_t i, t;

	fprintf(f, "| code | name | meaning | returned by |\n|---|---|---|---|\n");
	for (i = 0; i < ARRAY_SIZE(cli_exits); i++) {
		const char *sep = "";

		fprintf(f, "| %zu | %s | %s | ", i, cli_exits[i].name, cli_exits[i].meaning);
		if (cli_exits[i].tools == CLI_ALL) {
			fprintf(f, "all |\n");
			continue;
		}
		for (t = 0; t < ARRAY_SIZE(cli_tool_names); t++)
			if (cli_exits[i].tools & 1u << t) {
				fprintf(f, "%s`%s`", sep, cli_tool_names[t]);
				sep = ", ";
			}
		fprintf(f, " |\n");
	}
}
