#!/usr/bin/env bash
# test.sh [ctest args...] - set up, build (warnings as errors) and run the whole
# test suite. BUILD_DIR (default build/) and CMAKE_ARGS select another build.
#
# ctest runs verbosely into a log; what is printed is each test binary's
# cmocka summary, ctest's result per test, and the full output of failures.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}

scripts/setup.sh --test
# shellcheck disable=SC2086
scripts/build.sh "$build" -DBLOCKWATCH_WERROR=ON -DBLOCKWATCH_BUILD_TESTS=ON ${CMAKE_ARGS:-}

log="$build/ctest.log"
status=0
ctest --test-dir "$build" -j "$(nproc)" -V "$@" >"$log" 2>&1 || status=$?

# cmocka's summary lines per binary ("test_pool: [  PASSED  ] 3 test(s)."),
# then ctest's own per-test lines and totals.
awk 'match($0, /^ *Start +[0-9]+: /) { n = $2; sub(":", "", n); name[n] = $3 }
     /^[0-9]+: \[ *(PASSED|FAILED|SKIPPED) *\]/ { n = $1; sub(":", "", n); line = $0
       sub(/^[0-9]+: /, "", line); printf "%-36s%s\n", name[n] ":", line }' "$log"
grep -E '^ *[0-9]+/[0-9]+ Test +#' "$log" || true
failed=$(grep -E '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .*(\*\*\*|Failed|Timeout|Exception)' "$log" |
  sed -E 's/^ *[0-9]+\/[0-9]+ Test +#([0-9]+):.*/\1/' || true)
for n in $failed; do
  echo "---- output of failed test #$n ----"
  grep -E "^$n: " "$log" | tail -n 200
done
sed -n '/tests passed/,$p' "$log"
exit "$status"
