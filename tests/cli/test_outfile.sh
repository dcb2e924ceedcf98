#!/usr/bin/env bash
# tests/cli/test_outfile.sh - the output-file policy of synth, import, report
# and calibrate (cli/outfile.h): only regular files (or nothing) are replaced,
# never the input, never a file that is not ours without --force (for report
# and calibrate: never a trace database), and a failed or interrupted run
# leaves the old output as it was, with no -wal/-shm beside it.  Inputs read
# whole must be regular files: a FIFO is refused, never waited on.
source "$(dirname "$0")/../lib.sh"

t_lsan_import	# libtracecmd's v6 leak, suppressed by name (tests/lib.sh)
DAT="$TOP/tests/fuzz/corpus/import/v6-2cpu.dat"	# a 2-CPU v6 recording, cut small
cd "$T_TMP" || exit 1

# same_file NAME A B: byte for byte
same_file() { if cmp -s "$2" "$3"; then pass "$1"; else fail "$1" "$2 changed"; fi; }
# no_sidecars NAME: no -wal, -shm or temporary file left in $T_TMP
no_sidecars() {
	local left
	left=$(ls -a | grep -E -- '-wal$|-shm$|\.tmp-|\.partial-' | tr '\n' ' ')
	if [ -z "$left" ]; then pass "$1"; else fail "$1" "left behind: $left"; fi
}

"$REPLAY" synth -s seed-race -o prev.db -q || fail synth_setup "synth failed"
cp prev.db prev.orig

# a device is never replaced (as root, -o /dev/null would delete /dev/null)
if mknod node c 1 3 2>/dev/null; then
	expect_exit synth_device_refused 3 "$REPLAY" synth -s seed-race -o node -q
	if [ -c node ]; then pass synth_device_kept; else fail synth_device_kept "node is no longer a device"; fi
	expect_match synth_device_msg "node .*not a regular file" "$T_ERR"
	expect_exit synth_device_force_refused 3 "$REPLAY" synth -s seed-race -o node -q --force
else
	skip synth_device_refused "mknod needs root"
fi
mkfifo fifo
expect_exit synth_fifo_refused 3 "$REPLAY" synth -s seed-race -o fifo -q
if [ -p fifo ]; then pass synth_fifo_kept; else fail synth_fifo_kept "fifo replaced"; fi
mkdir dir.db
expect_exit synth_dir_refused 3 "$REPLAY" synth -s seed-race -o dir.db -q

# a file that is not ours: only with --force
printf 'my notes\n' >notes.txt
expect_exit synth_not_ours_refused 3 "$REPLAY" synth -s seed-race -o notes.txt -q
expect_match synth_not_ours_msg "notes.txt exists and is not a memcg-replay database.*--force" "$T_ERR"
same_file synth_not_ours_kept notes.txt <(printf 'my notes\n')
expect_exit synth_not_ours_force 0 "$REPLAY" synth -s seed-race -o notes.txt -q --force
expect_exit synth_forced_is_db 0 "$REPLAY" info notes.txt
# ours is replaced without --force, and the result is a good database
expect_exit synth_replaces_ours 0 "$REPLAY" synth -s seed-race -o prev.db -q --seed 2
expect_exit synth_replaced_reads 0 "$REPLAY" info prev.db
cp prev.orig prev.db

# a bad option or a failing run leaves the old file as it was
expect_exit synth_bad_option_keeps 2 "$REPLAY" synth -s seed-race -o prev.db -q --cpus=0
same_file synth_bad_option_kept prev.db prev.orig
# SIGTERM in the middle: the old file stays, no partial file, no sidecars
# (signalled once its temporary file is there: a run that ended first is a SKIP)
"$REPLAY" synth -s fleet -o prev.db -q --events=50000000 &
pid=$!
while kill -0 "$pid" 2>/dev/null && [ ! -e ".prev.db.tmp-$pid" ]; do sleep 0.01; done
if kill -TERM "$pid" 2>/dev/null; then
	wait "$pid"
	rc=$?
	if [ "$rc" -eq 143 ]; then pass synth_sigterm_exit; else fail synth_sigterm_exit "exit $rc, wanted 143"; fi
	same_file synth_sigterm_kept prev.db prev.orig
	no_sidecars synth_sigterm_clean
else
	wait "$pid"
	skip synth_sigterm "synth finished before it could be signalled"
	cp prev.orig prev.db
fi

