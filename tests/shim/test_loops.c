/* test_loops.c - GLib's own waits: GLib waits on futexes, never in
 * pthread's functions, and its waits on a worker are counted under their
 * names.
 *
 * Invariants: loops_target runs under LD_PRELOAD with Debian's shared
 * GLib; every run writes its JSON report into the scratch directory, read
 * back with jansson.
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

/* Runs loops_target with args (argv[1..], NULL-terminated) and
 * BLOCKWATCH_OPTIONS: options plus a JSON report, whose path goes to
 * json (600 bytes). */
static void run_loops(const char *const args[], const char *options, char *json,
                      shim_result *r) {
  shim_tmpfile(json, 600, "loops.json");
  unlink(json);
  char env_var[1400];
  snprintf(env_var, sizeof env_var,
           "BLOCKWATCH_OPTIONS=report=both:report_path=%s:%s", json, options);
  char *argv[4] = {LOOPS_TARGET, NULL, NULL, NULL};
  for (int i = 0; args[i] && i < 2; i++)
    argv[i + 1] = (char *)args[i];
  char *env[] = {env_var, NULL};
  assert_int_equal(shim_run(argv, env, 1, 60, r), 0);
  assert_false(r->timedout);
}

/* GLib's g_mutex_lock, g_cond_wait_until, g_async_queue_timeout_pop and
 * g_thread_join wait on futexes, never in pthread's functions: each is
 * counted once, on the worker, under its own name; the lock only with
 * lock=1 (the lock category is off by default, as for pthread's), and only
 * the contended one (the waiter's own mutex is taken at once). */
static void check_glib_waits(const char *options, int lock) {
  const char *args[] = {"glib-waits", NULL};
  char json[600];
  shim_result r;
  run_loops(args, options, json, &r);
  assert_true(r.exited);
  assert_int_equal(r.status, 0);
  assert_int_equal(shim_out_value(r.out, "waits"), 4);
  json_t *j = shim_load_json(json);
  assert_non_null(j);
  assert_int_equal(shim_calls(j, "on_workers"), 3 + lock);
  assert_int_equal(shim_site_count(j, "g_mutex_lock"), lock);
  assert_int_equal(shim_site_count(j, "g_cond_wait_until"), 1);
  assert_int_equal(shim_site_count(j, "g_async_queue_timeout_pop"), 1);
  assert_int_equal(shim_site_count(j, "g_thread_join"), 1);
  json_decref(j);
  shim_result_free(&r);
}

static void test_glib_waits_on_a_worker_are_counted_by_name(void **state) {
  (void)state;
  check_glib_waits("worker_name=bwworker:rules=" GLIB_RULES, 0);
  check_glib_waits("worker_name=bwworker:lock=1:rules=" GLIB_RULES, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_glib_waits_on_a_worker_are_counted_by_name),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
