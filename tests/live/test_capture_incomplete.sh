#!/usr/bin/env bash
# tests/live/test_capture_incomplete.sh - a capture that does not reach its
# clean end is marked so, and its summary counts what the file holds.
#   1. kill -9 of a capture (its own pid): its temporary file keeps what it
#      committed, info says "incomplete", -o FILE was never replaced.
#   2. a small tmpfs (mounted in the test's directory, unmounted after) that
#      fills up under load: exit 11, the reason on stderr, the file renamed to
#      -o FILE with its -wal, readable, "incomplete" (the reason when it still
#      fits: the meta row may not), and the summary's
#      "stored" equal to the events the file holds.
#   3. the same under --rotate: the messages name the file that is
#      incomplete (PREFIX-STAMP.db, which exists and reads), not the prefix.
# As root with tracefs and the memcg tracepoints; removes what it creates.
. "$(dirname "$0")/../lib.sh"

STRESS=$BIN/bench/stress_anon
INSTANCES=/sys/kernel/tracing/instances

if [ ! -x "$CAPTURE" ] || [ ! -x "$STRESS" ]; then skip capture_incomplete "not built"; t_done; fi
if [ "$(id -u)" -ne 0 ]; then skip capture_incomplete "not root: live capture needs root"; t_done; fi
if [ ! -d /sys/kernel/tracing/events/memcg/mod_memcg_state ]; then
	skip capture_incomplete "no tracefs with memcg tracepoints"
	t_done
fi
command -v sqlite3 >/dev/null || { skip capture_incomplete "no sqlite3 shell"; t_done; }
sq() { sqlite3 -batch -noheader "$@"; }
KILL_PIDS=
kill_ours() { local p; for p in $KILL_PIDS; do kill "$p" 2>/dev/null; done; return 0; }
t_on_exit kill_ours
wait_instance() {
	local i=0
	while [ ! -d "$INSTANCES/memcg_capture_$1" ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
	sleep 0.3
}
cd "$T_TMP" || exit 1

# --- 1. kill -9 ----------------------------------------------------------------------
"$REPLAY" synth -s seed-race -o k.db -q || fail synth_setup "synth failed"
cp k.db k.orig
"$CAPTURE" -o k.db -d 30 >/dev/null 2>&1 &
CAP=$!
KILL_PIDS="$KILL_PIDS $CAP"
wait_instance $CAP
"$STRESS" 16 1 >/dev/null
sleep 1.2	# past a commit (at least once a second)
kill -9 $CAP
wait $CAP 2>/dev/null
cmp -s k.db k.orig && pass kill9_output_kept || fail kill9_output_kept "k.db changed"
TMPF=.k.db.tmp-$CAP
if [ -f "$TMPF" ]; then
	expect_exit kill9_info 0 "$REPLAY" info "$TMPF" &&
		expect_match kill9_info_incomplete '^capture: +incomplete: .*killed' "$T_OUT"
	expect_exit kill9_replay 0 "$REPLAY" replay "$TMPF" -q &&
		expect_match kill9_replay_warns 'incomplete capture' "$T_ERR"
else
	fail kill9_tmp "no $TMPF: $(ls -a | tr '\n' ' ')"
fi
rm -f "$TMPF" "$TMPF"-wal "$TMPF"-shm
# the orphan instance is the next capture's (or --cleanup's) to remove
[ -d "$INSTANCES/memcg_capture_$CAP" ] && rmdir "$INSTANCES/memcg_capture_$CAP"

# --- 2. a full disk ------------------------------------------------------------------
mkdir small
if ! mount -t tmpfs -o size=4m mcr-test small; then
	skip capture_disk_full "cannot mount a tmpfs here"
	t_done
fi
t_on_exit "umount '$T_TMP/small'"
"$STRESS" 64 8 >/dev/null &
ST=$!
KILL_PIDS="$KILL_PIDS $ST"
expect_exit disk_full_exit 11 "$CAPTURE" -o small/x.db -d 6 &&
	expect_match disk_full_reason 'No space left on device' "$T_OUT$T_ERR" &&
	expect_match disk_full_incomplete 'small/x.db is incomplete' "$T_ERR"
kill $ST 2>/dev/null
wait $ST 2>/dev/null
stored=$(sed -n 's/.* \([0-9]*\) stored in small\/x.db.*/\1/p' <<<"$T_OUT")
# the file must be readable where it is full; copy it out to read it
cp small/x.db* . 2>/dev/null
expect_exit disk_full_info 0 "$REPLAY" info x.db --no-check &&
	expect_match disk_full_info_incomplete '^capture: +incomplete: .*(No space left|out of disk space)' "$T_OUT"
in_file=$(sq x.db "SELECT coalesce(sum(count), 0) FROM event_chunks" 2>&1)
[ -n "$stored" ] && [ "$stored" = "$in_file" ] && pass disk_full_stored_is_in_file ||
	fail disk_full_stored_is_in_file "summary says '$stored', the file holds '$in_file'"
expect_exit disk_full_replay 0 "$REPLAY" replay x.db -q

# --- 3. a full disk under --rotate: the messages name the file, not the prefix --------
rm -f small/x.db*
"$STRESS" 64 8 >/dev/null &
ST=$!
KILL_PIDS="$KILL_PIDS $ST"
expect_exit rotate_full_exit 11 "$CAPTURE" --rotate 1s -o small/r -d 6
kill $ST 2>/dev/null
wait $ST 2>/dev/null
last=$(sed -n 's/.*: \(small\/r-[0-9]\{8\}T[0-9]\{6\}Z\(-[0-9]*\)\{0,1\}\.db\) is incomplete: .*/\1/p' <<<"$T_ERR")
if [ -n "$last" ] && [ -f "$last" ]; then
	pass rotate_full_names_file
else
	fail rotate_full_names_file "no existing file named as incomplete in: $T_ERR"
fi
grep -q 'small/r is incomplete\|writing small/r:' <<<"$T_ERR" &&
	fail rotate_full_not_prefix "a message names the prefix: $T_ERR" || pass rotate_full_not_prefix
if [ -n "$last" ]; then
	cp "$last"* . 2>/dev/null
	expect_exit rotate_full_info 0 "$REPLAY" info "${last#small/}" --no-check &&
		expect_match rotate_full_info_incomplete '^capture: +incomplete: ' "$T_OUT"
fi
t_done
