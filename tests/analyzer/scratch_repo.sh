# scratch_repo.sh - sourced by the tests that run blockscan on scratch git
# repositories: a temporary directory ($work, removed at exit), pass/fail
# counting, and one small project to change.
#
# The project (new_repo): src/app.c holds one old finding (old_cb's sleep,
# line 5), a quiet callback (quiet_cb, line 8) and a blocking function no
# one registers yet (legacy, its usleep on line 14), all registered in
# start() (lines 18-19); build/compile_commands.json names the file as
# "../src/app.c" from build/, the way CMake's databases often do. The
# caller sets $blockscan (an absolute path) first.
work=$(mktemp -d "${TMPDIR:-/tmp}/blockscan-git.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
export GIT_CONFIG_NOSYSTEM=1 HOME=$work GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t \
  GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t

ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() {
  failed=$((failed + 1))
  echo "FAIL $1: $2"
  echo "--- status $status, stdout:"; cat "$work/out"
  echo "--- stderr:"; cat "$work/err"
}

# scan ARGS...: blockscan from the repository's top; $status, out, err.
scan() {
  status=0
  (cd "$repo" && "$blockscan" "$@") >"$work/out" 2>"$work/err" || status=$?
}

# new_repo NAME: a repository with one commit on main, in $repo.
new_repo() {
  repo=$work/$1
  mkdir -p "$repo/src" "$repo/build"
  cat >"$repo/src/pool.h" <<'EOF'
#include <unistd.h>
typedef struct bw_pool bw_pool;
int bw_submit(bw_pool *pool, void (*fn)(void *arg), void *arg);
EOF
  cat >"$repo/src/app.c" <<'EOF'
#include "pool.h"

static void old_cb(void *arg) {
  (void)arg;
  sleep(1);
}

static void quiet_cb(void *arg) {
  (void)arg;
}

void legacy(void *arg) {
  (void)arg;
  usleep(5);
}

void start(bw_pool *pool) {
  bw_submit(pool, old_cb, NULL);
  bw_submit(pool, quiet_cb, NULL);
}
EOF
  write_db app.c
  git -C "$repo" init -q -b main && git -C "$repo" add -A &&
    git -C "$repo" commit -qm base
}

# write_db FILE...: the database of src/FILE..., relative to build/.
write_db() {
  local sep="" f
  {
    echo "["
    for f in "$@"; do
      printf '%s{"directory": "%s/build", "file": "../src/%s", "arguments": ["cc", "-c", "../src/%s"]}\n' \
        "$sep" "$repo" "$f" "$f"
      sep=","
    done
    echo "]"
  } >"$repo/build/compile_commands.json"
}

# edit FROM TO: replaces the first line FROM of src/app.c by the lines TO
# (a "\n" in TO starts a new line).
edit() {
  FROM=$1 TO=$2 perl -0pi -e 's/^\Q$ENV{FROM}\E$/$ENV{TO} =~ s{\\n}{\n}gr/me' \
    "$repo/src/app.c"
}

# expect_one NAME PATTERN...: exit 1 and one finding, the output matching
# every PATTERN (basic regexes).
expect_one() {
  local name=$1 pattern
  shift
  if [ "$status" = 1 ] && [ "$(grep -c 'warning:' "$work/out")" = 1 ]; then
    for pattern; do
      grep -q "$pattern" "$work/out" || { bad "$name" "want /$pattern/"; return; }
    done
    ok "$name"
  else
    bad "$name" "want exit 1 and one finding"
  fi
}

