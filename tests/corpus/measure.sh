#!/usr/bin/env bash
# tests/corpus/measure.sh - runs this tree's blockscan (-j2) on every prepared
# corpus project and prints one table: size, cost, and precision and recall
# against tests/corpus/triage/<project>.tsv.
#
# Invariants: blockscan runs from the project's source root, so the paths it
# prints are the ones the triage tables are keyed by; a project that
# prepare.sh has not prepared is skipped with a note, never guessed at.
#
# usage: tests/corpus/measure.sh [libuv] [tmux] [glib]     (default: all three)
# env:   CORPUS_DIR     as for prepare.sh (default <repo>/build-corpus)
#        BUILD_DIR      the build whose analyzer/blockscan runs (default build;
#                       it is built first when missing)
#        BLOCKSCAN      another blockscan binary to measure instead
#        BLOCKSCAN_ARGS extra arguments, e.g. "--no-default-rules --rules F"
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
corpus=${CORPUS_DIR:-$root/build-corpus}
build=${BUILD_DIR:-build}
case $build in /*) ;; *) build=$root/$build ;; esac
blockscan=${BLOCKSCAN:-$build/analyzer/blockscan}
if [ -z "${BLOCKSCAN:-}" ] && [ ! -x "$blockscan" ]; then
  [ -f "$build/CMakeCache.txt" ] || cmake -S "$root" -B "$build" -DBLOCKWATCH_BUILD_TESTS=OFF >/dev/null
  cmake --build "$build" -j2 --target blockscan >/dev/null
fi
[ -x "$blockscan" ] || {
  echo "corpus: no blockscan at $blockscan" >&2
  exit 1
}
read -r -a extra <<<"${BLOCKSCAN_ARGS:-}"

projects=("$@")
[ ${#projects[@]} -gt 0 ] || projects=(libuv tmux glib)
rows=()
for p in "${projects[@]}"; do
  db=$corpus/$p/build
  if [ ! -f "$db/compile_commands.json" ] || [ ! -e "$corpus/$p/src" ]; then
    echo "corpus: $p is not prepared (run tests/corpus/prepare.sh $p); skipped" >&2
    continue
  fi
  src=$(cd -P "$corpus/$p/src" && pwd)
  rows+=("$(python3 "$root/tests/corpus/score.py" run "$p" "$src" "$db" "$blockscan" \
    "$root/tests/corpus/triage/$p.tsv" "${extra[@]}")")
done

echo "blockscan $("$blockscan" --version 2>/dev/null | head -n 1 || echo '(no --version)') ${BLOCKSCAN_ARGS:-}"
echo
echo "| project | TUs | TUs not parsed | findings | distinct lines | time (s) | peak RSS (MB) | triaged | real | precision | real kept | recall | untriaged |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for row in "${rows[@]}"; do
  echo "| ${row//$'\t'/ | } |"
done
