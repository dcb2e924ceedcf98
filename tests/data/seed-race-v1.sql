-- seed-race as written by memcg-replay 0.1.0 (synth --scenario seed-race): the previous
-- format, one row per event.  sqlite3 FILE < this; see tests/cli/test_events.sh.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE meta (
	-- What the trace is, one row per key.  Keys written by memcg-replay:
	--   source              'memcg-capture' | 'trace-cmd import' | 'synth:<scenario>'
	--   tool_version        memcg-replay version that wrote the trace
	--   kernel_release      uname -r of the traced kernel ('synthetic' for synth)
	--   nr_cpus_online      CPUs online while tracing; TH = batch_size * nr_cpus_online
	--   nr_cpus_possible    possible CPUs; every CPU an event names is below it (required)
	--   page_size           bytes per page
	--   batch_size          MEMCG_CHARGE_BATCH of the traced kernel (64)
	--   trace_clock         clock of every ts ('mono', 'boot', 'local', ... or 'synthetic')
	--   capture_start_ns    ts at which tracing started
	--   capture_end_ns      ts at which tracing stopped
	--   options             the capture / import / synth options, JSON
	--   memory_hierarchy_id cgroup hierarchy id of the memory controller (events.aux of its rstat events)
	--   cgroup_version      1 or 2
	--   warnings            what the reader should know about this trace, one per line
	--   event_count         rows in events, written when loading finished
	key	TEXT PRIMARY KEY NOT NULL,	-- one of the keys above (others may be added)
	value	TEXT				-- always text; integers in decimal
);
INSERT INTO meta VALUES('event_count','35');
INSERT INTO meta VALUES('source','synth:seed-race');
INSERT INTO meta VALUES('kernel_release','6.18.0-synth');
INSERT INTO meta VALUES('nr_cpus_online','4');
INSERT INTO meta VALUES('nr_cpus_possible','4');
INSERT INTO meta VALUES('page_size','4096');
INSERT INTO meta VALUES('batch_size','64');
INSERT INTO meta VALUES('trace_clock','mono');
INSERT INTO meta VALUES('capture_start_ns','1000000');
INSERT INTO meta VALUES('capture_end_ns','7040999');
INSERT INTO meta VALUES('memory_hierarchy_id','4');
INSERT INTO meta VALUES('cgroup_version','1');
INSERT INTO meta VALUES('options','{"scenario":"seed-race","seed":1}');
INSERT INTO meta VALUES('tool_version','0.1.0');
CREATE TABLE cgroups (
	-- Every cgroup of the traced hierarchy that the trace names or that existed.
	id		INTEGER PRIMARY KEY,	-- cgroup id = inode of the cgroup directory (events.id)
	parent		INTEGER NOT NULL,	-- parent's id; 0 for the root or unknown
	path		TEXT,			-- '/a/b' below the hierarchy root, '/' for the root; NULL unknown
	level		INTEGER NOT NULL,	-- depth: root 0; -1 unknown
	created_ts	INTEGER NOT NULL,	-- ts of its cgroup_mkdir; -1 if it existed before the trace
	removed_ts	INTEGER NOT NULL,	-- ts of its cgroup_rmdir; -1 if not removed during the trace
	parent_unknown	INTEGER NOT NULL	-- 1: attached under the root for lack of a known parent
);
INSERT INTO cgroups VALUES(1,0,'/',0,-1,-1,0);
INSERT INTO cgroups VALUES(100,1,'/leaf',1,-1,-1,0);
CREATE TABLE items (
	-- Names of the stat items that updates carry, from the kernel's BTF.
	kind	INTEGER NOT NULL,	-- event kind the enum belongs to: 1 state, 2 lruvec, 3 events
	item	INTEGER NOT NULL,	-- enum value as traced (events.item)
	name	TEXT NOT NULL,		-- enumerator name, e.g. 'NR_FILE_PAGES', 'PGFAULT'
	unit	TEXT,			-- unit of events.val after import: 'pages', 'bytes', 'events'; NULL unknown
	PRIMARY KEY (kind, item)
) WITHOUT ROWID;
INSERT INTO items VALUES(2,19,'NR_FILE_PAGES','pages');
CREATE TABLE cpu_stats (
	-- Ring-buffer statistics per CPU (tracefs per_cpu/cpuN/stats) at start and end.
	cpu		INTEGER NOT NULL,	-- ring-buffer CPU
	phase		TEXT NOT NULL,		-- 'start' or 'end' of the recording
	entries		INTEGER NOT NULL,	-- 'entries': events in the buffer; -1 unknown
	overrun		INTEGER NOT NULL,	-- 'overrun': events overwritten before read; -1 unknown
	commit_overrun	INTEGER NOT NULL,	-- 'commit overrun': events lost inside a commit; -1 unknown
	bytes		INTEGER NOT NULL,	-- 'bytes': bytes in the buffer; -1 unknown
	dropped		INTEGER NOT NULL,	-- 'dropped events': events not recorded, buffer full; -1 unknown
	read		INTEGER NOT NULL,	-- 'read events': events consumed by the reader; -1 unknown
	PRIMARY KEY (cpu, phase)
);
INSERT INTO cpu_stats VALUES(0,'start',0,0,0,0,0,0);
INSERT INTO cpu_stats VALUES(0,'end',0,0,0,0,0,0);
INSERT INTO cpu_stats VALUES(1,'start',0,0,0,0,0,0);
INSERT INTO cpu_stats VALUES(1,'end',0,0,0,0,0,0);
INSERT INTO cpu_stats VALUES(2,'start',0,0,0,0,0,0);
INSERT INTO cpu_stats VALUES(2,'end',0,0,0,0,0,0);
INSERT INTO cpu_stats VALUES(3,'start',0,0,0,0,0,0);
INSERT INTO cpu_stats VALUES(3,'end',0,0,0,0,0,0);
CREATE TABLE gaps (
	-- Places where the ring buffer lost events: replay cannot know what happened there.
	cpu	INTEGER NOT NULL,	-- CPU whose buffer lost events
	ts	INTEGER NOT NULL,	-- the loss happened just before this ts
	count	INTEGER NOT NULL	-- events lost; -1 unknown
);
CREATE TABLE events (
	-- One row per traced event.  rowid order is the replay order: merged across CPUs
	-- by (ts, cpu), ring-buffer order within one CPU.  A plain rowid table, kept compact.
	ts	INTEGER NOT NULL,	-- ns in meta trace_clock; never decreases within one cpu
	cpu	INTEGER NOT NULL,	-- ring-buffer CPU the event was recorded on (< nr_cpus_possible)
	seq	INTEGER NOT NULL,	-- per-CPU sequence number from 0, in ring-buffer order
	kind	INTEGER NOT NULL,	-- event kind: event_kinds.kind
	id	INTEGER NOT NULL,	-- cgroup id (cgroups.id): memcg updated, flushed, visited, created or removed
	item	INTEGER NOT NULL,	-- updates: stat item (items.item); rstat lock events and visits:
					-- CPU whose per-CPU tree is flushed, -1 none; otherwise 0
	val	INTEGER NOT NULL,	-- state/lruvec: traced val (pages, signed); count_memcg_events: the
					-- unsigned long count bit for bit; memcg_flush_stats: stats_updates; otherwise 0
	aux	INTEGER NOT NULL,	-- rstat lock events and mkdir/rmdir: hierarchy id (root); otherwise 0
	level	INTEGER NOT NULL,	-- rstat lock events and mkdir/rmdir: level of the cgroup; otherwise 0
	flags	INTEGER NOT NULL,	-- memcg_flush_stats: 1 force | 2 needs_flush; rstat: 1 contended
	pid	INTEGER NOT NULL	-- pid of the task that emitted the event; 0 unknown or synthetic
);
INSERT INTO events VALUES(1000000,2,0,2,100,19,1,0,0,0,4002);
INSERT INTO events VALUES(2000000,0,0,4,1,0,0,0,0,1,130);
INSERT INTO events VALUES(2001000,0,1,5,1,0,0,4,0,0,130);
INSERT INTO events VALUES(2010999,0,2,6,1,0,0,4,0,0,130);
INSERT INTO events VALUES(2011000,0,3,5,1,1,0,4,0,0,130);
INSERT INTO events VALUES(2020999,0,4,6,1,1,0,4,0,0,130);
INSERT INTO events VALUES(2021000,0,5,5,1,2,0,4,0,0,130);
INSERT INTO events VALUES(2024333,0,6,10,100,2,0,0,0,0,130);
INSERT INTO events VALUES(2025000,1,0,2,100,19,64,0,0,0,4001);
INSERT INTO events VALUES(2027666,0,7,10,1,2,0,0,0,0,130);
INSERT INTO events VALUES(2030999,0,8,6,1,2,0,4,0,0,130);
INSERT INTO events VALUES(2031000,0,9,5,1,3,0,4,0,0,130);
INSERT INTO events VALUES(2040999,0,10,6,1,3,0,4,0,0,130);
INSERT INTO events VALUES(3000000,1,1,2,100,19,64,0,0,0,4001);
INSERT INTO events VALUES(3100000,1,2,2,100,19,64,0,0,0,4001);
INSERT INTO events VALUES(3200000,1,3,2,100,19,64,0,0,0,4001);
INSERT INTO events VALUES(3300000,1,4,2,100,19,64,0,0,0,4001);
INSERT INTO events VALUES(3400000,1,5,2,100,19,64,0,0,0,4001);
INSERT INTO events VALUES(4000000,3,0,4,1,0,256,0,0,0,4100);
INSERT INTO events VALUES(4500000,2,1,2,100,19,64,0,0,0,4002);
INSERT INTO events VALUES(4600000,2,2,2,100,19,64,0,0,0,4002);
INSERT INTO events VALUES(5000000,3,1,4,1,0,256,0,0,0,4100);
INSERT INTO events VALUES(7000000,0,11,4,1,0,256,0,0,1,130);
INSERT INTO events VALUES(7001000,0,12,5,1,0,0,4,0,0,130);
INSERT INTO events VALUES(7010999,0,13,6,1,0,0,4,0,0,130);
INSERT INTO events VALUES(7011000,0,14,5,1,1,0,4,0,0,130);
INSERT INTO events VALUES(7014333,0,15,10,100,1,0,0,0,0,130);
INSERT INTO events VALUES(7017666,0,16,10,1,1,0,0,0,0,130);
INSERT INTO events VALUES(7020999,0,17,6,1,1,0,4,0,0,130);
INSERT INTO events VALUES(7021000,0,18,5,1,2,0,4,0,0,130);
INSERT INTO events VALUES(7024333,0,19,10,100,2,0,0,0,0,130);
INSERT INTO events VALUES(7027666,0,20,10,1,2,0,0,0,0,130);
INSERT INTO events VALUES(7030999,0,21,6,1,2,0,4,0,0,130);
INSERT INTO events VALUES(7031000,0,22,5,1,3,0,4,0,0,130);
INSERT INTO events VALUES(7040999,0,23,6,1,3,0,4,0,0,130);
CREATE TABLE event_kinds (
	-- Names of events.kind, for joins.
	kind	INTEGER PRIMARY KEY,	-- events.kind
	name	TEXT NOT NULL,		-- tracepoint name; 'flush_visit' for explicit visits of synthetic traces
	events	INTEGER			-- rows of this kind in events, counted when loading finished; NULL before
);
INSERT INTO event_kinds VALUES(1,'mod_memcg_state',0);
INSERT INTO event_kinds VALUES(2,'mod_memcg_lruvec_state',9);
INSERT INTO event_kinds VALUES(3,'count_memcg_events',0);
INSERT INTO event_kinds VALUES(4,'memcg_flush_stats',4);
INSERT INTO event_kinds VALUES(5,'cgroup_rstat_locked',8);
INSERT INTO event_kinds VALUES(6,'cgroup_rstat_unlock',8);
INSERT INTO event_kinds VALUES(7,'cgroup_rstat_lock_contended',0);
INSERT INTO event_kinds VALUES(8,'cgroup_mkdir',0);
INSERT INTO event_kinds VALUES(9,'cgroup_rmdir',0);
INSERT INTO event_kinds VALUES(10,'flush_visit',6);
CREATE TABLE runs (
	-- One row per policy per replay (or validate) invocation.
	run_id		INTEGER PRIMARY KEY,	-- referenced by every other result table
	kind		TEXT NOT NULL,		-- 'replay' | 'validate'
	policy		TEXT NOT NULL,		-- walk policy: 'break' | 'continue' | 'legacy'
	flush_model	TEXT,			-- 'instant' | 'window' | 'spread' (explicit visits override it)
	params		TEXT,			-- the run's options, JSON
	started_at	TEXT,			-- UTC ISO-8601 time the run started
	wall_s		REAL,			-- wall-clock seconds of the pass that ran it
	events		INTEGER,		-- trace events consumed
	updates		INTEGER,		-- updates with val != 0 fed to the simulator
	flush_requests	INTEGER,		-- flush requests (memcg_flush_stats)
	flushes		INTEGER,		-- requests that went ahead under this policy
	visits		INTEGER,		-- (memcg, cpu) flush visits
	walk_steps	INTEGER,		-- nodes the update's ancestor walks looked at
	pcpu_adds	INTEGER,		-- per-CPU stats_updates additions
	atomic_adds	INTEGER,		-- batches moved into an atomic stats_updates
	dropped_batches	INTEGER,		-- legacy: batches thrown away at a flushable memcg
	atomic_resets	INTEGER,		-- visits that stored 0 into a non-zero atomic
	unknown_ids	INTEGER,		-- cgroup ids first seen in an update, attached under the root
	sample_ns	INTEGER,		-- period of the 'sample' rows of series, ns; 0 none
	tool_version	TEXT			-- memcg-replay version that wrote the run
);
CREATE TABLE series (
	-- Staleness of a cgroup over time: at every read of it and every sample period.
	run_id			INTEGER NOT NULL,	-- runs.run_id
	cgroup_id		INTEGER NOT NULL,	-- cgroups.id
	ts			INTEGER NOT NULL,	-- trace ns
	missing_pages		INTEGER,	-- pages updated below it and not yet aggregated into it (sum of |v|)
	signed_missing_pages	INTEGER,	-- sum over items of signed missing pages
	age_ns			INTEGER,	-- ts - the oldest update counted in missing_pages; 0 none
	stats_updates		INTEGER,	-- the simulated atomic stats_updates of the cgroup
	flushable		INTEGER,	-- 1: stats_updates > TH, a non-forced read flushes
	stuck			INTEGER,	-- 1: not flushable, missing > 0 and a descendant flushable
	reason			TEXT		-- 'read' (a flush request for it) | 'sample' (periodic)
);
CREATE TABLE reads (
	-- Every read (memcg_flush_stats) and what the policy made of it.
	run_id			INTEGER NOT NULL,	-- runs.run_id
	ts			INTEGER NOT NULL,	-- trace ns of the request
	cpu			INTEGER NOT NULL,	-- CPU it was traced on
	cgroup_id		INTEGER NOT NULL,	-- memcg read
	force			INTEGER NOT NULL,	-- 1: forced flush
	flushed			INTEGER NOT NULL,	-- 1: the policy's own decision was to flush
	missing_pages		INTEGER,	-- pages the reader was missing before any flush
	age_ns			INTEGER,	-- age of the oldest of them, ns; 0 none
	sim_stats_updates	INTEGER,	-- simulated atomic stats_updates at the request
	kernel_stats_updates	INTEGER,	-- the kernel's, as traced
	kernel_needs_flush	INTEGER,	-- the kernel's needs_flush, as traced
	stale			INTEGER		-- 1: skipped flushing while missing_pages > TH
);
CREATE TABLE cgroup_summary (
	-- Per run and cgroup: how stale its stats were over the whole trace.
	run_id			INTEGER NOT NULL,	-- runs.run_id
	cgroup_id		INTEGER NOT NULL,	-- cgroups.id
	max_missing_pages	INTEGER,	-- worst missing pages seen
	p50_missing_pages	INTEGER,	-- median of missing pages over its series rows
	p99_missing_pages	INTEGER,	-- 99th percentile of the same
	mean_missing_pages	REAL,		-- time-weighted mean missing pages
	max_age_ms		REAL,		-- largest age of the oldest unflushed update, ms
	reads			INTEGER,	-- flush requests for it
	stale_reads		INTEGER,	-- reads skipped while missing_pages > TH
	stale_max_pages		INTEGER,	-- worst missing pages at a stale read
	stale_mean_pages	REAL,		-- mean missing pages over its stale reads
	stuck_ms		REAL,		-- time it was stuck (see series.stuck), ms
	final_missing_pages	INTEGER		-- missing pages at the end of the trace
);
CREATE TABLE item_summary (
	-- Per run, cgroup and stat item: signed missing values.
	run_id		INTEGER NOT NULL,	-- runs.run_id
	cgroup_id	INTEGER NOT NULL,	-- cgroups.id
	kind		INTEGER NOT NULL,	-- items.kind (1 state, 2 lruvec, 3 events)
	item		INTEGER NOT NULL,	-- items.item
	max_abs_missing	INTEGER,		-- largest |signed missing| seen
	final_missing	INTEGER			-- signed missing at the end of the trace
);
CREATE TABLE validation (
	-- Per validate run: the simulator against the kernel's recorded flush decisions.
	run_id				INTEGER NOT NULL,	-- runs.run_id
	policy				TEXT,		-- walk policy validated
	flush_model			TEXT,		-- flush model used
	flush_events			INTEGER,	-- memcg_flush_stats events in the trace
	compared			INTEGER,	-- of them, compared with the simulator
	skipped_before_sync		INTEGER,	-- not compared: before the simulator's counters were in sync
	stats_updates_match		INTEGER,	-- compared events whose stats_updates matched
	needs_flush_match		INTEGER,	-- compared events whose needs_flush matched
	stats_updates_match_plain	INTEGER,	-- the same without allowing for races (one hypothesis)
	needs_flush_match_plain		INTEGER,	-- the same without allowing for races
	max_hypotheses			INTEGER,	-- most race orderings considered for one event
	diff_hist			TEXT		-- histogram of sim - kernel stats_updates (bucketed), JSON
);
CREATE TABLE validation_mismatch (
	-- Flush events where the simulator disagreed with the kernel.
	run_id			INTEGER NOT NULL,	-- runs.run_id
	ts			INTEGER NOT NULL,	-- trace ns of the flush event
	cpu			INTEGER NOT NULL,	-- CPU it was traced on
	cgroup_id		INTEGER NOT NULL,	-- memcg flushed
	kernel_stats_updates	INTEGER,	-- as traced
	sim_stats_updates	INTEGER,	-- as simulated
	kernel_needs_flush	INTEGER,	-- as traced
	sim_needs_flush		INTEGER,	-- as simulated
	cause			TEXT,		-- best explanation found (e.g. a gap, a race)
	context			TEXT		-- details for a human
);
CREATE VIEW update_events AS SELECT
	-- mod_memcg_state, mod_memcg_lruvec_state and count_memcg_events.
	e.rowid AS event,		-- replay position (events.rowid)
	e.ts, e.cpu, e.seq,		-- as in events
	k.name AS kind,			-- tracepoint name
	e.id AS cgroup_id,		-- memcg updated
	c.path AS cgroup,		-- its path; NULL unknown
	e.item,				-- stat item (enum value)
	i.name AS item_name,		-- enumerator name; NULL unknown
	i.unit,				-- unit of val; NULL unknown
	e.val,				-- traced val (count_memcg_events: unsigned count bit for bit)
	e.pid				-- task that emitted it
