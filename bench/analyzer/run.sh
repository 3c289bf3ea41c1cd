#!/usr/bin/env bash
# bench/analyzer/run.sh - times blockscan against clang -fsyntax-only over a
# compilation database, with -j 1 and -j 2, from a bench build made by
# bench/run.sh. The corpus is the bench build's own compile_commands.json
# (this repository's C code) unless BENCH_ANALYZER_DB names another build
# directory.
#
# env: BLOCKWATCH_BENCH_BUILD  build directory (default <repo>/build-bench)
#      BENCH_ANALYZER_DB       build directory whose database is the corpus
#      BENCH_ANALYZER_RUNS     runs per configuration (default 5)
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BLOCKWATCH_BENCH_BUILD:-$root/build-bench}
exe=$build/bench/analyzer/bw_bench_analyzer
if [ ! -x "$exe" ]; then
  echo "bench/analyzer: $exe is not built; run bench/run.sh" >&2
  exit 1
fi
echo "machine: $(nproc) CPUs, $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
echo "date:    $(date -u +%Y-%m-%dT%H:%MZ)"
exec "$exe" -p "${BENCH_ANALYZER_DB:-$build}" -r "${BENCH_ANALYZER_RUNS:-5}" "$@"
