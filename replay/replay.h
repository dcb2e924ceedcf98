/* SPDX-License-Identifier: GPL-2.0 */
/*
 * replay.h - one pass over a trace, one simulator per walk policy.
 *
 * Contract: replay/ reads events once, in replay order (per-CPU exact), from a
 * struct replay_source (the database through db_iter, or an array in tests),
 * and drives one struct sim per run (a policy at a MEMCG_CHARGE_BATCH and a
 * count of online CPUs) in the same pass.  It decides where the
 * visits of each flush happen (a flush model, or the trace's explicit visit
 * events), records every read (memcg_flush_stats) and a staleness series, and
 * keeps per-cgroup summaries.  Rows leave through a struct replay_sink as they
 * are made; memory holds state per cgroup, per CPU and per open lock window
 * only, never per event.  Optionally validates: compares the simulated
 * counters of the first run, which must use the trace's own batch and CPUs,
 * with the kernel's traced stats_updates and needs_flush.  replay/ never prints or exits; errors are negative errno or
 * -MCR_E_* (sim/base/error.h), including the source's own (-MCR_E_TIME, ...).
 */
#ifndef MCR_REPLAY_H
#define MCR_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "flush_model.h"
#include "sim.h"

/*
 * Runs of one pass: each is a simulator fed every event, so memory and time
 * grow with their number; 64 covers 3 policies x a few batches x a few CPU
 * counts.
 */
#define REPLAY_MAX_RUNS		64
#define REPLAY_MAX_CPUS		8192
#define REPLAY_MAX_BATCH	65536	/* db/validate.c's range of meta batch_size */

struct db;
struct replay;
struct replay_order;

/*
 * Event source: next() returns 1 with *ev filled, 0 at the end, or a negative
 * error; rewind() starts it over (0 or a negative error), for a flush model's
 * prepass.  A source without rewind (NULL) serves the plain models only.
 * take(), optional, is next() for up to @max (> 0) events at once: it fills
 * ev[0 .. n) and returns n > 0, 0 at the end, or the error, which it returns
 * only where next() would, with no event before it left untaken.
 */
struct replay_source {
	int	(*next)(void *ctx, struct mcr_event *ev);
	int	(*rewind)(void *ctx);
	void	*ctx;
	int	(*take)(void *ctx, struct mcr_event *ev, int max);
};

/* A cgroup of the trace's cgroups table. */
struct replay_cgroup {
	uint64_t	id;
	uint64_t	parent;		/* 0: root or unknown */
	const char	*path;		/* NULL if unknown */
	int64_t		created_ts;	/* < 0: existed before the trace */
	int		level;		/* -1 unknown */
	bool		parent_unknown;
};

struct replay_gap {
	uint64_t	ts;
	int64_t		count;		/* -1 unknown */
	int		cpu;
};

/* What the engine needs to know about the trace before the first event. */
struct replay_trace {
	unsigned int		nr_possible;
	unsigned int		nr_online;	/* TH = batch * nr_online */
	unsigned int		batch;		/* MEMCG_CHARGE_BATCH of the traced kernel */
	int			hierarchy_id;	/* memory controller's; -1: accept any */
	bool			windows_traced;	/* the trace has rstat lock events */
	bool			visits_traced;	/* the trace has explicit VISIT events */
	uint64_t		nr_events;	/* for progress; 0 unknown */
	struct replay_cgroup	*cgroups;
	size_t			nr_cgroups;
	struct replay_gap	*gaps;		/* sorted by ts */
	size_t			nr_gaps;
	char			*kernel_release;	/* NULL if unknown */
	char			*source;		/* meta source ("synth", "capture", ...) */
};
void replay_trace_free(struct replay_trace *t);

/*
 * Rows, as they are made.  pol indexes replay_params.runs.  Errors are
 * shown - truth of one line of memory.stat (state and lruvec merged, kind
 * SIM_ITEM_STATE; SIM_ITEM_EVENT counts), in the line's unit; pending is in
 * stats_updates units (sim.h says what each one is).
 */
struct replay_read_error {
	int64_t			error;
	uint64_t		age_ns;		/* oldest update the reader missed */
	enum sim_item_kind	kind;
	int			item;
};

