/* test_blockscan_conds.c - precision on fixtures/conds: the rules'
 * conditions with flags ORed in the call or the rule, named constants, and
 * constants that reach the call through a wrapper's parameter or a local
 * (conds.c); spin waits, reported once as such (spin.c); descriptors the
 * program's own functions make non-blocking, and a user's setter rule
 * (nbmore.c, nbmore.rules); wrappers that compute the mode they give
 * fcntl(F_SETFL) from a test of their parameter, with no rule (nbmode.c);
 * constants a call chain passes to a wrapper's parameter, and waits on
 * descriptors on an offload pool (chain.c); a condition on a field of the
 * struct an argument points to, also set inside a macro (hints.c); calls
 * in branches whose test of a parameter the chain's constant fails
 * (branch.c).
 *
 * Invariant: the fixtures say what they expect on the line itself (see
 * marked.h): "expect" must be a warning, "not reported" must not.
 */
#include "marked.h"
#include "run.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#define CONDS FIXTURES "/conds"

/* Scans `files` (NULL-terminated) together, with `extra` arguments;
 * checks the marked lines of the first. */
static void check_with(const char *const *files, const char *const *extra) {
  int status;
  assert_int_equal(
      marked_mismatches(BLOCKSCAN_EXE, CONDS, files, extra, &status), 0);
  assert_int_equal(status, 1);
}

static void check(const char *const *files) {
  check_with(files, NULL);
}

static void test_flags_constants_and_constant_parameters(void **state) {
  (void)state;
  const char *files[] = {"conds.c", NULL};
  check(files);
}

static void test_constants_of_the_chain_and_offloaded_waits(void **state) {
  (void)state;
  const char *files[] = {"chain.c", NULL};
  check(files);
}

static void test_a_field_of_the_struct_an_argument_points_to(void **state) {
  (void)state;
  const char *files[] = {"hints.c", NULL};
  check(files);
}

static void test_branches_the_chains_constants_do_not_take(void **state) {
  (void)state;
  const char *files[] = {"branch.c", NULL};
  check(files);
}

static void test_spin_waits_are_reported_once_as_spin_wait(void **state) {
  (void)state;
  const char *files[] = {"spin.c", NULL};
  check(files);
  const char *argv[] = {BLOCKSCAN_EXE, "spin.c", "--color=never", "--", NULL};
  run_result r = run_tool(CONDS, argv, 120);
  /* Yields, brief sleeps and a bare loop are spin waits; a 1 us usleep and
   * a nanosleep whose timespec is not known to be zero stay sleeps. */
  static const char *const lines[] = {
      "spin.c:31:5: warning: a loop polling with 'uv_sleep' blocks the event "
      "loop",
      "spin.c:37:5: warning: a loop polling with 'sched_yield'",
      "spin.c:45:5: warning: a loop polling with 'g_usleep'",
      "spin.c:46:3: warning: a loop polling with 'while "
      "(!atomic_load(&ready))'",
      "[blocking-spin-wait]",
      "spin.c:39:5: warning: 'usleep' blocks a pool worker",
      "spin.c:42:5: warning: 'nanosleep' blocks a pool worker",
      NULL};
  for (size_t i = 0; lines[i]; i++)
    if (!contains(r.out, lines[i]))
      fail_msg("no '%s' in:\n%s", lines[i], r.out);
  run_free(&r);
}

static void
test_descriptors_made_nonblocking_by_the_programs_functions(void **state) {
  (void)state;
  const char *files[] = {"nbmore.c", NULL};
  const char *extra[] = {"--rules", "nbmore.rules", NULL};
  check_with(files, extra);
}

static void test_setters_that_compute_the_mode_from_a_parameter(void **state) {
  (void)state;
  const char *files[] = {"nbmode.c", NULL};
  check(files);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_flags_constants_and_constant_parameters),
      cmocka_unit_test(test_constants_of_the_chain_and_offloaded_waits),
      cmocka_unit_test(test_a_field_of_the_struct_an_argument_points_to),
      cmocka_unit_test(test_branches_the_chains_constants_do_not_take),
      cmocka_unit_test(test_spin_waits_are_reported_once_as_spin_wait),
      cmocka_unit_test(
          test_descriptors_made_nonblocking_by_the_programs_functions),
      cmocka_unit_test(test_setters_that_compute_the_mode_from_a_parameter),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
