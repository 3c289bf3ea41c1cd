/* pool.c - a pool's life: creation, the default pool, destroy and stats.
 *
 * Invariants:
 *  - Destroy: closes the global queue (see gqueue.c), so every outside push
 *    either landed before (and is seen) or fails with ESHUTDOWN; pushes from
 *    the pool's own workers (busy, hence the pool is not quiescent) and
 *    internal continuation pushes still land. Workers are stopped only once
 *    every live worker is parked and no queue holds work, so every queued
 *    item (and whatever it queues) runs. A caller must not touch the pool
 *    once bw_pool_destroy has returned (a submit racing the very end of a
 *    destroy may still be reading the pool: that is the caller's race).
 *  - A pool's memory is freed only after its gate and every worker thread
 *    have been joined. The default pool is created once and never
 *    destroyed.
 *  - Pool ids are never reused (unlike addresses): observers and the item id
 *    blocks key on them.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

static _Atomic uint64_t next_pool_id = 1;

static unsigned cpu_count(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (unsigned)n : 1u;
}

/* Joins every thread and frees the pool; workers must have been told to
 * stop (or never started). */
static void pool_free(bw_pool *pool) {
  unsigned n = atomic_load_explicit(&pool->nslots, memory_order_relaxed);
  /* Join them all before freeing any deque: a live worker may be stealing
   * from any slot. */
  for (unsigned i = 0; i < n; i++) {
    if (pool->slots[i]->state != BWRT__SLOT_FREE)
      pthread_join(pool->slots[i]->thread, NULL);
  }
  for (unsigned i = 0; i < n; i++) {
    bwrt__worker *w = pool->slots[i];
    bwrt__deque_free(&w->deque);
    free(w);
  }
  free(pool->slots);
  free(pool->timers.items);
  bwrt__poller_free(pool);
  bwrt__blocking_free(pool);
  bwrt__gq_free(&pool->queue);
  pthread_mutex_destroy(&pool->park_mu);
  pthread_cond_destroy(&pool->park_cv);
  pthread_cond_destroy(&pool->quiesce_cv);
  pthread_mutex_destroy(&pool->gate_mu);
  pthread_cond_destroy(&pool->gate_cv);
  /* volatile: a plain store right before free() is a dead store the
   * compiler may drop, and this one must land. */
  *(volatile uint32_t *)&pool->magic = BWRT__POOL_DEAD;
  free(pool);
}

/* Tells workers to exit and waits for them; used by create's error path. */
static void stop_workers(bw_pool *pool) {
  pthread_mutex_lock(&pool->park_mu);
  pool->stop = 1;
  pthread_cond_broadcast(&pool->park_cv);
  pthread_mutex_unlock(&pool->park_mu);
}

