#!/usr/bin/env bash
# tests/cli/test_man.sh - the man pages (cli/man/mkman.sh: help2man on each
# program's --help plus cli/man/*.h2m): one page per command the program
# lists, each renders without a groff warning, has the sections of a
# trace-cmd-style page, names every option its --help names, and lists
# exactly the exit codes its --help lists; every command it shows can be
# pasted (one per line, continuations intact) and SEE ALSO names the pages
# whole.  A --help without an exit paragraph is refused.
# run.sh: alone (make builds a man page in the build)
source "$(dirname "$0")/../lib.sh"

for c in help2man man groff; do
	command -v "$c" >/dev/null || { skip man_pages "$c not installed (make deps)"; exit 0; }
done
export LC_ALL=C.UTF-8 MANWIDTH=80
MK=$TOP/cli/man/mkman.sh

# the commands, as memcg-replay --help lists them (two blanks, name, blanks, text)
cmds=$("$REPLAY" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\)  .*/\1/p')
[ -n "$cmds" ] && pass man_commands_listed || fail man_commands_listed "no Commands: in --help"

pages=("memcg-capture|$CAPTURE|" "memcg-replay|$REPLAY|" "memcg-statlog|$STATLOG|")
for c in $cmds; do pages+=("memcg-replay-$c|$REPLAY|$c"); done

# the codes of an "Exit status:"/"Exit codes:" paragraph: numbers that start an
# item (after a blank, comma or semicolon), not those inside parentheses
help_codes() {
	sed -n '/^Exit \(status\|codes\)/,/^$/p' | sed 's/^Exit [a-z]*:\?//' | tr '\n' ' ' |
		sed 's/([^)]*)//g' | grep -oE '(^|[ ,;])[0-9]+ ' | tr -dc '0-9\n ' | xargs -n1 | sort -n | xargs
}

