/* test_item_fn - item_fn=GLOB on a hand-written pool (itemfn_target.c):
 * a worker named by worker_name counts only the blocking calls made
 * inside a function the globs name; its idle waits are the pool's own.
 *
 * Invariants: the "serial" scenario's items make exactly 9 blocking calls
 * (3 usleep through job_sleep's helper, 3 pthread_cond_timedwait in
 * job_cond, 3 nanosleep in task_nap), one at a time; "meet" makes 2
 * pthread_cond_wait calls in job_meet with both workers inside at once.
 * Each worker parks at least once before its first item, in
 * pthread_cond_wait called from worker().
 */
#include "shim_run.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

enum { ITEM_CALLS = 9, EACH = 3, WORKERS = 2 };

#define POOL "worker_name=mypool-*"

static int occurrences(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
    n++;
  return n;
}

/* Runs target mode under the shim with options; its JSON report, and its
 * stderr in *err when err is not NULL (the caller frees it). */
static json_t *run_target(const char *target, const char *mode,
                          const char *options, char **err) {
  char report[512];
  static int n;
  shim_tmpfile(report, sizeof report, shim_fmt("itemfn-%d.json", n++));
  char *argv[] = {(char *)target, (char *)mode, NULL};
  char *env[] = {
      shim_fmt("BLOCKWATCH_OPTIONS=report=json:report_path=%s:frames=8:%s",
               report, options),
      NULL};
  shim_result res;
  assert_int_equal(shim_run(argv, env, 1, 60, &res), 0);
  if (!res.exited || res.status != 0)
    fail_msg("%s %s: status %d\n%s", target, mode, res.status, res.err);
  assert_int_equal(shim_out_value(res.out, "items"),
                   strcmp(mode, "meet") == 0 ? 2 : ITEM_CALLS);
  if (err) {
    *err = res.err;
    res.err = NULL;
  }
  shim_result_free(&res);
  json_t *j = shim_load_json(report);
  assert_non_null(j);
  return j;
}

/* The option pool (named after the worker_name glob). */
static json_t *pool_of(json_t *j) {
  size_t i;
  json_t *p;
  json_array_foreach(json_object_get(j, "pools"), i, p) {
    if (strcmp(json_string_value(json_object_get(p, "name")), "mypool-*") == 0)
      return p;
  }
  fail_msg("no pool 'mypool-*' in the report");
  return NULL;
}

static long long pool_num(json_t *j, const char *key) {
  json_t *v = json_object_get(pool_of(j), key);
  assert_true(json_is_integer(v));
  return json_integer_value(v);
}

static double all_blocked_ms(json_t *j) {
  json_t *v = json_object_get(pool_of(j), "all_blocked_ms");
  assert_true(json_is_number(v));
  return json_number_value(v);
}

static const char *str(json_t *o, const char *key) {
  const char *s = json_string_value(json_object_get(o, key));
  return s ? s : "";
}

/* The call sites of fn that have a frame in function `in`: their count. */
static long long count_in(json_t *j, const char *fn, const char *in) {
  long long n = 0;
  size_t i, k;
  json_t *s, *f;
  json_array_foreach(json_object_get(j, "call_sites"), i, s) {
    if (strcmp(str(s, "function"), fn) != 0)
      continue;
    json_array_foreach(json_object_get(s, "frames"), k, f) {
      if (strcmp(str(f, "function"), in) == 0) {
        n += json_integer_value(json_object_get(s, "count"));
        break;
      }
    }
  }
  return n;
}

/* The frame of function `in` in fn's call site: inlined or not. */
static int frame_inlined(json_t *j, const char *fn, const char *in) {
  size_t i, k;
  json_t *s, *f;
  json_array_foreach(json_object_get(j, "call_sites"), i, s) {
    if (strcmp(str(s, "function"), fn) != 0)
      continue;
    json_array_foreach(json_object_get(s, "frames"), k, f) {
      if (strcmp(str(f, "function"), in) == 0)
        return json_is_true(json_object_get(f, "inlined"));
    }
  }
  fail_msg("no %s() site with a frame in %s", fn, in);
  return -1;
}

/* Every item's call counted, each at its own site, and nothing else. */
static void expect_items_only(json_t *j) {
  assert_int_equal(shim_calls(j, "on_workers"), ITEM_CALLS);
  assert_int_equal(count_in(j, "usleep", "job_sleep"), EACH);
  assert_int_equal(count_in(j, "pthread_cond_timedwait", "job_cond"), EACH);
  assert_int_equal(count_in(j, "nanosleep", "task_nap"), EACH);
  assert_int_equal(shim_site_count(j, "pthread_cond_wait"), 0);
  /* One item at a time: never two workers blocked, never all. */
  assert_int_equal(pool_num(j, "peak_blocked_workers"), 1);
  assert_true(all_blocked_ms(j) == 0.0);
  /* Each worker parked at least once before its first item. */
  assert_true(pool_num(j, "idle_waits") >= WORKERS);
  /* No call marks an item's start: none is counted as one. */
  assert_int_equal(pool_num(j, "items"), 0);
}

