/* test_parallel_for.c - bw_parallel_for: every index runs exactly once for
 * any grain (0, 1, odd, huge) and range, under stress from several callers
 * at once, nested, from workers (even the only one), and with the workers
 * busy (the caller then runs it all); an empty range runs nothing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "blockwatch/runtime.h"
#include "rt_fixed_pool.h"
#include "rt_helpers.h"

static bw_pool *make_pool(unsigned workers) {
  return rt_fixed_pool("pfor", workers);
}

/* Counts each index's runs; offset maps [begin, end) onto the array. */
typedef struct hits {
  _Atomic unsigned char *count;
  size_t offset, n;
  atomic_long calls;
} hits;

static void hit(size_t b, size_t e, void *arg) {
  hits *h = arg;
  atomic_fetch_add(&h->calls, 1);
  for (size_t i = b; i < e; i++)
    atomic_fetch_add(&h->count[i - h->offset], 1);
}

static void hits_init(hits *h, size_t offset, size_t n) {
  h->count = calloc(n ? n : 1, 1);
  assert_non_null(h->count);
  h->offset = offset;
  h->n = n;
  atomic_init(&h->calls, 0);
}

/* Every index exactly once; frees the counts. */
static void hits_check(hits *h) {
  for (size_t i = 0; i < h->n; i++) {
    if (atomic_load(&h->count[i]) != 1)
      fail_msg("index %zu ran %u times", i + h->offset,
               (unsigned)atomic_load(&h->count[i]));
  }
  free((void *)h->count);
}

static void test_parallel_for_each_index_once_for_any_grain(void **state) {
  (void)state;
  bw_pool *pool = make_pool(2);
  const size_t grains[] = {0, 1, 7, 1000, SIZE_MAX};
  const size_t sizes[] = {1, 2, 3, 100, 10007, 1000000};
  for (size_t g = 0; g < sizeof(grains) / sizeof(grains[0]); g++) {
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
      hits h;
      hits_init(&h, 5, sizes[s]);
      assert_int_equal(
          bw_parallel_for(pool, 5, 5 + sizes[s], grains[g], hit, &h), 0);
      hits_check(&h);
      if (grains[g] == SIZE_MAX)
        assert_int_equal(atomic_load(&h.calls), 1);
      if (grains[g] == 1000)
        assert_true(atomic_load(&h.calls) >= (long)((sizes[s] + 999) / 1000));
    }
  }
  assert_int_equal(bw_pool_destroy(pool), 0);
}

static void never(size_t b, size_t e, void *arg) {
  (void)b;
  (void)e;
  (void)arg;
  fail_msg("body ran on an empty range");
}

static void test_parallel_for_empty_range_and_bad_arguments(void **state) {
  (void)state;
  bw_pool *pool = make_pool(1);
  assert_int_equal(bw_parallel_for(pool, 7, 7, 0, never, NULL), 0);
  assert_int_equal(bw_parallel_for(pool, 8, 7, 0, never, NULL), -EINVAL);
  assert_int_equal(bw_parallel_for(pool, 0, 10, 0, NULL, NULL), -EINVAL);
  /* The range's very top. */
  hits h;
  hits_init(&h, SIZE_MAX - 1000, 1000);
  assert_int_equal(bw_parallel_for(pool, SIZE_MAX - 1000, SIZE_MAX, 3, hit, &h),
                   0);
  hits_check(&h);
  assert_int_equal(bw_pool_destroy(pool), 0);
}

/* Several callers at once, off the pool and from workers, loops of every
 * size. */
typedef struct caller {
  bw_pool *pool;
  unsigned seed;
  atomic_long *bad;
} caller;

static void *stress_loops(void *arg) {
  caller *c = arg;
  unsigned seed = c->seed;
  for (int round = 0; round < 60; round++) {
    seed = seed * 1103515245u + 12345u;
    size_t n = (seed >> 8) % 20000;
    size_t grain = (seed >> 4) % 4 == 0 ? 0 : (seed >> 12) % 64;
    hits h;
    hits_init(&h, 0, n);
    if (bw_parallel_for(c->pool, 0, n, grain, hit, &h) != 0)
      atomic_fetch_add(c->bad, 1);
    for (size_t i = 0; i < n; i++)
      if (atomic_load(&h.count[i]) != 1)
        atomic_fetch_add(c->bad, 1);
    free((void *)h.count);
  }
  return NULL;
}

static void test_parallel_for_stress_many_callers(void **state) {
  (void)state;
  bw_pool *pool = make_pool(2);
  atomic_long bad;
  atomic_init(&bad, 0);
  enum { THREADS = 3, TASKS = 3 };
  caller cs[THREADS + TASKS];
  pthread_t th[THREADS];
  bw_task *ts[TASKS];
  for (int i = 0; i < THREADS + TASKS; i++)
    cs[i] = (caller){pool, 17u * (unsigned)i + 1u, &bad};
  for (int i = 0; i < THREADS; i++)
    pthread_create(&th[i], NULL, stress_loops, &cs[i]);
  for (int i = 0; i < TASKS; i++)
    assert_non_null(ts[i] = bw_run(pool, stress_loops, &cs[THREADS + i]));
  for (int i = 0; i < THREADS; i++)
    pthread_join(th[i], NULL);
  for (int i = 0; i < TASKS; i++) {
    assert_int_equal(bw_wait(ts[i], 120000), 0);
    bw_task_release(ts[i]);
  }
  assert_int_equal(atomic_load(&bad), 0);
  assert_int_equal(bw_pool_destroy(pool), 0);
}

/* Nested: each outer index runs an inner loop over its row. */
enum { ROWS = 24, COLS = 20000 };
typedef struct grid {
  bw_pool *pool;
  atomic_long errors; /* no cmocka asserts off the main thread */
  _Atomic unsigned char cell[ROWS][COLS];
} grid;

