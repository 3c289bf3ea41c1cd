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
#ifndef UV_POOL_TARGET
#define UV_POOL_TARGET ""
#endif
#ifndef GLIB_THREADS_TARGET
#define GLIB_THREADS_TARGET ""
#endif

/* Runs target (the program for `lib`) in `mode` under the shim; the JSON
 * report (the caller frees it). Skips when the program was not built
 * (BLOCKWATCH_FOREIGN_SAMPLES=OFF). */
static json_t *run_mode(const char *target, const char *lib, const char *mode,
                        shim_result *r) {
  if (!target[0]) {
    fprintf(stderr, "skipped: no %s program (BLOCKWATCH_FOREIGN_SAMPLES)\n",
            lib);
    skip();
  }
  char path[512];
  shim_tmpfile(path, sizeof path, "pool_threads.json");
  unlink(path);
  char *argv[] = {(char *)target, (char *)mode, (char *)shim_tmpdir(), NULL};
  /* GLib's futexes are no synchronisation to TSan: what GIO's threads
   * hand each other shows as GLib's own races, which are not the shim's
   * and would fail the program (TSan's exit status 66). */
  char *env[] = {
      shim_fmt("BLOCKWATCH_OPTIONS=report=json:report_path=%s", path),
      "TSAN_OPTIONS=report_bugs=0", NULL};
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
static void check_clean(const char *target, const char *lib, const char *mode) {
  shim_result r;
  json_t *j = run_mode(target, lib, mode, &r);
  if (shim_calls(j, "on_other_threads") != 0 ||
      shim_calls(j, "on_workers") != 0 || shim_site_count(j, NULL) != 0)
    fail_msg("%s %s: %lld on other threads, %lld on workers, %lld sites", lib,
             mode, shim_calls(j, "on_other_threads"),
             shim_calls(j, "on_workers"), shim_site_count(j, NULL));
  json_decref(j);
  shim_result_free(&r);
}

/* The program's own thread's one usleep counts, on no worker; nothing of
 * the pool's (its idle waits, libuv's start-up sem_wait) does. */
static void check_own_thread_counts(const char *target, const char *lib) {
  shim_result r;
  json_t *j = run_mode(target, lib, "own", &r);
  assert_int_equal(other_calls_of(j, "usleep"), 1);
  assert_int_equal(other_calls_of(j, "pthread_cond_wait"), 0);
  assert_int_equal(other_calls_of(j, "sem_wait"), 0);
  assert_int_equal(other_calls_of(j, "poll"), 0);
  assert_int_equal(shim_calls(j, "on_workers"), 0);
  json_decref(j);
  shim_result_free(&r);
}

static void test_libuv_clean_work_counts_nothing(void **state) {
  (void)state;
  check_clean(UV_POOL_TARGET, "libuv", "clean");
}

static void test_libuv_fs_requests_alone_count_nothing(void **state) {
  (void)state;
  check_clean(UV_THREADS_TARGET, "libuv", "fs");
}

static void test_libuv_getaddrinfo_alone_counts_nothing(void **state) {
  (void)state;
  check_clean(UV_THREADS_TARGET, "libuv", "dns");
}

static void test_libuv_programs_own_thread_still_counts(void **state) {
  (void)state;
  check_own_thread_counts(UV_THREADS_TARGET, "libuv");
}

static void test_glib_clean_pool_counts_nothing(void **state) {
  (void)state;
  check_clean(GLIB_THREADS_TARGET, "GLib", "pool");
}

/* GIO's callbacks pass through GLib's worker thread ("gmain"), whose
 * context's poll is GLib's own. */
static void test_gio_clean_tasks_count_nothing(void **state) {
  (void)state;
  check_clean(GLIB_THREADS_TARGET, "GLib", "task");
}

static void test_glib_programs_own_thread_still_counts(void **state) {
  (void)state;
  check_own_thread_counts(GLIB_THREADS_TARGET, "GLib");
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
