/* test_pool.c - pools and work items: creation, submit, ordering, thread
 * names, stats, destroy semantics and the error codes of bad use.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "blockwatch/runtime.h"
#include "rt_helpers.h"

static bw_pool *make_pool(const char *name, unsigned workers) {
  bw_pool_config cfg = {0};
  cfg.name = name;
  cfg.min_workers = workers;
  cfg.max_workers = workers;
  cfg.flags = BW_POOL_NO_INJECTION;
  bw_pool *pool = bw_pool_create(&cfg);
  assert_non_null(pool);
  return pool;
}

static void count_item(void *arg) {
  atomic_fetch_add((atomic_long *)arg, 1);
}

static void test_pool_create_with_defaults_and_destroy(void **state) {
  (void)state;
  bw_pool *pool = bw_pool_create(NULL);
  assert_non_null(pool);
  bw_pool_stats st;
  assert_int_equal(bw_pool_stats_get(pool, &st), 0);
  assert_true(st.workers >= 1);
  assert_int_equal(bw_pool_destroy(pool), 0);
}

static void test_pool_create_rejects_bad_config(void **state) {
  (void)state;
  bw_pool_config cfg = {0};
  cfg.min_workers = 4;
  cfg.max_workers = 2;
  errno = 0;
  assert_null(bw_pool_create(&cfg));
  assert_int_equal(errno, EINVAL);
  bw_pool_config empty_name = {0};
  empty_name.name = "";
  errno = 0;
  assert_null(bw_pool_create(&empty_name));
  assert_int_equal(errno, EINVAL);
}

static void test_pool_submit_runs_each_item_once(void **state) {
  (void)state;
  bw_pool *pool = make_pool("once", 2);
  atomic_long count = 0;
  for (int i = 0; i < 10000; i++)
    assert_int_equal(bw_submit(pool, count_item, &count), 0);
  assert_int_equal(rt_wait_count(&count, 10000, 20000), 10000);
  bw_pool_stats st;
  assert_int_equal(bw_pool_stats_get(pool, &st), 0);
  assert_int_equal(bw_pool_destroy(pool), 0);
  assert_int_equal(atomic_load(&count), 10000);
}

typedef struct order_log {
  atomic_int next;
  int seen[1000];
} order_log;

typedef struct order_arg {
  order_log *log;
  int value;
} order_arg;

static void record_order(void *arg) {
  order_arg *a = arg;
  a->log->seen[atomic_fetch_add(&a->log->next, 1)] = a->value;
}

static void wait_latch_item(void *arg) {
  rt_latch_wait(arg);
}

static void
test_pool_single_worker_runs_outside_submits_in_fifo_order(void **state) {
  (void)state;
  bw_pool *pool = make_pool("fifo", 1);
  static order_log log;
  static order_arg args[1000];
  atomic_init(&log.next, 0);
  rt_latch gate;
  rt_latch_init(&gate);
  /* Hold the worker so every item below is queued before any runs. */
  assert_int_equal(bw_submit(pool, wait_latch_item, &gate), 0);
  for (int i = 0; i < 1000; i++) {
    args[i].log = &log;
    args[i].value = i;
    assert_int_equal(bw_submit(pool, record_order, &args[i]), 0);
  }
  rt_latch_open(&gate);
  assert_int_equal(bw_pool_destroy(pool), 0);
  assert_int_equal(atomic_load(&log.next), 1000);
  for (int i = 0; i < 1000; i++)
    assert_int_equal(log.seen[i], i);
  rt_latch_destroy(&gate);
}

typedef struct big_order {
  long next;  /* only the one worker writes it */
  long wrong; /* items that ran out of order */
} big_order;

static big_order g_big;

static void check_big_order(void *arg) {
  if ((long)(intptr_t)arg != g_big.next)
    g_big.wrong++;
  g_big.next++;
}

static void test_pool_fifo_holds_past_the_ring_into_the_overflow(void **state) {
  (void)state;
  /* More items than the global ring holds (2^17) while the only worker is
   * held: the rest go to the overflow list, and order must still hold. */
  enum { N = 200000 };
  bw_pool *pool = make_pool("bigfifo", 1);
  rt_latch gate;
  rt_latch_init(&gate);
  g_big.next = 0;
  g_big.wrong = 0;
  assert_int_equal(bw_submit(pool, wait_latch_item, &gate), 0);
  for (long i = 0; i < N; i++)
    assert_int_equal(bw_submit(pool, check_big_order, (void *)(intptr_t)i), 0);
  bw_pool_stats st;
  assert_int_equal(bw_pool_stats_get(pool, &st), 0);
  assert_true(st.queue_length >= N);
  rt_latch_open(&gate);
  assert_int_equal(bw_pool_destroy(pool), 0);
  assert_int_equal(g_big.next, N);
  assert_int_equal(g_big.wrong, 0);
  rt_latch_destroy(&gate);
}