FROM events e
LEFT JOIN event_kinds k ON k.kind = e.kind
LEFT JOIN cgroups c ON c.id = e.id
LEFT JOIN items i ON i.kind = e.kind AND i.item = e.item
WHERE e.kind IN (1, 2, 3)
;
CREATE VIEW flush_events AS SELECT
	-- memcg_flush_stats: a reader asked for fresh stats.
	e.rowid AS event,		-- replay position (events.rowid)
	e.ts, e.cpu, e.seq,		-- as in events
	e.id AS cgroup_id,		-- memcg whose stats were requested
	c.path AS cgroup,		-- its path; NULL unknown
	e.val AS stats_updates,		-- the kernel's atomic stats_updates of that memcg
	e.flags & 1 AS force,		-- 1: forced flush (flushes regardless of stats_updates)
	(e.flags >> 1) & 1 AS needs_flush,	-- 1: the kernel found stats_updates > TH
	e.pid				-- task that asked
FROM events e
LEFT JOIN cgroups c ON c.id = e.id
WHERE e.kind > 3 AND e.kind = 4
;
CREATE VIEW rstat_lock_events AS SELECT
	-- cgroup_rstat_locked / _unlock / _lock_contended: one per-CPU flush window.
	e.rowid AS event,		-- replay position (events.rowid)
	e.ts, e.cpu, e.seq,		-- as in events
	CASE e.kind WHEN 5 THEN 'locked' WHEN 6 THEN 'unlock' ELSE 'contended' END AS op,	-- which one
	e.id AS cgroup_id,		-- cgroup being flushed
	c.path AS cgroup,		-- its path; NULL unknown
	e.item AS target_cpu,		-- CPU whose per-CPU tree is flushed; -1 none
	e.aux AS root,			-- hierarchy id (meta memory_hierarchy_id for memcg flushes)
	e.level,			-- level of the flushed cgroup
	e.flags & 1 AS contended,	-- 1: the lock was contended
	e.pid				-- task that flushed
