#!/usr/bin/env bash
# tests/cli/test_grid.sh - replay --batch LIST --cpus LIST: the lists' strict parsing and
# exit codes, the runs a grid makes, the report side by side, a grid of the trace's own
# values giving exactly the rows of a plain replay, and files of schema 2.
# The seed race (capture/synth_race.c; 4 CPUs, TH 64 x 4 = 256): under break the root's
# reads are skipped but not stale at b=64 (tests/cli/test_report.sh).  At b=32 (TH 32 x 4
# = 128, stranded limit 128 + 31 x 4 = 252) every +64 fills a batch: after the root's
# visit at 2.027 ms (atomic 0) the batches at 3.0 and 3.1 ms bring leaf to 192 and the
# root to 128; from 3.2 ms leaf is flushable and the break keeps the batches at 3.2, 3.3,
# 3.4 ms from the root, which stays at 128 = TH: the read at 4.0 ms is skipped with
# 5 x 64 = 320 pages pending since the root's visit (> 252): stale; the read at 5.0 ms
# too (+ 4.5 and 4.6 ms: 448).  On 16 CPUs TH is 512 or 1024: no stale read.
source "$(dirname "$0")/../lib.sh"

command -v sqlite3 >/dev/null || { skip grid_cli "sqlite3 command not installed (make deps)"; exit 0; }
q() { sqlite3 "$1" "$2"; }

DB=$T_TMP/sr.db
"$REPLAY" synth -q --scenario seed-race -o "$DB" || fail synth "seed-race"

# ---- parsing: exit 2 before the file is touched, one line on stderr ----
for bad in 0 -1 "" "32," ",32" "32,,64" "32,32" "32,032" x 3.5 65537 " 32"; do
	expect_exit "batch_bad_'$bad'" 2 "$REPLAY" replay --batch "$bad" "$DB"
	expect_match "batch_bad_msg_'$bad'" '--batch' "$T_ERR"
done
for bad in 0 -2 "" "2,2" "4,"  8193 abc; do
	expect_exit "cpus_bad_'$bad'" 2 "$REPLAY" replay --cpus "$bad" "$DB"
	expect_match "cpus_bad_msg_'$bad'" '--cpus' "$T_ERR"
done
# 3 policies x 5 batches x 5 CPU counts = 75 runs > 64
expect_exit grid_too_many 2 "$REPLAY" replay --batch 8,16,32,64,128 --cpus 1,2,3,4,5 "$DB"
expect_match grid_too_many_msg '^memcg-replay: 3 policies x 5 batches x 5 CPU counts make 75 runs; at most 64' "$T_ERR"
[ "$(q "$DB" "SELECT count(*) FROM runs")" = 0 ] && pass grid_refused_wrote_nothing ||
	fail grid_refused_wrote_nothing "$(q "$DB" "SELECT count(*) FROM runs")"
expect_exit grid_help 0 "$REPLAY" replay --help
expect_match grid_help_batch '--batch=N\[,N\.\.\.\]' "$T_OUT"
expect_match grid_help_cpus '--cpus=N\[,N\.\.\.\]' "$T_OUT"
expect_match grid_help_example 'replay --policy break,continue --batch 32,64,128 host.db' "$T_OUT"

