/* test_blockscan_cmdline.c - blockscan's command line as a user meets it:
 * getopt_long's forms, errors that name the option, and the options that
 * shape a run, on the real binary and fixtures/cmdline.
 *
 * Invariant: each test runs blockscan in a directory it names, so no
 * .blockscan file of the source tree is read by accident.
 */
#include "config.h"
#include "exclude.h"
#include "options.h"
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

#define CMDLINE FIXTURES "/cmdline"
#define TIMEOUT 120

static run_result scan_in(const char *cwd, const char *const *args) {
  const char *argv[40] = {BLOCKSCAN_EXE};
  size_t n = 1;
  for (; args[n - 1] && n < 39; n++)
    argv[n] = args[n - 1];
  argv[n] = NULL;
  return run_tool(cwd, argv, TIMEOUT);
}

/* Number of lines in text. */
static size_t lines(const char *text) {
  size_t n = 0;
  for (; *text; text++)
    n += *text == '\n';
  return n;
}

/* An error run: exit 2, and stderr's first line is one "blockscan: error:"
 * line holding `needle`. */
static void assert_usage_error(const char *const *args, const char *needle) {
  run_result r = scan_in(CMDLINE, args);
  assert_int_equal(r.status, 2);
  assert_true(strncmp(r.err, "blockscan: error: ", 18) == 0);
  const char *nl = strchr(r.err, '\n');
  const char *at = strstr(r.err, needle);
  if (!nl || !at || at > nl) {
    print_error("stderr's first line does not name '%s':\n%s\n", needle, r.err);
    fail();
  }
  assert_string_equal(r.out, "");
  run_free(&r);
}

static void test_long_options_take_unique_prefixes(void **s) {
  (void)s;
  char *argv[] = {"blockscan", "--conf", "low",     "--form=json", "--sum",
                  "--no-def",  "--rul",  "x.rules", NULL};
  bwsc__options opts;
  assert_int_equal(bwsc__options_parse(&opts, 8, argv), 0);
  assert_true(opts.low_confidence);
  assert_int_equal(opts.format, BWSC__FORMAT_JSON);
  assert_true(opts.summary);
  assert_true(opts.no_default_rules);
  assert_int_equal(opts.nrules, 1);
  assert_string_equal(opts.rules[0], "x.rules");
  bwsc__options_free(&opts);
}

static void test_values_come_inline_or_next(void **s) {
  (void)s;
  char *argv[] = {"blockscan", "--output=a", "--baseline", "b",   "-j", "2",
                  "-pbuild",   "src",        "--",         "-DX", NULL};
  bwsc__options opts;
  assert_int_equal(bwsc__options_parse(&opts, 10, argv), 0);
  assert_string_equal(opts.output, "a");
  assert_string_equal(opts.baseline, "b");
  assert_int_equal(opts.jobs, 2);
  assert_string_equal(opts.build_dir, "build");
  assert_int_equal(opts.npaths, 1);
  assert_string_equal(opts.paths[0], "src");
  assert_int_equal(opts.nextra, 1);
  assert_string_equal(opts.extra[0], "-DX");
  bwsc__options_free(&opts);
}

static void test_operands_may_come_before_options(void **s) {
  (void)s;
  char *argv[] = {"blockscan", "a.c", "--summary", "b.c", "--", "c.c", NULL};
  bwsc__options opts;
  assert_int_equal(bwsc__options_parse(&opts, 6, argv), 0);
  assert_int_equal(opts.npaths, 2);
  assert_string_equal(opts.paths[0], "a.c");
  assert_string_equal(opts.paths[1], "b.c");
  assert_true(opts.summary);
  assert_int_equal(opts.nextra, 1); /* after "--", even an option's look */
  bwsc__options_free(&opts);
}

