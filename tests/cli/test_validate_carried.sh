#!/usr/bin/env bash
# validate's cause for a mismatch the cap left behind.  At a mismatch the cap
# explains (it dropped orders since the last mismatch), inference takes the
# kernel's value of the counter read and of no other: the dropped orders'
# error stays in the rest of that subtree (per-CPU counters, an ancestor's
# atomic fed by the same lock window) until a flush resets it.  So a parent's
# read right after its child's such mismatch is the cap's too, and so is a
# child's (its counters are in that subtree); a read of a cgroup flushed
# since, or outside the subtree of the cap's mismatch, is not.
#
# A crafted trace, -H 1 and --cap-only so that the cap drops the orders of
# every update made inside a lock window on its CPU (without --cap-only an
# exact diagram holds them beside the list: nothing is dropped); the kernel's values are made up where a
# mismatch is wanted, each within what the traced updates can add (the |val|
# of those in the subtree since the request of its last completed flush,
# plus CPU 1's largest |val| for an update in flight: else that is the
# cause, whatever the cap did):
#   /p/c/l, /s/l leaves, updated on CPU 1 only (by 1; /s/l by 30 at 32 ms);
#   forced root flushes at 1 ms (sync), 10 ms (updates of /p/c/l inside its
#   CPU 1 window) and 30 ms;
#   20 ms /p/c 3 (cap), 21 ms /p 2 (carried), 22 ms /p/c/l 3 (carried down):
#   at most 3 + 1 since 10 ms; 31 ms /p 1 (flushed since: none; at most 0 + 1),
#   40 ms /s 300 (no drop since the last mismatch: none; at most 10 x 30 + 30),
#   its flush's CPU 1 window with updates of /s/l, 50 ms /s 4 (cap), 51 ms /p 8
#   (the cap's mismatch is not in its subtree: none), 52 ms / 9 (carried from /s).
. "$(dirname "$0")/../lib.sh"

DB=$T_TMP/c.db
if ! "$REPLAY" synth --scenario pagecache --cpus 2 --duration 1 -o "$DB" -q >/dev/null 2>&1 ||
	! as_rows "$DB"; then
	skip validate_carried "synth --scenario pagecache failed"
	t_done
fi
item=$(sqlite3 "$DB" "SELECT item FROM events WHERE kind = 2 LIMIT 1")
sqlite3 "$DB" "DELETE FROM events; DELETE FROM cgroups; DELETE FROM gaps;
INSERT INTO cgroups VALUES (1, 0, '/', 0, -1, -1, 0), (100, 1, '/p', 1, -1, -1, 0),
	(101, 100, '/p/c', 2, -1, -1, 0), (102, 101, '/p/c/l', 3, -1, -1, 0),
	(103, 1, '/s', 1, -1, -1, 0), (104, 103, '/s/l', 2, -1, -1, 0);
CREATE TEMP TABLE ev (us INTEGER, cpu INTEGER, kind INTEGER, id INTEGER, item INTEGER,
		      val INTEGER, aux INTEGER, level INTEGER, flags INTEGER, pid INTEGER);
-- a flush (kind 4: flags 1 forced, 2 needs_flush) and its lock windows (5, 6) of both CPUs' trees
CREATE TEMP TABLE fl (us INTEGER, id INTEGER, val INTEGER, flags INTEGER, pid INTEGER, level INTEGER);
INSERT INTO fl VALUES (1000, 1, 0, 1, 500, 0), (10000, 1, 0, 1, 501, 0), (30000, 1, 0, 1, 504, 0),
	(40000, 103, 300, 2, 506, 1);
INSERT INTO ev SELECT us, 0, 4, id, 0, val, 0, 0, flags, pid FROM fl;
INSERT INTO ev SELECT us + 100, 0, 5, id, 0, 0, 4, level, 0, pid FROM fl;
INSERT INTO ev SELECT us + 200, 0, 6, id, 0, 0, 4, level, 0, pid FROM fl;
INSERT INTO ev SELECT us + 300, 0, 5, id, 1, 0, 4, level, 0, pid FROM fl;
INSERT INTO ev SELECT us + 1000, 0, 6, id, 1, 0, 4, level, 0, pid FROM fl;
-- updates on CPU 1: before the 10 ms flush and inside its CPU 1 window; the same for /s/l at 40 ms
WITH RECURSIVE k(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM k WHERE n < 9)
INSERT INTO ev SELECT 2000 + 10 * n, 1, 2, 102, $item, 1, 0, 0, 0, 42 FROM k
	UNION ALL SELECT 32000 + 10 * n, 1, 2, 104, $item, 30, 0, 0, 0, 42 FROM k;
INSERT INTO ev VALUES (10400, 1, 2, 102, $item, 1, 0, 0, 0, 42), (10500, 1, 2, 102, $item, 1, 0, 0, 0, 42),
	(10600, 1, 2, 102, $item, 1, 0, 0, 0, 42), (40400, 1, 2, 104, $item, 1, 0, 0, 0, 42),
	(40500, 1, 2, 104, $item, 1, 0, 0, 0, 42), (40600, 1, 2, 104, $item, 1, 0, 0, 0, 42);
