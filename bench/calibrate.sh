#!/usr/bin/env bash
# bench/calibrate.sh [RUNS] - what the update path's operations cost on this host:
# memcg-replay calibrate RUNS times (default 3), each printing every operation's median,
# its spread (10th - 90th percentile) and its ratio to a plain add measured in the same
# run, then the median of each figure over the runs.  The figures are user-space proxies
# of kernel operations (see 'memcg-replay calibrate --help'); on a loaded machine the
# medians move, so the load average is printed with them.
set -u
cd "$(dirname "$0")/.."
: "${MCR_BUILD:=build}"
REPLAY=$MCR_BUILD/memcg-replay
runs=${1:-3}
dir=${MCR_BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/mcr-bench.XXXXXX")}
mkdir -p "$dir"

echo "calibrate: $runs runs on $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq 1 "$runs"); do
	echo "--- run $i"
	"$REPLAY" calibrate -o "$dir/calib-$i.json" || exit 1
done
echo "--- median over the runs (ns; x plain add of the same run, then the median of those)"
python3 - "$dir" "$runs" <<'PY'
import json, statistics, sys
d, n = sys.argv[1], int(sys.argv[2])
cals = [json.load(open(f"{d}/calib-{i}.json")) for i in range(1, n + 1)]
for op in cals[0]["ops"]:
    ns = [c["ops"][op]["ns"] for c in cals]
    ratio = [c["ops"][op]["ns"] / c["ops"]["plain_add"]["ns"] for c in cals]
    print(f"  {op:22s} {statistics.median(ns):10.2f} ns   x plain add {statistics.median(ratio):8.1f}"
          f"   (runs: {min(ns):.2f} - {max(ns):.2f})")
PY
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
