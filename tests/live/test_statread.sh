#!/usr/bin/env bash
# tests/live/test_statread.sh - memcg-capture --read PATH[:MS]: logged memory.stat reads.
#
# As root, with tracefs and the memcg tracepoints: makes <own>/mcr_sr_$$/P/C beneath
# this test's own memory cgroup, churns anonymous memory in C (bench/stress_anon at a
# bounded rate) and captures with --read P:50.  Checks: stat_reads holds reads, one row
# per line per read (as many as the file has lines), ts_before < ts_after, every value
# parses, the units of the table, and each read is in the trace (a memcg_flush_stats of
# P between ts_before and ts_after).  Also the option's refusals.  Everything it creates
# (cgroups, processes, files) is removed.
. "$(dirname "$0")/../lib.sh"

STRESS=$BIN/bench/stress_anon
TRACING=/sys/kernel/tracing
sq() { sqlite3 -batch -noheader "$@"; }

# --- refusals that need no privilege ------------------------------------------------
expect_exit statread_bad_ms 2 "$CAPTURE" -o "$T_TMP/x.db" --read /a:0 -d 1 &&
	expect_match statread_bad_ms_msg 'MS from 1' "$T_ERR"
expect_exit statread_dotdot 2 "$CAPTURE" -o "$T_TMP/x.db" --read /a/..:10 -d 1
expect_exit statread_cleanup 2 "$CAPTURE" --cleanup --read /a

if [ "$(id -u)" -ne 0 ]; then skip statread_live "not root: live capture needs root"; t_done; fi
if [ ! -d "$TRACING/instances" ]; then skip statread_live "no tracefs at $TRACING"; t_done; fi
if [ ! -d "$TRACING/events/memcg/memcg_flush_stats" ]; then
	skip statread_live "kernel $(uname -r) has no memcg tracepoints (needs 6.13+)"
	t_done
fi
command -v sqlite3 >/dev/null || { skip statread_live "the sqlite3 shell is not installed"; t_done; }
[ -x "$STRESS" ] || { skip statread_live "$STRESS is not built"; t_done; }

if awk '$1=="memory" && $2!=0 {f=1} END {exit !f}' /proc/cgroups 2>/dev/null &&
   MNT=$(awk '$3=="cgroup" && $4 ~ /(^|,)memory(,|$)/ {print $2; exit}' /proc/self/mounts) &&
   [ -n "$MNT" ]; then
	OWN=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ {print $3; exit}' /proc/self/cgroup)
	V=1
else
	MNT=$(awk '$3=="cgroup2" {print $2; exit}' /proc/self/mounts)
	OWN=$(awk -F: '$1=="0" {print $3; exit}' /proc/self/cgroup)
	V=2
fi
if [ -z "${MNT:-}" ] || [ -z "${OWN:-}" ]; then skip statread_live "no memory cgroup hierarchy"; t_done; fi
OWN=${OWN%/}
REL=$OWN/mcr_sr_$$ BASE=$MNT$OWN/mcr_sr_$$
P=$BASE/P C=$BASE/P/C
cg_cleanup() {
	local d
	for d in "$C" "$P" "$BASE"; do [ -d "$d" ] && rmdir "$d" 2>/dev/null; done
	return 0
}
t_on_exit cg_cleanup
if ! mkdir -p "$C" 2>/dev/null; then skip statread_live "cannot create cgroups under $MNT$OWN"; t_done; fi
if [ "$V" = 2 ]; then
	if ! { echo +memory >"$MNT$OWN/cgroup.subtree_control" && echo +memory >"$BASE/cgroup.subtree_control" &&
		echo +memory >"$P/cgroup.subtree_control"; } 2>/dev/null; then
		skip statread_live "cgroup v2: cannot enable the memory controller below $OWN"
		t_done
	fi
fi
ID_P=$(stat -c %i "$P")

expect_exit statread_not_a_cgroup 17 "$CAPTURE" -o "$T_TMP/x.db" --read "$REL/nope" -d 1 &&
	expect_match statread_not_a_cgroup_msg "^memcg-capture: --read $REL/nope" "$T_ERR"
[ ! -e "$T_TMP/x.db" ] && pass statread_refused_writes_nothing || fail statread_refused_writes_nothing

# the workload moves itself into C, then churns 16 MiB for 2 s at a bounded rate
DB=$T_TMP/sr.db
"$CAPTURE" -o "$DB" --read "$REL/P:50" -- \
	sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" 16 2 20000 >/dev/null' _ "$C" "$STRESS" \
	>"$T_TMP/cap.out" 2>"$T_TMP/cap.err"
