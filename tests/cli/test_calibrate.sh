#!/usr/bin/env bash
# tests/cli/test_calibrate.sh - memcg-replay calibrate and the cost in time in report:
# exit codes and refused options, the calibration file's format (every operation, a
# positive median inside its spread: structure only, never a timing value), the
# database's calibration, cost_basis and cost_report, and report's cost columns equal to
# counts x costs for a calibration file of known costs.
# The expected estimate is derived here from the run's own counts (cost_report) and the
# trace's shared fraction (cost_basis), with the costs of the file below:
#   checks = walk_steps (break, continue) or atomic_adds + dropped_batches (legacy)
#   ns = walk_steps x 2 + pcpu_adds x 1 + checks x 0.5 + atomic_adds x (f x 50 + (1 - f) x 10)
#   est_ns_per_update = ns / updates; est_cpu_s_per_s = ns / trace_ns
#   est_ns_per_update_max = (walk_steps x 100 + pcpu_adds + checks x 0.5 + atomic_adds x 50) / updates
source "$(dirname "$0")/../lib.sh"

command -v sqlite3 >/dev/null || { skip calibrate_cli "sqlite3 command not installed (make deps)"; exit 0; }
command -v python3 >/dev/null || { skip calibrate_cli "python3 not installed (make deps)"; exit 0; }

# ---- options ----
expect_exit cal_help 0 "$REPLAY" calibrate --help
expect_match cal_help_leaves_out 'What it leaves out: the real kernel.s cache effects' "$T_OUT"
expect_match cal_help_proxies 'user-space proxy of a kernel operation' "$T_OUT"
expect_match cal_help_exit 'Exit status:' "$T_OUT"
expect_exit cal_bad_samples 2 "$REPLAY" calibrate --samples 2
expect_exit cal_bad_samples_word 2 "$REPLAY" calibrate --samples many
expect_exit cal_bad_window 2 "$REPLAY" calibrate --window-us 0
expect_exit cal_operand 2 "$REPLAY" calibrate some.db
expect_match cal_operand_msg 'no FILE operand' "$T_ERR"
expect_exit cal_from_alone 2 "$REPLAY" calibrate --from x.json
expect_exit cal_from_quick 2 "$REPLAY" calibrate --from x.json -o y.json --quick
expect_exit cal_unknown_option 2 "$REPLAY" calibrate --frobnicate

# ---- a measurement into a file ----
CAL=$T_TMP/calib.json
expect_exit cal_quick_file 0 "$REPLAY" calibrate --quick -o "$CAL"
expect_match cal_table_header 'operation +ns \(median\) +spread \(p10 - p90\) +x plain add' "$T_OUT"
expect_match cal_table_rows '^  walk_step_cold ' "$T_OUT"
if python3 - "$CAL" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
assert c["format"] == "memcg-replay-calibration" and c["version"] == 1
ops = ["plain_add", "pcpu_add", "atomic_add", "atomic_add_contended", "flushable_check",
       "walk_step", "walk_step_cold"]
assert sorted(c["ops"]) == sorted(ops), c["ops"].keys()
for o in ops:
    f = c["ops"][o]
    assert f["ns"] > 0 and f["lo_ns"] <= f["ns"] <= f["hi_ns"], (o, f)
assert c["cpus"] >= 1 and c["samples"] >= 3 and c["measured_at"]
PY
then pass cal_file_format; else fail cal_file_format "$(cat "$CAL")"; fi
expect_exit cal_replace_own_file 0 "$REPLAY" calibrate --quick -o "$CAL"
# -q is --quiet, as in every command: the file, nothing printed; alone it would show nothing
rm -f "$CAL"
expect_exit cal_quiet_file 0 "$REPLAY" calibrate -q --quick -o "$CAL"
[ -z "$T_OUT" ] && [ -s "$CAL" ] && pass cal_quiet_prints_nothing ||
	fail cal_quiet_prints_nothing "stdout: $(head -c 200 <<<"$T_OUT"); file: $(ls -l "$CAL" 2>&1)"
