/* test_blockscan_sarif.c - blockscan's SARIF as GitHub code scanning and
 * Azure DevOps read it: rule metadata and help from each rule's own hints,
 * links from a result's message to its submit sites, fingerprints that do
 * not depend on the checkout, and (run with --multitool) Microsoft's SARIF
 * Multitool with each of its rule kinds.
 *
 * Invariant: every SARIF file is written to a mkstemps name ending in
 * .sarif (the Multitool skips other names) and removed by the test.
 */
#include "run.h"

#include "options.h"
#include "report.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SCAN_DIR FIXTURES "/scan"
#define PRECISION_DIR FIXTURES "/precision"
#define TIMEOUT 120
/* ctest's SKIP_RETURN_CODE for the Multitool entry. */
#define SKIPPED 77

/* Runs blockscan in `dir` with "--format sarif --output PATH" and args
 * (NULL-terminated); `path`, a mkstemps template ending in ".sarif", names
 * the file made. Returns blockscan's exit status. */
static int write_sarif(const char *dir, const char *const *args, char *path) {
  int fd = mkstemps(path, 6);
  assert_true(fd >= 0);
  close(fd);
  const char *argv[32] = {BLOCKSCAN_EXE, "--format", "sarif", "--output", path};
  size_t n = 5;
  for (; *args && n < 31; args++)
    argv[n++] = *args;
  argv[n] = NULL;
  run_result r = run_tool(dir, argv, TIMEOUT);
  int status = r.status;
  if (*r.err)
    print_message("blockscan: %s", r.err);
  run_free(&r);
  return status;
}

/* The report of blockscan in `dir` with the arguments after expect_status
 * (NULL-terminated), which must exit with expect_status. */
static json_t *sarif_of(const char *dir, int expect_status, ...) {
  const char *args[24];
  size_t n = 0;
  va_list ap;
  va_start(ap, expect_status);
  while ((args[n] = va_arg(ap, const char *)) && n < 23)
    n++;
  va_end(ap);
  args[n] = NULL;
  char path[] = "/tmp/blockscan-sarif-XXXXXX.sarif";
  int status = write_sarif(dir, args, path);
  json_error_t error;
  json_t *root = json_load_file(path, 0, &error);
  unlink(path);
  assert_int_equal(status, expect_status);
  if (!root)
    print_message("%s:%d: %s\n", path, error.line, error.text);
  assert_non_null(root);
  return root;
}

static json_t *run_of(json_t *root) {
  return json_array_get(json_object_get(root, "runs"), 0);
}

/* json_object_get along a path of keys ("tool", "driver", NULL). */
static json_t *at(json_t *obj, ...) {
  va_list ap;
  va_start(ap, obj);
  for (const char *key; obj && (key = va_arg(ap, const char *));)
    obj = json_object_get(obj, key);
  va_end(ap);
  return obj;
}

static const char *string_at(json_t *obj, const char *key) {
  const char *value = json_string_value(json_object_get(obj, key));
  if (!value)
    print_message("missing string '%s'\n", key);
  assert_non_null(value);
  return value;
}

static json_t *rule_named(json_t *run, const char *id) {
  json_t *rules = at(run, "tool", "driver", "rules", NULL);
  size_t i;
  json_t *rule;
  json_array_foreach(rules, i, rule) {
    if (strcmp(string_at(rule, "id"), id) == 0)
      return rule;
  }
  fail_msg("no rule %s", id);
  return NULL;
}

static int has_string(json_t *array, const char *value) {
  size_t i;
  json_t *item;
  json_array_foreach(array, i, item) {
    if (json_is_string(item) && strcmp(json_string_value(item), value) == 0)
      return 1;
  }
  return 0;
}

/* Setup: the report of the scan fixtures (every kind of finding, with the
 * project rules of allow.rules) in *state; teardown frees it. */
static int load_scan_report(void **state) {
  *state = sarif_of(SCAN_DIR, 1, "-p", ".", "--rules", "allow.rules", NULL);
  return 0;
}

static int free_report(void **state) {
  json_decref(*state);
  return 0;
}

static void test_driver_says_what_the_tool_is(void **state) {
  json_t *root = *state;
  json_t *driver = at(run_of(root), "tool", "driver", NULL);
  assert_string_equal(string_at(driver, "name"), "blockscan");
  assert_true(contains(string_at(driver, "fullName"), "blockscan "));
  assert_string_equal(string_at(driver, "semanticVersion"),
                      string_at(driver, "version"));
  assert_true(contains(string_at(driver, "informationUri"), "https://"));
  assert_string_equal(
      string_at(at(run_of(root), "automationDetails", NULL), "id"),
      "blockscan/");
}

