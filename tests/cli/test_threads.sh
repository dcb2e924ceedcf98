#!/usr/bin/env bash
# replay --threads: one thread and several give the same rows (every result
# table, every column but the run's wall time and start), with the spread model
# and with the inferred one (its prepass, its windows), one policy or several;
# validate --threads: the same report and rows; bad counts are refused.
. "$(dirname "$0")/../lib.sh"

SRC=$T_TMP/fleet.db
# 200 cgroups, 8 CPUs, 50 ms of updates: stranded episodes under break, lock windows
if ! "$REPLAY" synth --scenario fleet --events 50000 --cgroups 200 -o "$SRC" -q >/dev/null 2>&1; then
	skip replay_threads "synth --scenario fleet failed"
	t_done
fi

dump() {	# db: the result rows, the replayed file's name masked
	local db=$1 cols t
	cols=$(sqlite3 "$db" 'PRAGMA table_info(runs)' | cut -d'|' -f2 |
	       grep -vE '^(wall_s|started_at)$' | paste -sd,)
	sqlite3 "$db" "SELECT $cols FROM runs ORDER BY run_id" | sed "s#$db#FILE#g"
	for t in reads read_errors series cgroup_series cgroup_summary item_summary \
		 stranded_episodes; do
		echo "== $t"
		sqlite3 "$db" "SELECT * FROM $t"
	done
}

same_rows() {	# name, replay options...: --threads 1 against 2 and 3
	local name=$1 n
	shift
	cp "$SRC" "$T_TMP/t1.db"
	expect_exit "${name}_threads_1" 0 "$REPLAY" replay -q "$T_TMP/t1.db" --threads 1 "$@" ||
		return
	dump "$T_TMP/t1.db" >"$T_TMP/t1.rows"
	for n in 2 3; do
		cp "$SRC" "$T_TMP/t$n.db"
		expect_exit "${name}_threads_$n" 0 "$REPLAY" replay -q "$T_TMP/t$n.db" --threads "$n" "$@" ||
			continue
		dump "$T_TMP/t$n.db" >"$T_TMP/t$n.rows"
		if cmp -s "$T_TMP/t1.rows" "$T_TMP/t$n.rows"; then
			pass "${name}_threads_${n}_same_rows"
		else
			fail "${name}_threads_${n}_same_rows" "$(diff "$T_TMP/t1.rows" "$T_TMP/t$n.rows" | head -5)"
		fi
	done
}

