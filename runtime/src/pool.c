/* pool.c - pools, workers, parking and work items.
 *
 * Invariants:
 *  - A worker looks for work in this order: its own deque (newest first),
 *    the global FIFO queue, then the other workers' deques (oldest first).
 *  - No lost wake-ups (the park protocol): a pusher publishes its item with a
 *    seq_cst write (deque bottom, ring tail or overflow length) and then
 *    reads `sleepers` and `searching` (seq_cst); a parker first leaves the
 *    searching state (seq_cst decrement), increments `sleepers` (seq_cst,
 *    under park_mu) and then re-checks every queue (seq_cst) before waiting
 *    on park_cv under park_mu. In the single total order either the parker
 *    finds the item, or the pusher sees the sleeper, or the pusher sees a
 *    searcher that has not yet re-checked (and will find the item). A
 *    pusher's signal is sent under park_mu, so it cannot slip in between a
 *    parker's check and its wait.
 *  - Few wake-ups: a pusher wakes a worker only when some worker sleeps and
 *    none is searching; the woken worker counts as searching from the moment
 *    it is signaled (wake_tokens, under park_mu, pairs each signal with one
 *    waking worker). The last searcher to find work wakes the next sleeper
 *    if work remains, so a burst ramps the pool up one worker at a time. A
 *    push onto busy workers makes no system call.
 *  - Lock order: park_mu -> queue.ov_mu. Spawning a thread happens under
 *    park_mu.
 *  - Destroy: closes the global queue (see gqueue.c), so every outside push
 *    either landed before (and is seen) or fails with ESHUTDOWN; pushes from
 *    the pool's own workers (busy, hence the pool is not quiescent) and
 *    internal continuation pushes still land. Workers are stopped only once
 *    every live worker is parked and no queue holds work, so every queued
 *    item (and whatever it queues) runs. A caller must not touch the pool
 *    once bw_pool_destroy has returned (a submit racing the very end of a
 *    destroy may still be reading the pool: that is the caller's race).
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* Polls before parking: a worker that finds work again within this many
 * polls costs the submitter no wake-up system call. */
#define PARK_SPINS 2048

static BWRT__TLS bwrt__worker *tls_worker;
/* A helping waiter's pool, and its run_next (like a worker's). */
static BWRT__TLS bw_pool *tls_help_pool;
static BWRT__TLS bwrt__item *tls_help_next;
/* Items this helper ran and has not yet added to pool->helped. */
static BWRT__TLS unsigned tls_help_count;
/* A helper adds its count to the pool at least this often (and when it
 * leaves): one shared RMW per batch instead of per item. */
#define HELP_FLUSH 64u
static BWRT__TLS unsigned tls_sample;
/* This thread's block of item ids (see new_item_id). */
#define ID_BLOCK 256u
static BWRT__TLS uint64_t tls_id_pool, tls_id_next, tls_id_end;
static _Atomic uint64_t next_pool_id = 1;

bwrt__worker *bwrt__current_worker(void) {
  return tls_worker;
}

bw_pool *bw_current_pool(void) {
  return tls_worker != NULL ? tls_worker->pool : NULL;
}

static inline void store_inc(_Atomic uint64_t *c) {
  atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
                        memory_order_relaxed);
}

/* ---- queues ------------------------------------------------------------- */

/* Tries every other worker's deque once, starting at a random one. */
static bwrt__item *steal_any(bwrt__worker *self) {
  bw_pool *pool = self->pool;
  unsigned n = atomic_load_explicit(&pool->nslots, memory_order_acquire);
  if (n < 2)
    return NULL;
  self->rng = self->rng * 1103515245u + 12345u;
  unsigned start = (self->rng >> 8) % n;
  for (int round = 0; round < 2; round++) {
    int lost = 0;
    for (unsigned k = 0; k < n; k++) {
      bwrt__worker *victim = pool->slots[(start + k) % n];
      if (victim == self)
        continue;
      bwrt__item *it = bwrt__deque_steal(&victim->deque, &lost);
      if (it != NULL)
        return it;
    }
    if (!lost) /* every deque looked empty: no point in a second round */
      break;
  }
  return NULL;
}

