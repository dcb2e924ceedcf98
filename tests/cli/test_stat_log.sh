#!/usr/bin/env bash
# tests/cli/test_stat_log.sh - import TRACE.dat --stat-log FILE: the memory.stat reads
# another reader logged (memcg-statlog's format) stored as stat_reads rows, each line as
# printed; a log that does not fit the trace (its clock, an unknown cgroup) refused with
# 17, a damaged one (truncated, garbled) with 15, both before anything is written and
# with a one-line message naming the log; mutated logs never crash the import.
#
# tests/data/v7-2cpu.dat is a trace-cmd 3 recording (clock mono, cgroup ids such as
# 3434) without flushes: enough for the import's checks, not for validate's comparison
# (tests/live/test_statlog.sh records one that has both).
source "$(dirname "$0")/../lib.sh"
cd "$T_TMP" || exit 1
DAT=$TOP/tests/data/v7-2cpu.dat
command -v sqlite3 >/dev/null || { skip stat_log "no sqlite3 shell"; t_done; }

cat >good.log <<'EOF'
memcg-statlog 1
clock mono
cgroup 3434 1 /sys/fs/cgroup/memory/job
read 0 3434 100 200 4
	cache 1048576
	total_cache 2097152
	total_pgfault 77
	hierarchical_memory_limit 9223372036854771712
read 1 3434 300 450 4
	cache 1052672
	total_cache 2101248
	total_pgfault 80
	hierarchical_memory_limit 9223372036854771712
EOF

expect_exit stat_log_import 0 "$REPLAY" import "$DAT" -o g.db --stat-log good.log
expect_match stat_log_summary "^  memory.stat reads logged in good.log: 2 \(1 cgroup, 8 lines, clock mono\) into table stat_reads\$" "$T_OUT"
rows=$(sqlite3 g.db "SELECT count(*), count(DISTINCT read), min(ts_before), max(ts_after) FROM stat_reads WHERE cgroup = 3434")
[ "$rows" = "8|2|100|450" ] && pass stat_log_rows || fail stat_log_rows "$rows"
row=$(sqlite3 g.db "SELECT pos, line, name, value, unit FROM stat_reads WHERE read = 1 AND pos = 1")
[ "$row" = "1|total_cache 2101248|total_cache|2101248|bytes" ] && pass stat_log_row_as_printed ||
	fail stat_log_row_as_printed "$row"
row=$(sqlite3 g.db "SELECT value, unit FROM stat_reads WHERE read = 0 AND name = 'total_pgfault'")
[ "$row" = "77|count" ] && pass stat_log_row_unit || fail stat_log_row_unit "$row"
v=$(sqlite3 g.db "SELECT value FROM meta WHERE key = 'cgroup_version'")
[ "$v" = 1 ] && pass stat_log_cgroup_version || fail stat_log_cgroup_version "'$v'"
opts=$(sqlite3 g.db "SELECT value FROM meta WHERE key = 'options'")
[[ $opts == *'"stat_log":"good.log"'* ]] && pass stat_log_in_options || fail stat_log_in_options "$opts"
# without --stat-log: no rows
"$REPLAY" import -q "$DAT" -o n.db 2>/dev/null && n=$(sqlite3 n.db "SELECT count(*) FROM stat_reads") &&
	[ "$n" = 0 ] && pass stat_log_none || fail stat_log_none "${n:-import failed}"

# refusals: the exit code, one line naming the log and what is wrong, no output written
refused() {
	local name=$1 code=$2 re=$3
	shift 3
	rm -f out.db
	expect_exit "$name" "$code" "$REPLAY" import -q "$DAT" -o out.db "$@"
	expect_match "${name}_msg" "$re" "$T_ERR"
	[ "$(wc -l <<<"$T_ERR")" = 1 ] && pass "${name}_one_line" ||
		fail "${name}_one_line" "$(head -c 300 <<<"$T_ERR")"
	[ ! -e out.db ] && ! ls .out.db* >/dev/null 2>&1 && pass "${name}_nothing_written" ||
		fail "${name}_nothing_written" "$(ls -a)"
}
sed 's/^clock mono/clock local/' good.log >local.log
refused stat_log_clock 17 "^memcg-replay: import: --stat-log local.log: clock local, but the trace was recorded with clock mono: record with trace-cmd record -C local, or log with memcg-statlog --clock mono\$" --stat-log local.log
sed 's/3434/77777/' good.log >unknown.log
refused stat_log_unknown_cgroup 17 "^memcg-replay: import: --stat-log unknown.log: cgroup /sys/fs/cgroup/memory/job \(id 77777\) is not one of the trace's cgroups" --stat-log unknown.log
sed 's/^read 1 3434 300 450 4/read 1 3434 300 250 4/' good.log >back.log
refused stat_log_backwards 17 "^memcg-replay: import: --stat-log back.log: line 9: read 1 ends \(250\) before it begins \(300\)\$" --stat-log back.log
head -c -30 good.log >trunc.log
refused stat_log_truncated 15 "^memcg-replay: import: --stat-log trunc.log: line 13: truncated" --stat-log trunc.log
head -n 12 good.log >short.log
refused stat_log_short 15 "^memcg-replay: import: --stat-log short.log: truncated: read 1 ends after 3 of its 4 lines\$" --stat-log short.log
sed 's/^\ttotal_pgfault 80/total_pgfault 80/' good.log >garbled.log
refused stat_log_garbled 15 "^memcg-replay: import: --stat-log garbled.log: line 12: read 1 has 2 of its 4 lines; this one does not start with a tab\$" --stat-log garbled.log
refused stat_log_not_a_log 15 "^memcg-replay: import: --stat-log $DAT: line 1: not a memcg-statlog log" --stat-log "$DAT"
refused stat_log_missing 3 "nope.log" --stat-log nope.log
mkfifo fifo.log
refused stat_log_fifo 3 "fifo.log is a FIFO" --stat-log fifo.log
# the log is an input: never the output
cp good.log keep.log
expect_exit stat_log_not_output 3 "$REPLAY" import -q "$DAT" -o keep.log --stat-log keep.log
cmp -s good.log keep.log && pass stat_log_not_output_intact || fail stat_log_not_output_intact

# mutated logs (each of 60 seeds: a byte replaced, a line dropped or doubled, or the
# log cut): 0, 15 or 17, never a crash or another code
bad=
for seed in $(seq 60); do
	awk -v seed="$seed" 'BEGIN { srand(seed); op = int(rand() * 4) }
		{ l[NR] = $0 } END {
		pick = 1 + int(rand() * NR)
		for (i = 1; i <= NR; i++) {
			s = l[i]
			if (i == pick && op == 0 && length(s)) {
				p = 1 + int(rand() * length(s))
				s = substr(s, 1, p - 1) substr("x 9\t-", 1 + int(rand() * 5), 1) substr(s, p + 1)
			}
			if (i == pick && op == 1) continue
			print s
			if (i == pick && op == 2) print s
			if (i == pick && op == 3) { printf "%s", substr(l[i + 1], 1, 3); exit }
		}
	}' good.log >m.log
	rm -f m.db
	"$REPLAY" import -q "$DAT" -o m.db --stat-log m.log >/dev/null 2>m.err
	rc=$?
	case $rc in
	0 | 15 | 17) [ $rc = 0 ] || [ "$(wc -l <m.err)" = 1 ] || bad="$bad seed $seed: $(head -c 100 m.err)" ;;
	*) bad="$bad seed $seed: exit $rc" ;;
	esac
done
[ -z "$bad" ] && pass stat_log_mutations || fail stat_log_mutations "$bad"
t_done
