#!/usr/bin/env bash
# check_diff.sh BLOCKSCAN - blockscan --diff REV and --diff-file PATCH on
# scratch git repositories: only the findings a change touches are shown
# (its blocking call, a call of its chain or its submit site), the exit
# status follows them, and a patch or revision that cannot be read exits 2
# naming the patch's file:line or git's error.
#
# Each check builds its own repository (scratch_repo.sh says what is in it).
# Exit status: 0 every check held, 1 one failed.
set -uo pipefail
blockscan=${1:?usage: check_diff.sh BLOCKSCAN}
blockscan=$(cd "$(dirname "$blockscan")" && pwd)/$(basename "$blockscan")
. "$(dirname "$0")/scratch_repo.sh"

# A sleep added inside an existing callback is the one finding.
check_sleep_in_callback() {
  new_repo sleep
  edit "static void quiet_cb(void *arg) {" "static void quiet_cb(void *arg) {\n  usleep(10);"
  scan -p build --diff HEAD --color=never
  expect_one sleep_in_callback \
    "src/app.c:9:3: warning: 'usleep' blocks a pool worker: reached from callback 'quiet_cb'"
}

# An unrelated function is no finding of the change: exit 0, although the
# whole program still has old_cb's sleep.
check_unrelated_function() {
  new_repo unrelated
  printf 'int add(int a, int b) {\n  return a + b;\n}\n' >>"$repo/src/app.c"
  scan -p build --diff HEAD
  if [ "$status" = 0 ] && ! grep -q warning "$work/out"; then
    scan -p build
    if [ "$status" = 1 ]; then
      ok unrelated_function
    else
      bad unrelated_function "the full run should still find old_cb's sleep"
    fi
  else
    bad unrelated_function "want exit 0 and no finding"
  fi
}

# Registering an old blocking function makes old code reachable: the
# finding belongs to the change, through its registration line.
check_new_registration() {
  new_repo registration
  edit "  bw_submit(pool, quiet_cb, NULL);" "  bw_submit(pool, quiet_cb, NULL);\n  bw_submit(pool, legacy, NULL);"
  scan -p build --diff HEAD --color=never
  expect_one new_registration \
    "src/app.c:14:3: warning: 'usleep' blocks a pool worker: reached from callback 'legacy'" \
    "src/app.c:20:3: note: callback 'legacy' handed to 'bw_submit' here"
}

# A change that reaches an old blocking call through its chain: a new call
# of the old blocking function from an old, quiet callback.
check_new_call_in_chain() {
  new_repo chain
  edit "static void quiet_cb(void *arg) {" "void legacy(void *arg);\nstatic void quiet_cb(void *arg) {\n  legacy(arg);"
  scan -p build --diff HEAD --color=never
  expect_one new_call_in_chain "src/app.c:16:3: warning: 'usleep'.*'quiet_cb'"
}

# The diff also reads as a patch on stdin, in JSON and SARIF, and a
# baseline holding the new finding leaves nothing to show.
check_patch_formats_and_baseline() {
  new_repo formats
  edit "static void quiet_cb(void *arg) {" "static void quiet_cb(void *arg) {\n  usleep(10);"
  git -C "$repo" diff >"$work/change.patch"
  scan -p build --diff-file "$work/change.patch" --format json
  local json=$status jsonn
  jsonn=$(grep -c '"rule": "blocking-sleep"' "$work/out")
  status=0
  (cd "$repo" && "$blockscan" -p build --diff-file - --format sarif <"$work/change.patch") \
    >"$work/out" 2>"$work/err" || status=$?
  local sarif=$status sarifn
  sarifn=$(grep -c '"ruleId": "blocking-sleep"' "$work/out")
  (cd "$repo" && "$blockscan" -p build --write-baseline "$work/all.baseline" >/dev/null)
  scan -p build --diff HEAD --baseline "$work/all.baseline"
  if [ "$json" = 1 ] && [ "$jsonn" = 1 ] && [ "$sarif" = 1 ] && [ "$sarifn" = 1 ] &&
    [ "$status" = 0 ]; then
    ok patch_formats_and_baseline
  else
    bad patch_formats_and_baseline "json $json/$jsonn, sarif $sarif/$sarifn, baseline $status"
  fi
}

# A rename is not new code: only the line changed in the renamed file
# counts (without rename detection every line of it would be added).
check_rename() {
  new_repo rename
  git -C "$repo" mv src/app.c src/main.c
  write_db main.c
  printf 'int add(int a, int b) {\n  return a + b;\n}\n' >>"$repo/src/main.c"
  scan -p build --diff HEAD
  local quiet=$status
  perl -0pi -e 's/(static void quiet_cb\(void \*arg\) \{\n)/$1  usleep(10);\n/' "$repo/src/main.c"
  scan -p build --diff HEAD --color=never
  if [ "$quiet" = 0 ]; then
    expect_one rename "src/main.c:9:3: warning: 'usleep'.*'quiet_cb'"
  else
    bad rename "want exit 0 for the rename alone, not $quiet"
  fi
}

