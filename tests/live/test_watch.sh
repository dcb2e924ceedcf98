#!/usr/bin/env bash
# tests/live/test_watch.sh - memcg-capture --watch and --prom: the traced kernel's own
# policy replayed while capturing.
#
# As root, with tracefs and the memcg tracepoints: makes <own>/mcr_watch_$$/P/C beneath
# this test's own memory cgroup and captures with --watch --prom F --read P:80 -d 6.
# Once the prom file is there (the capture runs), a workload moves itself into C and
# faults anonymous memory (the seed race's shape: a parent whose only busy child churns,
# where the 6.16+ break walk strands the parent).  Checks: F says P is stranded
# (memcg_stat_stranded 1) within 2 s of the start of P's first stranding that lasted a
# second (as the offline replay of the file has it; up to three recordings, as whether
# the kernel strands P that long varies), the stdout lines name P,
# and the stale and total reads the watch counted for P at the end equal those of
# `memcg-replay replay -m spread` of the same file and its report's csv (break rows),
# exactly, in every recording.  Also F's format (HELP/TYPE, the model), no F.tmp left, and the
# refusals (an unusable --prom, a clock it cannot read, --cleanup).  Everything it
# creates (cgroups, processes, files) is removed.
. "$(dirname "$0")/../lib.sh"

STRESS=$BIN/bench/stress_anon
TRACING=/sys/kernel/tracing

# --- refusals that need no privilege: checked before anything is touched --------------
expect_exit watch_prom_no_dir 3 "$CAPTURE" -o "$T_TMP/x.db" --prom "$T_TMP/no/such.prom" -d 1 &&
	expect_match watch_prom_no_dir_msg "^memcg-capture: --prom $T_TMP/no/such.prom" "$T_ERR"
expect_exit watch_prom_dir 3 "$CAPTURE" -o "$T_TMP/x.db" --prom "$T_TMP" -d 1
# a file --prom did not write (a user's, the trace database given by mistake) is never
# replaced, nor the -o file itself
echo "a user's notes" >"$T_TMP/notes"
expect_exit watch_prom_foreign 3 "$CAPTURE" -o "$T_TMP/x.db" --prom "$T_TMP/notes" -d 1 &&
	expect_match watch_prom_foreign_msg "^memcg-capture: --prom $T_TMP/notes: exists and is not a file --prom wrote" "$T_ERR"
[ "$(cat "$T_TMP/notes")" = "a user's notes" ] && pass watch_prom_foreign_kept ||
	fail watch_prom_foreign_kept "$(head -c 100 "$T_TMP/notes")"
expect_exit watch_prom_is_output 3 "$CAPTURE" -o "$T_TMP/x.db" --prom "$T_TMP/x.db" -d 1
expect_exit watch_clock 17 "$CAPTURE" -o "$T_TMP/x.db" --watch -C global -d 1 &&
	expect_match watch_clock_msg "^memcg-capture: --watch: -C global" "$T_ERR"
[ ! -e "$T_TMP/x.db" ] && pass watch_refused_writes_nothing || fail watch_refused_writes_nothing
expect_exit watch_cleanup 2 "$CAPTURE" --cleanup --watch

if [ "$(id -u)" -ne 0 ]; then skip watch_live "not root: live capture needs root"; t_done; fi
if [ ! -d "$TRACING/instances" ]; then skip watch_live "no tracefs at $TRACING"; t_done; fi
if [ ! -d "$TRACING/events/memcg/memcg_flush_stats" ]; then
	skip watch_live "kernel $(uname -r) has no memcg tracepoints (needs 6.13+)"
	t_done
fi
[ -x "$STRESS" ] || { skip watch_live "$STRESS is not built"; t_done; }

