/* SPDX-License-Identifier: GPL-2.0 */
/*
 * results.h - the result tables of a trace database: what replay and validate
 * write and what the tools read back.  Columns are documented in
 * db/results_schema.c (and `sqlite3 FILE .schema`).
 *
 * Contract: db/ owns every result table's SQL; callers pass and get plain
 * structs and never see a statement.  Writers append inside the caller's
 * db_begin() transaction (a failed pass is rolled back whole); readers never
 * write.  Values are stored as given: errors signed, in the item's unit;
 * pending in stats_updates units.  Kinds are items.kind (MCR_EV_STATE for
 * state and lruvec merged, MCR_EV_EVENTS).  Functions return 0, a positive
 * count, or a negative errno / -MCR_E_*; they never print.
 */
#ifndef MCR_DB_RESULTS_H
#define MCR_DB_RESULTS_H

#include <stdbool.h>
#include <stdint.h>

struct db;

/* runs */
struct db_run {
	const char	*kind;		/* "replay" | "validate" */
	const char	*policy;
	const char	*flush_model;
	const char	*file;		/* params: the trace file named on the command line */
	const char	*policies;	/* params: every policy of the invocation, "a,b" */
	uint64_t	sample_ns;
	uint64_t	th;
	uint64_t	stranded_limit;
	unsigned int	batch_size;	/* MEMCG_CHARGE_BATCH simulated */
	unsigned int	nr_cpus;	/* online CPUs simulated: th = batch_size x nr_cpus */
	unsigned int	max_mismatches;
	bool		validate;
};
int db_run_add(struct db *db, const struct db_run *run, int64_t *run_id);

struct db_run_counters {
	double		wall_s;
	uint64_t	events, updates, flush_requests, flushes, visits, walk_steps, pcpu_adds,
			atomic_adds, dropped_batches, atomic_resets, unknown_ids;
};
int db_run_counters_set(struct db *db, int64_t run_id, const struct db_run_counters *c);

/* Rows as a pass makes them: one writer per pass, statements prepared once. */
struct db_results;
int db_results_open(struct db *db, struct db_results **out);
int db_results_flush(struct db_results *w);
void db_results_close(struct db_results *w);

struct db_read {
	int64_t		run_id;
	uint64_t	ts;
	uint64_t	cgroup_id;
	uint64_t	pending;
	uint64_t	pending_since_flush;
	int64_t		sim_stats_updates;
	int64_t		kernel_stats_updates;
	int		cpu;
	int		pid;
	unsigned int	items_wrong;
	bool		force, flushed, stranded, stale, kernel_needs_flush;
};
int db_read_add(struct db_results *w, const struct db_read *r, int64_t *read_id);

struct db_read_error {
	int64_t		read_id;
	int64_t		error;		/* shown - truth */
	uint64_t	age_ns;
	int		kind;
	int		item;
};
int db_read_error_add(struct db_results *w, const struct db_read_error *e);

struct db_episode {
	int64_t		run_id;
	uint64_t	cgroup_id;
	uint64_t	start_ts, end_ts;
	int64_t		worst_error;
	uint64_t	reads_skipped;
	uint64_t	max_pending;
	int		worst_kind;	/* 0: no item was wrong */
	int		worst_item;
	bool		open;
};
int db_episode_add(struct db_results *w, const struct db_episode *e);

struct db_series {
	int64_t		run_id;
	uint64_t	cgroup_id;
	uint64_t	ts;
	int64_t		error, min_error, max_error;
	int		kind;
	int		item;
};
/*
 * Held (compactly, beyond a bound in an unnamed temporary file) and inserted
 * in key order by db_results_flush(), before commit: a new run's rows then
 * append to the table.  A key's rows come in increasing ts.
 */
int db_series_add(struct db_results *w, const struct db_series *s);

struct db_cgroup_sample {
	int64_t		run_id;
	uint64_t	cgroup_id;
	uint64_t	ts;
	uint64_t	pending;
	int64_t		stats_updates;
	bool		flushable, stranded;
};
int db_cgroup_sample_add(struct db_results *w, const struct db_cgroup_sample *s);

struct db_cgroup_summary {
	int64_t		run_id;
	uint64_t	cgroup_id;
	uint64_t	reads, flushed_reads, stale_reads;
	double		stranded_ms;
	uint64_t	stranded_episodes;
	uint64_t	noticeable_episodes;	/* of them, a read skipped or >= 1 ms */
	uint64_t	max_pending;
	double		mean_pending;
	uint64_t	final_pending;
};
int db_cgroup_summary_add(struct db_results *w, const struct db_cgroup_summary *s);

