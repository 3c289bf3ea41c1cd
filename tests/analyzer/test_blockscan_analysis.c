/* test_blockscan_analysis.c - the analysis on hand-built TU facts, with no
 * libclang: facts are plain values, so the graph logic is tested alone
 * (wrappers, recursion, conditions, fingerprints, parameter bindings,
 * confidence, one definition per TU).
 */
#include "analyze.h"
#include "facts.h"
#include "finding.h"
#include "program.h"
#include "util.h"

#include <blockwatch/rules.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

/* ---- building facts ------------------------------------------------------ */

static void func(bwsc__tu_facts *tu, const char *name, unsigned line, int def) {
  bwsc__func_fact *f = BWSC__PUSH(tu->funcs, tu->nfuncs, tu->capfuncs);
  f->usr = bwsc__xasprintf("c:@F@%s", name);
  f->name = bwsc__xstrdup(name);
  f->loc.file = bwsc__xstrdup("/src/t.c");
  f->loc.line = line;
  f->loc.col = 1;
  f->is_def = def;
}

static bwsc__value fn_value(const char *name) {
  bwsc__value v = {BWSC__VAL_FUNC, bwsc__xasprintf("c:@F@%s", name),
                   bwsc__xstrdup(name), 0, NULL};
  return v;
}

static bwsc__value int_value(long long n) {
  bwsc__value v = {BWSC__VAL_INT, NULL, NULL, n, NULL};
  return v;
}

static bwsc__value param_value(const char *function, int index) {
  bwsc__value v = {BWSC__VAL_SLOT,
                   bwsc__xasprintf("c:@F@%s#%d", function, index),
                   bwsc__xstrdup("p"), 0, NULL};
  return v;
}

/* A call from `caller` to `callee` at `line` with n argument values. */
static void call(bwsc__tu_facts *tu, const char *caller, const char *callee,
                 unsigned line, size_t n, ...) {
  bwsc__call_fact *c = BWSC__PUSH(tu->calls, tu->ncalls, tu->capcalls);
  c->caller = bwsc__xasprintf("c:@F@%s", caller);
  c->callee = fn_value(callee);
  c->loc.file = bwsc__xstrdup("/src/t.c");
  c->loc.line = line;
  c->loc.col = 3;
  c->nargs = n;
  c->args = bwsc__xcalloc(n + 1, sizeof(bwsc__value));
  va_list ap;
  va_start(ap, n);
  for (size_t i = 0; i < n; i++)
    c->args[i] = va_arg(ap, bwsc__value);
  va_end(ap);
}

/* A call through a pointer (`callee` is a slot value), without arguments. */
static void call_via(bwsc__tu_facts *tu, const char *caller, bwsc__value callee,
                     unsigned line) {
  bwsc__call_fact *c = BWSC__PUSH(tu->calls, tu->ncalls, tu->capcalls);
  c->caller = bwsc__xasprintf("c:@F@%s", caller);
  c->callee = callee;
  c->loc.file = bwsc__xstrdup("/src/t.c");
  c->loc.line = line;
  c->loc.col = 3;
}

/* `slot` may hold function `name`. */
static void flow(bwsc__tu_facts *tu, const char *slot, const char *name) {
  bwsc__flow_fact *f = BWSC__PUSH(tu->flows, tu->nflows, tu->capflows);
  f->slot = bwsc__xstrdup(slot);
  f->value = fn_value(name);
}

typedef struct fixture {
  bwsc__tu_facts tu;
  bw_rules *rules;
  bwsc__program prog;
  bwsc__findings findings;
} fixture;

static int setup(void **state) {
  fixture *fx = bwsc__xcalloc(1, sizeof(fixture));
  fx->rules = bw_rules_create();
  assert_int_equal(bw_rules_load_default(fx->rules, NULL), 0);
  *state = fx;
  return 0;
}

static int teardown(void **state) {
  fixture *fx = *state;
  bwsc__findings_free(&fx->findings);
  bwsc__program_free(&fx->prog);
  bwsc__facts_free(&fx->tu);
  bw_rules_free(fx->rules);
  free(fx);
  return 0;
}

static void analyse(fixture *fx) {
  bwsc__program_build(&fx->prog, &fx->tu, 1);
  bwsc__analyze(&fx->prog, fx->rules, &fx->findings);
  bwsc__findings_sort(&fx->findings);
}

/* ---- tests ----------------------------------------------------------------
 */

