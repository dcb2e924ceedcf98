#!/usr/bin/env bash
# tests/live/test_rotate.sh - memcg-capture --rotate on the running kernel.
#   1. --rotate 1s --keep 3 over a ~4.5 s workload: at most 3 files
#      PREFIX-<UTC time>.db stay, the newest of the series (consecutive
#      rotation_index, the last one the summary's count), each complete and
#      clean for memcg-replay info; --keep also removed an older database of
#      the series' name, and left a text file of that name, a database of
#      another name and a database under the prefix of no timestamp.
#   2. --rotate 1s for ~3.5 s: per file and CPU, the events stored are exactly
#      the sequence numbers its meta rotation_seq names (last - first + 1 -
#      filtered); the numbers run on from file to file (the next file's first
#      is the last + 1, the first file's is 0); the chain names each file's
#      predecessor; every event lies between its file's boundaries; and
#      nothing was lost (or, when the kernel reports a loss, it is in gaps).
#      No count is compared with another capture's: that depends on the load.
#   3. SIGINT ends a --rotate capture: the file being written is published,
#      complete, after the ones before it, and no temporary file stays.
# As root with tracefs, the memcg tracepoints and a memory cgroup of its own
# (else skipped with the reason).  The workload runs in a cgroup made below
# this test's own; every cgroup, process and file it makes is removed.
. "$(dirname "$0")/../lib.sh"

STRESS=$BIN/bench/stress_anon
INSTANCES=/sys/kernel/tracing/instances

[ -x "$CAPTURE" ] || { skip rotate_live "$CAPTURE is not built"; t_done; }
[ "$(id -u)" -eq 0 ] || { skip rotate_live "not root: live capture needs root"; t_done; }
[ -d /sys/kernel/tracing/events/memcg/mod_memcg_state ] ||
	{ skip rotate_live "no tracefs with memcg tracepoints (needs 6.13+)"; t_done; }
command -v sqlite3 >/dev/null || { skip rotate_live "no sqlite3 shell"; t_done; }
[ -x "$STRESS" ] || { skip rotate_live "$STRESS is not built"; t_done; }
sq() { sqlite3 -batch -noheader "$@"; }

. "$TOP/tests/live.sh"
mem_find
[ -n "$BASE" ] || { skip rotate_live "no memory cgroup of this process found"; t_done; }
CG=$BASE/mcr_rotate_$$
cg_cleanup() {
	local p i=0
	# a workload left running (a capture that failed): ours, in our cgroup
	for p in $(cat "$CG/cgroup.procs" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
	while [ -s "$CG/cgroup.procs" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	[ -d "$CG/x" ] && rmdir "$CG/x" 2>/dev/null
	[ -d "$CG" ] && rmdir "$CG" 2>/dev/null
	return 0
}
t_on_exit cg_cleanup
mkdir "$CG" 2>/dev/null || { skip rotate_live "cannot create a cgroup under $BASE"; t_done; }
if [ "$MOUNT" != /sys/fs/cgroup/memory ] && ! grep -qw memory "$CG/cgroup.controllers" 2>/dev/null; then
	skip rotate_live "cgroup v2: no memory controller in $CG"
	t_done
fi

# ours to end on the way out: the captures (their instances too)
KILL_PIDS=
kill_ours() {
	local p
	for p in $KILL_PIDS; do kill -9 "$p" 2>/dev/null; done
	for p in $KILL_PIDS; do rmdir "$INSTANCES/memcg_capture_$p" 2>/dev/null; done
	return 0
}
t_on_exit kill_ours

# work MS: anonymous faults and page cache in $CG, and a cgroup made and
# removed now and then (the tables of the files follow it)
work() {
	cat <<EOF
echo \$\$ >"$CG/cgroup.procs" || exit 1
"$STRESS" 8 $(($1 / 1000)).$(($1 % 1000 / 100)) 20000 >/dev/null &
end=\$(( \$(date +%s%N) + $1 * 1000000 ))
while [ \$(date +%s%N) -lt \$end ]; do
	dd if=/dev/zero of="$T_TMP/pc" bs=64k count=16 2>/dev/null; rm -f "$T_TMP/pc"
	mkdir "$CG/x" 2>/dev/null; rmdir "$CG/x" 2>/dev/null
	sleep 0.1
done
wait
EOF
}
# capture NAME OUTDIR OPTIONS...: run it to the end of the workload; $RC, $NFILES
capture() {
	local name=$1 dir=$2
	shift 2
	mkdir -p "$dir"
	"$CAPTURE" "$@" >"$T_TMP/$name.out" 2>"$T_TMP/$name.err" &
	local pid=$!
	KILL_PIDS="$KILL_PIDS $pid"
	wait $pid
	RC=$?
	NFILES=$(sed -n 's/.*(\([0-9]*\) files).*/\1/p' "$T_TMP/$name.out")
	[ ! -d "$INSTANCES/memcg_capture_$pid" ] && pass "${name}_no_instance" ||
		fail "${name}_no_instance" "memcg_capture_$pid left"
	case $RC in
	0 | 11) pass "${name}_exit" ;;
	*) fail "${name}_exit" "exit $RC: $(head -c 400 "$T_TMP/$name.err")" ;;
	esac
	[ -n "$NFILES" ] && pass "${name}_summary" ||
		fail "${name}_summary" "no file count in: $(cat "$T_TMP/$name.out")"
}
meta() { sq "$1" "SELECT value FROM meta WHERE key = '$2'"; }

