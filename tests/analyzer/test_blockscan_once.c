/* test_blockscan_once.c - cold paths of start-up: a chain through a
 * once-only initialisation (code run only while a global or static is
 * unset, which sets it: a lazily made singleton, a table read on first
 * use) is low confidence, on fixtures/once.
 *
 * Invariant: the fixture says what the default output holds on the line
 * itself (see marked.h); --confidence low shows the once-only lines too.
 */
#include "marked.h"
#include "run.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#define ONCE FIXTURES "/once"

static void
test_once_only_initialisation_is_not_in_the_default_output(void **state) {
  (void)state;
  const char *files[] = {"once.c", NULL};
  int status;
  assert_int_equal(marked_mismatches(BLOCKSCAN_EXE, ONCE, files, NULL, &status),
                   0);
  assert_int_equal(status, 1);
}

/* GLib's own gate, allowed by the glib pack (glib_once.c). */
static void test_glib_once_gate_wait_is_allowed(void **state) {
  (void)state;
  const char *files[] = {"glib_once.c", NULL};
  int status;
  assert_int_equal(marked_mismatches(BLOCKSCAN_EXE, ONCE, files, NULL, &status),
                   0);
  assert_int_equal(status, 1);
}

static void test_once_only_initialisation_is_low_confidence(void **state) {
  (void)state;
  const char *argv[] = {BLOCKSCAN_EXE,      "once.c", "--color=never",
                        "--confidence=low", "--",     NULL};
  run_result r = run_tool(ONCE, argv, 120);
  static const char *const lines[] = {
      /* the early return of a singleton (libuv's uv_default_loop) */
      "once.c:19:15: warning: 'read' blocks a pool worker: reached from "
      "callback 'work' [blocking-io, low confidence]",
      /* the then-branch that fills a table (GLib's charset aliases) */
      "once.c:37:14: warning: 'fgets' blocks a pool worker: reached from "
      "callback 'work' [blocking-io, low confidence]",
      /* a local copy of the static, a gate given its address */
      "once.c:48:5: warning: 'usleep' blocks a pool worker: reached from "
      "callback 'work' [blocking-sleep, low confidence]",
      "once.c:62:5: warning: 'usleep' blocks a pool worker: reached from "
      "callback 'work' [blocking-sleep, low confidence]",
      /* the gate as a statement-expression macro (g_once_init_enter) */
      "once.c:72:5: warning: 'usleep' blocks a pool worker: reached from "
      "callback 'work' [blocking-sleep, low confidence]",
      /* a lock, a global tested but not set there, a local: high */
      "once.c:86:5: warning: 'usleep' blocks a pool worker: reached from "
      "callback 'work' [blocking-sleep]",
      "once.c:94:5: warning: 'write' blocks a pool worker: reached from "
      "callback 'work' [blocking-io]",
      "once.c:100:5: warning: 'usleep' blocks a pool worker: reached from "
      "callback 'work' [blocking-sleep]",
      "once.c:106:5: warning: 'usleep' blocks a pool worker: reached from "
      "callback 'work' [blocking-sleep]",
      NULL};
  for (size_t i = 0; lines[i]; i++)
    if (!contains(r.out, lines[i]))
      fail_msg("no '%s' in:\n%s", lines[i], r.out);
  assert_int_equal(r.status, 1);
  run_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(
          test_once_only_initialisation_is_not_in_the_default_output),
      cmocka_unit_test(test_once_only_initialisation_is_low_confidence),
      cmocka_unit_test(test_glib_once_gate_wait_is_allowed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