static bwrt__item *find_work(bwrt__worker *w) {
  bwrt__item *it = bwrt__deque_pop(&w->deque);
  if (it == NULL)
    it = bwrt__gq_pop(&w->pool->queue);
  if (it == NULL)
    it = steal_any(w);
  return it;
}

int bwrt__pool_has_work(bw_pool *pool) {
  if (bwrt__gq_length(&pool->queue) > 0)
    return 1;
  unsigned n = atomic_load_explicit(&pool->nslots, memory_order_acquire);
  for (unsigned i = 0; i < n; i++) {
    if (bwrt__deque_size(&pool->slots[i]->deque) > 0)
      return 1;
  }
  return 0;
}

size_t bwrt__pool_queue_length(bw_pool *pool) {
  size_t len = bwrt__gq_length(&pool->queue);
  unsigned n = atomic_load_explicit(&pool->nslots, memory_order_acquire);
  for (unsigned i = 0; i < n; i++)
    len += bwrt__deque_size(&pool->slots[i]->deque);
  return len;
}

uint64_t bwrt__pool_progress(bw_pool *pool) {
  uint64_t sum = 0;
  unsigned n = atomic_load_explicit(&pool->nslots, memory_order_acquire);
  for (unsigned i = 0; i < n; i++)
    sum += atomic_load_explicit(&pool->slots[i]->started, memory_order_relaxed);
  return sum + atomic_load_explicit(&pool->helped, memory_order_relaxed);
}

/* Wakes one parked worker unless a worker is already searching; see the
 * invariants at the top. Called after publishing work. */
static void notify_work(bw_pool *pool) {
  if (atomic_load_explicit(&pool->sleepers, memory_order_seq_cst) == 0 ||
      atomic_load_explicit(&pool->searching, memory_order_seq_cst) != 0)
    return;
  unsigned none = 0;
  if (!atomic_compare_exchange_strong_explicit(&pool->searching, &none, 1,
                                               memory_order_seq_cst,
                                               memory_order_relaxed))
    return; /* someone else just became the searcher */
  pthread_mutex_lock(&pool->park_mu);
  if (atomic_load_explicit(&pool->sleepers, memory_order_relaxed) >
      pool->wake_tokens) {
    pool->wake_tokens++;
    pthread_cond_signal(&pool->park_cv);
  } else {
    /* Every sleeper already has a wake-up coming (or none is left). */
    atomic_fetch_sub_explicit(&pool->searching, 1, memory_order_seq_cst);
  }
  pthread_mutex_unlock(&pool->park_mu);
}

/* A fresh item id of `pool`. Ids are handed out to each thread in blocks,
 * so submitters and workers do not all bump one shared counter per item:
 * unique per pool, not dense, not ordered across threads. The block is keyed
 * by the pool's id, which is never reused, unlike its address. */
static uint64_t new_item_id(bw_pool *pool) {
  if (tls_id_pool != pool->id || tls_id_next == tls_id_end) {
    tls_id_next = atomic_fetch_add_explicit(&pool->next_item_id, ID_BLOCK,
                                            memory_order_relaxed);
    tls_id_end = tls_id_next + ID_BLOCK;
    tls_id_pool = pool->id;
  }
  return tls_id_next++;
}

/* The observer's item time gate (observer.h): 0 (time the item) when it
 * has none, else the word's current value. */
static inline uint64_t item_gate_of(const bw_observer *o) {
  return o->item_time_gate != NULL
             ? __atomic_load_n(o->item_time_gate, __ATOMIC_RELAXED)
             : 0;
}

/* Sets the item's observer id and, for sampled items (or when an observer
 * wants every one), its enqueue time. Returns the observer copy. */
