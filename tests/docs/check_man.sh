#!/usr/bin/env bash
# check_man.sh SOURCE_DIR PAGE... - the man pages test: every page the build
# wrote renders without a single groff warning, and says what the code
# says. The pages are generated from the docs and the tools' --help, so
# this checks those sources against the code that parses the options:
#   blockscan.1         every option analyzer/src/options.c accepts, long
#                       and short, is in OPTIONS;
#   blockwatch.1        every flag shim/blockwatch.in takes is in OPTIONS,
#                       every key of the shim's option table
#                       (shim/src/options.c) in ENVIRONMENT;
#   bw-trace2svg.1      every option tools/bw-trace2svg/main.c takes is on
#                       the page;
#   bw-merge.1          every option tools/bw-merge/main.c takes is in
#                       SYNOPSIS;
#   blockwatch-rules.5  every category of BW_RULE_CATEGORIES is in FORMAT.
# Exit status: 0 all hold, 1 one does not (each failure is named).
set -uo pipefail
src=${1:?usage: check_man.sh SOURCE_DIR PAGE...}
shift
[ $# -gt 0 ] || { echo "man test: no pages given"; exit 1; }
command -v groff >/dev/null || { echo "man test: groff is missing (scripts/setup.sh --test installs groff-base)"; exit 1; }

failed=0
fail() { echo "man test: $*"; failed=1; }

# The page as plain text, and one section of it (from its heading to the
# next heading at the left margin).
plain() { groff -man -Tascii -P-cbou "$1" 2>/dev/null; }
section() { plain "$1" | awk -v name="$2" '/^[A-Z]/ { inside = $0 == name; next } inside'; }

# Each word must appear in SECTION of PAGE as an option or tag of its own.
expect_in() {
  local page=$1 name=$2 what=$3 text word
  shift 3
  text=$(section "$page" "$name")
  [ -n "$text" ] || { fail "$(basename "$page"): no $name section"; return; }
  for word in "$@"; do
    # A "|" between two words is a usage line's choice ([--quiet|--no-text]).
    # shellcheck disable=SC2001 # the word as a regular expression
    grep -qE -- "(^|[ ,([|])$(sed 's/[.[*^$]/\\&/g' <<<"$word")([] =,)|]|$)" <<<"$text" ||
      fail "$(basename "$page"): $name does not mention $what '$word'"
  done
}

for page in "$@"; do
  [ -s "$page" ] || { fail "$page was not built"; continue; }
  warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
  [ -z "$warnings" ] || fail "$(basename "$page"): groff warns: $warnings"
  case $(basename "$page") in
    blockscan.1)
      # The getopt_long table's rows: each name, and the short option of a
      # row whose key is a character ({"--output", 'o', ...} is also -o).
      mapfile -t opts < <({
        grep -oE '\{"-[^"]+"' "$src/analyzer/src/options.c" | grep -oE -- '-[-a-z]+'
        sed -n "s/.*{\"--[-a-z]*\", '\\([a-zA-Z]\\)'.*/-\\1/p" "$src/analyzer/src/options.c"
      } | grep -vx -- '--' | sort -u)
      [ "${#opts[@]}" -ge 20 ] || fail "found only ${#opts[@]} options in analyzer/src/options.c"
      expect_in "$page" OPTIONS "blockscan option" "${opts[@]}" ;;
    blockwatch.1)
      mapfile -t flags < <(grep -oE '^  (-[-a-z]+)( \| -[-a-z]+)*\)' "$src/shim/blockwatch.in" |
        grep -oE -- '-[-a-z]+' | grep -vx -- '--' | sort -u)
      expect_in "$page" OPTIONS "wrapper flag" "${flags[@]}"
      mapfile -t keys < <(grep -oE '^ +OPT\("[a-z_]+"' "$src/shim/src/options.c" | grep -oE '"[a-z_]+"' | tr -d '"')
      expect_in "$page" ENVIRONMENT "shim option" "${keys[@]}" ;;
    bw-trace2svg.1)
      # Its --help, the page's only source, names every option but itself.
      mapfile -t opts < <(grep -oE 'strcmp\(a, "-[^"]+"\)' "$src/tools/bw-trace2svg/main.c" |
        grep -oE -- '-[-a-z]+' | grep -vxE -- '-h|--help' | sort -u)
      mapfile -t in_usage < <(printf '%s\n' "${opts[@]}" | grep -vx -- '--version')
      expect_in "$page" SYNOPSIS "bw-trace2svg option" "${in_usage[@]}"
      expect_in "$page" DESCRIPTION "bw-trace2svg option" --version ;;
    bw-merge.1)
      # Its --help is its usage alone, which names every option but itself.
      mapfile -t opts < <(grep -oE 'strcmp\(s, "-[^"]+"\)' "$src/tools/bw-merge/main.c" |
        grep -oE -- '-[-a-z]+' | grep -vxE -- '--|-h|--help' | sort -u)
      [ "${#opts[@]}" -ge 5 ] || fail "found only ${#opts[@]} options in tools/bw-merge/main.c"
      expect_in "$page" SYNOPSIS "bw-merge option" "${opts[@]}" ;;
    blockwatch-rules.5)
      mapfile -t cats < <(sed -n 's/^ *X([A-Z_]*, "\([a-z-]*\)".*/\1/p' "$src/rules/include/blockwatch/rules.h")
      [ "${#cats[@]}" -ge 5 ] || fail "found only ${#cats[@]} categories in rules.h"
      expect_in "$page" FORMAT "category" "${cats[@]}" ;;
    *) fail "no checks for $(basename "$page")" ;;
  esac
done
[ "$failed" -eq 0 ] && echo "man test: $# page(s) render cleanly and name every option of the code"
exit "$failed"
