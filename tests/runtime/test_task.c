/* test_task.c - tasks: bw_run, continuations, completion sources,
 * when_all/when_any, cancellation tokens and the waits with their error
 * codes (-ETIMEDOUT, -ECANCELED, -EDEADLK, -EINVAL), plus races between
 * completing, canceling and attaching.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "blockwatch/runtime.h"
#include "rt_helpers.h"
#include "rt_task_fns.h"

static int make_pool(void **state) {
  bw_pool_config cfg = {0};
  cfg.name = "task";
  cfg.min_workers = 2;
  cfg.max_workers = 8;
  *state = bw_pool_create(&cfg);
  return *state == NULL ? -1 : 0;
}

static int destroy_pool(void **state) {
  return bw_pool_destroy(*state);
}

static void test_task_run_completes_with_the_result(void **state) {
  bw_pool *pool = *state;
  int x = 42;
  bw_task *t = bw_run(pool, rt_return_arg, &x);
  assert_non_null(t);
  assert_int_equal(bw_wait(t, -1), 0);
  assert_int_equal(bw_task_state_get(t), BW_TASK_COMPLETED);
  assert_ptr_equal(bw_task_result(t), &x);
  /* Waiting again on a completed task returns at once. */
  assert_int_equal(bw_wait(t, 0), 0);
  bw_task_release(t);
}

static void test_task_run_rejects_null_fn(void **state) {
  errno = 0;
  assert_null(bw_run(*state, NULL, NULL));
  assert_int_equal(errno, EINVAL);
  assert_int_equal(bw_wait(NULL, 0), -EINVAL);
  assert_null(bw_then(NULL, NULL, NULL));
}

static void test_task_then_chains_results(void **state) {
  bw_pool *pool = *state;
  bw_task *t = bw_run(pool, rt_return_arg, (void *)(uintptr_t)1);
  assert_non_null(t);
  for (int i = 0; i < 100; i++) {
    bw_task *next = bw_then(t, rt_add_one, NULL);
    assert_non_null(next);
    bw_task_release(t); /* the chain keeps what it needs */
    t = next;
  }
  assert_int_equal(bw_wait(t, -1), 0);
  assert_int_equal((uintptr_t)bw_task_result(t), 101);
  bw_task_release(t);
}

static void *note_thread(bw_task *done, void *arg) {
  (void)done;
  *(pthread_t *)arg = pthread_self();
  return NULL;
}

static void test_task_then_chain_stays_on_one_worker(void **state) {
  bw_pool *pool = *state;
  /* Each continuation of the task a worker just finished runs next on that
   * worker: a chain does not migrate (its data stays in one cache). */
  enum { LINKS = 200 };
  static pthread_t where[LINKS];
  bw_task *src = bw_completion_create(pool);
  bw_task *t = bw_task_retain(src);
  for (int i = 0; i < LINKS; i++) {
    bw_task *next = bw_then(t, note_thread, &where[i]);
    bw_task_release(t);
    t = next;
  }
  bw_task_complete(src, NULL);
  assert_int_equal(bw_wait(t, -1), 0);
  for (int i = 2; i < LINKS; i++)
    assert_true(pthread_equal(where[i], where[1]));
  bw_task_release(t);
  bw_task_release(src);
}

static void test_task_then_on_completed_task_runs(void **state) {
  bw_pool *pool = *state;
  bw_task *t = bw_run(pool, rt_return_arg, (void *)(uintptr_t)7);
  assert_int_equal(bw_wait(t, -1), 0);
  bw_task *c = bw_then(t, rt_add_one, NULL);
  assert_non_null(c);
  bw_task_release(t);
  assert_int_equal(bw_wait(c, -1), 0);
  assert_int_equal((uintptr_t)bw_task_result(c), 8);
  bw_task_release(c);
}

