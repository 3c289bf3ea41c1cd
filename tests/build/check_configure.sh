#!/usr/bin/env bash
# check_configure.sh SOURCE WORK WRAPPER CC - configures SOURCE in fresh
# folders under WORK with one pkg-config module hidden at a time, and checks
# that the configure step fails naming what is missing, and passes once the
# part that needs it is turned off. Prints one line per case and
# "N passed, N failed" at the end; exits 1 on any failure.
set -uo pipefail
src=$1 work=$2 wrapper=$3 cc=$4
passed=0 failed=0
rm -rf "$work"
mkdir -p "$work"

# configure NAME HIDDEN ARGS...: the configure's exit status; its output in
# WORK/NAME.log.
configure() {
  local name=$1 hidden=$2
  shift 2
  BW_HIDE_PKG=$hidden cmake -S "$src" -B "$work/$name" -DCMAKE_C_COMPILER="$cc" \
    -DPKG_CONFIG_EXECUTABLE="$wrapper" -DBLOCKWATCH_SARIF_MULTITOOL=OFF "$@" \
    >"$work/$name.log" 2>&1
}

# expect_failure NAME HIDDEN "TEXT|TEXT..." ARGS...: fails, and the log has
# every TEXT.
expect_failure() {
  local name=$1 hidden=$2 texts=$3 ok=1
  shift 3
  if configure "$name" "$hidden" "$@"; then
    echo "FAIL $name: configure passed with $hidden hidden"
    ok=0
  else
    local text
    IFS='|' read -ra wanted <<<"$texts"
    for text in "${wanted[@]}"; do
      # CMake folds long messages over lines: compare with the lines joined.
      if ! tr -s '\n ' '  ' <"$work/$name.log" | grep -qF -- "$text"; then
        echo "FAIL $name: the configure error does not say '$text'"
        ok=0
      fi
    done
  fi
  report "$name" "$ok"
}

expect_success() {
  local name=$1 hidden=$2 ok=1
  shift 2
  if ! configure "$name" "$hidden" "$@"; then
    echo "FAIL $name: configure failed with $hidden hidden and its part off"
    tail -n 20 "$work/$name.log"
    ok=0
  fi
  report "$name" "$ok"
}

report() {
  if [ "$2" = 1 ]; then
    echo "ok   $1"
    passed=$((passed + 1))
  else
    [ -f "$work/$1.log" ] && sed 's/^/  | /' "$work/$1.log" | tail -n 15
    failed=$((failed + 1))
  fi
}

lean=(-DBLOCKWATCH_BUILD_ANALYZER=OFF)
expect_failure no_jansson jansson "needs jansson|libjansson-dev|BLOCKWATCH_BUILD_ANALYZER=OFF"
expect_failure no_libuv libuv "needs libuv|libuv1-dev|BLOCKWATCH_FOREIGN_SAMPLES=OFF" "${lean[@]}"
expect_success no_libuv_off libuv "${lean[@]}" -DBLOCKWATCH_FOREIGN_SAMPLES=OFF
expect_failure no_glib glib-2.0 "needs glib-2.0|libglib2.0-dev" "${lean[@]}"
expect_failure no_libpng libpng "needs libpng|libpng-dev|BLOCKWATCH_BUILD_TOOLS=OFF" "${lean[@]}"
expect_success no_libpng_off libpng "${lean[@]}" -DBLOCKWATCH_BUILD_TOOLS=OFF
expect_failure no_cmocka cmocka "needs cmocka|libcmocka-dev|BLOCKWATCH_BUILD_TESTS=OFF" "${lean[@]}"
expect_success no_cmocka_off cmocka "${lean[@]}" -DBLOCKWATCH_BUILD_TESTS=OFF
expect_failure no_multitool none "needs the SARIF Multitool|BLOCKWATCH_SARIF_MULTITOOL=OFF" \
  -DBLOCKWATCH_SARIF_MULTITOOL=
echo "configure: $passed passed, $failed failed"
[ "$failed" = 0 ]
