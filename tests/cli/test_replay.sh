#!/usr/bin/env bash
# replay and validate through the CLI and the database: the seed race golden,
# flush models on a synthetic page-cache trace, and every bad-input exit code.
. "$(dirname "$0")/../lib.sh"

DB=$T_TMP/seed.db
if ! "$REPLAY" synth --scenario seed-race -o "$DB" -q >/dev/null 2>&1; then
	skip replay_seed_race "synth --scenario seed-race failed"
	t_done
fi
q() { sqlite3 "$1" "$2"; }

# Seed race (capture/synth_race.c; 4 CPUs, TH 256, root <- leaf, 64-page updates of
# NR_FILE_PAGES): the forced flush at 2.0 ms takes the leaf's +1 (1.0 ms) up to the root;
# a +64 on CPU 1 lands after the leaf's visit, and root's visit wipes root's credit.
# Five updates at 3.0-3.4 ms: leaf 128..320 (flushable after the fourth), root 64..256;
# the fifth stops at the leaf under break (root stays 256 = TH, not > TH), under continue
# it skips the leaf and root reaches 320.
# Read of root at 4.0 ms: truth 1 + 6 x 64 = 385 pages, shown 1: error -384.
#   break: 256, skipped; pending 384 <= TH + 63 x 4 = 508: not stranded, not stale.
#   continue: 320 > 256, flushes: the reader gets everything (no read_errors row).
# Two more leaf updates (4.5, 4.6 ms); read at 5.0 ms: truth 513, shown 1: error -512.
#   break: still 256, skipped.  Pending 512, but since the root's last flush (its visit
#   at 2.027666 ms) only 5 x 64 + 2 x 64 = 448 <= 508: the per-CPU remainders and the
#   atomic could hold that much, so not stranded, not stale.  (The pagecache scenario in
#   test_synth.sh has the stale reads.)
#   continue: root took 128 in its per-CPU counters, not flushable: -128, not stale.
# The forced flushes at 2 and 7 ms are not readers.
expect_exit replay_seed_race 0 "$REPLAY" replay "$DB"
expect_match replay_seed_race_summary 'break +2\.00 MiB +NR_FILE_PAGES +0 of 2 ' "$T_OUT"
expect_match replay_seed_race_summary_continue 'continue +512 KiB +NR_FILE_PAGES +0 of 2 ' "$T_OUT"
# the root's error reaches -512 pages at 5 ms and break never makes it flushable again:
# its largest visible error is those 512 pages, 2.00 MiB, the same as its worst read
expect_match replay_seed_race_summary_visible 'break +2\.00 MiB +NR_FILE_PAGES +0 of 2 +2\.00 MiB ' "$T_OUT"
run_of() { q "$DB" "SELECT max(run_id) FROM runs WHERE kind = 'replay' AND policy = '$1'"; }
RB=$(run_of break) RC=$(run_of continue)
err_at() {	# run ts: flushed|stranded|stale|pending|error of NR_FILE_PAGES (empty: right)
	q "$DB" "SELECT r.flushed, r.stranded, r.stale, r.pending, e.error FROM reads r
		LEFT JOIN read_errors e ON e.read_id = r.read_id AND e.kind = 1
		AND e.item = (SELECT item FROM items WHERE name = 'NR_FILE_PAGES')
		WHERE r.run_id = $1 AND r.ts = $2 AND r.cgroup_id = 1"
}
got=$(err_at "$RB" 4000000)
[ "$got" = "0|0|0|384|-384" ] && pass replay_break_read_4ms || fail replay_break_read_4ms "$got"
got=$(err_at "$RB" 5000000)
[ "$got" = "0|0|0|512|-512" ] && pass replay_break_read_5ms || fail replay_break_read_5ms "$got"
got=$(q "$DB" "SELECT pending_since_flush FROM reads WHERE run_id = $RB AND ts = 5000000")
[ "$got" = "448" ] && pass replay_break_pending_since_flush || fail replay_break_pending_since_flush "$got"
got=$(err_at "$RC" 4000000)
[ "$got" = "1|0|0|384|" ] && pass replay_continue_read_flushes || fail replay_continue_read_flushes "$got"
got=$(err_at "$RC" 5000000)
[ "$got" = "0|0|0|128|-128" ] && pass replay_continue_read_5ms || fail replay_continue_read_5ms "$got"
got=$(q "$DB" "SELECT stale_reads, stranded_episodes FROM cgroup_summary WHERE run_id = $RB AND cgroup_id = 1")
[ "$got" = "0|0" ] && pass replay_break_no_stale_reads || fail replay_break_no_stale_reads "$got"
got=$(q "$DB" "SELECT stale_reads, stranded_episodes FROM cgroup_summary WHERE run_id = $RC AND cgroup_id = 1")
[ "$got" = "0|0" ] && pass replay_continue_no_stale_reads || fail replay_continue_no_stale_reads "$got"
got=$(q "$DB" "SELECT count(*) FROM stranded_episodes WHERE run_id = $RB AND cgroup_id = 1")
[ "$got" = "0" ] && pass replay_break_no_episode || fail replay_break_no_episode "$got"

