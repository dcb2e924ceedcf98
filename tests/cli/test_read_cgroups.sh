#!/usr/bin/env bash
# meta read_cgroups: the cgroups a trace reads (non-forced memcg_flush_stats),
# stored by the writer (synth, import, capture) with the events they cover, so
# that replay picks its series cgroups without decoding the events twice.  It
# must be the set the events hold; a file without it, or whose set does not
# cover all of its events (events added by an older build), gives the same
# rows through the decoding pass.
. "$(dirname "$0")/../lib.sh"

SRC=$T_TMP/fleet.db
if ! "$REPLAY" synth --scenario fleet --events 50000 --cgroups 200 -o "$SRC" -q >/dev/null 2>&1; then
	skip read_cgroups "synth --scenario fleet failed"
	t_done
fi
q() { sqlite3 "$1" "$2"; }

# the set the events hold, from the typed rows
cp "$SRC" "$T_TMP/rows.db"
expect_exit read_cgroups_table 0 "$REPLAY" events "$T_TMP/rows.db" --table
want=$(q "$T_TMP/rows.db" "SELECT group_concat(id) FROM (SELECT DISTINCT id FROM events
	WHERE kind = 4 AND flags & 1 = 0 ORDER BY id)")
expect_match read_cgroups_some '^1,[0-9,]+$' "$want"
expect_match read_cgroups_synth "^$want\$" \
	"$(q "$SRC" "SELECT value FROM meta WHERE key = 'read_cgroups'")"
expect_match read_cgroups_covers "^$(q "$SRC" "SELECT sum(count) FROM event_chunks")\$" \
	"$(q "$SRC" "SELECT value FROM meta WHERE key = 'read_cgroups_events'")"

# replay: the series cgroups, and so every row, the same with the stored set
# as without it, or with a set that does not cover the file's events
dump() {
	local t
	for t in reads series cgroup_series cgroup_summary item_summary; do
		echo "== $t"
		q "$1" "SELECT * FROM $t"
	done
}
replay_rows() {	# name, sql to damage the copy with (or empty)
	cp "$SRC" "$T_TMP/$1.db"
	[ -z "$2" ] || q "$T_TMP/$1.db" "$2"
	expect_exit "read_cgroups_replay_$1" 0 "$REPLAY" replay -q "$T_TMP/$1.db" -p break -m spread -s 2 ||
		return
	dump "$T_TMP/$1.db" >"$T_TMP/$1.rows"
}
replay_rows stored ""
expect_match read_cgroups_series '^[1-9][0-9]*$' "$(q "$T_TMP/stored.db" "SELECT count(DISTINCT cgroup_id) FROM series")"
for c in "none|DELETE FROM meta WHERE key LIKE 'read_cgroups%'" \
	 "short|UPDATE meta SET value = value - 1 WHERE key = 'read_cgroups_events'" \
	 "stale|UPDATE meta SET value = '1' WHERE key = 'read_cgroups';
		UPDATE meta SET value = value + 1 WHERE key = 'read_cgroups_events'" \
	 "bad|UPDATE meta SET value = 'x' WHERE key = 'read_cgroups'"; do
	name=${c%%|*}
	replay_rows "$name" "${c#*|}"
	if cmp -s "$T_TMP/stored.rows" "$T_TMP/$name.rows"; then
		pass "read_cgroups_same_rows_$name"
	else
		fail "read_cgroups_same_rows_$name" "$(diff "$T_TMP/stored.rows" "$T_TMP/$name.rows" | head -3)"
	fi
done

# import stores it too (this recording reads nothing: an empty set)
DAT=$(dirname "$0")/../data/v7-2cpu.dat
if "$REPLAY" import "$DAT" -o "$T_TMP/imp.db" >/dev/null 2>&1; then
	expect_match read_cgroups_import "^:$(q "$T_TMP/imp.db" "SELECT sum(count) FROM event_chunks")\$" \
		"$(q "$T_TMP/imp.db" "SELECT (SELECT value FROM meta WHERE key = 'read_cgroups') || ':' ||
			(SELECT value FROM meta WHERE key = 'read_cgroups_events')")"
else
	skip read_cgroups_import "import of $DAT failed"
fi
t_done
