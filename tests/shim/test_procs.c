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
static json_t *run_shared(char *const argv[], const char *p) {
  char *env[] = {shim_fmt("BLOCKWATCH_OPTIONS=report=json:report_path=%s:"
                          "worker_name=procs-*",
                          p),
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
  json_t *j = run_shared(argv, p);
  assert_int_equal(shim_calls(j, "on_workers"), 3);
  assert_int_equal(json_array_size(json_object_get(j, "processes")), 2);
  assert_int_equal(processes_with(j, "procs_target", 3), 1);
  assert_int_equal(processes_with(j, "timeout", 0), 1);
  assert_int_equal(shim_site_count(j, "usleep"), 3);
  json_decref(j);

  /* The next run of the same command replaces the file, as before. */
  j = run_shared(argv, p);
  assert_int_equal(shim_calls(j, "on_workers"), 3);
  assert_int_equal(json_array_size(json_object_get(j, "processes")), 2);
  json_decref(j);
}

/* A shell's programs one after another (siblings, none waiting for the
 * other) share the file too. */
static void test_siblings_of_one_shell_merge(void **state) {
  (void)state;
  const char *p = path_of("siblings.json");
  unlink(p);
  char *cmd = shim_fmt("%s block 1; %s block 4", PROCS_TARGET, PROCS_TARGET);
  char *argv[] = {"/bin/sh", "-c", cmd, NULL};
  json_t *j = run_shared(argv, p);
  assert_int_equal(shim_calls(j, "on_workers"), 5);
  assert_int_equal(processes_with(j, "procs_target", 1), 1);
  assert_int_equal(processes_with(j, "procs_target", 4), 1);
  /* call sites by blocked time, the 4-call one first */
  json_t *sites = json_object_get(j, "call_sites");
  assert_true(json_array_size(sites) >= 2);
  assert_int_equal(
      json_integer_value(json_object_get(json_array_get(sites, 0), "count")),
      4);
  json_decref(j);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_timeout_keeps_the_programs_report),
      cmocka_unit_test(test_siblings_of_one_shell_merge),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
