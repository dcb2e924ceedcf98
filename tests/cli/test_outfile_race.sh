#!/usr/bin/env bash
# tests/cli/test_outfile_race.sh - the output policy (cli/outfile.h) against
# other processes: of two writers of one path the one that publishes second
# fails and leaves the first one's file; a database another process is
# writing (a replay, holding its lock and journal) is not replaced and its
# journal not touched; and after a writer interrupted mid-transaction
# (replay, events --table) the read-only readers read the file.
#
# Each race is made exact with SIGSTOP: a writer is stopped once it is where
# the race needs it (its temporary file there, the replay inside its write
# transaction), that is checked while it is stopped, and the other process
# runs then.  A writer that finished before it could be stopped makes its
# check a SKIP, never a FAIL.
source "$(dirname "$0")/../lib.sh"
cd "$T_TMP" || exit 1

same_file() { if cmp -s "$2" "$3"; then pass "$1"; else fail "$1" "$2 changed"; fi; }
no_tmp() {
	local left
	left=$(ls -a | grep -E -- '\.tmp-' | tr '\n' ' ')
	if [ -z "$left" ]; then pass "$1"; else fail "$1" "left behind: $left"; fi
}

# stop_when PID CMD...: stop PID once CMD succeeds, CMD still true while it
# is stopped; false if PID ended first.  Polled: the condition is exact.
stop_when() {
	local pid=$1
	shift
	while kill -0 "$pid" 2>/dev/null; do
		if "$@"; then
			kill -STOP "$pid"
			"$@" && return 0
			kill -CONT "$pid"
		fi
		sleep 0.01
	done
	return 1
}
# started PID NAME: PID's temporary file for NAME exists
started() { [ -e ".$2.tmp-$1" ]; }
# hot DB: DB's rollback journal holds pages the writer has written into DB
hot() { [ "$(head -c 4 "$1-journal" 2>/dev/null | od -An -tx1 | tr -d ' ')" = d9d505f9 ]; }
# journal DB: a writer is inside its transaction
journal() { [ -e "$1-journal" ]; }
bg_pid=
t_on_exit '[ -n "$bg_pid" ] && kill -CONT $bg_pid 2>/dev/null && kill $bg_pid 2>/dev/null; true'

# a trace whose synth and replay take long enough to be stopped on the way
"$REPLAY" synth -s fleet --events=3000000 -o big.db -q || fail setup "synth failed"
"$REPLAY" synth -s seed-race -o prev.db -q || fail setup "synth failed"
SLOW=(synth -s fleet --events=3000000 -q)

# 1. a new path: the second to publish fails, the first one's file stays
"$REPLAY" "${SLOW[@]}" -o new.db 2>loser.err &
bg_pid=$!
if stop_when "$bg_pid" started "$bg_pid" new.db && [ ! -e new.db ]; then
	expect_exit race_new_winner 0 "$REPLAY" synth -s seed-race -o new.db -q
	cp new.db winner.copy
	kill -CONT "$bg_pid"
	wait "$bg_pid"
	rc=$?
	bg_pid=
	if [ "$rc" -eq 3 ]; then pass race_new_loser_fails; else fail race_new_loser_fails "exit $rc, wanted 3"; fi
	expect_match race_new_loser_msg "output new.db was created by another process meanwhile" "$(cat loser.err)"
	same_file race_new_winner_kept new.db winner.copy
	no_tmp race_new_no_tmp
else
	wait "$bg_pid"
	bg_pid=
	skip race_new "the first writer finished before it could be stopped"
fi

# 2. an existing path another writer replaced meanwhile: the same
"$REPLAY" "${SLOW[@]}" -o prev.db 2>loser.err &
bg_pid=$!
if stop_when "$bg_pid" started "$bg_pid" prev.db; then
	expect_exit race_replaced_winner 0 "$REPLAY" synth -s seed-race --seed 2 -o prev.db -q
	cp prev.db winner.copy
	kill -CONT "$bg_pid"
	wait "$bg_pid"
	rc=$?
	bg_pid=
	if [ "$rc" -eq 3 ]; then pass race_replaced_loser_fails; else fail race_replaced_loser_fails "exit $rc, wanted 3"; fi
	expect_match race_replaced_loser_msg "output prev.db was replaced by another process meanwhile" \
		"$(cat loser.err)"
	same_file race_replaced_winner_kept prev.db winner.copy
	no_tmp race_replaced_no_tmp
else
	wait "$bg_pid"
	bg_pid=
	skip race_replaced "the first writer finished before it could be stopped"
fi