typedef struct row_arg {
  grid *g;
  size_t row;
} row_arg;

static void inner(size_t b, size_t e, void *arg) {
  row_arg *r = arg;
  for (size_t i = b; i < e; i++)
    atomic_fetch_add(&r->g->cell[r->row][i], 1);
}

static void outer(size_t b, size_t e, void *arg) {
  grid *g = arg;
  for (size_t row = b; row < e; row++) {
    row_arg r = {g, row};
    if (bw_parallel_for(g->pool, 0, COLS, 0, inner, &r) != 0)
      atomic_fetch_add(&g->errors, 1);
  }
}

static void *nested_on_pool(void *arg) {
  grid *g = arg;
  return (void *)(intptr_t)bw_parallel_for(g->pool, 0, ROWS, 1, outer, g);
}

static void check_grid(grid *g) {
  assert_int_equal(atomic_load(&g->errors), 0);
  for (size_t r = 0; r < ROWS; r++)
    for (size_t c = 0; c < COLS; c++)
      if (atomic_load(&g->cell[r][c]) != 1)
        fail_msg("cell %zu,%zu ran %u times", r, c,
                 (unsigned)atomic_load(&g->cell[r][c]));
}

static void test_parallel_for_nested_and_from_a_worker(void **state) {
  (void)state;
  for (unsigned workers = 1; workers <= 3; workers++) {
    grid *g = calloc(1, sizeof(*g));
    assert_non_null(g);
    g->pool = make_pool(workers);
    /* Off the pool. */
    assert_int_equal(bw_parallel_for(g->pool, 0, ROWS, 1, outer, g), 0);
    check_grid(g);
    /* From a worker (with one worker: the only one). */
    memset((void *)g->cell, 0, sizeof(g->cell));
    bw_task *t = bw_run(g->pool, nested_on_pool, g);
    assert_int_equal(bw_wait(t, 120000), 0);
    assert_null(bw_task_result(t));
    bw_task_release(t);
    check_grid(g);
    assert_int_equal(bw_pool_destroy(g->pool), 0);
    free(g);
  }
}

static void *hold_latch(void *arg) {
  rt_latch_wait(arg);
  return NULL;
}

static void
test_parallel_for_caller_runs_it_all_when_workers_are_busy(void **state) {
  (void)state;
  bw_pool *pool = make_pool(1);
  rt_latch latch;
  rt_latch_init(&latch);
  bw_task *busy = bw_run(pool, hold_latch, &latch);
  rt_sleep_ms(20);
  hits h;
  hits_init(&h, 0, 100000);
  assert_int_equal(bw_parallel_for(pool, 0, 100000, 10, hit, &h), 0);
  hits_check(&h);
  rt_latch_open(&latch);
  assert_int_equal(bw_wait(busy, 20000), 0);
  bw_task_release(busy);
  assert_int_equal(bw_pool_destroy(pool), 0);
  rt_latch_destroy(&latch);
}

/* Where each range ran: on the calling thread, or on a worker. */
typedef struct places {
  pthread_t caller;
  atomic_long on_caller, on_worker;
  unsigned sleep_ms;
} places;

static void note_place(size_t b, size_t e, void *arg) {
  places *pl = arg;
  (void)b;
  (void)e;
  if (pl->sleep_ms > 0)
    rt_sleep_ms(pl->sleep_ms);
  if (pthread_equal(pthread_self(), pl->caller))
    atomic_fetch_add(&pl->on_caller, 1);
  else if (bw_current_pool() != NULL)
    atomic_fetch_add(&pl->on_worker, 1);
}

/* gcc says __SANITIZE_THREAD__, clang __has_feature(thread_sanitizer). */
#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif

static void test_parallel_for_tiny_loops_stay_on_the_caller(void **state) {
  (void)state;
  bw_pool *pool = make_pool(2);
  places pl = {.caller = pthread_self(), .sleep_ms = 0};
  atomic_init(&pl.on_caller, 0);
  atomic_init(&pl.on_worker, 0);
  /* Whether a loop is small enough is timed (its first take), so a
   * preempted probe may share a tiny loop now and then: the caller must
   * keep it in at least one of many tries. ThreadSanitizer's slowdown
   * makes every 100-index loop look big, so there it is not asked. */
#if !defined(UNDER_TSAN)
  int kept = 0;
  for (int i = 0; i < 50 && !kept; i++) {
    atomic_store(&pl.on_caller, 0);
    atomic_store(&pl.on_worker, 0);
    assert_int_equal(bw_parallel_for(pool, 0, 100, 0, note_place, &pl), 0);
    assert_true(atomic_load(&pl.on_caller) > 0);
    kept = atomic_load(&pl.on_worker) == 0;
  }
  assert_true(kept);
#endif
  atomic_store(&pl.on_caller, 0);
  atomic_store(&pl.on_worker, 0);

  /* A slow loop is shared: a worker takes part. */
  pl.sleep_ms = 2;
  assert_int_equal(bw_parallel_for(pool, 0, 32, 1, note_place, &pl), 0);
  assert_true(atomic_load(&pl.on_worker) > 0);
  assert_true(atomic_load(&pl.on_caller) > 0);
  assert_int_equal(bw_pool_destroy(pool), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parallel_for_each_index_once_for_any_grain),
      cmocka_unit_test(test_parallel_for_empty_range_and_bad_arguments),
      cmocka_unit_test(test_parallel_for_stress_many_callers),
      cmocka_unit_test(test_parallel_for_tiny_loops_stay_on_the_caller),
      cmocka_unit_test(test_parallel_for_nested_and_from_a_worker),
      cmocka_unit_test(
          test_parallel_for_caller_runs_it_all_when_workers_are_busy),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