# ---- a grid of one at the trace's own values: the rows of a plain replay ----
PLAIN=$T_TMP/plain.db ONE=$T_TMP/one.db
cp "$DB" "$PLAIN"
cp "$DB" "$ONE"
"$REPLAY" replay -q "$PLAIN" >"$T_TMP/plain.out" || fail replay plain
"$REPLAY" replay -q --batch 64 --cpus 4 "$ONE" >"$T_TMP/one.out" || fail replay one
sed "s|$PLAIN|F|g" "$T_TMP/plain.out" | sed -E 's/in [0-9.]+ s/in X s/' >"$T_TMP/a"
sed "s|$ONE|F|g" "$T_TMP/one.out" | sed -E 's/in [0-9.]+ s/in X s/' >"$T_TMP/b"
cmp -s "$T_TMP/a" "$T_TMP/b" && pass grid_one_summary_same || fail grid_one_summary_same "$(diff "$T_TMP/a" "$T_TMP/b" | head -5)"
rows() {	# every result row but the runs' times
	local t
	for t in reads read_errors stranded_episodes series cgroup_series cgroup_summary item_summary; do
		q "$1" "SELECT '$t', * FROM $t ORDER BY 2, 3, 4, 5, 6"
	done
	q "$1" "SELECT run_id, kind, policy, flush_model, params, events, updates, flushes, visits,
		walk_steps, pcpu_adds, atomic_adds, th, stranded_limit, batch_size, nr_cpus FROM runs"
}
rows "$PLAIN" | sed "s|$PLAIN|F|g" >"$T_TMP/a"
rows "$ONE" | sed "s|$ONE|F|g" >"$T_TMP/b"
cmp -s "$T_TMP/a" "$T_TMP/b" && pass grid_one_rows_same || fail grid_one_rows_same "$(diff "$T_TMP/a" "$T_TMP/b" | head -5)"
for fmt in table csv json; do
	# the table's verdict names the file
	"$REPLAY" report -f $fmt "$PLAIN" 2>&1 | sed "s|$PLAIN|F|g" >"$T_TMP/a"
	"$REPLAY" report -f $fmt "$ONE" 2>&1 | sed "s|$ONE|F|g" >"$T_TMP/b"
	cmp -s "$T_TMP/a" "$T_TMP/b" && pass "grid_one_report_$fmt" || fail "grid_one_report_$fmt" "$(diff "$T_TMP/a" "$T_TMP/b" | head -5)"
done
expect_exit plain_csv 0 "$REPLAY" report -f csv "$PLAIN"
expect_match plain_csv_header_unchanged '^policy,.*,max_pending,max_settled_error,max_flush_error,noticeable_episodes,v1_line,v2_line$' "$(head -1 <<<"$T_OUT")"
[ "$(q "$PLAIN" "SELECT group_concat(batch_size || 'x' || nr_cpus) FROM runs")" = "64x4,64x4,64x4" ] &&
	pass plain_runs_own || fail plain_runs_own "$(q "$PLAIN" "SELECT batch_size, nr_cpus FROM runs")"

# ---- a grid: break and continue at b=32,64 on 4 and 16 CPUs, one pass ----
GRID=$T_TMP/grid.db
cp "$DB" "$GRID"
expect_exit grid_replay 0 "$REPLAY" replay -q --policy break,continue --batch 32,64 --cpus 4,16 "$GRID"
expect_match grid_summary_label '^    break b=32 cpus=4 +2.00 MiB +NR_FILE_PAGES +2 of 2 ' "$T_OUT"
expect_match grid_summary_own '^    break b=64 cpus=4 +2.00 MiB +NR_FILE_PAGES +0 of 2 ' "$T_OUT"
expect_match grid_cost_header '^Cost per run:' "$T_OUT"
expect_match grid_cost_row '^  continue b=64 cpus=16 ' "$T_OUT"
got=$(q "$GRID" "SELECT group_concat(policy || ':' || batch_size || 'x' || nr_cpus || '=' || th || '/' || stranded_limit, ' ') FROM (SELECT * FROM runs ORDER BY run_id)")
want="break:32x4=128/252 break:32x16=512/1008 break:64x4=256/508 break:64x16=1024/2032 continue:32x4=128/252 continue:32x16=512/1008 continue:64x4=256/508 continue:64x16=1024/2032"
[ "$got" = "$want" ] && pass grid_runs_rows || fail grid_runs_rows "$got"
[ "$(q "$GRID" "SELECT count(DISTINCT events) FROM runs")" = 1 ] && pass grid_one_pass_events ||
	fail grid_one_pass_events "$(q "$GRID" "SELECT events FROM runs")"
