/* test_inject.c - thread injection on starvation, compensation on
 * bw_pool_notify_blocked, and retirement of idle extra workers.
 * Timing checks have wide margins (noisy 2-core machine); each compares a
 * pool that grows with one that cannot.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "blockwatch/runtime.h"
#include "rt_helpers.h"

static bw_pool *make_pool(unsigned min, unsigned max, unsigned flags,
                          unsigned starvation_ms, unsigned idle_ms) {
  bw_pool_config cfg = {0};
  cfg.name = "inj";
  cfg.min_workers = min;
  cfg.max_workers = max;
  cfg.flags = flags;
  cfg.starvation_ms = starvation_ms;
  cfg.idle_timeout_ms = idle_ms;
  bw_pool *pool = bw_pool_create(&cfg);
  assert_non_null(pool);
  return pool;
}

typedef struct sleeper {
  unsigned ms;
  int announce; /* call notify_blocked around the sleep */
  atomic_long done;
} sleeper;

static void sleep_item(void *arg) {
  sleeper *s = arg;
  if (s->announce)
    bw_pool_notify_blocked();
  rt_sleep_ms(s->ms);
  if (s->announce)
    bw_pool_notify_unblocked();
  atomic_fetch_add(&s->done, 1);
}

/* Runs n sleeping items and returns the makespan in ms. */
static uint64_t makespan(bw_pool *pool, sleeper *s, int n) {
  uint64_t t0 = rt_now_ms();
  for (int i = 0; i < n; i++)
    assert_int_equal(bw_submit(pool, sleep_item, s), 0);
  assert_int_equal(rt_wait_count(&s->done, n, 60000), n);
  return rt_now_ms() - t0;
}

static void test_inject_compensation_hides_blocking(void **state) {
  (void)state;
  /* 20 x 200 ms on 2 workers: 2 s without help, ~200 ms with. */
  bw_pool *pool =
      make_pool(2, 64, BW_POOL_COMPENSATE | BW_POOL_NO_INJECTION, 0, 0);
  sleeper s = {.ms = 200, .announce = 1, .done = 0};
  uint64_t with = makespan(pool, &s, 20);
  bw_pool_stats st;
  assert_int_equal(bw_pool_stats_get(pool, &st), 0);
  assert_true(st.threads_compensated >= 10);
  assert_int_equal(st.threads_injected, 0);
  assert_int_equal(bw_pool_destroy(pool), 0);

  pool = make_pool(2, 64, BW_POOL_NO_INJECTION, 0, 0);
  sleeper s2 = {.ms = 200, .announce = 1, .done = 0};
  uint64_t without = makespan(pool, &s2, 20);
  assert_int_equal(bw_pool_stats_get(pool, &st), 0);
  assert_int_equal(st.threads_compensated, 0);
  assert_int_equal(st.workers, 2);
  assert_int_equal(bw_pool_destroy(pool), 0);

  assert_true(with < 2000);
  assert_true(without >= 1800);
}

static void test_inject_compensation_is_bounded_by_max(void **state) {
  (void)state;
  bw_pool *pool =
      make_pool(1, 3, BW_POOL_COMPENSATE | BW_POOL_NO_INJECTION, 0, 0);
  sleeper s = {.ms = 100, .announce = 1, .done = 0};
  (void)makespan(pool, &s, 10);
  bw_pool_stats st;
  assert_int_equal(bw_pool_stats_get(pool, &st), 0);
  assert_true(st.workers <= 3);
  assert_true(st.threads_compensated <= 2);
  assert_int_equal(bw_pool_destroy(pool), 0);
}

static void test_inject_starvation_adds_workers(void **state) {
  (void)state;
  /* Items that block without saying so: only the gate can help. */
  bw_pool *pool = make_pool(1, 16, 0, 50, 0);
  sleeper s = {.ms = 300, .announce = 0, .done = 0};
  uint64_t took = makespan(pool, &s, 8);
  bw_pool_stats st;
  assert_int_equal(bw_pool_stats_get(pool, &st), 0);
  assert_true(st.threads_injected >= 1);
  assert_true(st.workers >= 2);
  assert_true(took < 8 * 300);
  assert_int_equal(bw_pool_destroy(pool), 0);
}

