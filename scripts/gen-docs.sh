#!/usr/bin/env bash
# gen-docs.sh [--build DIR] [--into DIR] [--list] - rewrite every pasted
# output in the docs from runs of the real, built tools.
#
# A generated block in a doc sits between two marker lines:
#   <!-- generated: NAME -->
#   ...                      (rewritten: the fenced command and its output)
#   <!-- end generated -->
# and NAME is a function block_NAME below. Everything outside the markers is
# left as it is. Commands run from the repository root with relative paths,
# and are shown as they would be typed with the build tree in build/.
#
#   --build DIR  the build tree to run (default build); any name or place
#                works, it is shown as build/ in the docs
#   --into DIR   write the rewritten docs under DIR (same relative paths)
#                instead of in place; the docs test uses this
#   --list       print the docs that hold generated blocks, then exit
#
# What varies from run to run is normalised, the same way every time:
#   - a number with a decimal point (every measured time the samples and the
#     shim print) becomes <t>, with the spaces before it cut to one;
#   - the address in a caller frame of the shim's report becomes <addr>,
#     and so does a JSON frame's offset; its build_id becomes <id>;
#   - the pid becomes <pid>; counts that depend on timing (calls on other
#     threads, items that were starved, timed items, and in the polling
#     sample the number of naps) become <n>, and the calls on other threads
#     by function (which functions, how often, in which order) <by function>;
#   - absolute paths lose the repository root; the build tree is build/;
#   - call sites are sorted by their text, each with its frames and hint
#     (the shim sorts them by blocked time, which moves from run to run);
#   - caller frames outside the repository (libc's start_thread, GLib, ...)
#     are left out, and frames in the repository outside samples/ keep their
#     file but not their line (runtime/src changes more often than a doc).
# Exit status: 0 done, 1 a command or a block failed, 77 the build tree lacks
# a tool (the docs test then skips).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=build
into=$root
list_only=0
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=${2:?--build needs a directory}; shift 2 ;;
    --into) into=${2:?--into needs a directory}; shift 2 ;;
    --list) list_only=1; shift ;;
    *) echo "usage: gen-docs.sh [--build DIR] [--into DIR] [--list]" >&2; exit 1 ;;
  esac
done

# The docs that hold generated blocks, relative to the root.
docs=(docs/tour.md docs/shim.md docs/blockscan.md)
if [ "$list_only" = 1 ]; then
  printf '%s\n' "${docs[@]}"
  exit 0
fi

[ -d "$build" ] || { echo "gen-docs: no build tree '$build'" >&2; exit 77; }
build=$(cd "$build" && pwd)
mkdir -p "$into"
into=$(cd "$into" && pwd)
cd "$root"

