#!/usr/bin/env bash
# tests/cli/test_report.sh - memcg-replay report and info on the seed-race trace:
# formats (a CSV that round-trips a hostile cgroup path, JSON valid for it, an aligned
# table in pages and MiB), run and cgroup selection, and what info says.
# Figures by hand (capture/synth_race.c): root max missing 512 pages under break,
# 384 under continue; 35 events: 9 updates, 4 flush requests, 2 flushes x 4 windows,
# 6 visits.
source "$(dirname "$0")/../lib.sh"

command -v sqlite3 >/dev/null || { skip report_cli "sqlite3 command not installed (make deps)"; exit 0; }

DB=$T_TMP/sr.db
"$REPLAY" synth -q --scenario seed-race -o "$DB" || fail synth "seed-race"

# ---- info before any run ----
expect_exit info_trace 0 "$REPLAY" info "$DB"
expect_match info_source '^source: +synth:seed-race$' "$T_OUT"
expect_match info_cpus 'CPUs: +4 online, 4 possible; TH = 64 x 4 = 256' "$T_OUT"
expect_match info_events '^events: +35$' "$T_OUT"
expect_match info_updates 'mod_memcg_lruvec_state +9$' "$T_OUT"
expect_match info_flushes 'memcg_flush_stats +4$' "$T_OUT"
expect_match info_locked 'cgroup_rstat_locked +8$' "$T_OUT"
expect_match info_visits 'flush_visit +6$' "$T_OUT"
expect_match info_cgroups 'cgroups: +2, max depth 1, 0 with unknown parent' "$T_OUT"
expect_match info_lost 'lost events: +0 gaps' "$T_OUT"
expect_match info_no_runs 'runs: +none yet' "$T_OUT"
expect_exit info_no_check 0 "$REPLAY" info --no-check "$DB"
expect_match info_no_check_events '^events: +35$' "$T_OUT"
expect_exit report_no_runs 18 "$REPLAY" report "$DB"
expect_match report_no_runs_msg '^memcg-replay: .*no replay results yet' "$T_ERR"

# ---- two replays: the default report shows the latest run of each policy ----
"$REPLAY" replay "$DB" >/dev/null || fail replay "first"
"$REPLAY" replay "$DB" --policy break,continue >/dev/null || fail replay "second"
expect_exit info_runs 0 "$REPLAY" info "$DB"
expect_match info_run_rows '^ +5 +replay +continue ' "$T_OUT"

expect_exit report_csv 0 "$REPLAY" report "$DB" --format csv
expect_match report_csv_header '^policy,run_id,flush_model,cgroup,cgroup_id,level,max_missing_pages,p50_missing_pages,p99_missing_pages,mean_missing_pages,max_age_ms,reads,stale_reads,stale_max_pages,stuck_ms$' "$(printf '%s\n' "$T_OUT" | head -1)"
# latest of each policy: break 4, continue 5, legacy 3; 2 cgroups each
expect_match report_default_latest '^3,4,5$' "$(printf '%s\n' "$T_OUT" | awk -F, 'NR > 1 { print $2 }' | sort -un | paste -sd,)"
expect_match report_csv_rows '^6$' "$(printf '%s\n' "$T_OUT" | awk 'NR > 1' | wc -l)"

expect_exit report_run_select 0 "$REPLAY" report "$DB" --format csv --run 1 --run 2,4
expect_match report_run_select_ids '^1,2,4$' "$(printf '%s\n' "$T_OUT" | awk -F, 'NR > 1 { print $2 }' | sort -un | paste -sd,)"
expect_exit report_cgroup_select 0 "$REPLAY" report "$DB" --format csv --cgroup /leaf
expect_match report_cgroup_only_leaf '^/leaf$' "$(printf '%s\n' "$T_OUT" | awk -F, 'NR > 1 { print $4 }' | sort -u)"
expect_exit report_unknown_run 17 "$REPLAY" report "$DB" --run 99
expect_match report_unknown_run_msg '^memcg-replay: .*no replay run 99' "$T_ERR"
expect_exit report_unknown_cgroup 17 "$REPLAY" report "$DB" --cgroup /nope
expect_match report_unknown_cgroup_msg "^memcg-replay: .*no cgroup '/nope'" "$T_ERR"
expect_exit report_bad_format 2 "$REPLAY" report "$DB" --format xml

# ---- table: aligned, human units ----
expect_exit report_table 0 "$REPLAY" report "$DB"
table=$(printf '%s\n' "$T_OUT" | awk 'NF && !/^Lag report/')
expect_match report_table_units '^/ +break +4/[a-z]+ +512 \(2\.0 MiB\)' "$table"
expect_match report_table_aligned '^1$' "$(printf '%s\n' "$table" | awk '{ print length($0) }' | sort -u | wc -l)"

# ---- a cgroup path with a comma, quotes and a line break ----
WEIRD=$T_TMP/weird.db
cp "$DB" "$WEIRD"
sqlite3 "$WEIRD" "UPDATE cgroups SET path = '/a,b \"c\"' || char(10) || 'd\\e' WHERE id = 100"
expect_exit report_weird_csv 0 "$REPLAY" report "$WEIRD" --format csv
printf '%s\n' "$T_OUT" >"$T_TMP/weird.csv"
# sqlite3's own CSV reader must get the path back exactly
got=$(sqlite3 -batch :memory: ".import --csv $T_TMP/weird.csv r" \
	"SELECT count(*) FROM r WHERE cgroup = '/a,b \"c\"' || char(10) || 'd\\e' AND policy = 'break'")
expect_match report_weird_csv_round_trip '^1$' "$got"
expect_exit report_weird_json 0 "$REPLAY" report "$WEIRD" --format json
printf '%s' "$T_OUT" >"$T_TMP/weird.json"
got=$(sqlite3 -batch :memory: "SELECT json_valid(j), (SELECT count(*) FROM json_each(j)
	WHERE json_extract(value, '\$.cgroup') = '/a,b \"c\"' || char(10) || 'd\\e') FROM (SELECT readfile('$T_TMP/weird.json') AS j)")
expect_match report_weird_json_valid '^1\|3$' "$got"
t_done
