#!/usr/bin/env bash
# series and cgroup_series as replay writes them: every row the man page
# promises (a row per sample from the first event to the last, no gap, for
# every (run, cgroup, line); error between min_error and max_error), a second
# replay into the same file appends runs whose rows are the first's, and the
# replay writes its rows once: the bytes of its write calls stay close to
# what the file grew by (pages rewritten at every cache spill made them 2.5
# times the growth here).
. "$(dirname "$0")/../lib.sh"

SRC=$T_TMP/fleet.db
# 1000 cgroups, 8 CPUs, 1 s of trace: 333 samples at 3 ms of about 3400 series lines
if ! "$REPLAY" synth --scenario fleet --events 1000000 -o "$SRC" -q >/dev/null 2>&1; then
	skip series_rows "synth --scenario fleet failed"
	t_done
fi
DB=$T_TMP/t.db
cp "$SRC" "$DB"
before=$(stat -c %s "$DB")
IO_STAT=$BIN/bench/io_stat
if [ -x "$IO_STAT" ]; then
	expect_exit series_rows_replay 0 "$IO_STAT" "$T_TMP/io" "$REPLAY" replay -q "$DB" -p break -s 3
	grown=$(($(stat -c %s "$DB") - before))
	wchar=$(awk '$1 == "wchar" { print $2 }' "$T_TMP/io")
	# the database's own pages once, its journal's few, SQLite's header rewrites
	if [ -n "$wchar" ] && [ "$grown" -gt 0 ] && [ $((wchar * 2)) -le $((grown * 3)) ]; then
		pass series_rows_written_once
	else
		fail series_rows_written_once "wrote ${wchar:-?} bytes for $grown bytes of growth"
	fi
else
	skip series_rows_written_once "no $IO_STAT"
	expect_exit series_rows_replay 0 "$REPLAY" replay -q "$DB" -p break -s 3
fi

q() { sqlite3 "$DB" "$1"; }
first=$(q "SELECT min(first_ts) FROM event_chunks")
last=$(q "SELECT max(last_ts) FROM event_chunks")
n=$(( (last - first) / 3000000 + 1 ))
expect_match series_rows_samples "^$n\$" "$(q "SELECT count(DISTINCT ts) FROM series")"
# every line: n rows at first + k x 3 ms, k = 0 .. n - 1
expect_match series_rows_no_gap '^0$' "$(q "SELECT count(*) FROM (SELECT count(*) AS c,
	min(ts) AS lo, max(ts) AS hi, sum((ts - $first) % 3000000) AS off FROM series
	GROUP BY run_id, cgroup_id, kind, item) WHERE c != $n OR lo != $first OR
	hi != $first + ($n - 1) * 3000000 OR off != 0")"
expect_match series_rows_cgroups '^0$' "$(q "SELECT count(*) FROM (SELECT count(*) AS c,
	min(ts) AS lo, max(ts) AS hi FROM cgroup_series GROUP BY run_id, cgroup_id)
	WHERE c != $n OR lo != $first OR hi != $first + ($n - 1) * 3000000")"
expect_match series_rows_lines '^0$' "$(q "SELECT count(*) FROM (SELECT DISTINCT run_id,
	cgroup_id FROM series) s FULL JOIN (SELECT DISTINCT run_id, cgroup_id FROM
	cgroup_series) c USING (run_id, cgroup_id) WHERE s.run_id IS NULL OR c.run_id IS NULL")"
expect_match series_rows_min_max '^0$' "$(q "SELECT count(*) FROM series
	WHERE NOT (min_error <= error AND error <= max_error)")"
expect_match series_rows_some '^[1-9][0-9]{5,}$' "$(q "SELECT count(*) FROM series")"

# a second invocation: two runs after the first, its break run's rows the first's
expect_exit series_rows_again 0 "$REPLAY" replay -q "$DB" -p break,continue -s 3
expect_match series_rows_again_runs '^1 2 3$' "$(q "SELECT group_concat(run_id, ' ') FROM runs")"
same() {	# table, its columns but run_id: run 2's rows are run 1's
	expect_match "series_rows_again_$1" '^0\|0\|0$' "$(q "SELECT
		(SELECT count(*) FROM (SELECT $2 FROM $1 WHERE run_id = 1 EXCEPT
				       SELECT $2 FROM $1 WHERE run_id = 2)),
		(SELECT count(*) FROM (SELECT $2 FROM $1 WHERE run_id = 2 EXCEPT
				       SELECT $2 FROM $1 WHERE run_id = 1)),
		(SELECT count(*) FROM $1 WHERE run_id = 1) - (SELECT count(*) FROM $1 WHERE run_id = 2)")"
}
same series "cgroup_id, kind, item, ts, error, min_error, max_error"
same cgroup_series "cgroup_id, ts, pending, stats_updates, flushable, stranded"
expect_match series_rows_again_continue '^0$' "$(q "SELECT (SELECT count(*) FROM series WHERE
	run_id = 1) - (SELECT count(*) FROM series WHERE run_id = 3)")"
expect_match series_rows_integrity '^ok$' "$(q "PRAGMA integrity_check")"
t_done
