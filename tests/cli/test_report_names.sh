#!/usr/bin/env bash
# tests/cli/test_report_names.sh - the report names each line as memory.stat
# prints it too (issue 38), from sim/statlines.c's one table: the kernel item
# with cgroup v1's hierarchical line (total_*, as the errors are the subtree's)
# and v2's, in the table and on the page; CSV and JSON end each row with
# v1_line and v2_line (before a grid's batch_size, nr_cpus), empty or null
# where that version prints no line for the item.
source "$(dirname "$0")/../lib.sh"

cd "$T_TMP" || exit 1
"$REPLAY" synth -q -s pagecache --duration 2 -o pc.db || fail setup "synth"
"$REPLAY" replay -q pc.db >/dev/null || fail setup "replay"

expect_exit names_table 0 "$REPLAY" report pc.db --cgroup /
expect_match names_table_anon '^  NR_ANON_MAPPED \(v1 total_rss, v2 anon\): break worst ' "$T_OUT"
expect_match names_table_v2_only '^  MEMCG_KMEM \(v2 kernel\): break worst ' "$T_OUT"
expect_match names_table_events '^  PGFAULT \(v1 total_pgfault, v2 pgfault\) \(events\): break worst ' "$T_OUT"
expect_match names_verdict 'worst read error [0-9.]+ [KMG]iB \([0-9]+ pages\) of NR_FILE_PAGES \(v1 total_cache, v2 file\)$' "$T_OUT"

expect_exit names_csv 0 "$REPLAY" report pc.db --cgroup / --format csv
expect_match names_csv_header ',noticeable_episodes,v1_line,v2_line$' "$(head -1 <<<"$T_OUT")"
expect_match names_csv_anon '^break,1,[^,]*,/,1,0,NR_ANON_MAPPED,pages,.*,total_rss,anon$' "$T_OUT"
expect_match names_csv_kmem '^break,1,[^,]*,/,1,0,MEMCG_KMEM,pages,.*,,kernel$' "$T_OUT"
expect_exit names_json 0 "$REPLAY" report pc.db --cgroup / --format json
expect_match names_json_anon '"item":"NR_ANON_MAPPED",.*"noticeable_episodes":[0-9]+,"v1_line":"total_rss","v2_line":"anon"\}' "$T_OUT"
expect_match names_json_null '"item":"MEMCG_KMEM",.*"v1_line":null,"v2_line":"kernel"\}' "$T_OUT"

expect_exit names_html 0 "$REPLAY" report pc.db --format html -o pc.html
expect_match names_html_table '<td rowspan="3">NR_ANON_MAPPED<br><small>\(v1 total_rss, v2 anon\)</small></td>' "$(cat pc.html)"

# a grid: the names, then batch_size and nr_cpus
"$REPLAY" replay -q --policy break --batch 32 pc.db >/dev/null || fail setup "grid"
expect_exit names_grid_csv 0 "$REPLAY" report pc.db --format csv
expect_match names_grid_header ',v1_line,v2_line,batch_size,nr_cpus$' "$(head -1 <<<"$T_OUT")"
expect_match names_grid_row ',total_rss,anon,32,4$' "$T_OUT"
t_done
