/* test_trace2svg.c - bw-trace2svg: the trace loader on the hand-written
 * fixture and on bad input, and the SVG it renders: well-formed XML (checked
 * with GLib's GMarkup parser) holding the expected lanes, spans and axis;
 * and the timeline committed for docs/tour.md is well-formed too.
 *
 * Invariants: every file a test writes lives under a fresh mkdtemp()
 * directory that the test removes; the fixture is never modified.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scratch.h"
#include "svg.h"
#include "trace.h"

#ifndef T2S_FIXTURE
#error "T2S_FIXTURE must name the trace fixture"
#endif
#ifndef T2S_BIN
#error "T2S_BIN must name the bw-trace2svg binary"
#endif
#ifndef T2S_DOC_SVG
#error "T2S_DOC_SVG must name docs/img/starvation_probe.svg"
#endif

/* What the GMarkup walk saw in an SVG document. */
typedef struct svg_facts {
  int svg_root;
  int lanes;
  int blocked;
  int waits;
  int counters;
  int axis;
  int ticks;
  GString *labels;    /* lane-label texts, each followed by '|' */
  GString *tooltips;  /* <title> texts, each followed by '|' */
  const char *in_cls; /* class of the text element being read, if any */
  int in_title;
} svg_facts;

static const char *attr(const char **names, const char **values,
                        const char *key) {
  for (int i = 0; names[i] != NULL; i++) {
    if (strcmp(names[i], key) == 0)
      return values[i];
  }
  return NULL;
}

static void on_start(GMarkupParseContext *ctx, const char *element,
                     const char **names, const char **values, gpointer data,
                     GError **error) {
  (void)ctx;
  (void)error;
  svg_facts *f = data;
  const char *cls = attr(names, values, "class");
  f->in_cls = NULL;
  f->in_title = strcmp(element, "title") == 0;
  if (strcmp(element, "svg") == 0)
    f->svg_root++;
  if (cls == NULL)
    return;
  if (strcmp(element, "g") == 0 && strcmp(cls, "lane") == 0)
    f->lanes++;
  else if (strcmp(element, "rect") == 0 && strcmp(cls, "span blocked") == 0)
    f->blocked++;
  else if (strcmp(element, "rect") == 0 && strcmp(cls, "span queue-wait") == 0)
    f->waits++;
  else if (strcmp(element, "path") == 0 && strcmp(cls, "counter") == 0)
    f->counters++;
  else if (strcmp(element, "g") == 0 && strcmp(cls, "axis") == 0)
    f->axis++;
  else if (strcmp(element, "text") == 0 && strcmp(cls, "tick") == 0)
    f->ticks++;
  else if (strcmp(element, "text") == 0 && strcmp(cls, "lane-label") == 0)
    f->in_cls = "lane-label";
}

static void on_text(GMarkupParseContext *ctx, const char *text, gsize len,
                    gpointer data, GError **error) {
  (void)ctx;
  (void)error;
  svg_facts *f = data;
  if (f->in_cls != NULL) {
    g_string_append_len(f->labels, text, (gssize)len);
    g_string_append_c(f->labels, '|');
  } else if (f->in_title) {
    g_string_append_len(f->tooltips, text, (gssize)len);
    g_string_append_c(f->tooltips, '|');
  }
}

static void on_end(GMarkupParseContext *ctx, const char *element, gpointer data,
                   GError **error) {
  (void)ctx;
  (void)element;
  (void)error;
  svg_facts *f = data;
  f->in_cls = NULL;
  f->in_title = 0;
}

/* Parses an SVG document; fails the test when it is not well-formed. */
static void parse_svg(const char *doc, size_t len, svg_facts *f) {
  memset(f, 0, sizeof *f);
  f->labels = g_string_new(NULL);
  f->tooltips = g_string_new(NULL);
  GMarkupParser parser = {
      .start_element = on_start, .end_element = on_end, .text = on_text};
  GMarkupParseContext *ctx = g_markup_parse_context_new(&parser, 0, f, NULL);
  GError *err = NULL;
  gboolean ok = g_markup_parse_context_parse(ctx, doc, (gssize)len, &err) &&
                g_markup_parse_context_end_parse(ctx, &err);
  if (!ok)
    fail_msg("SVG is not well-formed: %s", err ? err->message : "?");
  g_markup_parse_context_free(ctx);
}

static void free_facts(svg_facts *f) {
  g_string_free(f->labels, TRUE);
  g_string_free(f->tooltips, TRUE);
}

/* Renders a trace into memory and reads the facts of the SVG back. The
 * caller frees *f with free_facts(). */
static void render_facts(const t2s_trace *t, svg_facts *f) {
  char *doc;
  size_t len;
  FILE *mem = open_memstream(&doc, &len);
  assert_non_null(mem);
  assert_int_equal(t2s_svg_render(t, NULL, mem), 0);
  assert_int_equal(fclose(mem), 0);
  parse_svg(doc, len, f);
  free(doc);
}

