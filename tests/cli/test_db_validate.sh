#!/usr/bin/env bash
# tests/cli/test_db_validate.sh - a database whose own values are out of range
# or whose hierarchy is broken is refused when opened (db/validate.c): exit 17
# from every reader, one line naming the row and the value, and never a hang
# (a parent cycle used to loop forever in replay's parent walk).
source "$(dirname "$0")/../lib.sh"
cd "$T_TMP" || exit 1

"$REPLAY" synth -s seed-race -o good.db -q || fail setup "synth failed"
command -v sqlite3 >/dev/null || { skip db_validate "no sqlite3 shell"; t_done; }

# case NAME REGEX SQL: every reader exits 17 on the damaged copy, saying REGEX
case_() {
	local name=$1 re=$2 sql=$3 cmd
	cp good.db "$name.db"
	sqlite3 "$name.db" "$sql" || { fail "$name" "sqlite3: $sql"; return; }
	for cmd in info replay validate report; do
		if expect_exit "${name}_$cmd" 17 timeout 20 "$REPLAY" "$cmd" "$name.db"; then
			expect_match "${name}_${cmd}_msg" "$re" "$T_ERR"
		fi
	done
}

# the hierarchy: seed-race's cgroups are / (id 1) and one leaf below it
leaf=$(sqlite3 good.db "SELECT id FROM cgroups WHERE parent != 0 LIMIT 1")
case_ self_parent "row id $leaf: its own parent" "UPDATE cgroups SET parent = id WHERE id = $leaf"
case_ root_cycle "parent .* closes a cycle" \
	"UPDATE cgroups SET parent = $leaf, level = -1 WHERE id = 1; UPDATE cgroups SET level = -1"
case_ unknown_parent "row id $leaf: parent 999999 is not in the table" \
	"UPDATE cgroups SET parent = 999999 WHERE id = $leaf"
case_ level "row id $leaf: level 5, but its parent 1 is at level 0" \
	"UPDATE cgroups SET level = 5 WHERE id = $leaf"
# attached under the root for lack of its parent (import without the recording
# host's tree): it keeps its traced level, and the file is good
cp good.db unknown_parent_level.db
sqlite3 unknown_parent_level.db "UPDATE cgroups SET level = 3, parent_unknown = 1 WHERE id = $leaf"
for cmd in info replay; do
	expect_exit "unknown_parent_level_$cmd" 0 timeout 20 "$REPLAY" "$cmd" unknown_parent_level.db
done
case_ negative_id "row id -5: not a cgroup id" \
	"INSERT INTO cgroups VALUES (-5, 1, '/x', 1, -1, -1, 0)"

# meta ranges
case_ batch_zero "meta batch_size = 0: out of range" "UPDATE meta SET value = '0' WHERE key = 'batch_size'"
case_ batch_negative "meta batch_size = -64: out of range" "UPDATE meta SET value = '-64' WHERE key = 'batch_size'"
case_ batch_huge "meta batch_size = 9223372036854775807: out of range" \
	"UPDATE meta SET value = '9223372036854775807' WHERE key = 'batch_size'"
case_ batch_text "meta batch_size = 'lots': not an integer" "UPDATE meta SET value = 'lots' WHERE key = 'batch_size'"
case_ page_zero "meta page_size = 0: out of range" "UPDATE meta SET value = '0' WHERE key = 'page_size'"
case_ page_odd "meta page_size = 4095: not a power of two" "UPDATE meta SET value = '4095' WHERE key = 'page_size'"
case_ page_huge "meta page_size = 1073741824: out of range" \
	"UPDATE meta SET value = '1073741824' WHERE key = 'page_size'"
case_ online_zero "meta nr_cpus_online = 0: out of range" "UPDATE meta SET value = '0' WHERE key = 'nr_cpus_online'"
case_ online_above "meta nr_cpus_online = 5: out of range \[1, 4\]" \
	"UPDATE meta SET value = '5' WHERE key = 'nr_cpus_online'"
case_ possible_huge "meta nr_cpus_possible = 100000: out of range" \
	"UPDATE meta SET value = '100000' WHERE key = 'nr_cpus_possible'"

# an event naming cgroup id 0 (the id tables' empty key: replay used to fail
# with "Cannot allocate memory") or an id beyond 2^63: 17 from the event
# readers, and from events --convert, which reads the rows as they do
# (tests/cli/test_event_check.sh: every field, every reader, both formats)
for ev in "id = 0 WHERE kind = 4" "id = -5 WHERE rowid = 5"; do
	name="event_${ev%% WHERE*}"; name=${name// /}
	cp good.db "$name.db"
	"$REPLAY" events --table "$name.db" >/dev/null
	sqlite3 "$name.db" "UPDATE events SET $ev; DROP TABLE event_chunks"
	expect_exit "${name}_convert" 17 "$REPLAY" events --convert "$name.db"
	for cmd in replay validate; do
		expect_exit "${name}_$cmd" 17 timeout 20 "$REPLAY" "$cmd" "$name.db"
	done
done

# a damaged SQLite page: exit 15, which every reader's --help lists
cp good.db corrupt.db
sqlite3 corrupt.db "PRAGMA journal_mode = DELETE" >/dev/null
printf '\377%.0s' $(seq 600) | dd of=corrupt.db bs=1 seek=8192 conv=notrunc 2>/dev/null
for cmd in info replay validate report; do
	expect_exit "corrupt_$cmd" 15 timeout 20 "$REPLAY" "$cmd" corrupt.db
	expect_match "corrupt_${cmd}_help" "^ +15 +.*corrupt" "$("$REPLAY" "$cmd" --help)"
done

# the good file and the real recordings still open
expect_exit good_info 0 "$REPLAY" info good.db
t_done