static void slow_item(void *arg) {
  rt_sleep_ms(100);
  atomic_fetch_add((atomic_long *)arg, 1);
}

static void test_pool_destroy_runs_every_pending_item(void **state) {
  (void)state;
  bw_pool *pool = make_pool("drain", 1);
  atomic_long count = 0;
  assert_int_equal(bw_submit(pool, slow_item, &count), 0);
  for (int i = 0; i < 5000; i++)
    assert_int_equal(bw_submit(pool, count_item, &count), 0);
  assert_int_equal(bw_pool_destroy(pool), 0);
  assert_int_equal(atomic_load(&count), 5001);
}

typedef struct chain {
  bw_pool *pool;
  atomic_long count;
  long limit;
} chain;

/* Each link submits the next from inside the pool (to its local deque). */
static void chain_item(void *arg) {
  chain *c = arg;
  long n = atomic_fetch_add(&c->count, 1) + 1;
  if (n < c->limit)
    assert_int_equal(bw_submit(c->pool, chain_item, c), 0);
}

static void test_pool_destroy_runs_items_queued_by_items(void **state) {
  (void)state;
  chain c = {.pool = make_pool("chain", 2), .count = 0, .limit = 20000};
  assert_int_equal(bw_submit(c.pool, chain_item, &c), 0);
  assert_int_equal(bw_pool_destroy(c.pool), 0);
  assert_int_equal(atomic_load(&c.count), 20000);
}

typedef struct fanout {
  bw_pool *pool;
  atomic_long count;
  atomic_long all_seen; /* the fanning item saw every leaf finish */
} fanout;

static void leaf_item(void *arg) {
  fanout *f = arg;
  atomic_fetch_add(&f->count, 1);
}

/* Queues 200 leaves on its own deque and then holds its worker until they
 * have all run: only a steal by the other worker can run them. */
static void fan_item(void *arg) {
  fanout *f = arg;
  for (int i = 0; i < 200; i++)
    assert_int_equal(bw_submit(f->pool, leaf_item, f), 0);
  if (rt_wait_count(&f->count, 200, 20000) == 200)
    atomic_store(&f->all_seen, 1);
}

static void test_pool_local_submits_are_stolen_by_idle_workers(void **state) {
  (void)state;
  fanout f = {.pool = make_pool("steal", 2), .count = 0, .all_seen = 0};
  assert_int_equal(bw_submit(f.pool, fan_item, &f), 0);
  assert_int_equal(bw_pool_destroy(f.pool), 0);
  assert_int_equal(atomic_load(&f.count), 200);
  assert_int_equal(atomic_load(&f.all_seen), 1);
}

static void test_pool_submit_null_fn_is_einval(void **state) {
  (void)state;
  bw_pool *pool = make_pool("null", 1);
  assert_int_equal(bw_submit(pool, NULL, NULL), -EINVAL);
  assert_int_equal(bw_pool_destroy(pool), 0);
}

typedef struct destroy_arg {
  bw_pool *pool;
  int rc;
} destroy_arg;

static void *destroy_thread(void *arg) {
  destroy_arg *d = arg;
  d->rc = bw_pool_destroy(d->pool);
  return NULL;
}

static void test_pool_submit_while_destroying_is_eshutdown(void **state) {
  (void)state;
  bw_pool *pool = make_pool("shut", 1);
  rt_latch gate;
  rt_latch_init(&gate);
  atomic_long count = 0;
  assert_int_equal(bw_submit(pool, wait_latch_item, &gate), 0);
  destroy_arg d = {.pool = pool, .rc = 1};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, destroy_thread, &d), 0);
  /* Until destroy has begun, submits succeed (and must run). */
  long accepted = 0;
  int rc;
  uint64_t end = rt_now_ms() + 20000;
  while ((rc = bw_submit(pool, count_item, &count)) == 0 && rt_now_ms() < end)
    accepted++;
  assert_int_equal(rc, -ESHUTDOWN);
  assert_int_equal(bw_submit(pool, NULL, NULL), -EINVAL);
  rt_latch_open(&gate);
  pthread_join(th, NULL);
  assert_int_equal(d.rc, 0);
  assert_int_equal(atomic_load(&count), accepted);
  rt_latch_destroy(&gate);
}

static void test_pool_destroyed_pool_is_refused(void **state) {
  (void)state;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  /* Reading a freed pool is what the sanitizers rightly report. */
  skip();
#else
  /* Undefined by contract (the memory is freed), but the pool's magic word
   * makes the common mistake an error code instead of a crash. */
  bw_pool *pool = make_pool("gone", 1);
  assert_int_equal(bw_pool_destroy(pool), 0);
  atomic_long count = 0;
  assert_int_equal(bw_submit(pool, count_item, &count), -ESHUTDOWN);
  assert_int_equal(bw_pool_destroy(pool), -EINVAL);
  errno = 0;
  assert_null(bw_completion_create(pool));
  assert_int_equal(errno, ESHUTDOWN);
#endif
}

