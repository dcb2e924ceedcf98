#!/usr/bin/env bash
# tests/cli/test_html.sh - report --format html on the synthetic pagecache scenario
# (2 s, forced flushes every 500 ms, replayed with -m spread): one self-contained page (nothing fetched, no script)
# whose HTML and every inline SVG parse (xmllint), that shows the root's worst lines and
# the stranded time break has and continue has not; several databases make a fleet page
# and a host column; and a real browser (chromium, headless) renders it: the screenshot
# is the window's size, not blank, and the plot column holds both policies' colours.
# The pagecache scenario strands the root under break (a walk that stops at the
# flushable leaf never credits it) and never under continue (test_replay.sh).
source "$(dirname "$0")/../lib.sh"

DB=$T_TMP/pc.db
HTML=$T_TMP/pc.html
"$REPLAY" synth -q --scenario pagecache --duration 2 --period-ms 500 -o "$DB" || fail synth pagecache
"$REPLAY" replay -m spread "$DB" >/dev/null || fail replay pagecache

expect_exit html_write 0 "$REPLAY" report "$DB" --format html -o "$HTML"
[ -s "$HTML" ] && pass html_file || fail html_file "$HTML not written"
[ -z "$T_OUT" ] && pass html_nothing_on_stdout || fail html_nothing_on_stdout "$T_OUT"
page=$(cat "$HTML")
expect_match html_doctype '^<!DOCTYPE html>' "$(head -1 "$HTML")"
# self-contained: no script, nothing fetched (the one URL is the SVG namespace name)
if grep -Eiq '<script|<link|<img|<iframe|@import|url\(|src=' "$HTML" ||
   grep -Eo 'https?://[^"]*' "$HTML" | grep -vqx 'http://www.w3.org/2000/svg'; then
	fail html_self_contained "$(grep -Eion '<script|<link|<img|@import|url\(|src=|https?://[^"]*' "$HTML" | head -3)"
else
	pass html_self_contained
fi
expect_match html_print_rules '@media print\{' "$page"
expect_match html_meta_kernel '<dt>kernel</dt><dd>6.18.0-synth</dd>' "$page"
expect_match html_meta_clock '<dt>clock</dt><dd>mono</dd>' "$page"
expect_match html_meta_cpus '<dt>CPUs</dt><dd>4 online, 4 possible</dd>' "$page"
expect_match html_no_loss '<dt>lost events</dt><dd>none</dd>' "$page"
# the root first (largest read error), its NR_FILE_PAGES plotted, stranded under break only
expect_match html_root_first '^/ <small>id 1, level 0, [0-9]+ reads; worst read error [0-9.]+ [MG]iB; <b class="bad">stranded' \
	"$(grep -o '<h3>.*</h3>' "$HTML" | head -1 | sed 's/<h3>//')"
expect_match html_root_chart '<figcaption>NR_FILE_PAGES \(v1 total_cache, v2 file\) <small>pages, shown in MiB' "$page"
expect_match html_axis_units 'seconds from trace start' "$page"
expect_match html_axis_mib 'shown &#8722; truth, MiB|shown − truth, MiB' "$page"
expect_match html_episode_shaded '<rect x="[0-9.]+" y="14" width="[0-9.]+" height="196" fill="#d62728" fill-opacity' "$page"
if grep -q 'fill="#1f77b4" fill-opacity' "$HTML"; then
	fail html_continue_not_stranded "a stranded episode shaded in continue's colour"
else
	pass html_continue_not_stranded
fi
expect_match html_forced_marked '<path class="forced" d="M[0-9]' "$page"
expect_match html_stale_marked '<path class="stale" stroke="#d62728" d="M' "$page"
expect_match html_line_table '<table class="lines">' "$page"
expect_match html_cost_table 'What each policy cost' "$page"
expect_match html_not_validated 'Not validated' "$page"
size=$(stat -c %s "$HTML")
# 2 s at 1 GiB/s: a few charts of at most 2 x 826 points per policy; far below 1 MiB
[ "$size" -lt 400000 ] && pass html_small || fail html_small "$size bytes"

# a trace that lost events says so at the top, in words
LOSSY=$T_TMP/lossy.db
cp "$DB" "$LOSSY"
sqlite3 "$LOSSY" "INSERT INTO gaps VALUES (1, 1000, 42)" 2>/dev/null &&
	expect_exit html_lossy 0 "$REPLAY" report "$LOSSY" --no-check --format html -o "$T_TMP/lossy.html" &&
	expect_match html_lossy_banner '<p class="banner">This trace lost events: 1 gap in the ring buffers \(42 events counted\)' \
		"$(cat "$T_TMP/lossy.html")"

# HTML and SVG parse.  xmllint --html knows HTML 4 only: it names svg's tags "invalid"
# and nothing else may appear.
if ! command -v xmllint >/dev/null; then
	skip html_parse "xmllint not installed (make deps: libxml2-utils)"
else
	errs=$(xmllint --html --noout "$HTML" 2>&1 | grep -E 'error|warning' | grep -Ev 'Tag [a-z]+ invalid')
	[ -z "$errs" ] && pass html_parse || fail html_parse "$(printf '%s\n' "$errs" | head -3)"
	awk -v dir="$T_TMP" 'BEGIN { RS = "</svg>" } /<svg/ { sub(/.*<svg/, "<svg"); n++;
		print $0 "</svg>" > (dir "/chart" n ".svg") } END { print n + 0 }' "$HTML" >"$T_TMP/nsvg"
	nsvg=$(cat "$T_TMP/nsvg")
	[ "$nsvg" -ge 3 ] && pass html_svg_count || fail html_svg_count "$nsvg charts"
	bad=0
	for f in "$T_TMP"/chart*.svg; do
		xmllint --noout "$f" 2>"$T_TMP/xerr" || { bad=1; fail html_svg_parse "$(basename "$f"): $(head -2 "$T_TMP/xerr")"; break; }
	done
	[ $bad = 0 ] && pass html_svg_parse