static inline const bwrt__observer_copy *stamp_item(bw_pool *pool,
                                                    bwrt__item *it) {
  const bwrt__observer_copy *oc = bwrt__obs_copy();
  unsigned wants = oc != NULL ? oc->wants : 0;
  uint64_t enqueue_ns = 0;
  unsigned timed = 0, sample = tls_sample++;
  it->id = (wants & BWRT__WANT_ID) ? new_item_id(pool) : 0;
  if (wants & BWRT__WANT_ENQUEUE_NS) {
    /* The observer's gate (observer.h): while it holds a time T, only
     * sampled items read the clock and the others carry T. */
    uint64_t gate = item_gate_of(&oc->obs);
    timed = gate == 0 || (sample & oc->sample_mask) == 0;
    enqueue_ns = timed ? bwrt__now_ns() : gate;
  } else if ((sample & BWRT__STATS_SAMPLE_MASK) == 0) {
    timed = 1;
    enqueue_ns = bwrt__now_ns();
  }
  it->enqueue_ns = enqueue_ns;
  it->timed = timed;
  return oc;
}

int bwrt__pool_push_run_next(bw_pool *pool, bwrt__item *it) {
  bwrt__worker *w = tls_worker;
  bwrt__item **slot;
  if (w != NULL) {
    if (w->pool != pool || w->run_next != NULL)
      return 0;
    slot = &w->run_next;
  } else {
    if (tls_help_pool != pool || tls_help_next != NULL)
      return 0;
    slot = &tls_help_next;
  }
  const bwrt__observer_copy *oc = stamp_item(pool, it);
  /* Not visible to other threads, so nobody needs waking: this thread
   * runs it next. */
  *slot = it;
  if (oc != NULL && oc->obs.item_enqueued != NULL)
    oc->obs.item_enqueued(oc->obs.user, pool->id, it->id, it->enqueue_ns,
                          bwrt__pool_queue_length(pool));
  return 1;
}

int bwrt__pool_push(bw_pool *pool, bwrt__item *it, int flags) {
  const bwrt__observer_copy *oc = stamp_item(pool, it);
  uint64_t id = it->id, enqueue_ns = it->enqueue_ns;
  bwrt__worker *w = tls_worker;
  if (w == NULL || w->pool != pool || bwrt__deque_push(&w->deque, it) != 0) {
    /* The pool's own workers may queue work while it drains. */
    int rc = bwrt__gq_push(&pool->queue, it,
                           (flags & BWRT__PUSH_INTERNAL) ||
                               (w != NULL && w->pool == pool));
    if (rc != 0)
      return rc;
  }
  /* `it` may have run and been freed from here on. */
  notify_work(pool);
  if (oc != NULL && oc->obs.item_enqueued != NULL)
    oc->obs.item_enqueued(oc->obs.user, pool->id, id, enqueue_ns,
                          bwrt__pool_queue_length(pool));
  return 0;
}

/* ---- workers ------------------------------------------------------------ */

/* Runs one item with its observer events; `hist` takes the sampled queue
 * wait (NULL on a helping waiter, which has no histogram of its own). */
static void run_observed(bw_pool *pool, bwrt__hist *hist, bwrt__item *it) {
  const bwrt__observer_copy *oc = bwrt__obs_copy();
  if (oc == NULL || !(oc->wants & BWRT__WANT_ID)) {
    /* No item callbacks: the queue wait of sampled items only. */
    if (it->timed && hist != NULL)
      bwrt__hist_add(hist, bwrt__now_ns() - it->enqueue_ns);
    it->run(it);
    return;
  }
  const bw_observer *o = &oc->obs;
  uint64_t enqueue_ns = it->enqueue_ns, start_ns = 0;
  unsigned flags = it->timed ? BW_ITEM_ENQUEUE_TIMED : 0;
  if (it->timed || (oc->wants & BWRT__WANT_START_NS)) {
    /* An item timed at enqueue is timed at start; others ask the gate. */
    uint64_t gate = it->timed ? 0 : item_gate_of(o);
    if (gate == 0) {
      start_ns = bwrt__now_ns();
      flags |= BW_ITEM_START_TIMED;
    } else {
      start_ns = gate;
    }
  }
  if (it->timed && hist != NULL)
    bwrt__hist_add(hist, start_ns - enqueue_ns);
  else if (enqueue_ns == 0) /* queued before the observer registered */
    enqueue_ns = start_ns;
  if (it->id == 0) /* likewise */
    it->id = new_item_id(pool);
  uint64_t id = it->id;
  if (o->item_started_ex != NULL)
    o->item_started_ex(o->user, pool->id, id, enqueue_ns, start_ns, flags);
  else if (o->item_started != NULL)
    o->item_started(o->user, pool->id, id, enqueue_ns, start_ns);
  it->run(it);
  if (o->item_finished != NULL)
    o->item_finished(o->user, pool->id, id, bwrt__now_ns());
}

