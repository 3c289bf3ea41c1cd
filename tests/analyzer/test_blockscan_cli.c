/* test_blockscan_cli.c - runs the real blockscan binary on the fixture trees
 * and compares its output with golden files; checks bad input and exit
 * codes; validates SARIF with Microsoft's SARIF Multitool when available.
 *
 * Set BLOCKSCAN_UPDATE_GOLDEN=1 to rewrite the golden files from the actual
 * output (then review the diff before committing).
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
#include <sys/stat.h>
#include <unistd.h>

#define SCAN FIXTURES "/scan"
#define BAD FIXTURES "/bad"
#define CUSTOM FIXTURES "/custom"
#define TIMEOUT 120

/* Compares text with a golden file, printing the first differing line. */
static void assert_golden(const char *actual, const char *golden_name) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/%s", GOLDEN, golden_name);
  if (getenv("BLOCKSCAN_UPDATE_GOLDEN")) {
    FILE *out = fopen(path, "w");
    assert_non_null(out);
    fputs(actual, out);
    fclose(out);
  }
  char *expected = read_file(path);
  assert_non_null(expected);
  if (strcmp(expected, actual) != 0) {
    const char *a = actual, *e = expected;
    unsigned line = 1;
    while (*a && *a == *e) {
      if (*a == '\n')
        line++;
      a++;
      e++;
    }
    print_error("%s differs at line %u\n--- expected:\n%.200s\n--- actual:\n"
                "%.200s\n(messages and hints come from rules/packs: if they "
                "changed on purpose, rerun with BLOCKSCAN_UPDATE_GOLDEN=1 and "
                "review the diff)\n",
                golden_name, line, e, a);
    free(expected);
    fail();
  }
  free(expected);
}

static run_result scan(const char *cwd, const char *const *args) {
  const char *argv[32] = {BLOCKSCAN_EXE};
  size_t n = 1;
  for (; args[n - 1] && n < 31; n++)
    argv[n] = args[n - 1];
  argv[n] = NULL;
  return run_tool(cwd, argv, TIMEOUT);
}

static void test_text_report_matches_golden(void **state) {
  (void)state;
  const char *args[] = {"-p", ".", "--rules",       "allow.rules",
                        "-j", "2", "--color=never", NULL};
  run_result r = scan(SCAN, args);
  assert_int_equal(r.status, 1);
  assert_string_equal(r.err, "");
  assert_golden(r.out, "scan.txt");
  run_free(&r);
}

static void test_database_file_may_be_named_directly(void **state) {
  (void)state;
  const char *args[] = {"-p", "compile_commands.json", "--rules", "allow.rules",
                        NULL};
  run_result r = scan(SCAN, args);
  assert_int_equal(r.status, 1);
  assert_golden(r.out, "scan.txt");
  run_free(&r);
}

/* The fixture database says "directory": "."; run from its parent, that
 * must still mean the database's directory, so the findings are the same
 * ones, only named from the parent. */
static void test_relative_directory_is_relative_to_the_database(void **state) {
  (void)state;
  const char *args[] = {
      "-p", "scan", "--rules", "scan/allow.rules", "--color=never", NULL};
  run_result r = scan(FIXTURES, args);
  assert_int_equal(r.status, 1);
  assert_string_equal(r.err, "");
  assert_true(contains(r.out, "\nscan/multi_a.c:"));
  assert_false(contains(r.out, "error:"));
  run_free(&r);
}

static void test_json_report_matches_golden(void **state) {
  (void)state;
  const char *args[] = {"-p",       ".",    "--rules", "allow.rules",
                        "--format", "json", NULL};
  run_result r = scan(SCAN, args);
  assert_int_equal(r.status, 1);
  assert_golden(r.out, "scan.json");
  run_free(&r);
}

static void test_one_job_gives_the_same_report(void **state) {
  (void)state;
  const char *args[] = {"-p", ".", "--rules", "allow.rules", "-j", "1", NULL};
  run_result r = scan(SCAN, args);
  assert_int_equal(r.status, 1);
  assert_golden(r.out, "scan.txt");
  run_free(&r);
}

/* Without a database: the directory expands to its *.c files and each is
 * parsed with the arguments after "--"; same findings. */
static void test_directory_without_database_gives_the_same_report(void **s) {
  (void)s;
  const char *args[] = {"--rules",  "allow.rules",       ".", "--",
                        "-std=c11", "-D_DEFAULT_SOURCE", NULL};
  run_result r = scan(SCAN, args);
  assert_int_equal(r.status, 1);
  assert_golden(r.out, "scan.txt");
  run_free(&r);
}

