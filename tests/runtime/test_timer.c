/* test_timer.c - periodic timers: fn runs on the pool on schedule, runs
 * never overlap (ticks missed by a long run are skipped), a timer holds no
 * thread between runs, and stop waits for nothing yet lets no run start
 * after it returned (also from fn itself, and racing runs by the hundred);
 * pool destroy ends timers.
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

/* Fixed size: a test that counts workers' time gets no extra one. */
static bw_pool *make_pool(unsigned workers) {
  bw_pool_config cfg = {
      .name = "timer", .min_workers = workers, .max_workers = workers};
  return bw_pool_create(&cfg);
}

typedef struct probe {
  bw_pool *pool;
  unsigned sleep_ms;   /* each run's length */
  atomic_long starts;  /* fn entered */
  atomic_long ends;    /* fn returned */
  atomic_int inside;   /* runs in fn now */
  atomic_int overlap;  /* two runs were in fn at once */
  atomic_int off_pool; /* a run was not on the probe's pool */
  uint64_t first_ms;   /* when the first run started */
} probe;

static void count_run(void *arg) {
  probe *p = arg;
  if (atomic_fetch_add(&p->starts, 1) == 0)
    p->first_ms = rt_now_ms();
  if (atomic_fetch_add(&p->inside, 1) != 0)
    atomic_store(&p->overlap, 1);
  if (p->pool != NULL && bw_current_pool() != p->pool)
    atomic_store(&p->off_pool, 1);
  if (p->sleep_ms > 0)
    rt_sleep_ms(p->sleep_ms);
  atomic_fetch_sub(&p->inside, 1);
  atomic_fetch_add(&p->ends, 1);
}

/* Stops a timer and waits until fn is out of any run that started. */
static void stop_and_settle(bw_timer *t, probe *p) {
  int rc = bw_timer_stop(t);
  assert_true(rc == 0 || rc == 1);
  long starts = atomic_load(&p->starts);
  assert_int_equal(rt_wait_count(&p->ends, starts, 10000), starts);
}

static void test_timer_refuses_bad_arguments(void **state) {
  (void)state;
  errno = 0;
  assert_null(bw_timer_start(NULL, 0, 10, NULL, NULL));
  assert_int_equal(errno, EINVAL);
  assert_int_equal(bw_timer_stop(NULL), -EINVAL);
}

static void test_timer_runs_every_period_on_the_pool(void **state) {
  (void)state;
  bw_pool *pool = make_pool(2);
  probe p = {.pool = pool};
  uint64_t t0 = rt_now_ms();
  bw_timer *t = bw_timer_start(pool, 50, 20, count_run, &p);
  assert_non_null(t);
  assert_int_equal(rt_wait_count(&p.starts, 10, 10000), 10);
  stop_and_settle(t, &p);
  assert_true(p.first_ms - t0 >= 49);
  /* 10 runs at 20 ms from 50 ms take about 230 ms. */
  uint64_t took = rt_now_ms() - t0;
  assert_true(took >= 229);
  assert_false(atomic_load(&p.off_pool));
  assert_false(atomic_load(&p.overlap));
  long after = atomic_load(&p.starts);
  rt_sleep_ms(100);
  assert_int_equal(atomic_load(&p.starts), after);
  assert_int_equal(bw_pool_destroy(pool), 0);
}

static void test_timer_period_zero_runs_once(void **state) {
  (void)state;
  bw_pool *pool = make_pool(1);
  probe p = {.pool = pool};
  bw_timer *t = bw_timer_start(pool, 0, 0, count_run, &p);
  assert_non_null(t);
  assert_int_equal(rt_wait_count(&p.ends, 1, 10000), 1);
  rt_sleep_ms(50);
  assert_int_equal(atomic_load(&p.starts), 1);
  assert_int_equal(bw_timer_stop(t), 0);
  assert_int_equal(bw_pool_destroy(pool), 0);
}

/* fn takes 50 ms on a 10 ms period: runs follow each other without
 * overlapping, and the ticks they miss are skipped, not queued up. */