static void run_item(bwrt__worker *w, bwrt__item *it) {
  store_inc(&w->started);
  atomic_store_explicit(&w->running, 1, memory_order_relaxed);
  run_observed(w->pool, &w->hist, it);
  store_inc(&w->completed);
  atomic_store_explicit(&w->running, 0, memory_order_relaxed);
}

/* ---- helping waiters ---------------------------------------------------- */

/* A thread that waits off the pool on one of its tasks may run the pool's
 * queued items meanwhile (see bw_wait in task.c). Destroy closes helping
 * first: enter increments `helpers` and then reads `help_closed`, destroy
 * sets `help_closed` and then waits for `helpers` to drop to zero (both
 * seq_cst), so either the helper sees the pool closing or destroy sees the
 * helper and waits for it before it looks for quiescence. */
int bwrt__help_enter(bw_pool *pool) {
  if (pool->flags & BW_POOL_NO_HELPING)
    return 0;
  atomic_fetch_add_explicit(&pool->helpers, 1, memory_order_seq_cst);
  if (atomic_load_explicit(&pool->help_closed, memory_order_seq_cst)) {
    atomic_fetch_sub_explicit(&pool->helpers, 1, memory_order_seq_cst);
    return 0;
  }
  tls_help_pool = pool;
  return 1;
}

void bwrt__help_leave(bw_pool *pool) {
  /* A continuation this thread was about to run next goes to the workers:
   * the waiter returns once its own task is done, not at the chain's end. */
  bwrt__item *next = tls_help_next;
  tls_help_next = NULL;
  tls_help_pool = NULL;
  if (next != NULL) {
    (void)bwrt__gq_push(&pool->queue, next, 1); /* internal: cannot fail */
    notify_work(pool);
  }
  if (tls_help_count != 0) {
    atomic_fetch_add_explicit(&pool->helped, tls_help_count,
                              memory_order_relaxed);
    tls_help_count = 0;
  }
  atomic_fetch_sub_explicit(&pool->helpers, 1, memory_order_seq_cst);
}

int bwrt__help_run_one(bw_pool *pool) {
  bwrt__item *it = tls_help_next;
  if (it != NULL) {
    tls_help_next = NULL;
  } else {
    if (atomic_load_explicit(&pool->help_closed, memory_order_relaxed))
      return 0; /* destroy is waiting for us: leave the rest to the workers */
    /* Only while fewer workers are awake than there are CPUs: then this
     * thread's CPU would otherwise idle (or wait for a wake-up); with every
     * CPU taken by a worker, a helper only adds contention on the queue.
     * And not while a worker is announced blocked: that pool runs blocking
     * items, and one would block the waiter long after its task is done.
     * Racy reads: a hint. */
    unsigned awake =
        atomic_load_explicit(&pool->live, memory_order_relaxed) -
        atomic_load_explicit(&pool->sleepers, memory_order_relaxed);
    if ((int)awake >= (int)pool->cpus ||
        atomic_load_explicit(&pool->blocked, memory_order_relaxed) != 0)
      return 0;
    it = bwrt__gq_pop(&pool->queue);
    if (it == NULL)
      return 0;
  }
  run_observed(pool, NULL, it);
  /* Counted as progress for the gate (bwrt__pool_progress) and as completed
   * in the stats, in batches (see HELP_FLUSH). */
  if (++tls_help_count == HELP_FLUSH) {
    atomic_fetch_add_explicit(&pool->helped, tls_help_count,
                              memory_order_relaxed);
    tls_help_count = 0;
  }
  return 1;
}

enum { PARK_AGAIN = 0, PARK_WOKEN, PARK_EXIT, PARK_RETIRE };

