#!/usr/bin/env bash
# bench/fidelity.sh - how well the simulator reproduces this kernel: records each
# workload of bench/workload.sh with memcg-capture and (if installed) trace-cmd +
# memcg-replay import, validates every recording, and prints one row per trace:
#   events, flush events compared, stats_updates match rate of the plain flush models
#   (spread, window, instant), with inference (and the hypotheses it kept), the wrong
#   policies' inferred rates (continue, legacy: validation must discriminate), and
#   the cost of validate against a plain one-policy replay of the same file, and against
#   the plain replay a user runs (`replay -m spread`: its default policies and series).
#
#   bench/fidelity.sh [SECONDS [WORKLOAD...]]   defaults: 5 s; idle pagecache race anon2 levels churn
# Needs root, tracefs and the memcg tracepoints (6.13+), sqlite3.  Cgroups are made
# beneath this shell's own memory cgroup and removed; trace-cmd's changes to the
# top-level tracing settings are restored after each recording.  Set KEEP=DIR to keep
# the recordings there.
set -u
cd "$(dirname "$0")/.."
: "${MCR_BUILD:=build}"
REPLAY=$MCR_BUILD/memcg-replay
CAPTURE=$MCR_BUILD/memcg-capture
source tests/live.sh
SECS=${1:-5}
shift $(( $# > 0 ? 1 : 0 ))
WORKLOADS=("$@")
[ ${#WORKLOADS[@]} -gt 0 ] || WORKLOADS=(idle pagecache race anon2 levels churn)

die() { echo "bench/fidelity: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root"
[ -x "$REPLAY" ] && [ -x "$CAPTURE" ] && [ -x "$MCR_BUILD/bench/stress_anon" ] ||
	die "build first: make all bench"
[ -d "$TR/events/memcg" ] || die "no memcg tracepoints on $(uname -r) (or no tracefs at $TR)"
command -v sqlite3 >/dev/null || die "sqlite3 is not installed"
mem_find
[ -n "$BASE" ] || die "no memory cgroup hierarchy mounted"

T=${KEEP:-$(mktemp -d "${TMPDIR:-/tmp}/mcr-fidelity.XXXXXX")}
mkdir -p "$T"
CG="$BASE/mcr_fid_$$"
HAVE_TC=0
command -v trace-cmd >/dev/null && HAVE_TC=1
[ $HAVE_TC = 1 ] && tracing_save
cleanup() {
	[ -n "$TC_PID" ] && kill -- "-$TC_PID" 2>/dev/null
	[ $HAVE_TC = 1 ] && tracing_restore
	rmdir "$CG" 2>/dev/null
	[ -z "${KEEP:-}" ] && rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
mkdir "$CG" || die "cannot make $CG"

sq() { sqlite3 -batch -noheader "$@"; }
now() { date +%s.%N; }

# validate DB ARGS...: prints "rate_inferred rate_plain compared max_hyp seconds"
vrun() {
	local db=$1 t0 t1
	shift
	t0=$(now)
	"$REPLAY" validate "$db" -n 0 -r 0 --min-match 0 "$@" >/dev/null 2>"$T/v.err" ||
		{ echo "- - - - -"; return; }
	t1=$(now)
	sq "$db" "SELECT printf('%.4f %.4f %d %d ', 1.0 * stats_updates_match / max(compared, 1),
		1.0 * stats_updates_match_plain / max(compared, 1), compared, max_hypotheses)
		FROM validation ORDER BY run_id DESC LIMIT 1" | tr -d '\n'
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f\n", b - a }'
}

row() {
	local name=$1 db=$2 ev base spread window instant cont leg t0 t1 rt rt3
	ev=$(sq "$db" "SELECT coalesce(sum(count), 0) FROM event_chunks")
	t0=$(now)
	"$REPLAY" replay "$db" -p break -m spread -s 0 >/dev/null 2>&1
	t1=$(now)
	rt=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	# the plain replay as a user runs it: its default policies and series
	t0=$(now)
	"$REPLAY" replay "$db" -m spread >/dev/null 2>&1
	t1=$(now)
	rt3=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	read -r base spread_p cmp hyp vt <<<"$(vrun "$db")"
	read -r _ window _ _ _ <<<"$(vrun "$db" -m window -H 1)"
	read -r _ instant _ _ _ <<<"$(vrun "$db" -m instant -H 1)"
	read -r cont _ _ _ _ <<<"$(vrun "$db" --policy continue)"
	read -r leg _ _ _ _ <<<"$(vrun "$db" --policy legacy)"
	printf "%-22s %9s %8s %7s %7s %7s %9s %5s %9s %7s %8s %6s %6s %7s %7s\n" "$name" "$ev" "$cmp" \
		"$spread_p" "$window" "$instant" "$base" "$hyp" "$cont" "$leg" "$vt" "$rt" \
		"$(ratio "$vt" "$rt")" "$rt3" "$(ratio "$vt" "$rt3")"
}

# ratio A B: A / B as "1.8x", "-" when either is missing
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0 && a != "-") printf "%.1fx", a / b; else print "-" }'
}

echo "bench/fidelity: kernel $(uname -r), $(getconf _NPROCESSORS_ONLN) CPUs, ${SECS}s per workload," \
	"cgroups under ${CG#/sys/fs/cgroup}"
printf "%-22s %9s %8s %7s %7s %7s %9s %5s %9s %7s %8s %6s %6s %7s %7s\n" trace events compared spread \
	window instant inferred hyps continue legacy valid_s play_s ratio play3_s ratio3
for w in "${WORKLOADS[@]}"; do
	"$CAPTURE" -o "$T/$w.capture.db" -- bench/workload.sh "$w" "$CG" "$SECS" \
		>"$T/$w.cap.out" 2>"$T/$w.cap.err"
	rc=$?
	if [ $rc -ne 0 ] && [ $rc -ne 11 ]; then
		echo "$w: memcg-capture exit $rc: $(tail -n 1 "$T/$w.cap.err")"
	else
		row "$w/memcg-capture" "$T/$w.capture.db"
	fi
	[ $HAVE_TC = 1 ] || continue
	if tc_record "$T/$w.dat" "$T/$w.tc" -- bench/workload.sh "$w" "$CG" "$SECS" &&
	   "$REPLAY" import "$T/$w.dat" -o "$T/$w.tc.db" --cgroupfs "$MOUNT" >/dev/null 2>"$T/$w.imp.err"; then
		row "$w/trace-cmd" "$T/$w.tc.db"
	else
		echo "$w/trace-cmd: $(tail -n 1 "$T/$w.tc.err" "$T/$w.imp.err" 2>/dev/null | tail -n 1)"
	fi
done
echo "rates: stats_updates matches / compared; spread/window/instant = plain flush models;"
echo "inferred = with inference (hyps = most hypotheses kept); continue/legacy = inferred rate of"
echo "the wrong policies; valid_s = validate wall time (one policy, break), play_s = replay -p"
echo "break -m spread -s 0 (the same policy, no series), play3_s = replay -m spread (its default"
echo "policies and series, as a user runs it); ratio, ratio3 = valid_s / play_s, / play3_s"
[ -n "${KEEP:-}" ] && echo "recordings kept in $T"
exit 0
