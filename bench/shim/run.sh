#!/usr/bin/env bash
# bench/shim/run.sh - per-call overhead of libblockwatch.so: runs
# bw_bench_shim natively and under LD_PRELOAD (worker_name=work-*, lock=1,
# no report) and prints both figures and their difference in ns per call.
# env: BLOCKWATCH_BENCH_BUILD (default <repo>/build-bench), BENCH_SHIM_ITERS.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BLOCKWATCH_BENCH_BUILD:-$root/build-bench}
bin=$build/bench/shim/bw_bench_shim
lib=$build/shim/libblockwatch.so
[ -x "$bin" ] && [ -f "$lib" ] || { echo "bench/shim: build first (bench/run.sh)" >&2; exit 1; }
iters=${BENCH_SHIM_ITERS:-200000}

native=$("$bin" "$iters")
shimmed=$(LD_PRELOAD=$lib BLOCKWATCH_OPTIONS='worker_name=work-*:lock=1:report=none' "$bin" "$iters")

printf '%-22s %10s %10s %10s\n' measurement native shim overhead
while read -r name ns; do
  s=$(printf '%s\n' "$shimmed" | awk -v n="$name" '$1 == n { print $2 }')
  awk -v n="$name" -v a="$ns" -v b="$s" 'BEGIN { printf "%-22s %10.1f %10.1f %+10.1f\n", n, a, b, b - a }'
done <<<"$native"
echo "(ns per call, best of 5 runs of $iters; mutex_pair is one lock+unlock)"

# A whole program: 4 threads sharing a mutex, computing and polling; the
# shim counts its contended locks (lock=1).
w_native=$("$bin" "$iters" whole | awk '{ print $2 }')
w_shim=$(LD_PRELOAD=$lib BLOCKWATCH_OPTIONS='lock=1:report=none' "$bin" "$iters" whole | awk '{ print $2 }')
awk -v a="$w_native" -v b="$w_shim" 'BEGIN { printf "%-22s %10.1f %10.1f %+9.1f%%  (ms, whole run)\n", "whole_program", a, b, (b - a) * 100 / a }'
