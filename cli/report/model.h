/* SPDX-License-Identifier: GPL-2.0 */
/*
 * model.h - the report's one model, loaded once: for each trace database
 * (host) its runs, its lines (one per run x cgroup x memory.stat item), the
 * cost of each run and the validation result; and the ops table through
 * which each format writes it (text.c, rows.c for CSV and JSON, html*.c).
 * Replay's end-of-pass summary is a model too (pass.c fills it from the
 * replay it just made) and is written by the text ops.
 *
 * Contract: model.c reads the databases only through db/; it loads what the
 * chosen ops need (report_load.need) before anything is written, so a
 * failure leaves no partial output.  The model owns its strings; the
 * databases stay the caller's (open, for the HTML charts' series).  Runs are
 * in policy order (sim_policy_rank(), then run id) and every run's name comes
 * from report_run_name(); lines keep the database's order (tree order, item,
 * policy, run).  Numbers are written through units.c.  Nothing here prints
 * to the user or exits: functions return 0 or a negative errno / -MCR_E_*.
 *
 * Room to grow: a line's extra columns go in struct report_line; a host's extra sections (what
 * memory.stat printed) in struct report_host, with an op of their own.
 */
#ifndef MCR_REPORT_MODEL_H
#define MCR_REPORT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "calib.h"
#include "results.h"
#include "sim.h"
#include "statlines.h"

struct db;

#define REPORT_NAME_LEN	64

struct report_run {
	int64_t		id;
	char		*policy, *flush_model;	/* flush_model "-" when unknown */
	unsigned int	batch, cpus;		/* simulated MEMCG_CHARGE_BATCH, online CPUs */
	int		rank;			/* sim_policy_rank(policy) */
	char		name[REPORT_NAME_LEN];	/* report_run_name() */
	bool		repeated;		/* another run of the host has the same name */
	/* counters of the pass (replay's summary, the page's cost table) */
	struct db_run_counters counters;
	bool		have_counters;
};

/* One row of lag_report (or cgroup_lag_report with --worst). */
struct report_line {
	char			*cgroup, *item;
	const struct report_run	*run;
	int64_t			run_id;
	uint64_t		cgroup_id;
	int			level;		/* -1 unknown */
	bool			events;		/* unit events: a count, else pages */
	uint64_t		reads, stale_reads, stranded_episodes, max_pending;
	uint64_t		max_read, p99_read, max_visible;
	/*
	 * The visible error's split: settled (no flush in progress: the
	 * headline, what tells the policies apart) and the in-flush transient;
	 * the stranded episodes a reader could notice (a read skipped, or
	 * >= 1 ms).  !split: the file's results predate them; then settled is
	 * max_visible and every episode counts as noticeable.
	 */
	uint64_t		max_settled, max_flush, noticeable;
	bool			split;
	/* the memory.stat lines that print the item (sim/statlines.c); NULLs: none */
	struct statline_names	names;
	double			mean_read, mean_visible, age_ms, stranded_ms;
	/* REPORT_NEED_TEXT: each column as SQLite prints it (CSV, JSON), then batch_size, nr_cpus */
	char			*text[DB_LAG_NR_COLS + 2];
};
#define REPORT_TEXT_BATCH	DB_LAG_NR_COLS
#define REPORT_TEXT_CPUS	(DB_LAG_NR_COLS + 1)

/* A run's cost: the row of cost_report and its estimate at the calibration's costs. */
struct report_cost {
	struct db_cost_row		r;	/* policy, flush_model owned */
	struct sim_cost_estimate	e;
	char				name[REPORT_NAME_LEN];
};

struct report_costs {
	struct report_cost	*rows;		/* in policy order */
	size_t			nr, cap;
	struct sim_cost_calib	cal;
	struct db_cost_basis	basis;
	const char		*source;	/* "database" or the calibration file's name */
	bool			have_cal;
	bool			grid;		/* a run at another batch or CPU count */
};

#define REPORT_MAX_CAUSES	8

/* The latest validate run's result. */
struct report_validation {
	int64_t			run_id;		/* 0: never validated */
	char			policy[32], flush_model[32];
	bool			stored;		/* the run stored its result */
	struct db_validation	v;
	char			*cause[REPORT_MAX_CAUSES];
	uint64_t		nr_cause[REPORT_MAX_CAUSES];
	uint64_t		other, total;	/* mismatches: of other causes, in all */
};

