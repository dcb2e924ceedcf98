#!/usr/bin/env bash
# The exit codes are written down once (cli/exit.c): the README's table must be
# that table, row for row, and every command's --help must end with the codes it
# can return, in the words of that table.
source "$(dirname "$0")/../lib.sh"

readme_rows() {
	awk '/^## Exit codes/ { on = 1; next } /^## / { on = 0 } on && /^\|/' "$TOP/README.md"
}

"$REPLAY" --exit-codes >"$T_TMP/table" 2>&1 || fail exit_codes_table "memcg-replay --exit-codes failed"
readme_rows >"$T_TMP/readme"
if [ ! -s "$T_TMP/readme" ]; then
	fail exit_codes_readme "no table under '## Exit codes' in README.md"
elif diff -u "$T_TMP/table" "$T_TMP/readme" >"$T_TMP/diff"; then
	pass exit_codes_readme
else
	fail exit_codes_readme "README.md differs from memcg-replay --exit-codes: $(head -c 600 "$T_TMP/diff")"
fi

# the codes 0..N of sim/base/error.h's enum mcr_exit, each once and in order: a code the enum
# has and the table lacks shows here
last=$(sed -n 's/^[[:space:]]*MCR_EXIT_[A-Z_]*[[:space:]]*=[[:space:]]*\([0-9]*\),.*/\1/p' "$TOP/sim/base/error.h" | sort -n | tail -1)
codes=$(awk -F'|' 'NR > 2 { gsub(/ /, "", $2); printf "%s ", $2 }' "$T_TMP/table")
expect_match exit_codes_complete "^$(seq -s ' ' 0 "$last") $" "$codes"

# help_codes PROGRAM ARGS...: the codes in the "Exit status:" section of its --help
help_codes() {
	"$@" --help 2>&1 | awk '/^Exit status:/ { on = 1; next } on && /^ +[0-9]+  / { printf "%s ", $1 }'
}
# table_codes NAME: the codes whose "returned by" names NAME (or all)
table_codes() {
	awk -F'|' -v n="\`$1\`" 'NR > 2 && ($5 ~ /^ all / || index($5, n)) { gsub(/ /, "", $2); printf "%s ", $2 }' \
		"$T_TMP/table"
}
for cmd in synth import replay validate report info events calibrate; do
	want=$(table_codes "$cmd")
	got=$(help_codes "$REPLAY" "$cmd")
	if [ -n "$got" ] && [ "$got" = "$want" ]; then
		pass "exit_codes_help_$cmd"
	else
		fail "exit_codes_help_$cmd" "--help lists '$got', the table '$want'"
	fi
done
want=$(table_codes memcg-capture)
got=$(help_codes "$CAPTURE")
if [ -n "$got" ] && [ "$got" = "$want" ]; then
	pass exit_codes_help_capture
else
	fail exit_codes_help_capture "--help lists '$got', the table '$want'"
fi
t_done