static bw_pool *pool_create(const bw_pool_config *cfg, int is_default) {
  bw_pool_config c = {0};
  if (cfg != NULL)
    c = *cfg;
  if (c.name == NULL)
    c.name = "bw";
  if (c.name[0] == '\0') {
    errno = EINVAL;
    return NULL;
  }
  if (c.min_workers == 0)
    c.min_workers = cpu_count();
  if (c.max_workers == 0)
    c.max_workers = c.min_workers > 256 ? c.min_workers : 256;
  if (c.max_workers < c.min_workers) {
    errno = EINVAL;
    return NULL;
  }
  if (c.starvation_ms == 0)
    c.starvation_ms = 500;
  if (c.idle_timeout_ms == 0)
    c.idle_timeout_ms = 10000;

  /* The struct has cache-line aligned members: calloc is not enough. */
  size_t size = (sizeof(bw_pool) + BWRT__CACHE_LINE - 1) / BWRT__CACHE_LINE *
                BWRT__CACHE_LINE;
  bw_pool *pool = aligned_alloc(BWRT__CACHE_LINE, size);
  if (pool == NULL) {
    errno = ENOMEM;
    return NULL;
  }
  memset(pool, 0, sizeof(*pool));
  pool->slots = calloc(c.max_workers, sizeof(*pool->slots));
  if (pool->slots == NULL || bwrt__gq_init(&pool->queue) != 0) {
    free(pool->slots);
    free(pool);
    errno = ENOMEM;
    return NULL;
  }
  pool->id = atomic_fetch_add(&next_pool_id, 1);
  snprintf(pool->name, sizeof(pool->name), "%s", c.name);
  pool->min_workers = c.min_workers;
  pool->max_workers = c.max_workers;
  pool->starvation_ms = c.starvation_ms;
  pool->idle_timeout_ms = c.idle_timeout_ms;
  pool->flags = c.flags;
  pool->cpus = cpu_count();
  pool->is_default = is_default;
  pool->magic = BWRT__POOL_LIVE;
  atomic_init(&pool->searching, 0);
  atomic_init(&pool->sleepers, 0);
  atomic_init(&pool->nslots, 0);
  atomic_init(&pool->live, 0);
  atomic_init(&pool->blocked, 0);
  atomic_init(&pool->injected, 0);
  atomic_init(&pool->compensated, 0);
  atomic_init(&pool->retired, 0);
  atomic_init(&pool->helpers, 0);
  atomic_init(&pool->help_closed, 0);
  atomic_init(&pool->helped, 0);
  atomic_init(&pool->next_item_id, 1);
  pthread_mutex_init(&pool->park_mu, NULL);
  pthread_mutex_init(&pool->gate_mu, NULL);
  bwrt__cond_init_monotonic(&pool->park_cv);
  bwrt__cond_init_monotonic(&pool->quiesce_cv);
  bwrt__cond_init_monotonic(&pool->gate_cv);

  /* The tool (if any) attaches before the pool is announced, so it sees
   * pool_created for this very pool. */
  bwrt__observer_attach_tool();
  bwrt__registry_add(pool);

  int rc = 0;
  pthread_mutex_lock(&pool->park_mu);
  for (unsigned i = 0; i < c.min_workers && rc == 0; i++)
    rc = bwrt__pool_spawn_locked(pool, -1);
  pthread_mutex_unlock(&pool->park_mu);
  if (rc == 0)
    rc = bwrt__gate_start(pool);
  if (rc != 0) {
    bwrt__registry_remove(pool);
    stop_workers(pool);
    uint64_t id = pool->id;
    pool_free(pool);
    /* An observer that saw pool_created sees the matching end. */
    const bw_observer *o = bwrt__obs();
    if (o != NULL && o->pool_destroyed != NULL)
      o->pool_destroyed(o->user, id);
    errno = -rc;
    return NULL;
  }
  return pool;
}

bw_pool *bw_pool_create(const bw_pool_config *cfg) {
  return pool_create(cfg, 0);
}

static bw_pool *default_pool;
static pthread_once_t default_once = PTHREAD_ONCE_INIT;

/* Strict parse: the whole string must be a number in 1..65535. */
static unsigned env_workers(void) {
  const char *s = getenv("BW_DEFAULT_POOL_WORKERS");
  if (s == NULL || *s == '\0')
    return 0;
  char *end = NULL;
  errno = 0;
  unsigned long v = strtoul(s, &end, 10);
  if (errno != 0 || *end != '\0' || v == 0 || v > 65535 || s[0] == '-') {
    fprintf(stderr,
            "blockwatch: ignoring BW_DEFAULT_POOL_WORKERS=\"%s\" (want a "
            "number from 1 to 65535)\n",
            s);
    return 0;
  }
  return (unsigned)v;
}

static void default_create(void) {
  bw_pool_config cfg = {0};
  cfg.name = "bw-default";
  cfg.min_workers = env_workers();
  default_pool = pool_create(&cfg, 1);
}

bw_pool *bw_pool_default(void) {
  pthread_once(&default_once, default_create);
  if (default_pool == NULL)
    errno = EAGAIN;
  return default_pool;
}

bw_pool *bwrt__pool_resolve(bw_pool *pool) {
  if (pool == NULL)
    return bw_pool_default();
  if (pool->magic != BWRT__POOL_LIVE) {
    errno = ESHUTDOWN;
    return NULL;
  }
  return pool;
}

