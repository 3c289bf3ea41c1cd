/* test_blockscan_cache.c - facts that do not come from a parse: the facts
 * cache (--cache, --no-cache, the default beside the database) and facts
 * files (--emit-facts, --facts). Whatever way the facts came, the report
 * must be the one parsing gives, byte for byte, on every fixture tree.
 */
#include "run.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TIMEOUT 300
#define MAX_ARGS 48

/* One fixture tree as the other tests scan it: options (rules), inputs
 * (paths, "--" and flags), and for trees without a database the flags
 * each file is compiled with for --emit-facts. */
typedef struct tree {
  const char *dir;
  const char *options[4];
  const char *inputs[6];
  int has_database;
  const char *flags[3];
} tree;

static const tree trees[] = {
    {"scan", {"--rules", "allow.rules"}, {"-p", "."}, 1, {NULL}},
    {"precision", {NULL}, {"-p", "."}, 1, {NULL}},
    {"kinds", {NULL}, {".", "--"}, 0, {NULL}},
    {"nonblock", {NULL}, {".", "--"}, 0, {NULL}},
    {"recall",
     {NULL},
     {".", "--", "-std=c11", "-D_DEFAULT_SOURCE"},
     0,
     {"-std=c11", "-D_DEFAULT_SOURCE"}},
    {"custom", {"--rules", "custom.rules"}, {".", "--"}, 0, {NULL}},
    {"bad", {NULL}, {".", "--"}, 0, {NULL}},
    /* The top level only: the facts-file test emits the top-level files. */
    {"cmdline", {NULL}, {"uses_slow.c", "work.c", "--"}, 0, {NULL}},
    {"conds", {"--rules", "nbmore.rules"}, {".", "--"}, 0, {NULL}},
    {"once", {NULL}, {".", "--"}, 0, {NULL}},
    {"shared", {NULL}, {"-p", "."}, 1, {NULL}},
    {"ready", {"--rules", "own.rules"}, {".", "--"}, 0, {NULL}},
    {"once_why", {NULL}, {".", "--"}, 0, {NULL}},
    {"fork", {NULL}, {".", "--"}, 0, {NULL}},
};

typedef struct argv_list {
  const char *items[MAX_ARGS];
  size_t count;
} argv_list;

static void add(argv_list *list, const char *arg) {
  assert_true(list->count + 1 < MAX_ARGS);
  list->items[list->count++] = arg;
  list->items[list->count] = NULL;
}

static void add_all(argv_list *list, const char *const *args, size_t max) {
  for (size_t i = 0; i < max && args[i]; i++)
    add(list, args[i]);
}

/* blockscan, JSON with every confidence (the most the report can say),
 * the tree's options, then `extra` (NULL-terminated). */
static argv_list report_args(const tree *t, const char *const *extra) {
  argv_list list = {{NULL}, 0};
  add(&list, BLOCKSCAN_EXE);
  add(&list, "--format");
  add(&list, "json");
  add(&list, "--confidence");
  add(&list, "low");
  add_all(&list, t->options, 4);
  add_all(&list, extra, MAX_ARGS);
  return list;
}

static char *temp_dir(void) {
  char *dir = strdup("/tmp/blockscan-cache-test-XXXXXX");
  assert_non_null(dir);
  assert_non_null(mkdtemp(dir));
  return dir;
}

static void remove_tree(const char *dir) {
  char command[600];
  snprintf(command, sizeof(command), "rm -rf '%s'", dir);
  assert_int_equal(system(command), 0);
}

static void assert_same_run(const run_result *want, const run_result *got,
                            const char *what, int same_stderr) {
  if (want->status != got->status || strcmp(want->out, got->out) != 0 ||
      (same_stderr && strcmp(want->err, got->err) != 0)) {
    print_error("%s: the report differs from the parse's\n--- parse (%d):\n"
                "%.400s\n%.300s\n--- %s (%d):\n%.400s\n%.300s\n",
                what, want->status, want->out, want->err, what, got->status,
                got->out, got->err);
    fail();
  }
}

