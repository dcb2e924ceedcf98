// SPDX-License-Identifier: GPL-2.0
/*
 * memcg-replay replay FILE: every policy against the trace in one pass;
 * results into FILE, a short summary of where the policies differ most.
 */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "replay.h"

#define REPLAY_TOP_GAPS	5

struct replay_opts {
	const char	*file;
	const char	*policies;
	const char	*model;
	double		sample_ms;
	unsigned int	max_hyp;
};

static const struct argp_option replay_options[] = {
	{ "policy", 'p', "LIST", 0, "comma-separated walk policies (default: break,continue,legacy)", 0 },
	{ "flush-model", 'm', "MODEL", 0, "where flush visits happen when the trace does not say", 0 },
	{ "sample-ms", 's', "N", 0, "staleness sample period in trace ms (default 100; 0: reads only)", 0 },
	CLI_OPTION_MAX_HYP,
	{ 0 }
};

static error_t replay_parse(int key, char *arg, struct argp_state *state)
{
	struct replay_opts *o = state->input;
	char *end;

	switch (key) {
	case 'p':
		o->policies = arg;
		break;
	case 'm':
		o->model = arg;
		break;
	case 's':
		errno = 0;
		o->sample_ms = strtod(arg, &end);
		if (errno || *end || o->sample_ms < 0 || o->sample_ms > 1e9)
			argp_error(state, "--sample-ms: not a number of ms: '%s'", arg);
		break;
	case 'H':
		o->max_hyp = cli_arg_max_hyp(state, arg);
		break;
	default:
		return cli_arg_file(key, arg, state, &o->file);
	}
	return 0;
}

static char *replay_help_extra(void)
{
	const struct sim_policy *pol;
	const struct replay_model *m;
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fprintf(f, "Policies:\n");
	for (i = 0; (pol = sim_policy_at(i)); i++)
		fprintf(f, "  %-9s %s\n            %s\n", pol->name, pol->kernels, pol->summary);
	fprintf(f, "\nFlush models (explicit visit events in a trace override them):\n");
	for (i = 0; (m = replay_model_at(i)); i++)
		fprintf(f, "  %-9s %s%s\n", m->name, m->summary, replay_model_default_note(m));
	fprintf(f, "  %s\n", replay_model_default_why);
	fprintf(f, "  inferred first replays the trace with the traced kernel's own policy and\n"
		"  keeps, for every update that landed inside a lock window, the order that\n"
		"  best explains the kernel's recorded memcg_flush_stats values (see\n"
		"  'memcg-replay validate --help'); every policy then sees that order in the\n"
		"  windows the trace has.  Flushes the trace does not have (a policy that\n"
		"  flushes where the kernel skipped) happen at the request.  It costs one\n"
		"  extra pass.\n");
	fprintf(f, "\nWritten into FILE, one run per policy, in one transaction:\n"
		"  runs            policy, flush model, options, events, wall time, costs\n"
		"  reads           every memcg_flush_stats: decision, missing pages, stale\n"
		"  series          staleness per cgroup at every read and --sample-ms\n"
		"  cgroup_summary  max/p50/p99/mean missing, max age, stale reads, stuck\n"
		"  item_summary    signed missing pages per stat item\n"
		"  lag_report      view: policies side by side (memcg-replay report)\n");
	cli_exit_help(f, CLI_REPLAY);
	fclose(f);
	return buf;
}

static char *replay_help_filter(int key, const char *text, void *input)
{
	if (key == ARGP_KEY_HELP_EXTRA)
		return replay_help_extra();
	return (char *)text;
}

static const struct argp replay_argp = {
	replay_options, replay_parse, "FILE",
	"Replay a trace database against walk policies in one pass and store how stale each "
	"cgroup's memory.stat gets under each.\v", NULL, replay_help_filter, NULL,
};

