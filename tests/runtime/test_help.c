/* test_help.c - a bw_wait without a timeout, off the pool, runs the pool's
 * queued items on the waiting thread (helping) while fewer workers are awake
 * than there are CPUs and none is announced blocked; timed waits and
 * BW_POOL_NO_HELPING pools never do.
 *
 * Invariants: each test pins the pool's only worker in a "blocker" item, so
 * which thread runs the other items is deterministic; the blocker is always
 * released before the pool is destroyed.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include <blockwatch/observer.h>
#include <blockwatch/runtime.h>

#include "rt_helpers.h"

/* The pool's one worker waits in blocker_item until the latch opens. */
typedef struct pinned {
  bw_pool *pool;
  rt_latch release;
  atomic_long entered;
} pinned;

static int announce_block;

static void blocker_item(void *arg) {
  pinned *p = arg;
  if (announce_block)
    bw_pool_notify_blocked();
  atomic_fetch_add(&p->entered, 1);
  rt_latch_wait(&p->release);
  if (announce_block)
    bw_pool_notify_unblocked();
}

/* Helping needs fewer awake workers than CPUs: the pinned worker is one. */
static int setup_cpus(void **state) {
  (void)state;
  announce_block = 0;
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
    skip();
  return 0;
}

static void pin_start(pinned *p, unsigned flags) {
  bw_pool_config cfg = {0};
  cfg.name = "help";
  cfg.min_workers = 1;
  cfg.max_workers = 1;
  cfg.flags = BW_POOL_NO_INJECTION | flags;
  p->pool = bw_pool_create(&cfg);
  assert_non_null(p->pool);
  rt_latch_init(&p->release);
  atomic_init(&p->entered, 0);
  assert_int_equal(bw_submit(p->pool, blocker_item, p), 0);
  assert_int_equal(rt_wait_count(&p->entered, 1, 10000), 1);
}

static void pin_end(pinned *p) {
  rt_latch_open(&p->release);
  assert_int_equal(bw_pool_destroy(p->pool), 0);
  rt_latch_destroy(&p->release);
}

/* A round of items; each records how often it ran and on which thread. */
#define ROUND 64
typedef struct round {
  atomic_int runs[ROUND];
  atomic_long on_waiter, total;
  pthread_t waiter;
  bw_task *done; /* completed by the last item */
} round;

typedef struct slot {
  round *r;
  int i;
} slot;

static void round_item(void *arg) {
  slot *s = arg;
  round *r = s->r;
  atomic_fetch_add(&r->runs[s->i], 1);
  if (pthread_equal(pthread_self(), r->waiter))
    atomic_fetch_add(&r->on_waiter, 1);
  if (atomic_fetch_add(&r->total, 1) + 1 == ROUND)
    bw_task_complete(r->done, NULL);
}

static void round_submit(round *r, slot *slots, bw_pool *pool) {
  for (int i = 0; i < ROUND; i++) {
    atomic_init(&r->runs[i], 0);
    slots[i].r = r;
    slots[i].i = i;
  }
  atomic_init(&r->on_waiter, 0);
  atomic_init(&r->total, 0);
  r->waiter = pthread_self();
  r->done = bw_completion_create(pool);
  assert_non_null(r->done);
  for (int i = 0; i < ROUND; i++)
    assert_int_equal(bw_submit(pool, round_item, &slots[i]), 0);
}

static void test_untimed_wait_runs_queued_items(void **state) {
  (void)state;
  pinned p;
  pin_start(&p, 0);
  round r;
  slot slots[ROUND];
  round_submit(&r, slots, p.pool);
  /* The only worker is pinned: only this thread can run the round. */
  assert_int_equal(bw_wait(r.done, -1), 0);
  assert_int_equal(atomic_load(&r.on_waiter), ROUND);
  for (int i = 0; i < ROUND; i++)
    assert_int_equal(atomic_load(&r.runs[i]), 1);
  /* Helped items count as completed (the blocker has not completed). */
  bw_pool_stats st;
  assert_int_equal(bw_pool_stats_get(p.pool, &st), 0);
  assert_int_equal(st.items_completed, ROUND);
  bw_task_release(r.done);
  pin_end(&p);
}