expect_exit cal_quiet_alone 2 "$REPLAY" calibrate --quiet --quick
expect_match cal_quiet_alone_msg 'give -o FILE or --db FILE' "$T_ERR"
echo "not a calibration" >"$T_TMP/notes.txt"
expect_exit cal_refuse_other_file 3 "$REPLAY" calibrate --quick -o "$T_TMP/notes.txt"
expect_match cal_refuse_other_file_msg 'not a memcg-replay database|--force' "$T_ERR"
expect_match cal_other_file_kept '^not a calibration$' "$(cat "$T_TMP/notes.txt")"
expect_exit cal_force_other_file 0 "$REPLAY" calibrate --quick --force -o "$T_TMP/notes.txt"
expect_exit cal_refuse_dir 3 "$REPLAY" calibrate --quick -o "$T_TMP"
expect_exit cal_refuse_missing_dir 3 "$REPLAY" calibrate --quick -o "$T_TMP/no/such/dir.json"

# ---- into a database ----
DB=$T_TMP/sr.db
"$REPLAY" synth -q --scenario seed-race -o "$DB" || fail synth seed-race
"$REPLAY" replay "$DB" >/dev/null || fail replay seed-race
expect_exit cal_db_missing 3 "$REPLAY" calibrate --quick --db "$T_TMP/none.db"
expect_exit cal_db_not_sqlite 4 "$REPLAY" calibrate --quick --db "$T_TMP/notes.txt"
echo '{"format": "memcg-replay-calibration", "version": 1, "ops": {}}' >"$T_TMP/bad.json"
expect_exit cal_from_bad 17 "$REPLAY" calibrate --from "$T_TMP/bad.json" --db "$DB"
expect_match cal_from_bad_msg 'not a memcg-replay calibration file' "$T_ERR"
expect_exit cal_from_missing 3 "$REPLAY" calibrate --from "$T_TMP/none.json" --db "$DB"

# ---- report before any calibration: counts only, and how to get one ----
cp "$DB" "$T_TMP/nocal.db"
expect_exit report_no_cal 0 "$REPLAY" report "$DB"
expect_match report_no_cal_says_how "No calibration: 'memcg-replay calibrate --db FILE'" "$T_OUT"
expect_exit report_no_cal_csv 0 "$REPLAY" report "$DB" --cost --format csv
expect_match report_cost_header '^run_id,policy,flush_model,updates,walk_steps,pcpu_adds,atomic_adds,dropped_batches,flushable_checks,atomic_shared_fraction,est_ns_per_update,est_ns_per_update_max,est_cpu_s_per_s,reads,stale_reads,stranded_cgroups,max_read_error_pages,max_read_error_events,calibration$' "$(printf '%s\n' "$T_OUT" | head -1)"
# break, continue, legacy: three runs, every estimate empty
expect_match report_no_cal_rows '^3$' "$(printf '%s\n' "$T_OUT" | awk 'NR > 1' | wc -l)"
expect_match report_no_cal_empty '^,,,$' "$(printf '%s\n' "$T_OUT" | awk -F, 'NR == 2 { print $11 "," $12 "," $13 "," $19 }')"
expect_match view_no_cal '^3\|0$' "$(sqlite3 "$DB" 'SELECT count(*), count(est_ns_per_update) FROM cost_report')"

# ---- a calibration of known costs ----
KNOWN=$T_TMP/known.json
#              samples plain pcpu atomic contended check step cold
t_calibration "$KNOWN" 3 0.25 1 10 50 0.5 2 100
expect_exit cal_from_db 0 "$REPLAY" calibrate --from "$KNOWN" --db "$DB"
expect_match cal_from_db_says_share 'atomic adds priced as contended: [0-9.]+ %' "$T_OUT"
expect_match cal_table_rows_db '^1\|7$' "$(sqlite3 "$DB" 'SELECT (SELECT count(*) FROM cost_basis), count(*) FROM calibration')"
basis=$(sqlite3 -separator ' ' "$DB" 'SELECT shared_fraction, trace_ns FROM cost_basis')
basis_ok=$(sqlite3 "$DB" "SELECT trace_ns > 0 AND shared_fraction BETWEEN 0 AND 1 AND updates = 9 FROM cost_basis")
expect_match cost_basis_sane '^1$' "$basis_ok"

