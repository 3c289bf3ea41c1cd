#!/usr/bin/env bash
# bench/analyzer/run.sh - times blockscan against clang -fsyntax-only over a
# real code base, with -j 1 and -j 2, from a bench build made by bench/run.sh.
#
# The corpus is two Debian source packages that run callbacks on an event
# loop or a thread pool: libuv1 and libevent (about 48,000 lines of C in 61
# translation units). Their sources come from Debian's source archive
# (bookworm) through a private apt state under <build>/corpus/apt: the
# system's apt configuration is neither read nor changed. Each is configured
# with its own CMake build (nothing is compiled) for compile_commands.json;
# the two databases are joined into <build>/corpus/all. Downloads and
# configuration happen once; later runs reuse them. If the corpus cannot be
# fetched, the bench build's own database (this repository) is used instead,
# and the output says so.
#
# Needs: apt-get and dpkg-source (Debian package dpkg-dev), the keyring
# /usr/share/keyrings/debian-archive-keyring.gpg, cmake, jq, clang-14, and
# network access to deb.debian.org on the first run.
#
# env: BLOCKWATCH_BENCH_BUILD  build directory (default <repo>/build-bench)
#      BENCH_ANALYZER_DB       build directory whose database is the corpus
#                              (skips the download; e.g. the bench build
#                              itself for this repository's own code)
#      BENCH_ANALYZER_CORPUS   where sources and their builds go
#                              (default <build>/corpus)
#      BENCH_ANALYZER_SUITE    Debian suite of the sources (default bookworm)
#      BENCH_ANALYZER_RUNS     runs per configuration (default 7)
#      BENCH_DIFF_*            passed to bench/analyzer/diff.sh, which runs
#                              last (the --diff row; BENCH_DIFF_RUNS=0 skips it)
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BLOCKWATCH_BENCH_BUILD:-$root/build-bench}
exe=$build/bench/analyzer/bw_bench_analyzer
blockscan=$build/analyzer/blockscan
corpus=${BENCH_ANALYZER_CORPUS:-$build/corpus}
suite=${BENCH_ANALYZER_SUITE:-bookworm}
if [ ! -x "$exe" ]; then
  echo "bench/analyzer: $exe is not built; run bench/run.sh" >&2
  exit 1
fi

# apt-get with a private source list and private package lists, so that
# neither /etc/apt nor /var/lib/apt/lists is touched.
corpus_apt() {
  apt-get -q -o Dir::Etc::sourcelist=/dev/null \
    -o Dir::Etc::sourceparts="$corpus/apt" \
    -o Dir::State::Lists="$corpus/apt/lists" \
    -o Dir::Cache="$corpus/apt/cache" "$@"
}

# Downloads and unpacks one source package into $corpus (once); prints the
# directory it unpacked to.
fetch_source() {
  local pkg=$1 dir
  dir=$(find "$corpus" -maxdepth 1 -type d -name "$2-*" | sort | tail -n 1)
  if [ -z "$dir" ]; then
    (cd "$corpus" && corpus_apt source "$pkg" >>"$corpus/apt.log" 2>&1) ||
      { echo "bench/analyzer: apt-get source $pkg failed (see $corpus/apt.log)" >&2; return 1; }
    dir=$(find "$corpus" -maxdepth 1 -type d -name "$2-*" | sort | tail -n 1)
  fi
  [ -n "$dir" ] && echo "$dir"
}

# Configures one corpus with CMake for its compilation database only.
configure() {
  local src=$1 out=$2
  shift 2
  [ -f "$out/compile_commands.json" ] && return 0
  cmake -S "$src" -B "$out" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
    -DCMAKE_BUILD_TYPE=Release "$@" >"$out.log" 2>&1 ||
    { echo "bench/analyzer: configuring $src failed (see $out.log)" >&2; return 1; }
}

prepare_corpus() {
  local tool
  for tool in apt-get dpkg-source cmake jq; do
    command -v "$tool" >/dev/null 2>&1 ||
      { echo "bench/analyzer: $tool is missing (apt-get install dpkg-dev cmake jq)" >&2; return 1; }
  done
  [ -f "$corpus/all/compile_commands.json" ] && return 0
  mkdir -p "$corpus/apt/lists/partial" "$corpus/apt/cache/archives/partial"
  cat >"$corpus/apt/src.sources" <<EOF
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $suite
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  echo "bench/analyzer: fetching libuv1 and libevent sources ($suite) into $corpus" >&2
  corpus_apt update >"$corpus/apt.log" 2>&1 ||
    { echo "bench/analyzer: apt-get update failed (see $corpus/apt.log)" >&2; return 1; }
  local uv ev
  uv=$(fetch_source libuv1 libuv1) || return 1
  ev=$(fetch_source libevent libevent) || return 1
  configure "$uv" "$corpus/build-libuv" -DLIBUV_BUILD_TESTS=OFF \
    -DLIBUV_BUILD_BENCH=OFF || return 1
  configure "$ev" "$corpus/build-libevent" -DEVENT__DISABLE_OPENSSL=ON \
    -DEVENT__DISABLE_MBEDTLS=ON -DEVENT__DISABLE_TESTS=ON \
    -DEVENT__DISABLE_SAMPLES=ON -DEVENT__DISABLE_BENCHMARK=ON \
    -DEVENT__DISABLE_REGRESS=ON || return 1
  mkdir -p "$corpus/all"
  jq -s add "$corpus/build-libuv/compile_commands.json" \
    "$corpus/build-libevent/compile_commands.json" \
    >"$corpus/all/compile_commands.json.tmp" &&
    mv "$corpus/all/compile_commands.json.tmp" "$corpus/all/compile_commands.json"
}

db=${BENCH_ANALYZER_DB:-}
if [ -z "$db" ]; then
  mkdir -p "$corpus"
  if prepare_corpus; then
    db=$corpus/all
    echo "corpus:  $(find "$corpus" -maxdepth 1 -type d \( -name 'libuv1-*' -o -name 'libevent-*' \) -printf '%f\n' | sort | tr '\n' ' ')(Debian $suite sources)"
  else
    db=$build
    echo "corpus:  Debian sources unavailable; falling back to this repository's own database" >&2
  fi
fi

echo "machine: $(nproc) CPUs, $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), kernel $(uname -r)"
echo "date:    $(date -u +%Y-%m-%dT%H:%MZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
bench_status=0
"$exe" -p "$db" -r "${BENCH_ANALYZER_RUNS:-7}" "$@" || bench_status=$?
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

# What blockscan says about the corpus (exit 1 = findings, not a failure).
# It runs from the directory above the database, so that paths print
# relative to the corpus (or to the repository).
report=$build/bench-analyzer-findings.txt
echo
echo "blockscan findings on the corpus:"
status=0
(cd "$db/.." && "$blockscan" -p "$db" --summary >"$report" 2>&1) || status=$?
if [ "$status" -gt 1 ]; then
  echo "bench/analyzer: blockscan exited $status on the corpus (see $report)" >&2
  exit 1
fi
sed -n '/^blockscan summary:/,$p' "$report"
echo "(full report: $report)"

# What --diff adds to a cached re-run (on this repository, or on the tree
# BENCH_DIFF_DB / BENCH_DIFF_REPO / BENCH_DIFF_FILE name).
if [ "${BENCH_DIFF_RUNS:-7}" != 0 ]; then
  echo
  BLOCKWATCH_BENCH_BUILD=$build bash "$root/bench/analyzer/diff.sh" || bench_status=$?
fi
exit "$bench_status"
