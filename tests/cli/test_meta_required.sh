#!/usr/bin/env bash
# tests/cli/test_meta_required.sh - every meta value is either required or has
# a default (db/validate.c, documented in the meta table's comment): a
# missing required one (what TH and the page figures are made of, the bound
# of every CPU) is exit 17 from every reader, naming it; a missing optional
# one is read as its default, said once on stderr.  Before: a missing
# batch_size or page_size exited 0 silently, a missing nr_cpus_possible 7.
source "$(dirname "$0")/../lib.sh"
cd "$T_TMP" || exit 1
command -v sqlite3 >/dev/null || { skip meta_required "no sqlite3 shell"; t_done; }
"$REPLAY" synth -s seed-race -o good.db -q || fail setup "synth failed"

for key in nr_cpus_possible nr_cpus_online batch_size page_size; do
	for how in deleted empty; do
		cp good.db "$key-$how.db"
		if [ $how = deleted ]; then
			sqlite3 "$key-$how.db" "DELETE FROM meta WHERE key = '$key'"
		else
			sqlite3 "$key-$how.db" "UPDATE meta SET value = '' WHERE key = '$key'"
		fi
		for cmd in info replay validate report events; do
			expect_exit "${key}_${how}_$cmd" 17 timeout 30 "$REPLAY" $cmd "$key-$how.db" &&
				expect_match "${key}_${how}_${cmd}_msg" "meta $key missing or empty: required" "$T_ERR"
		done
	done
done
# a bad nr_cpus_possible: one code from every reader (was 7 from info and report, 17 from replay)
for v in x 0 -3 100000; do
	cp good.db "possible$v.db"
	sqlite3 "possible$v.db" "UPDATE meta SET value = '$v' WHERE key = 'nr_cpus_possible'"
	for cmd in info replay validate report events; do
		expect_exit "possible_${v}_$cmd" 17 timeout 30 "$REPLAY" $cmd "possible$v.db" &&
			expect_match "possible_${v}_${cmd}_msg" "meta nr_cpus_possible = '?$v'?: " "$T_ERR"
	done
done

# optional: exit 0, its default said in exactly one line
for key in kernel_release trace_clock memory_hierarchy_id; do
	cp good.db "$key.db"
	sqlite3 "$key.db" "DELETE FROM meta WHERE key = '$key'"
	for cmd in info replay report; do
		expect_exit "${key}_optional_$cmd" 0 timeout 30 "$REPLAY" $cmd "$key.db"
		n=$(printf '%s\n' "$T_ERR" | grep -c "meta $key missing: taken as")
		[ "$n" = 1 ] && pass "${key}_optional_${cmd}_said_once" ||
			fail "${key}_optional_${cmd}_said_once" "said $n times: $T_ERR"
	done
done
# the good file: no warning at all
expect_exit good_info 0 "$REPLAY" info good.db
[ -z "$T_ERR" ] && pass good_info_quiet || fail good_info_quiet "stderr: $T_ERR"
t_done
