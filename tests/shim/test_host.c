/* test_host.c - the shim leaves its host alone: no signal handler unless
 * asked (handle_fatal, interim_signal), and when asked every signal still
 * does what the program expects; the JSON report is valid UTF-8 whatever
 * the program is called.
 *
 * Invariants: host_target (and python3, when it is there) run under
 * LD_PRELOAD; each test checks the program's own view (its stdout, its
 * exit status) and the report only where one is written.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "shim_run.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *fmt(const char *f, ...)
    __attribute__((format(printf, 1, 2)));
static const char *fmt(const char *f, ...) {
  static char bufs[8][1200];
  static int next;
  char *b = bufs[next++ % 8];
  va_list ap;
  va_start(ap, f);
  vsnprintf(b, sizeof bufs[0], f, ap);
  va_end(ap);
  return b;
}

/* Runs host_target (or `program`, a name for it) with the scenario and
 * BLOCKWATCH_OPTIONS=options under the shim. */
static void run_host(const char *program, const char *scenario, const char *arg,
                     const char *options, shim_result *r) {
  char *argv[] = {(char *)(program ? program : HOST_TARGET), (char *)scenario,
                  (char *)arg, NULL};
  char *env[] = {(char *)fmt("BLOCKWATCH_OPTIONS=%s", options), NULL};
  assert_int_equal(shim_run(argv, env, 1, 60, r), 0);
  assert_false(r->timedout);
}

static const char *report_file(const char *name) {
  static char buf[600];
  shim_tmpfile(buf, sizeof buf, name);
  unlink(buf);
  return buf;
}

static void test_no_signal_handler_by_default(void **state) {
  (void)state;
  shim_result r;
  run_host(NULL, "dispositions", NULL, "report=none", &r);
  assert_true(r.exited);
  assert_int_equal(shim_out_value(r.out, "not_default"), 0);
  shim_result_free(&r);
}

static void test_raised_signal_with_default_action_kills(void **state) {
  (void)state;
  static const int sigs[] = {SIGUSR2, SIGUSR1, SIGTERM, SIGINT, SIGHUP};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
    shim_result r;
    run_host(NULL, "raise", fmt("%d", sigs[i]), "report=none", &r);
    assert_false(r.exited);
    assert_int_equal(r.status, sigs[i]);
    shim_result_free(&r);
  }
}

/* Python installs its KeyboardInterrupt handler only where it finds
 * SIG_DFL: under the shim it must print what it prints without it. */
static void test_python_finds_sigint_default(void **state) {
  (void)state;
  const char *py = "/usr/bin/python3";
  if (access(py, X_OK) != 0 || SAN_PRELOAD[0]) {
    fprintf(stderr, "skipped: %s\n",
            SAN_PRELOAD[0] ? "a sanitizer runtime in python3" : "no python3");
    skip();
  }
  char *argv[] = {(char *)py, "-c",
                  "import signal; print(signal.getsignal(signal.SIGINT))",
                  NULL};
  char *env[] = {"BLOCKWATCH_OPTIONS=report=none", NULL};
  shim_result plain, under;
  assert_int_equal(shim_run(argv, env, 0, 60, &plain), 0);
  assert_int_equal(shim_run(argv, env, 1, 60, &under), 0);
  assert_true(plain.exited && under.exited);
  assert_int_equal(under.status, plain.status);
  assert_string_equal(under.out, plain.out);
  assert_non_null(strstr(under.out, "default_int_handler"));
  shim_result_free(&plain);
  shim_result_free(&under);
}

static void test_handle_fatal_reports_then_dies_of_the_signal(void **state) {
  (void)state;
  const char *p = report_file("fatal.json");
  shim_result r;
  run_host(NULL, "raise", fmt("%d", SIGTERM),
           fmt("handle_fatal=1:report=json:report_path=%s", p), &r);
  assert_false(r.exited);
  assert_int_equal(r.status, SIGTERM);
  json_t *j = shim_load_json(p);
  assert_non_null(j);
  assert_true(json_is_false(json_object_get(j, "interim")));
  json_decref(j);
  shim_result_free(&r);
}

static void test_interim_signal_writes_a_report_and_goes_on(void **state) {
  (void)state;
  static const char *names[] = {"SIGUSR2", "USR1", "SIGWINCH", "10"};
  static const int sigs[] = {SIGUSR2, SIGUSR1, SIGWINCH, 10};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
    const char *p = report_file("interim.json");
    shim_result r;
    run_host(NULL, "raise", fmt("%d", sigs[i]),
             fmt("interim_signal=%s:report=json:report_path=%s", names[i], p),
             &r);
    assert_true(r.exited);
    assert_int_equal(r.status, 3);
    assert_null(strstr(r.err, "warning"));
    json_t *j = shim_load_json(p);
    assert_non_null(j);
    json_decref(j);
    shim_result_free(&r);
  }
}

/* The report of a program run under a name with bytes that are not UTF-8
 * (0xff, 0xfe, an overlong 0xe0 0x80) beside one that is (é): jansson's
 * loader, which refuses invalid UTF-8, reads it, and every bad byte is the
 * code point of its value. */
static void test_report_is_utf8_under_a_name_that_is_not(void **state) {
  (void)state;
  char link[600], want[700];
  shim_tmpfile(link, sizeof link, "host\xff\xfe-\xc3\xa9-\xe0\x80");
  snprintf(want, sizeof want, "%s", link);
  char *tail = strstr(want, "/host") + 5;
  snprintf(tail, sizeof want - (size_t)(tail - want), "%s",
           "\xc3\xbf\xc3\xbe-\xc3\xa9-\xc3\xa0\xc2\x80");
  unlink(link);
  assert_int_equal(symlink(HOST_TARGET, link), 0);
  const char *p = report_file("utf8.json");
  shim_result r;
  run_host(link, "sleep", NULL, fmt("report=json:report_path=%s", p), &r);
  assert_true(r.exited);
  assert_int_equal(r.status, 0);
  json_t *j = shim_load_json(p);
  assert_non_null(j);
  assert_string_equal(json_string_value(json_object_get(j, "program")), want);
  json_decref(j);
  shim_result_free(&r);
  unlink(link);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_no_signal_handler_by_default),
      cmocka_unit_test(test_raised_signal_with_default_action_kills),
      cmocka_unit_test(test_python_finds_sigint_default),
      cmocka_unit_test(test_handle_fatal_reports_then_dies_of_the_signal),
      cmocka_unit_test(test_interim_signal_writes_a_report_and_goes_on),
      cmocka_unit_test(test_report_is_utf8_under_a_name_that_is_not),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
