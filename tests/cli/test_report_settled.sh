#!/usr/bin/env bash
# tests/cli/test_report_settled.sh - the report's visible error tells the
# policies apart (issue 38): the headline is the settled maximum (no flush in
# progress), the in-flush transient is shown apart and labelled, never as the
# headline; a stranded episode nobody could notice (no read skipped, < 1 ms)
# raises no flag; a sub-millisecond duration reads in µs, never "0.0 ms".
source "$(dirname "$0")/../lib.sh"

cd "$T_TMP" || exit 1

# pagecache under continue alone: its settled error is small, its in-flush
# transient tens of MiB (the same under every policy)
"$REPLAY" synth -q -s pagecache --duration 2 -o pc.db || fail setup "synth pagecache"
"$REPLAY" replay -q --policy continue pc.db >/dev/null || fail setup "replay pagecache"
expect_exit table_settled 0 "$REPLAY" report pc.db
expect_match table_settled_headline 'continue +read p99 .*; settled max [0-9.]+ [KM]iB, in flush [0-9.]+ MiB; visible mean' "$T_OUT"
printf '%s\n' "$T_OUT" | grep -q 'visible max' &&
	fail table_no_visible_max "the table still heads with 'visible max'" || pass table_no_visible_max
expect_match table_defines_in_flush 'in flush: the transient while one was' "$T_OUT"
expect_exit html_settled 0 "$REPLAY" report pc.db --format html -o pc.html
page=$(cat pc.html)
expect_match html_columns '<th>settled max</th><th>in flush <small>\(transient\)</small></th>' "$page"
# the chart's scale is the settled error's: the transient runs off it, labelled
expect_match html_transient_clipped '<svg x="[0-9]+" y="[0-9]+" width="[0-9]+" height="[0-9]+" viewBox="[0-9 ]+" overflow="hidden">' "$page"
expect_match html_transient_note 'Off the scale, clipped: the in-flush transient .* reaching [0-9.]+ MiB' "$page"
printf '%s\n' "$page" | grep -q '<th>visible max</th>' &&
	fail html_no_visible_max "the table still has a 'visible max' column" || pass html_no_visible_max

# The fleet: /cg7 stranded once, for about 0.2 ms, with no read skipped.
"$REPLAY" synth -q --scenario fleet --cgroups 16 --events 4000 --rate 100000 --reader-ms 2 \
	-o fl.db || fail setup "synth fleet"
"$REPLAY" replay -q fl.db >/dev/null || fail setup "replay fleet"
ep=$(sqlite3 fl.db "SELECT count(*) FROM stranded_episodes e JOIN runs r USING (run_id)
	WHERE r.policy = 'break' AND e.cgroup_id = 1007 AND e.reads_skipped = 0
	AND e.end_ts - e.start_ts < 1000000" 2>&1)
[ "$ep" = 1 ] && pass fixture_submillisecond || fail fixture_submillisecond "episodes: '$ep'"
expect_exit fleet_table 0 "$REPLAY" report fl.db --cgroup /cg7
expect_match fleet_not_noticeable 'break worst 2.00 MiB, 0 stale, stranded [0-9]+ µs in 1 episode, none noticeable' "$T_OUT"
expect_exit fleet_html 0 "$REPLAY" report fl.db --format html -o fl.html
page=$(cat fl.html)
h3=$(printf '%s\n' "$page" | grep '^<h3>/cg7 ')
[ -n "$h3" ] && pass fleet_html_cg7 || fail fleet_html_cg7 "no section for /cg7"
printf '%s\n' "$h3" | grep -q 'stranded' &&
	fail fleet_html_no_flag "a sub-ms episode with no stale read flagged: $h3" ||
	pass fleet_html_no_flag
printf '%s\n' "$page" | grep -q '0\.0 ms' &&
	fail fleet_html_no_zero_ms "a duration shown as 0.0 ms" || pass fleet_html_no_zero_ms
expect_match fleet_html_us '<td class="n">[0-9]+ µs <small>\(0 / 1\)</small>' "$page"
# the fleet summary counts only noticeably stranded cgroups: none here
"$REPLAY" synth -q -s seed-race -o sr.db && "$REPLAY" replay -q sr.db >/dev/null ||
	fail setup "seed-race"
expect_exit fleet_summary 0 "$REPLAY" report fl.db sr.db --format html -o two.html
expect_match fleet_summary_zero '<a href="#host-0">[^<]*</a></td><td>fl\.db</td><td class="n">0</td>' "$(cat two.html)"

# the threshold is documented
expect_exit help_threshold 0 "$REPLAY" report --help
expect_match help_noticeable 'noticeable: a stranded episode that skipped a read' "$T_OUT"
expect_match help_one_ms 'lasted at least 1 ms' "$T_OUT"
t_done