struct db_item_summary {
	int64_t		run_id;
	uint64_t	cgroup_id;
	uint64_t	max_read_error, p99_read_error;
	double		mean_read_error;
	uint64_t	max_visible_error;
	uint64_t	max_settled_error;	/* of it, while no flush was in progress */
	uint64_t	max_flush_error;	/* of it, while one was */
	double		mean_visible_error;
	double		max_error_age_ms;
	int64_t		final_error;
	int		kind;
	int		item;
};
/* Held, as series rows are, until db_results_flush() inserts them DB_BULK_ROWS at a time. */
int db_item_summary_add(struct db_results *w, const struct db_item_summary *s);

struct db_mismatch {
	int64_t		run_id;
	uint64_t	ts;
	uint64_t	cgroup_id;
	int64_t		kernel_stats_updates, sim_stats_updates;
	const char	*cause;		/* NULL: none named */
	const char	*context;
	const char	*path;		/* reading: the cgroup's path or "#<id>" */
	int		cpu;
	bool		kernel_needs_flush, sim_needs_flush;
};
int db_mismatch_add(struct db_results *w, const struct db_mismatch *m);

struct db_validation {
	int64_t		run_id;
	const char	*policy, *flush_model;
	const char	*diff_hist;	/* JSON object */
	uint64_t	flush_events, compared, skipped_before_sync, stats_updates_match,
			needs_flush_match, stats_updates_match_plain, needs_flush_match_plain,
			max_hypotheses;
};
int db_validation_add(struct db *db, const struct db_validation *v);

/* Reading */

/* Ids of the cgroups a non-forced memcg_flush_stats names (readers), ascending. */
int db_read_cgroups_foreach(struct db *db, int (*fn)(uint64_t id, void *ctx), void *ctx);
/*
 * The id of the cgroup @path names: its path (/ or /a/b) or, all digits, its id
 * (cgroups.id).  0, or -ENOENT.  With @canon, its path (malloc'd; NULL when
 * the trace has none).
 */
int db_cgroup_lookup(struct db *db, const char *path, uint64_t *id, char **canon);
static inline int db_cgroup_by_path(struct db *db, const char *path, uint64_t *id)
{
	return db_cgroup_lookup(db, path, id, NULL);
}

/* 1 if a replay run exists (@run_id > 0: that one), 0 if not, negative on error. */
int db_replay_run_exists(struct db *db, int64_t run_id);

struct db_run_info {
	int64_t		run_id;
	const char	*kind, *policy, *flush_model, *started_at;	/* "-" when unknown */
	int64_t		events;
	double		wall_s;
	unsigned int	batch_size, nr_cpus;	/* simulated; 0 unknown */
};
/* Every run in run_id order; @fn's non-zero return stops and is returned. */
int db_runs_foreach(struct db *db, int (*fn)(const struct db_run_info *r, void *ctx), void *ctx);

/* The rows of lag_report (the column names of enum db_lag_col). */
enum db_lag_col {
	DB_LAG_POLICY, DB_LAG_RUN_ID, DB_LAG_FLUSH_MODEL, DB_LAG_CGROUP, DB_LAG_CGROUP_ID,
	DB_LAG_LEVEL, DB_LAG_ITEM, DB_LAG_UNIT, DB_LAG_READS, DB_LAG_STALE_READS,
	DB_LAG_MAX_READ_ERROR, DB_LAG_P99_READ_ERROR, DB_LAG_MEAN_READ_ERROR,
	DB_LAG_MAX_VISIBLE_ERROR, DB_LAG_MEAN_VISIBLE_ERROR, DB_LAG_MAX_ERROR_AGE_MS,
	DB_LAG_STRANDED_MS, DB_LAG_STRANDED_EPISODES, DB_LAG_MAX_PENDING,
	/* later, additive: NULL where a file's results predate them */
	DB_LAG_MAX_SETTLED_ERROR, DB_LAG_MAX_FLUSH_ERROR, DB_LAG_NOTICEABLE_EPISODES,
	DB_LAG_NR_COLS
};
const char *db_lag_col_name(enum db_lag_col c);