# --- 1. --keep 3 -------------------------------------------------------------------------
K=$T_TMP/keep
mkdir -p "$K"
"$REPLAY" synth -q -o "$K/old.db" -s seed-race >/dev/null 2>&1 ||
	{ fail rotate_keep_synth "memcg-replay synth failed"; t_done; }
cp "$K/old.db" "$K/host-20000101T000000Z.db"	# of the series' name: removed
cp "$K/old.db" "$K/host-other.db"		# another name: stays
cp "$K/old.db" "$K/host.db"			# no timestamp: stays
echo "not a database" >"$K/host-20000101T000001Z.db"	# not ours: stays
capture rotate_keep "$K" --rotate 1s --keep 3 -o "$K/host" -- sh -c "$(work 4500)"
mapfile -t files < <(cd "$K" && ls host-2*Z.db host-2*Z-*.db 2>/dev/null |
	grep -v '^host-20000101' | sort)
[ "${#files[@]}" -le 3 ] && [ "${#files[@]}" -ge 1 ] && pass rotate_keep_at_most_3 ||
	fail rotate_keep_at_most_3 "${#files[@]} files: ${files[*]}"
[ ! -e "$K/host-20000101T000000Z.db" ] && pass rotate_keep_removed_old ||
	fail rotate_keep_removed_old "an older database of the series stays"
for f in host-20000101T000001Z.db host-other.db host.db old.db; do
	[ -e "$K/$f" ] && pass "rotate_keep_left_$f" || fail "rotate_keep_left_$f" "removed"
done
# the newest of the series: consecutive indices up to the summary's count
want=$(seq $(( NFILES > 3 ? NFILES - 3 : 0 )) $((NFILES - 1)) | tr '\n' ' ')
got=
for f in "${files[@]}"; do
	got="$got$(meta "$K/$f" rotation_index) "
	expect_exit "rotate_keep_info_$f" 0 "$REPLAY" info "$K/$f"
	if grep -qiE 'incomplete|warning' <<<"$T_OUT$T_ERR"; then
		fail "rotate_keep_info_clean_$f" "$(grep -iE 'incomplete|warning' <<<"$T_OUT$T_ERR" | head -3)"
	else
		pass "rotate_keep_info_clean_$f"
	fi
	[ "$(meta "$K/$f" capture_complete)" = 1 ] && pass "rotate_keep_complete_$f" ||
		fail "rotate_keep_complete_$f" "capture_complete $(meta "$K/$f" capture_complete)"
done
[ "$got" = "$want" ] && pass rotate_keep_newest ||
	fail rotate_keep_newest "indices $got of $NFILES files, wanted $want"
[ -z "$(ls -A "$K" | grep -E '\.tmp-')" ] && pass rotate_keep_no_tmp ||
	fail rotate_keep_no_tmp "left: $(ls -A "$K" | grep -E '\.tmp-')"

# --- 2. exact accounting across the files -----------------------------------------------
S=$T_TMP/series
capture rotate_series "$S" --rotate 1s -o "$S/host" -- sh -c "$(work 3500)"
mapfile -t files < <(cd "$S" && for f in host-*.db; do
	echo "$(meta "$f" rotation_index) $f"; done | sort -n | cut -d' ' -f2)
[ "${#files[@]}" = "$NFILES" ] && [ "$NFILES" -ge 2 ] && pass rotate_series_files ||
	fail rotate_series_files "${#files[@]} files, the summary says $NFILES"
