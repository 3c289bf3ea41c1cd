/* test_pools - the pools in the report's pools[], each with its kind: the
 * runtime's and the ones options name.
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_runtime_pool_and_option_pool_have_their_kind),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