struct db_lag_row {
	const char	*policy, *flush_model, *cgroup, *item, *unit;	/* valid during the call */
	int64_t		run_id;
	uint64_t	cgroup_id;
	int		level;		/* -1 unknown */
	uint64_t	reads, stale_reads;
	uint64_t	max_read_error, p99_read_error;
	double		mean_read_error;
	uint64_t	max_visible_error;	/* at any moment, in flush or not */
	double		mean_visible_error;
	double		max_error_age_ms;
	double		stranded_ms;
	uint64_t	stranded_episodes;
	uint64_t	max_pending;
	/*
	 * The visible error's split: the largest while no flush was in progress
	 * (settled: the headline; what tells the policies apart) and while one
	 * was (the in-flush transient, to be labelled as such); and the
	 * stranded episodes a reader could have noticed (a read skipped, or at
	 * least 1 ms: the others are no red flag).  has_settled false: the
	 * file's results predate them, and the three are 0.
	 */
	uint64_t	max_settled_error;
	uint64_t	max_flush_error;
	uint64_t	noticeable_episodes;
	bool		has_settled;
	unsigned int	batch_size;	/* the run's MEMCG_CHARGE_BATCH; 0 unknown */
	unsigned int	nr_cpus;	/* the run's online CPUs; 0 unknown */
	const char	*text[DB_LAG_NR_COLS];	/* every column as SQLite prints it */
	const char	*batch_text, *cpus_text;	/* the two above as SQLite prints them */
};

struct db_lag_filter {
	const int64_t	*runs;		/* these runs (lag_report_all); NULL: lag_report */
	int		nr_runs;
	const char	*cgroup;	/* NULL: every cgroup */
	bool		worst_only;	/* one row per (run, cgroup): cgroup_lag_report */
};
/*
 * Rows in tree order (level, path), then item, then policy and run.  A file
 * of schema 2 read as it is has no runs.batch_size and nr_cpus: they come
 * from th and stranded_limit, which determine them (db_schema_upgrade()).
 */
int db_lag_foreach(struct db *db, const struct db_lag_filter *f,
		   int (*fn)(const struct db_lag_row *row, void *ctx), void *ctx);

/*
 * Every row of runs, lag_report_all and validation checked against what
 * replay can have written (db/results_read.c says the rules): -MCR_E_CORRUPT with
 * db_why() naming table, row, column and value.  db_lag_foreach() checks
 * each row it returns by the same rules.
 */
int db_results_check(struct db *db);

/* The first @limit mismatches of @run_id, in the order they were found. */
int db_mismatches_foreach(struct db *db, int64_t run_id, int64_t limit,
			  int (*fn)(const struct db_mismatch *m, void *ctx), void *ctx);
int db_validation_get(struct db *db, int64_t run_id, struct db_validation *out,
		      char **diff_hist);	/* *diff_hist malloc'd JSON */

/* Plot readers (report --format html) */

/* @name as lag_report names it (BTF name or "kind:item") -> the result tables' (kind, item). */
int db_item_by_name(struct db *db, const char *name, int *kind, int *item);
/*
 * db_item_by_line() - what a --line argument names: an item by its kernel
 * name (db_item_by_name()) or a line of memory.stat by its v1 or v2 name
 * ("rss", "total_rss", "anon": statline_item()), into @kind (1 state, lruvec
 * merged; 3 events) and @item.  @kname (may be NULL) gets the kernel name
 * when @name was a memory.stat one, else @name.
 * Return: 0; -ENOENT for a name neither the trace's items nor memory.stat
 * has; -ENODATA for a memory.stat line whose item the trace does not list.
 */
int db_item_by_line(struct db *db, const char *name, int *kind, int *item, const char **kname);
/* Samples of series for (run, cgroup, kind, item) in ts order. */
int db_series_foreach(struct db *db, int64_t run_id, uint64_t cgroup_id, int kind, int item,
		      int (*fn)(const struct db_series *s, void *ctx), void *ctx);

struct db_reads_filter {
	int64_t		run_id;
	uint64_t	cgroup_id;	/* 0: every cgroup */
	int		kind, item;	/* the item whose error db_item_read.error is */
	bool		forced;		/* forced reads (the periodic flush) instead of the others */
};
struct db_item_read {
	uint64_t	ts, cgroup_id;
	int64_t		error;		/* of the filter's item after the decision; 0 if it was right */
	bool		force, flushed, stranded, stale;
};
/* The reads of the filter in ts order. */
int db_item_reads_foreach(struct db *db, const struct db_reads_filter *f,
			  int (*fn)(const struct db_item_read *r, void *ctx), void *ctx);