static void test_task_completion_source_and_cancel(void **state) {
  bw_pool *pool = *state;
  bw_task *src = bw_completion_create(pool);
  assert_non_null(src);
  assert_int_equal(bw_task_state_get(src), BW_TASK_PENDING);
  assert_null(bw_task_result(src));
  assert_int_equal(bw_wait(src, 10), -ETIMEDOUT);
  bw_task *c = bw_then(src, rt_note_state, NULL);
  int v = 5;
  assert_int_equal(bw_task_complete(src, &v), 0);
  assert_int_equal(bw_task_complete(src, &v), -EALREADY);
  assert_int_equal(bw_task_cancel(src), -EALREADY);
  assert_ptr_equal(bw_task_result(src), &v);
  assert_int_equal(bw_wait(c, -1), 0);
  assert_int_equal((uintptr_t)bw_task_result(c), BW_TASK_COMPLETED);
  bw_task_release(c);
  bw_task_release(src);

  /* A canceled source runs its continuations too and waits say so. */
  src = bw_completion_create(pool);
  c = bw_then(src, rt_note_state, NULL);
  assert_int_equal(bw_task_cancel(src), 0);
  assert_int_equal(bw_task_state_get(src), BW_TASK_CANCELED);
  assert_int_equal(bw_wait(src, -1), -ECANCELED);
  assert_int_equal(bw_task_complete(src, NULL), -EALREADY);
  assert_int_equal(bw_wait(c, -1), 0);
  assert_int_equal((uintptr_t)bw_task_result(c), BW_TASK_CANCELED);
  bw_task_release(c);
  bw_task_release(src);

  /* Only sources (and delays) can be completed or canceled by hand. */
  bw_task *run = bw_run(pool, rt_return_arg, NULL);
  assert_int_equal(bw_task_complete(run, NULL), -EPERM);
  assert_int_equal(bw_task_cancel(run), -EPERM);
  assert_int_equal(bw_wait(run, -1), 0);
  bw_task_release(run);
}

/* bw_task_error: how a task ended, with the reason it was canceled with. */
static void test_task_error_says_how_it_ended(void **state) {
  bw_pool *pool = *state;
  assert_int_equal(bw_task_error(NULL), -EINVAL);
  bw_task *src = bw_completion_create(pool);
  assert_int_equal(bw_task_error(src), -EINPROGRESS);
  assert_int_equal(bw_task_complete(src, NULL), 0);
  assert_int_equal(bw_task_error(src), 0);
  assert_int_equal(bw_task_cancel_with(src, -ETIMEDOUT), -EALREADY);
  assert_int_equal(bw_task_error(src), 0); /* the first resolution stays */
  bw_task_release(src);

  src = bw_completion_create(pool);
  assert_int_equal(bw_task_cancel_with(src, 5), -EINVAL); /* not an errno */
  assert_int_equal(bw_task_cancel_with(src, 0), -EINVAL);
  assert_int_equal(bw_task_error(src), -EINPROGRESS);
  bw_task *c = bw_then(src, rt_note_state, NULL);
  assert_int_equal(bw_task_cancel_with(src, -ETIMEDOUT), 0);
  assert_int_equal(bw_task_state_get(src), BW_TASK_CANCELED);
  assert_int_equal(bw_task_error(src), -ETIMEDOUT);
  assert_null(bw_task_result(src)); /* the reason is not a result */
  assert_int_equal(bw_wait(src, -1), -ECANCELED);
  assert_int_equal(bw_wait(c, -1), 0);
  assert_int_equal((uintptr_t)bw_task_result(c), BW_TASK_CANCELED);
  bw_task_release(c);
  bw_task_release(src);

  /* A plain cancel, a canceled delay and a canceled when_all: -ECANCELED. */
  src = bw_completion_create(pool);
  assert_int_equal(bw_task_cancel(src), 0);
  assert_int_equal(bw_task_error(src), -ECANCELED);
  bw_task *d = bw_delay(pool, 60000);
  assert_int_equal(bw_task_cancel(d), 0);
  assert_int_equal(bw_task_error(d), -ECANCELED);
  bw_task *both[] = {src, d};
  bw_task *all = bw_when_all(both, 2);
  assert_int_equal(bw_wait(all, -1), -ECANCELED);
  assert_int_equal(bw_task_error(all), -ECANCELED);
  bw_task_release(all);
  bw_task_release(d);
  bw_task_release(src);
}

