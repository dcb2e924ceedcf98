#!/usr/bin/env bash
# Lock windows whose cgroup_rstat_unlock event is not in the trace (lost
# events, a damaged trace.dat whose unlock format no longer parses).  Such a
# window used to stay open to the end of the trace: every later update landed
# in it, the inference branched on each (a real capture took 75 s instead of
# 0.03 s), a policy's simulated window stayed open so that its next flush
# failed (exit 1, "Device or resource busy"), and the flush never completed,
# so validation never synced.  Now the window ends at the next lock of its CPU
# or task, or after the longest whole window of the trace (at its lock when
# there is none), and the output counts those windows and says that results
# near them are inexact.  The work is checked by what the replay reports,
# never by time.
. "$(dirname "$0")/../lib.sh"

SY=$T_TMP/s.db
if ! "$REPLAY" synth --scenario pagecache --duration 4 --rate-mib 256 -o "$SY" -q >/dev/null 2>&1 ||
	! as_rows "$SY"; then
	skip lost_unlock "synth --scenario pagecache failed"
	t_done
fi
windows=$(sqlite3 "$SY" "SELECT count(*) FROM events WHERE kind = 5")
[ "$windows" -ge 8 ] && pass lost_unlock_setup || fail lost_unlock_setup "$windows windows"

# json FILE KEY: a key of validate's JSON
json() {
	sqlite3 :memory: "SELECT json_extract(readfile('$1'), '\$.$2')"
}

# Every unlock gone: no whole window in the trace, each closes at its lock.
cp "$SY" "$T_TMP/all.db"
sqlite3 "$T_TMP/all.db" "DELETE FROM events WHERE kind = 6"
expect_exit lost_unlock_all_replay 0 "$REPLAY" replay "$T_TMP/all.db" -m inferred -H 64 -s 0 \
	-p break,continue
expect_match lost_unlock_all_summary "lock windows: $windows of flush requests.* $windows closed without their unlock event \(inexact\)" "$T_OUT"
expect_match lost_unlock_all_warning "warning: .*all.db: $windows of $windows rstat lock windows have no cgroup_rstat_unlock event \(lost from the trace\).*results near them are inexact" "$T_ERR"
# bounded work: the windows closed at their locks, so the inference placed
# only updates traced within its 20 us tolerance for late tracepoints after
# one of them (left open, it placed every update that followed)
placed=$(sed -n 's/^Inferred order: \([0-9]*\) updates.*/\1/p' <<<"$T_OUT")
late=$(sqlite3 "$T_TMP/all.db" "SELECT count(DISTINCT e.rowid) FROM
	(SELECT ts FROM events WHERE kind = 5) l CROSS JOIN events e
	WHERE e.kind IN (1, 2, 3) AND e.ts BETWEEN l.ts AND l.ts + 20000")
[ -n "$placed" ] && [ "$placed" -le "$late" ] && pass lost_unlock_all_bounded ||
	fail lost_unlock_all_bounded "placed ${placed:-?} updates, at most $late may be late"
# validation syncs at the forced root flush, which completes at its last window's close
expect_exit lost_unlock_all_validate 0 "$REPLAY" validate "$T_TMP/all.db" -H 64 -n 0 -f json \
	--min-match 0
printf '%s\n' "$T_OUT" >"$T_TMP/all.json"
[ "$(json "$T_TMP/all.json" windows_unlock_lost)" = "$windows" ] &&
	pass lost_unlock_all_validate_count ||
	fail lost_unlock_all_validate_count "$(json "$T_TMP/all.json" windows_unlock_lost)"
[ "$(json "$T_TMP/all.json" compared)" -gt 0 ] && pass lost_unlock_all_validate_synced ||
	fail lost_unlock_all_validate_synced "compared $(json "$T_TMP/all.json" compared)"
expect_match lost_unlock_all_validate_warning "$windows of $windows rstat lock windows have no cgroup_rstat_unlock" "$T_ERR"
expect_exit lost_unlock_all_validate_text 0 "$REPLAY" validate "$T_TMP/all.db" -H 64 -n 0 \
	--min-match 0
expect_match lost_unlock_all_validate_line "^lock windows without their unlock event: $windows of $windows" "$T_OUT"

# One unlock gone in the middle of a flush (the next CPU's lock follows), and
# one at the end of a flush (no lock follows soon): synth's windows all have
# one length, so the longest whole window before ends each where its unlock
# was, and validation matches as on the whole trace, plain model included.
cp "$SY" "$T_TMP/whole.db"
"$REPLAY" validate "$T_TMP/whole.db" -H 64 -n 0 -f json --min-match 0 >"$T_TMP/whole.json" 2>/dev/null
whole="$(json "$T_TMP/whole.json" stats_updates_match_rate) $(json "$T_TMP/whole.json" stats_updates_match_plain_rate)"
for which in "mid 1" "last 3"; do
	set -- $which
	cp "$SY" "$T_TMP/$1.db"
	sqlite3 "$T_TMP/$1.db" "DELETE FROM events WHERE rowid = (SELECT rowid FROM events
		WHERE kind = 6 AND item = $2 ORDER BY rowid LIMIT 1 OFFSET 1)"
	expect_exit lost_unlock_$1_validate 0 "$REPLAY" validate "$T_TMP/$1.db" -H 64 -n 0 -f json \
		--min-match 0
	printf '%s\n' "$T_OUT" >"$T_TMP/$1.json"
	got="$(json "$T_TMP/$1.json" windows_unlock_lost) $(json "$T_TMP/$1.json" stats_updates_match_rate) $(json "$T_TMP/$1.json" stats_updates_match_plain_rate)"
	[ "$got" = "1 $whole" ] && pass lost_unlock_$1_as_whole ||
		fail lost_unlock_$1_as_whole "windows lost, match rate, plain: $got; whole trace: $whole"
	expect_exit lost_unlock_$1_replay 0 "$REPLAY" replay "$T_TMP/$1.db" -m inferred -H 64 -s 0
	expect_match lost_unlock_$1_summary " 1 closed without their unlock event" "$T_OUT"
done

# A whole trace says nothing about lost windows.
expect_exit lost_unlock_none 0 "$REPLAY" replay "$SY" -s 0 -p break
grep -q 'unlock' <<<"$T_OUT$T_ERR" && fail lost_unlock_none_quiet "$T_OUT" || pass lost_unlock_none_quiet
t_done