fi

# ---- several databases: a fleet page, a host column ----
DB2=$T_TMP/sr.db
"$REPLAY" synth -q --scenario seed-race -o "$DB2" || fail synth seed-race
"$REPLAY" validate "$DB2" -n 0 -r 0 >/dev/null || fail validate seed-race
"$REPLAY" replay "$DB2" >/dev/null || fail replay seed-race
# validate on the seed race (capture/synth_race.c): 4 flush requests (forced at 2000 and
# 7000 us, reads at 4000 and 5000); the first is before the simulator's counters are in
# sync (skipped_before_sync 1), the other 3 are compared and match, as test_replay.sh has
expect_exit html_validated 0 "$REPLAY" report "$DB2" --format html -o "$T_TMP/sr.html"
expect_match html_validation '<p>Run 1 \(break, flush model [a-z]+\): of 4 flush events, 3 compared; stats_updates matched <b>100.0 %</b> \(3\)' \
	"$(cat "$T_TMP/sr.html")"
expect_exit fleet_html 0 "$REPLAY" report "$DB" "$DB2" --format html -o "$T_TMP/fleet.html"
fleet=$(cat "$T_TMP/fleet.html")
expect_match fleet_summary '<h2>Fleet: 2 hosts</h2>' "$fleet"
expect_match fleet_sections '^2$' "$(grep -c '<section class="host" id="host-[01]">' "$T_TMP/fleet.html")"
# pagecache strands the root (1 ancestor) under break; seed-race strands nothing
expect_match fleet_row_pc '<a href="#host-0">synth:pagecache</a></td><td>[^<]*/pc[^<]*\.db</td><td class="n bad">1</td>' "$fleet"
expect_match fleet_row_sr '<a href="#host-1">synth:seed-race</a></td><td>[^<]*\.db</td><td class="n">0</td><td>2.00 MiB NR_FILE_PAGES of / under break' "$fleet"
expect_exit fleet_csv 0 "$REPLAY" report "$DB" "$DB2" --format csv
expect_match fleet_csv_header '^host,file,policy,run_id,' "$(printf '%s\n' "$T_OUT" | head -1)"
expect_match fleet_csv_hosts '^synth:pagecache,synth:seed-race$' \
	"$(printf '%s\n' "$T_OUT" | awk -F, 'NR > 1 { print $1 }' | sort -u | paste -sd,)"
one=$("$REPLAY" report "$DB2" --format csv | awk 'NR > 1' | wc -l)
expect_match fleet_csv_rows "^$one\$" "$(printf '%s\n' "$T_OUT" | grep -c '^synth:seed-race,')"
expect_exit fleet_json 0 "$REPLAY" report "$DB" "$DB2" --format json
expect_match fleet_json_host '^\[\{"host":"synth:pagecache","file":"[^"]+","policy":' "$T_OUT"
expect_exit fleet_table 0 "$REPLAY" report "$DB" "$DB2"
expect_match fleet_table_hosts '^== host synth:seed-race \(' "$T_OUT"
expect_exit fleet_one_bad 17 "$REPLAY" report "$DB" "$DB2" --run 99 --format html -o "$T_TMP/x.html"
[ ! -e "$T_TMP/x.html" ] && pass fleet_no_partial_output || fail fleet_no_partial_output "written"

# ---- a real browser ----
CHROME=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROME" ]; then
	skip html_browser "chromium not installed (make deps installs Debian's chromium)"
elif ! command -v python3 >/dev/null; then
	skip html_browser "python3 not installed (make deps) to decode the screenshot"
else
	prof=$(mktemp -d "$T_TMP/chrome.XXXXXX")
	timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$prof" --screenshot="$T_TMP/pc.png" --window-size=1280,2000 \
		"file://$HTML" >"$T_TMP/chrome.log" 2>&1
	if [ ! -s "$T_TMP/pc.png" ]; then
		fail html_browser "no screenshot: $(tail -2 "$T_TMP/chrome.log")"
	else
		# the plot column: left of x 700 below the page's header (y 300)
		python3 "$TOP/tests/cli/png_check.py" "$T_TMP/pc.png" 0,300,700,2000 \
			break=d62728 continue=1f77b4 >"$T_TMP/png" 2>&1 || fail html_png_decode "$(tail -1 "$T_TMP/png")"
		png=$(cat "$T_TMP/png")
		expect_match html_png_size '^size 1280 2000$' "$png"
		# not blank: a page of text and charts has thousands of colours and > 5 % ink
		expect_match html_png_colours '^distinct ([0-9]{4,})$' "$png"
		inked=$(awk '$1 == "inked" { print $2 }' <<<"$png")
		[ "${inked:-0}" -ge 5 ] && pass html_png_inked || fail html_png_inked "${inked:-?} %"
		b=$(awk '$1 == "colour" && $2 == "break" { print $3 }' <<<"$png")
		c=$(awk '$1 == "colour" && $2 == "continue" { print $3 }' <<<"$png")
		[ "${b:-0}" -ge 200 ] && pass html_png_break || fail html_png_break "${b:-?} px"
		[ "${c:-0}" -ge 200 ] && pass html_png_continue || fail html_png_continue "${c:-?} px"
	fi
fi
t_done