typedef struct borrow_round {
  atomic_long count;
  long target;
  bw_task *done; /* borrowed: the waiter owns the only reference */
} borrow_round;

static void count_then_complete(void *arg) {
  borrow_round *r = arg;
  /* Read before counting: once the count is full the round may end and
   * the waiter reuse `r` (only the last item may touch it after). */
  long target = r->target;
  bw_task *done = r->done;
  if (atomic_fetch_add(&r->count, 1) + 1 == target)
    bw_task_complete(done, NULL);
}

static void
test_task_waiter_may_release_while_completer_finishes(void **state) {
  (void)state;
  /* The waiter owns the only reference and drops it as soon as the wait
   * returns, possibly while the completing worker is still inside
   * bw_task_complete: the runtime must keep the task alive until it is
   * done with it. More workers than CPUs, so completers get preempted in
   * that window now and then (a timing-dependent guard: the same pattern in
   * a standalone program crashed within seconds before the fix, when the
   * freed block was recycled into the next round's task). */
  bw_pool_config cfg = {0};
  cfg.name = "borrow";
  cfg.min_workers = 4;
  cfg.max_workers = 4;
  bw_pool *busy = bw_pool_create(&cfg);
  assert_non_null(busy);
  for (int round = 0; round < 10000; round++) {
    borrow_round r = {.count = 0, .target = 100};
    r.done = bw_completion_create(busy);
    int rc = 0;
    for (long i = 0; i < r.target; i++)
      rc |= bw_submit(busy, count_then_complete, &r);
    rc |= bw_wait(r.done, -1);
    bw_task_release(r.done);
    assert_int_equal(rc, 0);
  }
  assert_int_equal(bw_pool_destroy(busy), 0);
}

static void test_task_retain_keeps_it_alive(void **state) {
  bw_task *src = bw_completion_create(*state);
  assert_ptr_equal(bw_task_retain(src), src);
  bw_task_release(src);
  assert_int_equal(bw_task_complete(src, NULL), 0);
  assert_int_equal(bw_task_state_get(src), BW_TASK_COMPLETED);
  bw_task_release(src);
}

typedef struct completer {
  bw_task *task;
  unsigned delay_ms;
} completer;

static void complete_later(void *arg) {
  completer *c = arg;
  rt_sleep_ms(c->delay_ms);
  bw_task_complete(c->task, NULL);
}

static void test_task_when_all_waits_for_every_task(void **state) {
  bw_pool *pool = *state;
  bw_task *srcs[4];
  completer cs[4];
  for (int i = 0; i < 4; i++)
    srcs[i] = bw_completion_create(pool);
  bw_task *all = bw_when_all(srcs, 4);
  assert_non_null(all);
  for (int i = 0; i < 4; i++) {
    cs[i].task = srcs[i];
    cs[i].delay_ms = (unsigned)(10 * (i + 1));
    assert_int_equal(bw_submit(pool, complete_later, &cs[i]), 0);
  }
  assert_int_equal(bw_wait(all, -1), 0);
  for (int i = 0; i < 4; i++) {
    assert_int_equal(bw_task_state_get(srcs[i]), BW_TASK_COMPLETED);
    bw_task_release(srcs[i]);
  }
  assert_null(bw_task_result(all));
  bw_task_release(all);

  bw_task *none = bw_when_all(NULL, 0);
  assert_non_null(none);
  assert_int_equal(bw_task_state_get(none), BW_TASK_COMPLETED);
  bw_task_release(none);
}

static void test_task_when_all_is_canceled_if_one_is(void **state) {
  bw_task *srcs[3];
  for (int i = 0; i < 3; i++)
    srcs[i] = bw_completion_create(*state);
  bw_task *all = bw_when_all(srcs, 3);
  bw_task_complete(srcs[0], NULL);
  bw_task_cancel(srcs[1]);
  assert_int_equal(bw_task_state_get(all), BW_TASK_PENDING);
  bw_task_complete(srcs[2], NULL);
  assert_int_equal(bw_wait(all, -1), -ECANCELED);
  bw_task_release(all);
  for (int i = 0; i < 3; i++)
    bw_task_release(srcs[i]);
}

