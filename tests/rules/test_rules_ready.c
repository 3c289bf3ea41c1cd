/* cmocka tests of ready: rules, the entries whose callback runs when a
 * descriptor is ready: what they parse into, their errors (exact text),
 * the rollback of a failed load, and the entries the packs name.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "errors_seen.h"

/* `text` fails to load with one error, `expected`, and adds nothing. */
static void expect_error(const char *text, const char *expected) {
  bw_rules *rs = seen_error(text, expected);
  assert_int_equal(bw_rules_ready_count(rs), 0);
  bw_rules_free(rs);
}

static void test_ready_rule_is_parsed(void **state) {
  (void)state;
  int rc;
  bw_rules *rs = seen_rules("ready:my_watch param=0\n"
                            "# the descriptor comes second\n"
                            "ready:  my_watch_ctx param=1 api=mine\n",
                            &rc);
  assert_int_equal(rc, 0);
  assert_int_equal(bw_rules_ready_count(rs), 2);
  const bw_ready_rule *r = bw_rules_find_ready(rs, "my_watch");
  assert_non_null(r);
  assert_int_equal(r->param, 0);
  assert_string_equal(r->api, "t");
  assert_string_equal(r->origin.file, "t.rules");
  assert_int_equal(r->origin.line, 1);
  r = bw_rules_ready_at(rs, 1);
  assert_string_equal(r->function, "my_watch_ctx");
  assert_int_equal(r->param, 1);
  assert_string_equal(r->api, "mine");
  assert_int_equal(r->origin.line, 3);
  assert_null(bw_rules_ready_at(rs, 2));
  assert_null(bw_rules_find_ready(rs, "event_new"));
  assert_null(bw_rules_find_ready(NULL, "my_watch"));
  assert_int_equal(bw_rules_ready_count(NULL), 0);
  bw_rules_free(rs);
}

static void test_ready_rule_errors(void **state) {
  (void)state;
  expect_error("ready:f\n",
               "t.rules:1:1: error: missing required key 'param' in ready "
               "rule for 'f'");
  expect_error("ready:f param=fd\n",
               "t.rules:1:15: error: bad value 'fd' for 'param' (expected 0 "
               "to 31)");
  expect_error("ready:f param=32\n",
               "t.rules:1:15: error: bad value '32' for 'param' (expected 0 "
               "to 31)");
  expect_error("ready:f param=0 arg=2\n",
               "t.rules:1:17: error: unknown key 'arg' in ready rule");
  expect_error("ready:1f param=0\n",
               "t.rules:1:7: error: invalid function name '1f'");
  expect_error("ready:f param=0\nready:f param=1\n",
               "t.rules:2:7: error: duplicate ready rule for 'f' (first "
               "defined at t.rules:1)");
}

/* The source forms: a maker (source=result, with the callback's param)
 * and an entry registering the callback of the source in an argument. */
static void test_ready_source_rules_are_parsed(void **state) {
  (void)state;
  int rc;
  bw_rules *rs = seen_rules("ready:my_fd_source_new param=1 source=result\n"
                            "ready:my_set_cb source=0\n"
                            "ready:my_watch param=0\n",
                            &rc);
  assert_int_equal(rc, 0);
  const bw_ready_rule *r = bw_rules_find_ready(rs, "my_fd_source_new");
  assert_non_null(r);
  assert_int_equal(r->source, BW_READY_SOURCE_RESULT);
  assert_int_equal(r->param, 1);
  r = bw_rules_find_ready(rs, "my_set_cb");
  assert_int_equal(r->source, 0);
  assert_int_equal(r->param, -1);
  r = bw_rules_find_ready(rs, "my_watch");
  assert_int_equal(r->source, BW_READY_NO_SOURCE);
  assert_int_equal(r->param, 0);
  bw_rules_free(rs);
}

static void test_ready_source_rule_errors(void **state) {
  (void)state;
  expect_error("ready:f source=result\n",
               "t.rules:1:1: error: missing required key 'param' in ready "
               "rule for 'f'");
  expect_error("ready:f source=0 param=1\n",
               "t.rules:1:18: error: 'param' with 'source=0': the parameter "
               "is the source maker's (its source=result rule)");
  expect_error("ready:f source=src\n",
               "t.rules:1:16: error: bad value 'src' for 'source' (expected "
               "0 to 31, or result)");
}

/* The test form: a function true when its argument is ready one way. */
static void test_ready_test_rules_are_parsed(void **state) {
  (void)state;
  int rc;
  bw_rules *rs = seen_rules("ready:my_can_read test=0 for=read\n"
                            "ready:my_can_write test=1 for=write\n"
                            "ready:my_watch param=0\n",
                            &rc);
  assert_int_equal(rc, 0);
  const bw_ready_rule *r = bw_rules_find_ready(rs, "my_can_read");
  assert_non_null(r);
  assert_int_equal(r->test, 0);
  assert_int_equal(r->test_write, 0);
  assert_int_equal(r->param, -1);
  assert_int_equal(r->source, BW_READY_NO_SOURCE);
  r = bw_rules_find_ready(rs, "my_can_write");
  assert_int_equal(r->test, 1);
  assert_int_equal(r->test_write, 1);
  assert_int_equal(bw_rules_find_ready(rs, "my_watch")->test, -1);
  bw_rules_free(rs);
}

