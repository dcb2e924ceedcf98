#!/usr/bin/env bash
# tests/cli/test_event_check.sh - every event is checked as it is read
# (db_event_check()): an unknown kind, cgroup id 0 or negative, an item beyond
# any stat enum, a lock's target CPU beyond the possible ones.  Each reader
# (info, replay, validate, report, events) exits with the one documented code
# (17, or 9 for a CPU) and names the event (cpu, seq, ts or the row) and the
# value.  Both formats: rows of the previous format's events table, damaged
# with SQL, and chunks of the store, crafted here byte by byte (db/store.h).
# Before: id 0 on a flush gave "Cannot allocate memory" from replay and exit 0
# from info and events; a huge item exit 0 from all; an unknown kind in a
# chunk exit 15 (CORRUPT).  val and ts: tests/cli/test_event_values.sh.
source "$(dirname "$0")/../lib.sh"
cd "$T_TMP" || exit 1
command -v sqlite3 >/dev/null || { skip event_check "no sqlite3 shell"; t_done; }

"$REPLAY" synth -s seed-race -o good.db -q || fail setup "synth failed"

# readers NAME DB CODE REGEX: every reader exits CODE saying REGEX
readers() {
	local cmd
	for cmd in info replay validate report events; do
		expect_exit "$1_$cmd" "$3" timeout 30 "$REPLAY" "$cmd" "$2" &&
			expect_match "$1_${cmd}_msg" "$4" "$T_ERR"
	done
}

# ---- rows (the previous format): seed-race's row 2 is a flush on cpu 0 (seq 0,
# ts 2000000), row 1 a lruvec update on cpu 2, row 3 a rstat lock on cpu 0
cp good.db rows.db && as_rows rows.db || fail rows_setup "events --table"
[ "$(sqlite3 rows.db "SELECT kind, cpu, seq, ts FROM events WHERE rowid = 2")" = "4|0|0|2000000" ] ||
	fail rows_setup "row 2 is not the flush this test expects"
row() { cp rows.db "$1.db"; sqlite3 "$1.db" "$2" || fail "$1" "sqlite3: $2"; }
# the inferred model's prepass reads the events too: before the replay (one
# thread) and beside it (two), from its own reader; the same code and message
inferred() {
	local j
	for j in 1 2; do
		expect_exit "$1_inferred_j$j" "$3" timeout 30 "$REPLAY" replay -m inferred -j "$j" "$2" &&
			expect_match "$1_inferred_j${j}_msg" "$4" "$T_ERR"
	done
}
row r_kind11 "UPDATE events SET kind = 11 WHERE rowid = 2"
readers r_kind11 r_kind11.db 17 "event cpu 0 seq 0 ts 2000000: kind 11 is not a known kind"
inferred r_kind11 r_kind11.db 17 "event cpu 0 seq 0 ts 2000000: kind 11 is not a known kind"
row r_kind0 "UPDATE events SET kind = 0 WHERE rowid = 2"
readers r_kind0 r_kind0.db 17 "event cpu 0 seq 0 ts 2000000: kind 0 is not a known kind"
row r_kind257 "UPDATE events SET kind = 257 WHERE rowid = 2"
readers r_kind257 r_kind257.db 17 "events row 2 \(cpu 0 seq 0\): kind 257"
row r_flush_id0 "UPDATE events SET id = 0 WHERE rowid = 2"
readers r_flush_id0 r_flush_id0.db 17 "event cpu 0 seq 0 ts 2000000 \(memcg_flush_stats\): cgroup id 0 is not"
inferred r_flush_id0 r_flush_id0.db 17 "event cpu 0 seq 0 ts 2000000 \(memcg_flush_stats\): cgroup id 0 is not"
row r_id_negative "UPDATE events SET id = -5 WHERE rowid = 2"
readers r_id_negative r_id_negative.db 17 "ts 2000000 \(memcg_flush_stats\): cgroup id -5 is not"
row r_item_huge "UPDATE events SET item = 2000000000 WHERE rowid = 1"
readers r_item_huge r_item_huge.db 17 "event cpu 2 seq 0 ts 1000000 \(mod_memcg_lruvec_state\): item 2000000000 out of range"
row r_item_negative "UPDATE events SET item = -7 WHERE rowid = 1"
readers r_item_negative r_item_negative.db 17 "item -7 out of range"
# 2^32 + 19 would be item 19 once cut to the field's 32 bits
row r_item_wide "UPDATE events SET item = 4294967315 WHERE rowid = 1"
readers r_item_wide r_item_wide.db 17 "events row 1 \(cpu 2 seq 0\): kind 2 item 4294967315"
row r_target "UPDATE events SET item = 4 WHERE rowid = 3"
readers r_target r_target.db 9 "\(cgroup_rstat_locked\): target cpu 4 is neither -1 nor below nr_cpus_possible 4"