static void test_cached_facts_report_what_parsing_reports(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof(trees) / sizeof(trees[0]); i++) {
    const tree *t = &trees[i];
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/%s", FIXTURES, t->dir);
    char *cache = temp_dir();
    argv_list parse = report_args(t, t->inputs);
    run_result want = run_tool(dir, parse.items, TIMEOUT);
    const char *cached[] = {"--cache", cache, NULL};
    argv_list first = report_args(t, cached);
    add_all(&first, t->inputs, 6);
    run_result got = run_tool(dir, first.items, TIMEOUT);
    assert_same_run(&want, &got, "the run that fills the cache", 1);
    run_free(&got);
    const char *again[] = {"--cache", cache, "--stats", NULL};
    argv_list second = report_args(t, again);
    add_all(&second, t->inputs, 6);
    got = run_tool(dir, second.items, TIMEOUT);
    assert_same_run(&want, &got, "the run from the cache", 0);
    /* Only the TU that does not parse (bad/broken.c) is parsed again. */
    const char *expect =
        strcmp(t->dir, "bad") == 0 ? " 1 parsed," : " 0 parsed,";
    if (!contains(got.err, expect)) {
      print_error("%s: expected '%s' on stderr, got:\n%s\n", t->dir, expect,
                  got.err);
      fail();
    }
    run_free(&got);
    run_free(&want);
    remove_tree(cache);
    free(cache);
  }
}

/* A field of the facts that is not written to disk shows only where a
 * fixture uses it: so every fixture tree must be in `trees`. */
static void test_every_fixture_tree_is_checked(void **state) {
  (void)state;
  DIR *handle = opendir(FIXTURES);
  assert_non_null(handle);
  struct dirent *ent;
  while ((ent = readdir(handle)) != NULL) {
    if (ent->d_name[0] == '.')
      continue;
    int listed = 0;
    for (size_t i = 0; i < sizeof(trees) / sizeof(trees[0]); i++)
      listed |= strcmp(trees[i].dir, ent->d_name) == 0;
    /* baddb's database is malformed on purpose: no report to compare. */
    if (!listed && strcmp(ent->d_name, "baddb") != 0) {
      print_error("fixtures/%s is not in test_blockscan_cache.c's trees: add "
                  "it, with the options its tests scan it with\n",
                  ent->d_name);
      fail();
    }
  }
  closedir(handle);
}

/* --emit-facts for each file of the tree, then --facts over them. */
static void test_facts_files_report_what_parsing_reports(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof(trees) / sizeof(trees[0]); i++) {
    const tree *t = &trees[i];
    if (t->has_database)
      continue; /* the install test covers a database's commands */
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/%s", FIXTURES, t->dir);
    char *out = temp_dir();
    DIR *handle = opendir(dir);
    assert_non_null(handle);
    struct dirent *ent;
    while ((ent = readdir(handle)) != NULL) {
      size_t len = strlen(ent->d_name);
      if (len < 3 || strcmp(ent->d_name + len - 2, ".c") != 0)
        continue;
      char facts[700];
      snprintf(facts, sizeof(facts), "%s/%s.bwfacts", out, ent->d_name);
      argv_list emit = {{NULL}, 0};
      const char *head[] = {BLOCKSCAN_EXE, "--emit-facts", facts,
                            "--",          "cc",           NULL};
      add_all(&emit, head, 8);
      add_all(&emit, t->flags, 3);
      const char *tail[] = {"-c", ent->d_name, "-o", "/dev/null", NULL};
      add_all(&emit, tail, 8);
      run_result r = run_tool(dir, emit.items, TIMEOUT);
      int broken = strcmp(ent->d_name, "broken.c") == 0;
      if (r.status != (broken ? 2 : 0))
        print_error("--emit-facts %s: exit %d\n%s\n", ent->d_name, r.status,
                    r.err);
      assert_int_equal(r.status, broken ? 2 : 0);
      run_free(&r);
    }
    closedir(handle);
    argv_list parse = report_args(t, t->inputs);
    run_result want = run_tool(dir, parse.items, TIMEOUT);
    const char *from_facts[] = {"--facts", out, NULL};
    argv_list analysis = report_args(t, from_facts);
    run_result got = run_tool(dir, analysis.items, TIMEOUT);
    assert_same_run(&want, &got, "--facts", 1);
    run_free(&got);
    run_free(&want);
    remove_tree(out);
    free(out);
  }
}

