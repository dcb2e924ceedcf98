#!/usr/bin/env bash
# tests/cli/test_report_hosts.sh - a report over several databases (issue 38):
# a file column beside the host column (CSV, JSON, the HTML fleet table), two
# captures of one host told apart ("host (file)" where two databases have one
# host's name: same host, same run ids), and the table's summary, one line per
# database: cgroups with stale reads, stale reads of reads and the worst read
# error under the traced kernel's policy and under continue.
source "$(dirname "$0")/../lib.sh"

cd "$T_TMP" || exit 1
"$REPLAY" synth -q -s pagecache --duration 2 -o pc.db || fail setup "synth pagecache"
"$REPLAY" replay -q pc.db >/dev/null || fail setup "replay pagecache"
"$REPLAY" synth -q -s seed-race -o a.db || fail setup "synth seed-race"
"$REPLAY" replay -q a.db >/dev/null || fail setup "replay seed-race"
mkdir -p other && cp a.db other/a.db	# a second capture of one host: same name, same runs

# ---- CSV and JSON: host, then file ----
expect_exit csv_two 0 "$REPLAY" report --format csv a.db other/a.db
expect_match csv_header '^host,file,policy,run_id,' "$(head -1 <<<"$T_OUT")"
expect_match csv_row_first '^synth:seed-race,a\.db,break,1,' "$T_OUT"
expect_match csv_row_second '^synth:seed-race,other/a\.db,break,1,' "$T_OUT"
expect_exit csv_cost 0 "$REPLAY" report --format csv --cost a.db other/a.db
expect_match csv_cost_header '^host,file,run_id,policy,' "$(head -1 <<<"$T_OUT")"
expect_exit json_two 0 "$REPLAY" report --format json a.db other/a.db
expect_match json_file '^ ?\{"host":"synth:seed-race","file":"other/a\.db","policy":' "$T_OUT"
if command -v python3 >/dev/null; then
	got=$(python3 -c 'import json,sys; print(sorted({r["file"] for r in json.load(sys.stdin)}))' <<<"$T_OUT")
	[ "$got" = "['a.db', 'other/a.db']" ] && pass json_files || fail json_files "$got"
fi
# one database: no host nor file column, as before
expect_exit csv_one 0 "$REPLAY" report --format csv a.db
expect_match csv_one_header '^policy,run_id,' "$(head -1 <<<"$T_OUT")"
# -o replaces a report of the new header without --force
"$REPLAY" report --format csv -o two.csv a.db other/a.db || fail setup "csv -o"
expect_exit csv_replaces_own 0 "$REPLAY" report --format csv -o two.csv a.db other/a.db

# ---- HTML: the fleet table labels two captures of one host apart, with a file column ----
expect_exit html_two 0 "$REPLAY" report --format html -o two.html a.db other/a.db pc.db
page=$(cat two.html)
expect_match html_file_th '<tr><th>host</th><th>file</th>' "$page"
expect_match html_label_first '<a href="#host-0">synth:seed-race \(a\.db\)</a></td><td>a\.db</td>' "$page"
expect_match html_label_second '<a href="#host-1">synth:seed-race \(other/a\.db\)</a></td><td>other/a\.db</td>' "$page"
# a host whose name no other database has keeps its name alone
expect_match html_label_alone '<a href="#host-2">synth:pagecache</a></td><td>pc\.db</td>' "$page"

# ---- the table: one summary line per database ----
expect_exit table_summary 0 "$REPLAY" report pc.db a.db other/a.db
expect_match summary_title '^Summary of 3 databases: cgroups with stale reads' "$T_OUT"
expect_match summary_header '^  host +file +policy +cgroups +stale/reads +worst \| *cgroups +stale/reads +worst$' "$T_OUT"
expect_match summary_pagecache '^  synth:pagecache +pc\.db +break +1 +19/20 +1\.89 GiB \| +0 +0/20 +13\.7 MiB$' "$T_OUT"
expect_match summary_first '^  synth:seed-race +a\.db +break +0 +0/2 +2\.00 MiB \| +0 +0/2 +512 KiB$' "$T_OUT"
expect_match summary_second '^  synth:seed-race +other/a\.db +break ' "$T_OUT"
# a run not in the report: its cells are "-"
expect_exit table_summary_break_only 0 "$REPLAY" report pc.db a.db --run 1
expect_match summary_no_continue '^  synth:pagecache +pc\.db +break +1 +19/20 +1\.89 GiB \| +- +- +-$' "$T_OUT"
# one database: no summary
expect_exit table_one 0 "$REPLAY" report pc.db
printf '%s\n' "$T_OUT" | grep -q '^Summary of' && fail table_one_no_summary "a summary for one database" ||
	pass table_one_no_summary
t_done
