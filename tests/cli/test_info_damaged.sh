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
