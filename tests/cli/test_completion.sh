#!/usr/bin/env bash
# tests/cli/test_completion.sh - bash completion (cli/completion/): loaded with
# bash-completion as an installed file would be, then driven the way bash
# drives it (COMP_WORDS, COMP_CWORD, COMP_LINE).  Every name it must offer is
# read here from the programs' --help, so the test follows their changes.
source "$(dirname "$0")/../lib.sh"

BC=/usr/share/bash-completion/bash_completion
[ -f "$BC" ] || { skip completion "bash-completion not installed (make deps)"; exit 0; }
# bash-completion reads unset variables: source it without -u
set +u
source "$BC"
source "$TOP/cli/completion/memcg-replay"
source "$TOP/cli/completion/memcg-capture"
PATH=$BIN:$PATH

# comp FUNCTION WORD...: complete the last word; COMPREPLY sorted, one line
comp() {
	local f=$1
	shift
	COMP_WORDS=("$@") COMP_CWORD=$(($# - 1))
	COMP_LINE="$*" COMP_LINE=${COMP_LINE// = /=} COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	"$f" 2>/dev/null
	printf '%s\n' "${COMPREPLY[@]}" | words
}
words() { tr ' ' '\n' | sed '/^$/d' | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//'; }
same() {	# NAME GOT WANT
	[ -n "$3" ] && [ "$2" = "$3" ] && pass "$1" || fail "$1" "got '$2', wanted '$3'"
}
# names listed under a --help heading: two blanks, a name, two blanks more
listed() { sed -n "/^$1/,/^\$/s/^  \\([a-z][a-z0-9-]*\\)  .*/\\1/p" | words; }
longopts() { grep -oE '^(  -[^- ], |      )--[[:alnum:]-]+=?' | sed 's/.*--/--/' | words; }

complete -p memcg-replay 2>/dev/null | grep -q -- '-F _memcg_replay memcg-replay$' &&
	pass completion_registered_replay || fail completion_registered_replay "$(complete -p memcg-replay 2>&1)"
complete -p memcg-capture 2>/dev/null | grep -q -- '-F _memcg_capture memcg-capture$' &&
	pass completion_registered_capture || fail completion_registered_capture "$(complete -p memcg-capture 2>&1)"

cmds=$("$REPLAY" --help | listed Commands:)
same completion_commands "$(comp _memcg_replay memcg-replay '')" "$(echo "$cmds --help --version" | words)"
same completion_command_prefix "$(comp _memcg_replay memcg-replay re)" \
	"$(words <<<"$cmds" | tr ' ' '\n' | grep '^re' | words)"

for c in $cmds; do
	same "completion_${c}_options" "$(comp _memcg_replay memcg-replay "$c" --)" \
		"$("$REPLAY" "$c" --help | longopts)"
done

rh=$("$REPLAY" replay --help)
pol=$(listed Policies: <<<"$rh")
same completion_policies "$(comp _memcg_replay memcg-replay replay --policy '')" "$pol"
grep -qw continue <<<"$pol" && grep -qw break <<<"$pol" &&
	same completion_policy_list "$(comp _memcg_replay memcg-replay replay -p break,co)" "break,continue"
fm=$(listed "Flush models" <<<"$rh")
same completion_flush_models "$(comp _memcg_replay memcg-replay replay -m '')" "$fm"
grep -qw spread <<<"$fm" || fail completion_flush_models_spread "no spread model in: $fm"
same completion_flush_model_eq "$(comp _memcg_replay memcg-replay validate --flush-model = sp)" spread
# values an option's description enumerates: "auto (...), break, legacy, continue"
same completion_validate_policy "$(comp _memcg_replay memcg-replay validate -p '')" \
	"$(words <<<"auto break legacy continue")"
same completion_report_format "$(comp _memcg_replay memcg-replay report --format '')" "csv html json table"
same completion_validate_format "$(comp _memcg_replay memcg-replay validate -f '')" "json text"
same completion_import_decompress "$(comp _memcg_replay memcg-replay import --decompress '')" \
	"always auto never"
same completion_import_decompress_short "$(comp _memcg_replay memcg-replay import -d n)" never
same completion_scenarios "$(comp _memcg_replay memcg-replay synth --scenario '')" \
	"$("$REPLAY" synth --help | listed Scenarios)"
got=$(comp _memcg_replay memcg-replay replay --sample-ms '')
[ -z "$got" ] && pass completion_no_value_for_N || fail completion_no_value_for_N "offered '$got'"

# files: a trace database, a trace.dat, a directory
mkdir -p "$T_TMP/f/sub"
: >"$T_TMP/f/a.db"
: >"$T_TMP/f/b.dat"
same completion_db_files "$(comp _memcg_replay memcg-replay replay "$T_TMP/f/")" \
	"$T_TMP/f/a.db $T_TMP/f/sub"
same completion_dat_files "$(comp _memcg_replay memcg-replay import "$T_TMP/f/")" \
	"$T_TMP/f/b.dat $T_TMP/f/sub"
# calibrate writes a calibration file (-o, --from, report --calibration: *.json) or a database (--db)
: >"$T_TMP/f/c.json"
same completion_calibrate_output "$(comp _memcg_replay memcg-replay calibrate -o "$T_TMP/f/")" \
	"$T_TMP/f/c.json $T_TMP/f/sub"
same completion_calibrate_db "$(comp _memcg_replay memcg-replay calibrate --db "$T_TMP/f/")" \
	"$T_TMP/f/a.db $T_TMP/f/sub"
same completion_report_calibration "$(comp _memcg_replay memcg-replay report --calibration "$T_TMP/f/")" \
	"$T_TMP/f/c.json $T_TMP/f/sub"
got=$(comp _memcg_replay memcg-replay events --from '')
[ -z "$got" ] && pass completion_events_from_is_ns || fail completion_events_from_is_ns "offered '$got'"

ch=$("$CAPTURE" --help)
same completion_capture_options "$(comp _memcg_capture memcg-capture --)" \
	"$(echo "$(longopts <<<"$ch") --" | words)"
if [ -r /sys/kernel/tracing/trace_clock ]; then
	same completion_capture_clocks "$(comp _memcg_capture memcg-capture -C '')" \
		"$(tr -d '[]\n' </sys/kernel/tracing/trace_clock | words)"
else
	skip completion_capture_clocks "no /sys/kernel/tracing/trace_clock"
fi
got=$(comp _memcg_capture memcg-capture -o x.db -- memcg-rep)
grep -qw memcg-replay <<<"$got" && pass completion_capture_command ||
	fail completion_capture_command "after --: '$got'"
t_done
