#!/usr/bin/env bash
# tests/cli/test_synth.sh - synth -> replay -> report through the CLI and the database.
#
# Golden 1, seed-race (timeline and counters by hand in capture/synth_race.c; the read
#   errors derived in tests/cli/test_replay.sh): the root reader's NR_FILE_PAGES error
#   under break is -384 at 4 ms and -512 at 5 ms, both skipped; neither is stale: the
#   updates since the root's last flush (448) never exceed TH + 63 x 4 = 508.
#   Under continue the read at 4 ms flushes (error 0); the one at 5 ms is skipped with
#   the 128 pages of two later updates in per-CPU counters: -128, not stale.
#
# Golden 2, pagecache with defaults, flush model spread.  R = 1024 MiB/s x 256 pages/MiB
#   = 262144 pages/s of NR_FILE_PAGES at the leaf.  Readers of the root every 100 ms from
#   50 ms; forced root flushes every 2 s.
#   break: the first reader finds the root flushable; the race happens in that flush and
#   in every periodic forced flush (its last window's leaf -> root gap >= 2 ms = 524 pages
#   > 508), so from the root's last visit (<= 24 ms after the request) the root gets
#   nothing of the leaf until the next forced flush, and every later read is skipped while
#   stranded: 99 stale reads of 100.  The read 1.95 s after a forced flush misses every
#   page since the root's last visit: >= R x (1.95 s - 24 ms) = 504,889 pages, and at
#   most every page since the forced flush's request: <= R x 1.95 s = 511,181.
#   continue: the root is never stranded at a read.  A skipped read misses what the
#   root's atomic and per-CPU counters hold back: <= TH + 63 x 4 = 508 pages.  A read
#   that flushes gets its value once the flush's windows are over (<= 24 ms): it misses
#   at most the pages of those 24 ms, R x 24 ms = 6,291, plus 508: <= 6,799.  So break's
#   worst is at least 504,889 / 6,799 = 74 times continue's.
#   When the race happens: the first reader (50 ms) flushes; the race is in that flush,
#   which ends by 74 ms, and 508 pages later (2 ms) the root is stranded: the first
#   stranded episode starts before 0.25 s.
#   The first stale read is the reader at 150 ms under break: the root's last visit in
#   the 50 ms flush came 50 to 74 ms into the trace, so the reader misses the pages of
#   76 to 100 ms: R x 76 ms = 19,923 <= -error <= R x 100 ms = 26,214.  Under continue
#   that reader flushes: |error| <= 6,799 as above.
#   Between two reads inside one stranded period the error grows at the page-cache
#   rate: within 2 %.
source "$(dirname "$0")/../lib.sh"

command -v sqlite3 >/dev/null || { skip synth_cli "sqlite3 command not installed (make deps)"; exit 0; }

# csv_get FILE POLICY CGROUP ITEM COLUMN: one value of the report CSV
csv_get() {
	awk -F, -v p="$2" -v c="$3" -v it="$4" -v col="$5" '
		NR == 1 { for (i = 1; i <= NF; i++) idx[$i] = i; next }
		$1 == p && $4 == c && $7 == it { print $idx[col]; exit }' "$1"
}
# num_check NAME VALUE OP BOUND: a numeric comparison (awk, so reals work)
num_check() {
	if awk -v v="$2" -v b="$4" -v op="$3" 'BEGIN {
		if (v == "") exit 1
		if (op == ">=") exit !(v + 0 >= b + 0)
		if (op == "<=") exit !(v + 0 <= b + 0)
		if (op == "==") exit !(v + 0 == b + 0)
		exit 1 }'; then
		pass "$1"
	else
		fail "$1" "$2 $3 $4 does not hold"
	fi
}

# ---- seed-race ----
SR=$T_TMP/sr.db
expect_exit synth_seed_race 0 "$REPLAY" synth --scenario seed-race -o "$SR"
expect_exit replay_seed_race 0 "$REPLAY" replay "$SR"
expect_exit report_seed_race_csv 0 "$REPLAY" report "$SR" --format csv
printf '%s\n' "$T_OUT" >"$T_TMP/sr.csv"
F=NR_FILE_PAGES
num_check sr_break_root_max "$(csv_get "$T_TMP/sr.csv" break / $F max_read_error)" == 512
num_check sr_break_root_stale "$(csv_get "$T_TMP/sr.csv" break / $F stale_reads)" == 0
num_check sr_break_root_reads "$(csv_get "$T_TMP/sr.csv" break / $F reads)" == 2
num_check sr_break_root_stranded_ms "$(csv_get "$T_TMP/sr.csv" break / $F stranded_ms)" == 0
num_check sr_break_root_episodes "$(csv_get "$T_TMP/sr.csv" break / $F stranded_episodes)" == 0
num_check sr_continue_root_max "$(csv_get "$T_TMP/sr.csv" continue / $F max_read_error)" == 128
num_check sr_continue_root_stale "$(csv_get "$T_TMP/sr.csv" continue / $F stale_reads)" == 0
num_check sr_continue_root_stranded_ms "$(csv_get "$T_TMP/sr.csv" continue / $F stranded_ms)" == 0

