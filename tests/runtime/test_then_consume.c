/* test_then_consume.c - bw_then_consume: a continuation that takes over the
 * caller's reference to its antecedent.
 *
 * The reference counts are checked by the sanitizer build: a reference
 * handed over twice is a use after free there, one never dropped a leak.
 * The races check the shortcut that lets a finishing worker take its
 * continuation list without a locked instruction (sole_holder in task.c):
 * it may only do so while no user can attach any more, whatever mix of
 * handed-over and plain references the task has.
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

/* A lost continuation shows as a wait that times out, not as a hang. */
#define WAIT_MS 20000

static int make_pool(void **state) {
  bw_pool_config cfg = {0};
  cfg.name = "consume";
  cfg.min_workers = 2;
  cfg.max_workers = 8;
  *state = bw_pool_create(&cfg);
  return *state == NULL ? -1 : 0;
}

static int destroy_pool(void **state) {
  return bw_pool_destroy(*state);
}

static void *wait_for_latch(void *arg) {
  rt_latch_wait(arg);
  return (void *)(uintptr_t)5;
}

enum { LINKS = 1000 };

/* Extends the chain ending in t by LINKS links that each add one, every
 * link taking over the reference to the one before; returns the last. */
static bw_task *add_links(bw_task *t) {
  for (int i = 0; i < LINKS; i++) {
    t = bw_then_consume(t, rt_add_one, NULL);
    assert_non_null(t);
  }
  return t;
}

static void test_consume_chain_of_run_task(void **state) {
  bw_pool *pool = *state;
  bw_task *t = bw_run(pool, rt_return_arg, (void *)(uintptr_t)1);
  assert_non_null(t);
  t = add_links(t);
  assert_int_equal(bw_wait(t, WAIT_MS), 0);
  assert_int_equal((uintptr_t)bw_task_result(t), 1 + LINKS);
  bw_task_release(t);
}

/* Built on a pending source, run after it completes: the way bench (d)
 * builds its chains. The first link holds the source through the reference
 * handed over with it. */
static void test_consume_chain_on_a_source(void **state) {
  bw_pool *pool = *state;
  bw_task *src = bw_completion_create(pool);
  assert_non_null(src);
  bw_task *t = bw_task_retain(src);
  t = add_links(t);
  assert_int_equal(bw_task_complete(src, (void *)(uintptr_t)10), 0);
  bw_task_release(src);
  assert_int_equal(bw_wait(t, WAIT_MS), 0);
  assert_int_equal((uintptr_t)bw_task_result(t), 10 + LINKS);
  bw_task_release(t);
}

static void test_consume_on_resolved_tasks(void **state) {
  bw_pool *pool = *state;
  bw_task *t = bw_run(pool, rt_return_arg, (void *)(uintptr_t)7);
  assert_int_equal(bw_wait(t, WAIT_MS), 0);
  bw_task *c = bw_then_consume(t, rt_add_one, NULL);
  assert_non_null(c);
  assert_int_equal(bw_wait(c, WAIT_MS), 0);
  assert_int_equal((uintptr_t)bw_task_result(c), 8);
  bw_task_release(c);

  bw_task *src = bw_completion_create(pool);
  assert_int_equal(bw_task_cancel(src), 0);
  c = bw_then_consume(src, rt_note_state, NULL);
  assert_non_null(c);
  assert_int_equal(bw_wait(c, WAIT_MS), 0);
  assert_int_equal((uintptr_t)bw_task_result(c), BW_TASK_CANCELED);
  bw_task_release(c);
}

/* On failure nothing is handed over: the caller still owns the task. */
static void test_consume_failure_keeps_the_reference(void **state) {
  bw_pool *pool = *state;
  bw_task *t = bw_run(pool, rt_return_arg, (void *)(uintptr_t)3);
  errno = 0;
  assert_null(bw_then_consume(t, NULL, NULL));
  assert_int_equal(errno, EINVAL);
  assert_int_equal(bw_wait(t, WAIT_MS), 0);
  assert_int_equal((uintptr_t)bw_task_result(t), 3);
  bw_task_release(t);
  errno = 0;
  assert_null(bw_then_consume(NULL, rt_add_one, NULL));
  assert_int_equal(errno, EINVAL);
}

/* More handed-over references than the list head can count (7): the count
 * saturates, the worker takes the slow path, and every node fires once. */
enum { MANY = 12 };

