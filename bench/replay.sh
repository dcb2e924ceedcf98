#!/usr/bin/env bash
# bench/replay.sh - replay throughput on a synthetic fleet trace (>= 20 M
# events), in one invocation: the simulators alone with the events in memory
# (build/bench/replay_mem: per policy in CPU time, the engine with one thread
# and with its default threads), end to end from SQLite with three policies
# (memcg-replay replay, wall and user time, peak RSS, and the bytes it wrote
# against what the database grew by: wchar is every write call's bytes,
# write_bytes what went to the page cache, from its /proc/PID/io read by
# build/bench/io_stat), and peak RSS at growing trace sizes.  With MCR_BASE_BUILD (a build dir) and MCR_BASE_SRC (its source
# tree) the baseline runs too, alternating with this build, and ratios are
# printed; bench/replay_mem.c is built against the baseline's libraries for it.
set -u
cd "$(dirname "$0")/.."
: "${MCR_BUILD:=build}"
DIR=${MCR_BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/mcr-bench.XXXXXX")}
EVENTS=${MCR_BENCH_REPLAY_EVENTS:-20000000}
RSS_EVENTS=${MCR_BENCH_RSS_EVENTS:-5000000 20000000 100000000}
R=$MCR_BUILD/memcg-replay
TRACE=$DIR/fleet-replay.db
BASE=${MCR_BASE_BUILD:-}
builds="new"
if [ -n "$BASE" ]; then
	: "${MCR_BASE_SRC:?MCR_BASE_SRC: the source tree of the baseline build}"
	# the same driver as this build's, so both engines run the same sequence of
	# passes; BENCH_NO_THREADS only for a baseline without replay_params.threads,
	# whose "3 policies" line then runs its default threads
	# a baseline from before sim/base/ has no libbase.a
	base_lib=; [ -f "$BASE"/libbase.a ] && base_lib="$BASE"/libbase.a
	base_mem() {
		cc -std=gnu11 -O2 -D_GNU_SOURCE "$@" -I"$MCR_BASE_SRC"/sim/base -I"$MCR_BASE_SRC"/sim \
		   -I"$MCR_BASE_SRC"/db -I"$MCR_BASE_SRC"/replay -o "$DIR/replay_mem_base" \
		   bench/replay_mem.c "$BASE"/libreplay.a "$BASE"/libdb.a "$BASE"/libsim.a \
		   $base_lib -lsqlite3 -lzstd -lpthread -lm
	}
	# BENCH_NO_PREPARE: a baseline without sim_update_prepare(); BENCH_NO_PREFETCH:
	# one without sim_update_prefetch() either
	base_mem 2>/dev/null || base_mem -DBENCH_NO_PREPARE 2>/dev/null ||
		base_mem -DBENCH_NO_PREPARE -DBENCH_NO_PREFETCH 2>/dev/null ||
		base_mem -DBENCH_NO_PREPARE -DBENCH_NO_PREFETCH -DBENCH_NO_THREADS ||
		{ echo "building replay_mem for the baseline failed"; exit 1; }
	builds="base new"
fi
bin() { [ "$1" = base ] && echo "$BASE/memcg-replay" || echo "$R"; }
mem() { [ "$1" = base ] && echo "$DIR/replay_mem_base" || echo "$MCR_BUILD/bench/replay_mem"; }
# Each build replays a trace its own synth wrote (same seed, same events): a
# baseline may not read the newer build's files, and each reads its own store
# version at its own speed.  synth_all FILE ARGS... writes FILE.base and FILE.new.
synth_all() {
	local f=$1 b
	shift
	for b in $builds; do
		"$(bin "$b")" synth --scenario fleet "$@" -o "$f.$b" -q || { echo "synth ($b) failed"; exit 1; }
	done
}

if [ "${MCR_BENCH_INFER_ONLY:-0}" = 1 ]; then
	EVENTS=0 RSS_EVENTS=
fi
# the end-to-end runs of both sections below (the peak RSS one runs alone too)
IO_STAT=$MCR_BUILD/bench/io_stat
e2e() {	# build, label, policies, file[, threads] -> wall user rss sys wchar write_bytes growth
	local db=$DIR/fleet-$2.db size
	cp "$4" "$db"
	size=$(stat -c %s "$db")
	# the pass alone: spread (synth's own visit placement), not the inferred model's extra pass
	/usr/bin/time -f '%e %U %M %S' -o "$DIR/time-$2" "$IO_STAT" "$DIR/io-$2" "$(bin "$1")" \
		replay "$db" --policy "$3" -m spread ${5:+--threads "$5"} >/dev/null ||
		{ echo "replay $1 $2 failed"; exit 1; }
	size=$(($(stat -c %s "$db") - size))
	rm -f "$db"
	echo "$(cat "$DIR/time-$2") $(awk '$1 == "wchar" { w = $2 } $1 == "write_bytes" { b = $2 }
		END { print w, b }' "$DIR/io-$2") $size"
}
if [ "$EVENTS" -gt 0 ]; then
synth_all "$TRACE" --events "$EVENTS"
echo "fleet trace: $EVENTS events, $(du -m "$TRACE.new" | cut -f1) MiB; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"

# Simulator-only: the same events preloaded into memory, no SQLite in the loop.
for b in $builds; do
	echo "-- simulator-only, $b"
	"$(mem "$b")" "$TRACE.$b" | sed "s/^/$b: /"
done

for round in 1 2; do
	for th in 1 2; do
	for b in $builds; do
		read -r wall user rss sys wchar wbytes growth < \
			<(e2e "$b" "$b-three" break,continue,legacy "$TRACE.$b" "$th")
		awk -v n="$EVENTS" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" -v b="$b" -v k="$round" -v t="$th" \
		    -v wc="$wchar" -v wb="$wbytes" -v g="$growth" 'BEGIN {
			printf "end to end, 3 policies, %-4s %d thread(s) (round %d): %10.0f events/s (%.0f over CPU), %7.1f s wall, %7.1f s user, %5.1f s sys, peak RSS %.0f MiB\n",
			       b, t, k, n / w, n / (u + s), w, u, s, r / 1024
			q = g > 0 ? g : 1
			printf "  written: %.1f MB in write calls, %.1f MB to the page cache; the file grew %.1f MB: %.2f x, %.2f x\n",
			       wc / 1e6, wb / 1e6, g / 1e6, wc / q, wb / q }'
		eval "wall_$b=\$wall user_$b=\$user"
	done
	[ -n "$BASE" ] && awk -v a="$wall_base" -v b="$wall_new" -v ua="$user_base" -v ub="$user_new" 'BEGIN {
		printf "  new / base: wall %.2f x, user %.2f x\n", b / a, ub / ua }'
	done
