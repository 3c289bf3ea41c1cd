/* test_sites_memo - the shim's memo of call chains on a worker named by
 * options files each call where a full unwind would: two jobs that call
 * one helper by turns stay two sites, so does a helper whose alloca hides
 * the other job's stale return address at the old depth, and so do they
 * under a signal handler that makes counted calls of its own.
 *
 * Invariants: sites_memo_target is the only program run (ROUNDS rounds,
 * one sched_yield per job per round); every check reads its JSON report.
 */
#include "shim_run.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

enum { ROUNDS = 3000 };

/* Runs a build of the target in mode under the shim; *same_sp: its calls
 * whose helper ran at job_c's stack pointer (what the alloca mode builds),
 * *handled: the signals its handler took. */
static json_t *run_target(const char *target, const char *mode,
                          long long *same_sp, long long *handled) {
  char path[512];
  const char *report =
      shim_tmpfile(path, sizeof path, shim_fmt("sites-memo-%s.json", mode));
  char *argv[] = {(char *)target, (char *)mode, NULL};
  char *env[] = {shim_fmt("BLOCKWATCH_OPTIONS=report=json:report_path=%s:"
                          "frames=8:worker_name=hp-*",
                          report),
                 NULL};
  shim_result res;
  assert_int_equal(shim_run(argv, env, 1, 60, &res), 0);
  int ok = res.exited && res.status == 0;
  if (!ok)
    fprintf(stderr, "sites_memo_target %s: %d\n%s", mode, res.status, res.err);
  assert_int_equal(shim_out_value(res.out, "rounds"), ROUNDS);
  *same_sp = shim_out_value(res.out, "same_sp");
  *handled = shim_out_value(res.out, "signals");
  shim_result_free(&res);
  assert_true(ok);
  json_t *j = shim_load_json(report);
  assert_non_null(j);
  return j;
}

static const char *frame_fn(json_t *frames, size_t i) {
  const char *s =
      json_string_value(json_object_get(json_array_get(frames, i), "function"));
  return s ? s : "";
}

/* The sched_yield sites: exactly two of the jobs (the frame above the
 * helper), ROUNDS calls each; besides them only the signal handler's
 * (job_s), at most `handled` calls in all (a signal that lands inside a
 * wrapper passes its call through uncounted). */
static void expect_two_sites(json_t *j, const char *helper, const char *a,
                             const char *b, long long handled) {
  int seen_a = 0, seen_b = 0;
  long long in_handler = 0;
  size_t i;
  json_t *s;
  json_array_foreach(json_object_get(j, "call_sites"), i, s) {
    const char *fn = json_string_value(json_object_get(s, "function"));
    if (fn == NULL || strcmp(fn, "sched_yield") != 0)
      continue;
    json_t *frames = json_object_get(s, "frames");
    long long count = json_integer_value(json_object_get(s, "count"));
    assert_string_equal(frame_fn(frames, 0), helper);
    const char *job = frame_fn(frames, 1);
    if (strcmp(job, "job_s") == 0) {
      assert_string_equal(frame_fn(frames, 2), "on_signal");
      in_handler += count;
      continue;
    }
    if (strcmp(job, a) == 0)
      seen_a++;
    else if (strcmp(job, b) == 0)
      seen_b++;
    else
      fail_msg("a sched_yield site under %s", job);
    assert_int_equal(count, ROUNDS);
  }
  assert_int_equal(seen_a, 1);
  assert_int_equal(seen_b, 1);
  assert_true(in_handler <= (handled > 0 ? handled : 0));
}

static void expect_turns(const char *target) {
  long long same_sp, handled;
  json_t *j = run_target(target, "turns", &same_sp, &handled);
  expect_two_sites(j, "yield_once", "job_a", "job_b", 0);
  json_decref(j);
}

static void expect_alloca(const char *target) {
  long long same_sp, handled;
  json_t *j = run_target(target, "alloca", &same_sp, &handled);
  assert_int_equal(same_sp, ROUNDS); /* every job_d call hid job_c's slot */
  expect_two_sites(j, "yield_alloca", "job_c", "job_d", 0);
  json_decref(j);
}

static void test_jobs_calling_a_helper_by_turns_are_two_sites(void **state) {
  (void)state;
  expect_turns(SITES_MEMO_TARGET);
}

static void test_a_helper_with_alloca_files_each_job_apart(void **state) {
  (void)state;
  expect_alloca(SITES_MEMO_TARGET);
}

/* A handler's counted calls, landing anywhere in the worker's, go to the
 * handler's own site and leave the jobs' counts exact. */
static void test_a_signal_handler_between_the_calls(void **state) {
  (void)state;
  long long same_sp, handled;
  json_t *j = run_target(SITES_MEMO_TARGET, "signals", &same_sp, &handled);
  expect_two_sites(j, "yield_once", "job_a", "job_b", handled);
  json_decref(j);
}

/* -O2 -fomit-frame-pointer: rbp is any register in the jobs, the frame
 * pointer only in the alloca helper. */
static void test_the_same_without_frame_pointers(void **state) {
  (void)state;
  expect_turns(SITES_MEMO_TARGET_O2);
  expect_alloca(SITES_MEMO_TARGET_O2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_jobs_calling_a_helper_by_turns_are_two_sites),
      cmocka_unit_test(test_a_helper_with_alloca_files_each_job_apart),
      cmocka_unit_test(test_a_signal_handler_between_the_calls),
      cmocka_unit_test(test_the_same_without_frame_pointers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
