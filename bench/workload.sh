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
#            mixed      DIR/C faults anonymous memory and writes and removes a 16 MiB
#                       file every 0.3 s (page cache); DIR itself read every
#                       MCR_READ_MS ms (default 80, 0 none: the reads are another
#                       reader's, memcg-capture --read or memcg-statlog)
#            churn      DIR/C/jN made, used (anonymous faults, 0.3 s) and removed in a
#                       loop; C read every 100 ms: cgroups created and removed
#            netstream  DIR/mcr_net_PID holds MCR_STREAMS iperf3 server/client pairs
#                       (default 2), each one TCP stream over loopback with 1024-byte
#                       writes; DIR read every MCR_READ_MS ms (default 80, 0 none).
#                       The shape of the test of the continue patch (netperf
#                       TCP_STREAM -m 1024 in one leaf directly below the parent).
#                       Prints "netstream: STREAMS streams ... GBIT Gbit/s" on stdout.
#                       Socket memory reaches memory.stat only on cgroup v2
#                       (mem_cgroup_sk_charge() -> MEMCG_SOCK); on v1 the leaf gets
#                       TCP accounting (memory.kmem.tcp.limit_in_bytes = -1, unless
#                       MCR_TCPMEM=0), which charges a page counter only.
#            fleet      a host's shape in small: DIR/tT/mM/lL, 5 x 4 x 5 = 100 leaves
#                       under 20 middles and 5 tops (125 cgroups, 3 levels); 4 leaves
#                       fault anonymous memory (32 MiB each), 4 write and rewrite a
#                       32 MiB file each (page cache), the other 92 hold a process that
#                       sleeps; 8 readers every 50 ms: DIR, 2 tops, 3 middles, 2 leaves
#   DIR      an existing memory cgroup directory of the caller's (made beneath the
#            caller's own cgroup); the workload makes its tree under it and removes it
#   SECONDS  how long (default 5)
#   MCR_FAULT_RATE  faults/s of each anonymous-fault stress (race, anon2, levels, churn
#            where it applies); unset or 0: as fast as it can.  Tests set it, so that
#            the events of a recording do not grow with the machine's speed.
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
NET_T=

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

# quiet_reader CG MS: like reader, but without a process per read: bash's own mapfile
# reads the file and a read -t on an idle FIFO sleeps, so the reader's cgroup sees the
# reads' flushes and not the fork, exec and page faults of a cat and a sleep per read
# (updates of the reader's cgroup that would be the reader's, not the workload's)
quiet_reader() {
	local f="$DIR/$1/memory.stat" s
	s=$(awk "BEGIN { printf \"%.3f\", $2 / 1000 }")
	mkfifo "$NET_T/idle" || die "mkfifo $NET_T/idle"
	bash -c 'exec 3<>"$2" && while :; do mapfile -t _ <"$0"; read -r -t "$1" -u 3 _; done' \
		"$f" "$s" "$NET_T/idle" &
	KIDS+=($!)
}

cleanup() {
	local p d
	for p in "${KIDS[@]+"${KIDS[@]}"}"; do kill "$p" 2>/dev/null; done
	for p in "${KIDS[@]+"${KIDS[@]}"}"; do wait "$p" 2>/dev/null; done
	[ -n "$NET_T" ] && rm -rf "$NET_T"
	for d in "${MADE[@]+"${MADE[@]}"}"; do
		rmdir "$DIR/$d" 2>/dev/null || { sleep 0.2; rmdir "$DIR/$d" 2>/dev/null; }
	done
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# listening PORT: a TCP socket listens on PORT (iperf3 -s listens on :: or 0.0.0.0)
listening() {
	awk -v p="$(printf ':%04X' "$1")" '$4 == "0A" && substr($2, length($2) - 4) == p { f = 1 }
		END { exit !f }' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# netstream: MCR_STREAMS iperf3 pairs in DIR/mcr_net_PID, client i on CPU (i - 1) mod N
# and its server on the next one, as the seed pinned each netperf/netserver pair apart
# (loopback traffic charges and uncharges socket memory on both CPUs).  iperf3 3.12 is
# single-threaded: one process per stream is what spreads them over the CPUs.
netstream() {
	local n=${MCR_STREAMS:-2} ms=${MCR_READ_MS:-80} leaf=mcr_net_$$ tcp=off i port port0
	local ncpu pin=() c k sum
	command -v iperf3 >/dev/null || die "iperf3 is not installed (Debian package iperf3)"
	case $n in '' | *[!0-9]* | 0*) die "MCR_STREAMS must be 1..100, not '$n'" ;; esac
	[ "$n" -le 100 ] || die "MCR_STREAMS must be 1..100, not '$n'"
	case $ms in '' | *[!0-9]*) die "MCR_READ_MS must be a number of ms, not '$ms'" ;; esac
	case $SECS in '' | *[!0-9]* | 0*) die "netstream needs whole SECONDS >= 1, not '$SECS'" ;; esac
	mkcg "$leaf"
	[ -f "$DIR/$leaf/memory.stat" ] || die "$DIR/$leaf has no memory controller"
	# cgroup v1 puts sockets in a memcg only where TCP accounting was switched on
	# (mem_cgroup_sk_alloc() checks memcg1_tcpmem_active()); -1 is no limit
	if [ -f "$DIR/$leaf/cgroup.controllers" ]; then
		tcp="always (v2)"
	elif [ -f "$DIR/$leaf/memory.kmem.tcp.limit_in_bytes" ] && [ "${MCR_TCPMEM:-1}" != 0 ]; then
		echo -1 >"$DIR/$leaf/memory.kmem.tcp.limit_in_bytes" ||
			die "cannot switch on TCP accounting in $DIR/$leaf"
		tcp=on
	fi
	NET_T=$(mktemp -d "${TMPDIR:-/tmp}/mcr-netstream.XXXXXX") || die "mktemp"
	ncpu=$(getconf _NPROCESSORS_ONLN)
	port0=$((20000 + ($$ % 400) * 100))
	for i in $(seq "$n"); do
		port=$((port0 + i))
		pin=()
		command -v taskset >/dev/null && pin=(taskset -c $((i % ncpu)))
		in_cg "$leaf" "${pin[@]+"${pin[@]}"}" iperf3 -s -1 -p "$port"
	done
	for i in $(seq "$n"); do
		port=$((port0 + i))
		for k in $(seq 200); do listening "$port" && break; sleep 0.05; done
		listening "$port" || die "iperf3 server on port $port did not start"
	done
	[ "$ms" -gt 0 ] && quiet_reader . "$ms"
	c=()
	for i in $(seq "$n"); do
		port=$((port0 + i))
		pin=()
		command -v taskset >/dev/null && pin=(taskset -c $(((i - 1) % ncpu)))
		bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$DIR/$leaf" \
			"${pin[@]+"${pin[@]}"}" iperf3 -c 127.0.0.1 -p "$port" -t "$SECS" -l 1024 -f m \
			>"$NET_T/c$i" 2>&1 &
		KIDS+=($!)
		c+=($!)
	done
	for i in "${!c[@]}"; do
		wait "${c[$i]}" || die "stream $((i + 1)): iperf3 failed: $(tail -n 1 "$NET_T/c$((i + 1))")"
	done
	# the client's "receiver" summary line: "... 6598 Mbits/sec   receiver"
	sum=$(awk '$NF == "receiver" && $(NF - 1) == "Mbits/sec" { s += $(NF - 2); k++ }
		END { if (k == '"$n"') printf "%.3f", s / 1000 }' "$NET_T"/c*)
	[ -n "$sum" ] || die "no receiver summary in an iperf3 client's output"
	echo "netstream: $n streams x $SECS s, 1024-byte writes, tcp accounting $tcp: $sum Gbit/s"
}

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
	in_cg P/C "$STRESS" 64 "$SECS" "${MCR_FAULT_RATE:-0}"
	reader P 80
	wait "${KIDS[0]}"
	;;
