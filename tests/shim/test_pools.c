/* test_pools - the pools the shim recognises with no options: libuv's,
 * GLib's (and GIO's GTask pool) and C-Thread-Pool's, each in the report's
 * pools[] with its kind, its real size, exact blocking call counts and a
 * probe's starvation delay that matches the queue wait the program itself
 * measured; and the kind of the pools it knew before (the runtime's, the
 * ones options name).
 *
 * Invariants: every program runs with no options beyond the report's own
 * (report, report_path, fail); a foreign pool's own waits never count.
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

static void skip_under_tsan(const char *why) {
  if (strstr(SAN_PRELOAD, "libtsan")) {
    fprintf(stderr, "skipped under TSan: %s\n", why);
    skip();
  }
}

/* Built without the foreign libraries (BLOCKWATCH_FOREIGN_SAMPLES=OFF),
 * their programs are not there: those tests skip, saying so. */
#ifndef UV_POOL_TARGET
#define UV_POOL_TARGET ""
#endif
#ifndef GLIB_STARVE_TARGET
#define GLIB_STARVE_TARGET ""
#endif
#ifndef THPOOL_TARGET
#define THPOOL_TARGET ""
#endif

static void skip_unless_built(const char *target, const char *what) {
  if (!target[0]) {
    fprintf(stderr, "skipped: built without %s (BLOCKWATCH_FOREIGN_SAMPLES)\n",
            what);
    skip();
  }
}

/* Runs argv under the shim with a JSON report at a fresh path and returns
 * the report (NULL when none was written). */
static json_t *run_report(char *const argv[], const char *extra,
                          shim_result *r) {
  char path[512];
  shim_tmpfile(path, sizeof path, "pools.json");
  unlink(path);
  char *env[] = {shim_fmt("BLOCKWATCH_OPTIONS=report=json:report_path=%s%s%s",
                          path, extra ? ":" : "", extra ? extra : ""),
                 NULL};
  assert_int_equal(shim_run(argv, env, 1, 120, r), 0);
  assert_false(r->timedout);
  return shim_load_json(path);
}

static long long int_of(json_t *o, const char *key) {
  json_t *v = json_object_get(o, key);
  assert_true(json_is_integer(v));
  return json_integer_value(v);
}

static double ms_of(json_t *o, const char *key) {
  json_t *v = json_object_get(o, key);
  assert_true(json_is_number(v));
  return json_number_value(v);
}

/* The only pool of kind `kind` in the report. */
static json_t *pool_of_kind(json_t *report, const char *kind) {
  json_t *pools = json_object_get(report, "pools"), *found = NULL, *p;
  size_t i;
  json_array_foreach(pools, i, p) {
    json_t *k = json_object_get(p, "kind");
    if (json_is_string(k) && strcmp(json_string_value(k), kind) == 0) {
      if (found)
        fail_msg("two pools of kind %s", kind);
      found = p;
    }
  }
  if (!found)
    fail_msg("no pool of kind %s in the report", kind);
  return found;
}

/* k workers blocked by `blockers` items, then a probe: the counts exact
 * and the probe's starvation within 10% (or 20 ms) of its measured wait. */
static void check_starved_pool(json_t *j, const shim_result *r,
                               const char *kind, long long workers,
                               long long blockers) {
  assert_int_equal(shim_calls(j, "on_workers"), blockers);
  json_t *p = pool_of_kind(j, kind);
  assert_int_equal(int_of(p, "workers"), workers);
  assert_int_equal(int_of(p, "peak_blocked_workers"), workers);
  assert_int_equal(int_of(p, "items"), blockers + 1);
  double waited = (double)shim_out_value(r->out, "probe_wait_us") / 1000.0;
  double starved = ms_of(json_object_get(p, "starvation_delay_ms"), "max");
  double slack = waited / 10 > 20 ? waited / 10 : 20;
  if (starved < waited - slack || starved > waited + slack)
    fail_msg("%s: starvation delay %.3f ms, the probe waited %.3f ms", kind,
             starved, waited);
}

/* ---- the kinds of the pools known before -------------------------------- */

static void test_runtime_pool_and_option_pool_have_their_kind(void **state) {
  (void)state;
  shim_result r;
  char *rt[] = {RUNTIME_TARGET, "many", NULL};
  json_t *j = run_report(rt, NULL, &r);
  assert_non_null(j);
  pool_of_kind(j, "blockwatch");
  json_decref(j);
  shim_result_free(&r);
  char *opt[] = {SHIM_TARGET, "counts", NULL};
  j = run_report(opt, "worker_name=work-?", &r);
  assert_non_null(j);
  pool_of_kind(j, "threads");
  json_decref(j);
  shim_result_free(&r);
}

/* ---- libuv -------------------------------------------------------------- */

static void test_libuv_starved_probe_with_no_options(void **state) {
  (void)state;
  skip_unless_built(UV_POOL_TARGET, "libuv");
  char *argv[] = {UV_POOL_TARGET, "starve", NULL};
  shim_result r;
  json_t *j = run_report(argv, NULL, &r);
  assert_non_null(j);
  assert_int_equal(r.status, 0);
  assert_int_equal(shim_out_value(r.out, "items"), 9);
  assert_null(strstr(r.err, "work_cb changed"));
  check_starved_pool(j, &r, "libuv", 4, 8);
  /* sleepy tail-calls usleep: no frame of the program's is on the stack,
   * and the site is named after the work callback libuv ran. */
  json_t *site = json_array_get(json_object_get(j, "call_sites"), 0);
  json_t *first = json_array_get(json_object_get(site, "frames"), 0);
  assert_string_equal(json_string_value(json_object_get(first, "function")),
                      "sleepy");
  /* uv_run on the main thread: libuv's own yields there (uv__async_spin)
   * are the loop's, not a callback's. */
  json_t *loop = json_array_get(json_object_get(j, "loops"), 0);
  assert_int_equal(int_of(loop, "blocking_calls"), 0);
  json_decref(j);
  shim_result_free(&r);
}