static void test_task_when_any_gives_the_first(void **state) {
  bw_task *srcs[3];
  for (int i = 0; i < 3; i++)
    srcs[i] = bw_completion_create(*state);
  bw_task *any = bw_when_any(srcs, 3);
  assert_non_null(any);
  assert_int_equal(bw_task_state_get(any), BW_TASK_PENDING);
  bw_task_complete(srcs[1], NULL);
  assert_int_equal(bw_wait(any, -1), 0);
  assert_ptr_equal(bw_task_result(any), srcs[1]);
  bw_task_complete(srcs[0], NULL);
  assert_ptr_equal(bw_task_result(any), srcs[1]);
  bw_task_release(any);
  /* The when_any task is gone; completing the last source must be safe. */
  bw_task_complete(srcs[2], NULL);
  for (int i = 0; i < 3; i++)
    bw_task_release(srcs[i]);

  errno = 0;
  assert_null(bw_when_any(NULL, 0));
  assert_int_equal(errno, EINVAL);
}

static void test_task_wait_times_out_then_succeeds(void **state) {
  bw_task *src = bw_completion_create(*state);
  uint64_t t0 = rt_now_ms();
  assert_int_equal(bw_wait(src, 50), -ETIMEDOUT);
  assert_true(rt_now_ms() - t0 >= 45);
  /* The timed-out waiter left a node behind; it must not disturb this. */
  completer c = {.task = src, .delay_ms = 20};
  assert_int_equal(bw_submit(*state, complete_later, &c), 0);
  assert_int_equal(bw_wait(src, 20000), 0);
  bw_task_release(src);

  /* Timed out on a task that is then released unresolved: the node left
   * behind is freed with it (ASan checks). */
  src = bw_completion_create(*state);
  assert_int_equal(bw_wait(src, 1), -ETIMEDOUT);
  bw_task_release(src);
}

typedef struct canceler {
  bw_cancel_token *token;
  unsigned delay_ms;
} canceler;

static void cancel_later(void *arg) {
  canceler *c = arg;
  rt_sleep_ms(c->delay_ms);
  bw_cancel_token_cancel(c->token);
}

static void test_task_wait_cancelable_ends_on_token(void **state) {
  bw_task *src = bw_completion_create(*state);
  bw_cancel_token *tok = bw_cancel_token_create();
  assert_non_null(tok);
  assert_int_equal(bw_cancel_token_is_canceled(tok), 0);
  /* A second reference, e.g. for a canceling thread, is dropped apart. */
  assert_ptr_equal(bw_cancel_token_retain(tok), tok);
  bw_cancel_token_release(tok);
  assert_null(bw_cancel_token_retain(NULL));
  canceler c = {.token = tok, .delay_ms = 30};
  assert_int_equal(bw_submit(*state, cancel_later, &c), 0);
  assert_int_equal(bw_wait_cancelable(src, 20000, tok), -ECANCELED);
  assert_int_equal(bw_cancel_token_is_canceled(tok), 1);
  assert_int_equal(bw_task_state_get(src), BW_TASK_PENDING);
  /* An already-canceled token ends a wait at once; cancel is idempotent. */
  assert_int_equal(bw_wait_cancelable(src, -1, tok), -ECANCELED);
  assert_int_equal(bw_cancel_token_cancel(tok), 0);
  assert_int_equal(bw_cancel_token_cancel(NULL), -EINVAL);
  bw_cancel_token_release(tok);
  /* A token that is never canceled does not disturb a normal wait. */
  tok = bw_cancel_token_create();
  bw_task_complete(src, NULL);
  assert_int_equal(bw_wait_cancelable(src, -1, tok), 0);
  bw_cancel_token_release(tok);
  bw_task_release(src);
}

typedef struct self_wait {
  bw_task *self;
  atomic_long ready;
  int rc;
} self_wait;

