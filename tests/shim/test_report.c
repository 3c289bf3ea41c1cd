/* test_report.c - the shim's report as its readers see it: inlined frames
 * expanded (checked against addr2line -i), call sites by blocked time, the
 * closing SUMMARY line, the rules' fix hints, and text and JSON that give
 * the same numbers.
 *
 * Invariants: the programs run are report_target (sites of known blocked
 * time, one through an inlined function) and, when the samples are built,
 * starvation_probe (a runtime pool that starves); times are compared only
 * between the two outputs of one run, never against the clock.
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

/* ---- helpers ------------------------------------------------------------ */

static const char *tmp_path(const char *name) {
  static char bufs[4][600];
  static int next;
  return shim_tmpfile(bufs[next++ % 4], sizeof bufs[0], name);
}

/* Runs argv under the shim with BLOCKWATCH_OPTIONS=options. */
static void run(char *const argv[], const char *options, shim_result *res) {
  char env0[1400];
  snprintf(env0, sizeof env0, "BLOCKWATCH_OPTIONS=%s", options);
  char *env[] = {env0, NULL};
  assert_int_equal(shim_run(argv, env, 1, 120, res), 0);
  assert_false(res->timedout);
  assert_true(res->exited);
}

/* report_target [scenario] with report=both into `json`; its report. */
static json_t *run_target(const char *scenario, const char *json,
                          const char *extra, shim_result *res) {
  char *argv[] = {REPORT_TARGET, (char *)scenario, NULL};
  char options[1200];
  snprintf(options, sizeof options,
           "report=both:report_path=%s:worker_name=rep-?%s%s", json,
           extra ? ":" : "", extra ? extra : "");
  unlink(json);
  run(argv, options, res);
  assert_int_equal(res->status, 0);
  return shim_load_json(json);
}

/* The shim's lines of a run's stderr, "blockwatch: " cut off, in order
 * (at most max; the strings point into a copy the caller frees). */
typedef struct lines {
  char *copy;
  int n;
  const char *at[512];
} lines;

static void lines_of(const char *err, lines *l) {
  l->copy = strdup(err);
  l->n = 0;
  for (char *save = NULL, *p = strtok_r(l->copy, "\n", &save); p && l->n < 512;
       p = strtok_r(NULL, "\n", &save))
    if (strncmp(p, "blockwatch: ", 12) == 0)
      l->at[l->n++] = p + 12;
}

/* One caller frame of the text report. */
typedef struct text_frame {
  unsigned long pc;
  char function[128];
  char file[256];
  int line;
} text_frame;

/* "    #N 0xPC in FUNCTION [FILE:LINE]": 1 when the line is a frame. */
static int parse_frame(const char *s, text_frame *f) {
  int index, used = 0;
  f->file[0] = '\0';
  f->line = 0;
  if (sscanf(s, "    #%d %lx in %127s%n", &index, &f->pc, f->function, &used) !=
      3)
    return 0;
  const char *loc = s + used;
  if (*loc == ' ') {
    const char *colon = strrchr(loc, ':');
    if (colon && (size_t)(colon - loc - 1) < sizeof f->file) {
      memcpy(f->file, loc + 1, (size_t)(colon - loc - 1));
      f->file[colon - loc - 1] = '\0';
      f->line = atoi(colon + 1);
    }
  }
  return 1;
}

/* A site header "FN() xCOUNT, MS ms blocked:". */
typedef struct text_site {
  char function[64];
  unsigned long long count;
  char ms[32];
} text_site;

static int parse_site(const char *s, text_site *t) {
  size_t len = strlen(s);
  return len > 9 && strcmp(s + len - 9, " blocked:") == 0 &&
         sscanf(s, "%63[^(]() x%llu, %31s ms blocked:", t->function, &t->count,
                t->ms) == 3;
}

/* A JSON number of milliseconds as the text prints it. */
static const char *ms_of(json_t *v) {
  static char bufs[4][32];
  static int next;
  char *b = bufs[next++ % 4];
  assert_true(json_is_number(v));
  snprintf(b, sizeof bufs[0], "%.3f", json_number_value(v));
  return b;
}

static const char *str_of(json_t *obj, const char *key) {
  return json_string_value(json_object_get(obj, key));
}