/* Every rule carries what code scanning and Azure DevOps show for it. */
static void test_each_rule_has_the_metadata_code_scanning_shows(void **state) {
  json_t *root = *state;
  json_t *rules = at(run_of(root), "tool", "driver", "rules", NULL);
  assert_int_equal(json_array_size(rules), 11);
  size_t i;
  json_t *rule;
  json_array_foreach(rules, i, rule) {
    const char *id = string_at(rule, "id");
    assert_true(strncmp(id, "blocking-", 9) == 0);
    const char *name = string_at(rule, "name");
    assert_true(name[0] == 'B' && !strchr(name, '-'));
    assert_non_null(string_at(at(rule, "shortDescription", NULL), "text"));
    assert_non_null(string_at(at(rule, "fullDescription", NULL), "text"));
    const char *uri = string_at(rule, "helpUri");
    assert_true(contains(uri, "/docs/blockscan.md#"));
    assert_string_equal(strrchr(uri, '#') + 1, id);
    assert_true(contains(string_at(at(rule, "help", NULL), "text"),
                         "What to do instead:"));
    assert_true(contains(string_at(at(rule, "help", NULL), "markdown"),
                         "What to do instead:"));
    assert_string_equal(
        string_at(at(rule, "defaultConfiguration", NULL), "level"), "warning");
    json_t *props = at(rule, "properties", NULL);
    assert_true(has_string(json_object_get(props, "tags"), id + 9));
    assert_string_equal(string_at(props, "precision"), "high");
    assert_string_equal(string_at(props, "problem.severity"), "warning");
  }
  assert_string_equal(string_at(rule_named(run_of(root), "blocking-sync-over-"
                                                         "async"),
                                "name"),
                      "BlockingSyncOverAsync");
}

/* blocking-wait's help once was pause()'s signal hint, the first wait rule
 * loaded; now it holds the hints of the wait rules the report found. */
static void test_rule_help_comes_from_that_rules_own_hints(void **state) {
  json_t *root = *state;
  json_t *wait = at(rule_named(run_of(root), "blocking-wait"), "help", NULL);
  const char *text = string_at(wait, "text");
  assert_false(contains(text, "handle the signal"));
  assert_true(contains(text, "- poll(): register the descriptors with an "
                             "event loop instead of polling from a worker"));
  assert_true(contains(text, "- on a pool or loop of blockwatch: continue in "
                             "bw_then() on a task instead of waiting"));
  assert_true(contains(string_at(wait, "markdown"), "- `poll()`: register"));
  json_t *sleep = at(rule_named(run_of(root), "blocking-sleep"), "help", NULL);
  assert_true(contains(string_at(sleep, "text"),
                       "- sleep(), usleep(): use bw_delay() and continue in "
                       "bw_then()"));
  assert_true(contains(string_at(sleep, "markdown"),
                       "use bw\\_delay() and continue in bw\\_then()"));
}

/* Each "[text](n)" of a message names a relatedLocation with id n. */
static void assert_links_resolve(json_t *result) {
  const char *message = string_at(at(result, "message", NULL), "text");
  json_t *related = json_object_get(result, "relatedLocations");
  int links = 0;
  for (const char *p = strstr(message, "]("); p; p = strstr(p + 1, "](")) {
    long id = strtol(p + 2, NULL, 10);
    int found = 0;
    size_t i;
    json_t *loc;
    json_array_foreach(related, i, loc) {
      found |= json_integer_value(json_object_get(loc, "id")) == id;
    }
    assert_true(found);
    links++;
  }
  assert_true(links > 0);
}

static void test_message_links_each_submit_site(void **state) {
  (void)state;
  json_t *root = sarif_of(PRECISION_DIR, 1, "grouped.c", "--", NULL);
  json_t *result = json_array_get(json_object_get(run_of(root), "results"), 0);
  const char *message = string_at(at(result, "message", NULL), "text");
  assert_true(contains(message, "submit sites: [cb_a](1), [cb_b](2), "
                                "[cb_c](3), [cb_d](4), [cb_e](5)."));
  assert_true(contains(message, ". Hint: use bw_delay()"));
  assert_links_resolve(result);
  json_decref(root);

  root = sarif_of(SCAN_DIR, 1, "-p", ".", "--rules", "allow.rules", NULL);
  size_t i;
  json_array_foreach(json_object_get(run_of(root), "results"), i, result) {
    assert_links_resolve(result);
    json_t *related = json_object_get(result, "relatedLocations");
    if (json_array_size(related) == 1)
      assert_true(contains(string_at(at(result, "message", NULL), "text"),
                           " [submit site](1). Hint: "));
    assert_non_null(at(result, "partialFingerprints", NULL));
  }
  json_decref(root);
}

