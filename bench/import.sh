#!/usr/bin/env bash
# bench/import.sh - memcg-replay import rate against libtracecmd alone iterating the
# same trace.dat (bench/import_iter.c), both run here on the same file; prints the
# rates, their ratios and bytes per event of the trace.dat and of the database.
# The trace.dat is $MCR_BENCH_TRACE if set, else recorded here with trace-cmd
# during bench/stress_anon on both CPUs (needs root, trace-cmd, Linux 6.13+).
# Rates use CPU time (user+sys): wall time on a shared 2-CPU machine is noise.
set -u
cd "$(dirname "$0")/.."
: "${MCR_BUILD:=build}"
DIR=${MCR_BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/mcr-bench.XXXXXX")}
REPLAY=$MCR_BUILD/memcg-replay ITER=$MCR_BUILD/bench/import_iter STRESS=$MCR_BUILD/bench/stress_anon
SECS=${MCR_BENCH_SECS:-2}
source tests/live.sh

for b in "$REPLAY" "$ITER"; do
	[ -x "$b" ] || { echo "import: SKIP: $b not built (make all)"; exit 0; }
done

# trace-cmd's top-level changes, put back however the run ends (a stopped
# recording left trace_clock at mono); its recording, in its own session, is
# ended first, or it would undo the restore
SAVED=
on_exit() {
	[ -n "$TC_PID" ] && kill -- "-$TC_PID" 2>/dev/null && wait "$TC_PID" 2>/dev/null
	[ -n "$SAVED" ] && tracing_restore
}
trap on_exit EXIT
trap 'exit 1' INT TERM

record() {	# record OUT: stress_anon on every CPU under the working trace-cmd line
	local ncpu TC_REC=(-d --no-filter -C mono -b 65536)
	[ "$(id -u)" -eq 0 ] || { echo "import: SKIP: needs root to record (or set MCR_BENCH_TRACE)"; exit 0; }
	command -v trace-cmd >/dev/null || { echo "import: SKIP: trace-cmd not installed"; exit 0; }
	[ -d $TR/events/memcg ] || { echo "import: SKIP: no memcg tracepoints (Linux 6.13+)"; exit 0; }
	[ -x "$STRESS" ] || { echo "import: SKIP: $STRESS not built"; exit 0; }
	ncpu=$(nproc)
	tracing_save
	SAVED=1
	# tc_record ends the recorders that outlive it (they would steal the next
	# recording's events) and restores the settings
	tc_record "$1" "$DIR/rec" -- \
		bash -c "for i in \$(seq $ncpu); do '$STRESS' 32 $SECS >/dev/null & done; wait" ||
		{ echo "import: FAIL: trace-cmd wrote nothing: $(tail -n 1 "$DIR/rec.err")"; exit 1; }
}

# cpu_time CMD...: runs CMD, prints "user+sys wall" seconds
cpu_time() {
	local TIMEFORMAT='%U %S %R' t
	t=$( { time "$@" >/dev/null 2>&1; } 2>&1 )
	set -- $t
	echo "$(echo "$1 + $2" | bc -l) $3"
}

TRACE=${MCR_BENCH_TRACE:-}
if [ -z "$TRACE" ]; then
	TRACE=$DIR/import_bench.dat
	record "$TRACE"
fi

"$ITER" "$TRACE" >/dev/null	# warm the page cache for both
records=$("$ITER" "$TRACE" | awk '{ print $2 }')
# rounds, each the iterations then the import in turn: this machine's speed drifts by a
# third within minutes, and a round's ratios are taken within the same few seconds.
# libtracecmd 1.3.1 walks a list of the chunks it decompressed at every page it frees,
# at a speed that depends on where malloc put them; import sets malloc's mmap threshold
# (cli/cmd_import.c) and so runs that walk twice as fast.  The iteration is timed as a
# user runs it and with import's threshold: against the second, the ratio is import's
# own cost, not libtracecmd's walk made faster.  A compressed trace.dat of 8 MiB or more
# is imported from the plain copy libtracecmd makes of it (capture/import_plain.c): the
# import's time includes the copy, the iterations read the file as it is.
THRESHOLD=32768
ROUNDS=${MCR_BENCH_ROUNDS:-5}
rounds=
for ((i = 1; i <= ROUNDS; i++)); do
	read -r it_cpu it_wall < <(cpu_time "$ITER" "$TRACE")
	read -r tt_cpu tt_wall < <(GLIBC_TUNABLES=glibc.malloc.mmap_threshold=$THRESHOLD cpu_time "$ITER" "$TRACE")
	read -r im_cpu im_wall < <(cpu_time "$REPLAY" import "$TRACE" -o "$DIR/import_bench.db" -q)
	rounds+="$it_cpu $it_wall $tt_cpu $tt_wall $im_cpu $im_wall"$'\n'
done
events=$(sqlite3 "$DIR/import_bench.db" "SELECT coalesce(sum(count), 0) FROM event_chunks" 2>/dev/null || echo 0)
# an import that failed (a file of the user's in MCR_BENCH_DIR is never replaced) has no rate
[ "$events" -gt 0 ] 2>/dev/null ||
	{ echo "import: FAIL: memcg-replay import wrote no events to $DIR/import_bench.db"; exit 1; }
tbytes=$(stat -c %s "$TRACE") dbytes=$(stat -c %s "$DIR/import_bench.db")
printf '%s' "$rounds" | awk -v r="$records" -v e="$events" -v tb="$tbytes" -v db="$dbytes" -v th="$THRESHOLD" '
function median(a, n,    i, j, t) {	# insertion sort: a handful
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ ic[NR] = $1; iw[NR] = $2; tc[NR] = $3; tw[NR] = $4; mc[NR] = $5; mw[NR] = $6
  q[NR] = (e / $5) / (r / $1); u[NR] = (e / $5) / (r / $3) }
END {
	printf "import: trace.dat %d records, %d bytes (%.1f B/record); database %d events, %d bytes (%.1f B/event, %.1fx the trace.dat)\n", r, tb, tb / r, e, db, db / (e ? e : 1), db / tb
	for (i = 1; i <= NR; i++)
		printf "import: round %d: libtracecmd iterate only %.2f s cpu (%.2f s wall, %.0f records/s), with mmap threshold %d %.2f s cpu (%.0f records/s); memcg-replay import %.2f s cpu (%.2f s wall, %.0f events/s): ratios %.2f, %.2f\n", i, ic[i], iw[i], r / ic[i], th, tc[i], r / tc[i], mc[i], mw[i], e / mc[i], q[i], u[i]
	# median() sorts its array: the least and the greatest are then its ends
	m = median(q, NR)
	printf "import: ratio import / iterate-only rate, libtracecmd as a user runs it: median %.2f of %d rounds (%.2f-%.2f)\n", m, NR, q[1], q[NR]
	m = median(u, NR)
	printf "import: ratio import / iterate-only rate, libtracecmd with import'"'"'s mmap threshold: median %.2f of %d rounds (%.2f-%.2f)\n", m, NR, u[1], u[NR]
}'
