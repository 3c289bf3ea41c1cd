/* test_run_blocking.c - bw_run_blocking: jobs run on blocking threads that
 * are not workers, at most the bound at once, threads retire when idle, a
 * job canceled before it starts never runs, and pool destroy cancels queued
 * jobs and waits for running ones.
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
#include "rt_fixed_pool.h"
#include "rt_helpers.h"

static bw_pool *make_pool(unsigned workers) {
  return rt_fixed_pool("blk", workers);
}

/* What a job saw of the thread it ran on. */
typedef struct where {
  bw_thread_role role;
  bw_pool *current_pool;
} where;

static void *note_thread(void *arg) {
  where *w = arg;
  w->role = bw_thread_role_get();
  w->current_pool = bw_current_pool();
  return w;
}

static void test_run_blocking_runs_off_the_workers(void **state) {
  (void)state;
  bw_pool *pool = make_pool(1);
  where w = {BW_ROLE_WORKER, pool};
  bw_task *t = bw_run_blocking(pool, note_thread, &w);
  assert_non_null(t);
  assert_int_equal(bw_wait(t, 20000), 0);
  assert_ptr_equal(bw_task_result(t), &w);
  assert_int_equal(w.role, BW_ROLE_BLOCKING);
  assert_null(w.current_pool);
  bw_task_release(t);

  /* A worker says it is one; this thread is none of the runtime's. */
  t = bw_run(pool, note_thread, &w);
  assert_int_equal(bw_wait(t, 20000), 0);
  assert_int_equal(w.role, BW_ROLE_WORKER);
  bw_task_release(t);
  assert_int_equal(bw_thread_role_get(), BW_ROLE_OTHER);

  errno = 0;
  assert_null(bw_run_blocking(pool, NULL, NULL));
  assert_int_equal(errno, EINVAL);
  assert_int_equal(bw_pool_destroy(pool), 0);
}

/* Jobs that hold the blocking threads until the latch opens. */
typedef struct held {
  rt_latch latch;
  atomic_long running, max_running, ran;
} held;

static void *hold(void *arg) {
  held *h = arg;
  long now = atomic_fetch_add(&h->running, 1) + 1;
  long max = atomic_load(&h->max_running);
  while (now > max && !atomic_compare_exchange_weak(&h->max_running, &max, now))
    ;
  rt_latch_wait(&h->latch);
  atomic_fetch_sub(&h->running, 1);
  atomic_fetch_add(&h->ran, 1);
  return NULL;
}

static void held_init(held *h) {
  rt_latch_init(&h->latch);
  atomic_init(&h->running, 0);
  atomic_init(&h->max_running, 0);
  atomic_init(&h->ran, 0);
}

static void test_run_blocking_keeps_to_its_bound(void **state) {
  (void)state;
  bw_pool *pool = make_pool(1);
  assert_int_equal(bw_run_blocking_limits(pool, 3, 0), 0);
  held h;
  held_init(&h);
  enum { N = 10 };
  bw_task *ts[N];
  for (int i = 0; i < N; i++)
    assert_non_null(ts[i] = bw_run_blocking(pool, hold, &h));
  assert_int_equal(rt_wait_count(&h.running, 3, 10000), 3);
  rt_sleep_ms(50); /* a fourth thread would show up now */
  bw_blocking_stats st;
  assert_int_equal(bw_blocking_stats_get(pool, &st), 0);
  assert_int_equal(st.threads, 3);
  assert_int_equal(st.max_threads, 3);
  assert_int_equal(st.queued, N - 3);

  /* The workers stay free meanwhile. */
  where w;
  bw_task *t = bw_run(pool, note_thread, &w);
  assert_int_equal(bw_wait(t, 20000), 0);
  bw_task_release(t);

  rt_latch_open(&h.latch);
  bw_task *all = bw_when_all(ts, N);
  assert_int_equal(bw_wait(all, 20000), 0);
  bw_task_release(all);
  assert_int_equal(atomic_load(&h.ran), N);
  assert_int_equal(atomic_load(&h.max_running), 3);
  for (int i = 0; i < N; i++)
    bw_task_release(ts[i]);
  assert_int_equal(bw_pool_destroy(pool), 0);
  rt_latch_destroy(&h.latch);
}

static void test_run_blocking_threads_retire_when_idle(void **state) {
  (void)state;
  bw_pool *pool = make_pool(1);
  assert_int_equal(bw_run_blocking_limits(pool, 4, 100), 0);
  held h;
  held_init(&h);
  bw_task *ts[4];
  for (int i = 0; i < 4; i++)
    assert_non_null(ts[i] = bw_run_blocking(pool, hold, &h));
  assert_int_equal(rt_wait_count(&h.running, 4, 10000), 4);
  rt_latch_open(&h.latch);
  bw_task *all = bw_when_all(ts, 4);
  assert_int_equal(bw_wait(all, 20000), 0);
  bw_task_release(all);
  for (int i = 0; i < 4; i++)
    bw_task_release(ts[i]);
  bw_blocking_stats st;
  uint64_t end = rt_now_ms() + 10000;
  do {
    rt_sleep_ms(10);
    assert_int_equal(bw_blocking_stats_get(pool, &st), 0);
  } while (st.threads > 0 && rt_now_ms() < end);
  assert_int_equal(st.threads, 0);
  assert_int_equal(st.retired, 4);
  assert_int_equal(st.completed, 4);

  /* A job after retirement starts a thread again. */
  where w;
  bw_task *t = bw_run_blocking(pool, note_thread, &w);
  assert_int_equal(bw_wait(t, 20000), 0);
  assert_int_equal(w.role, BW_ROLE_BLOCKING);
  bw_task_release(t);
  assert_int_equal(bw_pool_destroy(pool), 0);
  rt_latch_destroy(&h.latch);
}