static long long int_of(json_t *obj, const char *key) {
  json_t *v = json_object_get(obj, key);
  assert_true(json_is_integer(v));
  return json_integer_value(v);
}

static json_t *site_named(json_t *report, const char *fn) {
  size_t i;
  json_t *s;
  json_array_foreach(json_object_get(report, "call_sites"), i, s) {
    const char *f = str_of(s, "function");
    if (f && strcmp(f, fn) == 0)
      return s;
  }
  return NULL;
}

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* ---- inlined frames ------------------------------------------------------ */

/* What addr2line -f -i says of the program's address `offset`: up to max
 * (function, file:line) pairs, innermost first. -1 without addr2line. */
static int addr2line(unsigned long offset, text_frame *out, int max) {
  if (system("command -v addr2line >/dev/null 2>&1") != 0)
    return -1;
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "addr2line -f -i -e '%s' 0x%lx", REPORT_TARGET,
           offset);
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  int n = 0;
  char fn[128], loc[256];
  while (n < max && fgets(fn, sizeof fn, p) && fgets(loc, sizeof loc, p)) {
    fn[strcspn(fn, "\n")] = '\0';
    loc[strcspn(loc, " \n")] = '\0'; /* "(discriminator N)" cut off */
    memcpy(out[n].function, fn, sizeof fn);
    char *colon = strrchr(loc, ':');
    out[n].line = colon ? atoi(colon + 1) : 0;
    if (colon)
      *colon = '\0';
    memcpy(out[n].file, loc, sizeof loc);
    n++;
  }
  pclose(p);
  return n;
}

static void test_inlined_function_is_a_frame_of_its_own(void **state) {
  (void)state;
  const char *p = tmp_path("inline.json");
  shim_result r;
  json_t *j = run_target(NULL, p, "frames=4", &r);
  assert_non_null(j);
  long long nap_line = shim_out_value(r.out, "nap_line");
  long long call_line = shim_out_value(r.out, "call_line");
  long long base = shim_out_value(r.out, "base");
  assert_true(nap_line > 0 && call_line > nap_line);

  /* Text: "#k PC in nap_ms report_target.c:<nanosleep's line>" and then
   * "#k+1 PC in long_sleeper report_target.c:<nap_ms's call>", one
   * address for both (under a sanitizer its interceptor may come first). */
  lines l;
  lines_of(r.err, &l);
  text_frame inner = {0}, outer = {0};
  int found = 0;
  for (int i = 0; i + 1 < l.n && !found; i++)
    found = parse_frame(l.at[i], &inner) &&
            strcmp(inner.function, "nap_ms") == 0 &&
            parse_frame(l.at[i + 1], &outer);
  assert_true(found);
  assert_string_equal(outer.function, "long_sleeper");
  assert_string_equal(base_name(inner.file), "report_target.c");
  assert_int_equal(inner.line, nap_line);
  assert_string_equal(base_name(outer.file), "report_target.c");
  assert_int_equal(outer.line, call_line);
  assert_true(inner.pc == outer.pc);

  /* What addr2line -i says of the same address (the line of a return
   * address is that of the call: pc - 1). */
  text_frame ref[4];
  int n = addr2line(inner.pc - (unsigned long)base - 1, ref, 4);
  if (n >= 0) {
    assert_true(n >= 2);
    assert_string_equal(ref[0].function, inner.function);
    assert_string_equal(base_name(ref[0].file), base_name(inner.file));
    assert_int_equal(ref[0].line, inner.line);
    assert_string_equal(ref[1].function, outer.function);
    assert_int_equal(ref[1].line, outer.line);
  } else {
    print_message("addr2line not found: its comparison is skipped\n");
  }

  /* JSON: the same two frames, the inner one marked inlined. */
  json_t *frames = json_object_get(site_named(j, "nanosleep"), "frames");
  size_t k;
  json_t *f;
  int seen = 0;
  json_array_foreach(frames, k, f) {
    const char *fn = str_of(f, "function");
    if (!fn || strcmp(fn, "nap_ms") != 0)
      continue;
    json_t *next = json_array_get(frames, k + 1);
    assert_true(json_is_true(json_object_get(f, "inlined")));
    assert_int_equal(int_of(f, "line"), nap_line);
    assert_string_equal(str_of(next, "function"), "long_sleeper");
    assert_true(json_is_false(json_object_get(next, "inlined")));
    assert_int_equal(int_of(next, "line"), call_line);
    seen = 1;
    break;
  }
  assert_true(seen);
  free(l.copy);
  json_decref(j);
  shim_result_free(&r);
}

