// SPDX-License-Identifier: GPL-2.0
/*
 * results_schema.c - the result tables, indexes and views of a trace database,
 * every column documented inside its CREATE statement (`sqlite3 FILE .schema`).
 *
 * Staleness is measured per stat item in the unit its updates are traced in:
 * pages (the *_B and NR_KERNEL_STACK_KB items too: the kernel rounds their
 * bytes and kB to pages before the tracepoint), or events for
 * count_memcg_events; state and lruvec updates of one item are one line of
 * memory.stat and one item here, kind 1.  error = shown - truth: negative
 * when memory.stat lags growth.  "pending" is the sum of |val| not yet
 * flushed into a cgroup, in the kernel's stats_updates units: a fault and its
 * free count twice, so it is never memory.
 */
#include <errno.h>
#include <string.h>

#include "db.h"
#include "db_local.h"

/* "CREATE <what> IF NOT EXISTS <name> <body>", TEMP-able for read-only opens. */
static const struct {
	const char	*what;		/* "TABLE", "VIEW" or "INDEX" */
	const char	*name;
	const char	*body;		/* after the name */
} db_results_sql[] = {
	{ "TABLE", "runs", "(\n"
"	-- One row per run (policy x batch x CPUs) per replay (or validate) invocation.\n"
"	run_id		INTEGER PRIMARY KEY,	-- referenced by every other result table\n"
"	kind		TEXT NOT NULL,		-- 'replay' | 'validate'\n"
"	policy		TEXT NOT NULL,		-- walk policy: 'break' | 'continue' | 'legacy'\n"
"	flush_model	TEXT,			-- 'instant' | 'window' | 'spread' | 'inferred' (explicit visits override it)\n"
"	params		TEXT,			-- the run's options, JSON\n"
"	started_at	TEXT,			-- UTC ISO-8601 time the run started\n"
"	wall_s		REAL,			-- wall-clock seconds of the pass that ran it\n"
"	events		INTEGER,		-- trace events consumed\n"
"	updates		INTEGER,		-- updates with val != 0 fed to the simulator\n"
"	flush_requests	INTEGER,		-- flush requests (memcg_flush_stats)\n"
"	flushes		INTEGER,		-- requests that went ahead under this policy\n"
"	visits		INTEGER,		-- (memcg, cpu) flush visits\n"
"	walk_steps	INTEGER,		-- nodes the update's ancestor walks looked at\n"
"	pcpu_adds	INTEGER,		-- per-CPU stats_updates additions\n"
"	atomic_adds	INTEGER,		-- batches moved into an atomic stats_updates\n"
"	dropped_batches	INTEGER,		-- legacy: batches thrown away at a flushable memcg\n"
"	atomic_resets	INTEGER,		-- visits that stored 0 into a non-zero atomic\n"
"	unknown_ids	INTEGER,		-- cgroup ids first seen in an update, attached under the root\n"
"	sample_ns	INTEGER,		-- period of series and cgroup_series, trace ns; 0 none\n"
"	th		INTEGER,		-- TH = batch x online CPUs: flushable means stats_updates > TH\n"
"	stranded_limit	INTEGER,		-- TH + (batch - 1) x online CPUs: stranded means pending above it\n"
"	tool_version	TEXT,			-- memcg-replay version that wrote the run\n"
"	batch_size	INTEGER,		-- MEMCG_CHARGE_BATCH simulated: per-CPU flush point, TH's factor\n"
"	nr_cpus		INTEGER			-- online CPUs simulated (TH's other factor); the events keep\n"
"						-- their traced CPUs.  Both are the trace's own (meta batch_size,\n"
"						-- nr_cpus_online) unless replay --batch / --cpus asked otherwise\n"
")" },
	{ "TABLE", "reads", "(\n"
"	-- Every read (memcg_flush_stats) of a cgroup and what the policy made of it.\n"
"	read_id			INTEGER PRIMARY KEY,	-- read_errors.read_id\n"
"	run_id			INTEGER NOT NULL,	-- runs.run_id\n"
"	ts			INTEGER NOT NULL,	-- trace ns of the request\n"
"	cpu			INTEGER NOT NULL,	-- CPU it was traced on\n"
"	pid			INTEGER NOT NULL,	-- task that read; 0 unknown\n"
"	cgroup_id		INTEGER NOT NULL,	-- memcg read (cgroups.id)\n"
"	force			INTEGER NOT NULL,	-- 1: forced flush (the periodic root flush)\n"
"	flushed			INTEGER NOT NULL,	-- 1: the policy flushed (force or stats_updates > TH); 0 skipped\n"
"	stranded		INTEGER NOT NULL,	-- 1: the cgroup was stranded at the request (see stranded_episodes)\n"
"	stale			INTEGER NOT NULL,	-- 1: skipped while stranded: a stale read\n"
"	pending			INTEGER NOT NULL,	-- sum of |val| not yet flushed into it, before the decision (stats_updates units)\n"
"	pending_since_flush	INTEGER NOT NULL,	-- of it, from updates since its last flush: stranded above runs.stranded_limit\n"
"	items_wrong		INTEGER NOT NULL,	-- items the reader got wrong: its rows in read_errors\n"
"	sim_stats_updates	INTEGER,	-- simulated atomic stats_updates at the request\n"
"	kernel_stats_updates	INTEGER,	-- the kernel's, as traced\n"
"	kernel_needs_flush	INTEGER		-- the kernel's needs_flush, as traced\n"
")" },
	{ "TABLE", "read_errors", "(\n"
"	-- One row per item a read got wrong: the error after the read's flush decision.\n"
"	read_id		INTEGER NOT NULL,	-- reads.read_id\n"
"	kind		INTEGER NOT NULL,	-- items.kind: 1 state (state and lruvec merged), 3 events\n"
"	item		INTEGER NOT NULL,	-- items.item\n"
"	error		INTEGER NOT NULL,	-- shown - truth, in the item's unit (negative: the stat lagged)\n"
"	age_ns		INTEGER NOT NULL,	-- age of the oldest update the reader missed, ns\n"
"	PRIMARY KEY (read_id, kind, item)\n"
") WITHOUT ROWID" },
	{ "TABLE", "stranded_episodes", "(\n"
"	-- Stretches of time a cgroup was stranded: not flushable (stats_updates <= TH) while\n"
"	-- the updates pending in its subtree since its last flush exceeded runs.stranded_limit,\n"
"	-- more than per-CPU batching can hold back.  Only a walk that stopped early does that.\n"
"	run_id		INTEGER NOT NULL,	-- runs.run_id\n"
"	cgroup_id	INTEGER NOT NULL,	-- cgroups.id\n"
"	start_ts	INTEGER NOT NULL,	-- trace ns it became stranded\n"
"	end_ts		INTEGER NOT NULL,	-- trace ns it stopped (a flush), or the trace's end\n"
"	open		INTEGER NOT NULL,	-- 1: still stranded when the trace ended\n"
"	worst_kind	INTEGER,		-- item with the largest |error| during the episode (items.kind)\n"
"	worst_item	INTEGER,		-- items.item; NULL none\n"
"	worst_error	INTEGER,		-- its error at that moment, signed, in its unit\n"
"	reads_skipped	INTEGER NOT NULL,	-- reads of it skipped during the episode (stale reads)\n"
"	max_pending	INTEGER			-- largest pending during the episode (stats_updates units)\n"
")" },
	{ "TABLE", "series_lines", "(\n"
"	-- The rows of the view series, stored a piece of a (run, cgroup, item) line at a\n"
"	-- time: consecutive samples at a constant step, at most about 1000 bytes of rows.\n"
"	-- Read the view; this is its storage (one row here instead of about 60 there).\n"
"	run_id		INTEGER NOT NULL,	-- runs.run_id\n"
"	cgroup_id	INTEGER NOT NULL,	-- cgroups.id\n"
"	kind		INTEGER NOT NULL,	-- items.kind (1 state, 3 events)\n"
"	item		INTEGER NOT NULL,	-- items.item\n"
"	ts		INTEGER NOT NULL,	-- trace ns of the piece's first sample\n"
"	step		INTEGER NOT NULL,	-- trace ns between its samples: row k is at ts + k * step\n"
"	rows		TEXT NOT NULL,		-- JSON array, a sample each: [error, min_error, max_error]\n"
"	PRIMARY KEY (run_id, cgroup_id, kind, item, ts)\n"
") WITHOUT ROWID" },
	{ "VIEW", "series", "AS\n"
"-- Visible error of (cgroup, item) every runs.sample_ns from the first event to the\n"
"-- last, no row skipped: (last - first) / sample_ns + 1 rows per (run, cgroup, item).\n"
"-- Cgroups: those read in the trace, their ancestors, and --series-cgroup ones.\n"
"-- Visible error: what a reader arriving then would get (0 while flushable).\n"
"-- Columns: run_id (runs.run_id), cgroup_id (cgroups.id), kind and item (items: kind 1\n"
"-- state, 3 events), ts (trace ns of the sample), error (visible error at ts, in the\n"
"-- item's unit), min_error and max_error (its minimum and maximum over (previous\n"
"-- sample, ts]: spikes survive plotting).  Unique by (run_id, cgroup_id, kind, item,\n"
"-- ts); ask ORDER BY for an order.\n"
"SELECT l.run_id AS run_id, l.cgroup_id AS cgroup_id, l.kind AS kind, l.item AS item,\n"
"	l.ts + CAST(r.key AS INTEGER) * l.step AS ts,\n"
"	json_extract(r.value, '$[0]') AS error,\n"
"	json_extract(r.value, '$[1]') AS min_error,\n"
"	json_extract(r.value, '$[2]') AS max_error\n"
"  FROM series_lines l, json_each(l.rows) r" },
	{ "TABLE", "cgroup_series", "(\n"
"	-- The cgroups of series, at the same samples: their flush state.\n"
"	run_id		INTEGER NOT NULL,	-- runs.run_id\n"
"	cgroup_id	INTEGER NOT NULL,	-- cgroups.id\n"
"	ts		INTEGER NOT NULL,	-- trace ns of the sample\n"
"	pending		INTEGER NOT NULL,	-- sum of |val| not yet flushed into it (stats_updates units)\n"
"	stats_updates	INTEGER NOT NULL,	-- simulated atomic stats_updates\n"
"	flushable	INTEGER NOT NULL,	-- 1: stats_updates > TH, a read flushes\n"
"	stranded	INTEGER NOT NULL,	-- 1: stranded (see stranded_episodes)\n"
"	PRIMARY KEY (run_id, cgroup_id, ts)\n"
") WITHOUT ROWID" },
	{ "TABLE", "cgroup_summary", "(\n"
"	-- Per run and cgroup, over the whole trace.\n"
"	run_id			INTEGER NOT NULL,	-- runs.run_id\n"
"	cgroup_id		INTEGER NOT NULL,	-- cgroups.id\n"
"	reads			INTEGER NOT NULL,	-- non-forced reads of it (memcg_flush_stats)\n"
"	flushed_reads		INTEGER NOT NULL,	-- of them, reads the policy flushed\n"
"	stale_reads		INTEGER NOT NULL,	-- of them, reads skipped while stranded\n"
"	stranded_ms		REAL NOT NULL,		-- time it was stranded, ms\n"
"	stranded_episodes	INTEGER NOT NULL,	-- rows of stranded_episodes\n"
"	max_pending		INTEGER NOT NULL,	-- largest pending (stats_updates units, not memory)\n"
"	mean_pending		REAL,			-- time-weighted mean pending\n"
"	final_pending		INTEGER,		-- pending at the end of the trace\n"
"	noticeable_episodes	INTEGER,		-- of stranded_episodes, those a reader could notice:\n"
"						-- a read skipped, or at least 1 ms long; NULL in rows\n"
"						-- written before the column\n"
"	PRIMARY KEY (run_id, cgroup_id)\n"
") WITHOUT ROWID" },
	{ "TABLE", "item_summary", "(\n"
"	-- Per run, cgroup and stat item: how far its memory.stat line was off, in the item's\n"
"	-- unit.  Absolute values of the signed error except final_error.  Items whose error\n"
"	-- was 0 throughout have no row.\n"
"	run_id			INTEGER NOT NULL,	-- runs.run_id\n"
"	cgroup_id		INTEGER NOT NULL,	-- cgroups.id\n"
"	kind			INTEGER NOT NULL,	-- items.kind (1 state, 3 events)\n"
"	item			INTEGER NOT NULL,	-- items.item\n"
"	max_read_error		INTEGER NOT NULL,	-- largest |error| a reader of the cgroup got (after its flush decision)\n"
"	p99_read_error		INTEGER NOT NULL,	-- 99th percentile of |error| over the cgroup's reads\n"
"	mean_read_error		REAL NOT NULL,		-- mean |error| over the cgroup's reads\n"
"	max_visible_error	INTEGER NOT NULL,	-- largest |visible error| at any moment\n"
"	mean_visible_error	REAL NOT NULL,		-- time-weighted mean |visible error|\n"
"	max_error_age_ms	REAL NOT NULL,		-- oldest update a reader of the cgroup missed, ms\n"
"	final_error		INTEGER,		-- signed error at the end of the trace\n"
"	max_settled_error	INTEGER,		-- of max_visible_error, while no flush was in progress\n"
"	max_flush_error		INTEGER,		-- of max_visible_error, while a flush was (its transient)\n"
"						-- (both NULL in rows written before the columns)\n"
"	PRIMARY KEY (run_id, cgroup_id, kind, item)\n"
") WITHOUT ROWID" },
	{ "TABLE", "validation", "(\n"
"	-- Per validate run: the simulator against the kernel's recorded flush decisions.\n"
"	run_id				INTEGER NOT NULL,	-- runs.run_id\n"
"	policy				TEXT,		-- walk policy validated\n"
"	flush_model			TEXT,		-- flush model used\n"
"	flush_events			INTEGER,	-- memcg_flush_stats events in the trace\n"
"	compared			INTEGER,	-- of them, compared with the simulator\n"
"	skipped_before_sync		INTEGER,	-- not compared: before the simulator's counters were in sync\n"
"	stats_updates_match		INTEGER,	-- compared events whose stats_updates matched\n"
"	needs_flush_match		INTEGER,	-- compared events whose needs_flush matched\n"
"	stats_updates_match_plain	INTEGER,	-- the same without allowing for races (one hypothesis)\n"
"	needs_flush_match_plain		INTEGER,	-- the same without allowing for races\n"
"	max_hypotheses			INTEGER,	-- most race orderings considered for one event\n"
"	diff_hist			TEXT		-- histogram of sim - kernel stats_updates (bucketed), JSON\n"
")" },
	{ "TABLE", "validation_mismatch", "(\n"
"	-- Flush events where the simulator disagreed with the kernel.\n"
"	run_id			INTEGER NOT NULL,	-- runs.run_id\n"
"	ts			INTEGER NOT NULL,	-- trace ns of the flush event\n"
"	cpu			INTEGER NOT NULL,	-- CPU it was traced on\n"
"	cgroup_id		INTEGER NOT NULL,	-- memcg flushed\n"
"	kernel_stats_updates	INTEGER,	-- as traced\n"
"	sim_stats_updates	INTEGER,	-- as simulated\n"
"	kernel_needs_flush	INTEGER,	-- as traced\n"
"	sim_needs_flush		INTEGER,	-- as simulated\n"
"	cause			TEXT,		-- best explanation found (e.g. a gap, a race)\n"
"	context			TEXT		-- details for a human\n"
")" },
	{ "TABLE", "stat_read_checks", "(\n"
"	-- validate: each logged memory.stat line (stat_reads) of a traced item's subtree value\n"
"	-- against the simulation.  Truth before the trace is unknown: each cgroup's first matched\n"
"	-- read is its anchor (truth = printed - its simulated error); a later read's truth is the\n"
"	-- anchor's plus the traced updates of the subtree between the two flush requests.\n"
"	run_id		INTEGER NOT NULL,	-- runs.run_id of the validate run\n"
"	flush_model	TEXT NOT NULL,		-- model of the simulation compared: the run's, or replay's\n"
"					-- default (inferred on a recording) from a pass not stored\n"
"	read		INTEGER NOT NULL,	-- stat_reads.read\n"
"	cgroup_id	INTEGER NOT NULL,	-- cgroups.id of the cgroup read\n"
"	name		TEXT NOT NULL,		-- the line, e.g. 'total_rss' (v1), 'anon' (v2)\n"
"	unit		TEXT NOT NULL,		-- of printed, shown, truth and printed_error: 'bytes' or 'count'\n"
"	per		INTEGER NOT NULL,	-- printed units per traced unit: the page size, or 1\n"
"	request_ts	INTEGER NOT NULL,	-- trace ns of the flush request the read is matched to\n"
"	printed		INTEGER NOT NULL,	-- the value memory.stat printed\n"
"	shown		INTEGER NOT NULL,	-- the simulation's: truth + its read error x per\n"
"	truth		INTEGER NOT NULL,	-- the subtree's true value at the request\n"
"	printed_error	INTEGER NOT NULL,	-- printed - truth: the error the kernel really printed\n"
"	diff		INTEGER NOT NULL,	-- printed - shown in traced units (pages, counts), rounded\n"
"	verdict		TEXT NOT NULL,		-- 'anchor' (the cgroup's first read: shown = printed),\n"
"					-- 'exact' (diff 0), 'within2' (|diff| 1 or 2), 'off'\n"
"	cause		TEXT,			-- of an off line: 'decision' (the simulation decided the flush\n"
"					-- of this read or of the anchor unlike the kernel), 'window'\n"
"					-- (|diff| within the updates inside the flushes' lock windows);\n"
"					-- NULL: none named, or not off\n"
"	placed		INTEGER,		-- 1: the visit of the read's deciding flush inside its lock\n"
"					-- window was placed by the printed values of the reads that\n"
"					-- printed what that flush left, or, the anchor's flush, of\n"
"					-- the reads after it (one cut per window, fitted once for\n"
"					-- all of them); 0 not; NULL: a build before it\n"
"	PRIMARY KEY (run_id, read, name)\n"
") WITHOUT ROWID" },
	{ "INDEX", "reads_by_cgroup", "ON reads (run_id, cgroup_id, ts)" },
	{ "INDEX", "episodes_by_cgroup", "ON stranded_episodes (run_id, cgroup_id, start_ts)" },
	{ "VIEW", "lag_report_all", "AS SELECT\n"
"	-- Every replay run: one row per (run, cgroup, item) of item_summary.\n"
"	r.policy,			-- walk policy\n"
"	r.run_id,			-- runs.run_id\n"
"	r.flush_model,			-- flush model of the run\n"
"	COALESCE(c.path, '#' || s.cgroup_id) AS cgroup,	-- path, or '#<id>' when unknown\n"
"	s.cgroup_id,			-- cgroups.id\n"
"	c.level,			-- depth, root 0; NULL unknown\n"
"	COALESCE(i.name, i2.name, CASE s.kind WHEN 1 THEN 'state' WHEN 2 THEN 'lruvec' ELSE 'events' END\n"
"		 || ':' || s.item) AS item,	-- BTF enumerator name, or 'kind:item' when unknown\n"
"	CASE s.kind WHEN 3 THEN 'events' ELSE 'pages' END AS unit,	-- unit of every *_error: 'pages', the\n"
"					-- *_B and NR_KERNEL_STACK_KB lines too (traced in pages, rounded),\n"
"					-- or 'events'\n"
"	g.reads,			-- the cgroup's non-forced reads\n"
"	g.stale_reads,			-- of them, skipped while stranded\n"
"	s.max_read_error,		-- see item_summary\n"
"	s.p99_read_error,\n"
"	s.mean_read_error,\n"
"	s.max_visible_error,\n"
"	s.mean_visible_error,\n"
"	s.max_error_age_ms,\n"
"	g.stranded_ms,			-- see cgroup_summary\n"
"	g.stranded_episodes,\n"
"	g.max_pending,			-- stats_updates units, not memory\n"
"	s.max_settled_error,		-- see item_summary\n"
"	s.max_flush_error,\n"
"	g.noticeable_episodes		-- see cgroup_summary\n"
"	-- (a run's batch_size and nr_cpus: JOIN runs USING (run_id))\n"
"FROM item_summary s\n"
"JOIN runs r ON r.run_id = s.run_id\n"
"JOIN cgroup_summary g ON g.run_id = s.run_id AND g.cgroup_id = s.cgroup_id\n"
"LEFT JOIN cgroups c ON c.id = s.cgroup_id\n"
"LEFT JOIN items i ON i.kind = s.kind AND i.item = s.item\n"
"LEFT JOIN items i2 ON s.kind = 1 AND i2.kind = 2 AND i2.item = s.item\n"
"WHERE r.kind = 'replay'" },
	{ "VIEW", "lag_report", "AS SELECT\n"
"	-- lag_report_all for the latest replay run of each (policy, flush_model,\n"
"	-- batch_size, nr_cpus), in tree order, then item, then policy and run.\n"
"	l.*\n"
"FROM lag_report_all l\n"
"WHERE " DB_LATEST_RUN("l.run_id") "\n"
"ORDER BY l.level IS NULL, l.level, l.cgroup, l.item, l.policy, l.run_id" },
	{ "VIEW", "cgroup_lag_report", "AS SELECT\n"
"	-- One row per (run, cgroup) of lag_report: its worst item, the columns of lag_report.\n"
"	-- Worst: a page item before an event item (unlike units do not compare), then the\n"
"	-- largest max_read_error, then the largest max_visible_error.\n"
"	policy, run_id, flush_model, cgroup, cgroup_id, level, item, unit, reads, stale_reads,\n"
"	max_read_error, p99_read_error, mean_read_error, max_visible_error, mean_visible_error,\n"
"	max_error_age_ms, stranded_ms, stranded_episodes, max_pending, max_settled_error,\n"
"	max_flush_error, noticeable_episodes\n"
"FROM (SELECT l.*, row_number() OVER (PARTITION BY l.run_id, l.cgroup_id\n"
"	ORDER BY l.unit = 'events', l.max_read_error DESC, l.max_visible_error DESC, l.item) AS rank\n"
"      FROM lag_report l)\n"
"WHERE rank = 1\n"
"ORDER BY level IS NULL, level, cgroup, policy, run_id" },
	{ "TABLE", "calibration", "(\n"
"	-- What each operation of the update path costs on the host that ran\n"
"	-- memcg-replay calibrate --db: user-space proxies, not the kernel's own costs.\n"
"	op		TEXT PRIMARY KEY,	-- plain_add (baseline), pcpu_add, atomic_add, atomic_add_contended,\n"
"						-- flushable_check, walk_step, walk_step_cold\n"
"	ns		REAL NOT NULL,		-- median ns per operation over the samples\n"
"	lo_ns		REAL,			-- 10th percentile of the samples, ns\n"
"	hi_ns		REAL,			-- 90th percentile, ns\n"
"	samples		INTEGER,		-- timed samples (loops of many operations)\n"
"	cpus		INTEGER,		-- threads adding at once in atomic_add_contended: online CPUs\n"
"	host		TEXT,			-- node name of the host measured\n"
"	measured_at	TEXT,			-- UTC ISO-8601\n"
"	tool_version	TEXT			-- memcg-replay version that measured\n"
")" },
	{ "TABLE", "cost_basis", "(\n"
"	-- What the estimate needs of the trace (calibrate --db reads the events once).\n"
"	id		INTEGER PRIMARY KEY CHECK (id = 1),	-- one row\n"
"	trace_ns	INTEGER NOT NULL,	-- first to last event, ns: CPU seconds per second of trace\n"
"	updates		INTEGER NOT NULL,	-- updates whose walk value is not 0\n"
"	window_ns	INTEGER NOT NULL,	-- how recent another CPU's update must be to share a line\n"
"	node_visits	INTEGER NOT NULL,	-- (update, memcg on its path to the root) pairs\n"
"	shared_visits	INTEGER NOT NULL,	-- of them, reached by another CPU's update < window_ns before\n"
"	shared_fraction	REAL NOT NULL		-- shared_visits / node_visits: atomic adds priced as contended\n"
")" },
	{ "VIEW", "cost_report", "AS SELECT\n"
"	-- One row per replay run: what its walk did, its estimated cost in time and its\n"
"	-- staleness.  est_* are NULL without a calibration (memcg-replay calibrate --db\n"
"	-- FILE).  The estimate is user-space proxies times counts: it leaves out the real\n"
"	-- kernel's cache effects, lock contention, interrupts and the flush side.\n"
"	x.run_id,			-- runs.run_id\n"
"	x.policy,			-- walk policy\n"
"	x.flush_model,			-- flush model of the run\n"
"	x.updates,			-- updates fed to the simulator\n"
"	x.walk_steps,			-- memcgs the walks reached\n"
"	x.pcpu_adds,			-- per-CPU stats_updates additions\n"
"	x.atomic_adds,			-- batches added into an atomic stats_updates\n"
"	x.dropped_batches,		-- legacy: batches dropped at a flushable memcg\n"
"	x.flushable_checks,		-- memcg_vmstats_needs_flush() calls: walk_steps (break, continue),\n"
"					-- atomic_adds + dropped_batches (legacy)\n"
"	x.atomic_shared_fraction,	-- cost_basis.shared_fraction: atomic adds priced as contended\n"
"	x.ns / NULLIF(x.updates, 0) AS est_ns_per_update,	-- (walk_steps x walk_step + pcpu_adds x\n"
"					-- pcpu_add + flushable_checks x flushable_check + atomic_adds x\n"
"					-- (f x atomic_add_contended + (1 - f) x atomic_add)) / updates\n"
"	x.ns_max / NULLIF(x.updates, 0) AS est_ns_per_update_max,	-- the same with walk_step_cold\n"
"					-- and every atomic add contended: an upper bound\n"
"	x.ns / NULLIF(x.trace_ns, 0) AS est_cpu_s_per_s,	-- update-path CPU seconds per second of trace\n"
"	g.reads,			-- non-forced reads over every cgroup\n"
"	g.stale_reads,			-- of them, skipped while stranded\n"
"	g.stranded_cgroups,		-- cgroups stranded at least once\n"
"	l.max_read_error_pages,		-- worst read error of a page line, pages; NULL none wrong\n"
"	l.max_read_error_events		-- worst read error of an event line, events\n"
"FROM (SELECT r.run_id, r.policy, r.flush_model, r.updates, r.walk_steps, r.pcpu_adds,\n"
"	r.atomic_adds, r.dropped_batches, k.checks AS flushable_checks,\n"
"	b.shared_fraction AS atomic_shared_fraction, b.trace_ns,\n"
"	r.walk_steps * c.walk_step + r.pcpu_adds * c.pcpu_add + k.checks * c.flushable_check\n"
"	+ r.atomic_adds * (b.shared_fraction * c.atomic_add_contended\n"
"			   + (1 - b.shared_fraction) * c.atomic_add) AS ns,\n"
"	r.walk_steps * c.walk_step_cold + r.pcpu_adds * c.pcpu_add + k.checks * c.flushable_check\n"
"	+ r.atomic_adds * c.atomic_add_contended AS ns_max\n"
"      FROM runs r\n"
"      JOIN (SELECT run_id, CASE policy WHEN 'legacy' THEN atomic_adds + dropped_batches\n"
"		ELSE walk_steps END AS checks FROM runs) k ON k.run_id = r.run_id\n"
"      LEFT JOIN cost_basis b ON b.id = 1\n"
"      CROSS JOIN (SELECT\n"
"		max(CASE op WHEN 'pcpu_add' THEN ns END) AS pcpu_add,\n"
"		max(CASE op WHEN 'atomic_add' THEN ns END) AS atomic_add,\n"
"		max(CASE op WHEN 'atomic_add_contended' THEN ns END) AS atomic_add_contended,\n"
"		max(CASE op WHEN 'flushable_check' THEN ns END) AS flushable_check,\n"
"		max(CASE op WHEN 'walk_step' THEN ns END) AS walk_step,\n"
"		max(CASE op WHEN 'walk_step_cold' THEN ns END) AS walk_step_cold\n"
"	  FROM calibration) c\n"
"      WHERE r.kind = 'replay') x\n"
"LEFT JOIN (SELECT run_id, sum(reads) AS reads, sum(stale_reads) AS stale_reads,\n"
"		sum(stranded_episodes > 0) AS stranded_cgroups\n"
"	   FROM cgroup_summary GROUP BY run_id) g ON g.run_id = x.run_id\n"
"LEFT JOIN (SELECT run_id,\n"
"		max(CASE WHEN unit = 'pages' THEN max_read_error END) AS max_read_error_pages,\n"
"		max(CASE WHEN unit = 'events' THEN max_read_error END) AS max_read_error_events\n"
"	   FROM lag_report_all GROUP BY run_id) l ON l.run_id = x.run_id\n"
"ORDER BY x.run_id" },
};