static atomic_long ran_flag;

static void *set_ran(void *arg) {
  (void)arg;
  atomic_fetch_add(&ran_flag, 1);
  return NULL;
}

/* Bounds the pool to one blocking thread and holds it with a job. */
static bw_task *hold_the_only_thread(bw_pool *pool, held *h) {
  assert_int_equal(bw_run_blocking_limits(pool, 1, 0), 0);
  held_init(h);
  atomic_store(&ran_flag, 0);
  bw_task *t = bw_run_blocking(pool, hold, h);
  assert_non_null(t);
  assert_int_equal(rt_wait_count(&h->running, 1, 10000), 1);
  return t;
}

static void test_run_blocking_cancel_before_start_skips_fn(void **state) {
  (void)state;
  bw_pool *pool = make_pool(1);
  held h;
  bw_task *a = hold_the_only_thread(pool, &h);
  bw_task *b = bw_run_blocking(pool, set_ran, NULL);
  assert_int_equal(bw_task_cancel(b), 0);
  assert_int_equal(bw_wait(b, 0), -ECANCELED);
  bw_task *c = bw_run_blocking(pool, set_ran, NULL);
  rt_latch_open(&h.latch);
  assert_int_equal(bw_wait(c, 20000), 0);
  assert_int_equal(bw_wait(a, 20000), 0);
  assert_int_equal(atomic_load(&ran_flag), 1); /* c, not b */
  bw_task_release(a);
  bw_task_release(b);
  bw_task_release(c);
  assert_int_equal(bw_pool_destroy(pool), 0);
  rt_latch_destroy(&h.latch);
}

static void *open_later(void *arg) {
  rt_sleep_ms(100);
  rt_latch_open(arg);
  return NULL;
}

static void *count_then(bw_task *done, void *arg) {
  (void)done;
  atomic_fetch_add((atomic_long *)arg, 1);
  return NULL;
}

static void
test_run_blocking_destroy_cancels_queued_waits_running(void **state) {
  (void)state;
  bw_pool *pool = make_pool(1);
  held h;
  bw_task *running = hold_the_only_thread(pool, &h);
  bw_task *queued[3];
  atomic_long conts;
  atomic_init(&conts, 0);
  bw_task *thens[3];
  for (int i = 0; i < 3; i++) {
    assert_non_null(queued[i] = bw_run_blocking(pool, set_ran, NULL));
    assert_non_null(thens[i] = bw_then(queued[i], count_then, &conts));
  }
  pthread_t opener;
  pthread_create(&opener, NULL, open_later, &h.latch);
  uint64_t t0 = rt_now_ms();
  assert_int_equal(bw_pool_destroy(pool), 0);
  /* Destroy waited for the running job. */
  assert_true(rt_now_ms() - t0 >= 90);
  assert_int_equal(atomic_load(&h.ran), 1);
  assert_int_equal(bw_task_state_get(running), BW_TASK_COMPLETED);
  for (int i = 0; i < 3; i++) {
    assert_int_equal(bw_task_state_get(queued[i]), BW_TASK_CANCELED);
    assert_int_equal(bw_task_error(queued[i]), -ESHUTDOWN);
    assert_int_equal(bw_task_state_get(thens[i]), BW_TASK_COMPLETED);
    bw_task_release(queued[i]);
    bw_task_release(thens[i]);
  }
  assert_int_equal(atomic_load(&conts), 3); /* drained by the destroy */
  assert_int_equal(atomic_load(&ran_flag), 0);
  bw_task_release(running);
  pthread_join(opener, NULL);
  rt_latch_destroy(&h.latch);
}

static where from_worker_where;

static void *blocking_from_worker(void *arg) {
  bw_pool *pool = arg;
  bw_task *t = bw_run_blocking(pool, note_thread, &from_worker_where);
  if (t == NULL)
    return NULL;
  bw_task *c = bw_then(t, count_then, &ran_flag);
  bw_task_release(t);
  return c;
}

static void test_run_blocking_from_a_worker(void **state) {
  (void)state;
  bw_pool *pool = make_pool(1);
  atomic_store(&ran_flag, 0);
  bw_task *t = bw_run(pool, blocking_from_worker, pool);
  assert_int_equal(bw_wait(t, 20000), 0);
  bw_task *c = bw_task_result(t);
  assert_non_null(c);
  assert_int_equal(bw_wait(c, 20000), 0);
  assert_int_equal(atomic_load(&ran_flag), 1);
  assert_int_equal(from_worker_where.role, BW_ROLE_BLOCKING);
  bw_task_release(c);
  bw_task_release(t);
  assert_int_equal(bw_pool_destroy(pool), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_run_blocking_runs_off_the_workers),
      cmocka_unit_test(test_run_blocking_keeps_to_its_bound),
      cmocka_unit_test(test_run_blocking_threads_retire_when_idle),
      cmocka_unit_test(test_run_blocking_cancel_before_start_skips_fn),
      cmocka_unit_test(test_run_blocking_destroy_cancels_queued_waits_running),
      cmocka_unit_test(test_run_blocking_from_a_worker),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