static void *wait_on_self(void *arg) {
  self_wait *s = arg;
  rt_wait_count(&s->ready, 1, 20000);
  s->rc = bw_wait(s->self, -1);
  return NULL;
}

static void test_task_wait_on_itself_is_edeadlk(void **state) {
  self_wait s = {.self = NULL, .ready = 0, .rc = 1};
  s.self = bw_run(*state, wait_on_self, &s);
  atomic_store(&s.ready, 1);
  assert_int_equal(bw_wait(s.self, -1), 0);
  assert_int_equal(s.rc, -EDEADLK);
  bw_task_release(s.self);
}

typedef struct inner_wait {
  bw_pool *pool;
  int rc;
} inner_wait;

static void *wait_on_inner(void *arg) {
  inner_wait *w = arg;
  bw_task *inner = bw_run(w->pool, rt_return_arg, NULL);
  w->rc = bw_wait(inner, 20000);
  bw_task_release(inner);
  return NULL;
}

static void test_task_wait_on_full_pool_is_edeadlk(void **state) {
  (void)state;
  /* One worker, no way to grow: the inner task could never run. */
  bw_pool_config cfg = {0};
  cfg.name = "dead";
  cfg.min_workers = 1;
  cfg.max_workers = 1;
  cfg.flags = BW_POOL_NO_INJECTION;
  bw_pool *pool = bw_pool_create(&cfg);
  inner_wait w = {.pool = pool, .rc = 1};
  bw_task *outer = bw_run(pool, wait_on_inner, &w);
  /* A timed wait: one without a timeout may run `outer` on this thread
   * (helping), where the inner wait is no worker's and cannot deadlock. */
  assert_int_equal(bw_wait(outer, 60000), 0);
  assert_int_equal(w.rc, -EDEADLK);
  bw_task_release(outer);
  assert_int_equal(bw_pool_destroy(pool), 0);

  /* With compensation the same wait succeeds: a spare worker runs it. */
  cfg.max_workers = 2;
  cfg.flags = BW_POOL_COMPENSATE | BW_POOL_NO_INJECTION;
  pool = bw_pool_create(&cfg);
  w.pool = pool;
  w.rc = 1;
  outer = bw_run(pool, wait_on_inner, &w);
  assert_int_equal(bw_wait(outer, 60000), 0);
  assert_int_equal(w.rc, 0);
  bw_task_release(outer);
  assert_int_equal(bw_pool_destroy(pool), 0);
}

/* ---- races ---------------------------------------------------------------
 * Each round lets two threads race on one task; every continuation must run
 * once and the outcome must be exactly one of the racers'. */

typedef struct race {
  bw_task *task;
  bw_cancel_token *token;
  atomic_int go;
  atomic_long done;
  int complete_rc, cancel_rc;
} race;

static void race_complete(void *arg) {
  race *r = arg;
  while (!atomic_load(&r->go)) {
  }
  r->complete_rc = bw_task_complete(r->task, r);
  atomic_fetch_add(&r->done, 1);
}

static void *race_cancel(void *arg) {
  race *r = arg;
  atomic_store(&r->go, 1);
  r->cancel_rc = bw_task_cancel(r->task);
  return NULL;
}

static void test_task_complete_and_cancel_race_has_one_winner(void **state) {
  bw_pool *pool = *state;
  for (int round = 0; round < 300; round++) {
    race r = {.task = bw_completion_create(pool), .go = 0};
    r.complete_rc = r.cancel_rc = 1;
    bw_task *cont = bw_then(r.task, rt_note_state, NULL);
    assert_int_equal(bw_submit(pool, race_complete, &r), 0);
    pthread_t th;
    pthread_create(&th, NULL, race_cancel, &r);
    pthread_join(th, NULL);
    assert_int_equal(bw_wait(cont, -1), 0);
    assert_int_equal(rt_wait_count(&r.done, 1, 20000), 1);
    assert_true((r.complete_rc == 0) != (r.cancel_rc == 0));
    int st = bw_task_state_get(r.task);
    assert_int_equal((uintptr_t)bw_task_result(cont), st);
    assert_int_equal(st,
                     r.complete_rc == 0 ? BW_TASK_COMPLETED : BW_TASK_CANCELED);
    bw_task_release(cont);
    bw_task_release(r.task);
  }
}

