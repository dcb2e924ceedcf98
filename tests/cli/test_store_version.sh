#!/usr/bin/env bash
# tests/cli/test_store_version.sh - the event store's version (meta
# store_version, db/store.h): synth writes version 2; every reader refuses a
# version above what it knows with exit 6 (NEWER), and a file whose chunks are
# not of the version it names (here version 2 chunks in a file naming none,
# read as version 1) with exit 15 (CORRUPT).
source "$(dirname "$0")/../lib.sh"
cd "$T_TMP" || exit 1
command -v sqlite3 >/dev/null || { skip store_version "no sqlite3 shell"; t_done; }

"$REPLAY" synth -s seed-race -o good.db -q || fail setup "synth failed"
[ "$(sqlite3 good.db "SELECT value FROM meta WHERE key = 'store_version'")" = 2 ] ||
	fail store_version_written "synth did not write store_version 2"
expect_exit good_events 0 "$REPLAY" events good.db

cp good.db newer.db && sqlite3 newer.db "UPDATE meta SET value = '3' WHERE key = 'store_version'"
cp good.db mixed.db && sqlite3 mixed.db "DELETE FROM meta WHERE key = 'store_version'"
for cmd in info replay validate report events; do
	expect_exit "newer_$cmd" 6 timeout 30 "$REPLAY" "$cmd" newer.db
	expect_exit "mixed_$cmd" 15 timeout 30 "$REPLAY" "$cmd" mixed.db
done
t_done
