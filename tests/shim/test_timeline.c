/* test_timeline.c - the shim's trace of two pools (two_pools_target) in the
 * Trace Event Format as Perfetto and chrome://tracing read it, and the
 * bw-trace2svg picture of it.
 *
 * Invariants: the target runs once (group setup) and every test reads its
 * trace; the checks follow the format's documentation: counters keyed by
 * name, async "b"/"e" pairs by cat, id2 and name, "M" names per tid.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim_run.h"
#include "timeline_run.h"
#ifdef HAVE_TRACE2SVG
#include "svg.h"
#include "trace.h" /* tools/bw-trace2svg */
#endif

static char trace_path[600];
static int sleep_line;
static json_t *events; /* the trace's traceEvents */

static int run_once(void **state) {
  (void)state;
  if (timeline_run(trace_path, sizeof trace_path, &sleep_line) != 0)
    return -1;
  json_t *root = shim_load_json(trace_path);
  events = root ? json_incref(json_object_get(root, "traceEvents")) : NULL;
  json_decref(root);
  return json_is_array(events) ? 0 : -1;
}

static int free_trace(void **state) {
  (void)state;
  json_decref(events);
  return 0;
}

static const char *str(json_t *obj, const char *key) {
  return json_string_value(json_object_get(obj, key));
}

static int is(json_t *e, const char *ph) {
  const char *p = str(e, "ph");
  return p && strcmp(p, ph) == 0;
}

static const char *const pools[] = {"alpha", "beta"};

static void test_each_pool_has_counter_tracks_of_its_own(void **state) {
  (void)state;
  for (size_t p = 0; p < 2; p++) {
    static const char *const what[] = {"blocked workers", "queue length"};
    for (size_t w = 0; w < 2; w++) {
      char name[64];
      snprintf(name, sizeof name, "%s (%s)", what[w], pools[p]);
      int samples = 0;
      double max = 0;
      size_t i;
      json_t *e;
      json_array_foreach(events, i, e) {
        if (!is(e, "C") || strcmp(str(e, "name"), name) != 0)
          continue;
        /* One series, the conventional "value": every sample fits the
         * track catapult makes of the first. */
        json_t *args = json_object_get(e, "args");
        assert_int_equal(json_object_size(args), 1);
        double v = json_number_value(json_object_get(args, "value"));
        if (v > max)
          max = v;
        samples++;
      }
      assert_true(samples >= TIMELINE_SLEEPERS);
      if (w == 0)
        assert_true(max == 1.0); /* its only worker, blocked */
    }
  }
}

static void test_queue_waits_are_async_pairs_one_lane_per_pool(void **state) {
  (void)state;
  int waits[2] = {0, 0};
  json_int_t lane[2] = {-1, -1};
  size_t i, k;
  json_t *b, *e;
  json_array_foreach(events, i, b) {
    const char *name = str(b, "name");
    assert_false(is(b, "X") && strstr(name, "queue wait"));
    if (!is(b, "b"))
      continue;
    assert_string_equal(str(b, "cat"), "queue");
    const char *id = str(json_object_get(b, "id2"), "local");
    assert_non_null(id);
    size_t p = strcmp(name, "queue wait (alpha)") == 0 ? 0 : 1;
    assert_string_equal(name, p ? "queue wait (beta)" : "queue wait (alpha)");
    assert_string_equal(str(json_object_get(b, "args"), "pool"), pools[p]);
    json_int_t tid = json_integer_value(json_object_get(b, "tid"));
    assert_true(lane[p] == -1 || lane[p] == tid);
    lane[p] = tid;
    int ends = 0;
    json_array_foreach(events, k, e) {
      if (!is(e, "e") || strcmp(str(json_object_get(e, "id2"), "local"), id))
        continue;
      ends++;
      assert_string_equal(str(e, "name"), name);
      assert_string_equal(str(e, "cat"), "queue");
      double wait_ms = json_number_value(
          json_object_get(json_object_get(b, "args"), "wait_ms"));
      double dur_us = json_number_value(json_object_get(e, "ts")) -
                      json_number_value(json_object_get(b, "ts"));
      assert_true(dur_us > 0 && dur_us / 1000.0 - wait_ms < 0.01 &&
                  wait_ms - dur_us / 1000.0 < 0.01);
    }
    assert_int_equal(ends, 1);
    waits[p]++;
  }
  assert_true(waits[0] >= TIMELINE_MIN_WAITS);
  assert_true(waits[1] >= TIMELINE_MIN_WAITS);
  assert_true(lane[0] != lane[1]);
}

static void test_blocked_slices_name_the_function_and_caller(void **state) {
  (void)state;
  char at[64];
  snprintf(at, sizeof at, "two_pools_target.c:%d", sleep_line);
  int slices = 0;
  size_t i;
  json_t *e;
  json_array_foreach(events, i, e) {
    if (!is(e, "X"))
      continue;
    json_t *args = json_object_get(e, "args");
    assert_string_equal(str(e, "name"), "usleep");
    assert_string_equal(str(args, "function"), "usleep");
    assert_string_equal(str(args, "caller"), "sleeper");
    const char *where = str(args, "at");
    assert_non_null(where);
    assert_true(strlen(where) >= strlen(at));
    assert_string_equal(where + strlen(where) - strlen(at), at);
    slices++;
  }
  assert_int_equal(slices, 2 * TIMELINE_SLEEPERS);
}

