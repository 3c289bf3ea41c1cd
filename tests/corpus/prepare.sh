#!/usr/bin/env bash
# tests/corpus/prepare.sh - fetches (or finds) and prepares the outside corpus:
# libuv 1.44.2, tmux 3.3a (libevent) and GLib 2.74.6, as Debian 12 ships them.
#
# Invariants: the sources are never copied into this repository; the system's
# apt configuration is neither read for sources nor changed (a private
# deb-src list and private package lists live under $CORPUS_DIR/apt); every
# project ends with <its build dir>/compile_commands.json and the generated
# sources and headers its TUs use, and nothing more is built than that needs. A
# project already prepared is left as it is (delete its directory to redo it).
#
# usage: tests/corpus/prepare.sh [libuv] [tmux] [glib]     (default: all three)
# env:   CORPUS_DIR   where sources and builds go (default <repo>/build-corpus)
#        LIBUV_SRC, TMUX_SRC, GLIB_SRC   an unpacked source tree to use instead
#                     of downloading one (it is built out of tree, or, for
#                     tmux's in-tree autotools build, in a copy)
#        CORPUS_NO_INSTALL=1   do not apt-get install missing build tools
#
# Build tools, installed with apt-get when missing and running as root:
#   all:   dpkg-dev (dpkg-source), debian-archive-keyring, python3, clang-14
#   libuv: cmake
#   tmux:  bear make gcc bison pkg-config libevent-dev libncurses-dev libutempter-dev
#   glib:  meson ninja-build pkg-config gcc libffi-dev libmount-dev libpcre2-dev zlib1g-dev
#          (SELinux and libelf support are configured off: the analysis needs neither)
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
corpus=${CORPUS_DIR:-$root/build-corpus}
suite=bookworm

say() { echo "corpus: $*" >&2; }
die() {
  say "$*"
  exit 1
}

# Installs the Debian packages of $@ that are not installed yet.
need_packages() {
  local missing=() pkg
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed' || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "${CORPUS_NO_INSTALL:-0}" = 1 ] || [ "$(id -u)" != 0 ]; then
    die "missing packages: ${missing[*]} (apt-get install them, or run as root)"
  fi
  say "installing ${missing[*]}"
  [ -n "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -print -quit)" ] ||
    apt-get -q update >"$corpus/apt-install.log" 2>&1
  DEBIAN_FRONTEND=noninteractive apt-get -q install -y --no-install-recommends \
    "${missing[@]}" >>"$corpus/apt-install.log" 2>&1 ||
    die "apt-get install ${missing[*]} failed (see $corpus/apt-install.log)"
}

# apt-get on a private deb-src list and private lists: /etc/apt's sources and
# /var/lib/apt/lists are never used for these downloads.
private_apt() {
  apt-get -q -o Dir::Etc::SourceList="$corpus/apt/sources.list" \
    -o Dir::Etc::SourceParts="$corpus/apt/sources.list.d" \
    -o Dir::State::Lists="$corpus/apt/lists" \
    -o Dir::Cache="$corpus/apt/cache" "$@"
}

apt_ready=0
# Prints the unpacked source directory of Debian source package $1 (whose
# directory starts with $1-), downloading it once.
debian_source() {
  local pkg=$1 dir
  dir=$(find "$corpus" -maxdepth 1 -type d -name "$pkg-[0-9]*" | sort | tail -n 1)
  if [ -z "$dir" ]; then
    if [ "$apt_ready" = 0 ]; then
      mkdir -p "$corpus/apt/lists/partial" "$corpus/apt/cache/archives/partial" \
        "$corpus/apt/sources.list.d"
      echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]" \
        "http://deb.debian.org/debian $suite main" >"$corpus/apt/sources.list"
      private_apt update >"$corpus/apt.log" 2>&1 ||
        die "apt-get update (private deb-src list) failed (see $corpus/apt.log)"
      apt_ready=1
    fi
    (cd "$corpus" && private_apt source "$pkg" >>"$corpus/apt.log" 2>&1) ||
      die "apt-get source $pkg failed (see $corpus/apt.log)"
    dir=$(find "$corpus" -maxdepth 1 -type d -name "$pkg-[0-9]*" | sort | tail -n 1)
  fi
  [ -n "$dir" ] || die "no source directory for $pkg under $corpus"
  echo "$dir"
}

