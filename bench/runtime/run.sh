#!/usr/bin/env bash
# bench/runtime/run.sh - runs bw_bench_runtime (the runtime against libuv,
# GLib, C-Thread-Pool, OpenMP and oneTBB) from a bench build made by
# bench/run.sh. Flags go to the benchmark (see --help), e.g. --full for the
# target's unscaled 200 x sleep(1 s) case (about 10 minutes). With no flags
# it then runs bw_bench_offload too (bw_parallel_for against OpenMP and
# oneTBB, bw_fd_ready against libuv's uv_poll).
#
# env: BLOCKWATCH_BENCH_BUILD  build directory (default <repo>/build-bench)
#      BENCH_RUNTIME_ARGS      flags added before the command line's
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BLOCKWATCH_BENCH_BUILD:-$root/build-bench}
exe=$build/bench/runtime/bw_bench_runtime
if [ ! -x "$exe" ]; then
  echo "bench/runtime: $exe is not built; run bench/run.sh" >&2
  exit 1
fi
status=0
# shellcheck disable=SC2086 # BENCH_RUNTIME_ARGS is a list of flags
"$exe" ${BENCH_RUNTIME_ARGS:-} "$@" || status=$?
offload=$build/bench/runtime/bw_bench_offload
if [ $# -eq 0 ] && [ -z "${BENCH_RUNTIME_ARGS:-}" ] && [ -x "$offload" ]; then
  echo
  "$offload" || status=$?
fi
exit "$status"
