#!/usr/bin/env bash
# tests/cli/test_service.sh - memcg-capture's systemd units (cli/systemd): they
# pass systemd-analyze verify, /etc/default/memcg-capture is valid shell whose
# commented defaults are the wrapper's, the wrapper composes exactly the
# expected command line from the settings and its report mode replays each
# completed file once and writes report.csv, make install-systemd puts them
# under PREFIX and keeps an edited settings file, the .deb (when make deb built one)
# carries them, and, where systemd is PID 1, the unit runs, rotates and stops
# cleanly.
# run.sh: alone (runs captures, and make install-systemd in the build)
source "$(dirname "$0")/../lib.sh"

SVC=$TOP/cli/systemd
WRAP=$SVC/memcg-capture-service
UNITS="memcg-capture.service memcg-capture-report.service memcg-capture-report.timer"
host=$(uname -n)
host=${host%%.*}

# ---- systemd-analyze verify, with the programs at this build's paths
if ! command -v systemd-analyze >/dev/null; then
	skip service_verify "no systemd-analyze (package systemd)"
else
	mkdir -p "$T_TMP/units"
	for u in $UNITS; do
		sed -e "s|/usr/lib/memcg-capture/|$SVC/|g" -e "s|/usr/bin/memcg-capture|$CAPTURE|g" \
			"$SVC/$u" >"$T_TMP/units/$u"
	done
	left=$(grep -l '/usr/lib/memcg-capture\|/usr/bin/' "$T_TMP"/units/* 2>/dev/null)
	# verify exits 0 on an unknown key or a bad value (it only warns): no output either
	out=$(cd "$T_TMP/units" && systemd-analyze verify --man=no $(printf './%s ' $UNITS) 2>&1)
	rc=$?
	[ "$rc" -eq 0 ] && [ -z "$out" ] && [ -z "$left" ] && pass service_verify ||
		fail service_verify "exit $rc: $(head -c 400 <<<"$out$left")"
	# a unit with a fault is caught: the check can fail
	sed 's/^KillMode=mixed/KillMode=bogus/' "$T_TMP/units/memcg-capture.service" >"$T_TMP/units/bad.service"
	out=$(cd "$T_TMP/units" && systemd-analyze verify --man=no ./bad.service 2>&1)
	[ -n "$out" ] && pass service_verify_catches || fail service_verify_catches "no output on KillMode=bogus"
fi
# what the brief of the units promises, as keys
u=$SVC/memcg-capture.service
for kv in Type=simple KillSignal=SIGTERM EnvironmentFile=-/etc/default/memcg-capture \
	  ProtectHome=yes PrivateTmp=yes NoNewPrivileges=yes ProtectSystem=strict \
	  StateDirectory=memcg-capture; do
	grep -qx "$kv" "$u" || fail service_unit_keys "no $kv in memcg-capture.service"
done
grep -q '^ProtectKernelTunables=' "$u" &&
	fail service_unit_keys "ProtectKernelTunables= makes /sys/kernel/tracing read-only"
grep -q '^ExecStartPre=.*memcg-capture-service prepare$' "$u" && grep -q '^Restart=' "$u" &&
	grep -q '^TimeoutStopSec=' "$u" && pass service_unit_keys
# both shipped disabled: nothing but [Install] decides, and the package does not enable
for f in memcg-capture.service memcg-capture-report.timer; do
	grep -q '^WantedBy=' "$SVC/$f" || fail service_install_section "$f has no WantedBy="
done
grep -q -- '--no-enable' "$TOP/cli/debian/rules" && pass service_disabled_by_default ||
	fail service_disabled_by_default "dh_installsystemd without --no-enable"

# ---- the settings file: valid shell, every variable the wrapper's, its
# commented defaults the wrapper's defaults
def=$SVC/memcg-capture.default
sh -n "$def" && pass service_default_sh || fail service_default_sh "sh -n $def"
vars_def=$(grep -o '^#\?MEMCG_CAPTURE_[A-Z_]*=' "$def" | tr -d '#=' | sort -u | xargs)
vars_wrap=$(grep -o '\${MEMCG_CAPTURE_[A-Z_]*:-' "$WRAP" | sed 's/^\${//; s/:-$//' |
	grep -v '_BIN$' | sort -u | xargs)
vars_man=$(grep -o '^\.B MEMCG_CAPTURE_[A-Z_]*$' "$TOP/cli/man/memcg-capture.h2m" | cut -c4- | sort -u | xargs)
want="MEMCG_CAPTURE_ARGS MEMCG_CAPTURE_BUFFER_KIB MEMCG_CAPTURE_CGROUP MEMCG_CAPTURE_DIR MEMCG_CAPTURE_KEEP MEMCG_CAPTURE_ROTATE"
[ "$vars_def" = "$want" ] && [ "$vars_wrap" = "$want" ] && [ "$vars_man" = "$want" ] &&
	pass service_variables || fail service_variables "file: $vars_def; wrapper: $vars_wrap; man: $vars_man"
sed -n 's/^#\(MEMCG_CAPTURE_[A-Z_]*=\)/\1/p' "$def" | grep -v '^MEMCG_CAPTURE_ARGS=' >"$T_TMP/uncommented"
sh -n "$T_TMP/uncommented" || fail service_default_values "the commented assignments are not shell"
dry() { env -i PATH="$PATH" "$@" sh "$WRAP" run --dry-run; }
a=$(dry)
b=$(set -a; . "$T_TMP/uncommented"; set +a; dry MEMCG_CAPTURE_DIR="$MEMCG_CAPTURE_DIR" \
	MEMCG_CAPTURE_ROTATE="$MEMCG_CAPTURE_ROTATE" MEMCG_CAPTURE_KEEP="$MEMCG_CAPTURE_KEEP" \
	MEMCG_CAPTURE_CGROUP="$MEMCG_CAPTURE_CGROUP" MEMCG_CAPTURE_BUFFER_KIB="$MEMCG_CAPTURE_BUFFER_KIB")
[ -n "$a" ] && [ "$a" = "$b" ] && pass service_default_values ||
	fail service_default_values "unset: $(xargs <<<"$a"); the file's: $(xargs <<<"$b")"

# ---- the wrapper's command line, one argument a line
expect_argv() {	# NAME WANT(one a line) ENV...
	local name=$1 want=$2 got
	shift 2
	got=$(cd "$T_TMP" && dry "$@" 2>&1)
	[ "$got" = "$want" ] && pass "$name" || fail "$name" "got: $(tr '\n' '|' <<<"$got") want: $(tr '\n' '|' <<<"$want")"
}
expect_argv service_argv_defaults "/usr/bin/memcg-capture
--rotate=1h
--keep=48
-o
/var/lib/memcg-capture/$host"
touch "$T_TMP/x.prom" "$T_TMP/y.prom"
expect_argv service_argv_all "/usr/bin/memcg-capture
--rotate=512MiB
--keep=3
-o
/srv/memcg dir/$host
--buffer=4096
--cgroup=/tenant/a b
--watch
--prom
/var/lib/prometheus/node-exporter/memcg_stat.prom
*.prom" MEMCG_CAPTURE_DIR="/srv/memcg dir" MEMCG_CAPTURE_ROTATE=512MiB MEMCG_CAPTURE_KEEP=3 \
	MEMCG_CAPTURE_CGROUP="/tenant/a b" MEMCG_CAPTURE_BUFFER_KIB=4096 \
	MEMCG_CAPTURE_ARGS="  --watch	--prom /var/lib/prometheus/node-exporter/memcg_stat.prom *.prom "
# empty is unset: no --cgroup= nor --buffer= of nothing
expect_argv service_argv_empty "/usr/bin/memcg-capture
--rotate=1h
--keep=48
-o
/var/lib/memcg-capture/$host" MEMCG_CAPTURE_CGROUP= MEMCG_CAPTURE_BUFFER_KIB= MEMCG_CAPTURE_ARGS= \
	MEMCG_CAPTURE_ROTATE= MEMCG_CAPTURE_KEEP= MEMCG_CAPTURE_DIR=
expect_exit service_relative_dir 78 env -i PATH="$PATH" MEMCG_CAPTURE_DIR=var/x sh "$WRAP" run --dry-run &&
	expect_match service_relative_dir_says 'MEMCG_CAPTURE_DIR=var/x: not an absolute path' "$T_ERR"
expect_exit service_usage 64 sh "$WRAP" run --now
expect_exit service_usage_none 64 sh "$WRAP"

# prepare makes the directory (0700), run executes the program with that argv
fake=$T_TMP/fake-capture
printf '#!/bin/sh\nprintf "%%s\\n" "$0" "$@" >"%s/argv"\n' "$T_TMP" >"$fake"
chmod +x "$fake"
d=$T_TMP/state/sub
expect_exit service_run_no_dir 78 env -i PATH="$PATH" MEMCG_CAPTURE_DIR="$d" MEMCG_CAPTURE_BIN="$fake" \
	sh "$WRAP" run
if expect_exit service_prepare 0 env -i PATH="$PATH" MEMCG_CAPTURE_DIR="$d" sh "$WRAP" prepare; then
	[ "$(stat -c %a "$d")" = 700 ] && pass service_prepare_mode || fail service_prepare_mode "$(stat -c %a "$d")"
fi
expect_exit service_run 0 env -i PATH="$PATH" MEMCG_CAPTURE_DIR="$d" MEMCG_CAPTURE_BIN="$fake" \
	MEMCG_CAPTURE_KEEP=5 sh "$WRAP" run
[ "$(cat "$T_TMP/argv" 2>/dev/null)" = "$fake
--rotate=1h
--keep=5
-o
$d/$host" ] && pass service_run_argv || fail service_run_argv "$(tr '\n' '|' <"$T_TMP/argv")"

# ---- report: each completed file replayed once, report.csv of every replayed one
r=$T_TMP/rep
mkdir -p "$r"
replays() { "$REPLAY" info -n "$1" | awk '/^runs:/ { r = 1; next } r && $2 == "replay" { n++ } END { print n + 0 }'; }
report() { env -i PATH="$PATH" MEMCG_CAPTURE_DIR="$r" MEMCG_REPLAY_BIN="$REPLAY" sh "$WRAP" report; }
for s in 20260101T000000Z 20260101T010000Z; do
	"$REPLAY" synth -q --scenario seed-race -o "$r/h1-$s.db" || fail service_report "synth"
done
cp "$r/h1-20260101T000000Z.db" "$r/other.db"			# not a capture's name
cp "$r/h1-20260101T000000Z.db" "$r/.h1-20260101T020000Z.db.tmp-1"	# being written
"$REPLAY" replay -q "$r/h1-20260101T010000Z.db" >/dev/null		# replayed already
if expect_exit service_report 0 report; then
	files=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "file") c = i; next }
		c { print $c }' "$r/report.csv" | sort -u | xargs)
	[ "$files" = "$r/h1-20260101T000000Z.db $r/h1-20260101T010000Z.db" ] ||
		[ "$files" = "h1-20260101T000000Z.db h1-20260101T010000Z.db" ] &&
		pass service_report_files || fail service_report_files "files in report.csv: '$files'"
	[ "$(replays "$r/h1-20260101T000000Z.db") $(replays "$r/h1-20260101T010000Z.db")" = "3 3" ] &&
		[ "$(replays "$r/other.db")" = 0 ] && pass service_report_replays_new ||
		fail service_report_replays_new "replay runs: $(replays "$r/h1-20260101T000000Z.db") $(replays "$r/h1-20260101T010000Z.db") $(replays "$r/other.db")"
	expect_match service_report_says "report.csv: 2 files" "$T_OUT"
fi
# a second run replays nothing again; a damaged file fails the run, the report has the rest
head -c 5000 /dev/urandom >"$r/h1-20260101T020000Z.db"
rm -f "$r/report.csv"
expect_exit service_report_damaged 1 report &&
	expect_match service_report_damaged_says 'h1-20260101T020000Z.db: memcg-replay replay failed' "$T_ERR"
[ -s "$r/report.csv" ] && [ "$(replays "$r/h1-20260101T000000Z.db")" = 3 ] &&
	pass service_report_once || fail service_report_once "report.csv or a replay again"
left=$(ls -A "$r" | grep -vx -e 'h1-2026010[1-9]T0[0-2]0000Z\.db' -e other.db -e report.csv \
	-e '\.h1-20260101T020000Z\.db\.tmp-1')
[ -z "$left" ] && pass service_report_no_leftover || fail service_report_no_leftover "$(xargs <<<"$left")"
expect_exit service_report_no_replay 78 env -i PATH="$PATH" MEMCG_CAPTURE_DIR="$r" \
	MEMCG_REPLAY_BIN=/nonexistent/memcg-replay sh "$WRAP" report

# ---- make install-systemd / uninstall-systemd: paths under PREFIX, an edited
# settings file neither replaced nor removed
root=$T_TMP/root
if make -s -C "$TOP" O="$MCR_BUILD" DESTDIR="$root" install-systemd >"$T_TMP/make.log" 2>&1; then
	got=$(cd "$root" && find . -type f | sort | xargs)
	want="./etc/default/memcg-capture ./usr/local/lib/memcg-capture/memcg-capture-service"
	want="$want ./usr/local/lib/systemd/system/memcg-capture-report.service"
	want="$want ./usr/local/lib/systemd/system/memcg-capture-report.timer"
	want="$want ./usr/local/lib/systemd/system/memcg-capture.service"
	[ "$got" = "$want" ] && pass service_install_files || fail service_install_files "$got"
	grep -q '^ExecStart=/usr/local/lib/memcg-capture/memcg-capture-service run$' \
		"$root/usr/local/lib/systemd/system/memcg-capture.service" &&
		grep -q '^ExecStopPost=-/usr/local/bin/memcg-capture --cleanup$' \
		"$root/usr/local/lib/systemd/system/memcg-capture.service" &&
		[ "$(env -i PATH="$PATH" sh "$root/usr/local/lib/memcg-capture/memcg-capture-service" run --dry-run |
			head -1)" = /usr/local/bin/memcg-capture ] &&
		pass service_install_paths || fail service_install_paths "units or wrapper not at PREFIX=/usr/local"
	echo MEMCG_CAPTURE_KEEP=7 >>"$root/etc/default/memcg-capture"
	make -s -C "$TOP" O="$MCR_BUILD" DESTDIR="$root" install-systemd >/dev/null 2>&1
	make -s -C "$TOP" O="$MCR_BUILD" DESTDIR="$root" uninstall-systemd >/dev/null 2>&1
	[ "$(cd "$root" && find . -type f)" = ./etc/default/memcg-capture ] &&
		grep -q '^MEMCG_CAPTURE_KEEP=7$' "$root/etc/default/memcg-capture" &&
		pass service_install_keeps_settings || fail service_install_keeps_settings "$(cd "$root" && find . -type f | xargs)"
else
	fail service_install_files "make install-systemd: $(tail -c 300 "$T_TMP/make.log")"
fi

# ---- the .deb, when make deb built one from this tree
deb=$(ls "$TOP"/build-deb/memcg-capture_*_*.deb 2>/dev/null | head -1)
if [ -z "$deb" ]; then
	skip service_deb "no build-deb/memcg-capture_*.deb (make deb)"
elif [ -n "$(find "$SVC" "$TOP/cli/debian" -newer "$deb" -type f)" ]; then
	skip service_deb "$deb is older than cli/systemd or cli/debian (make deb)"
else
	list=$(dpkg-deb -c "$deb" | awk '{ print $6 }')
	missing=
	for f in ./etc/default/memcg-capture ./usr/lib/memcg-capture/memcg-capture-service \
		 $(printf './lib/systemd/system/%s ' $UNITS); do
		grep -qx -- "$f" <<<"$list" || grep -qx -- "./usr${f#.}" <<<"$list" || missing="$missing $f"
	done
	[ -z "$missing" ] && pass service_deb_files || fail service_deb_files "not in $deb:$missing"
	dpkg-deb -I "$deb" conffiles 2>/dev/null | grep -qx /etc/default/memcg-capture &&
		pass service_deb_conffile || fail service_deb_conffile "$(dpkg-deb -I "$deb" conffiles 2>&1)"
	# nothing enabled at install: the enable is only the one restoring an earlier state
	dpkg-deb -I "$deb" postinst 2>/dev/null | grep -B2 "deb-systemd-helper enable 'memcg-capture.service'" |
		grep -q was-enabled && pass service_deb_not_enabled ||
		fail service_deb_not_enabled "postinst: $(dpkg-deb -I "$deb" postinst 2>&1 | grep enable | head -3)"
fi

# ---- live: under systemd, a transient copy of the unit rotates every second and stops cleanly
if [ "$(ps -p 1 -o comm= 2>/dev/null)" != systemd ]; then
	skip service_live "PID 1 is '$(ps -p 1 -o comm= 2>/dev/null)', not systemd"
elif [ "$(id -u)" -ne 0 ]; then
	skip service_live "needs root"
elif ! "$CAPTURE" --help | grep -q -- '--rotate='; then
	skip service_live "this memcg-capture has no --rotate"
else
	name=memcg-capture-test-$$
	run=/run/$name			# outside /home and /tmp, which the unit hides
	state=/var/lib/$name
	mkdir -p "$run"
	cp "$WRAP" "$CAPTURE" "$run/"
	printf '%s\n' "MEMCG_CAPTURE_BIN=$run/memcg-capture" "MEMCG_CAPTURE_DIR=$state" MEMCG_CAPTURE_ROTATE=1s MEMCG_CAPTURE_KEEP=3 \
		MEMCG_CAPTURE_BUFFER_KIB=1024 >"$run/default"
	sed -e "s|/usr/lib/memcg-capture/|$run/|g" -e "s|/usr/bin/memcg-capture|$run/memcg-capture|g" \
		-e "s|^EnvironmentFile=.*|EnvironmentFile=$run/default|" \
		-e "s|^StateDirectory=.*|StateDirectory=$name|" \
		-e 's/^Restart=always/Restart=no/' "$SVC/memcg-capture.service" >"/run/systemd/system/$name.service"
	t_on_exit "systemctl stop $name.service; systemctl reset-failed $name.service; rm -f /run/systemd/system/$name.service; systemctl daemon-reload; rm -rf $run $state"
	systemctl daemon-reload
	if systemctl start "$name.service"; then
		# three completed files: it rotated at least twice (the wait ends at the
		# condition; 60 s only bounds a failure)
		for _ in $(seq 600); do
			n=$(ls "$state" 2>/dev/null | grep -c -- "-[0-9]\{8\}T[0-9]\{6\}Z\.db$")
			[ "$n" -ge 3 ] && break
			systemctl -q is-active "$name.service" || break
			sleep 0.1
		done
		[ "$n" -ge 3 ] && pass "service_live_rotates ($n files)" ||
			fail service_live_rotates "$n files; $(journalctl -u "$name.service" -n 5 --no-pager 2>&1 | tail -c 400)"
		pid=$(systemctl show -p MainPID --value "$name.service")
		systemctl stop "$name.service"
		res=$(systemctl show -p Result --value "$name.service")
		st=$(systemctl show -p ExecMainStatus --value "$name.service")
		[ "$res" = success ] && { [ "$st" = 0 ] || [ "$st" = 11 ]; } && pass service_live_stops ||
			fail service_live_stops "Result=$res ExecMainStatus=$st"
		left=$(ls -A "$state" | grep 'tmp-' ; ls -d /sys/kernel/tracing/instances/memcg_capture_"$pid" 2>/dev/null)
		[ -z "$left" ] && pass service_live_clean || fail service_live_clean "left: $left"
		[ "$(ls "$state" | grep -c -- "-[0-9]\{8\}T[0-9]\{6\}Z\.db$")" -le 4 ] && pass service_live_keep ||
			fail service_live_keep "$(ls "$state" | xargs)"
	else
		fail service_live "systemctl start: $(journalctl -u "$name.service" -n 5 --no-pager 2>&1 | tail -c 400)"
	fi
fi
t_done
