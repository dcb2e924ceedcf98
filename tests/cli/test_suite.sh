#!/usr/bin/env bash
# tests/cli/test_suite.sh - the suite's own rule for running files at once
# (tests/run.sh): a file that records, touches tracefs or cgroups, or runs make
# in the build says "run.sh: alone" in its header, so that no two of them ever
# run together (two captures would share the tracepoints; --cleanup removes
# every dead capture's instance; two makes would write the same man page).
# The patterns are what such a file does today: a new kind of kernel access
# belongs in them.  And MCR_JOBS that is not a count is a usage error.
source "$(dirname "$0")/../lib.sh"

unmarked=
for f in "$TOP"/tests/cli/*.sh; do
	[ "$f" = "$TOP/tests/cli/test_suite.sh" ] && continue
	grep -qE 'live\.sh|tracing_save|tracing/instances|tracing/events/memcg|^TRACING=|make -[^#]*(install|/man/)' "$f" ||
		continue
	grep -qE '^# run\.sh: alone \(.+\)' "$f" || unmarked+=" ${f#"$TOP"/}"
done
for f in "$TOP"/tests/unit/*.c; do
	grep -qE 'tracefs_|[^_]mount\(' "$f" || continue
	grep -qE '^ \* run\.sh: alone \(.+\)' "$f" || unmarked+=" ${f#"$TOP"/}"
done
[ -z "$unmarked" ] && pass suite_kernel_files_alone ||
	fail suite_kernel_files_alone "touch the kernel or the build without '# run.sh: alone (why)':$unmarked"

for j in 0 x -1 2x; do
	MCR_JOBS=$j "$TOP/tests/run.sh" >"$T_TMP/out" 2>"$T_TMP/err"
	rc=$?
	[ "$rc" = 2 ] && grep -q "MCR_JOBS=$j is not a count of jobs" "$T_TMP/err" &&
		pass "suite_jobs_refused_'$j'" ||
		fail "suite_jobs_refused_'$j'" "exit $rc: $(head -c 200 "$T_TMP/err")"
done
t_done