/* Today's behaviour stays without item_fn: the idle waits count. */
static void test_without_item_fn_the_idle_waits_count(void **state) {
  (void)state;
  json_t *j = run_target(ITEMFN_TARGET, "serial", POOL, NULL);
  long long idle = count_in(j, "pthread_cond_wait", "worker");
  assert_true(idle >= WORKERS);
  assert_int_equal(shim_calls(j, "on_workers"), ITEM_CALLS + idle);
  assert_int_equal(pool_num(j, "peak_blocked_workers"), 2);
  assert_true(all_blocked_ms(j) > 0.0);
  assert_int_equal(pool_num(j, "idle_waits"), 0);
  json_decref(j);
}

static void test_item_fn_counts_the_items_calls_only(void **state) {
  (void)state;
  char *err;
  json_t *j = run_target(ITEMFN_TARGET, "serial",
                         POOL ",item_fn=job_*,task_*:verbosity=2", &err);
  expect_items_only(j);
  /* The verdict is cached: each return address is named once, though
   * job_sleep's and job_cond's are met three times each. */
  assert_int_equal(occurrences(err, " in job_sleep: an item function"), 1);
  assert_int_equal(occurrences(err, " in job_cond: an item function"), 1);
  assert_int_equal(occurrences(err, " in worker: not an item function"), 1);
  free(err);
  json_decref(j);
}

/* One glob of two: task_nap's calls are now the pool's own. */
static void test_item_fn_with_one_glob_leaves_the_other_out(void **state) {
  (void)state;
  json_t *j = run_target(ITEMFN_TARGET, "serial", POOL ",item_fn=job_*", NULL);
  assert_int_equal(shim_calls(j, "on_workers"), ITEM_CALLS - EACH);
  assert_int_equal(shim_site_count(j, "nanosleep"), 0);
  assert_int_equal(count_in(j, "usleep", "job_sleep"), EACH);
  assert_true(pool_num(j, "idle_waits") >= WORKERS + EACH);
  json_decref(j);
}

/* -O2: task_nap is inlined into worker (a frame only in the debug
 * information), job_* are static functions of the symbol table. */
static void test_item_fn_finds_an_inlined_static_function(void **state) {
  (void)state;
  json_t *j = run_target(ITEMFN_TARGET_O2, "serial",
                         POOL ",item_fn=job_*,task_*", NULL);
  expect_items_only(j);
  assert_int_equal(frame_inlined(j, "nanosleep", "task_nap"), 1);
  json_decref(j);
}

/* Both workers blocked inside items at once: the peak is 2. */
static void test_item_fn_peak_counts_workers_in_items(void **state) {
  (void)state;
  json_t *j = run_target(ITEMFN_TARGET, "meet", POOL ",item_fn=job_*", NULL);
  assert_int_equal(shim_calls(j, "on_workers"), 2);
  assert_int_equal(count_in(j, "pthread_cond_wait", "job_meet"), 2);
  assert_int_equal(shim_site_count(j, "pthread_cond_wait"), 2);
  assert_int_equal(pool_num(j, "peak_blocked_workers"), 2);
  json_decref(j);
}

/* No names (stripped, no -g): every call is taken for the pool's own. */
static void test_item_fn_on_a_stripped_program_counts_nothing(void **state) {
  (void)state;
  json_t *j = run_target(ITEMFN_TARGET_STRIPPED, "serial",
                         POOL ",item_fn=job_*,task_*", NULL);
  assert_int_equal(shim_calls(j, "on_workers"), 0);
  assert_int_equal(pool_num(j, "peak_blocked_workers"), 0);
  assert_true(pool_num(j, "idle_waits") >= ITEM_CALLS + WORKERS);
  json_decref(j);
}

/* A bad value: one warning naming the option, the value and what is
 * wrong; the default (off) stays, so the idle waits count again. */
static void expect_refused(const char *value, const char *why) {
  char *err;
  json_t *j = run_target(ITEMFN_TARGET, "serial",
                         shim_fmt(POOL ":item_fn='%s'", value), &err);
  const char *line =
      shim_fmt("blockwatch: warning: BLOCKWATCH_OPTIONS: bad value '%s' for "
               "'item_fn' (%s), keeping the default",
               value, why);
  if (occurrences(err, line) != 1)
    fail_msg("expected '%s' in:\n%s", line, err);
  assert_int_equal(occurrences(err, "blockwatch:"), 1);
  assert_true(shim_calls(j, "on_workers") > ITEM_CALLS);
  free(err);
  json_decref(j);
}

static void test_item_fn_bad_values_are_named(void **state) {
  (void)state;
  const char *empty = "an empty glob: two commas, or one at an end";
  expect_refused("job_*,,task_*", empty);
  expect_refused(",job_*", empty);
  expect_refused("job_*,", empty);
  expect_refused("job_*, task_*", "a glob begins or ends with a space");

  /* Longer than its field. */
  char *err;
  char big[300];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  json_t *j = run_target(ITEMFN_TARGET, "serial",
                         shim_fmt(POOL ":item_fn=%s", big), &err);
  assert_non_null(strstr(err, "warning: BLOCKWATCH_OPTIONS: the value of "
                              "'item_fn' is too long (at most 255 bytes)"));
  free(err);
  json_decref(j);

  /* Without worker_name or worker_start it can do nothing: it says so. */
  j = run_target(ITEMFN_TARGET, "serial", "item_fn=job_*", &err);
  assert_non_null(strstr(err, "warning: BLOCKWATCH_OPTIONS: 'item_fn' tells "
                              "items apart only on workers named by "
                              "'worker_name' or 'worker_start'"));
  assert_int_equal(shim_calls(j, "on_workers"), 0);
  free(err);
  json_decref(j);
}

