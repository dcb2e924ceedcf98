#!/usr/bin/env bash
# tests/cli/test_stat_placed.sh - the visit placement by printed values: the
# reads that printed what one flush left (the stale reads after it) show where,
# inside that flush's lock window, the flusher visited the read cgroup's
# subtree: the subtree's updates made on the window's CPU before the visit are
# in what they printed, those after are not.  validate fits one cut per window
# that explains every such read and every line at once, pins the window there
# and compares a second pass; it says how many windows it placed, and
# stat_read_checks marks the pairs (column placed).
#
# The input is crafted: a one-CPU synthetic page-cache trace taken for a
# recording (so that the comparison runs the inferred model), with logged reads
# of the root computed from the run of the flush model that made the trace
# (exact; a read the kernel flushed at its flush's end), then the reads after the
# periodic flush at 3 s printing 7 pages less,
# as if that flush's 24 ms window had visited the writer's cgroup 7 updates
# earlier than the inferred order puts it.
source "$(dirname "$0")/../lib.sh"
cd "$T_TMP" || exit 1
command -v sqlite3 >/dev/null || { skip stat_placed "no sqlite3 shell"; t_done; }

"$REPLAY" synth -s pagecache --duration=5 --period-ms=1000 --rate-mib=64 --cpus=1 -o w.db -q ||
	{ fail setup "synth failed"; t_done; }
"$REPLAY" validate -q w.db >/dev/null && "$REPLAY" events --table w.db >/dev/null ||
	{ fail setup "validate failed"; t_done; }
stat_reads_craft w.db || { fail setup "crafting stat_reads"; t_done; }
cp w.db anchor.db
cp w.db decided.db
cp w.db after.db
expect_exit stat_placed_exact 0 "$REPLAY" validate -q w.db
expect_match stat_placed_exact_all "^\(read, line\) pairs 39: exact 39 \(100.00%\), within 2 units 0, off 0 .*; flush model inferred\$" "$T_OUT"
! grep -q '^visit placed by printed values' <<<"$T_OUT" && pass stat_placed_nothing_to_place ||
	fail stat_placed_nothing_to_place "$(grep '^visit placed' <<<"$T_OUT")"
# the reads are checked against the inferred model's run, which needs the order: no exact
# diagram, so --exact-budget is said to have no effect (and the run is the same)
cp w.db budget.db
expect_exit stat_placed_budget 0 "$REPLAY" validate -q -B 2 budget.db
expect_match stat_placed_budget_note "budget.db: --exact-budget has no effect: its memory.stat reads are checked" "$T_ERR"
expect_match stat_placed_budget_same "^\(read, line\) pairs 39: exact 39 \(100.00%\)" "$T_OUT"

