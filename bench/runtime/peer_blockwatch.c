/* peer_blockwatch.c - the bundled runtime as a bench contender.
 *
 * Idioms used (what a user of <blockwatch/runtime.h> would write):
 *  - tiny items: bw_submit from the outside thread; the item that finishes
 *    the round completes a completion source the submitter bw_wait()s on.
 *  - delays: bw_delay + bw_then, no worker held while the timers run.
 *  - sleepers: each item brackets its sleep with bw_pool_notify_blocked /
 *    _unblocked; only a BW_POOL_COMPENSATE pool acts on it.
 *  - chains: bw_then_consume links (this peer: each link takes over the
 *    reference to the one before), bw_then links each followed by
 *    bw_task_release of the one before ("bw-then"), or an item that
 *    bw_submit()s the next one from the worker, i.e. to its local deque
 *    ("bw-submit").
 * Ownership: whoever touches a task holds a reference; the item that
 * completes a round's completion source owns one and drops it afterwards.
 */
#include "bench.h"

#include <blockwatch/runtime.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

typedef struct round_ctx {
  atomic_size_t count;
  size_t target;
  bw_task *done; /* completion source; this context owns one reference */
  bench_latch *latch;
  uint64_t probe_submit_ns;
  _Atomic uint64_t probe_start_ns;
  size_t links_left;
  bw_pool *pool;
} round_ctx;

/* Counts one item; the last of the round completes the source. `target`
 * is read before the increment: once the last item has counted, the
 * submitter may return and its stack frame (the context) be gone. */
static void count_one(round_ctx *ctx) {
  size_t target = ctx->target;
  size_t now = atomic_fetch_add_explicit(&ctx->count, 1, memory_order_acq_rel);
  if (now + 1 == target) {
    bw_task *done = ctx->done;
    bw_task_complete(done, NULL);
    bw_task_release(done);
  }
}

static void *bw_open(unsigned workers, unsigned flags) {
  bw_pool_config cfg = {0};
  cfg.name = "bench";
  cfg.min_workers = workers;
  cfg.max_workers = (flags & BENCH_ELASTIC) ? 256 : workers;
  /* A fixed-size pool unless asked otherwise, like the peers it meets. */
  cfg.flags = (flags & BENCH_ELASTIC) ? 0 : BW_POOL_NO_INJECTION;
  if (flags & BENCH_COMPENSATE)
    cfg.flags |= BW_POOL_COMPENSATE;
  return bw_pool_create(&cfg);
}

static void bw_close(void *pool) {
  bw_pool_destroy(pool);
}

/* Starts a round: a fresh completion source, one reference for the item
 * that will complete it and one for the waiter (returned). */
static bw_task *round_start(round_ctx *ctx, bw_pool *pool, size_t target) {
  bw_task *done = bw_completion_create(pool);
  if (done == NULL)
    return NULL;
  atomic_store_explicit(&ctx->count, 0, memory_order_relaxed);
  ctx->target = target;
  ctx->done = bw_task_retain(done);
  return done;
}

static int round_finish(bw_task *done) {
  int rc = bw_wait(done, -1);
  bw_task_release(done);
  return rc;
}

static void tiny_item(void *arg) {
  count_one(arg);
}

static int bw_tiny(void *pool, size_t items, size_t rounds, uint64_t *ns) {
  round_ctx ctx = {0};
  uint64_t start = bench_now_ns();
  for (size_t r = 0; r < rounds; r++) {
    bw_task *done = round_start(&ctx, pool, items);
    if (done == NULL)
      return -errno;
    for (size_t i = 0; i < items; i++) {
      int rc = bw_submit(pool, tiny_item, &ctx);
      if (rc != 0)
        return rc; /* the pool is in an unknown state; the run is lost */
    }
    int rc = round_finish(done);
    if (rc != 0)
      return rc;
  }
  *ns = bench_now_ns() - start;
  return 0;
}

static void *delay_done(bw_task *task, void *arg) {
  (void)task;
  count_one(arg);
  return NULL;
}

static int bw_delays(void *pool, size_t n, unsigned ms, uint64_t *ns) {
  round_ctx ctx = {0};
  uint64_t start = bench_now_ns();
  bw_task *done = round_start(&ctx, pool, n);
  if (done == NULL)
    return -errno;
  for (size_t i = 0; i < n; i++) {
    bw_task *delay = bw_delay(pool, ms);
    if (delay == NULL)
      return -errno;
    bw_task *cont = bw_then(delay, delay_done, &ctx);
    bw_task_release(delay);
    if (cont == NULL)
      return -errno;
    bw_task_release(cont);
  }
  int rc = round_finish(done);
  *ns = bench_now_ns() - start;
  return rc;
}

static unsigned sleep_ms_arg;

