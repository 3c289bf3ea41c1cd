#!/usr/bin/env bash
# check_symbols.sh - each component's internal names stay in its own room.
#
#   check_symbols.sh [--component NAME PREFIX FILE... ;]... [--exports FILE REGEX ;]...
#
# --component: FILEs (objects or archives) are NAME's code; every global
#   symbol they define that looks internal (bw<letters>__...) must carry
#   PREFIX, and no global symbol may be defined by two components (rules is
#   linked into both blockscan and the shim, so a name defined twice would
#   meet in one link).
# --exports: the dynamic symbol table of FILE (a shared library) must hold
#   no internal name of any component and nothing that does not match REGEX
#   (what that library promises to export).
# Prints one line per finding and "N passed, N failed" (one per check).
set -uo pipefail
passed=0 failed=0
declare -A owner=()

fail() { echo "FAIL $*"; bad=1; }

check_component() {
  local name=$1 prefix=$2
  shift 2
  bad=0
  local sym
  while read -r sym; do
    if [[ $sym =~ ^(bw|BW)[a-zA-Z]*__ && $sym != "$prefix"* && $sym != "${prefix^^}"* ]]; then
      fail "$name defines $sym, an internal name without its prefix $prefix"
    fi
    if [ -n "${owner[$sym]:-}" ] && [ "${owner[$sym]}" != "$name" ]; then
      fail "$sym is defined by both ${owner[$sym]} and $name"
    fi
    owner[$sym]=$name
  done < <(nm -g --defined-only "$@" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u)
  if [ "$bad" = 0 ]; then echo "ok   $name: internal names carry $prefix"; passed=$((passed + 1)); else failed=$((failed + 1)); fi
}

check_exports() {
  local file=$1 allowed=$2 sym
  bad=0
  while read -r sym; do
    if [[ $sym =~ ^(bw|BW)[a-zA-Z]*__ ]]; then
      fail "$(basename "$file") exports the internal name $sym"
    elif ! [[ $sym =~ $allowed ]]; then
      fail "$(basename "$file") exports $sym, which it does not promise"
    fi
  # Type A entries are the version nodes (GLIBC_2.2.5), not symbols.
  done < <(nm -D --defined-only "$file" | awk 'NF == 3 && $2 != "A" { print $3 }' | sed 's/@.*//' | sort -u)
  if [ "$bad" = 0 ]; then echo "ok   $(basename "$file"): exports only $allowed"; passed=$((passed + 1)); else failed=$((failed + 1)); fi
}

while [ $# -gt 0 ]; do
  case $1 in
    --component)
      name=$2 prefix=$3
      shift 3
      files=()
      while [ $# -gt 0 ] && [ "$1" != ";" ]; do files+=("$1"); shift; done
      shift
      check_component "$name" "$prefix" "${files[@]}"
      ;;
    --exports)
      check_exports "$2" "$3"
      shift 3
      [ "${1:-}" = ";" ] && shift
      ;;
    *) echo "check_symbols.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
echo "symbols: $passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
