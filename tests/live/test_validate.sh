#!/usr/bin/env bash
# tests/live/test_validate.sh - validation against this kernel on live recordings.
#
# Records the seed race's shape (bench/workload.sh race: <own>/mcr_val_$$/P/C churns
# anonymous memory while P's memory.stat is read every 80 ms) for 4 s with
# memcg-capture, and again with trace-cmd + import, then checks on each:
#   - validate (the kernel's own policy) reaches MIN_MATCH of the kernel's recorded
#     stats_updates with inference, over all reads once misses the host explains are
#     set aside (dying memcgs other tests left: their parents are unknown), and over
#     P's reads alone.  Measured here with bench/fidelity.sh on 12 recordings of 6
#     workloads (6.18, 2 CPUs): 100 % on 11, 97 % on the last (a dying memcg); this
#     workload 100 % in every run but one under ASan+UBSan, which lost 1 of 31 to
#     the hypothesis cap.  MIN_MATCH = 0.9: 3 misses in 30 reads fail it.
#   - inference never does worse than the plain flush model;
#   - where the kernel itself reported P at exactly TH without needs_flush in compared
#     reads (the race happened: from 2 to about half of P's reads here on 6.18), the
#     other policies miss at least half of those reads: validation discriminates;
#   - replay's inferred model reproduces the kernel's stats_updates at P's reads at
#     least as often as the spread model.
# Needs root, tracefs, the memcg tracepoints (6.13+) and sqlite3; trace-cmd for the
# second half.  Skips with the reason otherwise.  Removes its cgroups, restores the
# tracing settings trace-cmd changes.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../live.sh"

MIN_MATCH=0.9
WORKLOAD="$TOP/bench/workload.sh"
# The child's faults at a fixed rate: unpaced, the events grow with the machine's
# speed, and on an idle machine the inference over them took 590 s of the 900 s
# limit under ASan (148 s paced).  At 100 000 faults/s P is still stuck at TH in
# most of its reads.
export MCR_FAULT_RATE=${MCR_FAULT_RATE:-100000}

t_lsan_import	# libtracecmd's v6 leak, suppressed by name (tests/lib.sh)

why_not() {
	[ "$(id -u)" -eq 0 ] || { echo "needs root"; return; }
	command -v sqlite3 >/dev/null || { echo "sqlite3 is not installed"; return; }
	[ -d "$TR/events/memcg/memcg_flush_stats" ] ||
		{ echo "no memcg tracepoints in $TR on $(uname -r) (Linux 6.13+)"; return; }
	[ -n "$BASE" ] || { echo "no memory cgroup hierarchy mounted"; return; }
	[ -x "$BIN/bench/stress_anon" ] || { echo "$BIN/bench/stress_anon is not built"; return; }
}

