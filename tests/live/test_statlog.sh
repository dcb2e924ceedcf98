#!/usr/bin/env bash
# tests/live/test_statlog.sh - trace-cmd record with memcg-statlog beside it, then
# import --stat-log and validate: the reads of the log are matched to their traced
# flushes and what memory.stat printed agrees with the simulation; one printed value
# moved by 100 pages in the log is reported off, with no cause.
#
# As root, with tracefs, trace-cmd and the memcg tracepoints: makes <own>/mcr_sl_$$/P/C
# beneath this test's own memory cgroup, churns anonymous memory in C (bench/stress_anon
# at a bounded rate) for 3 s while memcg-statlog reads P every 50 ms, all under
# trace-cmd record (tests/live.sh: the tracing settings are restored).  Everything it
# creates (cgroups, processes, files) is removed.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/live.sh"

STRESS=$BIN/bench/stress_anon
sq() { sqlite3 -batch -noheader "$@"; }

# --- what needs no privilege ---------------------------------------------------------
expect_exit statlog_usage 2 "$STATLOG"
expect_exit statlog_bad_interval 2 "$STATLOG" -i 0 /
expect_exit statlog_bad_clock 2 "$STATLOG" -C nope /
expect_exit statlog_not_cgroup 17 "$STATLOG" -d 0.1 "$T_TMP" &&
	expect_match statlog_not_cgroup_msg "is not a cgroup directory" "$T_ERR"
expect_exit statlog_help 0 "$STATLOG" --help &&
	expect_match statlog_help_format "^  read N ID BEFORE AFTER LINES" "$T_OUT"

if [ "$(id -u)" -ne 0 ]; then skip statlog_live "not root: trace-cmd record needs root"; t_done; fi
command -v trace-cmd >/dev/null || { skip statlog_live "trace-cmd is not installed"; t_done; }
command -v sqlite3 >/dev/null || { skip statlog_live "the sqlite3 shell is not installed"; t_done; }
[ -d "$TR/events/memcg/memcg_flush_stats" ] ||
	{ skip statlog_live "kernel $(uname -r) has no memcg tracepoints (needs 6.13+)"; t_done; }
[ -x "$STRESS" ] || { skip statlog_live "$STRESS is not built"; t_done; }
mem_find
[ -n "$BASE" ] || { skip statlog_live "no memory cgroup hierarchy"; t_done; }
D=$BASE/mcr_sl_$$ P=$BASE/mcr_sl_$$/P C=$BASE/mcr_sl_$$/P/C
cg_cleanup() {
	local d
	for d in "$C" "$P" "$D"; do [ -d "$d" ] && rmdir "$d" 2>/dev/null; done
	return 0
}
t_on_exit cg_cleanup
if ! mkdir -p "$C" 2>/dev/null; then skip statlog_live "cannot create cgroups under $BASE"; t_done; fi
if [ -f "$D/cgroup.controllers" ]; then
	if ! { echo +memory >"$BASE/cgroup.subtree_control" && echo +memory >"$D/cgroup.subtree_control" &&
		echo +memory >"$P/cgroup.subtree_control"; } 2>/dev/null; then
		skip statlog_live "cgroup v2: cannot enable the memory controller below $BASE"
		t_done
	fi
fi

# an existing log is not replaced unless --force
: >"$T_TMP/exists.log"
expect_exit statlog_exists 3 "$STATLOG" -d 0.1 -o "$T_TMP/exists.log" "$P"
# the log: header, P's id (the inode of its directory) and version, reads
expect_exit statlog_short 0 "$STATLOG" -i 10 -d 0.1 -o "$T_TMP/short.log" "$P"
id=$(stat -c %i "$P")
v=1; [ -f "$P/cgroup.controllers" ] && v=2
[ "$(sed -n 1,3p "$T_TMP/short.log")" = "$(printf 'memcg-statlog 1\nclock mono\ncgroup %s %s %s' "$id" "$v" "$P")" ] &&
	pass statlog_header || fail statlog_header "$(head -c 300 "$T_TMP/short.log")"
nl=$(wc -l <"$P/memory.stat")
grep -qE "^read 0 $id [0-9]+ [0-9]+ $nl\$" "$T_TMP/short.log" && pass statlog_read_record ||
	fail statlog_read_record "$(sed -n 4p "$T_TMP/short.log")"

tracing_save
LOG=$T_TMP/P.statlog
tc_record "$T_TMP/trace.dat" "$T_TMP/tc" -- sh -c '
	"$1" -i 50 -d 3 -o "$2" "$3" 2>/dev/null & sl=$!
	sh -c "echo \$\$ >\"$4/cgroup.procs\" && exec \"$5\" 16 3 20000 >/dev/null"
	wait $sl' _ "$STATLOG" "$LOG" "$P" "$C" "$STRESS"
