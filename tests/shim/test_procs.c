/* test_procs.c - many processes, one report: processes that share a
 * report_path merge into it, and `blockwatch --` collects a whole process
 * tree (sh -c, timeout, exec, fork) into one summary and one JSON file,
 * writing nothing into the programs' own output while they run.
 *
 * Invariants: procs_target makes a known number of blocking calls per
 * mode on its "procs-worker" thread; every test checks the totals, the
 * processes[] entries and the program's own exit status and output.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "shim_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *path_of(const char *name) {
  static char buf[4][600];
  static int next;
  char *b = buf[next++ % 4];
  return shim_tmpfile(b, 600, name);
}

/* The processes[] entry whose program ends in `program` and that made
 * `calls` blocking calls on workers: how many there are. */
static int processes_with(json_t *j, const char *program, long long calls) {
  json_t *procs = json_object_get(j, "processes");
  int found = 0;
  for (size_t i = 0; i < json_array_size(procs); i++) {
    json_t *p = json_array_get(procs, i);
    const char *name = json_string_value(json_object_get(p, "program"));
    size_t n = name ? strlen(name) : 0, m = strlen(program);
    assert_true(json_is_integer(json_object_get(p, "pid")));
    if (n >= m && strcmp(name + n - m, program) == 0 &&
        shim_calls(p, "on_workers") == calls)
      found++;
  }
  return found;
}

/* Runs argv under LD_PRELOAD with a JSON report to p (no "%p": shared by
 * the processes of the run) and worker_name=procs-*; the report, loaded,
 * after checking the run exited 0. */
static json_t *run_shared(char *const argv[], const char *p, const char *more) {
  char *env[] = {shim_fmt("BLOCKWATCH_OPTIONS=report=json:report_path=%s:"
                          "worker_name=procs-*%s",
                          p, more),
                 NULL};
  shim_result r;
  assert_int_equal(shim_run(argv, env, 1, 60, &r), 0);
  if (r.status != 0)
    fail_msg("status %d, stderr:\n%s", r.status, r.err);
  shim_result_free(&r);
  json_t *j = shim_load_json(p);
  assert_non_null(j);
  return j;
}

/* ---- a report_path shared under plain LD_PRELOAD ------------------------- */

static void test_timeout_keeps_the_programs_report(void **state) {
  (void)state;
  const char *p = path_of("timeout.json");
  unlink(p);
  char *argv[] = {"/usr/bin/timeout", "20", PROCS_TARGET, "block", "3", NULL};
  json_t *j = run_shared(argv, p, "");
  assert_int_equal(shim_calls(j, "on_workers"), 3);
  assert_int_equal(json_array_size(json_object_get(j, "processes")), 2);
  assert_int_equal(processes_with(j, "procs_target", 3), 1);
  assert_int_equal(processes_with(j, "timeout", 0), 1);
  assert_int_equal(shim_site_count(j, "usleep"), 3);
  json_decref(j);

  /* The next run of the same command replaces the file, as before. */
  j = run_shared(argv, p, "");
  assert_int_equal(shim_calls(j, "on_workers"), 3);
  assert_int_equal(json_array_size(json_object_get(j, "processes")), 2);
  json_decref(j);
}

/* `sh -c "procs_target FIRST; procs_target SECOND"` under run_shared with
 * the report in name (removed first). */
static json_t *run_two_in_a_shell(const char *name, const char *first,
                                  const char *second, const char *more) {
  const char *p = path_of(name);
  unlink(p);
  char *cmd =
      shim_fmt("%s %s; %s %s", PROCS_TARGET, first, PROCS_TARGET, second);
  char *argv[] = {"/bin/sh", "-c", cmd, NULL};
  return run_shared(argv, p, more);
}

/* An interim report merges like a final one (the other processes' stay),
 * and the same process's final report replaces it: each process is there
 * once, with its final numbers. */
static void test_interim_report_merges_and_is_replaced(void **state) {
  (void)state;
  json_t *j = run_two_in_a_shell("interim.json", "block 1", "interim",
                                 ":interim_signal=SIGUSR2");
  assert_int_equal(shim_calls(j, "on_workers"), 4);
  json_t *procs = json_object_get(j, "processes");
  assert_int_equal(json_array_size(procs), 3);
  assert_int_equal(processes_with(j, "procs_target", 1), 1);
  assert_int_equal(processes_with(j, "procs_target", 3), 1);
  for (size_t i = 0; i < json_array_size(procs); i++)
    assert_false(
        json_is_true(json_object_get(json_array_get(procs, i), "interim")));
  json_decref(j);
}

/* A shell's programs one after another (siblings, none waiting for the
 * other) share the file too. */
static void test_siblings_of_one_shell_merge(void **state) {
  (void)state;
  json_t *j = run_two_in_a_shell("siblings.json", "block 1", "block 4", "");
  assert_int_equal(shim_calls(j, "on_workers"), 5);
  assert_int_equal(processes_with(j, "procs_target", 1), 1);
  assert_int_equal(processes_with(j, "procs_target", 4), 1);
  /* the two processes' call sites, by blocked time */
  json_t *sites = json_object_get(j, "call_sites");
  assert_true(json_array_size(sites) >= 2);
  for (size_t i = 1; i < json_array_size(sites); i++)
    assert_true(json_real_value(json_object_get(json_array_get(sites, i - 1),
                                                "blocked_ms")) >=
                json_real_value(
                    json_object_get(json_array_get(sites, i), "blocked_ms")));
  json_decref(j);
}

/* ---- blockwatch -- CMD: the whole tree, one summary ---------------------- */