/* A flush request, sent once the reader's value is fixed (after its flush, if any). */
struct replay_read {
	uint64_t	ts;
	uint64_t	id;
	uint64_t	pending;	/* before the decision */
	uint64_t	pending_since_flush;	/* of it, since the cgroup's last flush */
	int64_t		sim_stats_updates;
	int64_t		kernel_stats_updates;
	const struct replay_read_error *errors;	/* the lines it got wrong; none if forced */
	size_t		nr_errors;
	int		cpu;
	int32_t		pid;
	bool		force;		/* forced: a flush, not a reader */
	bool		flushed;	/* the policy's own decision */
	bool		kernel_needs_flush;
	bool		stranded;
	bool		stale;		/* skipped while stranded */
};

/* One series row: the visible error of (cgroup, line) at a sample, min and max since the last. */
struct replay_sample {
	uint64_t		ts;
	uint64_t		id;
	int64_t			error, min_error, max_error;
	enum sim_item_kind	kind;
	int			item;
};

/* The flush state of a series cgroup at a sample. */
struct replay_cgroup_sample {
	uint64_t	ts;
	uint64_t	id;
	uint64_t	pending;
	int64_t		stats_updates;
	bool		flushable;
	bool		stranded;
};

struct replay_mismatch {
	uint64_t	ts;
	uint64_t	id;
	int64_t		kernel_stats_updates;
	int64_t		sim_stats_updates;
	int		cpu;
	bool		kernel_needs_flush;
	bool		sim_needs_flush;
	const char	*cause;		/* NULL if none can be named */
	const char	*context;	/* recent updates in the subtree, text */
};

struct replay_sink {
	int	(*read)(void *ctx, unsigned int pol, const struct replay_read *r);
	int	(*sample)(void *ctx, unsigned int pol, const struct replay_sample *s);
	int	(*cgroup_sample)(void *ctx, unsigned int pol, const struct replay_cgroup_sample *s);
	int	(*episode)(void *ctx, unsigned int pol, const struct sim_episode *ep);
	int	(*mismatch)(void *ctx, const struct replay_mismatch *m);
	void	*ctx;
};

#define REPLAY_MAX_HYP_DEFAULT	1024
#define REPLAY_EXACT_BUDGET_MAX	1024	/* validate --exact-budget at most */

/*
 * One simulator of the pass: a walk policy on a machine of @nr_online CPUs
 * with MEMCG_CHARGE_BATCH @batch, so TH = batch x nr_online.  The events
 * stay on their traced CPUs: @nr_online scales TH (and the stranded limit)
 * only, and may exceed the trace's CPUs (the extra ones never update).
 */
struct replay_run {
	const struct sim_policy	*policy;
	unsigned int		batch;		/* 1..REPLAY_MAX_BATCH */
	unsigned int		nr_online;	/* 1..REPLAY_MAX_CPUS */
};
/* @t's own values: the run the traced kernel made (what validation compares). */
struct replay_run replay_run_own(const struct replay_trace *t, const struct sim_policy *pol);
bool replay_run_is_own(const struct replay_run *run, const struct replay_trace *t);

/*
 * Inside the kernel's lock window of CPU @cpu locked at @lock_ts, the visits
 * of subtree(@cgroup) (children first, consecutive in the window's list)
 * happen just before the update named @cut_tag (replay_tag()), its first
 * update of the subtree on @cpu made after them; @cut false: after every
 * update of the window.  Until then no visit from the subtree's first on
 * is made.
 */
struct replay_pin {
	uint64_t	lock_ts;
	int		cpu;
	uint64_t	cgroup;
	uint64_t	cut_tag;
	bool		cut;
};

/* How run 0 placed an update made inside a lock window (replay_params.placed). */
enum replay_placed {
	REPLAY_PLACED_TAKEN,	/* before its cgroup's visit: the window's flush takes it */
	REPLAY_PLACED_AFTER,	/* after that visit: the next flush of the CPU takes it */
	REPLAY_PLACED_UNLISTED,	/* its cgroup not on the window's list: never this flush */
};

