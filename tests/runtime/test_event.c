/* test_event.c - async events: a manual-reset set completes every wait and
 * stays set until reset; an auto-reset set completes the oldest wait or
 * stays set for one; tokens and destroy end waits with defined results;
 * sets come from foreign threads; a ping-pong over a pool loses no wake-up.
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

static void test_event_refuses_null(void **state) {
  (void)state;
  assert_int_equal(bw_event_set(NULL), -EINVAL);
  assert_int_equal(bw_event_reset(NULL), -EINVAL);
  assert_int_equal(bw_event_destroy(NULL), -EINVAL);
  assert_int_equal(bw_event_is_set(NULL), 0);
  errno = 0;
  assert_null(bw_event_wait(NULL, NULL));
  assert_int_equal(errno, EINVAL);
}

static void test_event_manual_set_completes_every_wait(void **state) {
  (void)state;
  enum { N = 16 };
  bw_event *e = bw_event_create(1);
  assert_non_null(e);
  assert_false(bw_event_is_set(e));
  bw_task *t[N];
  for (int i = 0; i < N; i++) {
    assert_non_null(t[i] = bw_event_wait(e, NULL));
    assert_int_equal(bw_task_state_get(t[i]), BW_TASK_PENDING);
  }
  assert_int_equal(bw_event_set(e), 0);
  assert_true(bw_event_is_set(e));
  for (int i = 0; i < N; i++) {
    assert_int_equal(bw_wait(t[i], 10000), 0);
    assert_int_equal(bw_task_error(t[i]), 0);
    bw_task_release(t[i]);
  }
  /* Set: waits complete at once and leave it set. */
  bw_task *now = bw_event_wait(e, NULL);
  assert_int_equal(bw_task_error(now), 0);
  assert_true(bw_event_is_set(e));
  assert_int_equal(bw_event_set(e), 0);
  bw_task_release(now);
  /* Reset: waits pend again. */
  assert_int_equal(bw_event_reset(e), 0);
  assert_false(bw_event_is_set(e));
  bw_task *again = bw_event_wait(e, NULL);
  assert_int_equal(bw_task_state_get(again), BW_TASK_PENDING);
  bw_event_set(e);
  assert_int_equal(bw_task_error(again), 0);
  bw_task_release(again);
  bw_event_destroy(e);
}

static void test_event_auto_set_completes_one_wait(void **state) {
  (void)state;
  bw_event *e = bw_event_create(0);
  bw_task *a = bw_event_wait(e, NULL);
  bw_task *b = bw_event_wait(e, NULL);
  bw_task *c = bw_event_wait(e, NULL);
  assert_int_equal(bw_event_set(e), 0);
  assert_int_equal(bw_task_error(a), 0);
  assert_int_equal(bw_task_error(b), -EINPROGRESS);
  assert_false(bw_event_is_set(e)); /* the wait took it */
  assert_int_equal(bw_event_set(e), 0);
  assert_int_equal(bw_task_error(b), 0);
  assert_int_equal(bw_task_error(c), -EINPROGRESS);
  bw_event_set(e);
  assert_int_equal(bw_task_error(c), 0);
  bw_task_release(a);
  bw_task_release(b);
  bw_task_release(c);

  /* No waiter: the event stays set for one wait; two sets count once. */
  bw_event_set(e);
  bw_event_set(e);
  assert_true(bw_event_is_set(e));
  a = bw_event_wait(e, NULL);
  assert_int_equal(bw_task_error(a), 0);
  assert_false(bw_event_is_set(e));
  b = bw_event_wait(e, NULL);
  assert_int_equal(bw_task_error(b), -EINPROGRESS);
  /* Reset of an unset event changes nothing. */
  bw_event_reset(e);
  bw_event_set(e);
  assert_int_equal(bw_task_error(b), 0);
  bw_task_release(a);
  bw_task_release(b);
  bw_event_destroy(e);
}

static void test_event_token_cancels_and_destroy_shuts_down(void **state) {
  (void)state;
  bw_event *e = bw_event_create(0);
  bw_cancel_token *tok = bw_cancel_token_create();
  bw_task *a = bw_event_wait(e, tok);
  bw_task *b = bw_event_wait(e, NULL);
  bw_cancel_token_cancel(tok);
  assert_int_equal(bw_task_error(a), -ECANCELED);
  assert_int_equal(bw_task_state_get(a), BW_TASK_CANCELED);
  /* The set goes to the wait behind the canceled one. */
  bw_event_set(e);
  assert_int_equal(bw_task_error(b), 0);
  bw_task_release(a);
  bw_task_release(b);

  bw_event *m = bw_event_create(1);
  a = bw_event_wait(m, NULL);
  b = bw_event_wait(m, tok); /* already canceled */
  assert_int_equal(bw_task_error(b), -ECANCELED);
  assert_int_equal(bw_event_destroy(m), 0);
  assert_int_equal(bw_task_error(a), -ESHUTDOWN);
  assert_int_equal(bw_task_state_get(a), BW_TASK_CANCELED);
  bw_task_release(a);
  bw_task_release(b);
  bw_cancel_token_release(tok);
  bw_event_destroy(e);
}

