/* timer.c - periodic timers: fn runs on a pool's workers every period,
 * two runs never at once, and no thread is held between runs.
 *
 * Invariants:
 *  - The runtime holds a timer in one place at a time: the gate's heap
 *    (node, until the next tick), the pool's queue (item, a run is due) or
 *    a worker running it. A run re-arms the timer only after fn returned,
 *    at the first tick of the schedule first + k * period still ahead, so
 *    runs never overlap and ticks missed meanwhile are skipped.
 *  - `stopped` and `running` change under mu, and a run sets `running`
 *    (starts) only under mu while !stopped: once bw_timer_stop released mu
 *    no run starts, and `running` told it whether one was going on.
 *  - mu is a leaf: nothing is called with it held.
 *  - References: the user's, dropped by bw_timer_stop, and the runtime's
 *    while it holds the timer, dropped when a tick or run finds it stopped,
 *    when a one-shot timer has run, or when the pool refuses it (the gate
 *    stopped: pool destroy). Either may go first.
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

struct bw_timer {
  bwrt__timer node; /* in the gate's heap while waiting for a tick */
  bwrt__item item;  /* in the pool's queue while a run is due */
  bw_pool *pool;
  void (*fn)(void *arg);
  void *arg;
  uint64_t period_ns; /* 0: one run */
  pthread_mutex_t mu;
  int running;         /* under mu */
  _Atomic int stopped; /* written under mu; read by the gate's resolved() */
  _Atomic unsigned refs;
};

static void timer_release(bw_timer *t) {
  if (atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) != 1)
    return;
  pthread_mutex_destroy(&t->mu);
  free(t);
}

/* The gate popped the timer: its tick came (canceled 0), or the gate is
 * stopping or compacted a stopped timer away (1). */
static void timer_tick(bwrt__timer *tm, int canceled) {
  bw_timer *t = BWRT__CONTAINER_OF(tm, bw_timer, node);
  if (canceled || atomic_load_explicit(&t->stopped, memory_order_acquire) ||
      bwrt__pool_push(t->pool, &t->item, BWRT__PUSH_INTERNAL) != 0)
    timer_release(t);
}

/* A stopped timer in the heap: the gate may drop it before its tick. */
static int timer_resolved(const bwrt__timer *tm) {
  const bw_timer *t = BWRT__CONTAINER_OF(tm, bw_timer, node);
  return atomic_load_explicit(&t->stopped, memory_order_acquire);
}

/* The first tick of the schedule after `now`, the one at `last` missed
 * or not. */
static uint64_t next_tick(uint64_t last, uint64_t period, uint64_t now) {
  uint64_t next = last + period;
  if (next <= now)
    next += ((now - next) / period + 1) * period;
  return next;
}

static void timer_run(bwrt__item *it) {
  bw_timer *t = BWRT__CONTAINER_OF(it, bw_timer, item);
  pthread_mutex_lock(&t->mu);
  int go = !atomic_load_explicit(&t->stopped, memory_order_relaxed);
  t->running = go;
  pthread_mutex_unlock(&t->mu);
  if (!go) {
    timer_release(t);
    return;
  }
  t->fn(t->arg);
  pthread_mutex_lock(&t->mu);
  t->running = 0;
  go = !atomic_load_explicit(&t->stopped, memory_order_relaxed) &&
       t->period_ns != 0;
  pthread_mutex_unlock(&t->mu);
  if (!go) {
    timer_release(t);
    return;
  }
  t->node.deadline_ns =
      next_tick(t->node.deadline_ns, t->period_ns, bwrt__now_ns());
  if (bwrt__gate_add_timer(t->pool, &t->node) != 0)
    timer_release(t); /* the pool is being destroyed */
}

/* Milliseconds to nanoseconds, bounded like bw_delay's deadlines. */
static uint64_t ms_to_ns(uint64_t ms) {
  if (ms > UINT64_MAX / 2000000u)
    ms = UINT64_MAX / 2000000u;
  return ms * 1000000u;
}

bw_timer *bw_timer_start(bw_pool *pool, uint64_t first_ms, uint64_t period_ms,
                         void (*fn)(void *arg), void *arg) {
  if (fn == NULL) {
    errno = EINVAL;
    return NULL;
  }
  if ((pool = bwrt__pool_resolve(pool)) == NULL)
    return NULL;
  bw_timer *t = calloc(1, sizeof(*t));
  if (t == NULL) {
    errno = ENOMEM;
    return NULL;
  }
  t->pool = pool;
  t->fn = fn;
  t->arg = arg;
  t->period_ns = ms_to_ns(period_ms);
  pthread_mutex_init(&t->mu, NULL);
  atomic_init(&t->stopped, 0);
  atomic_init(&t->refs, 2); /* the user's and the runtime's */
  t->node.deadline_ns = bwrt__now_ns() + ms_to_ns(first_ms);
  t->node.fire = timer_tick;
  t->node.resolved = timer_resolved;
  t->item.run = timer_run;
  int rc = bwrt__gate_add_timer(pool, &t->node);
  if (rc != 0) {
    pthread_mutex_destroy(&t->mu);
    free(t);
    errno = -rc;
    return NULL;
  }
  return t;
}

int bw_timer_stop(bw_timer *timer) {
  if (timer == NULL)
    return -EINVAL;
  pthread_mutex_lock(&timer->mu);
  atomic_store_explicit(&timer->stopped, 1, memory_order_release);
  int running = timer->running;
  pthread_mutex_unlock(&timer->mu);
  timer_release(timer);
  return running;
}
