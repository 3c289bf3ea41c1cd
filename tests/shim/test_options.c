/* test_options.c - BLOCKWATCH_OPTIONS as it is written: ':' and ','
 * separators, quoted values, help=1, bare keys; the report and trace paths
 * checked when the options are read; the blockwatch wrapper's quoting and
 * exit statuses; the GLib glob docs/shim.md gives, on a real GThreadPool.
 *
 * Invariants: every program runs under the shim through shim_run (the
 * sanitizer runtime first in LD_PRELOAD); scratch files live in its
 * mkdtemp directory; a test that needs a part not built skips, saying why.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "shim_run.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Runs argv under the shim (preload) with BLOCKWATCH_OPTIONS=options. */
static void run_with(char *const argv[], const char *options, int preload,
                     shim_result *r) {
  char *env[] = {(char *)shim_fmt("BLOCKWATCH_OPTIONS=%s", options), NULL};
  assert_int_equal(shim_run(argv, options ? env : NULL, preload, 120, r), 0);
  assert_false(r->timedout);
}

static int occurrences(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
    n++;
  return n;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  static char buf[1 << 17];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

/* The keys of docs/shim.md's option table ("| `key` | default | ..."). */
static int documented_keys(char keys[][32], int max) {
  const char *doc = slurp(SHIM_DOC);
  const char *at = strstr(doc, "## Options");
  assert_non_null(at);
  const char *end = strstr(at + 1, "\n## ");
  int n = 0;
  for (const char *l = at; l && l < end; l = strchr(l + 1, '\n')) {
    const char *k = l + 1;
    if (strncmp(k, "| `", 3) != 0)
      continue;
    k += 3;
    size_t len = strcspn(k, "`");
    assert_true(len < 32 && n < max);
    memcpy(keys[n], k, len);
    keys[n++][len] = '\0';
  }
  return n;
}

static void
test_help_lists_every_option_once_and_leaves_the_program_alone(void **state) {
  (void)state;
  char keys[64][32];
  int n = documented_keys(keys, 64);
  assert_true(n > 10);
  char *argv[] = {SHIM_TARGET, "counts", NULL};
  shim_result plain, help;
  run_with(argv, NULL, 0, &plain);
  run_with(argv, "help=1:report=none", 1, &help);
  assert_int_equal(help.status, plain.status);
  assert_string_equal(help.out, plain.out);
  for (int i = 0; i < n; i++) {
    const char *line = shim_fmt("\nblockwatch:   %s ", keys[i]);
    if (occurrences(help.err, line) != 1)
      fail_msg("help=1 lists '%s' %d times:\n%s", keys[i],
               occurrences(help.err, line), help.err);
  }
  /* ... and nothing the documentation lacks: one line each, one heading. */
  assert_int_equal(occurrences(help.err, "\n"), n + 1);
  assert_int_equal(occurrences(help.err, "blockwatch:   help "), 1);
  shim_result_free(&plain);
  shim_result_free(&help);
}

#define WORKERS "worker_name=nothing-*,work-?"

static const char *path_of(const char *name) {
  static char bufs[8][600];
  static int next;
  return shim_tmpfile(bufs[next++ % 8], sizeof bufs[0], name);
}

static void run_counts(const char *options, shim_result *r) {
  char *argv[] = {SHIM_TARGET, "counts", NULL};
  run_with(argv, options, 1, r);
}

/* The run said no warning and its report has the counts scenario's 24
 * calls on workers. */
static void expect_counts_report(const shim_result *r, const char *path) {
  assert_int_equal(r->status, 0);
  assert_null(strstr(r->err, "warning"));
  json_t *j = shim_load_json(path);
  assert_non_null(j);
  assert_int_equal(shim_calls(j, "on_workers"), 24);
  json_decref(j);
}

static void
test_colon_and_comma_separate_and_quotes_keep_a_value(void **state) {
  (void)state;
  const char *p = path_of("a:b,c.json");
  unlink(p);
  shim_result r;
  run_counts(
      shim_fmt("report=json,report_path='%s',worker_name=\"nothing-*,work-?\""
               ":verbosity=0",
               p),
      &r);
  expect_counts_report(&r, p);
  shim_result_free(&r);

  /* Unquoted, a ',' stays in the value unless a known "key=" follows. */
  unlink(p);
  const char *q = path_of("plain.json");
  unlink(q);
  run_counts(shim_fmt("report=json,report_path=%s," WORKERS, q), &r);
  expect_counts_report(&r, q);
  shim_result_free(&r);
}

static void test_unterminated_quote_is_named(void **state) {
  (void)state;
  shim_result r;
  run_counts("report=none:worker_name='work-*", &r);
  assert_int_equal(r.status, 0);
  assert_non_null(strstr(r.err, "blockwatch: warning: BLOCKWATCH_OPTIONS: "
                                "unterminated ' quote in the value of "
                                "'worker_name'"));
  assert_int_equal(occurrences(r.err, "blockwatch:"), 1);
  shim_result_free(&r);
}

static void test_bare_key_says_it_needs_a_value(void **state) {
  (void)state;
  shim_result r;
  run_counts("report:report=none", &r);
  assert_non_null(strstr(r.err, "'report' needs a value"));
  assert_null(strstr(r.err, "unknown option"));
  assert_int_equal(occurrences(r.err, "blockwatch:"), 1);
  shim_result_free(&r);
}

/* Reads "<digits>" at *p and moves past it (-1: none). */
static long digits(const char **p) {
  char *end;
  long v = strtol(*p, &end, 10);
  if (end == *p)
    return -1;
  *p = end;
  return v;
}

static void test_path_expands_every_pid_the_program_and_percent(void **state) {
  (void)state;
  const char *dir = path_of("no-dir");
  shim_result r;
  run_counts(shim_fmt("report=json:report_path=%s-%%p-%%p-%%e-%%%%/r.json:"
                      "verbosity=2",
                      dir),
             &r);
  assert_int_equal(r.status, 0);
  const char *w = strstr(r.err, "blockwatch: warning: report_path: cannot "
                                "write '");
  if (!w)
    fail_msg("no warning:\n%s", r.err);
  const char *d = strstr(w, shim_fmt("directory '%s-", dir));
  assert_non_null(d);
  d += strlen(shim_fmt("directory '%s-", dir));
  long pid1 = digits(&d);
  assert_true(*d++ == '-');
  long pid2 = digits(&d);
  assert_true(pid1 > 0);
  assert_int_equal(pid1, pid2);
  assert_int_equal(strncmp(d, "-shim_target-%': ", 17), 0);
  assert_non_null(strstr(d, strerror(ENOENT)));
  /* Said at start: before the constructor's last line, by the same pid. */
  const char *active = strstr(r.err, shim_fmt("active in pid %ld ", pid1));
  assert_non_null(active);
  assert_true(w < active);
  /* At exit the file cannot be written either: that is said about the
   * path given, never about the temporary file beside it. */
  assert_null(strstr(r.err, ".tmp."));
  shim_result_free(&r);
}

/* The file written at exit takes the same expansion the start-time check
 * used: both %p, the program's name, a literal %. */
static void test_written_report_has_every_pid_and_the_program(void **state) {
  (void)state;
  const char *dir = path_of("expanded");
  assert_int_equal(mkdir(dir, 0755), 0);
  shim_result r;
  run_counts(
      shim_fmt("report=json:report_path=%s/r-%%p-%%p-%%e-%%%%.json", dir), &r);
  assert_int_equal(r.status, 0);
  assert_null(strstr(r.err, "warning"));
  shim_result_free(&r);
  DIR *d = opendir(dir);
  assert_non_null(d);
  int found = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (e->d_name[0] == '.')
      continue;
    const char *p = e->d_name;
    assert_int_equal(strncmp(p, "r-", 2), 0);
    p += 2;
    long pid1 = digits(&p);
    assert_true(*p++ == '-');
    long pid2 = digits(&p);
    assert_true(pid1 > 0);
    assert_int_equal(pid1, pid2);
    assert_string_equal(p, "-shim_target-%.json");
    found++;
  }
  closedir(d);
  assert_int_equal(found, 1);
}