/* The thread_name of tid, NULL when it has none. */
static const char *thread_name(json_int_t tid) {
  size_t i;
  json_t *e;
  json_array_foreach(events, i, e) {
    if (is(e, "M") && strcmp(str(e, "name"), "thread_name") == 0 &&
        json_integer_value(json_object_get(e, "tid")) == tid)
      return str(json_object_get(e, "args"), "name");
  }
  return NULL;
}

static void test_the_process_and_every_thread_are_named(void **state) {
  (void)state;
  int process_named = 0;
  size_t i;
  json_t *e;
  json_array_foreach(events, i, e) {
    if (is(e, "M") && strcmp(str(e, "name"), "process_name") == 0) {
      assert_string_equal(str(json_object_get(e, "args"), "name"),
                          "shim_two_pools_target");
      process_named++;
    }
    if (is(e, "X") || is(e, "b") || is(e, "e")) {
      const char *name =
          thread_name(json_integer_value(json_object_get(e, "tid")));
      assert_non_null(name);
      if (is(e, "X")) /* a worker: its pool's name and number */
        assert_true(strncmp(name, "alpha-", 6) == 0 ||
                    strncmp(name, "beta-", 5) == 0);
      else
        assert_true(strncmp(name, "queue waits (", 13) == 0);
    }
  }
  assert_int_equal(process_named, 1);
}

#ifdef HAVE_TRACE2SVG
/* The SVG of a loaded trace, in a malloc'd string. */
static char *render(const t2s_trace *t) {
  char *svg = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&svg, &len);
  assert_non_null(f);
  assert_int_equal(t2s_svg_render(t, NULL, f), 0);
  assert_int_equal(fclose(f), 0);
  return svg;
}

static int count(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
    n++;
  return n;
}

static void test_svg_draws_each_pools_waits_and_counter_values(void **state) {
  (void)state;
  t2s_trace t;
  char err[256] = "";
  assert_int_equal(t2s_trace_load(trace_path, &t, err, sizeof err), 0);
  /* The async waits are waits, and their lanes are not threads. */
  assert_true(t.n_waits >= 2 * TIMELINE_MIN_WAITS);
  for (size_t i = 0; i < t.n_lanes; i++)
    assert_null(strstr(t.lanes[i].name, "queue waits"));
  assert_int_equal(t.n_lanes, 2);
  assert_int_equal(t.n_counters, 4);
  assert_string_equal(t.counters[0].name, "blocked workers (alpha)");
  assert_string_equal(t.counters[1].name, "blocked workers (beta)");
  char *svg = render(&t);
  assert_int_equal(count(svg, ">waiting items (alpha)<"), 1);
  assert_int_equal(count(svg, ">waiting items (beta)<"), 1);
  assert_int_equal(count(svg, "class=\"span queue-wait\""), (int)t.n_waits);
  /* Each counter row shows 0 and its maximum on its axis. */
  assert_int_equal(count(svg, "class=\"counter-axis\""), 4);
  assert_int_equal(count(svg, "class=\"counter-value\" "), 8);
  assert_true(count(svg, "fill=\"#222222\">1</text>") >= 2);
  free(svg);
  t2s_trace_free(&t);
}

static void test_svg_tooltips_show_rounded_numbers(void **state) {
  (void)state;
  char path[600];
  shim_tmpfile(path, sizeof path, "rounding.json");
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs("[{\"name\":\"queue wait (p)\",\"cat\":\"queue\",\"ph\":\"b\","
        "\"id2\":{\"local\":\"0x1\"},\"ts\":0,\"pid\":1,\"tid\":9,"
        "\"args\":{\"wait_ms\":250.18000000000001}},"
        "{\"name\":\"queue wait (p)\",\"cat\":\"queue\",\"ph\":\"e\","
        "\"id2\":{\"local\":\"0x1\"},\"ts\":250180,\"pid\":1,\"tid\":9},"
        "{\"name\":\"load\",\"ph\":\"C\",\"ts\":0,\"pid\":1,"
        "\"args\":{\"value\":0.30000000000000004}}]",
        f);
  assert_int_equal(fclose(f), 0);
  t2s_trace t;
  assert_int_equal(t2s_trace_load(path, &t, NULL, 0), 0);
  assert_int_equal(t.n_waits, 1);
  char *svg = render(&t);
  assert_non_null(strstr(svg, "wait_ms&quot;:250.18}"));
  assert_null(strstr(svg, "0000000"));
  assert_non_null(strstr(svg, ">0.3</text>"));
  free(svg);
  t2s_trace_free(&t);
}
#endif

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_each_pool_has_counter_tracks_of_its_own),
      cmocka_unit_test(test_queue_waits_are_async_pairs_one_lane_per_pool),
      cmocka_unit_test(test_blocked_slices_name_the_function_and_caller),
      cmocka_unit_test(test_the_process_and_every_thread_are_named),
#ifdef HAVE_TRACE2SVG
      cmocka_unit_test(test_svg_draws_each_pools_waits_and_counter_values),
      cmocka_unit_test(test_svg_tooltips_show_rounded_numbers),
#endif
  };
  return cmocka_run_group_tests(tests, run_once, free_trace);
}
