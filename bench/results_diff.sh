#!/usr/bin/env bash
# bench/results_diff.sh A B: are the results of two replayed trace databases
# the same?  Every result table and view, its columns but runs' started_at,
# wall_s and tool_version (they differ from one invocation to the next):
# the same row count, no row of one missing from the other (compared by
# SQLite, every REAL to the bit), and the same text dump in the views' own
# order.  runs.params is compared without the file name.  Prints a line per table or view; exits 1 at the first difference.
set -eu
a=$1 b=$2
objs="runs reads read_errors stranded_episodes series cgroup_series cgroup_summary
      item_summary validation validation_mismatch lag_report_all lag_report
      cgroup_lag_report cost_report"
skip="'started_at', 'wall_s', 'tool_version'"
for t in $objs; do
	cols=$(sqlite3 "$a" "SELECT group_concat(CASE name WHEN 'params'
			     THEN 'json_remove(params, ''\$.file'')' ELSE printf('\"%w\"', name) END, ',') FROM pragma_table_info('$t')
			     WHERE name NOT IN ($skip)")
	[ -n "$cols" ] || { echo "$a: no $t"; exit 1; }
	read -r na nb ab ba < <(sqlite3 -separator ' ' "$a" "ATTACH '$b' AS b;
		SELECT (SELECT count(*) FROM main.$t), (SELECT count(*) FROM b.$t),
		       (SELECT count(*) FROM (SELECT $cols FROM main.$t EXCEPT SELECT $cols FROM b.$t)),
		       (SELECT count(*) FROM (SELECT $cols FROM b.$t EXCEPT SELECT $cols FROM main.$t))")
	same=yes
	[ "$na" = "$nb" ] && [ "$ab" = 0 ] && [ "$ba" = 0 ] || same=no
	# the views' own ORDER BY (reports print in it)
	case $t in
	lag_report|cgroup_lag_report|cost_report)
		cmp -s <(sqlite3 -cmd '.mode quote' "$a" "SELECT $cols FROM $t") \
		       <(sqlite3 -cmd '.mode quote' "$b" "SELECT $cols FROM $t") || same=no ;;
	esac
	printf '%-20s %9s rows: %s\n' "$t" "$na" "$same"
	[ $same = yes ] || { echo "$t differs: $na vs $nb rows, $ab only in $a, $ba only in $b"; exit 1; }
done
