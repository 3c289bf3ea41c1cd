/* test_semaphore.c - the async semaphore: acquires that cannot complete at
 * once return pending tasks that releases complete, oldest first; tokens,
 * bw_task_cancel and destroy end them with defined results; releases come
 * from any thread; a stress run over a pool loses and duplicates nothing.
 * Bounds are generous: the box is a noisy 2-core machine.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "blockwatch/runtime.h"
#include "rt_helpers.h"

static bw_pool *make_pool(unsigned workers) {
  bw_pool_config cfg = {
      .name = "sem", .min_workers = workers, .max_workers = workers};
  return bw_pool_create(&cfg);
}

static void test_semaphore_counts_and_refuses_bad_use(void **state) {
  (void)state;
  bw_semaphore *s = bw_semaphore_create(2);
  assert_non_null(s);
  assert_int_equal(bw_semaphore_count(s), 2);
  assert_int_equal(bw_semaphore_try_acquire(s), 0);
  assert_int_equal(bw_semaphore_try_acquire(s), 0);
  assert_int_equal(bw_semaphore_try_acquire(s), -EAGAIN);
  assert_int_equal(bw_semaphore_release(s, 5), 0);
  assert_int_equal(bw_semaphore_count(s), 5);
  assert_int_equal(bw_semaphore_release(s, 0), 0);
  assert_int_equal(bw_semaphore_release(s, UINT_MAX), -EOVERFLOW);
  assert_int_equal(bw_semaphore_count(s), 5);
  assert_int_equal(bw_semaphore_waiters(s), 0);
  assert_int_equal(bw_semaphore_destroy(s), 0);

  assert_int_equal(bw_semaphore_try_acquire(NULL), -EINVAL);
  assert_int_equal(bw_semaphore_release(NULL, 1), -EINVAL);
  assert_int_equal(bw_semaphore_destroy(NULL), -EINVAL);
  assert_int_equal(bw_semaphore_count(NULL), 0);
  errno = 0;
  assert_null(bw_semaphore_acquire(NULL, NULL));
  assert_int_equal(errno, EINVAL);
  assert_int_equal(bw_task_error(NULL), -EINVAL);
}

static void test_semaphore_acquire_completes_at_once_when_free(void **state) {
  (void)state;
  bw_semaphore *s = bw_semaphore_create(1);
  bw_task *t = bw_semaphore_acquire(s, NULL);
  assert_non_null(t);
  assert_int_equal(bw_task_state_get(t), BW_TASK_COMPLETED);
  assert_int_equal(bw_task_error(t), 0);
  assert_null(bw_task_result(t));
  assert_int_equal(bw_semaphore_count(s), 0);
  bw_task_release(t);
  bw_semaphore_destroy(s);
}

static void test_semaphore_release_completes_a_pending_acquire(void **state) {
  (void)state;
  bw_semaphore *s = bw_semaphore_create(0);
  bw_task *t = bw_semaphore_acquire(s, NULL);
  assert_non_null(t);
  assert_int_equal(bw_task_state_get(t), BW_TASK_PENDING);
  assert_int_equal(bw_task_error(t), -EINPROGRESS);
  assert_int_equal(bw_semaphore_waiters(s), 1);
  assert_int_equal(bw_semaphore_release(s, 1), 0);
  assert_int_equal(bw_wait(t, 10000), 0);
  assert_int_equal(bw_task_error(t), 0);
  assert_int_equal(bw_semaphore_count(s), 0);
  assert_int_equal(bw_semaphore_waiters(s), 0);
  bw_task_release(t);
  bw_semaphore_destroy(s);
}

static void test_semaphore_serves_waiters_oldest_first(void **state) {
  (void)state;
  enum { N = 8 };
  bw_semaphore *s = bw_semaphore_create(0);
  bw_task *t[N];
  for (int i = 0; i < N; i++)
    assert_non_null(t[i] = bw_semaphore_acquire(s, NULL));
  for (int i = 0; i < N; i++) {
    /* A free unit must not let try_acquire overtake the queue. */
    assert_int_equal(bw_semaphore_try_acquire(s), -EAGAIN);
    assert_int_equal(bw_semaphore_release(s, 1), 0);
    for (int j = 0; j < N; j++)
      assert_int_equal(bw_task_state_get(t[j]),
                       j <= i ? BW_TASK_COMPLETED : BW_TASK_PENDING);
  }
  assert_int_equal(bw_semaphore_count(s), 0);
  for (int i = 0; i < N; i++)
    bw_task_release(t[i]);
  /* A release of several units serves that many waiters. */
  for (int i = 0; i < 3; i++)
    t[i] = bw_semaphore_acquire(s, NULL);
  assert_int_equal(bw_semaphore_release(s, 5), 0);
  for (int i = 0; i < 3; i++) {
    assert_int_equal(bw_task_error(t[i]), 0);
    bw_task_release(t[i]);
  }
  assert_int_equal(bw_semaphore_count(s), 2);
  bw_semaphore_destroy(s);
}

