#!/usr/bin/env bash
# --retry: where the inference missed recorded values after its cap dropped
# orders, a wider search from the start (the cap 4 times larger, never
# halved, over the 64 flushes up to each value missed, where no exact
# diagram is held) runs, and the pass is run again on its findings only
# where it misses fewer.  The pass kept here is the one a first pass at the
# wider cap gives (none halves its cap here, and what the narrow stretches
# keep is what decides at these reads): validate's counts and mismatch rows,
# and replay's result rows, are those of --max-hypotheses 12 --retry 0 where
# the first pass had 3.  A search given
# up (past its work, or missing more than three quarters as many values as
# the first pass by the same flush) leaves the first pass's results, and says
# so.
. "$(dirname "$0")/../lib.sh"

SRC=$T_TMP/hidden.db
# 32 CPUs, 1000 cgroups, 100 updates in each window at hidden times: three
# orders kept drop the kernel's at two reads, twelve at one
if ! "$REPLAY" synth --scenario fleet --hidden-order 1 --cpus 32 --cgroups 1000 \
	--window-updates 100 --events 400000 --reader-ms 13 --period-ms 26 -o "$SRC" -q \
	>/dev/null 2>&1; then
	skip retry "synth --hidden-order failed"
	t_done
fi

field() {	# json file, path
	sqlite3 :memory: "SELECT json_extract(readfile('$1'), '\$.$2')"
}

validation() {	# db: the validation counts and mismatches, run ids masked
	sqlite3 "$1" "SELECT stats_updates_match, needs_flush_match, compared, max_hypotheses,
		diff_hist FROM validation"
	sqlite3 "$1" "SELECT ts, cpu, cgroup_id, kernel_stats_updates, sim_stats_updates, cause
		FROM validation_mismatch ORDER BY ts, cpu"
}

check() {	# name, then validate options: exit 10 (below --min-match) and JSON into $T_TMP/name.json
	local name=$1
	shift
	cp "$SRC" "$T_TMP/$name.db"
	expect_exit "retry_${name}_exit" 10 "$REPLAY" validate -q -f json --cap-only "$@" \
		"$T_TMP/$name.db" && printf '%s\n' "$T_OUT" >"$T_TMP/$name.json"
}

check narrow -H 3 --retry 0
check wide -H 12 --retry 0
check kept -H 3
missed=$(field "$T_TMP/narrow.json" "causes.\"orders dropped by the cap\"")
wide=$(field "$T_TMP/wide.json" "causes.\"orders dropped by the cap\"")
echo "# orders dropped by the cap: -H 3 $missed, -H 12 $wide"
# the trace is one where the wider cap explains more: else nothing below is tested
[ "${missed:-0}" -gt "${wide:-0}" ] && pass retry_trace_needs_wider ||
	fail retry_trace_needs_wider "-H 3 $missed, -H 12 $wide"
[ -z "$(field "$T_TMP/narrow.json" retry)" ] && pass retry_zero_never ||
	fail retry_zero_never "$(field "$T_TMP/narrow.json" retry)"
got=$(field "$T_TMP/kept.json" "retry.search")
[ "$got" = kept ] && pass retry_kept || fail retry_kept "search '$got'"
got="$(field "$T_TMP/kept.json" "retry.first_missed_by_cap")|$(field "$T_TMP/kept.json" "retry.search_max_hypotheses")"
[ "$got" = "$missed|12" ] && pass retry_kept_first_counts || fail retry_kept_first_counts "$got"
# wide only over the 64 flushes up to each of the first pass's misses: some,
# not all, of the flushes it reached (46 here)
wide_n=$(field "$T_TMP/kept.json" "retry.search_flushes_wide")
reached=$(field "$T_TMP/kept.json" "retry.search_flushes_reached")
compared=$(field "$T_TMP/kept.json" "flush_events")
echo "# the search wide over $wide_n of $reached flushes (the trace's: $compared)"
[ "${wide_n:-0}" -gt 0 ] && [ "$wide_n" -le $((64 * missed)) ] && [ "$wide_n" -lt "$reached" ] &&
	[ "$reached" = "$compared" ] && pass retry_kept_wide_up_to_misses ||
	fail retry_kept_wide_up_to_misses "wide $wide_n of $reached (flushes $compared, misses $missed)"
