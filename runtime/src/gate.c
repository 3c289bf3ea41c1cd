/* gate.c - the pool's gate thread: delay timers, starvation injection and
 * joining retired workers (.NET's gate thread and timer queue in one).
 *
 * Invariants:
 *  - pool->timers is a 4-ary min-heap of timer nodes (bwrt__timer) on their
 *    deadlines (copied into the entries when added: a timer's deadline does
 *    not change while it is in the heap), under gate_mu; the gate knows
 *    nothing of what embeds them (delay tasks, whose heap reference fire
 *    drops). A timer whose owner
 *    resolved early (a canceled delay) stays in the heap (lazy removal)
 *    until its deadline or until the gate compacts the heap (about once a
 *    second, when half of it is resolved); firing it then changes nothing
 *    but references.
 *  - Timers fire (and are fired as canceled at stop) with gate_mu released:
 *    completing a task runs continuations and token code whose locks come
 *    before gate_mu in the lock order (token->mu -> gate_mu -> park_mu).
 *  - Starvation: when work is queued, no worker is parked, and for
 *    starvation_ms either the workers' summed `started` counter has not
 *    moved or every worker has announced it is blocked
 *    (bw_pool_notify_blocked), one worker is added (up to max_workers), then
 *    the clock starts again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

/* The gate never sleeps longer than this, so retired workers are joined
 * (and their slots reused) within about a second. */
#define GATE_MAX_SLEEP_NS 1000000000ull
/* Due timers taken out of the heap per lock hold. */
#define FIRE_BATCH 64u

/* The heap is 4-ary with the deadlines in the entries: a sift compares
 * four children that share one cache line, over half the levels of a
 * binary heap, and reads no timer (10,000 delays firing at once spent most
 * of the gate's time in a binary heap's sift, one cache miss per timer
 * compared). */
#define HEAP_ARITY 4u

static int heap_push(bwrt__timer_heap *h, bwrt__timer *tm) {
  if (h->len == h->cap) {
    size_t cap = h->cap ? h->cap * 2 : 64;
    bwrt__timer_entry *items = realloc(h->items, cap * sizeof(*items));
    if (items == NULL)
      return -ENOMEM;
    h->items = items;
    h->cap = cap;
  }
  bwrt__timer_entry e = {tm->deadline_ns, tm};
  size_t i = h->len++;
  while (i > 0) {
    size_t parent = (i - 1) / HEAP_ARITY;
    if (h->items[parent].deadline_ns <= e.deadline_ns)
      break;
    h->items[i] = h->items[parent];
    i = parent;
  }
  h->items[i] = e;
  return 0;
}

/* Moves the entry at i down to its place. */
static void sift_down(bwrt__timer_heap *h, size_t i) {
  bwrt__timer_entry e = h->items[i];
  for (;;) {
    size_t first = HEAP_ARITY * i + 1;
    if (first >= h->len)
      break;
    size_t last = first + HEAP_ARITY < h->len ? first + HEAP_ARITY : h->len;
    size_t min = first;
    for (size_t c = first + 1; c < last; c++)
      if (h->items[c].deadline_ns < h->items[min].deadline_ns)
        min = c;
    if (h->items[min].deadline_ns >= e.deadline_ns)
      break;
    h->items[i] = h->items[min];
    i = min;
  }
  h->items[i] = e;
}

static bwrt__timer *heap_pop(bwrt__timer_heap *h) {
  if (h->len == 0)
    return NULL;
  bwrt__timer *top = h->items[0].tm;
  if (--h->len > 0) {
    h->items[0] = h->items[h->len];
    sift_down(h, 0);
  }
  return top;
}

/* Takes timers whose owners resolved early (canceled delays) out of the
 * heap, so a program that cancels long timeouts by the thousand does not
 * keep them until their deadlines. Runs when at least half the heap is
 * resolved (so its O(n) cost is amortized over the cancellations). Caller
 * holds gate_mu; returns a malloc'd array of the removed timers (not yet
 * fired) and its length, or NULL. */
static bwrt__timer **heap_compact(bwrt__timer_heap *h, size_t *n_out) {
  *n_out = 0;
  if (h->len < 64)
    return NULL;
  size_t dead = 0;
  for (size_t i = 0; i < h->len; i++)
    dead += h->items[i].tm->resolved(h->items[i].tm) != 0;
  if (dead * 2 < h->len)
    return NULL;
  bwrt__timer **out = malloc(dead * sizeof(*out));
  if (out == NULL)
    return NULL; /* try again next time */
  size_t keep = 0, n = 0;
  for (size_t i = 0; i < h->len; i++) {
    bwrt__timer *t = h->items[i].tm;
    if (t->resolved(t) && n < dead)
      out[n++] = t;
    else
      h->items[keep++] = h->items[i];
  }
  h->len = keep;
  if (keep > 1) /* Floyd's heap construction, from the last parent up */
    for (size_t i = (keep - 2) / HEAP_ARITY + 1; i-- > 0;)
      sift_down(h, i);
  *n_out = n;
  return out;
}

int bwrt__gate_add_timer(bw_pool *pool, bwrt__timer *tm) {
  pthread_mutex_lock(&pool->gate_mu);
  if (pool->gate_stop) {
    pthread_mutex_unlock(&pool->gate_mu);
    return -ESHUTDOWN;
  }
  int rc = heap_push(&pool->timers, tm);
  /* Wake the gate only when this deadline is the new earliest one. */
  if (rc == 0 && pool->timers.items[0].tm == tm)
    pthread_cond_signal(&pool->gate_cv);
  pthread_mutex_unlock(&pool->gate_mu);
  return rc;
}

