/* test_blockscan_fork.c - code in a forked child runs in another process:
 * the child's branch of a fork() is neither reported nor followed, on
 * fixtures/fork.
 *
 * Invariant: the fixture says what the default output holds on the line
 * itself (see marked.h); --confidence low shows nothing more there.
 */
#include "marked.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#define FORK FIXTURES "/fork"

static void test_forked_child_is_not_reported(void **state) {
  (void)state;
  const char *files[] = {"fork.c", NULL};
  int status;
  assert_int_equal(marked_mismatches(BLOCKSCAN_EXE, FORK, files, NULL, &status),
                   0);
  assert_int_equal(status, 1);
}

/* Dropped, not low confidence: the child never runs on the worker. */
static void test_forked_child_is_not_low_confidence_either(void **state) {
  (void)state;
  const char *files[] = {"fork.c", NULL};
  const char *extra[] = {"--confidence=low", NULL};
  int status;
  assert_int_equal(
      marked_mismatches(BLOCKSCAN_EXE, FORK, files, extra, &status), 0);
  assert_int_equal(status, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_forked_child_is_not_reported),
      cmocka_unit_test(test_forked_child_is_not_low_confidence_either),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
