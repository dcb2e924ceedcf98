#!/usr/bin/env bash
# tests/package/test_deb.sh - the Debian packages make deb wrote (build-deb/):
# they declare their library dependencies, install with apt-get, run, carry
# their man pages and completion (and memcg-capture its systemd units, disabled,
# and /etc/default/memcg-capture, a conffile), and are removed again, leaving the
# installed package set exactly as it was.  Needs root and apt; run by
# `make deb-test`, and by make check's plain pass (tests/run.sh with MCR_DEB_TEST=1),
# which builds the packages from this tree first.
source "$(dirname "$0")/../lib.sh"

DEBDIR=${1:-$TOP/build-deb}
[ "$(id -u)" -eq 0 ] || { skip deb "needs root (apt-get install)"; exit 0; }
command -v apt-get >/dev/null || { skip deb "no apt-get"; exit 0; }
command -v dpkg-buildpackage >/dev/null || { skip deb "no dpkg-buildpackage (make deps installs it)"; exit 0; }
if [ "${MCR_DEB_TEST:-0}" = 1 ]; then	# from make check: build them from this tree
	make -C "$TOP" deb >"$T_TMP/deb.log" 2>&1 && pass deb_build ||
		{ fail deb_build "make deb: $(tail -c 400 "$T_TMP/deb.log")"; t_done; }
fi
version=$(sed -n 's/^VERSION[[:space:]]*:=[[:space:]]*//p' "$TOP/Makefile")
debs=("$DEBDIR"/memcg-replay_"$version"_*.deb "$DEBDIR"/memcg-capture_"$version"_*.deb)
for d in "${debs[@]}"; do
	[ -f "$d" ] || { fail deb_built "no $d (make deb)"; t_done; }
done
for p in memcg-replay memcg-capture; do
	if dpkg -s "$p" >/dev/null 2>&1; then
		skip deb "$p is installed already: not touching it"
		exit 0
	fi
done

for d in "${debs[@]}"; do
	dep=$(dpkg-deb -f "$d" Depends)
	grep -q 'libc6' <<<"$dep" && grep -q 'libsqlite3-0' <<<"$dep" &&
		pass "deb_depends $(dpkg-deb -f "$d" Package): $dep" ||
		fail deb_depends "$d: Depends: '$dep'"
done
# production hosts get no libtracecmd, analysis hosts no libtracefs
dpkg-deb -f "${debs[1]}" Depends | grep -q libtracecmd &&
	fail deb_capture_small "memcg-capture depends on libtracecmd" || pass deb_capture_small

before=$(dpkg-query -W -f '${Package}\n' | sort)
export DEBIAN_FRONTEND=noninteractive
(cd "$DEBDIR" && apt-get install -y --no-install-recommends \
	./"${debs[0]##*/}" ./"${debs[1]##*/}") >"$T_TMP/apt.log" 2>&1
rc=$?
added=$(comm -13 <(echo "$before") <(dpkg-query -W -f '${Package}\n' | sort))
t_on_exit 'apt-get remove -y --purge $added >/dev/null 2>&1'
[ "$rc" -eq 0 ] && pass "deb_install (added: $(xargs <<<"$added"))" ||
	fail deb_install "apt-get install: $(tail -c 300 "$T_TMP/apt.log")"

[ "$(/usr/bin/memcg-replay --version)" = "memcg-replay $version" ] && pass deb_replay_version ||
	fail deb_replay_version "$(/usr/bin/memcg-replay --version 2>&1)"
[ "$(/usr/bin/memcg-capture --version)" = "memcg-capture $version" ] && pass deb_capture_version ||
	fail deb_capture_version "$(/usr/bin/memcg-capture --version 2>&1)"
# the installed program does the work, not just --version
/usr/bin/memcg-replay synth -q --scenario seed-race -o "$T_TMP/sr.db" &&
	/usr/bin/memcg-replay replay "$T_TMP/sr.db" >/dev/null && pass deb_replay_runs ||
	fail deb_replay_runs "synth + replay with the installed program"
# minimal images (docker's debian) tell dpkg not to unpack man pages at all
if grep -qs '^path-exclude=/usr/share/man/' /etc/dpkg/dpkg.cfg.d/*; then
	dpkg-deb -c "${debs[0]}" | grep -q 'usr/share/man/man1/memcg-replay-replay.1.gz' &&
		pass deb_man_packaged || fail deb_man_packaged "no memcg-replay-replay.1.gz in ${debs[0]}"
	skip deb_man_subcommand "dpkg is told not to install man pages here (path-exclude)"
elif [ "$(man -w memcg-replay-replay 2>&1)" = /usr/share/man/man1/memcg-replay-replay.1.gz ] &&
	LC_ALL=C.UTF-8 MANWIDTH=80 man memcg-replay replay 2>/dev/null | grep -q '^NAME' &&
	LC_ALL=C.UTF-8 man memcg-capture 2>/dev/null | grep -q '^EXIT STATUS'; then
	pass deb_man_subcommand
else
	fail deb_man_subcommand "man memcg-replay replay: $(man -w memcg-replay-replay 2>&1)"
fi
# the service: its settings a conffile, the units installed but neither enabled
# nor started, the wrapper composing the installed program's command line
[ -f /etc/default/memcg-capture ] && dpkg-query -W -f '${Conffiles}' memcg-capture |
	grep -q '^ /etc/default/memcg-capture ' && pass deb_service_conffile ||
	fail deb_service_conffile "$(dpkg-query -W -f '${Conffiles}' memcg-capture)"
en=$(systemctl is-enabled memcg-capture.service memcg-capture-report.timer 2>&1 | xargs)
[ "$en" = "disabled disabled" ] && pass deb_service_disabled || fail deb_service_disabled "is-enabled: $en"
[ "$(env -i PATH="$PATH" /usr/lib/memcg-capture/memcg-capture-service run --dry-run | head -1)" = \
	/usr/bin/memcg-capture ] && pass deb_service_wrapper ||
	fail deb_service_wrapper "$(/usr/lib/memcg-capture/memcg-capture-service run --dry-run 2>&1 | head -c 200)"
got=$(bash -c 'source /usr/share/bash-completion/bash_completion 2>/dev/null
	__load_completion memcg-replay; complete -p memcg-replay; complete -p memcg-capture ||
	{ __load_completion memcg-capture; complete -p memcg-capture; }' 2>&1)
grep -q _memcg_replay <<<"$got" && grep -q _memcg_capture <<<"$got" &&
	pass deb_completion_loads || fail deb_completion_loads "$got"

apt-get remove -y --purge $added >"$T_TMP/apt.log" 2>&1
after=$(dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' | awk '$1 == "ii" { print $2 }' | sort)
[ ! -e /usr/bin/memcg-replay ] && [ ! -e /usr/bin/memcg-capture ] && [ ! -e /etc/default/memcg-capture ] &&
	[ "$(comm -13 <(echo "$before") <(echo "$after"))" = "" ] &&
	pass deb_removed || fail deb_removed "left: $(comm -13 <(echo "$before") <(echo "$after") | xargs)"
t_done