/* ---- order, summary, hints ----------------------------------------------- */

static void test_call_sites_come_by_blocked_time(void **state) {
  (void)state;
  const char *p = tmp_path("order.json");
  shim_result r;
  json_t *j = run_target(NULL, p, NULL, &r);
  assert_non_null(j);
  /* nanosleep 3 x 20 ms, poll 1 x 36 ms, usleep 5 x 1 ms: by time, not by
   * count. */
  static const char *const want[] = {"nanosleep", "poll", "usleep"};
  json_t *sites = json_object_get(j, "call_sites");
  assert_int_equal(json_array_size(sites), 3);
  for (size_t i = 0; i < 3; i++)
    assert_string_equal(str_of(json_array_get(sites, i), "function"), want[i]);
  lines l;
  lines_of(r.err, &l);
  int k = 0;
  for (int i = 0; i < l.n; i++) {
    text_site t;
    if (!parse_site(l.at[i], &t))
      continue;
    assert_true(k < 3);
    assert_string_equal(t.function, want[k]);
    k++;
  }
  assert_int_equal(k, 3);
  free(l.copy);
  json_decref(j);
  shim_result_free(&r);
}

static void test_summary_line_closes_the_report(void **state) {
  (void)state;
  const char *p = tmp_path("summary.json");
  shim_result r;
  json_t *j = run_target(NULL, p, NULL, &r);
  assert_non_null(j);
  lines l;
  lines_of(r.err, &l);
  assert_true(l.n > 0);
  const char *last = l.at[l.n - 1];
  unsigned long long calls;
  char blocked[32], starved[32], how[4], where[300];
  assert_int_equal(sscanf(last,
                          "SUMMARY: blockwatch: %llu blocking calls on pool "
                          "workers (%31s ms), starvation delay %31s ms; "
                          "worst: nanosleep %3s %299s",
                          &calls, blocked, starved, how, where),
                   5);
  assert_int_equal(calls, 9);
  json_t *calls_j = json_object_get(j, "blocking_calls");
  assert_string_equal(blocked, ms_of(json_object_get(calls_j, "blocked_ms")));
  /* Where nanosleep was called; under a sanitizer that intercepts it, the
   * interceptor called it ("in FUNCTION" when it has no line). */
  char want[64];
  snprintf(want, sizeof want, "report_target.c:%lld",
           shim_out_value(r.out, "nap_line"));
  if (!SAN_PRELOAD[0]) {
    assert_string_equal(how, "at");
    assert_string_equal(base_name(where), want);
  }
  free(l.copy);
  json_decref(j);
  shim_result_free(&r);
}

static void test_clean_run_summary_says_zero(void **state) {
  (void)state;
  const char *p = tmp_path("clean.json");
  shim_result r;
  json_t *j = run_target("clean", p, "verbosity=1", &r);
  assert_non_null(j);
  lines l;
  lines_of(r.err, &l);
  assert_true(l.n > 0);
  assert_string_equal(l.at[l.n - 1],
                      "SUMMARY: blockwatch: 0 blocking calls on pool workers "
                      "(0.000 ms), starvation delay 0.000 ms; worst: none");
  assert_true(
      json_is_null(json_object_get(json_object_get(j, "summary"), "worst")));
  free(l.copy);
  json_decref(j);
  shim_result_free(&r);

  /* Quiet by default: nothing at all on stderr when nothing blocked. */
  j = run_target("clean", p, NULL, &r);
  json_decref(j);
  assert_int_equal(r.err[0], '\0');
  shim_result_free(&r);
}

