/* test_async_mutex.c - the async mutex: a lock that cannot complete at once
 * pends until an unlock passes the mutex on, oldest waiter first; critical
 * sections that span continuations and delays exclude each other; tokens
 * and destroy end pending locks with defined results.
 * Bounds are generous: the box is a noisy 2-core machine.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "blockwatch/runtime.h"
#include "rt_helpers.h"

static void test_async_mutex_lock_try_lock_unlock(void **state) {
  (void)state;
  bw_async_mutex *m = bw_async_mutex_create();
  assert_non_null(m);
  assert_false(bw_async_mutex_is_locked(m));
  assert_int_equal(bw_async_mutex_unlock(m), -EPERM);
  bw_task *t = bw_async_mutex_lock(m, NULL);
  assert_int_equal(bw_task_error(t), 0);
  assert_true(bw_async_mutex_is_locked(m));
  assert_int_equal(bw_async_mutex_try_lock(m), -EBUSY);
  assert_int_equal(bw_async_mutex_unlock(m), 0);
  assert_false(bw_async_mutex_is_locked(m));
  assert_int_equal(bw_async_mutex_try_lock(m), 0);
  assert_int_equal(bw_async_mutex_unlock(m), 0);
  assert_int_equal(bw_async_mutex_unlock(m), -EPERM);
  bw_task_release(t);
  assert_int_equal(bw_async_mutex_destroy(m), 0);

  assert_int_equal(bw_async_mutex_try_lock(NULL), -EINVAL);
  assert_int_equal(bw_async_mutex_unlock(NULL), -EINVAL);
  assert_int_equal(bw_async_mutex_destroy(NULL), -EINVAL);
  assert_false(bw_async_mutex_is_locked(NULL));
  errno = 0;
  assert_null(bw_async_mutex_lock(NULL, NULL));
  assert_int_equal(errno, EINVAL);
}

static void test_async_mutex_unlock_passes_to_the_oldest(void **state) {
  (void)state;
  enum { N = 6 };
  bw_async_mutex *m = bw_async_mutex_create();
  assert_int_equal(bw_async_mutex_try_lock(m), 0);
  bw_task *t[N];
  for (int i = 0; i < N; i++)
    t[i] = bw_async_mutex_lock(m, NULL);
  for (int i = 0; i < N; i++) {
    assert_int_equal(bw_async_mutex_unlock(m), 0);
    /* Passed on, not freed: a try_lock cannot slip in. */
    assert_true(bw_async_mutex_is_locked(m));
    assert_int_equal(bw_async_mutex_try_lock(m), -EBUSY);
    for (int j = 0; j < N; j++)
      assert_int_equal(bw_task_error(t[j]), j <= i ? 0 : -EINPROGRESS);
  }
  assert_int_equal(bw_async_mutex_unlock(m), 0);
  assert_false(bw_async_mutex_is_locked(m));
  for (int i = 0; i < N; i++)
    bw_task_release(t[i]);
  bw_async_mutex_destroy(m);
}

static void test_async_mutex_cancel_and_destroy(void **state) {
  (void)state;
  bw_async_mutex *m = bw_async_mutex_create();
  bw_cancel_token *tok = bw_cancel_token_create();
  assert_int_equal(bw_async_mutex_try_lock(m), 0);
  bw_task *a = bw_async_mutex_lock(m, tok);
  bw_task *b = bw_async_mutex_lock(m, NULL);
  bw_cancel_token_cancel(tok);
  assert_int_equal(bw_task_error(a), -ECANCELED);
  bw_async_mutex_unlock(m);
  assert_int_equal(bw_task_error(b), 0);
  bw_task *c = bw_async_mutex_lock(m, NULL);
  /* Destroyed while locked with a lock pending. */
  assert_int_equal(bw_async_mutex_destroy(m), 0);
  assert_int_equal(bw_task_error(c), -ESHUTDOWN);
  bw_task_release(a);
  bw_task_release(b);
  bw_task_release(c);
  bw_cancel_token_release(tok);
}

/* Critical sections that span a delay: each reads a plain counter, waits
 * for a delay (holding no thread), then writes it back plus one. Without
 * exclusion increments would be lost. */
enum { SECTIONS = 200 };

typedef struct shared {
  bw_async_mutex *m;
  bw_pool *pool;
  long counter; /* guarded by m */
  atomic_int inside, overlap;
  atomic_long done;
} shared;

static shared sh;

static void *finish_section(bw_task *done, void *arg) {
  long seen = (long)(intptr_t)arg;
  (void)done;
  sh.counter = seen + 1;
  if (atomic_fetch_sub(&sh.inside, 1) != 1)
    atomic_store(&sh.overlap, 1);
  bw_async_mutex_unlock(sh.m);
  atomic_fetch_add(&sh.done, 1);
  return NULL;
}

static void *enter_section(bw_task *done, void *arg) {
  (void)arg;
  if (bw_task_error(done) != 0)
    return NULL;
  if (atomic_fetch_add(&sh.inside, 1) != 0)
    atomic_store(&sh.overlap, 1);
  intptr_t seen = sh.counter;
  bw_task *d = bw_delay(sh.pool, (seen % 3) == 0 ? 1 : 0);
  bw_task_release(bw_then_consume(d, finish_section, (void *)seen));
  return NULL;
}

static void *start_section(void *arg) {
  (void)arg;
  bw_task *t = bw_async_mutex_lock(sh.m, NULL);
  bw_task_release(bw_then_consume(t, enter_section, NULL));
  return NULL;
}

static void
test_async_mutex_excludes_sections_across_continuations(void **state) {
  (void)state;
  bw_pool_config cfg = {.name = "amutex", .min_workers = 2, .max_workers = 2};
  sh.pool = bw_pool_create(&cfg);
  sh.m = bw_async_mutex_create();
  for (int i = 0; i < SECTIONS; i++)
    bw_task_release(bw_run(sh.pool, start_section, NULL));
  assert_int_equal(rt_wait_count(&sh.done, SECTIONS, 60000), SECTIONS);
  assert_int_equal(sh.counter, SECTIONS);
  assert_int_equal(atomic_load(&sh.overlap), 0);
  assert_false(bw_async_mutex_is_locked(sh.m));
  assert_int_equal(bw_pool_destroy(sh.pool), 0);
  bw_async_mutex_destroy(sh.m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_async_mutex_lock_try_lock_unlock),
      cmocka_unit_test(test_async_mutex_unlock_passes_to_the_oldest),
      cmocka_unit_test(test_async_mutex_cancel_and_destroy),
      cmocka_unit_test(test_async_mutex_excludes_sections_across_continuations),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
