/* test_pool_threads - a thread a foreign pool library makes for its pool
 * is that pool's from its first instruction: nothing it does outside an
 * item counts anywhere, nor do the library's own waits while it starts
 * the pool, while a thread the program makes with the same library's
 * call is the program's and its blocking call counts.
 *
 * Invariants: every program runs with no options beyond the report's own;
 * the clean programs block nowhere but in the libraries' own code.
 */
#include "shim_run.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#ifndef UV_THREADS_TARGET
#define UV_THREADS_TARGET ""
#endif
#ifndef GLIB_THREADS_TARGET
#define GLIB_THREADS_TARGET ""
#endif

static void skip_unless_built(const char *target, const char *what) {
  if (!target[0]) {
    fprintf(stderr, "skipped: built without %s (BLOCKWATCH_FOREIGN_SAMPLES)\n",
            what);
    skip();
  }
}

/* Runs argv under the shim; the JSON report (the test frees it). */
static json_t *run_report(char *const argv[], shim_result *r) {
  char path[512];
  shim_tmpfile(path, sizeof path, "pool_threads.json");
  unlink(path);
  char *env[] = {
      shim_fmt("BLOCKWATCH_OPTIONS=report=json:report_path=%s", path), NULL};
  assert_int_equal(shim_run(argv, env, 1, 120, r), 0);
  assert_false(r->timedout);
  assert_int_equal(r->status, 0);
  json_t *j = shim_load_json(path);
  assert_non_null(j);
  return j;
}

/* The count of `fn` in on_other_threads_by_function (0: not there). */
static long long other_calls_of(json_t *j, const char *fn) {
  json_t *rows = json_object_get(json_object_get(j, "blocking_calls"),
                                 "on_other_threads_by_function");
  json_t *row;
  size_t i;
  json_array_foreach(rows, i, row) {
    if (strcmp(json_string_value(json_object_get(row, "function")), fn) == 0)
      return json_integer_value(json_object_get(row, "count"));
  }
  return 0;
}

/* No blocking call anywhere: the report's counts and its sites. */
static void check_clean(char *const argv[]) {
  shim_result r;
  json_t *j = run_report(argv, &r);
  if (shim_calls(j, "on_other_threads") != 0 ||
      shim_calls(j, "on_workers") != 0 || shim_site_count(j, NULL) != 0)
    fail_msg("%s %s: %lld on other threads, %lld on workers, %lld sites",
             argv[0], argv[1], shim_calls(j, "on_other_threads"),
             shim_calls(j, "on_workers"), shim_site_count(j, NULL));
  json_decref(j);
  shim_result_free(&r);
}

/* ---- libuv -------------------------------------------------------------- */

static void test_libuv_clean_work_counts_nothing(void **state) {
  (void)state;
  skip_unless_built(UV_THREADS_TARGET, "libuv");
  char *argv[] = {UV_THREADS_TARGET, "work", NULL};
  check_clean(argv);
}

static void test_libuv_fs_requests_alone_count_nothing(void **state) {
  (void)state;
  skip_unless_built(UV_THREADS_TARGET, "libuv");
  char *argv[] = {UV_THREADS_TARGET, "fs", (char *)shim_tmpdir(), NULL};
  check_clean(argv);
}

static void test_libuv_getaddrinfo_alone_counts_nothing(void **state) {
  (void)state;
  skip_unless_built(UV_THREADS_TARGET, "libuv");
  char *argv[] = {UV_THREADS_TARGET, "dns", NULL};
  check_clean(argv);
}

static void test_libuv_programs_own_thread_still_counts(void **state) {
  (void)state;
  skip_unless_built(UV_THREADS_TARGET, "libuv");
  char *argv[] = {UV_THREADS_TARGET, "own", NULL};
  shim_result r;
  json_t *j = run_report(argv, &r);
  assert_int_equal(other_calls_of(j, "usleep"), 1);
  assert_int_equal(other_calls_of(j, "pthread_cond_wait"), 0);
  assert_int_equal(other_calls_of(j, "sem_wait"), 0);
  assert_int_equal(shim_calls(j, "on_workers"), 0);
  json_decref(j);
  shim_result_free(&r);
}

/* ---- GLib --------------------------------------------------------------- */

static void test_glib_clean_pool_counts_nothing(void **state) {
  (void)state;
  skip_unless_built(GLIB_THREADS_TARGET, "GLib");
  char *argv[] = {GLIB_THREADS_TARGET, "pool", NULL};
  check_clean(argv);
}

/* GIO's callbacks pass through GLib's worker thread ("gmain"), whose
 * context's poll is GLib's own. */
static void test_gio_clean_tasks_count_nothing(void **state) {
  (void)state;
  skip_unless_built(GLIB_THREADS_TARGET, "GLib");
  char *argv[] = {GLIB_THREADS_TARGET, "task", NULL};
  check_clean(argv);
}

static void test_glib_programs_own_thread_still_counts(void **state) {
  (void)state;
  skip_unless_built(GLIB_THREADS_TARGET, "GLib");
  char *argv[] = {GLIB_THREADS_TARGET, "own", NULL};
  shim_result r;
  json_t *j = run_report(argv, &r);
  assert_int_equal(other_calls_of(j, "usleep"), 1);
  assert_int_equal(shim_calls(j, "on_workers"), 0);
  json_decref(j);
  shim_result_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_libuv_clean_work_counts_nothing),
      cmocka_unit_test(test_libuv_fs_requests_alone_count_nothing),
      cmocka_unit_test(test_libuv_getaddrinfo_alone_counts_nothing),
      cmocka_unit_test(test_libuv_programs_own_thread_still_counts),
      cmocka_unit_test(test_glib_clean_pool_counts_nothing),
      cmocka_unit_test(test_gio_clean_tasks_count_nothing),
      cmocka_unit_test(test_glib_programs_own_thread_still_counts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