static void sleeper_item(void *arg) {
  /* Both calls are harmless without BW_POOL_COMPENSATE (counted only). */
  bw_pool_notify_blocked();
  bench_sleep_ms(sleep_ms_arg);
  bw_pool_notify_unblocked();
  count_one(arg);
}

static void probe_item(void *arg) {
  round_ctx *ctx = arg;
  atomic_store(&ctx->probe_start_ns, bench_now_ns());
  count_one(ctx);
}

static int bw_sleepers(void *pool, size_t n, unsigned ms,
                       bench_sleep_result *out) {
  round_ctx ctx = {0};
  sleep_ms_arg = ms;
  uint64_t start = bench_now_ns();
  bw_task *done = round_start(&ctx, pool, n + 1);
  if (done == NULL)
    return -errno;
  for (size_t i = 0; i < n; i++) {
    int rc = bw_submit(pool, sleeper_item, &ctx);
    if (rc != 0)
      return rc;
  }
  ctx.probe_submit_ns = bench_now_ns();
  int rc = bw_submit(pool, probe_item, &ctx);
  if (rc != 0)
    return rc;
  rc = round_finish(done);
  out->makespan_ns = bench_now_ns() - start;
  out->probe_wait_ns = atomic_load(&ctx.probe_start_ns) - ctx.probe_submit_ns;
  return rc;
}

static void *chain_link(bw_task *task, void *arg) {
  (void)task;
  round_ctx *ctx = arg;
  atomic_fetch_add_explicit(&ctx->count, 1, memory_order_relaxed);
  return NULL;
}

/* Builds the whole chain on a pending source, then completes and releases
 * the source: the clock covers building and running, as for the peers.
 * `consume`: link with bw_then_consume, else with bw_then and a release. */
static int chain_of_tasks(void *pool, size_t links, int consume, uint64_t *ns) {
  round_ctx ctx = {0};
  uint64_t start = bench_now_ns();
  bw_task *source = bw_completion_create(pool);
  if (source == NULL)
    return -errno;
  bw_task *last = bw_task_retain(source);
  for (size_t i = 0; i < links; i++) {
    bw_task *next;
    if (consume) {
      next = bw_then_consume(last, chain_link, &ctx);
      if (next == NULL)
        bw_task_release(last); /* a failed call keeps the reference */
    } else {
      next = bw_then(last, chain_link, &ctx);
      bw_task_release(last);
    }
    if (next == NULL) {
      bw_task_complete(source, NULL);
      bw_task_release(source);
      return -errno;
    }
    last = next;
  }
  bw_task_complete(source, NULL);
  bw_task_release(source);
  int rc = bw_wait(last, -1);
  bw_task_release(last);
  *ns = bench_now_ns() - start;
  if (rc == 0 && atomic_load(&ctx.count) != links)
    rc = -EPROTO;
  return rc;
}

static int bw_chain(void *pool, size_t links, uint64_t *ns) {
  return chain_of_tasks(pool, links, 1, ns);
}

static int bw_then_chain(void *pool, size_t links, uint64_t *ns) {
  return chain_of_tasks(pool, links, 0, ns);
}

static void submit_link(void *arg) {
  round_ctx *ctx = arg;
  if (ctx->links_left-- == 1) {
    bench_latch_open(ctx->latch);
    return;
  }
  if (bw_submit(ctx->pool, submit_link, ctx) != 0)
    bench_latch_open(ctx->latch); /* ends the run; links_left shows it */
}

static int bw_submit_chain(void *pool, size_t links, uint64_t *ns) {
  round_ctx ctx = {0};
  ctx.latch = bench_latch_create();
  if (ctx.latch == NULL)
    return -ENOMEM;
  ctx.pool = pool;
  ctx.links_left = links;
  uint64_t start = bench_now_ns();
  int rc = bw_submit(pool, submit_link, &ctx);
  if (rc == 0)
    bench_latch_wait(ctx.latch);
  *ns = bench_now_ns() - start;
  bench_latch_destroy(ctx.latch);
  if (rc == 0 && ctx.links_left != 0)
    rc = -EPROTO;
  return rc;
}

const bench_peer bench_peer_blockwatch = {
    .name = "blockwatch",
    .open = bw_open,
    .close = bw_close,
    .tiny = bw_tiny,
    .delays = bw_delays,
    .sleepers = bw_sleepers,
    .chain = bw_chain,
};

/* The same pool with bw_then and a release per link: what the hand-over
 * of bw_then_consume saves. */
const bench_peer bench_peer_blockwatch_then = {
    .name = "bw-then",
    .open = bw_open,
    .close = bw_close,
    .chain = bw_then_chain,
};

/* The same pool with the other chain idiom (a callback submitting the next
 * item), so the continuation's cost can be told apart from the queue's. */
const bench_peer bench_peer_blockwatch_submit = {
    .name = "bw-submit",
    .open = bw_open,
    .close = bw_close,
    .chain = bw_submit_chain,
};