# a full disk: the old file stays, nothing else is left
if [ "$(id -u)" -eq 0 ] && mkdir small && mount -t tmpfs -o size=256k tmpfs small 2>/dev/null; then
	t_on_exit "umount '$T_TMP/small'"
	cp prev.orig small/prev.db
	expect_exit synth_full_disk 1 "$REPLAY" synth -s fleet -o small/prev.db -q --events=2000000
	same_file synth_full_disk_kept small/prev.db prev.orig
	left=$(ls -a small | grep -v -E '^\.\.?$|^prev\.db$' | tr '\n' ' ')
	if [ -z "$left" ]; then pass synth_full_disk_clean; else fail synth_full_disk_clean "left: $left"; fi
else
	skip synth_full_disk "needs root to mount a small tmpfs"
fi

# import: never its own input, by default name or by -o
cp "$DAT" t.db
cp "$DAT" x.dat
expect_exit import_default_out_is_input 3 "$REPLAY" import t.db -q
same_file import_input_kept_default t.db "$DAT"
expect_exit import_out_is_input 3 "$REPLAY" import x.dat -o x.dat -q
expect_exit import_out_is_input_force 3 "$REPLAY" import x.dat -o x.dat -q --force
same_file import_input_kept x.dat "$DAT"
ln x.dat hard.db
expect_exit import_out_is_input_link 3 "$REPLAY" import x.dat -o hard.db -q
expect_match import_out_is_input_msg "output hard.db is the input" "$T_ERR"
expect_exit import_fifo_refused 3 "$REPLAY" import x.dat -o fifo -q
printf 'keep\n' >notes2.txt
expect_exit import_not_ours_refused 3 "$REPLAY" import x.dat -o notes2.txt -q
# the temporary name of a killed run whose pid is ours now (a capture keeps
# its recording there) is neither refused nor touched: another name is taken
printf 'kept\n' >reuse.orig
expect_exit tmp_name_taken 0 bash -c 'cp reuse.orig ".reuse.db.tmp-$$" && exec "$0" synth -s seed-race -o reuse.db -q' "$REPLAY"
for f in .reuse.db.tmp-*; do same_file tmp_name_taken_kept "$f" reuse.orig; rm -f "$f"; done
expect_exit tmp_name_taken_out 0 "$REPLAY" info reuse.db
# a stale -journal that cannot be removed (here a directory) would be played
# into the new file by its next reader: not published beside it, said so
mkdir sc.db-journal && : >sc.db-journal/x
expect_exit stale_sidecar_refused 3 "$REPLAY" synth -s seed-race -o sc.db -q
expect_match stale_sidecar_msg "output sc.db has a stale -journal, -wal or -shm beside it that cannot be removed" "$T_ERR"
if [ -e sc.db ]; then fail stale_sidecar_no_file "sc.db published"; else pass stale_sidecar_no_file; fi
rm -rf sc.db-journal
# a trace database given to import is said to be one, not "the input file"
cp prev.orig db-given.db
expect_exit import_db_given 15 "$REPLAY" import db-given.db -q
expect_match import_db_given_msg "db-given.db is a memcg-replay trace database already, not a trace-cmd recording" "$T_ERR"
same_file import_db_given_kept db-given.db prev.orig
expect_exit import_ours_replaced 0 "$REPLAY" import x.dat -o prev.db -q
expect_exit import_replaced_reads 0 "$REPLAY" info prev.db
# an output directory it cannot write: named as the output's problem
mkdir ro && chmod 555 ro
if [ "$(id -u)" -eq 0 ] && mount --bind -o ro ro ro 2>/dev/null; then
	t_on_exit "umount '$T_TMP/ro'"
fi
if ! touch ro/probe 2>/dev/null; then
	expect_exit import_output_unwritable 3 "$REPLAY" import x.dat -o ro/out.db -q
	expect_match import_output_unwritable_msg "output ro/out.db" "$T_ERR"
else
	rm -f ro/probe
	skip import_output_unwritable "cannot make a read-only directory here"
fi

# report -o: never an input, a trace database or a foreign file unforced, never a FIFO
"$REPLAY" synth -s seed-race -o rep.db -q && "$REPLAY" replay rep.db -q >/dev/null ||
	fail report_setup "synth or replay failed"
