#!/usr/bin/env bash
# tests/cli/test_args.sh - numbers and lists on the command line are parsed
# strictly (cli/num.c): an empty string, NaN, infinity, trailing junk, an empty
# or repeated list element is a usage error (exit 2), never a silent default.
source "$(dirname "$0")/../lib.sh"
cd "$T_TMP" || exit 1
"$REPLAY" synth -s seed-race -o t.db -q || fail setup "synth failed"

for v in '' nan NaN inf -inf ' 5' 5x 1e999 -1; do
	expect_exit "replay_sample_ms_'$v'" 2 "$REPLAY" replay --sample-ms "$v" t.db
done
for v in '' nan ' 0.5' 0.5x 2; do
	expect_exit "validate_min_match_'$v'" 2 "$REPLAY" validate --min-match "$v" t.db
done
for v in '' ' 3' 3x -1 nan; do
	expect_exit "validate_mismatches_'$v'" 2 "$REPLAY" validate --mismatches "$v" t.db
done
for v in '' 1,,2 1, ,1 1,1 ' 1' 0 nan; do
	expect_exit "report_run_'$v'" 2 "$REPLAY" report --run "$v" t.db
done
for v in break,break break, ,break '' break,,legacy; do
	expect_exit "replay_policy_'$v'" 2 "$REPLAY" replay --policy "$v" t.db
done
expect_match replay_policy_msg "--policy: 'break,,legacy' has an empty or repeated name" "$T_ERR"
for v in nan inf '' ' 1' 1x 0 -1; do
	expect_exit "capture_duration_'$v'" 2 timeout 10 "$CAPTURE" -o c.db -d "$v"
done
if [ -e c.db ]; then fail capture_duration_no_output "c.db written"; else pass capture_duration_no_output; fi

# what is valid stays valid
expect_exit replay_sample_ms_ok 0 "$REPLAY" replay --sample-ms 0.5 --policy break,legacy t.db
expect_exit validate_ok_args 0 "$REPLAY" validate --min-match 0 --mismatches 3 t.db
expect_exit report_run_ok 0 "$REPLAY" report --run 1,2 t.db
# a short option means one thing in every command: -q is --quiet wherever it exists
cmds=$("$REPLAY" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\)  .*/\1/p')
for c in $cmds; do
	q=$("$REPLAY" "$c" --help | grep -E '^  -q, ' || true)
	[ -z "$q" ] || [[ $q == "  -q, --quiet "* ]] && pass "${c}_q_is_quiet" ||
		fail "${c}_q_is_quiet" "$q"
done
q=$("$CAPTURE" --help | grep -E '^  -q, ' || true)
[ -z "$q" ] || [[ $q == "  -q, --quiet "* ]] && pass capture_q_is_quiet || fail capture_q_is_quiet "$q"

t_done
