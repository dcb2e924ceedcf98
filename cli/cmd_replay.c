// SPDX-License-Identifier: GPL-2.0
/*
 * memcg-replay replay FILE: every run (policy x batch x CPUs) against the
 * trace in one pass; results into FILE, a short summary of where the runs
 * differ most.
 */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "grow.h"
#include "num.h"
#include "report/pass.h"
#include "replay.h"
#include "results.h"

#define REPLAY_SERIES_CGROUPS	256	/* read cgroups that get a series by default */
#define REPLAY_MAX_SERIES_ARGS	64
/*
 * The default series period.  A 60 s capture gives 1201 samples: about one
 * per pixel column of a plot, 40 between two of the kernel's periodic ~2 s
 * root flushes, so a stranded stretch of a few hundred ms spans several
 * samples; min_error and max_error keep what happens between samples.
 * Longer traces get span / REPLAY_SAMPLES_MAX, so a series never has more
 * than about 2000 rows per (cgroup, line) by default.
 */
#define REPLAY_SAMPLE_MS_DEFAULT	50
#define REPLAY_SAMPLES_MAX		2000
/* --sample-ms that gives more samples than this is refused: rows would swamp the trace */
#define REPLAY_SAMPLES_LIMIT		1000000

struct replay_opts {
	const char	*file;
	const char	*policies;
	unsigned int	batch[REPLAY_MAX_RUNS];	/* --batch; none: the trace's */
	unsigned int	nr_batch;
	unsigned int	cpus[REPLAY_MAX_RUNS];	/* --cpus; none: the trace's online CPUs */
	unsigned int	nr_cpus;
	const char	*model;
	const char	*series[REPLAY_MAX_SERIES_ARGS];
	unsigned int	nr_series;
	double		sample_ms;	/* < 0: the default */
	unsigned int	max_hyp;
	double		retry;		/* --retry */
	unsigned int	threads;	/* 0: the online CPUs */
	bool		quiet;
};

static const struct argp_option replay_options[] = {
	{ "policy", 'p', "LIST", 0, "comma-separated walk policies (default: break,continue,legacy)", 0 },
	{ "batch", 'b', "N[,N...]", 0, "MEMCG_CHARGE_BATCH values to simulate, 1 to "
	  CLI_STR(REPLAY_MAX_BATCH) " (default: the trace's, meta batch_size)", 0 },
	{ "cpus", 'c', "N[,N...]", 0, "online CPU counts to simulate, 1 to " CLI_STR(REPLAY_MAX_CPUS)
	  ": TH = batch x N (default: the trace's nr_cpus_online)", 0 },
	{ "flush-model", 'm', "MODEL", 0, "where flush visits go when the trace has none", 0 },
	{ "quiet", 'q', NULL, 0, "no progress line (shown only on a terminal)", 0 },
	{ "sample-ms", 's', "MS", 0, "series period in trace ms, > 0 (default "
	  CLI_STR(REPLAY_SAMPLE_MS_DEFAULT) ", or the trace's span / " CLI_STR(REPLAY_SAMPLES_MAX)
	  " if longer; 0: no series)", 0 },
	{ "series-cgroup", 'S', "CGROUP", 0, "a series for this cgroup (its path or id; and its ancestors) too; "
	  "repeatable.  By default: the cgroups that are read and their ancestors", 0 },
	CLI_OPTION_MAX_HYP,
	CLI_OPTION_RETRY,
	{ "threads", 'j', "N", 0, "threads for the policies' simulators and the inferred model's "
	  "prepass, 1 to 64 (default: the online CPUs: one to decode, the prepass's beside it, "
	  "then at most one per policy; a single policy: none of its own; 1: one thread, the "
	  "prepass before the replay).  The results do not depend on it", 0 },
	{ 0 }
};

/*
 * A --batch or --cpus list into @v: whole numbers in [1, @hi], no empty item,
 * no value twice (argp_error(): exit 2, like --policy).
 */
