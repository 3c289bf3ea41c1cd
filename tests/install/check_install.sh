#!/usr/bin/env bash
# check_install.sh BUILD_DIR CONSUMER_SRC CC SANITIZE_FLAGS EXPECTED_FILE...
# Installs BUILD_DIR into a temporary prefix, checks the layout, then builds
# and runs the consumer with find_package (shared, static) and pkg-config.
# Expected files under share/man/manN/ must also render without a warning.
set -euo pipefail
build=$1 consumer=$2 cc=$3 flags=$4
shift 4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" >/dev/null
status=0
for f in "$@"; do
  if [ ! -e "$prefix/$f" ]; then
    echo "install: missing $prefix/$f"
    status=1
  fi
done
if ! ls "$prefix"/share/blockwatch/rules/*.rules >/dev/null 2>&1; then
  echo "install: no rule packs in share/blockwatch/rules/"
  status=1
fi
# Man pages as a reader gets them: groff with every warning on, and man(1)
# reading the installed file.
for f in "$@"; do
  case $f in
    */man/man[0-9]/*)
      [ -e "$prefix/$f" ] || continue # already reported missing
      warnings=$(groff -man -Tutf8 -ww -z "$prefix/$f" 2>&1) || warnings="groff failed: $warnings"
      if [ -n "$warnings" ]; then
        echo "install: $f: $warnings"
        status=1
      fi
      if command -v man >/dev/null && ! MANWIDTH=80 man -l "$prefix/$f" >/dev/null 2>&1; then
        echo "install: man -l cannot read $f"
        status=1
      fi ;;
  esac
done
[ $status -eq 0 ] || exit 1

for kind in shared static; do
  cmake -S "$consumer" -B "$work/cmake-$kind" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$flags" -DCONSUMER_RUNTIME="$kind" >/dev/null
  cmake --build "$work/cmake-$kind" >/dev/null
  out=$("$work/cmake-$kind/consumer")
  echo "find_package ($kind): $out"
  [ "$out" = "consumer: 42 ok" ] || { echo "unexpected output from the $kind consumer"; exit 1; }
done

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
# shellcheck disable=SC2046,SC2086
"$cc" $flags -o "$work/pc-consumer" "$consumer/consumer.c" $(pkg-config --cflags --libs blockwatch)
out=$(LD_LIBRARY_PATH="$prefix/lib" "$work/pc-consumer")
echo "pkg-config: $out"
[ "$out" = "consumer: 42 ok" ] || { echo "unexpected output from the pkg-config consumer"; exit 1; }
echo "1 passed, 0 failed"