struct replay_params {
	struct replay_run	runs[REPLAY_MAX_RUNS];
	unsigned int		nr_runs;
	const struct replay_model *model;	/* flush_model.h: replay_model_find() */
	uint64_t		sample_ns;	/* series period, trace time; 0: no series */
	/*
	 * Series cgroups: these and their ancestors, from the first event to the
	 * last every sample_ns (a cgroup or line not known yet has error 0 there).
	 */
	const uint64_t		*series_ids;
	size_t			nr_series_ids;
	bool			validate;	/* compare runs[0] (the trace's own batch and
						 * CPUs) with the kernel's values */
	unsigned int		max_mismatches;	/* sent to the sink; the rest only counted */
	unsigned int		max_hypotheses;	/* inference cap; 0: REPLAY_MAX_HYP_DEFAULT */
	/*
	 * replay_pass_db(): where the inference missed recorded values after
	 * its cap had dropped orders (pass.c: pass_missed()), it searches again
	 * from the start, wider (REPLAY_WIDER_*), for at most @retry times the
	 * first pass's inference work (infer_work(): the same on any machine),
	 * and the pass runs again on what it found if it misses fewer.  0: never.
	 */
	double			retry;
	bool			no_halving;	/* the cap never halved (infer_set_patience(0)) */
	/* replay_pass_db()'s wider search, for validate: its answers stand for the inference */
	struct replay_answers	*answers;
	bool			cap_only;	/* validate: no exact diagram past the cap */
	/* validate: the exact diagram's budget and limits times this, 1 to 1024; 0: 1 */
	unsigned int		exact_budget;
	/*
	 * validate: its inference also keeps the order it finds, when it runs
	 * the traced kernel's policy (replay_validated_order()).
	 */
	bool			keep_order;
	/*
	 * Threads for the runs' simulators (the pass's own included); 0: the
	 * online CPUs, but one for a single run.  At most one per run besides
	 * the pass's (a single run, given 2 or more, is applied on a thread of
	 * its own while the pass decodes); 1, validation and inference: one.
	 * The rows are the same for any count.
	 */
	unsigned int		threads;
	/*
	 * The order inside traced windows, from an earlier replay_order_infer(),
	 * for a model that prepares one (inferred); NULL: the model's prepass
	 * infers it.
	 */
	const struct replay_order *order;
	/*
	 * For validate's comparison of the logged reads (statcheck.c), under a
	 * model that keeps an order (inferred), both NULL otherwise.  pins:
	 * where the visits of a read cgroup's subtree go inside given lock
	 * windows, which the printed values settled (struct replay_pin).
	 * placed: called for each update made on a kernel lock window's own
	 * CPU while run 0's window of it is open, just before run 0 applies
	 * it: how run 0 placed it (enum replay_placed).
	 */
	const struct replay_pin	*pins;
	size_t			nr_pins;
	int			(*placed)(void *ctx, uint64_t tag, int how);
	void			*placed_ctx;
	struct replay_sink	sink;		/* any callback may be NULL */
	/*
	 * Called every few thousand events of a pass: @pass is NULL for the
	 * pass itself, "infer" for a model's prepass run before it, "search"
	 * for the wider search (@retry), "again" for the pass run again on the
	 * search's findings.  The library never prints.
	 */
	void			(*progress)(void *ctx, const char *pass, uint64_t done);
	void			*progress_ctx;
	const char		*progress_name;	/* the pass's @pass; NULL: the pass itself */
};

/* Window bookkeeping: how the trace's lock windows were used. */
struct replay_window_stats {
	uint64_t	owned;		/* windows of a traced flush request */
	uint64_t	lock_only;	/* windows with no request before them (release flushes) */
	uint64_t	foreign;	/* another hierarchy's lock, ignored */
	uint64_t	bad_cpu;	/* window names a CPU beyond nr_possible, ignored */
	uint64_t	unlock_lost;	/* no unlock traced: closed by window.c's rule, inexact */
	uint64_t	missing;	/* a deferred flush whose windows never came: done instantly */
	uint64_t	explicit_windows;/* windows with VISIT events */
	uint64_t	visits_unmatched;/* VISIT of a node not on the open window's list */
	uint64_t	in_window_updates;/* updates on the path of a window's remaining visits */
	uint64_t	inferred_updates;/* updates placed by the inferred order */
	uint64_t	deferred;	/* a run's flush that waited for its open window's end */
};

