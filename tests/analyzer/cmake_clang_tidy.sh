#!/usr/bin/env bash
# cmake_clang_tidy.sh BLOCKSCAN C_COMPILER FIXTURE_DIR - blockscan as a
# project's CMAKE_C_CLANG_TIDY: CMake calls it as it calls clang-tidy
# (--extra-arg-before=--driver-mode=gcc FILE -- COMPILER FLAGS -o OBJ -c
# FILE), so the target whose file blocks fails to build with the finding
# shown, and the one whose same file does not block builds.
# Exit status: 0 both held, 1 one did not.
set -uo pipefail
blockscan=${1:?usage: cmake_clang_tidy.sh BLOCKSCAN C_COMPILER FIXTURE_DIR}
cc=${2:?no C compiler given}
src=${3:?no fixture directory given}
work=$(mktemp -d "${TMPDIR:-/tmp}/blockscan-tidy.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

cmake -S "$src" -B "$work" -DCMAKE_C_COMPILER="$cc" \
  "-DCMAKE_C_CLANG_TIDY=$blockscan;--color=never" >"$work/configure.log" 2>&1 ||
  { echo "FAIL  configure:"; cat "$work/configure.log"; exit 1; }
failed=0
if ! cmake --build "$work" --target quiet_lib >"$work/quiet.log" 2>&1; then
  echo "FAIL  quiet_lib did not build:"; cat "$work/quiet.log"; failed=1
fi
if cmake --build "$work" --target sleepy_lib >"$work/sleepy.log" 2>&1; then
  echo "FAIL  sleepy_lib built though its file blocks:"; cat "$work/sleepy.log"; failed=1
elif ! grep -q "maybe.c:7:3: warning: 'sleep' blocks a pool worker" "$work/sleepy.log"; then
  echo "FAIL  sleepy_lib failed without blockscan's finding:"; cat "$work/sleepy.log"; failed=1
elif grep -q "error:" "$work/sleepy.log"; then
  echo "FAIL  blockscan reported an error on CMake's arguments:"; cat "$work/sleepy.log"; failed=1
fi
[ "$failed" -eq 0 ] && echo "CMAKE_C_CLANG_TIDY=blockscan: both targets as expected"
exit "$failed"
