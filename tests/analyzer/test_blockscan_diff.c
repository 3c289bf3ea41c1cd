/* test_blockscan_diff.c - unit tests of reading a unified diff into changed
 * lines and of the --diff filter, on patches held in memory (no git, no
 * libclang): git's quoted paths, the forms of hunk headers, lines that look
 * like file headers inside a hunk, CRLF, deleted files, a file named twice.
 *
 * The paths name files that do not exist under ROOT, so they are matched as
 * written (real_path falls back to the path itself).
 */
#include "diff.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROOT "/nonexistent-blockscan-root"

/* Reads `text` as a patch; returns what bwsc__changes_read returns. */
static int read_patch(bwsc__changes *changes, bwsc__errors *errors,
                      const char *text) {
  memset(changes, 0, sizeof(*changes));
  memset(errors, 0, sizeof(*errors));
  FILE *in = fmemopen((void *)text, strlen(text), "r");
  assert_non_null(in);
  int rc = bwsc__changes_read(changes, in, "p.patch", ROOT, errors);
  fclose(in);
  return rc;
}

static const bw_blocking_rule rule = {0};

/* A finding of the blocking call at file:line, with a one-step chain whose
 * call is at file:chain_line and a submit site at file:submit_line. */
static void add_finding(bwsc__findings *list, const char *file, unsigned line,
                        unsigned chain_line, unsigned submit_line) {
  bwsc__finding *f = BWSC__PUSH(list->items, list->count, list->cap);
  f->rule = &rule;
  f->loc = (bwsc__loc){(char *)file, line, 3};
  f->submit_loc = (bwsc__loc){(char *)file, submit_line, 3};
  f->chain = bwsc__xcalloc(1, sizeof(bwsc__step));
  f->chain[0].loc = (bwsc__loc){(char *)file, chain_line, 3};
  f->nchain = 1;
}

/* Which of the findings at lines 1..n of `file` (blocking call, chain and
 * submit site on that one line) the change keeps, as "1 4 ". */
static void kept_lines(bwsc__changes *changes, const char *file, unsigned n,
                       char *out, size_t size) {
  bwsc__findings list = {0};
  for (unsigned line = 1; line <= n; line++)
    add_finding(&list, file, line, line, line);
  bwsc__changes_filter(changes, &list);
  size_t len = 0;
  out[0] = '\0';
  for (size_t i = 0; i < list.count; i++)
    len +=
        (size_t)snprintf(out + len, size - len, "%u ", list.items[i].loc.line);
  bwsc__findings_free(&list);
}

static void test_only_added_lines_count(void **state) {
  (void)state;
  bwsc__changes changes;
  bwsc__errors errors;
  assert_int_equal(read_patch(&changes, &errors,
                              "diff --git a/src/a.c b/src/a.c\n"
                              "--- a/src/a.c\n"
                              "+++ b/src/a.c\n"
                              "@@ -2,2 +2,3 @@ void f(void) {\n"
                              " ctx;\n"
                              "-old;\n"
                              "+new;\n"
                              "+newer;\n"
                              "@@ -9 +10,0 @@\n"
                              "-gone;\n"),
                   0);
  char kept[64];
  kept_lines(&changes, ROOT "/src/a.c", 12, kept, sizeof(kept));
  assert_string_equal(kept, "3 4 ");
  bwsc__changes_free(&changes);
  bwsc__errors_free(&errors);
}

static void test_lines_like_headers_inside_a_hunk_are_lines(void **state) {
  (void)state;
  bwsc__changes changes;
  bwsc__errors errors;
  /* "--- x" removes "-- x"; "+++ y" adds "++ y"; the counts say so. */
  assert_int_equal(read_patch(&changes, &errors,
                              "--- a/a.c\r\n"
                              "+++ b/a.c\r\n"
                              "@@ -1,2 +1,2 @@\r\n"
                              "--- x\r\n"
                              "\\ No newline at end of file\r\n"
                              "+++ y\r\n"
                              " z\r\n"),
                   0);
  assert_int_equal(changes.count, 1);
  char kept[64];
  kept_lines(&changes, ROOT "/a.c", 3, kept, sizeof(kept));
  assert_string_equal(kept, "1 ");
  bwsc__changes_free(&changes);
  bwsc__errors_free(&errors);
}

