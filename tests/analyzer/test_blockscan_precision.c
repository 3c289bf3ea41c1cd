/* test_blockscan_precision.c - blockscan on tests/analyzer/fixtures/precision:
 * function pointers resolved per call site and per struct type, confidence,
 * one finding per blocking call site, old baselines, the "no callback"
 * notice, cold paths, several programs in one database, GObject defaults
 * that every implementation overrides, a method calling a dispatch wrapper
 * on its own object.
 *
 * Each test names the fixture file it reads; each file's header says what
 * it shows.
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
#include <unistd.h>

#define PRECISION FIXTURES "/precision"
#define TIMEOUT 120

/* Runs blockscan in the fixture directory; args end with NULL. */
static run_result scan(const char *const *args) {
  const char *argv[32] = {BLOCKSCAN_EXE};
  size_t n = 1;
  for (; args[n - 1] && n < 31; n++)
    argv[n] = args[n - 1];
  argv[n] = NULL;
  return run_tool(PRECISION, argv, TIMEOUT);
}

/* How many times `needle` occurs in `haystack`. */
static int count_of(const char *haystack, const char *needle) {
  int n = 0;
  for (const char *at = strstr(haystack, needle); at;
       at = strstr(at + 1, needle))
    n++;
  return n;
}

static void test_parameter_call_reaches_only_what_was_passed(void **state) {
  (void)state;
  const char *args[] = {"param.c", "--color=never", "--", NULL};
  run_result r = scan(args);
  assert_int_equal(r.status, 1);
  assert_true(contains(r.out, "param.c:7:3: warning: 'sleep' blocks a pool "
                              "worker: reached from callback 'sleepy_cb'"));
  assert_true(contains(r.out, "'run_it' calls through 'what' to 'nap'"));
  assert_false(contains(r.out, "quiet_cb"));
  run_free(&r);
}

static void test_recursion_through_a_parameter_ends(void **state) {
  (void)state;
  const char *args[] = {"recurse.c", "--color=never", "--", NULL};
  run_result r = scan(args);
  assert_int_equal(r.status, 1);
  assert_true(contains(r.out, "recurse.c:6:3: warning: 'sleep' blocks a pool "
                              "worker: reached from callback 'rec_cb'"));
  assert_true(contains(r.out, "'walk_list' calls through 'fn' to 'nap'"));
  run_free(&r);
}

static void test_callback_field_is_read_per_struct_type(void **state) {
  (void)state;
  const char *args[] = {"fields.c", "--color=never", "--", NULL};
  run_result r = scan(args);
  assert_int_equal(r.status, 1);
  assert_true(contains(r.out, "callback 'on_exit_real' handed to 'uv_spawn'"));
  assert_false(contains(r.out, "unrelated_exit"));
  run_free(&r);
}

static void test_wide_indirect_call_is_low_confidence(void **state) {
  (void)state;
  const char *hidden[] = {"vtable.c", "--", NULL};
  run_result r = scan(hidden);
  assert_int_equal(r.status, 0); /* low findings alone do not make exit 1 */
  assert_string_equal(r.out, "");
  assert_string_equal(r.err, "blockscan: 1 blocking call reached with low "
                             "confidence only is not shown (--confidence low "
                             "shows it)\n");
  run_free(&r);
  const char *low[] = {"vtable.c",      "--confidence", "low",
                       "--color=never", "--",           NULL};
  r = scan(low);
  assert_int_equal(r.status, 1);
  assert_true(contains(r.out, "[blocking-sleep, low confidence]"));
  assert_true(contains(r.out, "'unref_cb' calls through 'k->finalize' to "
                              "'fin_slow' (one of 5 possible targets)"));
  run_free(&r);
  const char *json[] = {
      "vtable.c", "--confidence=low", "--format", "json", "--", NULL};
  r = scan(json);
  assert_int_equal(r.status, 1);
  assert_true(contains(r.out, "\"confidence\": \"low\""));
  assert_true(contains(r.out, "\"through\": \"k->finalize\""));
  assert_true(contains(r.out, "\"targets\": 5"));
  run_free(&r);
  const char *sarif[] = {"vtable.c", "--confidence", "low", "--format",
                         "sarif",    "--",           NULL};
  r = scan(sarif);
  assert_int_equal(r.status, 1);
  assert_true(contains(r.out, "\"level\": \"note\""));
  run_free(&r);
  const char *bad[] = {"vtable.c", "--confidence", "medium", "--", NULL};
  r = scan(bad);
  assert_int_equal(r.status, 2);
  assert_true(contains(r.err, "--confidence must be high or low"));
  run_free(&r);
}

/* GObject defaults that every implementation overrides are low
 * confidence; an override, and a default one implementation keeps, are
 * not. */