# the root's reads: stale only at b=32 on 4 CPUs under break
got=$(q "$GRID" "SELECT group_concat(r.batch_size || 'x' || r.nr_cpus || '=' || g.stale_reads, ' ') FROM cgroup_summary g JOIN runs r USING (run_id) WHERE g.cgroup_id = 1 AND r.policy = 'break' ORDER BY r.run_id")
[ "$got" = "32x4=2 32x16=0 64x4=0 64x16=0" ] && pass grid_stale_only_b32 || fail grid_stale_only_b32 "$got"

expect_exit grid_report 0 "$REPLAY" report "$GRID"
# each line a matrix: policy and batch down, CPUs across, worst read error and stale reads
expect_match grid_report_matrix_title '^  NR_FILE_PAGES \(v1 total_cache, v2 file\): worst read error, stale reads of reads$' "$T_OUT"
expect_match grid_report_matrix_cols '^ +cpus=4 +cpus=16$' "$T_OUT"
expect_match grid_report_matrix_b32 '^    break b=32 +2.00 MiB 2/2 +2.00 MiB 0/2$' "$T_OUT"
expect_match grid_report_matrix_b64 '^    break b=64 +2.00 MiB 0/2 +2.00 MiB 0/2$' "$T_OUT"
expect_match grid_report_matrix_cont '^    continue b=64 +512 KiB 0/2 +2.00 MiB 0/2$' "$T_OUT"
expect_match grid_report_header 'the trace.s own *$' "$T_OUT"
expect_exit grid_csv 0 "$REPLAY" report -f csv "$GRID"
expect_match grid_csv_header '^policy,run_id,.*,max_pending,max_settled_error,max_flush_error,noticeable_episodes,v1_line,v2_line,batch_size,nr_cpus$' "$(head -1 <<<"$T_OUT")"
expect_match grid_csv_row '^break,1,.*,32,4$' "$T_OUT"
[ "$(tail -n +2 <<<"$T_OUT" | cut -d, -f1 | sort -u | tr '\n' ' ')" = "break continue " ] &&
	pass grid_csv_policy_column || fail grid_csv_policy_column "$(tail -n +2 <<<"$T_OUT" | cut -d, -f1 | sort -u)"
expect_exit grid_json 0 "$REPLAY" report -f json "$GRID"
if command -v python3 >/dev/null; then
	got=$(python3 -c 'import json,sys; r=json.load(sys.stdin); print(len(r), sorted({(x["policy"], x["batch_size"], x["nr_cpus"]) for x in r})[0])' <<<"$T_OUT")
	[ "$got" = "16 ('break', 32, 4)" ] && pass grid_json_valid || fail grid_json_valid "$got"
fi
expect_exit grid_html 0 "$REPLAY" report -f html -o "$T_TMP/grid.html" "$GRID"
grep -q 'continue b=64 cpus=16' "$T_TMP/grid.html" && pass grid_html_label || fail grid_html_label "no label"
expect_exit grid_info 0 "$REPLAY" info "$GRID"
expect_match grid_info_mark '^ +1 +replay +break .* b=32 cpus=4$' "$T_OUT"
# a plain replay after the grid: lag_report shows the latest run of each (policy, batch, cpus)
"$REPLAY" replay -q --policy break "$GRID" >/dev/null || fail replay "after grid"
[ "$(q "$GRID" "SELECT count(DISTINCT run_id) FROM lag_report")" = 8 ] && pass grid_lag_report_per_run ||
	fail grid_lag_report_per_run "$(q "$GRID" "SELECT DISTINCT run_id FROM lag_report")"
[ "$(q "$GRID" "SELECT max(run_id) FROM lag_report JOIN runs USING (run_id) WHERE runs.policy = 'break' AND batch_size = 64 AND nr_cpus = 4")" = 9 ] &&
	pass grid_lag_report_latest || fail grid_lag_report_latest "$(q "$GRID" "SELECT DISTINCT run_id FROM lag_report")"

# ---- validate keeps the trace's own values ----
expect_exit grid_validate 0 "$REPLAY" validate "$GRID"
[ "$(q "$GRID" "SELECT batch_size || 'x' || nr_cpus FROM runs WHERE kind = 'validate'")" = 64x4 ] &&
	pass grid_validate_own || fail grid_validate_own "$(q "$GRID" "SELECT batch_size, nr_cpus FROM runs WHERE kind = 'validate'")"