struct replay_stats {
	uint64_t			events;
	uint64_t			updates;
	uint64_t			flush_events;
	uint64_t			ignored_cgroup_events;	/* mkdir/rmdir of another hierarchy */
	uint64_t			first_ts, last_ts;
	struct replay_window_stats	win;
};

/* Validation of runs[0] against the kernel's recorded values. */
#define REPLAY_DIFF_BUCKETS	27
struct replay_validation {
	uint64_t	flush_events;
	uint64_t	compared;
	uint64_t	skipped_before_sync;
	uint64_t	stats_updates_match;		/* with inference of the window order */
	uint64_t	needs_flush_match;
	uint64_t	stats_updates_match_plain;	/* the flush model alone */
	uint64_t	needs_flush_match_plain;
	uint64_t	max_hypotheses;
	uint64_t	cap_lowered;			/* long saturations: the cap halved */
	uint64_t	capped;				/* hypotheses the cap dropped (0: exact) */
	uint64_t	exact_max;			/* the most orders held exactly (infer_set_exact()) */
	uint64_t	exact_given_up;			/* of those diagrams, given up past their budget */
	uint64_t	mismatches;
	uint64_t	sync_ts;			/* 0: never synced */
	uint64_t	diff_hist[REPLAY_DIFF_BUCKETS];	/* sim - kernel, see replay_diff_bucket_name */
	uint64_t	causes[8];			/* by enum replay_cause */
};
const char *replay_diff_bucket_name(unsigned int b);	/* "0", "+1", "+2..3", "-64..-33" ... */

enum replay_cause {
	REPLAY_CAUSE_NONE,
	REPLAY_CAUSE_LOST,		/* lost events nearby (gaps, a lock window's unlock) */
	REPLAY_CAUSE_UNKNOWN_PARENT,	/* a cgroup of unknown parent in the subtree */
	REPLAY_CAUSE_OUTSIDE,		/* the kernel flushed where the trace shows no flush */
	REPLAY_CAUSE_WINDOW_ORDER,	/* updates landed inside a lock window: order unknown */
	/*
	 * An update traced just after a lock window's unlock (within
	 * INFER_LATE_NS, nothing traced on its CPU in between), so possibly
	 * made inside it, that inference took as made after it: another event
	 * came between (the next CPU's window, a flush, another update), and
	 * it holds one window at a time.
	 */
	REPLAY_CAUSE_LATE,
	REPLAY_CAUSE_CAPPED,		/* inference: the cap dropped the kernel's order */
	/*
	 * The kernel's stats_updates is more than every traced update in the
	 * subtree since its last completed flush could have added, in any
	 * order: credit the trace does not hold (validate.c, val_untraced()).
	 */
	REPLAY_CAUSE_UNTRACED,
	REPLAY_CAUSE_COUNT
};
const char *replay_cause_name(enum replay_cause c);

/* Per (run, cgroup) summary at the end of the pass (see db/results_schema.c). */
struct replay_summary {
	uint64_t	reads;		/* non-forced */
	uint64_t	flushed_reads;
	uint64_t	stale_reads;
	uint64_t	episodes;	/* stranded episodes */
	uint64_t	noticeable_episodes; /* of them, noticeable (SIM_EPISODE_NOTICE_NS) */
	double		stranded_ms;
	uint64_t	max_pending;	/* stats_updates units */
	double		mean_pending;
	uint64_t	final_pending;
};

/* Per (run, cgroup, line), in the line's unit; absolute values but final_error. */
struct replay_item_summary {
	enum sim_item_kind	kind;	/* SIM_ITEM_STATE (pages) or SIM_ITEM_EVENT */
	int			item;
	uint64_t		max_read_error;
	uint64_t		p99_read_error;
	double			mean_read_error;
	uint64_t		max_visible_error;	/* settled and in flush */
	uint64_t		max_settled_error;	/* while no flush was in progress */
	uint64_t		max_flush_error;	/* while one was: its transients */
	double			mean_visible_error;
	double			max_error_age_ms;
	int64_t			final_error;
};

