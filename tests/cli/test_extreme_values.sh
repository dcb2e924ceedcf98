#!/usr/bin/env bash
# tests/cli/test_extreme_values.sh - values from files at the ends of what
# the readers accept (val INT_MAX / INT_MIN on state updates, the tracepoint's
# int; INT64_MAX and -1 on count_memcg_events' unsigned long; INT64_MAX as
# memcg_flush_stats' stats_updates) are replayed, validated and reported
# without overflow: under the ASan+UBSan build (make check's second pass) any
# signed overflow aborts; in every build no figure may come out as a wrapped
# 2^64 - k.  Beyond those ends the readers refuse the event
# (tests/cli/test_event_values.sh).
source "$(dirname "$0")/../lib.sh"
cd "$T_TMP" || exit 1
command -v sqlite3 >/dev/null || { skip extreme_values "no sqlite3 shell"; t_done; }
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
"$REPLAY" synth -s seed-race -o good.db -q || fail setup "synth failed"

MAX=9223372036854775807 IMAX=2147483647 IMIN=-2147483648
# variant NAME SQL: replay, validate (0 or 10: a match rate), report, info; no overflow
variant() {
	local name=$1 cmd rc
	cp good.db "$name.db"
	# the events as rows, edited, then back into the store as any old file would be
	"$REPLAY" events --table "$name.db" >/dev/null &&
		sqlite3 "$name.db" "$2; DROP TABLE event_chunks" &&
		"$REPLAY" events --convert "$name.db" >/dev/null ||
		{ fail "$name" "cannot edit the events: $2"; return; }
	for cmd in replay validate report info; do
		timeout 120 "$REPLAY" "$cmd" "$name.db" >"$name.$cmd.out" 2>"$name.$cmd.err"
		rc=$?
		if grep -q 'runtime error' "$name.$cmd.err"; then
			fail "${name}_$cmd" "$(grep -m1 'runtime error' "$name.$cmd.err")"
		elif [ "$rc" -ne 0 ] && ! { [ "$cmd" = validate ] && [ "$rc" -eq 10 ]; }; then
			fail "${name}_$cmd" "exit $rc: $(head -c 300 "$name.$cmd.err")"
		elif grep -Eq '1844674407370955[0-9]{4}' "$name.$cmd.out"; then
			fail "${name}_$cmd" "a wrapped figure: $(grep -Eom1 '1844674407370955[0-9]{4}' "$name.$cmd.out")"
		else
			pass "${name}_$cmd"
		fi
	done
}
# kind 2: mod_memcg_lruvec_state, kind 3: count_memcg_events, kind 4: memcg_flush_stats
variant upd_max "UPDATE events SET val = $IMAX WHERE rowid IN (SELECT rowid FROM events WHERE kind = 2 LIMIT 2)"
variant upd_min "UPDATE events SET val = $IMIN WHERE rowid IN (SELECT rowid FROM events WHERE kind = 2 LIMIT 2)"
variant upd_both "UPDATE events SET val = CASE rowid % 2 WHEN 0 THEN $IMAX ELSE $IMIN END WHERE kind = 2"
variant events_huge "UPDATE events SET kind = 3, val = CASE rowid % 2 WHEN 0 THEN $MAX ELSE -1 END
	WHERE rowid IN (SELECT rowid FROM events WHERE kind = 2 LIMIT 4)"
variant su_max "UPDATE events SET val = $MAX WHERE kind = 4"
t_done
