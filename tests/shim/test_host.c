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

/* Runs host_target (or `program`, a name for it) under the shim with the
 * scenario, its signal argument (0: none, and then no further one) and
 * BLOCKWATCH_OPTIONS: options, and a JSON report to report_path (NULL:
 * report=none), which is also the scenario's next argument. */
static void run_host(const char *program, const char *scenario, int sig,
                     const char *options, const char *report_path,
                     shim_result *r) {
  char arg[16], env_var[1400];
  snprintf(arg, sizeof arg, "%d", sig);
  char *argv[] = {(char *)(program ? program : HOST_TARGET), (char *)scenario,
                  sig ? arg : NULL, (char *)report_path, NULL};
  if (report_path)
    snprintf(env_var, sizeof env_var,
             "BLOCKWATCH_OPTIONS=report=json:report_path=%s:%s", report_path,
             options);
  else
    snprintf(env_var, sizeof env_var, "BLOCKWATCH_OPTIONS=report=none:%s",
             options);
  char *env[] = {env_var, NULL};
  assert_int_equal(shim_run(argv, env, 1, 60, r), 0);
  assert_false(r->timedout);
}

/* The report at path (which jansson's loader accepted) has this many
 * calls off the workers; interim says which kind it must be. */
static void check_report(const char *path, long long calls, int interim) {
  json_t *j = shim_load_json(path);
  assert_non_null(j);
  assert_int_equal(shim_calls(j, "on_other_threads"), calls);
  assert_true(json_is_boolean(json_object_get(j, "interim")));
  assert_int_equal(json_is_true(json_object_get(j, "interim")), interim);
  json_decref(j);
}

static const char *report_file(const char *name) {
  static char buf[600];
  shim_tmpfile(buf, sizeof buf, name);
  unlink(buf);
  return buf;
}

/* The dispositions host_target finds at start under the shim with these
 * options are the ones it finds without it (a sanitizer's own handlers
 * are in both). */
static void check_dispositions_as_without_the_shim(const char *options) {
  char *argv[] = {HOST_TARGET, "dispositions", NULL};
  shim_result plain, under;
  assert_int_equal(shim_run(argv, NULL, 0, 60, &plain), 0);
  run_host(NULL, "dispositions", 0, options, NULL, &under);
  assert_true(plain.exited && under.exited);
  assert_string_equal(under.out, plain.out);
  if (!SAN_PRELOAD[0])
    assert_int_equal(shim_out_value(under.out, "not_default"), 0);
  shim_result_free(&plain);
  shim_result_free(&under);
}

static void test_no_signal_handler_by_default(void **state) {
  (void)state;
  check_dispositions_as_without_the_shim("");
}

/* TSan answers a program's sigaction query from its own table, which
 * holds the shim's handler: the one place the handler shows. */
static void skip_under_tsan(void) {
  if (strstr(SAN_PRELOAD, "libtsan")) {
    fprintf(stderr, "skipped under TSan: it answers sigaction queries\n");
    skip();
  }
}

static void test_handlers_asked_for_are_not_seen(void **state) {
  (void)state;
  skip_under_tsan();
  check_dispositions_as_without_the_shim(
      "handle_fatal=1:interim_signal=SIGUSR2");
}

/* The program's own SIGTERM handler reads back and runs; signal(SIG_DFL)
 * returns it and leaves SIG_DFL to read; the raise that follows kills the
 * program with SIGTERM, the shim's handler back in place unseen writing
 * the report first (where no sanitizer's sigaction comes before ours). */
static void test_own_handler_kept_and_default_again_reports(void **state) {
  (void)state;
  skip_under_tsan();
  const char *p = report_file("own.json");
  shim_result r;
  run_host(NULL, "own", 0, "handle_fatal=1", p, &r);
  assert_int_equal(shim_out_value(r.out, "reads_own"), 1);
  assert_int_equal(shim_out_value(r.out, "own_ran"), 1);
  assert_int_equal(shim_out_value(r.out, "signal_returned_own"), 1);
  assert_int_equal(shim_out_value(r.out, "default_again"), 1);
  assert_false(r.exited);
  assert_int_equal(r.status, SIGTERM);
  if (!SAN_PRELOAD[0])
    check_report(p, 1, 0);
  shim_result_free(&r);
}

