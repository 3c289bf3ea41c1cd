/* test_blockscan_units.c - unit tests of blockscan's pieces that need no
 * libclang: suppression comments, command splitting, options, the string
 * map, compile database reading.
 */
#include "facts.h"
#include "inputs.h"
#include "options.h"
#include "util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void scan_text(bwsc__tu_facts *facts, const char *text) {
  memset(facts, 0, sizeof(*facts));
  bwsc__facts_scan_suppressions(facts, "f.c", text, strlen(text));
}

static void test_suppressions_are_found_with_their_rule_and_line(void **s) {
  (void)s;
  bwsc__tu_facts facts;
  scan_text(&facts, "int a;\n"
                    "sleep(1); // blockscan-ignore\n"
                    "// blockscan-ignore(blocking-sleep)\n"
                    "x(); /* NOLINT(blockscan-wait) */\n"
                    "y(); // NOLINT(blockscan)\n"
                    "// NOLINTNEXTLINE(blockscan-blocking-io)\n");
  assert_int_equal(facts.nsuppress, 5);
  assert_int_equal(facts.suppress[0].line, 2);
  assert_null(facts.suppress[0].rule);
  assert_int_equal(facts.suppress[1].line, 3);
  assert_string_equal(facts.suppress[1].rule, "blocking-sleep");
  assert_int_equal(facts.suppress[2].line, 4);
  assert_string_equal(facts.suppress[2].rule, "wait");
  assert_int_equal(facts.suppress[3].line, 5);
  assert_null(facts.suppress[3].rule);
  assert_int_equal(facts.suppress[4].line, 6);
  assert_string_equal(facts.suppress[4].rule, "blocking-io");
  bwsc__facts_free(&facts);
}

static void test_lookalike_comments_are_not_suppressions(void **s) {
  (void)s;
  bwsc__tu_facts facts;
  scan_text(&facts, "// blockscan-ignored\n"
                    "// NOLINT(other-check)\n"
                    "// NOLINT(blockscan-sleep\n"
                    ")\n"
                    "// NOLINT(blockscanner)\n");
  assert_int_equal(facts.nsuppress, 0);
  bwsc__facts_free(&facts);
}

static void test_split_command_honours_quotes_and_escapes(void **s) {
  (void)s;
  size_t n = 0;
  char **words = bwsc__split_command(
      "cc  -DNAME=\"a b\" -I'dir with space' a\\ b.c\t-c", &n);
  assert_int_equal(n, 5);
  assert_string_equal(words[0], "cc");
  assert_string_equal(words[1], "-DNAME=a b");
  assert_string_equal(words[2], "-Idir with space");
  assert_string_equal(words[3], "a b.c");
  assert_string_equal(words[4], "-c");
  for (size_t i = 0; i < n; i++)
    free(words[i]);
  free(words);
}

static void test_options_parse_every_form(void **s) {
  (void)s;
  char *argv[] = {
      "blockscan", "-pbuild",  "--rules=a.rules", "--rules",   "b.rules",
      "-j3",       "--format", "sarif",           "--summary", "src",
      "--",        "-DX",      "-Iinc",           NULL};
  bwsc__options opts;
  assert_int_equal(bwsc__options_parse(&opts, 13, argv), 0);
  assert_string_equal(opts.build_dir, "build");
  assert_int_equal(opts.nrules, 2);
  assert_string_equal(opts.rules[1], "b.rules");
  assert_int_equal(opts.jobs, 3);
  assert_int_equal(opts.format, BWSC__FORMAT_SARIF);
  assert_true(opts.summary);
  assert_int_equal(opts.npaths, 1);
  assert_true(opts.have_extra);
  assert_int_equal(opts.nextra, 2);
  assert_string_equal(opts.extra[1], "-Iinc");
  bwsc__options_free(&opts);
}