same_rows spread -p break,continue,legacy -m spread -s 1
# the rows compared hold what threads could reorder: episodes and reads
# (delivered later from the runs' buffers), series samples
got=$(sqlite3 "$T_TMP/t1.db" "SELECT (SELECT count(*) FROM stranded_episodes) > 0,
	(SELECT count(*) FROM reads) > 0, (SELECT count(*) FROM series) > 1000")
[ "$got" = "1|1|1" ] && pass replay_threads_rows_exist || fail replay_threads_rows_exist "$got"
same_rows inferred -p break,continue,legacy -m inferred -H 16 -s 1
same_rows two_runs -p legacy,break -m spread -s 1
# one run: the pass decodes while a thread of its own applies the run
same_rows one_run -p break -m spread -s 1
same_rows one_run_no_series -p break -m spread -s 0
same_rows one_run_inferred -p break -m inferred -H 16 -s 1
# the lock and unlock events the runs' threads take with the updates
# (window_take()) under each model that places visits in a window, and the
# ones the pass keeps: a flush's first lock and last unlock, models that
# flush whole, windows whose unlock is lost
same_rows window -p break,continue,legacy -m window -s 1
same_rows instant -p break,continue,legacy -m instant -s 1
same_rows no_series -p break,continue,legacy -m spread -s 0
# readers every millisecond, on fewer cgroups, their flushes overlapping: the
# requests and last unlocks the runs' threads take (reads_take(), each run
# deciding and ending its reads there) interleave with the ones the pass keeps
# (a request whose pid's last flush is still open, a forced one): about half
# of the 50 requests each way
SRC_FLEET=$SRC SRC=$T_TMP/readers.db
if "$REPLAY" synth --scenario fleet --events 50000 --cgroups 60 --reader-ms 1 --flush-us 1000 \
	--seed 3 -o "$SRC" -q >/dev/null 2>&1; then
	same_rows readers -p break,continue,legacy -m spread -s 1
	got=$(sqlite3 "$T_TMP/t1.db" "SELECT count(*) > 100, count(DISTINCT flushed) = 2 FROM reads")
	[ "$got" = "1|1" ] && pass replay_threads_readers_rows || fail replay_threads_readers_rows "$got"
else
	fail replay_threads_readers "synth --reader-ms 1 failed"
fi
SRC=$SRC_FLEET
if as_rows "$SRC"; then
	# every fifth unlock lost: those windows end by the rule (window.c), serially
	sqlite3 "$SRC" "DELETE FROM events WHERE kind = 6 AND rowid % 5 = 0"
	same_rows lost_unlock -p break,continue,legacy -m spread -s 1
	same_rows lost_unlock_one_run -p break -m spread -s 1
else
	fail replay_threads_as_rows "events --table failed"
fi

# The inferred model's prepass beside the pass (two threads or more) against
# before it (one): windows whose visits fell at hidden times, the cap at 16,
# so the prepass's hypotheses disagree over many events and the pass waits for
# their decisions.  Nothing the prepass decided may reach the pass too late.
HID=$T_TMP/hidden.db
if "$REPLAY" synth --scenario fleet --events 100000 --cgroups 60 --window-updates 40 \
	--hidden-order 1 -o "$HID" -q >/dev/null 2>&1; then
	SRC=$HID same_rows hidden -p break,continue,legacy -m inferred -H 16 -s 1
	SRC=$HID same_rows hidden_one_run -p continue -m inferred -H 16 -s 1
	placed=$(sqlite3 "$T_TMP/t1.db" "SELECT count(*) FROM true_order")
	[ "${placed:-0}" -gt 0 ] && pass replay_threads_hidden_truth ||
		fail replay_threads_hidden_truth "no true_order rows: '$placed'"
	cp "$HID" "$T_TMP/msg.db"
	expect_exit replay_threads_beside_msg_run 0 "$REPLAY" replay -q -m inferred -H 16 -j 2 "$T_TMP/msg.db"
	expect_match replay_threads_beside_msg \
		'^Inferred order: [1-9][0-9]* updates .* beside the replay, which waited [0-9.]+ s for it' "$T_OUT"
	# at a cap of 16 the inference drops orders, and says how many: as many either way
	drop='s/^The inference kept at most 16 orders at once (-H) and dropped up to \([0-9]*\) others: .*/\1/p'
	capped2=$(sed -n "$drop" <<<"$T_OUT")
	cp "$HID" "$T_TMP/msg.db"
	expect_exit replay_threads_before_msg_run 0 "$REPLAY" replay -q -m inferred -H 16 -j 1 "$T_TMP/msg.db"
	expect_match replay_threads_before_msg '^Inferred order: [1-9][0-9]* updates .* in [0-9.]+ s\.$' "$T_OUT"
	capped1=$(sed -n "$drop" <<<"$T_OUT")
	[ "${capped2:-0}" -gt 0 ] && [ "$capped2" = "$capped1" ] && pass replay_threads_capped_msg ||
		fail replay_threads_capped_msg "dropped '$capped2' beside, '$capped1' before"
	# an event damaged late: the prepass, ahead, meets it first beside the pass
	cp "$HID" "$T_TMP/bad.db"
	if as_rows "$T_TMP/bad.db" &&
		sqlite3 "$T_TMP/bad.db" "UPDATE events SET kind = 11 WHERE rowid = 90000"; then
		for n in 1 2 3; do
			expect_exit "replay_threads_hidden_damaged_$n" 17 "$REPLAY" replay -q -m inferred \
				-H 16 -j "$n" "$T_TMP/bad.db" &&
				expect_match "replay_threads_hidden_damaged_${n}_msg" 'kind 11 is not a known kind' "$T_ERR"
		done
	else
		fail replay_threads_hidden_damaged "events --table failed"
	fi
else
	fail replay_threads_hidden "synth --hidden-order failed"
fi

# validate's inference on a thread of its own beside the comparison (two threads)
# against on the pass's own (one): its answer at each flush event reaches the
# comparison before the pass reads that event, so the report and the rows are the
# same, down to the one flush whose order the cap (1) dropped and the cause named
# (with 2 the inference keeps the kernel's order at every flush of this trace, the
# orders that differ only in inert per-CPU counters merged: replay/infer/infer_ahead.c).
VID=$T_TMP/vhidden.db
vrows() { sqlite3 "$1" "SELECT * FROM validation; SELECT * FROM validation_mismatch"; }
if "$REPLAY" synth --scenario fleet --hidden-order 1 --cpus 8 --cgroups 100 --window-updates 10 \
	--events 50000 --reader-ms 0.32 --period-ms 1 -o "$VID" -q >/dev/null 2>&1; then
	for n in 1 2; do
		cp "$VID" "$T_TMP/v$n.db"
		expect_exit "validate_threads_$n" 0 "$REPLAY" validate -q -r 0 -H 1 -j "$n" -f json \
			"$T_TMP/v$n.db" || continue
		{ echo "$T_OUT"; vrows "$T_TMP/v$n.db"; } >"$T_TMP/v$n.out"
	done
	if cmp -s "$T_TMP/v1.out" "$T_TMP/v2.out"; then
		pass validate_threads_same
	else
		fail validate_threads_same "$(diff "$T_TMP/v1.out" "$T_TMP/v2.out" | head -5)"
	fi
	grep -q '"orders dropped by the cap":[1-9]' "$T_TMP/v1.out" &&
		grep -q '"hypotheses_capped":[1-9]' "$T_TMP/v1.out" && pass validate_threads_capped ||
		fail validate_threads_capped "$(head -c 300 "$T_TMP/v1.out")"
	# an event damaged late: with two threads the inference may meet it first
	if as_rows "$VID" && sqlite3 "$VID" "UPDATE events SET kind = 11 WHERE rowid = 45000"; then
		for n in 1 2; do
			expect_exit "validate_threads_damaged_$n" 17 "$REPLAY" validate -q -j "$n" "$VID" &&
				expect_match "validate_threads_damaged_${n}_msg" 'kind 11 is not a known kind' \
					"$T_ERR"
		done
	else
		fail validate_threads_damaged "events --table failed"
	fi
else
	fail validate_threads "synth --hidden-order failed"
fi
for bad in 0 65 x; do
	expect_exit "validate_threads_bad_$bad" 2 "$REPLAY" validate "$SRC" --threads "$bad"
done

for bad in 0 65 x -1; do
	expect_exit "replay_threads_bad_$bad" 2 "$REPLAY" replay "$SRC" --threads "$bad"
done
expect_match replay_threads_help 'threads' "$("$REPLAY" replay --help)"
t_done