static void test_timed_wait_does_not_help(void **state) {
  (void)state;
  pinned p;
  pin_start(&p, 0);
  round r;
  slot slots[ROUND];
  round_submit(&r, slots, p.pool);
  assert_int_equal(bw_wait(r.done, 50), -ETIMEDOUT);
  assert_int_equal(atomic_load(&r.total), 0);
  rt_latch_open(&p.release); /* the worker runs the round now */
  assert_int_equal(bw_wait(r.done, 30000), 0);
  assert_int_equal(atomic_load(&r.on_waiter), 0);
  bw_task_release(r.done);
  pin_end(&p);
}

typedef struct opener {
  pinned *p;
  unsigned after_ms;
} opener;

static void *open_later(void *arg) {
  opener *o = arg;
  rt_sleep_ms(o->after_ms);
  rt_latch_open(&o->p->release);
  return NULL;
}

/* An untimed wait on a round the pinned worker will run once released
 * (50 ms later, from another thread): the waiter must not run any of it. */
static void expect_waiter_leaves_round_to_workers(unsigned pool_flags) {
  pinned p;
  pin_start(&p, pool_flags);
  round r;
  slot slots[ROUND];
  round_submit(&r, slots, p.pool);
  opener o = {&p, 50};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, open_later, &o), 0);
  assert_int_equal(bw_wait(r.done, -1), 0);
  pthread_join(t, NULL);
  assert_int_equal(atomic_load(&r.on_waiter), 0);
  assert_int_equal(atomic_load(&r.total), ROUND);
  bw_task_release(r.done);
  pin_end(&p);
}

static void test_no_helping_pool_leaves_items_to_workers(void **state) {
  (void)state;
  expect_waiter_leaves_round_to_workers(BW_POOL_NO_HELPING);
}

/* A pool whose worker is announced blocked runs blocking items: the
 * waiter leaves them to the workers. */
static void test_no_helping_while_a_worker_is_blocked(void **state) {
  (void)state;
  announce_block = 1;
  expect_waiter_leaves_round_to_workers(0);
  announce_block = 0;
}

/* A queued bw_run task the waiter is waiting for runs inline on the waiter;
 * inside, the task is still "itself" (-EDEADLK on a self wait). */
typedef struct inline_ctx {
  pthread_t waiter;
  bw_task *self;
  atomic_int ready;
  int on_waiter, self_rc;
} inline_ctx;

static void *inline_fn(void *arg) {
  inline_ctx *c = arg;
  while (!atomic_load(&c->ready))
    ;
  c->on_waiter = pthread_equal(pthread_self(), c->waiter);
  c->self_rc = bw_wait(c->self, -1);
  return arg;
}

static void test_waited_task_runs_inline(void **state) {
  (void)state;
  pinned p;
  pin_start(&p, 0);
  inline_ctx c = {.waiter = pthread_self(), .on_waiter = 0, .self_rc = 1};
  atomic_init(&c.ready, 0);
  c.self = bw_run(p.pool, inline_fn, &c);
  assert_non_null(c.self);
  atomic_store(&c.ready, 1);
  assert_int_equal(bw_wait(c.self, -1), 0);
  assert_ptr_equal(bw_task_result(c.self), &c);
  assert_int_equal(c.on_waiter, 1);
  assert_int_equal(c.self_rc, -EDEADLK);
  bw_task_release(c.self);
  pin_end(&p);
}

/* A chain run by a helper stays on it up to the awaited link; the links
 * after it go to the workers when the waiter returns. */
#define LINKS 40
#define AWAITED 25
typedef struct chain {
  atomic_int ran[LINKS];
  atomic_int next; /* the link expected to run next: checks the order */
  atomic_int out_of_order;
  pthread_t waiter;
  atomic_int on_waiter;
} chain;

typedef struct link_arg {
  chain *c;
  int i;
} link_arg;

static void *link_fn(bw_task *done, void *arg) {
  (void)done;
  link_arg *a = arg;
  atomic_fetch_add(&a->c->ran[a->i], 1);
  if (atomic_fetch_add(&a->c->next, 1) != a->i)
    atomic_store(&a->c->out_of_order, 1);
  if (pthread_equal(pthread_self(), a->c->waiter))
    atomic_fetch_add(&a->c->on_waiter, 1);
  return NULL;
}

