#!/usr/bin/env bash
# bench/replay.sh - replay throughput on a synthetic fleet trace (>= 20 M
# events), three policies against a one-policy baseline in the same
# invocation: end to end from SQLite (memcg-replay replay) with peak RSS, and
# simulator-only with the events in memory (build/bench/replay_mem).
set -u
cd "$(dirname "$0")/.."
: "${MCR_BUILD:=build}"
DIR=${MCR_BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/mcr-bench.XXXXXX")}
EVENTS=${MCR_BENCH_REPLAY_EVENTS:-20000000}
R=$MCR_BUILD/memcg-replay
TRACE=$DIR/fleet-replay.db

"$R" synth --scenario fleet --events "$EVENTS" -o "$TRACE" -q || { echo "synth failed"; exit 1; }
run() {	# label, policies -> prints events/s, wall s, peak RSS
	local db=$DIR/fleet-$1.db
	cp "$TRACE" "$db"
	# the pass alone: spread (synth's own visit placement), not the inferred model's extra pass
	/usr/bin/time -f '%e %M' -o "$DIR/time-$1" "$R" replay "$db" --policy "$2" -m spread >/dev/null ||
		{ echo "replay $1 failed"; exit 1; }
	read -r wall rss <"$DIR/time-$1"
	eval "wall_$1=$wall rss_$1=$rss"
	awk -v n="$EVENTS" -v w="$wall" -v r="$rss" -v l="$1" -v p="$2" 'BEGIN {
		printf "end to end %-8s (%s): %10.0f events/s, %6.1f s, peak RSS %.0f MiB\n",
		       l, p, n / w, w, r / 1024 }'
	rm -f "$db"
}
echo "fleet trace: $EVENTS events, $(du -m "$TRACE" | cut -f1) MiB"
run base break
run three break,continue,legacy
awk -v a="$wall_base" -v b="$wall_three" -v ra="$rss_base" -v rb="$rss_three" 'BEGIN {
	printf "three policies vs one: time %.2f x, peak RSS %.2f x\n", b / a, rb / ra }'
# Simulator-only: the same events preloaded into memory, no SQLite in the loop.
"$MCR_BUILD"/bench/replay_mem "$TRACE"
rm -f "$TRACE"

# The default command a user runs: the inferred order (a first pass of
# validate's inference) then the replay, and validate itself, against the plain
# one-policy pass (-m spread), on fleet traces of growing tree size (forced
# root flushes every 20 ms, so that validate has values to compare).  Seconds
# of user time: the machine's other load does not count.
IEVENTS=${MCR_BENCH_INFER_EVENTS:-100000}
utime() {	# db, args... -> user seconds of memcg-replay args... db
	local db=$1
	shift
	/usr/bin/time -f '%U' -o "$DIR/utime" "$R" "$@" "$db" >/dev/null 2>&1
	cat "$DIR/utime"
}
for cg in ${MCR_BENCH_INFER_CGROUPS:-250 1000}; do
	t=$DIR/fleet-infer-$cg.db
	"$R" synth --scenario fleet --events "$IEVENTS" --cgroups "$cg" --period-ms 20 -o "$t" -q ||
		{ echo "synth failed"; exit 1; }
	cp "$t" "$t.a"; plain=$(utime "$t.a" replay -q -p break -m spread)
	cp "$t" "$t.b"; inf=$(utime "$t.b" replay -q -p break)
	cp "$t" "$t.c"; val=$(utime "$t.c" validate -q -r 0)
	awk -v n="$IEVENTS" -v c="$cg" -v p="$plain" -v i="$inf" -v v="$val" 'BEGIN {
		printf "fleet %d events, %4d cgroups: plain %.2f s, default (inferred) %.2f s (%.1f x), validate %.2f s (%.1f x)\n",
		       n, c, p, i, i / (p > 0 ? p : 0.01), v, v / (p > 0 ? p : 0.01) }'
	rm -f "$t" "$t.a" "$t.b" "$t.c"
done
