/* test_blockscan_shared.c - what the TUs of a run repeat (a header's
 * declarations, a header's static inline bodies) is merged once, and each
 * TU's facts give back the repeats as soon as its functions are merged:
 * the program, and the report, are those of merging everything at the end.
 */
#include "analyze.h"
#include "facts.h"
#include "finding.h"
#include "program.h"
#include "run.h"
#include "util.h"

#include <blockwatch/rules.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 120
#define NTUS 3

/* ---- hand-built facts ---------------------------------------------------- */

static void func(bwsc__tu_facts *tu, const char *name, const char *file,
                 unsigned line, int def, int annotated) {
  bwsc__func_fact *f = BWSC__PUSH(tu->funcs, tu->nfuncs, tu->capfuncs);
  f->usr = bwsc__xasprintf("c:@F@%s", name);
  f->name = bwsc__xstrdup(name);
  f->loc.file = bwsc__xstrdup(file);
  f->loc.line = line;
  f->loc.col = 1;
  f->is_def = def;
  f->annotated = annotated;
}

/* A call with one argument, or three (a submission: 0, arg, 0). */
static void call(bwsc__tu_facts *tu, const char *caller, const char *callee,
                 const char *file, unsigned line, bwsc__value arg) {
  bwsc__call_fact *c = BWSC__PUSH(tu->calls, tu->ncalls, tu->capcalls);
  c->caller = bwsc__xasprintf("c:@F@%s", caller);
  c->callee.kind = BWSC__VAL_FUNC;
  c->callee.ref = bwsc__xasprintf("c:@F@%s", callee);
  c->callee.name = bwsc__xstrdup(callee);
  c->loc.file = bwsc__xstrdup(file);
  c->loc.line = line;
  c->loc.col = 3;
  if (arg.kind != BWSC__VAL_FUNC) {
    c->nargs = 1;
    c->args = bwsc__xcalloc(1, sizeof(bwsc__value));
    c->args[0] = arg;
    return;
  }
  c->nargs = 3;
  c->args = bwsc__xcalloc(3, sizeof(bwsc__value));
  c->args[0].kind = c->args[2].kind = BWSC__VAL_INT;
  c->args[1] = arg;
}

static bwsc__value fn_value(const char *name) {
  bwsc__value v = {BWSC__VAL_FUNC, bwsc__xasprintf("c:@F@%s", name),
                   bwsc__xstrdup(name), 0, NULL};
  return v;
}

/* The argument of a blocking call: 1 (second, microsecond). */
static bwsc__value one(void) {
  bwsc__value v = {BWSC__VAL_INT, NULL, NULL, 1, NULL};
  return v;
}

/* fixtures/shared as facts: every TU declares slow_step and marked_cb and
 * holds the body of the header's nap(), which one.c's callback calls;
 * two.c defines both, three.c alone says marked_cb is a pool callback. */
static void shared_tree(bwsc__tu_facts tus[NTUS]) {
  static const char *const files[NTUS] = {"/s/one.c", "/s/two.c", "/s/three.c"};
  memset(tus, 0, NTUS * sizeof(*tus));
  for (int t = 0; t < NTUS; t++) {
    tus[t].file = bwsc__xstrdup(files[t]);
    func(&tus[t], "slow_step", "/s/shared.h", 7, 0, 0);
    func(&tus[t], "marked_cb", "/s/shared.h", 8, 0, 0);
    func(&tus[t], "nap", "/s/shared.h", 10, 1, 0);
    call(&tus[t], "nap", "usleep", "/s/shared.h", 11, one());
  }
  func(&tus[0], "quick", files[0], 4, 1, 0);
  call(&tus[0], "quick", "nap", files[0], 6, one());
  func(&tus[0], "start_one", files[0], 9, 1, 0);
  call(&tus[0], "start_one", "bw_submit", files[0], 10, fn_value("slow_step"));
  call(&tus[0], "start_one", "bw_submit", files[0], 11, fn_value("quick"));
  func(&tus[1], "slow_step", files[1], 5, 1, 0);
  call(&tus[1], "slow_step", "sleep", files[1], 7, one());
  func(&tus[1], "marked_cb", files[1], 10, 1, 0);
  call(&tus[1], "marked_cb", "usleep", files[1], 11, one());
  func(&tus[2], "marked_cb", files[2], 5, 0, 1);
}

static void free_tree(bwsc__tu_facts tus[NTUS]) {
  for (int t = 0; t < NTUS; t++)
    bwsc__facts_free(&tus[t]);
}

static void assert_same_loc(const bwsc__loc *a, const bwsc__loc *b) {
  assert_string_equal(a->file, b->file);
  assert_int_equal(a->line, b->line);
  assert_int_equal(a->col, b->col);
}

static void assert_same_findings(const bwsc__findings *a,
                                 const bwsc__findings *b) {
  assert_int_equal(a->count, b->count);
  for (size_t i = 0; i < a->count; i++) {
    assert_string_equal(a->items[i].fingerprint, b->items[i].fingerprint);
    assert_same_loc(&a->items[i].loc, &b->items[i].loc);
  }
}