static void test_missing_file_is_an_error_naming_it(void **state) {
  (void)state;
  const char *args[] = {"no_such_file.c", "--", NULL};
  run_result r = scan(SCAN, args);
  assert_int_equal(r.status, 2);
  assert_true(contains(r.out, "no_such_file.c") ||
              contains(r.err, "no_such_file.c"));
  run_free(&r);
}

static void test_unparsable_file_is_reported_and_the_rest_analysed(void **s) {
  (void)s;
  const char *args[] = {"broken.c", "good.c", "--format", "json", "--", NULL};
  run_result r = scan(BAD, args);
  assert_int_equal(r.status, 2);
  assert_true(contains(r.out, "\"file\": \"broken.c\""));
  assert_true(contains(r.out, "missing_header_for_the_test.h"));
  assert_true(contains(r.out, "did not parse"));
  assert_true(contains(r.out, "reached from callback 'sleepy'"));
  run_free(&r);
}

static void test_malformed_database_is_an_error_naming_it(void **state) {
  (void)state;
  const char *args[] = {"-p", FIXTURES "/baddb", NULL};
  run_result r = scan(SCAN, args);
  assert_int_equal(r.status, 2);
  assert_true(contains(r.out, "baddb/compile_commands.json"));
  assert_true(contains(r.out, "malformed compilation database"));
  run_free(&r);
}

static void test_missing_build_dir_is_an_error(void **state) {
  (void)state;
  const char *args[] = {"-p", "no/such/build", NULL};
  run_result r = scan(SCAN, args);
  assert_int_equal(r.status, 2);
  assert_true(contains(r.out, "no/such/build"));
  run_free(&r);
}

static void test_unreadable_rules_file_is_an_error_naming_it(void **state) {
  (void)state;
  const char *args[] = {"--rules", "no_such.rules", "multi_a.c", NULL};
  run_result r = scan(SCAN, args);
  assert_int_equal(r.status, 2);
  assert_true(contains(r.err, "no_such.rules"));
  assert_string_equal(r.out, "");
  run_free(&r);
}

static void test_bad_rules_file_reports_the_line(void **state) {
  (void)state;
  const char *args[] = {"--rules", "bad.rules", "good.c", "--", NULL};
  run_result r = scan(BAD, args);
  assert_int_equal(r.status, 2);
  assert_true(contains(r.err, "bad.rules:1:"));
  assert_true(contains(r.err, "colour"));
  run_free(&r);
}

static void test_bad_arguments_exit_2(void **state) {
  (void)state;
  const char *bad_jobs[] = {"-j", "zero", "x.c", NULL};
  run_result r = scan(SCAN, bad_jobs);
  assert_int_equal(r.status, 2);
  assert_true(contains(r.err, "zero"));
  run_free(&r);
  const char *bad_option[] = {"--frobnicate", NULL};
  r = scan(SCAN, bad_option);
  assert_int_equal(r.status, 2);
  assert_true(contains(r.err, "--frobnicate"));
  run_free(&r);
  const char *bad_category[] = {"--enable", "naps", "multi_a.c", NULL};
  r = scan(SCAN, bad_category);
  assert_int_equal(r.status, 2);
  assert_true(contains(r.err, "naps"));
  run_free(&r);
}

static void test_clean_input_exits_0(void **state) {
  (void)state;
  const char *args[] = {"--disable", "sleep",   "--disable", "wait",
                        "--disable", "process", "--disable", "sync-over-async",
                        "--disable", "io",      "-p",        ".",
                        NULL};
  run_result r = scan(SCAN, args);
  assert_int_equal(r.status, 0);
  assert_string_equal(r.out, "");
  run_free(&r);
}

static void test_disabled_category_is_not_reported(void **state) {
  (void)state;
  const char *args[] = {"--disable", "sleep", "-p", ".", NULL};
  run_result r = scan(SCAN, args);
  assert_int_equal(r.status, 1);
  assert_false(contains(r.out, "[blocking-sleep]"));
  assert_true(contains(r.out, "[blocking-wait]"));
  run_free(&r);
}

static void test_lock_category_is_opt_in(void **state) {
  (void)state;
  const char *plain[] = {"-p", ".", "locks.c", NULL};
  run_result r = scan(SCAN, plain);
  assert_int_equal(r.status, 0);
  run_free(&r);
  const char *enabled[] = {"-p", ".", "--enable", "lock", "locks.c", NULL};
  r = scan(SCAN, enabled);
  assert_int_equal(r.status, 1);
  assert_true(contains(r.out, "locks.c:10:3: warning: 'pthread_mutex_lock' "
                              "blocks a pool worker: reached from callback "
                              "'count_item' [blocking-lock]"));
  run_free(&r);
}