# the reads, in SQL: break never flushes the non-forced reads and sees the root at 256
q() { sqlite3 -batch -noheader "$SR" "$1"; }
expect_match sr_sql_break_reads '^2\|0\|256\|256$' "$(q "SELECT count(*), sum(flushed), min(sim_stats_updates),
	max(sim_stats_updates) FROM reads JOIN runs USING (run_id) WHERE policy = 'break' AND force = 0 AND cgroup_id = 1")"
expect_match sr_sql_continue_recovers '^1\|320\|0\|0$' "$(q "SELECT flushed, sim_stats_updates, stale, items_wrong
	FROM reads JOIN runs USING (run_id) WHERE policy = 'continue' AND force = 0 AND cgroup_id = 1 ORDER BY ts LIMIT 1")"
expect_match sr_sql_kernel_values '^256\|0$' "$(q "SELECT DISTINCT kernel_stats_updates, kernel_needs_flush
	FROM reads WHERE force = 0")"
expect_match sr_sql_lag_report_view '^break\|NR_FILE_PAGES\|pages\|512\|0$' "$(q "SELECT policy, item, unit,
	max_read_error, stale_reads FROM lag_report WHERE cgroup = '/' AND policy = 'break'")"
# the views' columns, in order
expect_match sr_sql_lag_report_columns '^policy,run_id,flush_model,cgroup,cgroup_id,level,item,unit,reads,stale_reads,max_read_error,p99_read_error,mean_read_error,max_visible_error,mean_visible_error,max_error_age_ms,stranded_ms,stranded_episodes,max_pending,max_settled_error,max_flush_error,noticeable_episodes$' \
	"$(q "SELECT group_concat(name, ',') FROM pragma_table_info('lag_report')")"
expect_match sr_sql_cgroup_lag_report_columns '^policy,run_id,flush_model,cgroup,cgroup_id,level,item,unit,reads,stale_reads,max_read_error,p99_read_error,mean_read_error,max_visible_error,mean_visible_error,max_error_age_ms,stranded_ms,stranded_episodes,max_pending,max_settled_error,max_flush_error,noticeable_episodes$' \
	"$(q "SELECT group_concat(name, ',') FROM pragma_table_info('cgroup_lag_report')")"
# one row per (policy, cgroup): 3 policies x 2 cgroups
expect_match sr_sql_cgroup_lag_report_rows '^6$' "$(q "SELECT count(*) FROM cgroup_lag_report")"

expect_exit report_seed_race_json 0 "$REPLAY" report "$SR" --format json
printf '%s' "$T_OUT" >"$T_TMP/sr.json"
expect_match sr_json_root "^1\|512\|128$" "$(sqlite3 -batch :memory: "SELECT json_valid(j),
	(SELECT json_extract(value, '\$.max_read_error') FROM json_each(j) WHERE json_extract(value, '\$.policy') = 'break' AND json_extract(value, '\$.cgroup') = '/'),
	(SELECT json_extract(value, '\$.max_read_error') FROM json_each(j) WHERE json_extract(value, '\$.policy') = 'continue' AND json_extract(value, '\$.cgroup') = '/')
	FROM (SELECT readfile('$T_TMP/sr.json') AS j)")"

# determinism through the CLI: same seed, same events; another seed, other events
for s in 7 7 8; do
	"$REPLAY" synth -q -s fleet --cgroups 50 --events 20000 --seed $s -o "$T_TMP/f$s.db" || fail synth_fleet "seed $s"
	"$REPLAY" events "$T_TMP/f$s.db" | md5sum >>"$T_TMP/sums"
done
if [ "$(sed -n 1p "$T_TMP/sums")" = "$(sed -n 2p "$T_TMP/sums")" ]; then
	pass synth_same_seed_same_events
else
	fail synth_same_seed_same_events "two runs with seed 7 differ"
fi
if [ "$(sed -n 1p "$T_TMP/sums")" != "$(sed -n 3p "$T_TMP/sums")" ]; then
	pass synth_other_seed_other_events
else
	fail synth_other_seed_other_events "seeds 7 and 8 gave the same events"
fi