done
rm -f "$TRACE".*
fi

# Peak RSS against the trace's size (break alone and three policies, end to
# end, with the default series): flat means the events stream through and
# only per-cgroup state stays (the held series rows are bounded and spill to
# a file).  A line per build, policies and size, then per build and policies
# the growth from the first size to the last.
for n in $RSS_EVENTS; do
	t=$DIR/fleet-rss-$n.db
	synth_all "$t" --events "$n"
	for pol in break break,continue,legacy; do
		for b in $builds; do
			read -r wall user rss sys wchar _ growth < <(e2e "$b" "$b-rss" "$pol" "$t.$b")
			echo "$b $pol $n $rss" >>"$DIR/rss-table"
			awk -v n="$n" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" -v b="$b" \
			    -v p="$pol" -v wc="$wchar" -v g="$growth" 'BEGIN {
				printf "peak RSS, %4s, %-22s %10d events: %.1f MiB (%.1f s wall, %.1f s user+sys, %.0f events/s; wrote %.2f x the growth)\n",
				       b, p ",", n, r / 1024, w, u + s, n / w, wc / (g > 0 ? g : 1) }'
		done
	done
	rm -f "$t".*
done
[ -s "$DIR/rss-table" ] && awk '{ k = $1 " " $2; if (!(k in first)) { first[k] = $4; fn[k] = $3; o[++nk] = k }
	last[k] = $4; ln[k] = $3 }
	END { for (i = 1; i <= nk; i++) { k = o[i]
		printf "peak RSS growth, %s: %.1f MiB at %d events -> %.1f MiB at %d events (%+.1f MiB)\n",
		       k, first[k] / 1024, fn[k], last[k] / 1024, ln[k], (last[k] - first[k]) / 1024 } }' \
	"$DIR/rss-table"