/* A project's own pool and blocking call, from its own rules file: added
 * to the packs, or replacing them. */
static void test_project_rules_add_to_or_replace_the_packs(void **state) {
  (void)state;
  const char *added[] = {"--rules", "custom.rules", "app.c", "--", NULL};
  run_result r = scan(CUSTOM, added);
  assert_int_equal(r.status, 1);
  assert_golden(r.out, "custom.txt");
  run_free(&r);
  const char *only[] = {
      "--no-default-rules", "--rules", "custom.rules", "app.c", "--", NULL};
  r = scan(CUSTOM, only);
  assert_int_equal(r.status, 1);
  assert_true(contains(r.out, "app.c:12:3: error: 'my_sync_read' blocks"));
  assert_false(contains(r.out, "'sleep'"));
  run_free(&r);
}

static void test_baseline_hides_known_findings_only(void **state) {
  (void)state;
  char path[] = "/tmp/blockscan-baseline-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  const char *write[] = {
      "-p", ".", "--rules", "allow.rules", "--write-baseline", path, NULL};
  run_result r = scan(SCAN, write);
  assert_int_equal(r.status, 1);
  run_free(&r);
  const char *apply[] = {"-p",         ".",  "--rules", "allow.rules",
                         "--baseline", path, NULL};
  r = scan(SCAN, apply);
  assert_int_equal(r.status, 0);
  assert_string_equal(r.out, "");
  run_free(&r);
  /* Without the allow rule, startup_config's sleep is new: it alone shows. */
  const char *fewer[] = {"-p", ".", "--baseline", path, NULL};
  r = scan(SCAN, fewer);
  assert_int_equal(r.status, 1);
  assert_true(contains(r.out, "allow.c:6:3: warning: 'sleep'"));
  assert_false(contains(r.out, "allow.c:10:3"));
  run_free(&r);
  unlink(path);
}

static void test_summary_counts_per_rule(void **state) {
  (void)state;
  const char *args[] = {"-p",        ".",        "--rules", "allow.rules",
                        "--summary", "--format", "json",    NULL};
  run_result r = scan(SCAN, args);
  assert_int_equal(r.status, 1);
  assert_true(contains(
      r.err,
      "blockscan summary: 40 findings, 0 errors in 17 translation units"));
  assert_true(contains(r.err, "blocking-sleep"));
  run_free(&r);
}

static void test_color_only_when_asked(void **state) {
  (void)state;
  const char *always[] = {"--color=always", "macros.c", "--", NULL};
  run_result r = scan(SCAN, always);
  assert_int_equal(r.status, 1);
  assert_true(contains(r.out, "\033[1;35mwarning:"));
  run_free(&r);
  /* stdout is a file here, not a terminal: auto means no colour. */
  const char *automatic[] = {"macros.c", "--", NULL};
  r = scan(SCAN, automatic);
  assert_int_equal(r.status, 1);
  assert_false(contains(r.out, "\033["));
  run_free(&r);
}

/* Writes `text` after `blank_lines` empty lines to dir/name. */
static void write_source(const char *dir, const char *name, int blank_lines,
                         const char *text) {
  char path[512];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE *out = fopen(path, "w");
  assert_non_null(out);
  for (int i = 0; i < blank_lines; i++)
    fputc('\n', out);
  fputs(text, out);
  fclose(out);
}

/* The fingerprint of the only finding of a JSON report (malloc'd); its
 * callbacks' fingerprints follow it. */
static char *only_fingerprint(const char *json) {
  const char *rule = strstr(json, "\"rule\": ");
  assert_non_null(rule);
  assert_null(strstr(rule + 1, "\"rule\": "));
  const char *key = strstr(json, "\"fingerprint\": \"");
  assert_non_null(key);
  key += strlen("\"fingerprint\": \"");
  return strndup(key, 16);
}

