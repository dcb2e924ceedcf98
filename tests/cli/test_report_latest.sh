#!/usr/bin/env bash
# tests/cli/test_report_latest.sh - "the latest run" has one rule, the lag_report
# view's (db/, DB_LATEST_RUN): the latest replay run of each policy, flush model,
# batch and CPU count.  The report's lines and its cost rows follow it alike, with
# runs replayed again, at other points and of one policy only (a file of schema 2,
# whose runs table spells the point th and stranded_limit: test_grid.sh).
source "$(dirname "$0")/../lib.sh"

command -v sqlite3 >/dev/null || { skip report_latest "no sqlite3 shell"; t_done; }
cd "$T_TMP" || exit 1

"$REPLAY" synth -q -s seed-race -o sr.db || fail setup "synth"
"$REPLAY" replay -q sr.db >/dev/null || fail setup "replay 1-3"
"$REPLAY" replay -q -m spread --policy break sr.db >/dev/null || fail setup "replay 4"
"$REPLAY" replay -q --policy continue --batch 32 sr.db >/dev/null || fail setup "replay 5"
"$REPLAY" replay -q --policy break,legacy sr.db >/dev/null || fail setup "replay 6-7"
# 8: validate is no replay run: never reported
"$REPLAY" validate -q sr.db >/dev/null 2>&1

# what the view calls latest, by the rule written out here once more
want=$(sqlite3 sr.db "SELECT group_concat(run_id, ',') FROM (SELECT r1.run_id FROM runs r1
	WHERE r1.kind = 'replay' AND NOT EXISTS (SELECT 1 FROM runs r2 WHERE r2.kind = 'replay'
	AND r2.policy = r1.policy AND r2.flush_model IS r1.flush_model
	AND r2.batch_size IS r1.batch_size AND r2.nr_cpus IS r1.nr_cpus AND r2.run_id > r1.run_id)
	ORDER BY r1.run_id)")
view=$(sqlite3 sr.db "SELECT group_concat(run_id, ',') FROM (SELECT DISTINCT run_id FROM lag_report ORDER BY run_id)")
[ -n "$want" ] && [ "$view" = "$want" ] && pass view_latest || fail view_latest "view '$view', rule '$want'"
expect_exit cost_csv 0 "$REPLAY" report --cost --format csv sr.db
cost=$(printf '%s\n' "$T_OUT" | awk -F, 'NR > 1 { print $1 }' | sort -n | paste -sd,)
[ "$cost" = "$want" ] && pass cost_rows_latest || fail cost_rows_latest "cost rows '$cost', lag_report '$want'"
expect_exit lines_csv 0 "$REPLAY" report --format csv sr.db
lines=$(printf '%s\n' "$T_OUT" | awk -F, 'NR > 1 { print $2 }' | sort -nu | paste -sd,)
[ "$lines" = "$want" ] && pass lines_latest || fail lines_latest "lines '$lines', lag_report '$want'"
# --run still picks any run, the cost rows too
expect_exit cost_run 0 "$REPLAY" report --cost --format csv --run 1,4 sr.db
got=$(printf '%s\n' "$T_OUT" | awk -F, 'NR > 1 { print $1 }' | paste -sd,)
[ "$got" = "1,4" ] && pass cost_rows_run || fail cost_rows_run "$got"

t_done
