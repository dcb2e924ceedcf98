#!/usr/bin/env bash
# tests/cli/test_options.sh - one vocabulary for options (issue 38): events
# --cgroup takes a path (as report and memcg-capture do) or an id; --from and
# --to are seconds from the start of the trace, a unit suffix allowed
# (123456789ns), where they were absolute trace ns; --line takes a kernel
# item name or memory.stat's v1 or v2 name of the line; -q is --quiet in
# every command that has it.  Bad values: exit 2 (a value no trace could
# take) or 17 (one this trace does not have).
source "$(dirname "$0")/../lib.sh"

cd "$T_TMP" || exit 1
"$REPLAY" synth -q -s seed-race -o sr.db || fail synth_setup "synth seed-race"
"$REPLAY" synth -q -s fleet --cgroups 20 --events 3000 -o fl.db || fail synth_setup "synth fleet"

# ---- --line: the kernel's name and memory.stat's names of one line ----
# memcg1_stat_format() prints NR_ANON_MAPPED as rss (total_rss for the
# subtree), memcg_stat_format() as anon; NR_FILE_PAGES as cache / file.
expect_exit line_kernel 0 "$REPLAY" events --line NR_ANON_MAPPED fl.db
want=$T_OUT
n=$(($(wc -l <<<"$want") - 1))
# every row an update (kind 1 or 2) of item 17, NR_ANON_MAPPED in the items table
other=$(awk -F, 'NR > 1 && !(($4 == 1 || $4 == 2) && $6 == 17)' <<<"$want" | head -1)
[ "$n" -gt 0 ] && [ -z "$other" ] && pass "line_kernel_rows ($n)" ||
	fail line_kernel_rows "$n rows, one of another line: '$other'"
for l in total_rss rss anon; do
	expect_exit line_$l 0 "$REPLAY" events --line $l fl.db &&
		{ [ "$T_OUT" = "$want" ] && pass line_${l}_same_as_kernel_name ||
			fail line_${l}_same_as_kernel_name "$(diff <(echo "$T_OUT") <(echo "$want") | head -3)"; }
done
expect_exit line_file_kernel 0 "$REPLAY" events --line NR_FILE_PAGES fl.db
want=$T_OUT
for l in cache total_cache file; do
	expect_exit line_$l 0 "$REPLAY" events --line $l fl.db &&
		{ [ "$T_OUT" = "$want" ] && pass line_${l}_same || fail line_${l}_same "differs"; }
done
# an event line: count_memcg_events only
expect_exit line_pgfault 0 "$REPLAY" events --line pgfault fl.db &&
	{ other=$(awk -F, 'NR > 1 && !($4 == 3 && $6 == 24)' <<<"$T_OUT" | head -1)
	  [ "$(wc -l <<<"$T_OUT")" -gt 1 ] && [ -z "$other" ] && pass line_pgfault_kind ||
		fail line_pgfault_kind "not only kind 3, item 24: '$other'"; }
expect_exit line_empty 2 "$REPLAY" events --line '' fl.db
expect_exit line_unknown 17 "$REPLAY" events --line no_such_line fl.db &&
	expect_match line_unknown_msg "--line: 'no_such_line' is neither a stat item" "$T_ERR"
# a memory.stat line of an item the trace has no updates of
expect_exit line_not_traced 17 "$REPLAY" events --line swap fl.db &&
	expect_match line_not_traced_msg "memory.stat's line of MEMCG_SWAP" "$T_ERR"
# a v2 name has no total_ twin
expect_exit line_total_v2 17 "$REPLAY" events --line total_anon fl.db

# ---- --cgroup: a path or an id ----
id=$(sqlite3 sr.db "SELECT id FROM cgroups WHERE path = '/leaf'" 2>/dev/null)
[ -n "$id" ] || id=100
expect_exit cgroup_id 0 "$REPLAY" events --cgroup "$id" sr.db
want=$T_OUT
[ "$(wc -l <<<"$want")" -gt 1 ] && pass cgroup_id_rows || fail cgroup_id_rows "no row"
expect_exit cgroup_path 0 "$REPLAY" events --cgroup /leaf sr.db &&
	{ [ "$T_OUT" = "$want" ] && pass cgroup_path_same_as_id || fail cgroup_path_same_as_id "differs"; }
expect_exit cgroup_root_path 0 "$REPLAY" events --cgroup / sr.db
expect_exit cgroup_root_id 0 "$REPLAY" events --cgroup 1 sr.db &&
	{ [ "$T_OUT" = "$(echo "$("$REPLAY" events --cgroup / sr.db)")" ] && pass cgroup_root_same ||
		fail cgroup_root_same "differs"; }
expect_exit cgroup_no_such_path 17 "$REPLAY" events --cgroup /no/such sr.db &&
	expect_match cgroup_no_such_path_msg "no cgroup '/no/such' in this trace" "$T_ERR"
