#!/usr/bin/env bash
# tests/run.sh - runs every unit test binary, CLI test and live test; prints
# each result line and ends with "N passed, N failed, N skipped".
# A program that exits non-zero without a FAIL line counts as one failure.
#
# MCR_JOBS files run at once (default: the online CPUs), and each file's
# output is printed whole, in the order the files started, as soon as it and
# every file started before it have ended.  Files that touch the kernel's
# tracing or cgroups, or make in the build, run one at a time beside the
# others: the package test, and any file whose header says
#	# run.sh: alone (why)
# (a unit test's source:  * run.sh: alone (why), in its header comment).
# Two captures at once would share the tracepoints, and --cleanup removes
# every dead capture's instance, not only its own.  The live tests run last,
# one at a time with nothing beside them: their races must happen at the
# machine's own speed (under load the seed race did not, and its check skipped).
set -u
cd "$(dirname "$0")/.."
: "${MCR_BUILD:=build}"
: "${MCR_JOBS:=$(nproc 2>/dev/null || echo 1)}"
export MCR_BUILD
case $MCR_JOBS in ''|*[!0-9]*|0) echo "tests/run.sh: MCR_JOBS=$MCR_JOBS is not a count of jobs" >&2; exit 2;; esac
pass=0 fail=0 skip=0
dir=$(mktemp -d "${TMPDIR:-/tmp}/mcr-run.XXXXXX")
trap 'rm -rf "$dir"' EXIT
trap 'stop; exit 1' INT TERM HUP

labels=() files=() alone=()
add() {	# 0 beside others, 1 alone beside others, 2 with nothing beside; file
	alone+=("$1") files+=("$2") labels+=("$(case $2 in *.sh) echo "$2";; *) basename "$2";; esac)")
}
says_alone() { grep -qE '^(#| \*) run\.sh: alone' "$1" 2>/dev/null; }

for t in "$MCR_BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	n=$(basename "$t")
	a=0; says_alone "tests/unit/$n.c" && a=1
	add "$a" "$t"
done
# The Debian packages: built, installed, run and removed (make check's plain pass, as
# root).  First of the files that run alone: test_service.sh then checks the .deb built.
if [ "${MCR_DEB_TEST:-0}" = 1 ]; then
	for t in tests/package/*.sh; do
		[ -f "$t" ] || continue
		add 1 "$t"
	done
fi
for t in tests/cli/*.sh; do
	[ -f "$t" ] || continue
	a=0; says_alone "$t" && a=1
	add "$a" "$t"
done
for t in tests/live/*.sh; do
	[ -f "$t" ] || continue
	add 2 "$t"
done

start() {	# index: runs the file in the background; its output, rc and time land in $dir
	local i=$1 f=${files[$1]}
	: >"$dir/$i.log"
	(
		t0=$SECONDS
		case $f in
		*.sh) timeout 900 bash "$f" >"$dir/$i.log" 2>&1 & ;;
		*) timeout 600 "$f" >"$dir/$i.log" 2>&1 & ;;
		esac
		echo $! >"$dir/$i.pid"
		wait $!
		rc=$?
		echo "$((SECONDS - t0))" >"$dir/$i.time"
		echo "$rc" >"$dir/$i.rc"
	) &
}
# interrupted: the files still running get the TERM a CI timeout would send them
# (timeout(1) passes it on), so that they clean up what they made
stop() {
	local p
	for p in "$dir"/*.pid; do
		[ -f "$p" ] && [ ! -f "${p%.pid}.rc" ] && kill -TERM "$(cat "$p")" 2>/dev/null
	done
	wait
}
shown=0 order=()
show() {	# prints every ended file from the next one in order on; "last": every one
	local i label rc t p f s
	while [ "$shown" -lt "${#order[@]}" ]; do
		i=${order[$shown]}
		[ -f "$dir/$i.rc" ] || [ "$1" = last ] || return 0
		# no rc: the file was killed before it could write one (its log start() made)
		label=${labels[$i]} rc=$(cat "$dir/$i.rc" 2>/dev/null || echo 1) t=$(cat "$dir/$i.time" 2>/dev/null || echo 0)
		echo "== $label"
		cat "$dir/$i.log"
		# per-file wall time: what to look at when CI's time grows
		echo "-- $label: $t s"
		echo "$t $label" >>"$dir/times"
		p=$(grep -c '^PASS ' "$dir/$i.log")
		f=$(grep -c '^FAIL ' "$dir/$i.log")
		s=$(grep -c '^SKIP ' "$dir/$i.log")
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
			echo "FAIL $label: exited $rc without reporting a failure"
			f=1
		fi
		pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
		shown=$((shown + 1))
	done
}

ca=() cc=() ci=()
for i in "${!labels[@]}"; do
	case ${alone[$i]} in 0) cc+=("$i");; 1) ca+=("$i");; 2) ci+=("$i");; esac
done
na=0 nc=0 lane=	# the next of each list to start; the file running alone, if any
while :; do
	[ -n "$lane" ] && [ -f "$dir/$lane.rc" ] && lane=
	running=0
	for i in "${order[@]+"${order[@]}"}"; do [ -f "$dir/$i.rc" ] || running=$((running + 1)); done
	if [ "$running" -lt "$MCR_JOBS" ] && [ -z "$lane" ] && [ "$na" -lt "${#ca[@]}" ]; then
		lane=${ca[$na]} na=$((na + 1))
		order+=("$lane")
		start "$lane"
	elif [ "$running" -lt "$MCR_JOBS" ] && [ "$nc" -lt "${#cc[@]}" ]; then
		order+=("${cc[$nc]}")
		start "${cc[$nc]}"
		nc=$((nc + 1))
	elif [ "$running" -gt 0 ]; then
		wait -n
		[ $? -eq 127 ] && break	# no child left: a file killed before it wrote its rc
		show more
	else
		break
	fi
done
wait
show last
for i in "${ci[@]+"${ci[@]}"}"; do
	order+=("$i")
	start "$i"
	wait
	show last
done
echo "slowest:"
sort -rn "$dir/times" | head -5 | awk '{printf "  %4d s  %s\n", $1, $2}'
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