static void test_semaphore_token_cancels_a_pending_acquire(void **state) {
  (void)state;
  bw_semaphore *s = bw_semaphore_create(0);
  bw_cancel_token *tok = bw_cancel_token_create();
  bw_task *t = bw_semaphore_acquire(s, tok);
  bw_task *later = bw_semaphore_acquire(s, NULL);
  assert_int_equal(bw_task_state_get(t), BW_TASK_PENDING);
  assert_int_equal(bw_cancel_token_cancel(tok), 0);
  assert_int_equal(bw_task_state_get(t), BW_TASK_CANCELED);
  assert_int_equal(bw_wait(t, 1000), -ECANCELED);
  assert_int_equal(bw_task_error(t), -ECANCELED);
  assert_int_equal(bw_semaphore_waiters(s), 1);
  /* The unit goes to the waiter behind the canceled one. */
  assert_int_equal(bw_semaphore_release(s, 1), 0);
  assert_int_equal(bw_task_error(later), 0);
  assert_int_equal(bw_semaphore_count(s), 0);
  bw_task_release(t);
  bw_task_release(later);

  /* A token already canceled: canceled at once, nothing taken. */
  bw_semaphore_release(s, 1);
  t = bw_semaphore_acquire(s, tok);
  assert_int_equal(bw_task_error(t), -ECANCELED);
  assert_int_equal(bw_semaphore_count(s), 1);
  bw_task_release(t);

  /* A token never canceled: released with its acquire. */
  bw_cancel_token *tok2 = bw_cancel_token_create();
  t = bw_semaphore_acquire(s, tok2);
  assert_int_equal(bw_task_error(t), 0);
  bw_task_release(t);
  t = bw_semaphore_acquire(s, tok2);
  assert_int_equal(bw_semaphore_release(s, 1), 0);
  assert_int_equal(bw_task_error(t), 0);
  bw_task_release(t);
  bw_cancel_token_release(tok2);
  bw_cancel_token_release(tok);
  bw_semaphore_destroy(s);
}

static void test_semaphore_task_cancel_passes_the_unit_on(void **state) {
  (void)state;
  bw_semaphore *s = bw_semaphore_create(0);
  bw_task *first = bw_semaphore_acquire(s, NULL);
  bw_task *second = bw_semaphore_acquire(s, NULL);
  assert_int_equal(bw_task_cancel(first), 0);
  assert_int_equal(bw_task_error(first), -ECANCELED);
  assert_int_equal(bw_semaphore_release(s, 1), 0);
  assert_int_equal(bw_task_error(second), 0);
  assert_int_equal(bw_semaphore_count(s), 0);
  /* With nobody left, the unit stays free. */
  bw_task *third = bw_semaphore_acquire(s, NULL);
  bw_task_cancel(third);
  assert_int_equal(bw_semaphore_release(s, 1), 0);
  assert_int_equal(bw_semaphore_count(s), 1);
  bw_task_release(first);
  bw_task_release(second);
  bw_task_release(third);
  bw_semaphore_destroy(s);
}

static void test_semaphore_destroy_ends_waiters_with_eshutdown(void **state) {
  (void)state;
  bw_semaphore *s = bw_semaphore_create(0);
  bw_cancel_token *tok = bw_cancel_token_create();
  bw_task *a = bw_semaphore_acquire(s, NULL);
  bw_task *b = bw_semaphore_acquire(s, tok);
  assert_int_equal(bw_semaphore_destroy(s), 0);
  assert_int_equal(bw_task_state_get(a), BW_TASK_CANCELED);
  assert_int_equal(bw_task_error(a), -ESHUTDOWN);
  assert_null(bw_task_result(a));
  assert_int_equal(bw_wait(a, 0), -ECANCELED);
  assert_int_equal(bw_task_error(b), -ESHUTDOWN);
  /* The token may be canceled afterwards: nothing is left to cancel. */
  assert_int_equal(bw_cancel_token_cancel(tok), 0);
  assert_int_equal(bw_task_error(b), -ESHUTDOWN);
  bw_task_release(a);
  bw_task_release(b);
  bw_cancel_token_release(tok);
}

typedef struct cont_probe {
  bw_pool *pool;
  atomic_int ran_on_pool;
  atomic_long done;
} cont_probe;