static void test_overridden_gobject_defaults_are_low_confidence(void **state) {
  (void)state;
  const char *args[] = {"gdefaults.c", "--color=never", "--", NULL};
  run_result r = scan(args);
  assert_int_equal(r.status, 1);
  assert_true(contains(r.out, "gdefaults.c:44:3: warning: 'usleep'"));
  assert_true(contains(r.out, "gdefaults.c:56:3: warning: 'sleep'"));
  assert_false(contains(r.out, "gdefaults.c:31:"));
  assert_false(contains(r.out, "gdefaults.c:76:"));
  assert_true(contains(r.err, "2 blocking calls reached with low confidence"));
  run_free(&r);
  const char *low[] = {"gdefaults.c",   "--confidence", "low",
                       "--color=never", "--",           NULL};
  r = scan(low);
  assert_int_equal(r.status, 1);
  assert_true(contains(r.out, "gdefaults.c:31:3: warning: 'sleep' blocks a "
                              "pool worker: reached from callback 'foo_cb' "
                              "[blocking-sleep, low confidence]"));
  assert_true(contains(r.out, "gdefaults.c:76:3: warning: 'sleep' blocks a "
                              "pool worker: reached from callback 'bar_cb' "
                              "[blocking-sleep, low confidence]"));
  assert_true(contains(r.out, "gdefaults.c:56:3: warning: 'sleep' blocks a "
                              "pool worker: reached from callback 'qux_cb' "
                              "[blocking-sleep]"));
  run_free(&r);
}

/* A method calling a dispatch wrapper on its own object reaches the
 * wrapper's slot in the types that can run the method only: when none of
 * their methods does what the wrapper's rule says, the rule is low
 * confidence and those methods are walked; a call on another object, a
 * type whose method is unknown and one whose method does it (a subclass's
 * too) keep the rule. */
static void test_a_method_on_its_own_object_reaches_its_types(void **state) {
  (void)state;
  const char *args[] = {"selfdisp.c",    "--rules", "selfdisp.rules",
                        "--color=never", "--",      NULL};
  run_result r = scan(args);
  assert_int_equal(r.status, 1);
  assert_true(contains(r.out, "selfdisp.c:71:3: warning: 'g_slow_next'"));
  assert_true(contains(r.out, "selfdisp.c:101:3: warning: 'usleep'"));
  assert_true(contains(r.out, "'g_wait_next' calls through "
                              "'g_wait_get_class(self)->next' to 'stay_next'"));
  assert_true(
      contains(r.out, "selfdisp.c:126:3: warning: 'g_resolver_lookup'"));
  assert_true(contains(r.out, "selfdisp.c:171:3: warning: 'g_map_lookup'"));
  assert_true(contains(r.out, "selfdisp.c:201:3: warning: 'g_open_lookup'"));
  assert_int_equal(count_of(r.out, "warning:"), 5);
  assert_true(contains(r.err, "4 blocking calls reached with low confidence"));
  run_free(&r);
  const char *low[] = {"selfdisp.c",   "--rules", "selfdisp.rules",
                       "--confidence", "low",     "--color=never",
                       "--",           NULL};
  r = scan(low);
  assert_int_equal(r.status, 1);
  assert_true(contains(r.out, "selfdisp.c:37:3: warning: 'g_enum_next' blocks "
                              "a pool worker: reached from callback 'enum_cb' "
                              "[blocking-dns, low confidence]"));
  assert_true(contains(r.out, "selfdisp.c:95:3: warning: 'g_wait_next' blocks "
                              "a pool worker: reached from callback 'wait_cb' "
                              "[blocking-dns, low confidence]"));
  assert_true(contains(r.out, "selfdisp.c:125:3: warning: 'g_resolver_lookup' "
                              "blocks a pool worker: reached from callback "
                              "'resolver_cb' [blocking-dns, low confidence]"));
  /* The methods of types that never run the callers are not reached. */
  assert_false(contains(r.out, "selfdisp.c:43:"));
  assert_false(contains(r.out, "selfdisp.c:144:"));
  assert_int_equal(count_of(r.out, "warning:"), 9);
  run_free(&r);
}

static void test_cold_paths_are_low_confidence(void **state) {
  (void)state;
  const char *args[] = {"cold.c", "--color=never", "--", NULL};
  run_result r = scan(args);
  assert_int_equal(r.status, 1);
  /* check() runs in the assertion's condition: that is not cold. */
  assert_true(contains(r.out, "cold.c:6:3: warning: 'usleep'"));
  assert_false(contains(r.out, "cold.c:12:3"));
  assert_false(contains(r.out, "cold.c:19:3"));
  run_free(&r);
  const char *low[] = {"cold.c",        "--confidence", "low",
                       "--color=never", "--",           NULL};
  r = scan(low);
  assert_int_equal(r.status, 1);
  assert_true(contains(r.out, "'cold_cb' calls 'die', which never returns"));
  assert_true(contains(r.out, "'cold_cb' calls 'g_return_if_fail_warning' in "
                              "an assertion's failure branch"));
  run_free(&r);
}

