#!/usr/bin/env bash
# tests/cli/test_item_units.sh - the unit of each report line is the unit its
# updates are traced in.  The kernel traces every mod_memcg_state and
# mod_memcg_lruvec_state val in pages (memcg_state_val_in_pages()), the items it
# counts in bytes (*_B) and kB (NR_KERNEL_STACK_KB) rounded: CSV, JSON and the
# views must say 'pages' beside those numbers, the table show them as memory.
# The file: a pagecache synth trace, replayed, then made as an earlier version
# wrote it: its items named as a real capture's slab and kernel-stack lines,
# labelled 'bytes' and 'kB', and lag_report_all taking the unit from that label.
source "$(dirname "$0")/../lib.sh"

command -v sqlite3 >/dev/null || { skip item_units_cli "sqlite3 command not installed (make deps)"; exit 0; }

DB=$T_TMP/pc.db
"$REPLAY" synth -q --scenario pagecache -o "$DB" || fail synth pagecache
"$REPLAY" replay "$DB" >/dev/null || fail replay pagecache
sq() { sqlite3 -batch "$1" "$2"; }

# what a report line's unit must be: the kind of the items it is named after
want_units() {
	sq "$1" "SELECT DISTINCT name || ',' || CASE kind WHEN 3 THEN 'events' ELSE 'pages' END
		 FROM items ORDER BY 1"
}
# CSV rows: every line's unit is its item's; prints the mismatches
csv_bad_units() {
	awk -F, 'NR == FNR { u[$1] = $2; next }
		 FNR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		 u[$c["item"]] != $c["unit"] { print $c["item"] "=" $c["unit"] }' \
		<(want_units "$1") <(printf '%s\n' "$2")
}
# JSON rows, read by SQLite: the same
json_bad_units() {
	printf '%s' "$2" >"$T_TMP/r.json"
	sqlite3 -batch "$1" "SELECT json_extract(j.value, '\$.item') || '=' || json_extract(j.value, '\$.unit')
		FROM json_each(readfile('$T_TMP/r.json')) j
		LEFT JOIN (SELECT DISTINCT name, CASE kind WHEN 3 THEN 'events' ELSE 'pages' END AS u
			   FROM items) i ON i.name = json_extract(j.value, '\$.item')
		WHERE i.u IS NOT json_extract(j.value, '\$.unit')"
}

# ---- as an earlier version wrote it ----
sq "$DB" "UPDATE items SET name = 'NR_SLAB_RECLAIMABLE_B', unit = 'bytes' WHERE name = 'NR_FILE_PAGES';
	  UPDATE items SET name = 'NR_KERNEL_STACK_KB', unit = 'kB' WHERE name = 'MEMCG_KMEM'" ||
	fail item_units_craft "items"
old_view=$(sq "$DB" "SELECT replace(sql, 'CASE s.kind WHEN 3 THEN ''events'' ELSE ''pages'' END AS unit',
	'COALESCE(i.unit, i2.unit, CASE s.kind WHEN 3 THEN ''events'' ELSE ''pages'' END) AS unit')
	FROM sqlite_master WHERE name = 'lag_report_all'")
sq "$DB" "DROP VIEW lag_report_all; $old_view" || fail item_units_craft "lag_report_all"
# the crafted file says what an old one said: bytes and kB beside page counts
expect_match item_units_crafted_old '^bytes,events,kB,pages$' \
	"$(sq "$DB" "SELECT DISTINCT unit FROM lag_report" | sort | paste -sd,)"
cp "$DB" "$T_TMP/old.db"

# ---- read as it is (report opens read-only) ----
expect_exit item_units_csv 0 "$REPLAY" report "$DB" --format csv
csv=$T_OUT
expect_match item_units_csv_has_rounded ',NR_SLAB_RECLAIMABLE_B,.*,NR_KERNEL_STACK_KB,' "$(printf '%s' "$csv" | awk -F, '{ printf ",%s", $7 }')"
bad=$(csv_bad_units "$DB" "$csv")
[ -z "$bad" ] && pass item_units_csv_match || fail item_units_csv_match "$(printf '%s' "$bad" | sort -u | paste -sd' ')"
expect_exit item_units_csv_all_runs 0 "$REPLAY" report "$DB" --format csv --run 1,2,3
bad=$(csv_bad_units "$DB" "$T_OUT")
[ -z "$bad" ] && pass item_units_csv_runs_match || fail item_units_csv_runs_match "$(printf '%s' "$bad" | sort -u | paste -sd' ')"
expect_exit item_units_csv_worst 0 "$REPLAY" report "$DB" --format csv --worst
bad=$(csv_bad_units "$DB" "$T_OUT")
[ -z "$bad" ] && pass item_units_worst_match || fail item_units_worst_match "$(printf '%s' "$bad" | sort -u | paste -sd' ')"
expect_exit item_units_json 0 "$REPLAY" report "$DB" --format json
bad=$(json_bad_units "$DB" "$T_OUT")
n=$(sqlite3 -batch :memory: "SELECT count(*) FROM json_each(readfile('$T_TMP/r.json'))")
[ -z "$bad" ] && [ "${n:-0}" -gt 10 ] && pass item_units_json_match ||
	fail item_units_json_match "$n rows; $(printf '%s' "$bad" | sort -u | paste -sd' ')"

