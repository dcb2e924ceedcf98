#!/usr/bin/env bash
# tests/cli/test_info_damaged.sh - info on damaged files: a ring-buffer
# counter that goes down from start to end, or below -1 (unknown), used to
# print negative lost events with exit 0; now every reader refuses the file at
# open with the row and value named (exit 17, BAD_INPUT).  A missing meta
# value is said to be missing, never printed as "(null)".
source "$(dirname "$0")/../lib.sh"

command -v sqlite3 >/dev/null || { skip info_damaged "no sqlite3 shell"; t_done; }
cd "$T_TMP" || exit 1
"$REPLAY" synth -s seed-race -o good.db -q || fail synth_setup "synth failed"
n=$(sqlite3 good.db "SELECT count(*) FROM cpu_stats WHERE phase = 'end'")
[ "${n:-0}" -gt 0 ] || { fail info_damaged_setup "synth wrote no cpu_stats end rows"; t_done; }
cpu=$(sqlite3 good.db "SELECT min(cpu) FROM cpu_stats")

# damage NAME SQL
damage() { cp good.db "$1.db"; sqlite3 "$1.db" "$2" || fail "$1" "sqlite3: $2"; }
# overrun: start 5, end 0 -> 0 - 5 = -5 "overrun" before
damage overrun_down "UPDATE cpu_stats SET overrun = 5 WHERE cpu = $cpu AND phase = 'start';
	UPDATE cpu_stats SET overrun = 0 WHERE cpu = $cpu AND phase = 'end'"
damage dropped_down "UPDATE cpu_stats SET dropped = 7 WHERE cpu = $cpu AND phase = 'start';
	UPDATE cpu_stats SET dropped = 2 WHERE cpu = $cpu AND phase = 'end'"
damage below_unknown "UPDATE cpu_stats SET entries = -2 WHERE cpu = $cpu AND phase = 'end'"
damage bad_phase "UPDATE cpu_stats SET phase = 'middle' WHERE cpu = $cpu AND phase = 'end'"
for cmd in info replay; do
	expect_exit ${cmd}_overrun_down 17 "$REPLAY" $cmd overrun_down.db &&
		expect_match ${cmd}_overrun_down_msg "cpu_stats row cpu $cpu phase end: overrun 0 below its start 5" "$T_ERR"
done
expect_exit info_dropped_down 17 "$REPLAY" info dropped_down.db &&
	expect_match info_dropped_down_msg "dropped 2 below its start 7" "$T_ERR"
expect_exit info_below_unknown 17 "$REPLAY" info below_unknown.db &&
	expect_match info_below_unknown_msg "-2 below -1" "$T_ERR"
expect_exit info_bad_phase 17 "$REPLAY" info bad_phase.db &&
	expect_match info_bad_phase_msg "phase middle" "$T_ERR"

# A counter or gap count no CPU can reach (above 2^48 events) is damage, not a
# count: it used to be printed (overrun 2^63-1), or its sum overflowed (info
# exit 1 "Input/output error", the HTML report exit 7).  Now 17 at open, naming
# the table, CPU, column and value.  Bounded so, every sum over CPUs fits.
big=9223372036854775807
damage overrun_huge "UPDATE cpu_stats SET overrun = $big, dropped = $big WHERE cpu = $cpu AND phase = 'end'"
damage stats_cpu "UPDATE cpu_stats SET cpu = 99999 WHERE cpu = $cpu AND phase = 'end'"
damage gap_huge "INSERT INTO gaps VALUES ($cpu, 100, $big), ($cpu, 200, $big)"
# each count possible (2^48), their sum for one CPU not
damage gap_sum "INSERT INTO gaps VALUES ($cpu, 100, 281474976710656), ($cpu, 200, 281474976710656)"
damage gap_cpu "INSERT INTO gaps VALUES (99999, 100, 1)"
expect_exit info_overrun_huge 17 "$REPLAY" info overrun_huge.db &&
	expect_match info_overrun_huge_msg "cpu_stats row cpu $cpu phase end: overrun $big above 281474976710656" "$T_ERR"
expect_exit info_stats_cpu 17 "$REPLAY" info stats_cpu.db &&
	expect_match info_stats_cpu_msg "cpu_stats row cpu 99999 phase end: cpu is not below nr_cpus_possible" "$T_ERR"
expect_exit info_gap_huge 17 "$REPLAY" info gap_huge.db &&
	expect_match info_gap_huge_msg "gaps row cpu $cpu ts 100: count $big is neither -1" "$T_ERR"
expect_exit info_gap_sum 17 "$REPLAY" info gap_sum.db &&
	expect_match info_gap_sum_msg "gaps row cpu $cpu ts 200: the counts of this CPU sum to 562949953421312" "$T_ERR"
expect_exit info_gap_cpu 17 "$REPLAY" info gap_cpu.db
# many possible gaps: summed exactly
damage gap_many "INSERT INTO gaps VALUES ($cpu, 100, 281474976710656), ($cpu, 200, -1), ($cpu, 300, 0)"
expect_exit info_gap_many 0 "$REPLAY" info gap_many.db &&
	expect_match info_gap_many_said "3 gaps \(281474976710656 events counted, 1 of unknown size\)" "$T_OUT"

# The capture window: trace-clock ns are never negative and the end is not
# before the start.  capture_start_ns -2^63 with end 2^63-1 overflowed end -
# start (UBSan) in info, replay and the HTML report, and printed -0.000000 s.
damage window_wide "INSERT OR REPLACE INTO meta VALUES ('capture_start_ns', '-9223372036854775808');
	INSERT OR REPLACE INTO meta VALUES ('capture_end_ns', '$big')"
