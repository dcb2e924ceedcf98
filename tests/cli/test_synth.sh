#!/usr/bin/env bash
# tests/cli/test_synth.sh - synth -> replay -> report through the CLI and the database.
#
# Golden 1, seed-race (timeline and counters by hand in capture/synth_race.c):
#   root stuck at 256 under break: its two non-forced reads see stats_updates 256, do not
#   flush, miss 384 then 512 pages (> TH 256: 2 stale reads), max missing 512, stuck from
#   the fifth batch (3.3 ms) to the final flush's visit of leaf on CPU 1 (7.014333 ms):
#   3.714333 ms.  Under continue the sixth batch (3.4 ms) skips the flushable leaf and
#   credits the root (320 > 256), the read at 4 ms flushes, max missing 384 (at that read),
#   no stale read, stuck 0.1 ms (3.3 to 3.4 ms).
#
# Golden 2, pagecache with defaults.  R = 1024 MiB/s x 256 pages/MiB = 262144 pages/s.
#   break: every periodic forced flush (2, 4, 6, 8 s) goes ahead and the race recurs inside
#   it (its last window's leaf -> root gap >= 2 ms = 524 pages > TH + 4 x 63), so from the
#   root's last visit (<= 24 ms after the request) until the next forced flush the root gets
#   nothing from the leaf; the siblings give it <= 120 pages per period (< TH) and readers
#   skip.  Just before the next forced flush it misses >= R x (2 s - 24 ms) = 518,000 pages;
#   LOWER = R x 1.95 s = 511,180 leaves 1.3 % for jitter.  It cannot miss more than all the
#   pages since the previous forced flush's first window: UPPER = R x 2.05 s = 537,395.
#   The slope between two reads inside one stuck period is the page-cache rate: within 2 %.
#   continue: after the race the leaf's updates skip the leaf and credit the root, which
#   passes TH within TH + 4 x 63 = 508 pages (2 ms); the next reader (<= 100 ms) flushes.
#   So at most R x (100 ms reader interval + 24 ms of pages a flush leaves on CPUs it had
#   passed) + TH + 4 x 63 = 26,214 + 6,291 + 508 = 33,013 pages; and at least 0.9 x R x 100 ms
#   = 23,592 (every reader sees the interval's growth, whatever the policy).
#   When the race happens: the first reader (50 ms) finds root > TH and flushes; the race
#   is in that flush, which ends by 74 ms; series rows come at reads and every 100 ms, so
#   the first stuck row is before 0.25 s.
source "$(dirname "$0")/../lib.sh"

if ! "$REPLAY" replay --help >/dev/null 2>&1 || "$REPLAY" replay --help 2>&1 | grep -q "not built"; then
	skip synth_replay_golden "the replay command is not built yet"
	exit 0
fi
command -v sqlite3 >/dev/null || { skip synth_cli "sqlite3 command not installed (make deps)"; exit 0; }