static void test_helper_runs_chain_up_to_awaited_link(void **state) {
  (void)state;
  pinned p;
  pin_start(&p, 0);
  chain c;
  link_arg args[LINKS];
  bw_task *links[LINKS];
  for (int i = 0; i < LINKS; i++)
    atomic_init(&c.ran[i], 0);
  atomic_init(&c.next, 0);
  atomic_init(&c.out_of_order, 0);
  atomic_init(&c.on_waiter, 0);
  c.waiter = pthread_self();
  bw_task *src = bw_completion_create(p.pool);
  bw_task *prev = src;
  for (int i = 0; i < LINKS; i++) {
    args[i].c = &c;
    args[i].i = i;
    links[i] = bw_then(prev, link_fn, &args[i]);
    assert_non_null(links[i]);
    prev = links[i];
  }
  assert_int_equal(bw_task_complete(src, NULL), 0);
  assert_int_equal(bw_wait(links[AWAITED], -1), 0);
  /* The worker is pinned: everything so far ran here, nothing beyond. */
  assert_int_equal(atomic_load(&c.on_waiter), AWAITED + 1);
  assert_int_equal(atomic_load(&c.next), AWAITED + 1);
  rt_latch_open(&p.release);
  assert_int_equal(bw_wait(links[LINKS - 1], 30000), 0);
  for (int i = 0; i < LINKS; i++)
    assert_int_equal(atomic_load(&c.ran[i]), 1);
  assert_int_equal(atomic_load(&c.out_of_order), 0);
  assert_int_equal(atomic_load(&c.on_waiter), AWAITED + 1);
  for (int i = 0; i < LINKS; i++)
    bw_task_release(links[i]);
  bw_task_release(src);
  pin_end(&p);
}

/* Several outside threads wait (and help) on rounds of one pool while its
 * workers run them too: every item runs exactly once. */
#define HELPERS 3
#define HELP_ROUNDS 300

typedef struct helper_arg {
  bw_pool *pool;
  long bad;
} helper_arg;

static void *helper_main(void *arg) {
  helper_arg *h = arg;
  round *r = malloc(sizeof(*r));
  slot *slots = malloc(sizeof(slot) * ROUND);
  for (int k = 0; k < HELP_ROUNDS; k++) {
    round_submit(r, slots, h->pool);
    if (bw_wait(r->done, -1) != 0)
      h->bad++;
    /* The last item may still be inside bw_task_complete: wait for the
     * count before the slots are reused. */
    while (atomic_load(&r->total) != ROUND)
      ;
    for (int i = 0; i < ROUND; i++) {
      if (atomic_load(&r->runs[i]) != 1)
        h->bad++;
    }
    bw_task_release(r->done);
  }
  free(slots);
  free(r);
  return NULL;
}

static void test_helpers_and_workers_run_each_item_once(void **state) {
  (void)state;
  bw_pool_config cfg = {0};
  cfg.name = "helpers";
  cfg.min_workers = 2;
  bw_pool *pool = bw_pool_create(&cfg);
  assert_non_null(pool);
  helper_arg args[HELPERS];
  pthread_t t[HELPERS];
  for (int i = 0; i < HELPERS; i++) {
    args[i].pool = pool;
    args[i].bad = 0;
    assert_int_equal(pthread_create(&t[i], NULL, helper_main, &args[i]), 0);
  }
  for (int i = 0; i < HELPERS; i++) {
    pthread_join(t[i], NULL);
    assert_int_equal(args[i].bad, 0);
  }
  bw_pool_stats st;
  assert_int_equal(bw_pool_stats_get(pool, &st), 0);
  assert_int_equal(st.items_completed, (uint64_t)HELPERS * HELP_ROUNDS * ROUND);
  assert_int_equal(bw_pool_destroy(pool), 0);
}

/* Destroy while a thread waits untimed on a task of the pool: the waiter
 * stops helping and destroy still runs every queued item. */
typedef struct late_waiter {
  bw_task *task;
  int rc;
} late_waiter;

