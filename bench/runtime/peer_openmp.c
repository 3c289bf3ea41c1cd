/* peer_openmp.c - OpenMP tasks (gcc -fopenmp, libgomp) as a bench contender.
 *
 * Each measured round is what outside code does to run tasks: enter a
 * parallel region of `workers` threads, let one thread create the tasks,
 * and leave through the region's barrier, which waits for every task
 * (descendants included). The creating thread is one of the workers and
 * runs tasks too once it reaches the barrier. libgomp keeps its threads
 * between regions, so the pool is warm like the others. No timers (n/a).
 */
#include "bench.h"

#include <omp.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

typedef struct omp_peer {
  int workers;
} omp_peer;

static void *omp_open(unsigned workers, unsigned flags) {
  if (flags & BENCH_COMPENSATE) {
    errno = ENOTSUP;
    return NULL;
  }
  omp_peer *peer = malloc(sizeof *peer);
  if (peer == NULL)
    return NULL;
  peer->workers = (int)workers;
  return peer;
}

static void omp_close(void *pool) {
  free(pool);
}

static int omp_tiny(void *pool, size_t items, size_t rounds, uint64_t *ns) {
  omp_peer *peer = pool;
  atomic_size_t count = 0;
  uint64_t start = bench_now_ns();
  for (size_t r = 0; r < rounds; r++) {
#pragma omp parallel num_threads(peer->workers)
#pragma omp single
    for (size_t i = 0; i < items; i++) {
#pragma omp task shared(count)
      atomic_fetch_add_explicit(&count, 1, memory_order_relaxed);
    }
  }
  *ns = bench_now_ns() - start;
  return atomic_load(&count) == items * rounds ? 0 : -EPROTO;
}

static int omp_sleepers(void *pool, size_t n, unsigned ms,
                        bench_sleep_result *out) {
  omp_peer *peer = pool;
  uint64_t probe_submit = 0;
  _Atomic uint64_t probe_start = 0;
  uint64_t start = bench_now_ns();
#pragma omp parallel num_threads(peer->workers)
#pragma omp single
  {
    for (size_t i = 0; i < n; i++) {
#pragma omp task
      bench_sleep_ms(ms);
    }
    probe_submit = bench_now_ns();
#pragma omp task shared(probe_start)
    atomic_store(&probe_start, bench_now_ns());
  }
  out->makespan_ns = bench_now_ns() - start;
  out->probe_wait_ns = atomic_load(&probe_start) - probe_submit;
  return 0;
}

/* One link: count, then create the next link as a new task. */
static void chain_link(atomic_size_t *count, size_t left) {
  atomic_fetch_add_explicit(count, 1, memory_order_relaxed);
  if (left > 1) {
#pragma omp task
    chain_link(count, left - 1);
  }
}

static int omp_chain(void *pool, size_t links, uint64_t *ns) {
  omp_peer *peer = pool;
  atomic_size_t count = 0;
  uint64_t start = bench_now_ns();
#pragma omp parallel num_threads(peer->workers)
#pragma omp single
  {
#pragma omp task shared(count)
    chain_link(&count, links);
  }
  *ns = bench_now_ns() - start;
  return atomic_load(&count) == links ? 0 : -EPROTO;
}

const bench_peer bench_peer_openmp = {
    .name = "OpenMP",
    .open = omp_open,
    .close = omp_close,
    .tiny = omp_tiny,
    .sleepers = omp_sleepers,
    .chain = omp_chain,
    /* libgomp's idle threads spin (GOMP_SPINCOUNT, 300k rounds by default)
     * before sleeping; measured here to take a CPU for 30-100 ms. */
    .cooldown_ms = 150,
};
