#!/usr/bin/env bash
# bench/seed_experiment.sh - the continue patch's own test, reproduced on this host: parallel
# TCP streams over loopback (bench/workload.sh netstream: iperf3, 1024-byte writes) in one
# leaf memcg directly below this shell's own memory cgroup.  The patch measured 32 netperf
# TCP_STREAM instances in a leaf directly below the root: 107.26 -> 105.23 Gbit/s (1.9 %)
# with continue.  In one invocation:
#   1. the workload's throughput alone and 2. under memcg-capture --cgroup (the leaf's
#      parent), runs alternating, median and spread of each; with the capture: events/s,
#      lost events, capture CPU seconds
#   3. memcg-replay validate of the last capture (stats_updates match rate)
#   4. memcg-replay replay --policy break,continue: reads, stale reads, stranded time and
#      worst read error of the leaf's parent (the root of the captured tree) and the leaf
#   5. the walk's operations per update under each policy and continue - break, and, where
#      the binary has calibrate and the cost_report view, the estimated CPU cost of
#      continue against break beside the patch's 1.9 %
#
#   bench/seed_experiment.sh [-s SECONDS] [-r REPS] [-n STREAMS] [-m READ_MS] [-k DIR]
#   bench/seed_experiment.sh --from DB [-k DIR]
#     -s, --seconds N   length of each run (default 10)
#     -r, --reps N      runs alone and runs under capture, alternating (default 5)
#     -n, --streams N   iperf3 streams (default 2: one per CPU here, see bench/README.md)
#     -m, --read-ms N   the parent's memory.stat read every N ms (default 80; 0 none)
#     -k, --keep DIR    keep the recordings and logs in DIR
#     -f, --from DB     no runs: steps 3 to 5 on a copy of DB, a recording this script
#                       kept (-k), e.g. with a newer memcg-replay; needs no root
#     -h, --help        this text
# Exit: 0 done; 1 a step failed (its message on stderr); 2 bad command line; 3 this host
# cannot run it (not root, not built, no iperf3/sqlite3, no memcg tracepoints or memory
# cgroup, or a cgroup v2 parent that cannot delegate memory).
# Cgroups are made beneath this shell's own memory cgroup only and removed; the workload
# ends only the processes it started.  On a shared machine the throughput is noisy: the
# runs alternate so that load drifts hit both sides alike.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
: "${MCR_BUILD:=build}"
REPLAY=$MCR_BUILD/memcg-replay
CAPTURE=$MCR_BUILD/memcg-capture
SEED_PCT=1.9

usage() { sed -n '2,/^set -u/{/^set -u/d;s/^# \{0,1\}//;p}' "$0"; }
die() { echo "bench/seed_experiment: $*" >&2; exit 1; }
cannot() { echo "bench/seed_experiment: $*" >&2; exit 3; }
bad() { echo "bench/seed_experiment: $*" >&2; echo "try: bench/seed_experiment.sh --help" >&2; exit 2; }

SECS=10 REPS=5 STREAMS=2 READ_MS=80 KEEP= FROM=
num() {	# num OPTION VALUE MIN: VALUE a whole number >= MIN, or exit 2
	case $2 in '' | *[!0-9]*) bad "$1 needs a whole number, not '$2'" ;; esac
	[ "${#2}" -le 6 ] && [ "$2" -ge "$3" ] || bad "$1 must be $3..999999, not '$2'"
}
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) usage; exit 0 ;;
	-s | --seconds | -r | --reps | -n | --streams | -m | --read-ms | -k | --keep | -f | --from)
		[ $# -ge 2 ] || bad "$1 needs a value"
		case $1 in
		-s | --seconds) num "$1" "$2" 1; SECS=$2 ;;
		-r | --reps) num "$1" "$2" 1; REPS=$2 ;;
		-n | --streams) num "$1" "$2" 1; [ "$2" -le 100 ] || bad "$1 must be 1..100"; STREAMS=$2 ;;
		-m | --read-ms) num "$1" "$2" 0; READ_MS=$2 ;;
		-k | --keep) [ -n "$2" ] || bad "$1 needs a directory"; KEEP=$2 ;;
		-f | --from) [ -f "$2" ] || bad "$1: no file '$2'"; FROM=$(realpath "$2") ;;
		esac
		shift 2
		;;
	*) bad "unknown argument '$1'" ;;
	esac