/* The rules name the hint: a rule's own hint=, else its category's. */
static void test_each_site_carries_the_fix_hint_of_its_rule(void **state) {
  (void)state;
  const char *rules = tmp_path("hints.rules");
  FILE *f = fopen(rules, "w");
  assert_non_null(f);
  fputs("blocking:nanosleep category=sleep message=\"nanosleep() parks\" "
        "hint=\"nap in a timer callback\"\n"
        "blocking:usleep category=sleep message=\"usleep() parks\"\n"
        "blocking:poll category=io message=\"poll() waits\" "
        "hint=\"let the event loop poll\"\n",
        f);
  fclose(f);
  char extra[700];
  snprintf(extra, sizeof extra, "default_rules=0:rules=%s", rules);
  const char *p = tmp_path("hints.json");
  shim_result r;
  json_t *j = run_target(NULL, p, extra, &r);
  assert_non_null(j);
  const char *sleep_hint =
      "use bw_delay() and continue in bw_then() instead of sleeping";
  assert_string_equal(str_of(site_named(j, "nanosleep"), "hint"),
                      "nap in a timer callback");
  assert_string_equal(str_of(site_named(j, "poll"), "hint"),
                      "let the event loop poll");
  assert_string_equal(str_of(site_named(j, "usleep"), "hint"), sleep_hint);
  /* Text: each site's hint on the line after its last frame. */
  lines l;
  lines_of(r.err, &l);
  int hints = 0;
  json_t *sites = json_object_get(j, "call_sites");
  for (int i = 0; i < l.n; i++) {
    text_site t;
    if (!parse_site(l.at[i], &t))
      continue;
    int k = i + 1;
    text_frame fr;
    while (k < l.n && parse_frame(l.at[k], &fr))
      k++;
    assert_true(k < l.n);
    char want[300];
    snprintf(want, sizeof want, "    hint: %s",
             str_of(json_array_get(sites, (size_t)hints), "hint"));
    assert_string_equal(l.at[k], want);
    hints++;
  }
  assert_int_equal(hints, 3);
  free(l.copy);
  json_decref(j);
  shim_result_free(&r);
}

/* ---- calls on other threads ---------------------------------------------- */

static void test_other_threads_broken_down_by_function(void **state) {
  (void)state;
  shim_result r;
  json_t *j = run_target("others", tmp_path("others.json"), NULL, &r);
  assert_non_null(j);
  json_t *calls = json_object_get(j, "blocking_calls");
  json_t *by = json_object_get(calls, "on_other_threads_by_function");
  assert_true(json_is_array(by));
  /* All of them, most calls first, adding up to the total. */
  long long sum = 0, prev = -1, usleeps = 0, polls = 0;
  for (size_t i = 0; i < json_array_size(by); i++) {
    json_t *e = json_array_get(by, i);
    long long n = int_of(e, "count");
    assert_true(n > 0);
    if (prev >= 0)
      assert_true(n <= prev);
    prev = n;
    sum += n;
    if (strcmp(str_of(e, "function"), "usleep") == 0)
      usleeps = n;
    if (strcmp(str_of(e, "function"), "poll") == 0)
      polls = n;
  }
  assert_int_equal(sum, int_of(calls, "on_other_threads"));
  assert_int_equal(usleeps, 7);
  assert_int_equal(polls, 3);
  assert_string_equal(str_of(json_array_get(by, 0), "function"), "usleep");
  /* The text names the same top five, in the same order and counts. */
  char want[512] = "on other threads: ";
  size_t shown = json_array_size(by) < 5 ? json_array_size(by) : 5;
  for (size_t i = 0; i < shown; i++) {
    json_t *e = json_array_get(by, i);
    char part[96];
    snprintf(part, sizeof part, "%s%s() x%lld", i ? ", " : "",
             str_of(e, "function"), int_of(e, "count"));
    strcat(want, part);
  }
  if (!strstr(r.err, want))
    fail_msg("no '%s' in:\n%s", want, r.err);
  json_decref(j);
  shim_result_free(&r);
}

/* ---- one set of numbers -------------------------------------------------- */

