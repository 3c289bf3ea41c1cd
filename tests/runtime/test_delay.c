/* test_delay.c - bw_delay / bw_delay_cancelable: delays complete on time
 * from the gate thread, hold no worker, run in parallel by the thousand, and
 * end early (canceled) through tokens, bw_task_cancel or pool destroy.
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

static bw_pool *make_pool(unsigned workers) {
  bw_pool_config cfg = {0};
  cfg.name = "delay";
  cfg.min_workers = workers;
  cfg.max_workers = workers;
  cfg.flags = BW_POOL_NO_INJECTION;
  bw_pool *pool = bw_pool_create(&cfg);
  assert_non_null(pool);
  return pool;
}

static void test_delay_completes_after_its_time(void **state) {
  (void)state;
  bw_pool *pool = make_pool(2);
  uint64_t t0 = rt_now_ms();
  bw_task *d = bw_delay(pool, 100);
  assert_non_null(d);
  assert_int_equal(bw_task_state_get(d), BW_TASK_PENDING);
  assert_int_equal(bw_wait(d, 20000), 0);
  uint64_t took = rt_now_ms() - t0;
  assert_true(took >= 99);
  assert_true(took < 5000);
  assert_int_equal(bw_task_state_get(d), BW_TASK_COMPLETED);
  assert_null(bw_task_result(d));
  bw_task_release(d);

  d = bw_delay(pool, 0);
  assert_int_equal(bw_wait(d, 20000), 0);
  bw_task_release(d);
  assert_int_equal(bw_pool_destroy(pool), 0);
}

static void test_delay_many_run_in_parallel(void **state) {
  (void)state;
  bw_pool *pool = make_pool(2);
  enum { N = 100 };
  bw_task *ds[N];
  uint64_t t0 = rt_now_ms();
  for (int i = 0; i < N; i++)
    assert_non_null(ds[i] = bw_delay(pool, 200));
  bw_task *all = bw_when_all(ds, N);
  assert_int_equal(bw_wait(all, 60000), 0);
  uint64_t took = rt_now_ms() - t0;
  /* Serially this would be 20 s. */
  assert_true(took >= 199);
  assert_true(took < 3000);
  bw_task_release(all);
  for (int i = 0; i < N; i++)
    bw_task_release(ds[i]);
  assert_int_equal(bw_pool_destroy(pool), 0);
}

static void test_delay_ten_thousand_complete_together(void **state) {
  (void)state;
  bw_pool *pool = make_pool(2);
  enum { N = 10000 };
  bw_task **ds = calloc(N, sizeof(*ds));
  assert_non_null(ds);
  uint64_t t0 = rt_now_ms();
  for (int i = 0; i < N; i++)
    assert_non_null(ds[i] = bw_delay(pool, 300));
  bw_task *all = bw_when_all(ds, N);
  assert_int_equal(bw_wait(all, 60000), 0);
  uint64_t took = rt_now_ms() - t0;
  assert_true(took >= 299);
  assert_true(took < 10000);
  bw_task_release(all);
  for (int i = 0; i < N; i++)
    bw_task_release(ds[i]);
  free(ds);
  assert_int_equal(bw_pool_destroy(pool), 0);
}

static void mark(void *arg) {
  atomic_store((atomic_long *)arg, (long)rt_now_ms());
}

static void test_delay_holds_no_worker(void **state) {
  (void)state;
  bw_pool *pool = make_pool(1);
  bw_task *ds[10];
  for (int i = 0; i < 10; i++)
    ds[i] = bw_delay(pool, 1000);
  atomic_long ran_at = 0;
  uint64_t t0 = rt_now_ms();
  assert_int_equal(bw_submit(pool, mark, &ran_at), 0);
  assert_true(rt_wait_count(&ran_at, 1, 20000) > 0);
  /* The one worker ran the item long before the delays ended. */
  assert_true((uint64_t)atomic_load(&ran_at) - t0 < 900);
  for (int i = 0; i < 10; i++) {
    assert_int_equal(bw_wait(ds[i], 20000), 0);
    bw_task_release(ds[i]);
  }
  assert_int_equal(bw_pool_destroy(pool), 0);
}

