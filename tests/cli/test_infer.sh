#!/usr/bin/env bash
# Hypothesis inference in validate, on the synthetic page-cache trace.
#
# synth's "kernel" is a break simulator that places each window's visits at
# one order inside the window; inference keeps every order an update could
# have seen (branching on its own path's visits) and lets the kernel's later
# memcg_flush_stats values prune them, so with the right policy it explains
# every compared value whatever the flush model: even 'window', whose plain
# replay misses them all (test_replay.sh).  With a wrong policy no order
# helps: under break the busy leaf turns flushable and stops the walk, so the
# kernel's root stays at 0 between flushes, while continue and legacy keep
# crediting the root (continue skips the flushable leaf, legacy walks every
# ancestor), so the root's reads differ from the kernel's: clearly lower.
. "$(dirname "$0")/../lib.sh"

PC=$T_TMP/pc.db
if ! "$REPLAY" synth --scenario pagecache --duration 4 -o "$PC" -q >/dev/null 2>&1; then
	skip validate_infer "synth --scenario pagecache failed"
	t_done
fi

rate() {	# rate FIELD POLICY MODEL
	cp "$PC" "$T_TMP/r.db"
	# synth's windows are long and full of updates: 64 orders suffice and keep it quick
	"$REPLAY" validate "$T_TMP/r.db" --policy "$2" --flush-model "$3" --format json -n 0 -H 64 \
		>"$T_TMP/r.json" 2>/dev/null
	sqlite3 :memory: "SELECT json_extract(readfile('$T_TMP/r.json'), '\$.$1')"
}

r_break=$(rate stats_updates_match_rate break spread)
r_window=$(rate stats_updates_match_rate break window)
r_window_plain=$(rate stats_updates_match_plain_rate break window)
r_cont=$(rate stats_updates_match_rate continue spread)
r_legacy=$(rate stats_updates_match_rate legacy spread)
echo "# inferred match rate: break $r_break (window model $r_window, plain $r_window_plain)," \
	"continue $r_cont, legacy $r_legacy"
awk "BEGIN { exit !(${r_break:-0} == 1.0) }" && pass infer_break_exact ||
	fail infer_break_exact "break $r_break"
awk "BEGIN { exit !(${r_window:-0} == 1.0 && ${r_window_plain:-1} < 1.0) }" &&
	pass infer_beats_plain_window || fail infer_beats_plain_window "$r_window vs plain $r_window_plain"
awk "BEGIN { exit !(${r_cont:-1} < 0.5 && ${r_legacy:-1} < 0.5) }" &&
	pass infer_discriminates_policies ||
	fail infer_discriminates_policies "continue $r_cont, legacy $r_legacy"
max=$(sqlite3 :memory: "SELECT json_extract(readfile('$T_TMP/r.json'), '\$.max_hypotheses')")
[ "${max:-0}" -ge 1 ] && [ "${max:-0}" -le 64 ] && pass infer_cap_respected ||
	fail infer_cap_respected "max_hypotheses $max with -H 64"

# a match below --min-match exits 10 (MATCH), its message after the report
# it judges when both go to one file (stdout is flushed before a message)
cp "$PC" "$T_TMP/m.db"
"$REPLAY" validate "$T_TMP/m.db" --policy continue -H 64 -n 0 >"$T_TMP/m.txt" 2>&1
code=$?
[ "$code" = 10 ] && pass infer_min_match_exit || fail infer_min_match_exit "exit $code"
expect_match infer_min_match_msg_last '^memcg-replay: .*m.db: stats_updates match rate 0\.[0-9]+ below --min-match 0\.9990$' \
	"$(tail -n 1 "$T_TMP/m.txt")"
expect_match infer_min_match_report_first '^policy continue, ' "$(head -n 1 "$T_TMP/m.txt")"

# --max-hypotheses bounds what is kept, and is checked
cp "$PC" "$T_TMP/h.db"
expect_exit infer_cap_flag 0 "$REPLAY" validate "$T_TMP/h.db" --max-hypotheses 4 -r 0 -f json -n 0 &&
	expect_match infer_cap_flag_kept '"max_hypotheses":[1-4],' "$T_OUT"
expect_exit infer_cap_flag_zero 2 "$REPLAY" validate "$T_TMP/h.db" --max-hypotheses 0
expect_match infer_cap_flag_zero_msg 'max-hypotheses' "$T_ERR"
expect_exit infer_cap_flag_junk 2 "$REPLAY" validate "$T_TMP/h.db" -H 12x
# validate infers by itself: the inferred model is for replay only
expect_exit infer_model_refused 2 "$REPLAY" validate "$T_TMP/h.db" -m inferred
expect_match infer_model_refused_msg 'validate always infers' "$T_ERR"