/* A cgroup whose readers got stale reads under the traced kernel's policy. */
struct report_flag {
	const struct report_line	*worst;	/* its worst line under that run (a page line first) */
	const struct report_line	*cont;	/* the same under continue; NULL: never wrong */
};

/*
 * The verdict (verdict.c): did readers of this host's memory.stat get stale
 * numbers under the policy the traced kernel runs, in which cgroups, how far
 * off; what continue would have given, at what cost.  Runs are the policy's
 * and continue's at the trace's own batch and CPUs (the latest reported).
 */
struct report_verdict {
	const char			*policy;	/* the traced kernel's; NULL unknown */
	char				*kernel;	/* its release, NULL unknown */
	const struct report_run		*run, *cont;	/* NULL: not in this report */
	struct report_flag		*flags;		/* in tree order */
	size_t				nr_flags;
	const struct report_cost	*run_cost, *cont_cost;	/* NULL: not in the cost rows */
	bool				have_costs;	/* the cost rows were loaded */
};

/* One (cgroup, line) of the logged memory.stat reads validate compared. */
struct report_printed {
	uint64_t	cgroup_id;
	char		*cgroup, *name;		/* path; the line as printed ("total_rss") */
	const char	*item;			/* the traced item it prints (statlines.c); NULL */
	bool		bytes;			/* printed in bytes, else a count */
	int64_t		per;			/* printed units per traced unit */
	int64_t		printed_error;		/* printed - truth of largest |value| */
	int64_t		read;			/* the read that printed it */
	uint64_t	pairs, within2;		/* that line's reads compared, within 2 units */
};

/*
 * memory.stat as printed (validate's stat_read_checks of the logged reads):
 * how many reads the simulation matched within 2 units, and per cgroup and
 * line the worst error the kernel really printed.
 */
struct report_statlog {
	bool				have;		/* validate compared logged reads */
	struct db_stat_check_summary	sum;
	struct report_printed		*lines;		/* by cgroup path, line */
	size_t				nr, cap;
};

struct report_host {
	struct db		*db;
	const char		*file;		/* as named on the command line */
	char			*host;		/* report_host_name() */
	char			*label;		/* host, "host (file)" where another has its name */
	int64_t			page_size;
	int64_t			batch, online;	/* the trace's own */
	int64_t			t0, t1;		/* the capture's span, ns */
	bool			have_t0;	/* meta capture_start_ns: the start_ns column */
	int64_t			rot_index;	/* meta rotation_index of a --rotate file; -1 none */
	char			*rot_prefix;	/* its rotation_prefix */
	bool			grid;		/* a line of a run not at the trace's own */
	bool			pass;		/* replay's summary: lines are its ancestors */
	unsigned int		need;		/* what was loaded: REPORT_NEED_* */
	struct report_run	*runs;
	int			nr_runs;
	struct report_line	*lines;
	size_t			nr_lines, cap;
	struct report_costs	costs;
	struct report_validation val;
	struct report_verdict	verdict;
	struct report_statlog	statlog;
};

/* What to load: the lines, the costs, the validation and the run counters. */
enum {
	REPORT_NEED_LINES	= 1 << 0,
	REPORT_NEED_COSTS	= 1 << 1,
	REPORT_NEED_VALIDATION	= 1 << 2,
	REPORT_NEED_COUNTERS	= 1 << 3,
	REPORT_NEED_VERDICT	= 1 << 4,	/* the lines even with --cost */
	REPORT_NEED_TEXT	= 1 << 5,	/* the lines' columns as SQLite prints them */
	REPORT_NEED_STATLOG	= 1 << 6,	/* memory.stat as printed (validate's checks) */
};

struct report_load {
	const int64_t	*runs;		/* NULL: the latest replay run of each policy, flush model, batch, CPUs */
	int		nr_runs;
	const char	*cgroup;	/* NULL: every cgroup */
	bool		worst;		/* one line per (run, cgroup): cgroup_lag_report */
	bool		cost_only;	/* --cost: the costs, no lines */
	const char	*calibration;	/* a calibration file; NULL: each database's own */
	unsigned int	need;		/* REPORT_NEED_* */
};