FROM events e
LEFT JOIN cgroups c ON c.id = e.id
WHERE e.kind > 3 AND e.kind IN (5, 6, 7)
ORDER BY e.rowid
;
CREATE VIEW cgroup_events AS SELECT
	-- cgroup_mkdir / cgroup_rmdir.
	e.rowid AS event,		-- replay position (events.rowid)
	e.ts, e.cpu, e.seq,		-- as in events
	CASE e.kind WHEN 8 THEN 'mkdir' ELSE 'rmdir' END AS op,	-- which one
	e.id AS cgroup_id,		-- cgroup created or removed
	c.path AS cgroup,		-- its path; NULL unknown
	e.aux AS root,			-- hierarchy id
	e.level,			-- its level
	e.pid				-- task that did it
FROM events e
LEFT JOIN cgroups c ON c.id = e.id
WHERE e.kind > 3 AND e.kind IN (8, 9)
ORDER BY e.rowid
;
CREATE VIEW visit_events AS SELECT
	-- Explicit flush visits (synthetic traces): the flush visited one memcg on one CPU's tree.
	e.rowid AS event,		-- replay position (events.rowid)
	e.ts, e.cpu, e.seq,		-- as in events
	e.id AS cgroup_id,		-- memcg visited
	c.path AS cgroup,		-- its path; NULL unknown
	e.item AS target_cpu,		-- CPU whose per-CPU tree it was on
	e.pid				-- task that flushed