sq() { sqlite3 -batch -noheader -separator " " "$@"; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'; }

mem_find
reason=$(why_not)
if [ -n "$reason" ]; then
	skip validate_live "$reason"
	t_done
fi
CG="$BASE/mcr_val_$$"
mkdir "$CG" || { fail validate_live_mkdir "cannot make $CG"; t_done; }
t_on_exit "rmdir '$CG' 2>/dev/null"

# check LABEL DB: the checks above on one recording
check() {
	local l=$1 db=$2 pol rate plain p th stuck other inf spr cmp m_pol skipped m_other
	local ext rate_ext p_cmp p_miss missing
	# the events as rows for the SQL below (the one documented step)
	"$REPLAY" events --table "$db" >/dev/null || fail "validate_live_${l}_events_table" "failed"
	expect_exit "validate_live_${l}" 0 "$REPLAY" validate "$db" -r 0 -n 3 || return
	pol=$(printf '%s\n' "$T_OUT" | sed -n 's/^policy \([a-z]*\),.*/\1/p')
	read -r rate plain <<<"$(sq "$db" "SELECT 1.0 * stats_updates_match / compared,
		1.0 * stats_updates_match_plain / compared FROM validation ORDER BY run_id DESC LIMIT 1")"
	read -r cmp m_pol skipped <<<"$(sq "$db" "SELECT compared, stats_updates_match,
		skipped_before_sync FROM validation ORDER BY run_id DESC LIMIT 1")"
	# misses the host explains (dying memcgs of other tests, lost events) are not the model's
	ext=$(sq "$db" "SELECT count(*) FROM validation_mismatch WHERE run_id = (SELECT max(run_id)
		FROM validation) AND cause IN ('cgroup of unknown parent', 'lost events nearby',
		'flush outside the trace')")
	rate_ext=$(awk -v m="$m_pol" -v e="$ext" -v c="$cmp" 'BEGIN { print c ? (m + e) / c : 0 }')
	p=$(sq "$db" "SELECT id FROM cgroups WHERE path LIKE '%/mcr_val_$$/P'")
	p_cmp=$(sq "$db" "SELECT count(*) FROM reads WHERE run_id = (SELECT max(run_id) FROM validation)
		AND cgroup_id = '$p' AND ts >= (SELECT ts FROM events WHERE kind = 4 ORDER BY ts LIMIT 1
		OFFSET $skipped)")
	p_miss=$(sq "$db" "SELECT count(*) FROM validation_mismatch WHERE run_id = (SELECT max(run_id)
		FROM validation) AND cgroup_id = '$p'")
	echo "# $l: policy $pol, inferred $rate ($ext misses the host explains: $rate_ext), plain $plain;" \
		"P: $p_miss misses in $p_cmp compared reads"
	ge "$rate_ext" "$MIN_MATCH" && pass "validate_live_${l}_match_rate" ||
		fail "validate_live_${l}_match_rate" "$rate_ext < $MIN_MATCH: $(printf '%s' "$T_OUT" | head -c 600)"
	[ "${p_cmp:-0}" -gt 0 ] && ge "$(awk -v m="$p_miss" -v c="$p_cmp" 'BEGIN { print 1 - m / c }')" \
		"$MIN_MATCH" && pass "validate_live_${l}_match_rate_P" ||
		fail "validate_live_${l}_match_rate_P" "$p_miss misses in $p_cmp reads of P"
	ge "$rate" "$plain" && pass "validate_live_${l}_inference_not_worse" ||
		fail "validate_live_${l}_inference_not_worse" "inferred $rate < plain $plain"

	th=$(( 64 * $(sq "$db" "SELECT value FROM meta WHERE key = 'nr_cpus_online'") ))
	# compared reads in which the kernel reported P stuck at exactly TH, not flushable
	stuck=$(sq "$db" "SELECT count(*) FROM events WHERE kind = 4 AND id = '$p' AND val = $th
		AND (flags & 2) = 0 AND ts >= (SELECT ts FROM events WHERE kind = 4 ORDER BY ts
		LIMIT 1 OFFSET $skipped)")
	if [ -z "$p" ] || [ "${stuck:-0}" -lt 2 ]; then
		skip "validate_live_${l}_discriminates" \
			"the kernel reported P stuck at TH ($th) in ${stuck:-0} compared reads: the race did not happen"
	else
		# a wrong policy cannot leave P at TH: it must miss at least half of those reads
		for other in break continue legacy; do
			[ "$other" = "$pol" ] && continue
			"$REPLAY" validate "$db" --policy "$other" -r 0 -n 0 >/dev/null 2>&1
			m_other=$(sq "$db" "SELECT stats_updates_match FROM validation
				ORDER BY run_id DESC LIMIT 1")
			echo "# $l: $other matches $m_other of $cmp, $pol $m_pol (P stuck at TH in $stuck)"
			[ $((m_pol - m_other)) -ge $(((stuck + 1) / 2)) ] &&
				pass "validate_live_${l}_discriminates_$other" ||
				fail "validate_live_${l}_discriminates_$other" \
					"$other $m_other vs $pol $m_pol of $cmp, $stuck stuck reads"
		done
	fi

	# replay: the kernel's policy, inferred order vs spread, at P's reads.  Not on a file
	# that lacks events the kernel handed its recorder: trace-cmd 3.1.6 kept 42-61 % of what
	# the kernel wrote for it on one machine of this kind, all of it on another (README,
	# Performance), and an inference over what is left may lose to the spread model either way.
	missing=$(sq "$db" "SELECT coalesce((SELECT sum(read) FROM cpu_stats WHERE phase = 'end'), 0)
		- (SELECT count(*) FROM events)")
	if [ "${missing:-0}" -gt 0 ]; then
		skip "validate_live_${l}_replay_inferred" \
			"the file lacks $missing events the kernel delivered to its recorder"
		return
	fi
	"$REPLAY" replay "$db" -p "$pol" -s 0 >/dev/null 2>&1 &&
		inf=$(sq "$db" "SELECT sum(sim_stats_updates = kernel_stats_updates) FROM reads
			WHERE run_id = (SELECT max(run_id) FROM runs) AND cgroup_id = '$p'")
	"$REPLAY" replay "$db" -p "$pol" -s 0 -m spread >/dev/null 2>&1 &&
		spr=$(sq "$db" "SELECT sum(sim_stats_updates = kernel_stats_updates) FROM reads
			WHERE run_id = (SELECT max(run_id) FROM runs) AND cgroup_id = '$p'")
	echo "# $l: replay $pol reproduces P's kernel value in ${inf:-?} reads inferred, ${spr:-?} spread"
	[ -n "${inf:-}" ] && [ -n "${spr:-}" ] && [ "$inf" -ge "$spr" ] &&
		pass "validate_live_${l}_replay_inferred" ||
		fail "validate_live_${l}_replay_inferred" "inferred ${inf:-?} < spread ${spr:-?}"
}

# ---- memcg-capture ----
# Under load the capture may lose events (exit 11): then the loss must be counted exactly,
# and validation judges the rest (misses next to a gap are the host's, not the model's).
"$CAPTURE" -o "$T_TMP/c.db" -- "$WORKLOAD" race "$CG" 4 >"$T_TMP/c.out" 2>"$T_TMP/c.err"
rc=$?
if [ $rc -eq 0 ] || [ $rc -eq 11 ]; then
	pass validate_live_capture_record
	loss_or_none validate_live_capture $rc "$T_TMP/c.db" "$T_TMP/c.out"
	check capture "$T_TMP/c.db"
else
	fail validate_live_capture_record "exit $rc: $(head -c 300 "$T_TMP/c.err")"
fi

# ---- trace-cmd + import ----
if ! command -v trace-cmd >/dev/null; then
	skip validate_live_tracecmd "trace-cmd is not installed"
	t_done
fi
tracing_save
t_on_exit '[ -n "$TC_PID" ] && kill -- "-$TC_PID" 2>/dev/null; tracing_restore'
if tc_record "$T_TMP/t.dat" "$T_TMP/tc" -- "$WORKLOAD" race "$CG" 4; then
	expect_exit validate_live_tracecmd_import 0 "$REPLAY" import "$T_TMP/t.dat" \
		-o "$T_TMP/t.db" --cgroupfs "$MOUNT" && check tracecmd "$T_TMP/t.db"
else
	fail validate_live_tracecmd_record "trace-cmd wrote nothing: $(tail -n 2 "$T_TMP/tc.err")"
fi
t_done