static void *attach_many(void *arg) {
  bw_task **conts = arg;
  bw_task *src = conts[0];
  for (int i = 1; i < 64; i++)
    conts[i] = bw_then(src, rt_note_state, NULL);
  return NULL;
}

static void test_task_then_racing_completion_runs_each_once(void **state) {
  bw_pool *pool = *state;
  for (int round = 0; round < 100; round++) {
    bw_task *conts[64];
    conts[0] = bw_completion_create(pool);
    pthread_t th;
    pthread_create(&th, NULL, attach_many, conts);
    bw_task_complete(conts[0], NULL);
    pthread_join(th, NULL);
    for (int i = 1; i < 64; i++) {
      assert_int_equal(bw_wait(conts[i], -1), 0);
      assert_int_equal((uintptr_t)bw_task_result(conts[i]), BW_TASK_COMPLETED);
      bw_task_release(conts[i]);
    }
    bw_task_release(conts[0]);
  }
}

/* Continuations of a run task take their reference on it only when they
 * fire, and the first inherits the task's own queue reference: attach many
 * from another thread while the task finishes and its creator drops it, and
 * every continuation must still see the task alive with its result. */
enum { FAN = 16 };

static void *attach_fan(void *arg) {
  bw_task **conts = arg;
  bw_task *t = conts[0]; /* a reference of this thread's own */
  for (int i = 1; i <= FAN; i++)
    conts[i] = bw_then(t, rt_add_one, NULL);
  bw_task_release(t);
  return NULL;
}

static void test_task_then_fan_out_of_a_finishing_run_task(void **state) {
  bw_pool *pool = *state;
  for (int round = 0; round < 200; round++) {
    bw_task *conts[FAN + 1];
    bw_task *t = bw_run(pool, rt_return_arg, (void *)(uintptr_t)5);
    assert_non_null(t);
    conts[0] = bw_task_retain(t);
    pthread_t th;
    pthread_create(&th, NULL, attach_fan, conts);
    bw_task_release(t); /* racing the attaches and the task's end */
    pthread_join(th, NULL);
    for (int i = 1; i <= FAN; i++) {
      assert_non_null(conts[i]);
      assert_int_equal(bw_wait(conts[i], -1), 0);
      assert_int_equal((uintptr_t)bw_task_result(conts[i]), 6);
      bw_task_release(conts[i]);
    }
  }
}

/* The same from inside the pool: a run task whose fn attaches continuations
 * to another run task (the inherited reference then belongs to a worker that
 * is not the creator's thread). */
static void *then_from_worker(void *arg) {
  bw_task *inner = bw_run(bw_current_pool(), rt_return_arg, arg);
  bw_task *c1 = bw_then(inner, rt_add_one, NULL);
  bw_task *c2 = bw_then(inner, rt_add_one, NULL);
  bw_task_release(inner);
  bw_task *c3 = bw_then(c1, rt_add_one, NULL);
  bw_task_release(c1);
  uintptr_t sum = 0;
  if (bw_wait(c2, -1) == 0 && bw_wait(c3, -1) == 0)
    sum = (uintptr_t)bw_task_result(c2) + (uintptr_t)bw_task_result(c3);
  bw_task_release(c2);
  bw_task_release(c3);
  return (void *)sum;
}

static void test_task_then_chains_built_on_a_worker(void **state) {
  bw_pool *pool = *state;
  for (int round = 0; round < 200; round++) {
    bw_task *t = bw_run(pool, then_from_worker, (void *)(uintptr_t)10);
    assert_int_equal(bw_wait(t, -1), 0);
    assert_int_equal((uintptr_t)bw_task_result(t), 11 + 12);
    bw_task_release(t);
  }
}