static void test_delay_token_cancels_early(void **state) {
  (void)state;
  bw_pool *pool = make_pool(1);
  bw_cancel_token *tok = bw_cancel_token_create();
  bw_task *d = bw_delay_cancelable(pool, 60000, tok);
  assert_non_null(d);
  uint64_t t0 = rt_now_ms();
  assert_int_equal(bw_cancel_token_cancel(tok), 0);
  assert_int_equal(bw_wait(d, 20000), -ECANCELED);
  assert_true(rt_now_ms() - t0 < 5000);
  assert_int_equal(bw_task_state_get(d), BW_TASK_CANCELED);
  bw_task_release(d);

  /* Already canceled: the delay is born canceled. */
  d = bw_delay_cancelable(pool, 60000, tok);
  assert_int_equal(bw_task_state_get(d), BW_TASK_CANCELED);
  bw_task_release(d);
  /* The token can go first: the delays keep what they need. */
  bw_cancel_token *tok2 = bw_cancel_token_create();
  d = bw_delay_cancelable(pool, 20, tok2);
  bw_cancel_token_release(tok2);
  assert_int_equal(bw_wait(d, 20000), 0);
  bw_task_release(d);
  bw_cancel_token_release(tok);
  assert_int_equal(bw_pool_destroy(pool), 0);
}

static void test_delay_task_cancel_and_late_fire(void **state) {
  (void)state;
  bw_pool *pool = make_pool(1);
  bw_task *d = bw_delay(pool, 50);
  assert_int_equal(bw_task_cancel(d), 0);
  assert_int_equal(bw_task_cancel(d), -EALREADY);
  assert_int_equal(bw_wait(d, 0), -ECANCELED);
  /* Let the (lazily removed) timer entry fire on the canceled task. */
  rt_sleep_ms(150);
  assert_int_equal(bw_task_state_get(d), BW_TASK_CANCELED);
  bw_task_release(d);
  assert_int_equal(bw_pool_destroy(pool), 0);
}

static void *after_delay(bw_task *done, void *arg) {
  atomic_store((atomic_long *)arg, (long)bw_task_state_get(done) + 1);
  return NULL;
}

static void
test_delay_destroy_cancels_pending_and_runs_continuations(void **state) {
  (void)state;
  bw_pool *pool = make_pool(1);
  bw_task *d = bw_delay(pool, 60000);
  atomic_long seen = 0;
  bw_task *c = bw_then(d, after_delay, &seen);
  uint64_t t0 = rt_now_ms();
  assert_int_equal(bw_pool_destroy(pool), 0);
  assert_true(rt_now_ms() - t0 < 5000);
  assert_int_equal(bw_task_state_get(d), BW_TASK_CANCELED);
  assert_int_equal(atomic_load(&seen), BW_TASK_CANCELED + 1);
  assert_int_equal(bw_task_state_get(c), BW_TASK_COMPLETED);
  bw_task_release(c);
  bw_task_release(d);
}

typedef struct fired_at {
  uint64_t due_ms;
  atomic_long late; /* fired before its deadline: must stay 0 */
  atomic_long fired;
} fired_at;

static void *check_fired(bw_task *done, void *arg) {
  fired_at *f = arg;
  if (bw_task_state_get(done) != BW_TASK_COMPLETED || rt_now_ms() < f->due_ms)
    atomic_fetch_add(&f->late, 1);
  atomic_fetch_add(&f->fired, 1);
  return NULL;
}