bad=
prev=
declare -A next_seq=()
for i in "${!files[@]}"; do
	f=$S/${files[$i]}
	[ "$(meta "$f" rotation_index)" = "$i" ] || bad="$bad $f:index"
	[ "$(meta "$f" rotation_prev)" = "$prev" ] || bad="$bad $f:prev=$(meta "$f" rotation_prev)"
	[ "$(meta "$f" capture_complete)" = 1 ] || bad="$bad $f:incomplete"
	prev=${files[$i]}
	# per CPU: first, last, filtered from meta; the events stored from the chunks
	while IFS='|' read -r cpu first last filtered stored; do
		[ $((last - first + 1 - filtered)) = "$stored" ] ||
			bad="$bad $f:cpu$cpu:$first-$last-$filtered!=$stored"
		[ "$first" = "${next_seq[$cpu]:-0}" ] || bad="$bad $f:cpu$cpu:first=$first,want=${next_seq[$cpu]:-0}"
		next_seq[$cpu]=$((last + 1))
	done < <(sq "$f" "SELECT json_extract(j.value, '\$.cpu'), json_extract(j.value, '\$.first_seq'),
		json_extract(j.value, '\$.last_seq'), json_extract(j.value, '\$.filtered'),
		(SELECT coalesce(sum(count), 0) FROM event_chunks c WHERE c.cpu = json_extract(j.value, '\$.cpu'))
		FROM meta, json_each(meta.value) j WHERE meta.key = 'rotation_seq'")
	# no chunk is stored in two files, and none of another CPU's numbers
	n=$(sq "$f" "SELECT count(*) FROM event_chunks c, meta, json_each(meta.value) j
		WHERE meta.key = 'rotation_seq' AND json_extract(j.value, '\$.cpu') = c.cpu
		AND (c.first_seq < json_extract(j.value, '\$.first_seq')
		     OR c.first_seq + c.count - 1 > json_extract(j.value, '\$.last_seq'))")
	[ "$n" = 0 ] || bad="$bad $f:$n-chunks-outside-their-numbers"
	# every event between the file's boundaries (the last file's end: when tracing stopped)
	n=$(sq "$f" "SELECT count(*) FROM event_chunks WHERE first_ts < (SELECT value FROM meta WHERE key = 'capture_start_ns')")
	[ "$i" = 0 ] || [ "$n" = 0 ] || bad="$bad $f:$n-chunks-before-start"
	n=$(sq "$f" "SELECT count(*) FROM event_chunks WHERE last_ts >= (SELECT value FROM meta WHERE key = 'capture_end_ns')")
	[ "$i" = $((NFILES - 1)) ] || [ "$n" = 0 ] || bad="$bad $f:$n-chunks-after-end"
	if [ "$i" -gt 0 ]; then
		[ "$(meta "$f" capture_start_ns)" = "$(meta "$S/${files[$((i - 1))]}" capture_end_ns)" ] ||
			bad="$bad $f:start!=prev-end"
	fi
done
[ -z "$bad" ] && pass rotate_series_exact || fail rotate_series_exact "$bad"
[ "$(sq "$S/${files[0]}" "SELECT count(*) FROM meta WHERE key = 'rotation_prev'")" = 0 ] &&
	pass rotate_series_first_no_prev || fail rotate_series_first_no_prev "the first file names a predecessor"
# the sum over the files is what the capture read
total=$(for f in "${files[@]}"; do sq "$S/$f" "SELECT coalesce(sum(count), 0) FROM event_chunks"; done |
	awk '{ s += $1 } END { print s }')
expect_match rotate_series_stored_total "^memcg-capture: [0-9]+ events .* $total stored in " "$(cat "$T_TMP/rotate_series.out")"
gaps=$(for f in "${files[@]}"; do sq "$S/$f" "SELECT count(*) FROM gaps"; done | awk '{ s += $1 } END { print s }')
if [ "$RC" = 0 ]; then
	[ "$gaps" = 0 ] && pass rotate_series_no_loss || fail rotate_series_no_loss "$gaps gap rows, exit 0"
else
	# the kernel lost events (a loaded machine): they are in the gaps, and said
	[ "$gaps" -gt 0 ] && pass rotate_series_loss_in_gaps ||
		fail rotate_series_loss_in_gaps "exit $RC and no gap rows"
fi

# --- 3. a signal ends the series: its last file is published too ---------------------------
G=$T_TMP/sig
mkdir -p "$G"
"$CAPTURE" --rotate 1s -o "$G/host" -d 60 >"$T_TMP/sig.out" 2>"$T_TMP/sig.err" &
CAP=$!
KILL_PIDS="$KILL_PIDS $CAP"
# until the second file is being written (the first published), at most 20 s
i=0
while [ -z "$(ls "$G" | grep -E '^host-.*\.db$')" ] && kill -0 $CAP 2>/dev/null && [ $i -lt 200 ]; do
	sleep 0.1
	i=$((i + 1))
done
kill -INT $CAP
wait $CAP
rc=$?
[ "$rc" = 0 ] || [ "$rc" = 11 ] && pass rotate_signal_exit || fail rotate_signal_exit "exit $rc: $(head -c 300 "$T_TMP/sig.err")"
n=$(ls "$G" | grep -cE '^host-.*\.db$')
last=$(for f in "$G"/host-*.db; do echo "$(meta "$f" rotation_index) $f"; done | sort -n | tail -1)
[ "$n" -ge 2 ] && [ "${last%% *}" = $((n - 1)) ] && [ "$(meta "${last#* }" capture_complete)" = 1 ] &&
	pass rotate_signal_last_published || fail rotate_signal_last_published "$n files, last: $last"
[ -z "$(ls -A "$G" | grep -E '\.tmp-')" ] && pass rotate_signal_no_tmp ||
	fail rotate_signal_no_tmp "left: $(ls -A "$G" | grep -E '\.tmp-')"
t_done
