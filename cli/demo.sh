#!/usr/bin/env bash
# cli/demo.sh - the main job (make demo): record a short real workload with memcg-capture
# where the kernel allows it (root, tracefs, Linux 6.13+ memcg tracepoints), otherwise
# synthesize the pagecache scenario; then replay it against every policy and print the lag
# report.  Builds nothing: run it after make.  Says which trace it used and why.
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

# the memory.stat of our own memory cgroup (v1 or v2): the workload's reader
own_memory_stat() {
	local v1 v2
	v1=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3 }' /proc/self/cgroup)
	v2=$(awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup)
	if [ -n "$v1" ] && [ -r "/sys/fs/cgroup/memory$v1/memory.stat" ]; then
		echo "/sys/fs/cgroup/memory$v1/memory.stat"
	elif [ -r "/sys/fs/cgroup$v2/memory.stat" ]; then
		echo "/sys/fs/cgroup$v2/memory.stat"
	else
		echo /dev/null
	fi
}

why=""
if [ "$(id -u)" != 0 ]; then
	why="not root"
fi
# memcg-capture itself mounts tracefs where it is missing and tells why it cannot record

if [ -z "$why" ]; then
	stat=$(own_memory_stat)
	echo "== Capturing a real workload: 4 x 128 MiB of page cache written with dd, reading $stat after each"
	"$CAPTURE" -o "$db" -- sh -c '
		for i in 1 2 3 4; do
			dd if=/dev/zero of="$1/pagecache.$i" bs=1M count=128 status=none
			cat "$2" >/dev/null
		done
		rm -f "$1"/pagecache.*' sh "$work" "$stat"
	rc=$?
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
fi

echo
echo "== Replaying against every walk policy"
"$REPLAY" replay "$db" || exit
echo
echo "== Lag report"
"$REPLAY" report "$db" || exit
echo
echo "This was $what."
echo "The trace and results are in $db: try"
echo "  $REPLAY info $db"
echo "  sqlite3 $db 'SELECT * FROM lag_report'"
