#!/usr/bin/env bash
# tests/cli/test_results_damaged.sh - report on damaged result tables.  One
# flipped byte of item_summary turned a mean of 2.63 into 5.6e+96 and report
# printed it with exit 0: result rows were never checked.  Now every row of
# runs and lag_report_all is checked before any output (db/results_read.c
# says the rules) and a damaged one is refused with exit 15 (CORRUPT), the
# table, the row's key, the column and the value named.
source "$(dirname "$0")/../lib.sh"

command -v sqlite3 >/dev/null || { skip results_damaged "no sqlite3 shell"; t_done; }
cd "$T_TMP" || exit 1
"$REPLAY" synth -q -s seed-race -o good.db || fail synth_setup "synth failed"
"$REPLAY" replay -q good.db >/dev/null || fail replay_setup "replay failed"
row=$(sqlite3 good.db "SELECT run_id || ' ' || cgroup_id || ' ' || kind || ' ' || item
	FROM item_summary WHERE max_visible_error > 0 ORDER BY run_id, cgroup_id LIMIT 1")
read -r run cg kind item <<<"$row"
[ -n "${item:-}" ] || { fail results_damaged_setup "no item_summary row with an error"; t_done; }
key="run_id = $run AND cgroup_id = $cg"
ikey="$key AND kind = $kind AND item = $item"

for fmt in table csv json html; do
	expect_exit intact_$fmt 0 "$REPLAY" report --format $fmt -o "intact.$fmt" good.db
done

# damage NAME SQL REGEX: every format refuses the file, naming what REGEX says
damage() {
	local name=$1 sql=$2 re=$3 fmt
	cp good.db "$name.db"
	sqlite3 "$name.db" "$sql" || { fail "$name" "sqlite3: $sql"; return; }
	for fmt in table csv json html; do
		expect_exit ${name}_$fmt 15 "$REPLAY" report --format $fmt -o "$name.$fmt" "$name.db" &&
			expect_match ${name}_${fmt}_msg "$re.*a damaged result table \\(replay the file again\\)" "$T_ERR"
	done
}
damage mean_huge "UPDATE item_summary SET mean_visible_error = 5.62267936578003e+96 WHERE $ikey" \
	"item_summary row \\(run $run, cgroup $cg, [^)]*\\): mean_visible_error 5.62268e\\+96 above max_visible_error"
# info lists the runs: it says the tables are damaged too (not with --no-check)
expect_exit info_mean_huge 15 "$REPLAY" info mean_huge.db &&
	expect_match info_mean_huge_said 'the result tables are damaged: replay the file again' "$T_OUT" &&
	expect_match info_mean_huge_msg 'item_summary row .*: mean_visible_error 5.62268e\+96' "$T_ERR"
expect_exit info_mean_huge_no_check 0 "$REPLAY" info --no-check mean_huge.db
damage mean_read "UPDATE item_summary SET mean_read_error = max_read_error + 1 WHERE $ikey" \
	"item_summary row .*: mean_read_error .* above max_read_error"
damage p99 "UPDATE item_summary SET p99_read_error = max_read_error + 1 WHERE $ikey" \
	"item_summary row .*: p99_read_error .* above max_read_error"
damage max_negative "UPDATE item_summary SET max_visible_error = -5 WHERE $ikey" \
	"item_summary row .*: max_visible_error -5: negative"
damage max_text "UPDATE item_summary SET max_read_error = 'x7' WHERE $ikey" \
	"item_summary row .*: max_read_error 'x7': not an integer"
damage mean_inf "UPDATE item_summary SET mean_visible_error = 1e999 WHERE $ikey" \
	"item_summary row .*: mean_visible_error 'Inf': not a finite number"
damage age "UPDATE item_summary SET max_error_age_ms = 1e12 WHERE $ikey" \
	"item_summary row .*: max_error_age_ms 1e\\+12 above the trace's span"
damage stale "UPDATE cgroup_summary SET stale_reads = reads + 1 WHERE $key" \
	"cgroup_summary row .*: stale_reads .* above reads"
damage reads "UPDATE cgroup_summary SET reads = 1000000 WHERE $key" \
	"cgroup_summary row .*: reads 1000000 above the run's events"
damage stranded "UPDATE cgroup_summary SET stranded_ms = -1 WHERE $key" \
	"cgroup_summary row .*: stranded_ms '-1.0': not a finite number >= 0"
# the visible error's split (max_settled_error, max_flush_error) and noticeable_episodes
damage settled_above "UPDATE item_summary SET max_settled_error = max_visible_error + 1 WHERE $ikey" \
	"item_summary row .*: max_settled_error .* above max_visible_error"
damage flush_above "UPDATE item_summary SET max_flush_error = max_visible_error + 1 WHERE $ikey" \
	"item_summary row .*: max_flush_error .* above max_visible_error"
damage visible_above_both "UPDATE item_summary SET max_visible_error = max_visible_error + 1 WHERE $ikey" \
	"item_summary row .*: max_visible_error .* above max\\(max_settled_error, max_flush_error\\)"
damage settled_text "UPDATE item_summary SET max_settled_error = 'x7' WHERE $ikey" \
	"item_summary row .*: max_settled_error 'x7': not an integer"
damage noticeable_above "UPDATE cgroup_summary SET noticeable_episodes = stranded_episodes + 1 WHERE $key" \
	"cgroup_summary row .*: noticeable_episodes .* above stranded_episodes"
# NULL: a row written before the columns, not damage
cp good.db split_null.db
sqlite3 split_null.db "UPDATE item_summary SET max_settled_error = NULL, max_flush_error = NULL;
	UPDATE cgroup_summary SET noticeable_episodes = NULL"
expect_exit split_null_reads 0 "$REPLAY" report --format csv -o split_null.csv split_null.db
damage run_updates "UPDATE runs SET updates = events + 1 WHERE run_id = $run" \
	"runs row run_id $run: updates [0-9]+ above events"
damage run_flushes "UPDATE runs SET flushes = flush_requests + 1 WHERE run_id = $run" \
	"runs row run_id $run: flushes [0-9]+ above flush_requests"
damage run_batch "UPDATE runs SET batch_size = 0 WHERE run_id = $run" \
	"runs row run_id $run: batch_size 0 out of range"

# the page's charts read series: the sample lies within its interval's extremes
cp good.db series.db
# (the view series reads series_lines: each piece's first row damaged)
sqlite3 series.db "UPDATE series_lines SET rows = json_set(rows, '\$[0][0]',
	json_extract(rows, '\$[0][2]') + 7)" || fail series_setup "sqlite3"
expect_exit series_html 15 "$REPLAY" report --format html -o series.html series.db &&
	expect_match series_html_msg "series row \\(run [0-9]+, .*\\): error -?[0-9]+ outside its \\[min_error" "$T_ERR"

# a validate run's row: matches are compared events, compared ones flush events
if "$REPLAY" validate good.db >/dev/null 2>&1; then
	damage validation "UPDATE validation SET stats_updates_match = compared + 5" \
		"validation row run_id [0-9]+: stats_updates_match [0-9]+ above compared"
else
	fail validate_setup "validate good.db failed"
fi
t_done