FROM events e
LEFT JOIN cgroups c ON c.id = e.id
WHERE e.kind > 3 AND e.kind = 10
;
CREATE INDEX series_by_cgroup ON series (run_id, cgroup_id, ts);
CREATE INDEX reads_by_cgroup ON reads (run_id, cgroup_id, ts);
CREATE VIEW lag_report_all AS SELECT
	-- Every run's per-cgroup summary, policies side by side.
	r.policy,			-- walk policy
	r.run_id,			-- runs.run_id
	r.flush_model,			-- flush model of the run
	COALESCE(c.path, '#' || s.cgroup_id) AS cgroup,	-- path, or '#<id>' when unknown
	s.cgroup_id,			-- cgroups.id
	c.level,			-- depth, root 0; NULL unknown
	s.max_missing_pages,		-- see cgroup_summary
	s.p50_missing_pages,
	s.p99_missing_pages,
	s.mean_missing_pages,
	s.max_age_ms,
	s.reads,
	s.stale_reads,
	s.stale_max_pages,
	s.stuck_ms
FROM cgroup_summary s
JOIN runs r ON r.run_id = s.run_id
LEFT JOIN cgroups c ON c.id = s.cgroup_id
WHERE r.kind = 'replay'
;
CREATE VIEW lag_report AS SELECT
	-- lag_report_all for the latest replay run of each (policy, flush_model):
	-- one row per (run, cgroup), in tree order then policy.
	l.*
FROM lag_report_all l
WHERE l.run_id = (SELECT max(r2.run_id) FROM runs r2 JOIN runs r1 ON r1.run_id = l.run_id
		  WHERE r2.kind = 'replay' AND r2.policy = r1.policy
		  AND r2.flush_model IS r1.flush_model)
ORDER BY l.level, l.cgroup, l.policy, l.run_id
;
CREATE INDEX events_rare ON events (kind) WHERE kind > 3;
COMMIT;
PRAGMA application_id = 1835233904;
PRAGMA user_version = 1;