# csv_get FILE POLICY CGROUP COLUMN: one value of the report CSV
csv_get() {
	awk -F, -v p="$2" -v c="$3" -v col="$4" '
		NR == 1 { for (i = 1; i <= NF; i++) idx[$i] = i; next }
		$1 == p && $4 == c { print $idx[col]; exit }' "$1"
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
num_check sr_break_root_max "$(csv_get "$T_TMP/sr.csv" break / max_missing_pages)" == 512
num_check sr_break_root_stale "$(csv_get "$T_TMP/sr.csv" break / stale_reads)" == 2
num_check sr_break_root_stale_max "$(csv_get "$T_TMP/sr.csv" break / stale_max_pages)" == 512
num_check sr_break_root_stuck_ms "$(csv_get "$T_TMP/sr.csv" break / stuck_ms)" == 3.714333
num_check sr_continue_root_max "$(csv_get "$T_TMP/sr.csv" continue / max_missing_pages)" == 384
num_check sr_continue_root_stale "$(csv_get "$T_TMP/sr.csv" continue / stale_reads)" == 0
num_check sr_continue_root_stuck_ms "$(csv_get "$T_TMP/sr.csv" continue / stuck_ms)" == 0.1

# the reads, in SQL: break never flushes the non-forced reads and sees the root at 256
q() { sqlite3 -batch -noheader "$SR" "$1"; }
expect_match sr_sql_break_reads '^2\|0\|256\|256$' "$(q "SELECT count(*), sum(flushed), min(sim_stats_updates),
	max(sim_stats_updates) FROM reads JOIN runs USING (run_id) WHERE policy = 'break' AND force = 0 AND cgroup_id = 1")"
expect_match sr_sql_continue_recovers '^1\|320\|0$' "$(q "SELECT flushed, sim_stats_updates, stale FROM reads
	JOIN runs USING (run_id) WHERE policy = 'continue' AND force = 0 AND cgroup_id = 1 ORDER BY ts LIMIT 1")"
expect_match sr_sql_kernel_values '^256\|0$' "$(q "SELECT DISTINCT kernel_stats_updates, kernel_needs_flush
	FROM reads WHERE force = 0")"
expect_match sr_sql_lag_report_view '^break\|512\|2$' "$(q "SELECT policy, max_missing_pages, stale_reads
	FROM lag_report WHERE cgroup = '/' AND policy = 'break'")"

expect_exit report_seed_race_json 0 "$REPLAY" report "$SR" --format json
printf '%s' "$T_OUT" >"$T_TMP/sr.json"
expect_match sr_json_root "^1\|512\|384$" "$(sqlite3 -batch :memory: "SELECT json_valid(j),
	(SELECT json_extract(value, '\$.max_missing_pages') FROM json_each(j) WHERE json_extract(value, '\$.policy') = 'break' AND json_extract(value, '\$.cgroup') = '/'),
	(SELECT json_extract(value, '\$.max_missing_pages') FROM json_each(j) WHERE json_extract(value, '\$.policy') = 'continue' AND json_extract(value, '\$.cgroup') = '/')
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
brk=$(csv_get "$T_TMP/pc.csv" break / max_missing_pages)
cont=$(csv_get "$T_TMP/pc.csv" continue / max_missing_pages)
num_check pc_break_root_max_lower "$brk" ">=" 511180
num_check pc_break_root_max_upper "$brk" "<=" 537395
num_check pc_continue_root_max_upper "$cont" "<=" 33013
num_check pc_continue_root_max_lower "$cont" ">=" 23592

q() { sqlite3 -batch -noheader "$PC" "$1"; }
brk_run=$(q "SELECT max(run_id) FROM runs WHERE kind = 'replay' AND policy = 'break'")
t0=$(q "SELECT value FROM meta WHERE key = 'capture_start_ns'")
first_stuck=$(q "SELECT (min(ts) - $t0) / 1e9 FROM series WHERE run_id = $brk_run AND cgroup_id = 1 AND stuck")
num_check pc_break_first_stuck_early "$first_stuck" "<=" 0.25
# slope of missing pages between the first and the last read inside the stuck period 2-4 s
slope=$(q "WITH r AS (SELECT ts, missing_pages FROM series WHERE run_id = $brk_run AND cgroup_id = 1
	AND reason = 'read' AND ts > $t0 + 2050000000 AND ts < $t0 + 3990000000 ORDER BY ts)
	SELECT ((SELECT missing_pages FROM r ORDER BY ts DESC LIMIT 1) - (SELECT missing_pages FROM r ORDER BY ts LIMIT 1)) * 1e9 /
	       ((SELECT ts FROM r ORDER BY ts DESC LIMIT 1) - (SELECT ts FROM r ORDER BY ts LIMIT 1))")
num_check pc_break_growth_is_pagecache_rate_lo "$slope" ">=" 256901
num_check pc_break_growth_is_pagecache_rate_hi "$slope" "<=" 267387
echo "# pagecache: root max missing break $brk pages, continue $cont pages;" \
	"first stuck (break) at ${first_stuck} s; growth while stuck ${slope} pages/s"
t_done
