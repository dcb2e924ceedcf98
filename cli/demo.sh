#!/usr/bin/env bash
# cli/demo.sh - the main job (make demo): record the seed race's shape on this kernel with
# memcg-capture where it allows it (root, tracefs, Linux 6.13+ memcg tracepoints), check
# with validate that the simulator reproduces the kernel's own counters, replay it against
# every policy, measure what the walk costs on this host (calibrate), print the lag report
# with each policy's cost in time and write it as HTML beside the database (its path is
# printed); otherwise synthesize the pagecache scenario and replay that.  Builds nothing:
# run it after make.  Says which trace it used and why.
# Its cgroups go beneath this shell's own memory cgroup and are removed.
# The database is kept (its path is printed) for sqlite3 and memcg-replay report/info.
set -u
cd "$(dirname "$0")/.."
: "${MCR_BUILD:=build}"
REPLAY=$MCR_BUILD/memcg-replay
CAPTURE=$MCR_BUILD/memcg-capture
for b in "$REPLAY" "$CAPTURE"; do
	[ -x "$b" ] || { echo "demo: $b is missing: run make first" >&2; exit 1; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/memcg-demo.XXXXXX") || exit 1
db=$work/demo.db

# our own memory cgroup's directory (v1 or v2): the demo's cgroups go beneath it
own_memcg() {
	local v1 v2
	v1=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3 }' /proc/self/cgroup)
	v2=$(awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup)
	if [ -n "$v1" ] && [ -d "/sys/fs/cgroup/memory$v1" ]; then
		echo "/sys/fs/cgroup/memory${v1%/}"
	elif [ -n "$v2" ] && [ -r "/sys/fs/cgroup${v2%/}/memory.stat" ]; then
		echo "/sys/fs/cgroup${v2%/}"
	fi
}

why=""
if [ "$(id -u)" != 0 ]; then
	why="not root"
elif [ ! -x "$MCR_BUILD/bench/stress_anon" ]; then
	why="$MCR_BUILD/bench/stress_anon is not built (make all)"
else
	own=$(own_memcg)
	[ -n "$own" ] || why="no memory cgroup hierarchy"
fi
# memcg-capture itself mounts tracefs where it is missing and tells why it cannot record

synthetic=0
if [ -z "$why" ]; then
	cg="$own/memcg_demo_$$"
	echo "== Capturing the seed race's shape on this kernel for 5 s: ${cg#/sys/fs/cgroup}/P/C"
	echo "   faults anonymous memory and writes page cache while memcg-capture --read reads"
	echo "   P's memory.stat every 80 ms and keeps every line it printed (bench/workload.sh mixed)"
	if mkdir "$cg" && mkdir "$cg/P"; then
		MCR_READ_MS=0 "$CAPTURE" -o "$db" --read "$cg/P:80" -- bench/workload.sh mixed "$cg/P" 5
		rc=$?
	else
		rc=1
	fi
	rmdir "$cg/P" "$cg" 2>/dev/null
	case $rc in
	0) ;;
	11) echo "== memcg-capture lost events (see its summary); replaying what it kept"; rc=0 ;;
	13) why="no tracefs" ;;
	14) why="this kernel has no memcg tracepoints (needs Linux 6.13 or later)" ;;
	*) why="memcg-capture failed (exit $rc)" ;;
	esac
	[ $rc -eq 0 ] && what="a real capture of this kernel ($(uname -r))"
fi
if [ -n "$why" ]; then
	echo "== Live capture not possible here: $why."
	echo "== Synthesizing the pagecache scenario instead (1 GiB/s of page cache in /leaf, 10 s)"
	"$REPLAY" synth --scenario pagecache -o "$db" || exit
	what="the synthetic pagecache scenario (live capture: $why)"
	synthetic=1
fi

printed=
if [ $synthetic = 0 ]; then
	echo
	echo "== Does the simulator reproduce this kernel's own counters, and what memory.stat"
	echo "   really printed? (validate)"
	"$REPLAY" validate "$db" -n 0 -r 0 | tee "$work/validate.txt"
	[ "${PIPESTATUS[0]}" = 0 ] || exit
	# validate's own lines: "memory.stat as printed: N of M printed lines within 2 units ..." and,
	# per line of P, the worst printed - truth; the largest of the lines in bytes, in pages
	# (the line says them in parentheses) and MiB
	agree=$(sed -n 's/^memory.stat as printed: \([0-9]* of [0-9]* printed lines within 2 units of the simulation\).*/\1/p' \
		"$work/validate.txt")
	worst=$(awk '/^worst error memory.stat really printed/ { on = 1; next }
		on && /^  / { if ($4 != "bytes") next; p = substr($5, 2) + 0; a = p < 0 ? -p : p
			if (a > best) { best = a; line = $2; pages = p; mib = $3 / 1048576 } next }
		on { on = 0 }
		END { if (line != "") printf "%s %.0f pages (%.2f MiB)", line, pages, mib }' \
		"$work/validate.txt")
	[ -n "$agree" ] && printed="memory.stat of P as printed: $agree${worst:+; the worst error it really printed: $worst (printed - truth)}"
fi
echo
echo "== Replaying against every walk policy"
# a recording gets the order inference found; a synthetic trace synth's own (spread)
"$REPLAY" replay "$db" || exit
echo
echo "== What each policy's walk costs on this host (calibrate: user-space proxies)"
"$REPLAY" calibrate --db "$db" || exit
echo
echo "== Lag report, and each policy's estimated cost in time"
"$REPLAY" report "$db" || exit
html=${db%.db}.html
"$REPLAY" report "$db" --format html -o "$html" || exit
echo
echo "This was $what."
[ -n "$printed" ] && echo "$printed."
echo "The pictures (one self-contained page, opens offline in any browser): $html"
echo "The trace and results are in $db: try"
echo "  $REPLAY info $db"
echo "  sqlite3 $db 'SELECT * FROM cgroup_lag_report'"
echo "  sqlite3 $db 'SELECT * FROM cost_report'"
echo "  sqlite3 $db 'SELECT ts, error, min_error, max_error FROM series WHERE cgroup_id = 1'"