static unsigned int replay_parse_nums(struct argp_state *state, const char *opt, char *arg,
				      int64_t hi, unsigned int *v)
{
	char *tok, *save = NULL;
	unsigned int n = 0, i;
	int64_t x;

	if (!cli_list_ok(arg))
		argp_error(state, "--%s: '%s' has an empty or repeated item", opt, arg);
	for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (cli_num_i64(tok, 1, hi, &x))
			argp_error(state, "--%s: '%s' is not a whole number from 1 to %" PRId64, opt,
				   tok, hi);
		for (i = 0; i < n; i++)
			if (v[i] == (unsigned int)x)
				argp_error(state, "--%s: %" PRId64 " is given twice", opt, x);
		if (n == REPLAY_MAX_RUNS)
			argp_error(state, "--%s: at most %d values", opt, REPLAY_MAX_RUNS);
		v[n++] = (unsigned int)x;
	}
	return n;
}

static error_t replay_parse(int key, char *arg, struct argp_state *state)
{
	struct replay_opts *o = state->input;

	switch (key) {
	case 'b':
		o->nr_batch = replay_parse_nums(state, "batch", arg, REPLAY_MAX_BATCH, o->batch);
		break;
	case 'c':
		o->nr_cpus = replay_parse_nums(state, "cpus", arg, REPLAY_MAX_CPUS, o->cpus);
		break;
	case 'p':
		if (!cli_list_ok(arg))
			argp_error(state, "--policy: '%s' has an empty or repeated name", arg);
		o->policies = arg;
		break;
	case 'm':
		o->model = arg;
		break;
	case 's':
		/* 1 us is the finest period */
		if (cli_num_double(arg, 0, 1e9, &o->sample_ms) ||
		    (o->sample_ms != 0 && o->sample_ms < 0.001))
			argp_error(state, "--sample-ms: '%s' is not 0 nor a period of 0.001 to 1e9 ms",
				   arg);
		break;
	case 'S':
		if (o->nr_series == REPLAY_MAX_SERIES_ARGS)
			argp_error(state, "--series-cgroup: at most %d", REPLAY_MAX_SERIES_ARGS);
		o->series[o->nr_series++] = arg;
		break;
	case 'H':
		o->max_hyp = cli_arg_max_hyp(state, arg);
		break;
	case CLI_OPT_RETRY:
		o->retry = cli_arg_retry(state, arg);
		break;
	case 'j': {
		int64_t n;

		if (cli_num_i64(arg, 1, 64, &n))
			argp_error(state, "--threads: not a count in [1, 64]: '%s'", arg);
		o->threads = (unsigned int)n;
		break;
	}
	case 'q':
		o->quiet = true;
		break;
	default:
		return cli_arg_file(key, arg, state, &o->file);
	}
	return 0;
}

