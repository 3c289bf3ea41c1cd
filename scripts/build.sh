#!/usr/bin/env bash
# build.sh DIR [cmake args...] - configure (once) and build blockwatch in DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: build.sh DIR [cmake args...]}
shift
extra=()
if [ -x .tools/node_modules/.bin/sarif-multitool ]; then
  extra+=("-DBLOCKWATCH_SARIF_MULTITOOL=$PWD/.tools/node_modules/.bin/sarif-multitool")
fi
cmake -S . -B "$dir" "${extra[@]}" "$@" >/dev/null
cmake --build "$dir" -j "$(nproc)"
