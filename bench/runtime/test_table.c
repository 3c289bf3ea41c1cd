/* test_table.c - cmocka tests of the bench tables: the medians printed and
 * the failures they must not hide.
 *
 * The figures in docs/bench-runtime.md are these medians, so an off-by-one
 * here would misreport every contender at once.
 */
#include "table.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

static table t; /* large: kept off the stack */

static int reset(void **state) {
  (void)state;
  t = (table){0};
  t.rows = 1;
  t.cols = 2;
  return 0;
}

static void test_median_of_odd_count_is_middle_sample(void **state) {
  (void)state;
  double samples[] = {9, 1, 5, 7, 3};
  for (size_t i = 0; i < 5; i++)
    table_add(&t, 0, 0, 0, samples[i]);
  double median = 0;
  assert_int_equal(table_median(&t, 0, 0, &median), 0);
  assert_true(median == 5);
}

static void test_median_of_even_count_averages_middle_pair(void **state) {
  (void)state;
  double samples[] = {4, 1, 10, 2};
  for (size_t i = 0; i < 4; i++)
    table_add(&t, 0, 1, 0, samples[i]);
  double median = 0;
  assert_int_equal(table_median(&t, 0, 1, &median), 0);
  assert_true(median == 3);
}

static void test_empty_cell_has_no_median(void **state) {
  (void)state;
  double median = 0;
  assert_int_equal(table_median(&t, 0, 0, &median), -ENODATA);
}

static void test_a_failed_run_poisons_the_cell(void **state) {
  (void)state;
  table_add(&t, 0, 0, 0, 1.0);
  table_add(&t, 0, 0, -EPIPE, 0);
  table_add(&t, 0, 0, 0, 2.0);
  table_add(&t, 0, 0, -ENOTSUP, 0); /* the first error is the one kept */
  double median = 0;
  assert_int_equal(table_median(&t, 0, 0, &median), -EPIPE);
}

static void test_samples_beyond_capacity_are_dropped(void **state) {
  (void)state;
  for (int i = 0; i < TABLE_MAX_SAMPLES + 10; i++)
    table_add(&t, 0, 0, 0, (double)i);
  assert_int_equal(t.cells[0][0].count, TABLE_MAX_SAMPLES);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(test_median_of_odd_count_is_middle_sample, reset),
      cmocka_unit_test_setup(test_median_of_even_count_averages_middle_pair,
                             reset),
      cmocka_unit_test_setup(test_empty_cell_has_no_median, reset),
      cmocka_unit_test_setup(test_a_failed_run_poisons_the_cell, reset),
      cmocka_unit_test_setup(test_samples_beyond_capacity_are_dropped, reset),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
