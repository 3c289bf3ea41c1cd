/* test_blockscan_nonblock.c - I/O that cannot wait is not reported: on a
 * descriptor the program made non-blocking (fixtures/nonblock/setters.c,
 * a wrapper in another TU: use.c + wrapper.c), and on the descriptor a
 * readiness callback was registered for (ready.c).
 *
 * Invariant: the fixtures say what they expect on the line itself, as in
 * fixtures/recall: "expect" must be a warning, "not reported" must not.
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

#define NONBLOCK FIXTURES "/nonblock"
#define TIMEOUT 120
#define MAX_LINES 256

/* Marks warned[n] for each "<file>:<n>:<col>: warning: " line of `out`. */
static void warned_lines(const char *out, const char *file,
                         unsigned char *warned) {
  size_t flen = strlen(file);
  for (const char *p = out; *p;) {
    unsigned line = 0, col = 0;
    int used = 0;
    if (strncmp(p, file, flen) == 0 && p[flen] == ':' &&
        sscanf(p + flen, ":%u:%u: warning: %n", &line, &col, &used) == 2 &&
        used > 0 && line < MAX_LINES)
      warned[line] = 1;
    const char *end = strchr(p, '\n');
    if (!end)
      break;
    p = end + 1;
  }
}

/* How many marked lines of `text` (the fixture `file`) disagree with
 * `warned`; prints each. */
static int mismatches(const char *file, const char *text,
                      const unsigned char *warned) {
  int bad = 0;
  const char *p = text;
  for (unsigned line = 1; p && *p && line < MAX_LINES; line++) {
    const char *end = strchr(p, '\n');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    int expect = memmem(p, len, "/* expect", 9) != NULL;
    int quiet = memmem(p, len, "/* not reported", 15) != NULL;
    if (expect != warned[line] && (expect || quiet)) {
      print_error("%s:%u: %s\n", file, line,
                  expect ? "expected a finding, got none"
                         : "reported, but must not be");
      bad++;
    }
    p = end ? end + 1 : NULL;
  }
  return bad;
}

/* Scans `files` (NULL-terminated) together; checks the marked lines of
 * the first. */
static void check(const char *const *files) {
  const char *argv[16] = {BLOCKSCAN_EXE};
  size_t n = 1;
  for (size_t i = 0; files[i] && n < 12; i++)
    argv[n++] = files[i];
  argv[n++] = "--color=never";
  argv[n++] = "--";
  argv[n] = NULL;
  run_result r = run_tool(NONBLOCK, argv, TIMEOUT);
  unsigned char warned[MAX_LINES] = {0};
  warned_lines(r.out, files[0], warned);
  char path[512];
  snprintf(path, sizeof(path), "%s/%s", NONBLOCK, files[0]);
  char *text = read_file(path);
  assert_non_null(text);
  int bad = mismatches(files[0], text, warned);
  free(text);
  if (bad)
    print_error("blockscan output:\n%s%s", r.out, r.err);
  int status = r.status;
  run_free(&r);
  assert_int_equal(bad, 0);
  assert_int_equal(status, 1);
}

static void test_io_on_descriptors_made_nonblocking_is_quiet(void **state) {
  (void)state;
  const char *files[] = {"setters.c", NULL};
  check(files);
}

static void
test_wrapper_in_another_tu_makes_its_argument_nonblocking(void **state) {
  (void)state;
  const char *files[] = {"use.c", "wrapper.c", NULL};
  check(files);
}

static void
test_io_on_the_registered_descriptor_in_readiness_callback(void **state) {
  (void)state;
  const char *files[] = {"ready.c", NULL};
  check(files);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_io_on_descriptors_made_nonblocking_is_quiet),
      cmocka_unit_test(
          test_wrapper_in_another_tu_makes_its_argument_nonblocking),
      cmocka_unit_test(
          test_io_on_the_registered_descriptor_in_readiness_callback),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