done
SECS=$((10#$SECS)) REPS=$((10#$REPS)) STREAMS=$((10#$STREAMS)) READ_MS=$((10#$READ_MS))
[ -z "$KEEP" ] || KEEP=$(realpath -m "$KEEP")
cd "$TOP" || exit 1

source tests/live.sh
[ -x "$REPLAY" ] || cannot "build first: make all ($REPLAY)"
command -v sqlite3 >/dev/null || cannot "sqlite3 is not installed"
if [ -z "$FROM" ]; then
	[ "$(id -u)" -eq 0 ] || cannot "needs root"
	[ -x "$CAPTURE" ] || cannot "build first: make all ($CAPTURE)"
	command -v iperf3 >/dev/null || cannot "iperf3 is not installed (Debian package iperf3: make deps)"
	[ -d "$TR/events/memcg/memcg_flush_stats" ] ||
		cannot "no memcg tracepoints on $(uname -r) (Linux 6.13+) or no tracefs at $TR"
	mem_find
	[ -n "$BASE" ] || cannot "no memory cgroup hierarchy mounted"
	[ "$BASE" != "$MOUNT" ] ||
		cannot "this shell is in the root memory cgroup: run it from a cgroup below the root"
	REL=${BASE#"$MOUNT"}
	if [ -f "$BASE/cgroup.subtree_control" ]; then
		# cgroup v2: a cgroup with processes cannot give its children the memory controller
		grep -qw memory "$BASE/cgroup.subtree_control" ||
			echo +memory >"$BASE/cgroup.subtree_control" 2>/dev/null ||
			cannot "cgroup v2: $BASE cannot enable memory for a child (it holds processes);" \
				"run from a delegated cgroup whose processes sit in a sibling"
	fi
fi

T=${KEEP:-$(mktemp -d "${TMPDIR:-/tmp}/mcr-seedexp.XXXXXX")}
mkdir -p "$T" || die "cannot make $T"
CAP_PID=
cleanup() {
	[ -n "$CAP_PID" ] && kill -INT "$CAP_PID" 2>/dev/null && wait 2>/dev/null
	[ -z "$KEEP" ] && rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

sq() { sqlite3 -batch -noheader -separator ' ' "$@"; }
# stats FORMAT N...: "median min max" of the numbers, each printed with FORMAT
stats() {
	local f=$1
	shift
	printf '%s\n' "$@" | sort -g | awk -v f="$f" '{ v[NR] = $1 } END {
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf f " " f " " f "\n", m, v[1], v[NR] }'
}
# one run of the workload; prints its Gbit/s
stream() {
	local out
	out=$(MCR_STREAMS=$STREAMS MCR_READ_MS=$READ_MS bash bench/workload.sh netstream "$BASE" \
		"$1" 2>"$T/workload.err") || die "workload: $(tail -n 1 "$T/workload.err")"
	echo "$out" >>"$T/workload.log"
	awk '{ print $(NF - 1) }' <<<"$out"
}
# "( cmd & wait; times )": the subshell's children's times are the capture's alone
cpu_of() { awk 'NR == 2 { split($1, u, "m"); split($2, s, "m")
	printf "%.2f\n", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$1"; }

# one run under memcg-capture --cgroup (the leaf's parent); prints "gbit events_stored
# events_per_s lost cpu_s read_per_s", the last what it read of every cgroup's events
captured() {
	local db=$1 i g ev span lost cpu rd sub
	( "$CAPTURE" -o "$db" --cgroup "$REL" >"$T/cap.out" 2>"$T/cap.err" &
	  echo $! >"$T/cap.pid"; wait $!; echo $? >"$T/cap.rc"; times >"$T/cap.times" ) &
	sub=$!
	for i in $(seq 100); do
		CAP_PID=$(cat "$T/cap.pid" 2>/dev/null)
		[ -n "$CAP_PID" ] && [ -d "$TR/instances/memcg_capture_$CAP_PID" ] && break
		sleep 0.1
	done
	[ -d "$TR/instances/memcg_capture_$CAP_PID" ] ||
		die "memcg-capture did not start: $(tail -n 1 "$T/cap.err")"
	sleep 0.5
	g=$(stream "$SECS")
	sleep 0.2
	kill -INT "$CAP_PID"
	wait "$sub"
	CAP_PID=
	case $(cat "$T/cap.rc") in
	0 | 11) ;;
	*) die "memcg-capture exit $(cat "$T/cap.rc"): $(tail -n 1 "$T/cap.err")" ;;
	esac
	read -r ev span <<<"$(sq "$db" "SELECT coalesce(sum(count), 0),
		coalesce(max(last_ts) - min(first_ts), 0) FROM event_chunks")"
	# the instance's ring-buffer counters, end - start (the gaps table holds the same losses)
	lost=$(sq "$db" "SELECT coalesce(sum((e.overrun + e.dropped + e.commit_overrun) -
		(s.overrun + s.dropped + s.commit_overrun)), 0) FROM cpu_stats e JOIN cpu_stats s
		ON s.cpu = e.cpu AND s.phase = 'start' WHERE e.phase = 'end'")
	cpu=$(cpu_of "$T/cap.times")
	# its summary: "memcg-capture: N events in S s (R/s) from ..., M stored in ..."
	rd=$(sed -n 's/.* events in .* s (\([0-9]*\)\/s).*/\1/p' "$T/cap.out" "$T/cap.err" | tail -n 1)
	awk -v g="$g" -v e="$ev" -v s="$span" -v l="$lost" -v c="$cpu" -v r="${rd:-0}" \
		'BEGIN { printf "%s %d %.0f %d %s %s\n", g, e, (s > 0 ? e / (s / 1e9) : 0), l, c, r }'
}

# 1 + 2: the workload alone and under capture, alternating, after a warm-up not counted
measure() {
	local r p g e er l c rd pm plo phi cm clo chi rm rlo rhi em cpm rdm
	local plain=() capg=() caprate=() caplost=() capcpu=() capread=() ratio=()
	echo "bench/seed_experiment: kernel $(uname -r), $NCPU CPUs, cgroup" \
		"v$([ -f "$BASE/cgroup.controllers" ] && echo 2 || echo 1), leaf below $REL," \
		"$STREAMS streams x $SECS s, parent read every $READ_MS ms, $REPS runs each way"
	echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg) (on a shared machine" \
		"the throughput is noisy)"
	stream 2 >/dev/null
	for r in $(seq "$REPS"); do
		p=$(stream "$SECS")
		read -r g e er l c rd <<<"$(captured "$T/capture.$r.db")"
		plain+=("$p") capg+=("$g") caprate+=("$er") caplost+=("$l") capcpu+=("$c")
		capread+=("$rd")
		ratio+=("$(awk -v a="$g" -v b="$p" 'BEGIN { printf "%.4f", (b > 0 ? a / b : 0) }')")
		echo "run $r: alone $p Gbit/s, under capture $g Gbit/s ($e events stored, $er/s;" \
			"lost $l; capture CPU $c s; it read $rd events/s of every cgroup)"
	done
	echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
	read -r pm plo phi <<<"$(stats %.3f "${plain[@]}")"
	read -r cm clo chi <<<"$(stats %.3f "${capg[@]}")"
	read -r rm rlo rhi <<<"$(stats %.4f "${ratio[@]}")"
	read -r em _ _ <<<"$(stats %.0f "${caprate[@]}")"
	read -r cpm _ _ <<<"$(stats %.2f "${capcpu[@]}")"
	read -r rdm _ _ <<<"$(stats %.0f "${capread[@]}")"
	echo
	echo "throughput alone:         median $pm Gbit/s (min $plo, max $phi, $REPS runs)"
	echo "throughput under capture: median $cm Gbit/s (min $clo, max $chi)"
	echo "under capture / alone, run by run: median $rm (min $rlo, max $rhi):" \
		"$(awk -v r="$rm" 'BEGIN { printf "%+.1f %%", (r - 1) * 100 }')"
	echo "capture: median $em events/s stored (the parent's subtree), $rdm events/s read" \
		"(every cgroup's), lost $(printf '%s+' "${caplost[@]}" | sed 's/+$//')," \
		"CPU median $cpm s per $SECS s run"
}

