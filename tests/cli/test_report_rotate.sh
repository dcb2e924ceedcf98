#!/usr/bin/env bash
# tests/cli/test_report_rotate.sh - a report over the files of a memcg-capture
# --rotate series reads as one timeline: with several databases CSV and JSON
# carry a start_ns column after host and file (meta capture_start_ns), and the
# files of one series (one host, one rotation_prefix) follow one another by
# rotation_index where the series' first file stands, whatever order the
# command line (a glob: "-1.db" sorts before ".db") gave them in; another
# database keeps its place, and without a --rotate file nothing changes.  The
# series is crafted: a replayed synth trace copied three times, its meta made
# that of a series.  memcg-replay info names a file's place in its series.
source "$(dirname "$0")/../lib.sh"

command -v sqlite3 >/dev/null || { skip report_rotate "no sqlite3 shell"; t_done; }
cd "$T_TMP" || exit 1
"$REPLAY" synth -q -s seed-race -o a.db || fail setup "synth seed-race"
"$REPLAY" replay -q a.db >/dev/null || fail setup "replay seed-race"
"$REPLAY" synth -q -s pagecache --duration 1 -o pc.db || fail setup "synth pagecache"
"$REPLAY" replay -q pc.db >/dev/null || fail setup "replay pagecache"
PC_START=$(sqlite3 pc.db "SELECT value FROM meta WHERE key = 'capture_start_ns'")
# series NAME INDEX START: a file of the series /cap/h1 of host h1
series() {
	cp a.db "$1"
	sqlite3 "$1" "INSERT OR REPLACE INTO meta VALUES ('host', 'h1'), ('rotation_index', '$2'),
		('rotation_prefix', '/cap/h1'), ('capture_start_ns', '$3'), ('capture_end_ns', '$(($3 + 1000))')
		$([ "$2" -gt 0 ] && echo ", ('rotation_prev', 'prev.db')")" || fail setup "meta of $1"
}
series h1-20260101T000001Z.db 0 5000
series h1-20260101T000001Z-1.db 1 6000
series h1-20260101T000002Z.db 2 7000
# the same host under another prefix: another series, its own place
series h1b.db 0 1000
sqlite3 h1b.db "UPDATE meta SET value = '/cap/other' WHERE key = 'rotation_prefix'"

# columns of CSV rows: host,file,start_ns of each (first row of each file)
files_of() { awk -F, 'NR > 1 && !seen[$2]++ { print $2 ":" $3 }' | tr '\n' ' '; }

expect_exit rotate_csv 0 "$REPLAY" report --format csv h1-*.db pc.db
expect_match rotate_csv_header '^host,file,start_ns,policy,run_id,' "$(head -1 <<<"$T_OUT")"
got=$(files_of <<<"$T_OUT")
want="h1-20260101T000001Z.db:5000 h1-20260101T000001Z-1.db:6000 h1-20260101T000002Z.db:7000 pc.db:$PC_START "
[ "$got" = "$want" ] && pass rotate_csv_order || fail rotate_csv_order "got '$got', wanted '$want'"
expect_match rotate_csv_row '^h1,h1-20260101T000001Z-1\.db,6000,break,1,' "$T_OUT"
# a database not of a series: its own capture_start_ns, empty where it has none
expect_match rotate_csv_other "^synth:pagecache,pc\\.db,$PC_START,break," "$T_OUT"
sqlite3 a.db "DELETE FROM meta WHERE key IN ('capture_start_ns', 'capture_end_ns')"
expect_exit rotate_csv_no_start 0 "$REPLAY" report --format csv h1-20260101T000002Z.db a.db
expect_match rotate_csv_no_start_empty '^synth:seed-race,a\.db,,break,' "$T_OUT"
expect_exit rotate_json_no_start 0 "$REPLAY" report --format json h1-20260101T000002Z.db a.db
expect_match rotate_json_no_start_null '"file":"a\.db","start_ns":null,' "$T_OUT"

# another database first keeps its place; the series follows where its first file stands
expect_exit rotate_csv_mixed 0 "$REPLAY" report --format csv pc.db h1-20260101T000002Z.db h1b.db \
	h1-20260101T000001Z.db h1-20260101T000001Z-1.db