# ---- schema 2: runs without the grid's columns, views without them ----
V2=$T_TMP/v2.db
cp "$PLAIN" "$V2"
"$REPLAY" report -f csv "$PLAIN" >"$T_TMP/plain.csv"
cols="policy, run_id, flush_model, cgroup, cgroup_id, level, item, unit, reads, stale_reads, max_read_error, p99_read_error, mean_read_error, max_visible_error, mean_visible_error, max_error_age_ms, stranded_ms, stranded_episodes, max_pending"
q "$V2" "CREATE TABLE lr AS SELECT $cols FROM lag_report_all;
	DROP VIEW cgroup_lag_report; DROP VIEW lag_report; DROP VIEW lag_report_all;
	CREATE TABLE r2 AS SELECT run_id, kind, policy, flush_model, params, started_at, wall_s,
		events, updates, flush_requests, flushes, visits, walk_steps, pcpu_adds, atomic_adds,
		dropped_batches, atomic_resets, unknown_ids, sample_ns, th, stranded_limit,
		tool_version FROM runs;
	DROP TABLE runs;
	CREATE TABLE runs (run_id INTEGER PRIMARY KEY, kind TEXT NOT NULL, policy TEXT NOT NULL,
		flush_model TEXT, params TEXT, started_at TEXT, wall_s REAL, events INTEGER,
		updates INTEGER, flush_requests INTEGER, flushes INTEGER, visits INTEGER,
		walk_steps INTEGER, pcpu_adds INTEGER, atomic_adds INTEGER, dropped_batches INTEGER,
		atomic_resets INTEGER, unknown_ids INTEGER, sample_ns INTEGER, th INTEGER,
		stranded_limit INTEGER, tool_version TEXT);
	INSERT INTO runs SELECT * FROM r2; DROP TABLE r2;
	CREATE VIEW lag_report_all AS SELECT * FROM lr; CREATE VIEW lag_report AS SELECT * FROM lr;
	CREATE VIEW cgroup_lag_report AS SELECT * FROM lr; PRAGMA user_version = 2" ||
	fail v2_make "sqlite3"
expect_exit v2_report_reads 0 "$REPLAY" report -f csv "$V2"
# the same but the three columns later than schema 2, empty there
v2cut=$(cut -d, -f1-19 <<<"$T_OUT")
[ "$v2cut" = "$(cut -d, -f1-19 "$T_TMP/plain.csv")" ] && grep -q ',,,total_cache,file$' <<<"$T_OUT" &&
	pass v2_report_same || fail v2_report_same "$(diff <(echo "$T_OUT") "$T_TMP/plain.csv" | head -3)"
[ "$(q "$V2" "PRAGMA user_version")" = 2 ] && pass v2_report_read_only || fail v2_report_read_only "upgraded"
# the cost rows by lag_report's rule of the latest run, spelt in th and stranded_limit here
expect_exit v2_cost_latest 0 "$REPLAY" report --cost -f csv "$V2"
expect_match v2_cost_latest_runs '^1,2,3$' "$(awk -F, 'NR > 1 { print $1 }' <<<"$T_OUT" | paste -sd,)"
expect_exit v2_info 0 "$REPLAY" info "$V2"
expect_match v2_info_runs '^ +3 +replay +legacy .*Z$' "$T_OUT"
expect_exit v2_replay_upgrades 0 "$REPLAY" replay -q --policy break --batch 32 "$V2"
[ "$(q "$V2" "PRAGMA user_version")" = "$(q "$PLAIN" "PRAGMA user_version")" ] && pass v2_upgraded ||
	fail v2_upgraded "$(q "$V2" "PRAGMA user_version")"
