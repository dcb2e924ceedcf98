# tests/lib.sh - shared helpers for shell tests; source it.
# Each check prints one line the runner counts: PASS name | FAIL name: why | SKIP name: why
set -u
: "${MCR_BUILD:=build}"
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN="$TOP/$MCR_BUILD"
REPLAY="$BIN/memcg-replay"
CAPTURE="$BIN/memcg-capture"
T_FAILED=0

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: ${2:-}"; T_FAILED=1; }
skip() { echo "SKIP $1: $2"; }

# tmpdir removed on exit
T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/mcr-test.XXXXXX")
t_cleanup_hooks=()
t_on_exit() { t_cleanup_hooks+=("$1"); }
t_exit() {
	local h
	for h in "${t_cleanup_hooks[@]+"${t_cleanup_hooks[@]}"}"; do eval "$h" || true; done
	rm -rf "$T_TMP"
}
trap t_exit EXIT

# expect_exit NAME CODE CMD...: runs CMD, checks its exit code; output in $T_OUT/$T_ERR
expect_exit() {
	local name=$1 want=$2 rc
	shift 2
	"$@" >"$T_TMP/out" 2>"$T_TMP/err"
	rc=$?
	T_OUT=$(cat "$T_TMP/out")
	T_ERR=$(cat "$T_TMP/err")
	if [ "$rc" -eq "$want" ]; then
		pass "$name"
	else
		fail "$name" "exit $rc, wanted $want; stderr: $(head -c 300 "$T_TMP/err")"
	fi
	[ "$rc" -eq "$want" ]
}

# expect_match NAME REGEX TEXT
expect_match() {
	if printf '%s\n' "$3" | grep -Eq -- "$2"; then pass "$1"; else fail "$1" "no match for /$2/ in: $(printf '%s' "$3" | head -c 300)"; fi
}

t_done() { exit "$T_FAILED"; }

# as_rows FILE: turn a trace into the previous format (one row per event in
# the table events, no chunks), which readers still accept, so tests can
# damage single events with SQL.
as_rows() {
	"${REPLAY:-$MCR_BUILD/memcg-replay}" events --table "$1" >/dev/null &&
		sqlite3 "$1" "DROP TABLE event_chunks"
}
