#!/usr/bin/env bash
# tests/cli/test_visible_split.sh - the visible error split in the results
# (issue 38): "visible max" was the same under break, continue and legacy,
# since it was taken over flush transients.  item_summary keeps the largest
# visible error while no flush was in progress (max_settled_error) apart from
# the largest while one was (max_flush_error), and cgroup_summary counts the
# stranded episodes a reader could notice (noticeable_episodes: a read
# skipped, or >= 1 ms).  The numbers themselves are pinned by hand in
# tests/unit/test_sim_golden.c; here: they reach the tables and views, and a
# file whose results predate the columns still reads, and is upgraded by the
# next replay.
source "$(dirname "$0")/../lib.sh"

command -v sqlite3 >/dev/null || { skip visible_split "no sqlite3 shell"; t_done; }
cd "$T_TMP" || exit 1

"$REPLAY" synth -q -s pagecache --duration 2 -o pc.db || fail synth_setup "synth failed"
expect_exit replay_pagecache 0 "$REPLAY" replay -q pc.db
q() { sqlite3 pc.db "$1" 2>&1; }
# root's page cache line under each policy: settled | in flush | overall
for p in break continue; do
	read -r s f v <<<"$(q "SELECT max_settled_error, max_flush_error, max_visible_error
		FROM lag_report WHERE policy = '$p' AND cgroup = '/' AND item = 'NR_FILE_PAGES'" |
		tr '|' ' ')"
	eval "${p}_s=\${s:-x} ${p}_f=\${f:-x} ${p}_v=\${v:-x}"
done
if [[ $break_s =~ ^[0-9]+$ && $continue_s =~ ^[0-9]+$ && $continue_f =~ ^[0-9]+$ ]]; then
	pass visible_split_stored
	# the fix shows: continue's settled error a small fraction of break's
	((continue_s * 10 < break_s)) && pass settled_tells_policies_apart ||
		fail settled_tells_policies_apart "settled: break $break_s, continue $continue_s"
	# continue's worst visible error is its flush transient, not settled
	((continue_f > continue_s && continue_v == continue_f)) && pass flush_transient_apart ||
		fail flush_transient_apart "continue: settled $continue_s, in flush $continue_f, max $continue_v"
else
	fail visible_split_stored "break: '$break_s', continue: '$continue_s' '$continue_f'"
fi
# noticeable episodes are the ones with a read skipped or >= 1 ms, no more
want=$(q "SELECT group_concat(n, ',') FROM (SELECT count(*) AS n FROM stranded_episodes
	WHERE reads_skipped > 0 OR end_ts - start_ts >= 1000000 GROUP BY run_id, cgroup_id
	ORDER BY run_id, cgroup_id)")
got=$(q "SELECT group_concat(noticeable_episodes, ',') FROM (SELECT noticeable_episodes
	FROM cgroup_summary WHERE stranded_episodes > 0 ORDER BY run_id, cgroup_id)")
[ -n "$want" ] && [ "$want" = "$got" ] && pass noticeable_episodes_stored ||
	fail noticeable_episodes_stored "from stranded_episodes '$want', cgroup_summary '$got'"
# pagecache's break strands root for seconds, with stale reads: noticeable
n=$(q "SELECT noticeable_episodes FROM cgroup_lag_report WHERE policy = 'break' AND cgroup = '/'")
[ "${n:-0}" -gt 0 ] 2>/dev/null && pass pagecache_break_noticeable ||
	fail pagecache_break_noticeable "noticeable_episodes '$n'"

# Readers that never met a stranded root, and episodes shorter than 1 ms
# (flushes every 1 ms at 4 GiB/s): stranded, not noticeable, no red flag
"$REPLAY" synth -q -s pagecache --duration 1 --reader-ms 37 --period-ms 1 --flush-us 500 \
	--rate-mib 4096 -o short.db || fail synth_short "synth failed"
expect_exit replay_short 0 "$REPLAY" replay -q short.db
read -r reads stale eps notice <<<"$(sqlite3 short.db "SELECT reads, stale_reads, stranded_episodes,
	noticeable_episodes FROM cgroup_lag_report WHERE policy = 'break' AND cgroup = '/'" | tr '|' ' ')"
longest=$(sqlite3 short.db "SELECT max(end_ts - start_ts) FROM stranded_episodes s JOIN runs r
	USING (run_id) WHERE r.policy = 'break' AND s.cgroup_id = 1")
if [ "${eps:-0}" -gt 0 ] 2>/dev/null && [ "${reads:-0}" -gt 0 ] && [ "$stale" = 0 ] &&
   [ "${longest:-1000000}" -lt 1000000 ]; then
	[ "$notice" = 0 ] && pass "short_episodes_not_noticeable ($eps episodes, longest $longest ns, $reads reads)" ||
		fail short_episodes_not_noticeable "$notice of $eps noticeable"
else
	fail short_episodes_fixture "reads '$reads' stale '$stale' episodes '$eps' longest '$longest'"
fi

expect_exit csv_has_columns 0 "$REPLAY" report --format csv pc.db &&
	expect_match csv_header 'max_pending,max_settled_error,max_flush_error,noticeable_episodes' "$T_OUT"

# A file whose results a build before the columns wrote (seed-race replayed
# by it): its tables and views without them.
sqlite3 old.db <"$TOP/tests/data/seed-race-before-split.sql" || fail old_setup "could not load the dump"
n=$(sqlite3 old.db "SELECT count(*) FROM pragma_table_info('lag_report_all')
	WHERE name IN ('max_settled_error', 'max_flush_error', 'noticeable_episodes')")
[ "$n" = 0 ] && pass old_file_made || fail old_file_made "the old views have $n of the columns"
chmod a-w old.db
for fmt in table csv json html; do
	expect_exit old_reads_$fmt 0 "$REPLAY" report --format $fmt -o "old.$fmt" old.db
done
# (then the item's memory.stat lines, v1_line and v2_line)
expect_match old_csv_null_columns ",,,[a-z_]*,[a-z_]*$" "$(cat old.csv)"
chmod u+w old.db
# the next replay adds the columns, and fills them
expect_exit old_replayed 0 "$REPLAY" replay -q old.db
n=$(sqlite3 old.db "SELECT count(*) FROM item_summary WHERE max_settled_error IS NULL
	OR max_flush_error IS NULL")
m=$(sqlite3 old.db "SELECT count(*) FROM item_summary s JOIN runs r USING (run_id)
	WHERE r.run_id = (SELECT max(run_id) FROM runs) AND max_settled_error IS NOT NULL")
[ "$m" -gt 0 ] 2>/dev/null && pass old_upgraded ||
	fail old_upgraded "no filled max_settled_error after a replay ($n NULL, $m filled)"
expect_exit old_upgraded_reads 0 "$REPLAY" report --format csv old.db
t_done