static void test_timer_long_runs_skip_ticks_never_overlap(void **state) {
  (void)state;
  bw_pool *pool = make_pool(2);
  probe p = {.pool = pool, .sleep_ms = 50};
  uint64_t t0 = rt_now_ms();
  bw_timer *t = bw_timer_start(pool, 0, 10, count_run, &p);
  /* Three runs, waited for rather than timed: a loaded machine (TSan in
   * CI) may give fewer than three 50 ms runs in a fixed half second. */
  rt_sleep_ms(200);
  rt_wait_count(&p.starts, 3, 10000);
  stop_and_settle(t, &p);
  uint64_t took = rt_now_ms() - t0;
  long runs = atomic_load(&p.starts);
  assert_false(atomic_load(&p.overlap));
  assert_true(runs >= 3);
  /* At most one run per 50 ms: queued ticks would give about 50. */
  assert_true(runs <= (long)(took / 50) + 1);
  assert_int_equal(bw_pool_destroy(pool), 0);
}

/* One long run (100 ms on a 20 ms period) misses four ticks: the runs
 * after it keep to the 20 ms grid instead of bunching up to catch up. */
typedef struct grid {
  atomic_long runs;
  uint64_t start_ms[5]; /* of the first five runs */
} grid;

static void long_first_run(void *arg) {
  grid *g = arg;
  long n = atomic_load(&g->runs);
  if (n < 5)
    g->start_ms[n] = rt_now_ms();
  if (n == 0)
    rt_sleep_ms(100);
  atomic_fetch_add(&g->runs, 1);
}

static void test_timer_missed_ticks_are_skipped_not_bunched(void **state) {
  (void)state;
  bw_pool *pool = make_pool(2);
  grid g = {0};
  bw_timer *t = bw_timer_start(pool, 0, 20, long_first_run, &g);
  assert_int_equal(rt_wait_count(&g.runs, 5, 10000), 5);
  bw_timer_stop(t);
  rt_sleep_ms(30);
  /* Bunched runs would follow the long one within a few ms of each
   * other. On the grid each run starts at a later tick than the one
   * before started, so runs 2 to 4 span more than one period even when
   * run 2 started late (two periods when on time). */
  assert_true(g.start_ms[1] - g.start_ms[0] >= 99);
  assert_true(g.start_ms[4] - g.start_ms[2] >= 19);
  assert_int_equal(bw_pool_destroy(pool), 0);
}

/* Set right after start (a run that comes first waits for it). */
static _Atomic(bw_timer *) self_timer;
static atomic_int self_stop_rc = -100;

static void stop_self(void *arg) {
  probe *p = arg;
  count_run(p);
  if (atomic_load(&p->starts) != 3)
    return;
  while (atomic_load(&self_timer) == NULL)
    rt_sleep_ms(1);
  atomic_store(&self_stop_rc, bw_timer_stop(atomic_load(&self_timer)));
}

static void test_timer_stop_from_its_own_run(void **state) {
  (void)state;
  bw_pool *pool = make_pool(2);
  probe p = {0};
  atomic_store(&self_timer, bw_timer_start(pool, 20, 5, stop_self, &p));
  assert_int_equal(rt_wait_count(&p.starts, 3, 10000), 3);
  /* The third run stops its own timer; on a loaded machine it may get
   * there late, so wait for its answer instead of a fixed time. */
  for (int i = 0; i < 10000 && atomic_load(&self_stop_rc) == -100; i++)
    rt_sleep_ms(1);
  rt_sleep_ms(50); /* a run that wrongly starts after the stop shows now */
  assert_int_equal(atomic_load(&self_stop_rc), 1); /* fn was running */
  assert_int_equal(atomic_load(&p.starts), 3);
  assert_int_equal(bw_pool_destroy(pool), 0);
}

/* Hundreds of 1 ms timers stopped at arbitrary moments: once stop
 * returned 0 no run starts, once it returned 1 only the run going on
 * finishes. */
