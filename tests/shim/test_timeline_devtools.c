/* test_timeline_devtools.c - the shim's trace of two pools read by a real
 * parser of the format: the DevTools trace engine (npm
 * @paulirish/trace_engine, installed into .tools/ by scripts/setup.sh
 * --test) under Node.js, driven by check_timeline.mjs.
 *
 * Invariants: exits 77 (ctest SKIP_RETURN_CODE) with a message saying what
 * to install when node or the package is missing, and only then; the
 * script's lines are printed whatever it finds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <unistd.h>

#include "shim_run.h"
#include "timeline_run.h"

#define SKIP_CODE 77

/* The checks of check_timeline.mjs on the trace at path. */
static void check_trace(const char *trace, int sleep_line) {
  char min_waits[16], line[16];
  snprintf(min_waits, sizeof min_waits, "%d", TIMELINE_MIN_WAITS);
  snprintf(line, sizeof line, "%d", sleep_line);
  char *argv[] = {NODE_EXE,       CHECK_SCRIPT, (char *)trace, TRACE_ENGINE_DIR,
                  TIMELINE_POOLS, min_waits,    line,          NULL};
  shim_result r;
  assert_int_equal(shim_run(argv, NULL, 0, 120, &r), 0);
  printf("%s", r.out ? r.out : "");
  if (r.err && r.err[0])
    printf("node stderr:\n%s\n", r.err);
  assert_false(r.timedout);
  assert_true(r.exited);
  assert_int_equal(r.status, 0);
  shim_result_free(&r);
}

static void test_devtools_engine_keeps_every_counter_and_wait(void **state) {
  (void)state;
  char trace[600];
  int sleep_line = 0;
  assert_int_equal(timeline_run(trace, sizeof trace, &sleep_line), 0);
  check_trace(trace, sleep_line);
}

#ifdef BW_MERGE
/* With symbolize=0 the process leaves the callers to bw-merge, which
 * names them in the trace in place: the engine reads that trace as the
 * one the process names itself (every slice's caller and file:line). */
static void test_devtools_engine_reads_the_trace_bw_merge_named(void **state) {
  (void)state;
  char trace[600], report[600];
  int sleep_line = 0;
  shim_tmpfile(report, sizeof report, "two-pools-report.json");
  assert_int_equal(
      timeline_run_with(
          trace, sizeof trace, &sleep_line,
          shim_fmt("symbolize=0:report=json:report_path=%s", report)),
      0);
  /* Unnamed as written: "caller" null, module and offset there. */
  json_t *raw = shim_load_json(trace);
  json_t *events = json_object_get(raw, "traceEvents");
  size_t unnamed = 0;
  for (size_t i = 0; i < json_array_size(events); i++) {
    json_t *args = json_object_get(json_array_get(events, i), "args");
    unnamed += json_is_null(json_object_get(args, "caller")) &&
               json_is_string(json_object_get(args, "offset"));
  }
  json_decref(raw);
  assert_true(unnamed >= 2 * TIMELINE_MIN_WAITS);
  char *argv[] = {BW_MERGE, "--no-text", report, NULL};
  shim_result r;
  assert_int_equal(shim_run(argv, NULL, 0, 120, &r), 0);
  assert_true(r.exited);
  assert_int_equal(r.status, 0);
  shim_result_free(&r);
  check_trace(trace, sleep_line);
}
#endif

int main(void) {
  if (NODE_EXE[0] == '\0' || access(NODE_EXE, X_OK) != 0) {
    printf("SKIP: no Node.js found at configure time ('%s'); scripts/setup.sh "
           "--test installs it\n",
           NODE_EXE);
    return SKIP_CODE;
  }
  if (access(TRACE_ENGINE_DIR "/models/trace/trace.js", R_OK) != 0) {
    printf("SKIP: the DevTools trace engine is not at %s; scripts/setup.sh "
           "--test installs it (npm @paulirish/trace_engine into .tools/)\n",
           TRACE_ENGINE_DIR);
    return SKIP_CODE;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_devtools_engine_keeps_every_counter_and_wait),
#ifdef BW_MERGE
      cmocka_unit_test(test_devtools_engine_reads_the_trace_bw_merge_named),
#endif
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
