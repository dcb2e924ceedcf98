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
# s.db is synthetic: its reads are compared with the spread model, whatever
# validate's inference keeps, so that keeps 16 orders (-H 16): half the time
# a file without --read: no stat_reads section, no complaint
expect_exit stat_reads_none 0 "$REPLAY" validate -q -H 16 s.db &&
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
expect_exit stat_reads_exact 0 "$REPLAY" validate -q -H 16 s.db
expect_match stat_reads_matched "memory.stat reads logged \(stat_reads\): $((n + 1)), matched to their traced flush request $n\$" "$T_OUT"
expect_match stat_reads_all_exact "^\(read, line\) pairs $pairs: exact $pairs \(100.00%\), within 2 units 0, off 0 " "$T_OUT"
expect_match stat_reads_model_synth "^\(read, line\) pairs .*; flush model spread\$" "$T_OUT"
expect_match stat_reads_anchor_said "^anchored on each cgroup's first matched read \(a synthetic trace: nothing was made before it\):\$" "$T_OUT"
expect_match stat_reads_not_compared "lines not compared: $n " "$T_OUT"
# what the file keeps (stat_read_checks), read back as a report reads it
run=$(sqlite3 s.db "SELECT max(run_id) FROM runs WHERE kind = 'validate'")
expect_match stat_reads_stored_line "^memory.stat as printed: $pairs of $pairs printed lines within 2 units of the simulation \(table stat_read_checks, run $run\)\$" "$T_OUT"
rows=$(sqlite3 s.db "SELECT count(*), sum(verdict = 'anchor'), sum(verdict = 'exact'),
	sum(printed_error = printed - truth), sum(shown = printed) FROM stat_read_checks WHERE run_id = $run")
[ "$rows" = "$((pairs + 2))|2|$pairs|$((pairs + 2))|$((pairs + 2))" ] && pass stat_reads_stored_rows ||
	fail stat_reads_stored_rows "$rows"
# the truth of a read: the crafted offset (1000 pages, 77 faults) plus the traced updates
truth=$(sqlite3 s.db "SELECT truth - 4096 * (1000 + coalesce((SELECT sum(val) FROM events e
		WHERE e.kind IN (1, 2) AND e.item = 19 AND e.ts <= k.request_ts), 0))
	FROM stat_read_checks k WHERE run_id = $run AND name = 'total_cache' ORDER BY read DESC LIMIT 1")
[ "$truth" = 0 ] && pass stat_reads_stored_truth || fail stat_reads_stored_truth "truth off by $truth bytes"

# 3 pages too many in read 5, 1 too many in read 6
sqlite3 s.db "UPDATE stat_reads SET value = value + 3 * 4096 WHERE read = 5 AND name = 'total_cache';
	UPDATE stat_reads SET value = value + 4096 WHERE read = 6 AND name = 'total_cache'"