static void test_bare_color_means_always_and_keeps_the_next_word(void **s) {
  (void)s;
  char *argv[] = {"blockscan", "--color", "work.c", NULL};
  bwsc__options opts;
  assert_int_equal(bwsc__options_parse(&opts, 3, argv), 0);
  assert_int_equal(opts.color, BWSC__COLOR_ALWAYS);
  assert_int_equal(opts.npaths, 1);
  assert_string_equal(opts.paths[0], "work.c");
  bwsc__options_free(&opts);
  char *never[] = {"blockscan", "--color=never", NULL};
  assert_int_equal(bwsc__options_parse(&opts, 2, never), 0);
  assert_int_equal(opts.color, BWSC__COLOR_NEVER);
  bwsc__options_free(&opts);
}

static void test_a_second_parse_starts_over(void **s) {
  (void)s;
  char *first[] = {"blockscan", "--summary", "a.c", NULL};
  char *second[] = {"blockscan", "b.c", NULL};
  bwsc__options opts;
  assert_int_equal(bwsc__options_parse(&opts, 3, first), 0);
  bwsc__options_free(&opts);
  assert_int_equal(bwsc__options_parse(&opts, 2, second), 0);
  assert_int_equal(opts.npaths, 1);
  assert_string_equal(opts.paths[0], "b.c");
  assert_false(opts.summary);
  bwsc__options_free(&opts);
}

static void test_misspelt_option_gets_a_suggestion(void **s) {
  (void)s;
  const char *args[] = {"--confidance", "low", "work.c", NULL};
  assert_usage_error(args, "did you mean '--confidence'?");
  const char *swapped[] = {"--sumamry", "work.c", NULL};
  assert_usage_error(swapped, "did you mean '--summary'?");
}

static void test_ambiguous_prefix_names_the_candidates(void **s) {
  (void)s;
  const char *args[] = {"--co", "low", "work.c", NULL};
  assert_usage_error(args, "'--co' is ambiguous: --confidence --color");
}

static void test_errors_name_the_option(void **s) {
  (void)s;
  const char *unknown[] = {"--frobnicate", "work.c", NULL};
  assert_usage_error(unknown, "unknown option: '--frobnicate'");
  const char *shortopt[] = {"-x", "work.c", NULL};
  assert_usage_error(shortopt, "unknown option: '-x'");
  const char *missing[] = {"work.c", "--output", NULL};
  assert_usage_error(missing, "option needs a value: '--output'");
  const char *flag[] = {"--summary=yes", "work.c", NULL};
  assert_usage_error(flag, "option takes no value: '--summary=yes'");
  const char *format[] = {"--form", "xml", "work.c", NULL};
  assert_usage_error(format, "--format must be text, json or sarif: 'xml'");
}

static void test_abbreviated_run_matches_the_full_one(void **s) {
  (void)s;
  const char *full[] = {"--format=json", "--color=never", "work.c", "--", NULL};
  const char *brief[] = {"--form", "json", "--col=never", "work.c", "--", NULL};
  run_result a = scan_in(CMDLINE, full), b = scan_in(CMDLINE, brief);
  assert_int_equal(a.status, 1);
  assert_int_equal(b.status, 1);
  assert_string_equal(a.out, b.out);
  assert_true(lines(a.out) > 0);
  run_free(&a);
  run_free(&b);
}

/* The report's file is opened first: no analysis, no report on stdout. */
static void test_unwritable_output_fails_before_the_analysis(void **s) {
  (void)s;
  const char *missing[] = {"-o", "no-such-dir/report.txt", "work.c", "--",
                           NULL};
  run_result r = scan_in(CMDLINE, missing);
  assert_int_equal(r.status, 2);
  assert_string_equal(r.out, "");
  assert_true(contains(r.err, "blockscan: error: cannot write "
                              "'no-such-dir/report.txt': No such file"));
  assert_int_equal(lines(r.err), 1);
  run_free(&r);
  const char *directory[] = {"--output=.", "work.c", "--", NULL};
  r = scan_in(CMDLINE, directory);
  assert_int_equal(r.status, 2);
  assert_string_equal(r.out, "");
  assert_true(contains(r.err, "'.': Is a directory"));
  run_free(&r);
}

