#!/usr/bin/env bash
# bench/run.sh - builds the benchmarks (Release, in build-bench/) and runs
# every bench part present: bench/<part>/run.sh for runtime, analyzer, shim.
#
# usage: bench/run.sh [part...]      (default: every part that has run.sh)
# env:   BLOCKWATCH_BENCH_BUILD  build directory (default <repo>/build-bench)
#        BENCH_NO_INSTALL=1      skip scripts/setup.sh --bench (no apt-get)
#        BENCH_RUNTIME_ARGS      extra flags for the runtime bench (--full)
# Each part's output is also saved as <build>/bench-<part>.txt.
# Exit status: 1 if configuring or building fails or a part fails.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BLOCKWATCH_BENCH_BUILD:-$root/build-bench}

# The peers come from Debian packages only; scripts/setup.sh --bench holds the
# one list of them and installs what is missing.
if [ "${BENCH_NO_INSTALL:-0}" != 1 ]; then
  "$root/scripts/setup.sh" --bench || { echo "bench: setup failed" >&2; exit 1; }
fi

# Every part the benches time is turned on here: a build directory once
# configured without one keeps its old binaries, which would be timed.
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DBLOCKWATCH_BUILD_BENCH=ON -DBLOCKWATCH_BUILD_ANALYZER=ON \
  -DBLOCKWATCH_BUILD_SHIM=ON || { echo "bench: configure failed" >&2; exit 1; }
cmake --build "$build" -j "$(nproc)" || { echo "bench: build failed" >&2; exit 1; }

parts=("$@")
if [ ${#parts[@]} -eq 0 ]; then
  parts=(runtime analyzer shim)
fi
status=0
for part in "${parts[@]}"; do
  script=$root/bench/$part/run.sh
  if [ ! -f "$script" ]; then
    [ $# -gt 0 ] && { echo "bench: no bench/$part/run.sh" >&2; status=1; }
    continue
  fi
  echo "== bench/$part"
  BLOCKWATCH_BENCH_BUILD=$build bash "$script" | tee "$build/bench-$part.txt" ||
    { echo "bench: bench/$part failed" >&2; status=1; }
done
exit $status