static void test_directory_as_output_path_is_a_directory(void **state) {
  (void)state;
  const char *dir = shim_tmpdir();
  shim_result r;
  run_counts(shim_fmt("report=json:report_path=%s:trace=%s", dir, dir), &r);
  assert_int_equal(r.status, 0);
  assert_non_null(strstr(r.err, shim_fmt("warning: report_path: cannot write "
                                         "'%s': %s",
                                         dir, strerror(EISDIR))));
  assert_non_null(
      strstr(r.err, shim_fmt("warning: trace: cannot write '%s': %s", dir,
                             strerror(EISDIR))));
  shim_result_free(&r);

  /* A writable place says nothing; nor does report=text (no file). */
  run_counts(shim_fmt("report=json:report_path=%s", path_of("fine.json")), &r);
  assert_null(strstr(r.err, "warning"));
  shim_result_free(&r);
  run_counts(shim_fmt("report=text:report_path=%s/no/such", dir), &r);
  assert_null(strstr(r.err, "warning"));
  shim_result_free(&r);
}

/* ---- the wrapper --------------------------------------------------------- */

/* Runs the wrapper (under a sanitizer build with the sanitizer runtime
 * already in LD_PRELOAD, where the wrapper appends the shim); skips the
 * calling test under TSan, whose runtime preloaded into /bin/sh crashes. */
static void run_wrapper(char *const argv[], shim_result *r) {
  if (strstr(SAN_PRELOAD, "libtsan")) {
    fprintf(stderr, "skipped under TSan: libtsan in the wrapper's /bin/sh\n");
    skip();
  }
  static char var[600];
  snprintf(var, sizeof var, "LD_PRELOAD=%s", SAN_PRELOAD);
  char *env[] = {var, NULL};
  assert_int_equal(shim_run(argv, SAN_PRELOAD[0] ? env : NULL, 0, 60, r), 0);
  assert_false(r->timedout);
}