rm -f "$DIR/rss-table"

# The default command a user runs on a recording: the inferred order (a first
# pass of validate's inference) then the replay, and validate itself, against the plain
# one-policy pass (-m spread), on fleet traces (8 CPUs, 1000+ cgroups; forced
# root flushes every 20 ms, so that validate has values to compare), at -H 64
# (MCR_BENCH_INFER_HYP=N for -H N, empty for the default cap, 1024: a root
# window every 20 ms keeps that cap saturated, and one such run takes minutes).
# Seconds of user time: the machine's other load does not count.  With a
# baseline, both builds run on the same trace, alternating.
# MCR_BENCH_INFER_ONLY=1 runs this section alone.
IEVENTS=${MCR_BENCH_INFER_EVENTS:-50000}
IHYP=${MCR_BENCH_INFER_HYP-64}
utime() {	# build, db, args... -> user seconds of memcg-replay args... db (peak RSS: $DIR/rss)
	local b=$1 db=$2
	shift 2
	cp "$db" "$db.run"
	/usr/bin/time -f '%U %M' -o "$DIR/utime" "$(bin "$b")" "$@" "$db.run" >/dev/null 2>&1
	rm -f "$db.run"
	cut -d' ' -f2 "$DIR/utime" >"$DIR/rss"
	cut -d' ' -f1 "$DIR/utime"
}
for cg in ${MCR_BENCH_INFER_CGROUPS:-1000 2000}; do
	t=$DIR/fleet-infer-$cg.db
	synth_all "$t" --events "$IEVENTS" --cgroups "$cg" --period-ms 20
	for b in $builds; do
		plain=$(utime "$b" "$t.$b" replay -q -p break -m spread)
		# -m inferred: on a synthetic trace the default is spread (exact there)
		inf=$(utime "$b" "$t.$b" replay -q -p break -m inferred ${IHYP:+-H "$IHYP"})
		rss=$(cat "$DIR/rss")
		val=$(utime "$b" "$t.$b" validate -q -r 0 ${IHYP:+-H "$IHYP"})
		awk -v n="$IEVENTS" -v c="$cg" -v p="$plain" -v i="$inf" -v v="$val" -v b="$b" -v h="${IHYP:-default}" -v r="$rss" 'BEGIN {
			q = p > 0 ? p : 0.01
			printf "fleet %d events, %4d cgroups, -H %s, %-4s: plain %.2f s, -m inferred %.2f s (%.1f x, %.0f MiB), validate %.2f s (%.1f x)\n",
			       n, c, h, b, p, i, i / q, r / 1024, v, v / q }'
		eval "inf_$b=\$inf val_$b=\$val"
	done
	[ -n "$BASE" ] && awk -v a="$inf_base" -v b="$inf_new" -v va="$val_base" -v vb="$val_new" 'BEGIN {
		printf "  new / base: -m inferred %.2f x, validate %.2f x\n", b / (a > 0 ? a : 0.01), vb / (va > 0 ? va : 0.01) }'
	rm -f "$t".*
done