if [ "$(validation "$T_TMP/kept.db")" = "$(validation "$T_TMP/wide.db")" ]; then
	pass retry_kept_rows_are_wider_pass
else
	fail retry_kept_rows_are_wider_pass "$(diff <(validation "$T_TMP/kept.db") \
		<(validation "$T_TMP/wide.db") | head -4)"
fi
[ "$(validation "$T_TMP/kept.db")" != "$(validation "$T_TMP/narrow.db")" ] &&
	pass retry_kept_rows_not_first || fail retry_kept_rows_not_first "the first pass's rows"
# the first pass's rows went with its transaction: one validation row, one run
got=$(sqlite3 "$T_TMP/kept.db" "SELECT (SELECT count(*) FROM validation),
	(SELECT count(*) FROM runs)")
[ "$got" = "1|1" ] && pass retry_kept_one_run || fail retry_kept_one_run "$got"

# the text says what ran, and that the results are the search's
cp "$SRC" "$T_TMP/t.db"
expect_exit retry_text 10 "$REPLAY" validate -q --cap-only -H 3 "$T_TMP/t.db"
expect_match retry_text_first "^first pass \(--max-hypotheses 3, no exact diagram\): $missed flushes missed as orders dropped by the cap, in [0-9.]+ s; a wider search from the start \(cap 12 over the 64 flushes up to each miss: [0-9]+ of the [0-9]+ it reached\) explained more in [0-9.]+ s: the results below are its$" "$T_OUT"
expect_match retry_text_cap '^hypotheses kept at most ([1-9]|1[0-2]) \(the wider search.s cap 12\)' "$T_OUT"

# given up at its work (a millionth of the first pass's): the first pass's results
check given_up -H 3 --retry 0.000001
got=$(field "$T_TMP/given_up.json" "retry.search")
[ "$got" = "given up: work" ] && pass retry_given_up || fail retry_given_up "search '$got'"
[ "$(validation "$T_TMP/given_up.db")" = "$(validation "$T_TMP/narrow.db")" ] &&
	pass retry_given_up_rows_first || fail retry_given_up_rows_first "rows differ"

# a wrong policy: a wider search misses about as many; given up once it had
# missed more than three quarters as many as the first pass by the same flush
cp "$SRC" "$T_TMP/l.db"
expect_exit retry_no_better 10 "$REPLAY" validate -q --cap-only -H 3 -p legacy "$T_TMP/l.db"
expect_match retry_no_better_msg 'a wider search from the start \(cap 12 over the 64 flushes up to each miss: [0-9]+ of the [0-9]+ it reached\) was given up, missing more than three quarters as many values as the first pass by the same flush, in [0-9.]+ s: the first pass.s results are kept$' "$T_OUT"
expect_match retry_no_better_cap '^hypotheses kept at most [1-3] \(--max-hypotheses 3\)' "$T_OUT"

# replay: the prepass's search, and the rows of the pass that follows its order
dump() {	# db: the result rows, the replayed file's name and the wall time masked
	local db=$1 cols t
	cols=$(sqlite3 "$db" 'PRAGMA table_info(runs)' | cut -d'|' -f2 |
	       grep -vE '^(wall_s|started_at)$' | paste -sd,)
	sqlite3 "$db" "SELECT $cols FROM runs ORDER BY run_id" | sed "s#$db#FILE#g"
	for t in reads read_errors cgroup_summary item_summary stranded_episodes; do
		echo "== $t"
		sqlite3 "$db" "SELECT * FROM $t"
	done
}
cp "$SRC" "$T_TMP/r1.db"
cp "$SRC" "$T_TMP/r8.db"
expect_exit retry_replay 0 "$REPLAY" replay -q -m inferred -s 0 -H 3 "$T_TMP/r1.db"
# the prepass misses what validate's list at the same cap does (no value before sync is a miss)
expect_match retry_replay_msg "^Inferred order: [0-9]+ updates inside lock windows placed, by break \(the traced kernel's policy\) in a wider search from the start \(cap 12 over the 64 flushes up to each miss: [0-9]+ of [0-9]+, [0-9.]+ s\): the first prepass \(-H 3, [0-9.]+ s\) missed $missed of the kernel's values after its cap dropped orders, the search [0-9]+\.$" "$T_OUT"
# given up at its work: the first order, and the replay says so
cp "$SRC" "$T_TMP/r0.db"
expect_exit retry_replay_given_up 0 "$REPLAY" replay -q -m inferred -s 0 -H 3 --retry 0.000001 \
	"$T_TMP/r0.db"
expect_match retry_replay_given_up_msg "^It missed [0-9]+ of the kernel's values after its cap dropped orders; a wider search from the start \\(cap 12 over the 64 flushes up to each miss: [0-9]+ of the [0-9]+ it reached\\) was given up past --retry times its work, in [0-9.]+ s: this order is kept\\.$" "$T_OUT"
expect_exit retry_replay_wide 0 "$REPLAY" replay -q -m inferred -s 0 -H 12 --retry 0 "$T_TMP/r8.db"
if [ "$(dump "$T_TMP/r1.db" | sed 's#r1\.db#FILE#g')" = "$(dump "$T_TMP/r8.db" | sed 's#r8\.db#FILE#g')" ]; then
	pass retry_replay_rows_are_wider_pass
else
	fail retry_replay_rows_are_wider_pass "$(diff <(dump "$T_TMP/r1.db" | sed 's#r1\.db#FILE#g') \
		<(dump "$T_TMP/r8.db" | sed 's#r8\.db#FILE#g') | head -4)"
fi
# ... which are not the first prepass's order's
cp "$SRC" "$T_TMP/r3.db"
expect_exit retry_replay_narrow 0 "$REPLAY" replay -q -m inferred -s 0 -H 3 --retry 0 "$T_TMP/r3.db"
[ "$(dump "$T_TMP/r1.db" | sed 's#r1\.db#FILE#g')" != "$(dump "$T_TMP/r3.db" | sed 's#r3\.db#FILE#g')" ] &&
	pass retry_replay_rows_not_first || fail retry_replay_rows_not_first "the first order's rows"

# the progress line on a terminal: a line of its own for each pass, named
# after it, in the order they ran (MCR_PROGRESS_MS=0: a line at every update,
# whatever the machine's speed)
passes() {	# name, command: the names of its progress lines, one per pass
	MCR_PROGRESS_MS=0 script -qec "$2" /dev/null </dev/null >"$T_TMP/$1.tty" 2>&1
	tr '\r' '\n' <"$T_TMP/$1.tty" | grep -aoE '^[a-z ]+: [0-9]+/[0-9]+ events' |
		sed 's/: .*//' | uniq | paste -sd,
}
if command -v script >/dev/null; then
	cp "$SRC" "$T_TMP/p.db"
	got=$(passes progress_validate "$REPLAY validate --cap-only -H 3 $T_TMP/p.db")
	[ "$got" = "validate,wider search,validate again" ] && pass retry_progress_validate ||
		fail retry_progress_validate "lines '$got'"
	cp "$SRC" "$T_TMP/p1.db"
	got=$(passes progress_replay "$REPLAY replay -m inferred -s 0 -H 3 -j 1 $T_TMP/p1.db")
	[ "$got" = "infer,replay,wider search,replay again" ] && pass retry_progress_replay ||
		fail retry_progress_replay "lines '$got'"
else
	skip retry_progress "script(1) not installed (bsdutils)"
fi

# bad values are refused
expect_exit retry_bad_value 2 "$REPLAY" validate --retry -1 "$T_TMP/t.db"
expect_match retry_bad_value_msg "retry: not a factor in \[0, 1000\]: '-1'" "$T_ERR"
expect_exit retry_bad_value_replay 2 "$REPLAY" replay --retry 3x "$T_TMP/t.db"
t_done
