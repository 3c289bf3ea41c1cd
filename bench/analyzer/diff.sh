#!/usr/bin/env bash
# bench/analyzer/diff.sh - what --diff costs: blockscan on this repository's
# own code with a one-function change, a full run against --diff HEAD, as a
# ratio of wall-clock medians.
#
# --diff still analyses the whole program (a new registration can make old
# code reachable), so the ratio says what reading the change adds: running
# git diff and ls-files, and filtering the findings. The corpus is a clone
# of this repository's HEAD in a temporary directory, configured (not
# built) for compile_commands.json; the change appends one function to
# runtime/src/pool.c.
#
# env: BLOCKWATCH_BENCH_BUILD  build directory holding analyzer/blockscan
#                              (default <repo>/build-bench)
#      BENCH_DIFF_RUNS         runs per configuration (default 5)
#      BENCH_DIFF_JOBS         blockscan -j (default 2)
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BLOCKWATCH_BENCH_BUILD:-$root/build-bench}
blockscan=$(cd "$build" && pwd)/analyzer/blockscan
runs=${BENCH_DIFF_RUNS:-5}
jobs=${BENCH_DIFF_JOBS:-2}
[ -x "$blockscan" ] || { echo "bench/analyzer/diff: $blockscan is not built" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-diff.XXXXXX")
trap 'rm -rf "$work"' EXIT
git clone -q "$root" "$work/src"
cmake -S "$work/src" -B "$work/src/build" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
  -DBLOCKWATCH_BUILD_TESTS=OFF >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log" >&2; exit 1; }
printf '\nint bench_diff_added(int x) {\n  return x + 1;\n}\n' >>"$work/src/runtime/src/pool.c"

# median SECONDS...: the middle value (the lower one of an even count).
median() { printf '%s\n' "$@" | sort -n | sed -n "$(((($# + 1) / 2)))p"; }

# times ARGS...: $runs wall-clock times of blockscan ARGS, in seconds.
times() {
  local i start end
  for ((i = 0; i < runs; i++)); do
    start=$(date +%s.%N)
    (cd "$work/src" && "$blockscan" -p build -j "$jobs" "$@" >/dev/null 2>&1) || [ $? = 1 ]
    end=$(date +%s.%N)
    awk -v a="$start" -v b="$end" 'BEGIN { print b - a }'
  done
}

tus=$(grep -c '"file"' "$work/src/build/compile_commands.json")
echo "machine: $(nproc) CPUs, $(uname -m), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "date:    $(date -u +%Y-%m-%dT%H:%MZ); corpus: this repository at $(git -C "$root" rev-parse --short HEAD), $tus translation units, -j $jobs, $runs runs each"
full=$(median $(times))
diff=$(median $(times --diff HEAD))
printf 'full run:      %.3f s (median)\n--diff HEAD:   %.3f s (median)\nratio:         %.3f\n' \
  "$full" "$diff" "$(awk -v a="$full" -v b="$diff" 'BEGIN { print b / a }')"
