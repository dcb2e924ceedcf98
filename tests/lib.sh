# tests/lib.sh - shared helpers for shell tests; source it.
# Each check prints one line the runner counts: PASS name | FAIL name: why | SKIP name: why
set -u
: "${MCR_BUILD:=build}"
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN="$TOP/$MCR_BUILD"
REPLAY="$BIN/memcg-replay"
CAPTURE="$BIN/memcg-capture"
STATLOG="$BIN/memcg-statlog"
T_FAILED=0

# Under ASan (make check's second pass, MCR_SANITIZED=1) every run uses the one
# LSan suppressions file, tests/fuzz/lsan.supp: libtracecmd 1.3.1 leaks the
# trace clock name it parses from a v6 file (tracecmd_parse_trace_clock).
# That frame lies below glibc's sscanf, which only the slow unwinder walks:
# tests that import call t_lsan_import, which points $REPLAY at a wrapper that
# turns the slow unwinder on for `import` alone: it costs every malloc (a
# validate under ASan takes 1.5 times as long), and only import runs libtracecmd.
if [ "${MCR_SANITIZED:-0}" = 1 ]; then
	export LSAN_OPTIONS="suppressions=$TOP/tests/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
fi
t_lsan_import() {
	local w="$T_TMP/.memcg-replay-import"

	[ "${MCR_SANITIZED:-0}" = 1 ] || return 0
	[ "$REPLAY" = "$w" ] && return 0
	# exec: the wrapper's PID is the program's, for the tests that signal it
	printf '%s\n' '#!/bin/sh' \
		'[ "$1" = import ] && export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}:fast_unwind_on_malloc=0"' \
		"exec '$REPLAY' \"\$@\"" >"$w" && chmod +x "$w" && REPLAY=$w
}

# Debian's python3 (make deps installs it) before one earlier in PATH: a version
# manager's shim (pyenv) runs a shell script that asks which python to start,
# about 0.7 s a call against 0.08, and tests call python3 in loops.
if [ -x /usr/bin/python3 ]; then
	python3() { /usr/bin/python3 "$@"; }
fi

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: ${2:-}"; T_FAILED=1; }
skip() { echo "SKIP $1: $2"; }

