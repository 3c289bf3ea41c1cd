/* worker.c - the worker loop: how items reach workers (pushes, a worker's
 * run_next) and how workers find, run and wait for them (stealing, parking,
 * helping waiters), and the blocked spans workers announce.
 *
 * Invariants:
 *  - A worker looks for work in this order: its run_next, its own deque
 *    (newest first), the global FIFO queue, then the other workers' deques
 *    (oldest first).
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
 *  - A run_next item (a worker's or a helping waiter's) is seen by no other
 *    thread: only its owner runs it, so pushing it wakes nobody.
 *  - Lock order: park_mu -> queue.ov_mu.
 *  - Every step of an item's way from push to run is in this file, and its
 *    helpers are static, so they stay inlined into the hot paths: built
 *    -fPIC, GCC does not inline a call to a function that is not static.
 */
#include <errno.h>
#include <sched.h>

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
 * wants every one), its enqueue time. Returns the observer copy. `queued`
 * is 0 for a run_next item: it waits in no queue, so the stats do not
 * sample it (a chain run link after link on one worker would otherwise read
 * the clock twice per 32 links for a "queue wait" that is only the time
 * its antecedent's continuations took to fire). */
static inline const bwrt__observer_copy *
stamp_item(bw_pool *pool, bwrt__item *it, int queued) {
  const bwrt__observer_copy *oc = bwrt__obs_copy();
  unsigned wants = oc != NULL ? oc->wants : 0;
  uint64_t enqueue_ns = 0;
  unsigned timed = 0, sample = tls_sample;
  it->id = (wants & BWRT__WANT_ID) ? new_item_id(pool) : 0;
  if (wants & BWRT__WANT_ENQUEUE_NS) {
    /* The observer's gate (observer.h): while it holds a time T, only
     * sampled items read the clock and the others carry T. */
    tls_sample = sample + 1;
    uint64_t gate = item_gate_of(&oc->obs);
    timed = gate == 0 || (sample & oc->sample_mask) == 0;
    enqueue_ns = timed ? bwrt__now_ns() : gate;
  } else if (queued) {
    tls_sample = sample + 1;
    if ((sample & BWRT__STATS_SAMPLE_MASK) == 0) {
      timed = 1;
      enqueue_ns = bwrt__now_ns();
    }
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
  const bwrt__observer_copy *oc = stamp_item(pool, it, 0);
  /* Not visible to other threads, so nobody needs waking: this thread
   * runs it next. */
  *slot = it;
  if (oc != NULL && oc->obs.item_enqueued != NULL)
    oc->obs.item_enqueued(oc->obs.user, pool->id, it->id, it->enqueue_ns,
                          bwrt__pool_queue_length(pool));
  return 1;
}

int bwrt__pool_push(bw_pool *pool, bwrt__item *it, int flags) {
  const bwrt__observer_copy *oc = stamp_item(pool, it, 1);
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

/* Always inlined: the worker loop's hot path, and the frame a tool's stack
 * shows above an item's function (worker_main, as before it had a second
 * caller in bwrt__worker_run_one). */
static inline __attribute__((always_inline)) void run_item(bwrt__worker *w,
                                                           bwrt__item *it) {
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

/* ---- parking and the worker thread -------------------------------------- */

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

int bwrt__worker_run_one(bwrt__worker *w) {
  bwrt__item *it = w->run_next;
  if (it != NULL)
    w->run_next = NULL;
  else
    it = find_work(w);
  if (it == NULL)
    return 0;
  /* Nested inside the item this worker is running: that one still runs
   * after this returns (current_item, the stats' busy count). */
  int running = atomic_load_explicit(&w->running, memory_order_relaxed);
  run_item(w, it);
  atomic_store_explicit(&w->running, running, memory_order_relaxed);
  return 1;
}

/* Starts w's thread (see bwrt__thread_start). */
int bwrt__worker_start(bwrt__worker *w) {
  return bwrt__thread_start(&w->thread, worker_main, w);
}

/* ---- blocked spans ------------------------------------------------------ */

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
