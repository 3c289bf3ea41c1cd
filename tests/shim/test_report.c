/* test_report.c - the shim's report as its readers see it: inlined frames
 * expanded (checked against addr2line -i).
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_inlined_function_is_a_frame_of_its_own),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
