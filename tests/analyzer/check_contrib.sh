#!/usr/bin/env bash
# check_contrib.sh BLOCKSCAN CONTRIB - the CI recipes in contrib/ on scratch
# git repositories:
#   - github/blockscan.yml parses as YAML (perl's core CPAN::Meta::YAML, so
#     no module needs installing), has what code scanning needs, and its
#     Configure, Build and blockscan steps, run as GitHub runs them (bash -e)
#     in a clone of a pull request, write a SARIF file with the change's one
#     finding and fail the job; "Install blockscan" is left out (it needs
#     root and the network);
#   - pre-commit refuses a commit whose staged change adds a sleep in a
#     callback and lets a clean one through; an unstaged sleep is not part
#     of the commit, and a staged one stays seen when unstaged edits above
#     it move its line.
# Exit status: 0 every check held, 1 one failed.
set -uo pipefail
blockscan=${1:?usage: check_contrib.sh BLOCKSCAN CONTRIB}
contrib=${2:?usage: check_contrib.sh BLOCKSCAN CONTRIB}
blockscan=$(cd "$(dirname "$blockscan")" && pwd)/$(basename "$blockscan")
contrib=$(cd "$contrib" && pwd)
. "$(dirname "$0")/scratch_repo.sh"

# ---- the workflow ----------------------------------------------------------

# Writes each step's `run:` script to $work/steps/<name>.sh, and checks the
# shape code scanning needs; prints what is wrong and exits 1, else 0.
read_workflow() {
  mkdir -p "$work/steps"
  perl -MCPAN::Meta::YAML -e '
    my ($file, $dir) = @ARGV;
    my $yaml = CPAN::Meta::YAML->read($file) or die CPAN::Meta::YAML->errstr . "\n";
    my $doc = $yaml->[0];
    my @bad;
    exists $doc->{on}{pull_request} or push @bad, "no on: pull_request";
    ($doc->{permissions}{"security-events"} // "") eq "write"
      or push @bad, "no permissions: security-events: write";
    my $steps = $doc->{jobs}{blockscan}{steps} or die "no jobs: blockscan: steps\n";
    my ($checkout, $upload);
    for my $step (@$steps) {
      my $uses = $step->{uses} // "";
      $checkout = $step if $uses =~ m{^actions/checkout@};
      $upload = $step if $uses =~ m{^github/codeql-action/upload-sarif@};
      next unless defined $step->{run};
      open my $out, ">", "$dir/$step->{name}.sh" or die "$!\n";
      print $out $step->{run};
    }
    ($checkout && ($checkout->{with}{"fetch-depth"} // "") eq "0")
      or push @bad, "checkout without fetch-depth: 0 (--diff needs the base)";
    ($upload && ($upload->{with}{sarif_file} // "") eq "blockscan.sarif")
      or push @bad, "no upload-sarif of blockscan.sarif";
    ($doc->{jobs}{blockscan}{env}{BASE_REF} // "") eq q(${{ github.base_ref }})
      or push @bad, "BASE_REF is not the base branch";
    die join("\n", @bad) . "\n" if @bad;
  ' "$contrib/github/blockscan.yml" "$work/steps"
}

check_workflow() {
  status=0
  read_workflow >"$work/out" 2>"$work/err" || status=$?
  if [ "$status" != 0 ]; then
    bad workflow_parses "blockscan.yml does not parse or lacks a part"
    return
  fi
  ok workflow_parses
  # origin holds main; the pull request adds a sleep in a callback.
  new_repo origin
  rm -r "$repo/build"
  printf 'cmake_minimum_required(VERSION 3.16)\nproject(demo C)\nadd_library(app STATIC src/app.c)\n' \
    >"$repo/CMakeLists.txt"
  git -C "$repo" add -A && git -C "$repo" commit -qm cmake
  git clone -q "$repo" "$work/pr" && repo=$work/pr
  git -C "$repo" checkout -q -b topic
  edit "static void quiet_cb(void *arg) {" "static void quiet_cb(void *arg) {\n  usleep(10);"
  git -C "$repo" commit -qam "a sleep in quiet_cb"
  local step
  : >"$work/github_output"
  for step in Configure Build blockscan; do
    status=0
    (cd "$repo" && PATH=$(dirname "$blockscan"):$PATH BASE_REF=main \
      GITHUB_OUTPUT=$work/github_output bash -e "$work/steps/$step.sh") \
      >"$work/out" 2>"$work/err" || status=$?
    if [ "$status" != 0 ]; then
      bad workflow_steps_run "step '$step' failed"
      return
    fi
  done
  local results
  results=$(grep -c '"ruleId": "blocking-sleep"' "$repo/blockscan.sarif" 2>/dev/null)
  if [ "$results" = 1 ] && grep -q '"uri": "src/app.c"' "$repo/blockscan.sarif" &&
    grep -qx 'status=1' "$work/github_output"; then
    ok workflow_steps_run
  else
    bad workflow_steps_run "want one result in src/app.c and status=1, not $results and $(cat "$work/github_output")"
  fi
}

# ---- the pre-commit hook ---------------------------------------------------

# commit NAME WANT: `git commit` in $repo exits 0 (WANT = pass) or not
# (WANT = refuse, HEAD stays, and the finding is shown: git sends a hook's
# stdout to stderr).
commit() {
  local before
  before=$(git -C "$repo" rev-parse HEAD)
  status=0
  git -C "$repo" commit -qm "$1" >"$work/out" 2>"$work/err" || status=$?
  if [ "$2" = pass ] && [ "$status" = 0 ]; then
    ok "hook_$1"
  elif [ "$2" = refuse ] && [ "$status" != 0 ] &&
    [ "$(git -C "$repo" rev-parse HEAD)" = "$before" ] &&
    grep -q "src/app.c:.*warning: 'usleep'.*'quiet_cb'" "$work/err" &&
    grep -q "^blockscan: the staged change brings" "$work/err"; then
    ok "hook_$1"
  else
    bad "hook_$1" "want the commit to $2"
  fi
}

check_hook() {
  new_repo hook
  cp "$contrib/pre-commit" "$repo/.git/hooks/pre-commit"
  git -C "$repo" config blockscan.program "$blockscan"

  edit "static void quiet_cb(void *arg) {" "static void quiet_cb(void *arg) {\n  usleep(10);"
  git -C "$repo" add src/app.c
  commit sleep_in_callback refuse
  git -C "$repo" reset -q --hard

  printf 'int add(int a, int b) {\n  return a + b;\n}\n' >"$repo/src/other.c"
  write_db app.c other.c
  git -C "$repo" add -A
  commit clean_change pass

  # The sleep is not staged: it is not in the commit.
  edit "static void quiet_cb(void *arg) {" "static void quiet_cb(void *arg) {\n  usleep(10);"
  printf 'int sub(int a, int b) {\n  return a - b;\n}\n' >>"$repo/src/other.c"
  git -C "$repo" add src/other.c
  commit unstaged_sleep pass
  git -C "$repo" reset -q --hard

  # Staged, then moved down three lines by unstaged comments above it.
  edit "static void quiet_cb(void *arg) {" "static void quiet_cb(void *arg) {\n  usleep(10);"
  git -C "$repo" add src/app.c
  edit '#include "pool.h"' '/* one\n * two\n */\n#include "pool.h"'
  commit moved_sleep refuse
  grep -q "unstaged edits, checked with them: src/app.c" "$work/err" ||
    bad hook_moved_sleep_note "the hook should say which files it checks with their unstaged edits"
  git -C "$repo" reset -q --hard
}

check_workflow
check_hook
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