[ -s "$T_TMP/trace.dat" ] && [ -s "$LOG" ] && pass statlog_recorded ||
	{ fail statlog_recorded "trace-cmd: $(tail -c 300 "$T_TMP/tc.err")"; t_done; }

DB=$T_TMP/t.db
expect_exit statlog_import 0 "$REPLAY" import -q "$T_TMP/trace.dat" -o "$DB" --stat-log "$LOG" \
	--cgroupfs "$MOUNT" || t_done
reads=$(sq "$DB" "SELECT count(DISTINCT read) FROM stat_reads WHERE cgroup = $id")
[ "${reads:-0}" -ge 20 ] && pass "statlog_reads_stored ($reads)" || fail statlog_reads_stored "${reads:-0}"
"$REPLAY" validate -q "$DB" >"$T_TMP/v.out" 2>"$T_TMP/v.err"
out=$(cat "$T_TMP/v.out")
expect_match statlog_matched "memory.stat reads logged \(stat_reads\): $reads, matched to their traced flush request $reads\$" "$out"
read -r within pairs <<<"$(sed -n 's/^memory.stat as printed: \([0-9]*\) of \([0-9]*\) printed lines within 2 units.*/\1 \2/p' <<<"$out")"
# The share within 2 units is a measurement (docs/fidelity.md), not something this
# test may depend on: how the machine's load placed the visits inside the lock windows
# moves it.  What it must hold is exact accounting: every pair compared is exact,
# within 2 units or off, and every off pair is counted under one cause or none.
acc=$(sed -n 's/^(read, line) pairs \([0-9]*\): exact \([0-9]*\) ([^)]*), within 2 units \([0-9]*\)[^,]*, off \([0-9]*\) (the run.s flush decision differs from the kernel.s \([0-9]*\), inside the range the deciding flush.s lock window allows \([0-9]*\), no cause named \([0-9]*\)).*/\1 \2 \3 \4 \5 \6 \7/p' <<<"$out" | head -n 1)
read -r n ex w2 off dec win none <<<"$acc"
if [ "${n:-0}" -gt 0 ] && [ "${pairs:-x}" = "$n" ] && [ $((ex + w2 + off)) = "$n" ] &&
   [ $((dec + win + none)) = "$off" ] && [ "$within" = $((ex + w2)) ]; then
	pass "statlog_agrees ($within of $pairs within 2 units; off: $win lock window, $dec decision, $none no cause)"
else
	fail statlog_agrees "'$acc' against ${within:-?} of ${pairs:-?}: $(grep -A3 '^(read, line)' <<<"$out" | head -c 400)"
fi

# one printed value of a read the simulation matched (exactly if one is, else within 2
# units), moved by 100 pages: total_rss / anon if one of its reads matched, else another
# line in pages; off by the 100 pages plus what it was off before, with no cause
run=$(sq "$DB" "SELECT max(run_id) FROM stat_read_checks")
read -r k d0 line <<<"$(sq -separator ' ' "$DB" "SELECT read, diff, name FROM stat_read_checks
	WHERE run_id = $run AND unit = 'bytes' AND verdict IN ('exact', 'within2')
	ORDER BY name NOT IN ('total_rss', 'anon'), verdict <> 'exact', abs(read - 4), read
	LIMIT 1")"
[ -n "$k" ] || { fail statlog_moved_setup "no page line's read within 2 units"; t_done; }
want=$((d0 + 100))
page=$(getconf PAGESIZE)
awk -v k="$k" -v line="$line" -v add=$((100 * page)) '
	$1 == "read" { cur = ($2 == k) } cur && $1 == line { $2 += add; print "\t" $1 " " $2; next }
	{ print }' "$LOG" >"$T_TMP/moved.log"
expect_exit statlog_moved_import 0 "$REPLAY" import -q "$T_TMP/trace.dat" -o "$T_TMP/m.db" \
	--stat-log "$T_TMP/moved.log" --cgroupfs "$MOUNT" || t_done
"$REPLAY" validate -q -n 10000 "$T_TMP/m.db" >"$T_TMP/m.out" 2>&1
row=$(sq "$T_TMP/m.db" "SELECT verdict, coalesce(cause, 'NULL'), diff FROM stat_read_checks
	WHERE run_id = (SELECT max(run_id) FROM stat_read_checks) AND read = $k AND name = '$line'")
[ "$row" = "off|NULL|$want" ] && pass statlog_moved_off_no_cause ||
	fail statlog_moved_off_no_cause "$row (wanted off|NULL|$want)"
expect_match statlog_moved_listed "^  read $k ts [0-9]+ .* $line: .* off by $want pages; cause: -\$" "$(cat "$T_TMP/m.out")"
t_done