typedef struct self_destroy {
  bw_pool *pool;
  atomic_int rc;
  atomic_long done;
} self_destroy;

static void destroy_from_worker(void *arg) {
  self_destroy *s = arg;
  atomic_store(&s->rc, bw_pool_destroy(s->pool));
  atomic_fetch_add(&s->done, 1);
}

static void test_pool_destroy_bad_calls_return_errors(void **state) {
  (void)state;
  assert_int_equal(bw_pool_destroy(NULL), -EINVAL);
  bw_pool *def = bw_pool_default();
  assert_non_null(def);
  assert_ptr_equal(def, bw_pool_default());
  assert_int_equal(bw_pool_destroy(def), -EINVAL);
  self_destroy s = {.pool = make_pool("self", 1), .rc = 0, .done = 0};
  assert_int_equal(bw_submit(s.pool, destroy_from_worker, &s), 0);
  assert_int_equal(rt_wait_count(&s.done, 1, 20000), 1);
  assert_int_equal(atomic_load(&s.rc), -EDEADLK);
  assert_int_equal(bw_pool_destroy(s.pool), 0);
}

typedef struct where {
  bw_pool *pool;
  char name[16];
  atomic_long done;
} where;

static void record_where(void *arg) {
  where *w = arg;
  w->pool = bw_current_pool();
  pthread_getname_np(pthread_self(), w->name, sizeof(w->name));
  atomic_fetch_add(&w->done, 1);
}

static void
test_pool_workers_name_themselves_and_know_their_pool(void **state) {
  (void)state;
  assert_null(bw_current_pool());
  bw_pool *pool = make_pool("named", 1);
  where w = {.pool = NULL, .name = "", .done = 0};
  assert_int_equal(bw_submit(pool, record_where, &w), 0);
  assert_int_equal(rt_wait_count(&w.done, 1, 20000), 1);
  assert_ptr_equal(w.pool, pool);
  assert_string_equal(w.name, "named-0");
  assert_int_equal(bw_pool_destroy(pool), 0);

  /* A long pool name is cut, never the worker number. */
  pool = make_pool("averyveryverylongname", 1);
  where w2 = {.pool = NULL, .name = "", .done = 0};
  assert_int_equal(bw_submit(pool, record_where, &w2), 0);
  assert_int_equal(rt_wait_count(&w2.done, 1, 20000), 1);
  assert_string_equal(w2.name, "averyveryvery-0");
  assert_int_equal(bw_pool_destroy(pool), 0);
}

static void test_pool_default_pool_takes_null(void **state) {
  (void)state;
  /* The CTest entry test_runtime_pool_env sets BW_DEFAULT_POOL_WORKERS and
   * tells us what the default pool must then have. */
  const char *expect = getenv("BW_TEST_EXPECT_DEFAULT_WORKERS");
  atomic_long count = 0;
  for (int i = 0; i < 100; i++)
    assert_int_equal(bw_submit(NULL, count_item, &count), 0);
  assert_int_equal(rt_wait_count(&count, 100, 20000), 100);
  bw_pool_stats st;
  assert_int_equal(bw_pool_stats_get(NULL, &st), 0);
  assert_true(st.workers >= 1);
  if (expect != NULL && strcmp(expect, "cpus") == 0)
    assert_int_equal(st.workers, (unsigned)sysconf(_SC_NPROCESSORS_ONLN));
  else if (expect != NULL)
    assert_int_equal(st.workers, (unsigned)atoi(expect));
}

typedef struct blocked_probe {
  bw_pool *pool;
  int rc_block, rc_nested, rc_unblock, rc_unblock2, rc_extra;
  unsigned blocked_during, blocked_after;
  atomic_long done;
} blocked_probe;

static void blocked_item(void *arg) {
  blocked_probe *p = arg;
  bw_pool_stats st;
  p->rc_block = bw_pool_notify_blocked();
  p->rc_nested = bw_pool_notify_blocked();
  bw_pool_stats_get(p->pool, &st);
  p->blocked_during = st.blocked;
  p->rc_unblock = bw_pool_notify_unblocked();
  p->rc_unblock2 = bw_pool_notify_unblocked();
  p->rc_extra = bw_pool_notify_unblocked();
  bw_pool_stats_get(p->pool, &st);
  p->blocked_after = st.blocked;
  atomic_fetch_add(&p->done, 1);
}