expect_exit cgroup_word 2 "$REPLAY" events --cgroup leaf sr.db
expect_exit cgroup_zero 2 "$REPLAY" events --cgroup 0 sr.db
expect_exit cgroup_empty 2 "$REPLAY" events --cgroup '' sr.db

# ---- --from/--to: seconds from the start (meta capture_start_ns) ----
t0=$(sqlite3 sr.db "SELECT value FROM meta WHERE key = 'capture_start_ns'" 2>/dev/null)
[ -n "$t0" ] || t0=1000000
expect_exit from_s 0 "$REPLAY" events --from 0.001 --to 0.002 sr.db
want=$T_OUT
first=$(sed -n 2p <<<"$want" | cut -d, -f1)
last=$(tail -1 <<<"$want" | cut -d, -f1)
[ -n "$first" ] && ((first >= t0 + 1000000 && last <= t0 + 2000000)) &&
	pass "from_to_relative ($first..$last, start $t0)" ||
	fail from_to_relative "rows $first..$last, wanted within [$((t0 + 1000000)), $((t0 + 2000000))]"
for f in "1ms 2ms" "1000us 2000us" "1000000ns 2000000ns" "0.001s 0.002s"; do
	read -r a b <<<"$f"
	expect_exit "from_$a" 0 "$REPLAY" events --from "$a" --to "$b" sr.db &&
		{ [ "$T_OUT" = "$want" ] && pass "from_${a}_same" || fail "from_${a}_same" "differs"; }
done
expect_exit from_past_end 0 "$REPLAY" events --from 3600 sr.db &&
	{ [ "$(wc -l <<<"$T_OUT")" = 1 ] && pass from_past_end_header_only ||
		fail from_past_end_header_only "$(wc -l <<<"$T_OUT") lines"; }
for bad in -1 1x 1.5ns 1. .5 '' 1e3 9223372037s 18446744073709551616ns; do
	expect_exit "from_bad_${bad:-empty}" 2 "$REPLAY" events --from "$bad" sr.db
done
expect_exit to_bad 2 "$REPLAY" events --to 2h sr.db &&
	expect_match to_bad_msg "--to: not a time from the start of the trace" "$T_ERR"
expect_exit table_with_filter 2 "$REPLAY" events --table --from 1 sr.db

# ---- -q is --quiet, in every command that has it ----
cp sr.db q.db
expect_exit events_table_quiet 0 "$REPLAY" events --table -q q.db &&
	{ [ -z "$T_OUT" ] && pass events_table_quiet_silent || fail events_table_quiet_silent "$T_OUT"; }
for c in synth import replay validate report info events calibrate; do
	h=$("$REPLAY" $c --help 2>&1)
	q=$(grep -E '^ +-q,' <<<"$h")
	if [ -z "$q" ]; then
		grep -qE -- '--quiet' <<<"$h" && fail "q_is_quiet_$c" "--quiet without -q" ||
			pass "q_is_quiet_$c (no -q)"
	else
		grep -qE -- '^ +-q, --quiet' <<<"$q" && pass "q_is_quiet_$c" || fail "q_is_quiet_$c" "$q"
	fi
done
h=$("$CAPTURE" --help 2>&1)
q=$(grep -E '^ +-q,' <<<"$h")
[ -z "$q" ] || grep -qE -- '^ +-q, --quiet' <<<"$q" && pass q_is_quiet_capture ||
	fail q_is_quiet_capture "$q"
# report --cgroup and replay --series-cgroup take a path or an id, as events does
"$REPLAY" replay -q sr.db >/dev/null 2>&1 || fail report_cgroup_setup "replay sr.db"
leaf=$(sqlite3 sr.db "SELECT id || ' ' || path FROM cgroups WHERE path <> '/' ORDER BY id LIMIT 1")
"$REPLAY" report sr.db --cgroup "${leaf#* }" >by_path.txt 2>&1
expect_exit report_cgroup_id 0 "$REPLAY" report sr.db --cgroup "${leaf%% *}"
[ "$T_OUT" = "$(cat by_path.txt)" ] && pass report_cgroup_id_same ||
	fail report_cgroup_id_same "$(diff <(echo "$T_OUT") by_path.txt | head -5)"
expect_exit report_cgroup_id_unknown 17 "$REPLAY" report sr.db --cgroup 987654
expect_match report_cgroup_id_unknown_msg "no cgroup '987654' in this trace" "$T_ERR"
cp sr.db sr2.db
expect_exit replay_series_cgroup_id 0 "$REPLAY" replay -q sr2.db --series-cgroup "${leaf%% *}"
expect_exit replay_series_cgroup_id_unknown 17 "$REPLAY" replay -q sr2.db --series-cgroup 987654
t_done