static void test_delay_canceled_delays_are_compacted_out(void **state) {
  (void)state;
  /* 2000 canceled 10-minute delays around 100 live ones: the gate drops
   * the dead entries (about once a second, once half the heap is dead) and
   * rebuilds the heap; the live delays must still fire, each not before
   * its own deadline. ASan/TSan check the freeing. */
  bw_pool *pool = make_pool(2);
  enum { DEAD = 2000, LIVE = 100 };
  static fired_at f[LIVE];
  uint64_t t0 = rt_now_ms();
  for (int i = 0; i < DEAD + LIVE; i++) {
    if (i % 21 == 20 && i / 21 < LIVE) {
      fired_at *fa = &f[i / 21];
      uint64_t ms = 1200 + (uint64_t)((i * 37) % 1000);
      fa->due_ms = t0 + ms;
      atomic_init(&fa->late, 0);
      atomic_init(&fa->fired, 0);
      bw_task *d = bw_delay(pool, ms);
      bw_task_release(bw_then(d, check_fired, fa));
      bw_task_release(d);
    } else {
      bw_task *d = bw_delay(pool, 600000);
      assert_int_equal(bw_task_cancel(d), 0);
      bw_task_release(d);
    }
  }
  for (int i = 0; i < LIVE; i++) {
    if (f[i].due_ms == 0)
      continue;
    uint64_t end = rt_now_ms() + 20000;
    while (atomic_load(&f[i].fired) == 0 && rt_now_ms() < end)
      rt_sleep_ms(5);
    assert_int_equal(atomic_load(&f[i].fired), 1);
    assert_int_equal(atomic_load(&f[i].late), 0);
  }
  /* A new delay still works on the rebuilt heap. */
  bw_task *d = bw_delay(pool, 10);
  assert_int_equal(bw_wait(d, 20000), 0);
  bw_task_release(d);
  assert_int_equal(bw_pool_destroy(pool), 0);
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

enum { ORDER_LIVE = 1000, ORDER_DEAD = 2000 };

typedef struct order_log {
  uint64_t lo_ns[ORDER_LIVE], hi_ns[ORDER_LIVE]; /* bounds of each deadline */
  uint64_t ran_ns[ORDER_LIVE];
  int order[ORDER_LIVE];
  atomic_int n;       /* slots of order[] handed out */
  atomic_int written; /* entries complete */
} order_log;

static order_log order_log_v;

static void *log_fired(bw_task *done, void *arg) {
  int i = (int)(intptr_t)arg;
  order_log *log = &order_log_v;
  log->ran_ns[i] = bw_task_state_get(done) == BW_TASK_COMPLETED ? now_ns() : 0;
  log->order[atomic_fetch_add(&log->n, 1)] = i;
  atomic_fetch_add(&log->written, 1); /* publishes the two writes above */
  return NULL;
}

static void test_delay_fire_in_deadline_order(void **state) {
  (void)state;
  /* 1000 delays with their deadlines shuffled over 400 ms, among 2000
   * canceled ones (so the heap is compacted and rebuilt on the way). On a
   * one-worker pool the continuations run in the order the gate fired the
   * delays: that order must follow the deadlines, and none may fire early.
   * A deadline is known to lie between the clock before and after its
   * bw_delay call; a pair out of order is one whose bounds exclude the
   * order they fired in. */
  bw_pool *pool = make_pool(1);
  order_log *log = &order_log_v;
  atomic_init(&log->n, 0);
  atomic_init(&log->written, 0);
  int live = 0;
  for (int k = 0; k < ORDER_LIVE + ORDER_DEAD; k++) {
    if (k % 3 != 0) {
      bw_task *d = bw_delay(pool, 600000);
      assert_int_equal(bw_task_cancel(d), 0);
      bw_task_release(d);
      continue;
    }
    int i = live++;
    uint64_t ms = 1100 + (uint64_t)((i * 389) % 400);
    log->lo_ns[i] = now_ns() + ms * 1000000u;
    bw_task *d = bw_delay(pool, ms);
    log->hi_ns[i] = now_ns() + ms * 1000000u;
    assert_non_null(d);
    bw_task_release(bw_then(d, log_fired, (void *)(intptr_t)i));
    bw_task_release(d);
  }
  assert_int_equal(live, ORDER_LIVE);
  uint64_t end = rt_now_ms() + 30000;
  while (atomic_load(&log->written) < ORDER_LIVE && rt_now_ms() < end)
    rt_sleep_ms(5);
  assert_int_equal(atomic_load(&log->written), ORDER_LIVE);
  for (int k = 0; k < ORDER_LIVE; k++) {
    int i = log->order[k];
    assert_true(log->ran_ns[i] >= log->lo_ns[i]); /* completed, not early */
    if (k > 0) {
      int prev = log->order[k - 1];
      assert_true(log->lo_ns[prev] <= log->hi_ns[i]);
    }
  }
  assert_int_equal(bw_pool_destroy(pool), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_delay_completes_after_its_time),
      cmocka_unit_test(test_delay_many_run_in_parallel),
      cmocka_unit_test(test_delay_ten_thousand_complete_together),
      cmocka_unit_test(test_delay_holds_no_worker),
      cmocka_unit_test(test_delay_token_cancels_early),
      cmocka_unit_test(test_delay_task_cancel_and_late_fire),
      cmocka_unit_test(test_delay_canceled_delays_are_compacted_out),
      cmocka_unit_test(test_delay_fire_in_deadline_order),
      cmocka_unit_test(
          test_delay_destroy_cancels_pending_and_runs_continuations),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