for p in "${pages[@]}"; do
	IFS='|' read -r page prog sub <<<"$p"
	inc=$TOP/cli/man/$page.h2m
	if [ ! -f "$inc" ]; then
		fail "man_$page" "no cli/man/$page.h2m for a command --help lists"
		continue
	fi
	out=$T_TMP/$page.1
	if ! "$MK" "$prog" $sub "$inc" "$out" 2>"$T_TMP/mk.err"; then
		fail "man_$page" "mkman: $(head -c 300 "$T_TMP/mk.err")"
		continue
	fi
	warn=$(man --warnings -l "$out" 2>&1 >/dev/null)
	[ -z "$warn" ] && pass "man_${page}_renders_clean" ||
		fail "man_${page}_renders_clean" "$(head -c 300 <<<"$warn")"

	text=$(man -l "$out" 2>/dev/null)
	help=$("$prog" $sub --help)
	want="NAME SYNOPSIS DESCRIPTION EXIT_STATUS FILES EXAMPLES SEE_ALSO"
	grep -qE '^(  -[^- ]|      --[a-z])' <<<"$help" && want="$want OPTIONS"
	missing=
	for s in $want; do
		grep -qx "${s//_/ }" <<<"$text" || missing="$missing ${s//_/ }"
	done
	[ -z "$missing" ] && pass "man_${page}_sections" || fail "man_${page}_sections" "missing:$missing"
	grep -qE "^ +$page +- " <<<"$text" && pass "man_${page}_name" ||
		fail "man_${page}_name" "NAME does not start with '$page - '"

	# a command as the page shows it can be pasted: a line that starts with one
	# holds one (comments aside), a line ending in a continuation is followed
	# by the rest of its command, and no example is a lone comment (help2man
	# tags "CMD   # comment" lines, or fills lines into one paragraph)
	bad=$(awk '
		/^[A-Z]/ { sec = $0 }
		{ line = $0; sub(/^ +/, "", line) }
		cont && (line == "" || $0 !~ /^        /) { print "dangling continuation: " prev }
		{ cont = line ~ / \\$/; prev = line }
		sec == "EXAMPLES" && line ~ /^#/ { print "a comment alone: " line }
		line ~ /^(memcg-replay|memcg-capture|memcg-statlog|trace-cmd|sqlite3) / {
			cmd = line; sub(/ #.*/, "", cmd)
			if (gsub(/(^|[ ;&|(])(memcg-replay|memcg-capture|memcg-statlog|trace-cmd|sqlite3) /, "&", cmd) > 1)
				print "two commands on a line: " line
		}' <<<"$text")
	[ -z "$bad" ] && pass "man_${page}_commands_pasteable" ||
		fail "man_${page}_commands_pasteable" "$(head -c 300 <<<"$bad")"
	# SEE ALSO names memcg-replay-db(5), and the main page every command's page,
	# each name whole (neither hyphenated nor broken at a '-')
	see=$(sed -n '/^SEE ALSO/,/^[^ ]/p' <<<"$text" | tr -s ' \n' '  ')
	want="memcg-replay-db(5)"
	[ "$page" = memcg-replay ] && for c in $cmds; do want="$want memcg-replay-$c(1)"; done
	missing=
	for w in $want; do
		grep -qF -- " $w" <<<"$see" || missing="$missing $w"
	done
	[ -z "$missing" ] && pass "man_${page}_see_also" || fail "man_${page}_see_also" "not whole in SEE ALSO:$missing"

	# every option of --help, short and long, in the page (wide: no hyphenation)
	wide=$(MANWIDTH=250 man -l "$out" 2>/dev/null)
	opts=$(sed -nE 's/^(  (-[^-])(, (--[[:alnum:]-]+))?|      (--[[:alnum:]-]+)).*/\2 \4 \5/p' <<<"$help" | tr ' ' '\n' | sed '/^$/d' | sort -u)
	missing=
	for o in $opts; do
		grep -qF -- "$o" <<<"$wide" || missing="$missing $o"
	done
	[ -z "$missing" ] && pass "man_${page}_options ($(wc -w <<<"$opts"))" ||
		fail "man_${page}_options" "not in the page:$missing"

	# EXIT STATUS lists the --help's codes, no more, no fewer
	if grep -q '^Exit \(status\|codes\)' <<<"$help"; then
		hc=$(help_codes <<<"$help")
		mc=$(sed -n '/^EXIT STATUS/,/^[A-Z]/p' <<<"$text" | grep -oE '^       [0-9]+( |$)' | xargs -n1 | sort -n | xargs)
		[ -n "$hc" ] && [ "$hc" = "$mc" ] && pass "man_${page}_exit_codes ($hc)" ||
			fail "man_${page}_exit_codes" "--help: '$hc', page: '$mc'"
	elif [ -z "$sub" ] && "$prog" --exit-codes >"$T_TMP/table" 2>/dev/null; then
		# no paragraph: the program's whole table (| code | name | meaning | by |)
		hc=$(sed -nE 's/^\| *([0-9]+) *\|.*/\1/p' "$T_TMP/table" | sort -n | xargs)
		mc=$(sed -n '/^EXIT STATUS/,/^[A-Z]/p' <<<"$text" | grep -oE '^       [0-9]+( |$)' | sort -n | xargs)
		[ -n "$hc" ] && [ "$hc" = "$mc" ] && pass "man_${page}_exit_table ($hc)" ||
			fail "man_${page}_exit_table" "--exit-codes: '$hc', page: '$mc'"
	else
		grep -q "^Exit" <<<"$help" && fail "man_${page}_exit_codes" "unparsed exit paragraph"
	fi
done

# Section 5, written by hand (cli/man/*.5, make man fills in the version): the
# database's page names every table, view and column of a database this build
# writes (synth, replay and events --table make them all), so a column added to
# the schema without its line here fails.
db5=$BIN/man/memcg-replay-db.5
if ! make -s -C "$TOP" O="$MCR_BUILD" "$MCR_BUILD/man/memcg-replay-db.5" >"$T_TMP/make.log" 2>&1; then
	fail man_db5_built "make $db5: $(tail -c 300 "$T_TMP/make.log")"
else
	warn=$(man --warnings -l "$db5" 2>&1 >/dev/null)
	[ -z "$warn" ] && pass man_memcg-replay-db_renders_clean ||
		fail man_memcg-replay-db_renders_clean "$(head -c 300 <<<"$warn")"
	text=$(man -l "$db5" 2>/dev/null)
	missing=
	for s in NAME SYNOPSIS DESCRIPTION EXAMPLES SEE_ALSO; do
		grep -qx "${s//_/ }" <<<"$text" || missing="$missing ${s//_/ }"
	done
	[ -z "$missing" ] && pass man_memcg-replay-db_sections ||
		fail man_memcg-replay-db_sections "missing:$missing"
	grep -qE '^ +memcg-replay-db +- ' <<<"$text" && pass man_memcg-replay-db_name ||
		fail man_memcg-replay-db_name "NAME does not start with 'memcg-replay-db - '"
	v=$("$REPLAY" --version | awk '{ print $2 }')
	if grep -q "memcg-replay $v" <<<"$text" && ! grep -q "@VERSION@" "$db5"; then
		pass man_memcg-replay-db_version
	else
		fail man_memcg-replay-db_version "the page's footer does not say memcg-replay $v"
	fi
	if ! command -v sqlite3 >/dev/null; then
		skip man_memcg-replay-db_schema "sqlite3 command not installed (make deps)"
	elif ! "$REPLAY" synth -q --scenario seed-race -o "$T_TMP/s.db" ||
	     ! "$REPLAY" replay "$T_TMP/s.db" >/dev/null 2>&1 ||
	     ! "$REPLAY" events --table "$T_TMP/s.db" >/dev/null 2>&1; then
		fail man_memcg-replay-db_schema "could not write a database to compare"
	else
		wide=$(MANWIDTH=250 man -l "$db5" 2>/dev/null)
		names=$(sqlite3 "$T_TMP/s.db" "SELECT m.name, p.name FROM sqlite_master m,
			pragma_table_info(m.name) p WHERE m.type IN ('table', 'view')
			AND m.name NOT LIKE 'sqlite_%'" | tr '|' '\n' | sort -u)
		missing=
		for n in $names; do
			grep -qw -- "$n" <<<"$wide" || missing="$missing $n"
		done
		[ -n "$names" ] && [ -z "$missing" ] &&
			pass "man_memcg-replay-db_schema ($(wc -w <<<"$names") names)" ||
			fail man_memcg-replay-db_schema "not in the page:$missing"
	fi
fi

# a subcommand page whose --help has no exit codes is refused, not written
printf '#!/bin/sh\ncase $1 in --version) echo "fake 1.0";; *) printf "Usage: fake [OPTION...]\\n\\n  -q, --quiet   quiet\\n";; esac\n' >"$T_TMP/fake"
chmod +x "$T_TMP/fake"
printf '[NAME]\nfake \\- f\n' >"$T_TMP/fake.h2m"
"$MK" "$T_TMP/fake" sub "$T_TMP/fake.h2m" "$T_TMP/fake.1" 2>/dev/null &&
	fail man_refuses_no_exit_status "wrote a page without EXIT STATUS" ||
	pass man_refuses_no_exit_status
t_done