static void test_ready_test_rule_errors(void **state) {
  (void)state;
  expect_error("ready:f test=0\n",
               "t.rules:1:1: error: missing required key 'for' in ready "
               "rule for 'f'");
  expect_error("ready:f for=read\n",
               "t.rules:1:9: error: 'for' needs 'test=N'");
  expect_error("ready:f test=0 for=send\n",
               "t.rules:1:20: error: bad value 'send' for 'for' (expected "
               "read or write)");
  expect_error("ready:f test=x for=read\n",
               "t.rules:1:14: error: bad value 'x' for 'test' (expected 0 "
               "to 31)");
  expect_error("ready:f test=0 for=read param=1\n",
               "t.rules:1:25: error: 'param' with 'test': a readiness test "
               "has no callback");
  expect_error("ready:f source=result test=0 for=read\n",
               "t.rules:1:9: error: 'source' with 'test': a readiness test "
               "has no callback");
}

/* A failed load keeps none of its ready rules, also the good ones before
 * the bad line; a rule of an earlier load is a duplicate too. */
static void test_failed_load_keeps_no_ready_rule(void **state) {
  (void)state;
  int rc;
  bw_rules *rs = seen_rules("ready:a param=0\n", &rc);
  assert_int_equal(rc, 0);
  const char *bad = "ready:b param=0\nready:c param=x\n";
  assert_int_equal(bw_rules_load_string(rs, "u.rules", bad, strlen(bad)),
                   -EINVAL);
  assert_int_equal(bw_rules_ready_count(rs), 1);
  assert_null(bw_rules_find_ready(rs, "b"));
  assert_non_null(bw_rules_find_ready(rs, "a"));
  const char *again = "ready:a param=1\n";
  assert_int_equal(bw_rules_load_string(rs, "u.rules", again, strlen(again)),
                   -EINVAL);
  assert_int_equal(bw_rules_find_ready(rs, "a")->param, 0);
  bw_rules_free(rs);
}

/* libevent's and GLib's fd callbacks receive their descriptor first. */
static void test_packs_name_the_readiness_entries(void **state) {
  (void)state;
  bw_rules *rs = bw_rules_create();
  assert_non_null(rs);
  assert_int_equal(bw_rules_load_default(rs, NULL), 0);
  static const char *const entries[] = {"event_new",          "event_assign",
                                        "event_set",          "g_unix_fd_add",
                                        "g_unix_fd_add_full", NULL};
  for (size_t i = 0; entries[i]; i++) {
    const bw_ready_rule *r = bw_rules_find_ready(rs, entries[i]);
    if (!r)
      fail_msg("no ready rule for %s", entries[i]);
    assert_int_equal(r->param, 0);
    if (!bw_rules_find_entry(rs, entries[i]))
      fail_msg("ready rule for %s, which is no entry", entries[i]);
  }
  assert_string_equal(bw_rules_find_ready(rs, "event_new")->api, "libevent");
  assert_string_equal(bw_rules_find_ready(rs, "g_unix_fd_add")->api, "glib");
  assert_null(bw_rules_find_ready(rs, "g_idle_add"));
  /* GSocket sources: made by one function, registered by others. */
  const bw_ready_rule *maker =
      bw_rules_find_ready(rs, "g_socket_create_source");
  assert_non_null(maker);
  assert_int_equal(maker->source, BW_READY_SOURCE_RESULT);
  assert_int_equal(maker->param, 0);
  assert_int_equal(bw_rules_find_ready(rs, "g_source_set_callback")->source, 0);
  assert_int_equal(bw_rules_find_ready(rs, "g_task_attach_source")->source, 1);
  /* Pollable streams' readiness tests. */
  const bw_ready_rule *test =
      bw_rules_find_ready(rs, "g_pollable_output_stream_is_writable");
  assert_non_null(test);
  assert_int_equal(test->test, 0);
  assert_int_equal(test->test_write, 1);
  test = bw_rules_find_ready(rs, "g_pollable_input_stream_is_readable");
  assert_non_null(test);
  assert_int_equal(test->test_write, 0);
  bw_rules_free(rs);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ready_rule_is_parsed),
      cmocka_unit_test(test_ready_rule_errors),
      cmocka_unit_test(test_ready_source_rules_are_parsed),
      cmocka_unit_test(test_ready_source_rule_errors),
      cmocka_unit_test(test_ready_test_rules_are_parsed),
      cmocka_unit_test(test_ready_test_rule_errors),
      cmocka_unit_test(test_failed_load_keeps_no_ready_rule),
      cmocka_unit_test(test_packs_name_the_readiness_entries),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