/* The lines of `text` that contain ": error: ", in order (malloc'd). */
static char *error_lines(const char *text) {
  char *kept = calloc(1, strlen(text) + 1);
  assert_non_null(kept);
  for (const char *line = text; *line;) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) + 1 : strlen(line);
    char *copy = strndup(line, len);
    if (strstr(copy, ": error: "))
      strcat(kept, copy);
    free(copy);
    line += len;
  }
  return kept;
}

/* A text report prints its errors on stdout; a JSON one on stderr, the same
 * lines: "file: error:" without a line, "file:line:col:" with one. */
static void test_json_errors_read_as_the_text_ones(void **s) {
  (void)s;
  const char *text[] = {"--color=never", ".", "nothere.c", "--", NULL};
  const char *json[] = {"--format=json", ".", "nothere.c", "--", NULL};
  run_result t = scan_in(FIXTURES "/bad", text);
  run_result j = scan_in(FIXTURES "/bad", json);
  assert_int_equal(t.status, 2);
  assert_int_equal(j.status, 2);
  char *from_text = error_lines(t.out);
  assert_true(contains(from_text, "nothere.c: error: no such file"));
  assert_true(contains(from_text, "broken.c:2:10: error: "));
  assert_string_equal(j.err, from_text);
  free(from_text);
  run_free(&t);
  run_free(&j);
}

/* Each callback of nolint/nolint.c says whether its comment silences it. */
static void test_nolint_forms_of_clang_tidy(void **s) {
  (void)s;
  const char *args[] = {"--color=never", "nolint/nolint.c", "--", NULL};
  run_result r = scan_in(CMDLINE, args);
  assert_int_equal(r.status, 1);
  static const char *const quiet[] = {
      "'bare_is_quiet'",           "'bare_next_line_is_quiet'",
      "'star_is_quiet'",           "'ours_in_a_list_is_quiet'",
      "'ours_as_a_glob_is_quiet'", "'rule_id_is_quiet'"};
  static const char *const loud[] = {
      "'other_check_still_warns'", "'other_rule_still_warns'",
      "'nolint_begin_still_warns'", "'bare_nolint_covers_its_line_only'"};
  for (size_t i = 0; i < sizeof(quiet) / sizeof(quiet[0]); i++)
    if (contains(r.out, quiet[i])) {
      print_error("%s should be silenced:\n%s\n", quiet[i], r.out);
      fail();
    }
  for (size_t i = 0; i < sizeof(loud) / sizeof(loud[0]); i++)
    if (!contains(r.out, loud[i])) {
      print_error("%s should still warn:\n%s\n", loud[i], r.out);
      fail();
    }
  run_free(&r);
}

static void test_exclude_globs_match_paths_and_components(void **s) {
  (void)s;
  bwsc__options opts = {0};
  bwsc__options_exclude(&opts, "vendor", NULL);
  bwsc__options_exclude(&opts, "*_test.c", NULL);
  bwsc__options_exclude(&opts, "gen/*.c", "/src");
  bwsc__options_exclude(&opts, "/abs/only.c", NULL);
  assert_true(bwsc__excluded(&opts, "/src/vendor/zlib/inflate.c"));
  assert_true(bwsc__excluded(&opts, "/src/net/conn_test.c"));
  assert_true(bwsc__excluded(&opts, "/src/gen/a.c"));
  assert_true(bwsc__excluded(&opts, "/src/gen/deep/b.c")); /* '*' spans '/' */
  assert_true(bwsc__excluded(&opts, "/abs/only.c"));
  assert_false(bwsc__excluded(&opts, "/src/vendored.c"));
  assert_false(bwsc__excluded(&opts, "/other/gen/a.c"));
  assert_false(bwsc__excluded(&opts, "/src/net/conn.c"));
  bwsc__options_free(&opts);
}

/* An excluded TU is not parsed (its callback is gone); an excluded header
 * takes its findings along, though the TU that includes it stays. */