static void *note_pool(bw_task *done, void *arg) {
  cont_probe *p = arg;
  atomic_store(&p->ran_on_pool,
               bw_current_pool() == p->pool && bw_task_error(done) == 0);
  atomic_fetch_add(&p->done, 1);
  return NULL;
}

static bw_semaphore *cont_sem;

static void *acquire_then_note(void *arg) {
  bw_task *t = bw_semaphore_acquire(cont_sem, NULL);
  bw_task_release(bw_then_consume(t, note_pool, arg));
  return NULL;
}

static void test_semaphore_continuation_runs_on_the_asking_pool(void **state) {
  (void)state;
  bw_pool *pool = make_pool(2);
  cont_sem = bw_semaphore_create(0);
  cont_probe p = {.pool = pool};
  bw_task *r = bw_run(pool, acquire_then_note, &p);
  assert_int_equal(bw_wait(r, 10000), 0);
  bw_task_release(r);
  assert_true(bw_semaphore_waiters(cont_sem) == 1);
  assert_int_equal(bw_semaphore_release(cont_sem, 1), 0);
  assert_int_equal(rt_wait_count(&p.done, 1, 10000), 1);
  assert_true(atomic_load(&p.ran_on_pool));
  bw_semaphore_destroy(cont_sem);
  assert_int_equal(bw_pool_destroy(pool), 0);
}

enum { FOREIGN_THREADS = 4, FOREIGN_EACH = 500 };

static void *release_many(void *arg) {
  bw_semaphore *s = arg;
  for (int i = 0; i < FOREIGN_EACH; i++)
    bw_semaphore_release(s, 1);
  return NULL;
}

static void test_semaphore_release_from_foreign_threads(void **state) {
  (void)state;
  enum { N = FOREIGN_THREADS * FOREIGN_EACH };
  bw_semaphore *s = bw_semaphore_create(0);
  bw_task **t = calloc(N, sizeof(*t));
  for (int i = 0; i < N; i++)
    assert_non_null(t[i] = bw_semaphore_acquire(s, NULL));
  pthread_t th[FOREIGN_THREADS];
  for (int i = 0; i < FOREIGN_THREADS; i++)
    assert_int_equal(pthread_create(&th[i], NULL, release_many, s), 0);
  for (int i = 0; i < FOREIGN_THREADS; i++)
    pthread_join(th[i], NULL);
  bw_task *all = bw_when_all(t, N);
  assert_int_equal(bw_wait(all, 20000), 0);
  bw_task_release(all);
  for (int i = 0; i < N; i++) {
    assert_int_equal(bw_task_error(t[i]), 0);
    bw_task_release(t[i]);
  }
  free(t);
  assert_int_equal(bw_semaphore_count(s), 0);
  bw_semaphore_destroy(s);
}

typedef struct race_arg {
  bw_semaphore *s;
  bw_cancel_token *tok;
  rt_latch go;
} race_arg;

static void *race_cancel(void *arg) {
  race_arg *r = arg;
  rt_latch_wait(&r->go);
  bw_cancel_token_cancel(r->tok);
  return NULL;
}

static void *race_release(void *arg) {
  race_arg *r = arg;
  rt_latch_wait(&r->go);
  bw_semaphore_release(r->s, 1);
  return NULL;
}

/* One race: a pending acquire with a token, a thread that cancels the
 * token and one that runs `other`, let go together. Returns the acquire's
 * status; r->s is destroyed unless `other` did it. */
static int race_once(race_arg *r, void *(*other)(void *)) {
  r->s = bw_semaphore_create(0);
  r->tok = bw_cancel_token_create();
  rt_latch_init(&r->go);
  bw_task *t = bw_semaphore_acquire(r->s, r->tok);
  pthread_t a, b;
  pthread_create(&a, NULL, race_cancel, r);
  pthread_create(&b, NULL, other, r);
  rt_latch_open(&r->go);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  int status = bw_task_error(t);
  bw_task_release(t);
  bw_cancel_token_release(r->tok);
  rt_latch_destroy(&r->go);
  return status;
}

/* A cancel and a release race for one pending acquire: whichever wins,
 * the unit is either taken or still free, never both nor neither. */
static void test_semaphore_cancel_races_release(void **state) {
  (void)state;
  int taken = 0;
  for (int i = 0; i < 300; i++) {
    race_arg r;
    int status = race_once(&r, race_release);
    assert_true(status == 0 || status == -ECANCELED);
    taken += status == 0;
    assert_int_equal(bw_semaphore_count(r.s), status == 0 ? 0 : 1);
    assert_int_equal(bw_semaphore_waiters(r.s), 0);
    bw_semaphore_destroy(r.s);
  }
  print_message("release won %d of 300 races\n", taken);
}

