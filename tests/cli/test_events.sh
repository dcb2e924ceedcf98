#!/usr/bin/env bash
# tests/cli/test_events.sh - the event store through the CLI: `memcg-replay events` (rows as
# CSV for a range, CPU or cgroup; the table events for SQL) and a file of the previous format
# (tests/data/seed-race-v1.sql: the dump of the seed-race scenario as written by memcg-replay
# 0.1.0 before the store, one row per event), read as it is and converted by `events --convert`.
#
# Expected counts are the seed-race timeline (capture/synth_race.c): 35 events, 2 CPUs.
. "$(dirname "$0")/../lib.sh"

OLD=$T_TMP/seed-race-v1.db
sqlite3 "$OLD" <"$(dirname "$0")/../data/seed-race-v1.sql" || fail events_old_file "could not load the dump"
NEW=$T_TMP/new.db
"$REPLAY" synth -q --scenario seed-race -o "$NEW" || fail events_synth "synth failed"

# rows: the same 35 events as the old file's table, in the same (replay) order
expect_exit events_csv 0 "$REPLAY" events "$NEW"
printf '%s\n' "$T_OUT" | tail -n +2 >"$T_TMP/new.csv"
sqlite3 -csv "$OLD" "SELECT ts, cpu, seq, kind, id, item, val, aux, level, flags, pid FROM events
	ORDER BY rowid" >"$T_TMP/old.csv"
[ "$(wc -l <"$T_TMP/new.csv")" = 35 ] && cmp -s "$T_TMP/new.csv" "$T_TMP/old.csv" &&
	pass events_same_as_rows || fail events_same_as_rows "$(diff "$T_TMP/old.csv" "$T_TMP/new.csv" | head -5)"
expect_match events_csv_header '^ts,cpu,seq,kind,id,item,val,aux,level,flags,pid$' "$(printf '%s\n' "$T_OUT" | head -1)"

# filters against the same selection in SQL on the old rows
check_filter() {	# check_filter NAME "OPTIONS" "WHERE"
	local want got
	want=$(sqlite3 "$OLD" "SELECT count(*) FROM events WHERE $3")
	got=$("$REPLAY" events "$NEW" $2 | tail -n +2 | wc -l)
	[ "$want" = "$got" ] && [ "$got" -gt 0 ] && pass "events_filter_$1" ||
		fail "events_filter_$1" "$got rows, SQL says $want"
}
check_filter cpu "--cpu 1" "cpu = 1"
mid=$(sqlite3 "$OLD" "SELECT ts FROM events ORDER BY rowid LIMIT 1 OFFSET 17")
# --from/--to count from the start of the trace (meta capture_start_ns, else the first event)
t0=$(sqlite3 "$OLD" "SELECT coalesce((SELECT value FROM meta WHERE key = 'capture_start_ns'),
	(SELECT min(ts) FROM events))")
check_filter range "--from $((mid - t0))ns --to $((mid - t0 + 1000000))ns" \
	"ts BETWEEN $mid AND $((mid + 1000000))"
check_filter range_s "--from $(awk -v d=$((mid - t0)) 'BEGIN { printf "%.9f", d / 1e9 }') --to \
	$(awk -v d=$((mid - t0 + 1000000)) 'BEGIN { printf "%.9f", d / 1e9 }')" \
	"ts BETWEEN $mid AND $((mid + 1000000))"
leaf=$(sqlite3 "$OLD" "SELECT id FROM events WHERE kind IN (1, 2, 3) LIMIT 1")
check_filter cgroup "--cgroup $leaf" "id = $leaf"
expect_exit events_tsv 0 "$REPLAY" events "$NEW" --format tsv --cpu 0
expect_match events_tsv_tabs "$(printf '^ts\tcpu\t')" "$T_OUT"
expect_exit events_bad_format 2 "$REPLAY" events "$NEW" --format xml

# a CPU or cgroup id beyond what an event can hold is refused (exit 2, naming the
# option), not cut to the field: --cpu 4294967296 gave CPU 0's events, --cpu
# 4294967295 (-1) and --cgroup 18446744073709551615 every event
for bad in "--cpu 4294967296" "--cpu 4294967295" "--cpu 2147483648" "--cpu -1" "--cpu 0x1" \
	"--cgroup 18446744073709551615" "--cgroup 9223372036854775808" "--cgroup 0" "--cgroup -1"; do
	name=events_range_$(printf '%s' "$bad" | tr -c 'a-z0-9' _)
	eval "expect_exit $name 2 \"\$REPLAY\" events \"\$NEW\" $bad" &&
		expect_match "${name}_msg" "${bad%% *}[^:]*: not an integer in \[" "$T_ERR"