# A file git does not track yet is new in its whole.
check_untracked_file() {
  new_repo untracked
  cat >"$repo/src/extra.c" <<'EOF'
#include "pool.h"
static void extra_cb(void *arg) {
  (void)arg;
  sleep(2);
}
void start_extra(bw_pool *pool) { bw_submit(pool, extra_cb, NULL); }
EOF
  write_db app.c extra.c
  scan -p build --diff HEAD --color=never
  expect_one untracked_file "src/extra.c:4:3: warning: 'sleep'"
}

# The database may reach the files through a symbolic link.
check_database_through_link() {
  new_repo linked
  ln -s "$repo" "$work/link"
  sed -i "s|$repo/build|$work/link/build|" "$repo/build/compile_commands.json"
  edit "static void quiet_cb(void *arg) {" "static void quiet_cb(void *arg) {\n  usleep(10);"
  scan -p build --diff HEAD
  expect_one database_through_link "'usleep'.*'quiet_cb'"
}

# expect_error NAME WANT: exit 2 and WANT (an extended regex) on stderr,
# without a report.
expect_error() {
  if [ "$status" = 2 ] && grep -Eq "$2" "$work/err" && ! grep -q warning "$work/out"; then
    ok "$1"
  else
    bad "$1" "want exit 2 and /$2/ on stderr"
  fi
}

check_errors() {
  new_repo errors
  scan -p build --diff no-such-rev
  expect_error bad_revision "^blockscan: error: git diff no-such-rev \(in .*\): fatal: bad revision 'no-such-rev'"
  scan -p build --diff --cached
  expect_error option_as_revision "^blockscan: error: --diff: bad revision '--cached'"
  mkdir -p "$work/norepo/src" "$work/norepo/build"
  cp "$repo/src/"* "$work/norepo/src/"
  sed "s|$repo|$work/norepo|" "$repo/build/compile_commands.json" \
    >"$work/norepo/build/compile_commands.json"
  status=0
  (cd "$work/norepo" && GIT_CEILING_DIRECTORIES=$work "$blockscan" -p build --diff HEAD) \
    >"$work/out" 2>"$work/err" || status=$?
  expect_error not_a_repository "^blockscan: error: --diff needs a git repository \(in .*/norepo/src\): fatal: not a git repository"
  printf '@@ -1,0 +2 @@\n' >"$work/headerless.patch"
  scan -p build --diff-file "$work/headerless.patch"
  expect_error hunk_header_only "headerless.patch:1: malformed patch: a hunk before any '--- OLD' / '\+\+\+ NEW' file header"
  printf -- '--- a/src/app.c\n+++ b/src/app.c\n@@ -4,0 +5 @@\n' >"$work/bodiless.patch"
  scan -p build --diff-file "$work/bodiless.patch"
  expect_error hunk_without_body "bodiless.patch:4: malformed patch: the patch ends inside the hunk of line 3 \(0 old and 1 new lines missing\)"
  printf -- '--- a/src/app.c\n+++ b/src/app.c\n@@ -4,0 +5,2 @@\n+  sleep(1);\n' >"$work/short.patch"
  scan -p build --diff-file - <"$work/short.patch"
  expect_error patch_ends_in_hunk "^blockscan: error: <stdin>:5: malformed patch: the patch ends inside the hunk of line 3"
  printf -- '--- a/src/app.c\n+++ b/src/app.c\n@@ -4 +4 @@\n-  (void)arg;\n*  sleep(1);\n' >"$work/stray.patch"
  scan -p build --diff-file "$work/stray.patch"
  expect_error stray_line "stray.patch:5: malformed patch: this line does not fit the hunk of line 3"
  printf -- '--- a/src/app.c\n+++ b/src/app.c\n@@ -4 +x @@\n' >"$work/header.patch"
  scan -p build --diff-file "$work/header.patch"
  expect_error bad_hunk_header "header.patch:3: malformed patch: a hunk header must read"
  scan -p build --diff-file "$work/missing.patch"
  expect_error missing_patch "missing.patch: cannot read patch: No such file"
  scan -p build --diff HEAD --diff-file "$work/short.patch"
  expect_error both_options "^blockscan: error: --diff and --diff-file cannot be used together"
}

# A patch of plain diff -u (timestamps, no a/ b/) and one with context.
check_plain_diff_with_context() {
  new_repo plain
  cp "$repo/src/app.c" "$work/app.c.orig"
  edit "static void quiet_cb(void *arg) {" "static void quiet_cb(void *arg) {\n  usleep(10);"
  (cd "$repo" && diff -u "$work/app.c.orig" src/app.c | sed "s|^--- $work/app.c.orig|--- src/app.c.orig|") \
    >"$work/plain.patch"
  scan -p build --diff-file "$work/plain.patch" --color=never
  expect_one plain_diff_with_context "src/app.c:9:3: warning: 'usleep'"
}

check_sleep_in_callback
check_unrelated_function
check_new_registration
check_new_call_in_chain
check_patch_formats_and_baseline
check_rename
check_untracked_file
check_database_through_link
check_errors
check_plain_diff_with_context
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
