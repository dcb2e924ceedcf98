#!/usr/bin/env bash
# tests/cli/test_event_values.sh - an event's val and ts are bounded by the one
# check of every event read (db_event_check()), as its kind and item are: val
# an int on mod_memcg_state and mod_memcg_lruvec_state (the tracepoint's
# field), stats_updates of memcg_flush_stats never below 0, ts within a minute
# of meta's capture window.  Every reader (info, replay, validate, report,
# events), events --convert and import refuse such an event with exit 17 and
# one line naming it (cpu, seq, ts) and the value.  Before: val INT64_MAX on
# updates was converted and replayed with exit 0 (max pending 422212465080144),
# a val wider than the int from a trace.dat imported with exit 0, and one event
# at ts 4e18 made replay sample its series every 50 ms up to it, for ever.
source "$(dirname "$0")/../lib.sh"
cd "$T_TMP" || exit 1
command -v sqlite3 >/dev/null || { skip event_values "no sqlite3 shell"; t_done; }
t_lsan_import

"$REPLAY" synth -s seed-race -o good.db -q || fail setup "synth failed"

# readers NAME DB REGEX: every reader exits 17 saying REGEX
readers() {
	local cmd
	for cmd in info replay validate report events; do
		expect_exit "$1_$cmd" 17 timeout 60 "$REPLAY" "$cmd" "$2" &&
			expect_match "$1_${cmd}_msg" "$3" "$T_ERR"
	done
}

# ---- rows (the previous format): seed-race's row 1 is a lruvec update on
# cpu 2 (seq 0, ts 1000000), row 2 a flush on cpu 0 (seq 0, ts 2000000), its
# last row an event of cpu 0, the last of that CPU
cp good.db rows.db && as_rows rows.db || fail rows_setup "events --table"
[ "$(sqlite3 rows.db "SELECT group_concat(kind || ' ' || cpu || ' ' || seq || ' ' || ts, ', ')
	FROM events WHERE rowid IN (1, 2)")" = "2 2 0 1000000, 4 0 0 2000000" ] ||
	fail rows_setup "rows 1 and 2 are not the events this test expects"
[ "$(sqlite3 rows.db "SELECT cpu, seq FROM events ORDER BY rowid DESC LIMIT 1")" = "0|23" ] ||
	fail rows_setup "the last row is not cpu 0's last event"
row() { cp rows.db "$1.db"; sqlite3 "$1.db" "$2" || fail "$1" "sqlite3: $2"; }

row r_val_max "UPDATE events SET val = 9223372036854775807 WHERE rowid = 1"
readers r_val_max r_val_max.db "event cpu 2 seq 0 ts 1000000 \(mod_memcg_lruvec_state\): val 9223372036854775807 out of range \[-2147483648, 2147483647\]"
row r_val_2_31 "UPDATE events SET val = 2147483648 WHERE rowid = 1"
readers r_val_2_31 r_val_2_31.db "\(mod_memcg_lruvec_state\): val 2147483648 out of range"
row r_val_below "UPDATE events SET val = -2147483649 WHERE rowid = 1"
readers r_val_below r_val_below.db "val -2147483649 out of range"
row r_state_min "UPDATE events SET kind = 1, val = -9223372036854775808 WHERE rowid = 1"
readers r_state_min r_state_min.db "\(mod_memcg_state\): val -9223372036854775808 out of range"
row r_su_negative "UPDATE events SET val = -1 WHERE rowid = 2"
readers r_su_negative r_su_negative.db "event cpu 0 seq 0 ts 2000000 \(memcg_flush_stats\): stats_updates -1 out of range \[0, 9223372036854775807\]"
row r_ts_far "UPDATE events SET ts = 4000000000000000000 WHERE rowid = (SELECT max(rowid) FROM events)"
readers r_ts_far r_ts_far.db "event cpu 0 seq 23 ts 4000000000000000000 \(.*\): ts more than 60 s outside the capture window \[1000000, 7040999\]"
row r_ts_wrap "UPDATE events SET ts = -1 WHERE rowid = (SELECT max(rowid) FROM events)"
readers r_ts_wrap r_ts_wrap.db "event cpu 0 seq 23 ts 18446744073709551615 .*outside the capture window"
# a row's value that its field cannot hold is refused, not cut to the field
row r_level_wide "UPDATE events SET level = 70000 WHERE rowid = 2"
readers r_level_wide r_level_wide.db "events row 2 \(cpu 0 seq 0\): kind 4 level 70000 out of range"
row r_pid_wide "UPDATE events SET pid = 4294967297 WHERE rowid = 1"
readers r_pid_wide r_pid_wide.db "events row 1 \(cpu 2 seq 0\): kind 2 pid 4294967297 out of range"