static void test_inject_blocked_workers_count_as_starvation(void **state) {
  (void)state;
  /* Short blocking items keep "dequeued something" true, but every worker
   * says it is blocked: the gate injects anyway (no compensation here). */
  bw_pool *pool = make_pool(1, 16, 0, 100, 0);
  sleeper s = {.ms = 50, .announce = 1, .done = 0};
  uint64_t took = makespan(pool, &s, 60);
  bw_pool_stats st;
  assert_int_equal(bw_pool_stats_get(pool, &st), 0);
  assert_true(st.threads_injected >= 1);
  assert_int_equal(st.threads_compensated, 0);
  /* 3 s serially; about 0.6 s with a worker added every 100 ms. */
  assert_true(took < 2500);
  assert_int_equal(bw_pool_destroy(pool), 0);
}

static void test_inject_no_injection_flag_holds_the_line(void **state) {
  (void)state;
  bw_pool *pool = make_pool(1, 16, BW_POOL_NO_INJECTION, 20, 0);
  sleeper s = {.ms = 100, .announce = 0, .done = 0};
  uint64_t took = makespan(pool, &s, 5);
  bw_pool_stats st;
  assert_int_equal(bw_pool_stats_get(pool, &st), 0);
  assert_int_equal(st.threads_injected, 0);
  assert_int_equal(st.workers, 1);
  assert_true(took >= 5 * 100 - 5);
  assert_int_equal(bw_pool_destroy(pool), 0);
}

static void test_inject_idle_extra_workers_retire(void **state) {
  (void)state;
  bw_pool *pool =
      make_pool(1, 8, BW_POOL_COMPENSATE | BW_POOL_NO_INJECTION, 0, 100);
  sleeper s = {.ms = 100, .announce = 1, .done = 0};
  (void)makespan(pool, &s, 4);
  bw_pool_stats st;
  assert_int_equal(bw_pool_stats_get(pool, &st), 0);
  assert_true(st.threads_compensated >= 1);
  /* Extra workers leave after 100 ms idle; the pool keeps min_workers. */
  uint64_t end = rt_now_ms() + 20000;
  do {
    rt_sleep_ms(20);
    assert_int_equal(bw_pool_stats_get(pool, &st), 0);
  } while (st.workers > 1 && rt_now_ms() < end);
  assert_int_equal(st.workers, 1);
  assert_true(st.threads_retired >= 1);
  /* Retired slots are reused: the pool still grows and works. */
  sleeper s2 = {.ms = 50, .announce = 1, .done = 0};
  (void)makespan(pool, &s2, 4);
  assert_int_equal(bw_pool_destroy(pool), 0);
}

static void test_inject_many_blocking_items_with_compensation(void **state) {
  (void)state;
  /* The benchmark's sleep scenario scaled down: 100 x sleep(500 ms), 2 workers.
   */
  bw_pool *pool = make_pool(2, 256, BW_POOL_COMPENSATE, 0, 0);
  sleeper s = {.ms = 500, .announce = 1, .done = 0};
  uint64_t took = makespan(pool, &s, 100);
  assert_true(took < 5000); /* 25 s without compensation */
  assert_int_equal(bw_pool_destroy(pool), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_inject_compensation_hides_blocking),
      cmocka_unit_test(test_inject_compensation_is_bounded_by_max),
      cmocka_unit_test(test_inject_starvation_adds_workers),
      cmocka_unit_test(test_inject_blocked_workers_count_as_starvation),
      cmocka_unit_test(test_inject_no_injection_flag_holds_the_line),
      cmocka_unit_test(test_inject_idle_extra_workers_retire),
      cmocka_unit_test(test_inject_many_blocking_items_with_compensation),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
