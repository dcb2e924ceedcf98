#!/usr/bin/env bash
# tests/cli/test_capture_outfile.sh - memcg-capture checks every option before
# it touches -o FILE, and follows the output policy of synth and import
# (cli/outfile.h): a capture that cannot run leaves an existing database byte
# for byte, and a device, FIFO or foreign file is never replaced.  Every case
# here stops before tracing starts, so nothing is recorded; they still need
# root and tracefs to get that far.
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
no_sidecars capture_no_sidecars
t_done