static void test_pool_notify_blocked_counts_and_nests(void **state) {
  (void)state;
  assert_int_equal(bw_pool_notify_blocked(), -EPERM);
  assert_int_equal(bw_pool_notify_unblocked(), -EPERM);
  blocked_probe p = {.pool = make_pool("blk", 1)};
  atomic_init(&p.done, 0);
  assert_int_equal(bw_submit(p.pool, blocked_item, &p), 0);
  assert_int_equal(rt_wait_count(&p.done, 1, 20000), 1);
  assert_int_equal(p.rc_block, 0);
  assert_int_equal(p.rc_nested, 0);
  assert_int_equal(p.blocked_during, 1);
  assert_int_equal(p.rc_unblock, 0);
  assert_int_equal(p.rc_unblock2, 0);
  assert_int_equal(p.rc_extra, -EINVAL);
  assert_int_equal(p.blocked_after, 0);
  assert_int_equal(bw_pool_destroy(p.pool), 0);
}

static void test_pool_stats_count_items_and_queue_waits(void **state) {
  (void)state;
  bw_pool *pool = make_pool("stats", 2);
  bw_pool_stats st;
  assert_int_equal(bw_pool_stats_get(pool, NULL), -EINVAL);
  atomic_long count = 0;
  for (int i = 0; i < 1000; i++)
    assert_int_equal(bw_submit(pool, count_item, &count), 0);
  assert_int_equal(rt_wait_count(&count, 1000, 20000), 1000);
  /* items_completed is bumped just after the function returns. */
  uint64_t end = rt_now_ms() + 20000;
  do {
    assert_int_equal(bw_pool_stats_get(pool, &st), 0);
  } while (st.items_completed < 1000 && rt_now_ms() < end);
  assert_int_equal(st.items_completed, 1000);
  assert_int_equal(st.workers, 2);
  assert_int_equal(st.queue_length, 0);
  assert_int_equal(st.threads_injected, 0);
  assert_true(st.queue_wait_min_ns <= st.queue_wait_median_ns);
  assert_true(st.queue_wait_median_ns <= st.queue_wait_p99_ns);
  assert_true(st.queue_wait_p99_ns <= st.queue_wait_max_ns);
  assert_true(st.queue_wait_max_ns > 0);
  assert_int_equal(bw_pool_destroy(pool), 0);
}

static void test_pool_queue_length_shows_waiting_items(void **state) {
  (void)state;
  bw_pool *pool = make_pool("qlen", 1);
  rt_latch gate;
  rt_latch_init(&gate);
  atomic_long count = 0;
  assert_int_equal(bw_submit(pool, wait_latch_item, &gate), 0);
  for (int i = 0; i < 50; i++)
    assert_int_equal(bw_submit(pool, count_item, &count), 0);
  bw_pool_stats st;
  /* The latch item may not have been dequeued yet: 50 or 51. */
  assert_int_equal(bw_pool_stats_get(pool, &st), 0);
  assert_true(st.queue_length >= 50 && st.queue_length <= 51);
  rt_latch_open(&gate);
  assert_int_equal(bw_pool_destroy(pool), 0);
  assert_int_equal(atomic_load(&count), 50);
  rt_latch_destroy(&gate);
}

static void test_pool_strerror_names_errors(void **state) {
  (void)state;
  assert_string_equal(bw_strerror(-ESHUTDOWN), "pool is being destroyed");
  assert_string_equal(bw_strerror(EDEADLK),
                      "wait would deadlock (waiting on itself)");
  assert_string_equal(bw_strerror(-9999), "unknown error");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pool_create_with_defaults_and_destroy),
      cmocka_unit_test(test_pool_create_rejects_bad_config),
      cmocka_unit_test(test_pool_submit_runs_each_item_once),
      cmocka_unit_test(
          test_pool_single_worker_runs_outside_submits_in_fifo_order),
      cmocka_unit_test(test_pool_fifo_holds_past_the_ring_into_the_overflow),
      cmocka_unit_test(test_pool_destroy_runs_every_pending_item),
      cmocka_unit_test(test_pool_destroy_runs_items_queued_by_items),
      cmocka_unit_test(test_pool_local_submits_are_stolen_by_idle_workers),
      cmocka_unit_test(test_pool_submit_null_fn_is_einval),
      cmocka_unit_test(test_pool_submit_while_destroying_is_eshutdown),
      cmocka_unit_test(test_pool_destroy_bad_calls_return_errors),
      cmocka_unit_test(test_pool_destroyed_pool_is_refused),
      cmocka_unit_test(test_pool_workers_name_themselves_and_know_their_pool),
      cmocka_unit_test(test_pool_default_pool_takes_null),
      cmocka_unit_test(test_pool_notify_blocked_counts_and_nests),
      cmocka_unit_test(test_pool_stats_count_items_and_queue_waits),
      cmocka_unit_test(test_pool_queue_length_shows_waiting_items),
      cmocka_unit_test(test_pool_strerror_names_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
