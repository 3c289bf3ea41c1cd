#!/usr/bin/env bash
# check_cli.sh [--skip TOOL:CHECK]... TOOL=PROGRAM[:OPTION[:INPUT]]... - the
# command-line conventions every blockwatch command keeps:
#   help        --help prints "usage: TOOL ..." on stdout and exits 0;
#   version     --version prints "TOOL X.Y.Z" on stdout and exits 0;
#   unknown     an unknown option exits 2 with a "TOOL: " line on stderr
#               naming the option;
#   value       OPTION given last, without its value, exits 2 naming OPTION
#               on a "TOOL: " line of stderr;
#   operand     no operand at all (no input, no program) exits 2 with a
#               "TOOL: " line on stderr saying what is missing - a usage
#               text alone does not say it;
#   missing     (INPUT given) an input file that does not exist, and
#   unreadable  one that cannot be read, exit 2 naming the file.
# INPUT is where the tool takes its input file: "file" (an operand of its
# own), or "report" for blockscan, whose report carries the errors about its
# inputs (on stdout in text, as clang-tidy's does), so the file may be named
# on either stream.
#
# --skip TOOL:CHECK leaves out one check known to fail, printing that it did;
# the CMake file that registers this test keeps that list.
# Exit status: 0 every check held (or was skipped), 1 one failed.
set -uo pipefail
declare -A skip=()
while [ "${1:-}" = --skip ]; do
  skip[${2:?--skip needs TOOL:CHECK}]=1
  shift 2
done
[ $# -gt 0 ] || { echo "usage: check_cli.sh [--skip TOOL:CHECK]... TOOL=PROGRAM[:OPTION[:INPUT]]..."; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/check-cli.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
passed=0 failed=0 skipped=0

# run PROGRAM ARGS...: status in $status, output in $work/out and $work/err.
run() {
  status=0
  "$@" </dev/null >"$work/out" 2>"$work/err" || status=$?
}

# check TOOL CHECK PREDICATE [ARG]: counts one check, which holds when
# PREDICATE ARG succeeds.
check() {
  local tool=$1 name=$2
  shift 2
  if [ -n "${skip[$tool:$name]:-}" ]; then
    echo "SKIP  $tool: $name (on the skip list)"
    skipped=$((skipped + 1))
  elif "$@"; then
    passed=$((passed + 1))
  else
    echo "FAIL  $tool: $name: exit $status"
    sed 's/^/        stdout: /' "$work/out" | head -5
    sed 's/^/        stderr: /' "$work/err" | head -5
    failed=$((failed + 1))
  fi
}

# The checks, on the last run of $tool. err_names: exit 2 and a "TOOL: "
# line on stderr containing the fixed string $1.
help_holds() { [ "$status" -eq 0 ] && head -1 "$work/out" | grep -q "^usage: $tool "; }
version_holds() {
  [ "$status" -eq 0 ] && grep -qE "^$tool [0-9]+\.[0-9]+\.[0-9]+$" "$work/out" && [ ! -s "$work/err" ]
}
err_names() { [ "$status" -eq 2 ] && grep "^$tool: " "$work/err" | grep -qF -- "$1"; }
operand_holds() { [ "$status" -eq 2 ] && grep -q "^$tool: " "$work/err"; }
# Exit 2 naming the file $1: on stderr, or for a tool whose report carries
# its input errors, on either stream.
file_named() {
  [ "$status" -eq 2 ] || return 1
  if [ "$input" = report ]; then
    grep -qF -- "$1" "$work/out" || grep -qF -- "$1" "$work/err"
  else
    err_names "$1"
  fi
}

# An unreadable file: mode 000 keeps everyone but root out. As root, the
# check runs the tool as the unprivileged "nobody" where setpriv can; else
# it is not possible here and is left out, saying so.
unreadable=$work/unreadable.input
printf 'x\n' >"$unreadable"
chmod 000 "$unreadable"
as_reader=()
if [ "$(id -u)" -eq 0 ]; then
  if command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
    chmod 755 "$work"
    as_reader=(setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups)
  else
    as_reader=(none)
  fi
fi

for spec in "$@"; do
  tool=${spec%%=*}
  IFS=: read -r program option input <<<"${spec#*=}"
  [ -x "$program" ] || { echo "FAIL  $tool: '$program' is not an executable"; failed=$((failed + 1)); continue; }

  run "$program" --help
  check "$tool" help help_holds
  run "$program" --version
  check "$tool" version version_holds
  run "$program" --no-such-option
  check "$tool" unknown err_names --no-such-option
  if [ -n "$option" ]; then
    run "$program" "$option"
    check "$tool" value err_names "$option"
  fi
  run "$program"
  check "$tool" operand operand_holds

  [ -n "$input" ] || continue
  run "$program" "$work/no-such.input"
  check "$tool" missing file_named no-such.input
  reader=${as_reader[0]:-}
  if [ -n "$reader" ] && [ "$reader" != none ] && ! "${as_reader[@]}" "$program" --version >/dev/null 2>&1; then
    reader="nobody cannot run $program"
  fi
  if [ "$reader" = none ] || [[ $reader == nobody* ]]; then
    [ "$reader" = none ] && reader="root without setpriv: every file is readable"
    echo "SKIP  $tool: unreadable ($reader)"
    skipped=$((skipped + 1))
  else
    run "${as_reader[@]}" "$program" "$unreadable"
    check "$tool" unreadable file_named unreadable.input
  fi
done

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