expect_exit stat_reads_moved 0 "$REPLAY" validate -q -H 16 s.db
expect_match stat_reads_moved_counts "^\(read, line\) pairs $pairs: exact $((pairs - 2)) .*, within 2 units 1, off 1 \(the run.s flush decision differs from the kernel.s 0, inside the range the deciding flush.s lock window allows 0, no cause named 1\)" "$T_OUT"
expect_match stat_reads_moved_line "^  / +total_cache +$((n - 3)) +1 +1\$" "$T_OUT"
expect_match stat_reads_moved_listed "^  read 5 ts [0-9]+ / total_cache: printed delta -?[0-9]+, expected -?[0-9]+, off by 3 pages; cause: -\$" "$T_OUT"
run=$(sqlite3 s.db "SELECT max(run_id) FROM runs WHERE kind = 'validate'")
row=$(sqlite3 s.db "SELECT verdict, coalesce(cause, 'NULL'), diff, printed - shown FROM stat_read_checks
	WHERE run_id = $run AND read = 5 AND name = 'total_cache'")
[ "$row" = "off|NULL|3|12288" ] && pass stat_reads_moved_stored || fail stat_reads_moved_stored "$row"
expect_match stat_reads_moved_summary "^memory.stat as printed: $((pairs - 1)) of $pairs printed lines within 2 units" "$T_OUT"
# the worst printed - truth of a line, as SQL finds it among the rows but the anchor
worst() {
	sqlite3 s.db "SELECT printed_error || ' ' || read FROM stat_read_checks WHERE run_id = $run
		AND name = '$1' AND verdict <> 'anchor' ORDER BY abs(printed_error) DESC, read LIMIT 1"
}
read -r we wr <<<"$(worst total_cache)"
expect_match stat_reads_moved_worst "^  / +total_cache +$we bytes \([0-9.-]+ pages\), read $wr\$" "$T_OUT"
# read 7's read() ends 0.3 s later (page cache grows meanwhile) and is 5 pages off: updates
# inside its window could explain that
sqlite3 s.db "UPDATE stat_reads SET ts_after = ts_before + 300000000 WHERE read = 7;
	UPDATE stat_reads SET value = value + 5 * 4096 WHERE read = 7 AND name = 'total_cache'"
expect_exit stat_reads_window 0 "$REPLAY" validate -q -H 16 s.db
expect_match stat_reads_window_cause "^  read 7 ts [0-9]+ / total_cache: .* off by 5 pages; cause: inside the range the deciding flush's lock window allows\$" "$T_OUT"
expect_match stat_reads_window_counts "off 2 \(the run.s flush decision differs from the kernel.s 0, inside the range the deciding flush.s lock window allows 1, no cause named 1\)" "$T_OUT"
# one printed value 100 pages above what the kernel can have printed: off, and no cause
sqlite3 s.db "UPDATE stat_reads SET value = value + 100 * 4096 WHERE read = 8 AND name = 'total_cache'"
expect_exit stat_reads_100 0 "$REPLAY" validate -q -H 16 s.db
expect_match stat_reads_100_listed "^  read 8 ts [0-9]+ / total_cache: .* off by 100 pages; cause: -\$" "$T_OUT"
run=$(sqlite3 s.db "SELECT max(run_id) FROM runs WHERE kind = 'validate'")
row=$(sqlite3 s.db "SELECT verdict, coalesce(cause, 'NULL'), diff, printed_error FROM stat_read_checks
	WHERE run_id = $run AND read = 8 AND name = 'total_cache'")
[[ $row == off\|NULL\|100\|* ]] && pass stat_reads_100_stored || fail stat_reads_100_stored "$row"
read -r we wr <<<"$(worst total_cache)"
expect_match stat_reads_100_worst "^  / +total_cache +$we bytes \([0-9.-]+ pages\), read $wr\$" "$T_OUT"
sqlite3 s.db "UPDATE stat_reads SET value = value - 100 * 4096 WHERE read = 8 AND name = 'total_cache'"
# a damaged row is refused as every result row is
cp s.db d.db
sqlite3 d.db "UPDATE stat_read_checks SET verdict = 'exact' WHERE run_id = $run AND read = 8 AND name = 'total_cache'"
expect_exit stat_reads_damaged_row 15 "$REPLAY" info d.db
expect_match stat_reads_damaged_row_msg "stat_read_checks row \(run $run, read 8, total_cache\): verdict 'exact' with diff 100" "$T_ERR"
cp s.db d.db
sqlite3 d.db "UPDATE stat_read_checks SET printed_error = printed_error + 1 WHERE run_id = $run AND read = 3 AND name = 'total_cache'"
expect_exit stat_reads_damaged_error 15 "$REPLAY" info d.db
expect_match stat_reads_damaged_error_msg "stat_read_checks row \(run $run, read 3, total_cache\): printed_error [0-9-]+: not printed" "$T_ERR"
expect_exit stat_reads_json 0 "$REPLAY" validate -q -H 16 -f json s.db
expect_match stat_reads_json_key "\"stat_reads\":\{\"reads\":$((n + 1)),\"reads_matched\":$n,\"pairs\":$pairs,\"exact\":$((pairs - 3)),\"within_2_units\":1,\"off\":2," "$T_OUT"
expect_match stat_reads_json_model "\"lines_not_compared\":$n,\"reads_before_anchor\":0,\"flush_model\":\"spread\"\}" "$T_OUT"
if command -v python3 >/dev/null; then
	python3 -c 'import json,sys; json.load(sys.stdin)' <<<"$T_OUT" && pass stat_reads_json_valid ||
		fail stat_reads_json_valid "not one JSON document"
fi

# A recording (source not synth) with lock windows and a known kernel: the reads
# are compared with the inferred model's run, which the file does not keep;
# validate's own run stays the plain model's.  -m names another.
"$REPLAY" synth -s pagecache --duration=5 --period-ms=500 --flush-us=200 --rate-mib=64 -o i.db -q ||
	{ fail setup "synth (recording) failed"; t_done; }
# run 1's reads give the requests' times
"$REPLAY" validate -q i.db >/dev/null || { fail setup "validate (recording) failed"; t_done; }
# without reads (a capture without --read): no comparison, nothing printed of it
cp i.db i0.db
sqlite3 i0.db "UPDATE meta SET value = 'memcg-capture' WHERE key = 'source'" ||
	{ fail setup "crafting the recording"; t_done; }
expect_exit stat_reads_recording_none 0 "$REPLAY" validate -q i0.db &&
	! grep -q 'memory.stat reads logged' <<<"$T_OUT" && pass stat_reads_recording_none_silent ||
	fail stat_reads_recording_none_silent "$(head -c 300 <<<"$T_OUT")"
expect_exit stat_reads_recording_none_json 0 "$REPLAY" validate -q -f json i0.db
sqlite3 i.db "UPDATE meta SET value = 'memcg-capture' WHERE key = 'source';
INSERT INTO stat_reads (read, cgroup, ts_before, ts_after, pos, line, name, value, unit)
	SELECT row_number() OVER (ORDER BY ts), 1, ts - 1, ts + 1, 0, 'total_pgfault 5',
	       'total_pgfault', 5, 'count' FROM reads WHERE run_id = 1 AND force = 0 AND cgroup_id = 1;" ||
	{ fail setup "crafting the recording's stat_reads"; t_done; }
expect_exit stat_reads_recording 0 "$REPLAY" validate -q i.db
expect_match stat_reads_model_plain_run "^policy break, flush model spread \(run [0-9]+\)\$" "$T_OUT"
expect_match stat_reads_model_inferred "^\(read, line\) pairs [1-9][0-9]*: .*; flush model inferred\$" "$T_OUT"
# a recording may hold updates made before it, unflushed: the anchor is the first read
# after the first forced root flush, which flushed them
forced=$(sqlite3 i.db "SELECT min(ts) FROM reads WHERE run_id = 1 AND force = 1")
before=$(sqlite3 i.db "SELECT count(*) FROM reads WHERE run_id = 1 AND force = 0 AND cgroup_id = 1 AND ts <= $forced")
expect_match stat_reads_anchor_forced "^anchored on each cgroup's first matched read after the first forced root flush \(ts $forced, .*; [0-9]+ reads before their anchor not compared:\$" "$T_OUT"
[ "$before" -gt 0 ] && pass "stat_reads_anchor_forced_skips ($before)" || fail stat_reads_anchor_forced_skips "$before"
runs=$(sqlite3 i.db "SELECT count(*) || ' ' || sum(flush_model = 'inferred') FROM runs")
[ "$runs" = "2 0" ] && pass stat_reads_inferred_not_stored ||
	fail stat_reads_inferred_not_stored "runs, inferred ones: $runs"
expect_exit stat_reads_recording_m 0 "$REPLAY" validate -q -m window i.db
expect_match stat_reads_model_named "^\(read, line\) pairs [1-9][0-9]*: .*; flush model window\$" "$T_OUT"
# A read the kernel did not flush printed what the last flush of its cgroup (or of an
# ancestor) left there: its deciding flush is that one.  Updates of the subtree made on
# CPU c inside that flush's window of CPU c's tree may or may not be in it (the order is
# not traced), so on a recording a difference within them has that window as its cause,
# although the read's own window holds no update.  Compared with spread (-m), the model
# of the values crafted from run 1.
"$REPLAY" synth -s pagecache --duration=5 --period-ms=1000 --rate-mib=64 -o w.db -q ||
	{ fail setup "synth (stale reads) failed"; t_done; }
"$REPLAY" validate -q w.db >/dev/null && "$REPLAY" events --table w.db >/dev/null ||
	{ fail setup "validate (stale reads) failed"; t_done; }
stat_reads_craft w.db || { fail setup "crafting the stale reads"; t_done; }
expect_exit stat_reads_stale 0 "$REPLAY" validate -q -m spread w.db
expect_match stat_reads_stale_exact "^\(read, line\) pairs [1-9][0-9]*: exact [0-9]+ \(100.00%\), within 2 units 0, off 0 " "$T_OUT"
# the first read after the anchor that the kernel did not flush, and the one after it,
# both left as the flush of the read before them made them
forced=$(sqlite3 w.db "SELECT min(ts) FROM reads WHERE run_id = 1 AND force = 1")
read -r s1 s2 flusher <<<"$(sqlite3 -separator ' ' w.db "
	WITH k AS (SELECT s.read, r.ts, r.kernel_needs_flush AS nf FROM (SELECT DISTINCT read, ts_before
			FROM stat_reads) s JOIN reads r ON r.run_id = 1 AND r.cgroup_id = 1
			AND r.ts = s.ts_before + 1 WHERE r.ts > $forced)
	SELECT a.read, a.read + 1, (SELECT max(ts) FROM k WHERE k.nf = 1 AND k.ts < a.ts) FROM k a
	WHERE a.nf = 0 AND (SELECT nf FROM k WHERE k.read = a.read + 1) = 0
	AND (SELECT count(*) FROM k WHERE k.ts < a.ts) > 1 ORDER BY a.read LIMIT 1")"
# what that flush's windows hold of NR_FILE_PAGES on their own CPU (events has no
# index: the lookups go through an indexed temporary copy, not a scan per window)
win=$(sqlite3 w.db "
	CREATE TEMP TABLE ev AS SELECT kind, item, cpu, pid, id, ts, val FROM events
		WHERE kind IN (1, 2, 4, 5, 6);
	CREATE INDEX temp.ev_upd ON ev (kind, item, cpu, ts);
	CREATE INDEX temp.ev_lock ON ev (kind, pid, item, ts);
	CREATE INDEX temp.ev_time ON ev (kind, ts);
	WITH w AS (SELECT l.item AS c, l.ts AS t0, (SELECT min(u.ts) FROM ev u WHERE u.kind = 6
			AND u.pid = l.pid AND u.item = l.item AND u.ts >= l.ts) AS t1
		FROM ev l WHERE l.kind = 5 AND l.ts > $flusher AND l.pid = (SELECT pid FROM ev
			WHERE kind = 4 AND ts = $flusher AND id = 1)
		AND l.ts < (SELECT min(ts) FROM ev WHERE kind = 4 AND ts > $flusher))
	SELECT coalesce(sum((SELECT sum(abs(val)) FROM ev e WHERE e.kind IN (1, 2) AND e.item = 19
		AND e.cpu = w.c AND e.ts BETWEEN w.t0 AND w.t1)), 0) FROM w")
[ "${win:-0}" -ge 5 ] && [ "$win" -lt 300 ] && pass "stat_reads_stale_window_holds ($win pages)" ||
	fail stat_reads_stale_window_holds "read $s1, flush at ${flusher:-?}: $win pages"
sqlite3 w.db "UPDATE stat_reads SET value = value + 5 * 4096 WHERE read = $s1;
	UPDATE stat_reads SET value = value + 300 * 4096 WHERE read = $s2"
expect_exit stat_reads_stale_moved 0 "$REPLAY" validate -q -m spread w.db
expect_match stat_reads_stale_cause "^  read $s1 ts [0-9]+ / total_cache: .* off by 5 pages; cause: inside the range the deciding flush's lock window allows\$" "$T_OUT"
expect_match stat_reads_stale_beyond "^  read $s2 ts [0-9]+ / total_cache: .* off by 300 pages; cause: -\$" "$T_OUT"
# a synthetic trace's visits are where its flush model puts them: no unknown order there
# (where a read the kernel flushed is compared at its request, not at its flush's end)
sqlite3 w.db "UPDATE meta SET value = 'synth:pagecache' WHERE key = 'source';
	UPDATE stat_reads SET value = (SELECT c.value FROM crafted_synth c WHERE c.read =
		stat_reads.read) + 4096 * (CASE read WHEN $s1 THEN 5 WHEN $s2 THEN 300 ELSE 0 END);
	UPDATE stat_reads SET line = name || ' ' || value"
expect_exit stat_reads_stale_synth 0 "$REPLAY" validate -q -m spread w.db
expect_match stat_reads_stale_synth_none "^  read $s1 ts [0-9]+ / total_cache: .* off by 5 pages; cause: -\$" "$T_OUT"
t_done