anon2)
	mkcg P P/A0 P/A1
	in_cg P/A0 "$STRESS" 64 "$SECS" "${MCR_FAULT_RATE:-0}"
	in_cg P/A1 "$STRESS" 64 "$SECS" "${MCR_FAULT_RATE:-0}"
	reader P 80
	wait "${KIDS[0]}" "${KIDS[1]}"
	;;
levels)
	mkcg L1 L1/L2 L1/L2/L3
	in_cg L1/L2/L3 "$STRESS" 64 "$SECS" "${MCR_FAULT_RATE:-0}"
	reader L1 50
	reader L1/L2 70
	reader L1/L2/L3 110
	wait "${KIDS[0]}"
	;;
mixed)
	mkcg C
	in_cg C "$STRESS" 64 "$SECS" "${MCR_FAULT_RATE:-0}"
	in_cg C bash -c 'end=$((SECONDS + $1)); while [ $SECONDS -lt $end ]; do
		dd if=/dev/zero of="$2" bs=1M count=16 2>/dev/null; rm -f "$2"; sleep 0.3; done' \
		_ "$SECS" "${TMPDIR:-/tmp}/mcr-workload.$$"
	[ "${MCR_READ_MS:-80}" -gt 0 ] && reader . "${MCR_READ_MS:-80}"
	wait "${KIDS[0]}" "${KIDS[1]}"
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
netstream)
	netstream
	;;
fleet)
	busy=()
	for t in 0 1 2 3 4; do
		mkcg "t$t"
		for m in 0 1 2 3; do
			mkcg "t$t/m$m"
			for l in 0 1 2 3 4; do mkcg "t$t/m$m/l$l"; done
		done
	done
	for i in 0 1 2 3; do
		in_cg "t$i/m$i/l$i" "$STRESS" 32 "$SECS" "${MCR_FAULT_RATE:-0}"
		busy+=("t$i/m$i/l$i")
		in_cg "t$((i + 1))/m$(((i + 1) % 4))/l$(((i + 2) % 5))" bash -c \
			'end=$((SECONDS + $1)); while [ $SECONDS -lt $end ]; do
			dd if=/dev/zero of="$2" bs=1M count=32 2>/dev/null; rm -f "$2"; done' \
			_ "$SECS" "${TMPDIR:-/tmp}/mcr-workload.$$.$i"
		busy+=("t$((i + 1))/m$(((i + 1) % 4))/l$(((i + 2) % 5))")
	done
	nb=${#KIDS[@]}
	for t in 0 1 2 3 4; do
		for m in 0 1 2 3; do
			for l in 0 1 2 3 4; do
				case " ${busy[*]} " in *" t$t/m$m/l$l "*) continue ;; esac
				in_cg "t$t/m$m/l$l" sleep "$SECS"
			done
		done
	done
	for r in . t0 t1 t0/m0 t1/m1 t2/m2 t0/m0/l0 t3/m3/l3; do reader "$r" 50; done
	wait "${KIDS[@]:0:$nb}"
	rm -f "${TMPDIR:-/tmp}/mcr-workload.$$".*
	;;
*)
	die "unknown workload '$NAME' (idle, pagecache, race, anon2, levels, mixed, churn, netstream, fleet)"
	;;
esac
rm -f "${TMPDIR:-/tmp}/mcr-workload.$$"
exit 0
