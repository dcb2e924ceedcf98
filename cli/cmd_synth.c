// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_synth.c - memcg-replay synth: write a synthetic trace database.
 * The scenarios and their options come from the table in capture/synth.c;
 * this file only turns them into argp options and help text.
 */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "outfile.h"
#include "synth.h"

#define SYNTH_OPT_SEED		1000
#define SYNTH_OPT_FORCE		1001
#define SYNTH_OPT_PARAM0	1100	/* + index in the union of scenario options */
#define SYNTH_MAX_UNION		64

struct synth_cli {
	const char	*scenario;
	const char	*output;
	uint64_t	seed;
	bool		quiet;
	bool		force;
	/*
	 * --NAME=VALUE of scenario options, applied in order once the scenario
	 * is known: as many as the command line has words (an option may be
	 * given again, each value is checked)
	 */
	const char	**names;
	const char	**values;
	size_t		nr_values;
	const char	*union_names[SYNTH_MAX_UNION];
	size_t		nr_union;
	struct cli_progress progress;
	uint64_t	done;
};

static const char synth_doc[] =
	"Write a synthetic trace database: a BREAK-policy simulator plays the kernel (6.18, "
	"per-CPU rstat lock windows) and its memcg_flush_stats carry its own stats_updates "
	"and needs_flush.  Deterministic for a given --seed.";

static void union_add(struct synth_cli *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->nr_union; i++)
		if (!strcmp(c->union_names[i], name))
			return;
	if (c->nr_union < SYNTH_MAX_UNION)
		c->union_names[c->nr_union++] = name;
}

/* "pagecache: what (unit, default 4); fleet: ... (default 8)" for one option name. */
static char *param_doc(const char *name)
{
	const struct synth_scenario *sc;
	const struct synth_param *p;
	const char *sep = "";
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	for (i = 0; (sc = synth_scenario_at(i)); i++) {
		for (p = sc->params; p->name; p++) {
			if (strcmp(p->name, name))
				continue;
			fprintf(f, "%s%s: %s (%s, default %.10g)", sep, sc->name, p->help, p->unit, p->def);
			sep = "; ";
		}
	}
	fclose(f);
	return buf;
}

static error_t synth_parse(int key, char *arg, struct argp_state *state)
{
	struct synth_cli *c = state->input;
	char *end;

	switch (key) {
	case 's':
		c->scenario = arg;
		return 0;
	case 'o':
		c->output = arg;
		return 0;
	case 'q':
		c->quiet = true;
		return 0;
	case SYNTH_OPT_FORCE:
		c->force = true;
		return 0;
	case SYNTH_OPT_SEED:
		errno = 0;
		c->seed = strtoull(arg, &end, 0);
		if (errno || end == arg || *end || *arg == '-')
			argp_error(state, "--seed: '%s' is not a non-negative integer", arg);
		return 0;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s' (the output file goes after -o)", arg);
		return 0;
	case ARGP_KEY_END:
		if (!c->scenario)
			argp_error(state, "--scenario is required");
		if (!c->output)
			argp_error(state, "-o FILE is required");
		return 0;
	default:
		if (key >= SYNTH_OPT_PARAM0 && key < SYNTH_OPT_PARAM0 + (int)c->nr_union) {
			c->names[c->nr_values] = c->union_names[key - SYNTH_OPT_PARAM0];
			c->values[c->nr_values++] = arg;
			return 0;
		}
		return ARGP_ERR_UNKNOWN;
	}
}

static char *synth_help(int key, const char *text, void *input)
{
	const struct synth_scenario *sc;
	const struct synth_param *p;
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f;

	if (key != ARGP_KEY_HELP_PRE_DOC)
		return cli_exit_help_filter(key, text, CLI_SYNTH);
	f = open_memstream(&buf, &len);
	if (!f)
		return (char *)text;
	fprintf(f, "%s\n\nScenarios (options below):\n", text);
	for (i = 0; (sc = synth_scenario_at(i)); i++) {
		char *opts = NULL, lead[16];
		size_t olen = 0;
		FILE *o = open_memstream(&opts, &olen);

		snprintf(lead, sizeof(lead), "  %-10s ", sc->name);
		cli_help_fill(f, lead, sc->summary, 13);
		if (!o)
			break;
		for (p = sc->params; p->name; p++)
			fprintf(o, " --%s=%.10g", p->name, p->def);
		fprintf(o, "%s", sc->params->name ? "" : " (no options)");
		fclose(o);
		if (opts)
			cli_help_fill(f, "             ", opts, 13);
		free(opts);
	}
	fclose(f);
	return buf;
}

/* Progress on a TTY, from the event tap. */
static int synth_tap(void *ctx, const struct mcr_event *ev)
{
	struct synth_cli *c = ctx;

	if (!(++c->done & 0xffff))
		cli_progress_update(&c->progress, c->done);
	return 0;
}

static void synth_summary(const struct synth_cli *c, const struct synth_args *a,
			  const struct synth_stats *st, double secs)
{
	uint64_t updates = st->by_kind[MCR_EV_STATE] + st->by_kind[MCR_EV_LRUVEC] +
			   st->by_kind[MCR_EV_EVENTS];

	printf("synth %s (seed %" PRIu64 "): %" PRIu64 " events (%" PRIu64 " updates, %" PRIu64
	       " flush requests, %" PRIu64 " flushes), %u cgroups, %u CPUs, %.3f s of trace -> %s\n",
	       a->sc->name, a->seed, st->events, updates, st->flush_requests, st->flushes,
	       st->nr_cgroups, st->nr_cpus, (double)(st->last_ts - st->first_ts) / 1e9, c->output);
	printf("wrote %" PRIu64 " events in %.2f s: %.0f rows/s\n", st->events, secs,
	       secs > 0 ? (double)st->events / secs : 0);
	if (st->first_stuck_ts)
		printf("ground truth (break): the root is first stuck at %.6f s into the trace\n",
		       (double)(st->first_stuck_ts - st->first_ts) / 1e9);
}