/**
 * replay_create() - set up the simulators for a trace.
 * @p: runs, flush model, sampling, sink; copied.
 * @t: the trace's CPUs, hierarchy and cgroups; must outlive the replay.
 * @out: the new replay.
 *
 * Adds every cgroup that existed before the trace (created_ts < 0), parents
 * first.  Returns 0, -EINVAL for bad parameters (no run, more than
 * REPLAY_MAX_RUNS, a batch or CPU count out of range, validation of a run
 * that is not the trace's own), -ENOMEM.
 */
int replay_create(const struct replay_params *p, const struct replay_trace *t,
		  struct replay **out);

/**
 * replay_prepare() - the flush model's prepare step: a prepass over @src if
 * the model asks for one (then @src is rewound).  replay_run() calls it when
 * the caller did not; once per replay.
 *
 * Returns 0, -EINVAL if a prepass is needed and @src cannot rewind, or the
 * prepass's error.
 */
int replay_prepare(struct replay *r, struct replay_source *src);
/*
 * replay_prepare() with the prepass on a thread of its own, beside the pass
 * (replay/beside.c), unless replay_params.threads is 1 or by default one CPU
 * is online: the prepass reads @feed, a second source of the same events
 * (both read on this thread only), and the pass must read @gated, which
 * hands it @src's events as the prepass decides what they need, and at
 * their end waits for the prepass and returns its error if it had one.  The
 * rows are those of replay_prepare().  *@out: the prepass's thread, for
 * replay_beside_free() after replay_run(), whatever it returned (NULL if
 * none).  Returns 1 (read @gated), 0 (read @src: no prepass, or it ran
 * first), or replay_prepare()'s errors.
 *
 * Under the same rule validate's inference (replay_params.validate, a model
 * without a prepass) moves to that thread too: the pass takes a traced
 * memcg_flush_stats only once the inference has checked it, and the
 * validation's counts, mismatches and kept order are those of the inference
 * on the pass's own thread.
 */
struct replay_beside;
int replay_prepare_beside(struct replay *r, struct replay_source *feed, struct replay_source *src,
			  struct replay_source *gated, struct replay_beside **out);
bool replay_prepass_beside(struct replay *r);	/* would it start one (and need @feed)? */
void replay_beside_free(struct replay_beside *b);	/* stops it if it still runs */

/* What the model's prepass did; NULL if it ran none. */
struct replay_prepass {
	const struct sim_policy	*policy;	/* the inference's: the traced kernel's */
	size_t			placed;		/* updates inside lock windows the order places */
	/*
	 * orders the inference's cap dropped (infer_capped()): where one of
	 * them was the kernel's, the order placed is not
	 */
	uint64_t		capped;
	uint64_t		work;		/* infer_work(): hypothesis walks and diagram steps */
	double			seconds;	/* its wall-clock time */
	bool			beside;		/* on its own thread, beside the pass */
	double			waited;		/* beside: seconds the pass waited for its order */
};
const struct replay_prepass *replay_prepass(const struct replay *r);
/*
 * After a validating pass with replay_params.keep_order: the order inside
 * traced windows its inference found, the very one the inferred model's
 * prepass finds (the same inference, the kernel's policy, the same cap), for
 * a later pass's replay_params.order; it lives as long as @r.  NULL if the
 * pass kept none (another policy, no windows).
 */
const struct replay_order *replay_validated_order(const struct replay *r);

/**
 * replay_run() - the single pass: reads @src to its end (after
 * replay_prepare()).
 *
 * Returns 0, the source's negative error (the pass stops there), or a sink
 * callback's negative return.
 */
int replay_run(struct replay *r, struct replay_source *src);
void replay_destroy(struct replay *r);

const struct replay_params *replay_params(const struct replay *r);
const struct replay_trace *replay_trace(const struct replay *r);
const struct replay_stats *replay_stats(const struct replay *r);
const struct replay_validation *replay_validation(const struct replay *r);	/* NULL unless validating */
struct sim *replay_sim(struct replay *r, unsigned int pol);