# $1 = project, $2 = the *_SRC override (may be empty), $3 = Debian package.
source_of() {
  if [ -n "$2" ]; then
    [ -d "$2" ] || die "$1: source directory $2 does not exist"
    (cd "$2" && pwd)
  else
    debian_source "$3"
  fi
}

prepare_libuv() {
  local out=$corpus/libuv/build src
  [ -f "$out/compile_commands.json" ] && return 0
  need_packages cmake gcc
  src=$(source_of libuv "${LIBUV_SRC:-}" libuv1)
  say "libuv: configuring $src (tests and benchmarks on; nothing is compiled)"
  mkdir -p "$corpus/libuv"
  cmake -S "$src" -B "$out" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
    -DLIBUV_BUILD_TESTS=ON -DLIBUV_BUILD_BENCH=ON >"$corpus/libuv/configure.log" 2>&1 ||
    die "libuv: cmake failed (see $corpus/libuv/configure.log)"
  ln -sfn "$src" "$corpus/libuv/src"
}

# tmux builds in its source tree; bear records the real compiler runs. The
# build is small (about a minute with -j2), and it makes the database exact.
prepare_tmux() {
  local out=$corpus/tmux/build src
  [ -f "$out/compile_commands.json" ] && return 0
  need_packages bear make gcc bison pkg-config libevent-dev libncurses-dev libutempter-dev
  src=$(source_of tmux "${TMUX_SRC:-}" tmux)
  say "tmux: configuring and building $src under bear"
  mkdir -p "$corpus/tmux"
  rm -rf "$out"
  cp -a "$src" "$out"
  (cd "$out" && ./configure --enable-utempter >"$corpus/tmux/configure.log" 2>&1) ||
    die "tmux: configure failed (see $corpus/tmux/configure.log)"
  (cd "$out" && bear -- make -j2 >"$corpus/tmux/make.log" 2>&1) ||
    die "tmux: make under bear failed (see $corpus/tmux/make.log)"
  [ -s "$out/compile_commands.json" ] || die "tmux: bear wrote no compile_commands.json"
  ln -sfn "$out" "$corpus/tmux/src"
}

# GLib: meson writes the database at configure time; of the build only the
# generated sources are made (enum types, marshallers, D-Bus and resource
# code, the .inc files tests include): the custom-command outputs ending in
# .c, .h or .inc in ninja's target list. Those need GLib's own code
# generators, so ninja builds the libraries and tools they depend on too
# (a few minutes with -j2), but not the tests or anything else.
prepare_glib() {
  local out=$corpus/glib/build src generated
  [ -f "$out/.generated-done" ] && return 0
  need_packages meson ninja-build pkg-config gcc libffi-dev libmount-dev libpcre2-dev zlib1g-dev
  src=$(source_of glib "${GLIB_SRC:-}" glib2.0)
  say "glib: configuring $src with meson"
  mkdir -p "$corpus/glib"
  if [ ! -f "$out/compile_commands.json" ]; then
    meson setup "$out" "$src" -Dtests=true -Dinstalled_tests=false -Dnls=disabled \
      -Dman=false -Dgtk_doc=false -Dselinux=disabled -Dlibelf=disabled \
      >"$corpus/glib/configure.log" 2>&1 ||
      die "glib: meson setup failed (see $corpus/glib/configure.log)"
  fi
  generated=$(ninja -C "$out" -t targets all |
    sed -n 's/^\([^:]*\.\(c\|h\|inc\)\): CUSTOM_COMMAND.*/\1/p')
  say "glib: generating $(echo "$generated" | wc -w) sources and headers"
  # shellcheck disable=SC2086  # one target per word
  ninja -C "$out" -j2 $generated >"$corpus/glib/generate.log" 2>&1 ||
    die "glib: generating sources failed (see $corpus/glib/generate.log)"
  ln -sfn "$src" "$corpus/glib/src"
  touch "$out/.generated-done"
}

projects=("$@")
[ ${#projects[@]} -gt 0 ] || projects=(libuv tmux glib)
mkdir -p "$corpus"
need_packages dpkg-dev debian-archive-keyring python3 clang-14
for p in "${projects[@]}"; do
  case $p in
    libuv | tmux | glib) "prepare_$p" ;;
    *)
      echo "usage: tests/corpus/prepare.sh [libuv] [tmux] [glib]" >&2
      exit 2
      ;;
  esac
  say "$p: ready ($corpus/$p/build/compile_commands.json)"
done