# the ends of the ranges read: an int's, a count's any 64 bits, stats_updates up to INT64_MAX
row r_edges "UPDATE events SET val = CASE rowid % 2 WHEN 0 THEN 2147483647 ELSE -2147483648 END
	WHERE kind IN (1, 2); UPDATE events SET val = -1 WHERE kind = 3;
	UPDATE events SET val = 9223372036854775807 WHERE rowid = 2"
for cmd in info replay report events; do
	expect_exit "r_edges_$cmd" 0 timeout 60 "$REPLAY" "$cmd" r_edges.db
done

# convert refuses them too, and leaves the file as it was: rows, no chunks
for name in r_val_max r_su_negative r_ts_far; do
	sum=$(sqlite3 "$name.db" "SELECT count(*), total(val), total(ts) FROM events")
	expect_exit "${name}_convert" 17 "$REPLAY" events --convert "$name.db" &&
		expect_match "${name}_convert_msg" "^memcg-replay: $name.db: .*: event cpu [0-9]+ seq [0-9]+ ts [0-9]+ " "$T_ERR"
	[ "$(sqlite3 "$name.db" "SELECT count(*), total(val), total(ts) FROM events")" = "$sum" ] &&
	[ "$(sqlite3 "$name.db" "SELECT count(*) FROM sqlite_master WHERE name = 'event_chunks'")" = 0 ] &&
		pass "${name}_convert_unchanged" || fail "${name}_convert_unchanged" "the rows changed"
done

# ---- chunks: one more chunk on cpu 0 after its last (ts 7040999, seq 23)
# holding one event, in the store's version 2 layout as tests/cli/test_event_check.sh
# crafts it: ten column widths, all 0, then the ten bases (ts as a delta from the
# index's first_ts, 0)
command -v zstd >/dev/null && command -v python3 >/dev/null || { skip event_values_chunks "no zstd or python3"; t_done; }
# chunk NAME KIND ID ITEM VAL TS: good.db plus that chunk, at seq 24
chunk() {
	python3 - "$2" "$3" "$4" "$5" >"$1.raw" <<'PY' || fail "$1" "python3"
import struct, sys
kind, cid, item, val = (int(a) for a in sys.argv[1:5])
bases = [0, 0, kind, cid, item, val, 100, 0, 0, 0]
rec = bytes([0xc2]) + bytes(10) + b"".join(struct.pack("<Q", b & (2**64 - 1)) for b in bases)
sys.stdout.buffer.write(rec)
PY
	zstd -q -f "$1.raw" -o "$1.zst" || fail "$1" "zstd"
	cp good.db "$1.db"
	sqlite3 "$1.db" "INSERT INTO event_chunks (cpu, first_ts, last_ts, first_seq, count, kinds,
		raw_bytes, data) VALUES (0, $6, $6, 24, 1, 1 << $2, $(stat -c %s "$1.raw"),
		readfile('$1.zst'))" || fail "$1" "sqlite3 insert"
}
chunk c_good 2 1 0 -2147483648 8000000
expect_exit c_good_info 0 "$REPLAY" info c_good.db &&
	expect_match c_good_count "mod_memcg_lruvec_state +[0-9]+\b" "$T_OUT"
