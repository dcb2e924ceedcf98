#!/usr/bin/env bash
# bench/synth.sh - how fast `memcg-replay synth` writes traces: the fleet scenario at 1 M
# and 20 M events, rows/s end to end (generator + ground-truth simulator + SQLite), against
# the generator alone on the same events (build/bench/synth_gen, no database) in the same
# invocation; peak RSS at both sizes shows the events stream (no array in memory).
# The 20 M trace is left in $MCR_BENCH_DIR/fleet-20m.db for the replay benchmark.
set -u
cd "$(dirname "$0")/.."
: "${MCR_BUILD:=build}"
DIR=${MCR_BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/mcr-bench.XXXXXX")}
R=$MCR_BUILD/memcg-replay
GEN=$MCR_BUILD/bench/synth_gen
[ -x "$R" ] && [ -x "$GEN" ] || { echo "synth bench: build first (make)"; exit 1; }

for n in 1000000 20000000; do
	label=$((n / 1000000))m
	db=$DIR/fleet-$label.db
	gen=$("$GEN" fleet events "$n" | awk '{ print $(NF - 1) }') || { echo "synth_gen failed"; exit 1; }
	/usr/bin/time -f '%e %M' -o "$DIR/synth-time-$label" "$R" synth -q --scenario fleet \
		--events "$n" -o "$db" || { echo "synth $label failed"; exit 1; }
	read -r wall rss <"$DIR/synth-time-$label"
	eval "rss_$label=$rss"
	awk -v n="$n" -v w="$wall" -v g="$gen" -v r="$rss" -v b="$(stat -c %s "$db")" -v l="$label" 'BEGIN {
		printf "fleet %-4s synth to SQLite: %9.0f rows/s (%.2f x the generator alone, %9.0f events/s), %6.1f s, peak RSS %.0f MiB, %.1f bytes/event\n", l, n / w, (n / w) / g, g, w, r / 1024, b / n }'
done
awk -v a="$rss_1m" -v b="$rss_20m" 'BEGIN { printf "peak RSS 20 M vs 1 M events: %.2f x\n", b / a }'
rm -f "$DIR/fleet-1m.db" "$DIR"/synth-time-*
echo "kept for the replay benchmark: $DIR/fleet-20m.db"