static int replay_parse_policies(const char *list, struct replay_params *p)
{
	char *dup = strdup(list), *save = NULL, *tok;
	int ret = 0;

	if (!dup)
		return -ENOMEM;
	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		const struct sim_policy *pol = sim_policy_find(tok);
		unsigned int i;

		if (!pol || p->nr_policies == REPLAY_MAX_POLICIES) {
			ret = -EINVAL;
			break;
		}
		for (i = 0; i < p->nr_policies; i++)
			if (p->policies[i] == pol)
				break;
		if (i == p->nr_policies)
			p->policies[p->nr_policies++] = pol;
	}
	free(dup);
	return ret ? ret : (p->nr_policies ? 0 : -EINVAL);
}

static void replay_usage_names(const char *what, const char *bad)
{
	const struct sim_policy *pol;
	const struct replay_model *m;
	char names[256] = "";
	size_t i;

	if (!strcmp(what, "policy"))
		for (i = 0; (pol = sim_policy_at(i)); i++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
				 i ? ", " : "", pol->name);
	else
		for (i = 0; (m = replay_model_at(i)); i++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
				 i ? ", " : "", m->name);
	cli_msg("unknown %s '%s' (valid: %s)", what, bad, names);
}

/* One progress line per pass: the flush model's prepass ("infer"), then the replay. */
struct replay_prog {
	struct cli_progress	line;
	const char		*pass;	/* the line's: NULL the replay */
	uint64_t		total, done;
	bool			started;
};

static void replay_progress(void *ctx, const char *pass, uint64_t done)
{
	struct replay_prog *rp = ctx;

	if (!rp->started || pass != rp->pass) {
		if (rp->started)
			cli_progress_done(&rp->line, rp->done);
		cli_progress_init(&rp->line, pass ? pass : "replay", rp->total);
		rp->pass = pass;
		rp->started = true;
	}
	rp->done = done;
	cli_progress_update(&rp->line, done);
}

struct gap_row {
	uint64_t	id;
	double		gap;
};

static int gap_cmp(const void *a, const void *b)
{
	const struct gap_row *x = a, *y = b;

	return x->gap < y->gap ? 1 : x->gap > y->gap ? -1 : (x->id > y->id) - (x->id < y->id);
}

/* The non-leaf cgroups whose max missing pages differ most between policies. */
static void replay_print_gaps(struct replay *r)
{
	const struct replay_params *p = replay_params(r);
	size_t n = replay_cgroup_count(r), i, k = 0;
	struct gap_row *rows = calloc(n ? n : 1, sizeof(*rows));
	unsigned int pol;

	if (!rows)
		return;
	for (i = 0; i < n; i++) {
		uint64_t id = replay_cgroup_id(r, i);
		double lo = 0, hi = 0;

		if (replay_cgroup_is_leaf(r, id))
			continue;
		for (pol = 0; pol < p->nr_policies; pol++) {
			struct replay_summary s;
			double v;

			if (replay_summary_get(r, pol, id, &s) < 0)
				break;
			v = (double)s.max_missing + s.mean_missing + (double)s.stale_reads;
			if (!pol || v < lo)
				lo = v;
			if (!pol || v > hi)
				hi = v;
		}
		if (pol == p->nr_policies)
			rows[k++] = (struct gap_row){ .id = id, .gap = hi - lo };
	}
	qsort(rows, k, sizeof(*rows), gap_cmp);
	printf("Ancestors with the largest gap between policies (missing pages):\n");
	if (!k)
		printf("  (no cgroup with children)\n");
	for (i = 0; i < k && i < REPLAY_TOP_GAPS; i++) {
		const char *path = replay_cgroup_path(r, rows[i].id);

		printf("  %s (id %" PRIu64 ")\n", path ? path : "?", rows[i].id);
		printf("    %-10s %12s %12s %12s %12s %12s %12s\n", "policy", "max_missing",
		       "p99_missing", "mean_missing", "stale_reads", "stale_max", "stuck_ms");
		for (pol = 0; pol < p->nr_policies; pol++) {
			struct replay_summary s;

			if (replay_summary_get(r, pol, rows[i].id, &s) < 0)
				continue;
			printf("    %-10s %12" PRIu64 " %12" PRIu64 " %12.1f %12" PRIu64 " %12" PRIu64
			       " %12.1f\n", p->policies[pol]->name, s.max_missing, s.p99_missing,
			       s.mean_missing, s.stale_reads, s.stale_max, s.stuck_ms);
		}
	}
	free(rows);
}