/*
 * replay_cgroup_learn() - a cgroup the trace's table did not hold at
 * replay_create(), for a source that meets cgroups as it goes (memcg-capture
 * --watch): its parent and path, as the table would have had them, before its
 * mkdir or first event.  @path is copied.  0, -EEXIST if it is known
 * already, -ENOMEM.
 */
int replay_cgroup_learn(struct replay *r, uint64_t id, uint64_t parent, const char *path);

/* Cgroups the pass has seen (known to the simulators), in first-seen order. */
size_t replay_cgroup_count(const struct replay *r);
/* Of them, those whose parent the trace does not say (hung under the root). */
size_t replay_cgroup_unknown_parents(const struct replay *r);
uint64_t replay_cgroup_id(const struct replay *r, size_t i);
const char *replay_cgroup_path(const struct replay *r, uint64_t id);	/* NULL if unknown */
bool replay_cgroup_is_leaf(const struct replay *r, uint64_t id);
int replay_summary_get(struct replay *r, unsigned int pol, uint64_t id, struct replay_summary *out);

/* Every line of one (run, cgroup) that was ever wrong; stops on @fn's non-zero return. */
int replay_items_foreach(struct replay *r, unsigned int pol, uint64_t id,
			 int (*fn)(const struct replay_item_summary *is, void *ctx), void *ctx);
/* Series cgroups of the pass (the asked ones and their ancestors). */
size_t replay_series_count(const struct replay *r);
uint64_t replay_sample_count(const struct replay *r);	/* samples per (cgroup, line) */

/* The database side (replay/trace_db.c, replay/store.c). */
int replay_trace_load(struct db *db, struct replay_trace *t);
int replay_source_db_open(struct db *db, struct replay_source *src);
void replay_source_db_close(struct replay_source *src);

struct replay_store;
/**
 * replay_store_open() - insert one run row per run (kind "replay" or
 * "validate") and prepare the row inserts; sets @p->sink to write into @db.
 * Call inside the caller's transaction, before replay_create().
 */
int replay_store_open(struct db *db, const char *kind, const char *file,
		      struct replay_params *p, const struct replay_trace *t,
		      struct replay_store **out);
/* Writes summaries, item summaries, the run counters and (if any) the validation row. */
int replay_store_finish(struct replay_store *st, struct replay *r, double wall_s);
int64_t replay_store_run_id(const struct replay_store *st, unsigned int pol);
void replay_store_close(struct replay_store *st);

/*
 * A whole run against the database: one transaction around the run rows, the
 * pass and the summaries; rolled back on any error.  @t from replay_trace_load.
 * On success @out holds the replay (for summaries) and the run ids.  Where
 * the inference missed values after its cap dropped orders (validate's
 * mismatches of cause "orders dropped by the cap", or the prepass's misses
 * after a drop) and @p->retry allows, a wider search runs
 * (engine_search()); where it misses fewer, the first pass is rolled back
 * and the pass runs again on its findings: @p then holds the search's cap,
 * halving and exact budget, and wall_s all three.
 */
struct replay_pass {
	struct replay		*r;
	struct replay_store	*store;
	double			wall_s;		/* the pass; a prepass run before it not included */
	/*
	 * Where the first pass missed so and a wider search ran
	 * (replay_params.retry): the first pass's misses, the caps and exact
	 * budgets (0: no diagram) of both, their work and seconds; the search's
	 * misses, or -1 where it was given up past its work, -2 where it was
	 * given up on its misses (engine_search()); whether the pass kept is
	 * the search's (then wall_s holds all three).
	 */
	uint64_t		narrow_missed;
	unsigned int		narrow_hypotheses, narrow_budget;
	unsigned int		wide_hypotheses, wide_budget;
	uint64_t		narrow_work, wide_work;	/* infer_work() */
	double			narrow_s, wide_s;
	int64_t			wide_missed;
	/* the checks the search reached, and of them those it reached wide */
	uint64_t		wide_checks, wide_reached;
	bool			widened;
	struct replay_order	*order;		/* the search's, for the pass kept (replay) */
};
int replay_pass_db(struct db *db, const struct replay_trace *t, const char *file, const char *kind,
		   struct replay_params *p, struct replay_pass *out);