#define SYNTH_NR_BASE	5

/*
 * The option table: the fixed options, then one --NAME per scenario option
 * name (the union over scenarios), each documented by param_doc() into
 * @docs[i], which the caller frees.
 */
static void synth_options(struct synth_cli *c, struct argp_option *opts, char **docs)
{
	static const struct argp_option base[SYNTH_NR_BASE] = {
		{ "scenario", 's', "NAME", 0, "scenario to generate (see the list above)", 0 },
		{ "output", 'o', "FILE", 0, "trace database to write (a database it replaces is kept "
		  "until the new one is complete)", 0 },
		{ "force", SYNTH_OPT_FORCE, NULL, 0, "replace FILE even if it is not a memcg-replay "
		  "database (never a device, FIFO or directory)", 0 },
		{ "seed", SYNTH_OPT_SEED, "N", 0, "PRNG seed (default 1)", 0 },
		{ "quiet", 'q', NULL, 0, "print nothing on success", 0 },
	};
	const struct synth_scenario *sc;
	const struct synth_param *p;
	size_t i, n = 0;

	for (i = 0; (sc = synth_scenario_at(i)); i++)
		for (p = sc->params; p->name; p++)
			union_add(c, p->name);
	for (i = 0; i < SYNTH_NR_BASE; i++)
		opts[n++] = base[i];
	opts[n++] = (struct argp_option){ .doc = "Scenario options (each applies to the scenarios named):" };
	for (i = 0; i < c->nr_union; i++) {
		docs[i] = param_doc(c->union_names[i]);
		opts[n++] = (struct argp_option){ .name = c->union_names[i],
						  .key = SYNTH_OPT_PARAM0 + (int)i,
						  .arg = "N", .doc = docs[i] };
	}
}

/* The scenario and its options from the command line; false (said why) if one is wrong. */
static bool synth_resolve(const struct synth_cli *c, struct synth_args *a)
{
	const struct synth_scenario *sc = synth_scenario_find(c->scenario);
	size_t i;
	int err;

	if (!sc) {
		cli_msg("synth: unknown scenario '%s' (try 'memcg-replay synth --help')", c->scenario);
		return false;
	}
	synth_args_init(a, sc, c->seed);
	for (i = 0; i < c->nr_values; i++) {
		err = synth_args_set(a, c->names[i], c->values[i]);
		if (err == -ENOENT) {
			cli_msg("synth: scenario '%s' has no option --%s", sc->name, c->names[i]);
			return false;
		}
		if (err) {
			cli_msg("synth: --%s=%s: not a valid value (see 'memcg-replay synth --help')",
				c->names[i], c->values[i]);
			return false;
		}
	}
	return true;
}

/*
 * Generates the trace into c->output; an exit code.  Written under a temporary
 * name and renamed at the end (cli/outfile.h): a failed or interrupted run
 * leaves the old file as it was and nothing else.
 */
static int synth_write(struct synth_cli *c, const struct synth_args *a)
{
	struct synth_out out = { .event = synth_tap, .ctx = c };
	struct outfile_policy pol = { .force = c->force };
	struct synth_stats st;
	struct outfile of;
	struct db *db = NULL;
	uint64_t t0;
	int err;

	err = cli_outfile_begin("synth", &of, c->output, &pol);
	if (err)
		return err;
	err = db_create(of.tmp, &db);
	if (err < 0) {
		outfile_abort(&of);
		return cli_fail(err, "synth: cannot create %s", c->output);
	}
	out.db = db;
	cli_progress_init(&c->progress, "synth", 0);
	if (c->quiet)
		cli_progress_quiet(&c->progress);
	t0 = cli_now_ns();
	err = synth_run(a, &out, &st);
	if (!err)
		err = db_close(db);
	else
		db_close(db);
	if (err < 0) {
		outfile_abort(&of);
		return cli_fail(err, "synth: %s", c->output);
	}
	err = cli_outfile_commit("synth", &of);
	if (err)
		return err;
	cli_progress_done(&c->progress, st.events);
	if (!c->quiet)
		synth_summary(c, a, &st, (double)(cli_now_ns() - t0) / 1e9);
	return MCR_EXIT_OK;
}

int cmd_synth(int argc, char **argv)
{
	struct argp_option opts[SYNTH_NR_BASE + 1 + SYNTH_MAX_UNION + 1] = { 0 };
	char *docs[SYNTH_MAX_UNION] = { NULL };
	struct synth_cli c = { .seed = 1 };
	struct argp argp = { opts, synth_parse, NULL, synth_doc, NULL, synth_help, NULL };
	struct synth_args a;
	int rc = MCR_EXIT_USAGE;
	size_t i;

	c.names = calloc((size_t)argc, sizeof(*c.names));
	c.values = calloc((size_t)argc, sizeof(*c.values));
	if (!c.names || !c.values) {
		rc = cli_fail(-ENOMEM, "synth");
		goto out;
	}
	synth_options(&c, opts, docs);
	if (!argp_parse(&argp, argc, argv, 0, NULL, &c) && synth_resolve(&c, &a))
		rc = synth_write(&c, &a);
out:
	for (i = 0; i < c.nr_union; i++)
		free(docs[i]);
	free(c.names);
	free(c.values);
	return rc;
}
