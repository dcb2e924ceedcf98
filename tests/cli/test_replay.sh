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

# Seed race (capture/synth_race.c; 4 CPUs, TH 256, root <- leaf, 64-page updates):
# the forced flush at 2.0 ms visits leaf on CPU 2, then an update of the leaf on
# CPU 1 (already passed) gives leaf 64, root 128, then root's visit wipes root to 0.
# Five updates at 3.0-3.4 ms: leaf 128..320 (flushable after the fourth), root
# 64..256; the fifth stops at the leaf under break (root stays 256 = TH, not > TH),
# under continue it skips the leaf and root reaches 320.
# Read of root at 4.0 ms: break 256, skipped, missing 64 + 5*64 = 384 > 256: stale;
# continue 320 > 256: flushes.  Two more leaf updates (4.5, 4.6 ms); read at
# 5.0 ms: break still 256, missing 512: stale again.  The forced flush at 7 ms is
# not stale.  So break: 2 stale reads, worst 512; continue: none.
expect_exit replay_seed_race 0 "$REPLAY" replay "$DB"
expect_match replay_seed_race_summary 'break +512 +512 .* 2 +512' "$T_OUT"
run_of() { q "$DB" "SELECT max(run_id) FROM runs WHERE kind = 'replay' AND policy = '$1'"; }
RB=$(run_of break) RC=$(run_of continue)
got=$(q "$DB" "SELECT sim_stats_updates, flushed, stale, missing_pages FROM reads WHERE run_id = $RB AND ts = 4000000")
[ "$got" = "256|0|1|384" ] && pass replay_break_root_stuck_256 || fail replay_break_root_stuck_256 "$got"
got=$(q "$DB" "SELECT sim_stats_updates, flushed, stale FROM reads WHERE run_id = $RC AND ts = 4000000")
[ "$got" = "320|1|0" ] && pass replay_continue_recovers || fail replay_continue_recovers "$got"
got=$(q "$DB" "SELECT stale_reads, stale_max_pages FROM cgroup_summary WHERE run_id = $RB AND cgroup_id = 1")
[ "$got" = "2|512" ] && pass replay_break_stale_reads || fail replay_break_stale_reads "$got"
got=$(q "$DB" "SELECT stale_reads FROM cgroup_summary WHERE run_id = $RC AND cgroup_id = 1")
[ "$got" = "0" ] && pass replay_continue_no_stale_reads || fail replay_continue_no_stale_reads "$got"
got=$(q "$DB" "SELECT count(*) FROM series WHERE run_id = $RB AND reason = 'read'")
[ "$got" = "4" ] && pass replay_series_at_reads || fail replay_series_at_reads "$got"
got=$(q "$DB" "SELECT json_extract(params, '\$.flush_model') FROM runs WHERE run_id = $RB")
# the seed-race trace has lock windows and is synthetic (break): the inferred model
[ "$got" = "inferred" ] && pass replay_params_json || fail replay_params_json "$got"

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
else
	skip validate_pagecache_models "synth --scenario pagecache failed"
fi
t_done
