#!/usr/bin/env bash
# tests/cli/test_report_golden.sh - every output of the report pinned byte for byte:
# report as a table, CSV, JSON and HTML (one database, several, --cgroup, --run,
# --worst, --cost, with and without a calibration), info, replay's end-of-pass
# summary, validate's result and every --help, on synthetic fixtures made here
# (the pagecache scenario, the seed race, a replay --batch/--cpus grid, a small
# fleet).  The expected outputs in tests/data/report/ were written by the build
# before the report was rebuilt on one model (cli/report/): a change of any
# output shows here as a diff.
#
# Normalised before the comparison, and only these: the wall time replay, info,
# validate and the HTML page's cost table print ("in 0.00 s", info's wall and
# started columns, the page's replay column), which depend on the machine and
# the clock.  Everything else (the HTML page
# included) is deterministic for these fixtures.  The commands run in the test's
# directory with relative file names, so no path of the machine shows.
#
# MCR_GOLDEN_WRITE=DIR writes the outputs to DIR instead of comparing (to make
# the expected files from a build whose outputs are right).
source "$(dirname "$0")/../lib.sh"

EXP=$TOP/tests/data/report
W=${MCR_GOLDEN_WRITE:-}
cd "$T_TMP" || exit 1

# golden NAME CMD...: stdout, then stderr and the exit code, normalised
golden() {
	local name=$1 rc
	shift
	"$@" >"$T_TMP/g.out" 2>"$T_TMP/g.err"
	rc=$?
	{
		cat "$T_TMP/g.out"
		if [ -s "$T_TMP/g.err" ] || [ "$rc" != 0 ]; then
			echo "--- stderr"
			cat "$T_TMP/g.err"
			echo "--- exit $rc"
		fi
	} | sed -E -e 's/ in [0-9]+\.[0-9]+ s([;.])/ in W s\1/' \
		-e 's/^( +[0-9]+  (replay|validate) .* )[0-9]+\.[0-9]+ s  [0-9TZ:-]+/\1W s  DATE/' \
		-e 's|<td class="n">[0-9]+\.[0-9] s</td></tr>$|<td class="n">W s</td></tr>|' \
		>"$T_TMP/g.norm"
	if [ -n "$W" ]; then
		cp "$T_TMP/g.norm" "$W/$name"
	elif [ ! -f "$EXP/$name" ]; then
		fail "golden_$name" "no expected output $EXP/$name"
	elif cmp -s "$T_TMP/g.norm" "$EXP/$name"; then
		pass "golden_$name"
	else
		fail "golden_$name" "$(diff "$EXP/$name" "$T_TMP/g.norm" | head -8)"
	fi
}

[ -n "$W" ] && mkdir -p "$W"

# ---- fixtures ----
CAL=cal.json
#              samples plain pcpu atomic contended check step cold
t_calibration "$CAL" 3 0.25 1 10 50 0.5 2 100
"$REPLAY" synth -q --scenario pagecache --duration 2 --period-ms 500 -o pc.db || fail synth pagecache
"$REPLAY" synth -q --scenario seed-race -o sr.db || fail synth seed-race
"$REPLAY" synth -q --scenario seed-race -o grid.db || fail synth grid
"$REPLAY" synth -q --scenario fleet --cgroups 16 --events 4000 --rate 100000 --reader-ms 2 -o fl.db || fail synth fleet

golden replay_pc "$REPLAY" replay -q -m spread pc.db
golden validate_sr "$REPLAY" validate -q sr.db -n 0 -r 0
golden validate_sr_json "$REPLAY" validate -q sr.db -n 3 -r 0 --format json
golden replay_sr "$REPLAY" replay -q sr.db
golden replay_sr_break "$REPLAY" replay -q --policy break sr.db
golden replay_grid "$REPLAY" replay -q --policy break,continue --batch 32,64 --cpus 4,16 grid.db
golden replay_fl "$REPLAY" replay -q fl.db
"$REPLAY" calibrate --from "$CAL" --db sr.db >/dev/null || fail calibrate sr

# ---- one database ----
for db in pc sr grid fl; do
	golden "info_$db" "$REPLAY" info "$db.db"
	for fmt in table csv json html; do
		golden "report_${db}_$fmt" "$REPLAY" report "$db.db" --format "$fmt"
		golden "report_${db}_${fmt}_root" "$REPLAY" report "$db.db" --format "$fmt" --cgroup /
	done
	for fmt in table html; do
		golden "report_${db}_${fmt}_cal" "$REPLAY" report "$db.db" --format "$fmt" --calibration "$CAL"
	done
	for fmt in table csv json; do
		golden "report_${db}_${fmt}_worst" "$REPLAY" report "$db.db" --format "$fmt" --worst
		golden "report_${db}_${fmt}_cost" "$REPLAY" report "$db.db" --format "$fmt" --cost
		golden "report_${db}_${fmt}_cost_cal" "$REPLAY" report "$db.db" --format "$fmt" --cost \
			--calibration "$CAL"
	done
done
golden report_fl_table_leaf "$REPLAY" report fl.db --cgroup "$(sqlite3 fl.db "SELECT path FROM cgroups WHERE level = 2 ORDER BY id LIMIT 1")"
for fmt in table csv json html; do
	golden "report_sr_${fmt}_runs" "$REPLAY" report sr.db --format "$fmt" --run 3,6
	golden "report_grid_${fmt}_runs" "$REPLAY" report grid.db --format "$fmt" --run 1,4,5
done

# ---- several databases: a host column, the fleet summary ----
for fmt in table csv json html; do
	golden "report_multi_$fmt" "$REPLAY" report pc.db sr.db --format "$fmt"
	[ "$fmt" = json ] ||	# the CSV has the same rows
		golden "report_multi3_$fmt" "$REPLAY" report pc.db grid.db fl.db --format "$fmt"
	golden "report_multi_${fmt}_root" "$REPLAY" report sr.db pc.db --format "$fmt" --cgroup /
done
for fmt in table csv json; do
	golden "report_multi_${fmt}_cost" "$REPLAY" report pc.db sr.db --format "$fmt" --cost
	golden "report_multi_${fmt}_worst" "$REPLAY" report sr.db grid.db --format "$fmt" --worst
done

# ---- errors the report refuses with ----
golden report_err_cgroup "$REPLAY" report sr.db --cgroup /nope
golden report_err_run "$REPLAY" report sr.db --run 99
golden report_err_format "$REPLAY" report sr.db --format xml

# ---- every --help ----
golden help "$REPLAY" --help
for cmd in synth import replay validate report info events calibrate; do
	golden "help_$cmd" "$REPLAY" "$cmd" --help
done

exit $T_FAILED
