#!/usr/bin/env bash
# tests/cli/test_incomplete.sh - a memcg-capture that did not reach its clean
# end is said to be one: info prints "incomplete" and why, and every reader
# (replay, report, validate, events) warns in one line.  The databases are
# synth's, given the meta a capture writes: capture_complete "0" from its
# start, "1" at its end, capture_incomplete the reason when it could write one.
# A capture older than capture_complete is judged by capture_end_ns.
source "$(dirname "$0")/../lib.sh"

command -v sqlite3 >/dev/null || { skip incomplete "no sqlite3 shell"; t_done; }
cd "$T_TMP" || exit 1

"$REPLAY" synth -s seed-race -o base.db -q || fail synth_setup "synth failed"
# make NAME SQL: a copy of base.db as a capture, then SQL
make_db() {
	cp base.db "$1.db"
	sqlite3 "$1.db" "UPDATE meta SET value = 'memcg-capture' WHERE key = 'source';
		INSERT OR REPLACE INTO meta VALUES ('capture_end_ns', '2000000000'); $2" ||
		fail "$1" "sqlite3: $2"
}
make_db complete "INSERT OR REPLACE INTO meta VALUES ('capture_complete', '1')"
make_db killed "INSERT OR REPLACE INTO meta VALUES ('capture_complete', '0')"
make_db diskfull "INSERT OR REPLACE INTO meta VALUES ('capture_complete', '0');
	INSERT OR REPLACE INTO meta VALUES ('capture_incomplete', 'writing the database failed: No space left on device')"
make_db old_ended ""
make_db old_no_end "DELETE FROM meta WHERE key = 'capture_end_ns'"

for f in complete old_ended; do
	expect_exit "info_${f}_exit" 0 "$REPLAY" info $f.db
	if grep -q incomplete <<<"$T_OUT$T_ERR"; then fail "info_${f}_complete" "says incomplete"; else pass "info_${f}_complete"; fi
done
# synth's own files are not captures: never incomplete
expect_exit info_synth_exit 0 "$REPLAY" info base.db
if grep -q incomplete <<<"$T_OUT$T_ERR"; then fail info_synth_complete "says incomplete"; else pass info_synth_complete; fi

for f in killed old_no_end; do
	expect_exit "info_${f}_exit" 0 "$REPLAY" info $f.db &&
		expect_match "info_${f}_incomplete" '^capture: +incomplete: .*killed' "$T_OUT"
done
expect_exit info_diskfull_exit 0 "$REPLAY" info diskfull.db &&
	expect_match info_diskfull_why '^capture: +incomplete: .*No space left on device' "$T_OUT"

# the readers carry it, one line
expect_exit replay_killed 0 "$REPLAY" replay killed.db -q
n=$(grep -c "incomplete capture" <<<"$T_ERR")
[ "$n" = 1 ] && pass replay_killed_warns || fail replay_killed_warns "$n warning lines: $T_ERR"
expect_exit report_killed 0 "$REPLAY" report killed.db &&
	expect_match report_killed_warns 'killed.db is an incomplete capture' "$T_ERR"
expect_exit replay_complete 0 "$REPLAY" replay complete.db -q
if grep -q incomplete <<<"$T_ERR"; then fail replay_complete_quiet "warns: $T_ERR"; else pass replay_complete_quiet; fi
t_done