static void replay_print_costs(struct replay_pass *ps)
{
	const struct replay_params *p = replay_params(ps->r);
	const struct replay_stats *st = replay_stats(ps->r);
	unsigned int pol;

	printf("\nCost per policy:\n  %-10s %12s %12s %12s %10s %10s %12s %12s %8s\n", "policy",
	       "walk_steps", "pcpu_adds", "atomic_adds", "dropped", "flushes", "visits",
	       "atomic_resets", "run_id");
	for (pol = 0; pol < p->nr_policies; pol++) {
		struct sim_cost c;

		sim_cost_get(replay_sim(ps->r, pol), &c);
		printf("  %-10s %12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %10" PRIu64 " %10" PRIu64
		       " %12" PRIu64 " %12" PRIu64 " %8" PRId64 "\n", p->policies[pol]->name,
		       c.walk_steps, c.pcpu_adds, c.atomic_adds, c.dropped_batches, c.flushes,
		       c.visits, c.atomic_resets, replay_store_run_id(ps->store, pol));
	}
	printf("\n%" PRIu64 " events (%" PRIu64 " updates, %" PRIu64 " reads) in %.2f s; lock windows: "
	       "%" PRIu64 " of flush requests, %" PRIu64 " lock-only, %" PRIu64 " with visit events",
	       st->events, st->updates, st->flush_events, ps->wall_s, st->win.owned,
	       st->win.lock_only, st->win.explicit_windows);
	if (st->win.missing)
		printf(", %" PRIu64 " flushes whose windows never came", st->win.missing);
	printf(".\n");
}

int cmd_replay(int argc, char **argv)
{
	struct replay_opts o = { .policies = "break,continue,legacy", .sample_ms = 100 };
	struct replay_params p = { .max_mismatches = 0 };
	const struct replay_prepass *prep;
	const struct replay_model *model = NULL;
	struct replay_prog prog = { 0 };
	struct replay_trace t;
	struct replay_pass ps;
	const char *why;
	struct db *db;
	int ret, rc;

	argp_parse(&replay_argp, argc, argv, 0, NULL, &o);
	if (replay_parse_policies(o.policies, &p) < 0) {
		replay_usage_names("policy", o.policies);
		return MCR_EXIT_USAGE;
	}
	if (o.model && replay_model_find(o.model, &model) < 0) {
		replay_usage_names("flush model", o.model);
		return MCR_EXIT_USAGE;
	}
	p.sample_ns = (uint64_t)(o.sample_ms * 1e6);
	p.max_hypotheses = o.max_hyp;

	db = cli_open_db(o.file, true, &rc);
	if (!db)
		return rc;
	ret = replay_trace_load(db, &t);
	if (ret < 0) {
		rc = cli_fail(ret, "%s", o.file);
		db_close(db);
		return rc;
	}
	if (!model)
		model = replay_model_default(&t);
	else if ((why = replay_model_unmet(model, &t)))
		cli_msg("%s: flush model %s %s", o.file, model->name, why);
	p.model = model;
	prog.total = t.nr_events;
	p.progress = replay_progress;
	p.progress_ctx = &prog;
	ret = replay_pass_db(db, &t, o.file, "replay", &p, &ps);
	if (prog.started)
		cli_progress_done(&prog.line, prog.done);
	if (ret < 0) {
		rc = cli_fail(ret, "%s", o.file);
	} else {
		prep = replay_prepass(ps.r);
		if (prep)
			printf("Inferred order: %zu updates inside lock windows placed, by %s (the "
			       "traced kernel's policy) in %.2f s.\n", prep->placed, prep->policy->name,
			       ps.prepass_s);
		replay_print_gaps(ps.r);
		replay_print_costs(&ps);
		printf("Runs stored in %s; see 'memcg-replay report %s' or "
		       "sqlite3 %s 'SELECT * FROM lag_report'.\n", o.file, o.file, o.file);
		rc = MCR_EXIT_OK;
	}
	replay_pass_free(&ps);
	replay_trace_free(&t);
	ret = db_close(db);
	if (ret < 0 && rc == MCR_EXIT_OK)
		rc = cli_fail(ret, "%s", o.file);
	return rc;
}
