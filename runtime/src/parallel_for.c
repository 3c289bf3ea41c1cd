/* parallel_for.c - bw_parallel_for: a loop run by its caller and the
 * pool's workers, balanced by stealing halves of ranges.
 *
 * Invariants:
 *  - The loop's index range is cut into one range per participant slot (the
 *    caller's is slot 0). A slot's [lo, hi) changes only under its spin
 *    lock: its owner takes `grain` indices from the front, a thief whose own
 *    range ran out takes the back half (all of a one-index range), so every
 *    index is taken exactly once. A slot whose helper item never started is
 *    stolen from like any other, so the loop ends whether or not the workers
 *    come.
 *  - `remaining` counts indices not yet run; it is decreased after body
 *    returned. The participant that brings it to zero signals `done`.
 *  - The loop is freed by its last reference: the caller's and one per
 *    helper item queued (a helper that starts late finds nothing to do).
 *  - The first take runs on the caller before anyone is asked to help, and
 *    is timed: a loop whose rest would be over sooner than a worker wakes
 *    runs on the caller alone.
 *  - A helper that starts on the CPU its caller was on when the loop began
 *    moves off it first (cpu_spread.c). Until a helper starts, the caller
 *    yields now and then, so that one queued behind it on that CPU can
 *    start; it never yields when no worker was idle as the loop began.
 *  - A waiting worker never blocks: it runs other items (its own pool's)
 *    or yields; only a caller that is no worker sleeps on the condvar.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>

#include "internal.h"

/* Polls of `remaining` before a caller off the pool sleeps. */
#define WAIT_SPINS 4096
/* The automatic grain: about this many takes per participant (the last
 * take of a participant is what the others may wait for at the end). */
#define TAKES_PER_PARTICIPANT 32u
/* Participants at most (slots of one loop). */
#define MAX_PARTICIPANTS 64u
/* A loop whose rest, judged by its first take, would run in less than this
 * on the caller alone stays there: waking a worker and handing it a share
 * costs about as much on a small machine. */
#define INLINE_BELOW_NS 16000.0

typedef struct range_slot {
  _Alignas(BWRT__CACHE_LINE) _Atomic int lock;
  _Atomic size_t lo, hi; /* written under lock; read racily to pick victims */
} range_slot;

typedef struct loop {
  _Atomic unsigned refs;
  _Atomic unsigned joined; /* slots handed out */
  _Atomic size_t remaining;
  unsigned nslots;
  size_t grain;
  void (*body)(size_t begin, size_t end, void *arg);
  void *arg;
  int caller_cpu; /* where the caller started the loop, or -1 */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int done; /* under mu */
  range_slot slots[];
} loop;

static void slot_lock(range_slot *s) {
  int unlocked = 0;
  while (!atomic_compare_exchange_weak_explicit(
      &s->lock, &unlocked, 1, memory_order_acquire, memory_order_relaxed)) {
    unlocked = 0;
    bwrt__cpu_relax();
  }
}

static void slot_unlock(range_slot *s) {
  atomic_store_explicit(&s->lock, 0, memory_order_release);
}

static size_t slot_size(range_slot *s) {
  size_t lo = atomic_load_explicit(&s->lo, memory_order_relaxed);
  size_t hi = atomic_load_explicit(&s->hi, memory_order_relaxed);
  return hi > lo ? hi - lo : 0;
}

static void loop_release(loop *l) {
  if (atomic_fetch_sub_explicit(&l->refs, 1, memory_order_acq_rel) != 1)
    return;
  pthread_mutex_destroy(&l->mu);
  pthread_cond_destroy(&l->cv);
  free(l);
}

/* Takes up to `grain` indices from the front of the slot. */
static int take(loop *l, range_slot *s, size_t *b, size_t *e) {
  slot_lock(s);
  size_t lo = atomic_load_explicit(&s->lo, memory_order_relaxed);
  size_t hi = atomic_load_explicit(&s->hi, memory_order_relaxed);
  int got = lo < hi;
  if (got) {
    *b = lo;
    *e = hi - lo > l->grain ? lo + l->grain : hi;
    atomic_store_explicit(&s->lo, *e, memory_order_relaxed);
  }
  slot_unlock(s);
  return got;
}

/* Moves the back half of the fullest other slot into `self`; 0 when every
 * slot looked empty. */