# ---- chunks: one more chunk on cpu 0 after its last (ts 7040999, seq 23)
# holding one event, in the store's version 2 layout (synth writes it): the
# magic byte, ten column widths, all 0, so each column is its base alone: ten
# little-endian u64 bases, ts and seq as deltas (0), kind, id, item, val 1,
# pid 100, aux, level, flags 0
[ "$(sqlite3 good.db "SELECT max(last_ts), max(first_seq + count) FROM event_chunks WHERE cpu = 0")" = "7040999|24" ] ||
	fail chunk_setup "cpu 0's chunks are not what this test expects"
[ "$(sqlite3 good.db "SELECT value FROM meta WHERE key = 'store_version'")" = 2 ] ||
	fail chunk_setup "good.db's store is not of version 2"
command -v zstd >/dev/null && command -v python3 >/dev/null || { skip event_check_chunks "no zstd or python3"; t_done; }
# chunk NAME KIND ID ITEM: good.db plus that chunk, at ts 8000000, seq 24
chunk() {
	python3 - "$2" "$3" "$4" >"$1.raw" <<'PY' || fail "$1" "python3"
import struct, sys
kind, cid, item = (int(a) for a in sys.argv[1:4])
bases = [0, 0, kind, cid, item, 1, 100, 0, 0, 0]
rec = bytes([0xc2]) + bytes(10) + b"".join(struct.pack("<Q", b & (2**64 - 1)) for b in bases)
sys.stdout.buffer.write(rec)
PY
	zstd -q -f "$1.raw" -o "$1.zst" || fail "$1" "zstd"
	cp good.db "$1.db"
	sqlite3 "$1.db" "INSERT INTO event_chunks (cpu, first_ts, last_ts, first_seq, count, kinds,
		raw_bytes, data) VALUES (0, 8000000, 8000000, 24, 1, 1 << $2, $(stat -c %s "$1.raw"),
		readfile('$1.zst'))" || fail "$1" "sqlite3 insert"
}
# the crafting itself is right: a good event in a crafted chunk reads
chunk c_good 4 1 0
expect_exit c_good_info 0 "$REPLAY" info c_good.db &&
	expect_match c_good_count "memcg_flush_stats +5\b" "$T_OUT"
chunk c_flush_id0 4 0 0
readers c_flush_id0 c_flush_id0.db 17 "event cpu 0 seq 24 ts 8000000 \(memcg_flush_stats\): cgroup id 0 is not"
chunk c_id_negative 1 -5 19
readers c_id_negative c_id_negative.db 17 "event cpu 0 seq 24 ts 8000000 \(mod_memcg_state\): cgroup id -5 is not"
chunk c_item_huge 3 1 70000
readers c_item_huge c_item_huge.db 17 "event cpu 0 seq 24 ts 8000000 \(count_memcg_events\): item 70000 out of range"
chunk c_target 7 1 4
readers c_target c_target.db 9 "target cpu 4 is neither -1"
# a kind column may hold kinds 11 and up: refused as any field out of range,
# naming the event (17; the decoder refused the chunk as corrupt, 15, before)
chunk c_kind11 11 1 0
readers c_kind11 c_kind11.db 17 "event cpu 0 seq 24 ts 8000000: kind 11 is not a known kind \[1, 10\]"
chunk c_kind15 15 1 0
readers c_kind15 c_kind15.db 17 "event cpu 0 seq 24 ts 8000000: kind 15 is not a known kind"
chunk c_kind0 0 1 0
readers c_kind0 c_kind0.db 17 "event cpu 0 seq 24 ts 8000000: kind 0 is not a known kind"
t_done
