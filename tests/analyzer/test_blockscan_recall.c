/* test_blockscan_recall.c - the rules that real code bases needed (libevent's
 * 1.x API, GLib's I/O watches, GIO's synchronous calls) find what they must,
 * on the fixtures in fixtures/recall/.
 *
 * Invariant: a fixture says what it expects on the line itself. A line with
 * the comment "expect" holds a blocking call that must be reported as a
 * warning; a line with "not reported" holds one that must not be. So the
 * fixtures can grow without touching this file's line numbers.
 */
#include "run.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RECALL FIXTURES "/recall"
#define TIMEOUT 120

/* 1 when some line of `out` starts with "<file>:<line>:" and is a warning. */
static int warned_at(const char *out, const char *file, unsigned line) {
  char prefix[256];
  int n = snprintf(prefix, sizeof(prefix), "%s:%u:", file, line);
  for (const char *p = out; p && *p;
       p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
    if (strncmp(p, prefix, (size_t)n) != 0)
      continue;
    const char *end = strchr(p, '\n');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    char buf[1024];
    snprintf(buf, sizeof(buf), "%.*s",
             (int)(len < sizeof(buf) - 1 ? len : sizeof(buf) - 1), p);
    if (strstr(buf, " warning: "))
      return 1;
  }
  return 0;
}

/* Runs blockscan on one fixture (no database) and checks every marked line;
 * returns how many "expect" lines there were. */
static unsigned check_fixture(const char *file) {
  const char *argv[] = {BLOCKSCAN_EXE,       file, "--", "-std=c11",
                        "-D_DEFAULT_SOURCE", NULL};
  run_result r = run_tool(RECALL, argv, TIMEOUT);
  char path[512];
  snprintf(path, sizeof(path), "%s/%s", RECALL, file);
  char *text = read_file(path);
  assert_non_null(text);
  unsigned line = 1, expected = 0;
  int failed = 0;
  for (char *p = text; *p; line++) {
    char *end = strchr(p, '\n');
    if (end)
      *end = '\0';
    if (strstr(p, "/* expect")) {
      expected++;
      if (!warned_at(r.out, file, line)) {
        print_error("%s:%u: expected a finding, got none\n", file, line);
        failed = 1;
      }
    } else if (strstr(p, "/* not reported") && warned_at(r.out, file, line)) {
      print_error("%s:%u: reported, but must not be\n", file, line);
      failed = 1;
    }
    if (!end)
      break;
    p = end + 1;
  }
  if (failed)
    print_error("blockscan output:\n%s%s", r.out, r.err);
  assert_false(failed);
  assert_int_equal(r.status, expected ? 1 : 0);
  free(text);
  run_free(&r);
  return expected;
}

static void test_libevent_1x_callbacks_are_roots(void **state) {
  (void)state;
  assert_int_equal(check_fixture("libevent1.c"), 10);
}

static void test_glib_io_watch_callbacks_are_roots(void **state) {
  (void)state;
  assert_int_equal(check_fixture("glib_watch.c"), 2);
}

/* The generated rules, and their unless= conditions from a `blocking`
 * flag and a zero `timeout`. */
static void test_synchronous_gio_calls_block(void **state) {
  (void)state;
  assert_int_equal(check_fixture("gio_sync.c"), 7);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_libevent_1x_callbacks_are_roots),
      cmocka_unit_test(test_glib_io_watch_callbacks_are_roots),
      cmocka_unit_test(test_synchronous_gio_calls_block),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
