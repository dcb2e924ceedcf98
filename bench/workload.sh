#!/usr/bin/env bash
# bench/workload.sh - the workloads real traces are recorded with, for
# bench/fidelity.sh and tests/live/test_validate.sh.  Run it under the recorder:
#   memcg-capture -o t.db -- bench/workload.sh NAME DIR SECONDS
#
#   NAME     idle       nothing of ours: the host's own background and periodic flushes
#            pagecache  DIR/P/F writes and rewrites a 64 MiB file; P read every 80 ms
#            race       DIR/P/C faults anonymous memory; P read every 80 ms: the seed
#                       race's shape (a parent whose only busy child churns anonymous
#                       memory), where break leaves P stuck at its threshold
#            anon2      DIR/P/A0 and DIR/P/A1 each fault anonymous memory (one per CPU
#                       on 2 CPUs); P read every 80 ms
#            levels     DIR/L1/L2/L3 faults anonymous memory; L1, L2 and L3 read every
#                       50, 70 and 110 ms: readers at several levels
#            churn      DIR/C/jN made, used (anonymous faults, 0.3 s) and removed in a
#                       loop; C read every 100 ms: cgroups created and removed
#   DIR      an existing memory cgroup directory of the caller's (made beneath the
#            caller's own cgroup); the workload makes its tree under it and removes it
#   SECONDS  how long (default 5)
#
# It moves only its own processes, ends only the processes it started (by PID) and
# leaves DIR as it found it.  Needs root; cgroup v1 or v2 (v2: DIR must allow
# +memory in its cgroup.subtree_control).  Exit 0, or 1 with the reason on stderr.
set -u
NAME=${1:-}
DIR=${2:-}
SECS=${3:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
: "${MCR_BUILD:=build}"
case $MCR_BUILD in
/*) STRESS=$MCR_BUILD/bench/stress_anon ;;
*) STRESS=$HERE/../$MCR_BUILD/bench/stress_anon ;;
esac
KIDS=()
MADE=()

die() { echo "workload: $*" >&2; exit 1; }
[ -n "$NAME" ] && [ -d "$DIR" ] || die "usage: workload.sh NAME DIR [SECONDS]"
[ -x "$STRESS" ] || die "$STRESS not built (make)"

# mkcg PATH...: cgroups under DIR, parents first; v2 needs +memory on each parent
mkcg() {
	local d
	for d in "$@"; do
		if [ -f "$(dirname "$DIR/$d")/cgroup.subtree_control" ] &&
		   [ -f "$DIR/cgroup.controllers" ]; then
			echo +memory >"$(dirname "$DIR/$d")/cgroup.subtree_control" 2>/dev/null
		fi
		mkdir "$DIR/$d" || die "mkdir $DIR/$d"
		MADE=("$d" "${MADE[@]+"${MADE[@]}"}")
	done
}

# in CG CMD...: CMD in a child process that first moves itself into DIR/CG
in_cg() {
	local cg=$1
	shift
	bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$DIR/$cg" "$@" >/dev/null &
	KIDS+=($!)
}

# reader CG MS: cat DIR/CG/memory.stat every MS ms, from DIR's parent's cgroup
reader() {
	local f="$DIR/$1/memory.stat" s
	s=$(awk "BEGIN { printf \"%.3f\", $2 / 1000 }")
	bash -c 'while :; do cat "$0" >/dev/null; sleep "$1"; done' "$f" "$s" &
	KIDS+=($!)
}

cleanup() {
	local p d
	for p in "${KIDS[@]+"${KIDS[@]}"}"; do kill "$p" 2>/dev/null; done
	for p in "${KIDS[@]+"${KIDS[@]}"}"; do wait "$p" 2>/dev/null; done
	for d in "${MADE[@]+"${MADE[@]}"}"; do
		rmdir "$DIR/$d" 2>/dev/null || { sleep 0.2; rmdir "$DIR/$d" 2>/dev/null; }
	done
}
trap cleanup EXIT
trap 'exit 1' INT TERM

case $NAME in
idle)
	sleep "$SECS"
	;;
pagecache)
	mkcg P P/F
	in_cg P/F bash -c 'end=$((SECONDS + $1)); while [ $SECONDS -lt $end ]; do
		dd if=/dev/zero of="$2" bs=1M count=64 2>/dev/null; rm -f "$2"; done' \
		_ "$SECS" "${TMPDIR:-/tmp}/mcr-workload.$$"
	reader P 80
	wait "${KIDS[0]}"
	;;
race)
	mkcg P P/C
	in_cg P/C "$STRESS" 64 "$SECS"
	reader P 80
	wait "${KIDS[0]}"
	;;
anon2)
	mkcg P P/A0 P/A1
	in_cg P/A0 "$STRESS" 64 "$SECS"
	in_cg P/A1 "$STRESS" 64 "$SECS"
	reader P 80
	wait "${KIDS[0]}" "${KIDS[1]}"
	;;
levels)
	mkcg L1 L1/L2 L1/L2/L3
	in_cg L1/L2/L3 "$STRESS" 64 "$SECS"
	reader L1 50
	reader L1/L2 70
	reader L1/L2/L3 110
	wait "${KIDS[0]}"
	;;
churn)
	mkcg C
	reader C 100
	end=$((SECONDS + SECS))
	n=0
	while [ $SECONDS -lt "$end" ]; do
		mkdir "$DIR/C/j$n" || die "mkdir $DIR/C/j$n"
		bash -c 'echo $$ >"$0/cgroup.procs" && exec "$1" 16 0.3' "$DIR/C/j$n" "$STRESS" \
			>/dev/null
		# the job's charges stay until reclaimed: rmdir leaves an offline memcg behind
		rmdir "$DIR/C/j$n" || die "rmdir $DIR/C/j$n"
		n=$((n + 1))
	done
	;;
*)
	die "unknown workload '$NAME' (idle, pagecache, race, anon2, levels, churn)"
	;;
esac
rm -f "${TMPDIR:-/tmp}/mcr-workload.$$"
exit 0