static void test_raised_signal_with_default_action_kills(void **state) {
  (void)state;
  static const int sigs[] = {SIGUSR2, SIGUSR1, SIGTERM, SIGINT, SIGHUP};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
    shim_result r;
    run_host(NULL, "raise", sigs[i], "", NULL, &r);
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
  shim_result plain;
  assert_int_equal(shim_run(argv, NULL, 0, 60, &plain), 0);
  assert_true(plain.exited);
  assert_non_null(strstr(plain.out, "default_int_handler"));
  static char *options[] = {
      "BLOCKWATCH_OPTIONS=report=none",
      "BLOCKWATCH_OPTIONS=report=none:handle_fatal=1:interim_signal=SIGUSR2"};
  for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
    char *env[] = {options[i], NULL};
    shim_result under;
    assert_int_equal(shim_run(argv, env, 1, 60, &under), 0);
    assert_true(under.exited);
    assert_int_equal(under.status, plain.status);
    assert_string_equal(under.out, plain.out);
    shim_result_free(&under);
  }
  shim_result_free(&plain);
}

static void test_handle_fatal_reports_then_dies_of_the_signal(void **state) {
  (void)state;
  const char *p = report_file("fatal.json");
  shim_result r;
  run_host(NULL, "raise", SIGTERM, "handle_fatal=1", p, &r);
  assert_false(r.exited);
  assert_int_equal(r.status, SIGTERM);
  check_report(p, 1, 0);
  shim_result_free(&r);
}

/* The interim report is the file as the program finds it right after the
 * raise (it moves it aside); the final one comes at exit. */
static void test_interim_signal_writes_a_report_and_goes_on(void **state) {
  (void)state;
  static const char *names[] = {"SIGUSR2", "USR1", "SIGWINCH", "10"};
  static const int sigs[] = {SIGUSR2, SIGUSR1, SIGWINCH, 10};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
    const char *p = report_file("interim.json");
    char option[64], interim[700];
    snprintf(option, sizeof option, "interim_signal=%s", names[i]);
    snprintf(interim, sizeof interim, "%s.interim", p);
    unlink(interim);
    shim_result r;
    run_host(NULL, "raise", sigs[i], option, p, &r);
    assert_true(r.exited);
    assert_int_equal(r.status, 3);
    assert_null(strstr(r.err, "warning"));
    check_report(interim, 1, 1);
    check_report(p, 1, 0);
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
  run_host(link, "sleep", 0, "", p, &r);
  assert_true(r.exited);
  assert_int_equal(r.status, 0);
  check_report(p, 1, 0);
  json_t *j = shim_load_json(p);
  assert_string_equal(json_string_value(json_object_get(j, "program")), want);
  json_decref(j);
  shim_result_free(&r);
  unlink(link);
}

/* The blockwatch command turns handle_fatal on: a SIGTERM still kills the
 * program, after the text report; the program still finds SIG_DFL. */
static void test_wrapper_reports_a_killed_run_unseen(void **state) {
  (void)state;
  skip_under_tsan(); /* and libtsan crashes in the wrapper's /bin/sh */
  static char var[600];
  snprintf(var, sizeof var, "LD_PRELOAD=%s", SAN_PRELOAD);
  char *env[] = {var, NULL};
  char sig[16];
  snprintf(sig, sizeof sig, "%d", SIGTERM);
  char *killed[] = {BLOCKWATCH_CMD, "--", HOST_TARGET, "raise", sig, NULL};
  shim_result r;
  assert_int_equal(shim_run(killed, SAN_PRELOAD[0] ? env : NULL, 0, 60, &r), 0);
  assert_false(r.exited);
  assert_int_equal(r.status, SIGTERM);
  assert_non_null(strstr(r.err, "SUMMARY: blockwatch:"));
  shim_result_free(&r);
  char *look[] = {BLOCKWATCH_CMD, "--", HOST_TARGET, "dispositions", NULL};
  char *plain_argv[] = {HOST_TARGET, "dispositions", NULL};
  shim_result under, plain;
  assert_int_equal(shim_run(look, SAN_PRELOAD[0] ? env : NULL, 0, 60, &under),
                   0);
  assert_int_equal(shim_run(plain_argv, NULL, 0, 60, &plain), 0);
  assert_string_equal(under.out, plain.out);
  shim_result_free(&under);
  shim_result_free(&plain);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_no_signal_handler_by_default),
      cmocka_unit_test(test_handlers_asked_for_are_not_seen),
      cmocka_unit_test(test_own_handler_kept_and_default_again_reports),
      cmocka_unit_test(test_raised_signal_with_default_action_kills),
      cmocka_unit_test(test_python_finds_sigint_default),
      cmocka_unit_test(test_handle_fatal_reports_then_dies_of_the_signal),
      cmocka_unit_test(test_interim_signal_writes_a_report_and_goes_on),
      cmocka_unit_test(test_report_is_utf8_under_a_name_that_is_not),
      cmocka_unit_test(test_wrapper_reports_a_killed_run_unseen),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
