#!/usr/bin/env bash
# tests/live/test_import.sh - golden import of trace.dat files this test records itself
# with trace-cmd: a v7 (zstd) top-buffer recording, a -B named-buffer recording and a
# --file-version 6 one.  The expected numbers come from a second, independent reader
# (trace-cmd report), from stat(1) on the test's own cgroup and from /proc/cgroups.
# Needs root, trace-cmd, tracefs and the memcg tracepoints (Linux 6.13+); skips otherwise.
source "$(dirname "$0")/../lib.sh"

t_lsan_import	# libtracecmd's v6 leak, suppressed by name (tests/lib.sh)

source "$(dirname "$0")/../live.sh"

why_not() {
	[ "$(id -u)" -eq 0 ] || { echo "needs root"; return; }
	command -v trace-cmd >/dev/null || { echo "trace-cmd is not installed"; return; }
	command -v sqlite3 >/dev/null || { echo "sqlite3 is not installed"; return; }
	[ -d "$TR/events/memcg" ] || { echo "no memcg tracepoints in $TR (Linux 6.13+)"; return; }
	[ -n "$BASE" ] || { echo "no memory cgroup hierarchy mounted"; return; }
}

# record OUT [trace-cmd options...]: the workload WORK under trace-cmd
record() {
	local out=$1
	shift
	tc_record "$out" "$T_TMP/rec" "$@" -- bash -c "$WORK"
}

# count KIND-regex FILE [extra filter]: what trace-cmd report sees
count_report() {
	trace-cmd report "$2" 2>/dev/null | grep -E " $1: " | grep -cE -- "${3:-.}"
}

db1() { sqlite3 "$1" "$2"; }

# same_events A B: the two databases hand out the same events, in the same order
same_events() { [ "$("$REPLAY" events "$1" | md5sum)" = "$("$REPLAY" events "$2" | md5sum)" ]; }

mem_find
reason=$(why_not)
if [ -n "$reason" ]; then
	skip import_live "$reason"
	t_done
fi

CG="$BASE/mcr_imp_$$"
HIER=$(awk '$1 == "memory" { print $2 }' /proc/cgroups)	# 0 when memory is on cgroup2
tracing_save
t_on_exit '[ -n "$TC_PID" ] && kill -- "-$TC_PID" 2>/dev/null; tracing_restore'
t_on_exit "rmdir '$CG' 2>/dev/null; rmdir '$TR/instances/mcr_imp_$$' 2>/dev/null"

# The workload moves only its own shell into the new cgroup, writes 16 MiB of page
# cache (enough updates that reading memory.stat has to flush: needs_flush=1, which
# is what lets the importer infer the memory hierarchy id), then leaves and rmdirs it.
WORK="set -e; mkdir '$CG'; stat -c %i '$CG' >'$T_TMP/ino'; echo \$\$ >'$CG/cgroup.procs'
dd if=/dev/zero of='$T_TMP/f' bs=1M count=16 conv=fsync 2>/dev/null
head -c 8000000 /dev/zero | sort >/dev/null
cat '$CG/memory.stat' >/dev/null; rm -f '$T_TMP/f'
echo \$\$ >'$BASE/cgroup.procs'; rmdir '$CG'"

# ---- v7, top buffer ----
if ! record "$T_TMP/t.dat"; then
	fail import_live_record "trace-cmd wrote nothing: $(tail -n 2 "$T_TMP/rec.err")"
	t_done
fi
if [ -d "$CG" ]; then fail import_live_workload "workload did not finish: $(cat "$T_TMP/rec.err")"; fi
expect_exit import_live_v7 0 "$REPLAY" import "$T_TMP/t.dat" -o "$T_TMP/t.db" \
	--cgroupfs "$MOUNT" || t_done
D="$T_TMP/t.db"
expect_exit import_live_events_table 0 "$REPLAY" events --table "$D"

