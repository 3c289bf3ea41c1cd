#!/usr/bin/env bash
# setup.sh - install what blockwatch needs on Debian 12, idempotently.
#
#   scripts/setup.sh            build + run: compiler, CMake, libclang, jansson, libdw, cmocka
#   scripts/setup.sh --test     also: chromium, libpng, libevent, clang (libFuzzer), clang-format, groff,
#                               C-Thread-Pool's source (the shim's foreign-pool tests),
#                               Node.js/npm, the SARIF Multitool and the DevTools
#                               trace engine (both into .tools/)
#   scripts/setup.sh --bench    also: the benchmark peers (libuv, GLib, C-Thread-Pool, oneTBB, OpenMP)
#
# Quick when everything is present: apt-get runs only for missing packages.
set -euo pipefail
cd "$(dirname "$0")/.."

profile=base
case "${1:-}" in
  "") ;;
  --test) profile=test ;;
  --bench) profile=bench ;;
  *) echo "setup.sh: unknown option '$1' (use --test or --bench)" >&2; exit 2 ;;
esac

packages=(build-essential cmake pkg-config file libclang-14-dev libcmocka-dev libjansson-dev
          libdw-dev libuv1-dev libglib2.0-dev)
if [ "$profile" = test ]; then
  packages+=(clang-14 libclang-rt-14-dev clang-format-14 libpng-dev libevent-dev chromium groff-base
             cthreadpool-dev)
fi
if [ "$profile" = bench ]; then
  packages+=(g++ libgomp1 cthreadpool-dev libtbb-dev clang-14 dpkg-dev jq)
fi

missing=()
for pkg in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$pkg")
  fi
done
# Node.js may come from Debian (nodejs + npm) or be on the machine already.
if [ "$profile" = test ] && ! command -v npm >/dev/null 2>&1; then
  missing+=(nodejs npm)
fi

if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The SARIF Multitool validates blockscan's SARIF output in the tests with
# its SARIF, GitHub and Azure DevOps rules. It is an npm package; it lives
# in .tools/ (ignored by git), pinned to one version, and so is its Linux
# build, the package that holds the binary: the wrapper would accept any
# 5.x of it, and the rules change between versions.
multitool=5.7.0
if [ "$profile" = test ] &&
  ! grep -qs "\"version\": \"$multitool\"" .tools/node_modules/@microsoft/sarif-multitool-linux/package.json; then
  echo "setup: installing @microsoft/sarif-multitool@$multitool into .tools/"
  npm install --silent --no-audit --no-fund --prefix .tools \
    "@microsoft/sarif-multitool@$multitool" "@microsoft/sarif-multitool-linux@$multitool" >/dev/null
  # Its postinstall script only makes the binary executable; an npm that
  # holds install scripts back until they are allowed would skip it.
  chmod u+x .tools/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool
fi
# The DevTools trace engine (chrome-devtools-frontend's models/trace, as
# published on npm) reads the shim's trace in the timeline test; it lives in
# .tools/ too, pinned to one version.
trace_engine=@paulirish/trace_engine@0.0.65
if [ "$profile" = test ] &&
  ! grep -qs '"version": "0.0.65"' .tools/node_modules/@paulirish/trace_engine/package.json; then
  echo "setup: installing $trace_engine into .tools/"
  npm install --silent --no-audit --no-fund --prefix .tools "$trace_engine" >/dev/null
fi
echo "setup: ready ($profile)"