static void test_exclude_skips_tus_and_findings(void **s) {
  (void)s;
  const char *tu[] = {"--color=never",
                      "--exclude=nolint",
                      "--exclude",
                      "vendor/*.c",
                      ".",
                      "--",
                      NULL};
  run_result r = scan_in(CMDLINE, tu);
  assert_int_equal(r.status, 1);
  assert_true(contains(r.out, "reached from callback 'ours'"));
  assert_false(contains(r.out, "vendored"));
  assert_false(contains(r.out, "nolint.c"));
  run_free(&r);
  const char *header[] = {"--color=never",
                          "--exclude=nolint",
                          "--exclude=*/slow.h",
                          ".",
                          "--",
                          NULL};
  r = scan_in(CMDLINE, header);
  assert_int_equal(r.status, 1);
  assert_false(contains(r.out, "slow.h"));
  assert_true(contains(r.out, "work.c:5:3: warning: "));
  run_free(&r);
}

static void test_progress_lines_count_the_tus(void **s) {
  (void)s;
  const char *args[] = {"--progress",
                        "-j",
                        "2",
                        "--exclude=nolint",
                        "--exclude=tidy",
                        "--exclude=configured",
                        ".",
                        "--",
                        NULL};
  run_result r = scan_in(CMDLINE, args);
  assert_int_equal(r.status, 1);
  assert_true(contains(r.err, "] work.c\n"));
  assert_true(contains(r.err, "] vendor/vendored.c\n"));
  assert_true(contains(r.err, "[3/3] "));
  assert_false(contains(r.err, "[4/"));
  assert_int_equal(lines(r.err), 3);
  run_free(&r);
}

/* On a terminal the progress shows unasked, as one line rewritten in place
 * and cleared before the report. util-linux's script(1) gives the
 * terminal; without it the test skips. */
static void test_progress_shows_on_a_terminal(void **s) {
  (void)s;
  if (access("/usr/bin/script", X_OK) != 0)
    skip();
  char command[1024];
  snprintf(command, sizeof(command), "%s work.c -- >/dev/null", BLOCKSCAN_EXE);
  const char *argv[] = {"/usr/bin/script", "-qec", command, "/dev/null", NULL};
  run_result r = run_tool(CMDLINE, argv, TIMEOUT);
  assert_int_equal(r.status, 1);
  assert_true(contains(r.out, "\r[1/1] work.c\033[K\r\033[K"));
  run_free(&r);
}

/* Without a database or "--", a note says the files get no flags; --quiet
 * silences it, the progress and the other notes, never an error. */
static void test_quiet_keeps_errors_only(void **s) {
  (void)s;
  const char *plain[] = {"work.c", NULL};
  run_result r = scan_in(CMDLINE, plain);
  assert_int_equal(r.status, 1);
  assert_true(contains(r.err, "blockscan: note: no compile_commands.json"));
  assert_true(contains(r.err, "parsed without the build's flags"));
  run_free(&r);
  const char *flags[] = {"work.c", "--", NULL};
  r = scan_in(CMDLINE, flags);
  assert_string_equal(r.err, "");
  run_free(&r);
  const char *quiet[] = {"--quiet", "--progress", "work.c", NULL};
  r = scan_in(CMDLINE, quiet);
  assert_int_equal(r.status, 1);
  assert_string_equal(r.err, "");
  run_free(&r);
  const char *no_callback[] = {"--quiet", FIXTURES "/precision/nocb.c", "--",
                               NULL};
  r = scan_in(CMDLINE, no_callback);
  assert_int_equal(r.status, 0);
  assert_string_equal(r.err, "");
  run_free(&r);
  const char *nothing[] = {"--quiet", "nothere.c", NULL};
  r = scan_in(CMDLINE, nothing);
  assert_int_equal(r.status, 2);
  assert_true(contains(r.out, "nothere.c: error: "));
  assert_string_equal(r.err, "");
  run_free(&r);
}

/* clang-tidy's --extra-arg-before and --extra-arg: around the file's own
 * arguments, so the later one wins. */
