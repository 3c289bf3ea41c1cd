/* peer_glib.c - GLib's GThreadPool as a bench contender.
 *
 * A GThreadPool has one function for all its items, so every item's data is
 * a job whose first member says what to run (one indirect call, the same
 * price blockwatch's items pay). The pool is exclusive (its threads start at
 * creation and stay) with max_threads = workers. GLib has no wait-for-all:
 * the last item opens a latch. It has no timer on a pool either, so the
 * delay scenario is n/a.
 */
#include "bench.h"

#include <glib.h>

#include <errno.h>
#include <stdatomic.h>

typedef struct g_job g_job;
struct g_job {
  void (*run)(g_job *job);
};

typedef struct g_round {
  g_job job; /* first: the items' data is the round itself */
  atomic_size_t count;
  size_t target;
  bench_latch *latch;
  GThreadPool *pool;
  unsigned sleep_ms;
  size_t links_left;
} g_round;

typedef struct g_probe {
  g_job job;
  g_round *round;
  _Atomic uint64_t start_ns;
} g_probe;

static void dispatch(gpointer data, gpointer user_data) {
  (void)user_data;
  g_job *job = data;
  job->run(job);
}

static void *g_open(unsigned workers, unsigned flags) {
  if (flags & BENCH_COMPENSATE) {
    errno = ENOTSUP;
    return NULL;
  }
  GError *error = NULL;
  GThreadPool *pool =
      g_thread_pool_new(dispatch, NULL, (gint)workers, TRUE, &error);
  if (pool == NULL) {
    g_error_free(error);
    errno = EAGAIN;
  }
  return pool;
}

static void g_close(void *pool) {
  g_thread_pool_free(pool, FALSE, TRUE);
}

/* `target` is read before the increment: after the last item counted, the
 * submitter may return and the round (on its stack) be gone. */
static void count_one(g_round *round) {
  size_t target = round->target;
  size_t now =
      atomic_fetch_add_explicit(&round->count, 1, memory_order_acq_rel);
  if (now + 1 == target)
    bench_latch_open(round->latch);
}

static void tiny_run(g_job *job) {
  count_one((g_round *)job);
}

static int round_init(g_round *round, GThreadPool *pool, void (*run)(g_job *)) {
  round->job.run = run;
  round->pool = pool;
  round->latch = bench_latch_create();
  return round->latch ? 0 : -ENOMEM;
}

static int g_tiny(void *pool, size_t items, size_t rounds, uint64_t *ns) {
  g_round round = {0};
  if (round_init(&round, pool, tiny_run) != 0)
    return -ENOMEM;
  round.target = items;
  int rc = 0;
  uint64_t start = bench_now_ns();
  for (size_t r = 0; r < rounds && rc == 0; r++) {
    atomic_store_explicit(&round.count, 0, memory_order_relaxed);
    bench_latch_reset(round.latch);
    for (size_t i = 0; i < items; i++) {
      if (!g_thread_pool_push(pool, &round, NULL)) {
        rc = -EAGAIN;
        break;
      }
    }
    if (rc == 0)
      bench_latch_wait(round.latch);
  }
  *ns = bench_now_ns() - start;
  bench_latch_destroy(round.latch);
  return rc;
}

static void sleep_run(g_job *job) {
  g_round *round = (g_round *)job;
  bench_sleep_ms(round->sleep_ms);
  count_one(round);
}

static void probe_run(g_job *job) {
  g_probe *probe = (g_probe *)job;
  atomic_store(&probe->start_ns, bench_now_ns());
  count_one(probe->round);
}

static int g_sleepers(void *pool, size_t n, unsigned ms,
                      bench_sleep_result *out) {
  g_round round = {0};
  if (round_init(&round, pool, sleep_run) != 0)
    return -ENOMEM;
  round.target = n + 1;
  round.sleep_ms = ms;
  g_probe probe = {.job = {probe_run}, .round = &round};
  int rc = 0;
  uint64_t start = bench_now_ns();
  for (size_t i = 0; i < n && rc == 0; i++)
    if (!g_thread_pool_push(pool, &round, NULL))
      rc = -EAGAIN;
  uint64_t probe_submit = bench_now_ns();
  if (rc == 0 && !g_thread_pool_push(pool, &probe, NULL))
    rc = -EAGAIN;
  if (rc == 0)
    bench_latch_wait(round.latch);
  out->makespan_ns = bench_now_ns() - start;
  out->probe_wait_ns = atomic_load(&probe.start_ns) - probe_submit;
  bench_latch_destroy(round.latch);
  return rc;
}

static void link_run(g_job *job) {
  g_round *round = (g_round *)job;
  /* Links run one after another, each ordered after the push before it. */
  if (--round->links_left == 0 || !g_thread_pool_push(round->pool, round, NULL))
    bench_latch_open(round->latch);
}

static int g_chain(void *pool, size_t links, uint64_t *ns) {
  g_round round = {0};
  if (round_init(&round, pool, link_run) != 0)
    return -ENOMEM;
  round.links_left = links;
  int rc = 0;
  uint64_t start = bench_now_ns();
  if (g_thread_pool_push(pool, &round, NULL))
    bench_latch_wait(round.latch);
  else
    rc = -EAGAIN;
  *ns = bench_now_ns() - start;
  bench_latch_destroy(round.latch);
  if (rc == 0 && round.links_left != 0)
    rc = -EPROTO;
  return rc;
}

const bench_peer bench_peer_glib = {
    .name = "GLib",
    .open = g_open,
    .close = g_close,
    .tiny = g_tiny,
    .sleepers = g_sleepers,
    .chain = g_chain,
};