static void test_timer_no_run_starts_after_stop_returns(void **state) {
  (void)state;
  enum { N = 200 };
  bw_pool *pool = make_pool(2);
  probe *p = calloc(N, sizeof(*p));
  bw_timer **t = calloc(N, sizeof(*t));
  for (int i = 0; i < N; i++)
    assert_non_null(t[i] = bw_timer_start(pool, 0, 1, count_run, &p[i]));
  long seen[N];
  int running[N];
  for (int i = 0; i < N; i++) {
    if (i % 20 == 0)
      rt_sleep_ms(2);
    int rc = bw_timer_stop(t[i]);
    assert_true(rc == 0 || rc == 1);
    running[i] = rc;
    seen[i] = atomic_load(&p[i].starts);
    if (rc == 0)
      assert_int_equal(atomic_load(&p[i].ends), seen[i]);
  }
  /* A run that was going on when stop returned 1 finishes (waited for,
   * not timed: a loaded machine may deschedule it); then no run starts.
   * That run may not have counted its start yet when stop returned (it was
   * between the runtime's dispatch and fn's first line), so it is the one
   * start allowed beyond what was seen. */
  for (int i = 0; i < N; i++)
    assert_true(rt_wait_count(&p[i].ends, seen[i], 10000) >= seen[i]);
  rt_sleep_ms(50);
  for (int i = 0; i < N; i++) {
    long starts = atomic_load(&p[i].starts);
    assert_true(starts == seen[i] || (running[i] && starts == seen[i] + 1));
    assert_int_equal(rt_wait_count(&p[i].ends, starts, 10000), starts);
  }
  rt_sleep_ms(20);
  for (int i = 0; i < N; i++)
    assert_true(atomic_load(&p[i].starts) <= seen[i] + running[i]);
  assert_int_equal(bw_pool_destroy(pool), 0);
  free(p);
  free(t);
}

static void *quick_item(void *arg) {
  return arg;
}

/* 500 timers on a one-worker pool hold no thread between runs: an item
 * submitted meanwhile runs at once. */
static void test_timer_holds_no_thread(void **state) {
  (void)state;
  enum { N = 500 };
  bw_pool *pool = make_pool(1);
  probe p = {0};
  bw_timer **t = calloc(N, sizeof(*t));
  for (int i = 0; i < N; i++)
    t[i] = bw_timer_start(pool, 100, 100, count_run, &p);
  for (int i = 0; i < 5; i++) {
    uint64_t t0 = rt_now_ms();
    bw_task *r = bw_run(pool, quick_item, NULL);
    assert_int_equal(bw_wait(r, 10000), 0);
    bw_task_release(r);
    assert_true(rt_now_ms() - t0 < 1000);
  }
  assert_true(rt_wait_count(&p.starts, N, 10000) >= N);
  for (int i = 0; i < N; i++)
    bw_timer_stop(t[i]);
  free(t);
  assert_int_equal(bw_pool_destroy(pool), 0);
}

/* Pool destroy ends its timers; stop afterwards still frees the handle. */
static void test_timer_pool_destroy_ends_it(void **state) {
  (void)state;
  bw_pool *pool = make_pool(1);
  probe p = {0};
  bw_timer *fast = bw_timer_start(pool, 0, 2, count_run, &p);
  bw_timer *slow = bw_timer_start(pool, 60000, 1000, count_run, &p);
  rt_wait_count(&p.starts, 3, 10000);
  assert_int_equal(bw_pool_destroy(pool), 0);
  long runs = atomic_load(&p.starts);
  assert_int_equal(atomic_load(&p.ends), runs);
  rt_sleep_ms(30);
  assert_int_equal(atomic_load(&p.starts), runs);
  assert_int_equal(bw_timer_stop(fast), 0);
  assert_int_equal(bw_timer_stop(slow), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_timer_refuses_bad_arguments),
      cmocka_unit_test(test_timer_runs_every_period_on_the_pool),
      cmocka_unit_test(test_timer_period_zero_runs_once),
      cmocka_unit_test(test_timer_long_runs_skip_ticks_never_overlap),
      cmocka_unit_test(test_timer_missed_ticks_are_skipped_not_bunched),
      cmocka_unit_test(test_timer_stop_from_its_own_run),
      cmocka_unit_test(test_timer_no_run_starts_after_stop_returns),
      cmocka_unit_test(test_timer_holds_no_thread),
      cmocka_unit_test(test_timer_pool_destroy_ends_it),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