/* Checks every number of the text report against the JSON of one run. */
static void text_matches_json(const char *err, json_t *j) {
  lines l;
  lines_of(err, &l);
  json_t *calls = json_object_get(j, "blocking_calls");
  json_t *pools = json_object_get(j, "pools");
  json_t *sites = json_object_get(j, "call_sites");
  json_t *summary = json_object_get(j, "summary");
  size_t pool = 0, site = 0, frame = 0;
  int headers = 0, summaries = 0;
  json_t *cur = NULL;
  for (int i = 0; i < l.n; i++) {
    const char *s = l.at[i];
    unsigned long long a, b, c;
    char x[32], y[32], z[32], name[64];
    text_site t;
    text_frame f;
    if (sscanf(s,
               "%llu blocking call(s) on pool workers, %31s ms blocked; %llu "
               "on other threads",
               &a, x, &b) == 3) {
      assert_int_equal(a, int_of(calls, "on_workers"));
      assert_string_equal(x, ms_of(json_object_get(calls, "blocked_ms")));
      assert_int_equal(b, int_of(calls, "on_other_threads"));
      headers++;
    } else if (sscanf(s,
                      "pool '%63[^']': %llu workers, peak %llu blocked, all "
                      "blocked for %31s ms, starvation delay %31s ms over "
                      "%llu item(s) (max %31s ms)",
                      name, &a, &b, x, y, &c, z) == 7) {
      json_t *p = json_array_get(pools, pool++);
      json_t *starv = json_object_get(p, "starvation_delay_ms");
      assert_string_equal(name, str_of(p, "name"));
      assert_int_equal(a, int_of(p, "workers"));
      assert_int_equal(b, int_of(p, "peak_blocked_workers"));
      assert_string_equal(x, ms_of(json_object_get(p, "all_blocked_ms")));
      assert_string_equal(y, ms_of(json_object_get(starv, "total")));
      assert_int_equal(c, int_of(starv, "items"));
      assert_string_equal(z, ms_of(json_object_get(starv, "max")));
    } else if (parse_site(s, &t)) {
      cur = json_array_get(sites, site++);
      frame = 0;
      assert_string_equal(t.function, str_of(cur, "function"));
      assert_int_equal(t.count, int_of(cur, "count"));
      assert_string_equal(t.ms, ms_of(json_object_get(cur, "blocked_ms")));
    } else if (parse_frame(s, &f)) {
      json_t *jf = json_array_get(json_object_get(cur, "frames"), frame++);
      assert_non_null(jf);
      assert_string_equal(f.function, str_of(jf, "function"));
      if (f.file[0]) {
        assert_string_equal(f.file, str_of(jf, "file"));
        assert_int_equal(f.line, int_of(jf, "line"));
      }
    } else if (sscanf(s,
                      "SUMMARY: blockwatch: %llu blocking call%*[s] on pool "
                      "workers (%31s ms), starvation delay %31s ms;",
                      &a, x, y) == 3 ||
               sscanf(s,
                      "SUMMARY: blockwatch: %llu blocking call on pool "
                      "workers (%31s ms), starvation delay %31s ms;",
                      &a, x, y) == 3) {
      assert_int_equal(a, int_of(summary, "on_workers"));
      assert_string_equal(x, ms_of(json_object_get(summary, "blocked_ms")));
      assert_string_equal(
          y, ms_of(json_object_get(summary, "starvation_delay_ms")));
      summaries++;
    }
  }
  assert_int_equal(headers, 1);
  assert_int_equal(summaries, 1);
  assert_int_equal(pool, json_array_size(pools));
  assert_true(site > 0);
  assert_int_equal(site, json_array_size(sites));
  free(l.copy);
}

static void test_text_and_json_give_the_same_numbers(void **state) {
  (void)state;
  const char *p = tmp_path("same.json");
  shim_result r;
#ifdef STARVATION_PROBE
  /* A runtime pool that starves: every pool number is nonzero. */
  char *argv[] = {STARVATION_PROBE, "--off-only", NULL};
  char options[800];
  snprintf(options, sizeof options, "report=both:report_path=%s", p);
  unlink(p);
  run(argv, options, &r);
  json_t *j = shim_load_json(p);
#else
  json_t *j = run_target(NULL, p, NULL, &r);
#endif
  assert_non_null(j);
  text_matches_json(r.err, j);
  json_decref(j);
  shim_result_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_inlined_function_is_a_frame_of_its_own),
      cmocka_unit_test(test_call_sites_come_by_blocked_time),
      cmocka_unit_test(test_summary_line_closes_the_report),
      cmocka_unit_test(test_clean_run_summary_says_zero),
      cmocka_unit_test(test_each_site_carries_the_fix_hint_of_its_rule),
      cmocka_unit_test(test_text_and_json_give_the_same_numbers),
      cmocka_unit_test(test_other_threads_broken_down_by_function),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
