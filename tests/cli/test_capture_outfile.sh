#!/usr/bin/env bash
# tests/cli/test_capture_outfile.sh - memcg-capture checks every option before
# it touches -o FILE, and follows the output policy of synth and import
# (cli/outfile.h): a capture that cannot run leaves an existing database byte
# for byte, and a device, FIFO or foreign file is never replaced.  Every case
# but the last stops before tracing starts, so nothing is recorded; they still
# need root and tracefs to get that far.  Also: a signal before tracing starts
# (exit 16, nothing written), and a full disk while the database is prepared
# (said of the output, on a small tmpfs mounted here and unmounted after).
# The last: of two captures to one path the one that ends second fails, leaves
# the first one's file, and keeps its own recording under its temporary name
# (two short recordings).
# run.sh: alone (its last case traces the memcg tracepoints)
source "$(dirname "$0")/../lib.sh"

TRACING=/sys/kernel/tracing
if [ ! -x "$CAPTURE" ]; then
	skip capture_outfile "$CAPTURE is not built"
	t_done
fi
if [ "$(id -u)" -ne 0 ]; then
	skip capture_outfile "not root: memcg-capture stops at its root check first"
	t_done
fi
if [ ! -d "$TRACING/events/memcg/mod_memcg_state" ]; then
	skip capture_outfile "no tracefs with memcg tracepoints at $TRACING"
	t_done
fi
cd "$T_TMP" || exit 1

same_file() { if cmp -s "$2" "$3"; then pass "$1"; else fail "$1" "$2 changed"; fi; }
no_sidecars() {
	local left
	left=$(ls -a | grep -E -- '-wal$|-shm$|\.tmp-' | tr '\n' ' ')
	if [ -z "$left" ]; then pass "$1"; else fail "$1" "left behind: $left"; fi
}

"$REPLAY" synth -s seed-race -o prev.db -q || fail synth_setup "synth failed"
cp prev.db prev.orig

# each bad option: its own exit code, its own message, prev.db as it was
expect_exit capture_bad_clock 17 "$CAPTURE" -o prev.db -d 1 -C bogus &&
	expect_match capture_bad_clock_msg 'bogus: not a trace clock' "$T_ERR"
same_file capture_bad_clock_kept prev.db prev.orig
expect_exit capture_bad_cgroup 17 "$CAPTURE" -o prev.db -d 1 --cgroup /mcr_nonexist_$$ &&
	expect_match capture_bad_cgroup_msg 'mcr_nonexist.*No such file' "$T_ERR"
same_file capture_bad_cgroup_kept prev.db prev.orig
expect_exit capture_bad_command 17 "$CAPTURE" -o prev.db -d 1 -- ./mcr-no-such-command &&
	expect_match capture_bad_command_msg 'no-such-command: command not found' "$T_ERR"
expect_exit capture_bad_command_path 17 "$CAPTURE" -o prev.db -d 1 -- mcr-no-such-command-$$
same_file capture_bad_command_kept prev.db prev.orig
no_sidecars capture_refused_no_sidecars

# not a regular file: refused, and still what it was
mkfifo fifo
expect_exit capture_fifo_refused 3 "$CAPTURE" -o fifo -d 1 &&
	expect_match capture_fifo_msg 'not a regular file' "$T_ERR"
[ -p fifo ] && pass capture_fifo_kept || fail capture_fifo_kept "fifo is no longer a FIFO"
# A build that replaces devices would delete the real /dev/null: try it only
# once a private node of the same kind (1:3) was refused and kept.
dev_ok=0
if mknod node c 1 3 2>/dev/null; then
	expect_exit capture_device_refused 3 "$CAPTURE" -o node -d 1 && dev_ok=1
	if [ -c node ]; then pass capture_device_kept; else fail capture_device_kept "node is no longer a device"; dev_ok=0; fi
else
	skip capture_device_refused "mknod is not allowed here"
fi
if [ "$dev_ok" = 1 ] && [ -c /dev/null ]; then
	expect_exit capture_dev_null_refused 3 "$CAPTURE" -o /dev/null -d 1
	[ -c /dev/null ] && pass capture_dev_null_kept || fail capture_dev_null_kept "/dev/null is not a device"
else
	skip capture_dev_null_refused "a private device node was not refused: /dev/null is not risked"
fi

# a file that is not ours needs --force (checked without it: --force would capture)
echo "notes" >notes.txt
cp notes.txt notes.orig
expect_exit capture_foreign_refused 3 "$CAPTURE" -o notes.txt -d 1 &&
	expect_match capture_foreign_msg 'not a memcg-replay database.*--force' "$T_ERR"
same_file capture_foreign_kept notes.txt notes.orig
mkdir adir
expect_exit capture_dir_refused 3 "$CAPTURE" -o adir -d 1
expect_exit capture_name_too_long 3 "$CAPTURE" -o "$(printf 'n%.0s' $(seq 300))" -d 1
expect_exit capture_no_dir 3 "$CAPTURE" -o nodir/out.db -d 1
no_sidecars capture_no_sidecars