static void test_wrapper_quotes_what_it_passes(void **state) {
  (void)state;
  /* Separators, and a single quote (passed in double quotes). */
  const char *names[] = {"rep:x,y.json", "it's:here.json"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    const char *p = path_of(names[i]);
    unlink(p);
    char *argv[] = {
        BLOCKWATCH_CMD,     "-o", (char *)p,   "--quiet", "--worker-name",
        "nothing-*,work-?", "--", SHIM_TARGET, "counts",  NULL};
    shim_result r;
    run_wrapper(argv, &r);
    expect_counts_report(&r, p);
    shim_result_free(&r);
  }
}

static void test_wrapper_version_help_options_and_usage_errors(void **state) {
  (void)state;
  shim_result r;
  char *version[] = {BLOCKWATCH_CMD, "--version", NULL};
  run_wrapper(version, &r);
  assert_int_equal(r.status, 0);
  assert_int_equal(strncmp(r.out, "blockwatch ", 11), 0);
  shim_result_free(&r);

  char *help[] = {BLOCKWATCH_CMD, "--help-options", NULL};
  run_wrapper(help, &r);
  assert_int_equal(r.status, 0);
  assert_non_null(strstr(r.out, "blockwatch:   report_path "));
  assert_int_equal(occurrences(r.out, "blockwatch:   sample_items "), 1);
  shim_result_free(&r);

  struct {
    char *argv[6];
    const char *says;
  } cases[] = {
      {{BLOCKWATCH_CMD, "--threshold-us", "ten", "--", SHIM_TARGET, NULL},
       "needs a number"},
      {{BLOCKWATCH_CMD, "--bogus", "--", SHIM_TARGET, NULL}, "unknown option"},
      {{BLOCKWATCH_CMD, "--trace", NULL}, "needs a file"},
      {{BLOCKWATCH_CMD, "-o", "a'b\"c", SHIM_TARGET, NULL}, "both ' and \""},
      {{BLOCKWATCH_CMD, "--quiet", NULL}, "no program to run"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    run_wrapper(cases[i].argv, &r);
    if (r.status != 2 || !strstr(r.err, cases[i].says))
      fail_msg("case %zu: status %d, stderr:\n%s", i, r.status, r.err);
    shim_result_free(&r);
  }
}

/* ---- GLib ---------------------------------------------------------------- */

/* The glob docs/shim.md gives for GThreadPool threads: the first
 * "`worker_name=pool..." it shows. */
static const char *documented_glib_glob(void) {
  const char *doc = slurp(SHIM_DOC);
  const char *at = strstr(doc, "`worker_name=pool");
  if (!at)
    return NULL;
  at += strlen("`worker_name=");
  static char glob[64];
  size_t len = strcspn(at, "`");
  assert_true(len < sizeof glob);
  memcpy(glob, at, len);
  glob[len] = '\0';
  return glob;
}

static void
test_documented_glib_glob_matches_gthreadpool_threads(void **state) {
  (void)state;
#ifndef GLIB_POOL_TARGET
  fprintf(stderr, "skipped: built without GLib (BLOCKWATCH_FOREIGN_SAMPLES)\n");
  skip();
#else
  const char *glob = documented_glib_glob();
  if (!glob)
    fail_msg("docs/shim.md gives no `worker_name=pool...` for GLib");
  /* Named "pool" without a program name, "pool-<prgname>" (cut to the
   * kernel's 15 characters) with one. */
  const char *prgnames[] = {NULL, "glibprog", "a-long-program-name"};
  for (size_t i = 0; i < sizeof prgnames / sizeof prgnames[0]; i++) {
    const char *p = path_of("glib.json");
    unlink(p);
    char *argv[] = {GLIB_POOL_TARGET, (char *)prgnames[i], NULL};
    shim_result r;
    run_with(argv,
             shim_fmt("report=json:report_path=%s:worker_name='%s'", p, glob),
             1, &r);
    assert_int_equal(r.status, 0);
    assert_int_equal(shim_out_value(r.out, "items"), 4);
    json_t *j = shim_load_json(p);
    assert_non_null(j);
    if (shim_calls(j, "on_workers") != 4)
      fail_msg("prgname %s: %lld calls on workers with worker_name=%s",
               prgnames[i] ? prgnames[i] : "(none)",
               shim_calls(j, "on_workers"), glob);
    json_decref(j);
    shim_result_free(&r);
  }
#endif
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(
          test_help_lists_every_option_once_and_leaves_the_program_alone),
      cmocka_unit_test(test_colon_and_comma_separate_and_quotes_keep_a_value),
      cmocka_unit_test(test_unterminated_quote_is_named),
      cmocka_unit_test(test_bare_key_says_it_needs_a_value),
      cmocka_unit_test(test_path_expands_every_pid_the_program_and_percent),
      cmocka_unit_test(test_written_report_has_every_pid_and_the_program),
      cmocka_unit_test(test_directory_as_output_path_is_a_directory),
      cmocka_unit_test(test_wrapper_quotes_what_it_passes),
      cmocka_unit_test(test_wrapper_version_help_options_and_usage_errors),
      cmocka_unit_test(test_documented_glib_glob_matches_gthreadpool_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
