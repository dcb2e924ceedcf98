#!/usr/bin/env bash
# tests/live/test_netstream.sh - bench/workload.sh netstream and bench/seed_experiment.sh.
#
# Without privilege: seed_experiment.sh's command line (--help, bad values exit 2, a
# missing build exit 3) and the workload's refusal of a bad MCR_STREAMS.
# As root, with iperf3 and a memory cgroup (else skipped with the reason): the workload
# with 1 stream for 1 s in <own>/mcr_ns_$$, then again interrupted by SIGTERM while it
# streams; after each, no cgroup is left below <own>/mcr_ns_$$ and no process that
# inherited the workload's environment is alive.  While it streams the leaf is directly
# below the directory given, holds the server and the client, and on cgroup v1 has
# TCP accounting on (sockets charged: memory.kmem.tcp.usage_in_bytes > 0).  Then, with
# memcg-capture and the memcg tracepoints, seed_experiment.sh itself with 1 s runs: every
# step prints its figures and no leaf is left below this test's cgroup.
# Removes what it makes; ends only the processes it started.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../live.sh"

SEEDEXP=$TOP/bench/seed_experiment.sh
WORKLOAD=$TOP/bench/workload.sh
MARK=mcr_ns_mark_$$

# --- the experiment's command line ----------------------------------------------------------
expect_exit seedexp_help 0 bash "$SEEDEXP" --help &&
	expect_match seedexp_help_text '^Exit: 0 done; 1 a step failed' "$T_OUT" &&
	expect_match seedexp_help_options '-n, --streams N' "$T_OUT"
expect_exit seedexp_h 0 bash "$SEEDEXP" -h
expect_exit seedexp_unknown 2 bash "$SEEDEXP" --frobnicate &&
	expect_match seedexp_unknown_says "unknown argument '--frobnicate'" "$T_ERR"
expect_exit seedexp_zero_seconds 2 bash "$SEEDEXP" -s 0
expect_exit seedexp_not_a_number 2 bash "$SEEDEXP" --reps 2x
expect_exit seedexp_negative_read 2 bash "$SEEDEXP" -m -1
expect_exit seedexp_too_many_streams 2 bash "$SEEDEXP" -n 101
expect_exit seedexp_missing_value 2 bash "$SEEDEXP" -s 3 --streams
expect_exit seedexp_empty_keep 2 bash "$SEEDEXP" -k ''
expect_exit seedexp_from_missing 2 bash "$SEEDEXP" --from "$T_TMP/none.db"
# not root or not built, either way the host cannot run it: 3, before anything is made
expect_exit seedexp_no_build 3 env MCR_BUILD="$T_TMP/none" bash "$SEEDEXP" -s 1 -r 1 &&
	expect_match seedexp_no_build_says 'needs root|build first' "$T_ERR"

# leftovers DIR: cgroups below DIR and processes carrying MARK in their environment
leftovers() {
	local f
	find "$1" -mindepth 1 -type d 2>/dev/null
	for f in /proc/[0-9]*/environ; do
		tr '\0' '\n' 2>/dev/null <"$f" | grep -qx "MCR_TEST_MARK=$MARK" && echo "pid ${f:6:-8}"
	done
}

# anything of ours still alive is ended (by its pid) once the checks have seen it
t_on_exit 'for p in $(leftovers /nonexistent); do [ "$p" = pid ] || kill "$p" 2>/dev/null; done'

mem_find
why_not() {
	[ "$(id -u)" -eq 0 ] || { echo "needs root"; return; }
	command -v iperf3 >/dev/null || { echo "iperf3 is not installed"; return; }
	[ -n "$BASE" ] || { echo "no memory cgroup hierarchy mounted"; return; }
	[ -x "$BIN/bench/stress_anon" ] || { echo "$BIN/bench/stress_anon is not built"; return; }
}
reason=$(why_not)
if [ -n "$reason" ]; then
	skip netstream_live "$reason"
	t_done
fi
expect_exit netstream_bad_streams 1 env MCR_STREAMS=0 bash "$WORKLOAD" netstream "$T_TMP" 1 &&
	expect_match netstream_bad_streams_says 'MCR_STREAMS must be' "$T_ERR"

CG="$BASE/mcr_ns_$$"
mkdir "$CG" || { fail netstream_mkdir "cannot make $CG"; t_done; }
t_on_exit "rmdir '$CG'/mcr_net_* '$CG' 2>/dev/null"
if [ -f "$CG/cgroup.subtree_control" ] && ! echo +memory >"$CG/cgroup.subtree_control" 2>/dev/null; then
	skip netstream_live "cgroup v2: $CG cannot enable memory for its children"
	t_done
