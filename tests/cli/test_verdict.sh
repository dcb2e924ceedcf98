#!/usr/bin/env bash
# tests/cli/test_verdict.sh - report's verdict (cli/report/verdict.c): its first lines
# say, per database, which cgroups' readers got stale reads under the policy the traced
# kernel runs (synthetic traces: break), how often and how far off, what continue gave
# them and its cost; the HTML page's header and the fleet summary say the same;
# --fail-on-stale exits 21 (STALE) exactly when some database has such a cgroup.
#
# Expectations, from the scenarios (capture/synth_pagecache.c, capture/synth_race.c):
# - pagecache at its defaults: 10 s, a reader of the root every 100 ms from 50 ms on
#   (100 reads).  Under break the walk stops at the flushable leaf and never credits the
#   root: from the first forced flush's race on the root is stranded, so every read but
#   the first (at 50 ms, before any race) is stale: 99 of 100.  Its worst read error is
#   NR_FILE_PAGES, 508559 pages = 1.94 GiB, the page cache written in about 1.9 s.
#   Under continue the root is credited at every update: 0 of 100 reads stale, the worst
#   read 3506 pages (13.7 MiB) of per-CPU batching and flush windows.  Continue walks to
#   the root: 2.00 walk steps per update against break's 1.00.
# - the seed race at the trace's own batch 64 on 4 CPUs: 0 of the root's 2 reads stale
#   under break (the grid's b=32 cpus=4 run strands it, test_grid.sh: a what-if, not
#   the traced kernel's run).
# - a fleet (seed 2) whose root is stranded once for 0.065 ms that no reader met:
#   0 stale reads, no flag.
source "$(dirname "$0")/../lib.sh"

cd "$T_TMP" || exit 1
"$REPLAY" synth -q --scenario pagecache -o pc.db || fail synth pagecache
"$REPLAY" replay -q pc.db >/dev/null || fail replay pagecache
"$REPLAY" synth -q --scenario seed-race -o sr.db || fail synth seed-race
"$REPLAY" replay -q sr.db >/dev/null || fail replay seed-race
"$REPLAY" replay -q --policy break --batch 32 sr.db >/dev/null || fail replay "seed-race b=32"
"$REPLAY" synth -q --scenario fleet --seed 2 --cgroups 30 --events 20000 --rate 200000 \
	--reader-ms 2 -o fl.db || fail synth fleet
"$REPLAY" replay -q fl.db >/dev/null || fail replay fleet

