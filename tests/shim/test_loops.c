/* test_loops.c - loop threads and GLib's own waits: a libuv, a GLib and a
 * libevent loop whose timer callback sleeps are counted on their loop (the
 * loop's own wait is not) and traced inside the callback's stretch, a loop
 * that only waits passes every fail mode, and GLib's futex-based waits on a
 * worker are counted under their names.
 *
 * Invariants: loops_target runs under LD_PRELOAD with Debian's shared
 * libuv, GLib and libevent; every run writes its JSON report into the
 * scratch directory, read back with jansson.
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

/* report.loops[], which must hold exactly one entry: that entry. */
static json_t *only_loop(json_t *report) {
  json_t *loops = json_object_get(report, "loops");
  assert_true(json_is_array(loops));
  assert_int_equal(json_array_size(loops), 1);
  return json_array_get(loops, 0);
}

static double num(json_t *obj, const char *key) {
  json_t *v = json_object_get(obj, key);
  assert_true(json_is_number(v));
  return json_number_value(v);
}

/* Calls of fn counted on other threads (0 when none). */
static long long other_calls(json_t *report, const char *fn) {
  json_t *by = json_object_get(json_object_get(report, "blocking_calls"),
                               "on_other_threads_by_function");
  size_t i;
  json_t *e;
  json_array_foreach(by, i, e) {
    if (strcmp(json_string_value(json_object_get(e, "function")), fn) == 0)
      return json_integer_value(json_object_get(e, "count"));
  }
  return 0;
}

/* A loop of `kind` whose timer callback slept 100 ms three times: three
 * calls on the loop, each its longest callback's worth, and the loop's own
 * waits (`waits_in`, a poll-family function) counted nowhere. */
static void check_blocking_loop(const char *mode, const char *kind,
                                const char *waits_in) {
  const char *args[] = {mode, "block", NULL};
  char json[600];
  shim_result r;
  run_loops(args, "", json, &r);
  assert_true(r.exited);
  assert_int_equal(r.status, 0);
  assert_int_equal(shim_out_value(r.out, "callbacks"), 3);
  assert_non_null(
      strstr(r.err, shim_fmt("blockwatch: loop %s on the main thread", kind)));
  json_t *j = shim_load_json(json);
  assert_non_null(j);
  json_t *loop = only_loop(j);
  assert_string_equal(json_string_value(json_object_get(loop, "kind")), kind);
  assert_int_equal((long long)num(loop, "thread"), (long long)num(j, "pid"));
  assert_int_equal((long long)num(loop, "blocking_calls"), 3);
  double blocked = num(loop, "blocked_ms");
  assert_true(blocked >= 295.0 && blocked < 600.0);
  double longest = num(loop, "longest_callback_ms");
  if (longest < 95.0 || longest > 250.0)
    fail_msg("%s: longest callback %.3f ms, not about 100", kind, longest);
  assert_int_equal(shim_calls(j, "on_workers"), 3);
  assert_int_equal(shim_site_count(j, "usleep"), 3);
  assert_int_equal(shim_site_count(j, waits_in), 0);
  assert_int_equal(other_calls(j, waits_in), 0);
  json_decref(j);
  shim_result_free(&r);
}

static void test_libuv_timer_sleeps_count_on_its_loop(void **state) {
  (void)state;
  check_blocking_loop("uv", "libuv", "epoll_pwait");
}

static void test_glib_timeout_sleeps_count_on_its_loop(void **state) {
  (void)state;
  check_blocking_loop("glib", "glib", "poll");
}

static void test_libevent_timer_sleeps_count_on_its_loop(void **state) {
  (void)state;
  check_blocking_loop("event", "libevent", "epoll_wait");
}

/* With trace=FILE each callback stretch of 1 ms or more is a "libuv
 * callbacks" slice on the loop's thread, and each blocking call lies
 * inside one. */
static void test_trace_has_the_callback_stretches(void **state) {
  (void)state;
  char trace[600], options[700], json[600];
  shim_tmpfile(trace, sizeof trace, "loops-trace.json");
  unlink(trace);
  snprintf(options, sizeof options, "trace=%s", trace);
  const char *args[] = {"uv", "block", NULL};
  shim_result r;
  run_loops(args, options, json, &r);
  assert_true(r.exited);
  assert_int_equal(r.status, 0);
  json_t *root = shim_load_json(trace);
  assert_non_null(root);
  json_t *events = json_object_get(root, "traceEvents");
  double starts[8], ends[8];
  int stretches = 0, sleeps = 0, inside = 0;
  size_t i;
  json_t *e;
  json_array_foreach(events, i, e) {
    const char *cat = json_string_value(json_object_get(e, "cat"));
    if (cat && strcmp(cat, "loop") == 0 && stretches < 8) {
      assert_string_equal(json_string_value(json_object_get(e, "name")),
                          "libuv callbacks");
      starts[stretches] = num(e, "ts");
      ends[stretches] = starts[stretches] + num(e, "dur");
      stretches++;
    }
  }
  json_array_foreach(events, i, e) {
    const char *cat = json_string_value(json_object_get(e, "cat"));
    if (!cat || strcmp(cat, "blocking") != 0)
      continue;
    sleeps++;
    double ts = num(e, "ts"), end = ts + num(e, "dur");
    for (int k = 0; k < stretches; k++)
      if (ts >= starts[k] && end <= ends[k] + 0.01) {
        inside++;
        break;
      }
  }
  assert_int_equal(sleeps, 3);
  assert_int_equal(inside, 3);
  assert_true(stretches >= 3 && stretches < 8);
  json_decref(root);
  shim_result_free(&r);
}

/* A callback that blocks fails fail=1 as a worker's call would. */
static void test_blocking_callback_fails_fail_now(void **state) {
  (void)state;
  const char *args[] = {"uv", "block", NULL};
  char json[600];
  shim_result r;
  run_loops(args, "fail=1", json, &r);
  assert_true(r.exited);
  assert_int_equal(r.status, 66);
  shim_result_free(&r);
}

/* Loops whose callbacks never block: every fail mode exits 0, nothing is
 * counted, and each loop still has its record. */
static void test_loops_that_only_wait_pass_the_fail_modes(void **state) {
  (void)state;
  const char *modes[] = {"uv", "glib", "event"};
  const char *fails[] = {"fail=1", "fail=report"};
  for (size_t m = 0; m < 3; m++) {
    for (size_t f = 0; f < 2; f++) {
      const char *args[] = {modes[m], "idle", NULL};
      char json[600];
      shim_result r;
      run_loops(args, fails[f], json, &r);
      if (!r.exited || r.status != 0)
        fail_msg("%s idle under %s: status %d\n%s", modes[m], fails[f],
                 r.status, r.err);
      json_t *j = shim_load_json(json);
      assert_non_null(j);
      assert_int_equal(shim_calls(j, "on_workers"), 0);
      assert_int_equal((long long)num(only_loop(j), "blocking_calls"), 0);
      json_decref(j);
      shim_result_free(&r);
    }
  }
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
      cmocka_unit_test(test_libuv_timer_sleeps_count_on_its_loop),
      cmocka_unit_test(test_glib_timeout_sleeps_count_on_its_loop),
      cmocka_unit_test(test_libevent_timer_sleeps_count_on_its_loop),
      cmocka_unit_test(test_trace_has_the_callback_stretches),
      cmocka_unit_test(test_blocking_callback_fails_fail_now),
      cmocka_unit_test(test_loops_that_only_wait_pass_the_fail_modes),
      cmocka_unit_test(test_glib_waits_on_a_worker_are_counted_by_name),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