/* A run task whose users have all released it by the time it ends holds
 * only the queue's reference: the runtime then takes its continuation list
 * without an atomic exchange (nobody can attach any more). Every node on
 * it must still fire exactly once: continuations attached before the
 * release, and the node a timed-out waiter left behind (freed when fired;
 * ASan checks). */
static void *wait_for_latch(void *arg) {
  rt_latch_wait(arg);
  return arg;
}

static void test_task_released_run_task_fires_every_node(void **state) {
  bw_pool *pool = *state;
  for (int round = 0; round < 50; round++) {
    rt_latch gate;
    rt_latch_init(&gate);
    bw_task *t = bw_run(pool, wait_for_latch, &gate);
    assert_non_null(t);
    assert_int_equal(bw_wait(t, 1), -ETIMEDOUT); /* leaves a waiter node */
    bw_task *c1 = bw_then(t, rt_note_state, NULL);
    bw_task *c2 = bw_then(t, rt_note_state, NULL);
    bw_task *c3 = bw_then(c1, rt_note_state, NULL);
    assert_non_null(c1);
    assert_non_null(c2);
    assert_non_null(c3);
    bw_task_release(t); /* only the queue's reference is left */
    bw_task_release(c1);
    rt_latch_open(&gate);
    assert_int_equal(bw_wait(c2, -1), 0);
    assert_int_equal(bw_wait(c3, -1), 0);
    assert_int_equal((uintptr_t)bw_task_result(c2), BW_TASK_COMPLETED);
    assert_int_equal((uintptr_t)bw_task_result(c3), BW_TASK_COMPLETED);
    bw_task_release(c2);
    bw_task_release(c3);
    rt_latch_destroy(&gate);
  }
}

static void *cancel_token_thread(void *arg) {
  race *r = arg;
  atomic_store(&r->go, 1);
  bw_cancel_token_cancel(r->token);
  return NULL;
}

static void test_task_token_cancel_racing_wait(void **state) {
  bw_pool *pool = *state;
  for (int round = 0; round < 200; round++) {
    race r = {.task = bw_completion_create(pool),
              .token = bw_cancel_token_create(),
              .go = 0};
    pthread_t th;
    pthread_create(&th, NULL, cancel_token_thread, &r);
    int rc = bw_wait_cancelable(r.task, 20000, r.token);
    pthread_join(th, NULL);
    assert_int_equal(rc, -ECANCELED);
    bw_cancel_token_release(r.token);
    bw_task_release(r.task);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_task_run_completes_with_the_result),
      cmocka_unit_test(test_task_run_rejects_null_fn),
      cmocka_unit_test(test_task_then_chains_results),
      cmocka_unit_test(test_task_then_chain_stays_on_one_worker),
      cmocka_unit_test(test_task_then_on_completed_task_runs),
      cmocka_unit_test(test_task_completion_source_and_cancel),
      cmocka_unit_test(test_task_error_says_how_it_ended),
      cmocka_unit_test(test_task_retain_keeps_it_alive),
      cmocka_unit_test(test_task_waiter_may_release_while_completer_finishes),
      cmocka_unit_test(test_task_when_all_waits_for_every_task),
      cmocka_unit_test(test_task_when_all_is_canceled_if_one_is),
      cmocka_unit_test(test_task_when_any_gives_the_first),
      cmocka_unit_test(test_task_wait_times_out_then_succeeds),
      cmocka_unit_test(test_task_wait_cancelable_ends_on_token),
      cmocka_unit_test(test_task_wait_on_itself_is_edeadlk),
      cmocka_unit_test(test_task_wait_on_full_pool_is_edeadlk),
      cmocka_unit_test(test_task_complete_and_cancel_race_has_one_winner),
      cmocka_unit_test(test_task_then_racing_completion_runs_each_once),
      cmocka_unit_test(test_task_then_fan_out_of_a_finishing_run_task),
      cmocka_unit_test(test_task_then_chains_built_on_a_worker),
      cmocka_unit_test(test_task_released_run_task_fires_every_node),
      cmocka_unit_test(test_task_token_cancel_racing_wait),
  };
  return cmocka_run_group_tests(tests, make_pool, destroy_pool);
}