# ---- pagecache: break 99 of 100 at the root, continue 0 ----
expect_exit verdict_pc 0 "$REPLAY" report pc.db
want="Verdict for synth:pagecache (pc.db): readers got stale memory.stat under break, the traced kernel's policy, in 1 cgroup:
  / (id 1): 99 of 100 reads stale; worst read error 1.94 GiB (508559 pages) of NR_FILE_PAGES (v1 total_cache, v2 file)
    under continue: 0 of 100 reads stale; worst read error 13.7 MiB (3506 pages) of NR_FILE_PAGES (v1 total_cache, v2 file)
  continue's cost: 2.00 walk steps per update against break's 1.00, 1200
  atomic adds against 194; no calibration to price them ('memcg-replay
  calibrate --db FILE')."
got=$(printf '%s\n' "$T_OUT" | sed -n '1,/^$/p')
[ "$got" = "$want" ] && pass verdict_pc_lines || fail verdict_pc_lines "$got"
expect_match verdict_pc_then_table '^Lag report: ' "$(printf '%s\n' "$T_OUT" | sed -n 8p)"

# with a calibration the cost is in time
t_calibration cal.json 3 0.25 1 10 50 0.5 2 100
expect_exit verdict_pc_cal 0 "$REPLAY" report pc.db --calibration cal.json
expect_match verdict_pc_cost_ns "^  continue's cost: \+[0-9.]+ ns per update against break \([0-9.]+ against [0-9.]+\)," "$T_OUT"

# the page's header
expect_exit verdict_pc_html 0 "$REPLAY" report pc.db --format html -o pc.html
expect_match verdict_pc_html_head '^<div class="verdict"><p><b>Readers got stale memory.stat under break, the traced kernel&#39;s policy, in 1 cgroup:</b></p>$' "$(cat pc.html)"
expect_match verdict_pc_html_root '^<li>/ \(id 1\): 99 of 100 reads stale; worst read error 1.94 GiB \(508559 pages\) of NR_FILE_PAGES \(v1 total_cache, v2 file\)<br><small>under continue: 0 of 100 reads stale;' "$(cat pc.html)"
[ "$(grep -n 'class="verdict' pc.html | cut -d: -f1)" -lt "$(grep -n '<section class="host"' pc.html | cut -d: -f1)" ] &&
	pass verdict_pc_html_first || fail verdict_pc_html_first "the verdict is not above the host's section"

# ---- the seed race: no stale read at the trace's own batch and CPUs ----
expect_exit verdict_sr 0 "$REPLAY" report sr.db
expect_match verdict_sr_line "^Verdict for synth:seed-race \(sr.db\): no stale read under break, the traced kernel's policy\.$" \
	"$(printf '%s\n' "$T_OUT" | head -1)"
expect_match verdict_sr_blank '^$' "$(printf '%s\n' "$T_OUT" | sed -n 2p)"
# the grid's b=32 run alone is no run of the traced kernel
grid_run=$(sqlite3 sr.db "SELECT max(run_id) FROM runs WHERE batch_size = 32")
expect_exit verdict_sr_grid_only 0 "$REPLAY" report sr.db --run "$grid_run"
expect_match verdict_sr_grid_only_line "^Verdict for synth:seed-race \(sr.db\): no run of break, the traced kernel's policy, at the trace's own batch and CPUs in this report: no verdict\.$" \
	"$(printf '%s\n' "$T_OUT" | head -1)"

# ---- a sub-millisecond stranded episode no reader met raises no flag ----
episode=$("$REPLAY" report fl.db --format csv --cgroup / |
	awk -F, '$1 == "break" && $17 > 0 && $17 < 1 && $10 == 0 { print "sub-ms"; exit }')
expect_match verdict_fl_fixture '^sub-ms$' "$episode"
expect_exit verdict_fl 0 "$REPLAY" report fl.db --fail-on-stale
expect_match verdict_fl_line "^Verdict for synth:fleet \(fl.db\): no stale read under break, the traced kernel's policy\.$" \
	"$(printf '%s\n' "$T_OUT" | head -1)"

# ---- a kernel whose policy is unknown: no verdict, no flag ----
cp sr.db old.db && sqlite3 old.db "UPDATE meta SET value = 'memcg-capture' WHERE key = 'source';
	UPDATE meta SET value = '5.10.0' WHERE key = 'kernel_release'"
expect_exit verdict_unknown 0 "$REPLAY" report old.db --fail-on-stale
expect_match verdict_unknown_line "^Verdict for old.db \(old.db\): the traced kernel's walk policy is unknown \(kernel 5\.10\.0\): no verdict\.$" \
	"$(printf '%s\n' "$T_OUT" | head -1)"

# ---- several databases: every host's verdict first; the page's fleet summary ----
expect_exit verdict_fleet 0 "$REPLAY" report pc.db sr.db
expect_match verdict_fleet_pc "^Verdict for synth:pagecache \(pc.db\): readers got stale" "$(printf '%s\n' "$T_OUT" | head -1)"
expect_match verdict_fleet_sr "^Verdict for synth:seed-race \(sr.db\): no stale read" "$(printf '%s\n' "$T_OUT" | sed -n 7p)"
# then the summary, one line per database, then each host
expect_match verdict_fleet_summary '^Summary of 2 databases: ' "$(printf '%s\n' "$T_OUT" | sed -n 9p)"
expect_match verdict_fleet_hosts_after '^== host synth:pagecache \(pc.db\)$' "$(printf '%s\n' "$T_OUT" | sed -n 15p)"
expect_exit verdict_fleet_html 0 "$REPLAY" report pc.db sr.db --format html
expect_match verdict_fleet_html_cols "<th>stale reads under the traced kernel's policy</th><th>under continue</th><th>continue's cost</th>" "$T_OUT"
expect_match verdict_fleet_html_pc '<td class="bad">/ \(id 1\): 99 of 100 reads stale; worst read error 1.94 GiB \(508559 pages\) of NR_FILE_PAGES \(v1 total_cache, v2 file\)</td><td>under continue: 0 of 100 reads stale;' "$T_OUT"
expect_match verdict_fleet_html_sr "synth:seed-race</a>.*<td>No stale read under break, the traced kernel&#39;s policy.</td><td></td><td></td></tr>" "$T_OUT"

# ---- --fail-on-stale, both ways ----
expect_exit fail_on_stale_pc 21 "$REPLAY" report pc.db --fail-on-stale
expect_match fail_on_stale_pc_msg "^memcg-replay: pc.db: stale reads under break, the traced kernel's policy, in 1 cgroup$" "$T_ERR"
expect_match fail_on_stale_pc_report '^Lag report: ' "$T_OUT"
expect_exit fail_on_stale_sr 0 "$REPLAY" report sr.db --fail-on-stale
[ -z "$T_ERR" ] && pass fail_on_stale_sr_quiet || fail fail_on_stale_sr_quiet "$T_ERR"
expect_exit fail_on_stale_fleet 21 "$REPLAY" report sr.db pc.db --fail-on-stale --format csv
expect_exit fail_on_stale_cost_json 21 "$REPLAY" report pc.db --fail-on-stale --cost --format json
expect_exit fail_on_stale_output 21 "$REPLAY" report pc.db --fail-on-stale --format html -o stale.html
[ -s stale.html ] && pass fail_on_stale_output_written || fail fail_on_stale_output_written "no stale.html"
expect_exit fail_on_stale_without 0 "$REPLAY" report pc.db --format csv
expect_exit fail_on_stale_help 0 "$REPLAY" report --help
expect_match fail_on_stale_help_option '--fail-on-stale +exit 21 \(STALE\)' "$T_OUT"

exit $T_FAILED