# expected per run, from the view's own counts: run_id,checks,ns/update,max,cpu
expected=$(sqlite3 -separator ' ' "$DB" 'SELECT run_id, policy, updates, walk_steps, pcpu_adds, atomic_adds, dropped_batches FROM cost_report ORDER BY run_id' |
	awk -v b="$basis" 'BEGIN { split(b, x, " "); f = x[1]; span = x[2] }
	{ checks = ($2 == "legacy") ? $6 + $7 : $4
	  ns = $4 * 2 + $5 * 1 + checks * 0.5 + $6 * (f * 50 + (1 - f) * 10)
	  mx = $4 * 100 + $5 + checks * 0.5 + $6 * 50
	  printf "%d %d %.6f %.6f %.6e\n", $1, checks, ns / $3, mx / $3, ns / span }')
[ "$(printf '%s\n' "$expected" | wc -l)" = 3 ] && pass cost_expected_rows || fail cost_expected_rows "$expected"

# same_costs NAME CSV: the cost CSV's columns 1, 9, 11, 12, 13 equal the expected ones
same_costs() {
	local got
	got=$(printf '%s\n' "$2" | awk -F, 'NR > 1 { printf "%d %d %.6f %.6f %.6e\n", $1, $9, $11, $12, $13 }')
	if [ "$got" = "$expected" ]; then pass "$1"; else fail "$1" "got: $got; expected: $expected"; fi
}
view=$(sqlite3 -header -csv "$DB" 'SELECT run_id, policy, flush_model, updates, walk_steps, pcpu_adds, atomic_adds, dropped_batches, flushable_checks, atomic_shared_fraction, est_ns_per_update, est_ns_per_update_max, est_cpu_s_per_s FROM cost_report ORDER BY run_id')
same_costs view_equals_counts_x_costs "$view"
expect_exit report_cost_csv 0 "$REPLAY" report "$DB" --cost --format csv
same_costs report_csv_equals_counts_x_costs "$(printf '%s\n' "$T_OUT" | sort -t, -k1,1n)"
expect_match report_csv_names_source '^1,.*,database$' "$(printf '%s\n' "$T_OUT" | grep '^1,')"
# the same file given to report on the copy that has none
expect_exit report_calibration_file 0 "$REPLAY" report "$T_TMP/nocal.db" --cost --format csv --calibration "$KNOWN"
same_costs report_file_equals_counts_x_costs "$(printf '%s\n' "$T_OUT" | sort -t, -k1,1n)"
expect_exit report_cost_json 0 "$REPLAY" report "$DB" --cost --format json
if printf '%s\n' "$T_OUT" | python3 -c '
import json, sys
rows = json.load(sys.stdin)
assert len(rows) == 3 and all(r["est_ns_per_update"] > 0 for r in rows), rows
assert {r["policy"] for r in rows} == {"break", "continue", "legacy"}'; then
	pass report_cost_json_valid
else
	fail report_cost_json_valid "$(printf '%s' "$T_OUT" | head -c 300)"
fi
# --run selects; the table shows the section with the figures and what they leave out
expect_exit report_cost_run 0 "$REPLAY" report "$DB" --cost --format csv --run 2
expect_match report_cost_run_only '^2$' "$(printf '%s\n' "$T_OUT" | awk -F, 'NR > 1 { print $1 }' | paste -sd,)"
expect_exit report_cost_table 0 "$REPLAY" report "$DB"
expect_match report_table_costs_from 'Costs measured on test at 2026-01-01T00:00:00Z \(database\)' "$T_OUT"
# continue's ns per update less break's, as the table prints it (2 decimals)
want=$(printf '%s\n' "$expected" | awk '$1 == 1 { b = $3 } $1 == 2 { c = $3 } END { printf "%+.2f", c - b }')
expect_match report_table_continue_vs_break "^  continue#2 .* ${want//+/\\+} " "$T_OUT"
expect_match report_table_leaves_out 'leaves out the real kernel.s cache effects' "$T_OUT"
expect_exit report_bad_calibration 17 "$REPLAY" report "$DB" --calibration "$T_TMP/bad.json"
expect_exit report_missing_calibration 3 "$REPLAY" report "$DB" --calibration "$T_TMP/none.json"

# Absurd figures are refused when loaded, the field named (exit 17): a walk
# step of 1e308 ns printed "inf" into the JSON report, and a header count of
# 1e30 was converted to an unsigned int (undefined).
#                                  plain pcpu atomic contended check step cold
t_calibration "$T_TMP/big.json" 3 1e308 1 10 50 0.5 2 100
expect_exit report_cal_huge 17 "$REPLAY" report "$DB" --cost --format json --calibration "$T_TMP/big.json" &&
	expect_match report_cal_huge_msg 'ops\.plain_add\.ns = 1e\+308: above 1e\+06 ns' "$T_ERR"
[ -z "$T_OUT" ] && pass report_cal_huge_no_output || fail report_cal_huge_no_output "$(head -c 200 <<<"$T_OUT")"
cp "$T_TMP/nocal.db" "$T_TMP/nocal2.db"
expect_exit cal_from_huge 17 "$REPLAY" calibrate --from "$T_TMP/big.json" --db "$T_TMP/nocal2.db" &&
	expect_match cal_from_huge_msg 'ops\.plain_add\.ns = 1e\+308' "$T_ERR"
sed 's/"cpus": 4/"cpus": 1e30/' "$KNOWN" >"$T_TMP/cpus.json"
expect_exit report_cal_cpus 17 "$REPLAY" report "$DB" --cost --calibration "$T_TMP/cpus.json" &&
	expect_match report_cal_cpus_msg 'cpus = 1e\+30: not a whole number in \[0, 8192\]' "$T_ERR"
sed '0,/"lo_ns": 1,/s//"lo_ns": 3,/' "$KNOWN" >"$T_TMP/order.json"
expect_exit report_cal_order 17 "$REPLAY" report "$DB" --cost --calibration "$T_TMP/order.json" &&
	expect_match report_cal_order_msg 'ops\.pcpu_add: lo_ns 3 <= ns 1 <= hi_ns 1 does not hold' "$T_ERR"
# the same figure in the database's calibration table: refused, never "inf"
cp "$DB" "$T_TMP/dbcal.db"
sqlite3 "$T_TMP/dbcal.db" "UPDATE calibration SET ns = 1e308, hi_ns = 1e308 WHERE op = 'walk_step'"
for fmt in json csv table html; do
	expect_exit report_dbcal_huge_$fmt 17 "$REPLAY" report "$T_TMP/dbcal.db" --cost --format $fmt \
		-o "$T_TMP/dbcal.$fmt" &&
		expect_match report_dbcal_huge_${fmt}_msg 'calibration row op walk_step: ns 1e\+308' "$T_ERR"
done
# the page has the cost table without --cost: the same refusal, before the file is made
expect_exit report_dbcal_huge_page 17 "$REPLAY" report "$T_TMP/dbcal.db" --format html \
	-o "$T_TMP/dbcal-page.html" &&
	expect_match report_dbcal_huge_page_msg 'calibration row op walk_step' "$T_ERR"

# ---- the HTML page has the table (or says how to get one) ----
expect_exit html_cost 0 "$REPLAY" report "$DB" --format html -o "$T_TMP/sr.html"
expect_match html_cost_table '<table class="cost" id="cost-time">' "$(cat "$T_TMP/sr.html")"
expect_match html_cost_ns '<th>ns / update <small>\(max\)</small></th>' "$(cat "$T_TMP/sr.html")"
expect_exit html_no_cal 0 "$REPLAY" report "$T_TMP/nocal.db" --format html -o "$T_TMP/nocal.html"
expect_match html_no_cal_says_how 'No calibration in this database: <code>memcg-replay calibrate --db' "$(cat "$T_TMP/nocal.html")"
if command -v xmllint >/dev/null; then
	xmllint --html --noout "$T_TMP/sr.html" 2>"$T_TMP/xml.err" && pass html_cost_parses ||
		fail html_cost_parses "$(head -c 300 "$T_TMP/xml.err")"
fi
t_done
