#!/usr/bin/env bash
# build.sh DIR [cmake args...] - configure and build blockwatch in DIR.
# The compiler's output goes to DIR/build.log and is shown only on failure,
# so the commands that call this print what matters: results.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: build.sh DIR [cmake args...]}
shift
extra=()
if [ -x .tools/node_modules/.bin/sarif-multitool ]; then
  extra+=("-DBLOCKWATCH_SARIF_MULTITOOL=$PWD/.tools/node_modules/.bin/sarif-multitool")
fi
mkdir -p "$dir"
echo "build: $dir $*"
if ! { cmake -S . -B "$dir" "${extra[@]}" "$@" && cmake --build "$dir" -j "$(nproc)"; } >"$dir/build.log" 2>&1; then
  tail -n 60 "$dir/build.log"
  echo "build: FAILED (whole log: $dir/build.log)"
  exit 1
fi
