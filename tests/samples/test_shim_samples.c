/* test_shim_samples.c - the samples under libblockwatch.so: the shim's JSON
 * report must agree with what the samples measured themselves.
 *
 *  - starvation_probe (compensation off): the report's largest starvation
 *    delay (pools[].starvation_delay_ms.max) is the probe's queue wait that
 *    the sample printed ("probe waited X ms"), within 10% + SLACK_MS.
 *  - delay_vs_sleep --delay-only: no blocking call on a worker at all;
 *    --sleep-only: exactly one per sleeping item (the control that shows the
 *    zero above is not a shim that counts nothing).
 *  - polling_vs_signal: the default run prints the polling and the async
 *    event latencies and their ratio, which is the quotient of the two
 *    printed medians, and its poller blocks a worker; --event-only blocks
 *    none. Only the structure is checked, never how fast anything woke.
 *
 * Invariants: each run writes its report into a fresh mkdtemp() directory,
 * removed at the end; the report path is given explicitly, so the shim uses
 * it as is.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scratch.h"
#include "run_child.h"

#ifndef SHIM_LIB
#error "SHIM_LIB must name libblockwatch.so"
#endif
#ifndef SAN_PRELOAD
#define SAN_PRELOAD "" /* the sanitizer runtime, when the build uses one */
#endif

#define SLACK_MS 30.0
#define DEFAULT_SLEEP_ITEMS 20 /* delay_vs_sleep's default batch */

/* Runs a sample under the shim (with one flag, or none for NULL); returns
 * its stdout and loads the report. */
static char *run_under_shim(const char *program, const char *flag,
                            json_t **report) {
  static int runs;
  char report_path[160], preload[600], options[400];
  snprintf(report_path, sizeof report_path, "%s/report-%d.json", scratch_dir,
           runs++);
  snprintf(preload, sizeof preload, "LD_PRELOAD=%s%s%s", SAN_PRELOAD,
           SAN_PRELOAD[0] ? " " : "", SHIM_LIB);
  snprintf(options, sizeof options,
           "BLOCKWATCH_OPTIONS=report=json:report_path=%s", report_path);
  char *argv[] = {(char *)program, (char *)flag, NULL};
  char *env[] = {preload, options, NULL};
  child_result res;
  assert_int_equal(run_child(argv, env, NULL, 120, &res), 0);
  if (res.status != 0) {
    print_error("%s", res.out);
    free(res.out);
    fail_msg("%s %s exited with %d", program, flag ? flag : "", res.status);
  }
  json_error_t err;
  *report = json_load_file(report_path, 0, &err);
  if (*report == NULL) {
    print_error("%s", res.out);
    free(res.out);
    fail_msg("no JSON report at %s (%s)", report_path, err.text);
  }
  return res.out;
}

static double number_at(json_t *obj, const char *key) {
  json_t *v = json_object_get(obj, key);
  if (!json_is_number(v))
    fail_msg("report: \"%s\" is missing or not a number", key);
  return json_number_value(v);
}

static void test_starvation_delay_matches_the_probe_wait(void **state) {
  (void)state;
  json_t *report;
  char *out = run_under_shim(STARVATION_PROBE, "--off-only", &report);
  const char *line = strstr(out, "probe waited ");
  double printed;
  if (line == NULL || sscanf(line, "probe waited %lf ms", &printed) != 1)
    fail_msg("no 'probe waited X ms' line in:\n%s", out);

  json_t *pools = json_object_get(report, "pools");
  assert_true(json_is_array(pools));
  double reported = -1;
  size_t i;
  json_t *pool;
  json_array_foreach(pools, i, pool) {
    double max = number_at(json_object_get(pool, "starvation_delay_ms"), "max");
    if (max > reported)
      reported = max;
  }
  print_message("probe waited %.1f ms; shim reports starvation delay max "
                "%.1f ms\n",
                printed, reported);
  assert_true(printed > 100.0); /* the experiment did starve the probe */
  if (fabs(reported - printed) > 0.10 * printed + SLACK_MS)
    fail_msg("starvation delay %.1f ms vs probe wait %.1f ms: off by more "
             "than 10%% + %.0f ms",
             reported, printed, SLACK_MS);
  json_decref(report);
  free(out);
}

static json_int_t on_workers(json_t *report) {
  json_t *calls = json_object_get(report, "blocking_calls");
  json_t *n = json_object_get(calls, "on_workers");
  if (!json_is_integer(n))
    fail_msg("report: blocking_calls.on_workers missing");
  return json_integer_value(n);
}

static void test_delay_half_blocks_no_worker(void **state) {
  (void)state;
  json_t *report;
  char *out = run_under_shim(DELAY_VS_SLEEP, "--delay-only", &report);
  assert_int_equal(on_workers(report), 0);
  json_decref(report);
  free(out);
}

static void test_sleep_half_blocks_a_worker_per_item(void **state) {
  (void)state;
  json_t *report;
  char *out = run_under_shim(DELAY_VS_SLEEP, "--sleep-only", &report);
  assert_int_equal(on_workers(report), DEFAULT_SLEEP_ITEMS);
  json_decref(report);
  free(out);
}

/* The median on the line that starts with `label`, or fails the test. */
static double median_on_line(const char *out, const char *label) {
  const char *line = strstr(out, label);
  double median;
  size_t runs;
  if (line == NULL ||
      sscanf(line + strlen(label), " median %lf ms p99 %*f ms (%zu runs)",
             &median, &runs) != 2)
    fail_msg("no '%s median X ms p99 Y ms (N runs)' line in:\n%s", label, out);
  assert_true(runs > 0);
  return median;
}

static void test_polling_sample_prints_both_latencies_and_ratio(void **state) {
  (void)state;
  json_t *report;
  char *out = run_under_shim(POLLING_VS_SIGNAL, NULL, &report);
  double poll = median_on_line(out, "polling (usleep 1 ms):");
  double event = median_on_line(out, "async event (bw_event):");
  const char *line = strstr(out, "polling / async event:");
  double ratio;
  if (line == NULL ||
      sscanf(line, "polling / async event: %lfx at the median", &ratio) != 1)
    fail_msg("no 'polling / async event: Rx at the median' line in:\n%s", out);
  /* The medians are printed to 0.001 ms and the ratio to 0.1. */
  double low = (poll - 0.0005) / (event + 0.0005) - 0.05;
  double high = (poll + 0.0005) / fmax(event - 0.0005, 1e-9) + 0.05;
  if (ratio < low || ratio > high)
    fail_msg("ratio %.1f is not %.3f / %.3f", ratio, poll, event);
  assert_true(on_workers(report) > 0); /* the poller's naps */
  json_decref(report);
  free(out);
}

static void test_event_half_blocks_no_worker(void **state) {
  (void)state;
  json_t *report;
  char *out = run_under_shim(POLLING_VS_SIGNAL, "--event-only", &report);
  median_on_line(out, "async event (bw_event):");
  assert_null(strstr(out, "polling (usleep 1 ms):"));
  assert_int_equal(on_workers(report), 0);
  json_decref(report);
  free(out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_starvation_delay_matches_the_probe_wait),
      cmocka_unit_test(test_delay_half_blocks_no_worker),
      cmocka_unit_test(test_sleep_half_blocks_a_worker_per_item),
      cmocka_unit_test(test_polling_sample_prints_both_latencies_and_ratio),
      cmocka_unit_test(test_event_half_blocks_no_worker),
  };
  return cmocka_run_group_tests(tests, scratch_create, scratch_remove);
}