int bw_pool_destroy(bw_pool *pool) {
  if (pool == NULL || pool->magic != BWRT__POOL_LIVE || pool->is_default)
    return -EINVAL;
  bwrt__worker *self = bwrt__current_worker();
  if (self != NULL && self->pool == pool)
    return -EDEADLK;
  if (bwrt__gq_close(&pool->queue))
    return -EINVAL; /* a second destroy racing the first */

  /* Helping waiters leave before destroy looks for quiescence: an item
   * one of them runs could still queue work (see bwrt__help_enter). */
  atomic_store_explicit(&pool->help_closed, 1, memory_order_seq_cst);
  while (atomic_load_explicit(&pool->helpers, memory_order_seq_cst) != 0)
    sched_yield();

  /* Pending delays are canceled; their continuations are queued here. */
  bwrt__gate_stop(pool);
  /* Descriptor waits are canceled and blocking jobs not yet started too;
   * running ones finish. Before the quiescence wait, which then runs the
   * continuations they queue. */
  bwrt__poller_stop(pool);
  bwrt__blocking_stop(pool);

  pthread_mutex_lock(&pool->park_mu);
  pool->draining = 1;
  while (atomic_load_explicit(&pool->sleepers, memory_order_relaxed) !=
             atomic_load_explicit(&pool->live, memory_order_relaxed) ||
         bwrt__pool_has_work(pool))
    pthread_cond_wait(&pool->quiesce_cv, &pool->park_mu);
  pool->stop = 1;
  pthread_cond_broadcast(&pool->park_cv);
  pthread_mutex_unlock(&pool->park_mu);

  bwrt__registry_remove(pool);
  uint64_t id = pool->id;
  pool_free(pool); /* joins the workers */
  const bw_observer *o = bwrt__obs();
  if (o != NULL && o->pool_destroyed != NULL)
    o->pool_destroyed(o->user, id);
  return 0;
}

int bw_pool_stats_get(bw_pool *pool, bw_pool_stats *out) {
  if (out == NULL)
    return -EINVAL;
  pool = bwrt__pool_resolve(pool);
  if (pool == NULL)
    return -errno;
  memset(out, 0, sizeof(*out));
  uint64_t *buckets = calloc(BWRT__HIST_BUCKETS, sizeof(uint64_t));
  if (buckets == NULL)
    return -ENOMEM;
  uint64_t min_ns = UINT64_MAX, max_ns = 0, samples = 0;
  unsigned n = atomic_load_explicit(&pool->nslots, memory_order_acquire);
  for (unsigned i = 0; i < n; i++) {
    bwrt__worker *w = pool->slots[i];
    out->busy +=
        (unsigned)atomic_load_explicit(&w->running, memory_order_relaxed);
    out->items_completed +=
        atomic_load_explicit(&w->completed, memory_order_relaxed);
    bwrt__hist_merge(&w->hist, buckets, &min_ns, &max_ns, &samples);
  }
  out->items_completed +=
      atomic_load_explicit(&pool->helped, memory_order_relaxed);
  out->workers = atomic_load_explicit(&pool->live, memory_order_relaxed);
  out->idle = atomic_load_explicit(&pool->sleepers, memory_order_relaxed);
  out->blocked = atomic_load_explicit(&pool->blocked, memory_order_relaxed);
  out->queue_length = bwrt__pool_queue_length(pool);
  out->threads_injected =
      atomic_load_explicit(&pool->injected, memory_order_relaxed);
  out->threads_compensated =
      atomic_load_explicit(&pool->compensated, memory_order_relaxed);
  out->threads_retired =
      atomic_load_explicit(&pool->retired, memory_order_relaxed);
  if (samples > 0) {
    out->queue_wait_min_ns = min_ns;
    out->queue_wait_max_ns = max_ns;
    /* A quantile is a bucket's lower bound: keep it within [min, max]. */
    uint64_t med = bwrt__hist_quantile(buckets, samples, 0.5);
    uint64_t p99 = bwrt__hist_quantile(buckets, samples, 0.99);
    out->queue_wait_median_ns = med < min_ns ? min_ns : med;
    out->queue_wait_p99_ns =
        p99 < out->queue_wait_median_ns ? out->queue_wait_median_ns : p99;
  }
  free(buckets);
  return 0;
}