static void test_extra_args_go_before_and_after(void **s) {
  (void)s;
  const char *after_wins[] = {"--extra-arg-before=-DSLEEPY",
                              "--extra-arg=-USLEEPY", "tidy/maybe.c", "--",
                              NULL};
  run_result r = scan_in(CMDLINE, after_wins);
  assert_int_equal(r.status, 0);
  run_free(&r);
  const char *own_wins[] = {
      "--extra-arg-before", "-USLEEPY", "tidy/maybe.c", "--", "-DSLEEPY", NULL};
  r = scan_in(CMDLINE, own_wins);
  assert_int_equal(r.status, 1);
  assert_true(contains(r.out, "tidy/maybe.c:7:3: warning: "));
  run_free(&r);
}

/* What CMake passes its C_CLANG_TIDY: a whole compile command after "--",
 * compiler, dependency files, -o and the file itself included. */
static void test_a_compile_command_after_dashdash_is_trimmed(void **s) {
  (void)s;
  const char *args[] = {"--color=never", "--extra-arg-before=--driver-mode=gcc",
                        "tidy/maybe.c",  "--",
                        "/usr/bin/cc",   "-DSLEEPY",
                        "-MD",           "-MT",
                        "maybe.c.o",     "-MF",
                        "maybe.c.o.d",   "-o",
                        "maybe.c.o",     "-c",
                        "tidy/maybe.c",  NULL};
  run_result r = scan_in(CMDLINE, args);
  assert_int_equal(r.status, 1);
  assert_false(contains(r.out, "error"));
  assert_true(contains(r.out, "tidy/maybe.c:7:3: warning: "));
  run_free(&r);
}

/* configured/.blockscan, found from two directories down: its rule file
 * (a path from the file's directory), its exclude and its disabled
 * category hold; the command line's --enable wins; --no-config drops it. */
static void test_blockscan_file_is_found_in_a_parent(void **s) {
  (void)s;
  const char *dir = CMDLINE "/configured/src/deeper";
  const char *plain[] = {"--color=never", "../..", "--", NULL};
  run_result r = scan_in(dir, plain);
  assert_int_equal(r.status, 1);
  assert_true(contains(r.out, "mine.c:8:3: warning: 'project_wait' blocks"));
  assert_false(contains(r.out, "theirs"));  /* exclude = vendor/ */
  assert_false(contains(r.out, "'sleep'")); /* disable = sleep */
  run_free(&r);
  const char *enable[] = {"--color=never", "--enable=sleep", "../..", "--",
                          NULL};
  r = scan_in(dir, enable);
  assert_true(contains(r.out, "mine.c:9:3: warning: 'sleep' blocks"));
  run_free(&r);
  const char *none[] = {"--color=never", "--no-config", "../..", "--", NULL};
  r = scan_in(dir, none);
  assert_int_equal(r.status, 1);
  assert_false(contains(r.out, "project_wait"));
  assert_true(contains(r.out, "mine.c:9:3: warning: 'sleep' blocks"));
  run_free(&r);
}

/* Writes `text` as .blockscan in a new temporary directory; returns it. */
static char *config_dir(const char *text) {
  char *dir = strdup("/tmp/blockscan-config-XXXXXX");
  assert_non_null(mkdtemp(dir));
  char path[256];
  snprintf(path, sizeof(path), "%s/.blockscan", dir);
  FILE *out = fopen(path, "w");
  assert_non_null(out);
  fputs(text, out);
  fclose(out);
  return dir;
}

static void remove_config_dir(char *dir) {
  char path[256];
  snprintf(path, sizeof(path), "%s/.blockscan", dir);
  unlink(path);
  rmdir(dir);
  free(dir);
}

