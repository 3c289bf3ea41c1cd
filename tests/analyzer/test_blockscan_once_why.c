/* test_blockscan_once_why.c - once-only initialisation as GLib writes its
 * gate (a statement expression under `__extension__`), and the step that
 * says why such a chain is low confidence, on fixtures/once_why.
 *
 * Invariant: the fixture says what the default output holds on the line
 * itself (see marked.h).
 */
#include "marked.h"
#include "run.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#define ONCE_WHY FIXTURES "/once_why"

static void
test_a_gate_under_extension_is_not_in_the_default_output(void **state) {
  (void)state;
  const char *files[] = {"once_why.c", NULL};
  int status;
  assert_int_equal(
      marked_mismatches(BLOCKSCAN_EXE, ONCE_WHY, files, NULL, &status), 0);
  assert_int_equal(status, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(
          test_a_gate_under_extension_is_not_in_the_default_output),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