for tool in analyzer/blockscan shim/blockwatch shim/libblockwatch.so \
  tools/bw-trace2svg/bw-trace2svg samples/delay_vs_sleep samples/starvation_probe \
  samples/sync_over_async samples/polling_vs_signal samples/legacy_audit \
  samples/glib_blocking samples/uv_blocking; do
  [ -e "$build/$tool" ] || { echo "gen-docs: $build/$tool is not built" >&2; exit 77; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/gen-docs.XXXXXX")
trap 'rm -rf "$work"' EXIT

# A path as an extended regular expression (a checkout may be named a+b).
regex_of() { sed -E 's/[][\\.*^$+?(){}|#]/\\&/g' <<<"$1"; }
build_re=$(regex_of "$build")
root_re=$(regex_of "$root")
build_sub=$(sed -E 's/[\\&#]/\\&/g' <<<"$build") # as a sed replacement

# The normalisation described above, for every line a command prints.
# shellcheck disable=SC2016
normalise() {
  sed -E -e "s#$build_re/#build/#g; s#$build_re([^/]|\$)#build\\1#g; s#$root_re/##g" \
    -e 's/report for pid [0-9]+/report for pid <pid>/; s/"pid":[0-9]+/"pid":<pid>/' \
    -e 's/ +[0-9]+\.[0-9]+/ <t>/g; s/([:(])[0-9]+\.[0-9]+/\1<t>/g' \
    -e 's/^(blockwatch: +#[0-9]+) 0x[0-9a-f]+ /\1 <addr> /' \
    -e 's/"build_id":"[0-9a-f]+"/"build_id":"<id>"/g; s/"offset":"0x[0-9a-f]+"/"offset":"<addr>"/g' \
    -e 's/; [0-9]+ on other threads/; <n> on other threads/' \
    -e 's/^(blockwatch:   on other threads: ).*/\1<by function>/' \
    -e 's/"on_other_threads_by_function":\[[^]]*\]/"on_other_threads_by_function":[<by function>]/' \
    -e 's/over [0-9]+ item\(s\)/over <n> item(s)/' \
    -e 's/"(on_other_threads|timed_items)":[0-9]+/"\1":<n>/g' \
    -e 's/("starvation_delay_ms":\{[^}]*"items":)[0-9]+/\1<n>/' |
    awk -v root="$root" '
      # Call sites in a stable order: the shim prints them by blocked
      # time, which moves from run to run.
      function flush(  i, j, t) {
        for (i = 2; i <= n; i++) {
          t = site[i]
          for (j = i - 1; j >= 1 && site[j] > t; j--) site[j + 1] = site[j]
          site[j + 1] = t
        }
        for (i = 1; i <= n; i++) printf "%s", site[i]
        n = 0
      }
      /^blockwatch: [^ #][^ ]*\(\) x[^ ]+ .* blocked:$/ { site[++n] = $0 "\n"; next }
      # A caller frame: "blockwatch:     #N function [file:line]".
      /^blockwatch: +#[0-9]+ / {
        loc = $NF
        if (NF < 4 || loc !~ /^[A-Za-z_][^ ]*:[0-9]+$/) next
        file = loc; sub(/:[0-9]+$/, "", file)
        if (system("test -f \"" root "/" file "\"") != 0) next
        if (file !~ /^samples\//) sub(/:[0-9]+$/, "", $0)
        if (n) { site[n] = site[n] $0 "\n"; next }
      }
      /^blockwatch: +hint: / && n { site[n] = site[n] $0 "\n"; next }
      { flush(); print }
      END { flush() }'
}

# show 'COMMAND' [extra sed script]: prints "$ COMMAND" and what it prints
# (stderr and stdout, in the order they reach one pipe). COMMAND is written
# with the build tree as build/ and run with the real one; its output goes
# through $scratch, a directory of the block's own.
show() {
  local shown=$1 extra=${2:-} real status=0
  real=$(sed -E "s#(^| )(\.\./)*build(/| |\$)#\\1$build_sub\\3#g" <<<"$shown")
  printf '$ %s\n' "$shown"
  eval "$real" >"$scratch/out" 2>&1 || status=$?
  if [ "$status" -gt 1 ]; then # 1 is blockscan's "findings"
    echo "gen-docs: '$shown' exited $status:" >&2
    cat "$scratch/out" >&2
    return 1
  fi
  normalise <"$scratch/out" | sed -E -e "${extra:-b}"
}

# Fences around a block's commands.
fence() { printf '```\n'; "$@"; printf '```\n'; }

# ---- docs/tour.md

block_tour-delay() { show 'BW_DEFAULT_POOL_WORKERS=2 build/samples/delay_vs_sleep'; }
block_tour-delay-scan() { show 'build/analyzer/blockscan -p build samples/delay_vs_sleep.c'; }
block_tour-delay-shim-delay() { show 'BW_DEFAULT_POOL_WORKERS=2 build/shim/blockwatch -- build/samples/delay_vs_sleep --delay-only'; }
block_tour-delay-shim-sleep() { show 'BW_DEFAULT_POOL_WORKERS=2 build/shim/blockwatch -- build/samples/delay_vs_sleep --sleep-only'; }
block_tour-probe() { show 'build/samples/starvation_probe'; }
block_tour-probe-scan() { show 'build/analyzer/blockscan -p build samples/starvation_probe.c'; }
block_tour-probe-shim() {
  show 'build/shim/blockwatch --trace build/trace.json -o build/report.json -- build/samples/starvation_probe'
}
block_tour-probe-compensate() {
  show 'build/shim/blockwatch --compensate -o build/compensate.json -- build/samples/starvation_probe --off-only'
}
block_tour-sync() { show 'build/samples/sync_over_async'; }
block_tour-sync-scan() { show 'build/analyzer/blockscan -p build samples/sync_over_async.c'; }
block_tour-sync-shim() { show 'build/shim/blockwatch -- build/samples/sync_over_async'; }
block_tour-polling() { show 'build/samples/polling_vs_signal'; }
block_tour-polling-scan() { show 'build/analyzer/blockscan -p build samples/polling_vs_signal.c'; }
# How many 1 ms naps the poller takes, and whether both workers were ever
# asleep at once, depends on when the event came.
block_tour-polling-shim() {
  show 'build/shim/blockwatch -- build/samples/polling_vs_signal' \
    's/[0-9]+ blocking call/<n> blocking call/; s/\(\) x[0-9]+/() x<n>/; s/peak [0-9]+ blocked/peak <n> blocked/'
}
block_tour-legacy-summary() { show 'build/analyzer/blockscan -p build --summary samples/legacy_audit'; }
block_tour-legacy-baseline-file() { show 'cat samples/legacy_audit/blockscan.baseline'; }
block_tour-legacy-baseline() {
  show 'build/analyzer/blockscan -p build --baseline samples/legacy_audit/blockscan.baseline samples/legacy_audit; echo "exit status $?"'
}
block_tour-foreign() {
  show 'build/samples/uv_blocking' 's/lateness [0-9]+ ms/lateness <t> ms/'
  show 'build/samples/glib_blocking'
}
block_tour-foreign-scan() {
  show 'build/analyzer/blockscan -p build samples/foreign/glib_blocking.c'
  show 'build/analyzer/blockscan -p build samples/foreign/uv_blocking.c'
}
block_tour-foreign-shim() { show 'build/shim/blockwatch -- build/samples/glib_blocking'; }
# Only the summary: the findings themselves are the blocks above.
# shellcheck disable=SC2016
block_tour-all() {
  show 'build/analyzer/blockscan -p build --summary samples 2>&1 | sed -n "/^blockscan summary/,\$p"'
}

# ---- docs/shim.md

# One frame per site keeps the example short; the JSON follows the text.
# Its own report file: the blocks run at the same time, and the tour's
# starvation_probe block writes build/report.json.
block_shim-report() {
  show 'build/shim/blockwatch --options frames=1 -o build/shim-report.json -- build/samples/starvation_probe --off-only'
  show 'cat build/shim-report.json'
}

# ---- docs/blockscan.md

# The legacy audit seen from its own directory: paths relative to it.
block_blockscan-text() { show 'cd samples/legacy_audit && ../../build/analyzer/blockscan -p ../../build .'; }

# Generate every block the docs name (in parallel: most of the time is the
# samples sleeping), then splice each into its doc.
names=$(sed -n 's/^<!-- generated: \([A-Za-z0-9_-]*\) -->$/\1/p' "${docs[@]}")
pids=()
for name in $names; do
  if ! declare -F "block_$name" >/dev/null; then
    echo "gen-docs: no generator for block '$name'" >&2
    exit 1
  fi
  mkdir -p "$work/$name.d"
  # Not an && list: set -e must stay in force inside the block's commands.
  (
    scratch=$work/$name.d
    fence "block_$name" >"$work/$name.block"
  ) &
  pids+=("$!:$name")
done
failed=0
for entry in "${pids[@]}"; do
  wait "${entry%%:*}" || { echo "gen-docs: block '${entry#*:}' failed" >&2; failed=1; }
done
[ "$failed" = 0 ] || exit 1

for doc in "${docs[@]}"; do
  mkdir -p "$(dirname "$into/$doc")"
  awk -v dir="$work" '
    /^<!-- generated: [A-Za-z0-9_-]+ -->$/ {
      print; name = $3; file = dir "/" name ".block"
      while ((getline line < file) > 0) print line
      close(file); skipping = 1; next
    }
    /^<!-- end generated -->$/ { skipping = 0 }
    !skipping { print }' "$doc" >"$work/doc.tmp"
  mv "$work/doc.tmp" "$into/$doc"
done