# Inference at scale against the ground truth: fleet traces whose windows'
# visits fall at hidden random times (synth --hidden-order), one line per
# scale CPUS:CGROUPS:UPDATES-A-WINDOW (MCR_BENCH_HIDDEN_SCALES), each with
# the plain spread replay in the same invocation: CPU seconds (user + sys),
# wall seconds and peak RSS of the plain replay, of the default inferred
# replay (-m inferred) and of validate, their CPU ratios to the plain
# replay's, the flushes whose stats_updates validate matched of those it
# compared (and the plain spread model's), the hypotheses it kept and
# those the cap dropped (0: exact).  Readers every 4 flush lengths, the
# forced root flush every 8, so that flushes do not queue; the trace holds
# MCR_BENCH_HIDDEN_READS reads' worth of events.  A run past
# MCR_BENCH_HIDDEN_TIMEOUT seconds is reported as such.
HSCALES=${MCR_BENCH_HIDDEN_SCALES-8:1000:100 32:1000:100 64:1000:100 64:100:10 64:5000:100 256:1000:10 8:1000:10000}
HREADS=${MCR_BENCH_HIDDEN_READS:-40}
HTIMEOUT=${MCR_BENCH_HIDDEN_TIMEOUT:-600}
hrun() {	# build, db, args... -> "cpu rss wall", or "timeout"
	local b=$1 db=$2 rc
	shift 2
	cp "$db" "$db.run"
	timeout "$HTIMEOUT" /usr/bin/time -f '%U %S %M %e' -o "$DIR/htime" "$(bin "$b")" "$@" "$db.run" \
		>"$DIR/hout" 2>/dev/null
	rc=$?
	rm -f "$db.run"
	[ $rc = 124 ] && echo timeout ||
		tail -n 1 "$DIR/htime" | awk '{ printf "%.2f %d %.2f\n", $1 + $2, $3, $4 }'
}
for sc in $HSCALES; do
	IFS=: read -r hc hg hw <<<"$sc"
	# one flush: hw updates on each of hc CPUs at 1 M updates/s
	flush_ms=$(awk -v c="$hc" -v w="$hw" 'BEGIN { print c * w / 1000 }')
	hev=$(awk -v f="$flush_ms" -v n="$HREADS" 'BEGIN { e = 4 * f * n * 1000; print (e < 50000 ? 50000 : int(e)) }')
	t=$DIR/hidden-$hc-$hg-$hw.db
	# this build writes the trace (a baseline may lack --hidden-order); both replay it
	"$R" synth --scenario fleet --hidden-order 1 --cpus "$hc" --cgroups "$hg" \
		--window-updates "$hw" --events "$hev" --reader-ms "$(awk -v f="$flush_ms" 'BEGIN { print 4 * f }')" \
		--period-ms "$(awk -v f="$flush_ms" 'BEGIN { print (8 * f < 1 ? 1 : 8 * f) }')" -o "$t" -q ||
		{ echo "synth --hidden-order failed"; exit 1; }
	for b in $builds; do
		read -r pu pr pw <<<"$(hrun "$b" "$t" replay -q -p break -m spread)"
		read -r iu ir iw <<<"$(hrun "$b" "$t" replay -q -p break -m inferred)"
		read -r vu vr vw <<<"$(hrun "$b" "$t" validate -q -r 0 -n 0 -f json)"
		js=$(cat "$DIR/hout")
		field() { sqlite3 :memory: "SELECT json_extract('$js', '\$.$1')" 2>/dev/null; }
		awk -v c="$hc" -v g="$hg" -v w="$hw" -v n="$hev" -v b="$b" -v pu="$pu" -v pr="$pr" \
		    -v iu="$iu" -v ir="$ir" -v vu="$vu" -v vr="$vr" -v pw="$pw" -v iw="$iw" -v vw="$vw" \
		    -v m="$(field stats_updates_match)" -v mp="$(field stats_updates_match_plain)" \
		    -v cmp="$(field compared)" -v k="$(field max_hypotheses)" -v x="$(field hypotheses_capped)" 'BEGIN {
			q = pu > 0 ? pu : 0.01
			f = "%.2f s CPU (%.1f x, %.0f MiB, %.1f s wall)"
			is = iu == "timeout" ? "timeout" : sprintf(f, iu, iu / q, ir / 1024, iw)
			vs = vu == "timeout" ? "timeout" : sprintf(f, vu, vu / q, vr / 1024, vw)
			printf "hidden order %3d CPUs %4d cgroups %5d updates/window, %d events, %-4s: plain %.2f s CPU (%.0f MiB, %.1f s wall), -m inferred %s, validate %s; stats_updates matched %s of %s compared (plain model %s), hypotheses %s, capped %s\n",
			       c, g, w, n, b, pu, pr / 1024, pw, is, vs, m, cmp, mp, k, x == "" ? "-" : x }'
	done
	rm -f "$t"