done
for bad in "--from -1" "--to 18446744073709551616" "--from ''" "--to 9223372036854775808ns"; do
	name=events_range_$(printf '%s' "$bad" | tr -c 'a-z0-9' _)
	eval "expect_exit $name 2 \"\$REPLAY\" events \"\$NEW\" $bad" &&
		expect_match "${name}_msg" "${bad%% *}: not a time from the start of the trace" "$T_ERR"
done
# in range, matching nothing: the header alone
for none in "--cpu 2147483647" "--cpu 7" "--cgroup 9223372036854775807" "--from 9223372036854775807ns"; do
	name=events_none_$(printf '%s' "$none" | tr -c 'a-z0-9' _)
	expect_exit "$name" 0 "$REPLAY" events "$NEW" $none &&
		[ "$T_OUT" = "ts,cpu,seq,kind,id,item,val,aux,level,flags,pid" ] && pass "${name}_empty" ||
		fail "${name}_empty" "$(printf '%s' "$T_OUT" | head -3)"
done

# the one step to SQL: the table events and the typed views over it
expect_exit events_table 0 "$REPLAY" events --table "$NEW"
got=$(sqlite3 "$NEW" "SELECT count(*) FROM events")
[ "$got" = 35 ] && pass events_table_rows || fail events_table_rows "$got"
cmp -s <(sqlite3 -csv "$NEW" "SELECT ts, cpu, seq, kind, id, item, val, aux, level, flags, pid FROM events
	ORDER BY rowid") "$T_TMP/old.csv" && pass events_table_same || fail events_table_same "differs"
got=$(sqlite3 "$NEW" "SELECT count(*) FROM flush_events")
want=$(sqlite3 "$OLD" "SELECT count(*) FROM flush_events")
[ "$got" = "$want" ] && pass events_table_views || fail events_table_views "$got, old $want"
# twice is fine: rewritten, not doubled
"$REPLAY" events --table "$NEW" >/dev/null
[ "$(sqlite3 "$NEW" "SELECT count(*) FROM events")" = 35 ] && pass events_table_again ||
	fail events_table_again "rows doubled"

# the previous format: replayed as it is, with the same results as the new file
cp "$OLD" "$T_TMP/old.db"
cp "$NEW" "$T_TMP/new2.db"
norm() { grep -v 'Runs stored\| in [0-9.]* s' | sed "s|$T_TMP/[a-z0-9]*\.db|FILE|g"; }
"$REPLAY" replay "$T_TMP/old.db" 2>&1 | norm >"$T_TMP/r_old"
"$REPLAY" replay "$T_TMP/new2.db" 2>&1 | norm >"$T_TMP/r_new"
[ -s "$T_TMP/r_old" ] && cmp -s "$T_TMP/r_old" "$T_TMP/r_new" && pass events_old_format_replays ||
	fail events_old_format_replays "$(diff "$T_TMP/r_old" "$T_TMP/r_new" | head -5)"
expect_exit events_old_format_info 0 "$REPLAY" info "$T_TMP/old.db"
expect_match events_old_format_info_count '35' "$T_OUT"

# ... and converted in place by one command: same events, no rows table left, results kept
cp "$OLD" "$T_TMP/conv.db"
expect_exit events_convert 0 "$REPLAY" events --convert "$T_TMP/conv.db"
expect_match events_convert_msg 'converted 35 events' "$T_OUT"
got=$(sqlite3 "$T_TMP/conv.db" "SELECT (SELECT count(*) FROM sqlite_master WHERE name = 'events'),
	(SELECT sum(count) FROM event_chunks), (SELECT value FROM meta WHERE key = 'event_count')")
[ "$got" = "0|35|35" ] && pass events_convert_store || fail events_convert_store "$got"
got=$(sqlite3 "$OLD" "PRAGMA user_version"):$(sqlite3 "$T_TMP/conv.db" "PRAGMA user_version"):$(sqlite3 "$NEW" "PRAGMA user_version")
cur=$(sqlite3 "$NEW" "PRAGMA user_version")
[ "$got" = "1:$cur:$cur" ] && pass events_convert_schema_version || fail events_convert_schema_version "old:converted:new $got"
"$REPLAY" events "$T_TMP/conv.db" | tail -n +2 | cmp -s - "$T_TMP/old.csv" &&
	pass events_convert_same || fail events_convert_same "events differ after conversion"
expect_exit events_convert_again 0 "$REPLAY" events --convert "$T_TMP/conv.db"
expect_match events_convert_again_msg 'current format already' "$T_OUT"
"$REPLAY" replay "$T_TMP/conv.db" 2>&1 | norm >"$T_TMP/r_conv"
cmp -s "$T_TMP/r_old" "$T_TMP/r_conv" && pass events_convert_replays ||
	fail events_convert_replays "$(diff "$T_TMP/r_old" "$T_TMP/r_conv" | head -5)"

t_done
