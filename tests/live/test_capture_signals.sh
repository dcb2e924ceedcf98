#!/usr/bin/env bash
# tests/live/test_capture_signals.sh - how a running capture ends.
#   1. every signal whose default would kill it (SIGQUIT, SIGUSR1, SIGALRM, the
#      real-time ones, ...) stops it as SIGINT does: its tracefs instance and
#      temporary file are removed, and what it stored is published (exit 0 or
#      11), or, had it stored nothing, nothing is (exit 16).  They used to kill
#      it with the instance tracing and .FILE.tmp-PID left.  Under nohup,
#      SIGHUP stays ignored.
#   2. a COMMAND still running when the capture stops is signalled (its process
#      group: what it started too), given 2 s, then killed, and its status is kept: one that ignores SIGTERM no longer
#      holds the capture past -d for as long as it likes; a SIGINT during that
#      wait is passed on and no longer leaves it running with status -1.
# As root with tracefs and the memcg tracepoints; system-wide, no cgroup is
# made.  Every process it starts is ended by its PID; instances and files
# it creates are removed.
. "$(dirname "$0")/../lib.sh"

INSTANCES=/sys/kernel/tracing/instances

if [ ! -x "$CAPTURE" ]; then skip capture_signals "$CAPTURE is not built"; t_done; fi
if [ "$(id -u)" -ne 0 ]; then skip capture_signals "not root: live capture needs root"; t_done; fi
if [ ! -d /sys/kernel/tracing/events/memcg/mod_memcg_state ]; then
	skip capture_signals "no tracefs with memcg tracepoints"
	t_done
fi
command -v sqlite3 >/dev/null || { skip capture_signals "no sqlite3 shell"; t_done; }
sq() { sqlite3 -batch -noheader "$@"; }
cd "$T_TMP" || exit 1