/* Writes `text` to scratch_dir/name and returns the path (static buffer). */
static const char *write_tmp(const char *name, const char *text) {
  static char path[128];
  snprintf(path, sizeof path, "%s/%s", scratch_dir, name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  assert_int_equal(fclose(f), 0);
  return path;
}

static void test_fixture_loads_lanes_spans_waits_counters(void **state) {
  (void)state;
  t2s_trace t;
  char err[256] = "";
  assert_int_equal(t2s_trace_load(T2S_FIXTURE, &t, err, sizeof err), 0);
  /* Sorted by name, numbers as numbers; the probe thread has no spans but
   * a thread_name, so it keeps its lane. */
  assert_int_equal(t.n_lanes, 4);
  assert_string_equal(t.lanes[0].name, "probe");
  assert_string_equal(t.lanes[1].name, "probe-off-0");
  assert_string_equal(t.lanes[2].name, "probe-off-1");
  assert_string_equal(t.lanes[3].name, "starvation_probe");
  assert_int_equal(t.lanes[1].n_spans, 4);
  assert_int_equal(t.lanes[2].n_spans, 4);
  assert_string_equal(t.lanes[1].spans[0].name, "nanosleep");
  /* A quoted ts is still a time; spans are in time order. */
  assert_true(t.lanes[1].spans[3].start_us == 1750300.0);
  /* The B/E pair on the main thread. */
  assert_int_equal(t.lanes[3].n_spans, 1);
  assert_string_equal(t.lanes[3].spans[0].name, "pthread_join");
  assert_true(t.lanes[3].spans[0].dur_us == 999800.0);
  /* The X queue wait and the instant one (wait_ms in args). */
  assert_int_equal(t.n_waits, 2);
  assert_true(t.waits[0].dur_us == 999800.0);
  assert_true(t.waits[1].start_us == 2000000.0 - 3500.0);
  assert_int_equal(t.n_counters, 2);
  assert_string_equal(t.counters[0].name, "blocked workers probe-off");
  assert_int_equal(t.counters[0].n_points, 3);
  assert_true(t.counters[1].max_value == 16.0);
  /* process_name, the flow event, the X without ts and the R mark. */
  assert_int_equal(t.n_ignored, 4);
  assert_true(t.t_begin == 1000000.0);
  assert_true(t.t_end == 2000400.0);
  t2s_trace_free(&t);
}

static void test_fixture_svg_is_well_formed_with_lanes_and_spans(void **state) {
  (void)state;
  t2s_trace t;
  assert_int_equal(t2s_trace_load(T2S_FIXTURE, &t, NULL, 0), 0);
  svg_facts f;
  render_facts(&t, &f);
  assert_int_equal(f.svg_root, 1);
  assert_int_equal(f.lanes, 4);
  assert_int_equal(f.blocked, 9);
  assert_int_equal(f.waits, 2);
  assert_int_equal(f.counters, 2);
  assert_int_equal(f.axis, 1);
  assert_true(f.ticks >= 4);
  assert_string_equal(f.labels->str, "waiting items|probe|probe-off-0|"
                                     "probe-off-1|starvation_probe|"
                                     "blocked workers probe-off (max 2)|"
                                     "queue length (max 16)|");
  assert_non_null(strstr(f.tooltips->str, "queue wait 999.8 ms"));
  assert_non_null(strstr(f.tooltips->str, "nanosleep 250.0 ms"));
  free_facts(&f);
  t2s_trace_free(&t);
}

static void test_names_from_the_trace_are_escaped(void **state) {
  (void)state;
  const char *path =
      write_tmp("escape.json",
                "{\"traceEvents\": ["
                "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":2,"
                "\"args\":{\"name\":\"<w&'\\\"1>\"}},"
                "{\"ph\":\"X\",\"name\":\"read</title>\",\"pid\":1,\"tid\":2,"
                "\"ts\":0,\"dur\":5}]}");
  t2s_trace t;
  assert_int_equal(t2s_trace_load(path, &t, NULL, 0), 0);
  svg_facts f;
  render_facts(&t, &f);
  assert_int_equal(f.lanes, 1);
  assert_int_equal(f.blocked, 1);
  assert_string_equal(f.labels->str, "<w&'\"1>|");
  assert_non_null(strstr(f.tooltips->str, "read</title>"));
  free_facts(&f);
  t2s_trace_free(&t);
}

static void test_empty_trace_renders_an_empty_timeline(void **state) {
  (void)state;
  const char *path = write_tmp("empty.json", "[]");
  t2s_trace t;
  assert_int_equal(t2s_trace_load(path, &t, NULL, 0), 0);
  assert_int_equal(t.n_lanes, 0);
  svg_facts f;
  render_facts(&t, &f);
  assert_int_equal(f.svg_root, 1);
  assert_int_equal(f.lanes + f.blocked + f.waits, 0);
  assert_int_equal(f.axis, 1);
  free_facts(&f);
  t2s_trace_free(&t);
}

static void test_bad_json_and_non_traces_are_errors(void **state) {
  (void)state;
  t2s_trace t;
  char err[256] = "";
  const char *path = write_tmp("bad.json", "{\"traceEvents\": [ {\"ph\":");
  assert_int_equal(t2s_trace_load(path, &t, err, sizeof err), -1);
  assert_non_null(strstr(err, "bad.json:1:"));
  path = write_tmp("other.json", "{\"events\": []}");
  assert_int_equal(t2s_trace_load(path, &t, err, sizeof err), -1);
  assert_non_null(strstr(err, "not a trace"));
  assert_int_equal(t2s_trace_load("/nonexistent/x.json", &t, err, sizeof err),
                   -1);
  /* The file and the reason, and no position where there is none. */
  assert_non_null(strstr(err, "/nonexistent/x.json"));
  assert_non_null(strstr(err, "No such file or directory"));
  assert_null(strstr(err, ":-1"));
}

/* Runs the command line; returns its exit status. */
static int run_tool(const char *args) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "'%s' %s 2>/dev/null", T2S_BIN, args);
  int status = system(cmd);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_command_writes_the_svg_and_reports_errors(void **state) {
  (void)state;
  char args[512], out[160];
  snprintf(out, sizeof out, "%s/out.svg", scratch_dir);
  snprintf(args, sizeof args, "-o '%s' --width 900 --title 'probe & co' '%s'",
           out, T2S_FIXTURE);
  assert_int_equal(run_tool(args), 0);
  gchar *doc;
  gsize len;
  assert_true(g_file_get_contents(out, &doc, &len, NULL));
  svg_facts f;
  parse_svg(doc, len, &f);
  assert_int_equal(f.lanes, 4);
  assert_int_equal(f.blocked, 9);
  assert_non_null(strstr(doc, "width=\"900\""));
  assert_non_null(strstr(doc, "probe &amp; co"));
  free_facts(&f);
  g_free(doc);

  assert_int_equal(run_tool("--width 12 x.json"), 2);
  assert_int_equal(run_tool("--bogus x.json"), 2);
  assert_int_equal(run_tool(""), 2);
  /* What the user gave cannot be read: 2, as blockscan and blockwatch. */
  assert_int_equal(run_tool("/nonexistent/trace.json"), 2);
  const char *bad = write_tmp("cli_bad.json", "{\"traceEvents\": [");
  snprintf(args, sizeof args, "'%s'", bad);
  assert_int_equal(run_tool(args), 2);
  /* A trace that loads but an SVG that cannot be written: 1. */
  snprintf(args, sizeof args, "-o /nonexistent/dir/out.svg '%s'", T2S_FIXTURE);
  assert_int_equal(run_tool(args), 1);
}