static void test_quoted_paths_are_unquoted(void **state) {
  (void)state;
  bwsc__changes changes;
  bwsc__errors errors;
  assert_int_equal(read_patch(&changes, &errors,
                              "--- \"a/sp ace/t\\303\\251st.c\"\n"
                              "+++ \"b/sp ace/t\\303\\251st.c\"\n"
                              "@@ -0,0 +1 @@\n"
                              "+x;\n"
                              "--- a/tab file.c\t\n"
                              "+++ b/tab file.c\t\n"
                              "@@ -1 +1 @@\n"
                              "-y;\n"
                              "+z;\n"),
                   0);
  char kept[64];
  kept_lines(&changes, ROOT "/sp ace/t\303\251st.c", 2, kept, sizeof(kept));
  assert_string_equal(kept, "1 ");
  kept_lines(&changes, ROOT "/tab file.c", 2, kept, sizeof(kept));
  assert_string_equal(kept, "1 ");
  bwsc__changes_free(&changes);
  bwsc__errors_free(&errors);
}

static void
test_a_file_named_twice_merges_and_a_deleted_one_is_read(void **state) {
  (void)state;
  bwsc__changes changes;
  bwsc__errors errors;
  assert_int_equal(read_patch(&changes, &errors,
                              "--- a/a.c\n"
                              "+++ b/a.c\n"
                              "@@ -5,0 +6,2 @@\n"
                              "+six;\n"
                              "+seven;\n"
                              "--- a/gone.c\n"
                              "+++ /dev/null\n"
                              "@@ -1,2 +0,0 @@\n"
                              "-one;\n"
                              "-two;\n"
                              "--- a/a.c\n"
                              "+++ b/a.c\n"
                              "@@ -1 +2 @@\n"
                              "-x;\n"
                              "+two;\n"),
                   0);
  assert_int_equal(changes.count, 1);
  assert_int_equal(changes.files[0].count, 2);
  char kept[64];
  kept_lines(&changes, ROOT "/a.c", 8, kept, sizeof(kept));
  assert_string_equal(kept, "2 6 7 ");
  bwsc__changes_free(&changes);
  bwsc__errors_free(&errors);
}

static void
test_a_finding_stays_for_its_chain_or_its_submit_site(void **state) {
  (void)state;
  bwsc__changes changes;
  bwsc__errors errors;
  assert_int_equal(read_patch(&changes, &errors,
                              "--- a/a.c\n+++ b/a.c\n@@ -0,0 +7 @@\n+x;\n"),
                   0);
  bwsc__findings list = {0};
  add_finding(&list, ROOT "/a.c", 1, 7, 2); /* the chain's call */
  add_finding(&list, ROOT "/a.c", 3, 4, 7); /* the submit site */
  add_finding(&list, ROOT "/a.c", 5, 6, 8); /* none */
  add_finding(&list, ROOT "/b.c", 7, 7, 7); /* another file */
  bwsc__changes_filter(&changes, &list);
  assert_int_equal(list.count, 2);
  assert_int_equal(list.items[0].loc.line, 1);
  assert_int_equal(list.items[1].loc.line, 3);
  bwsc__findings_free(&list);
  bwsc__changes_free(&changes);
  bwsc__errors_free(&errors);
}

static void test_malformed_patches_name_their_line(void **state) {
  (void)state;
  static const struct {
    const char *patch;
    unsigned line;
    const char *what;
  } cases[] = {
      {"@@ -1 +1 @@\n-a\n+b\n", 1, "a hunk before any"},
      {"--- a/a.c\n+++ b/a.c\n@@ -1 +1\n", 3, "a hunk header must read"},
      {"--- a/a.c\n+++ b/a.c\n@@ -1,x +1 @@\n", 3, "a hunk header must read"},
      {"--- a/a.c\n+++ b/a.c\n@@ -1 +1 @@\n-a\n-b\n", 5, "does not fit"},
      {"--- a/a.c\n+++ b/a.c\n@@ -1 +1,2 @@\n-a\n+b\n", 6, "ends inside"},
      {"--- a/a.c\n+++ b/a.c\n@@ -1 +4294967295,2 @@\n", 3,
       "a hunk header must read"},
      {NULL, 0, NULL}};
  for (size_t i = 0; cases[i].patch; i++) {
    bwsc__changes changes;
    bwsc__errors errors;
    assert_int_equal(read_patch(&changes, &errors, cases[i].patch), -1);
    assert_int_equal(errors.count, 1);
    assert_string_equal(errors.items[0].file, "p.patch");
    assert_int_equal(errors.items[0].line, cases[i].line);
    assert_non_null(strstr(errors.items[0].message, cases[i].what));
    bwsc__changes_free(&changes);
    bwsc__errors_free(&errors);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_only_added_lines_count),
      cmocka_unit_test(test_lines_like_headers_inside_a_hunk_are_lines),
      cmocka_unit_test(test_quoted_paths_are_unquoted),
      cmocka_unit_test(
          test_a_file_named_twice_merges_and_a_deleted_one_is_read),
      cmocka_unit_test(test_a_finding_stays_for_its_chain_or_its_submit_site),
      cmocka_unit_test(test_malformed_patches_name_their_line),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
