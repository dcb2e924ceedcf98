#!/usr/bin/env bash
# tests/cli/test_errors.sh - info, replay and report on bad input: each case its own exit
# code (sim/base/error.h), exactly one "memcg-replay: " line on stderr, never a crash; and
# usage errors of synth, info, replay and report exit 2.
source "$(dirname "$0")/../lib.sh"

command -v sqlite3 >/dev/null || { skip errors_cli "sqlite3 command not installed (make deps)"; exit 0; }

# one_line NAME: stderr of the last expect_exit is exactly one "memcg-replay: " line
one_line() {
	if [ "$(printf '%s\n' "$T_ERR" | wc -l)" -eq 1 ] && [[ $T_ERR == "memcg-replay: "* ]]; then
		pass "$1"
	else
		fail "$1" "stderr: $(printf '%s' "$T_ERR" | head -c 300)"
	fi
}

# bad_input NAME FILE CODE: the three readers refuse FILE with CODE and one line
bad_input() {
	local cmd
	for cmd in info replay report; do
		expect_exit "${cmd}_$1" "$3" "$REPLAY" $cmd "$2" && one_line "${cmd}_$1_msg"
	done
}

GOOD=$T_TMP/good.db
"$REPLAY" synth -q --scenario seed-race -o "$GOOD" || fail synth_seed_race "could not make the test trace"
variant() {	# variant NAME SQL: a copy of the good trace changed by SQL
	cp "$GOOD" "$T_TMP/$1.db"
	sqlite3 "$T_TMP/$1.db" "$2"
}
rows_variant() {	# rows_variant NAME SQL: the same on the trace as rows (as_rows)
	cp "$GOOD" "$T_TMP/$1.db"
	as_rows "$T_TMP/$1.db" && sqlite3 "$T_TMP/$1.db" "$2"
}

bad_input missing_file "$T_TMP/nope.db" 3

head -c 8192 /dev/urandom >"$T_TMP/random.db"
bad_input not_sqlite "$T_TMP/random.db" 4
printf 'SQLite format 3\000 but truncated' >"$T_TMP/truncated.db"
bad_input truncated_sqlite "$T_TMP/truncated.db" 4

# a trace-cmd recording given where a database is expected: every reader says to import it
printf '\027\010\104tracing6\000\000\000\000\000\000\000\000' >"$T_TMP/trace.dat"
for cmd in replay validate report info events; do
	expect_exit "${cmd}_trace_dat" 4 "$REPLAY" $cmd "$T_TMP/trace.dat" && one_line "${cmd}_trace_dat_msg"
	expect_match "${cmd}_trace_dat_import" \
		"trace.dat is a trace-cmd recording, not a trace database: import it first: memcg-replay import .*/trace.dat -o .*/trace.dat.db\$" "$T_ERR"
done
expect_exit calibrate_db_trace_dat 4 "$REPLAY" calibrate --quick --db "$T_TMP/trace.dat" -o "$T_TMP/cal.json"
expect_match calibrate_db_trace_dat_import "trace.dat is a trace-cmd recording, not a trace database: import it first" "$T_ERR"

sqlite3 "$T_TMP/plain.db" "CREATE TABLE events (ts INTEGER); INSERT INTO events VALUES (1)"
bad_input not_ours "$T_TMP/plain.db" 5

variant newer "PRAGMA user_version = $(( $(sqlite3 "$GOOD" 'PRAGMA user_version') + 1 ))"
bad_input newer_schema "$T_TMP/newer.db" 6

variant no_events "DROP TABLE event_chunks"
bad_input missing_table "$T_TMP/no_events.db" 7

# the last event recorded on CPU 1 (a +64 at 3.4 ms) moved before the one before it
rows_variant backwards "UPDATE events SET ts = 2000000 WHERE rowid = (SELECT max(rowid) FROM events WHERE cpu = 1)"
bad_input time_backwards "$T_TMP/backwards.db" 8

rows_variant bad_cpu "UPDATE events SET cpu = 4 WHERE rowid = (SELECT min(rowid) FROM events WHERE kind = 2)"
bad_input cpu_beyond_possible "$T_TMP/bad_cpu.db" 9
rows_variant bad_target "UPDATE events SET item = 7 WHERE rowid = (SELECT min(rowid) FROM events WHERE kind = 5)"
bad_input lock_cpu_beyond_possible "$T_TMP/bad_target.db" 9

# the same damage in the compact store: a chunk claims a CPU beyond the possible ones,
# a chunk's BLOB is cut short
variant chunk_cpu "UPDATE event_chunks SET cpu = 4 WHERE cpu = 1"
bad_input chunk_cpu_beyond_possible "$T_TMP/chunk_cpu.db" 9
variant chunk_cut "UPDATE event_chunks SET data = substr(data, 1, length(data) - 3) WHERE cpu = 1"
bad_input chunk_truncated "$T_TMP/chunk_cut.db" 15

# ---- usage ----
expect_exit synth_unknown_option 2 "$REPLAY" synth --scenario seed-race -o "$T_TMP/x.db" --bogus
expect_exit synth_unknown_scenario 2 "$REPLAY" synth --scenario nope -o "$T_TMP/x.db"
one_line synth_unknown_scenario_msg
expect_exit synth_no_output 2 "$REPLAY" synth --scenario pagecache
expect_exit synth_option_of_other_scenario 2 "$REPLAY" synth --scenario pagecache --cgroups 5 -o "$T_TMP/x.db"
one_line synth_option_of_other_scenario_msg
expect_exit synth_bad_value 2 "$REPLAY" synth --scenario pagecache --rate-mib fast -o "$T_TMP/x.db"
expect_exit synth_out_of_range 2 "$REPLAY" synth --scenario fleet --cpus 0 -o "$T_TMP/x.db"
expect_exit synth_bad_seed 2 "$REPLAY" synth --scenario fleet --seed -1 -o "$T_TMP/x.db"
[ -e "$T_TMP/x.db" ] && fail synth_usage_no_output "a database was written" || pass synth_usage_no_output
expect_exit synth_unwritable 3 "$REPLAY" synth --scenario seed-race -o "$T_TMP/no/such/dir/x.db"
one_line synth_unwritable_msg
expect_exit info_missing_file_arg 2 "$REPLAY" info
expect_exit info_unknown_option 2 "$REPLAY" info --bogus "$GOOD"
expect_exit report_missing_file_arg 2 "$REPLAY" report
expect_exit report_unknown_option 2 "$REPLAY" report --bogus "$GOOD"
expect_exit report_bad_run 2 "$REPLAY" report --run x "$GOOD"
expect_exit replay_missing_file_arg 2 "$REPLAY" replay
expect_exit replay_unknown_option 2 "$REPLAY" replay --bogus "$GOOD"
t_done