struct report_model {
	struct report_host	*hosts;
	int			nr_hosts;
	bool			grid;		/* some host is a grid: CSV and JSON add two columns */
	bool			statlog;	/* some host has memory.stat as printed: three more */
	/*
	 * Some host is a file of a memcg-capture --rotate series: with several
	 * databases, CSV and JSON add start_ns after file, and each series'
	 * files follow one another by rotation_index where its first one stands.
	 */
	bool			rotation;
	int			failed;		/* the host report_model_load() failed on */
	struct report_load	o;
};

struct report_source {
	struct db	*db;
	const char	*file;
};

int report_model_load(struct report_model *m, const struct report_source *src, int nr,
		      const struct report_load *o);
void report_model_free(struct report_model *m);
/* A host of its own (replay's summary): what report_model_free() frees of it. */
void report_host_free(struct report_host *h);

/*
 * The host a trace was recorded on: meta host (memcg-capture), else the node
 * name in the trace's own uname (trace-cmd import: "Linux NAME 6.18 ..."),
 * else synth:SCENARIO, else the file's name.  malloc'd; NULL out of memory.
 */
char *report_host_name(struct db *db, const char *file);

/*
 * A run's name, the one every format shows: the policy, and in a grid (some
 * run not at the trace's own batch and CPUs) "POLICY b=BATCH cpus=N".
 */
static inline const char *report_run_name(char *buf, size_t len, const char *policy,
					  unsigned int batch, unsigned int cpus, bool grid)
{
	if (grid)
		snprintf(buf, len, "%s b=%u cpus=%u", policy, batch, cpus);
	else
		snprintf(buf, len, "%s", policy);
	return buf;
}
/* A run at another batch or CPU count than the trace's own: a grid's. */
static inline bool report_is_grid_point(unsigned int batch, unsigned int cpus, int64_t own_batch,
					int64_t own_cpus)
{
	return batch != own_batch || cpus != own_cpus;
}
/* Policies in the order of their table (break, continue, legacy), then runs. */
static inline int report_rank_cmp(int rank_a, int64_t id_a, int rank_b, int64_t id_b)
{
	if (rank_a != rank_b)
		return rank_a - rank_b;
	return (id_a > id_b) - (id_a < id_b);
}

/* Add a run to @h (replay's summary); its name is set by report_host_names(). */
struct report_run *report_host_add_run(struct report_host *h);
struct report_line *report_host_add_line(struct report_host *h);
/* Sort the runs, name them and point the lines at them (lines carry run ids meanwhile). */
int report_host_finish(struct report_host *h);
/* The run of @h with id @id, NULL if none. */
struct report_run *report_run_by_id(const struct report_host *h, int64_t id);

/* costs.c: @h's costs (the latest runs, or @o's), the calibration and the estimates. */
int report_costs_load(struct report_host *h, const struct report_load *o);
void report_costs_free(struct report_costs *c);
/* The calibration file can be used: 0, or the error of reading it (the field refused in @why). */
int report_cost_check(const char *calibration, char *why, size_t len);
/*
 * What the costs read of @db checked before any output: its calibration table
 * (unless @calibration names a file), cost_basis and the cost_report rows.
 * 0, or the error with db_why() saying which row.
 */
int report_cost_rows_check(struct db *db, const char *calibration);
/* The break run at @c's batch and CPUs, what "vs break" compares with; NULL none. */
const struct report_cost *report_cost_baseline(const struct report_costs *v,
					       const struct report_cost *c);

/* What every estimate leaves out, one sentence, for help texts and pages. */
#define REPORT_COST_LEAVES_OUT \
	"The estimate leaves out the real kernel's cache effects, lock contention, " \
	"interrupts and the flush side, and prices kernel operations by user-space " \
	"proxies (a thread-local add for this_cpu_add(), a lock add for atomic_add())."

/* verdict.c: @h's verdict from its lines and costs. */
int report_verdict_load(struct report_host *h);
void report_verdict_free(struct report_verdict *v);
/* Stale reads under the traced kernel's policy: the flagged cgroups of every host. */
size_t report_model_stale(const struct report_model *m);