static void test_merging_tu_by_tu_gives_back_the_repeats(void **state) {
  (void)state;
  bwsc__tu_facts whole[NTUS], steps[NTUS];
  shared_tree(whole);
  shared_tree(steps);
  bwsc__program at_end, in_steps;
  bwsc__program_build(&at_end, whole, NTUS);
  bwsc__program_init(&in_steps);
  for (int t = 0; t < NTUS; t++) {
    bwsc__program_add_functions(&in_steps, &steps[t]);
    /* The nodes hold what they need: the TU's function facts are gone,
     * and so is every call of a body an earlier TU already gave. */
    assert_int_equal(steps[t].nfuncs, 0);
    assert_true(steps[t].interned);
  }
  assert_int_equal(steps[0].ncalls, 4); /* nap's usleep and the rest */
  assert_int_equal(steps[1].ncalls, 2); /* sleep, usleep: not nap's copy */
  assert_int_equal(steps[2].ncalls, 0);
  bwsc__program_finish(&in_steps, steps, NTUS);

  assert_int_equal(in_steps.nnodes, at_end.nnodes);
  assert_int_equal(in_steps.ncalls, at_end.ncalls);
  for (size_t n = 0; n < at_end.nnodes; n++) {
    const bwsc__node *want = &at_end.nodes[n], *got = &in_steps.nodes[n];
    assert_string_equal(got->usr, want->usr);
    assert_int_equal(got->annotated, want->annotated);
    assert_int_equal(got->nbody_tus, want->nbody_tus);
    assert_int_equal(!got->def, !want->def);
    if (want->def)
      assert_same_loc(&got->def->loc, &want->def->loc);
    assert_int_equal(!got->decl, !want->decl);
    if (want->decl)
      assert_same_loc(&got->decl->loc, &want->decl->loc);
  }
  const bwsc__node *marked = bwsc__program_node(&in_steps, "c:@F@marked_cb");
  assert_non_null(marked);
  assert_true(marked->annotated); /* said by three.c's declaration only */
  assert_int_equal(marked->def->loc.line, 10);

  bw_rules *rules = bw_rules_create();
  assert_int_equal(bw_rules_load_default(rules, NULL), 0);
  bwsc__findings want = {0}, got = {0};
  bwsc__analyze(&at_end, rules, &want);
  bwsc__analyze(&in_steps, rules, &got);
  bwsc__findings_sort(&want);
  bwsc__findings_sort(&got);
  assert_int_equal(want.count, 3); /* nap's usleep, sleep, marked_cb's */
  assert_same_findings(&want, &got);
  bwsc__findings_free(&want);
  bwsc__findings_free(&got);
  bw_rules_free(rules);
  bwsc__program_free(&at_end);
  bwsc__program_free(&in_steps);
  free_tree(whole);
  free_tree(steps);
}

/* ---- the fixture tree, parsed -------------------------------------------- */

static run_result scan(const char *jobs, const char *cache) {
  const char *argv[] = {BLOCKSCAN_EXE, "-j",
                        jobs,          "-p",
                        ".",           "--confidence",
                        "low",         cache ? "--cache" : NULL,
                        cache,         NULL};
  return run_tool(FIXTURES "/shared", argv, TIMEOUT);
}

static void
test_repeated_header_facts_report_once_whatever_the_jobs(void **state) {
  (void)state;
  run_result one = scan("1", NULL);
  assert_int_equal(one.status, 1);
  /* nap()'s body is parsed by every TU, merged from one.c's: both
   * callbacks reach it. slow_step is declared by one.c first and defined
   * by two.c; marked_cb is a pool callback by three.c's word alone. */
  static const char *const expected[] = {
      "shared.h:11:3: warning: 'usleep' blocks a pool worker: reached from 2 "
      "callbacks: quick, rest",
      "two.c:7:3: warning: 'sleep' blocks a pool worker: reached from "
      "callback 'slow_step'",
      "two.c:11:3: warning: 'usleep' blocks a pool worker: reached from "
      "callback 'marked_cb'",
      NULL};
  for (size_t i = 0; expected[i]; i++)
    if (!contains(one.out, expected[i])) {
      print_error("missing: %s\nin:\n%s\n", expected[i], one.out);
      fail();
    }
  run_result two = scan("2", NULL);
  assert_int_equal(two.status, one.status);
  assert_string_equal(two.out, one.out);

  char dir[] = "/tmp/blockscan-shared-XXXXXX";
  assert_non_null(mkdtemp(dir));
  for (int pass = 0; pass < 2; pass++) { /* filling the cache, then from it */
    run_result cached = scan("2", dir);
    assert_int_equal(cached.status, one.status);
    assert_string_equal(cached.out, one.out);
    run_free(&cached);
  }
  char command[128];
  snprintf(command, sizeof(command), "rm -rf '%s'", dir);
  assert_int_equal(system(command), 0);
  run_free(&one);
  run_free(&two);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_merging_tu_by_tu_gives_back_the_repeats),
      cmocka_unit_test(
          test_repeated_header_facts_report_once_whatever_the_jobs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
