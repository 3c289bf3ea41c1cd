/* cmocka tests of nonblocking: rules, the calls that make a descriptor
 * non-blocking: what they parse into, their errors (exact text), the
 * rollback of a failed load, and the setters the packs name.
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
  assert_int_equal(bw_rules_nonblock_count(rs), 0);
  bw_rules_free(rs);
}

static void test_nonblocking_rule_is_parsed(void **state) {
  (void)state;
  int rc;
  bw_rules *rs = seen_rules("nonblocking:fcntl fd=0 when=\"arg1 is F_SETFL=4\" "
                            "when=\"arg2 has O_NONBLOCK=0x800\"\n"
                            "nonblocking:socket fd=result api=net "
                            "when=\"arg1 has SOCK_NONBLOCK=0x800\"\n"
                            "nonblocking:make_nb fd=3\n"
                            "nonblocking:setblocking fd=0 when=\"arg1 is 0\" "
                            "otherwise=blocking\n"
                            "nonblocking:fopen fd=result path=0 under=/proc/\n",
                            &rc);
  assert_int_equal(rc, 0);
  assert_int_equal(bw_rules_nonblock_count(rs), 5);
  assert_string_equal(bw_rules_find_nonblock(rs, "fopen")->path_prefix,
                      "/proc/");
  assert_int_equal(bw_rules_find_nonblock(rs, "fopen")->path_arg, 0);
  assert_null(bw_rules_find_nonblock(rs, "setblocking")->path_prefix);
  assert_true(bw_rules_find_nonblock(rs, "setblocking")->otherwise_blocking);
  const bw_nonblock_rule *r = bw_rules_find_nonblock(rs, "fcntl");
  assert_non_null(r);
  assert_int_equal(r->fd_arg, 0);
  assert_int_equal(r->n_when, 2);
  assert_int_equal(r->when[0].kind, BW_COND_EQUALS);
  assert_int_equal(r->when[0].value, 4);
  assert_int_equal(r->when[1].kind, BW_COND_HAS_FLAG);
  assert_int_equal(r->when[1].arg, 2);
  assert_string_equal(r->api, "t");
  assert_int_equal(r->origin.line, 1);
  r = bw_rules_find_nonblock(rs, "socket");
  assert_int_equal(r->fd_arg, -1);
  assert_string_equal(r->api, "net");
  r = bw_rules_nonblock_at(rs, 2);
  assert_string_equal(r->function, "make_nb");
  assert_int_equal(r->fd_arg, 3);
  assert_int_equal(r->n_when, 0);
  assert_false(r->otherwise_blocking);
  assert_null(bw_rules_nonblock_at(rs, 5));
  assert_null(bw_rules_find_nonblock(rs, "read"));
  bw_rules_free(rs);
}

static void test_nonblocking_rule_errors(void **state) {
  (void)state;
  expect_error("nonblocking:f when=\"arg1 is 0\"\n",
               "t.rules:1:1: error: missing required key 'fd' in nonblocking "
               "rule for 'f'");
  expect_error("nonblocking:f fd=ret\n",
               "t.rules:1:18: error: bad value 'ret' for 'fd' (expected 0 to "
               "31, or result)");
  expect_error("nonblocking:f fd=0 when=\"arg1 maybe 0\"\n",
               "t.rules:1:25: error: bad condition 'arg1 maybe 0': expected "
               "'argN is ...' or 'argN has ...'");
  expect_error("nonblocking:f fd=0 unless=\"arg1 is 0\"\n",
               "t.rules:1:20: error: unknown key 'unless' in nonblocking rule");
  expect_error("nonblocking:f fd=0 when=\"arg1 is 0\" otherwise=open\n",
               "t.rules:1:47: error: unknown value 'open' for 'otherwise' "
               "(expected blocking)");
  expect_error("nonblocking:f fd=0 otherwise=blocking\n",
               "t.rules:1:20: error: 'otherwise' needs a 'when' condition");
  expect_error("nonblocking:f fd=0\nnonblocking:f fd=1\n",
               "t.rules:2:13: error: duplicate nonblocking rule for 'f' (first "
               "defined at t.rules:1)");
  expect_error("nonblocking:f fd=0 when=\"arg0 is 0\" when=\"arg1 is 0\" "
               "when=\"arg2 is 0\" when=\"arg3 is 0\" when=\"arg4 is 0\"\n",
               "t.rules:1:88: error: too many 'when' conditions (at most 4)");
  expect_error("nonblocking:f fd=result path=0\n",
               "t.rules:1:25: error: 'path' needs 'under'");
  expect_error("nonblocking:f fd=result under=/proc/\n",
               "t.rules:1:25: error: 'under' needs 'path'");
  expect_error("nonblocking:f fd=result path=x under=/proc/\n",
               "t.rules:1:30: error: bad value 'x' for 'path' (expected 0 to "
               "31)");
}

/* A failed load keeps none of its nonblocking rules, also the good ones
 * before the bad line. */
static void test_failed_load_keeps_no_nonblocking_rule(void **state) {
  (void)state;
  int rc;
  bw_rules *rs = seen_rules("nonblocking:a fd=0\n", &rc);
  assert_int_equal(rc, 0);
  const char *bad = "nonblocking:b fd=0\nnonblocking:c fd=x\n";
  assert_int_equal(bw_rules_load_string(rs, "u.rules", bad, strlen(bad)),
                   -EINVAL);
  assert_int_equal(bw_rules_nonblock_count(rs), 1);
  assert_null(bw_rules_find_nonblock(rs, "b"));
  assert_non_null(bw_rules_find_nonblock(rs, "a"));
  bw_rules_free(rs);
}

static void test_packs_name_the_setters(void **state) {
  (void)state;
  bw_rules *rs = bw_rules_create();
  assert_non_null(rs);
  assert_int_equal(bw_rules_load_default(rs, NULL), 0);
  static const char *const setters[] = {"fcntl",
                                        "ioctl",
                                        "socket",
                                        "accept4",
                                        "pipe2",
                                        "eventfd",
                                        "timerfd_create",
                                        "signalfd",
                                        "inotify_init1",
                                        "evutil_make_socket_nonblocking",
                                        "g_unix_set_fd_nonblocking",
                                        "uv_poll_init",
                                        "uv_poll_init_socket",
                                        "uv_pipe",
                                        "fopen",
                                        "open",
                                        "openat",
                                        NULL};
  for (size_t i = 0; setters[i]; i++)
    if (!bw_rules_find_nonblock(rs, setters[i]))
      fail_msg("no nonblocking rule for %s", setters[i]);
  const bw_nonblock_rule *ioctl = bw_rules_find_nonblock(rs, "ioctl");
  assert_int_equal(ioctl->when[0].value, 0x5421);
  assert_string_equal(ioctl->when[0].name, "FIONBIO");
  assert_string_equal(bw_rules_find_nonblock(rs, "fopen")->path_prefix,
                      "/proc/");
  bw_rules_free(rs);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_nonblocking_rule_is_parsed),
      cmocka_unit_test(test_nonblocking_rule_errors),
      cmocka_unit_test(test_failed_load_keeps_no_nonblocking_rule),
      cmocka_unit_test(test_packs_name_the_setters),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
