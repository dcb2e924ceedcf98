#!/usr/bin/env bash
# bench/capture.sh - memcg-capture against trace-cmd under an anonymous page-fault
# stress on every CPU (about 1 M memcg events/s on 2 CPUs), all in one invocation:
#   baseline  the stress alone (faults/s), run again before each tool
#   capture   memcg-capture -b KIB
#   watch     memcg-capture -b KIB --prom FILE (--watch): CPU per million events against
#             the capture alone, and whether the watch kept up (MCR_WATCH=0: not run)
#   trace-cmd trace-cmd record -d --no-filter -C mono -b KIB, the same events
# For each: events captured, events lost, capture CPU seconds and nanoseconds per event
# the kernel traced for it (trace-cmd, stopped by SIGINT, leaves events unread or
# unwritten, so per event in its file would flatter it), workload faults/s and slowdown
# against the baseline run just before it (the stress's fault rate drifts over
# consecutive runs, and the machine's other load with it), bytes per event of the
# output file.
#
#   bench/capture.sh [SECONDS [KIB_PER_CPU]]   defaults: 5 s, memcg-capture's default -b
# With MCR_BASE_BUILD=DIR, DIR/memcg-capture (a previous build) runs too, after its own
# baseline, between this build's capture and trace-cmd.  MCR_TRACECMD_FIRST=1 runs
# trace-cmd first: a run's place in the sequence moves its CPU by several percent here.
# Needs root, tracefs and the memcg tracepoints; trace-cmd is optional.  The stress runs
# in this shell's own cgroup.  trace-cmd changes top-level tracing settings: they are
# saved and restored, and any recorder it leaves behind is ended by PID.
set -u
cd "$(dirname "$0")/.."
: "${MCR_BUILD:=build}"
CAPTURE=$MCR_BUILD/memcg-capture
STRESS=$MCR_BUILD/bench/stress_anon
source tests/live.sh
TRACING=$TR
DUR=${1:-5}
KIB=${2:-}
NCPU=$(getconf _NPROCESSORS_ONLN)