static int occurrences(const char *s, const char *what) {
  int n = 0;
  for (const char *at = s; (at = strstr(at, what)); at += strlen(what))
    n++;
  return n;
}

/* Runs the wrapper; under a sanitizer build its /bin/sh, timeout and the
 * rest get the runtime first (SAN_PRELOAD), as in the other wrapper tests. */
static void run_wrapper(char *const argv[], shim_result *r) {
  char *env[] = {shim_fmt("LD_PRELOAD=%s", SAN_PRELOAD), NULL};
  assert_int_equal(shim_run(argv, SAN_PRELOAD[0] ? env : NULL, 0, 60, r), 0);
  assert_false(r->timedout);
}

static void skip_unless_merging(void) {
#ifndef HAVE_BW_MERGE
  fprintf(stderr, "skipped: bw-merge (tools/) is not built\n");
  skip();
#endif
  if (strstr(SAN_PRELOAD, "libtsan")) {
    fprintf(stderr, "skipped under TSan: libtsan in the wrapper's /bin/sh\n");
    skip();
  }
}

/* sh -c -> timeout -> a blocking program, then a forking one: every
 * process's report in one JSON file and one summary at the end. */
static void test_wrapper_merges_the_process_tree(void **state) {
  (void)state;
  skip_unless_merging();
  const char *p = path_of("tree.json");
  unlink(p);
  char *cmd =
      shim_fmt("timeout 20 %s block 3; %s fork", PROCS_TARGET, PROCS_TARGET);
  char *argv[] = {BLOCKWATCH_CMD,
                  "-o",
                  (char *)p,
                  "--worker-name",
                  "procs-*",
                  "--",
                  "/bin/sh",
                  "-c",
                  cmd,
                  NULL};
  shim_result r;
  run_wrapper(argv, &r);
  if (r.status != 0)
    fail_msg("status %d, stderr:\n%s", r.status, r.err);
  assert_int_equal(occurrences(r.err, "SUMMARY: blockwatch: 8 blocking calls"),
                   1);
  assert_int_equal(occurrences(r.err, "blockwatch: ==== 5 processes"), 1);
  /* the summary is the last thing printed */
  const char *summary = strstr(r.err, "SUMMARY: blockwatch:");
  assert_null(strchr(strchr(summary, '\n') + 1, '\n'));
  json_t *j = shim_load_json(p);
  assert_non_null(j);
  assert_int_equal(shim_calls(j, "on_workers"), 8);
  assert_int_equal(json_array_size(json_object_get(j, "processes")), 5);
  assert_int_equal(processes_with(j, "procs_target", 3), 2);
  assert_int_equal(processes_with(j, "procs_target", 2), 1);
  assert_int_equal(processes_with(j, "timeout", 0), 1);
  assert_int_equal(processes_with(j, "sh", 0), 1);
  assert_int_equal(shim_site_count(j, "usleep"), 8);
  assert_int_equal(json_array_size(json_object_get(j, "pools")), 3);
  assert_true(
      json_is_object(json_object_get(json_object_get(j, "summary"), "worst")));
  json_decref(j);
  shim_result_free(&r);
}

/* A process that changes directory still gets its report collected,
 * with TMPDIR relative. */
static void test_wrapper_collects_after_a_chdir(void **state) {
  (void)state;
  skip_unless_merging();
  char *cmd = shim_fmt("cd / && %s block 2", PROCS_TARGET);
  char *argv[] = {BLOCKWATCH_CMD,
                  "--worker-name",
                  "procs-*",
                  "--",
                  "/bin/sh",
                  "-c",
                  cmd,
                  NULL};
  char *env[] = {"TMPDIR=.", shim_fmt("LD_PRELOAD=%s", SAN_PRELOAD), NULL};
  if (!SAN_PRELOAD[0])
    env[1] = NULL;
  shim_result r;
  assert_int_equal(shim_run(argv, env, 0, 60, &r), 0);
  assert_int_equal(r.status, 0);
  assert_non_null(strstr(r.err, "SUMMARY: blockwatch: 2 blocking calls "));
  shim_result_free(&r);
}

/* A child with its stdout and stderr on a file finds there exactly what
 * it wrote (libuv's spawn_stdout_and_stderr_to_file); the wrapper prints
 * nothing before the program's own output ends. */
static void test_wrapper_writes_nothing_into_the_program(void **state) {
  (void)state;
  skip_unless_merging();
  const char *f = path_of("to_file.out");
  char *argv[] = {BLOCKWATCH_CMD, "--worker-name", "procs-*", "--",
                  PROCS_TARGET,   "to_file",       (char *)f, NULL};
  shim_result r;
  run_wrapper(argv, &r);
  if (r.status != 0)
    fail_msg("status %d, stdout:\n%s\nstderr:\n%s", r.status, r.out, r.err);
  assert_string_equal(r.out, "");
  /* stderr: the wrapper's summary only, starting at its first byte */
  assert_int_equal(strncmp(r.err, "blockwatch: ==== report for pid ", 32), 0);
  assert_int_equal(occurrences(r.err, "SUMMARY: blockwatch: 1 blocking call "),
                   1);
  shim_result_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_timeout_keeps_the_programs_report),
      cmocka_unit_test(test_interim_report_merges_and_is_replaced),
      cmocka_unit_test(test_siblings_of_one_shell_merge),
      cmocka_unit_test(test_wrapper_merges_the_process_tree),
      cmocka_unit_test(test_wrapper_collects_after_a_chdir),
      cmocka_unit_test(test_wrapper_writes_nothing_into_the_program),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
