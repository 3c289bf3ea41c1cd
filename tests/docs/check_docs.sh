#!/usr/bin/env bash
# check_docs.sh SOURCE_DIR BUILD_DIR - the docs test: regenerate every
# generated block of the docs into a scratch copy and fail, naming the doc
# and showing the diff, where a committed output differs from what the
# tools print now. Never writes into SOURCE_DIR.
#
# Exit status: 0 every doc matches, 1 a doc differs or generation failed,
# 77 the build tree lacks a tool (ctest reports a skip).
set -uo pipefail
src=${1:?usage: check_docs.sh SOURCE_DIR BUILD_DIR}
build=${2:?usage: check_docs.sh SOURCE_DIR BUILD_DIR}
gen=$src/scripts/gen-docs.sh

copy=$(mktemp -d "${TMPDIR:-/tmp}/check-docs.XXXXXX") || exit 1
trap 'rm -rf "$copy"' EXIT

bash "$gen" --build "$build" --into "$copy"
status=$?
if [ "$status" -ne 0 ]; then
  [ "$status" -eq 77 ] && echo "docs test: skipped, the build tree lacks a tool"
  [ "$status" -ne 77 ] && echo "docs test: scripts/gen-docs.sh failed (exit $status)"
  exit "$status"
fi

failed=0
for doc in $(bash "$gen" --list); do
  if ! diff -u --label "$doc (committed)" --label "$doc (the tools now)" \
    "$src/$doc" "$copy/$doc"; then
    echo "docs test: $doc no longer matches what the tools print;"
    echo "  run 'bash scripts/gen-docs.sh' from the repository root and review the diff"
    failed=1
  fi
done
[ "$failed" -eq 0 ] && echo "docs test: every generated block matches ($(bash "$gen" --list | tr '\n' ' '))"
exit "$failed"
