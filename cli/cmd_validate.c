// SPDX-License-Identifier: GPL-2.0
/*
 * memcg-replay validate FILE: replay the traced kernel's own walk policy and
 * compare, at every memcg_flush_stats after the first completed forced root
 * flush, the simulated counter and decision with the kernel's recorded ones.
 */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "num.h"
#include "results.h"
#include "replay.h"

#define VALIDATE_STORED_MISMATCHES	10000

struct validate_opts {
	const char	*file;
	const char	*policy;
	const char	*model;
	const char	*format;
	double		min_match;
	long		show;
	unsigned int	max_hyp;
	double		retry;		/* --retry */
	unsigned int	exact_budget;	/* 0: 1 */
	unsigned int	threads;	/* 0: the online CPUs */
	bool		quiet;
	bool		cap_only;
};

#define VALIDATE_OPT_CAP_ONLY	0x100

static const struct argp_option validate_options[] = {
	{ "policy", 'p', "POLICY", 0, "auto (default: from the traced kernel release), break, legacy, continue", 0 },
	{ "flush-model", 'm', "MODEL", 0, "the plain comparison's flush model (inference needs none)", 0 },
	{ "format", 'f', "FORMAT", 0, "text (default) or json", 0 },
	{ "quiet", 'q', NULL, 0, "no progress line (shown only on a terminal)", 0 },
	{ "min-match", 'r', "RATE", 0, "exit 10 when the stats_updates match rate is below RATE (default 0.999)", 0 },
	{ "mismatches", 'n', "N", 0, "mismatches shown with their context (default 10)", 0 },
	CLI_OPTION_MAX_HYP,
	CLI_OPTION_RETRY,
	{ "cap-only", VALIDATE_OPT_CAP_ONLY, NULL, 0, "infer with the capped list alone: no exact "
	  "diagram past --max-hypotheses (faster where lock windows stay saturated; the cap's "
	  "drops then name mismatches)", 0 },
	{ "exact-budget", 'B', "N", 0, "the exact diagram's budget, in multiples of the default, "
	  "1 to 1024 (default 1): the work and memory a diagram may take before it is given up.  "
	  "Raise it where mismatches are named \"orders dropped by the cap\", at a cost in "
	  "time and memory where lock windows stay saturated", 0 },
	{ "threads", 'j', "N", 0, "threads, 1 to 64 (default: the online CPUs: with two or more, "
	  "the inference runs on a thread of its own beside the comparison; 1: on the same "
	  "thread).  The results do not depend on it", 0 },
	{ 0 }
};