fi

# --- one stream for 1 s -----------------------------------------------------------------------
if expect_exit netstream_run 0 timeout 60 env MCR_TEST_MARK="$MARK" MCR_STREAMS=1 \
	MCR_READ_MS=50 bash "$WORKLOAD" netstream "$CG" 1; then
	expect_match netstream_output '^netstream: 1 streams x 1 s, .*: [0-9]+\.[0-9]+ Gbit/s$' "$T_OUT"
	g=$(awk '{ print $(NF - 1) }' <<<"$T_OUT")
	awk -v g="$g" 'BEGIN { exit !(g > 0) }' && pass netstream_throughput ||
		fail netstream_throughput "no throughput: $T_OUT"
fi
left=$(leftovers "$CG")
[ -z "$left" ] && pass netstream_run_leaves_nothing ||
	fail netstream_run_leaves_nothing "left: $(echo $left)"

# --- interrupted while it streams ---------------------------------------------------------------
env MCR_TEST_MARK="$MARK" MCR_STREAMS=1 MCR_READ_MS=0 bash "$WORKLOAD" netstream "$CG" 30 \
	>"$T_TMP/int.out" 2>"$T_TMP/int.err" &
wpid=$!
leaf="$CG/mcr_net_$wpid"
n=0
for i in $(seq 100); do
	n=$(cat "$leaf/cgroup.procs" 2>/dev/null | wc -l)
	[ "$n" -ge 2 ] && break
	sleep 0.1
done
[ "$n" -eq 2 ] && pass netstream_leaf_below_dir ||
	fail netstream_leaf_below_dir "$leaf holds $n processes, wanted the server and the client"
if [ -f "$leaf/memory.kmem.tcp.usage_in_bytes" ]; then
	for i in $(seq 50); do
		u=$(cat "$leaf/memory.kmem.tcp.usage_in_bytes" 2>/dev/null)
		[ "${u:-0}" -gt 0 ] && break
		sleep 0.1
	done
	[ "${u:-0}" -gt 0 ] && pass netstream_v1_tcp_accounting ||
		fail netstream_v1_tcp_accounting "memory.kmem.tcp.usage_in_bytes ${u:-unreadable} while streaming"
fi
kill -TERM "$wpid"
for i in $(seq 100); do kill -0 "$wpid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$wpid" 2>/dev/null; then
	fail netstream_term "still running 10 s after SIGTERM"
	kill -KILL "$wpid"
fi
wait "$wpid"
rc=$?
[ "$rc" -eq 1 ] && pass netstream_term ||
	fail netstream_term "exit $rc after SIGTERM: $(tail -n 1 "$T_TMP/int.err")"
left=$(leftovers "$CG")
[ -z "$left" ] && pass netstream_term_leaves_nothing ||
	fail netstream_term_leaves_nothing "left: $(echo $left)"

# --- the experiment end to end, shortest: 1 s runs, one each way ---------------------------------
if [ ! -x "$CAPTURE" ] || [ ! -d "$TR/events/memcg/memcg_flush_stats" ]; then
	skip seedexp_live "no $CAPTURE or no memcg tracepoints on $(uname -r)"
	t_done
fi
before=$(find "$BASE" -maxdepth 1 -name 'mcr_net_*' | sort)
if expect_exit seedexp_live 0 timeout 300 bash "$SEEDEXP" -s 1 -r 1 -n 1 -k "$T_TMP/keep"; then
	expect_match seedexp_live_runs '^run 1: alone [0-9.]+ Gbit/s, under capture [0-9.]+ Gbit/s' "$T_OUT"
	expect_match seedexp_live_validate '^validate \(policy [a-z]+\): stats_updates match [0-9]+ of' "$T_OUT"
	expect_match seedexp_live_staleness '^  continue +leaf ' "$T_OUT"
	expect_match seedexp_live_counts '^  walk_steps +[0-9.]+ +[0-9.]+ +[-+][0-9.]+$' "$T_OUT"
	[ -f "$T_TMP/keep/capture.1.db" ] && pass seedexp_live_kept || fail seedexp_live_kept "no capture.1.db"
fi
left=$(comm -13 <(echo "$before") <(find "$BASE" -maxdepth 1 -name 'mcr_net_*' | sort))
[ -z "$left" ] && pass seedexp_live_leaves_nothing || fail seedexp_live_leaves_nothing "left: $left"
t_done
