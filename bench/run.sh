#!/usr/bin/env bash
# bench/run.sh - runs every benchmark script in bench/ (each prints its own
# events/s figures and ratios against a baseline run in the same invocation).
set -u
cd "$(dirname "$0")/.."
: "${MCR_BUILD:=build}"
export MCR_BUILD
export MCR_BENCH_DIR=${MCR_BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/mcr-bench.XXXXXX")}
rc=0
for b in bench/calibrate.sh bench/synth.sh bench/replay.sh bench/import.sh bench/capture.sh bench/fidelity.sh; do
	[ -f "$b" ] || continue
	echo "=== $b"
	bash "$b" || rc=1
done
if [ -x "$MCR_BUILD/bench/db_rate" ]; then
	echo "=== db_rate (SQLite writer and reader rows/s)"
	"$MCR_BUILD/bench/db_rate" 2000000 2 "$MCR_BENCH_DIR" || rc=1
fi
exit $rc
