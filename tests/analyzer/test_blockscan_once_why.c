/* test_blockscan_once_why.c - once-only initialisation as GLib writes its
 * gate (a statement expression under `__extension__`), and the step that
 * says why such a chain is low confidence, on fixtures/once_why.
 *
 * Invariant: the fixture says what the default output holds on the line
 * itself (see marked.h); --confidence low names the once-only step in the
 * text (a note, also for the blocking call's own line), JSON and SARIF.
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

static run_result scan_low(const char *format) {
  const char *argv[] = {BLOCKSCAN_EXE,
                        "once_why.c",
                        "--color=never",
                        "--confidence=low",
                        "--format",
                        format,
                        "--",
                        NULL};
  return run_tool(ONCE_WHY, argv, 120);
}

static void expect_all(const run_result *r, const char *const *lines) {
  for (size_t i = 0; lines[i]; i++)
    if (!contains(r->out, lines[i]))
      fail_msg("no '%s' in:\n%s", lines[i], r->out);
}

static void test_the_text_names_the_once_only_step(void **state) {
  (void)state;
  run_result r = scan_low("text");
  static const char *const lines[] = {
      /* the blocking call itself in the branch: a note on its own line */
      "once_why.c:29:5: warning: 'usleep' blocks a pool worker: reached "
      "from callback 'work' [blocking-sleep, low confidence]",
      "once_why.c:29:5: note: 'get_modules' calls 'usleep' in a once-only "
      "initialisation",
      /* a call on the way to one, in the gate closing's argument */
      "once_why.c:21:3: warning: 'usleep' blocks a pool worker: reached "
      "from callback 'work' [blocking-sleep, low confidence]",
      "note: 'get_modules' calls 'read_module_cache' in a once-only "
      "initialisation",
      /* not once-only: high, and no such note */
      "once_why.c:43:5: warning: 'usleep' blocks a pool worker: reached "
      "from callback 'work' [blocking-sleep]",
      NULL};
  expect_all(&r, lines);
  assert_false(contains(r.out, "'every_call' calls 'usleep' in a"));
  assert_int_equal(r.status, 1);
  run_free(&r);
}

static void test_json_and_sarif_name_the_once_only_step(void **state) {
  (void)state;
  run_result r = scan_low("json");
  static const char *const json[] = {"\"cold\": \"once\"", NULL};
  expect_all(&r, json);
  assert_int_equal(r.status, 1);
  run_free(&r);
  r = scan_low("sarif");
  static const char *const sarif[] = {
      "'get_modules' calls 'usleep' in a once-only initialisation", NULL};
  expect_all(&r, sarif);
  assert_int_equal(r.status, 1);
  run_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(
          test_a_gate_under_extension_is_not_in_the_default_output),
      cmocka_unit_test(test_the_text_names_the_once_only_step),
      cmocka_unit_test(test_json_and_sarif_name_the_once_only_step),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
