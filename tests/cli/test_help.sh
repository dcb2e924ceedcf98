#!/usr/bin/env bash
# tests/cli/test_help.sh - every --help reads at 80 columns: argp wraps a line
# longer than 78 characters at column 0, so the lists we print (exit codes,
# scenarios, policies, flush models) are filled to fit, with their own
# hanging indent; no line is left blank but for spaces, none ends on a short
# option cut from its value, none is wider than the terminal.
source "$(dirname "$0")/../lib.sh"

cmds=$("$REPLAY" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\)  .*/\1/p')
[ -n "$cmds" ] || fail help_commands_listed "no Commands: in memcg-replay --help"

# check NAME: the --help on stdin
check() {
	local name=$1 text bad
	text=$(cat)
	bad=$(grep -nE '^ +$' <<<"$text" | head -3)
	[ -z "$bad" ] && pass "${name}_no_blank_filler" || fail "${name}_no_blank_filler" "$bad"
	bad=$(awk 'length($0) > 80 { print NR ": " $0 }' <<<"$text" | head -3)
	[ -z "$bad" ] && pass "${name}_fits_80" || fail "${name}_fits_80" "$bad"
	bad=$(grep -nE '(^| )-[[:alpha:]]$' <<<"$text" | head -3)
	[ -z "$bad" ] && pass "${name}_no_dangling_option" || fail "${name}_no_dangling_option" "$bad"
	# in a list, a line at column 0 before the list's end is a wrapped item
	bad=$(awk '
		/^(Exit status|Scenarios|Policies|Flush models)[^:]*:$/ { list = 1; next }
		/^$/ { list = 0 }
		list && /^[^ ]/ { print NR ": " $0 }' <<<"$text" | head -3)
	[ -z "$bad" ] && pass "${name}_lists_indented" || fail "${name}_lists_indented" "$bad"
}

"$REPLAY" --help | check help_memcg-replay
for c in $cmds; do
	"$REPLAY" "$c" --help | check "help_$c"
done
"$CAPTURE" --help | check help_memcg-capture
t_done
