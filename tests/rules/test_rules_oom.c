/* cmocka tests of the loader under allocation failure: every malloc,
 * calloc and realloc made by bw_rules is failed in turn (link-time
 * -Wl,--wrap mocks); each load must then return -ENOMEM and leave the set
 * exactly as it was, and nothing may leak (checked by ASan's leak checker in
 * the sanitizer build).
 *
 * The wraps see only calls from other object files: those of libbw_rules.a
 * (and of this file, which does not allocate while a failure is armed).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blockwatch/rules.h"

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);

/* -1: no failure armed; otherwise the allocation (counted from 0) to fail. */
static long fail_at = -1;
static long allocations;

static int should_fail(void) {
  return fail_at >= 0 && allocations++ == fail_at;
}

void *__wrap_malloc(size_t size) {
  return should_fail() ? NULL : __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size) {
  return should_fail() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size) {
  return should_fail() ? NULL : __real_realloc(p, size);
}

static void arm(long n) {
  allocations = 0;
  fail_at = n;
}

/* True when the armed failure was never reached (the run succeeded). */
static int disarm(void) {
  int unreached = allocations <= fail_at;
  fail_at = -1;
  return unreached;
}

static const char text[] =
    "blocking:a category=io message=\"m\" hint=\"h\" unless=\"arg1 has F=2\"\n"
    "blocking:b category=sleep\n"
    "entry:e arg=1 on=pool\nentry:e arg=2 field=cb on=loop\n"
    "entry:g object=0 setter=s arg=1 on=loop\n"
    "allow:init_*\nallow:main reason=\"startup\"\ndisable: io\n";

static void test_fresh_load_fails_cleanly_at_every_allocation(void **state) {
  (void)state;
  for (long n = 0;; n++) {
    bw_rules *rs = bw_rules_create();
    assert_non_null(rs);
    arm(n);
    int rc = bw_rules_load_string(rs, "t.rules", text, strlen(text));
    int done = disarm();
    if (done) {
      assert_int_equal(rc, 0);
      assert_int_equal(bw_rules_blocking_count(rs), 2);
      bw_rules_free(rs);
      assert_true(n > 10); /* the failures really were injected */
      break;
    }
    assert_int_equal(rc, -ENOMEM);
    assert_int_equal(bw_rules_blocking_count(rs), 0);
    assert_int_equal(bw_rules_entry_count(rs), 0);
    assert_int_equal(bw_rules_allow_count(rs), 0);
    assert_null(bw_rules_find_blocking(rs, "b"));
    assert_true(bw_rules_category_enabled(rs, BW_CATEGORY_IO));
    bw_rules_free(rs);
  }
}

static void test_second_load_keeps_first_on_failure(void **state) {
  (void)state;
  const char more[] = "blocking:c category=wait\nentry:e arg=3 on=pool api=t\n"
                      "allow:other\n";
  for (long n = 0;; n++) {
    bw_rules *rs = bw_rules_create();
    assert_non_null(rs);
    assert_int_equal(bw_rules_load_string(rs, "t.rules", text, strlen(text)),
                     0);
    arm(n);
    int rc = bw_rules_load_string(rs, "u.rules", more, strlen(more));
    int done = disarm();
    const bw_entry_rule *e = bw_rules_find_entry(rs, "e");
    assert_non_null(e);
    if (done) {
      assert_int_equal(rc, 0);
      assert_int_equal(e->n_callbacks, 3);
      bw_rules_free(rs);
      break;
    }
    assert_int_equal(rc, -ENOMEM);
    assert_int_equal(e->n_callbacks, 2);
    assert_int_equal(bw_rules_blocking_count(rs), 2);
    assert_null(bw_rules_lookup_blocking(rs, "c"));
    assert_non_null(bw_rules_lookup_blocking(rs, "a"));
    assert_false(bw_rules_is_allowed(rs, "other"));
    assert_true(bw_rules_is_allowed(rs, "init_x"));
    bw_rules_free(rs);
  }
}

static void test_errors_under_allocation_failure(void **state) {
  (void)state;
  const char bad[] = "blocking:a category=nope\nblocking:b category=io\n";
  for (long n = 0;; n++) {
    bw_rules *rs = bw_rules_create();
    assert_non_null(rs);
    arm(n);
    int rc = bw_rules_load_string(rs, "t.rules", bad, strlen(bad));
    int done = disarm();
    assert_true(rc == -EINVAL || rc == -ENOMEM);
    assert_int_equal(bw_rules_blocking_count(rs), 0);
    bw_rules_free(rs);
    if (done) {
      assert_int_equal(rc, -EINVAL);
      break;
    }
  }
}

static void test_default_packs_under_allocation_failure(void **state) {
  (void)state;
  /* Every 7th allocation keeps the run short; the packs make hundreds. */
  for (long n = 0;; n += 7) {
    bw_rules *rs = bw_rules_create();
    assert_non_null(rs);
    arm(n);
    int rc = bw_rules_load_default(rs, NULL);
    int done = disarm();
    bw_rules_free(rs);
    if (done) {
      assert_int_equal(rc, 0);
      break;
    }
    assert_int_equal(rc, -ENOMEM);
  }
}

static void test_create_fails_cleanly(void **state) {
  (void)state;
  arm(0);
  bw_rules *rs = bw_rules_create();
  disarm();
  assert_null(rs);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fresh_load_fails_cleanly_at_every_allocation),
      cmocka_unit_test(test_second_load_keeps_first_on_failure),
      cmocka_unit_test(test_errors_under_allocation_failure),
      cmocka_unit_test(test_default_packs_under_allocation_failure),
      cmocka_unit_test(test_create_fails_cleanly),
  };
  return cmocka_run_group_tests_name("rules_oom", tests, NULL, NULL);
}