static int steal(loop *l, range_slot *self) {
  for (;;) {
    range_slot *victim = NULL;
    size_t best = 0;
    for (unsigned i = 0; i < l->nslots; i++) {
      size_t n = slot_size(&l->slots[i]);
      if (&l->slots[i] != self && n > best) {
        best = n;
        victim = &l->slots[i];
      }
    }
    if (victim == NULL)
      return 0;
    slot_lock(victim);
    size_t lo = atomic_load_explicit(&victim->lo, memory_order_relaxed);
    size_t hi = atomic_load_explicit(&victim->hi, memory_order_relaxed);
    if (lo >= hi) { /* emptied meanwhile: look again */
      slot_unlock(victim);
      continue;
    }
    size_t mid = lo + (hi - lo) / 2;
    atomic_store_explicit(&victim->hi, mid, memory_order_relaxed);
    slot_unlock(victim);
    slot_lock(self);
    atomic_store_explicit(&self->lo, mid, memory_order_relaxed);
    atomic_store_explicit(&self->hi, hi, memory_order_relaxed);
    slot_unlock(self);
    return 1;
  }
}

/* While no helper has started, the caller yields once per this much of
 * its own work: a helper woken onto the caller's CPU runs only when the
 * caller lets it, and then moves away (cpu_spread.c). A yield with nobody
 * to yield to costs about 0.5-0.8 us on the 2-CPU VM, so this bounds what
 * a loop no worker comes to pays (about a tenth), while a helper that only
 * gets the CPU late in the loop still gets it. */
#define YIELD_EVERY_NS 5000u

static void participate(loop *l, range_slot *self, int may_yield) {
  size_t b, e;
  uint64_t yielded = may_yield ? bwrt__now_ns() : 0;
  do {
    while (take(l, self, &b, &e)) {
      l->body(b, e, l->arg);
      if (atomic_fetch_sub_explicit(&l->remaining, e - b,
                                    memory_order_acq_rel) == e - b) {
        pthread_mutex_lock(&l->mu);
        l->done = 1;
        pthread_cond_broadcast(&l->cv);
        pthread_mutex_unlock(&l->mu);
      }
      if (may_yield &&
          atomic_load_explicit(&l->joined, memory_order_relaxed) == 1) {
        uint64_t now = bwrt__now_ns();
        if (now - yielded >= YIELD_EVERY_NS) {
          bwrt__yield();
          yielded = now;
        }
      }
    }
  } while (steal(l, self));
}

static void helper_item(void *arg) {
  loop *l = arg;
  unsigned s = atomic_fetch_add_explicit(&l->joined, 1, memory_order_relaxed);
  if (s < l->nslots) {
    /* Woken onto the CPU the caller computes on, this helper would run
     * nothing until the caller is preempted (cpu_spread.c). */
    (void)bwrt__leave_cpu(l->caller_cpu);
    participate(l, &l->slots[s], 0);
  }
  loop_release(l);
}

static int finished(loop *l) {
  return atomic_load_explicit(&l->remaining, memory_order_acquire) == 0;
}

/* Waits for the other participants' ranges without blocking a worker. */
static void wait_done(bw_pool *pool, loop *l) {
  bwrt__worker *self = bwrt__current_worker();
  if (self != NULL) {
    unsigned idle = 0;
    while (!finished(l)) {
      if (bwrt__worker_run_one(self))
        idle = 0;
      else if ((++idle & 15u) == 0)
        bwrt__yield();
      else
        bwrt__cpu_relax();
    }
    return;
  }
  int helping = bwrt__help_enter(pool);
  for (unsigned i = 0; i < WAIT_SPINS && !finished(l); i++) {
    if (helping && bwrt__help_run_one(pool))
      i = 0;
    else if ((i & 15u) == 15u)
      bwrt__yield();
    else
      bwrt__cpu_relax();
  }
  if (helping)
    bwrt__help_leave(pool);
  pthread_mutex_lock(&l->mu);
  while (!l->done)
    pthread_cond_wait(&l->cv, &l->mu);
  pthread_mutex_unlock(&l->mu);
}

/* How many workers to ask for: no more than can run beside the caller on
 * the CPUs, nor than there are takes to share. */
