/* cmocka tests of the unless= constants that combine flags: "A=1|B=2"
 * (ORed, so "has" means all of them), what the packs say with it (flock,
 * getnameinfo) and the errors of a bad operand, at its own column; and the
 * spin-wait category, which no rule names but blockscan reports.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "errors_seen.h"

/* Loads one rule of function f with condition `unless`; returns the set
 * (the caller frees it), whose load returned *rc. */
static bw_rules *load_cond(const char *unless, int *rc) {
  char text[256];
  snprintf(text, sizeof(text), "blocking:f category=io unless=\"%s\"\n",
           unless);
  return seen_rules(text, rc);
}

static void expect_cond(const char *unless, bw_cond_kind kind, int arg,
                        long long value, const char *name) {
  int rc;
  bw_rules *rs = load_cond(unless, &rc);
  assert_int_equal(rc, 0);
  const bw_rule_cond *c = &bw_rules_lookup_blocking(rs, "f")->unless[0];
  assert_int_equal(c->kind, kind);
  assert_int_equal(c->arg, arg);
  assert_int_equal(c->value, value);
  if (name)
    assert_string_equal(c->name, name);
  else
    assert_null(c->name);
  bw_rules_free(rs);
}

static void expect_error(const char *unless, const char *expected) {
  char text[256];
  snprintf(text, sizeof(text), "blocking:f category=io unless=\"%s\"\n",
           unless);
  bw_rules *rs = seen_error(text, expected);
  assert_int_equal(bw_rules_blocking_count(rs), 0);
  bw_rules_free(rs);
}

static void test_has_all_of_flags_joined_by_bar(void **state) {
  (void)state;
  expect_cond("arg6 has NI_NUMERICHOST=1|NI_NUMERICSERV=2", BW_COND_HAS_FLAG, 6,
              3, "NI_NUMERICHOST|NI_NUMERICSERV");
}

static void test_is_equal_to_an_or_of_named_constants(void **state) {
  (void)state;
  expect_cond("arg1 is LOCK_SH=1|LOCK_NB=4", BW_COND_EQUALS, 1, 5,
              "LOCK_SH|LOCK_NB");
}

static void test_bar_list_may_mix_numbers_and_names(void **state) {
  (void)state;
  expect_cond("arg0 has 0x10|B=0x1", BW_COND_HAS_FLAG, 0, 0x11, "0x10|B");
  expect_cond("arg0 is 1|2", BW_COND_EQUALS, 0, 3, NULL);
}

/* The column is that of the operand at fault: the value starts at column
 * 31 (its quote), "arg0 has A=1|" is 13 characters. */
static void test_bad_operand_is_named_at_its_column(void **state) {
  (void)state;
  expect_error("arg0 has A=1|B",
               "t.rules:1:45: error: constant 'B' needs its value for the "
               "shim: write B=<number>");
  expect_error("arg0 has A=1|B=x",
               "t.rules:1:45: error: bad number 'x' in condition");
  expect_error("arg0 has A=1|", "t.rules:1:45: error: bad number '' in "
                                "condition");
  expect_error("arg0 has A=1||B=2",
               "t.rules:1:45: error: bad number '' in condition");
  expect_error("arg0 has A=1|9B=2",
               "t.rules:1:45: error: bad constant name '9B' in condition");
  expect_error("arg0 has A=0|B=0",
               "t.rules:1:31: error: flag 'A=0|B=0' has no bits set");
}

/* flock: LOCK_UN and LOCK_NB never wait; getnameinfo resolves nothing
 * only with both numeric flags. */
static void test_packs_use_the_new_forms(void **state) {
  (void)state;
  bw_rules *rs = bw_rules_create();
  assert_non_null(rs);
  assert_int_equal(bw_rules_load_default(rs, "libc"), 0);
  const bw_blocking_rule *flock = bw_rules_lookup_blocking(rs, "flock");
  assert_int_equal(flock->n_unless, 2);
  assert_int_equal(flock->unless[0].kind, BW_COND_HAS_FLAG);
  assert_int_equal(flock->unless[0].value, 4);
  assert_int_equal(flock->unless[1].kind, BW_COND_EQUALS);
  assert_int_equal(flock->unless[1].value, 8);
  assert_string_equal(flock->unless[1].name, "LOCK_UN");
  const bw_blocking_rule *gni = bw_rules_lookup_blocking(rs, "getnameinfo");
  assert_int_equal(gni->n_unless, 1);
  assert_int_equal(gni->unless[0].kind, BW_COND_HAS_FLAG);
  assert_int_equal(gni->unless[0].value, 3);
  assert_string_equal(gni->unless[0].name, "NI_NUMERICHOST|NI_NUMERICSERV");
  bw_rules_free(rs);
}

/* The spin-wait category: named, with an id, a hint that names a signal,
 * usable in enable:/disable:, on by default. */
static void test_spin_wait_is_a_category(void **state) {
  (void)state;
  bw_rule_category cat;
  assert_int_equal(bw_rule_category_parse("spin-wait", &cat), 0);
  assert_int_equal(cat, BW_CATEGORY_SPIN_WAIT);
  assert_string_equal(bw_rule_category_id(cat), "blocking-spin-wait");
  assert_non_null(strstr(bw_rule_category_hint(cat), "condition variable"));
  assert_null(bw_rule_category_hint(BW_CATEGORY_COUNT));
  int rc;
  bw_rules *rs = load_cond("arg0 is 0", &rc);
  assert_true(bw_rules_category_enabled(rs, BW_CATEGORY_SPIN_WAIT));
  assert_int_equal(
      bw_rules_load_string(rs, "d.rules", "disable: spin-wait\n", 19), 0);
  assert_false(bw_rules_category_enabled(rs, BW_CATEGORY_SPIN_WAIT));
  bw_rules_free(rs);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_has_all_of_flags_joined_by_bar),
      cmocka_unit_test(test_is_equal_to_an_or_of_named_constants),
      cmocka_unit_test(test_bar_list_may_mix_numbers_and_names),
      cmocka_unit_test(test_bad_operand_is_named_at_its_column),
      cmocka_unit_test(test_packs_use_the_new_forms),
      cmocka_unit_test(test_spin_wait_is_a_category),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