static void test_fingerprint_survives_moving_code(void **state) {
  (void)state;
  static const char source[] =
      "int bw_submit(void *pool, void (*fn)(void *), void *arg);\n"
      "unsigned sleep(unsigned seconds);\n"
      "static void nap(void) { sleep(1); }\n"
      "static void job(void *arg) { (void)arg; nap(); }\n"
      "void go(void) { bw_submit(0, job, 0); }\n";
  char dir_a[] = "/tmp/blockscan-move-XXXXXX";
  char dir_b[] = "/tmp/blockscan-move-XXXXXX";
  assert_non_null(mkdtemp(dir_a));
  assert_non_null(mkdtemp(dir_b));
  write_source(dir_a, "legacy.c", 0, source);
  write_source(dir_b, "legacy.c", 40, source); /* moved down, elsewhere */
  const char *args[] = {"legacy.c", "--format", "json", "--", NULL};
  run_result a = scan(dir_a, args);
  run_result b = scan(dir_b, args);
  assert_int_equal(a.status, 1);
  assert_int_equal(b.status, 1);
  assert_true(contains(b.out, "\"line\": 43"));
  char *print_a = only_fingerprint(a.out);
  char *print_b = only_fingerprint(b.out);
  assert_string_equal(print_a, print_b);
  free(print_a);
  free(print_b);
  run_free(&a);
  run_free(&b);
  char path[600];
  snprintf(path, sizeof(path), "%s/legacy.c", dir_a);
  unlink(path);
  snprintf(path, sizeof(path), "%s/legacy.c", dir_b);
  unlink(path);
  rmdir(dir_a);
  rmdir(dir_b);
}

static void test_unwritable_output_is_an_error(void **state) {
  (void)state;
  const char *args[] = {"--output", "/no/such/dir/report.txt", "macros.c", "--",
                        NULL};
  run_result r = scan(SCAN, args);
  assert_int_equal(r.status, 2);
  assert_true(contains(r.err, "/no/such/dir/report.txt"));
  run_free(&r);
}

static const char *multitool(void) {
  const char *tool = getenv("BLOCKWATCH_SARIF_MULTITOOL");
  if (!tool || !*tool)
    tool = SARIF_MULTITOOL;
  return *tool && access(tool, X_OK) == 0 ? tool : NULL;
}

/* The Multitool exits 0 even when it finds errors: read what it prints. */
static void test_sarif_output_passes_the_sarif_multitool(void **state) {
  (void)state;
  const char *tool = multitool();
  if (!tool) {
    print_message("SKIP: SARIF Multitool not found; install it with 'npm "
                  "install --prefix .tools @microsoft/sarif-multitool' and "
                  "set BLOCKWATCH_SARIF_MULTITOOL\n");
    skip();
  }
  /* The Multitool skips files that do not end in .sarif. */
  char path[] = "/tmp/blockscan-XXXXXX.sarif";
  int fd = mkstemps(path, 6);
  assert_true(fd >= 0);
  close(fd);
  const char *args[] = {"-p",          ".",        "--rules",
                        "allow.rules", "--format", "sarif",
                        "--output",    path,       NULL};
  run_result r = scan(SCAN, args);
  assert_int_equal(r.status, 1);
  run_free(&r);
  const char *validate[] = {tool, "validate", path, NULL};
  r = run_tool(NULL, validate, 300);
  print_message("%s", r.out);
  assert_int_equal(r.status, 0);
  assert_false(contains(r.out, ": error "));
  assert_false(contains(r.err, ": error "));
  assert_true(contains(r.out, "Analysis completed successfully"));
  assert_false(contains(r.out, "skipped"));
  run_free(&r);
  unlink(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_text_report_matches_golden),
      cmocka_unit_test(test_database_file_may_be_named_directly),
      cmocka_unit_test(test_json_report_matches_golden),
      cmocka_unit_test(test_one_job_gives_the_same_report),
      cmocka_unit_test(test_directory_without_database_gives_the_same_report),
      cmocka_unit_test(test_relative_directory_is_relative_to_the_database),
      cmocka_unit_test(test_missing_file_is_an_error_naming_it),
      cmocka_unit_test(test_unparsable_file_is_reported_and_the_rest_analysed),
      cmocka_unit_test(test_malformed_database_is_an_error_naming_it),
      cmocka_unit_test(test_missing_build_dir_is_an_error),
      cmocka_unit_test(test_unreadable_rules_file_is_an_error_naming_it),
      cmocka_unit_test(test_bad_rules_file_reports_the_line),
      cmocka_unit_test(test_bad_arguments_exit_2),
      cmocka_unit_test(test_clean_input_exits_0),
      cmocka_unit_test(test_disabled_category_is_not_reported),
      cmocka_unit_test(test_lock_category_is_opt_in),
      cmocka_unit_test(test_project_rules_add_to_or_replace_the_packs),
      cmocka_unit_test(test_baseline_hides_known_findings_only),
      cmocka_unit_test(test_summary_counts_per_rule),
      cmocka_unit_test(test_color_only_when_asked),
      cmocka_unit_test(test_fingerprint_survives_moving_code),
      cmocka_unit_test(test_unwritable_output_is_an_error),
      cmocka_unit_test(test_sarif_output_passes_the_sarif_multitool),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