/* A flush model of the --help list: its summary filled beside its name. */
static void help_model(FILE *f, const struct replay_model *m, const char *note)
{
	char lead[32], text[512];

	snprintf(lead, sizeof(lead), "  %-9s ", m->name);
	snprintf(text, sizeof(text), "%s%s", m->summary, note);
	cli_help_fill(f, lead, text, 12);
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
	for (i = 0; (pol = sim_policy_at(i)); i++) {
		fprintf(f, "  %-9s %s\n", pol->name, pol->kernels);
		cli_help_fill(f, "            ", pol->summary, 12);
	}
	fprintf(f, "\nFlush models (explicit visit events in a trace override them):\n");
	for (i = 0; (m = replay_model_at(i)); i++)
		help_model(f, m, replay_model_default_note(m));
	cli_help_fill(f, "  ", replay_model_default_why, 2);
	fprintf(f, "  inferred first replays the trace with the traced kernel's own policy and\n"
		"  keeps, for every update that landed inside a lock window, the order that\n"
		"  best explains the kernel's recorded memcg_flush_stats values (see\n"
		"  'memcg-replay validate --help'); every policy then sees that order in the\n"
		"  windows the trace has.  Flushes the trace does not have (a policy that\n"
		"  flushes where the kernel skipped) happen at the request.  It costs one\n"
		"  extra pass.  It keeps at most --max-hypotheses orders at once; where it\n"
		"  drops others, replay says how many, and then the order it placed may not\n"
		"  be the kernel's.  Where it missed values after such drops, a wider search\n"
		"  runs from the start (--retry), and the replay follows its order where it\n"
		"  explains more.\n");
	fprintf(f, "\nThe parameter grid: --batch and --cpus take lists, and every\n"
		"(policy x batch x CPUs) combination is one run over the same events in\n"
		"the same pass, at most " CLI_STR(REPLAY_MAX_RUNS) " runs.  --batch sets MEMCG_CHARGE_BATCH:\n"
		"the per-CPU count at which memcg_rstat_updated() moves a batch into the\n"
		"memcg's atomic, and the factor of TH.  --cpus sets the online CPUs that\n"
		"multiply it: TH = batch x CPUs.  The events keep the CPUs they were\n"
		"traced on, which alone have per-CPU state: more CPUs than the trace's only\n"
		"raise TH; fewer leave the trace's other CPUs updating outside the count,\n"
		"so their per-CPU remainders can exceed the stranded limit under any\n"
		"policy.  Without a grid the runs are labelled by policy, as always; with\n"
		"one, each run is labelled policy b=BATCH cpus=N.  Validation compares\n"
		"only the trace's own batch and CPUs.  For example, on a 2-CPU trace:\n"
		"  memcg-replay replay --policy break,continue --batch 32,64,128 host.db\n"
		"makes 6 runs (break b=32 cpus=2 ... continue b=128 cpus=2), shown side\n"
		"by side by 'memcg-replay report host.db'.\n");
	fprintf(f, "\nWhat is measured, per run, cgroup and line of memory.stat (error =\n"
		"shown - truth, in the line's unit: pages, or events for PGFAULT and the\n"
		"like; state and lruvec updates of one item are one line):\n"
		"  read error: at each non-forced memcg_flush_stats of the cgroup, the\n"
		"    error after that read's flush decision: what that reader got.\n"
		"  visible error: 0 while the cgroup is flushable (stats_updates > TH),\n"
		"    else the error: what a reader arriving then would get.  Settled\n"
		"    while no flush is in progress; in flush from a flush's first lock\n"
		"    window to the end of its last (its transient: as large under every\n"
		"    policy).  The settled maximum is what tells the policies apart.\n"
		"  stranded: not flushable although the updates pending since its last\n"
		"    flush exceed TH + (batch - 1) x online CPUs (TH + 63 x CPUs at the\n"
		"    kernel's batch of 64); a stale read is one skipped then.  An episode\n"
		"    is noticeable if it skipped a read or lasted 1 ms; a shorter one\n"
		"    with no read inside met no reader.\n"
		"  pending: sum of |val| not yet flushed into the cgroup, in\n"
		"    stats_updates units (what the kernel's counter bounds), not memory.\n"
		"\nWritten into FILE, one run per policy (x batch x CPUs), in one transaction:\n"
		"  runs           policy, batch_size, nr_cpus, flush model, options, TH,\n"
		"                 events, time, costs\n"
		"  reads          every memcg_flush_stats: flushed or skipped, stranded,\n"
		"                 stale, pending; read_errors: each line it got wrong\n"
		"  stranded_episodes  start, end, worst line and error, reads skipped\n"
		"  series         visible error per (cgroup, line) every --sample-ms, no\n"
		"                 row skipped, with min and max in between;\n"
		"                 cgroup_series: pending, flushable, stranded\n"
		"  cgroup_summary reads, stale reads, stranded time and episodes (and the\n"
		"                 noticeable ones), pending\n"
		"  item_summary   read and visible errors per line, the visible maximum\n"
		"                 settled and in flush apart\n"
		"  lag_report     view: a row per (run, cgroup, line) (report);\n"
		"                 cgroup_lag_report: each cgroup's worst line\n"
		"  A FILE of an older memcg-replay has its results brought up to date\n"
		"  (schema 2: runs gets batch_size and nr_cpus) or, for schema 1, dropped\n"
		"  and made anew; report refuses schema 1 results until then.\n");
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

/* --policy into @pols (the table has a handful); -EINVAL for an unknown name. */
static int replay_parse_policies(const char *list, const struct sim_policy **pols,
				 unsigned int *nr)
{
	char *dup = strdup(list), *save = NULL, *tok;
	int ret = 0;

	if (!dup)
		return -ENOMEM;
	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		const struct sim_policy *pol = sim_policy_find(tok);
		unsigned int i;

		if (!pol || *nr == REPLAY_MAX_RUNS) {
			ret = -EINVAL;
			break;
		}
		for (i = 0; i < *nr; i++)
			if (pols[i] == pol)
				break;
		if (i == *nr)
			pols[(*nr)++] = pol;
	}
	free(dup);
	return ret ? ret : (*nr ? 0 : -EINVAL);
}