# 3. synth -o X while replay writes its results into X: refused, the
# replay's journal untouched, and the replay ends well
cp big.db busy.db
"$REPLAY" replay busy.db -q >/dev/null 2>replay.err &
bg_pid=$!
if stop_when "$bg_pid" journal busy.db; then
	expect_exit busy_refused 3 "$REPLAY" synth -s seed-race -o busy.db -q
	expect_match busy_refused_msg "output busy.db is open in another process \(pid $bg_pid\)" "$T_ERR"
	if journal busy.db; then pass busy_journal_kept; else fail busy_journal_kept "busy.db-journal removed"; fi
	kill -CONT "$bg_pid"
	wait "$bg_pid"
	rc=$?
	bg_pid=
	if [ "$rc" -eq 0 ]; then pass busy_replay_ok; else fail busy_replay_ok "replay exit $rc: $(head -c 200 replay.err)"; fi
	expect_exit busy_report 0 "$REPLAY" report busy.db
	no_tmp busy_no_tmp
else
	wait "$bg_pid"
	bg_pid=
	skip busy "the replay finished before it could be stopped"
fi

# 4. Ctrl-C of a writer in the middle of its transaction (its journal hot):
# the read-only readers roll it back and read the file as it was
for w in replay events; do
	cp big.db hot.db
	if [ "$w" = replay ]; then args=(replay hot.db -q); else args=(events --table hot.db); fi
	# a background job of a script ignores SIGINT: give it back its default
	env --default-signal=INT "$REPLAY" "${args[@]}" >/dev/null 2>&1 &
	bg_pid=$!
	if stop_when "$bg_pid" hot hot.db; then
		kill -INT "$bg_pid"
		kill -CONT "$bg_pid"
		wait "$bg_pid"
		rc=$?
		bg_pid=
		if [ "$rc" -eq 130 ]; then pass "sigint_${w}_killed"; else fail "sigint_${w}_killed" "exit $rc, wanted 130"; fi
		# a dead writer's hot journal is nobody's: replaced with its database
		# (else it would be played into the new one), and so is one whose
		# database is gone
		cp hot.db stale.db && cp hot.db-journal stale.db-journal && cp hot.db-journal orphan.db-journal
		expect_exit "sigint_${w}_stale_replaced" 0 "$REPLAY" synth -s seed-race -o stale.db -q
		expect_exit "sigint_${w}_orphan_replaced" 0 "$REPLAY" synth -s seed-race -o orphan.db -q
		if [ -e stale.db-journal ] || [ -e orphan.db-journal ]; then
			fail "sigint_${w}_stale_gone" "a stale journal is left"
		else
			pass "sigint_${w}_stale_gone"
		fi
		# as written: a journal played into it leaves the old file's pages and size
		"$REPLAY" synth -s seed-race -o ref.db -q
		for f in stale orphan; do
			"$REPLAY" info $f.db >/dev/null 2>&1	# plays a journal beside it, if any
			if [ "$(stat -c %s $f.db)" = "$(stat -c %s ref.db)" ] &&
			   cmp -s <("$REPLAY" events $f.db) <("$REPLAY" events ref.db); then
				pass "sigint_${w}_${f}_intact"
			else
				fail "sigint_${w}_${f}_intact" "$f.db is not what synth wrote"
			fi
		done
		rm -f stale.db orphan.db ref.db
		expect_exit "sigint_${w}_info" 0 "$REPLAY" info hot.db
		# nothing of the interrupted replay was committed: no results, said so
		expect_exit "sigint_${w}_report" 18 "$REPLAY" report hot.db
		expect_match "sigint_${w}_report_msg" "no replay results yet" "$T_ERR"
		if [ -e hot.db-journal ]; then fail "sigint_${w}_rolled_back" "hot.db-journal left"; else pass "sigint_${w}_rolled_back"; fi
	else
		wait "$bg_pid"
		bg_pid=
		skip "sigint_$w" "the $w finished before its journal was hot"
	fi
done

# 5. a signal ignored at start (nohup's SIGHUP, a script's background job's
# SIGINT) stays ignored while the output is written: the run goes on
env --ignore-signal=HUP --ignore-signal=INT "$REPLAY" "${SLOW[@]}" -o nohup.db 2>nohup.err &
bg_pid=$!
if stop_when "$bg_pid" started "$bg_pid" nohup.db; then
	kill -HUP "$bg_pid"
	kill -INT "$bg_pid"
	kill -CONT "$bg_pid"
	wait "$bg_pid"
	rc=$?
	bg_pid=
	if [ "$rc" -eq 0 ]; then pass nohup_ignored; else fail nohup_ignored "exit $rc, wanted 0: $(head -c 200 nohup.err)"; fi
	expect_exit nohup_output 0 "$REPLAY" info nohup.db
	no_tmp nohup_no_tmp
else
	wait "$bg_pid"
	bg_pid=
	skip nohup "the writer finished before it could be stopped"
fi
t_done