rc=$?
if [ $rc -eq 0 ] || [ $rc -eq 11 ]; then pass statread_capture; else
	fail statread_capture "exit $rc: $(head -c 300 "$T_TMP/cap.err")"; t_done; fi
expect_match statread_summary '^memcg-capture: --read: [1-9][0-9]* reads' "$(cat "$T_TMP/cap.err")"

reads=$(sq "$DB" "SELECT count(DISTINCT read) FROM stat_reads")
[ "${reads:-0}" -ge 10 ] && pass "statread_reads ($reads)" || fail statread_reads "only ${reads:-0} reads in 2 s at 50 ms"
nlines=$(wc -l <"$P/memory.stat")
bad=$(sq "$DB" "SELECT count(*) FROM (SELECT read, count(*) n, max(pos) m FROM stat_reads GROUP BY read)
	WHERE n <> $nlines OR m <> $nlines - 1")
[ "$bad" = 0 ] && pass "statread_one_row_per_line ($nlines lines)" || fail statread_one_row_per_line "$bad reads"
bad=$(sq "$DB" "SELECT count(*) FROM stat_reads WHERE ts_after <= ts_before OR cgroup <> $ID_P")
[ "$bad" = 0 ] && pass statread_ts_order || fail statread_ts_order "$bad rows"
bad=$(sq "$DB" "SELECT count(*) FROM stat_reads WHERE value IS NULL OR line <> name || ' ' || value")
[ "$bad" = 0 ] && pass statread_values_parse || fail statread_values_parse "$bad rows"
bad=$(sq "$DB" "SELECT count(*) FROM stat_reads WHERE unit IS NULL OR unit NOT IN ('bytes', 'count')")
[ "$bad" = 0 ] && pass statread_units || fail statread_units "$bad rows of no known unit"
if [ "$V" = 1 ]; then hl=total_rss; else hl=anon; fi
max=$(sq "$DB" "SELECT max(value) FROM stat_reads WHERE name = '$hl'")
[ "${max:-0}" -gt 0 ] && pass "statread_${hl}_seen ($max)" || fail "statread_${hl}_seen" "max ${max:-none}"
# each read is a real read: its flush request is in the trace
if "$REPLAY" events --table "$DB" >/dev/null 2>&1; then
	miss=$(sq "$DB" "SELECT count(*) FROM (SELECT DISTINCT read, cgroup, ts_before, ts_after FROM stat_reads) r
		WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.kind = 4 AND e.id = r.cgroup
		AND e.ts BETWEEN r.ts_before AND r.ts_after)")
	if [ $rc -eq 0 ]; then
		[ "$miss" = 0 ] && pass statread_flush_traced || fail statread_flush_traced "$miss reads without a flush"
	else
		skip statread_flush_traced "events were lost (exit 11): $miss reads without a flush"
	fi
else
	fail statread_flush_traced "events --table failed"
fi
# a --read outside --cgroup: its reads are logged, but validate cannot check them: said
expect_exit statread_outside_scope 0 "$CAPTURE" -o "$T_TMP/scope.db" --cgroup "$REL/P/C" \
	--read "$REL/P:100" -d 1 &&
	expect_match statread_outside_scope_warns "warning: --read $REL/P: outside --cgroup $REL/P/C" "$T_ERR"
rm -f "$T_TMP/scope.db"
# a stop signal is the main thread's: every other thread, --read's too, blocks it, so that
# none takes it into a read() of memory.stat (EINTR would stop that --read for good)
"$CAPTURE" -o "$T_TMP/sig.db" --read "$REL/P:100" -- sh -c 'for t in /proc/$PPID/task/*; do
	[ "${t##*/}" = "$PPID" ] || awk "/^SigBlk:/ {print \$2}" "$t/status"; done >"$1"' \
	_ "$T_TMP/sigblk" >/dev/null 2>"$T_TMP/sig.err"
nthreads=0 unblocked=0
while read -r m; do	# SIGINT is bit 1, SIGTERM bit 14
	nthreads=$((nthreads + 1))
	(( (0x$m & 0x4002) == 0x4002 )) || unblocked=$((unblocked + 1))
done <"$T_TMP/sigblk"
if [ "$nthreads" -ge 2 ] && [ "$unblocked" = 0 ]; then pass "statread_threads_block_signals ($nthreads)"
else fail statread_threads_block_signals "$unblocked of $nthreads threads take signals"; fi
rm -f "$T_TMP/sig.db"
t_done