# the periodic root flush at 3 s: one window on CPU 0, and what the root read after it
# until the next (at 4 s) printed
win=$(sqlite3 w.db "SELECT count(*) FROM events WHERE kind = 5 AND ts > 3000000000 AND ts < 3001000000")
stale=$(sqlite3 w.db "SELECT count(*) FROM reads WHERE run_id = 1 AND cgroup_id = 1 AND force = 0
	AND kernel_needs_flush = 0 AND ts > 3000000000 AND ts < 4000000000")
[ "$win" = 1 ] && [ "$stale" = 10 ] && pass "stat_placed_setup (1 window, 10 stale reads)" ||
	{ fail stat_placed_setup "windows $win, stale reads $stale"; t_done; }
sqlite3 w.db "UPDATE stat_reads SET value = value - 7 * 4096 WHERE ts_before > 3000000000 AND ts_before < 4000000000;
	UPDATE stat_reads SET line = name || ' ' || value"
expect_exit stat_placed 0 "$REPLAY" validate -q w.db
expect_match stat_placed_all_exact "^\(read, line\) pairs 39: exact 39 \(100.00%\), within 2 units 0, off 0 " "$T_OUT"
expect_match stat_placed_said "^visit placed by printed values: 1 windows of 1 flushes \(one cut each, fitted once, held by all 10 pairs of the reads that printed what those flushes left\); 0 flushes with an off pair that no cut explains, 0 windows whose cut the kernel's needs_flush ruled out" "$T_OUT"
run=$(sqlite3 w.db "SELECT max(run_id) FROM runs WHERE kind = 'validate'")
rows=$(sqlite3 w.db "SELECT count(*), sum(verdict = 'exact') FROM stat_read_checks WHERE run_id = $run
	AND placed = 1 AND request_ts > 3000000000 AND request_ts < 4000000000")
[ "$rows" = "10|10" ] && pass stat_placed_marked || fail stat_placed_marked "$rows"
rows=$(sqlite3 w.db "SELECT count(*) FROM stat_read_checks WHERE run_id = $run AND placed = 1")
[ "$rows" = 10 ] && pass stat_placed_marked_only_those || fail stat_placed_marked_only_those "$rows"
expect_exit stat_placed_json 0 "$REPLAY" validate -q -f json w.db
expect_match stat_placed_json_keys "\"visit_placed_windows\":1,\"visit_placed_flushes\":1,\"visit_placed_pairs\":10,\"visit_unplaced_flushes\":0,\"visit_rejected_windows\":0," "$T_OUT"

# one read of the group 100 pages further: no cut explains all ten at once, so none is
# placed and every pair keeps its difference (the window's 393 pages could hold either)
sqlite3 w.db "UPDATE stat_reads SET value = value + 100 * 4096 WHERE ts_before > 3400000000 AND ts_before < 3500000000;
	UPDATE stat_reads SET line = name || ' ' || value"
expect_exit stat_placed_100 0 "$REPLAY" validate -q w.db
expect_match stat_placed_100_unplaced "^visit placed by printed values: 0 windows of 0 flushes .*; 1 flushes with an off pair that no cut explains, " "$T_OUT"
expect_match stat_placed_100_listed "^  read [0-9]+ ts 345[0-9]+ / total_cache: .* off by 93 pages; cause: inside the range the deciding flush's lock window allows\$" "$T_OUT"
expect_match stat_placed_100_others "^  read [0-9]+ ts 335[0-9]+ / total_cache: .* off by -7 pages; cause: inside the range the deciding flush's lock window allows\$" "$T_OUT"

# The anchor's flush.  The root's anchor is its first read after the first forced root
# flush (2 s); every later read is compared as printed(k) - printed(anchor).  Had that
# flush's window visited the writer's cgroup some updates later than the inferred order
# puts it, the anchor printed 7 pages more than the run shows, and every read printing a
# later flush (3 s, 4 s, 5 s) printed(k) - printed(anchor) 7 pages less.  Each of those
# three flushes' own windows could also take 7 pages less (three cuts); the anchor's one
# cut moves a third of the updates from the inferred order, so it is the one pinned, and
# the reads that printed the anchor's flush are the ones marked.
sqlite3 anchor.db "UPDATE stat_reads SET value = value - 7 * 4096 WHERE ts_before > 3000000000;
	UPDATE stat_reads SET line = name || ' ' || value"
expect_exit stat_placed_anchor 0 "$REPLAY" validate -q anchor.db
expect_match stat_placed_anchor_exact "^\(read, line\) pairs 39: exact 39 \(100.00%\), within 2 units 0, off 0 " "$T_OUT"
expect_match stat_placed_anchor_said "^visit placed by printed values: 1 windows of 1 flushes .*; 0 flushes with an off pair that no cut explains, 0 windows whose cut the kernel's needs_flush ruled out" "$T_OUT"
run=$(sqlite3 anchor.db "SELECT max(run_id) FROM runs WHERE kind = 'validate'")
rows=$(sqlite3 anchor.db "SELECT count(*), min(request_ts) > 2000000000, max(request_ts) < 3000000000,
	sum(verdict = 'anchor') FROM stat_read_checks WHERE run_id = $run AND placed = 1")
[ "$rows" = "10|1|1|1" ] && pass stat_placed_anchor_marked || fail stat_placed_anchor_marked "$rows"

# A flush the run did not make is no anchor's, nor are the reads that printed it.  The
# root's anchor would be its first read after the forced flush at 2 s (at 2.05 s, the run
# and the kernel both skipping it).  Say the kernel flushed at that read (needs_flush set on
# its event; the run, at stats_updates 0, still skips it): the ten stale reads after it, to
# the forced flush at 3 s, each decided alike, printed what that flush left, which the
# run's values lack, so none of them anchors either; the first read after the 3 s flush,
# which both made, does.  The build before anchored at 2.15 s.
sqlite3 decided.db "DROP TABLE event_chunks;
	UPDATE events SET flags = flags | 2 WHERE kind = 4 AND id = 1 AND ts = 2050000000"
expect_exit stat_placed_decided 0 "$REPLAY" validate -q decided.db
expect_match stat_placed_decided_before "^anchored on each cgroup's first matched read after the first forced root flush \(ts 2000000000, .*; 20 reads before their anchor not compared:\$" "$T_OUT"
run=$(sqlite3 decided.db "SELECT max(run_id) FROM runs WHERE kind = 'validate'")
rows=$(sqlite3 decided.db "SELECT group_concat(DISTINCT request_ts) FROM stat_read_checks
	WHERE run_id = $run AND verdict = 'anchor'")
[ "$rows" = 3050000000 ] && pass stat_placed_decided_anchor || fail stat_placed_decided_anchor "$rows"
rows=$(sqlite3 decided.db "SELECT flushed, kernel_needs_flush FROM reads WHERE run_id = $run
	AND cgroup_id = 1 AND ts = 2050000000")
[ "$rows" = "0|1" ] && pass stat_placed_decided_differs || fail stat_placed_decided_differs "$rows"

# The same past the anchor: say the kernel flushed at the root's read of 3.15 s (the run,
# one flush after the forced one at 3 s, skips it) and that read and the three stale ones
# after it, to 3.45 s, printed what that flush left: 2400 pages more than the run's value,
# which lacks it.  Their four pairs are off by those 2400 pages, the cause the decision.
# That flush is not the run's, so no cut of its windows is fitted to them: no flush "with
# an off pair that no cut explains" (the build before counted one).
sqlite3 after.db "DROP TABLE event_chunks;
	UPDATE events SET flags = flags | 2 WHERE kind = 4 AND id = 1 AND ts = 3150000000;
	UPDATE stat_reads SET value = value + 2400 * 4096 WHERE ts_before > 3140000000 AND ts_before < 3500000000;
	UPDATE stat_reads SET line = name || ' ' || value"
expect_exit stat_placed_after 0 "$REPLAY" validate -q after.db
expect_match stat_placed_after_off "^\(read, line\) pairs 39: exact 35 \(89.74%\), within 2 units 0, off 4 \(the run's flush decision differs from the kernel's 4, inside the range the deciding flush's lock window allows 0, no cause named 0\)" "$T_OUT"
expect_match stat_placed_after_listed "^  read [0-9]+ ts 3450000000 / total_cache: .* off by 2400 pages; cause: the run's flush decision differs from the kernel's\$" "$T_OUT"
! grep -q '^visit placed by printed values' <<<"$T_OUT" && pass stat_placed_after_not_fitted ||
	fail stat_placed_after_not_fitted "$(grep '^visit placed' <<<"$T_OUT")"
t_done
