#!/usr/bin/env bash
# tests/cli/test_import_errors.sh - memcg-replay import on bad input: each case gets
# its exit code (sim/base/error.h) and one line on stderr, never a crash, and no output file.
# The truncated files and the trace.dat without memcg events are recorded here with
# trace-cmd (root + tracefs + Linux 6.13+); those cases skip with the reason otherwise.
# run.sh: alone (records with trace-cmd, which changes the top-level tracing settings)
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

# one byte flipped in the compressed CPU data of a v7 trace.dat (tests/data/v7-2cpu.dat: a v6
# recording cut by tests/fuzz/shrink_dat.py to 24 pages a CPU, then trace-cmd convert
# --file-version 7 --compression zstd; CPU 0's zstd chunks at 8196, 12965 and 16100).
# libtracecmd 1.3.1 crashes on it: in tracecmd_open()'s error path when the flip is in a
# CPU's first chunk, in tracecmd_close() after tracecmd_copy() when it is in a later one.
# The import runs it in a child process: exit 15 naming the crash and the output's
# directory empty (before: SIGSEGV, exit 139, the temporary file left)
V7="$TOP/tests/data/v7-2cpu.dat"
# flip IN OFFSET OUT: IN with the byte at OFFSET inverted
flip() {
	local b
	b=$(od -An -tu1 -j "$2" -N1 "$1") && cp "$1" "$3" &&
		printf "\\$(printf %03o $((b ^ 255)))" | dd of="$3" bs=1 seek="$2" conv=notrunc status=none
}
# crashed NAME WHAT: the last line of stderr says libtracecmd crashed WHAT (under a
# sanitizer, whose report comes first, the child exits 1 instead of dying by the signal)
crashed() {
	local how='crashed \(SIGSEGV\)'
	[ "${MCR_SANITIZED:-0}" = 1 ] && how='(crashed \(SIG[A-Z]+\)|died \(exit status 1\))'
	expect_match "$1" "^memcg-replay: .*: truncated or corrupt trace file: libtracecmd $how $2\$" \
		"$(tail -n 1 <<<"$T_ERR")"
}
# empty NAME: the output's directory holds nothing (no database, temporary file or copy)
empty() {
	local left
	left=$(ls -A "$T_TMP/crash")
	[ -z "$left" ] && pass "$1" || fail "$1" "left: $left"
}
mkdir "$T_TMP/crash"
expect_exit import_v7_intact 0 "$REPLAY" import "$V7" -o "$T_TMP/crash/out.db" -q
rm -f "$T_TMP/crash/out.db"
flip "$V7" 10201 "$T_TMP/flip-open.dat"	# CPU 0's first chunk
flip "$V7" 14226 "$T_TMP/flip-copy.dat"	# its second
expect_exit import_v7_flip_open_crash 15 "$REPLAY" import "$T_TMP/flip-open.dat" -o "$T_TMP/crash/out.db" &&
	crashed import_v7_flip_open_crash_msg 'reading it'
empty import_v7_flip_open_crash_empty
expect_exit import_v7_flip_copy_crash 15 "$REPLAY" import "$T_TMP/flip-copy.dat" -o "$T_TMP/crash/out.db" \
	--decompress always && crashed import_v7_flip_copy_crash_msg 'making a decompressed copy of it'
empty import_v7_flip_copy_crash_empty
# auto, for a file of 8 MiB (zeros appended, never read): the copy crashes, the file is
# read as it is (libtracecmd reads this one without crashing)
cp "$T_TMP/flip-copy.dat" "$T_TMP/flip-copy8.dat" && truncate -s 8M "$T_TMP/flip-copy8.dat"
expect_exit import_v7_flip_copy_auto 0 "$REPLAY" import "$T_TMP/flip-copy8.dat" -o "$T_TMP/crash/out.db" -q &&
	expect_match import_v7_flip_copy_auto_warns 'could not decompress .*flip-copy8.dat into a plain copy .*\(truncated or corrupt trace file\)' "$T_ERR"
expect_match import_v7_flip_copy_auto_left '^out\.db$' "$(ls -A "$T_TMP/crash")"

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
