#!/usr/bin/env bash
# bench/analyzer/diff.sh - what --diff costs: blockscan with a one-function
# change, the cached re-run against the same re-run with --diff HEAD, as a
# ratio of wall-clock medians.
#
# --diff still analyses the whole program (a new registration can make old
# code reachable), so the ratio says what reading the change adds: git
# rev-parse before the analysis, git diff and ls-files beside it, and
# filtering the findings. The corpus is a clone of a git repository in a
# temporary directory, so the change never touches the original tree:
# this repository's HEAD, configured (not built) for compile_commands.json,
# or, with BENCH_DIFF_DB, another project's database with its paths moved
# to the clone. The change appends one function to one file; one run fills
# the cache with it, then the two configurations run in turn, so that load
# from elsewhere on the machine hits both alike.
#
# env: BLOCKWATCH_BENCH_BUILD  build directory holding analyzer/blockscan
#                              (default <repo>/build-bench)
#      BENCH_DIFF_DB           a build directory holding compile_commands.json
#                              whose paths name BENCH_DIFF_REPO (default: this
#                              repository's own, configured in the clone)
#      BENCH_DIFF_REPO         the git repository of BENCH_DIFF_DB's sources
#      BENCH_DIFF_FILE         the file the change appends to, relative to the
#                              repository (default runtime/src/pool.c; with
#                              BENCH_DIFF_DB it must be given)
#      BENCH_DIFF_RUNS         runs per configuration (default 7)
#      BENCH_DIFF_JOBS         blockscan -j (default 2)
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BLOCKWATCH_BENCH_BUILD:-$root/build-bench}
blockscan=$(cd "$build" && pwd)/analyzer/blockscan
runs=${BENCH_DIFF_RUNS:-7}
jobs=${BENCH_DIFF_JOBS:-2}
[ -x "$blockscan" ] || { echo "bench/analyzer/diff: $blockscan is not built" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-diff.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [ -n "${BENCH_DIFF_DB:-}" ]; then
  # The database names the sources by their real paths; so does the clone.
  repo=$(cd "${BENCH_DIFF_REPO:?bench/analyzer/diff: BENCH_DIFF_DB needs BENCH_DIFF_REPO}" && pwd -P)
  db=$(cd "$BENCH_DIFF_DB" && pwd -P)
  file=${BENCH_DIFF_FILE:?bench/analyzer/diff: BENCH_DIFF_DB needs BENCH_DIFF_FILE}
  corpus="$repo at $(git -C "$repo" rev-parse --short HEAD)"
  # --shared borrows the objects: nothing is written to the original.
  git clone -q --shared "$repo" "$work/src"
  mkdir "$work/build"
  sed -e "s#$repo/#$work/src/#g" -e "s#\"$db\"#\"$work/build\"#g" \
    "$db/compile_commands.json" >"$work/build/compile_commands.json"
  dbdir=$work/build
else
  file=${BENCH_DIFF_FILE:-runtime/src/pool.c}
  corpus="this repository at $(git -C "$root" rev-parse --short HEAD)"
  git clone -q "$root" "$work/src"
  cmake -S "$work/src" -B "$work/src/build" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
    -DBLOCKWATCH_BUILD_TESTS=OFF >"$work/configure.log" 2>&1 ||
    { cat "$work/configure.log" >&2; exit 1; }
  # One TU of the database is generated at build time (the embedded rule
  # packs, rules/packs.c): build the library that holds it, so that every
  # TU parses.
  cmake --build "$work/src/build" --target bw_rules -j 2 >>"$work/configure.log" 2>&1 ||
    { cat "$work/configure.log" >&2; exit 1; }
  dbdir=$work/src/build
fi
printf '\nint bench_diff_added(int x) {\n  return x + 1;\n}\n' >>"$work/src/$file"

# median SECONDS...: the middle value (the lower one of an even count).
median() { printf '%s\n' "$@" | sort -n | sed -n "$(((($# + 1) / 2)))p"; }

# one ARGS...: the wall-clock seconds of one blockscan run (exit 1 =
# findings, not a failure).
one() {
  local start end
  start=$(date +%s.%N)
  (cd "$work/src" && "$blockscan" -p "$dbdir" -j "$jobs" --format json \
    -o /dev/null "$@" 2>/dev/null) || [ $? = 1 ]
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { print b - a }'
}

tus=$(grep -c '"file"' "$dbdir/compile_commands.json")
echo "machine: $(nproc) CPUs, $(uname -m), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "date:    $(date -u +%Y-%m-%dT%H:%MZ); corpus: $corpus, $tus compile commands, $file changed, -j $jobs, $runs runs each, alternated"
one >/dev/null # fills the cache, the change included
rerun=() diff=()
for ((i = 0; i < runs; i++)); do
  rerun+=("$(one)")
  diff+=("$(one --diff HEAD)")
done
echo "re-run:        ${rerun[*]}"
echo "--diff HEAD:   ${diff[*]}"
r=$(median "${rerun[@]}") d=$(median "${diff[@]}")
printf 're-run:        %.3f s (median)\n--diff HEAD:   %.3f s (median)\nratio:         %.3f\n' \
  "$r" "$d" "$(awk -v a="$r" -v b="$d" 'BEGIN { print b / a }')"
