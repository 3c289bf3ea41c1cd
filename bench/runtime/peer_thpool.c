/* peer_thpool.c - C-Thread-Pool (Debian cthreadpool-dev, thpool_*) as a
 * bench contender.
 *
 * The package ships thpool.c as source, not a library; CMake compiles it
 * from /usr/share/cthreadpool into this benchmark only. Idioms:
 * thpool_add_work from the outside thread and thpool_wait for "all done"
 * (its own wait), a chain link that adds the next link, no timers (n/a).
 */
#include "bench.h"

#include <thpool.h>

#include <errno.h>
#include <stdatomic.h>

typedef struct th_round {
  atomic_size_t count;
  unsigned sleep_ms;
  size_t links_left;
  threadpool pool;
  _Atomic uint64_t probe_start_ns;
  int error;
} th_round;

static void *th_open(unsigned workers, unsigned flags) {
  if (flags & BENCH_COMPENSATE) {
    errno = ENOTSUP;
    return NULL;
  }
  threadpool pool = thpool_init((int)workers);
  if (pool == NULL)
    errno = EAGAIN;
  return pool;
}

static void th_close(void *pool) {
  thpool_destroy(pool);
}

static void tiny_item(void *arg) {
  th_round *round = arg;
  atomic_fetch_add_explicit(&round->count, 1, memory_order_relaxed);
}

static int th_tiny(void *pool, size_t items, size_t rounds, uint64_t *ns) {
  th_round round = {0};
  int rc = 0;
  uint64_t start = bench_now_ns();
  for (size_t r = 0; r < rounds && rc == 0; r++) {
    for (size_t i = 0; i < items && rc == 0; i++)
      if (thpool_add_work(pool, tiny_item, &round) != 0)
        rc = -ENOMEM;
    thpool_wait(pool);
  }
  *ns = bench_now_ns() - start;
  if (rc == 0 && atomic_load(&round.count) != items * rounds)
    rc = -EPROTO;
  return rc;
}

static void sleep_item(void *arg) {
  th_round *round = arg;
  bench_sleep_ms(round->sleep_ms);
}

static void probe_item(void *arg) {
  th_round *round = arg;
  atomic_store(&round->probe_start_ns, bench_now_ns());
}

static int th_sleepers(void *pool, size_t n, unsigned ms,
                       bench_sleep_result *out) {
  th_round round = {0};
  round.sleep_ms = ms;
  int rc = 0;
  uint64_t start = bench_now_ns();
  for (size_t i = 0; i < n && rc == 0; i++)
    if (thpool_add_work(pool, sleep_item, &round) != 0)
      rc = -ENOMEM;
  uint64_t probe_submit = bench_now_ns();
  if (rc == 0 && thpool_add_work(pool, probe_item, &round) != 0)
    rc = -ENOMEM;
  thpool_wait(pool);
  out->makespan_ns = bench_now_ns() - start;
  out->probe_wait_ns = atomic_load(&round.probe_start_ns) - probe_submit;
  return rc;
}

static void link_item(void *arg) {
  th_round *round = arg;
  /* The next link is queued before this one ends, so thpool_wait cannot
   * see an idle, empty pool in between. */
  if (--round->links_left != 0 &&
      thpool_add_work(round->pool, link_item, round) != 0)
    round->error = -ENOMEM;
}

static int th_chain(void *pool, size_t links, uint64_t *ns) {
  th_round round = {0};
  round.pool = pool;
  round.links_left = links;
  uint64_t start = bench_now_ns();
  int rc = thpool_add_work(pool, link_item, &round) != 0 ? -ENOMEM : 0;
  thpool_wait(pool);
  *ns = bench_now_ns() - start;
  if (rc == 0)
    rc = round.error;
  if (rc == 0 && round.links_left != 0)
    rc = -EPROTO;
  return rc;
}

const bench_peer bench_peer_thpool = {
    .name = "C-Thread-Pool",
    .open = th_open,
    .close = th_close,
    .tiny = th_tiny,
    .sleepers = th_sleepers,
    .chain = th_chain,
};
