#!/usr/bin/env bash
# tests/cli/test_capture_args.sh - memcg-capture refuses, as a bad command line
# (exit 2, the bound in the message), what it cannot honour: a duration below
# 0.1 s (1e-9 recorded an empty file marked complete), a ring buffer above
# 1 GiB per CPU or a quarter of MemTotal over the CPUs (4 GiB per CPU was
# accepted), and a --cgroup path with . or .. components (/.. walked above the
# hierarchy's root and wrote a file no reader accepts).  Checked before
# anything else, so no root is needed; the output's directory does not exist,
# so a build that accepted them stops at the output instead of capturing.
# Likewise a bad --rotate SPEC (a period below 1 s, a size below 1 MiB, no unit
# it knows) and --keep 0 or --keep without --rotate.
# run.sh: alone (its last cases trace the memcg tracepoints)
source "$(dirname "$0")/../lib.sh"

[ -x "$CAPTURE" ] || { skip capture_args "$CAPTURE is not built"; t_done; }
OUT=$T_TMP/no-such-dir/x.db

for d in 1e-9 1e-300 0.05 0 nan; do
	expect_exit "capture_duration_refused_$d" 2 "$CAPTURE" -o "$OUT" -d "$d" &&
		expect_match "capture_duration_says_min_$d" "-d wants seconds from 0\\.1 .*'$d'" "$T_ERR"
done

mem_kb=$(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo)
cpus=$(getconf _NPROCESSORS_ONLN)
max=$((mem_kb / 4 / cpus))
[ "$max" -gt 1048576 ] && max=1048576
bs="4194304 1048577 3 -1"
[ "$max" -lt 1048576 ] && bs="$bs $((max + 1))"	# MemTotal's bound is the lower one
for b in $bs; do
	expect_exit "capture_buffer_refused_$b" 2 "$CAPTURE" -o "$OUT" -b "$b" -d 1 &&
		expect_match "capture_buffer_says_max_$b" "-b wants KiB per CPU between 4 and $max \\(.*\\), not '$b'" "$T_ERR"
done

MNT=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { print $2; exit }' /proc/self/mounts)
for p in /.. /../cpu /./ /a/../b /a/. . .. "${MNT:-/sys/fs/cgroup}/.."; do
	expect_exit "capture_cgroup_refused_$p" 2 "$CAPTURE" -o "$OUT" -d 1 --cgroup "$p" &&
		expect_match "capture_cgroup_says_why_$p" "--cgroup wants a cgroup path without \\. or \\.\\. components, not '$p'" "$T_ERR"
done

# --read names the argument as typed, :MS included
for r in :80 /a/..:80 /./; do
	expect_exit "capture_read_refused_$r" 2 "$CAPTURE" -o "$OUT" -d 1 --read "$r" &&
		expect_match "capture_read_says_why_$r" "--read wants PATH\[:MS\], PATH a cgroup path without \. or \.\. components, not '$r'" "$T_ERR"
done

# --rotate SPEC: a period of at least 1 s or a size of at least 1 MiB, named in the
# message; --keep only with --rotate, at least 1.  (A build without them refuses the
# option as unknown: exit 2 too, but not with these messages.)
PFX=$T_TMP/no-such-dir/host
for r in 0 0s 0.5s 1ms 500KiB 1023KiB 2MB 1d -1 s 1e3 '' 2GiBx 999999999999h; do
	expect_exit "capture_rotate_refused_$r" 2 "$CAPTURE" -o "$PFX" --rotate "$r" &&
		expect_match "capture_rotate_says_why_$r" "--rotate wants a period N\[s\], Nmin or Nh \(1 s to a year\) or a size NKiB, NMiB or NGiB \(1 MiB to 1 TiB\), not '$r'" "$T_ERR"
done
for k in 0 -1 x 1.5 ''; do
	expect_exit "capture_keep_refused_$k" 2 "$CAPTURE" -o "$PFX" --rotate 1s --keep "$k" &&
		expect_match "capture_keep_says_why_$k" "--keep wants a number of files from 1 to 1000000, not '$k'" "$T_ERR"
done
expect_exit capture_keep_needs_rotate 2 "$CAPTURE" -o "$PFX" --keep 3 -d 1 &&
	expect_match capture_keep_needs_rotate_says "--keep needs --rotate" "$T_ERR"
expect_exit capture_rotate_no_force 2 "$CAPTURE" -o "$PFX" --rotate 1s --force -d 1
# the accepted spellings pass the parser: they stop later (not root, or no such directory: 3)
for r in 1 1s 90s 2min 1h 1024KiB 1MiB 3GiB; do
	"$CAPTURE" -o "$PFX" --rotate "$r" --keep 2 -d 1 >/dev/null 2>"$T_TMP/err"
	rc=$?
	[ "$rc" -ne 2 ] && pass "capture_rotate_accepted_$r" ||
		fail "capture_rotate_accepted_$r" "exit 2: $(head -c 300 "$T_TMP/err")"
done
if [ "$(id -u)" -eq 0 ] && [ -d /sys/kernel/tracing/events/memcg ]; then
	expect_exit capture_rotate_prefix_dir_missing 3 "$CAPTURE" -o "$PFX" --rotate 1s -d 1 &&
		expect_match capture_rotate_prefix_dir_says "-o $PFX with --rotate: " "$T_ERR"
	expect_exit capture_rotate_prefix_is_dir 3 "$CAPTURE" -o "$T_TMP/" --rotate 1s -d 1
fi

# what --help promises about them
"$CAPTURE" --help >"$T_TMP/help" 2>&1
expect_match capture_help_duration_min 'at least 0\.1' "$(cat "$T_TMP/help")"
expect_match capture_help_buffer_max 'at most 1048576' "$(cat "$T_TMP/help")"
expect_match capture_help_command_kill 'SIGKILL' "$(cat "$T_TMP/help")"
expect_match capture_help_no_events '^ +16  ' "$(cat "$T_TMP/help")"
expect_match capture_help_rotate '--rotate=SPEC +Write a series of files PREFIX-YYYYmmddTHHMMSSZ\.db' "$(cat "$T_TMP/help")"
expect_match capture_help_keep '--keep=N +With --rotate: keep only the newest N files' "$(cat "$T_TMP/help")"
t_done