#define DB_RESULTS_N	(sizeof(db_results_sql) / sizeof(db_results_sql[0]))

/* Is @name a table of the main schema (not a view, not missing)? */
static bool db_schema_is_table(struct db *db, const char *name)
{
	sqlite3_stmt *st;
	bool found;

	if (db_prepare(db, "SELECT 1 FROM main.sqlite_master WHERE name = ? AND type = 'table'",
		       &st))
		return false;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

/*
 * Before the view series is made: a file whose series is still the table of
 * a build before series_lines has its rows moved into series_lines (made
 * first, as the list has it), a piece of one row each (step 0), then the
 * table is dropped.  The view shows the same rows.
 */
static int db_schema_series_move(struct db *db)
{
	if (!db_schema_is_table(db, "series"))
		return 0;
	return db_exec(db, "INSERT INTO series_lines (run_id, cgroup_id, kind, item, ts, step,"
		       " rows) SELECT run_id, cgroup_id, kind, item, ts, 0,"
		       " json_array(json_array(error, min_error, max_error)) FROM series;"
		       " DROP TABLE series");
}

/*
 * Drop every result object of the current list, views first.  The objects of
 * version 1 (runs, series, reads, cgroup_summary, item_summary, validation,
 * validation_mismatch, lag_report, lag_report_all) all bear names of it.
 */
static int db_results_drop(struct db *db)
{
	size_t i;
	char *sql;
	int err = 0;

	for (i = DB_RESULTS_N; !err && i-- > 0;) {
		const char *what = db_results_sql[i].what;

		if (!strcmp(what, "INDEX"))
			continue;	/* goes with its table */
		/* series was a table before it was a view */
		if (db_schema_is_table(db, db_results_sql[i].name))
			what = "TABLE";
		sql = sqlite3_mprintf("DROP %s IF EXISTS %s", what, db_results_sql[i].name);
		if (!sql)
			return -ENOMEM;
		err = db_exec(db, sql);
		sqlite3_free(sql);
	}
	return err;
}

/* True if every result table, index and view exists in the main schema. */
bool db_schema_has_results(struct db *db)
{
	size_t i;

	for (i = 0; i < DB_RESULTS_N; i++)
		if (!db_schema_has(db, db_results_sql[i].name))
			return false;
	return true;
}

/**
 * db_schema_results() - create the result tables, indexes and views that are missing.
 * @db:   open database
 * @temp: create them as TEMP objects instead (a read-only open of a trace that
 *        was never replayed), so that queries on them find empty tables; what
 *        the file has is never shadowed
 */
int db_schema_results(struct db *db, bool temp)
{
	size_t i;
	char *sql;
	int err;

	if (!temp) {
		err = db_schema_results_columns(db);
		if (err)
			return err;
	}
	for (i = 0; i < DB_RESULTS_N; i++) {
		const char *what = db_results_sql[i].what;

		if (temp && (!strcmp(what, "INDEX") || db_schema_has(db, db_results_sql[i].name)))
			continue;
		if (!temp && !strcmp(db_results_sql[i].name, "series")) {
			err = db_schema_series_move(db);
			if (err)
				return err;
		}
		sql = sqlite3_mprintf("CREATE %s%s IF NOT EXISTS %s %s", temp ? "TEMP " : "",
				      what, db_results_sql[i].name, db_results_sql[i].body);
		if (!sql)
			return -ENOMEM;
		err = db_exec(db, sql);
		sqlite3_free(sql);
		if (err)
			return err;
	}
	return 0;
}

/* Has @table (main or temp) the column @col? */
static bool db_schema_has_column(struct db *db, const char *table, const char *col)
{
	sqlite3_stmt *st;
	bool has = false;

	if (db_prepare(db, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2", &st))
		return false;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, col, -1, SQLITE_STATIC);
	has = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return has;
}

/* Does runs have the grid's columns (schema 3)?  A schema 2 file read as it is has not. */
bool db_schema_runs_grid(struct db *db)
{
	return db_schema_has_column(db, "runs", "nr_cpus");
}

/*
 * Has lag_report_all the visible error's split (max_settled_error,
 * max_flush_error) and noticeable_episodes?  A file whose results a build
 * before them wrote, read as it is, has not: its readers get NULL for them
 * (db_lag_sql()).
 */
bool db_schema_settled(struct db *db)
{
	return db_schema_has_column(db, "lag_report_all", "max_settled_error");
}

/**
 * db_schema_results_columns() - add the columns later than the schema version
 * @db: open read-write
 *
 * Additive, within one schema version: a build that knows them adds them to
 * the result tables of a file that lacks them (rows already there get NULL)
 * and drops the views, which db_schema_results() makes again over them.
 * Builds that do not know them read such a file as before.  No-op when the
 * tables do not exist yet or have them.
 */
int db_schema_results_columns(struct db *db)
{
	static const char *const sql[] = {
		"SAVEPOINT results_columns",
		"ALTER TABLE item_summary ADD COLUMN max_settled_error INTEGER",
		"ALTER TABLE item_summary ADD COLUMN max_flush_error INTEGER",
		"ALTER TABLE cgroup_summary ADD COLUMN noticeable_episodes INTEGER",
		"DROP VIEW IF EXISTS cgroup_lag_report",
		"DROP VIEW IF EXISTS lag_report",
		"DROP VIEW IF EXISTS lag_report_all",
		"RELEASE results_columns",
	};
	size_t i;
	int err = 0;

	/* stat_read_checks.placed: no view reads the table */
	if (db_schema_has(db, "stat_read_checks") &&
	    !db_schema_has_column(db, "stat_read_checks", "placed"))
		err = db_exec(db, "ALTER TABLE stat_read_checks ADD COLUMN placed INTEGER");
	if (err)
		return err;
	if (!db_schema_has(db, "item_summary") || !db_schema_has(db, "cgroup_summary") ||
	    db_schema_has_column(db, "item_summary", "max_settled_error"))
		return 0;
	for (i = 0; !err && i < sizeof(sql) / sizeof(sql[0]); i++)
		err = db_exec(db, sql[i]);
	if (err) {
		db_exec(db, "ROLLBACK TO results_columns");
		db_exec(db, "RELEASE results_columns");
	}
	return err;
}

/*
 * Schema 2 to 3: runs gets batch_size and nr_cpus, the views group by them.
 * Every schema 2 run simulated the batch of 64 on the trace's online CPUs,
 * and stored th = batch x cpus and stranded_limit = th + (batch - 1) x cpus:
 * cpus = 2 th - stranded_limit, batch = th / cpus, exactly.  The views are
 * dropped and made again; no row changes but the two new columns.
 */
static int db_schema_upgrade_v2_body(struct db *db)
{
	static const char *const sql[] = {
		"ALTER TABLE runs ADD COLUMN batch_size INTEGER",
		"ALTER TABLE runs ADD COLUMN nr_cpus INTEGER",
		"UPDATE runs SET nr_cpus = 2 * th - stranded_limit WHERE 2 * th > stranded_limit",
		"UPDATE runs SET batch_size = th / nr_cpus WHERE nr_cpus > 0",
		"DROP VIEW IF EXISTS cgroup_lag_report",
		"DROP VIEW IF EXISTS lag_report",
		"DROP VIEW IF EXISTS lag_report_all",
	};
	size_t i;
	int err = 0;

	if (!db_schema_has(db, "runs"))
		return 0;	/* no results yet: db_schema_results() makes them */
	for (i = 0; !err && i < sizeof(sql) / sizeof(sql[0]); i++)
		if (i > 1 || !db_schema_runs_grid(db))
			err = db_exec(db, sql[i]);
	return err;
}

/**
 * db_schema_upgrade() - make a schema 1 to 4 file current for a writer.
 * @db: open read-write; user_version below DB_SCHEMA_VERSION
 * @ver: its user_version
 *
 * Schema 2 to 4 results stay (db_schema_upgrade_v2_body() is a no-op on 3
 * and 4 but for the views, made again; the series rows move into
 * series_lines, db_schema_series_move()); schema 1 results are dropped
 * (db_schema_upgrade_v1()).  One transaction.
 */
int db_schema_upgrade(struct db *db, int64_t ver)
{
	char *set;
	int err;

	if (ver < 2)
		return db_schema_upgrade_v1(db);
	set = sqlite3_mprintf("PRAGMA user_version = %d", DB_SCHEMA_VERSION);
	if (!set)
		return -ENOMEM;
	err = db_exec(db, "BEGIN IMMEDIATE");
	if (!err)
		err = db_schema_upgrade_v2_body(db);
	if (!err)
		err = db_schema_results(db, false);
	if (!err)
		err = db_exec(db, set);
	sqlite3_free(set);
	if (!err)
		return db_exec(db, "COMMIT");
	db_exec(db, "ROLLBACK");
	return err;
}

/**
 * db_schema_upgrade_v1() - make a schema 1 file current for a writer.
 * @db: open read-write; user_version 1
 *
 * Version 1 stored unflushed update volume where version 2 stores per-item
 * errors: its results cannot be converted, only replayed.  The trace tables are
 * the same, so its results are dropped (version 1 had the same table names
 * with other columns) and the file gets the current results schema, all in
 * one transaction.
 */
int db_schema_upgrade_v1(struct db *db)
{
	char *ver;
	int err;

	ver = sqlite3_mprintf("PRAGMA user_version = %d", DB_SCHEMA_VERSION);
	if (!ver)
		return -ENOMEM;
	err = db_exec(db, "BEGIN IMMEDIATE");
	if (!err)
		err = db_results_drop(db);
	if (!err)
		err = db_schema_results(db, false);
	if (!err)
		err = db_exec(db, ver);
	sqlite3_free(ver);
	if (!err)
		return db_exec(db, "COMMIT");
	db_exec(db, "ROLLBACK");
	return err;
}