-- the reads whose values the model does not reproduce
INSERT INTO ev VALUES (20000, 0, 4, 101, 0, 3, 0, 0, 0, 600), (21000, 0, 4, 100, 0, 2, 0, 0, 0, 601),
	(22000, 0, 4, 102, 0, 3, 0, 0, 0, 606),
	(31000, 0, 4, 100, 0, 1, 0, 0, 0, 602), (50000, 0, 4, 103, 0, 4, 0, 0, 0, 603),
	(51000, 0, 4, 100, 0, 8, 0, 0, 0, 604), (52000, 0, 4, 1, 0, 9, 0, 0, 0, 605);
INSERT INTO events (ts, cpu, seq, kind, id, item, val, aux, level, flags, pid)
	SELECT 1000000000 + 1000 * us, cpu, row_number() OVER (ORDER BY us, kind) - 1, kind, id, item,
	       val, aux, level, flags, pid FROM ev ORDER BY us, kind;
UPDATE meta SET value = (SELECT count(*) FROM events) WHERE key IN ('event_count', 'read_cgroups_events');
UPDATE meta SET value = 1060000000 WHERE key = 'capture_end_ns';"

# cause_at MS: the cause stored for the mismatch at MS ms ('-' none, 'match' no mismatch)
cause_at() {
	sqlite3 "$DB" "SELECT coalesce((SELECT coalesce(cause, '-') FROM validation_mismatch
		WHERE ts = 1000000000 + 1000000 * $1), 'match')"
}
cp "$DB" "$T_TMP/x.db"
expect_exit validate_carried_exact_run 0 "$REPLAY" validate "$T_TMP/x.db" -H 1 -r 0 -n 20
expect_match validate_carried_exact_summary 'orders dropped by the cap 0, more than the traced updates can add 0, no cause named' "$T_OUT"
expect_match validate_carried_exact_held 'past it, an exact diagram held at most [0-9]+ orders' "$T_OUT"
expect_exit validate_carried_run 0 "$REPLAY" validate "$DB" -H 1 --cap-only -r 0 -n 20
expect_match validate_carried_summary 'mismatches 8:.*orders dropped by the cap 5, more than the traced updates can add 0, no cause named 3' "$T_OUT"
check() {	# check NAME MS CAUSE
	local got
	got=$(cause_at "$2")
	[ "$got" = "$3" ] && pass "validate_carried_$1" || fail "validate_carried_$1" "at $2 ms: '$got', wanted '$3'"
}
check child_cap 20 'orders dropped by the cap'
check parent_after_child 21 'orders dropped by the cap'
check child_after_parent 22 'orders dropped by the cap'
check parent_flushed_since 31 '-'
check no_drop_since_mismatch 40 '-'
check sibling_cap 50 'orders dropped by the cap'
check not_in_subtree 51 '-'
check root_after_sibling 52 'orders dropped by the cap'

# Orders dropped before /p was last flushed do not carry into it: the same
# trace with the reads at 20, 21 ms and after 31 ms gone and one of /p/c
# (3) at 30.5 ms: the cap explains /p/c (it dropped orders at 10 ms, before
# any mismatch), not /p, which was flushed at 30 ms and dropped none since.
sqlite3 "$DB" "DELETE FROM validation_mismatch;
	DELETE FROM events WHERE kind = 4 AND flags = 0 AND ts != 1031000000;
	CREATE TEMP TABLE e2 AS SELECT ts, cpu, kind, id, item, val, aux, level, flags, pid
		FROM events UNION ALL SELECT 1030500000, 0, 4, 101, 0, 3, 0, 0, 0, 610;
	DELETE FROM events;
	INSERT INTO events (ts, cpu, seq, kind, id, item, val, aux, level, flags, pid)
		SELECT ts, cpu, row_number() OVER (ORDER BY ts, kind) - 1, kind, id, item, val, aux,
		       level, flags, pid FROM e2 ORDER BY ts, kind;
	UPDATE meta SET value = (SELECT count(*) FROM events)
		WHERE key IN ('event_count', 'read_cgroups_events')"
expect_exit validate_carried_before_run 0 "$REPLAY" validate "$DB" -H 1 --cap-only -r 0 -n 20
check before_child 30.5 'orders dropped by the cap'
check before_parent 31 '-'

