#!/usr/bin/env bash
# check_diff_overlap.sh BLOCKSCAN - --diff REV runs git diff beside the
# parse, not before it: a git that holds its diff back until blockscan has
# written a TU's cache entry still lets the run finish at once, with the
# change's finding. A blockscan that waited for the diff before parsing
# would make that git give up after WAIT seconds and say so.
#
# Exit status: 0 the check held, 1 it failed.
set -uo pipefail
blockscan=${1:?usage: check_diff_overlap.sh BLOCKSCAN}
blockscan=$(cd "$(dirname "$blockscan")" && pwd)/$(basename "$blockscan")
. "$(dirname "$0")/scratch_repo.sh"
WAIT=20

# A git on PATH before the real one: "diff" waits for a cache entry (at
# most WAIT seconds) and writes what it saw to $work/seen; every command
# then runs the real git.
fake_git() {
  local real
  real=$(command -v git) || { echo "git is not on PATH" >&2; exit 1; }
  mkdir -p "$work/bin"
  cat >"$work/bin/git" <<SH
#!/usr/bin/env bash
for arg; do
  if [ "\$arg" = diff ]; then
    for ((i = 0; i < $WAIT * 20; i++)); do
      if compgen -G "$work/cache/*.bwfacts" >/dev/null; then
        echo beside >"$work/seen"
        break
      fi
      sleep 0.05
    done
    [ -f "$work/seen" ] || echo "waited $WAIT s" >"$work/seen"
    break
  fi
done
exec "$real" "\$@"
SH
  chmod +x "$work/bin/git"
}

new_repo overlap
edit "static void quiet_cb(void *arg) {" "static void quiet_cb(void *arg) {\n  usleep(10);"
fake_git
status=0
(cd "$repo" && PATH="$work/bin:$PATH" "$blockscan" -p build --diff HEAD \
  --cache "$work/cache" --color=never) >"$work/out" 2>"$work/err" || status=$?
seen=$(cat "$work/seen" 2>/dev/null || echo "git diff never ran")
if [ "$seen" = beside ]; then
  expect_one diff_beside_the_parse \
    "src/app.c:9:3: warning: 'usleep' blocks a pool worker: reached from callback 'quiet_cb'"
else
  bad diff_beside_the_parse "git diff saw no cache entry: $seen"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
