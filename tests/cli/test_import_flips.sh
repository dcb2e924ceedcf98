#!/usr/bin/env bash
# tests/cli/test_import_flips.sh - import checks what it writes as strictly as
# the readers: for single-byte flips of a small v6 trace.dat, either import
# fails with one of the input-error codes its --help lists (and writes
# nothing: an older output stays as it was), or what it wrote is accepted by
# info and replay.  Before, import wrote files with items beyond any stat enum
# or cgroup ids beyond 2^63 with exit 0 that info then refused (17, or 8 for
# timestamps going backwards).
source "$(dirname "$0")/../lib.sh"
cd "$T_TMP" || exit 1
dat="$TOP/tests/fuzz/corpus/import/v6-2cpu.dat"

t_lsan_import	# libtracecmd's v6 leak, suppressed by name (tests/lib.sh)
command -v python3 >/dev/null || { skip import_flips "no python3"; t_done; }
[ -f "$dat" ] || { fail import_flips_setup "no $dat"; t_done; }
expect_exit import_flips_unflipped 0 "$REPLAY" import "$dat" -o good.db -q || t_done

# the codes of input errors import's --help lists (not 1, 2, 3: a flip is none of those)
codes=$("$REPLAY" import --help | awk '/^Exit status/ { on = 1; next } on && /^ +[0-9]+ / { print $1 }' |
	grep -Ev '^(0|1|2|3)$' | tr '\n' ' ')
[ -n "$codes" ] || fail import_flips_codes "no exit codes in import --help"
# an older output of ours, which a failed import must leave as it was
"$REPLAY" synth -s seed-race -o old.db -q && cp old.db old.ref || fail import_flips_setup "synth"

# the flips: every 113th byte of the two CPUs' data pages (the file's last
# 8 KiB: where the events are), every 2039th of the headers before, XORed
# with 0xff (a sign, the high bits of a field); prime steps, to land on every
# field of the records
size=$(stat -c %s "$dat")
offs="$(seq $((size - 8192)) 113 $((size - 1))) $(seq 0 2039 $((size - 8193)))"
n=0 refused=0 bad="" x=255
# every flipped copy made by one python3 (a start costs 0.1-0.3 s)
mkdir flips && python3 -c 'import sys
src = open(sys.argv[1], "rb").read(); x = int(sys.argv[2])
for off in sys.argv[3:]:
	d = bytearray(src); d[int(off)] ^= x
	open("flips/%s.dat" % off, "wb").write(d)' "$dat" "$x" $offs || fail import_flips_setup "python3"
for off in $offs; do
	n=$((n + 1))
	timeout 60 "$REPLAY" import "flips/$off.dat" -o old.db -q >/dev/null 2>err
	rc=$?
	if [ "$rc" = 0 ]; then
		timeout 60 "$REPLAY" info old.db >/dev/null 2>>err &&
			timeout 60 "$REPLAY" replay old.db >/dev/null 2>>err ||
			bad+=" $off^$x:import-0-but-readers-refuse($(grep -v warning err | tail -1))"
		cp old.ref old.db
		continue
	fi
	refused=$((refused + 1))
	case " $codes " in
	*" $rc "*) ;;
	*) bad+=" $off^$x:exit-$rc($(tail -1 err))" ;;
	esac
	cmp -s old.db old.ref || { bad+=" $off^$x:old-output-changed"; cp old.ref old.db; }
	ls -a | grep -q 'old\.db\..*\|\.old\.db' && bad+=" $off^$x:temporary-left"
done
echo "# $n flips: $refused refused by import, $((n - refused)) imported and read"
[ -z "$bad" ] && pass "import_flips ($n flips)" || fail import_flips "$(printf '%s' "$bad" | head -c 1500)"
# the check refused some: the test exercises it
[ "$refused" -gt 0 ] && pass import_flips_some_refused || fail import_flips_some_refused "no flip refused"
t_done