# ---- pagecache with defaults ----
PC=$T_TMP/pc.db
expect_exit synth_pagecache 0 "$REPLAY" synth --scenario pagecache -o "$PC"
# the golden bounds below are for the spread model (synth places its visits that way)
expect_exit replay_pagecache 0 "$REPLAY" replay "$PC" -m spread
expect_exit report_pagecache_csv 0 "$REPLAY" report "$PC" --format csv --cgroup /
printf '%s\n' "$T_OUT" >"$T_TMP/pc.csv"
brk=$(csv_get "$T_TMP/pc.csv" break / $F max_read_error)
cont=$(csv_get "$T_TMP/pc.csv" continue / $F max_read_error)
num_check pc_break_root_worst_lower "$brk" ">=" 504889
num_check pc_break_root_worst_upper "$brk" "<=" 511181
num_check pc_continue_root_worst_upper "$cont" "<=" 6799
num_check pc_break_over_continue "$(awk -v b="$brk" -v c="$cont" 'BEGIN { print (c > 0 ? b / c : b) }')" ">=" 74
num_check pc_break_stale "$(csv_get "$T_TMP/pc.csv" break / $F stale_reads)" == 99
num_check pc_continue_stale "$(csv_get "$T_TMP/pc.csv" continue / $F stale_reads)" == 0

q() { sqlite3 -batch -noheader "$PC" "$1"; }
brk_run=$(q "SELECT max(run_id) FROM runs WHERE kind = 'replay' AND policy = 'break'")
t0=$(q "SELECT value FROM meta WHERE key = 'capture_start_ns'")
first_stranded=$(q "SELECT (min(start_ts) - $t0) / 1e9 FROM stranded_episodes WHERE run_id = $brk_run AND cgroup_id = 1")
num_check pc_break_first_stranded_early "$first_stranded" "<=" 0.25
# the first stale read: its NR_FILE_PAGES error, under break and continue
first_err() {	# run: stale|-error of the root's read at 150 ms
	q "SELECT r.stale, coalesce(-e.error, 0) FROM reads r LEFT JOIN read_errors e
		ON e.read_id = r.read_id AND e.kind = 1 AND e.item = (SELECT item FROM items WHERE name = '$F')
		WHERE r.run_id = $1 AND r.cgroup_id = 1 AND r.force = 0 AND r.ts > $t0 + 100000000
		ORDER BY r.ts LIMIT 1"
}
cont_run=$(q "SELECT max(run_id) FROM runs WHERE kind = 'replay' AND policy = 'continue'")
got=$(first_err "$brk_run")
expect_match pc_break_first_read_stale '^1\|' "$got"
num_check pc_break_first_stale_error_lower "${got#*|}" ">=" 19923
num_check pc_break_first_stale_error_upper "${got#*|}" "<=" 26214
got=$(first_err "$cont_run")
expect_match pc_continue_first_read_not_stale '^0\|' "$got"
num_check pc_continue_same_read_error "${got#*|}" "<=" 6799
num_check pc_continue_same_read_error_neg "${got#*|}" ">=" -6799
# slope of the root reader's error between the first and the last read of 2-4 s
slope=$(q "WITH r AS (SELECT r.ts, -e.error AS miss FROM reads r JOIN read_errors e USING (read_id)
	WHERE r.run_id = $brk_run AND r.cgroup_id = 1 AND e.kind = 1
	AND e.item = (SELECT item FROM items WHERE name = '$F')
	AND r.ts > $t0 + 2050000000 AND r.ts < $t0 + 3990000000)
	SELECT ((SELECT miss FROM r ORDER BY ts DESC LIMIT 1) - (SELECT miss FROM r ORDER BY ts LIMIT 1)) * 1e9 /
	       ((SELECT ts FROM r ORDER BY ts DESC LIMIT 1) - (SELECT ts FROM r ORDER BY ts LIMIT 1))")
num_check pc_break_growth_is_pagecache_rate_lo "$slope" ">=" 256901
num_check pc_break_growth_is_pagecache_rate_hi "$slope" "<=" 267387
# the series: 50 ms from the first event to the last, every (cgroup, line) the same count
got=$(q "SELECT count(DISTINCT n) = 1 AND min(n) = (SELECT (max(last_ts) - min(first_ts)) / 50000000 + 1
	FROM event_chunks)
	FROM (SELECT count(*) AS n FROM series WHERE run_id = $brk_run GROUP BY cgroup_id, kind, item)")
expect_match pc_series_no_gaps '^1$' "$got"
# a scenario option given more often than there are option names (64): each value is
# applied in order, the last one wins (before: a bus error past the 64th)
many=()
for i in $(seq 4 69); do many+=("--cgroups=$i"); done
expect_exit synth_many_options 0 "$REPLAY" synth -q -s fleet --events 2000 "${many[@]}" -o "$T_TMP/many.db" &&
	expect_match synth_many_options_last_wins '^69$' "$(sqlite3 "$T_TMP/many.db" "SELECT count(*) FROM cgroups")"
expect_exit synth_many_options_each_checked 2 "$REPLAY" synth -q -s fleet --events 2000 "${many[@]}" \
	--cgroups=x "${many[@]}" -o "$T_TMP/many.db" &&
	expect_match synth_many_options_each_checked_msg "cgroups=x: not a valid value" "$T_ERR"

echo "# pagecache: root $F worst read error break $brk pages, continue $cont pages;" \
	"first stranded (break) at ${first_stranded} s; growth while stranded ${slope} pages/s"
t_done