static void abs_time(struct timespec *ts, uint64_t ns) {
  ts->tv_sec = (time_t)(ns / 1000000000u);
  ts->tv_nsec = (long)(ns % 1000000000u);
}

/* One starvation check; see the invariants above. */
static void check_starvation(bw_pool *pool, uint64_t now, uint64_t *progress,
                             uint64_t *since) {
  uint64_t p = bwrt__pool_progress(pool);
  unsigned live = atomic_load_explicit(&pool->live, memory_order_relaxed);
  unsigned blocked = atomic_load_explicit(&pool->blocked, memory_order_relaxed);
  /* Stuck: nothing dequeued since the last check, or every worker says it
   * is blocked (progress by a trickle of blocking items is no progress). */
  int stuck = p == *progress || blocked >= live;
  *progress = p;
  if (!stuck || bwrt__pool_queue_length(pool) == 0 ||
      atomic_load_explicit(&pool->sleepers, memory_order_relaxed) > 0) {
    *since = now;
    return;
  }
  if (now - *since < (uint64_t)pool->starvation_ms * 1000000u)
    return;
  *since = now;
  if (pool->flags & BW_POOL_NO_INJECTION)
    return;
  pthread_mutex_lock(&pool->park_mu);
  (void)bwrt__pool_spawn_locked(pool, 0);
  pthread_mutex_unlock(&pool->park_mu);
}

static void *gate_main(void *arg) {
  bw_pool *pool = arg;
  char name[16];
  snprintf(name, sizeof(name), "%.10s.gate", pool->name);
  pthread_setname_np(pthread_self(), name);
  bwrt__set_thread_role(BW_ROLE_RUNTIME); /* its waits are the runtime's */

  uint64_t tick = (uint64_t)pool->starvation_ms * 1000000u / 4u;
  if (tick < 2000000u)
    tick = 2000000u;
  if (tick > 250000000u)
    tick = 250000000u;
  uint64_t progress = 0, since = bwrt__now_ns(), next_check = since + tick;
  uint64_t next_reap = since + GATE_MAX_SLEEP_NS;

  pthread_mutex_lock(&pool->gate_mu);
  while (!pool->gate_stop) {
    uint64_t now = bwrt__now_ns();
    if (pool->timers.len > 0 && pool->timers.items[0].deadline_ns <= now) {
      /* Every due timer, up to a batch, for one lock hold and one clock
       * read: 10,000 delays due at once fire in batches, not one by one. */
      bwrt__timer *due[FIRE_BATCH];
      size_t n = 0;
      do
        due[n++] = heap_pop(&pool->timers);
      while (n < FIRE_BATCH && pool->timers.len > 0 &&
             pool->timers.items[0].deadline_ns <= now);
      pthread_mutex_unlock(&pool->gate_mu);
      for (size_t i = 0; i < n; i++)
        due[i]->fire(due[i], 0);
      pthread_mutex_lock(&pool->gate_mu);
      continue;
    }
    if (now >= next_check) {
      pthread_mutex_unlock(&pool->gate_mu);
      check_starvation(pool, now, &progress, &since);
      size_t ndead = 0;
      bwrt__timer **dead = NULL;
      if (now >= next_reap) {
        pthread_mutex_lock(&pool->park_mu);
        bwrt__pool_reap_locked(pool);
        pthread_mutex_unlock(&pool->park_mu);
        next_reap = now + GATE_MAX_SLEEP_NS;
        pthread_mutex_lock(&pool->gate_mu);
        dead = heap_compact(&pool->timers, &ndead);
        pthread_mutex_unlock(&pool->gate_mu);
      }
      for (size_t i = 0; i < ndead; i++)
        dead[i]->fire(dead[i], 1); /* a no-op but for the references */
      free(dead);
      pthread_mutex_lock(&pool->gate_mu);
      next_check = now + tick;
      continue;
    }
    uint64_t wake = next_check;
    if (pool->timers.len > 0 && pool->timers.items[0].deadline_ns < wake)
      wake = pool->timers.items[0].deadline_ns;
    struct timespec ts;
    abs_time(&ts, wake);
    pthread_cond_timedwait(&pool->gate_cv, &pool->gate_mu, &ts);
  }
  pthread_mutex_unlock(&pool->gate_mu);
  return NULL;
}

int bwrt__gate_start(bw_pool *pool) {
  /* Like the workers, the gate runs with every signal blocked. */
  if (bwrt__thread_start(&pool->gate, gate_main, pool) != 0)
    return -EAGAIN;
  pool->gate_started = 1;
  return 0;
}

void bwrt__gate_stop(bw_pool *pool) {
  pthread_mutex_lock(&pool->gate_mu);
  pool->gate_stop = 1;
  pthread_cond_signal(&pool->gate_cv);
  pthread_mutex_unlock(&pool->gate_mu);
  if (pool->gate_started) {
    pthread_join(pool->gate, NULL);
    pool->gate_started = 0;
  }
  /* No one adds timers once gate_stop is set and the gate has exited, so
   * the heap is ours. */
  bwrt__timer *tm;
  while ((tm = heap_pop(&pool->timers)) != NULL)
    tm->fire(tm, 1);
}