/* ---- a small tree of our own, to change files in ---------------------- */

/* Writes (mode "w") or appends to (mode "a") dir/name. */
static void put_file(const char *dir, const char *name, const char *mode,
                     const char *text) {
  char path[600];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE *file = fopen(path, mode);
  assert_non_null(file);
  fputs(text, file);
  fclose(file);
}

static void write_file(const char *dir, const char *name, const char *text) {
  put_file(dir, name, "w", text);
}

static void append_file(const char *dir, const char *name, const char *text) {
  put_file(dir, name, "a", text);
}

/* a.c includes one.h, b.c two.h, c.c both; a database names all three. */
static char *small_tree(void) {
  char *dir = temp_dir();
  write_file(dir, "one.h", "int one(void);\n");
  write_file(dir, "two.h", "int two(void);\n");
  write_file(dir, "a.c", "#include \"one.h\"\nint one(void) { return 1; }\n");
  write_file(dir, "b.c", "#include \"two.h\"\nint two(void) { return 2; }\n");
  write_file(dir, "c.c",
             "#include \"one.h\"\n#include \"two.h\"\n"
             "int three(void) { return one() + two(); }\n");
  write_file(dir, "compile_commands.json",
             "[{\"directory\": \".\", \"file\": \"a.c\", \"command\": \"cc -c "
             "a.c\"},\n"
             " {\"directory\": \".\", \"file\": \"b.c\", \"command\": \"cc -c "
             "b.c\"},\n"
             " {\"directory\": \".\", \"file\": \"c.c\", \"command\": \"cc -c "
             "c.c\"}]\n");
  return dir;
}

/* Runs blockscan --stats in dir with `args` and checks its stats line:
 * "N translation units: " + `want` + " cache, 0 from facts files". */
static void expect_stats(const char *dir, const char *const *args,
                         const char *want) {
  argv_list list = {{NULL}, 0};
  add(&list, BLOCKSCAN_EXE);
  add(&list, "--stats");
  add_all(&list, args, MAX_ARGS);
  run_result r = run_tool_as_is(dir, list.items, TIMEOUT);
  assert_int_equal(r.status, 0);
  char line[200];
  snprintf(line, sizeof(line), "%s cache, 0 from facts files\n", want);
  if (!contains(r.err, line)) {
    print_error("expected '%s' on stderr, got:\n%s\n", line, r.err);
    fail();
  }
  run_free(&r);
}

static void cache_dir_of(const char *dir, char *cache, size_t size) {
  snprintf(cache, size, "%s/.blockscan-cache", dir);
}

static void
test_default_cache_beside_database_reparses_changed_only(void **state) {
  (void)state;
  char *dir = small_tree();
  const char *args[] = {"-p", ".", NULL};
  expect_stats(dir, args, "3 translation units: 3 parsed, 0 from the");
  char cache[600];
  cache_dir_of(dir, cache, sizeof(cache));
  struct stat st;
  assert_int_equal(stat(cache, &st), 0);
  expect_stats(dir, args, "3 translation units: 0 parsed, 3 from the");
  /* A changed header: exactly the TUs that include it. */
  append_file(dir, "one.h", "/* changed */\n");
  expect_stats(dir, args, "3 translation units: 2 parsed, 1 from the");
  /* A changed source file: that TU alone. */
  append_file(dir, "b.c", "/* changed */\n");
  expect_stats(dir, args, "3 translation units: 1 parsed, 2 from the");
  /* Other flags are another entry. */
  const char *flags[] = {"-p", ".", "a.c", "--", "-DX=1", NULL};
  expect_stats(dir, flags, "1 translation unit: 1 parsed, 0 from the");
  remove_tree(dir);
  free(dir);
}

