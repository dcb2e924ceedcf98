-- seed-race (synth --scenario seed-race, then replay) as written by memcg-replay before
-- item_summary.max_settled_error, max_flush_error and cgroup_summary.noticeable_episodes.
-- sqlite3 FILE < this; see tests/cli/test_visible_split.sh.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE meta (
	-- What the trace is, one row per key.  Keys written by memcg-replay (the four marked
	-- required are, or a reader refuses the file; those marked default are read as it when
	-- missing, with a warning):
	--   source              'memcg-capture' | 'trace-cmd import' | 'synth:<scenario>'
	--   tool_version        memcg-replay version that wrote the trace
	--   kernel_release      uname -r of the traced kernel ('synthetic' for synth); default unknown
	--   nr_cpus_online      CPUs online while tracing; TH = batch_size * nr_cpus_online (required)
	--   nr_cpus_possible    possible CPUs; every CPU an event names is below it (required)
	--   page_size           bytes per page (required)
	--   batch_size          MEMCG_CHARGE_BATCH of the traced kernel (64) (required)
	--   trace_clock         clock of every ts ('mono', 'boot', 'local', ... or 'synthetic');
	--                       default unknown
	--   capture_start_ns    ts at which tracing started
	--   capture_end_ns      ts at which tracing stopped
	--   options             the capture / import / synth options, JSON
	--   memory_hierarchy_id cgroup hierarchy id of the memory controller (events.aux of its rstat events);
	--                       default unknown
	--   cgroup_version      1 or 2
	--   warnings            what the reader should know about this trace, one per line
	--   event_count         rows in events, written when loading finished
	--   store_version       encoding of event_chunks (db/store.h): 2; missing = 1
	key	TEXT PRIMARY KEY NOT NULL,	-- one of the keys above (others may be added)
	value	TEXT				-- always text; integers in decimal
);
INSERT INTO meta VALUES('store_version','2');
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
	unit	TEXT,			-- unit of events.val: 'events' (kind 3) or 'pages' (kinds 1, 2: the
					-- kernel traces every state item in pages; the *_B ones and
					-- NR_KERNEL_STACK_KB, kept in bytes or kB, rounded to whole pages,
					-- a nonzero update to at least one); NULL unknown.  Files written
					-- before say 'bytes' or 'kB' for those: pages too (a writer
					-- relabels them)
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
CREATE TABLE stat_reads (
	-- memcg-capture --read: every line of every memory.stat it read, as printed.  Each read is
	-- a real read: the trace holds its memcg_flush_stats of that cgroup between ts_before and
	-- ts_after.  Lines and units: sim/statlines.c.  Empty without --read.
	read		INTEGER NOT NULL,	-- read number from 0, in the order the reads began (all --read paths)
	cgroup		INTEGER NOT NULL,	-- cgroup id (cgroups.id) of the cgroup whose memory.stat was read
	ts_before	INTEGER NOT NULL,	-- trace clock (meta trace_clock) just before the read() call
	ts_after	INTEGER NOT NULL,	-- trace clock just after that read() returned (> ts_before)
	pos		INTEGER NOT NULL,	-- line number in the file, from 0
	line		TEXT NOT NULL,		-- the line as printed, without its newline
	name		TEXT NOT NULL,		-- its first field, e.g. 'total_rss' (v1), 'anon' (v2)
	value		INTEGER,		-- its number as printed; NULL if not a decimal below 2^63
	unit		TEXT,			-- of value: 'bytes' or 'count'; NULL for a line of no known unit
	PRIMARY KEY (read, pos)
) WITHOUT ROWID;
CREATE TABLE event_chunks (
	-- The events, compactly: one row per chunk of one CPU's consecutive events, encoded and
	-- zstd-compressed (format: db/store.h).  Replay order merges the CPUs by (ts, cpu) and keeps
	-- ring-buffer order within one CPU.  For the events as rows (table events and the views
	-- below), run once: memcg-replay events FILE --table   (or --format csv for a range).
	chunk		INTEGER PRIMARY KEY,	-- insertion order; the order of one CPU's chunks
	cpu		INTEGER NOT NULL,	-- ring-buffer CPU of every event in it (< nr_cpus_possible)
	first_ts	INTEGER NOT NULL,	-- ts of its first event
	last_ts		INTEGER NOT NULL,	-- ts of its last event
	first_seq	INTEGER NOT NULL,	-- per-CPU sequence number of its first event
	count		INTEGER NOT NULL,	-- events in it
	kinds		INTEGER NOT NULL,	-- bit k set: holds events of kind k (event_kinds.kind)
	raw_bytes	INTEGER NOT NULL,	-- encoded size before compression
	data		BLOB NOT NULL		-- the encoded events, zstd
);
INSERT INTO event_chunks VALUES(1,0,2000000,7040999,0,24,1136,355,X'28b52ffd606300ec000090c2040001010102000100010004000100820004100288188519305d1294010062440a13c0258d01ffbff1ffff37fef74fe51e4ae2760a175d9e3d7b16462010175d9e3d7b76b9e872d1617c0100726c0505c00000000102010201060602010200010201060602010606020102c00000000000000000630000000000000000630000006300000000c000000000000101020202020303000000010101010202020203036c000028000001000002003965f4392cc000000004040404040000040404000404040000040400000404043d000008010100bf5642');
INSERT INTO event_chunks VALUES(2,1,2025000,3400000,0,6,4,115,X'28b52ffd2073e4000070c204000200640013004000a10f00061002dc01c60cccc00c187008c100000000000098e00e00a0860100a0860100a0860100a0860100');
INSERT INTO event_chunks VALUES(3,2,1000000,4600000,0,3,4,106,X'28b52ffd206a0c010098c2040000000001000200640013000100a20f00061002dc01c60cccc00c98840b60000000000000e0673500a0860100190000003f3f');
INSERT INTO event_chunks VALUES(4,3,4000000,5000000,0,2,16,99,X'28b52ffd2063cc000060c20400040001000100041000051002dc8180e99801030e014100000000000040420f00');
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
	-- One row per run (policy x batch x CPUs) per replay (or validate) invocation.
	run_id		INTEGER PRIMARY KEY,	-- referenced by every other result table
	kind		TEXT NOT NULL,		-- 'replay' | 'validate'
	policy		TEXT NOT NULL,		-- walk policy: 'break' | 'continue' | 'legacy'
	flush_model	TEXT,			-- 'instant' | 'window' | 'spread' | 'inferred' (explicit visits override it)
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
	sample_ns	INTEGER,		-- period of series and cgroup_series, trace ns; 0 none
	th		INTEGER,		-- TH = batch x online CPUs: flushable means stats_updates > TH
	stranded_limit	INTEGER,		-- TH + (batch - 1) x online CPUs: stranded means pending above it
	tool_version	TEXT,			-- memcg-replay version that wrote the run
	batch_size	INTEGER,		-- MEMCG_CHARGE_BATCH simulated: per-CPU flush point, TH's factor
	nr_cpus		INTEGER			-- online CPUs simulated (TH's other factor); the events keep
						-- their traced CPUs.  Both are the trace's own (meta batch_size,
						-- nr_cpus_online) unless replay --batch / --cpus asked otherwise
);
INSERT INTO runs VALUES(1,'replay','break','spread','{"file":"old.db","policies":"break,continue,legacy","flush_model":"spread","sample_ms":50.0,"validate":false,"max_mismatches":0}','2026-12-03T10:37:22Z',0.0015241710007103392854,35,9,4,2,6,15,12,10,0,3,0,50000000,256,508,'0.1.0',64,4);
INSERT INTO runs VALUES(2,'replay','continue','spread','{"file":"old.db","policies":"break,continue,legacy","flush_model":"spread","sample_ms":50.0,"validate":false,"max_mismatches":0}','2026-12-03T10:37:22Z',0.0015241710007103392854,35,9,4,3,6,18,17,15,0,5,0,50000000,256,508,'0.1.0',64,4);
INSERT INTO runs VALUES(3,'replay','legacy','spread','{"file":"old.db","policies":"break,continue,legacy","flush_model":"spread","sample_ms":50.0,"validate":false,"max_mismatches":0}','2026-12-03T10:37:22Z',0.0015241710007103392854,35,9,4,3,6,18,18,15,1,5,0,50000000,256,508,'0.1.0',64,4);
CREATE TABLE reads (
	-- Every read (memcg_flush_stats) of a cgroup and what the policy made of it.
	read_id			INTEGER PRIMARY KEY,	-- read_errors.read_id
	run_id			INTEGER NOT NULL,	-- runs.run_id
	ts			INTEGER NOT NULL,	-- trace ns of the request
	cpu			INTEGER NOT NULL,	-- CPU it was traced on
	pid			INTEGER NOT NULL,	-- task that read; 0 unknown
	cgroup_id		INTEGER NOT NULL,	-- memcg read (cgroups.id)
	force			INTEGER NOT NULL,	-- 1: forced flush (the periodic root flush)
	flushed			INTEGER NOT NULL,	-- 1: the policy flushed (force or stats_updates > TH); 0 skipped
	stranded		INTEGER NOT NULL,	-- 1: the cgroup was stranded at the request (see stranded_episodes)
	stale			INTEGER NOT NULL,	-- 1: skipped while stranded: a stale read
	pending			INTEGER NOT NULL,	-- sum of |val| not yet flushed into it, before the decision (stats_updates units)
	pending_since_flush	INTEGER NOT NULL,	-- of it, from updates since its last flush: stranded above runs.stranded_limit
	items_wrong		INTEGER NOT NULL,	-- items the reader got wrong: its rows in read_errors
	sim_stats_updates	INTEGER,	-- simulated atomic stats_updates at the request
	kernel_stats_updates	INTEGER,	-- the kernel's, as traced
	kernel_needs_flush	INTEGER		-- the kernel's needs_flush, as traced
);
INSERT INTO reads VALUES(1,1,2000000,0,130,1,1,1,0,0,1,1,0,0,0,0);
INSERT INTO reads VALUES(2,2,2000000,0,130,1,1,1,0,0,1,1,0,0,0,0);
INSERT INTO reads VALUES(3,3,2000000,0,130,1,1,1,0,0,1,1,0,0,0,0);
INSERT INTO reads VALUES(4,1,4000000,3,4100,1,0,0,0,0,384,320,1,256,256,0);
INSERT INTO reads VALUES(5,2,4000000,3,4100,1,0,1,0,0,384,320,0,320,256,0);
INSERT INTO reads VALUES(6,3,4000000,3,4100,1,0,1,0,0,384,320,0,320,256,0);
INSERT INTO reads VALUES(7,1,5000000,3,4100,1,0,0,0,0,512,448,1,256,256,0);
INSERT INTO reads VALUES(8,2,5000000,3,4100,1,0,0,0,0,128,128,1,128,256,0);
INSERT INTO reads VALUES(9,3,5000000,3,4100,1,0,0,0,0,128,128,1,128,256,0);
INSERT INTO reads VALUES(10,1,7000000,0,130,1,1,1,0,0,512,448,0,256,256,0);
INSERT INTO reads VALUES(11,2,7000000,0,130,1,1,1,0,0,128,128,0,128,256,0);
INSERT INTO reads VALUES(12,3,7000000,0,130,1,1,1,0,0,128,128,0,128,256,0);
CREATE TABLE read_errors (
	-- One row per item a read got wrong: the error after the read's flush decision.
	read_id		INTEGER NOT NULL,	-- reads.read_id
	kind		INTEGER NOT NULL,	-- items.kind: 1 state (state and lruvec merged), 3 events
	item		INTEGER NOT NULL,	-- items.item
	error		INTEGER NOT NULL,	-- shown - truth, in the item's unit (negative: the stat lagged)
	age_ns		INTEGER NOT NULL,	-- age of the oldest update the reader missed, ns
	PRIMARY KEY (read_id, kind, item)
) WITHOUT ROWID;
INSERT INTO read_errors VALUES(4,1,19,-384,1975000);
INSERT INTO read_errors VALUES(7,1,19,-512,2975000);
INSERT INTO read_errors VALUES(8,1,19,-128,500000);
INSERT INTO read_errors VALUES(9,1,19,-128,500000);
CREATE TABLE stranded_episodes (
	-- Stretches of time a cgroup was stranded: not flushable (stats_updates <= TH) while
	-- the updates pending in its subtree since its last flush exceeded runs.stranded_limit,
	-- more than per-CPU batching can hold back.  Only a walk that stopped early does that.
	run_id		INTEGER NOT NULL,	-- runs.run_id
	cgroup_id	INTEGER NOT NULL,	-- cgroups.id
	start_ts	INTEGER NOT NULL,	-- trace ns it became stranded
	end_ts		INTEGER NOT NULL,	-- trace ns it stopped (a flush), or the trace's end
	open		INTEGER NOT NULL,	-- 1: still stranded when the trace ended
	worst_kind	INTEGER,		-- item with the largest |error| during the episode (items.kind)
	worst_item	INTEGER,		-- items.item; NULL none
	worst_error	INTEGER,		-- its error at that moment, signed, in its unit
	reads_skipped	INTEGER NOT NULL,	-- reads of it skipped during the episode (stale reads)
	max_pending	INTEGER			-- largest pending during the episode (stats_updates units)
);
CREATE TABLE series (
	-- Visible error of (cgroup, item) every runs.sample_ns from the first event to the
	-- last, no row skipped: (last - first) / sample_ns + 1 rows per (run, cgroup, item).
	-- Cgroups: those read in the trace, their ancestors, and --series-cgroup ones.
	-- Visible error: what a reader arriving then would get (0 while flushable).
	run_id		INTEGER NOT NULL,	-- runs.run_id
	cgroup_id	INTEGER NOT NULL,	-- cgroups.id
	kind		INTEGER NOT NULL,	-- items.kind (1 state, 3 events)
	item		INTEGER NOT NULL,	-- items.item
	ts		INTEGER NOT NULL,	-- trace ns of the sample
	error		INTEGER NOT NULL,	-- visible error at ts, in the item's unit
	min_error	INTEGER NOT NULL,	-- its minimum over (previous sample, ts]
	max_error	INTEGER NOT NULL,	-- its maximum over the same interval: spikes survive plotting
	PRIMARY KEY (run_id, cgroup_id, kind, item, ts)
) WITHOUT ROWID;
INSERT INTO series VALUES(1,1,1,19,1000000,0,0,0);
INSERT INTO series VALUES(2,1,1,19,1000000,0,0,0);
INSERT INTO series VALUES(3,1,1,19,1000000,0,0,0);
CREATE TABLE cgroup_series (
	-- The cgroups of series, at the same samples: their flush state.
	run_id		INTEGER NOT NULL,	-- runs.run_id
	cgroup_id	INTEGER NOT NULL,	-- cgroups.id
	ts		INTEGER NOT NULL,	-- trace ns of the sample
	pending		INTEGER NOT NULL,	-- sum of |val| not yet flushed into it (stats_updates units)
	stats_updates	INTEGER NOT NULL,	-- simulated atomic stats_updates
	flushable	INTEGER NOT NULL,	-- 1: stats_updates > TH, a read flushes
	stranded	INTEGER NOT NULL,	-- 1: stranded (see stranded_episodes)
	PRIMARY KEY (run_id, cgroup_id, ts)
) WITHOUT ROWID;
INSERT INTO cgroup_series VALUES(1,1,1000000,0,0,0,0);
INSERT INTO cgroup_series VALUES(2,1,1000000,0,0,0,0);
INSERT INTO cgroup_series VALUES(3,1,1000000,0,0,0,0);
CREATE TABLE cgroup_summary (
	-- Per run and cgroup, over the whole trace.
	run_id			INTEGER NOT NULL,	-- runs.run_id
	cgroup_id		INTEGER NOT NULL,	-- cgroups.id
	reads			INTEGER NOT NULL,	-- non-forced reads of it (memcg_flush_stats)
	flushed_reads		INTEGER NOT NULL,	-- of them, reads the policy flushed
	stale_reads		INTEGER NOT NULL,	-- of them, reads skipped while stranded
	stranded_ms		REAL NOT NULL,		-- time it was stranded, ms
	stranded_episodes	INTEGER NOT NULL,	-- rows of stranded_episodes
	max_pending		INTEGER NOT NULL,	-- largest pending (stats_updates units, not memory)
	mean_pending		REAL,			-- time-weighted mean pending
	final_pending		INTEGER,		-- pending at the end of the trace
	PRIMARY KEY (run_id, cgroup_id)
) WITHOUT ROWID;
INSERT INTO cgroup_summary VALUES(1,1,2,0,0,0.0,0,512,307.78893656496217089,0);
INSERT INTO cgroup_summary VALUES(1,100,0,0,0,0.0,0,512,307.50589910708475826,0);
INSERT INTO cgroup_summary VALUES(2,1,2,1,0,0.0,0,384,115.96904982106435965,0);
INSERT INTO cgroup_summary VALUES(2,100,0,0,0,0.0,0,384,115.89787665914197134,0);
INSERT INTO cgroup_summary VALUES(3,1,2,1,0,0.0,0,384,115.96904982106435965,0);
INSERT INTO cgroup_summary VALUES(3,100,0,0,0,0.0,0,384,115.89787665914197134,0);
CREATE TABLE item_summary (
	-- Per run, cgroup and stat item: how far its memory.stat line was off, in the item's
	-- unit.  Absolute values of the signed error except final_error.  Items whose error
	-- was 0 throughout have no row.
	run_id			INTEGER NOT NULL,	-- runs.run_id
	cgroup_id		INTEGER NOT NULL,	-- cgroups.id
	kind			INTEGER NOT NULL,	-- items.kind (1 state, 3 events)
	item			INTEGER NOT NULL,	-- items.item
	max_read_error		INTEGER NOT NULL,	-- largest |error| a reader of the cgroup got (after its flush decision)
	p99_read_error		INTEGER NOT NULL,	-- 99th percentile of |error| over the cgroup's reads
	mean_read_error		REAL NOT NULL,		-- mean |error| over the cgroup's reads
	max_visible_error	INTEGER NOT NULL,	-- largest |visible error| at any moment
	mean_visible_error	REAL NOT NULL,		-- time-weighted mean |visible error|
	max_error_age_ms	REAL NOT NULL,		-- oldest update a reader of the cgroup missed, ms
	final_error		INTEGER,		-- signed error at the end of the trace
	PRIMARY KEY (run_id, cgroup_id, kind, item)
) WITHOUT ROWID;
INSERT INTO item_summary VALUES(1,1,1,19,512,512,448.0,512,307.78893656496217089,2.9750000000000000888,0);
INSERT INTO item_summary VALUES(1,100,1,19,0,0,0.0,256,20.245713167639987517,0.0,0);
INSERT INTO item_summary VALUES(2,1,1,19,128,128,64.0,320,77.829662610439100944,0.5,0);
INSERT INTO item_summary VALUES(2,100,1,19,0,0,0.0,256,72.461352335929873902,0.0,0);
INSERT INTO item_summary VALUES(3,1,1,19,128,128,64.0,320,77.829662610439100944,0.5,0);
INSERT INTO item_summary VALUES(3,100,1,19,0,0,0.0,256,72.461352335929873902,0.0,0);
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
CREATE TABLE calibration (
	-- What each operation of the update path costs on the host that ran
	-- memcg-replay calibrate --db: user-space proxies, not the kernel's own costs.
	op		TEXT PRIMARY KEY,	-- plain_add (baseline), pcpu_add, atomic_add, atomic_add_contended,
						-- flushable_check, walk_step, walk_step_cold
	ns		REAL NOT NULL,		-- median ns per operation over the samples
	lo_ns		REAL,			-- 10th percentile of the samples, ns
	hi_ns		REAL,			-- 90th percentile, ns
	samples		INTEGER,		-- timed samples (loops of many operations)
	cpus		INTEGER,		-- threads adding at once in atomic_add_contended: online CPUs
	host		TEXT,			-- node name of the host measured
	measured_at	TEXT,			-- UTC ISO-8601
	tool_version	TEXT			-- memcg-replay version that measured
);
CREATE TABLE cost_basis (
	-- What the estimate needs of the trace (calibrate --db reads the events once).
	id		INTEGER PRIMARY KEY CHECK (id = 1),	-- one row
	trace_ns	INTEGER NOT NULL,	-- first to last event, ns: CPU seconds per second of trace
	updates		INTEGER NOT NULL,	-- updates whose walk value is not 0
	window_ns	INTEGER NOT NULL,	-- how recent another CPU's update must be to share a line
	node_visits	INTEGER NOT NULL,	-- (update, memcg on its path to the root) pairs
	shared_visits	INTEGER NOT NULL,	-- of them, reached by another CPU's update < window_ns before
	shared_fraction	REAL NOT NULL		-- shared_visits / node_visits: atomic adds priced as contended
);
CREATE INDEX event_chunks_by_cpu ON event_chunks (cpu, first_ts);
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
CREATE INDEX reads_by_cgroup ON reads (run_id, cgroup_id, ts);
CREATE INDEX episodes_by_cgroup ON stranded_episodes (run_id, cgroup_id, start_ts);
CREATE VIEW lag_report_all AS SELECT
	-- Every replay run: one row per (run, cgroup, item) of item_summary.
	r.policy,			-- walk policy
	r.run_id,			-- runs.run_id
	r.flush_model,			-- flush model of the run
	COALESCE(c.path, '#' || s.cgroup_id) AS cgroup,	-- path, or '#<id>' when unknown
	s.cgroup_id,			-- cgroups.id
	c.level,			-- depth, root 0; NULL unknown
	COALESCE(i.name, i2.name, CASE s.kind WHEN 1 THEN 'state' WHEN 2 THEN 'lruvec' ELSE 'events' END
		 || ':' || s.item) AS item,	-- BTF enumerator name, or 'kind:item' when unknown
	CASE s.kind WHEN 3 THEN 'events' ELSE 'pages' END AS unit,	-- unit of every *_error: 'pages', the
					-- *_B and NR_KERNEL_STACK_KB lines too (traced in pages, rounded),
					-- or 'events'
	g.reads,			-- the cgroup's non-forced reads
	g.stale_reads,			-- of them, skipped while stranded
	s.max_read_error,		-- see item_summary
	s.p99_read_error,
	s.mean_read_error,
	s.max_visible_error,
	s.mean_visible_error,
	s.max_error_age_ms,
	g.stranded_ms,			-- see cgroup_summary
	g.stranded_episodes,
	g.max_pending			-- stats_updates units, not memory
	-- (a run's batch_size and nr_cpus: JOIN runs USING (run_id))
FROM item_summary s
JOIN runs r ON r.run_id = s.run_id
JOIN cgroup_summary g ON g.run_id = s.run_id AND g.cgroup_id = s.cgroup_id
LEFT JOIN cgroups c ON c.id = s.cgroup_id
LEFT JOIN items i ON i.kind = s.kind AND i.item = s.item
LEFT JOIN items i2 ON s.kind = 1 AND i2.kind = 2 AND i2.item = s.item
WHERE r.kind = 'replay'
;
CREATE VIEW lag_report AS SELECT
	-- lag_report_all for the latest replay run of each (policy, flush_model,
	-- batch_size, nr_cpus), in tree order, then item, then policy and run.
	l.*
FROM lag_report_all l
WHERE l.run_id = (SELECT max(r2.run_id) FROM runs r2 JOIN runs r1 ON r1.run_id = l.run_id
		  WHERE r2.kind = 'replay' AND r2.policy = r1.policy
		  AND r2.flush_model IS r1.flush_model AND r2.batch_size IS r1.batch_size
		  AND r2.nr_cpus IS r1.nr_cpus)
ORDER BY l.level IS NULL, l.level, l.cgroup, l.item, l.policy, l.run_id
;
CREATE VIEW cgroup_lag_report AS SELECT
	-- One row per (run, cgroup) of lag_report: its worst item, the columns of lag_report.
	-- Worst: a page item before an event item (unlike units do not compare), then the
	-- largest max_read_error, then the largest max_visible_error.
	policy, run_id, flush_model, cgroup, cgroup_id, level, item, unit, reads, stale_reads,
	max_read_error, p99_read_error, mean_read_error, max_visible_error, mean_visible_error,
	max_error_age_ms, stranded_ms, stranded_episodes, max_pending
FROM (SELECT l.*, row_number() OVER (PARTITION BY l.run_id, l.cgroup_id
	ORDER BY l.unit = 'events', l.max_read_error DESC, l.max_visible_error DESC, l.item) AS rank
      FROM lag_report l)
WHERE rank = 1
ORDER BY level IS NULL, level, cgroup, policy, run_id
;
CREATE VIEW cost_report AS SELECT
	-- One row per replay run: what its walk did, its estimated cost in time and its
	-- staleness.  est_* are NULL without a calibration (memcg-replay calibrate --db
	-- FILE).  The estimate is user-space proxies times counts: it leaves out the real
	-- kernel's cache effects, lock contention, interrupts and the flush side.
	x.run_id,			-- runs.run_id
	x.policy,			-- walk policy
	x.flush_model,			-- flush model of the run
	x.updates,			-- updates fed to the simulator
	x.walk_steps,			-- memcgs the walks reached
	x.pcpu_adds,			-- per-CPU stats_updates additions
	x.atomic_adds,			-- batches added into an atomic stats_updates
	x.dropped_batches,		-- legacy: batches dropped at a flushable memcg
	x.flushable_checks,		-- memcg_vmstats_needs_flush() calls: walk_steps (break, continue),
					-- atomic_adds + dropped_batches (legacy)
	x.atomic_shared_fraction,	-- cost_basis.shared_fraction: atomic adds priced as contended
	x.ns / NULLIF(x.updates, 0) AS est_ns_per_update,	-- (walk_steps x walk_step + pcpu_adds x
					-- pcpu_add + flushable_checks x flushable_check + atomic_adds x
					-- (f x atomic_add_contended + (1 - f) x atomic_add)) / updates
	x.ns_max / NULLIF(x.updates, 0) AS est_ns_per_update_max,	-- the same with walk_step_cold
					-- and every atomic add contended: an upper bound
	x.ns / NULLIF(x.trace_ns, 0) AS est_cpu_s_per_s,	-- update-path CPU seconds per second of trace
	g.reads,			-- non-forced reads over every cgroup
	g.stale_reads,			-- of them, skipped while stranded
	g.stranded_cgroups,		-- cgroups stranded at least once
	l.max_read_error_pages,		-- worst read error of a page line, pages; NULL none wrong
	l.max_read_error_events		-- worst read error of an event line, events
FROM (SELECT r.run_id, r.policy, r.flush_model, r.updates, r.walk_steps, r.pcpu_adds,
	r.atomic_adds, r.dropped_batches, k.checks AS flushable_checks,
	b.shared_fraction AS atomic_shared_fraction, b.trace_ns,
	r.walk_steps * c.walk_step + r.pcpu_adds * c.pcpu_add + k.checks * c.flushable_check
	+ r.atomic_adds * (b.shared_fraction * c.atomic_add_contended
			   + (1 - b.shared_fraction) * c.atomic_add) AS ns,
	r.walk_steps * c.walk_step_cold + r.pcpu_adds * c.pcpu_add + k.checks * c.flushable_check
	+ r.atomic_adds * c.atomic_add_contended AS ns_max
      FROM runs r
      JOIN (SELECT run_id, CASE policy WHEN 'legacy' THEN atomic_adds + dropped_batches
		ELSE walk_steps END AS checks FROM runs) k ON k.run_id = r.run_id
      LEFT JOIN cost_basis b ON b.id = 1
      CROSS JOIN (SELECT
		max(CASE op WHEN 'pcpu_add' THEN ns END) AS pcpu_add,
		max(CASE op WHEN 'atomic_add' THEN ns END) AS atomic_add,
		max(CASE op WHEN 'atomic_add_contended' THEN ns END) AS atomic_add_contended,
		max(CASE op WHEN 'flushable_check' THEN ns END) AS flushable_check,
		max(CASE op WHEN 'walk_step' THEN ns END) AS walk_step,
		max(CASE op WHEN 'walk_step_cold' THEN ns END) AS walk_step_cold
	  FROM calibration) c
      WHERE r.kind = 'replay') x
LEFT JOIN (SELECT run_id, sum(reads) AS reads, sum(stale_reads) AS stale_reads,
		sum(stranded_episodes > 0) AS stranded_cgroups
	   FROM cgroup_summary GROUP BY run_id) g ON g.run_id = x.run_id
LEFT JOIN (SELECT run_id,
		max(CASE WHEN unit = 'pages' THEN max_read_error END) AS max_read_error_pages,
		max(CASE WHEN unit = 'events' THEN max_read_error END) AS max_read_error_events
	   FROM lag_report_all GROUP BY run_id) l ON l.run_id = x.run_id
ORDER BY x.run_id
;
COMMIT;
PRAGMA application_id = 1835233904;
PRAGMA user_version = 4;
