/* test_run_next_stats.c - which items the pool's queue-wait statistics
 * sample: one queued item in 32 per pushing thread, and never a
 * continuation that runs next on the worker that finished its antecedent
 * (it waits in no queue). Reads the worker's histogram through the
 * runtime's private header (static library).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "internal.h"
#include "rt_helpers.h"

#define LINKS 1024

/* One worker, no helping waiter: every item runs on slots[0]. */
static bw_pool *one_worker_pool(void) {
  const bw_pool_config cfg = {.name = "rnstats",
                              .min_workers = 1,
                              .max_workers = 1,
                              .flags =
                                  BW_POOL_NO_INJECTION | BW_POOL_NO_HELPING};
  bw_pool *pool = bw_pool_create(&cfg);
  assert_non_null(pool);
  return pool;
}

static uint64_t samples_of(bw_pool *pool) {
  return atomic_load(&pool->slots[0]->hist.samples);
}

static void *count_link(bw_task *done, void *arg) {
  (void)done;
  atomic_fetch_add((atomic_long *)arg, 1);
  return NULL;
}

typedef struct chain_ctx {
  bw_pool *pool;
  atomic_long links_run;
} chain_ctx;

/* On the worker: builds LINKS links on a pending source and completes it,
 * so the first link is queued on this worker's deque and every later one
 * becomes its run_next. Returns the last link (one reference), or NULL when
 * a call failed (no cmocka assertion off the test's thread). */
static void *build_chain(void *arg) {
  chain_ctx *ctx = arg;
  bw_task *source = bw_completion_create(ctx->pool);
  if (source == NULL)
    return NULL;
  bw_task *last = bw_task_retain(source);
  for (int i = 0; i < LINKS && last != NULL; i++) {
    bw_task *next = bw_then_consume(last, count_link, &ctx->links_run);
    if (next == NULL)
      bw_task_release(last); /* a failed call keeps the reference */
    last = next;
  }
  bw_task_complete(source, NULL);
  bw_task_release(source);
  return last;
}

static void test_run_next_links_are_not_sampled(void **state) {
  (void)state;
  bw_pool *pool = one_worker_pool();
  chain_ctx ctx = {.pool = pool};
  atomic_init(&ctx.links_run, 0);
  uint64_t before = samples_of(pool);
  bw_task *builder = bw_run(pool, build_chain, &ctx);
  assert_non_null(builder);
  assert_int_equal(bw_wait(builder, 20000), 0);
  bw_task *last = bw_task_result(builder);
  assert_non_null(last);
  assert_int_equal(bw_wait(last, 20000), 0);
  assert_int_equal(atomic_load(&ctx.links_run), LINKS);
  /* At most the builder (pushed by this thread) and the first link (pushed
   * to the worker's deque); the 1023 run_next links would add 31-32. */
  assert_true(samples_of(pool) - before <= 2);
  bw_task_release(last);
  bw_task_release(builder);
  assert_int_equal(bw_pool_destroy(pool), 0);
}

static void count_item(void *arg) {
  atomic_fetch_add((atomic_long *)arg, 1);
}

static void test_queued_items_are_sampled_one_in_32(void **state) {
  (void)state;
  bw_pool *pool = one_worker_pool();
  atomic_long count = 0;
  uint64_t before = samples_of(pool);
  for (int i = 0; i < 32 * 10; i++)
    assert_int_equal(bw_submit(pool, count_item, &count), 0);
  assert_int_equal(rt_wait_count(&count, 32 * 10, 20000), 32 * 10);
  /* The histogram is written before each item runs. */
  assert_int_equal(samples_of(pool) - before, 10);
  assert_int_equal(bw_pool_destroy(pool), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_run_next_links_are_not_sampled),
      cmocka_unit_test(test_queued_items_are_sampled_one_in_32),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