# ours to end on the way out: captures, and the commands (their PIDs in *.pid)
KILL_PIDS=
kill_ours() {
	local p f
	for p in $KILL_PIDS; do kill -9 "$p" 2>/dev/null; done
	for f in "$T_TMP"/*.pid; do [ -s "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null; done
	for p in $KILL_PIDS; do rmdir "$INSTANCES/memcg_capture_$p" 2>/dev/null; done
	return 0
}
t_on_exit kill_ours
# until $2 exists (a file, or an instance directory), at most 20 s
wait_for() {
	local i=0
	while [ ! -e "$2" ] && kill -0 "$1" 2>/dev/null && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
	[ -e "$2" ]
}
no_leftovers() {	# NAME PID: no instance, no temporary file
	local left
	[ ! -d "$INSTANCES/memcg_capture_$2" ] && pass "$1_no_instance" || fail "$1_no_instance" "memcg_capture_$2 left"
	left=$(ls -A | grep -E '\.tmp-' | tr '\n' ' ')
	[ -z "$left" ] && pass "$1_no_tmp" || fail "$1_no_tmp" "left: $left"
}
# the process whose PID is in $1 runs (a zombie, dead but not yet reaped by init, does not)
alive() {
	local st
	[ -s "$1" ] || return 1
	st=$(awk '{ print $3 }' "/proc/$(cat "$1")/stat" 2>/dev/null)
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# --- 1. each terminating signal while tracing ------------------------------------------
for sig in INT TERM HUP QUIT USR1 USR2 ALRM VTALRM PROF IO PWR XCPU RTMIN RTMIN+4 RTMAX; do
	n=sig_${sig/+/_}
	rm -f s.db
	"$CAPTURE" -o s.db -d 60 >"$n.out" 2>"$n.err" &
	CAP=$!
	KILL_PIDS="$KILL_PIDS $CAP"
	if ! wait_for $CAP "$INSTANCES/memcg_capture_$CAP"; then
		fail "$n" "no instance: $(head -c 300 "$n.err")"
		continue
	fi
	kill -"$sig" $CAP
	wait $CAP
	rc=$?
	case $rc in
	0 | 11)
		got=$(sq s.db "SELECT coalesce(sum(count), 0) > 0, (SELECT value FROM meta WHERE key = 'capture_complete') FROM event_chunks" 2>&1)
		[ "$got" = "1|1" ] && pass "$n" || fail "$n" "exit $rc, events>0|complete: '$got'"
		;;
	16)
		[ ! -e s.db ] && pass "$n" || fail "$n" "exit 16 and s.db written"
		;;
	*)
		fail "$n" "exit $rc: $(head -c 300 "$n.err")"
		;;
	esac
	expect_match "${n}_stopping" 'stopping on|stopped by' "$(cat "$n.err")"
	no_leftovers "$n" $CAP
done

# under nohup, SIGHUP stays ignored: the capture runs its -d out
nohup "$CAPTURE" -o h.db -d 1 >h.out 2>h.err &
CAP=$!
KILL_PIDS="$KILL_PIDS $CAP"
if wait_for $CAP "$INSTANCES/memcg_capture_$CAP"; then
	kill -HUP $CAP
	wait $CAP
	rc=$?
	[ $rc -eq 0 ] || [ $rc -eq 11 ] && pass sig_HUP_nohup || fail sig_HUP_nohup "exit $rc: $(head -c 300 h.err)"
	grep -q 'stopping on' h.err && fail sig_HUP_nohup_ignored "$(cat h.err)" || pass sig_HUP_nohup_ignored
else
	fail sig_HUP_nohup "no instance: $(head -c 300 h.err)"
fi
no_leftovers sig_HUP_nohup $CAP

# --- 2. the COMMAND when the capture stops first ---------------------------------------
# a. -d ends the capture; the command ignores SIGTERM: SIGKILL 2 s later, status 137
"$CAPTURE" -o a.db -d 0.5 -- sh -c 'echo $$ >a.pid; trap "" TERM; exec sleep 30' >a.out 2>a.err &
CAP=$!
KILL_PIDS="$KILL_PIDS $CAP"
wait $CAP
rc=$?
[ $rc -eq 0 ] || [ $rc -eq 11 ] && pass cmd_term_ignored_exit || fail cmd_term_ignored_exit "exit $rc: $(head -c 300 a.err)"
expect_match cmd_term_ignored_msg 'did not end within 2 s of SIGTERM: sending SIGKILL' "$(cat a.err)"
got=$(sq a.db "SELECT value FROM meta WHERE key = 'command_exit_status'")
[ "$got" = 137 ] && pass cmd_term_ignored_status || fail cmd_term_ignored_status "command_exit_status '$got'"
alive a.pid && fail cmd_term_ignored_ended "pid $(cat a.pid) still runs" || pass cmd_term_ignored_ended
no_leftovers cmd_term_ignored $CAP

# a2. what the command started is stopped with it (its process group): the shell ends on
# SIGTERM, and so does its background sleep, which used to be left running
"$CAPTURE" -o a2.db -d 0.5 -- sh -c 'sleep 30 & echo $! >a2.pid; wait' >a2.out 2>a2.err &
CAP=$!
KILL_PIDS="$KILL_PIDS $CAP"
wait $CAP
rc=$?
[ $rc -eq 0 ] || [ $rc -eq 11 ] && pass cmd_group_exit || fail cmd_group_exit "exit $rc: $(head -c 300 a2.err)"
got=$(sq a2.db "SELECT value FROM meta WHERE key = 'command_exit_status'")
[ "$got" = 143 ] && pass cmd_group_status || fail cmd_group_status "command_exit_status '$got'"
alive a2.pid && fail cmd_group_child_ended "its child $(cat a2.pid) still runs" || pass cmd_group_child_ended
grep -q SIGKILL a2.err && fail cmd_group_no_kill "$(cat a2.err)" || pass cmd_group_no_kill

# b. SIGINT ends the capture; the command ignores SIGINT and SIGTERM
"$CAPTURE" -o b.db -- sh -c 'echo $$ >b.pid; trap "" INT TERM; exec sleep 30' >b.out 2>b.err &
CAP=$!
KILL_PIDS="$KILL_PIDS $CAP"
if wait_for $CAP b.pid; then
	kill -INT $CAP
	wait $CAP
	rc=$?
	[ $rc -eq 0 ] || [ $rc -eq 11 ] && pass cmd_int_ignored_exit || fail cmd_int_ignored_exit "exit $rc: $(head -c 300 b.err)"
	expect_match cmd_int_ignored_msg 'did not end within 2 s of SIGINT: sending SIGKILL' "$(cat b.err)"
	got=$(sq b.db "SELECT value FROM meta WHERE key = 'command_exit_status'")
	[ "$got" = 137 ] && pass cmd_int_ignored_status || fail cmd_int_ignored_status "command_exit_status '$got'"
	alive b.pid && fail cmd_int_ignored_ended "pid $(cat b.pid) still runs" || pass cmd_int_ignored_ended
else
	fail cmd_int_ignored "the command never started: $(head -c 300 b.err)"
fi
no_leftovers cmd_int_ignored $CAP

# c. a SIGINT while the capture waits for a command it sent SIGTERM (after -d): the
# command gets it too (it notes both), and is still killed at the end of the wait
"$CAPTURE" -o c.db -d 0.5 -- sh -c 'echo $$ >c.pid; trap "echo term >>c.got" TERM;
	trap "echo int >>c.got" INT; while :; do sleep 0.1; done' >c.out 2>c.err &
CAP=$!
KILL_PIDS="$KILL_PIDS $CAP"
if wait_for $CAP c.got; then
	kill -INT $CAP
	wait $CAP
	rc=$?
	[ $rc -eq 0 ] || [ $rc -eq 11 ] && pass cmd_later_int_exit || fail cmd_later_int_exit "exit $rc: $(head -c 300 c.err)"
	got=$(tr '\n' ' ' <c.got)
	[ "$got" = "term int " ] && pass cmd_later_int_passed_on || fail cmd_later_int_passed_on "the command got: '$got'"
	got=$(sq c.db "SELECT value FROM meta WHERE key = 'command_exit_status'")
	[ "$got" = 137 ] && pass cmd_later_int_status || fail cmd_later_int_status "command_exit_status '$got'"
	alive c.pid && fail cmd_later_int_ended "pid $(cat c.pid) still runs" || pass cmd_later_int_ended
else
	fail cmd_later_int "the command never got SIGTERM: $(head -c 300 c.err)"
fi
no_leftovers cmd_later_int $CAP

# d. a command that ends on the signal: its real status, no SIGKILL
"$CAPTURE" -o d.db -- sh -c 'echo $$ >d.pid; exec sleep 30' >d.out 2>d.err &
CAP=$!
KILL_PIDS="$KILL_PIDS $CAP"
if wait_for $CAP d.pid; then
	kill -TERM $CAP
	wait $CAP
	rc=$?
	[ $rc -eq 0 ] || [ $rc -eq 11 ] && pass cmd_term_exit || fail cmd_term_exit "exit $rc: $(head -c 300 d.err)"
	got=$(sq d.db "SELECT value FROM meta WHERE key = 'command_exit_status'")
	[ "$got" = 143 ] && pass cmd_term_status || fail cmd_term_status "command_exit_status '$got'"
	grep -q SIGKILL d.err && fail cmd_term_no_kill "$(cat d.err)" || pass cmd_term_no_kill
else
	fail cmd_term "the command never started: $(head -c 300 d.err)"
fi
no_leftovers cmd_term $CAP
t_done
