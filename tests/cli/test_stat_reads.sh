#!/usr/bin/env bash
# tests/cli/test_stat_reads.sh - validate compares the logged memory.stat reads
# (table stat_reads, memcg-capture --read) with the simulation: each read is
# matched to its traced flush request, anchored on the cgroup's first read, and
# printed(k) - printed(0) is checked against the traced updates between the two
# requests plus the simulated read errors error(k) - error(0).
#
# The input is crafted: a synthetic trace, validated once for its reads and read
# errors, gets stat_reads rows whose values are what that formula says (plus an
# offset the anchor must cancel: the truth before the trace), then two values
# are moved by 3 and 1 pages.  The comparison names its flush model: on a
# recording the one replay uses by default (inferred, from a pass not stored),
# else the one -m names.
source "$(dirname "$0")/../lib.sh"
cd "$T_TMP" || exit 1
command -v sqlite3 >/dev/null || { skip stat_reads "no sqlite3 shell"; t_done; }

"$REPLAY" synth -s pagecache --duration=3 -o s.db -q || { fail setup "synth failed"; t_done; }
# a file without --read: no stat_reads section, no complaint
expect_exit stat_reads_none 0 "$REPLAY" validate -q s.db &&
	! grep -q 'memory.stat reads logged' <<<"$T_OUT" && pass stat_reads_none_silent ||
	fail stat_reads_none_silent "$(head -c 300 <<<"$T_OUT")"
"$REPLAY" events --table s.db >/dev/null || { fail setup "events --table failed"; t_done; }

# the root's non-forced reads of run 1 (each at its flush event, by rowid), two lines each:
# NR_FILE_PAGES (19, state: pages, printed in bytes) and PGFAULT (24, events: a count)
sqlite3 s.db "
CREATE TEMP TABLE f AS
	SELECT r.read_id, r.ts, r.cgroup_id, row_number() OVER (ORDER BY r.ts) - 1 AS k,
	       (SELECT min(rowid) FROM events e WHERE e.kind = 4 AND e.id = r.cgroup_id
		AND e.ts = r.ts) AS frow
	FROM reads r WHERE r.run_id = 1 AND r.force = 0 AND r.cgroup_id = 1;
INSERT INTO stat_reads (read, cgroup, ts_before, ts_after, pos, line, name, value, unit)
SELECT k, cgroup_id, ts - 1, ts + 1, pos, name || ' ' || v, name, v, unit FROM (
	SELECT f.k, f.cgroup_id, f.ts, 0 AS pos, 'total_cache' AS name, 'bytes' AS unit,
	       4096 * (1000 + coalesce((SELECT sum(val) FROM events e WHERE e.kind IN (1, 2)
			AND e.item = 19 AND e.rowid < f.frow), 0)
		+ coalesce((SELECT error FROM read_errors x WHERE x.read_id = f.read_id
			AND x.kind = 1 AND x.item = 19), 0)) AS v FROM f
	UNION ALL
	SELECT f.k, f.cgroup_id, f.ts, 1, 'total_pgfault', 'count',
	       77 + coalesce((SELECT sum(val) FROM events e WHERE e.kind = 3
			AND e.item = 24 AND e.rowid < f.frow), 0)
		+ coalesce((SELECT error FROM read_errors x WHERE x.read_id = f.read_id
			AND x.kind = 3 AND x.item = 24), 0) FROM f
	UNION ALL
	SELECT f.k, f.cgroup_id, f.ts, 2, 'hierarchical_memory_limit', 'bytes', 9223372036854771712
	FROM f);
-- a read whose window holds no flush request: not matched
INSERT INTO stat_reads VALUES (999, 1, 1, 2, 0, 'total_cache 4096', 'total_cache', 4096, 'bytes');
" || { fail setup "crafting stat_reads"; t_done; }
n=$(sqlite3 s.db "SELECT count(DISTINCT read) FROM stat_reads WHERE read < 999")
[ "$n" -ge 10 ] && pass "stat_reads_crafted ($n reads)" || { fail stat_reads_crafted "$n reads"; t_done; }
# the cache growth makes the deltas real, not 0 = 0
grew=$(sqlite3 s.db "SELECT max(value) - min(value) FROM stat_reads WHERE name = 'total_cache' AND read < 999")
[ "$grew" -gt 0 ] && pass stat_reads_values_move || fail stat_reads_values_move "$grew"

pairs=$(( (n - 1) * 2 ))
expect_exit stat_reads_exact 0 "$REPLAY" validate -q s.db
expect_match stat_reads_matched "memory.stat reads logged \(stat_reads\): $((n + 1)), matched to their traced flush request $n\$" "$T_OUT"
expect_match stat_reads_all_exact "^\(read, line\) pairs $pairs: exact $pairs \(100.00%\), within 2 units 0, off 0 " "$T_OUT"
expect_match stat_reads_model_synth "^\(read, line\) pairs .*; flush model spread\$" "$T_OUT"
expect_match stat_reads_anchor_said "anchored on each cgroup's first matched read" "$T_OUT"
expect_match stat_reads_not_compared "lines not compared: $n " "$T_OUT"

