/* test_blockscan_conds.c - precision on fixtures/conds: the rules'
 * conditions with flags ORed in the call or the rule, named constants, and
 * constants that reach the call through a wrapper's parameter or a local
 * (conds.c).
 *
 * Invariant: the fixtures say what they expect on the line itself (see
 * marked.h): "expect" must be a warning, "not reported" must not.
 */
#include "marked.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#define CONDS FIXTURES "/conds"

/* Scans `files` (NULL-terminated) together; checks the marked lines of
 * the first. */
static void check(const char *const *files) {
  int status;
  assert_int_equal(
      marked_mismatches(BLOCKSCAN_EXE, CONDS, files, NULL, &status), 0);
  assert_int_equal(status, 1);
}

static void test_flags_constants_and_constant_parameters(void **state) {
  (void)state;
  const char *files[] = {"conds.c", NULL};
  check(files);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_flags_constants_and_constant_parameters),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