static void test_wrapper_of_wrapper_names_the_outer_wrapper(void **state) {
  fixture *fx = *state;
  func(&fx->tu, "inner_wrap", 1, 1);
  func(&fx->tu, "outer_wrap", 5, 1);
  func(&fx->tu, "cb", 9, 1);
  func(&fx->tu, "main", 12, 1);
  call(&fx->tu, "inner_wrap", "bw_submit", 2, 3, int_value(0),
       param_value("inner_wrap", 0), int_value(0));
  call(&fx->tu, "outer_wrap", "inner_wrap", 6, 1, param_value("outer_wrap", 0));
  call(&fx->tu, "cb", "sleep", 10, 1, int_value(1));
  call(&fx->tu, "main", "outer_wrap", 13, 1, fn_value("cb"));
  analyse(fx);
  assert_int_equal(fx->findings.count, 1);
  const bwsc__finding *f = &fx->findings.items[0];
  assert_string_equal(f->callback, "cb");
  assert_string_equal(f->entry, "outer_wrap");
  assert_int_equal(f->submit_loc.line, 13);
  assert_string_equal(f->rule->id, "blocking-sleep");
}

static void test_recursion_ends_with_the_shortest_chain(void **state) {
  fixture *fx = *state;
  func(&fx->tu, "cb", 1, 1);
  func(&fx->tu, "a", 3, 1);
  func(&fx->tu, "b", 5, 1);
  func(&fx->tu, "main", 8, 1);
  call(&fx->tu, "cb", "a", 2, 0);
  call(&fx->tu, "a", "b", 4, 0);
  call(&fx->tu, "b", "a", 6, 0);
  call(&fx->tu, "b", "b", 6, 0);
  call(&fx->tu, "a", "usleep", 4, 1, int_value(5));
  call(&fx->tu, "main", "bw_submit", 9, 3, int_value(0), fn_value("cb"),
       int_value(0));
  analyse(fx);
  assert_int_equal(fx->findings.count, 1);
  assert_int_equal(fx->findings.items[0].nchain, 2); /* cb -> a */
  assert_string_equal(fx->findings.items[0].chain[1].function, "a");
}

static void test_flag_argument_makes_waitpid_nonblocking(void **state) {
  fixture *fx = *state;
  func(&fx->tu, "cb", 1, 1);
  func(&fx->tu, "main", 8, 1);
  call(&fx->tu, "cb", "waitpid", 2, 3, int_value(-1), int_value(0),
       int_value(1)); /* WNOHANG */
  call(&fx->tu, "cb", "waitpid", 3, 3, int_value(-1), int_value(0),
       int_value(3)); /* WNOHANG | WUNTRACED */
  call(&fx->tu, "cb", "waitpid", 4, 3, int_value(-1), int_value(0),
       int_value(2)); /* WUNTRACED only: blocks */
  call(&fx->tu, "main", "bw_submit", 9, 3, int_value(0), fn_value("cb"),
       int_value(0));
  analyse(fx);
  assert_int_equal(fx->findings.count, 1);
  assert_int_equal(fx->findings.items[0].loc.line, 4);
}

static void test_thread_start_routine_is_not_a_root(void **state) {
  fixture *fx = *state;
  func(&fx->tu, "thread_main", 1, 1);
  func(&fx->tu, "main", 8, 1);
  call(&fx->tu, "thread_main", "sleep", 2, 1, int_value(1));
  call(&fx->tu, "main", "pthread_create", 9, 4, int_value(0), int_value(0),
       fn_value("thread_main"), int_value(0));
  analyse(fx);
  assert_int_equal(fx->findings.count, 0);
}

static void test_fingerprint_ignores_lines(void **state) {
  fixture *fx = *state;
  func(&fx->tu, "cb", 1, 1);
  func(&fx->tu, "main", 8, 1);
  call(&fx->tu, "cb", "sleep", 2, 1, int_value(1));
  call(&fx->tu, "main", "bw_submit", 9, 3, int_value(0), fn_value("cb"),
       int_value(0));
  analyse(fx);
  assert_int_equal(fx->findings.count, 1);
  char first[17];
  memcpy(first, fx->findings.items[0].fingerprint, sizeof(first));
  bwsc__findings_free(&fx->findings);
  bwsc__program_free(&fx->prog);
  for (size_t i = 0; i < fx->tu.ncalls; i++)
    fx->tu.calls[i].loc.line += 100;
  analyse(fx);
  assert_int_equal(fx->findings.count, 1);
  assert_string_equal(first, fx->findings.items[0].fingerprint);
}