damage window_inverted "INSERT OR REPLACE INTO meta VALUES ('capture_start_ns', '9000000000');
	INSERT OR REPLACE INTO meta VALUES ('capture_end_ns', '1')"
damage window_text "INSERT OR REPLACE INTO meta VALUES ('capture_start_ns', 'abc')"
for cmd in info replay; do
	expect_exit ${cmd}_window_wide 17 "$REPLAY" $cmd window_wide.db &&
		expect_match ${cmd}_window_wide_msg "meta capture_start_ns = -9223372036854775808: out of range \[0, $big\]" "$T_ERR"
done
expect_exit info_window_inverted 17 "$REPLAY" info window_inverted.db &&
	expect_match info_window_inverted_msg "meta capture_end_ns = 1: before capture_start_ns 9000000000" "$T_ERR"
expect_exit info_window_text 17 "$REPLAY" info window_text.db &&
	expect_match info_window_text_msg "meta capture_start_ns = 'abc': not an integer" "$T_ERR"

# the HTML report reads the same tables: the same refusals
if "$REPLAY" replay good.db -q >/dev/null 2>&1; then
	cp good.db replayed.db
	# a start near the clock's end and no end: the page's default window (start
	# + 1 s) overflowed (UBSan; 1.000 s printed after wrapping twice); now it
	# ends at INT64_MAX
	cp replayed.db h_window_start_only.db
	sqlite3 h_window_start_only.db "INSERT OR REPLACE INTO meta VALUES ('capture_start_ns', '$((big - 5))');
		DELETE FROM meta WHERE key = 'capture_end_ns'"
	expect_exit html_window_start_only 0 "$REPLAY" report --no-check --format html \
		-o h_window_start_only.html h_window_start_only.db &&
		expect_match html_window_start_only_span '<dt>span</dt><dd>0.000 s</dd>' \
			"$(cat h_window_start_only.html)"
	for d in overrun_huge gap_huge window_wide; do
		cp replayed.db "h_$d.db"
		case $d in
		overrun_huge) sqlite3 "h_$d.db" "UPDATE cpu_stats SET overrun = $big WHERE cpu = $cpu AND phase = 'end'" ;;
		gap_huge) sqlite3 "h_$d.db" "INSERT INTO gaps VALUES ($cpu, 100, $big), ($cpu, 200, $big)" ;;
		window_wide) sqlite3 "h_$d.db" "INSERT OR REPLACE INTO meta VALUES ('capture_start_ns', '-9223372036854775808');
			INSERT OR REPLACE INTO meta VALUES ('capture_end_ns', '$big')" ;;
		esac
		expect_exit html_$d 17 "$REPLAY" report --no-check --format html -o "h_$d.html" "h_$d.db"
	done
	# a runs table whose pages are not its own (an index's): info said
	# "runs: (none)" with exit 0; now it says the table is unreadable, exit 15
	cp replayed.db runs_damaged.db
	rp=$(sqlite3 runs_damaged.db "SELECT rootpage FROM sqlite_master WHERE name = 'episodes_by_cgroup'")
	sqlite3 runs_damaged.db "PRAGMA writable_schema = ON;
		UPDATE sqlite_master SET rootpage = $rp WHERE name = 'runs'" || fail runs_damaged_setup "sqlite3"
	expect_exit info_runs_damaged 15 "$REPLAY" info runs_damaged.db &&
		expect_match info_runs_damaged_said '^runs: +\(unreadable\)' "$T_OUT" &&
		expect_match info_runs_damaged_msg 'result tables cannot be read' "$T_ERR"
	# a run's row as info prints it: a count, a finite time, simulated sizes in range
	cp replayed.db run_wall.db
	sqlite3 run_wall.db "UPDATE runs SET wall_s = 1e999 WHERE run_id = 1"
	expect_exit info_run_wall 15 "$REPLAY" info run_wall.db &&
		expect_match info_run_wall_msg "runs row run_id 1: wall_s 'Inf': not a finite number" "$T_ERR"
	cp replayed.db run_events.db
	sqlite3 run_events.db "UPDATE runs SET events = -3 WHERE run_id = 1"
	expect_exit info_run_events 15 "$REPLAY" info run_events.db &&
		expect_match info_run_events_msg "runs row run_id 1: events '-3': not a count" "$T_ERR"
else
	fail html_setup "replay good.db failed"
fi

# unknown counters (-1) are allowed: the lost-events line says so
damage unknown "UPDATE cpu_stats SET overrun = -1 WHERE cpu = $cpu AND phase = 'end'"
expect_exit info_unknown_ok 0 "$REPLAY" info unknown.db &&
	expect_match info_unknown_said 'some CPUs unknown' "$T_OUT"

# counters missing from the end: unknown, never "0 overrun" (nor -1)
damage no_end "DELETE FROM cpu_stats WHERE phase = 'end'"
expect_exit info_no_end 0 "$REPLAY" info no_end.db &&
	expect_match info_no_end_said 'ring buffers: unknown \(the file has no per-CPU counters from the end\)' "$T_OUT"
damage one_end_missing "DELETE FROM cpu_stats WHERE cpu = $cpu AND phase = 'end'"
expect_exit info_one_end_missing 0 "$REPLAY" info one_end_missing.db &&
	expect_match info_one_end_missing_said 'ring buffers: .*\(some CPUs unknown\)' "$T_OUT"

damage no_kernel "UPDATE meta SET value = NULL WHERE key = 'kernel_release'"
expect_exit info_no_kernel 0 "$REPLAY" info no_kernel.db &&
	expect_match info_no_kernel_said '^kernel: +\(unknown: meta kernel_release missing or empty\)' "$T_OUT"
t_done
