#!/usr/bin/env bash
# tests/cli/test_capture_cleanup.sh - memcg-capture --cleanup removes the
# tracefs instances memcg_capture_<pid> whose pid is not running (what a
# kill -9 leaves tracing), names each, and leaves those of running pids.
# The instances are fakes made here (mkdir in instances/), nothing traces.
# run.sh: alone (--cleanup removes every dead capture's tracefs instance)
source "$(dirname "$0")/../lib.sh"

INSTANCES=/sys/kernel/tracing/instances
[ -x "$CAPTURE" ] || { skip capture_cleanup "$CAPTURE is not built"; t_done; }
expect_exit cleanup_with_output 2 "$CAPTURE" --cleanup -o "$T_TMP/x.db"
"$CAPTURE" --help | grep -q -- '--cleanup' && pass cleanup_in_help || fail cleanup_in_help "not in --help"
if [ "$(id -u)" -ne 0 ]; then skip capture_cleanup "not root"; t_done; fi
[ -d "$INSTANCES" ] || { skip capture_cleanup "no tracefs instances directory"; t_done; }

# a pid that was just running and is not any more
sh -c 'exit 0' &
dead=$!
wait $dead
[ -e /proc/$dead ] && { skip capture_cleanup "pid $dead was reused at once"; t_done; }
orphan=$INSTANCES/memcg_capture_$dead
alive=$INSTANCES/memcg_capture_$$	# this shell runs: not an orphan
t_on_exit "rmdir '$orphan' '$alive' 2>/dev/null"
mkdir "$orphan" "$alive" || { skip capture_cleanup "cannot make an instance"; t_done; }

expect_exit cleanup_exit 0 "$CAPTURE" --cleanup &&
	expect_match cleanup_names_it "removed .*memcg_capture_$dead \\(pid $dead is not running\\)" "$T_OUT"
[ ! -d "$orphan" ] && pass cleanup_removed || fail cleanup_removed "$orphan is still there"
[ -d "$alive" ] && pass cleanup_kept_running || fail cleanup_kept_running "the instance of running pid $$ was removed"
if grep -q "memcg_capture_$$" <<<"$T_OUT"; then fail cleanup_quiet_on_running "named the running one"; else pass cleanup_quiet_on_running; fi
rmdir "$alive"
expect_exit cleanup_none 0 "$CAPTURE" --cleanup &&
	expect_match cleanup_none_says 'no orphan instance' "$T_OUT"
t_done