/*
 * The wider search: where the order is kept or no exact diagram is held
 * (cap_only), the cap this many times larger and never halved (a long
 * saturation halves the first pass's, and the kernel's order can go with
 * it), else (validate) the exact diagram's budget REPLAY_WIDER_BUDGET times
 * larger (infer_set_exact_wide()): over the REPLAY_WIDER_AHEAD traced
 * flushes up to each one the first pass missed, as the first pass
 * elsewhere.  The orders a cap drops are those of the lock windows just
 * before the read that would have told them apart, and the stretches
 * between cost what they cost the first pass.
 */
#define REPLAY_WIDER_CAP	4
#define REPLAY_WIDER_AHEAD	64
#define REPLAY_WIDER_BUDGET	4
#define REPLAY_RETRY_DEFAULT	5	/* replay_params.retry for the tools */
void replay_pass_free(struct replay_pass *ps);

/*
 * The logged memory.stat reads (stat_reads, memcg-capture --read) against the
 * simulation of validate's run @run_id (the traced kernel's own policy).
 * Each logged read is matched to its traced flush request (that run's read of
 * the cgroup between ts_before and ts_after).  Truth before the trace is
 * unknown, so each cgroup's first matched read is the anchor: for every
 * later read k and every hierarchical line of a traced item,
 *   printed(k) - printed(0)  against  sum of v over (req(0), req(k)]
 *                                     + error(k) - error(0)
 * in the line's traced unit (pages for state lines, counts for events),
 * error() the run's simulated read error.  A pair is exact, within 2 units,
 * or off.  An off pair's cause: the run decided either read's flush unlike
 * the kernel (its needs_flush), so error() is that of another decision; else
 * the flushes' lock windows, when the updates to that item in the subtree
 * between the request and the end of the read() (of either read) could
 * explain it; else none.
 */
enum replay_statcheck_cause {
	REPLAY_SC_NONE,
	REPLAY_SC_DECISION,	/* the run's flush decision differs from the kernel's */
	REPLAY_SC_WINDOW,	/* inside the range the deciding flush's lock window allows */
};
#define REPLAY_STATCHECK_NAME	64
struct replay_statcheck_line {
	uint64_t	cgroup;
	char		name[REPLAY_STATCHECK_NAME];	/* as printed */
	bool		rounded;	/* a byte/kB item traced in whole pages */
	int64_t		per;		/* printed units per traced unit: page size or 1 */
	uint64_t	exact, within2, off;
};
struct replay_statcheck_mismatch {
	int64_t		read;		/* stat_reads.read */
	uint64_t	cgroup;
	uint64_t	ts;		/* of the traced request */
	size_t		line;		/* index into lines */
	int64_t		printed_delta;	/* printed(k) - printed(0), as printed */
	int64_t		expected_delta;	/* the same, expected, in the traced unit */
	int64_t		diff;		/* printed - expected, traced units (rounded) */
	uint64_t	window;		/* |v| summed inside the two reads' windows, traced units */
	enum replay_statcheck_cause cause;
	bool		placed;		/* its flush's visit placed by printed values */
};
/* One compared line: what stat_read_checks stores (db/results.h, struct db_stat_check). */
struct replay_statcheck_row {
	int64_t		read;
	uint64_t	cgroup;
	uint64_t	req_ts;
	size_t		line;		/* index into lines */
	int64_t		printed, shown, truth;	/* as printed (bytes or counts) */
	int64_t		diff;		/* printed - shown, traced units, rounded */
	int		verdict;	/* enum db_stat_verdict */
	enum replay_statcheck_cause cause;
	/* the visit of the read's deciding flush placed by printed values (a pin) */
	bool		placed;
};
struct replay_statcheck {
	const char	*model;		/* the flush model of the compared run */
	int		version;	/* cgroup version of the lines */
	int64_t		page_size;
	uint64_t	reads;		/* logged reads */
	uint64_t	reads_matched;	/* with their traced flush request */
	uint64_t	anchors;	/* cgroups (their anchor read) */
	/*
	 * The anchor: each cgroup's first matched read after the request of the
	 * first forced root flush (which flushed every update made before the
	 * trace, that the simulation cannot know) whose flush the run decided as
	 * the kernel did; without a forced flush, or on a synthetic trace (which
	 * has nothing before it), its first matched read.
	 */
	bool		anchor_forced;
	bool		synthetic;
	uint64_t	forced_ts;	/* that forced flush's request */
	uint64_t	before_anchor;	/* matched reads not compared: before their cgroup's anchor */
	uint64_t	lines_skipped;	/* lines of no traced item, local (v1) or valueless */
	uint64_t	pairs, exact, within2, off, off_decision, off_in_window;
	/*
	 * The visit placement by printed values (inferred model, a recording):
	 * a first pass's reads whose deciding flush left them off are grouped
	 * by that flush; where one cut of each of its lock windows (the read
	 * cgroup's subtree visited between two of the window's updates on its
	 * CPU) brings every read of the group and every line within 2 units,
	 * the windows are pinned there (struct replay_pin) and the comparison
	 * is of a second pass.  placed_windows: windows pinned; placed_groups:
	 * flushes whose windows were; placed_pairs: pairs of their reads;
	 * unplaced_groups: flushes with an off pair that no cut explains (the
	 * pairs keep their cause).
	 */
	uint64_t	placed_windows, placed_groups, placed_pairs, unplaced_groups;
	/* windows whose cut made the run decide a later read's flush unlike the kernel */
	uint64_t	rejected_windows;
	struct replay_statcheck_line	*lines;
	size_t				nr_lines;
	struct replay_statcheck_mismatch *mism;	/* every off pair, in read order */
	size_t				nr_mism;
	struct replay_statcheck_row	*rows;	/* every compared line, anchors too, in read order */
	size_t				nr_rows;
};
/* -ENOENT: the file has no stat_reads rows (no --read). */
int replay_statcheck(struct db *db, const struct replay_trace *t, int64_t run_id,
		     struct replay_statcheck *out);