static void test_libuv_pool_size_is_uv_threadpool_size(void **state) {
  (void)state;
  skip_unless_built(UV_POOL_TARGET, "libuv");
  char *argv[] = {"/usr/bin/env", "UV_THREADPOOL_SIZE=2", UV_POOL_TARGET,
                  "starve", NULL};
  shim_result r;
  json_t *j = run_report(argv, NULL, &r);
  assert_non_null(j);
  assert_int_equal(r.status, 0);
  check_starved_pool(j, &r, "libuv", 2, 8);
  json_decref(j);
  shim_result_free(&r);
}

static void test_libuv_parking_fails_no_clean_program(void **state) {
  (void)state;
  skip_unless_built(UV_POOL_TARGET, "libuv");
  char *argv[] = {UV_POOL_TARGET, "clean", NULL};
  shim_result r;
  json_t *j = run_report(argv, "fail=report", &r);
  assert_non_null(j);
  assert_int_equal(r.status, 0);
  assert_int_equal(shim_calls(j, "on_workers"), 0);
  json_t *p = pool_of_kind(j, "libuv");
  assert_int_equal(int_of(p, "items"), 32);
  assert_int_equal(int_of(p, "peak_blocked_workers"), 0);
  json_decref(j);
  shim_result_free(&r);
}

/* ---- GLib --------------------------------------------------------------- */

static void test_glib_starved_probe_with_no_options(void **state) {
  (void)state;
  skip_unless_built(GLIB_STARVE_TARGET, "GLib");
  char *argv[] = {GLIB_STARVE_TARGET, "starve", NULL};
  shim_result r;
  json_t *j = run_report(argv, NULL, &r);
  assert_non_null(j);
  assert_int_equal(r.status, 0);
  check_starved_pool(j, &r, "glib", 2, 6);
  json_decref(j);
  shim_result_free(&r);
}

static void test_gio_task_in_thread_runs_on_a_seen_pool(void **state) {
  (void)state;
  skip_unless_built(GLIB_STARVE_TARGET, "GLib");
  char *argv[] = {GLIB_STARVE_TARGET, "task", NULL};
  shim_result r;
  json_t *j = run_report(argv, NULL, &r);
  assert_non_null(j);
  assert_int_equal(r.status, 0);
  assert_int_equal(shim_calls(j, "on_workers"), 3);
  json_t *p = pool_of_kind(j, "glib");
  assert_string_equal(json_string_value(json_object_get(p, "name")),
                      "gio-task");
  assert_int_equal(int_of(p, "items"), 3);
  assert_true(int_of(p, "workers") >= 3);
  json_decref(j);
  shim_result_free(&r);
}

/* ---- C-Thread-Pool ------------------------------------------------------ */

/* Its workers are known by name and its own waits by where they are made;
 * where an item starts is not seen, so neither is the probe's wait. */
static void test_cthreadpool_counts_items_calls_not_its_parking(void **state) {
  (void)state;
  skip_unless_built(THPOOL_TARGET, "C-Thread-Pool");
  skip_under_tsan("thpool.c's volatile flags are data races to TSan");
  char *argv[] = {THPOOL_TARGET, NULL};
  shim_result r;
  json_t *j = run_report(argv, "fail=report", &r);
  assert_non_null(j);
  assert_int_equal(r.status, 66);
  assert_int_equal(shim_out_value(r.out, "items"), 7);
  assert_int_equal(shim_calls(j, "on_workers"), 6);
  assert_int_equal(shim_site_count(j, "usleep"), 6);
  assert_int_equal(shim_site_count(j, NULL), 6);
  json_t *p = pool_of_kind(j, "cthreadpool");
  assert_int_equal(int_of(p, "workers"), 2);
  assert_int_equal(int_of(p, "peak_blocked_workers"), 2);
  /* Its parking (bsem_wait between items) is seen, as the pool's own. */
  assert_true(int_of(p, "idle_waits") >= 1);
  /* 3 rounds of 2 sleeps of 200 ms: every worker blocked for ~600 ms. */
  double all = ms_of(p, "all_blocked_ms");
  if (all < 540 || all > 700)
    fail_msg("all workers blocked for %.3f ms, not ~600", all);
  json_decref(j);
  shim_result_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_runtime_pool_and_option_pool_have_their_kind),
      cmocka_unit_test(test_libuv_starved_probe_with_no_options),
      cmocka_unit_test(test_libuv_pool_size_is_uv_threadpool_size),
      cmocka_unit_test(test_libuv_parking_fails_no_clean_program),
      cmocka_unit_test(test_glib_starved_probe_with_no_options),
      cmocka_unit_test(test_gio_task_in_thread_runs_on_a_seen_pool),
      cmocka_unit_test(test_cthreadpool_counts_items_calls_not_its_parking),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