/* Fingerprints hash names, not places: a second checkout elsewhere, with
 * blank lines above each blocking call, gives the same ones. */
static void test_fingerprints_do_not_depend_on_the_checkout(void **state) {
  (void)state;
  char dir[] = "/tmp/blockscan-sarif-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char *copy = NULL;
  assert_true(asprintf(&copy,
                       "cd %s && mkdir precision scan && cp %s/api.h "
                       "precision/ && cp %s/pool.h scan/ && { printf "
                       "'\\n\\n\\n'; cat %s/grouped.c; } > precision/grouped.c",
                       dir, PRECISION_DIR, SCAN_DIR, PRECISION_DIR) > 0);
  const char *sh[] = {"/bin/sh", "-c", copy, NULL};
  run_result r = run_tool(NULL, sh, TIMEOUT);
  assert_int_equal(r.status, 0);
  run_free(&r);
  free(copy);
  char there_dir[sizeof(dir) + 16];
  snprintf(there_dir, sizeof(there_dir), "%s/precision", dir);
  json_t *here = sarif_of(PRECISION_DIR, 1, "grouped.c", "--", NULL);
  json_t *there = sarif_of(there_dir, 1, "grouped.c", "--", NULL);
  json_t *a = json_array_get(json_object_get(run_of(here), "results"), 0);
  json_t *b = json_array_get(json_object_get(run_of(there), "results"), 0);
  assert_true(json_equal(json_object_get(a, "partialFingerprints"),
                         json_object_get(b, "partialFingerprints")));
  assert_int_not_equal(
      json_integer_value(at(json_array_get(json_object_get(a, "locations"), 0),
                            "physicalLocation", "region", "startLine", NULL)),
      json_integer_value(at(json_array_get(json_object_get(b, "locations"), 0),
                            "physicalLocation", "region", "startLine", NULL)));
  json_decref(here);
  json_decref(there);
  char *clean = NULL;
  assert_true(asprintf(&clean, "rm -rf %s", dir) > 0);
  const char *rm[] = {"/bin/sh", "-c", clean, NULL};
  r = run_tool(NULL, rm, TIMEOUT);
  run_free(&r);
  free(clean);
}

static void test_srcroot_option_names_the_root(void **state) {
  (void)state;
  char *argv[] = {"blockscan", "--srcroot", "/src/project",
                  "-p",        "build",     "--srcroot=/src/other",
                  NULL};
  bwsc__options opts;
  assert_int_equal(bwsc__options_parse(&opts, 5, argv), 0);
  assert_string_equal(opts.srcroot, "/src/project");
  bwsc__options_free(&opts);
  assert_int_equal(bwsc__options_parse(&opts, 6, argv), 0);
  assert_string_equal(opts.srcroot, "/src/other");
  bwsc__options_free(&opts);
  char *missing[] = {"blockscan", "--srcroot", NULL};
  assert_int_equal(bwsc__options_parse(&opts, 2, missing), -1);
  bwsc__options_free(&opts);
}

/* The writer on its own: a file under the report's source root is a URI
 * relative to %SRCROOT%, which originalUriBaseIds maps to the root; one
 * outside it stays an absolute file:// URI. */