static error_t validate_parse(int key, char *arg, struct argp_state *state)
{
	struct validate_opts *o = state->input;
	int64_t n;

	switch (key) {
	case 'p':
		o->policy = arg;
		break;
	case 'm':
		o->model = arg;
		break;
	case 'f':
		if (strcmp(arg, "text") && strcmp(arg, "json"))
			argp_error(state, "--format: '%s' (valid: text, json)", arg);
		o->format = arg;
		break;
	case 'r':
		if (cli_num_double(arg, 0, 1, &o->min_match))
			argp_error(state, "--min-match: not a rate in [0, 1]: '%s'", arg);
		break;
	case 'n':
		if (cli_num_i64(arg, 0, VALIDATE_STORED_MISMATCHES, &n))
			argp_error(state, "--mismatches: not a count in [0, %d]: '%s'",
				   VALIDATE_STORED_MISMATCHES, arg);
		o->show = n;
		break;
	case 'H':
		o->max_hyp = cli_arg_max_hyp(state, arg);
		break;
	case CLI_OPT_RETRY:
		o->retry = cli_arg_retry(state, arg);
		break;
	case 'j':
		if (cli_num_i64(arg, 1, 64, &n))
			argp_error(state, "--threads: not a count in [1, 64]: '%s'", arg);
		o->threads = (unsigned int)n;
		break;
	case 'q':
		o->quiet = true;
		break;
	case VALIDATE_OPT_CAP_ONLY:
		o->cap_only = true;
		break;
	case 'B':
		if (cli_num_i64(arg, 1, REPLAY_EXACT_BUDGET_MAX, &n))
			argp_error(state, "--exact-budget: not a count in [1, %d]: '%s'",
				   REPLAY_EXACT_BUDGET_MAX, arg);
		o->exact_budget = (unsigned int)n;
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

static char *validate_help_extra(void)
{
	const struct replay_model *m;
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fprintf(f, "auto picks the policy the traced kernel runs: 6.16+ break, 6.8-6.15 legacy;\n"
		"synthetic traces (meta source 'synth:...') break.\n\nFlush models:\n");
	for (i = 0; (m = replay_model_at(i)); i++)
		if (replay_model_is_plain(m))
			help_model(f, m, m == replay_model_default(NULL) ? " (default)" : "");
	cli_help_fill(f, "  ", replay_model_default_why, 2);
	fprintf(f, "\nCompared from the first completed forced root flush on (before it the\n"
		"counters are unknown).  stats_updates_match counts matches with race\n"
		"inference, stats_updates_match_plain with the flush model alone.\n"
		"Inference keeps every order of updates and flush visits inside each traced\n"
		"rstat lock window that could have happened, as hypotheses, and lets the\n"
		"kernel's later memcg_flush_stats values prune them.  An update traced\n"
		"within 20 us of a window's unlock, with nothing on its CPU since before it,\n"
		"may have been made inside the window (a tracepoint fires after the change):\n"
		"the window stays open for it, past the next CPU's window lock too when\n"
		"that window visits nothing on the update's path (not with the memory.stat\n"
		"check below, whose order names positions of the window it closed).\n"
		"Before the cap drops any, orders that differ only in per-CPU counters no\n"
		"update can take to the batch before the flush that next visits them (read\n"
		"from the trace ahead) are merged: nothing later can tell them apart.  Past\n"
		"--max-hypotheses the orders are also held exactly, as a decision diagram\n"
		"beside the capped list, and the kernel's values are checked against it,\n"
		"within a budget of work that grows with the trace's updates (times\n"
		"--exact-budget); a diagram past it is given up and the capped list goes\n"
		"on (counted).  The check of logged memory.stat reads (below) needs the\n"
		"order itself, which only the list hands out: no diagram then.  Nor before\n"
		"the first forced root flush is requested: until it completes, counters\n"
		"may hold values from before the trace, and exact orders buy little.\n"
		"Where values were missed after the cap had dropped orders (none before\n"
		"the counters are known), a wider search runs from the start (--retry):\n"
		"the cap larger and never halved up to each value missed when the order\n"
		"is kept, else a larger diagram budget.  If it explains more, the pass is\n"
		"run again on its answers and the results are its; else, or past its\n"
		"work, the first pass's stand.  The report says which.\n"
		"\nWritten into FILE: runs (kind 'validate'), reads, validation (one row),\n"
		"validation_mismatch (up to %d rows, with the recent updates in the\n"
		"subtree and a cause where one can be named: lost events nearby (a gap, or\n"
		"a lock window without its unlock event), cgroup of unknown parent, flush\n"
		"outside the trace, window order unknown (without inference), late update\n"
		"taken as after its window (an update in the subtree traced just after a\n"
		"window's unlock, as above, once another event had come between), orders\n"
		"dropped by the cap (with it: the cap dropped orders since the last miss,\n"
		"or since the cgroup's last flush, by the kernel and the run alike, with a\n"
		"miss the cap explains since in its subtree or of an ancestor, whose\n"
		"correction of one counter left the others' error; if a higher\n"
		"--exact-budget still misses, the cause is not known)), more than the\n"
		"traced updates can add (the kernel's value is more than the |val| of every\n"
		"update traced in the cgroup's subtree since the request of its last flush\n"
		"the trace saw complete, plus one update in flight per CPU at the largest\n"
		"|val| that CPU traced: no order explains it; credit the trace lacks).\n",
		VALIDATE_STORED_MISMATCHES);
	fprintf(f, "\nWith the memory.stat reads a capture logged (memcg-capture --read, table\n"
		"stat_reads): each read is matched to its traced flush request and, per line of\n"
		"a traced item, printed(k) - printed(0) is compared with the traced updates\n"
		"between the two requests plus the simulated read errors error(k) - error(0),\n"
		"anchored on the cgroup's first read (truth before the trace is unknown); each\n"
		"(read, line) pair is exact, within 2 units (pages or counts) or off, an off\n"
		"one with its cause where one can be named.  The simulated errors are those of\n"
		"the flush model replay uses by default (inferred on a recording with lock\n"
		"windows and a known kernel: a second pass, not stored), or of the model\n"
		"given with -m.\n");
	cli_exit_help(f, CLI_VALIDATE);
	fclose(f);
	return buf;
}

static char *validate_help_filter(int key, const char *text, void *input)
{
	if (key == ARGP_KEY_HELP_EXTRA)
		return validate_help_extra();
	return (char *)text;
}

static const struct argp validate_argp = {
	validate_options, validate_parse, "FILE",
	"Check that the simulator reproduces the kernel's own recorded stats_updates and "
	"needs_flush at every traced memcg_flush_stats.\v", NULL, validate_help_filter, NULL,
};

static const struct sim_policy *validate_pick_policy(const char *name, const struct replay_trace *t)
{
	return strcmp(name, "auto") ? sim_policy_find(name) : replay_policy_for_trace(t);
}

static double rate(uint64_t n, uint64_t d)
{
	return d ? (double)n / (double)d : 0;
}

static int print_mismatch(const struct db_mismatch *m, void *ctx)
{
	printf("  ts %" PRIu64 " cpu %d %s: kernel %" PRId64 "/%d, plain model %" PRId64 "/%d;"
	       " cause: %s\n    %s\n", m->ts, m->cpu, m->path, m->kernel_stats_updates,
	       m->kernel_needs_flush, m->sim_stats_updates, m->sim_needs_flush,
	       m->cause ? m->cause : "-", m->context ? m->context : "");
	return 0;
}

/* The first pass's misses by the cap, and the wider search they started (--retry). */
static void validate_print_retry(const struct replay_pass *ps)
{
	if (!ps->narrow_missed)
		return;
	printf("first pass (--max-hypotheses %u, ", ps->narrow_hypotheses);
	if (ps->narrow_budget)
		printf("--exact-budget %u", ps->narrow_budget);
	else
		printf("no exact diagram");
	printf("): %" PRIu64 " flushes missed as orders dropped by the cap, in %.2f s; a wider "
	       "search from the start (", ps->narrow_missed, ps->narrow_s);
	if (ps->wide_budget != ps->narrow_budget)
		printf("exact budget %u", ps->wide_budget);
	else
		printf("cap %u", ps->wide_hypotheses);
	printf(" over the %d flushes up to each miss: %" PRIu64 " of the %" PRIu64 " it reached) ",
	       REPLAY_WIDER_AHEAD, ps->wide_checks, ps->wide_reached);
	if (ps->wide_missed == -1)
		printf("was given up past --retry times the first pass's work, in %.2f s: the "
		       "first pass's results are kept\n", ps->wide_s);
	else if (ps->wide_missed < 0)
		printf("was given up, missing more than three quarters as many values as the first "
		       "pass by the same flush, in %.2f s: the first pass's results are kept\n", ps->wide_s);
	else if (!ps->widened)
		printf("missed no fewer values in %.2f s: the first pass's results are kept\n",
		       ps->wide_s);
	else
		printf("explained more in %.2f s: the results below are its\n", ps->wide_s);
}

static void validate_print_text(struct db *db, struct replay_pass *ps, long show)
{
	const struct replay_stats *st = replay_stats(ps->r);
	const struct replay_validation *v = replay_validation(ps->r);
	const struct replay_params *p = replay_params(ps->r);
	unsigned int b;

	printf("policy %s, flush model %s (run %" PRId64 ")\n", p->runs[0].policy->name,
	       p->model->name, replay_store_run_id(ps->store, 0));
	printf("flush events %" PRIu64 ", compared %" PRIu64 ", skipped before sync %" PRIu64 "\n",
	       v->flush_events, v->compared, v->skipped_before_sync);
	printf("stats_updates match %" PRIu64 " (%.2f%%), plain %" PRIu64 " (%.2f%%)\n",
	       v->stats_updates_match, 100 * rate(v->stats_updates_match, v->compared),
	       v->stats_updates_match_plain, 100 * rate(v->stats_updates_match_plain, v->compared));
	printf("needs_flush agree %" PRIu64 " (%.2f%%), plain %" PRIu64 " (%.2f%%)\n",
	       v->needs_flush_match, 100 * rate(v->needs_flush_match, v->compared),
	       v->needs_flush_match_plain, 100 * rate(v->needs_flush_match_plain, v->compared));
	validate_print_retry(ps);
	printf("hypotheses kept at most %" PRIu64 " (%s %u)", v->max_hypotheses,
	       ps->widened ? "the wider search's cap" : "--max-hypotheses",
	       p->max_hypotheses ? p->max_hypotheses : REPLAY_MAX_HYP_DEFAULT);
	if (v->exact_max)
		printf("; past it, an exact diagram held at most %" PRIu64 " orders", v->exact_max);
	if (v->exact_given_up)
		printf("; exact diagrams given up at their budget (--exact-budget %u): %" PRIu64,
		       p->exact_budget ? p->exact_budget : 1, v->exact_given_up);
	if (v->cap_lowered)
		printf("; after long saturation the cap was halved %" PRIu64 " times (not below 64)",
		       v->cap_lowered);
	/* a branch the cap would drop is never made: counted, though it might have had a twin */
	if (v->capped)
		printf("; the cap dropped up to %" PRIu64 " of them", v->capped);
	printf("\n");
	if (st->win.unlock_lost)
		printf("lock windows without their unlock event: %" PRIu64 " of %" PRIu64 " (lost "
		       "from the trace), closed by rule: values compared near them are inexact "
		       "(cause: lost events nearby)\n",
		       st->win.unlock_lost, st->win.owned + st->win.lock_only);
	if (replay_cgroup_unknown_parents(ps->r))
		printf("cgroups of unknown parent: %zu (removed before the trace, or made before it "
		       "without --cgroupfs): hung under the root, so root reads after their updates "
		       "may differ\n", replay_cgroup_unknown_parents(ps->r));
	printf("plain model - kernel:");
	for (b = 0; b < REPLAY_DIFF_BUCKETS; b++)
		if (v->diff_hist[b])
			printf(" [%s] %" PRIu64, replay_diff_bucket_name(b), v->diff_hist[b]);
	printf("\nmismatches %" PRIu64 ":", v->mismatches);
	for (b = REPLAY_CAUSE_LOST; b < REPLAY_CAUSE_COUNT; b++)
		printf(" %s %" PRIu64 ",", replay_cause_name(b), v->causes[b]);
	printf(" no cause named %" PRIu64 "\n", v->causes[REPLAY_CAUSE_NONE]);
	if (!show || !v->mismatches)
		return;
	printf("first mismatches:\n");
	db_mismatches_foreach(db, replay_store_run_id(ps->store, 0), show, print_mismatch, NULL);
}

static void json_key_u64(const char *key, uint64_t v)
{
	printf(",\"%s\":%" PRIu64, key, v);
}

static void json_key_str(const char *key, const char *v)
{
	printf(",\"%s\":", key);
	if (v)
		db_json_string(stdout, v);
	else
		fputs("null", stdout);
}

static void json_rate(const char *key, uint64_t n, uint64_t d)
{
	if (d)
		printf(",\"%s\":%.17g", key, (double)n / (double)d);
	else
		printf(",\"%s\":null", key);
}

static int json_mismatch(const struct db_mismatch *m, void *ctx)
{
	unsigned long *n = ctx;

	printf("%s{\"ts\":%" PRIu64 ",\"cpu\":%d,\"cgroup_id\":%" PRIu64, (*n)++ ? "," : "",
	       m->ts, m->cpu, m->cgroup_id);
	json_key_str("cgroup", m->path[0] == '#' ? NULL : m->path);
	printf(",\"kernel_stats_updates\":%" PRId64 ",\"sim_stats_updates\":%" PRId64
	       ",\"kernel_needs_flush\":%d,\"sim_needs_flush\":%d", m->kernel_stats_updates,
	       m->sim_stats_updates, m->kernel_needs_flush, m->sim_needs_flush);
	json_key_str("cause", m->cause);
	json_key_str("context", m->context);
	putchar('}');
	return 0;
}

static void statcheck_print_json(const struct replay_statcheck *sc);

/*
 * The validation row as stored, with the causes and the first mismatches;
 * with @sc, the logged memory.stat reads' comparison.
 */
static int validate_print_json(struct db *db, struct replay_pass *ps, long show,
			       const struct replay_statcheck *sc)
{
	const struct replay_validation *v = replay_validation(ps->r);
	const struct replay_params *p = replay_params(ps->r);
	int64_t run_id = replay_store_run_id(ps->store, 0);
	struct db_validation row;
	unsigned long n = 0;
	char *diff = NULL;
	unsigned int b;
	int ret;

	ret = db_validation_get(db, run_id, &row, &diff);
	if (ret < 0)
		return ret;
	printf("{\"run_id\":%" PRId64, run_id);
	json_key_str("policy", p->runs[0].policy->name);
	json_key_str("flush_model", p->model->name);
	json_key_u64("flush_events", row.flush_events);
	json_key_u64("compared", row.compared);
	json_key_u64("skipped_before_sync", row.skipped_before_sync);
	json_key_u64("stats_updates_match", row.stats_updates_match);
	json_key_u64("needs_flush_match", row.needs_flush_match);
	json_key_u64("stats_updates_match_plain", row.stats_updates_match_plain);
	json_key_u64("needs_flush_match_plain", row.needs_flush_match_plain);
	json_rate("stats_updates_match_rate", row.stats_updates_match, row.compared);
	json_rate("stats_updates_match_plain_rate", row.stats_updates_match_plain, row.compared);
	json_key_u64("max_hypotheses", row.max_hypotheses);
	json_key_u64("hypotheses_capped", v->capped);
	/* the first pass, where its cap dropped orders values needed and it ran again wider */
	if (ps->narrow_missed) {
		printf(",\"retry\":{\"first_max_hypotheses\":%u", ps->narrow_hypotheses);
		json_key_u64("first_exact_budget", ps->narrow_budget);
		json_key_u64("first_missed_by_cap", ps->narrow_missed);
		json_key_u64("search_max_hypotheses", ps->wide_hypotheses);
		json_key_u64("search_exact_budget", ps->wide_budget);
		json_key_u64("first_work", ps->narrow_work);
		json_key_u64("search_work", ps->wide_work);
		json_key_u64("search_flushes_reached", ps->wide_reached);
		json_key_u64("search_flushes_wide", ps->wide_checks);
		printf(",\"search\":\"%s\"}", ps->wide_missed == -1 ? "given up: work" :
		       ps->wide_missed < 0 ? "given up: worse" :
		       ps->widened ? "kept" : "missed no fewer");
	}
	printf(",\"diff_hist\":%s", diff);	/* stored through json(): valid */
	json_key_u64("mismatches", v->mismatches);
	json_key_u64("windows_unlock_lost", replay_stats(ps->r)->win.unlock_lost);
	printf(",\"causes\":{");
	for (b = REPLAY_CAUSE_LOST; b < REPLAY_CAUSE_COUNT; b++)
		printf("\"%s\":%" PRIu64 ",", replay_cause_name(b), v->causes[b]);
	printf("\"none\":%" PRIu64 "}", v->causes[REPLAY_CAUSE_NONE]);
	printf(",\"first_mismatches\":[");
	ret = db_mismatches_foreach(db, run_id, show, json_mismatch, &n);
	putchar(']');
	if (sc)
		statcheck_print_json(sc);
	printf("}\n");
	free(diff);
	return ret;
}

static const char *statcheck_path(struct replay_pass *ps, uint64_t id, char *buf, size_t len)
{
	const char *p = replay_cgroup_path(ps->r, id);

	if (p)
		return p;
	snprintf(buf, len, "#%" PRIu64, id);
	return buf;
}

static const char *statcheck_cause(enum replay_statcheck_cause c)
{
	return c == REPLAY_SC_DECISION ? "the run's flush decision differs from the kernel's" :
	       c == REPLAY_SC_WINDOW ? "inside the range the deciding flush's lock window allows" :
	       "-";
}

/*
 * The logged memory.stat reads (memcg-capture --read) against the run: per
 * line, how many (read, line) pairs were exact, within 2 units, off.
 */
static void statcheck_print_text(struct replay_pass *ps, const struct replay_statcheck *sc,
				 long show)
{
	char buf[32];
	size_t i;
	long n = 0;

	printf("\nmemory.stat reads logged (stat_reads): %" PRIu64 ", matched to their traced "
	       "flush request %" PRIu64 "\n", sc->reads, sc->reads_matched);
	if (sc->anchor_forced)
		printf("anchored on each cgroup's first matched read after the first forced root "
		       "flush (ts %" PRIu64 ", which flushed what was made before the trace) "
		       "whose flush the run decided as the kernel; %" PRIu64 " reads before "
		       "their anchor not compared:\n", sc->forced_ts, sc->before_anchor);
	else
		printf("anchored on each cgroup's first matched read (%s):\n", sc->synthetic ?
		       "a synthetic trace: nothing was made before it" :
		       "no forced root flush in the trace; truth before the trace is unknown");
	printf("  printed(k) - printed(0) against the traced updates over (request 0, request k]\n"
	       "  + error(k) - error(0), the simulated read errors; units: pages (state lines),\n"
	       "  counts (events)\n");
	printf("(read, line) pairs %" PRIu64 ": exact %" PRIu64 " (%.2f%%), within 2 units %" PRIu64
	       ", off %" PRIu64 " (the run's flush decision differs from the kernel's %" PRIu64
	       ", inside the range the deciding flush's lock window allows %" PRIu64
	       ", no cause named %" PRIu64 "); flush model %s\n", sc->pairs, sc->exact,
	       100 * rate(sc->exact, sc->pairs), sc->within2, sc->off, sc->off_decision,
	       sc->off_in_window, sc->off - sc->off_decision - sc->off_in_window, sc->model);
	if (sc->placed_windows || sc->unplaced_groups || sc->rejected_windows)
		printf("visit placed by printed values: %" PRIu64 " windows of %" PRIu64 " flushes "
		       "(one cut each, fitted once, held by all %" PRIu64 " pairs of the reads "
		       "that printed what those flushes left); %" PRIu64 " flushes with an off "
		       "pair that no cut explains, %" PRIu64 " windows whose cut the kernel's "
		       "needs_flush ruled out (their pairs keep their cause)\n",
		       sc->placed_windows, sc->placed_groups, sc->placed_pairs,
		       sc->unplaced_groups, sc->rejected_windows);
	if (sc->lines_skipped)
		printf("lines not compared: %" PRIu64 " (no single traced item, the cgroup's own "
		       "v1 lines, or no value)\n", sc->lines_skipped);
	if (sc->nr_lines)
		printf("  %-24s %-30s %8s %8s %8s\n", "cgroup", "line", "exact", "within2", "off");
	for (i = 0; i < sc->nr_lines; i++) {
		const struct replay_statcheck_line *l = &sc->lines[i];

		printf("  %-24s %-30s %8" PRIu64 " %8" PRIu64 " %8" PRIu64 "%s\n",
		       statcheck_path(ps, l->cgroup, buf, sizeof(buf)), l->name, l->exact,
		       l->within2, l->off, l->rounded ? "  (traced in whole pages)" : "");
	}
	if (!show || !sc->nr_mism)
		return;
	printf("first mismatches:\n");
	for (i = 0; i < sc->nr_mism && n < show; i++, n++) {
		const struct replay_statcheck_mismatch *m = &sc->mism[i];

		const struct replay_statcheck_line *l = &sc->lines[m->line];

		printf("  read %" PRId64 " ts %" PRIu64 " %s %s: printed delta %" PRId64
		       ", expected %" PRId64 ", off by %" PRId64 "%s; cause: %s\n", m->read, m->ts,
		       statcheck_path(ps, m->cgroup, buf, sizeof(buf)), l->name, m->printed_delta,
		       m->expected_delta * l->per, m->diff, l->per > 1 ? " pages" : "",
		       statcheck_cause(m->cause));
	}
}

static int statcheck_worst_text(const struct db_stat_check_worst *w, void *ctx)
{
	if (!w->pairs || !w->printed_error)
		return 0;
	printf("  %-24s %-30s %14" PRId64 " %s", w->cgroup, w->name, w->printed_error, w->unit);
	if (w->per > 1)
		printf(" (%.2f pages)", (double)w->printed_error / (double)w->per);
	printf(", read %" PRId64 "\n", w->read);
	return 0;
}

/*
 * What the file now keeps of the comparison (stat_read_checks), as a report
 * reads it back: the N of M line and the worst error really printed.
 */
static int statcheck_print_stored(struct db *db)
{
	struct db_stat_check_summary s;
	int ret = db_stat_check_summary(db, &s);

	if (ret < 0)
		return ret;
	printf("memory.stat as printed: %" PRIu64 " of %" PRIu64 " printed lines within 2 units of the "
	       "simulation (table stat_read_checks, run %" PRId64 ")\n", s.within2, s.pairs,
	       s.run_id);
	printf("worst error memory.stat really printed (printed - truth), per cgroup and line:\n");
	return db_stat_check_worst_foreach(db, s.run_id, statcheck_worst_text, NULL);
}

/* validate run @run_id's comparison into stat_read_checks, in a transaction of its own. */
static int statcheck_store(struct db *db, int64_t run_id, const struct replay_statcheck *sc)
{
	int ret = db_begin(db);

	if (ret < 0)
		return ret;
	ret = replay_statcheck_store(db, run_id, sc);
	if (ret < 0) {
		db_rollback(db);
		return ret;
	}
	return db_commit(db);
}

static void statcheck_print_json(const struct replay_statcheck *sc)
{
	printf(",\"stat_reads\":{\"reads\":%" PRIu64, sc->reads);
	json_key_u64("reads_matched", sc->reads_matched);
	json_key_u64("pairs", sc->pairs);
	json_key_u64("exact", sc->exact);
	json_key_u64("within_2_units", sc->within2);
	json_key_u64("off", sc->off);
	json_key_u64("off_flush_decision_differs", sc->off_decision);
	json_key_u64("off_inside_lock_window", sc->off_in_window);
	json_key_u64("visit_placed_windows", sc->placed_windows);
	json_key_u64("visit_placed_flushes", sc->placed_groups);
	json_key_u64("visit_placed_pairs", sc->placed_pairs);
	json_key_u64("visit_unplaced_flushes", sc->unplaced_groups);
	json_key_u64("visit_rejected_windows", sc->rejected_windows);
	json_key_u64("lines_not_compared", sc->lines_skipped);
	json_key_u64("reads_before_anchor", sc->before_anchor);
	if (sc->anchor_forced)
		json_key_u64("anchor_after_forced_flush_ts", sc->forced_ts);
	json_key_str("flush_model", sc->model);
	putchar('}');
}

/*
 * The plain models need no prepass: the one pass.  Models that prepare one
 * infer, and validate always does: the model is for the plain comparison.
 */
static int validate_pick_model(const char *name, const struct replay_model **out)
{
	const struct replay_model *m;
	char names[128] = "";
	size_t i;

	if (!name) {
		*out = replay_model_default(NULL);
		return 0;
	}
	if (!replay_model_find(name, out) && replay_model_is_plain(*out))
		return 0;
	for (i = 0; (m = replay_model_at(i)); i++)
		if (replay_model_is_plain(m))
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
				 *names ? ", " : "", m->name);
	cli_msg("%s flush model '%s' (valid: %s; validate always infers, the model is for the "
		"plain comparison)", replay_model_find(name, &m) ? "unknown" : "no use for", name,
		names);
	return -EINVAL;
}

int cmd_validate(int argc, char **argv)
{
	struct validate_opts o = { .policy = "auto", .format = "text", .min_match = 0.999, .show = 10,
				   .retry = REPLAY_RETRY_DEFAULT };
	struct replay_params p = { .validate = true, .max_mismatches = VALIDATE_STORED_MISMATCHES };
	const struct replay_validation *v;
	struct replay_trace t;
	struct replay_pass ps;
	struct cli_progress_passes prog = { .what = "validate" };
	const struct replay_model *scm;
	struct replay_statcheck sc;
	struct db *db;
	int ret, rc, sret;

	argp_parse(&validate_argp, argc, argv, 0, NULL, &o);
	if (strcmp(o.policy, "auto") && !sim_policy_find(o.policy)) {
		cli_msg("unknown policy '%s' (valid: auto, break, legacy, continue)", o.policy);
		return MCR_EXIT_USAGE;
	}
	if (validate_pick_model(o.model, &p.model) < 0)
		return MCR_EXIT_USAGE;
	if (o.cap_only && o.exact_budget) {
		cli_msg("--cap-only and --exact-budget exclude each other: --cap-only holds no diagram");
		return MCR_EXIT_USAGE;
	}
	p.max_hypotheses = o.max_hyp;
	p.retry = o.retry;
	p.cap_only = o.cap_only;
	p.exact_budget = o.exact_budget;
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
	/* the kernel's own batch and CPUs: its recorded values are those of its machine */
	p.runs[0] = replay_run_own(&t, validate_pick_policy(o.policy, &t));
	p.nr_runs = 1;
	if (!p.runs[0].policy) {
		cli_msg("%s: cannot tell the kernel's policy from kernel_release '%s' (needs 6.8+); "
			"use --policy", o.file, t.kernel_release ? t.kernel_release : "unknown");
		replay_trace_free(&t);
		db_close(db);
		return MCR_EXIT_USAGE;
	}
	/*
	 * memcg-capture --read: the logged reads are compared with the run of
	 * the model replay would use (inferred on a recording), or of the one
	 * -m names.  The inferred one's order is this pass's inference's.
	 */
	scm = o.model ? p.model : replay_model_default(&t);
	p.keep_order = scm->prepare && db_has_stat_reads(db);
	if (p.keep_order && o.exact_budget)
		cli_msg("%s: --exact-budget has no effect: its memory.stat reads are checked against "
			"the order inference finds, which only the capped list hands out (no exact "
			"diagram)", o.file);
	prog.total = t.nr_events;
	prog.quiet = o.quiet;
	p.progress = cli_progress_pass;
	p.progress_ctx = &prog;
	ret = replay_pass_db(db, &t, o.file, "validate", &p, &ps);
	cli_progress_passes_done(&prog, ps.r ? replay_stats(ps.r)->events : 0);
	if (ret < 0) {
		rc = cli_fail_db(db, ret, o.file);
		goto out;
	}
	v = replay_validation(ps.r);
	cli_warn_unlock_lost(o.file, replay_stats(ps.r)->win.unlock_lost,
			     replay_stats(ps.r)->win.owned + replay_stats(ps.r)->win.lock_only);
	p.order = replay_validated_order(ps.r);
	sret = replay_statcheck_model(db, &t, o.file, &p, replay_store_run_id(ps.store, 0), scm,
				      &sc);
	if (sret < 0 && sret != -ENOENT)
		cli_msg("%s: comparing the logged memory.stat reads: %s", o.file,
			mcr_strerror(sret));
	if (!sret) {
		sret = statcheck_store(db, replay_store_run_id(ps.store, 0), &sc);
		if (sret < 0) {
			cli_msg("%s: storing the comparison of the memory.stat reads: %s", o.file,
				mcr_strerror(sret));
			replay_statcheck_free(&sc);
		}
	}
	if (!strcmp(o.format, "json")) {
		ret = validate_print_json(db, &ps, o.show, sret ? NULL : &sc);
	} else {
		validate_print_text(db, &ps, o.show);
		if (!sret)
			statcheck_print_text(&ps, &sc, o.show);
		if (!sret && (ret = statcheck_print_stored(db)) < 0)
			cli_msg("%s: reading the stored comparison back: %s", o.file,
				ret == -MCR_E_CORRUPT ? db_why(db) : mcr_strerror(ret));
		ret = 0;
	}
	replay_statcheck_free(&sc);
	if (ret < 0) {
		rc = cli_fail(ret, "%s", o.file);
	} else if (!v->compared) {
		cli_msg("%s: no flush event could be compared (no completed forced root flush)", o.file);
		rc = MCR_EXIT_MATCH;
	} else if (rate(v->stats_updates_match, v->compared) < o.min_match) {
		cli_msg("%s: stats_updates match rate %.4f below --min-match %.4f", o.file,
			rate(v->stats_updates_match, v->compared), o.min_match);
		rc = MCR_EXIT_MATCH;
	} else {
		rc = MCR_EXIT_OK;
	}
out:
	replay_pass_free(&ps);
	replay_trace_free(&t);
	ret = db_close(db);
	if (ret < 0 && rc == MCR_EXIT_OK)
		rc = cli_fail(ret, "%s", o.file);
	return rc;
}
