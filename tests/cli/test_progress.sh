#!/usr/bin/env bash
# tests/cli/test_progress.sh - the progress line of long runs: on a terminal only.
#
# script(1) gives the command a pseudo-terminal; the line starts with \r and the
# pass's name ("synth:", "infer:", "validate:") and carries "events/s"; with
# the total known it also carries "ETA".  The same runs with stderr into a
# file, or with -q on the terminal, print no such line.  MCR_PROGRESS_MS=0 makes
# the line refresh at every update, so a fast machine finishing within the usual
# 200 ms period still shows it: nothing here depends on the machine's speed.
source "$(dirname "$0")/../lib.sh"
export MCR_PROGRESS_MS=0

command -v script >/dev/null || { skip progress "script(1) not installed (bsdutils)"; exit 0; }

db=$T_TMP/f.db
# the passes refresh the line every 65536 events: 300 000 give each of them four
EVENTS=300000
synth="$REPLAY synth -s fleet --events $EVENTS --cgroups 20 -o $db"

# tty RESULT CMD: runs CMD on a pseudo-terminal, its whole output in RESULT
tty() {
	script -qec "$2" /dev/null </dev/null >"$T_TMP/$1" 2>&1
}

tty synth_tty "$synth"
expect_match progress_synth_tty $'\rsynth: [0-9]+ events, [0-9]+ events/s' "$(cat "$T_TMP/synth_tty")"
$synth -q >"$T_TMP/out" 2>"$T_TMP/err"
if grep -q 'events/s' "$T_TMP/err" "$T_TMP/out"; then
	fail progress_synth_not_tty "a line without a terminal: $(head -c 200 "$T_TMP/err")"
else
	pass progress_synth_not_tty
fi

cp "$db" "$T_TMP/a.db"
tty replay_tty "$REPLAY replay -H 4 -p break $T_TMP/a.db"
expect_match progress_replay_tty $'\r(infer|replay): [0-9]+/'"$EVENTS"' events \([0-9]+%\), [0-9]+ events/s, [0-9hms]+, ETA' \
	"$(cat "$T_TMP/replay_tty")"

# The rate counts from a pass's first update (every 65536 events), which shows
# no line: counted from the line's start, the events done before it gave the
# first line billions of events/s.  So the first line is at the second update.
first=$(tr '\r' '\n' <"$T_TMP/replay_tty" | grep -aoE '^replay: [0-9]+/' | head -1)
[ "$first" = "replay: 131072/" ] && pass progress_rate_from_first_update ||
	fail progress_rate_from_first_update "first line '$first', wanted 'replay: 131072/'"

cp "$db" "$T_TMP/b.db"
tty replay_q "$REPLAY replay -q -H 4 -p break $T_TMP/b.db"
if grep -q 'events/s' "$T_TMP/replay_q"; then
	fail progress_replay_quiet "a line with -q: $(grep -a 'events/s' "$T_TMP/replay_q" | head -c 200)"
else
	pass progress_replay_quiet
fi

cp "$db" "$T_TMP/c.db"
"$REPLAY" replay -H 4 -p break "$T_TMP/c.db" >"$T_TMP/out" 2>"$T_TMP/err"
if grep -q 'events/s' "$T_TMP/err" "$T_TMP/out"; then
	fail progress_replay_not_tty "a line into a file: $(head -c 200 "$T_TMP/err")"
else
	pass progress_replay_not_tty
fi

tty validate_tty "$REPLAY validate -H 4 -r 0 $T_TMP/c.db"
expect_match progress_validate_tty $'\rvalidate: [0-9]+/'$EVENTS' events' "$(cat "$T_TMP/validate_tty")"
tty validate_q "$REPLAY validate -q -H 4 -r 0 $T_TMP/c.db"
if grep -q 'events/s' "$T_TMP/validate_q"; then
	fail progress_validate_quiet "a line with -q"
else
	pass progress_validate_quiet
fi
t_done