/* What readers got under one run, for the summary over several databases. */
struct report_run_sum {
	size_t				stale_cgroups;	/* with a stale read */
	uint64_t			stale_reads, reads;
	const struct report_line	*worst;		/* its worst line, a page line first; NULL */
};
/*
 * @r's sum over @h's lines; the reads of the whole run from its cost row
 * when there is one and @whole (no --cgroup), since a cgroup never wrong has
 * no line.
 */
void report_run_sum(const struct report_host *h, const struct report_run *r, bool whole,
		    struct report_run_sum *s);

/*
 * The verdict in sentences, plain text (HTML escapes them): the headline;
 * a flagged cgroup with how often and how far off; what continue gave it;
 * continue's cost ("" when there is nothing to say).  Each returns @buf.
 */
#define REPORT_SENTENCE_LEN	512
/* @named: "Verdict for HOST (FILE): " first. */
char *report_verdict_head(char *buf, size_t len, const struct report_host *h, bool named);
char *report_verdict_flag(char *buf, size_t len, const struct report_host *h,
			  const struct report_flag *fl);
char *report_verdict_cont(char *buf, size_t len, const struct report_host *h,
			  const struct report_flag *fl);
char *report_verdict_cost(char *buf, size_t len, const struct report_host *h);
/* Flagged cgroups a verdict lists; the rest are counted. */
#define REPORT_VERDICT_CGROUPS	10

/* ---- writing: one ops table per format ---- */

struct report_out {
	FILE				*f;
	const struct report_model	*m;
	unsigned long			n;	/* JSON objects written (commas) */
};

/*
 * Each op may be NULL.  report_write() calls begin, then per host: host,
 * lines (unless --cost), costs (if the format shows them, or --cost),
 * validation, host_end; then end.
 */
struct report_ops {
	const char	*name;
	unsigned int	need;		/* REPORT_NEED_* beyond the lines */
	bool		costs_always;	/* the costs follow the lines without --cost */
	int (*begin)(struct report_out *o);
	int (*host)(struct report_out *o, const struct report_host *h, int idx);
	int (*lines)(struct report_out *o, const struct report_host *h, int idx);
	int (*costs)(struct report_out *o, const struct report_host *h, int idx);
	int (*validation)(struct report_out *o, const struct report_host *h, int idx);
	int (*host_end)(struct report_out *o, const struct report_host *h, int idx);
	int (*end)(struct report_out *o);
};

extern const struct report_ops report_text_ops, report_csv_ops, report_json_ops,
	report_html_ops;

int report_write(FILE *f, const struct report_model *m, const struct report_ops *ops);

/*
 * The memory.stat line of @l a reader of cgroup v1 sees: "total_rss" (the
 * subtree's, as the report's truth is) where v1 prints a total line, else its
 * one line; NULL where v1 prints none.  @buf holds REPORT_NAME_LEN.
 */
const char *report_v1_line(char *buf, size_t len, const struct report_line *l);
/* " (v1 total_rss, v2 anon)", " (v2 zswap)", or "" where neither prints @l's item. */
char *report_line_names(char *buf, size_t len, const struct report_line *l);

/* The worst printed error of @l's cgroup and item (the line that prints it); NULL none. */
const struct report_printed *report_line_printed(const struct report_host *h,
						 const struct report_line *l);

/* ---- units.c: the one formatter of the report's numbers ---- */
/* @text in lines of at most 78 columns, indented by two. */
void report_wrap(FILE *f, const char *text);

#define REPORT_NUM_LEN	32

/* "1.94 GiB", "24.0 MiB", "512 KiB": pages as memory, three significant digits; 0 is "0". */
char *report_pages_str(char *buf, size_t len, double pages, int64_t page_size);
/* A line's value in its unit: pages as above ("0 B" for 0 with @zero_unit), events a count. */
char *report_value_str(char *buf, size_t len, double v, bool events, int64_t page_size,
		       bool zero_unit);
/*
 * "9.8 s", "120 ms", "1.5 ms", "21 µs", "0": a duration given in ms, two
 * significant digits at least; under 1 ms in µs.
 */
char *report_ms_str(char *buf, size_t len, double ms);
/* "3.7 ms", "1.50 s", "21 µs": a duration in the HTML tables' fixed decimals; under 1 ms in µs. */
char *report_ms_fixed_str(char *buf, size_t len, double ms);

#endif /* MCR_REPORT_MODEL_H */