got=$(q "$V2" "SELECT group_concat(run_id || ':' || batch_size || 'x' || nr_cpus, ' ') FROM runs")
[ "$got" = "1:64x4 2:64x4 3:64x4 4:32x4" ] && pass v2_runs_filled || fail v2_runs_filled "$got"
[ "$(q "$V2" "SELECT count(*) FROM item_summary WHERE run_id <= 3")" = "$(q "$PLAIN" "SELECT count(*) FROM item_summary")" ] &&
	pass v2_results_kept || fail v2_results_kept "$(q "$V2" "SELECT count(*) FROM item_summary")"
expect_exit v2_report_grid 0 "$REPLAY" report "$V2"
expect_match v2_report_grid_labels '^    break b=32 +2.00 MiB 2/2$' "$T_OUT"
expect_match v2_report_grid_legacy '^    legacy b=64 +[0-9.]+ [KM]iB 0/2$' "$T_OUT"

# ---- a grid of 15 runs: every line of its report within 100 columns (the verdict's
# sentences, before the first blank line, aside); it printed one line of ~1 300 columns per memory.stat line ----
G15=$T_TMP/g15.db
"$REPLAY" synth -q --scenario pagecache --duration 1 -o "$G15" || fail synth "pagecache"
expect_exit grid15_replay 0 "$REPLAY" replay -q --policy break --batch 16,32,64 --cpus 2,4,8,16,32 "$G15"
expect_exit grid15_report 0 "$REPLAY" report "$G15"
long=$(printf '%s\n' "$T_OUT" | sed '1,/^$/d' | awk 'length($0) > 100' | head -2)
[ -z "$long" ] && pass grid15_lines_short || fail grid15_lines_short "$long"
expect_match grid15_matrix '^    break b=64( +[0-9.]+ [KM]iB [0-9]+/[0-9]+){5}$' "$T_OUT"

# ---- the cost in time of a grid: every run labelled, each compared with break at its point ----
# At costs of 1 ns for every operation but the contended atomic add and the cold step (the
# trace's shared fraction: 0 on the seed race, one CPU at a time), a run's estimate is
# (walk_steps + pcpu_adds + checks + atomic_adds) / updates with checks = walk_steps
# (break, continue): the "vs break" column is that minus the break run's of the same point.
CAL=$T_TMP/ones.json
#              samples plain pcpu atomic contended check step cold
t_calibration "$CAL" 1 1 1 1 100 1 1 100
CG=$T_TMP/cost_grid.db
"$REPLAY" synth -q --scenario seed-race -o "$CG" || fail synth "seed-race"
expect_exit cost_grid_replay 0 "$REPLAY" replay -q --policy break,continue --batch 32,64 "$CG"
expect_exit cost_grid_csv 0 "$REPLAY" report --cost --format csv --calibration "$CAL" "$CG"
expect_match cost_grid_csv_header ',calibration,batch_size,nr_cpus$' "$(printf '%s\n' "$T_OUT" | head -1)"
got=$(printf '%s\n' "$T_OUT" | awk -F, 'NR > 1 { print $2 ":" $20 "x" $21 }' | paste -sd' ')
[ "$got" = "break:32x4 break:64x4 continue:32x4 continue:64x4" ] && pass cost_grid_runs || fail cost_grid_runs "$got"
want=$(sqlite3 -separator ' ' "$CG" "SELECT policy, batch_size, (2 * walk_steps + pcpu_adds + atomic_adds) * 1.0 / updates FROM runs ORDER BY policy, batch_size" |
	awk '{ v[$1 " " $2] = $3 } END { printf "%.2f %.2f", v["continue 32"] - v["break 32"], v["continue 64"] - v["break 64"] }')
expect_exit cost_grid_table 0 "$REPLAY" report --calibration "$CAL" "$CG"
got=$(printf '%s\n' "$T_OUT" | awk '$1 == "continue" && $3 ~ /^cpus=[0-9]+#/ { printf "%s%.2f", n++ ? " " : "", $(NF - 1) }')
[ -n "$want" ] && [ "$got" = "$want" ] && pass cost_grid_vs_break_same_point || fail cost_grid_vs_break_same_point "got '$got', want '$want'"
expect_match cost_grid_label '^  break b=32 cpus=4#[0-9]+ ' "$T_OUT"

t_done
