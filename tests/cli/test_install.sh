#!/usr/bin/env bash
# tests/cli/test_install.sh - make install / make uninstall into a DESTDIR:
# Debian's locations under PREFIX=/usr (programs, a man page per program and
# per command of memcg-replay --help, the database's page in section 5, bash
# completion), the default
# PREFIX=/usr/local, the Debian package's *.install lists covering exactly
# what is installed, and uninstall leaving nothing behind.
# run.sh: alone (make install builds the man pages in the build)
source "$(dirname "$0")/../lib.sh"

command -v help2man >/dev/null || { skip install "help2man not installed (make deps)"; exit 0; }
cd "$TOP" || exit 1
cmds=$("$REPLAY" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\)  .*/\1/p')

want_files() {	# PREFIX without the leading /
	printf '%s\n' "$1/bin/memcg-capture" "$1/bin/memcg-replay" "$1/bin/memcg-statlog" \
		"$1/share/man/man1/memcg-capture.1" "$1/share/man/man1/memcg-replay.1" \
		"$1/share/man/man1/memcg-statlog.1" \
		"$1/share/man/man5/memcg-replay-db.5" \
		"$1/share/bash-completion/completions/memcg-capture" \
		"$1/share/bash-completion/completions/memcg-replay"
	for c in $cmds; do echo "$1/share/man/man1/memcg-replay-$c.1"; done
}
installed() { (cd "$1" && find . -type f -o -type l | sed 's|^\./||' | sort); }

for prefix in /usr /usr/local; do
	root=$T_TMP/root${prefix//\//_}
	args=(O="$MCR_BUILD" DESTDIR="$root")
	[ "$prefix" = /usr ] && args+=(PREFIX=/usr)
	if ! make -s "${args[@]}" install >"$T_TMP/make.log" 2>&1; then
		fail "install$prefix" "make install: $(tail -c 300 "$T_TMP/make.log")"
		continue
	fi
	got=$(installed "$root")
	want=$(want_files "${prefix#/}" | sort)
	[ "$got" = "$want" ] && pass "install$prefix ($(wc -l <<<"$got") files)" ||
		fail "install$prefix" "$(diff <(echo "$want") <(echo "$got") | grep '^[<>]' | xargs)"
	[ -x "$root$prefix/bin/memcg-replay" ] &&
		"$root$prefix/bin/memcg-replay" --version | grep -q '^memcg-replay [0-9]' &&
		pass "install${prefix}_runs" || fail "install${prefix}_runs" "installed memcg-replay --version"
	if [ "$prefix" = /usr ]; then
		# every installed file is in one package's list, every listed pattern matches
		listed=$(cd "$root" && for f in "$TOP"/cli/debian/*.install; do
				for pat in $(cat "$f"); do ls -d $pat 2>/dev/null || echo "MISSING:$pat"; done
			done | sort)
		[ "$listed" = "$got" ] && pass install_debian_lists_cover ||
			fail install_debian_lists_cover "$(diff <(echo "$got") <(echo "$listed") | grep '^[<>]' | xargs)"
	fi
	make -s "${args[@]}" uninstall >"$T_TMP/make.log" 2>&1
	left=$(installed "$root")
	[ -z "$left" ] && pass "uninstall$prefix" || fail "uninstall$prefix" "left: $(xargs <<<"$left")"
done
t_done
