#!/usr/bin/env bash
# demo.sh - the main job on the bundled samples: set up, build, install into
# build/install, then
#   1. blockscan over samples/ (static: which blocking calls a pool can reach)
#   2. starvation_probe under the shim (dynamic: what the blocking cost)
# and print both reports. Exits non-zero only when something failed to run.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}

scripts/setup.sh
# The demo needs no tests; building them would need the test profile's
# packages (scripts/setup.sh --test).
scripts/build.sh "$build" -DBLOCKWATCH_BUILD_TESTS=OFF
cmake --install "$build" --prefix "$build/install" >/dev/null
bin=$build/install/bin

echo
echo "==== blockscan -p $build samples/"
status=0
"$bin/blockscan" -p "$build" samples/ || status=$?
# 1 means findings: the samples block on purpose.
[ "$status" -le 1 ] || { echo "demo: blockscan failed (exit $status)"; exit 1; }

echo
echo "==== blockscan --summary samples/legacy_audit (an audit of legacy code)"
"$bin/blockscan" -p "$build" --summary samples/legacy_audit || [ $? -le 1 ]

echo
echo "==== blockwatch -- starvation_probe (report on stderr, JSON in $build/demo-report.json)"
"$bin/blockwatch" -o "$build/demo-report.json" --trace "$build/demo-trace.json" -- "$build/samples/starvation_probe"
echo
echo "==== $build/demo-report.json"
cat "$build/demo-report.json"
echo
"$bin/bw-trace2svg" -o "$build/demo-timeline.svg" --title "starvation_probe under blockwatch" "$build/demo-trace.json"
echo "==== timeline of the run: $build/demo-timeline.svg (open it in a browser)"