. "$(dirname "$0")/../live.sh"
mem_find
if [ -z "$BASE" ]; then skip watch_live "no memory cgroup of this process found"; t_done; fi
MNT=$MOUNT OWN=${BASE#"$MOUNT"} V=1
[ -f "$MOUNT/cgroup.controllers" ] && V=2
REL=$OWN/mcr_watch_$$ BASE=$MNT$OWN/mcr_watch_$$
P=$BASE/P C=$BASE/P/C
CAP= WL= RC=
cg_cleanup() {
	local d
	for d in "$CAP" "$WL"; do [ -n "$d" ] && kill "$d" 2>/dev/null && wait "$d" 2>/dev/null; done
	for d in "$C" "$P" "$BASE"; do [ -d "$d" ] && rmdir "$d" 2>/dev/null; done
	return 0
}
t_on_exit cg_cleanup
if ! mkdir -p "$C" 2>/dev/null; then skip watch_live "cannot create cgroups under $MNT$OWN"; t_done; fi
if [ "$V" = 2 ]; then
	if ! { echo +memory >"$MNT$OWN/cgroup.subtree_control" && echo +memory >"$BASE/cgroup.subtree_control" &&
		echo +memory >"$P/cgroup.subtree_control"; } 2>/dev/null; then
		skip watch_live "cgroup v2: cannot enable the memory controller below $OWN"
		t_done
	fi
fi

now_ms() { local t; t=$(date +%s%N); echo $((t / 1000000)); }

# One capture with --watch --prom, the workload started once the file is there; sets
# SEEN (now_ms when F first showed P stranded, empty if never) and RC.
watch_run() {
	local seen=
	rm -f "$DB" "$F"
	"$CAPTURE" --watch --prom "$F" -d 6 -o "$DB" --read "$REL/P:80" >"$T_TMP/cap.out" \
		2>"$T_TMP/cap.err" &
	CAP=$!
	# the first prom file comes a second into the capture: tracing runs by then
	for _ in $(seq 100); do [ -e "$F" ] || ! kill -0 $CAP 2>/dev/null && break; sleep 0.05; done
	# the seed race's shape: C faults 64 MiB over and over for 4 s, as fast as it can,
	# on every CPU at once (its updates run on one CPU while P's reader flushes on
	# another)
	sh -c 'echo $$ >"$1/cgroup.procs" && n=$(nproc) && while [ $n -gt 0 ]; do
		"$2" 64 4 "$3" & n=$((n - 1)); done; wait' _ "$C" "$STRESS" "$RATE" >/dev/null &
	WL=$!
	while kill -0 $CAP 2>/dev/null; do
		if grep -qx "memcg_stat_stranded{cgroup=\"$REL/P\"} 1" "$F" 2>/dev/null; then
			seen=$(now_ms)
			break
		fi
		sleep 0.02
	done
	wait $CAP
	RC=$? CAP=
	wait $WL 2>/dev/null
	WL=
	SEEN=$seen
	grep -qx 'memcg_watch_overflow 1' "$F" 2>/dev/null && OVF=1 || OVF=0
}

# After watch_exact's replay: the wall clock (ms, as now_ms) at the start of P's first
# stranded episode under break that lasted a second (or was open at the end), from its
# trace-clock (CLOCK_MONOTONIC) start and OFF_MS; empty if the kernel never stranded P
# that long.
kernel_ms() {
	sqlite3 -batch -noheader "$DB" "SELECT min(e.start_ts) / 1000000 + $OFF_MS
		FROM stranded_episodes e JOIN runs r USING (run_id)
		WHERE r.policy = 'break' AND e.cgroup_id = $(stat -c %i "$P")
		AND (e.open OR e.end_ts - e.start_ts >= 1000000000)" 2>/dev/null
}

# The stale and total reads the watch counted for P at the end against the offline
# replay's (report --format csv, break rows); $1 names the attempt.
watch_exact() {
	local w_stale w_reads o_reads o_stale policy
	w_stale=$(sed -n "s|^memcg_stat_stale_reads_total{cgroup=\"$REL/P\"} ||p" "$F")
	w_reads=$(sed -n "s|^memcg_stat_reads_total{cgroup=\"$REL/P\"} ||p" "$F")
	if ! "$REPLAY" replay -m spread "$DB" >"$T_TMP/replay.out" 2>&1; then
		fail "watch_offline_replay$1" "$(tail -c 300 "$T_TMP/replay.out")"
		return
	fi
	"$REPLAY" report "$DB" --format csv >"$T_TMP/report.csv" 2>"$T_TMP/report.err"
	read -r o_reads o_stale < <(awk -F, -v cg="$REL/P" '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$col["policy"] == "break" && $col["cgroup"] == cg {
			print $col["reads"], $col["stale_reads"]; exit }' "$T_TMP/report.csv")
	policy=$(sed -n 's/^memcg_watch_info{model="spread",policy="\([a-z]*\)"} 1$/\1/p' "$F")
	if [ "$policy" != break ]; then
		skip "watch_matches_offline$1" "the watch replayed $policy, the csv's break rows are break's"
	elif [ -n "$w_stale" ] && [ "$w_stale" = "${o_stale:-}" ] && [ "$w_reads" = "${o_reads:-}" ]; then
		pass "watch_matches_offline$1 (P: $w_stale stale of $w_reads reads)"
	else
		fail "watch_matches_offline$1" "watch: ${w_stale:-none} stale of ${w_reads:-none} reads; offline: ${o_stale:-none} of ${o_reads:-none}"
	fi
}

DB=$T_TMP/w.db F=$T_TMP/w.prom
# faults/s of each workload process: as fast as it can, but a sanitized build replays
# several times slower than the capture records, so there at 20 k/s
RATE=0
[ -n "${MCR_SANITIZED:-}" ] && RATE=20000
# A watch that falls behind (a slow build, a loaded machine) overflows by design: it
# says so, stops counting, and the capture goes on.  Up to three recordings for one
# that kept up; the checks below need one.
for n in 1 2 3; do
	watch_run
	if [ $RC -ne 0 ] && [ $RC -ne 11 ]; then
		fail watch_capture "exit $RC: $(head -c 300 "$T_TMP/cap.err")"; t_done; fi
	[ $OVF = 0 ] && break
done
pass "watch_capture (exit $RC)"
if [ $OVF = 1 ]; then
	expect_match watch_overflow_said "^memcg-capture: --watch: stopped counting at the overflow" \
		"$(cat "$T_TMP/cap.err")"
	expect_match watch_overflow_stored "^memcg-capture: [0-9]+ events .* stored in " \
		"$(cat "$T_TMP/cap.out")"
	skip watch_live "the watch fell behind the capture in 3 recordings (overflow, said on stderr and in the prom file): nothing to compare"
	t_done
fi
expect_match watch_stdout_end "^[0-9:]+ end: trace .* events; [a-z]+ policy, spread model" \
	"$(cat "$T_TMP/cap.out")"
# the file: the format, the model said, nothing left beside it
[ ! -e "$F.tmp" ] && pass watch_prom_no_tmp || fail watch_prom_no_tmp "$F.tmp left"
expect_match watch_prom_info '^memcg_watch_info\{model="spread",policy="[a-z]+"\} 1$' "$(cat "$F")"
expect_match watch_prom_type '^# TYPE memcg_stat_stale_reads_total counter$' "$(cat "$F")"
expect_match watch_prom_overflow '^memcg_watch_overflow 0$' "$(cat "$F")"
bad=$(grep -v '^#' "$F" | grep -cvE '^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? [-+0-9.eEInfNa]+$')
[ "$bad" = 0 ] && pass watch_prom_lines_parse || fail watch_prom_lines_parse "$bad lines"
watch_exact ""
# a file --prom wrote is replaced by the next capture's
expect_exit watch_prom_replaces_its_own 0 "$CAPTURE" -o "$T_TMP/again.db" --prom "$F" -d 0.5 &&
	expect_match watch_prom_replaced '^memcg_watch_overflow 0$' "$(cat "$F")"
# Shown within 2 s of stranding: from the start of P's first stranded episode that
# lasted a second (the kernel's, as the offline replay of the same file has it) to the
# first prom file that showed P stranded (it may show a shorter earlier one: sooner).
# When the kernel strands P varies with the race's timing: up to three recordings,
# each compared with its offline replay, until one has such an episode.
# OFF_MS: the wall clock less CLOCK_MONOTONIC (the trace clock), in ms.
if ! command -v sqlite3 >/dev/null || ! command -v python3 >/dev/null; then
	skip watch_stranded_within_2s "needs sqlite3 and python3 to put the trace clock on the wall clock"
	t_done
fi
OFF_MS=$(python3 -c 'import time; print((time.time_ns() - time.monotonic_ns()) // 1000000)')
k=$(kernel_ms) times=
for n in 2 3 4; do
	if [ $OVF = 1 ]; then t="the watch fell behind"
	elif [ -z "$k" ]; then t="P not stranded for a second"
	elif [ -z "$SEEN" ]; then t="P stranded, never shown"
	else t="shown $((SEEN - k)) ms after P was stranded"; fi
	times="$times${times:+; }$t"
	[ -n "$k" ] && break
	[ $n = 4 ] && break
	watch_run
	[ $RC -eq 0 ] || [ $RC -eq 11 ] || { fail "watch_capture_$n" "exit $RC"; break; }
	k=
	[ $OVF = 1 ] && continue	# fell behind: nothing to compare in this one
	watch_exact "_$n"
	k=$(kernel_ms)
done
if [ -z "$k" ]; then
	skip watch_stranded_within_2s "no recording of 3 where the kernel stranded P for a second and the watch kept up: $times"
elif [ -n "$SEEN" ] && [ $((SEEN - k)) -le 2000 ]; then
	if [ "$SEEN" -ge "$k" ]; then t="$((SEEN - k)) ms after P's stranding of a second began"
	else t="$((k - SEEN)) ms before it began: an earlier, shorter stranding"; fi
	pass "watch_stranded_within_2s (shown $t)"
	expect_match watch_stdout_names_p "^  $REL/P stranded [0-9.]+ s, .*stale reads [0-9]+ of [0-9]+$" \
		"$(cat "$T_TMP/cap.out")"
else
	fail watch_stranded_within_2s "per recording: $times"
fi
t_done