die() { echo "bench/capture: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root"
[ -x "$CAPTURE" ] && [ -x "$STRESS" ] || die "build first: make $CAPTURE $STRESS"
[ -z "${MCR_BASE_BUILD:-}" ] || [ -x "$MCR_BASE_BUILD/memcg-capture" ] ||
	die "no memcg-capture in MCR_BASE_BUILD=$MCR_BASE_BUILD"
[ -d "$TRACING/events/memcg" ] || die "no memcg tracepoints on $(uname -r) (or no tracefs at $TRACING)"
if [ -z "$KIB" ]; then
	KIB=$("$CAPTURE" --help | sed -n 's/.*(default \([0-9]*\):.*/\1/p' | head -1)
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/mcr-bench.XXXXXX")
TC_KIDS=
# what trace-cmd changes at the top level is put back however the run ends: a
# run stopped during trace-cmd's recording left trace_clock at mono
SAVED=
cleanup() {
	local p
	for p in $TC_KIDS; do kill "$p" 2>/dev/null; done
	[ -n "$SAVED" ] && tracing_restore
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# Runs the stress on every CPU for DUR s; prints the summed faults/s.
stress_all() {
	local i
	for i in $(seq "$NCPU"); do "$STRESS" 64 "$DUR" >"$T/stress.$i" & done
	wait
	cat "$T"/stress.* | awk '{s += $(NF-1)} END {printf "%.0f\n", s}'
}

# "( cmd & wait; times )" makes the subshell's children times those of cmd alone
cpu_of() { awk 'NR==2 {split($1,u,"m"); split($2,s,"m"); printf "%.2f\n", u[1]*60+u[2]+s[1]*60+s[2]}' "$1"; }

echo "bench/capture: $NCPU CPUs, stress ${DUR}s on each, -b $KIB KiB per CPU, kernel $(uname -r)"

base=$(stress_all)
c_base=$base

# row LABEL EVENTS LOST CPU_S FAULTS_S BASE_FAULTS_S BYTES TRACED: one tool's line of the
# table; TRACED is every event the kernel wrote to the tool's buffer, the CPU's divisor
row() {
	awk -v n="$1" -v e="$2" -v l="$3" -v c="$4" -v r="$5" -v b="$6" -v s="$7" -v t="$8" -v d="$DUR" \
		'BEGIN {printf "%-14s %12d %9d %9.2f %9.0f %12.0f %8.1f%% %9.2f %10.0f\n", n, e, l, c, t ? 1e9*c/t : 0, r, 100*(1-r/b), e ? s/e : 0, e/(d+1.5)}'
}

# a baseline's line: the stress alone, just before the tool below it
baseline_row() { printf '%-14s %12s %9s %9s %9s %12.0f %9s %9s %10s\n' baseline - - - - "$1" 0.0% - -; }

# --- memcg-capture -----------------------------------------------------------------------
# capture_run BIN TAG LABEL BASE [OPTION...]: BIN's capture under the stress, with the
# options; its row into $T/TAG.line
capture_run() {
	local bin=$1 tag=$2 label=$3 base=$4 rate events lost cpu size sub i
	shift 4
	( "$bin" -o "$T/$tag.db" -b "$KIB" "$@" >"$T/$tag.out" 2>"$T/$tag.err" & echo $! >"$T/$tag.pid"; wait $!; echo $? >"$T/$tag.rc"; times >"$T/$tag.times" ) &
	sub=$!
	# recording starts right after the instance appears
	for i in $(seq 100); do [ -d "$TRACING/instances/memcg_capture_$(cat "$T/$tag.pid" 2>/dev/null)" ] && break; sleep 0.1; done
	sleep 0.5
	rate=$(stress_all)
	sleep 0.5
	kill -INT "$(cat "$T/$tag.pid")"
	wait $sub
	events=$(sqlite3 "$T/$tag.db" "SELECT coalesce(sum(count), 0) FROM event_chunks")
	lost=$(sqlite3 "$T/$tag.db" "SELECT (SELECT coalesce(sum(overrun + dropped + commit_overrun), 0) FROM cpu_stats WHERE phase='end')
		+ (SELECT coalesce(sum(CASE WHEN count > 0 THEN count ELSE 0 END), 0) FROM gaps)")
	cpu=$(cpu_of "$T/$tag.times")
	size=$(stat -c %s "$T/$tag.db")
	# it drains the buffer at the end: what it did not store, it counted as lost
	row "$label" "$events" "$lost" "$cpu" "$rate" "$base" "$size" $((events + lost)) >"$T/$tag.line"
	# the summary is the last line (--watch prints its own before it)
	echo "$label: $(tail -n 1 "$T/$tag.out") (exit $(cat "$T/$tag.rc"))" >"$T/$tag.note"
	echo "$events $cpu" >"$T/$tag.cost"
}

# --watch's cost: the capture's CPU per million events stored, without and with it, and
# whether the watch kept up (its queues never overflowed: it counted every event to the
# end, its last --prom says memcg_watch_overflow 0 and memcg_watch_events_total = events)
watch_lines() {
	local e0 c0 e1 c1 ov got kept
	read -r e0 c0 <"$T/c.cost"
	read -r e1 c1 <"$T/w.cost"
	ov=$(sed -n 's/^memcg_watch_overflow //p' "$T/w.prom")
	got=$(sed -n 's/^memcg_watch_events_total //p' "$T/w.prom")
	if [ "$ov" = 0 ] && [ "$got" = "$e1" ]; then kept="yes: it replayed all $got events"
	elif [ "$ov" = 1 ]; then kept="NO: its queue overflowed ($(grep -m1 'fell behind' "$T/w.err" | cut -c1-160))"
	else kept="NO: it replayed ${got:-none} of $e1 events"; fi
	awk -v e0="$e0" -v c0="$c0" -v e1="$e1" -v c1="$c1" 'BEGIN {
		printf "watch: capture alone %.3f CPU s per M events (%d events, %.2f s); with --watch --prom %.3f (%d events, %.2f s): +%.3f s per M events for the watch\n",
			e0 ? 1e6*c0/e0 : 0, e0, c0, e1 ? 1e6*c1/e1 : 0, e1, c1, (e1 ? 1e6*c1/e1 : 0) - (e0 ? 1e6*c0/e0 : 0) }'
	echo "watch: kept up: $kept"
}

# --- trace-cmd ---------------------------------------------------------------------------
tracecmd_run() {
	t_line="trace-cmd not installed: skipped"
	if command -v trace-cmd >/dev/null; then
		tracing_save
		SAVED=1
		t_base=$(stress_all)
		( trace-cmd record -d --no-filter -C mono -b "$KIB" -o "$T/trace.dat" -e memcg \
			-e cgroup:cgroup_rstat_locked -e cgroup:cgroup_rstat_unlock \
			-e cgroup:cgroup_mkdir -e cgroup:cgroup_rmdir >"$T/t.out" 2>"$T/t.err" &
		  echo $! >"$T/t.pid"; wait $!; times >"$T/t.times" ) &
		sub=$!
		sleep 0.2
		tpid=$(cat "$T/t.pid")
		# it records once it has forked one recorder per CPU
		for i in $(seq 100); do [ "$(pgrep -P "$tpid" | wc -l)" -ge "$NCPU" ] && break; sleep 0.1; done
		sleep 0.5
		TC_KIDS=$(pgrep -P "$tpid" | tr '\n' ' ')
		tc_rate=$(stress_all)
		sleep 0.5
		kill -INT "$tpid"
		wait $sub
		# recorders that outlive trace-cmd keep reading the top-level buffer: end them
		for p in $TC_KIDS; do kill "$p" 2>/dev/null && echo "bench/capture: ended orphan recorder $p"; done
		TC_KIDS=
		tracing_restore
		SAVED=
		# losses from the end stats the file keeps; events counted in the file itself
		trace-cmd report --stat "$T/trace.dat" >"$T/t.stat" 2>/dev/null
		t_events=$(trace-cmd report -q "$T/trace.dat" 2>/dev/null | grep -cE ' (mod_memcg|count_memcg|memcg_flush|cgroup_)')
		t_lost=$(awk '/^overrun:/ {s += $2} /^commit overrun:/ {s += $3} /^dropped events:/ {s += $3} END {print s + 0}' "$T/t.stat")
		# the kernel's count of what it wrote: read by trace-cmd, left unread, overwritten
		t_traced=$(awk '/^read events:/ {s += $3} /^entries:/ {s += $2} /^overrun:/ {s += $2} END {print s + 0}' "$T/t.stat")
		t_left=$(awk '/^entries:/ {s += $2} END {print s + 0}' "$T/t.stat")
		t_cpu=$(cpu_of "$T/t.times")
		t_size=$(stat -c %s "$T/trace.dat" 2>/dev/null || echo 0)
		t_line=$(row trace-cmd "$t_events" "$t_lost" "$t_cpu" "$tc_rate" "$t_base" "$t_size" "$t_traced")
		# its end stats come before its last flush: what they list as unread may be in the file
		t_miss=$((t_traced - t_lost - t_events))
		if [ "$t_miss" -le 0 ]; then
			t_note="trace-cmd: all $t_traced events the kernel wrote to its buffers are in its file"
		else
			t_gone=$((t_miss > t_left ? t_miss - t_left : 0))
			t_note="trace-cmd: the kernel wrote $t_traced events to its buffers, $t_events are in its file: $((t_miss - t_gone)) left unread in the buffers at its end, $t_gone read but not in the file"
		fi
	fi
}

# trace-cmd last by default; MCR_TRACECMD_FIRST=1 runs it first, to see what the order costs
if [ "${MCR_TRACECMD_FIRST:-0}" = 1 ]; then
	tracecmd_run
	c_base=$(stress_all)
fi
capture_run "$CAPTURE" c memcg-capture "$c_base"
# the same capture with --watch (MCR_WATCH=0: not run), after a baseline of its own
if [ "${MCR_WATCH:-1}" = 1 ]; then
	w_base=$(stress_all)
	capture_run "$CAPTURE" w "capture --watch" "$w_base" --prom "$T/w.prom"
fi
# a previous build's capture in the same invocation, after a baseline of its own
if [ -n "${MCR_BASE_BUILD:-}" ]; then
	b_base=$(stress_all)
	capture_run "$MCR_BASE_BUILD/memcg-capture" b "capture (base)" "$b_base"
fi
[ "${MCR_TRACECMD_FIRST:-0}" = 1 ] || tracecmd_run

printf '%-14s %12s %9s %9s %9s %12s %9s %9s %10s\n' run events lost cpu_s ns/traced faults/s slowdown B/event events/s
baseline_row "$c_base"
cat "$T/c.line"
if [ -n "${w_base:-}" ]; then
	baseline_row "$w_base"
	cat "$T/w.line"
fi
if [ -n "${b_base:-}" ]; then
	baseline_row "$b_base"
	cat "$T/b.line"
fi
[ -n "${t_base:-}" ] && baseline_row "$t_base"
echo "$t_line"
cat "$T/c.note"
[ -n "${w_base:-}" ] && cat "$T/w.note" && watch_lines
[ -n "${b_base:-}" ] && cat "$T/b.note"
[ -n "${t_note:-}" ] && echo "$t_note"
exit 0