static void test_parameter_call_follows_the_chain_s_arguments(void **state) {
  fixture *fx = *state;
  const char *names[] = {"nap",      "quick",     "run_it", "relay",
                         "quiet_cb", "sleepy_cb", "main"};
  for (unsigned i = 0; i < 7; i++)
    func(&fx->tu, names[i], 10 * i + 1, 1);
  call(&fx->tu, "nap", "sleep", 2, 1, int_value(1));
  call_via(&fx->tu, "run_it", param_value("run_it", 0), 22);
  call(&fx->tu, "relay", "run_it", 32, 1, param_value("relay", 0));
  call(&fx->tu, "quiet_cb", "relay", 42, 1, fn_value("quick"));
  call(&fx->tu, "sleepy_cb", "relay", 52, 1, fn_value("nap"));
  call(&fx->tu, "main", "bw_submit", 62, 3, int_value(0), fn_value("quiet_cb"),
       int_value(0));
  call(&fx->tu, "main", "bw_submit", 63, 3, int_value(0), fn_value("sleepy_cb"),
       int_value(0));
  analyse(fx);
  assert_int_equal(fx->findings.count, 1);
  const bwsc__finding *f = &fx->findings.items[0];
  assert_string_equal(f->callback, "sleepy_cb");
  assert_int_equal(f->nchain, 4); /* sleepy_cb relay run_it nap */
  assert_non_null(f->chain[2].through);
  assert_int_equal(f->chain[2].ntargets, 1);
  assert_false(f->low);
}

static void test_call_through_a_wide_slot_is_low_confidence(void **state) {
  fixture *fx = *state;
  const char *names[] = {"fin_a", "fin_b", "fin_c", "fin_d", "fin_slow"};
  for (unsigned i = 0; i < 5; i++) {
    func(&fx->tu, names[i], i + 1, 1);
    flow(&fx->tu, "c:@S@klass@FI@finalize", names[i]);
  }
  func(&fx->tu, "cb", 10, 1);
  func(&fx->tu, "main", 20, 1);
  call(&fx->tu, "fin_slow", "sleep", 6, 1, int_value(1));
  bwsc__value slot = {BWSC__VAL_SLOT, bwsc__xstrdup("c:@S@klass@FI@finalize"),
                      bwsc__xstrdup("k->finalize"), 0, NULL};
  call_via(&fx->tu, "cb", slot, 11);
  call(&fx->tu, "main", "bw_submit", 21, 3, int_value(0), fn_value("cb"),
       int_value(0));
  analyse(fx);
  assert_int_equal(fx->findings.count, 1);
  const bwsc__finding *f = &fx->findings.items[0];
  assert_true(f->low);
  assert_string_equal(f->chain[0].through, "k->finalize");
  assert_int_equal(f->chain[0].ntargets, BWSC__WIDE_TARGETS + 1);
}

/* Two TUs define report() at different places: TU 0's callback calls its
 * own, which does not block. */
static void test_call_resolves_to_its_own_tu_s_definition(void **state) {
  fixture *fx = *state;
  bwsc__tu_facts tus[2];
  memset(tus, 0, sizeof(tus));
  func(&tus[0], "report", 1, 1);
  func(&tus[0], "a_cb", 3, 1);
  func(&tus[0], "main", 6, 1);
  call(&tus[0], "a_cb", "report", 4, 0);
  call(&tus[0], "main", "bw_submit", 7, 3, int_value(0), fn_value("a_cb"),
       int_value(0));
  func(&tus[1], "report", 40, 1);
  func(&tus[1], "main", 46, 1);
  call(&tus[1], "report", "sleep", 41, 1, int_value(1));
  call(&tus[1], "main", "report", 47, 0);
  bwsc__program_build(&fx->prog, tus, 2);
  bwsc__analyze(&fx->prog, fx->rules, &fx->findings);
  assert_int_equal(fx->findings.count, 0);
  bwsc__findings_free(&fx->findings);
  bwsc__program_free(&fx->prog);
  bwsc__facts_free(&tus[0]);
  bwsc__facts_free(&tus[1]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(
          test_wrapper_of_wrapper_names_the_outer_wrapper, setup, teardown),
      cmocka_unit_test_setup_teardown(
          test_recursion_ends_with_the_shortest_chain, setup, teardown),
      cmocka_unit_test_setup_teardown(
          test_flag_argument_makes_waitpid_nonblocking, setup, teardown),
      cmocka_unit_test_setup_teardown(test_thread_start_routine_is_not_a_root,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_fingerprint_ignores_lines, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(
          test_parameter_call_follows_the_chain_s_arguments, setup, teardown),
      cmocka_unit_test_setup_teardown(
          test_call_through_a_wide_slot_is_low_confidence, setup, teardown),
      cmocka_unit_test_setup_teardown(
          test_call_resolves_to_its_own_tu_s_definition, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