static void test_command_line_wins_over_the_file(void **s) {
  (void)s;
  char *dir = config_dir("confidence = low\n"
                         "enable = lock\n"
                         "disable = sleep\n"
                         "disable = io\n"
                         "exclude = gen/\n");
  char *argv[] = {"blockscan", "--confidence=high", "--disable=lock",
                  "--enable=sleep", NULL};
  bwsc__options opts;
  assert_int_equal(bwsc__options_parse(&opts, 4, argv), 0);
  bwsc__config cfg;
  assert_int_equal(bwsc__config_apply(&cfg, &opts, dir), 0);
  assert_false(opts.low_confidence);
  assert_int_equal(opts.nenable, 1); /* the file's lock lost to --disable */
  assert_string_equal(opts.enable[0], "sleep");
  assert_int_equal(opts.ndisable, 2); /* lock, io: not sleep */
  assert_string_equal(opts.disable[1], "io");
  assert_int_equal(opts.nexcludes, 1);
  assert_string_equal(opts.excludes[0].base, dir);
  bwsc__options_free(&opts);
  bwsc__config_free(&cfg);
  remove_config_dir(dir);
}

/* Every bad line is named, with its number, and nothing runs. */
static void test_bad_blockscan_lines_are_named(void **s) {
  (void)s;
  char *dir = config_dir("# a comment\n"
                         "\n"
                         "bogus\n"
                         "enable = nope\n"
                         "confidence = maybe\n"
                         "colour = red\n"
                         "exclude =\n"
                         "rules = fine.rules\n");
  const char *args[] = {CMDLINE "/work.c", "--", NULL};
  run_result r = scan_in(dir, args);
  assert_int_equal(r.status, 2);
  assert_string_equal(r.out, "");
  char expect[512];
  snprintf(expect, sizeof(expect),
           "blockscan: %s/.blockscan:3: error: expected KEY = VALUE, got "
           "'bogus'\n"
           "blockscan: %s/.blockscan:4: error: unknown category 'nope'\n",
           dir, dir);
  assert_true(contains(r.err, expect));
  assert_true(contains(r.err, ".blockscan:5: error: confidence must be high "
                              "or low, not 'maybe'\n"));
  assert_true(contains(r.err, ".blockscan:6: error: unknown key"));
  assert_true(contains(r.err, ".blockscan:7: error: no value for 'exclude'"));
  assert_int_equal(lines(r.err), 5);
  run_free(&r);
  const char *skip[] = {"--no-config", "--color=never", CMDLINE "/work.c", "--",
                        NULL};
  r = scan_in(dir, skip);
  assert_int_equal(r.status, 1);
  run_free(&r);
  remove_config_dir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_long_options_take_unique_prefixes),
      cmocka_unit_test(test_values_come_inline_or_next),
      cmocka_unit_test(test_operands_may_come_before_options),
      cmocka_unit_test(test_bare_color_means_always_and_keeps_the_next_word),
      cmocka_unit_test(test_a_second_parse_starts_over),
      cmocka_unit_test(test_misspelt_option_gets_a_suggestion),
      cmocka_unit_test(test_ambiguous_prefix_names_the_candidates),
      cmocka_unit_test(test_errors_name_the_option),
      cmocka_unit_test(test_abbreviated_run_matches_the_full_one),
      cmocka_unit_test(test_unwritable_output_fails_before_the_analysis),
      cmocka_unit_test(test_json_errors_read_as_the_text_ones),
      cmocka_unit_test(test_nolint_forms_of_clang_tidy),
      cmocka_unit_test(test_exclude_globs_match_paths_and_components),
      cmocka_unit_test(test_exclude_skips_tus_and_findings),
      cmocka_unit_test(test_progress_lines_count_the_tus),
      cmocka_unit_test(test_progress_shows_on_a_terminal),
      cmocka_unit_test(test_quiet_keeps_errors_only),
      cmocka_unit_test(test_extra_args_go_before_and_after),
      cmocka_unit_test(test_a_compile_command_after_dashdash_is_trimmed),
      cmocka_unit_test(test_blockscan_file_is_found_in_a_parent),
      cmocka_unit_test(test_command_line_wins_over_the_file),
      cmocka_unit_test(test_bad_blockscan_lines_are_named),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