# tmpdir removed on exit; with MCR_KEEP_FAILED=DIR a failed test's tmpdir (its
# recordings and databases) is moved into DIR instead, so a failure that does not
# come back on a rerun can still be replayed.
T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/mcr-test.XXXXXX")
t_cleanup_hooks=()
t_on_exit() { t_cleanup_hooks+=("$1"); }
t_exit() {
	local h keep
	for h in "${t_cleanup_hooks[@]+"${t_cleanup_hooks[@]}"}"; do eval "$h" || true; done
	if [ "$T_FAILED" = 1 ] && [ -n "${MCR_KEEP_FAILED:-}" ] && mkdir -p "$MCR_KEEP_FAILED" &&
	   keep=$(mktemp -d "$MCR_KEEP_FAILED/$(basename "$0" .sh).XXXXXX") &&
	   mv "$T_TMP"/* "$keep"/ 2>/dev/null; then
		echo "# kept this failed test's files in $keep"
	fi
	rm -rf "$T_TMP"
}
trap t_exit EXIT
# killed (a CI timeout, ^C): bash runs no EXIT trap on a signal it does not
# trap, and the test's cgroups and tracing settings would stay; as bench/'s scripts
trap 'exit 1' INT TERM HUP

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

# t_calibration FILE SAMPLES PLAIN PCPU ATOMIC CONTENDED CHECK STEP COLD: a calibration
# file (memcg-replay calibrate -o) of known costs in ns, each with no spread
t_calibration() {
	local f=$1 samples=$2
	shift 2
	printf '{"format": "memcg-replay-calibration", "version": 1, "host": "test", "measured_at": "2026-01-01T00:00:00Z",\n "cpus": 4, "samples": %s,\n "ops": {' "$samples" >"$f"
	local op sep=
	for op in plain_add pcpu_add atomic_add atomic_add_contended flushable_check walk_step walk_step_cold; do
		printf '%s"%s": {"ns": %s, "lo_ns": %s, "hi_ns": %s}' "$sep" "$op" "$1" "$1" "$1" >>"$f"
		sep=$',\n\t '
		shift
	done
	printf '}}\n' >>"$f"
}

# as_rows FILE: turn a trace into the previous format (one row per event in
# the table events, no chunks), which readers still accept, so tests can
# damage single events with SQL.
as_rows() {
	"${REPLAY:-$MCR_BUILD/memcg-replay}" events --table "$1" >/dev/null &&
		sqlite3 "$1" "DROP TABLE event_chunks"
}

# stat_reads_craft DB: logged reads of the root's total_cache (item 19) in DB, a synthetic
# page-cache trace after `validate` and `events --table`, crafted exact from its run 1 and
# taken for a recording (meta source memcg-capture): each read printed 1000 pages, plus the
# traced updates before it, plus run 1's read error.  A read the kernel flushed is taken
# where its flush's last window unlocks, as validate compares it on a recording; table
# crafted_synth keeps every read's value taken at its request, as on a synthetic trace.
stat_reads_craft() {
	sqlite3 "$1" "UPDATE meta SET value = 'memcg-capture' WHERE key = 'source';
CREATE TEMP TABLE f AS
	SELECT r.read_id, r.ts, r.cgroup_id, row_number() OVER (ORDER BY r.ts) - 1 AS k,
	       (SELECT min(rowid) FROM events e WHERE e.kind = 4 AND e.id = r.cgroup_id
		AND e.ts = r.ts) AS frow
	FROM reads r WHERE r.run_id = 1 AND r.force = 0 AND r.cgroup_id = 1;
CREATE TEMP VIEW fv AS
	SELECT f.k AS read, f.cgroup_id, f.ts,
	       4096 * (1000 + coalesce((SELECT sum(val) FROM events e WHERE e.kind IN (1, 2)
			AND e.item = 19 AND e.rowid < f.frow), 0)
		+ coalesce((SELECT error FROM read_errors x WHERE x.read_id = f.read_id
			AND x.kind = 1 AND x.item = 19), 0)) AS value FROM f;
CREATE TABLE crafted_synth AS SELECT read, value FROM fv;
UPDATE f SET frow = coalesce((SELECT min(u.rowid) FROM events u WHERE u.kind = 6
	AND u.rowid > f.frow AND u.pid = (SELECT pid FROM events WHERE rowid = f.frow)
	AND u.item = (SELECT max(item) FROM events WHERE kind = 6)), f.frow)
WHERE (SELECT kernel_needs_flush FROM reads WHERE read_id = f.read_id) = 1;
INSERT INTO stat_reads (read, cgroup, ts_before, ts_after, pos, line, name, value, unit)
SELECT read, cgroup_id, ts - 1, ts + 1, 0, 'total_cache', 'total_cache', value, 'bytes' FROM fv;
UPDATE stat_reads SET line = name || ' ' || value;"
}

# loss_exact NAME DB OUT: a recording that lost events (exit 11) says so exactly, whatever
# the machine's load: per CPU the counted gaps add up to the ring buffer's overrun + commit
# overrun + dropped, the events stored are the ones the kernel says were read, and the
# summary's LOST figure is the stats' total.
loss_exact() {
	local bad total
	bad=$(sqlite3 -batch -noheader "$2" "SELECT count(*) FROM cpu_stats e JOIN cpu_stats s ON s.cpu = e.cpu AND s.phase = 'start'
		WHERE e.phase = 'end' AND (
		(e.overrun + e.commit_overrun + e.dropped) - (s.overrun + s.commit_overrun + s.dropped) !=
		(SELECT coalesce(sum(count), 0) FROM gaps g WHERE g.cpu = e.cpu AND g.count > 0)
		OR e.read - s.read != (SELECT coalesce(sum(count), 0) FROM event_chunks c WHERE c.cpu = e.cpu))")
	[ "$bad" = 0 ] && pass "$1_loss_exact" ||
		fail "$1_loss_exact" "$bad CPUs whose gaps or stored events differ from the ring-buffer stats"
	total=$(sqlite3 -batch -noheader "$2" "SELECT sum(overrun + commit_overrun + dropped) FROM cpu_stats WHERE phase = 'end'")
	expect_match "$1_loss_summary" "LOST: $total events" "$(cat "$3")"
}
# loss_or_none NAME RC DB OUT: exit 0 with no loss, or exit 11 with the loss exact
loss_or_none() {
	case $2 in
	0) expect_match "$1_zero_loss" 'lost: none' "$(cat "$4")" ;;
	11) echo "# $1: events lost under this machine's load; checking the accounting"
	    loss_exact "$1" "$3" "$4" ;;
	*) fail "$1" "exit $2" ;;
	esac
}
