#!/usr/bin/env bash
# tests/cli/test_report.sh - memcg-replay report and info on the seed-race trace:
# formats (a CSV that round-trips a hostile cgroup path, JSON valid for it, an aligned
# table in pages and MiB), run and cgroup selection, and what info says.
# Figures by hand (capture/synth_race.c, tests/cli/test_replay.sh): the root reader's
# worst NR_FILE_PAGES error 512 pages (2.00 MiB) under break, not a stale read (448
# pages since the root's last flush <= 508); 128 pages (512 KiB) under continue; 35
# events: 9 updates,
# 4 flush requests, 2 flushes x 4 windows, 6 visits.
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
expect_match report_csv_header '^policy,run_id,flush_model,cgroup,cgroup_id,level,item,unit,reads,stale_reads,max_read_error,p99_read_error,mean_read_error,max_visible_error,mean_visible_error,max_error_age_ms,stranded_ms,stranded_episodes,max_pending,max_settled_error,max_flush_error,noticeable_episodes,v1_line,v2_line$' "$(printf '%s\n' "$T_OUT" | head -1)"
# latest of each policy: break 4, continue 5, legacy 3; 2 cgroups each, one line each
# (the leaf's NR_FILE_PAGES was visible while it was not flushable)
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
table=$T_OUT
expect_match report_table_cgroup '^/ \(id 1, level 0\): 2 reads$' "$table"
expect_match report_table_units '^  NR_FILE_PAGES \(v1 total_cache, v2 file\): break worst 2\.00 MiB, 0 stale; continue worst 512 KiB, 0 stale; legacy worst 512 KiB, 0 stale$' "$table"
# pending is a count of stats_updates units, never memory
expect_match report_table_pending_units 'max pending +sum of \|val\| not yet flushed, stats_updates units: not memory' "$table"
expect_match report_table_pending_count '^ +break +read p99 2\.00 MiB, .*; max pending 512$' "$table"
expect_exit report_worst_csv 0 "$REPLAY" report "$DB" --format csv --worst
expect_match report_worst_rows '^6$' "$(printf '%s\n' "$T_OUT" | awk 'NR > 1' | wc -l)"

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

# ---- a cgroup name that is not UTF-8 (the kernel takes any bytes) ----
# JSON, CSV and HTML are UTF-8 text: each byte that belongs to no well-formed
# sequence becomes U+FFFD (0xff; an overlong '/'; a surrogate; a code point
# above U+10FFFF; a sequence cut short: 12 bytes), valid ones stay.  JSON
# used to carry the raw bytes: invalid UTF-8, exit 0.
BAD=$T_TMP/nonutf8.db
cp "$DB" "$BAD"
sqlite3 "$BAD" "UPDATE cgroups SET path = '/bad' || CAST(X'FF' AS TEXT) || '/' ||
	CAST(X'C0AF' AS TEXT) || 'é' || CAST(X'EDA080F4908080E282' AS TEXT) WHERE id = 100"
want='/bad\ufffd/\ufffd\ufffdé'$(printf '\\ufffd%.0s' $(seq 9))
expect_exit report_nonutf8_json 0 "$REPLAY" report "$BAD" --format json -o "$T_TMP/nonutf8.json"
got=$(python3 -c 'import json, sys
rows = json.load(open(sys.argv[1], encoding="utf-8"))
print(sum(r["cgroup"] == json.loads("\"" + sys.argv[2] + "\"") for r in rows))' "$T_TMP/nonutf8.json" "$want" 2>&1)
expect_match report_nonutf8_json_valid '^3$' "$got"
expect_exit report_nonutf8_cost_json 0 "$REPLAY" report "$BAD" --cost --format json -o "$T_TMP/nonutf8-cost.json"
python3 -c 'import json, sys; json.load(open(sys.argv[1], encoding="utf-8"))' "$T_TMP/nonutf8-cost.json" &&
	pass report_nonutf8_cost_json_valid || fail report_nonutf8_cost_json_valid "not UTF-8 JSON"
expect_exit report_nonutf8_csv 0 "$REPLAY" report "$BAD" --format csv -o "$T_TMP/nonutf8.csv"
got=$(python3 -c 'import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], encoding="utf-8", newline="")))
print(sum(r["cgroup"] == json.loads("\"" + sys.argv[2] + "\"") for r in rows))' "$T_TMP/nonutf8.csv" "$want" 2>&1)
expect_match report_nonutf8_csv_utf8 '^3$' "$got"
# the page shows the cgroups that were read: the root here
cp "$DB" "$T_TMP/nonutf8-root.db"
sqlite3 "$T_TMP/nonutf8-root.db" "UPDATE cgroups SET path = '/bad' || CAST(X'FF' AS TEXT) || '/' ||
	CAST(X'C0AF' AS TEXT) || 'é' || CAST(X'EDA080F4908080E282' AS TEXT) WHERE id = 1"
expect_exit report_nonutf8_html 0 "$REPLAY" report "$T_TMP/nonutf8-root.db" --format html -o "$T_TMP/nonutf8.html"
python3 -c 'import sys; open(sys.argv[1], encoding="utf-8").read()' "$T_TMP/nonutf8.html" &&
	pass report_nonutf8_html_utf8 || fail report_nonutf8_html_utf8 "not UTF-8"
expect_match report_nonutf8_html_name '/bad&#xfffd;/&#xfffd;&#xfffd;é' "$(cat "$T_TMP/nonutf8.html")"

# ---- a cgroup whose events exist but whose row is gone: info, validate and report agree ----
NOROW=$T_TMP/norow.db
"$REPLAY" synth -q --scenario seed-race -o "$NOROW" && sqlite3 "$NOROW" "DELETE FROM cgroups WHERE id = 100"
expect_exit norow_validate 0 "$REPLAY" validate "$NOROW"
expect_match norow_validate_unknown '^cgroups of unknown parent: 1 ' "$T_OUT"
expect_exit norow_info 0 "$REPLAY" info "$NOROW"
expect_match norow_info_unknown 'cgroups: +2, max depth 0, 1 with unknown parent .*, 1 without a path$' "$T_OUT"
"$REPLAY" replay -q "$NOROW" >/dev/null || fail norow_replay "replay"
expect_exit norow_report 0 "$REPLAY" report "$NOROW"
expect_match norow_report_id '^  #100 \(id 100\)' "$T_OUT"
t_done
