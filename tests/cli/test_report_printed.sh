#!/usr/bin/env bash
# tests/cli/test_report_printed.sh - memory.stat as printed in the report (issue 35):
# where validate compared logged memory.stat reads with the simulation
# (stat_read_checks), the table says "memory.stat as printed: N of M reads
# within 2 units of the simulation" and, per cgroup, the worst error the kernel
# really printed (printed - truth); CSV and JSON gain printed_reads,
# printed_within2 and printed_max_error on the lines of the items read; the
# HTML page marks each logged read's printed - truth on the simulated error's
# chart, and lists the worst per cgroup and line.  The rows are written here by
# hand, by the table's rules, on a synthetic trace.
source "$(dirname "$0")/../lib.sh"

command -v sqlite3 >/dev/null || { skip report_printed "no sqlite3 shell"; t_done; }
cd "$T_TMP" || exit 1
"$REPLAY" synth -q -s pagecache --duration 2 -o pc.db || fail setup "synth"
"$REPLAY" replay -q pc.db >/dev/null || fail setup "replay"
cp pc.db plain.db
"$REPLAY" validate -q pc.db >/dev/null 2>&1
run=$(sqlite3 pc.db "SELECT max(run_id) FROM runs WHERE kind = 'validate'")
# the root's total_cache: an anchor, then exact (the kernel printed 500 pages
# short), within 2, off by 100 pages; total_pgfault: an anchor, exact (7 short)
sqlite3 pc.db "INSERT INTO stat_read_checks (run_id, flush_model, read, cgroup_id, name, unit,
	per, request_ts, printed, shown, truth, printed_error, diff, verdict, cause) VALUES
	($run, 'spread', 1, 1, 'total_cache', 'bytes', 4096, 1100000000, 4096000, 4096000, 4096000, 0, 0, 'anchor', NULL),
	($run, 'spread', 2, 1, 'total_cache', 'bytes', 4096, 1500000000, 4096000, 4096000, 6144000, -2048000, 0, 'exact', NULL),
	($run, 'spread', 3, 1, 'total_cache', 'bytes', 4096, 2000000000, 4104192, 4096000, 4096000, 8192, 2, 'within2', NULL),
	($run, 'spread', 4, 1, 'total_cache', 'bytes', 4096, 2500000000, 4505600, 4096000, 4096000, 409600, 100, 'off', NULL),
	($run, 'spread', 1, 1, 'total_pgfault', 'count', 1, 1100000000, 10, 10, 10, 0, 0, 'anchor', NULL),
	($run, 'spread', 2, 1, 'total_pgfault', 'count', 1, 1500000000, 20, 20, 27, -7, 0, 'exact', NULL)" ||
	fail setup "stat_read_checks rows"

expect_exit printed_table 0 "$REPLAY" report pc.db
expect_match printed_table_summary '^memory\.stat as printed: 3 of 4 printed lines within 2 units of the simulation$' "$T_OUT"
expect_match printed_table_causes '1 off: 0 a flush decided' "$(printf '%s\n' "$T_OUT" | tr '\n' ' ')"
expect_match printed_table_worst '^    / \(id 1\): -1\.95 MiB of total_cache at read 2; 2 of 3 reads of that line within 2 units$' "$T_OUT"

expect_exit printed_csv 0 "$REPLAY" report pc.db --format csv
expect_match printed_csv_header ',v1_line,v2_line,printed_reads,printed_within2,printed_max_error$' "$(head -1 <<<"$T_OUT")"
expect_match printed_csv_cache '^break,1,[^,]*,/,1,0,NR_FILE_PAGES,pages,.*,total_cache,file,3,2,-2048000$' "$T_OUT"
expect_match printed_csv_pgfault '^break,1,[^,]*,/,1,0,PGFAULT,events,.*,total_pgfault,pgfault,1,1,-7$' "$T_OUT"
expect_match printed_csv_none '^break,1,[^,]*,/,1,0,MEMCG_KMEM,pages,.*,,kernel,,,$' "$T_OUT"
expect_exit printed_json 0 "$REPLAY" report pc.db --format json
expect_match printed_json_cache '"item":"NR_FILE_PAGES",.*"v2_line":"file","printed_reads":3,"printed_within2":2,"printed_max_error":-2048000\}' "$T_OUT"
expect_match printed_json_null '"item":"MEMCG_KMEM",.*"printed_reads":null,"printed_within2":null,"printed_max_error":null\}' "$T_OUT"

expect_exit printed_html 0 "$REPLAY" report pc.db --format html -o pc.html
page=$(cat pc.html)
expect_match printed_html_summary '<p><b>memory\.stat as printed: 3 of 4 printed lines within 2 units of the simulation</b>' "$page"
expect_match printed_html_worst '<tr><td>/</td><td>total_cache</td><td class="n">-1\.95 MiB</td><td class="n">2</td><td class="n">2 / 3</td></tr>' "$page"
expect_match printed_html_legend '<i class="sq"></i>a logged read: what memory\.stat printed' "$page"
# the root's NR_FILE_PAGES chart: one marker per logged read but the anchor
marks=$(grep -o '<path class="printed" d="[^"]*"' pc.html | head -1 | grep -o 'M' | wc -l)
[ "$marks" = 3 ] && pass printed_html_markers || fail printed_html_markers "$marks markers"

# without logged reads: no such section nor columns
expect_exit plain_csv 0 "$REPLAY" report plain.db --format csv
expect_match plain_csv_header ',v1_line,v2_line$' "$(head -1 <<<"$T_OUT")"
expect_exit plain_table 0 "$REPLAY" report plain.db
printf '%s\n' "$T_OUT" | grep -q 'memory.stat as printed' && fail plain_no_section "a section" ||
	pass plain_no_section
# with several databases the columns are there for all, empty where none
expect_exit printed_two 0 "$REPLAY" report pc.db plain.db --format csv
expect_match printed_two_plain '^synth:pagecache,plain\.db,break,1,.*,NR_FILE_PAGES,.*,total_cache,file,,,$' "$T_OUT"

# a row that breaks the table's rules: the report refuses the file as damaged
cp pc.db bad.db
sqlite3 bad.db "UPDATE stat_read_checks SET diff = 3 WHERE read = 2 AND name = 'total_cache'"
expect_exit printed_damaged 15 "$REPLAY" report bad.db
expect_match printed_damaged_msg 'stat_read_checks row' "$T_ERR"
t_done