static void test_no_cache_parses_and_writes_nothing(void **state) {
  (void)state;
  char *dir = small_tree();
  const char *args[] = {"-p", ".", "--no-cache", NULL};
  expect_stats(dir, args, "3 translation units: 3 parsed, 0 from the");
  expect_stats(dir, args, "3 translation units: 3 parsed, 0 from the");
  char cache[600];
  cache_dir_of(dir, cache, sizeof(cache));
  struct stat st;
  assert_int_not_equal(stat(cache, &st), 0);
  remove_tree(dir);
  free(dir);
}

/* Cuts one entry short and flips a bit in another. */
static void damage_entries(const char *cache) {
  DIR *handle = opendir(cache);
  assert_non_null(handle);
  struct dirent *ent;
  int damaged = 0;
  while ((ent = readdir(handle)) != NULL && damaged < 2) {
    if (ent->d_name[0] == '.')
      continue;
    char path[1000];
    snprintf(path, sizeof(path), "%s/%s", cache, ent->d_name);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    if (damaged == 0) {
      assert_int_equal(truncate(path, st.st_size / 2), 0);
    } else {
      FILE *file = fopen(path, "r+b");
      assert_non_null(file);
      fseek(file, st.st_size - 3, SEEK_SET);
      int byte = fgetc(file);
      fseek(file, st.st_size - 3, SEEK_SET);
      fputc(byte ^ 0x10, file);
      fclose(file);
    }
    damaged++;
  }
  closedir(handle);
  assert_int_equal(damaged, 2);
}

static void test_damaged_entries_are_noted_and_rebuilt(void **state) {
  (void)state;
  char *dir = small_tree();
  char cache[600];
  snprintf(cache, sizeof(cache), "%s/.blockscan-cache", dir);
  const char *args[] = {BLOCKSCAN_EXE, "--stats", "-p", ".", NULL};
  run_result clean = run_tool_as_is(dir, args, TIMEOUT);
  assert_int_equal(clean.status, 0);
  damage_entries(cache);
  run_result r = run_tool_as_is(dir, args, TIMEOUT);
  assert_int_equal(r.status, 0);
  assert_string_equal(r.out, clean.out);
  assert_true(contains(r.err, "(truncated); parsing"));
  assert_true(contains(r.err, "(bad checksum); parsing"));
  assert_true(contains(r.err, "blockscan: note: ignoring the cache entry '"));
  assert_true(contains(r.err, cache));
  assert_true(contains(r.err, "2 parsed, 1 from the cache"));
  run_free(&r);
  r = run_tool_as_is(dir, args, TIMEOUT);
  assert_true(contains(r.err, "0 parsed, 3 from the cache"));
  assert_false(contains(r.err, "note:"));
  run_free(&r);
  run_free(&clean);
  remove_tree(dir);
  free(dir);
}

static void test_unusable_facts_file_is_an_error_naming_it(void **state) {
  (void)state;
  char *dir = small_tree();
  write_file(dir, "junk.bwfacts", "BWFACTS\nnot really");
  const char *args[] = {BLOCKSCAN_EXE, "--facts", "junk.bwfacts", NULL};
  run_result r = run_tool(dir, args, TIMEOUT);
  assert_int_equal(r.status, 2);
  assert_true(contains(r.out, "junk.bwfacts: error: not a usable facts "
                              "file: truncated"));
  run_free(&r);
  const char *no_source[] = {BLOCKSCAN_EXE, "--emit-facts", "x.bwfacts", "--",
                             "cc",          "-c",           "nothing",   NULL};
  r = run_tool(dir, no_source, TIMEOUT);
  assert_int_equal(r.status, 2);
  assert_true(contains(r.err, "compiles no source file"));
  run_free(&r);
  remove_tree(dir);
  free(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_fixture_tree_is_checked),
      cmocka_unit_test(test_cached_facts_report_what_parsing_reports),
      cmocka_unit_test(test_facts_files_report_what_parsing_reports),
      cmocka_unit_test(
          test_default_cache_beside_database_reparses_changed_only),
      cmocka_unit_test(test_no_cache_parses_and_writes_nothing),
      cmocka_unit_test(test_damaged_entries_are_noted_and_rebuilt),
      cmocka_unit_test(test_unusable_facts_file_is_an_error_naming_it),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
