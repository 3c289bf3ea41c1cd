/* test_summary_counts.c - the text reports say what their count of
 * blocking calls holds: calls in event-loop callbacks are not called "on
 * pool workers", in the shim's own text and in the wrapper's summary.
 *
 * Invariants: loops_target "uv block" makes 3 blocking calls in callbacks
 * of a libuv loop on its main thread and none on a pool worker.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "shim_run.h"

#include <stdio.h>
#include <string.h>

static void assert_counts_named(const char *err) {
  assert_non_null(
      strstr(err, "blockwatch: 3 blocking call(s) in event-loop callbacks, "));
  assert_non_null(strstr(
      err, "SUMMARY: blockwatch: 3 blocking calls in event-loop callbacks ("));
  assert_null(strstr(err, "on pool workers"));
}

static void test_loop_callbacks_are_not_called_pool_workers(void **state) {
  (void)state;
  char *argv[] = {LOOPS_TARGET, "uv", "block", NULL};
  char *env[] = {"BLOCKWATCH_OPTIONS=report=text", NULL};
  shim_result r;
  assert_int_equal(shim_run(argv, env, 1, 60, &r), 0);
  assert_true(r.exited);
  assert_counts_named(r.err);
  shim_result_free(&r);
  char *wrapped[] = {BLOCKWATCH_CMD, "--", LOOPS_TARGET, "uv", "block", NULL};
  assert_int_equal(shim_run(wrapped, NULL, 0, 60, &r), 0);
  assert_true(r.exited);
  assert_counts_named(r.err);
  shim_result_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_loop_callbacks_are_not_called_pool_workers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
