/* spawn.c - starting, naming and joining the runtime's threads: a pool's
 * workers (at creation, on starvation injection by the gate, on
 * compensation for a blocked worker) and its gate thread.
 *
 * Invariants:
 *  - A worker struct, once in pool->slots, stays there until the pool is
 *    freed; nslots only grows, with a release store after the slot is
 *    written, so any thread may read the slots below nslots at any time.
 *  - Slot states change under park_mu: FREE -> LIVE here, LIVE -> ZOMBIE
 *    when an idle worker retires (worker.c), ZOMBIE -> FREE once joined
 *    here. `live` counts LIVE workers and never exceeds max_workers.
 *  - Spawning and joining happen under park_mu. A zombie takes no lock after
 *    it released park_mu, so joining it there cannot deadlock.
 *  - Runtime threads run with every signal blocked.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Workers and the gate start with every signal blocked, so the program's
 * handlers run on its own threads, never in the middle of someone's work
 * item. */
int bwrt__thread_start(pthread_t *thread, void *(*fn)(void *arg), void *arg) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = pthread_create(thread, NULL, fn, arg);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return rc;
}

/* "<pool name>-<n>" in the 15 characters Linux allows, cutting the pool
 * name rather than the number. */
char *bwrt__thread_name(char out[16], const char *pool_name, unsigned index) {
  char suffix[12];
  int slen = snprintf(suffix, sizeof(suffix), "-%u", index);
  size_t keep = strlen(pool_name);
  if (keep > 15u - (size_t)slen)
    keep = 15u - (size_t)slen;
  memcpy(out, pool_name, keep);
  memcpy(out + keep, suffix, (size_t)slen + 1);
  return out;
}

static bwrt__worker *worker_new(bw_pool *pool, unsigned slot) {
  bwrt__worker *w = aligned_alloc(
      BWRT__CACHE_LINE, (sizeof(bwrt__worker) + BWRT__CACHE_LINE - 1) /
                            BWRT__CACHE_LINE * BWRT__CACHE_LINE);
  if (w == NULL)
    return NULL;
  memset(w, 0, sizeof(*w));
  if (bwrt__deque_init(&w->deque) != 0) {
    free(w);
    return NULL;
  }
  w->pool = pool;
  w->slot = slot;
  w->state = BWRT__SLOT_FREE;
  atomic_init(&w->started, 0);
  atomic_init(&w->completed, 0);
  atomic_init(&w->running, 0);
  bwrt__hist_init(&w->hist);
  return w;
}

void bwrt__pool_reap_locked(bw_pool *pool) {
  unsigned n = atomic_load_explicit(&pool->nslots, memory_order_relaxed);
  for (unsigned i = 0; i < n; i++) {
    bwrt__worker *w = pool->slots[i];
    if (w->state == BWRT__SLOT_ZOMBIE) {
      /* The zombie released park_mu before we took it and takes no lock
       * again, so this join is short and cannot deadlock. */
      pthread_join(w->thread, NULL);
      w->state = BWRT__SLOT_FREE;
    }
  }
}

int bwrt__pool_spawn_locked(bw_pool *pool, int reason) {
  if (pool->stop)
    return -ESHUTDOWN;
  if (atomic_load_explicit(&pool->live, memory_order_relaxed) >=
      pool->max_workers)
    return -EAGAIN;
  bwrt__pool_reap_locked(pool);
  unsigned n = atomic_load_explicit(&pool->nslots, memory_order_relaxed);
  bwrt__worker *w = NULL;
  for (unsigned i = 0; i < n && w == NULL; i++) {
    if (pool->slots[i]->state == BWRT__SLOT_FREE)
      w = pool->slots[i];
  }
  if (w == NULL) {
    if (n >= pool->max_workers)
      return -EAGAIN;
    w = worker_new(pool, n);
    if (w == NULL)
      return -ENOMEM;
    pool->slots[n] = w;
    atomic_store_explicit(&pool->nslots, n + 1, memory_order_release);
  }
  w->index = pool->next_index++;
  w->state = BWRT__SLOT_LIVE;
  atomic_fetch_add_explicit(&pool->live, 1, memory_order_relaxed);

  if (bwrt__worker_start(w) != 0) {
    w->state = BWRT__SLOT_FREE;
    atomic_fetch_sub_explicit(&pool->live, 1, memory_order_relaxed);
    return -EAGAIN;
  }
  if (reason == 0)
    atomic_fetch_add_explicit(&pool->injected, 1, memory_order_relaxed);
  else if (reason == 1)
    atomic_fetch_add_explicit(&pool->compensated, 1, memory_order_relaxed);
  const bw_observer *o = bwrt__obs();
  if (reason >= 0 && o != NULL && o->worker_added_or_retired != NULL)
    o->worker_added_or_retired(o->user, pool->id, reason);
  return 0;
}