static void test_consume_more_than_the_tag_counts(void **state) {
  bw_pool *pool = *state;
  for (int round = 0; round < 50; round++) {
    rt_latch gate;
    rt_latch_init(&gate);
    bw_task *t = bw_run(pool, wait_for_latch, &gate);
    assert_non_null(t);
    bw_task *conts[MANY];
    for (int i = 0; i < MANY; i++) {
      conts[i] = bw_then_consume(bw_task_retain(t), rt_add_one, NULL);
      assert_non_null(conts[i]);
    }
    bw_task_release(t);
    rt_latch_open(&gate);
    for (int i = 0; i < MANY; i++) {
      assert_int_equal(bw_wait(conts[i], WAIT_MS), 0);
      assert_int_equal((uintptr_t)bw_task_result(conts[i]), 6);
      bw_task_release(conts[i]);
    }
    rt_latch_destroy(&gate);
  }
}

/* A thread that holds a reference of its own attaches plain continuations
 * while the task finishes, hands one more reference to a second thread
 * that attaches a consuming continuation with it, and then lets go. The
 * task's list then mixes handed-over and plain nodes, and for a while a
 * user holds a reference the handed-over count does not explain: every
 * node must fire exactly once however the worker's two reads fall. */
enum { PLAIN = 8 };

typedef struct mix_round {
  bw_task *task;   /* a reference owned by the attacher */
  bw_task *handed; /* a reference the attacher gives the consumer */
  bw_task *conts[PLAIN + 1];
  atomic_int go;
} mix_round;

static void *consume_one(void *arg) {
  mix_round *r = arg;
  r->conts[PLAIN] = bw_then_consume(r->handed, rt_note_state, NULL);
  return NULL;
}

static void *attach_then_release(void *arg) {
  mix_round *r = arg;
  while (!atomic_load(&r->go)) {
  }
  r->handed = bw_task_retain(r->task);
  pthread_t th;
  pthread_create(&th, NULL, consume_one, r);
  for (int i = 0; i < PLAIN; i++)
    r->conts[i] = bw_then(r->task, rt_note_state, NULL);
  pthread_join(th, NULL);
  bw_task_release(r->task);
  return NULL;
}

static void test_consume_racing_plain_attaches(void **state) {
  bw_pool *pool = *state;
  for (int round = 0; round < 500; round++) {
    rt_latch gate;
    rt_latch_init(&gate);
    mix_round r = {.go = 0};
    bw_task *t = bw_run(pool, wait_for_latch, &gate);
    assert_non_null(t);
    /* Our own reference goes into a consuming node at once. */
    r.task = bw_task_retain(t);
    bw_task *first = bw_then_consume(t, rt_note_state, NULL);
    assert_non_null(first);
    pthread_t th;
    pthread_create(&th, NULL, attach_then_release, &r);
    rt_latch_open(&gate); /* the task ends while the others attach */
    atomic_store(&r.go, 1);
    pthread_join(th, NULL);
    assert_int_equal(bw_wait(first, WAIT_MS), 0);
    bw_task_release(first);
    for (int i = 0; i <= PLAIN; i++) {
      assert_non_null(r.conts[i]);
      assert_int_equal(bw_wait(r.conts[i], WAIT_MS), 0);
      assert_int_equal((uintptr_t)bw_task_result(r.conts[i]),
                       BW_TASK_COMPLETED);
      bw_task_release(r.conts[i]);
    }
    rt_latch_destroy(&gate);
  }
}

/* Chains built with both calls on a worker, each link ending while the
 * next is attached: the handed-over reference meets the queue reference a
 * continuation inherits when it runs next on the same worker. */
static void *chain_on_worker(void *arg) {
  bw_task *t = bw_run(bw_current_pool(), rt_return_arg, arg);
  for (int i = 0; i < 50; i++) {
    if (i % 2 == 0) {
      t = bw_then_consume(t, rt_add_one, NULL);
    } else {
      bw_task *next = bw_then(t, rt_add_one, NULL);
      bw_task_release(t);
      t = next;
    }
  }
  uintptr_t v = bw_wait(t, WAIT_MS) == 0 ? (uintptr_t)bw_task_result(t) : 0;
  bw_task_release(t);
  return (void *)v;
}

static void test_consume_chains_built_on_a_worker(void **state) {
  bw_pool *pool = *state;
  for (int round = 0; round < 200; round++) {
    bw_task *t = bw_run(pool, chain_on_worker, (void *)(uintptr_t)round);
    assert_int_equal(bw_wait(t, WAIT_MS), 0);
    assert_int_equal((uintptr_t)bw_task_result(t), (uintptr_t)round + 50);
    bw_task_release(t);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_consume_chain_of_run_task),
      cmocka_unit_test(test_consume_chain_on_a_source),
      cmocka_unit_test(test_consume_on_resolved_tasks),
      cmocka_unit_test(test_consume_failure_keeps_the_reference),
      cmocka_unit_test(test_consume_more_than_the_tag_counts),
      cmocka_unit_test(test_consume_racing_plain_attaches),
      cmocka_unit_test(test_consume_chains_built_on_a_worker),
  };
  return cmocka_run_group_tests(tests, make_pool, destroy_pool);
}
