#!/usr/bin/env bash
# tests/run.sh - runs every unit test binary, CLI test and live test; prints
# each result line and ends with "N passed, N failed, N skipped".
# A program that exits non-zero without a FAIL line counts as one failure.
set -u
cd "$(dirname "$0")/.."
: "${MCR_BUILD:=build}"
export MCR_BUILD
pass=0 fail=0 skip=0
log=$(mktemp)
times=$(mktemp)

run_one() {	# label, command...
	local label=$1 rc t0=$SECONDS
	shift
	echo "== $label"
	"$@" >"$log" 2>&1
	rc=$?
	cat "$log"
	# per-file wall time: what to look at when CI's time grows
	echo "-- $label: $((SECONDS - t0)) s"
	echo "$((SECONDS - t0)) $label" >>"$times"
	local p f s
	p=$(grep -c '^PASS ' "$log")
	f=$(grep -c '^FAIL ' "$log")
	s=$(grep -c '^SKIP ' "$log")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "FAIL $label: exited $rc without reporting a failure"
		f=1
	fi
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
}

for t in "$MCR_BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	run_one "$(basename "$t")" timeout 600 "$t"
done
for t in tests/cli/*.sh tests/live/*.sh; do
	[ -f "$t" ] || continue
	run_one "$t" timeout 900 bash "$t"
done
# The Debian packages: built, installed, run and removed (make check's plain pass, as root).
if [ "${MCR_DEB_TEST:-0}" = 1 ]; then
	for t in tests/package/*.sh; do
		[ -f "$t" ] || continue
		run_one "$t" timeout 900 bash "$t"
	done
fi
echo "slowest:"
sort -rn "$times" | head -5 | awk '{printf "  %4d s  %s\n", $1, $2}'
rm -f "$log" "$times"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
