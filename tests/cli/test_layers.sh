#!/usr/bin/env bash
# The module layering (README, Layout) is the build's: each module compiles with
# the include path of its layer only.  make check-layers feeds each layer a
# header of a module above it and expects the preprocessor to refuse it (and
# one of its own headers, to accept it).
source "$(dirname "$0")/../lib.sh"

command -v make >/dev/null || { skip layers "make not installed"; exit 0; }
if out=$(make -s --no-print-directory -C "$TOP" check-layers 2>&1); then
	expect_match layers_enforced "forbidden includes refused" "$out"
else
	fail layers_enforced "$out"
fi
t_done