# replay's default on a synthetic trace is spread, synth's own placement: no
# inference pass (on a recording with windows the default is inferred)
expect_exit infer_replay_default_synth 0 "$REPLAY" replay "$T_TMP/h.db" -p break -s 0
grep -q '^Inferred order' <<<"$T_OUT" && fail infer_replay_default_synth_msg "inferred: $T_OUT" ||
	pass infer_replay_default_synth_msg
got=$(sqlite3 "$T_TMP/h.db" "SELECT flush_model FROM runs ORDER BY run_id DESC LIMIT 1")
[ "$got" = spread ] && pass infer_replay_default_synth_row || fail infer_replay_default_synth_row "$got"
# -m inferred infers there too, and says so
expect_exit infer_replay_model 0 "$REPLAY" replay "$T_TMP/h.db" -p break -s 0 -m inferred -H 64
expect_match infer_replay_model_msg '^Inferred order: [0-9]+ updates' "$T_OUT"
# ... and what the cap dropped, which synth's long windows make it drop
expect_match infer_replay_capped_msg \
	'^The inference kept at most 64 orders at once \(-H\) and dropped up to [1-9][0-9]* others' "$T_OUT"
# said only where it dropped any: not on the seed race's one window
"$REPLAY" synth --scenario seed-race -o "$T_TMP/seed.db" -q ||
	fail infer_replay_uncapped_synth "synth --scenario seed-race failed"
expect_exit infer_replay_uncapped 0 "$REPLAY" replay "$T_TMP/seed.db" -p break -s 0 -m inferred
expect_match infer_replay_uncapped_msg '^Inferred order: 1 updates' "$T_OUT"
grep -q '^The inference kept' <<<"$T_OUT" && fail infer_replay_uncapped_quiet "$T_OUT" ||
	pass infer_replay_uncapped_quiet
got=$(sqlite3 "$T_TMP/h.db" "SELECT flush_model FROM runs ORDER BY run_id DESC LIMIT 1")
[ "$got" = inferred ] && pass infer_replay_run_row || fail infer_replay_run_row "$got"
# with the inferred order break reproduces the kernel's values at every compared read
bad=$(sqlite3 "$T_TMP/h.db" "SELECT count(*) FROM (SELECT * FROM reads
	WHERE run_id = (SELECT max(run_id) FROM runs) ORDER BY ts
	LIMIT -1 OFFSET (SELECT skipped_before_sync FROM validation LIMIT 1))
	WHERE sim_stats_updates != kernel_stats_updates")
[ "$bad" = 0 ] && pass infer_replay_reproduces_kernel || fail infer_replay_reproduces_kernel "$bad reads differ"

# The cap keeps the orders nearest the spread model's times, and the spread
# model's own order costs nothing: on a fleet trace whose visits synth placed
# as spread does (1000 cgroups, 8 CPUs, 100 updates on each in a window), the
# inference at a cap of 16 keeps that order through every window and matches
# every compared read, as the plain spread replay does.  A cost that charged
# a visit from the order's last decision, whatever that decision's path, made
# spread's order dearer than orders that leave their visits for later, and
# the cap dropped it: 48 of 56.
SP=$T_TMP/spread.db
if "$REPLAY" synth --scenario fleet --cpus 8 --cgroups 1000 --window-updates 100 --events 128000 \
	--reader-ms 3.2 --period-ms 6.4 -o "$SP" -q >/dev/null 2>&1; then
	expect_exit infer_cap_keeps_spread 0 "$REPLAY" validate -q -H 16 -n 0 -f json "$SP"
	m=$(sqlite3 :memory: "SELECT json_extract('$T_OUT', '\$.stats_updates_match') || ' ' ||
		json_extract('$T_OUT', '\$.stats_updates_match_plain') || ' ' ||
		json_extract('$T_OUT', '\$.compared')")
	read -r got plain cmp <<<"$m"
	[ "${cmp:-0}" -gt 40 ] && [ "$got" = "$cmp" ] && [ "$plain" = "$cmp" ] &&
		pass infer_cap_keeps_spread_match ||
		fail infer_cap_keeps_spread_match "inferred $got, plain $plain of $cmp"
else
	fail infer_cap_keeps_spread "synth --scenario fleet failed"
fi
t_done