# A flush the run made and the kernel did not resets nothing in the kernel:
# the mismatches after it still count from the flush before.  Forced root
# flushes at 1 ms (sync) and 10 ms, whose CPU 1 window holds three updates of
# /p/c/l by 64 (the cap drops their orders); 4 x 64 on /p/c/l at 2 ms and on
# CPU 0 at 15 ms, then 2 x 64 on /p/c, leave /p/c flushable in every order
# (the 10 ms flush reads 192, the run's value).  20 ms /p/c reads 100,
# needs_flush 0: the cap's mismatch; the run flushes /p/c, the kernel does
# not.  21 ms /p/c/l reads 5, needs_flush 0: from the 10 ms flush on, the
# cap dropped orders and /p/c's own mismatch showed the kept ones wrong, so
# it is the cap's (counted from the run's 20 ms flush, it was '-').
sqlite3 "$DB" "DELETE FROM validation_mismatch; DELETE FROM events;
CREATE TEMP TABLE e3 (us INTEGER, cpu INTEGER, kind INTEGER, id INTEGER, item INTEGER,
		      val INTEGER, aux INTEGER, level INTEGER, flags INTEGER, pid INTEGER);
CREATE TEMP TABLE f3 (us INTEGER, pid INTEGER);
INSERT INTO f3 VALUES (1000, 700), (10000, 701);
INSERT INTO e3 SELECT us, 0, 4, 1, 0, 192 * (us > 1000), 0, 0, 1 + 2 * (us > 1000), pid FROM f3
	UNION ALL SELECT us + 100, 0, 5, 1, 0, 0, 4, 0, 0, pid FROM f3
	UNION ALL SELECT us + 200, 0, 6, 1, 0, 0, 4, 0, 0, pid FROM f3
	UNION ALL SELECT us + 300, 0, 5, 1, 1, 0, 4, 0, 0, pid FROM f3
	UNION ALL SELECT us + 1000, 0, 6, 1, 1, 0, 4, 0, 0, pid FROM f3;
WITH RECURSIVE k(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM k WHERE n < 3)
INSERT INTO e3 SELECT 2000 + 10 * n, 1, 2, 102, $item, 64, 0, 0, 0, 42 FROM k
	UNION ALL SELECT 15000 + 10 * n, 0, 2, 102, $item, 64, 0, 0, 0, 43 FROM k;
INSERT INTO e3 VALUES (10400, 1, 2, 102, $item, 64, 0, 0, 0, 42),
	(10500, 1, 2, 102, $item, 64, 0, 0, 0, 42), (10600, 1, 2, 102, $item, 64, 0, 0, 0, 42),
	(16000, 0, 2, 101, $item, 64, 0, 0, 0, 43), (16010, 0, 2, 101, $item, 64, 0, 0, 0, 43),
	(20000, 0, 4, 101, 0, 100, 0, 0, 0, 710), (21000, 0, 4, 102, 0, 5, 0, 0, 0, 711);
INSERT INTO events (ts, cpu, seq, kind, id, item, val, aux, level, flags, pid)
	SELECT 1000000000 + 1000 * us, cpu, row_number() OVER (ORDER BY us, kind) - 1, kind, id,
	       item, val, aux, level, flags, pid FROM e3 ORDER BY us, kind;
UPDATE meta SET value = (SELECT count(*) FROM events)
	WHERE key IN ('event_count', 'read_cgroups_events')"
expect_exit validate_carried_kernel_run 0 "$REPLAY" validate "$DB" -H 1 --cap-only -r 0 -n 20
expect_match validate_carried_kernel_summary 'mismatches 2:.*orders dropped by the cap 2, more than the traced updates can add 0, no cause named 0' "$T_OUT"
expect_match validate_carried_kernel_plain_flushes 'ts 1020000000 cpu 0 /p/c: kernel 100/0, plain model [0-9]+/1' "$T_OUT"
check kernel_kept_parent 20 'orders dropped by the cap'
check kernel_kept_child 21 'orders dropped by the cap'

# --exact-budget: 1 to 1024, and no diagram with --cap-only to budget: usage errors (2),
# nothing written; in range, the same run with the diagram (test_infer's
# test_cap_dd_budget_scale has a budget that decides a read)
n0=$(sqlite3 "$DB" "SELECT count(*) FROM runs")
expect_exit validate_budget_zero 2 "$REPLAY" validate "$DB" --exact-budget 0
expect_match validate_budget_zero_msg "--exact-budget: not a count in \[1, 1024\]: '0'" "$T_ERR"
expect_exit validate_budget_big 2 "$REPLAY" validate "$DB" -B 1025
expect_exit validate_budget_cap_only 2 "$REPLAY" validate "$DB" -B 4 --cap-only
expect_match validate_budget_cap_only_msg '--cap-only and --exact-budget exclude each other' "$T_ERR"
n1=$(sqlite3 "$DB" "SELECT count(*) FROM runs")
[ "$n1" = "$n0" ] && pass validate_budget_nothing_written ||
	fail validate_budget_nothing_written "runs $n0 before, $n1 after"
expect_exit validate_budget_run 0 "$REPLAY" validate "$DB" -H 1 -B 4 -r 0 -n 20
expect_match validate_budget_summary 'mismatches 2:.*orders dropped by the cap 0' "$T_OUT"
t_done