static void *set_later(void *arg) {
  rt_sleep_ms(20);
  bw_event_set(arg);
  return NULL;
}

static void test_event_set_from_a_foreign_thread(void **state) {
  (void)state;
  bw_event *e = bw_event_create(1);
  bw_task *t = bw_event_wait(e, NULL);
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, set_later, e), 0);
  assert_int_equal(bw_wait(t, 10000), 0);
  assert_int_equal(bw_task_error(t), 0);
  pthread_join(th, NULL);
  bw_task_release(t);
  bw_event_destroy(e);
}

/* The thread whose wait a set completed may destroy the event at once,
 * while the set is still completing the other waits (and finding one the
 * user canceled). */
typedef struct destroyer {
  bw_event *e;
  bw_task *first;
  atomic_int spinning;
} destroyer;

static void *destroy_when_woken(void *arg) {
  destroyer *d = arg;
  atomic_store(&d->spinning, 1);
  while (bw_task_state_get(d->first) == BW_TASK_PENDING) {
  }
  bw_event_destroy(d->e);
  return NULL;
}

static void test_event_destroy_by_a_woken_waiter_during_set(void **state) {
  (void)state;
  enum { WAITS = 1000 };
  for (int round = 0; round < 20; round++) {
    destroyer d = {.e = bw_event_create(1)};
    bw_task **t = calloc(WAITS, sizeof(*t));
    for (int i = 0; i < WAITS; i++)
      t[i] = bw_event_wait(d.e, NULL);
    d.first = t[0];
    /* The set reaches this one last and finds it canceled. */
    assert_int_equal(bw_task_cancel(t[WAITS - 1]), 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, destroy_when_woken, &d), 0);
    while (!atomic_load(&d.spinning))
      rt_sleep_ms(1);
    assert_int_equal(bw_event_set(d.e), 0);
    pthread_join(th, NULL);
    for (int i = 0; i < WAITS; i++) {
      assert_int_equal(bw_task_error(t[i]), i < WAITS - 1 ? 0 : -ECANCELED);
      bw_task_release(t[i]);
    }
    free(t);
  }
}

/* Ping-pong: two auto-reset events, a continuation on each side sets the
 * other's event and waits on its own again. A lost wake-up stalls it. */
enum { ROUNDS = 5000 };

typedef struct side side;
struct side {
  bw_event *mine;
  side *other;
  atomic_long rounds;
};

static void *on_wake(bw_task *done, void *arg);

static void wait_again(side *s) {
  bw_task *t = bw_event_wait(s->mine, NULL);
  bw_task_release(bw_then_consume(t, on_wake, s));
}

static void *on_wake(bw_task *done, void *arg) {
  side *s = arg;
  if (bw_task_error(done) != 0)
    return NULL;
  long n = atomic_fetch_add(&s->rounds, 1) + 1;
  if (n < ROUNDS)
    wait_again(s);
  bw_event_set(s->other->mine);
  return NULL;
}

static void *start_side(void *arg) {
  wait_again(arg);
  return NULL;
}

static void test_event_ping_pong_loses_no_wakeup(void **state) {
  (void)state;
  bw_pool_config cfg = {.name = "event", .min_workers = 2, .max_workers = 2};
  bw_pool *pool = bw_pool_create(&cfg);
  side a = {.mine = bw_event_create(0)}, b = {.mine = bw_event_create(0)};
  a.other = &b;
  b.other = &a;
  bw_task *r1 = bw_run(pool, start_side, &a);
  bw_task *r2 = bw_run(pool, start_side, &b);
  bw_wait(r1, 10000);
  bw_wait(r2, 10000);
  bw_task_release(r1);
  bw_task_release(r2);
  bw_event_set(a.mine);
  assert_int_equal(rt_wait_count(&a.rounds, ROUNDS, 60000), ROUNDS);
  assert_int_equal(rt_wait_count(&b.rounds, ROUNDS, 60000), ROUNDS);
  assert_int_equal(bw_pool_destroy(pool), 0);
  bw_event_destroy(a.mine);
  bw_event_destroy(b.mine);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_event_refuses_null),
      cmocka_unit_test(test_event_manual_set_completes_every_wait),
      cmocka_unit_test(test_event_auto_set_completes_one_wait),
      cmocka_unit_test(test_event_token_cancels_and_destroy_shuts_down),
      cmocka_unit_test(test_event_set_from_a_foreign_thread),
      cmocka_unit_test(test_event_destroy_by_a_woken_waiter_during_set),
      cmocka_unit_test(test_event_ping_pong_loses_no_wakeup),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