static void *late_wait_main(void *arg) {
  late_waiter *w = arg;
  w->rc = bw_wait(w->task, -1);
  return NULL;
}

static void test_destroy_with_a_helping_waiter(void **state) {
  (void)state;
  pinned p;
  pin_start(&p, 0);
  round r;
  slot slots[ROUND];
  round_submit(&r, slots, p.pool);
  bw_task *never = bw_completion_create(p.pool);
  late_waiter w = {never, 1};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, late_wait_main, &w), 0);
  /* The wait must have begun while the pool is alive (a wait reads the
   * task's pool when it starts); 100 ms is plenty. */
  rt_sleep_ms(100);
  pin_end(&p); /* destroy runs the round (the waiter may help) */
  assert_int_equal(atomic_load(&r.total), ROUND);
  for (int i = 0; i < ROUND; i++)
    assert_int_equal(atomic_load(&r.runs[i]), 1);
  assert_int_equal(bw_task_complete(never, NULL), 0);
  pthread_join(t, NULL);
  assert_int_equal(w.rc, 0);
  bw_task_release(never);
  bw_task_release(r.done);
}

/* Helped items report item_started / item_finished like any other. */
typedef struct obs_counts {
  atomic_long started, finished, on_waiter;
  pthread_t waiter;
} obs_counts;

static void obs_started(void *user, uint64_t pool_id, uint64_t item_id,
                        uint64_t enqueue_ns, uint64_t start_ns) {
  (void)pool_id;
  (void)item_id;
  (void)enqueue_ns;
  (void)start_ns;
  obs_counts *c = user;
  atomic_fetch_add(&c->started, 1);
  if (pthread_equal(pthread_self(), c->waiter))
    atomic_fetch_add(&c->on_waiter, 1);
}

static void obs_finished(void *user, uint64_t pool_id, uint64_t item_id,
                         uint64_t end_ns) {
  (void)pool_id;
  (void)item_id;
  (void)end_ns;
  obs_counts *c = user;
  atomic_fetch_add(&c->finished, 1);
}

static void test_helped_items_are_observed(void **state) {
  (void)state;
  obs_counts c;
  atomic_init(&c.started, 0);
  atomic_init(&c.finished, 0);
  atomic_init(&c.on_waiter, 0);
  c.waiter = pthread_self();
  pinned p;
  pin_start(&p, 0); /* the blocker started before the observer: unseen */
  bw_observer o = {0};
  o.version = BW_OBSERVER_VERSION;
  o.size = sizeof(o);
  o.user = &c;
  o.item_started = obs_started;
  o.item_finished = obs_finished;
  assert_int_equal(bw_observer_register(&o), 0);
  round r;
  slot slots[ROUND];
  round_submit(&r, slots, p.pool);
  assert_int_equal(bw_wait(r.done, -1), 0);
  assert_int_equal(atomic_load(&r.on_waiter), ROUND);
  /* The last item's finished event follows its completing the round. */
  assert_int_equal(rt_wait_count(&c.finished, ROUND, 10000), ROUND);
  assert_int_equal(atomic_load(&c.started), ROUND);
  assert_int_equal(atomic_load(&c.on_waiter), ROUND);
  assert_int_equal(bw_observer_unregister(), 0);
  bw_task_release(r.done);
  pin_end(&p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(test_untimed_wait_runs_queued_items, setup_cpus),
      cmocka_unit_test_setup(test_timed_wait_does_not_help, setup_cpus),
      cmocka_unit_test_setup(test_no_helping_pool_leaves_items_to_workers,
                             setup_cpus),
      cmocka_unit_test_setup(test_no_helping_while_a_worker_is_blocked,
                             setup_cpus),
      cmocka_unit_test_setup(test_waited_task_runs_inline, setup_cpus),
      cmocka_unit_test_setup(test_helper_runs_chain_up_to_awaited_link,
                             setup_cpus),
      cmocka_unit_test_setup(test_helpers_and_workers_run_each_item_once,
                             setup_cpus),
      cmocka_unit_test_setup(test_destroy_with_a_helping_waiter, setup_cpus),
      cmocka_unit_test_setup(test_helped_items_are_observed, setup_cpus),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
