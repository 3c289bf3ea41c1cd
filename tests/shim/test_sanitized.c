/* test_sanitized.c - programs built with ThreadSanitizer or
 * AddressSanitizer run under `blockwatch --` with no extra step: the
 * wrapper puts the runtime they need first in LD_PRELOAD, and the shim
 * causes no sanitizer report.
 *
 * Invariants: sanitized_target is compiled here, by gcc and by clang
 * with each sanitizer; a compiler or runtime that is missing skips that
 * build (and the test when none builds). Each program's exit status,
 * stdout and stderr under the wrapper are those it has alone, plus the
 * wrapper's own "blockwatch:" lines, whose report has the worker's 3
 * blocking calls.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "shim_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* stderr without the wrapper's "blockwatch: " lines. */
static char *without_blockwatch_lines(const char *err) {
  char *out = calloc(strlen(err) + 1, 1);
  size_t n = 0;
  for (const char *line = err; *line;) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) + 1 : strlen(line);
    if (strncmp(line, "blockwatch: ", 12) != 0) {
      memcpy(out + n, line, len);
      n += len;
    }
    line += len;
  }
  return out;
}

/* Builds sanitized_target with cc and -fsanitize=sanitizer into exe;
 * 0 when it built. */
static int build(const char *cc, const char *sanitizer, const char *exe) {
  if (!cc[0])
    return -1;
  char *argv[] = {
      (char *)cc,  "-g",        shim_fmt("-fsanitize=%s", sanitizer),
      "-o",        (char *)exe, SANITIZED_SOURCE,
      "-lpthread", NULL};
  shim_result r;
  if (shim_run(argv, NULL, 0, 120, &r) != 0)
    return -1;
  int ok = r.exited && r.status == 0;
  if (!ok)
    fprintf(stderr, "skipped %s -fsanitize=%s: %.200s\n", cc, sanitizer, r.err);
  shim_result_free(&r);
  return ok ? 0 : -1;
}

/* The program alone, then under the wrapper: the same status and output,
 * and the shim's findings in the report. */
static void check(const char *cc, const char *sanitizer, int *built) {
  char exe[600], json[600];
  shim_tmpfile(exe, sizeof exe,
               shim_fmt("san-%s-%s", sanitizer,
                        strrchr(cc, '/') ? strrchr(cc, '/') + 1 : cc));
  if (build(cc, sanitizer, exe) != 0)
    return;
  (*built)++;
  shim_tmpfile(json, sizeof json, "san.json");
  unlink(json);
  char *alone_argv[] = {exe, NULL};
  shim_result alone, watched;
  assert_int_equal(shim_run(alone_argv, NULL, 0, 60, &alone), 0);
  char *argv[] = {BLOCKWATCH_CMD, "-o", json, "--worker-name",
                  "procs-*",      "--", exe,  NULL};
  assert_int_equal(shim_run(argv, NULL, 0, 60, &watched), 0);
  char *err = without_blockwatch_lines(watched.err);
  if (watched.status != alone.status || strcmp(err, alone.err) != 0 ||
      strcmp(watched.out, alone.out) != 0)
    fail_msg("%s -fsanitize=%s: status %d (alone %d), stderr:\n%s", cc,
             sanitizer, watched.status, alone.status, watched.err);
  free(err);
  json_t *j = shim_load_json(json);
  assert_non_null(j);
  assert_int_equal(shim_calls(j, "on_workers"), 3);
  json_decref(j);
  shim_result_free(&alone);
  shim_result_free(&watched);
}

static void check_all(const char *sanitizer) {
  if (SAN_PRELOAD[0]) {
    /* The shim here is itself built with a sanitizer, whose runtime
     * cannot share a process with another sanitizer's. */
    fprintf(stderr, "skipped: the shim is built with a sanitizer\n");
    skip();
  }
  int built = 0;
  check(GCC_EXE, sanitizer, &built);
  check(CLANG_EXE, sanitizer, &built);
  if (built == 0) {
    fprintf(stderr, "skipped: no compiler here builds -fsanitize=%s\n",
            sanitizer);
    skip();
  }
}

static void test_thread_sanitized_program_runs_clean(void **state) {
  (void)state;
  check_all("thread");
}

static void test_address_sanitized_program_runs_clean(void **state) {
  (void)state;
  check_all("address");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_thread_sanitized_program_runs_clean),
      cmocka_unit_test(test_address_sanitized_program_runs_clean),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