# 3 to 5 on the recording DB
analyse() {
	local db=$1 vrc parent leaf latest t0 w0 w1 est q
	echo
	"$REPLAY" validate "$db" -q -n 0 --min-match 0 >"$T/validate.out" 2>"$T/validate.err"
	vrc=$?
	if [ $vrc -eq 0 ] || [ $vrc -eq 10 ]; then
		sq "$db" "SELECT printf('validate (policy %s): stats_updates match %d of %d compared' ||
			' (%.1f %%), needs_flush %d; the plain flush model alone %d', policy,
			stats_updates_match, compared, 100.0 * stats_updates_match / max(compared, 1),
			needs_flush_match, stats_updates_match_plain)
			FROM validation ORDER BY run_id DESC LIMIT 1"
	else
		echo "validate: exit $vrc: $(tail -n 1 "$T/validate.err")"
	fi

	# 4: break and continue with replay's default flush model (the inferred order)
	"$REPLAY" replay "$db" -q --policy break,continue >"$T/replay.out" 2>"$T/replay.err" ||
		die "replay: $(tail -n 1 "$T/replay.err")"
	leaf=$(sq "$db" "SELECT id FROM cgroups WHERE path LIKE '%/mcr\_net\_%' ESCAPE '\'
		ORDER BY id DESC LIMIT 1")
	[ -n "$leaf" ] || die "$db has no leaf mcr_net_*: not a recording of this script"
	parent=$(sq "$db" "SELECT parent FROM cgroups WHERE id = $leaf")
	latest="r.run_id IN (SELECT max(run_id) FROM runs WHERE kind = 'replay' GROUP BY policy)"
	echo
	echo "staleness, $(sq "$db" "SELECT path FROM cgroups WHERE id = $parent") (parent) and" \
		"its leaf (reads: non-forced memcg_flush_stats of the cgroup):"
	printf "  %-9s %-7s %6s %6s %11s %9s %8s  %s\n" policy cgroup reads stale stranded_ms \
		episodes max_err "worst line"
	sq "$db" "SELECT r.policy, CASE g.cgroup_id WHEN $parent THEN 'parent' ELSE 'leaf' END,
		g.reads, g.stale_reads, printf('%.1f', g.stranded_ms), g.stranded_episodes,
		coalesce(l.max_read_error, 0), coalesce(l.item || ' (' || l.unit || ')', '-')
		FROM runs r JOIN cgroup_summary g ON g.run_id = r.run_id
		LEFT JOIN cgroup_lag_report l ON l.run_id = r.run_id AND l.cgroup_id = g.cgroup_id
		WHERE $latest AND g.cgroup_id IN ($parent, $leaf)
		ORDER BY g.cgroup_id != $parent, r.policy" |
		while read -r a b c d e f g h; do
			printf "  %-9s %-7s %6s %6s %11s %9s %8s  %s\n" "$a" "$b" "$c" "$d" "$e" "$f" "$g" "$h"
		done

	# what the streams gave the memcgs: the leaf's and the parent's own events, over the
	# whole trace and while streaming (from 1.5 s after the leaf's mkdir to 1.5 s before
	# its rmdir: the processes' start and exit fault and free memory)
	"$REPLAY" events "$db" -g "$leaf" >"$T/leaf.csv" 2>"$T/events.err" &&
		"$REPLAY" events "$db" -g "$parent" >"$T/parent.csv" 2>>"$T/events.err" ||
		die "events: $(tail -n 1 "$T/events.err")"
	t0=$(sq "$db" "SELECT min(first_ts) FROM event_chunks")
	# columns ts,cpu,seq,kind,id,item,val,aux,level,flags,pid; kind 1-3 an update, 4 a
	# flush request, 8 cgroup_mkdir, 9 cgroup_rmdir
	read -r w0 w1 <<<"$(awk -F, '$4 == 8 { a = $1 } $4 == 9 { b = $1 }
		END { printf "%.0f %.0f\n", a + 1.5e9, b - 1.5e9 }' "$T/leaf.csv")"
	awk -F, -v t0="$t0" -v w0="$w0" -v w1="$w1" -v span="$(sq "$db" "SELECT
		max(last_ts) - min(first_ts) FROM event_chunks")" '
		FNR == 1 { f++; next }
		$4 >= 1 && $4 <= 3 { u[f]++; if ($1 >= w0 && $1 <= w1) su[f]++ }
		f == 2 && $4 == 4 { r++; if ($1 >= w0 && $1 <= w1) sr++ }
		END {
			s = span / 1e9; w = (w1 - w0) / 1e9; if (w <= 0) w = 1e-9
			printf "updates over the whole trace (%.1f s): leaf %d, parent itself %d;" \
				" flush requests of the parent %d\n", s, u[1], u[2], r
			printf "while streaming (%.1f s): leaf %.1f updates/s, parent itself %.1f/s," \
				" parent read %.1f times/s\n", w, su[1] / w, su[2] / w, sr / w
		}' "$T/leaf.csv" "$T/parent.csv"
	echo "the leaf's updates by item:"
	awk -F, 'NR > 1 && $4 >= 1 && $4 <= 3 { n[$4 " " $6]++ }
		END { for (k in n) print n[k], k }' "$T/leaf.csv" | sort -rn | head -n 6 |
		while read -r n k i; do
			echo "  $(sq "$db" "SELECT coalesce((SELECT name FROM items WHERE kind = $k
				AND item = $i), '$k:$i')"): $n"
		done
	echo "updates per second of the trace (second:updates), leaf: $(awk -F, -v t0="$t0" \
		'NR > 1 && $4 >= 1 && $4 <= 3 { n[int(($1 - t0) / 1e9)]++ }
		END { for (s in n) printf "%d:%d\n", s, n[s] }' "$T/leaf.csv" | sort -n | tr '\n' ' ')"

	# 5: the walk's operations per update, and their estimated cost where calibrate exists
	echo
	echo "the walk's operations per update (replay's counts):"
	sq "$db" "SELECT b.updates, b.walk_steps, b.pcpu_adds, b.atomic_adds, c.walk_steps,
		c.pcpu_adds, c.atomic_adds FROM runs b JOIN runs c
		WHERE b.run_id = (SELECT max(run_id) FROM runs WHERE kind = 'replay' AND policy = 'break')
		AND c.run_id = (SELECT max(run_id) FROM runs WHERE kind = 'replay' AND policy = 'continue')" |
		awk '{ u = ($1 > 0 ? $1 : 1)
			printf "  %-12s %10s %10s %18s\n", "", "break", "continue", "continue - break"
			printf "  %-12s %10.4f %10.4f %+18.4f\n", "walk_steps", $2 / u, $5 / u, ($5 - $2) / u
			printf "  %-12s %10.4f %10.4f %+18.4f\n", "pcpu_adds", $3 / u, $6 / u, ($6 - $3) / u
			printf "  %-12s %10.4f %10.4f %+18.4f\n", "atomic_adds", $4 / u, $7 / u, ($7 - $4) / u
			printf "  (%d updates; totals break / continue: walk_steps %d / %d, pcpu_adds %d / %d," \
				" atomic_adds %d / %d)\n", $1, $2, $5, $3, $6, $4, $7 }'
	q="SELECT policy, est_ns_per_update, est_cpu_s_per_s FROM cost_report r WHERE $latest
		AND est_ns_per_update IS NOT NULL ORDER BY policy"
	est=
	if [ "$(sq "$db" "SELECT count(*) FROM sqlite_master WHERE name = 'cost_report'")" = 1 ]; then
		est=$(sq "$db" "$q" 2>/dev/null)
		if [ -z "$est" ] && "$REPLAY" calibrate --help >/dev/null 2>&1; then
			"$REPLAY" calibrate --db "$db" >"$T/calibrate.out" 2>"$T/calibrate.err" ||
				echo "calibrate --db: $(tail -n 1 "$T/calibrate.err")"
			est=$(sq "$db" "$q" 2>/dev/null)
		fi
	fi
	if [ -z "$est" ]; then
		echo "estimated cost in time: needs memcg-replay calibrate and the view cost_report" \
			"(not in this build): the counts above are all there is"
		echo "the patch measured -$SEED_PCT % throughput (32 netperf streams, 107.26 -> 105.23 Gbit/s)"
		return
	fi
	echo "estimated cost in time (cost_report: the counts times calibrated user-space proxies;"
	echo "no cache effects of the real kernel, no lock contention):"
	awk -v n="$NCPU" -v seed="$SEED_PCT" '
		{ ns[$1] = $2; cpu[$1] = $3
		  printf "  %-9s %10.2f ns per update %12.7f CPU s per s of trace\n", $1, $2, $3 }
		END {
			d = cpu["continue"] - cpu["break"]
			printf "  continue - break: %+.2f ns per update, %+.7f CPU s per s, %+.5f %% of the" \
				" %d CPUs (the throughput cost if the streams are CPU-bound)\n",
				ns["continue"] - ns["break"], d, 100 * d / n, n
			printf "  the patch measured -%.1f %% throughput (32 netperf streams, 107.26 ->" \
				" 105.23 Gbit/s)\n", seed
			dn = ns["continue"] - ns["break"]
			if (dn > 0)
				printf "  at %+.2f ns per update, %.1f M updates/s would cost %.1f %% of %d CPUs\n",
					dn, seed / 100 * n / (dn * 1e-9) / 1e6, seed, n
		}' <<<"$est"
}

NCPU=$(getconf _NPROCESSORS_ONLN)
if [ -n "$FROM" ]; then
	cp "$FROM" "$T/from.db" || die "cannot copy $FROM"
	echo "bench/seed_experiment: the recording $FROM (results written into a copy)"
	analyse "$T/from.db"
else
	measure
	analyse "$T/capture.$REPS.db"
fi
[ -n "$KEEP" ] && echo "recordings and logs kept in $T"
exit 0