# Series: first event 1.0 ms, last 7.040999 ms (the final flush's last window unlock);
# at 0.5 ms: floor(6.040999 / 0.5) + 1 = 13 samples per (run, cgroup, line), no gap.
# Series cgroups: those read (the root) and their ancestors (none): one line.
expect_exit replay_series_sample 0 "$REPLAY" replay "$DB" --sample-ms 0.5 --policy break
RS=$(run_of break)
got=$(q "$DB" "SELECT count(*), min(n), max(n), min(span), max(span) FROM (SELECT count(*) AS n,
	max(ts) - min(ts) AS span FROM series WHERE run_id = $RS GROUP BY cgroup_id, kind, item)")
[ "$got" = "1|13|13|6000000|6000000" ] && pass replay_series_no_gaps || fail replay_series_no_gaps "$got"
got=$(q "$DB" "SELECT count(*) FROM cgroup_series WHERE run_id = $RS")
[ "$got" = "13" ] && pass replay_cgroup_series_no_gaps || fail replay_cgroup_series_no_gaps "$got"
# A sample shows the state after the events before it.  At 4.5 ms the root (not
# flushable) shows -384; updates at 4.5 and 4.6 ms take it to -448, then -512: the
# row at 5.0 ms has -512, min -512, max -384 (held from the previous sample).
got=$(q "$DB" "SELECT error, min_error, max_error FROM series WHERE run_id = $RS AND cgroup_id = 1
	AND ts = 5000000")
[ "$got" = "-512|-512|-384" ] && pass replay_series_min_max || fail replay_series_min_max "$got"
for bad in abc -1 1e10 0.0001 '' nan; do
	expect_exit "replay_sample_ms_bad_${bad:-empty}" 2 "$REPLAY" replay "$DB" --sample-ms "$bad"
done
expect_exit replay_series_cgroup_unknown 17 "$REPLAY" replay "$DB" --series-cgroup /nope
expect_match replay_series_cgroup_unknown_msg "no cgroup '/nope'" "$T_ERR"
expect_exit replay_series_cgroup 0 "$REPLAY" replay "$DB" --series-cgroup /leaf --policy break
RS=$(run_of break)
got=$(q "$DB" "SELECT count(DISTINCT cgroup_id) FROM cgroup_series WHERE run_id = $RS")
[ "$got" = "2" ] && pass replay_series_cgroup_added || fail replay_series_cgroup_added "$got"

# A trace reading more than 256 cgroups: the 256 shallowest get a series (ancestors are
# shallower still), no read cgroup left out is shallower than one kept.
FL=$T_TMP/fleet.db
"$REPLAY" synth -q -s fleet --cgroups 2000 --events 100000 --reader-ms 0.02 -o "$FL" || fail synth_fleet "for series"
expect_exit replay_series_bounded 0 "$REPLAY" replay "$FL" -m spread --policy break
expect_match replay_series_bounded_msg 'Series: the 256 shallowest of the [0-9]+ cgroups read' "$T_OUT"
"$REPLAY" events --table "$FL" >/dev/null || fail replay_series_events_table "events --table"
got=$(q "$FL" "WITH s AS (SELECT DISTINCT cgroup_id AS id FROM cgroup_series),
	r AS (SELECT DISTINCT id FROM events WHERE kind > 3 AND kind = 4 AND flags & 1 = 0)
	SELECT (SELECT count(*) FROM s) >= 256,
	(SELECT max(level) FROM cgroups WHERE id IN (SELECT id FROM s)) <=
	(SELECT coalesce(min(level), 1000) FROM cgroups WHERE id IN (SELECT id FROM r) AND id NOT IN (SELECT id FROM s))")
[ "$got" = "1|1" ] && pass replay_series_shallowest || fail replay_series_shallowest "$got"

# A file of schema 1 (an older memcg-replay): report and info say so (exit 20 for
# report); replay drops the old results and writes current ones.
OLD=$T_TMP/old.db
cp "$DB" "$OLD"
cur=$(q "$DB" "PRAGMA user_version")
q "$OLD" "PRAGMA user_version = 1"
expect_exit report_older_schema 20 "$REPLAY" report "$OLD"
expect_match report_older_schema_msg '^memcg-replay: .*older memcg-replay.*replay it again' "$T_ERR"
expect_exit info_older_schema 0 "$REPLAY" info "$OLD"
expect_match info_older_schema_runs 'runs: +written by an older memcg-replay' "$T_OUT"
expect_exit replay_older_schema 0 "$REPLAY" replay "$OLD"
got=$(q "$OLD" "PRAGMA user_version")
[ "$got" = "$cur" ] && pass replay_older_schema_upgraded || fail replay_older_schema_upgraded "$got"
expect_exit report_after_upgrade 0 "$REPLAY" report "$OLD"

# A file of schema 3 (no store version 2 chunks yet; the only change since):
# read as it is, its results kept; a writer makes it current.
V3=$T_TMP/v3.db
cp "$DB" "$V3"
q "$V3" "PRAGMA user_version = 3"
runs=$(q "$V3" "SELECT count(*) FROM runs")
expect_exit report_schema3 0 "$REPLAY" report "$V3"
[ "$(q "$V3" "PRAGMA user_version")" = 3 ] && pass report_schema3_read_only ||
	fail report_schema3_read_only "upgraded by a reader"
expect_exit replay_schema3 0 "$REPLAY" replay -q "$V3"
got=$(q "$V3" "PRAGMA user_version"):$(q "$V3" "SELECT count(*) FROM runs")
[ "$got" = "$cur:$((runs + 3))" ] && pass replay_schema3_upgraded || fail replay_schema3_upgraded "$got"

got=$(q "$DB" "SELECT json_extract(params, '\$.flush_model') FROM runs WHERE run_id = $RB")
# the seed-race trace is synthetic: spread, synth's own placement, though it has windows
[ "$got" = "spread" ] && pass replay_params_json || fail replay_params_json "$got"

# validate: the trace's "kernel" is a break simulator with explicit visits.
expect_exit validate_seed_race_break 0 "$REPLAY" validate "$DB" --format json
expect_match validate_seed_race_json '"compared":3,.*"stats_updates_match":3,.*"stats_updates_match_plain":3' "$T_OUT"
# continue: root 320 where the kernel said 256 -> mismatch, exit 10.
expect_exit validate_wrong_policy_exits_10 10 "$REPLAY" validate "$DB" --policy continue

# usage errors name the valid choices
expect_exit replay_unknown_policy 2 "$REPLAY" replay "$DB" --policy brake
expect_match replay_unknown_policy_msg 'valid: break, continue, legacy' "$T_ERR"
expect_exit replay_unknown_model 2 "$REPLAY" replay "$DB" --flush-model later
expect_match replay_unknown_model_msg 'valid: instant, window, spread, inferred' "$T_ERR"
# an unknown model is one line naming the table, before FILE is even opened
for cmd in replay validate; do
	expect_exit ${cmd}_bogus_model 2 "$REPLAY" $cmd "$T_TMP/nope.db" --flush-model bogus
	[ "$(printf '%s\n' "$T_ERR" | wc -l)" -eq 1 ] && pass ${cmd}_bogus_model_one_line ||
		fail ${cmd}_bogus_model_one_line "$T_ERR"
done
expect_match validate_bogus_model_msg "^memcg-replay: unknown flush model 'bogus' \(valid: instant, window, spread; validate always infers" "$T_ERR"
# --help lists the table, with the default rule
"$REPLAY" replay --help >"$T_TMP/help" 2>&1
for m in instant window spread inferred; do
	grep -Eq "^  $m +[^ ]" "$T_TMP/help" && pass replay_help_lists_$m || fail replay_help_lists_$m
done
expect_match replay_help_default '\(default on a recording with lock windows' "$(cat "$T_TMP/help")"

# bad inputs: each its own exit code and a one-line message
expect_exit replay_missing_file 3 "$REPLAY" replay "$T_TMP/nope.db"
head -c 4096 /dev/urandom >"$T_TMP/random.db"
expect_exit replay_not_sqlite 4 "$REPLAY" replay "$T_TMP/random.db"
sqlite3 "$T_TMP/other.db" "CREATE TABLE t (x); INSERT INTO t VALUES (1);"
expect_exit replay_not_ours 5 "$REPLAY" replay "$T_TMP/other.db"
bad() { cp "$DB" "$T_TMP/$1.db" && sqlite3 "$T_TMP/$1.db" "$2"; }
bad_row() { cp "$DB" "$T_TMP/$1.db" && as_rows "$T_TMP/$1.db" && sqlite3 "$T_TMP/$1.db" "$2"; }
bad newer "PRAGMA user_version = 999"
expect_exit replay_newer_schema 6 "$REPLAY" replay "$T_TMP/newer.db"
bad notable "DROP TABLE event_chunks"
expect_exit replay_missing_table 7 "$REPLAY" replay "$T_TMP/notable.db"
# rowid 15 is CPU 1's second update (3.1 ms after 3.0 ms): move it before 3.0 ms.
bad_row backwards "UPDATE events SET ts = 2500000 WHERE rowid = 15 AND cpu = 1"
expect_exit replay_time_backwards 8 "$REPLAY" replay "$T_TMP/backwards.db"
[ "$(printf '%s\n' "$T_ERR" | wc -l)" -eq 1 ] && pass replay_one_line_error || fail replay_one_line_error "$T_ERR"
bad_row badcpu "UPDATE events SET cpu = 7 WHERE rowid = 14"
expect_exit replay_bad_cpu 9 "$REPLAY" replay "$T_TMP/badcpu.db"
expect_exit validate_bad_cpu 9 "$REPLAY" validate "$T_TMP/badcpu.db"
# a failed pass leaves no run behind (one transaction)
base=$(sqlite3 "$DB" "SELECT count(*) FROM runs")
bad_row badcpu2 "UPDATE events SET cpu = 7 WHERE rowid = 14"
"$REPLAY" replay "$T_TMP/badcpu2.db" >/dev/null 2>&1
got=$(sqlite3 "$T_TMP/badcpu2.db" "SELECT count(*) FROM runs")
[ "$got" = "$base" ] && pass replay_error_rolls_back || fail replay_error_rolls_back "runs $got, before $base"

# Flush models on the page-cache scenario: synth's "kernel" places CPU c's
# visits at (i+1)/(n+1) of its window, exactly as 'spread' does, so spread
# must reproduce every recorded stats_updates; 'window' puts them all at the
# lock and misses the updates that land between leaf and root visits.
PC=$T_TMP/pc.db
if "$REPLAY" synth --scenario pagecache --duration 4 -o "$PC" -q >/dev/null 2>&1; then
	for m in instant window spread; do
		cp "$PC" "$T_TMP/pc-$m.db"
		# plain rates only: a small inference cap keeps this quick
		"$REPLAY" validate "$T_TMP/pc-$m.db" --flush-model $m --format json -n 0 -H 16 \
			>"$T_TMP/v-$m.json" 2>/dev/null
		r=$(sqlite3 :memory: "SELECT json_extract(readfile('$T_TMP/v-$m.json'), '\$.stats_updates_match_plain_rate')")
		echo "# pagecache validate --flush-model $m: stats_updates match rate $r"
		eval "rate_$m=\${r:-0}"
	done
	awk "BEGIN { exit !($rate_spread == 1.0) }" && pass validate_pagecache_spread_exact ||
		fail validate_pagecache_spread_exact "spread $rate_spread"
	awk "BEGIN { exit !($rate_window < $rate_spread) }" && pass validate_discriminates_models ||
		fail validate_discriminates_models "window $rate_window, spread $rate_spread"
	# A reader that flushed where the kernel did gets memory.stat after its whole
	# flush: every CPU is visited in a window after the request, so the oldest
	# update it can miss landed on a CPU after that CPU's visit, within the
	# flush's 24 ms (synth_pagecache.c's flush-us) plus the time to the next
	# event after the last unlock (updates come every few us): below 25 ms.
	# Valued at the last unlock instead, before the inferred model made the last
	# CPU's visits, such a reader missed that CPU's updates since its previous
	# flush, up to 74 ms old here (with -H 64: the order that cap keeps leaves
	# visits of the last window to make after its unlock).
	cp "$PC" "$T_TMP/pc-inf.db"
	"$REPLAY" replay -q "$T_TMP/pc-inf.db" -m inferred -H 64 >/dev/null 2>&1
	got=$(sqlite3 "$T_TMP/pc-inf.db" "SELECT count(*), coalesce(max(e.age_ns), 0) FROM reads r
		JOIN runs USING (run_id) JOIN read_errors e USING (read_id)
		WHERE runs.flush_model = 'inferred' AND r.flushed AND r.kernel_needs_flush AND NOT r.force")
	echo "# pagecache, inferred: flushed reads' errors and the oldest update they missed: $got"
	[ "${got%|*}" -gt 0 ] && [ "${got#*|}" -lt 25000000 ] && pass replay_flushed_read_after_flush ||
		fail replay_flushed_read_after_flush "$got"
else
	skip validate_pagecache_models "synth --scenario pagecache failed"
fi
# A reader's flush that goes ahead in a run while that run's lock window is open
# (the kernel skipped it, so no window of its own; another flush holds the rstat
# lock): the kernel's css_rstat_flush() would wait for the lock, and the run
# flushes when the window ends.  It used to stop the replay: "Device or resource
# busy", exit 1.  Readers every 1 ms against 2.4 ms flushes make it happen.
# validate's inference keeps at most 16 orders (-H): the windows and flushes
# are the same, and the default cap's 60 M dropped orders took 16 s (53 under ASan).
"$REPLAY" synth --scenario fleet --cpus 8 --cgroups 200 --flush-us 2400 --reader-ms 1 \
	--period-ms 5 --events 30000 --seed 2 -o "$T_TMP/busy.db" >/dev/null 2>&1
expect_exit replay_flush_waits_for_window 0 "$REPLAY" replay -q "$T_TMP/busy.db"
expect_exit validate_flush_waits_for_window 0 "$REPLAY" validate -n 0 -r 0 -H 16 "$T_TMP/busy.db"
t_done