/* The stranded episodes of (run, cgroup) in start order. */
int db_episodes_foreach(struct db *db, int64_t run_id, uint64_t cgroup_id,
			int (*fn)(const struct db_episode *e, void *ctx), void *ctx);
/* The counters of a run (-ENOENT: no such run). */
int db_run_counters_get(struct db *db, int64_t run_id, struct db_run_counters *c);

/*
 * stat_read_checks: validate's comparison of each logged memory.stat line
 * (stat_reads) with the simulation, one row per (read, line) compared.
 */
enum db_stat_verdict {
	DB_STAT_ANCHOR,		/* the cgroup's first matched read: the truth's anchor */
	DB_STAT_EXACT,		/* printed = shown */
	DB_STAT_WITHIN2,	/* within 2 traced units (pages, counts) */
	DB_STAT_OFF,
};
enum db_stat_cause {
	DB_STAT_CAUSE_NONE,
	DB_STAT_CAUSE_DECISION,	/* the simulation decided a flush unlike the kernel */
	DB_STAT_CAUSE_WINDOW,	/* within the updates inside the flushes' lock windows */
};
struct db_stat_check {
	int64_t			read;
	uint64_t		cgroup_id;
	const char		*name;		/* the line */
	const char		*unit;		/* "bytes" or "count" */
	int64_t			per;		/* printed units per traced unit */
	uint64_t		request_ts;
	int64_t			printed, shown, truth;
	int64_t			diff;		/* printed - shown, traced units, rounded */
	enum db_stat_verdict	verdict;
	enum db_stat_cause	cause;
	bool			placed;		/* its flush's visit placed by printed values */
};
/*
 * The rows of @run_id compared under @flush_model, replacing any it had;
 * inside the caller's db_begin().  -EINVAL for a row that breaks the rules
 * the readers check (results_check.c).
 */
int db_stat_checks_put(struct db *db, int64_t run_id, const char *flush_model,
		       const struct db_stat_check *rows, size_t n);

/*
 * What a report says of them: "memory.stat as printed: N of M reads within 2
 * units of the simulation", M the (read, line) pairs compared (anchors not
 * counted), N those exact or within 2 units.
 */
struct db_stat_check_summary {
	int64_t		run_id;		/* the validate run (the latest with rows) */
	char		flush_model[32];
	uint64_t	pairs;		/* M */
	uint64_t	within2;	/* N: exact ones included */
	uint64_t	exact, off, off_decision, off_window;
	uint64_t	reads;		/* logged reads compared (anchors included) */
};
/* -ENOENT: no stat_read_checks row (no logged reads, or not validated since). */
int db_stat_check_summary(struct db *db, struct db_stat_check_summary *out);

/* Per cgroup and line of that run: the worst error the kernel really printed. */
struct db_stat_check_worst {
	uint64_t	cgroup_id;
	const char	*cgroup;		/* path, or "#<id>" */
	const char	*name;			/* the line */
	const char	*unit;			/* of printed_error: "bytes" or "count" */
	int64_t		per;			/* the unit per traced unit (page size or 1) */
	int64_t		printed_error;		/* printed - truth of largest |value|, anchors aside */
	int64_t		read;			/* the read that printed it */
	uint64_t	request_ts;
	uint64_t	pairs, within2;		/* that line's M and N */
};
/*
 * Every row of @run_id (of @cgroup_id, 0 every cgroup) in read order, each
 * checked: for a plot, printed - truth at request_ts.  The strings live until
 * @fn returns.
 */
int db_stat_checks_foreach(struct db *db, int64_t run_id, uint64_t cgroup_id,
			   int (*fn)(const struct db_stat_check *r, void *ctx), void *ctx);
/* In cgroup path, line order; the strings live until @fn returns. */
int db_stat_check_worst_foreach(struct db *db, int64_t run_id,
				int (*fn)(const struct db_stat_check_worst *w, void *ctx),
				void *ctx);

struct db_trace_lost {
	int64_t		gaps, gap_events, gaps_unknown;	/* gaps table: rows, counted events, of unknown size */
	int64_t		overrun, dropped;	/* ring buffers, start to end, known CPUs */
	int64_t		cpus_end;		/* CPUs with counters from the end */
	int64_t		cpus_unknown;		/* of them, overrun or dropped -1 (unknown) */
	int64_t		cpus_no_end;		/* CPUs with counters from the start only */
};
int db_trace_lost(struct db *db, struct db_trace_lost *out);

#endif