/*
 * The runs: policy-major, then batch, then CPUs, so that run ids follow the
 * order the report lists them in.  An unset list is the trace's own value.
 */
static void replay_runs(const struct replay_opts *o, const struct sim_policy *const *pols,
			unsigned int nr_pols, const struct replay_trace *t, struct replay_params *p)
{
	unsigned int i, b, c;

	for (i = 0; i < nr_pols; i++)
		for (b = 0; b < (o->nr_batch ? o->nr_batch : 1); b++)
			for (c = 0; c < (o->nr_cpus ? o->nr_cpus : 1); c++) {
				struct replay_run *rn = &p->runs[p->nr_runs++];

				*rn = replay_run_own(t, pols[i]);
				if (o->nr_batch)
					rn->batch = o->batch[b];
				if (o->nr_cpus)
					rn->nr_online = o->cpus[c];
			}
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

/* What the pass read and how long it took, after the summary. */
static void replay_print_stats(struct replay_pass *ps)
{
	const struct replay_stats *st = replay_stats(ps->r);

	printf("\n%" PRIu64 " events (%" PRIu64 " updates, %" PRIu64 " reads) in %.2f s; lock windows: "
	       "%" PRIu64 " of flush requests, %" PRIu64 " lock-only, %" PRIu64 " with visit events",
	       st->events, st->updates, st->flush_events, ps->wall_s, st->win.owned,
	       st->win.lock_only, st->win.explicit_windows);
	if (st->win.missing)
		printf(", %" PRIu64 " flushes whose windows never came", st->win.missing);
	if (st->win.unlock_lost)
		printf(", %" PRIu64 " closed without their unlock event (inexact)",
		       st->win.unlock_lost);
	printf(".\n");
}

struct ids {
	uint64_t	*v;
	size_t		n, cap;
};

static int ids_add(uint64_t id, void *ctx)
{
	struct ids *ids = ctx;

	if (mcr_grow((void **)&ids->v, &ids->cap, ids->n + 1, sizeof(*ids->v)) < 0)
		return -ENOMEM;
	ids->v[ids->n++] = id;
	return 0;
}

/* (level, id) pairs: by id to look levels up, then by level to pick the shallowest. */
struct lvl {
	uint64_t	id;
	int		level;	/* unknown: after every known level */
};

static int lvl_by_id(const void *a, const void *b)
{
	const struct lvl *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

static int lvl_by_level(const void *a, const void *b)
{
	const struct lvl *x = a, *y = b;

	return x->level != y->level ? x->level - y->level : lvl_by_id(a, b);
}

/* Keep the @keep shallowest of @ids (the trace's levels), in place. */
static int ids_shallowest(const struct replay_trace *t, struct ids *ids, size_t keep)
{
	struct lvl *tab = calloc(t->nr_cgroups + 1, sizeof(*tab));
	struct lvl *sel = calloc(ids->n, sizeof(*sel));
	size_t i;

	if (!tab || !sel) {
		free(tab);
		free(sel);
		return -ENOMEM;
	}
	for (i = 0; i < t->nr_cgroups; i++)
		tab[i] = (struct lvl){ .id = t->cgroups[i].id,
				       .level = t->cgroups[i].level < 0 ? 1 << 20 : t->cgroups[i].level };
	qsort(tab, t->nr_cgroups, sizeof(*tab), lvl_by_id);
	for (i = 0; i < ids->n; i++) {
		struct lvl key = { .id = ids->v[i] };
		const struct lvl *f = bsearch(&key, tab, t->nr_cgroups, sizeof(*tab), lvl_by_id);

		sel[i] = (struct lvl){ .id = ids->v[i], .level = f ? f->level : 1 << 20 };
	}
	qsort(sel, ids->n, sizeof(*sel), lvl_by_level);
	for (i = 0; i < keep && i < ids->n; i++)
		ids->v[i] = sel[i].id;
	ids->n = i;
	free(tab);
	free(sel);
	return 0;
}

/*
 * The series cgroups: those the trace reads (the shallowest
 * REPLAY_SERIES_CGROUPS of them, which bounds the rows on fleet traces) and
 * the --series-cgroup ones; the engine adds their ancestors.  Returns an exit
 * code.
 */
static int replay_series_ids(struct db *db, const struct replay_opts *o,
			     const struct replay_trace *t, struct ids *ids)
{
	size_t read;
	unsigned int i;
	int ret;

	ret = db_read_cgroups_foreach(db, ids_add, ids);
	if (ret < 0)
		return cli_fail_db(db, ret, o->file);
	read = ids->n;
	if (read > REPLAY_SERIES_CGROUPS) {
		ret = ids_shallowest(t, ids, REPLAY_SERIES_CGROUPS);
		if (ret < 0)
			return cli_fail(ret, "%s", o->file);
		printf("Series: the %d shallowest of the %zu cgroups read (and their ancestors); "
		       "--series-cgroup adds others.\n", REPLAY_SERIES_CGROUPS, read);
	}
	for (i = 0; i < o->nr_series; i++) {
		uint64_t id;

		ret = db_cgroup_by_path(db, o->series[i], &id);
		if (ret == -ENOENT) {
			cli_msg("%s: --series-cgroup: no cgroup '%s' in this trace", o->file,
				o->series[i]);
			return MCR_EXIT_BAD_INPUT;
		}
		if (!ret)
			ret = ids_add(id, ids);
		if (ret < 0)
			return cli_fail(ret, "%s", o->file);
	}
	return MCR_EXIT_OK;
}

/*
 * The series period in ns: --sample-ms, or the default for the trace's span.
 * The span is the events' own (a series runs from the first event to the
 * last), not meta's capture window, within the ts a reader accepts: an
 * event beyond them is refused by the pass, naming it.
 */
static int replay_sample_ns(struct db *db, const struct replay_opts *o, uint64_t *out)
{
	int64_t first = 0, last = 0;
	uint64_t span, ns;
	int err;

	err = db_events_span(db, &first, &last);
	if (err)
		return cli_fail_db(db, err, o->file);
	span = last > first ? (uint64_t)last - (uint64_t)first : 0;
	if (o->sample_ms < 0) {
		ns = (uint64_t)REPLAY_SAMPLE_MS_DEFAULT * 1000000;
		if (span / ns > REPLAY_SAMPLES_MAX)	/* whole ms */
			ns = (span / REPLAY_SAMPLES_MAX + 999999) / 1000000 * 1000000;
		*out = ns;
		return MCR_EXIT_OK;
	}
	*out = (uint64_t)(o->sample_ms * 1e6);
	if (*out && span / *out > REPLAY_SAMPLES_LIMIT) {
		cli_msg("%s: --sample-ms %g gives %" PRIu64 " samples over the trace's %.1f s; at most "
			"%d (a larger period, or 0 for no series)", o->file, o->sample_ms,
			span / *out + 1, (double)span / 1e9, REPLAY_SAMPLES_LIMIT);
		return MCR_EXIT_BAD_INPUT;
	}
	return MCR_EXIT_OK;
}

/*
 * The wider search the prepass's misses by the cap started (--retry): the
 * order it found, which the replay follows, or why the first one stands.
 */
static void replay_print_retry(const struct replay_pass *ps, const struct replay_trace *t)
{
	const struct sim_policy *pol = replay_policy_for_trace(t);

	if (!ps->narrow_missed)
		return;
	if (ps->widened) {
		printf("Inferred order: %zu updates inside lock windows placed, by %s (the traced "
		       "kernel's policy) in a wider search from the start (cap %u over the %d "
		       "flushes up to each miss: %" PRIu64 " of %" PRIu64 ", %.2f s): the first "
		       "prepass (-H %u, %.2f s) missed %" PRIu64 " of the kernel's values after its "
		       "cap dropped orders, the search %" PRId64 ".\n",
		       replay_order_size(ps->order), pol ? pol->name : "?", ps->wide_hypotheses,
		       REPLAY_WIDER_AHEAD, ps->wide_checks, ps->wide_reached, ps->wide_s,
		       ps->narrow_hypotheses, ps->narrow_s, ps->narrow_missed, ps->wide_missed);
		return;
	}
	printf("It missed %" PRIu64 " of the kernel's values after its cap dropped orders; a wider "
	       "search from the start (cap %u over the %d flushes up to each miss: %" PRIu64 " of "
	       "the %" PRIu64 " it reached) ", ps->narrow_missed, ps->wide_hypotheses,
	       REPLAY_WIDER_AHEAD, ps->wide_checks, ps->wide_reached);
	if (ps->wide_missed == -1)
		printf("was given up past --retry times its work, in %.2f s: this order is kept.\n",
		       ps->wide_s);
	else if (ps->wide_missed < 0)
		printf("was given up, missing more than three quarters as many values as it by "
		       "the same flush, in %.2f s: this order is kept.\n", ps->wide_s);
	else
		printf("missed %" PRId64 " in %.2f s, no fewer: this order is kept.\n",
		       ps->wide_missed, ps->wide_s);
}

int cmd_replay(int argc, char **argv)
{
	struct replay_opts o = { .policies = "break,continue,legacy", .sample_ms = -1,
				 .retry = REPLAY_RETRY_DEFAULT };
	struct replay_params p = { .max_mismatches = 0 };
	const struct sim_policy *pols[REPLAY_MAX_RUNS];
	unsigned int nr_pols = 0, nr_runs;
	const struct replay_prepass *prep;
	const struct replay_model *model = NULL;
	struct cli_progress_passes prog = { .what = "replay" };
	struct ids ids = { 0 };
	int64_t page_size = 4096;
	struct replay_trace t;
	struct replay_pass ps;
	const char *why;
	struct db *db;
	int ret, rc;

	argp_parse(&replay_argp, argc, argv, 0, NULL, &o);
	if (replay_parse_policies(o.policies, pols, &nr_pols) < 0) {
		replay_usage_names("policy", o.policies);
		return MCR_EXIT_USAGE;
	}
	nr_runs = nr_pols * (o.nr_batch ? o.nr_batch : 1) * (o.nr_cpus ? o.nr_cpus : 1);
	if (nr_runs > REPLAY_MAX_RUNS) {
		cli_msg("%u policies x %u batches x %u CPU counts make %u runs; at most %d in one pass",
			nr_pols, o.nr_batch ? o.nr_batch : 1, o.nr_cpus ? o.nr_cpus : 1, nr_runs,
			REPLAY_MAX_RUNS);
		return MCR_EXIT_USAGE;
	}
	if (o.model && replay_model_find(o.model, &model) < 0) {
		replay_usage_names("flush model", o.model);
		return MCR_EXIT_USAGE;
	}
	p.max_hypotheses = o.max_hyp;
	p.retry = o.retry;
	p.threads = o.threads;

	db = cli_open_db(o.file, true, &rc);
	if (!db)
		return rc;
	ret = replay_trace_load(db, &t);
	if (ret < 0) {
		rc = cli_fail(ret, "%s", o.file);
		db_close(db);
		return rc;
	}
	replay_runs(&o, pols, nr_pols, &t, &p);
	if (!model)
		model = replay_model_default(&t);
	else if ((why = replay_model_unmet(model, &t)))
		cli_msg("%s: flush model %s %s", o.file, model->name, why);
	p.model = model;
	db_meta_get_int(db, "page_size", &page_size);
	rc = replay_sample_ns(db, &o, &p.sample_ns);
	if (!rc && p.sample_ns)
		rc = replay_series_ids(db, &o, &t, &ids);
	if (rc)
		goto out;
	p.series_ids = ids.v;
	p.nr_series_ids = ids.n;
	prog.total = t.nr_events;
	if (!o.quiet) {
		p.progress = cli_progress_pass;
		p.progress_ctx = &prog;
	}
	ret = replay_pass_db(db, &t, o.file, "replay", &p, &ps);
	cli_progress_passes_done(&prog, ps.r ? replay_stats(ps.r)->events : 0);
	if (ret < 0) {
		rc = cli_fail_db(db, ret, o.file);
	} else {
		prep = replay_prepass(ps.r);
		if (ps.widened)
			replay_print_retry(&ps, &t);
		if (prep) {
			printf("Inferred order: %zu updates inside lock windows placed, by %s (the "
			       "traced kernel's policy) in %.2f s", prep->placed, prep->policy->name,
			       prep->seconds);
			if (prep->beside)
				printf(" beside the replay, which waited %.2f s for it", prep->waited);
			printf(".\n");
			/* a branch the cap would drop is never made: counted, though it might have had a twin */
			if (prep->capped)
				printf("The inference kept at most %u orders at once (-H) and dropped up to "
				       "%" PRIu64 " others: where the kernel's was one of them, the order "
				       "placed is not the kernel's ('memcg-replay validate' counts the "
				       "flushes it explains).\n",
				       p.max_hypotheses ? p.max_hypotheses : REPLAY_MAX_HYP_DEFAULT,
				       prep->capped);
			replay_print_retry(&ps, &t);
		}
		const struct replay_stats *st = replay_stats(ps.r);
		struct report_model m;

		ret = report_pass_model(&m, db, &ps, page_size);
		if (!ret)
			ret = report_write(stdout, &m, &report_text_ops);
		report_model_free(&m);
		if (ret < 0) {
			rc = cli_fail(ret, "%s", o.file);
			goto pass_out;
		}
		replay_print_stats(&ps);
		cli_warn_unlock_lost(o.file, st->win.unlock_lost, st->win.owned + st->win.lock_only);
		if (p.sample_ns)
			printf("Series: %zu cgroups every %.3g ms, %" PRIu64 " samples each.\n",
			       replay_series_count(ps.r), (double)p.sample_ns / 1e6,
			       replay_sample_count(ps.r));
		printf("Runs stored in %s; see 'memcg-replay report %s' or "
		       "sqlite3 %s 'SELECT * FROM lag_report'.\n", o.file, o.file, o.file);
		rc = MCR_EXIT_OK;
	}
pass_out:
	replay_pass_free(&ps);
out:
	free(ids.v);
	replay_trace_free(&t);
	ret = db_close(db);
	if (ret < 0 && rc == MCR_EXIT_OK)
		rc = cli_fail(ret, "%s", o.file);
	return rc;
}