got=$(files_of <<<"$T_OUT")
want="pc.db:$PC_START h1-20260101T000001Z.db:5000 h1-20260101T000001Z-1.db:6000 h1-20260101T000002Z.db:7000 h1b.db:1000 "
[ "$got" = "$want" ] && pass rotate_csv_mixed_order || fail rotate_csv_mixed_order "got '$got', wanted '$want'"

expect_exit rotate_cost 0 "$REPLAY" report --format csv --cost h1-*.db
expect_match rotate_cost_header '^host,file,start_ns,run_id,policy,' "$(head -1 <<<"$T_OUT")"
got=$(files_of <<<"$T_OUT")
want="h1-20260101T000001Z.db:5000 h1-20260101T000001Z-1.db:6000 h1-20260101T000002Z.db:7000 "
[ "$got" = "$want" ] && pass rotate_cost_order || fail rotate_cost_order "got '$got', wanted '$want'"

expect_exit rotate_json 0 "$REPLAY" report --format json h1-*.db
expect_match rotate_json_start '^\[\{"host":"h1","file":"h1-20260101T000001Z\.db","start_ns":5000,"policy":' "$T_OUT"
if command -v python3 >/dev/null; then
	got=$(python3 -c 'import json,sys
seen = []
for r in json.load(sys.stdin):
    k = "%s:%s" % (r["file"], r["start_ns"])
    if k not in seen: seen.append(k)
print(" ".join(seen))' <<<"$T_OUT")
	[ "$got" = "h1-20260101T000001Z.db:5000 h1-20260101T000001Z-1.db:6000 h1-20260101T000002Z.db:7000" ] &&
		pass rotate_json_order || fail rotate_json_order "$got"
fi

# the table: one section per file, in the series' order
expect_exit rotate_table 0 "$REPLAY" report h1-*.db
got=$(sed -n 's/^== host h1 (\(.*\))$/\1/p' <<<"$T_OUT" | tr '\n' ' ')
[ "$got" = "h1-20260101T000001Z.db h1-20260101T000001Z-1.db h1-20260101T000002Z.db " ] &&
	pass rotate_table_order || fail rotate_table_order "sections: $got"

# one file of a series alone has the series' columns: the service's
# report.csv keeps its shape from the first file on
expect_exit rotate_one_csv 0 "$REPLAY" report --format csv h1-20260101T000002Z.db
expect_match rotate_one_csv_header '^host,file,start_ns,policy,run_id,' "$(head -1 <<<"$T_OUT")"
expect_match rotate_one_csv_row '^h1,h1-20260101T000002Z\.db,7000,break,' "$T_OUT"
expect_exit rotate_one_cost 0 "$REPLAY" report --format csv --cost h1-20260101T000002Z.db
expect_match rotate_one_cost_header '^host,file,start_ns,run_id,policy,' "$(head -1 <<<"$T_OUT")"
expect_exit rotate_one_json 0 "$REPLAY" report --format json h1-20260101T000002Z.db
expect_match rotate_one_json_start '^\[\{"host":"h1","file":"h1-20260101T000002Z\.db","start_ns":7000,"policy":' "$T_OUT"
expect_exit norotate_one_csv 0 "$REPLAY" report --format csv pc.db
expect_match norotate_one_csv_header '^policy,run_id,' "$(head -1 <<<"$T_OUT")"

# -o replaces a report of the new header without --force
"$REPLAY" report --format csv -o r.csv h1-*.db || fail setup "csv -o"
expect_exit rotate_csv_replaces_own 0 "$REPLAY" report --format csv -o r.csv h1-*.db

# info says a file's place in its series
expect_exit rotate_info 0 "$REPLAY" info h1-20260101T000001Z-1.db
expect_match rotate_info_line '^rotation: +file 1 of the series /cap/h1-\*\.db, after prev\.db$' "$T_OUT"
expect_exit rotate_info_first 0 "$REPLAY" info h1-20260101T000001Z.db
expect_match rotate_info_first_line '^rotation: +file 0 of the series /cap/h1-\*\.db$' "$T_OUT"
expect_exit norotate_info 0 "$REPLAY" info pc.db
printf '%s\n' "$T_OUT" | grep -q '^rotation:' && fail norotate_info_no_line "a rotation line" ||
	pass norotate_info_no_line

# no --rotate file: the columns and order as before
expect_exit norotate_csv 0 "$REPLAY" report --format csv pc.db a.db
expect_match norotate_csv_header '^host,file,policy,run_id,' "$(head -1 <<<"$T_OUT")"
t_done