# --- a signal before tracing starts: nothing recorded, nothing replaced ------------------
# Deterministic: once the temporary file exists the capture is stopped (SIGSTOP), and
# only if its tracefs instance does not exist yet (so tracing cannot have started) does
# it get the signal, which it meets when continued.  Expected: exit 16, prev.db byte for
# byte, no temporary file, no instance.  (It used to trace for an instant and publish
# that, an empty or near-empty capture marked complete, exit 0.)
INSTANCES=$TRACING/instances
early_signal() {
	local sig=$1 p i tries rc
	cp prev.orig prev.db
	for tries in 1 2 3 4 5; do
		"$CAPTURE" -o prev.db -d 60 >"$T_TMP/early.out" 2>"$T_TMP/early.err" &
		p=$!
		i=$((SECONDS + 20))	# no sleep: the file is polled for as it appears
		while [ ! -e ".prev.db.tmp-$p" ] && kill -0 $p 2>/dev/null && [ $SECONDS -lt $i ]; do
			:
		done
		kill -STOP $p 2>/dev/null
		if [ -e ".prev.db.tmp-$p" ] && [ ! -d "$INSTANCES/memcg_capture_$p" ]; then
			kill -"$sig" $p
			kill -CONT $p
			wait $p
			rc=$?
			[ $rc -eq 16 ] && pass "capture_early_$sig" ||
				fail "capture_early_$sig" "exit $rc, wanted 16: $(head -c 300 "$T_TMP/early.err")"
			expect_match "capture_early_${sig}_says" "stopped by SIG${sig/+/\\+} before .*prev\.db not written" \
				"$(cat "$T_TMP/early.err")"
			same_file "capture_early_${sig}_kept" prev.db prev.orig
			no_sidecars "capture_early_${sig}_no_tmp"
			[ ! -d "$INSTANCES/memcg_capture_$p" ] && pass "capture_early_${sig}_no_instance" ||
				fail "capture_early_${sig}_no_instance" "memcg_capture_$p left"
			return
		fi
		# too late (or too early): end this one and try again
		kill -TERM $p 2>/dev/null
		kill -CONT $p 2>/dev/null
		wait $p 2>/dev/null
		cp prev.orig prev.db
		rm -f ".prev.db.tmp-$p"*
	done
	skip "capture_early_$sig" "never caught the capture between its file and its instance"
}
for sig in INT TERM HUP QUIT USR1 ALRM RTMIN+2; do early_signal $sig; done

# --- a full disk before tracing starts: said of the output, not of BTF or --cgroup ------
# Small tmpfs sizes fill at different steps (the schema, the meta rows, the cgroup
# table, the stat item names); each must say "cannot write the output", with the errno.
mkdir small
if mount -t tmpfs -o size=64k mcr-test small 2>/dev/null; then
	t_on_exit "umount '$T_TMP/small' 2>/dev/null"
	for size in 64k 192k 320k 512k; do
		rm -f small/.x.db* small/x.db*
		mount -o remount,size=$size small
		expect_exit "capture_enospc_$size" 1 "$CAPTURE" -o small/x.db -d 1 &&
			expect_match "capture_enospc_${size}_msg" \
				'^memcg-capture: cannot write the output small/x\.db: No space left on device$' "$T_ERR"
		if grep -q 'BTF' <<<"$T_ERR"; then
			fail "capture_enospc_${size}_no_btf" "$T_ERR"
		else
			pass "capture_enospc_${size}_no_btf"
		fi
		left=$(ls -A small)
		[ -z "$left" ] && pass "capture_enospc_${size}_nothing_left" ||
			fail "capture_enospc_${size}_nothing_left" "$left"
	done
	umount small
else
	skip capture_enospc "cannot mount a tmpfs here"
fi

# A commit that fails for a reason of its own (a directory where the old
# file's stale -journal would be removed) keeps the recording too, and says where.
cp prev.orig jr.db
mkdir jr.db-journal && : >jr.db-journal/x
expect_exit capture_commit_fails 3 "$CAPTURE" -o jr.db -d 0.2
expect_match capture_commit_fails_kept_msg "recording is kept as \.jr\.db\.tmp-" "$T_ERR"
same_file capture_commit_fails_old_kept jr.db prev.orig
kept=$(ls -a | grep -E '^\.jr\.db\.tmp-[0-9]+$' | head -n 1)
if [ -n "$kept" ]; then
	expect_exit capture_commit_fails_recording 0 "$REPLAY" info "$kept"
else
	fail capture_commit_fails_recording "no .jr.db.tmp-<pid> left"
fi
rm -rf jr.db jr.db-journal .jr.db.tmp-*

# Two captures of one -o: the first runs until its COMMAND reads a line from
# a FIFO, which it gets only after the second has finished.
mkfifo gate
"$CAPTURE" -o race.db -- sh -c 'read x <gate' >/dev/null 2>first.err &
first=$!
t_on_exit "kill $first 2>/dev/null; rm -f '$T_TMP/gate'"
while [ ! -e ".race.db.tmp-$first" ] && kill -0 "$first" 2>/dev/null; do sleep 0.05; done
expect_exit capture_race_winner 0 "$CAPTURE" -o race.db -d 1
cp race.db winner.copy
echo go >gate
wait "$first"
rc=$?
if [ "$rc" -eq 3 ]; then pass capture_race_loser_fails; else fail capture_race_loser_fails "exit $rc, wanted 3"; fi
expect_match capture_race_loser_msg "race.db: was created by another process meanwhile" "$(cat first.err)"
expect_match capture_race_loser_kept_msg "recording is kept as \.race\.db\.tmp-$first" "$(cat first.err)"
same_file capture_race_winner_kept race.db winner.copy
expect_exit capture_race_loser_recording 0 "$REPLAY" info ".race.db.tmp-$first"
rm -f ".race.db.tmp-$first"
t_done