chunk c_val_max 2 1 0 9223372036854775807 8000000
readers c_val_max c_val_max.db "event cpu 0 seq 24 ts 8000000 \(mod_memcg_lruvec_state\): val 9223372036854775807 out of range"
chunk c_val_2_31 1 1 0 2147483648 8000000
readers c_val_2_31 c_val_2_31.db "event cpu 0 seq 24 ts 8000000 \(mod_memcg_state\): val 2147483648 out of range"
chunk c_su_negative 4 1 0 -5 8000000
readers c_su_negative c_su_negative.db "\(memcg_flush_stats\): stats_updates -5 out of range"
chunk c_ts_far 2 1 0 1 4000000000000000000
readers c_ts_far c_ts_far.db "event cpu 0 seq 24 ts 4000000000000000000 \(mod_memcg_lruvec_state\): ts more than 60 s outside"
# 2^63 stored bit for bit: negative in the index
chunk c_ts_wrap 2 1 0 1 -9223372036854775808
readers c_ts_wrap c_ts_wrap.db "ts 9223372036854775808 \(mod_memcg_lruvec_state\): ts more than 60 s outside"

# ---- replay's series end: without meta's window nothing bounds a ts below
# 2^63, so the series is sampled over the events' own span, 2000 samples by
# default at most, and --sample-ms that would give more than a million is
# refused before the pass (before: sampled every 50 ms up to ts 4e18)
cp c_ts_far.db nowin.db &&
	sqlite3 nowin.db "DELETE FROM meta WHERE key IN ('capture_start_ns', 'capture_end_ns')" ||
	fail nowin_setup "sqlite3"
if expect_exit nowin_replay 0 timeout 120 "$REPLAY" replay nowin.db -q; then
	n=$(printf '%s\n' "$T_OUT" | sed -n 's/.*, \([0-9]*\) samples each.*/\1/p')
	[ -n "$n" ] && [ "$n" -le 2001 ] && pass nowin_samples ||
		fail nowin_samples "samples: '${n}' in: $(printf '%s' "$T_OUT" | head -c 300)"
fi
expect_exit nowin_sample_ms 17 timeout 120 "$REPLAY" replay nowin.db -q --sample-ms 1 &&
	expect_match nowin_sample_ms_msg "--sample-ms 1 gives [0-9]+ samples over the trace's" "$T_ERR"

# ---- import: the same check reads back what import wrote.  A trace.dat whose
# state formats say val is 8 bytes at offset 16 (item and val read as one
# number, as a damaged or foreign format would give) is refused, nothing written
python3 - "$TOP/tests/fuzz/corpus/import/v6-2cpu.dat" wide.dat <<'PY' || fail import_setup "python3"
import sys
d = open(sys.argv[1], "rb").read()
old = b"field:int val;\toffset:20;\tsize:4;"
assert d.count(old) == 2, "mod_memcg_state and mod_memcg_lruvec_state formats"
open(sys.argv[2], "wb").write(d.replace(old, b"field:int val;\toffset:16;\tsize:8;"))
PY
expect_exit import_plain 0 "$REPLAY" import "$TOP/tests/fuzz/corpus/import/v6-2cpu.dat" -o plain.db
expect_exit import_wide_val 17 "$REPLAY" import wide.dat -o wide.db &&
	expect_match import_wide_val_msg "^memcg-replay: wide.dat: .*event cpu [0-9]+ seq [0-9]+ ts [0-9]+ \(mod_memcg(_lruvec)?_state\): val [0-9]+ out of range \[-2147483648, 2147483647\]" "$T_ERR"
if ls wide.db* >/dev/null 2>&1; then fail import_wide_no_output "output left behind"; else pass import_wide_no_output; fi
t_done
