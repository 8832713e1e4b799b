#!/bin/sh
# NOT a kernel: a stand-in that fails on purpose, so the runner's handling of crashes, hangs and missing
# records can be tested. The tests link it as build-bin-style names failinject-sh-<mode>; the mode is the
# part of the name after the last '-'.
case "$1" in
--help) echo "Usage: failure injection stand-in. Options: --threads N --reps K --warmup W"; exit 0 ;;
esac
mode=${0##*-}
case "$mode" in
crash) echo "about to crash" >&2; kill -SEGV $$ ;;
hang) echo "hanging" >&2; sleep 300 ;;
norecord) echo "this is not a JSON record"; echo '{"schema": "something-else/1"}' ;;
exit3) echo "bad things happened" >&2; exit 3 ;;
exit2) echo "failinject-sh-exit2: --width: '5' is out of range (8..64)" >&2; exit 2 ;;
holdout) sleep 300 & exit 0 ;;  # exits at once, but its child keeps stdout open
*) echo "unknown failure mode $mode" >&2; exit 2 ;;
esac