/*
 * The same against flush model @m: @run_id (validate's run, @p its
 * parameters) when @m is @p's model, else a pass of @p's own run with @m in
 * a transaction rolled back after the comparison (the file keeps no row of
 * it).  @file names the trace in that pass's run row.  @p->order, if set,
 * is the order @m's prepass would find (replay_validated_order()): that
 * pass then runs none.
 */
int replay_statcheck_model(struct db *db, const struct replay_trace *t, const char *file,
			   const struct replay_params *p, int64_t run_id,
			   const struct replay_model *m, struct replay_statcheck *out);
void replay_statcheck_free(struct replay_statcheck *sc);
/*
 * @sc's rows into stat_read_checks for validate run @run_id (replacing its
 * earlier ones), inside the caller's db_begin().
 */
int replay_statcheck_store(struct db *db, int64_t run_id, const struct replay_statcheck *sc);

/* Kernel release "6.18.0-foo" -> the policy that kernel runs; NULL if outside 6.8+. */
const struct sim_policy *replay_policy_for_kernel(const char *release);
/* The policy the traced kernel runs: synthetic traces break, else by release; NULL unknown. */
const struct sim_policy *replay_policy_for_trace(const struct replay_trace *t);
/* Written by synth (meta source "synth:..."): its "kernel" is synth's break simulator. */
bool replay_trace_is_synth(const struct replay_trace *t);

/*
 * The order inside the trace's lock windows that best explains the kernel's
 * recorded values: one pass of inference over @src with @pol, the traced
 * kernel's policy, at the trace's own batch and CPUs (the order is the
 * trace's, whatever the runs); the inferred model's prepass.  Use it as
 * replay_params.order.  Traces without lock windows give an empty order.
 */
int replay_order_infer(const struct replay_trace *t, const struct sim_policy *pol,
		       unsigned int max_hyp, struct replay_source *src,
		       void (*progress)(void *ctx, const char *pass, uint64_t done), void *progress_ctx,
		       struct replay_order **out);
/* How many visits of its window came before the update named @tag (replay_tag()). */
bool replay_order_lookup(const struct replay_order *o, uint64_t tag, size_t *p);
size_t replay_order_size(const struct replay_order *o);	/* decisions held */
void replay_order_free(struct replay_order *o);

#endif