/* A cancel races destroy: the task ends once, as one or the other. */
static void *race_destroy(void *arg) {
  race_arg *r = arg;
  rt_latch_wait(&r->go);
  bw_semaphore_destroy(r->s);
  return NULL;
}

static void test_semaphore_cancel_races_destroy(void **state) {
  (void)state;
  for (int i = 0; i < 300; i++) {
    race_arg r;
    int status = race_once(&r, race_destroy);
    assert_true(status == -ECANCELED || status == -ESHUTDOWN);
  }
}

/* Stress: tasks on a pool go through a 3-unit semaphore, some with tokens
 * canceled meanwhile, others released from a foreign thread. Every entry
 * runs once, at most 3 at a time, and every unit comes back. */
enum { STRESS_N = 20000, STRESS_UNITS = 3 };

typedef struct stress {
  bw_semaphore *s;
  bw_cancel_token *tok; /* canceled halfway through */
  atomic_int inside, max_inside;
  atomic_long finished, entered, canceled;
  atomic_int hits[STRESS_N];
} stress;

static stress *st;

static void *stress_section(bw_task *done, void *arg) {
  intptr_t i = (intptr_t)arg;
  int status = bw_task_error(done);
  if (status == 0) {
    int now = atomic_fetch_add(&st->inside, 1) + 1;
    int max = atomic_load(&st->max_inside);
    while (now > max &&
           !atomic_compare_exchange_weak(&st->max_inside, &max, now)) {
    }
    atomic_fetch_add(&st->hits[i], 1);
    atomic_fetch_add(&st->entered, 1);
    atomic_fetch_sub(&st->inside, 1);
    bw_semaphore_release(st->s, 1);
  } else if (status == -ECANCELED) {
    atomic_fetch_add(&st->canceled, 1);
    atomic_fetch_add(&st->hits[i], 1);
  }
  atomic_fetch_add(&st->finished, 1);
  return NULL;
}

static void *stress_start(void *arg) {
  intptr_t i = (intptr_t)arg;
  bw_task *t = bw_semaphore_acquire(st->s, (i & 7) == 0 ? st->tok : NULL);
  bw_task_release(bw_then_consume(t, stress_section, arg));
  return NULL;
}

static void test_semaphore_stress_loses_and_duplicates_nothing(void **state) {
  (void)state;
  bw_pool *pool = make_pool(2);
  st = calloc(1, sizeof(*st));
  st->s = bw_semaphore_create(STRESS_UNITS);
  st->tok = bw_cancel_token_create();
  for (intptr_t i = 0; i < STRESS_N; i++) {
    if (i == STRESS_N / 2)
      bw_cancel_token_cancel(st->tok);
    bw_task *r = bw_run(pool, stress_start, (void *)i);
    assert_non_null(r);
    bw_task_release(r);
  }
  assert_int_equal(rt_wait_count(&st->finished, STRESS_N, 60000), STRESS_N);
  for (int i = 0; i < STRESS_N; i++)
    assert_int_equal(atomic_load(&st->hits[i]), 1);
  assert_int_equal(atomic_load(&st->entered) + atomic_load(&st->canceled),
                   STRESS_N);
  assert_true(atomic_load(&st->max_inside) <= STRESS_UNITS);
  assert_int_equal(bw_semaphore_count(st->s), STRESS_UNITS);
  assert_int_equal(bw_semaphore_waiters(st->s), 0);
  assert_int_equal(bw_pool_destroy(pool), 0);
  bw_semaphore_destroy(st->s);
  bw_cancel_token_release(st->tok);
  free(st);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_semaphore_counts_and_refuses_bad_use),
      cmocka_unit_test(test_semaphore_acquire_completes_at_once_when_free),
      cmocka_unit_test(test_semaphore_release_completes_a_pending_acquire),
      cmocka_unit_test(test_semaphore_serves_waiters_oldest_first),
      cmocka_unit_test(test_semaphore_token_cancels_a_pending_acquire),
      cmocka_unit_test(test_semaphore_task_cancel_passes_the_unit_on),
      cmocka_unit_test(test_semaphore_destroy_ends_waiters_with_eshutdown),
      cmocka_unit_test(test_semaphore_continuation_runs_on_the_asking_pool),
      cmocka_unit_test(test_semaphore_release_from_foreign_threads),
      cmocka_unit_test(test_semaphore_cancel_races_release),
      cmocka_unit_test(test_semaphore_cancel_races_destroy),
      cmocka_unit_test(test_semaphore_stress_loses_and_duplicates_nothing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