static void test_one_finding_per_site_lists_every_callback(void **state) {
  (void)state;
  const char *text[] = {"grouped.c", "--color=never", "--", NULL};
  run_result r = scan(text);
  assert_int_equal(r.status, 1);
  assert_int_equal(count_of(r.out, "warning:"), 1);
  assert_true(contains(r.out, "reached from 5 callbacks: cb_a, cb_b, cb_c "
                              "(and 2 more) [blocking-sleep]"));
  assert_true(contains(r.out, "'cb_a' calls 'shared_sleep'"));
  run_free(&r);
  const char *json[] = {"grouped.c", "--format", "json", "--", NULL};
  r = scan(json);
  assert_int_equal(r.status, 1);
  assert_true(contains(r.out, "\"version\": 2"));
  assert_int_equal(count_of(r.out, "\"rule\": "), 1);
  assert_int_equal(count_of(r.out, "\"chain_length\": "), 5);
  /* The keys of version 1 describe the shortest chain's callback. */
  assert_true(contains(r.out, "\"callback\": {\n        \"name\": \"cb_a\""));
  run_free(&r);
  const char *sarif[] = {"grouped.c", "--format", "sarif", "--", NULL};
  r = scan(sarif);
  assert_int_equal(r.status, 1);
  assert_int_equal(count_of(r.out, "\"ruleId\": "), 1);
  assert_int_equal(count_of(r.out, "handed to 'bw_submit' here"), 5);
  assert_true(contains(r.out, "\"codeFlows\""));
  run_free(&r);
}

/* grouped.baseline was written by blockscan before findings were grouped
 * (one line per callback): it still hides them all, and a baseline written
 * now is the same file. */
static void test_old_baseline_still_hides_its_findings(void **state) {
  (void)state;
  const char *apply[] = {"grouped.c", "--baseline", "grouped.baseline", "--",
                         NULL};
  run_result r = scan(apply);
  assert_int_equal(r.status, 0);
  assert_string_equal(r.out, "");
  run_free(&r);
  char path[] = "/tmp/blockscan-baseline-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  const char *write[] = {"grouped.c", "--write-baseline", path, "--", NULL};
  r = scan(write);
  assert_int_equal(r.status, 1);
  run_free(&r);
  char *written = read_file(path);
  char *old = read_file(PRECISION "/grouped.baseline");
  assert_non_null(written);
  assert_non_null(old);
  assert_string_equal(written, old);
  free(written);
  free(old);
  unlink(path);
}

static void test_no_callback_at_all_is_said_on_stderr(void **state) {
  (void)state;
  const char *args[] = {"nocb.c", "--", NULL};
  run_result r = scan(args);
  assert_int_equal(r.status, 0);
  assert_string_equal(r.out, "");
  assert_string_equal(r.err,
                      "blockscan: no callback handed to a pool or loop was "
                      "found in 1 translation unit; APIs without rules are "
                      "not seen (see --list-rules)\n");
  run_free(&r);
  const char *list[] = {"--list-rules", NULL};
  r = scan(list);
  assert_int_equal(r.status, 0);
  assert_true(contains(r.out, "entry bw_submit ("));
  assert_true(contains(r.out, "blocking sleep blocking-sleep ("));
  run_free(&r);
}

/* prog_a.c and prog_b.c are two programs (each defines main); both define
 * report() and log_line(). The whole database is read, as a user would. */
static void test_programs_keep_their_own_functions(void **state) {
  (void)state;
  const char *args[] = {"-p", ".", "--color=never", NULL};
  run_result r = scan(args);
  assert_int_equal(r.status, 1);
  /* prog_b's own callback still reaches its report(). */
  assert_true(contains(r.out, "prog_b.c:8:3: warning: 'sleep' blocks a pool "
                              "worker: reached from callback 'b_cb'"));
  /* prog_a's log_line() is logger.c's, the one TU it can be linked with. */
  assert_true(contains(r.out, "logger.c:7:3: warning: 'usleep' blocks a pool "
                              "worker: reached from callback 'a_cb'"));
  assert_false(contains(r.out, "prog_b.c:12:3"));
  assert_false(contains(r.out, "2 callbacks: a_cb, b_cb"));
  run_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parameter_call_reaches_only_what_was_passed),
      cmocka_unit_test(test_recursion_through_a_parameter_ends),
      cmocka_unit_test(test_callback_field_is_read_per_struct_type),
      cmocka_unit_test(test_wide_indirect_call_is_low_confidence),
      cmocka_unit_test(test_cold_paths_are_low_confidence),
      cmocka_unit_test(test_overridden_gobject_defaults_are_low_confidence),
      cmocka_unit_test(test_a_method_on_its_own_object_reaches_its_types),
      cmocka_unit_test(test_one_finding_per_site_lists_every_callback),
      cmocka_unit_test(test_old_baseline_still_hides_its_findings),
      cmocka_unit_test(test_no_callback_at_all_is_said_on_stderr),
      cmocka_unit_test(test_programs_keep_their_own_functions),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