/* The sites of fn: how many there are. */
static int sites_of(json_t *j, const char *fn) {
  int n = 0;
  size_t i;
  json_t *s;
  json_array_foreach(json_object_get(j, "call_sites"), i, s) n +=
      strcmp(str(s, "function"), fn) == 0;
  return n;
}

/* The memo of item verdicts (itemmemo_target.c): one helper chain reached
 * from the idle loop and from an item by turns, at the same stack depth,
 * gets each call's own verdict; and two items calling the helper stay two
 * sites. */
static void expect_memo_right(const char *target) {
  enum { ROUNDS = 2000 };
  char report[512];
  shim_tmpfile(report, sizeof report, "itemmemo.json");
  char *argv[] = {(char *)target, NULL};
  char *env[] = {
      shim_fmt("BLOCKWATCH_OPTIONS=report=json:report_path=%s:frames=8:" POOL
               ",item_fn=job_*",
               report),
      NULL};
  shim_result res;
  assert_int_equal(shim_run(argv, env, 1, 60, &res), 0);
  if (!res.exited || res.status != 0)
    fail_msg("%s: status %d\n%s", target, res.status, res.err);
  assert_int_equal(shim_out_value(res.out, "rounds"), ROUNDS);
  /* The hard case is there: the idle and the item's call alike up to the
   * frame that tells them apart. */
  assert_int_equal(shim_out_value(res.out, "same_sp"), ROUNDS);
  shim_result_free(&res);
  json_t *j = shim_load_json(report);
  assert_non_null(j);
  assert_int_equal(shim_calls(j, "on_workers"), 2 * ROUNDS);
  assert_int_equal(count_in(j, "sched_yield", "job_tick"), ROUNDS);
  assert_int_equal(count_in(j, "sched_yield", "job_two"), ROUNDS);
  assert_int_equal(count_in(j, "sched_yield", "idle_tick"), 0);
  assert_int_equal(sites_of(j, "sched_yield"), 2);
  assert_int_equal(pool_num(j, "idle_waits"), ROUNDS);
  json_decref(j);
}

static void test_item_fn_memo_tells_idle_from_item(void **state) {
  (void)state;
  expect_memo_right(ITEMMEMO_TARGET);
  expect_memo_right(ITEMMEMO_TARGET_O2);
}

/* The wrapper's --item-fn, as --worker-name; a missing value is a usage
 * error (2). */
static void test_wrapper_item_fn_flag(void **state) {
  (void)state;
  if (strstr(SAN_PRELOAD, "libtsan")) {
    fprintf(stderr, "skipped under TSan: libtsan in the wrapper's /bin/sh\n");
    skip();
  }
  char *env[] = {shim_fmt("LD_PRELOAD=%s", SAN_PRELOAD), NULL};
  char *argv[] = {BLOCKWATCH_CMD, "--worker-name", "mypool-*",
                  "--item-fn",    "job_*,task_*",  "--",
                  ITEMFN_TARGET,  "serial",        NULL};
  shim_result r;
  assert_int_equal(shim_run(argv, SAN_PRELOAD[0] ? env : NULL, 0, 60, &r), 0);
  if (!r.exited || r.status != 0)
    fail_msg("status %d:\n%s", r.status, r.err);
  assert_int_equal(occurrences(r.err,
                               "SUMMARY: blockwatch: 9 blocking calls on pool "
                               "workers"),
                   1);
  assert_non_null(strstr(r.err, "idle wait(s) not counted"));
  shim_result_free(&r);

  char *bad[] = {BLOCKWATCH_CMD, "--item-fn", NULL};
  assert_int_equal(shim_run(bad, SAN_PRELOAD[0] ? env : NULL, 0, 60, &r), 0);
  assert_true(r.exited);
  assert_int_equal(r.status, 2);
  assert_non_null(strstr(r.err, "--item-fn needs a pattern"));
  shim_result_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_without_item_fn_the_idle_waits_count),
      cmocka_unit_test(test_item_fn_counts_the_items_calls_only),
      cmocka_unit_test(test_item_fn_with_one_glob_leaves_the_other_out),
      cmocka_unit_test(test_item_fn_finds_an_inlined_static_function),
      cmocka_unit_test(test_item_fn_peak_counts_workers_in_items),
      cmocka_unit_test(test_item_fn_on_a_stripped_program_counts_nothing),
      cmocka_unit_test(test_item_fn_memo_tells_idle_from_item),
      cmocka_unit_test(test_item_fn_bad_values_are_named),
      cmocka_unit_test(test_wrapper_item_fn_flag),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
