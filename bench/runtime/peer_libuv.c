/* peer_libuv.c - libuv's threadpool (uv_queue_work) as a bench contender.
 *
 * libuv reads its pool size once per process from UV_THREADPOOL_SIZE, so
 * this peer is remote: the driver runs it in a child process per worker
 * count with that variable set, and open() refuses a size the environment
 * does not give. Idioms: the submitting thread is the loop thread and
 * uv_run() returns when every request's after_work callback has run; a
 * chain link's after_work callback queues the next link (only the loop
 * thread may call uv_queue_work); timers are uv_timer_t on the loop.
 */
#include "bench.h"

#include <uv.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

typedef struct lu_peer {
  uv_loop_t loop;
} lu_peer;

typedef struct lu_round {
  atomic_size_t count;
  unsigned sleep_ms;
  _Atomic uint64_t probe_start_ns;
  size_t links_left;
  uv_loop_t *loop;
  int error;
} lu_round;

static void *lu_open(unsigned workers, unsigned flags) {
  if (flags & BENCH_COMPENSATE) {
    errno = ENOTSUP;
    return NULL;
  }
  const char *size = getenv("UV_THREADPOOL_SIZE");
  if (size == NULL || strtoul(size, NULL, 10) != workers) {
    errno = EINVAL; /* the driver must start us with the right size */
    return NULL;
  }
  lu_peer *peer = calloc(1, sizeof *peer);
  if (peer == NULL)
    return NULL;
  int rc = uv_loop_init(&peer->loop);
  if (rc != 0) {
    free(peer);
    errno = -rc;
    return NULL;
  }
  return peer;
}

static void lu_close(void *pool) {
  lu_peer *peer = pool;
  uv_loop_close(&peer->loop);
  free(peer);
}

static void count_work(uv_work_t *req) {
  lu_round *round = req->data;
  atomic_fetch_add_explicit(&round->count, 1, memory_order_relaxed);
}

static void after_nothing(uv_work_t *req, int status) {
  (void)req;
  (void)status;
}

static int lu_tiny(void *pool, size_t items, size_t rounds, uint64_t *ns) {
  lu_peer *peer = pool;
  lu_round round = {0};
  uv_work_t *reqs = calloc(items, sizeof *reqs);
  if (reqs == NULL)
    return -ENOMEM;
  for (size_t i = 0; i < items; i++)
    reqs[i].data = &round;
  int rc = 0;
  uint64_t start = bench_now_ns();
  for (size_t r = 0; r < rounds && rc == 0; r++) {
    for (size_t i = 0; i < items && rc == 0; i++)
      rc = uv_queue_work(&peer->loop, &reqs[i], count_work, after_nothing);
    uv_run(&peer->loop, UV_RUN_DEFAULT);
  }
  *ns = bench_now_ns() - start;
  free(reqs);
  if (rc == 0 && atomic_load(&round.count) != items * rounds)
    rc = -EPROTO;
  return rc;
}

static void timer_fired(uv_timer_t *timer) {
  lu_round *round = timer->data;
  atomic_fetch_add_explicit(&round->count, 1, memory_order_relaxed);
}

static int lu_delays(void *pool, size_t n, unsigned ms, uint64_t *ns) {
  lu_peer *peer = pool;
  lu_round round = {0};
  uv_timer_t *timers = calloc(n, sizeof *timers);
  if (timers == NULL)
    return -ENOMEM;
  int rc = 0;
  uint64_t start = bench_now_ns();
  /* Timers count from the loop's cached clock, stale since the last
   * uv_run: refresh it, as a libuv program starting timers late would. */
  uv_update_time(&peer->loop);
  for (size_t i = 0; i < n && rc == 0; i++) {
    rc = uv_timer_init(&peer->loop, &timers[i]);
    timers[i].data = &round;
    if (rc == 0)
      rc = uv_timer_start(&timers[i], timer_fired, ms, 0);
  }
  uv_run(&peer->loop, UV_RUN_DEFAULT);
  *ns = bench_now_ns() - start;
  for (size_t i = 0; i < n; i++)
    uv_close((uv_handle_t *)&timers[i], NULL);
  uv_run(&peer->loop, UV_RUN_DEFAULT); /* runs the close callbacks */
  free(timers);
  if (rc == 0 && atomic_load(&round.count) != n)
    rc = -EPROTO;
  return rc;
}

static void sleep_work(uv_work_t *req) {
  lu_round *round = req->data;
  bench_sleep_ms(round->sleep_ms);
}

static void probe_work(uv_work_t *req) {
  lu_round *round = req->data;
  atomic_store(&round->probe_start_ns, bench_now_ns());
}

static int lu_sleepers(void *pool, size_t n, unsigned ms,
                       bench_sleep_result *out) {
  lu_peer *peer = pool;
  lu_round round = {0};
  round.sleep_ms = ms;
  uv_work_t *reqs = calloc(n + 1, sizeof *reqs);
  if (reqs == NULL)
    return -ENOMEM;
  int rc = 0;
  uint64_t start = bench_now_ns();
  for (size_t i = 0; i < n && rc == 0; i++) {
    reqs[i].data = &round;
    rc = uv_queue_work(&peer->loop, &reqs[i], sleep_work, after_nothing);
  }
  uint64_t probe_submit = bench_now_ns();
  reqs[n].data = &round;
  if (rc == 0)
    rc = uv_queue_work(&peer->loop, &reqs[n], probe_work, after_nothing);
  uv_run(&peer->loop, UV_RUN_DEFAULT);
  out->makespan_ns = bench_now_ns() - start;
  out->probe_wait_ns = atomic_load(&round.probe_start_ns) - probe_submit;
  free(reqs);
  return rc;
}

static void link_done(uv_work_t *req, int status) {
  lu_round *round = req->data;
  if (status != 0 || --round->links_left == 0)
    return;
  /* The request is finished once its after_work runs: reuse it. */
  int rc = uv_queue_work(round->loop, req, count_work, link_done);
  if (rc != 0)
    round->error = rc;
}

static int lu_chain(void *pool, size_t links, uint64_t *ns) {
  lu_peer *peer = pool;
  lu_round round = {0};
  uv_work_t req;
  req.data = &round;
  round.loop = &peer->loop;
  round.links_left = links;
  uint64_t start = bench_now_ns();
  int rc = uv_queue_work(&peer->loop, &req, count_work, link_done);
  uv_run(&peer->loop, UV_RUN_DEFAULT);
  *ns = bench_now_ns() - start;
  if (rc == 0)
    rc = round.error;
  if (rc == 0 && atomic_load(&round.count) != links)
    rc = -EPROTO;
  return rc;
}

const bench_peer bench_peer_libuv = {
    .name = "libuv",
    .remote = 1,
    .open = lu_open,
    .close = lu_close,
    .tiny = lu_tiny,
    .delays = lu_delays,
    .sleepers = lu_sleepers,
    .chain = lu_chain,
};
