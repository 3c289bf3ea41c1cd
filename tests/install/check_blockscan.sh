#!/usr/bin/env bash
# check_blockscan.sh BUILD_DIR PROJECT_SRC CC
# Installs BUILD_DIR into a temporary prefix, configures PROJECT_SRC (which
# calls blockwatch_add_blockscan) against it, builds everything and the
# analysis step with -j1 and -j2, and compares the step's report with a
# direct `blockscan -p` run over the same project's database, byte for byte.
# Then changes one header and checks that the step's report follows.
set -euo pipefail
build=$1 project=$2 cc=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
cp -r "$project" "$work/src"
src=$work/src

fail() {
  echo "blockscan module: $*"
  exit 1
}

for jobs in 1 2; do
  out=$work/build-j$jobs
  cmake -S "$src" -B "$out" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$work/configure.log" 2>&1 ||
    { cat "$work/configure.log"; fail "configuring the project failed"; }
  cmake --build "$out" -j "$jobs" >"$work/build.log" 2>&1 ||
    { cat "$work/build.log"; fail "building the project failed (-j$jobs)"; }
  cmake --build "$out" -j "$jobs" --target scan >"$work/scan.log" 2>&1 ||
    { cat "$work/scan.log"; fail "the analysis step failed (-j$jobs)"; }
  [ -f "$out/scan.txt" ] || fail "no report written by the analysis step"
  grep -q '"fsync"' "$out/scan.txt" || { cat "$out/scan.txt"; fail "the report misses the cross-target finding"; }
  status=0
  (cd "$src" && "$prefix/bin/blockscan" --no-cache -p "$out" --format json -o "$work/direct.txt") || status=$?
  [ "$status" -eq 1 ] || fail "blockscan -p exited $status, not 1 (findings)"
  cmp "$work/direct.txt" "$out/scan.txt" ||
    { diff "$work/direct.txt" "$out/scan.txt" | head -20; fail "-j$jobs: the step's report differs from blockscan -p's"; }
  echo "-j$jobs: the analysis step reports what blockscan -p reports"
done

# A header changed: its TUs' facts are made again, and the report follows.
out=$work/build-j2
printf '#include <time.h>\n' >"$src/include/scanned/extra.h"
sed -i 's|#include <unistd.h>|#include <unistd.h>\n#include <scanned/extra.h>|' "$src/store/store.c"
cmake --build "$out" --target scan >/dev/null 2>&1 || fail "the second analysis failed"
printf '/* a change */\nvoid store_nap(void);\n' >>"$src/include/scanned/extra.h"
cmake --build "$out" --target scan >"$work/again.log" 2>&1 || fail "the third analysis failed"
grep -q "blockscan facts of store/store.c" "$work/again.log" ||
  { cat "$work/again.log"; fail "a changed header did not re-run its TU's facts action"; }
if grep -q "blockscan facts of app/main.c" "$work/again.log"; then
  fail "a changed header re-ran the facts of a TU that does not include it"
fi
echo "a changed header re-runs the facts of the TU that includes it, only"
echo "1 passed, 0 failed"