static void test_uris_are_relative_to_the_source_root(void **state) {
  (void)state;
  bw_rules *rules = bw_rules_create();
  assert_int_equal(bw_rules_load_default(rules, NULL), 0);
  bwsc__finding f = {0};
  f.rule = bw_rules_find_blocking(rules, "sleep");
  assert_non_null(f.rule);
  f.hint = f.rule->hint;
  f.callee = "sleep";
  f.loc = (bwsc__loc){"/src/project/lib/a b.c", 7, 3};
  f.function = f.callback = "cb";
  f.entry = "bw_submit";
  f.submit_loc = (bwsc__loc){"/elsewhere/main.c", 20, 5};
  f.message = "'sleep' blocks a pool worker: reached from callback 'cb'";
  bwsc__findings findings = {&f, 1, 1};
  bwsc__errors errors = {0};
  bwsc__report report = {&findings, &errors, rules, 0, "/src/project", 0};
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  assert_int_equal(bwsc__write_sarif(&report, out), 0);
  fclose(out);
  json_t *root = json_loads(text, 0, NULL);
  assert_non_null(root);
  free(text);
  json_t *run = run_of(root);
  assert_string_equal(
      string_at(at(run, "originalUriBaseIds", "%SRCROOT%", NULL), "uri"),
      "file:///src/project/");
  json_t *result = json_array_get(json_object_get(run, "results"), 0);
  json_t *artifact = at(json_array_get(json_object_get(result, "locations"), 0),
                        "physicalLocation", "artifactLocation", NULL);
  assert_string_equal(string_at(artifact, "uri"), "lib/a%20b.c");
  assert_string_equal(string_at(artifact, "uriBaseId"), "%SRCROOT%");
  json_t *submit =
      at(json_array_get(json_object_get(result, "relatedLocations"), 0),
         "physicalLocation", "artifactLocation", NULL);
  assert_string_equal(string_at(submit, "uri"), "file:///elsewhere/main.c");
  assert_null(json_object_get(submit, "uriBaseId"));
  json_decref(root);
  bw_rules_free(rules);
}

/* What an Azure DevOps agent sets for a pipeline run (values made up). */
static const char *const ado_pipeline[][2] = {
    {"TF_BUILD", "True"},
    {"SYSTEM_COLLECTIONURI", "https://dev.azure.com/example/"},
    {"SYSTEM_TEAMPROJECTID", "6f1c3d2e-4b5a-4c7d-8e9f-0a1b2c3d4e5f"},
    {"BUILD_DEFINITIONID", "42"},
    {"BUILD_DEFINITIONNAME", "blockwatch-ci"},
    {"BUILD_BUILDID", "1234"},
    {"SYSTEM_PHASEID", "0d9c8b7a-6e5f-4d3c-2b1a-0f9e8d7c6b5a"},
    {"SYSTEM_PHASENAME", "Analyze"},
    {"BUILD_SOURCEBRANCH", "refs/heads/main"},
    {NULL, NULL}};

static void set_pipeline(int on) {
  for (size_t i = 0; ado_pipeline[i][0]; i++) {
    if (on)
      setenv(ado_pipeline[i][0], ado_pipeline[i][1], 1);
    else
      unsetenv(ado_pipeline[i][0]);
  }
}

/* In an Azure DevOps pipeline, automationDetails is the pipeline's
 * identity, as Advanced Security's ingestion requires. */
static void test_pipeline_identity_in_azure_devops(void **state) {
  (void)state;
  set_pipeline(1);
  json_t *root = sarif_of(PRECISION_DIR, 1, "grouped.c", "--", NULL);
  set_pipeline(0);
  json_t *details = at(run_of(root), "automationDetails", NULL);
  assert_string_equal(
      string_at(details, "id"),
      "azuredevops/pipeline/build/example/6f1c3d2e-4b5a-4c7d-8e9f-"
      "0a1b2c3d4e5f/42/0d9c8b7a-6e5f-4d3c-2b1a-0f9e8d7c6b5a/refs/heads/main/"
      "1234");
  json_t *props = json_object_get(details, "properties");
  assert_string_equal(
      string_at(props, "azuredevops/pipeline/build/buildDefinitionId"), "42");
  assert_string_equal(string_at(props, "azuredevops/pipeline/build/phaseName"),
                      "Analyze");
  json_decref(root);
}

static const char *multitool(void) {
  const char *tool = getenv("BLOCKWATCH_SARIF_MULTITOOL");
  if (!tool || !*tool)
    tool = SARIF_MULTITOOL;
  return *tool && access(tool, X_OK) == 0 ? tool : NULL;
}

/* Writes the SARIF of blockscan's run in dir with the arguments given
 * (NULL-terminated) to a .sarif file, validates it with the Multitool's
 * rules of `kind` and expects neither an error nor a warning. The
 * Multitool exits 0 whatever it finds, so its output is what is read; the
 * file comes before --rule-kind, which would take it for a second kind. */