# per kind: what the importer kept equals what trace-cmd report lists; rstat and
# mkdir/rmdir only those of the memory hierarchy (root=$HIER in /proc/cgroups)
kinds=(1:mod_memcg_state 2:mod_memcg_lruvec_state 3:count_memcg_events 4:memcg_flush_stats)
ok=1 msg=
for kn in "${kinds[@]}"; do
	k=${kn%%:*} n=${kn#*:}
	want=$(count_report "$n" "$T_TMP/t.dat")
	got=$(db1 "$D" "SELECT count(*) FROM events WHERE kind = $k")
	[ "$want" = "$got" ] || { ok=0; msg+="$n: report $want, db $got; "; }
done
for kn in 5:cgroup_rstat_locked 6:cgroup_rstat_unlock 8:cgroup_mkdir 9:cgroup_rmdir; do
	k=${kn%%:*} n=${kn#*:}
	want=$(count_report "$n" "$T_TMP/t.dat" "root=$HIER ")
	got=$(db1 "$D" "SELECT count(*) FROM events WHERE kind = $k")
	[ "$want" = "$got" ] || { ok=0; msg+="$n: report $want, db $got; "; }
done
[ $ok = 1 ] && pass import_live_counts_match_report || fail import_live_counts_match_report "$msg"

# the workload made updates, a flush and its own mkdir/rmdir
expect_match import_live_has_mkdir '^[1-9]' "$(db1 "$D" "SELECT count(*) FROM events WHERE kind = 8")"

# the test cgroup: id = its inode, path below the hierarchy root, parent = our cgroup
ino=$(cat "$T_TMP/ino")
rel=${CG#"$MOUNT"}
pino=$(stat -c %i "$BASE")
row=$(db1 "$D" "SELECT path, parent, parent_unknown, created_ts > 0, removed_ts > created_ts
	FROM cgroups WHERE id = $ino")
expect_match import_live_cgroup_row "^$rel\|$pino\|0\|1\|1$" "$row"

# per-CPU seq contiguous from 0, replay order (ts, cpu) never goes back
bad=$(db1 "$D" "SELECT count(*) FROM (SELECT cpu, count(*) n, min(seq) a, max(seq) b
	FROM events GROUP BY cpu) WHERE a != 0 OR b != n - 1")
expect_match import_live_seq_contiguous '^0$' "$bad"
bad=$(db1 "$D" "SELECT count(*) FROM events a JOIN events b ON b.rowid = a.rowid + 1
	WHERE b.ts < a.ts OR (b.ts = a.ts AND b.cpu < a.cpu)")
expect_match import_live_replay_order '^0$' "$bad"

# meta
cpus=$(trace-cmd report "$T_TMP/t.dat" 2>/dev/null | sed -n 's/^cpus=//p' | head -n 1)
meta=$(db1 "$D" "SELECT group_concat(key || '=' || value, ' ') FROM meta WHERE key IN
	('source', 'trace_clock', 'nr_cpus_possible', 'kernel_release', 'memory_hierarchy_id',
	 'batch_size', 'source_file', 'trace_file_version')")
for kv in "source=trace-cmd import" trace_clock=mono "nr_cpus_possible=$cpus" \
	  "kernel_release=$(uname -r)" "memory_hierarchy_id=$HIER" batch_size=64 \
	  source_file=t.dat trace_file_version=7; do
	case " $meta " in *" $kv "*) ;; *) fail import_live_meta "no '$kv' in: $meta"; kv=;; esac
	[ -z "$kv" ] && break
done
[ -n "$kv" ] && pass import_live_meta
span=$(db1 "$D" "SELECT (SELECT value FROM meta WHERE key = 'capture_start_ns') =
	(SELECT min(ts) FROM events) AND (SELECT value FROM meta WHERE key = 'capture_end_ns') =
	(SELECT max(ts) FROM events)")
expect_match import_live_meta_span '^1$' "$span"

# ---- a decompressed copy first (import_plain.c): the same database, nothing left beside it ----
# t.dat is trace-cmd's default v7, zstd-compressed; below 8 MiB, auto reads it directly.
# Both imports without --cgroupfs: their cgroups are the trace's, not a live tree that
# other processes change between the two
grep -q 'decompressed copy' <<<"$("$REPLAY" import "$T_TMP/t.dat" -o "$T_TMP/t-auto.db" 2>&1)" &&
	fail import_live_plain_auto "a small file was copied" || pass import_live_plain_auto
mkdir "$T_TMP/plain"
if expect_exit import_live_plain 0 "$REPLAY" import "$T_TMP/t.dat" -o "$T_TMP/plain/t.db" \
	--decompress always; then
	expect_match import_live_plain_said 'v7 \(read from a decompressed copy\)' "$T_OUT"
	same=1
	same_events "$T_TMP/t-auto.db" "$T_TMP/plain/t.db" || same=0
	for q in "SELECT * FROM cgroups ORDER BY id" "SELECT * FROM cpu_stats" \
		 "SELECT key, value FROM meta ORDER BY key"; do
		[ "$(db1 "$T_TMP/t-auto.db" "$q")" = "$(db1 "$T_TMP/plain/t.db" "$q")" ] || same=0
	done
	[ $same = 1 ] && pass import_live_plain_same_db ||
		fail import_live_plain_same_db "events, cgroups, cpu_stats or meta differ from the direct import"
	expect_match import_live_plain_removed '^t\.db$' "$(ls -A "$T_TMP/plain")"
fi
# t8.dat: t.dat with zeros appended to 8 MiB (never read: the last options section says
# where the file's sections end), due a copy under auto
cp "$T_TMP/t.dat" "$T_TMP/t8.dat" && truncate -s 8M "$T_TMP/t8.dat"
# The copy does not fit: a tmpfs of exactly the room an import without a copy takes.
# import writes its database with no journal on disk and nothing beside it
# (db_create_scratch()), a file that only grows: the final size of the database the same
# command wrote, on this build, is the most it ever took.  t-auto.db is the direct import
# of t.dat (the --decompress never below; $D got rows from events --table since);
# t8-size.db the one of t8.dat (the fallback below), made here through its copy (the
# same database: import_live_plain_same_db).  Neither walks --cgroupfs, a live tree that
# other processes change.  With --decompress always the import fails, naming the
# output's trouble, and leaves the directory empty
"$REPLAY" import "$T_TMP/t8.dat" -o "$T_TMP/t8-size.db" -q 2>/dev/null ||
	fail import_live_plain_room "the import of t8.dat failed"
trace-cmd convert -i "$T_TMP/t.dat" -o "$T_TMP/t-plain.dat" --compression none >/dev/null 2>&1
room=0
for f in "$T_TMP/t-auto.db" "$T_TMP/t8-size.db"; do
	n=$(stat -c %s "$f" 2>/dev/null || echo 0)
	[ "$n" -gt "$room" ] && room=$n
done
room=$(( (room + 4095) / 4096 * 4096 ))
plain=$(stat -c %s "$T_TMP/t-plain.dat" 2>/dev/null || echo 0)
rm -f "$T_TMP/t-plain.dat"
if [ "$room" -eq 0 ] || [ "$plain" -le "$room" ]; then
	skip import_live_plain_enospc "the decompressed copy ($plain bytes) fits in $room"
elif mkdir "$T_TMP/small" && mount -t tmpfs -o size=$room mcr-imp "$T_TMP/small" 2>/dev/null; then
	t_on_exit "umount '$T_TMP/small'"
	expect_exit import_live_plain_enospc 1 "$REPLAY" import "$T_TMP/t.dat" \
		-o "$T_TMP/small/t.db" --decompress always
	expect_match import_live_plain_enospc_msg 'cannot write the output .*: No space left' "$T_ERR"
	expect_match import_live_plain_enospc_clean '^$' "$(ls -A "$T_TMP/small")"
	expect_exit import_live_plain_never 0 "$REPLAY" import "$T_TMP/t.dat" \
		-o "$T_TMP/small/t.db" --decompress never
	rm -f "$T_TMP/small/t.db"
else
	skip import_live_plain_enospc "cannot mount a tmpfs"
fi
# auto: t8.dat is due a copy, which the same tmpfs cannot hold; the import warns, reads
# the file as it is and writes the same events
if [ -d "$T_TMP/small" ] && mountpoint -q "$T_TMP/small"; then
	if expect_exit import_live_plain_fallback 0 "$REPLAY" import "$T_TMP/t8.dat" \
		-o "$T_TMP/small/t8.db"; then
		expect_match import_live_plain_fallback_warns \
			'warning: could not decompress .*t8.dat into a plain copy .*No space left' "$T_ERR"
		grep -q 'decompressed copy' <<<"$T_OUT" && fail import_live_plain_fallback_direct \
			"says it read a copy: $T_OUT" || pass import_live_plain_fallback_direct
		same_events "$T_TMP/t-auto.db" "$T_TMP/small/t8.db" && pass import_live_plain_fallback_same ||
			fail import_live_plain_fallback_same "the events differ from the direct import"
		expect_match import_live_plain_fallback_clean '^t8\.db$' "$(ls -A "$T_TMP/small")"
	fi
fi
# and with room for it, auto reads the copy: the same events again
if expect_exit import_live_plain_auto_big 0 "$REPLAY" import "$T_TMP/t8.dat" \
	-o "$T_TMP/t8.db" --cgroupfs "$MOUNT"; then
	expect_match import_live_plain_auto_big_said 'read from a decompressed copy' "$T_OUT"
	same_events "$D" "$T_TMP/t8.db" && pass import_live_plain_auto_big_same ||
		fail import_live_plain_auto_big_same "the events differ from the direct import"
fi
# SIGTERM while the copy is being written, and while the database is (its temporary
# file is no longer the empty one the CLI makes first), leaves the directory empty: no
# temporary file, copy or sidecar (the import's own .partial file and its sidecars were
# left before)
seen() {	# seen PHASE DIR
	case $1 in
	plain) compgen -G "$2/.*-plain" >/dev/null ;;
	db) [ -n "$(find "$2" -name '.t8.db.tmp-*' ! -name '*-plain' -size +0c)" ] ;;
	esac
}
for phase in plain db; do
	mkdir "$T_TMP/int-$phase"
	"$REPLAY" import "$T_TMP/t8.dat" -o "$T_TMP/int-$phase/t8.db" -q &
	pid=$!
	until seen $phase "$T_TMP/int-$phase" || ! kill -0 $pid 2>/dev/null
	do sleep 0.005; done
	kill -TERM $pid 2>/dev/null
	wait $pid
	rc=$?
	left=$(ls -A "$T_TMP/int-$phase" | tr '\n' ' ')
	if [ $rc = 0 ]; then
		skip import_live_interrupted_$phase "the import ended before its $phase file was seen"
	elif [ $rc = 143 ] && [ -z "$left" ]; then
		pass import_live_interrupted_$phase
	else
		fail import_live_interrupted_$phase "exit $rc, left: $left"
	fi
done
expect_exit import_live_plain_bad_when 2 "$REPLAY" import "$T_TMP/t.dat" -o "$T_TMP/x.db" \
	--decompress sometimes
expect_match import_live_plain_bad_when_msg 'auto, always or never' "$T_ERR"

# ---- -B named buffer: the top buffer is empty, the importer finds the instance ----
if record "$T_TMP/b.dat" -B "mcr_imp_$$"; then
	rmdir "$TR/instances/mcr_imp_$$" 2>/dev/null
	if expect_exit import_live_instance 0 "$REPLAY" import "$T_TMP/b.dat" -o "$T_TMP/b.db"; then
		want=$(count_report mod_memcg_lruvec_state "$T_TMP/b.dat")
		got=$(db1 "$T_TMP/b.db" "SELECT events FROM event_kinds WHERE kind = 2")
		[ "$want" = "$got" ] && [ "$got" -gt 0 ] && pass import_live_instance_counts ||
			fail import_live_instance_counts "report $want, db $got"
		expect_match import_live_instance_meta "^mcr_imp_$$\$" \
			"$(db1 "$T_TMP/b.db" "SELECT value FROM meta WHERE key = 'trace_buffer'")"
	fi
	# libtracecmd's copy keeps the instance
	if expect_exit import_live_instance_plain 0 "$REPLAY" import "$T_TMP/b.dat" \
		-o "$T_TMP/b-plain.db" --decompress always; then
		same_events "$T_TMP/b.db" "$T_TMP/b-plain.db" && pass import_live_instance_plain_same ||
			fail import_live_instance_plain_same "the events differ from the direct import"
	fi
else
	fail import_live_instance "trace-cmd -B wrote nothing: $(tail -n 2 "$T_TMP/rec.err")"
fi
[ -d "$TR/instances/mcr_imp_$$" ] && fail import_live_instance_cleanup "instance left behind"

# ---- file version 6 ----
if record "$T_TMP/v6.dat" --file-version 6; then
	if expect_exit import_live_v6 0 "$REPLAY" import "$T_TMP/v6.dat" -o "$T_TMP/v6.db"; then
		want=$(count_report count_memcg_events "$T_TMP/v6.dat")
		got=$(db1 "$T_TMP/v6.db" "SELECT events FROM event_kinds WHERE kind = 3")
		ver=$(db1 "$T_TMP/v6.db" "SELECT value FROM meta WHERE key = 'trace_file_version'")
		[ "$want" = "$got" ] && [ "$ver" = 6 ] && pass import_live_v6_counts ||
			fail import_live_v6_counts "report $want, db $got, version $ver"
	fi
	# not compressed: nothing to decompress, read directly even when asked
	if expect_exit import_live_v6_plain 0 "$REPLAY" import "$T_TMP/v6.dat" \
		-o "$T_TMP/v6-plain.db" --decompress always; then
		expect_match import_live_v6_plain_direct '^[^(]*v6, memory' "$(grep 'trace.dat v' <<<"$T_OUT")"
	fi
else
	fail import_live_v6 "trace-cmd --file-version 6 wrote nothing"
fi

# tracing state is back to what it was
now_on=$(cat $TR/tracing_on) now_clk=$(sed -n 's/.*\[\([a-z0-9_-]*\)\].*/\1/p' $TR/trace_clock)
[ "$now_on" = "$S_ON" ] && [ "$now_clk" = "$S_CLK" ] && pass import_live_tracing_restored ||
	fail import_live_tracing_restored "tracing_on $now_on (was $S_ON), clock $now_clk (was $S_CLK)"
t_done