/* --version prints the tool's name and the project's version. */
static void test_command_prints_its_version(void **state) {
  (void)state;
  char cmd[1024], line[256] = "";
  snprintf(cmd, sizeof cmd, "'%s' --version", T2S_BIN);
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  assert_non_null(fgets(line, sizeof line, p));
  assert_int_equal(pclose(p), 0);
  assert_int_equal(strncmp(line, "bw-trace2svg ", 13), 0);
  assert_true(line[13] >= '0' && line[13] <= '9');
}

/* The picture docs/tour.md shows is well-formed and shows worker lanes with
 * blocked spans (it was rendered from a real shim trace and committed). */
static void test_committed_tour_picture_is_well_formed(void **state) {
  (void)state;
  gchar *doc;
  gsize len;
  assert_true(g_file_get_contents(T2S_DOC_SVG, &doc, &len, NULL));
  svg_facts f;
  parse_svg(doc, len, &f);
  assert_int_equal(f.svg_root, 1);
  assert_true(f.lanes >= 2);
  assert_true(f.blocked >= 2);
  /* The tour shows the starved probe item's wait (the shim traces it). */
  assert_true(f.waits >= 1);
  assert_int_equal(f.axis, 1);
  free_facts(&f);
  g_free(doc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fixture_loads_lanes_spans_waits_counters),
      cmocka_unit_test(test_fixture_svg_is_well_formed_with_lanes_and_spans),
      cmocka_unit_test(test_names_from_the_trace_are_escaped),
      cmocka_unit_test(test_empty_trace_renders_an_empty_timeline),
      cmocka_unit_test(test_bad_json_and_non_traces_are_errors),
      cmocka_unit_test(test_command_writes_the_svg_and_reports_errors),
      cmocka_unit_test(test_command_prints_its_version),
      cmocka_unit_test(test_committed_tour_picture_is_well_formed),
  };
  return cmocka_run_group_tests(tests, scratch_create, scratch_remove);
}