# the table shows the same numbers as memory: the CSV's pages x page size
pages_str() {
	awk -v p="$1" -v ps="$2" 'BEGIN {
		split("B KiB MiB GiB TiB PiB", u, " "); v = p * ps; i = 1
		if (p == 0) { print "0"; exit }
		while (v >= 1024 && i < 6) { v /= 1024; i++ }
		printf(v >= 100 || i == 1 ? "%.0f %s\n" : v >= 10 ? "%.1f %s\n" : "%.2f %s\n", v, u[i]) }'
}
ps=$(sq "$DB" "SELECT value FROM meta WHERE key = 'page_size'")
expect_exit item_units_table 0 "$REPLAY" report "$DB"
table=$T_OUT
for item in NR_SLAB_RECLAIMABLE_B NR_KERNEL_STACK_KB; do
	n=$(printf '%s\n' "$csv" | awk -F, -v it="$item" '$1 == "break" && $4 == "/" && $7 == it { print $11 }')
	want=$(pages_str "$n" "$ps")
	expect_match "item_units_table_$item" "^  $item( \\([^)]*\\))?: break worst $want," "$table"
done
expect_match item_units_table_note '^  \*_B and NR_KERNEL_STACK_KB lines are page lines too: the kernel traces$' "$table"

expect_exit item_units_html 0 "$REPLAY" report "$DB" --format html -o "$T_TMP/r.html"
expect_match item_units_html_caption '^<figcaption>NR_SLAB_RECLAIMABLE_B \(v2 slab_reclaimable\) <small>pages, rounded by the kernel from bytes, shown in MiB</small>' \
	"$(grep -o '<figcaption>NR_SLAB_RECLAIMABLE_B ([^)]*) <small>[^<]*</small>' "$T_TMP/r.html")"

# report --cost: the worst read error of a page line counts the byte and kB lines
expect_exit item_units_cost 0 "$REPLAY" report "$DB" --cost --format csv
want=$(printf '%s\n' "$csv" | awk -F, 'NR > 1 && $8 != "events" && $2 == 1 && $11 > m { m = $11 } END { print m + 0 }')
got=$(printf '%s\n' "$T_OUT" | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	$1 == 1 { print $c["max_read_error_pages"] }')
[ "$got" = "$want" ] && [ "$want" -gt 1000 ] && pass item_units_cost_pages ||
	fail item_units_cost_pages "run 1 max_read_error_pages $got, wanted $want"
cmp -s "$DB" "$T_TMP/old.db" && pass item_units_read_only ||
	fail item_units_read_only "report changed the file"

# ---- a writer relabels the items: SQL on the file reads right ----
"$REPLAY" replay "$DB" --policy break >/dev/null || fail item_units_replay "replay"
expect_match item_units_relabelled '^0$' "$(sq "$DB" "SELECT count(*) FROM items WHERE unit IN ('bytes', 'kB')")"
expect_match item_units_sql_views '^events,pages$' \
	"$(sq "$DB" "SELECT unit FROM lag_report_all UNION SELECT unit FROM cgroup_lag_report" | sort | paste -sd,)"
expect_match item_units_sql_items "^$(want_units "$DB" | paste -sd' ')\$" \
	"$(sq "$DB" "SELECT DISTINCT name || ',' || unit FROM items ORDER BY 1" | paste -sd' ')"

# ---- a file without such lines prints as before: no note ----
"$REPLAY" synth -q --scenario seed-race -o "$T_TMP/plain.db" && "$REPLAY" replay "$T_TMP/plain.db" >/dev/null ||
	fail item_units_plain "synth seed-race"
expect_exit item_units_plain_table 0 "$REPLAY" report "$T_TMP/plain.db"
if printf '%s\n' "$T_OUT" | grep -q 'NR_KERNEL_STACK_KB lines'; then
	fail item_units_plain_no_note "note printed without a *_B or *_KB line"
else
	pass item_units_plain_no_note
fi

t_done
