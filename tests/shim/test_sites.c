/* test_sites - how the shim files call sites: by the first frame in the
 * program's own code, and apart for two jobs that share a helper.
 *
 * Invariants: sites_target is the only program run; every check reads its
 * JSON report (call_sites[].frames, .via); a frame counts as the target's
 * when its file is sites_target.c.
 */
#include "shim_run.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

/* Runs sites_target in `mode` under the shim, with `extra` (NULL: none)
 * in its environment too. */
static json_t *run_target_env(const char *mode, const char *options,
                              const char *extra) {
  char report[512];
  shim_tmpfile(report, sizeof report, shim_fmt("sites-%s.json", mode));
  char *argv[] = {SITES_TARGET, (char *)mode, NULL};
  char *env[] = {
      shim_fmt("BLOCKWATCH_OPTIONS=report=json:report_path=%s:frames=8%s",
               report, options),
      (char *)extra, NULL};
  shim_result res;
  assert_int_equal(shim_run(argv, env, 1, 60, &res), 0);
  if (!res.exited || res.status != 0)
    fprintf(stderr, "sites_target %s: status %d\n%s", mode, res.status,
            res.err);
  assert_true(res.exited && res.status == 0);
  shim_result_free(&res);
  json_t *j = shim_load_json(report);
  assert_non_null(j);
  return j;
}

static json_t *run_target(const char *mode, const char *options) {
  return run_target_env(mode, options, NULL);
}

static const char *frame_str(json_t *frame, const char *key) {
  const char *s = json_string_value(json_object_get(frame, key));
  return s ? s : "";
}

static int is_target_file(const char *file) {
  const char *slash = strrchr(file, '/');
  return strcmp(slash ? slash + 1 : file, "sites_target.c") == 0;
}

/* 1 when some frame of the site runs in function fn. */
static int site_has_function(json_t *site, const char *fn) {
  size_t i;
  json_t *f;
  json_array_foreach(json_object_get(site, "frames"), i, f) {
    if (strcmp(frame_str(f, "function"), fn) == 0)
      return 1;
  }
  return 0;
}

/* usleep sites through nap(): one must hold job_a's chain only, another
 * job_b's, NAPS calls each. */
static void expect_one_site_per_job(json_t *j) {
  json_t *a = NULL, *b = NULL;
  size_t i;
  json_t *s;
  json_array_foreach(json_object_get(j, "call_sites"), i, s) {
    if (strcmp(frame_str(s, "function"), "usleep") != 0)
      continue;
    json_t *first = json_array_get(json_object_get(s, "frames"), 0);
    assert_string_equal(frame_str(first, "function"), "nap");
    if (site_has_function(s, "job_a"))
      a = s;
    if (site_has_function(s, "job_b"))
      b = s;
  }
  assert_non_null(a);
  assert_non_null(b);
  assert_ptr_not_equal(a, b);
  assert_int_equal(json_integer_value(json_object_get(a, "count")), 3);
  assert_int_equal(json_integer_value(json_object_get(b, "count")), 3);
  assert_false(site_has_function(a, "job_b"));
  assert_true(json_is_null(json_object_get(a, "via")));
}

static void test_jobs_sharing_a_helper_are_two_sites(void **state) {
  (void)state;
  json_t *j = run_target("pool", ":worker_name=hp-*");
  expect_one_site_per_job(j);
  json_decref(j);
}

/* libuv's pool, with no options: the work callbacks tell the sites apart. */
static void test_libuv_items_sharing_a_helper_are_two_sites(void **state) {
  (void)state;
  json_t *j = run_target("uv", "");
  expect_one_site_per_job(j);
  json_decref(j);
}

/* The same on a pool of one thread: work_a's naps, then work_b's, from
 * one return address on one thread (the thread's last site must not take
 * work_b's calls for work_a's). */
static void test_libuv_items_on_one_thread_are_two_sites(void **state) {
  (void)state;
  json_t *j = run_target_env("uv", "", "UV_THREADPOOL_SIZE=1");
  expect_one_site_per_job(j);
  json_decref(j);
}

static void test_a_call_through_a_library_is_filed_at_the_program(void **s) {
  (void)s;
  json_t *j = run_target("library", "");
  json_t *sites = json_object_get(j, "call_sites");
  assert_int_equal(json_array_size(sites), 1);
  json_t *site = json_array_get(sites, 0);
  json_t *first = json_array_get(json_object_get(site, "frames"), 0);
  assert_string_equal(frame_str(first, "function"), "library_item");
  assert_true(is_target_file(frame_str(first, "file")));
  assert_string_equal(frame_str(site, "via"), "uv_sleep");
  json_decref(j);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_jobs_sharing_a_helper_are_two_sites),
      cmocka_unit_test(test_libuv_items_sharing_a_helper_are_two_sites),
      cmocka_unit_test(test_libuv_items_on_one_thread_are_two_sites),
      cmocka_unit_test(test_a_call_through_a_library_is_filed_at_the_program),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
