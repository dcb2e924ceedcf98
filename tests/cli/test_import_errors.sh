#!/usr/bin/env bash
# tests/cli/test_import_errors.sh - memcg-replay import on bad input: each case gets
# its exit code (sim/error.h) and one line on stderr, never a crash, and no output file.
# The truncated files and the trace.dat without memcg events are recorded here with
# trace-cmd (root + tracefs + Linux 6.13+); those cases skip with the reason otherwise.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../live.sh"

t_lsan_import	# libtracecmd's v6 leak, suppressed by name (tests/lib.sh)


# one_line NAME: stderr of the last expect_exit is exactly one "memcg-replay: " line
one_line() {
	if [ "$(printf '%s\n' "$T_ERR" | wc -l)" -eq 1 ] && [[ $T_ERR == "memcg-replay: "* ]]; then
		pass "$1"
	else
		fail "$1" "stderr: $(printf '%s' "$T_ERR" | head -c 300)"
	fi
}

# no_output NAME: the failed import left no database (nor a temporary one) behind
no_output() {
	if ls "$T_TMP"/out.db* >/dev/null 2>&1; then fail "$1" "output file left behind"; else pass "$1"; fi
}

# ---- no recording needed ----
expect_exit import_usage_no_trace 2 "$REPLAY" import
expect_exit import_missing_file 3 "$REPLAY" import "$T_TMP/nope.dat" -o "$T_TMP/out.db" && one_line import_missing_file_msg

: >"$T_TMP/empty.dat"
expect_exit import_empty_file 15 "$REPLAY" import "$T_TMP/empty.dat" -o "$T_TMP/out.db" && one_line import_empty_file_msg

# a damaged page that libtracecmd 1.3.1 read round and round: import hung (found by fuzz_import)
expect_exit import_page_loop 15 timeout 60 "$REPLAY" import "$TOP/tests/fuzz/corpus/import/v6-page-loop.dat" \
	-o "$T_TMP/out.db" && expect_match import_page_loop_msg "round and round" "$T_ERR"
no_output import_page_loop_no_output

head -c 65536 /dev/urandom >"$T_TMP/random.dat"
expect_exit import_random_bytes 15 "$REPLAY" import "$T_TMP/random.dat" -o "$T_TMP/out.db" && one_line import_random_bytes_msg
no_output import_random_no_output

# right magic, garbage after it
{ printf '\027\010Dtracing6\0'; head -c 65536 /dev/urandom; } >"$T_TMP/magic.dat"
expect_exit import_magic_then_garbage 15 "$REPLAY" import "$T_TMP/magic.dat" -o "$T_TMP/out.db"

expect_exit import_trace_is_dir 3 "$REPLAY" import "$T_TMP" -o "$T_TMP/out.db"

# a failed import leaves an existing output file alone
echo keep >"$T_TMP/keep.db"
"$REPLAY" import "$T_TMP/random.dat" -o "$T_TMP/keep.db" 2>/dev/null
expect_match import_failure_keeps_existing '^keep$' "$(cat "$T_TMP/keep.db")"

# ---- recorded inputs ----
why_not() {
	[ "$(id -u)" -eq 0 ] || { echo "needs root to record with trace-cmd"; return; }
	command -v trace-cmd >/dev/null || { echo "trace-cmd is not installed"; return; }
	[ -d "$TR/events/memcg" ] || { echo "no memcg tracepoints in $TR (Linux 6.13+)"; return; }
}
reason=$(why_not)
if [ -n "$reason" ]; then
	skip import_truncated "$reason"
	skip import_no_memcg_events "$reason"
	t_done
fi

tracing_save
t_on_exit '[ -n "$TC_PID" ] && kill -- "-$TC_PID" 2>/dev/null; tracing_restore'

# record OUT EVENT-OPTIONS... : a small trace of just those events
record() {
	local out=$1 TC_REC=(-d --no-filter -C mono -b 4096) TC_REC_EV=()
	shift
	tc_record "$out" "$T_TMP/rec" "$@" -- bash -c 'head -c 4000000 /dev/zero | sort >/dev/null'
}

for ver in 7 6; do
	f="$T_TMP/v$ver.dat"
	if ! record "$f" --file-version "$ver" -e memcg; then
		fail "import_truncated_v$ver" "trace-cmd wrote nothing: $(tail -n 1 "$T_TMP/rec.err")"
		continue
	fi
	expect_exit "import_whole_v$ver" 0 "$REPLAY" import "$f" -o "$T_TMP/whole.db" -q
	size=$(stat -c %s "$f")
	# cut inside the headers, the event formats, the options, the CPU data and the
	# options v7 appends at the end (not the last few bytes: libtracecmd reads a v7
	# file whole without them, and so does the import)
	for cut in 5 200 4096 $((size / 10)) $((size / 3)) $((size / 2)) $((size * 9 / 10)) \
		   $((size - 4096)) $((size - 1000)); do
		head -c "$cut" "$f" >"$T_TMP/cut.dat"
		rm -f "$T_TMP"/out.db*
		expect_exit "import_truncated_v${ver}_at_$cut" 15 \
			"$REPLAY" import "$T_TMP/cut.dat" -o "$T_TMP/out.db" &&
			one_line "import_truncated_v${ver}_at_${cut}_msg"
		no_output "import_truncated_v${ver}_at_${cut}_no_output"
	done
done

if record "$T_TMP/mkdir.dat" -e cgroup:cgroup_mkdir; then
	rm -f "$T_TMP"/out.db*
	expect_exit import_no_memcg_events 16 "$REPLAY" import "$T_TMP/mkdir.dat" -o "$T_TMP/out.db" &&
		one_line import_no_memcg_events_msg
	no_output import_no_memcg_events_no_output
else
	fail import_no_memcg_events "trace-cmd wrote nothing: $(tail -n 1 "$T_TMP/rec.err")"
fi

if [ -s "$T_TMP/v7.dat" ]; then
	expect_exit import_cgroupfs_not_cgroup 17 "$REPLAY" import "$T_TMP/v7.dat" \
		-o "$T_TMP/out.db" --cgroupfs "$T_TMP" && one_line import_cgroupfs_not_cgroup_msg
fi
t_done