done

# Recordings (MCR_BENCH_RECORDINGS: trace databases, kept as they are: each
# run replays a copy): what a user runs on one, against the plain spread
# replay of the same file in the same invocation.  The default replay (three
# policies) against -m spread of the same three; the default replay and
# validate of the traced kernel's policy alone against -m spread of that one.
# CPU seconds (user + sys), wall seconds, peak RSS, the ratios of CPU, of
# wall time (the default replay's prepass runs beside its pass) and of peak
# RSS, and the flushes whose stats_updates validate matched, of those compared.
for rec in ${MCR_BENCH_RECORDINGS:-}; do
	[ -f "$rec" ] || { echo "recording $rec: no such file"; continue; }
	for b in $builds; do
		read -r pu pr pw <<<"$(hrun "$b" "$rec" validate -q -r 0 -n 0 -f json)"
		js=$(cat "$DIR/hout")
		kpol=$(sqlite3 :memory: "SELECT json_extract('$js', '\$.policy')" 2>/dev/null)
		match=$(sqlite3 :memory: "SELECT json_extract('$js', '\$.stats_updates_match') || ' of ' ||
			json_extract('$js', '\$.compared')" 2>/dev/null)
		vline="$pu $pr $pw"
		read -r s1u s1r s1w <<<"$(hrun "$b" "$rec" replay -q -m spread -p "$kpol")"
		read -r d1u d1r d1w <<<"$(hrun "$b" "$rec" replay -q -p "$kpol")"
		read -r s3u s3r s3w <<<"$(hrun "$b" "$rec" replay -q -m spread)"
		read -r d3u d3r d3w <<<"$(hrun "$b" "$rec" replay -q)"
		read -r vu vr vw <<<"$vline"
		awk -v f="$(basename "$rec")" -v b="$b" -v k="$kpol" -v m="$match" \
		    -v s1u="$s1u" -v s1r="$s1r" -v s1w="$s1w" -v d1u="$d1u" -v d1r="$d1r" -v d1w="$d1w" \
		    -v s3u="$s3u" -v s3r="$s3r" -v s3w="$s3w" -v d3u="$d3u" -v d3r="$d3r" -v d3w="$d3w" \
		    -v vu="$vu" -v vr="$vr" -v vw="$vw" 'BEGIN {
			q1 = s1u > 0 ? s1u : 0.01; q3 = s3u > 0 ? s3u : 0.01
			w1 = s1w > 0 ? s1w : 0.01; w3 = s3w > 0 ? s3w : 0.01
			f1 = "%s %.2f s CPU (%.1f x), %.1f s wall (%.1f x), %.0f MiB (%.1f x)"
			printf "recording %s, %-4s: " f1 "; " f1 "; " f1 "; stats_updates matched %s compared\n", f, b,
			       "-p " k " -m spread", s1u, 1, s1w, 1, s1r / 1024, 1,
			       "default", d1u, d1u / q1, d1w, d1w / w1, d1r / 1024, d1r / s1r,
			       "validate", vu, vu / q1, vw, vw / w1, vr / 1024, vr / s1r, m
			printf "recording %s, %-4s: three policies: " f1 "; " f1 "\n", f, b,
			       "-m spread", s3u, 1, s3w, 1, s3r / 1024, 1,
			       "default", d3u, d3u / q3, d3w, d3w / w3, d3r / 1024, d3r / s3r }'
	done
done