static void validate(const char *kind, const char *dir,
                     const char *const *args) {
  char path[] = "/tmp/blockscan-sarif-XXXXXX.sarif";
  if (strcmp(kind, "Ado") == 0)
    set_pipeline(1);
  int status = write_sarif(dir, args, path);
  set_pipeline(0);
  assert_true(status == 1 || status == 2);
  const char *check[] = {multitool(),   "validate", path,
                         "--rule-kind", kind,       NULL};
  run_result r = run_tool(NULL, check, 300);
  print_message("%s: %s%s", kind, r.out, r.err);
  assert_int_equal(r.status, 0);
  assert_false(contains(r.out, ": error "));
  assert_false(contains(r.out, ": warning "));
  assert_false(contains(r.err, ": error "));
  assert_false(contains(r.err, ": warning "));
  assert_false(contains(r.out, "ERROR(S)"));
  assert_true(contains(r.out, "Analysis completed successfully"));
  assert_false(contains(r.out, "skipped"));
  run_free(&r);
  unlink(path);
}

/* The fixtures' reports: findings of every kind with the rules of
 * allow.rules, low-confidence notes, many callbacks at one site, and a
 * run with a file that does not parse (a tool notification). */
static void validate_fixtures(const char *kind) {
  const char *scan[] = {"-p", ".", "--rules", "allow.rules", NULL};
  validate(kind, SCAN_DIR, scan);
  const char *low[] = {"--confidence", "low", "vtable.c", "grouped.c",
                       "cold.c",       "--",  NULL};
  validate(kind, PRECISION_DIR, low);
  const char *broken[] = {"good.c", "broken.c", "--", NULL};
  validate(kind, FIXTURES "/bad", broken);
}

static void test_multitool_sarif_rules_pass(void **state) {
  (void)state;
  validate_fixtures("Sarif");
}

static void test_multitool_github_rules_pass(void **state) {
  (void)state;
  validate_fixtures("Gh");
}

static void test_multitool_azure_devops_rules_pass(void **state) {
  (void)state;
  validate_fixtures("Ado");
}

/* With --multitool: the Multitool tests only, exiting SKIPPED when the
 * Multitool is not there (ctest shows the entry as skipped). */
/* --srcroot: a file outside the current directory but under DIR is a URI
 * relative to %SRCROOT%, which originalUriBaseIds maps to DIR. */
static void test_srcroot_makes_outside_files_relative(void **state) {
  (void)state;
  json_t *root = sarif_of(SCAN_DIR, 1, "--srcroot", "..", "-p", ".", "--rules",
                          "allow.rules", NULL);
  json_t *run = run_of(root);
  const char *base =
      string_at(at(run, "originalUriBaseIds", "%SRCROOT%", NULL), "uri");
  assert_true(contains(base, "/tests/analyzer/fixtures/"));
  json_t *result = json_array_get(json_object_get(run, "results"), 0);
  json_t *artifact = at(json_array_get(json_object_get(result, "locations"), 0),
                        "physicalLocation", "artifactLocation", NULL);
  assert_string_equal(string_at(artifact, "uri"), "scan/allow.c");
  assert_string_equal(string_at(artifact, "uriBaseId"), "%SRCROOT%");
  json_decref(root);
  char *argv[] = {BLOCKSCAN_EXE, "--srcroot", "/no/such/dir", "-p", ".", NULL};
  run_result r = run_tool(SCAN_DIR, (const char *const *)argv, TIMEOUT);
  assert_int_equal(r.status, 2);
  assert_true(contains(r.err, "--srcroot '/no/such/dir'"));
  run_free(&r);
}

static int run_multitool_tests(void) {
  if (!multitool()) {
    printf("SKIP: SARIF Multitool not found (SARIF_MULTITOOL='%s', "
           "BLOCKWATCH_SARIF_MULTITOOL unset): run scripts/setup.sh --test, "
           "which installs it into .tools/\n",
           SARIF_MULTITOOL);
    return SKIPPED;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_multitool_sarif_rules_pass),
      cmocka_unit_test(test_multitool_github_rules_pass),
      cmocka_unit_test(test_multitool_azure_devops_rules_pass),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--multitool") == 0)
    return run_multitool_tests();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_driver_says_what_the_tool_is,
                                      load_scan_report, free_report),
      cmocka_unit_test_setup_teardown(
          test_each_rule_has_the_metadata_code_scanning_shows, load_scan_report,
          free_report),
      cmocka_unit_test_setup_teardown(
          test_rule_help_comes_from_that_rules_own_hints, load_scan_report,
          free_report),
      cmocka_unit_test(test_message_links_each_submit_site),
      cmocka_unit_test(test_fingerprints_do_not_depend_on_the_checkout),
      cmocka_unit_test(test_pipeline_identity_in_azure_devops),
      cmocka_unit_test(test_srcroot_option_names_the_root),
      cmocka_unit_test(test_uris_are_relative_to_the_source_root),
      cmocka_unit_test(test_srcroot_makes_outside_files_relative),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