static unsigned helpers_for(bw_pool *pool, size_t chunks) {
  unsigned live = atomic_load_explicit(&pool->live, memory_order_relaxed);
  bwrt__worker *self = bwrt__current_worker();
  if (self != NULL && self->pool == pool && live > 0)
    live--;
  unsigned cpus = pool->cpus > 1 ? pool->cpus - 1 : 1;
  unsigned k = live < cpus ? live : cpus;
  if (k > MAX_PARTICIPANTS - 1)
    k = MAX_PARTICIPANTS - 1;
  if ((size_t)k > chunks - 1)
    k = (unsigned)(chunks - 1);
  return k;
}

/* Runs [begin, end) on the calling thread, `grain` indices at a time. */
static void run_inline(size_t begin, size_t end, size_t grain,
                       void (*body)(size_t begin, size_t end, void *arg),
                       void *arg) {
  for (size_t b = begin, e; b < end; b = e) {
    e = end - b > grain ? b + grain : end;
    body(b, e, arg);
  }
}

int bw_parallel_for(bw_pool *pool, size_t begin, size_t end, size_t grain,
                    void (*body)(size_t begin, size_t end, void *arg),
                    void *arg) {
  if (body == NULL || begin > end)
    return -EINVAL;
  pool = bwrt__pool_resolve(pool);
  if (pool == NULL)
    return -errno;
  size_t n = end - begin;
  if (n == 0)
    return 0;
  unsigned k = helpers_for(pool, n);
  /* On the caller alone, an automatic grain is one call for the rest. */
  size_t alone_grain = grain != 0 ? grain : SIZE_MAX;
  if (grain == 0) {
    grain = n / ((size_t)(k + 1) * TAKES_PER_PARTICIPANT);
    if (grain == 0)
      grain = 1;
  }
  if (k == 0 || n <= grain) { /* nobody to share with, or one take */
    run_inline(begin, end, alone_grain, body, arg);
    return 0;
  }
  /* A first, small take, timed: is the rest worth a worker's wake-up?
   * Small, so that the workers are not asked later than they need be. */
  size_t probe = grain / 4 > 0 ? grain / 4 : 1;
  uint64_t t0 = bwrt__now_ns();
  body(begin, begin + probe, arg);
  double took = (double)(bwrt__now_ns() - t0);
  begin += probe;
  n -= probe;
  if (took * ((double)n / (double)probe) < INLINE_BELOW_NS) {
    run_inline(begin, end, alone_grain, body, arg);
    return 0;
  }
  size_t chunks = n / grain + (n % grain != 0);
  if (k > chunks - 1)
    k = (unsigned)(chunks - 1);
  if (k == 0) {
    body(begin, end, arg); /* one take left */
    return 0;
  }
  unsigned nslots = k + 1;
  loop *l = aligned_alloc(
      BWRT__CACHE_LINE,
      (sizeof(loop) + nslots * sizeof(range_slot) + BWRT__CACHE_LINE - 1) /
          BWRT__CACHE_LINE * BWRT__CACHE_LINE);
  if (l == NULL)
    return -ENOMEM;
  atomic_init(&l->refs, 1 + k);
  atomic_init(&l->joined, 1);
  atomic_init(&l->remaining, n);
  l->nslots = nslots;
  l->grain = grain;
  l->body = body;
  l->arg = arg;
  l->caller_cpu = sched_getcpu();
  pthread_mutex_init(&l->mu, NULL);
  pthread_cond_init(&l->cv, NULL);
  l->done = 0;
  /* Equal shares, the first n % nslots one index longer. */
  size_t share = n / nslots, extra = n % nslots, at = begin;
  for (unsigned i = 0; i < nslots; i++) {
    size_t len = share + (i < extra);
    atomic_init(&l->slots[i].lock, 0);
    atomic_init(&l->slots[i].lo, at);
    atomic_init(&l->slots[i].hi, at + len);
    at += len;
  }
  /* An idle worker (parked, or searching for work) may be on the caller's
   * CPU and reach the helper item only when the caller lets it; a pool
   * whose workers all run items has no one to yield to, so the caller
   * does not. */
  int idle = atomic_load_explicit(&pool->sleepers, memory_order_relaxed) > 0 ||
             atomic_load_explicit(&pool->searching, memory_order_relaxed) > 0;
  for (unsigned i = 0; i < k; i++) {
    /* A helper that cannot be queued leaves its slot to be stolen. */
    if (bw_submit(pool, helper_item, l) != 0)
      atomic_fetch_sub_explicit(&l->refs, 1, memory_order_relaxed);
  }
  participate(l, &l->slots[0], idle);
  if (!finished(l))
    wait_done(pool, l);
  loop_release(l);
  return 0;
}