# 3 pages too many in read 5, 1 too many in read 6
sqlite3 s.db "UPDATE stat_reads SET value = value + 3 * 4096 WHERE read = 5 AND name = 'total_cache';
	UPDATE stat_reads SET value = value + 4096 WHERE read = 6 AND name = 'total_cache'"
expect_exit stat_reads_moved 0 "$REPLAY" validate -q s.db
expect_match stat_reads_moved_counts "^\(read, line\) pairs $pairs: exact $((pairs - 2)) .*, within 2 units 1, off 1 \(the run.s flush decision differs from the kernel.s 0, inside the range the deciding flush.s lock window allows 0, no cause named 1\)" "$T_OUT"
expect_match stat_reads_moved_line "^  / +total_cache +$((n - 3)) +1 +1\$" "$T_OUT"
expect_match stat_reads_moved_listed "^  read 5 ts [0-9]+ / total_cache: printed delta -?[0-9]+, expected -?[0-9]+, off by 3 pages; cause: -\$" "$T_OUT"
# read 7's read() ends 0.3 s later (page cache grows meanwhile) and is 5 pages off: updates
# inside its window could explain that
sqlite3 s.db "UPDATE stat_reads SET ts_after = ts_before + 300000000 WHERE read = 7;
	UPDATE stat_reads SET value = value + 5 * 4096 WHERE read = 7 AND name = 'total_cache'"
expect_exit stat_reads_window 0 "$REPLAY" validate -q s.db
expect_match stat_reads_window_cause "^  read 7 ts [0-9]+ / total_cache: .* off by 5 pages; cause: inside the range the deciding flush's lock window allows\$" "$T_OUT"
expect_match stat_reads_window_counts "off 2 \(the run.s flush decision differs from the kernel.s 0, inside the range the deciding flush.s lock window allows 1, no cause named 1\)" "$T_OUT"
expect_exit stat_reads_json 0 "$REPLAY" validate -q -f json s.db
expect_match stat_reads_json_key "\"stat_reads\":\{\"reads\":$((n + 1)),\"reads_matched\":$n,\"pairs\":$pairs,\"exact\":$((pairs - 3)),\"within_2_units\":1,\"off\":2," "$T_OUT"
expect_match stat_reads_json_model "\"lines_not_compared\":$n,\"flush_model\":\"spread\"\}" "$T_OUT"
if command -v python3 >/dev/null; then
	python3 -c 'import json,sys; json.load(sys.stdin)' <<<"$T_OUT" && pass stat_reads_json_valid ||
		fail stat_reads_json_valid "not one JSON document"
fi

# A recording (source not synth) with lock windows and a known kernel: the reads
# are compared with the inferred model's run, which the file does not keep;
# validate's own run stays the plain model's.  -m names another.
"$REPLAY" synth -s pagecache --duration=2 --period-ms=500 --flush-us=200 --rate-mib=64 -o i.db -q ||
	{ fail setup "synth (recording) failed"; t_done; }
# run 1's reads give the requests' times
"$REPLAY" validate -q i.db >/dev/null || { fail setup "validate (recording) failed"; t_done; }
sqlite3 i.db "UPDATE meta SET value = 'memcg-capture' WHERE key = 'source';
INSERT INTO stat_reads (read, cgroup, ts_before, ts_after, pos, line, name, value, unit)
	SELECT row_number() OVER (ORDER BY ts), 1, ts - 1, ts + 1, 0, 'total_pgfault 5',
	       'total_pgfault', 5, 'count' FROM reads WHERE run_id = 1 AND force = 0 AND cgroup_id = 1;" ||
	{ fail setup "crafting the recording's stat_reads"; t_done; }
expect_exit stat_reads_recording 0 "$REPLAY" validate -q i.db
expect_match stat_reads_model_plain_run "^policy break, flush model spread \(run [0-9]+\)\$" "$T_OUT"
expect_match stat_reads_model_inferred "^\(read, line\) pairs [1-9][0-9]*: .*; flush model inferred\$" "$T_OUT"
runs=$(sqlite3 i.db "SELECT count(*) || ' ' || sum(flush_model = 'inferred') FROM runs")
[ "$runs" = "2 0" ] && pass stat_reads_inferred_not_stored ||
	fail stat_reads_inferred_not_stored "runs, inferred ones: $runs"
expect_exit stat_reads_recording_m 0 "$REPLAY" validate -q -m window i.db
expect_match stat_reads_model_named "^\(read, line\) pairs [1-9][0-9]*: .*; flush model window\$" "$T_OUT"
t_done