/* Parks the worker until there may be work (see the park protocol at the
 * top). Returns PARK_AGAIN (work seen before waiting), PARK_WOKEN (took a
 * wake token: the caller is a searcher now), or PARK_EXIT / PARK_RETIRE
 * when the worker must leave. */
static int park(bwrt__worker *w) {
  bw_pool *pool = w->pool;
  int result = PARK_AGAIN;
  struct timespec deadline;
  int timed = 0;
  pthread_mutex_lock(&pool->park_mu);
  atomic_fetch_add_explicit(&pool->sleepers, 1, memory_order_seq_cst);
  for (;;) {
    if (bwrt__pool_has_work(pool))
      break;
    unsigned live = atomic_load_explicit(&pool->live, memory_order_relaxed);
    unsigned sleepers =
        atomic_load_explicit(&pool->sleepers, memory_order_relaxed);
    if (pool->stop) {
      result = PARK_EXIT;
      break;
    }
    if (pool->draining && sleepers == live)
      pthread_cond_signal(&pool->quiesce_cv);
    int rc;
    if (live > pool->min_workers) {
      if (!timed) {
        bwrt__deadline_in_ms(&deadline, pool->idle_timeout_ms);
        timed = 1;
      }
      rc = pthread_cond_timedwait(&pool->park_cv, &pool->park_mu, &deadline);
    } else {
      timed = 0;
      rc = pthread_cond_wait(&pool->park_cv, &pool->park_mu);
    }
    if (pool->wake_tokens > 0) {
      pool->wake_tokens--;
      result = PARK_WOKEN;
      break;
    }
    if (rc == ETIMEDOUT && !bwrt__pool_has_work(pool) &&
        atomic_load_explicit(&pool->live, memory_order_relaxed) >
            pool->min_workers) {
      result = PARK_RETIRE;
      break;
    }
  }
  atomic_fetch_sub_explicit(&pool->sleepers, 1, memory_order_seq_cst);
  if (result == PARK_RETIRE) {
    atomic_fetch_sub_explicit(&pool->live, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&pool->retired, 1, memory_order_relaxed);
    w->state = BWRT__SLOT_ZOMBIE; /* joined and reused by a later spawn */
    if (pool->draining)
      pthread_cond_signal(&pool->quiesce_cv);
    const bw_observer *o = bwrt__obs();
    if (o != NULL && o->worker_added_or_retired != NULL)
      o->worker_added_or_retired(o->user, pool->id, 2);
  }
  pthread_mutex_unlock(&pool->park_mu);
  return result;
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

static void *worker_main(void *arg) {
  bwrt__worker *w = arg;
  bw_pool *pool = w->pool;
  uint64_t pool_id = pool->id;
  unsigned index = w->index;
  char name[16];
  pthread_setname_np(pthread_self(),
                     bwrt__thread_name(name, pool->name, index));
  tls_worker = w;
  w->rng = (uint32_t)(index * 2654435761u) | 1u;

  const bw_observer *o = bwrt__obs();
  if (o != NULL && o->worker_started != NULL)
    o->worker_started(o->user, pool_id, index);
  int searching = 0; /* counted in pool->searching */
  for (;;) {
    bwrt__item *it = w->run_next;
    if (it != NULL)
      w->run_next = NULL;
    else
      it = find_work(w);
    if (it != NULL) {
      /* The last searcher to find work hands the search on, so a burst
       * wakes the pool one worker at a time. */
      if (searching) {
        searching = 0;
        if (atomic_fetch_sub_explicit(&pool->searching, 1,
                                      memory_order_seq_cst) == 1 &&
            bwrt__pool_has_work(pool))
          notify_work(pool);
      }
      run_item(w, it);
      continue;
    }
    if (!searching) {
      searching = 1;
      atomic_fetch_add_explicit(&pool->searching, 1, memory_order_seq_cst);
    }
    int spins = 0;
    while (spins < PARK_SPINS && !bwrt__pool_has_work(pool)) {
      bwrt__cpu_relax();
      if ((++spins & 63) == 0)
        sched_yield(); /* let a preempted submitter finish its push */
    }
    if (spins < PARK_SPINS)
      continue;
    searching = 0;
    atomic_fetch_sub_explicit(&pool->searching, 1, memory_order_seq_cst);
    int r = park(w);
    if (r == PARK_WOKEN)
      searching = 1; /* the waker counted us */
    else if (r != PARK_AGAIN)
      break;
  }
  /* After park() returned EXIT/RETIRE only the joiner may reuse `w`, and it
   * joins this thread first; the pool outlives the join. */
  tls_worker = NULL;
  o = bwrt__obs();
  if (o != NULL && o->worker_stopped != NULL)
    o->worker_stopped(o->user, pool_id, index);
  return NULL;
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

  /* Workers start with every signal blocked, so the program's handlers run
   * on its own threads, never in the middle of someone's work item. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = pthread_create(&w->thread, NULL, worker_main, w);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0) {
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

/* ---- pools -------------------------------------------------------------- */

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
  if (tls_worker != NULL && tls_worker->pool == pool)
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

/* The outermost call of a blocked span counts the worker as blocked; the
 * first call in the span that asks for compensation (outermost or nested,
 * e.g. the tool's hook inside a user bracket on a plain pool) does the
 * compensation check, once per span. */
int bwrt__pool_notify_blocked(int compensate) {
  bwrt__worker *w = tls_worker;
  if (w == NULL)
    return -EPERM;
  bw_pool *pool = w->pool;
  if (w->blocked_depth++ == 0) {
    w->compensation_checked = 0;
    atomic_fetch_add_explicit(&pool->blocked, 1, memory_order_relaxed);
    /* Items this worker queued locally would wait out the block: let a
     * parked worker come and steal them. */
    if (bwrt__deque_size(&w->deque) > 0)
      notify_work(pool);
  }
  if (!compensate || w->compensation_checked)
    return 0;
  w->compensation_checked = 1;
  pthread_mutex_lock(&pool->park_mu);
  unsigned live = atomic_load_explicit(&pool->live, memory_order_relaxed);
  unsigned blocked = atomic_load_explicit(&pool->blocked, memory_order_relaxed);
  /* Keep min_workers workers that are not blocked. */
  if (live < blocked + pool->min_workers)
    (void)bwrt__pool_spawn_locked(pool, 1);
  pthread_mutex_unlock(&pool->park_mu);
  return 0;
}

int bw_pool_notify_blocked(void) {
  bwrt__worker *w = tls_worker;
  return bwrt__pool_notify_blocked(w != NULL &&
                                   (w->pool->flags & BW_POOL_COMPENSATE));
}

int bw_pool_notify_unblocked(void) {
  bwrt__worker *w = tls_worker;
  if (w == NULL)
    return -EPERM;
  if (w->blocked_depth == 0)
    return -EINVAL;
  if (--w->blocked_depth == 0)
    atomic_fetch_sub_explicit(&w->pool->blocked, 1, memory_order_relaxed);
  return 0;
}

/* ---- work items --------------------------------------------------------- */

typedef struct work_item {
  bwrt__item base;
  void (*fn)(void *arg);
  void *arg;
} work_item;

_Static_assert(sizeof(work_item) <= BWRT__ALLOC_SMALL, "work_item too big");

static void run_work_item(bwrt__item *it) {
  work_item *wi = (work_item *)it;
  void (*fn)(void *) = wi->fn;
  void *arg = wi->arg;
  bwrt__free(BWRT__ALLOC_SMALL_CLASS, wi);
  fn(arg);
}

int bw_submit(bw_pool *pool, void (*fn)(void *arg), void *arg) {
  if (fn == NULL)
    return -EINVAL;
  pool = bwrt__pool_resolve(pool);
  if (pool == NULL)
    return -errno;
  work_item *wi = bwrt__alloc(BWRT__ALLOC_SMALL_CLASS);
  if (wi == NULL)
    return -ENOMEM;
  wi->base.run = run_work_item;
  wi->fn = fn;
  wi->arg = arg;
  int rc = bwrt__pool_push(pool, &wi->base, 0);
  if (rc != 0)
    bwrt__free(BWRT__ALLOC_SMALL_CLASS, wi);
  return rc;
}