static void test_options_reject_bad_values(void **s) {
  (void)s;
  char *jobs[] = {"blockscan", "-j", "0", NULL};
  char *format[] = {"blockscan", "--format", "xml", NULL};
  char *missing[] = {"blockscan", "--output", NULL};
  char *prefix[] = {"blockscan", "--rulesx", NULL};
  bwsc__options opts;
  assert_int_equal(bwsc__options_parse(&opts, 3, jobs), -1);
  bwsc__options_free(&opts);
  assert_int_equal(bwsc__options_parse(&opts, 3, format), -1);
  bwsc__options_free(&opts);
  assert_int_equal(bwsc__options_parse(&opts, 2, missing), -1);
  bwsc__options_free(&opts);
  assert_int_equal(bwsc__options_parse(&opts, 2, prefix), -1);
  bwsc__options_free(&opts);
}

static void test_strmap_keeps_many_keys(void **s) {
  (void)s;
  bwsc__strmap map = {0};
  char keys[500][16];
  for (size_t i = 0; i < 500; i++) {
    snprintf(keys[i], sizeof(keys[i]), "k%zu", i);
    bwsc__strmap_put(&map, keys[i], i);
  }
  for (size_t i = 0; i < 500; i++) {
    size_t value = 0;
    assert_true(bwsc__strmap_get(&map, keys[i], &value));
    assert_int_equal(value, i);
  }
  assert_false(bwsc__strmap_get(&map, "k500", NULL));
  bwsc__strmap_free(&map);
}

static void test_compdb_drops_output_and_compiler_arguments(void **s) {
  (void)s;
  char path[] = "/tmp/blockscan-db-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  const char *json =
      "[{\"directory\": \"/src\", \"file\": \"a.c\", \"arguments\": "
      "[\"gcc\", \"-DX\", \"-c\", \"a.c\", \"-o\", \"a.o\", \"-MD\", \"-MF\", "
      "\"a.d\", \"-Iinc\", \"-isystem\", \"../sys\", \"-I/abs\"]}]";
  assert_int_equal(write(fd, json, strlen(json)), (ssize_t)strlen(json));
  close(fd);
  bwsc__inputs inputs = {0};
  bwsc__errors errors = {0};
  assert_int_equal(bwsc__compdb_load(path, &inputs, &errors), 0);
  assert_int_equal(inputs.count, 1);
  assert_string_equal(inputs.items[0].file, "/src/a.c");
  assert_string_equal(inputs.items[0].directory, "/src");
  /* Relative include paths are resolved against "directory". */
  assert_int_equal(inputs.items[0].nargs, 5);
  assert_string_equal(inputs.items[0].args[0], "-DX");
  assert_string_equal(inputs.items[0].args[1], "-I/src/inc");
  assert_string_equal(inputs.items[0].args[2], "-isystem");
  assert_string_equal(inputs.items[0].args[3], "/sys");
  assert_string_equal(inputs.items[0].args[4], "-I/abs");
  bwsc__inputs_free(&inputs);
  bwsc__errors_free(&errors);
  unlink(path);
}

static void test_compdb_errors_name_the_file(void **s) {
  (void)s;
  char path[] = "/tmp/blockscan-db-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  const char *json = "{\"not\": \"an array\"}";
  assert_int_equal(write(fd, json, strlen(json)), (ssize_t)strlen(json));
  close(fd);
  bwsc__inputs inputs = {0};
  bwsc__errors errors = {0};
  assert_int_equal(bwsc__compdb_load(path, &inputs, &errors), -1);
  assert_int_equal(errors.count, 1);
  assert_string_equal(errors.items[0].file, path);
  assert_non_null(strstr(errors.items[0].message, "not an array"));
  bwsc__errors_free(&errors);
  assert_int_equal(bwsc__compdb_load("/no/such/db.json", &inputs, &errors), -1);
  assert_non_null(strstr(errors.items[0].message, "cannot read"));
  bwsc__inputs_free(&inputs);
  bwsc__errors_free(&errors);
  unlink(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_suppressions_are_found_with_their_rule_and_line),
      cmocka_unit_test(test_lookalike_comments_are_not_suppressions),
      cmocka_unit_test(test_split_command_honours_quotes_and_escapes),
      cmocka_unit_test(test_options_parse_every_form),
      cmocka_unit_test(test_options_reject_bad_values),
      cmocka_unit_test(test_strmap_keeps_many_keys),
      cmocka_unit_test(test_compdb_drops_output_and_compiler_arguments),
      cmocka_unit_test(test_compdb_errors_name_the_file),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