cp rep.db rep.orig
t_calibration cal0.json 11 1 1 2 20 1 3 9
cp cal0.json cal0.orig
expect_exit report_out_is_input 3 "$REPLAY" report rep.db -o rep.db
expect_match report_out_is_input_msg "output rep.db is the input file" "$T_ERR"
same_file report_input_kept rep.db rep.orig
expect_exit report_out_is_input_force 3 "$REPLAY" report rep.db -o rep.db --force
same_file report_input_kept_force rep.db rep.orig
cp rep.orig rep.db	# for the old build's sake: each check below on its own
expect_exit report_out_is_calibration 3 "$REPLAY" report rep.db --cost --calibration cal0.json -o cal0.json
same_file report_calibration_kept cal0.json cal0.orig
cp rep.orig rep.db
cp prev.orig other.db
expect_exit report_over_db 3 "$REPLAY" report rep.db --format csv -o other.db
expect_match report_over_db_msg "other.db is a memcg-replay trace database, not a report.*--force" "$T_ERR"
same_file report_over_db_kept other.db prev.orig
printf 'my notes\n' >notes3.txt
expect_exit report_foreign 3 "$REPLAY" report rep.db -o notes3.txt
expect_match report_foreign_msg "notes3.txt exists and is not a report.*--force" "$T_ERR"
same_file report_foreign_kept notes3.txt <(printf 'my notes\n')
expect_exit report_foreign_force 0 "$REPLAY" report rep.db -o notes3.txt --force
expect_match report_foreign_forced "^Verdict for " "$(head -1 notes3.txt)"
# its own reports, of every format, it replaces
for f in table csv json html; do
	expect_exit report_replaces_$f 0 "$REPLAY" report rep.db -f "$f" -o r.out
	expect_exit report_replaces_${f}_cost 0 "$REPLAY" report rep.db -f "$f" --cost -o r.out
done
expect_exit report_fifo_out 3 timeout 10 "$REPLAY" report rep.db -o fifo
expect_match report_fifo_out_msg "fifo is a FIFO, not a regular file" "$T_ERR"
expect_exit report_dir_out 3 "$REPLAY" report rep.db -o dir.db
long=$(printf 'n%.0s' $(seq 300))
expect_exit report_name_too_long 3 "$REPLAY" report rep.db -o "$long"
expect_exit synth_name_too_long 3 "$REPLAY" synth -s seed-race -o "$long" -q
expect_exit report_no_dir 3 "$REPLAY" report rep.db -o nodir/r.txt
ln -s nowhere.db dangling.db
expect_exit synth_dangling_link 3 "$REPLAY" synth -s seed-race -o dangling.db -q
expect_match synth_dangling_link_msg "dangling.db is a symbolic link to nothing" "$T_ERR"

# calibrate -o writes JSON: never over a trace database (that is --db's)
cp prev.orig other.db
expect_exit calibrate_over_db 3 "$REPLAY" calibrate -q -o other.db
expect_match calibrate_over_db_msg "other.db is a trace database.*--db FILE" "$T_ERR"
same_file calibrate_over_db_kept other.db prev.orig
printf 'my notes\n' >notes4.txt
expect_exit calibrate_over_foreign 3 "$REPLAY" calibrate -q -o notes4.txt
same_file calibrate_over_foreign_kept notes4.txt <(printf 'my notes\n')
expect_exit calibrate_new 0 "$REPLAY" calibrate -q -o cal.json
expect_exit calibrate_replaces_own 0 "$REPLAY" calibrate -q -o cal.json
expect_exit calibrate_fifo_out 3 timeout 10 "$REPLAY" calibrate -q -o fifo
expect_exit calibrate_out_is_db 3 "$REPLAY" calibrate -q -o rep.db --db rep.db
same_file calibrate_out_is_db_kept rep.db rep.orig

# inputs read whole: a FIFO is refused at once, a directory or device named as such
expect_exit import_fifo_in 3 timeout 10 "$REPLAY" import fifo -o in.db -q
expect_match import_fifo_in_msg "fifo is a FIFO, not a regular file" "$T_ERR"
expect_exit calibrate_fifo_from 3 timeout 10 "$REPLAY" calibrate --from fifo -o cal2.json
expect_match calibrate_fifo_from_msg "from fifo is a FIFO" "$T_ERR"
expect_exit report_fifo_calibration 3 timeout 10 "$REPLAY" report rep.db --cost --calibration fifo
expect_match report_fifo_calibration_msg "calibration fifo is a FIFO" "$T_ERR"
expect_exit report_dir_calibration 3 "$REPLAY" report rep.db --cost --calibration dir.db
expect_match report_dir_calibration_msg "calibration dir.db is a directory" "$T_ERR"
expect_exit import_dev_null 3 "$REPLAY" import /dev/null -o in.db -q
expect_match import_dev_null_msg "/dev/null is a device, not a regular file" "$T_ERR"
[ -e in.db ] && fail import_dev_null_nothing "in.db written" || pass import_dev_null_nothing
[ -p fifo ] && pass fifo_still_fifo || fail fifo_still_fifo "fifo replaced"
no_sidecars outfile_no_sidecars
t_done
