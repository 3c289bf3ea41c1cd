/* internal.h - the runtime's private types, shared by its source files.
 *
 * Invariants (each file repeats the ones its code depends on):
 *  - An item (bw__item) is owned by exactly one queue or one worker at a
 *    time; item->run() runs it once and disposes of it.
 *  - Worker structs live in pool->slots and are freed only by
 *    bw_pool_destroy, so stealers may read any slot's deque at any time.
 *  - Lock order, outermost first: token->mu -> pool->gate_mu ->
 *    pool->park_mu -> queue.ov_mu -> waiter->mu. Observer callbacks may run
 *    under park_mu or the registry lock; they never call back in.
 */
#ifndef BW_RUNTIME_INTERNAL_H
#define BW_RUNTIME_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "blockwatch/observer.h"
#include "blockwatch/runtime.h"

#define BW__CACHE_LINE 64

/* Thread-locals of the runtime. initial-exec: a fixed offset from the
 * thread pointer instead of a __tls_get_addr call on every submit. It uses
 * ~175 bytes of the static TLS surplus glibc reserves for such libraries, so
 * dlopen() of the runtime works too (tested). */
#define BW__TLS _Thread_local __attribute__((tls_model("initial-exec")))

/* ---- clock -------------------------------------------------------------- */

static inline uint64_t bw__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A spin-loop hint: lets the sibling hyperthread run, saves power. */
static inline void bw__cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* ---- items -------------------------------------------------------------- */

typedef struct bw__item bw__item;
struct bw__item {
  bw__item *next;            /* link in the global queue */
  void (*run)(bw__item *it); /* runs the item once and disposes of it */
  uint64_t id;               /* observer item id; 0 = none assigned */
  uint64_t enqueue_ns;       /* 0 = not timestamped (stats are sampled) */
  /* 1: enqueue_ns came from the clock; 0: it is 0 or an observer's
   * item_time_gate value (observer.h), which is no queue-wait start. */
  unsigned timed;
};

/* ---- block recycling (alloc.c) ------------------------------------------ */

enum { BW__ALLOC_SMALL_CLASS = 0, BW__ALLOC_LARGE_CLASS, BW__ALLOC_CLASSES };
#define BW__ALLOC_SMALL 64  /* work items */
#define BW__ALLOC_LARGE 128 /* tasks */

/* A block of the class's size, cache-line aligned, or NULL. */
void *bw__alloc(int cls);
/* Returns a block from bw__alloc(cls) for reuse by any thread. */
void bw__free(int cls, void *p);
/* How many chunks (blocks are carved from chunks of 64 KiB) of the class
 * are held from the C library; 0 where blocks are not recycled (under
 * AddressSanitizer). For tests. */
size_t bw__alloc_chunks(int cls);
/* How many chunks of the class were ever taken from the C library. For
 * tests. */
size_t bw__alloc_chunks_made(int cls);
/* How long cached blocks may sit unused on the shared stack before they
 * are released (default 10 s). For tests. */
void bw__alloc_set_decay_ms(uint64_t ms);

/* ---- work-stealing deque (deque.c) -------------------------------------- */

typedef struct bw__deque_buf bw__deque_buf;
struct bw__deque_buf {
  int64_t mask;           /* capacity - 1; capacity is a power of two */
  bw__deque_buf *retired; /* older, smaller buffers freed with the deque */
  _Atomic(bw__item *) cells[];
};

typedef struct bw__deque {
  _Alignas(BW__CACHE_LINE) _Atomic int64_t top;    /* stealers take here */
  _Alignas(BW__CACHE_LINE) _Atomic int64_t bottom; /* owner pushes/pops */
  _Atomic(bw__deque_buf *) buf;
} bw__deque;

int bw__deque_init(bw__deque *dq);
void bw__deque_free(bw__deque *dq);
/* Owner only. Returns -ENOMEM when the deque could not grow. */
int bw__deque_push(bw__deque *dq, bw__item *it);
/* Owner only: the newest item, or NULL. */
bw__item *bw__deque_pop(bw__deque *dq);
/* Any thread: the oldest item, or NULL (empty or lost a race). */
bw__item *bw__deque_steal(bw__deque *dq, int *lost_race);
/* Any thread: a racy size, exact when nobody pushes or pops. */
size_t bw__deque_size(bw__deque *dq);

/* ---- global FIFO queue (gqueue.c) --------------------------------------- */

typedef struct bw__gq_cell {
  _Atomic size_t seq;
  bw__item *item;
} bw__gq_cell;

typedef struct bw__gqueue {
  _Alignas(BW__CACHE_LINE) _Atomic size_t head; /* consumers' ticket */
  _Alignas(BW__CACHE_LINE) _Atomic size_t tail; /* producers' ticket */
  _Alignas(BW__CACHE_LINE) bw__gq_cell *cells;
  size_t mask;
  _Atomic size_t ov_len; /* items in the overflow list */
  pthread_mutex_t ov_mu; /* protects ov_head/ov_tail and closed */
  bw__item *ov_head, *ov_tail;
  int closed;
} bw__gqueue;

int bw__gq_init(bw__gqueue *q);
void bw__gq_free(bw__gqueue *q);
/* Any thread. Returns 0, or -ESHUTDOWN once closed unless `internal`
 * (internal pushes always land: the overflow list takes them). */
int bw__gq_push(bw__gqueue *q, bw__item *it, int internal);
/* Refuses further non-internal pushes; returns 1 if already closed. */
int bw__gq_close(bw__gqueue *q);
/* Any thread: the oldest item, or NULL. */
bw__item *bw__gq_pop(bw__gqueue *q);
/* Items queued (seq_cst reads; may count a push still being written). */
size_t bw__gq_length(bw__gqueue *q);

/* ---- queue-wait histogram (stats.c) ------------------------------------- */

#define BW__HIST_BUCKETS 496

typedef struct bw__hist {
  /* Written by one thread (the owning worker) with relaxed stores; read by
   * bw_pool_stats with relaxed loads. */
  _Atomic uint64_t count[BW__HIST_BUCKETS];
  _Atomic uint64_t min_ns, max_ns, samples;
} bw__hist;

void bw__hist_init(bw__hist *h);
void bw__hist_add(bw__hist *h, uint64_t ns);
/* Merges src into a plain (non-atomic) bucket array. */
void bw__hist_merge(const bw__hist *src, uint64_t *buckets, uint64_t *min_ns,
                    uint64_t *max_ns, uint64_t *samples);
/* The lower bound of the bucket holding the q-quantile (0..1). */
uint64_t bw__hist_quantile(const uint64_t *buckets, uint64_t samples, double q);

/* ---- workers and pools (pool.c) ----------------------------------------- */

enum { BW__SLOT_FREE = 0, BW__SLOT_LIVE, BW__SLOT_ZOMBIE };

typedef struct bw__worker {
  bw__deque deque;
  bw_pool *pool;
  pthread_t thread;
  unsigned slot;            /* index in pool->slots */
  unsigned index;           /* <n> in the thread name, unique in the pool */
  int state;                /* BW__SLOT_*, under pool->park_mu */
  unsigned blocked_depth;   /* notify_blocked nesting; owner only */
  int compensation_checked; /* in this blocked span; owner only */
  bw__item *run_next;       /* runs before anything queued; owner only */
  uint32_t rng;             /* victim choice; owner only */
  /* Owner-written counters (relaxed stores, read by stats). */
  _Atomic uint64_t started;
  _Atomic uint64_t completed;
  _Atomic int running;
  bw__hist hist;
} bw__worker;

typedef struct bw__timer_heap {
  bw_task **items; /* min-heap on task deadline */
  size_t len, cap;
} bw__timer_heap;

struct bw_pool {
  uint64_t id;
  char name[16];
  unsigned min_workers, max_workers, starvation_ms, idle_timeout_ms, flags;
  int is_default;
  /* BW__POOL_LIVE until destroyed; checked on entry to catch most uses of
   * a destroyed pool (a debugging aid: the memory is freed). */
  uint32_t magic;

  bw__gqueue queue; /* the global FIFO queue; closed by destroy */

  /* Workers: park_mu protects slot states, live, stop and the condvars. */
  _Alignas(BW__CACHE_LINE) _Atomic unsigned sleepers;
  /* Workers looking for work (spinning, or woken and not yet running):
   * while one is, pushers need not wake anyone. */
  _Atomic unsigned searching;
  unsigned wake_tokens; /* signals not yet taken by a waking worker */
  unsigned cpus;        /* online CPUs at creation (see bw__help_run_one) */
  pthread_mutex_t park_mu;
  pthread_cond_t park_cv;    /* parked workers wait here */
  pthread_cond_t quiesce_cv; /* bw_pool_destroy waits here */
  bw__worker **slots;        /* max_workers entries */
  _Atomic unsigned nslots;   /* slots ever used; only grows */
  _Atomic unsigned live;     /* LIVE workers (written under park_mu) */
  unsigned next_index;
  int stop;     /* workers exit once they find no work */
  int draining; /* destroy is waiting for quiescence */
  _Atomic unsigned blocked;
  _Atomic uint64_t injected, compensated, retired;
  /* Waiters off the pool that run its queued items (see bw__help_enter);
   * help_closed is set by destroy, which then waits for helpers == 0. */
  _Atomic unsigned helpers;
  _Atomic int help_closed;
  _Atomic uint64_t helped; /* items run by helping waiters */
  _Atomic uint64_t next_item_id;

  /* Gate/timer thread: delays, starvation injection, joining retirees. */
  pthread_mutex_t gate_mu;
  pthread_cond_t gate_cv;
  pthread_t gate;
  int gate_started;
  int gate_stop;         /* under gate_mu */
  bw__timer_heap timers; /* under gate_mu */

  bw_pool *reg_next; /* the process-wide registry list (observer.c) */
};

/* The worker the calling thread is, or NULL. */
bw__worker *bw__current_worker(void);
enum {
  /* Continuations and timer completions: accepted while the pool drains
   * (outside submits are not). */
  BW__PUSH_INTERNAL = 1,
};
/* Queues an item (flags: BW__PUSH_*). */
int bw__pool_push(bw_pool *pool, bw__item *it, int flags);
/* For an item that continues what the calling thread (a worker of `pool`,
 * or a waiter helping it) just finished: keeps it as this thread's
 * run_next, unqueued and unseen by other threads, and returns 1; returns 0
 * (and does nothing) when this thread is neither or already has one. */
int bw__pool_push_run_next(bw_pool *pool, bw__item *it);
/* Formats a worker's thread name "<pool name>-<n>" (15 chars at most). */
char *bw__thread_name(char out[16], const char *pool_name, unsigned index);
#define BW__POOL_LIVE 0x6277706cu /* "bwpl" */
#define BW__POOL_DEAD 0xdead9001u
/* Resolves NULL to the default pool; NULL with errno ESHUTDOWN for a pool
 * that has been destroyed, EAGAIN when the default pool cannot exist. */
bw_pool *bw__pool_resolve(bw_pool *pool);
/* Starts one more worker if below max_workers; reason is the observer's
 * worker_added_or_retired reason (0 injection, 1 compensation). Caller holds
 * park_mu. Returns 0 or a negative errno. */
int bw__pool_spawn_locked(bw_pool *pool, int reason);
/* bw_pool_notify_blocked with the compensation decision made by the caller:
 * the user API compensates only on BW_POOL_COMPENSATE pools, a tool's hook
 * (its user asked for compensation) on any pool. Calls nest; the first
 * one in a blocked span that asks for compensation does the check. */
int bw__pool_notify_blocked(int compensate);
/* Joins retired workers; caller holds park_mu. */
void bw__pool_reap_locked(bw_pool *pool);
/* Helping waiters (bw_wait off the pool): enter returns 1 when the calling
 * thread may run the pool's queued items until it calls leave, 0 when the
 * pool is being destroyed (or does not allow helping). */
int bw__help_enter(bw_pool *pool);
void bw__help_leave(bw_pool *pool);
/* Between enter and leave: runs the continuation this thread kept to run
 * next, else the oldest item of the global queue; returns 0 when there was
 * none. leave queues a kept continuation for the workers. */
int bw__help_run_one(bw_pool *pool);
/* Racy but ordered (seq_cst) check for queued work anywhere in the pool. */
int bw__pool_has_work(bw_pool *pool);
size_t bw__pool_queue_length(bw_pool *pool);
/* Sum of items started by all workers: the gate's progress signal. */
uint64_t bw__pool_progress(bw_pool *pool);

/* ---- gate / timer thread (gate.c) --------------------------------------- */

int bw__gate_start(bw_pool *pool);
/* Stops the gate thread and cancels every pending delay. */
void bw__gate_stop(bw_pool *pool);
/* Adds a delay task (holding one reference for the heap). */
int bw__gate_add_timer(bw_pool *pool, bw_task *task);

/* ---- observer (observer.c) ---------------------------------------------- */

/* What the registered observer's callbacks need from the item paths,
 * computed once at registration so that a NULL callback costs nothing: no
 * id, no clock read, no call. */
enum {
  BW__WANT_ID = 1u << 0,         /* any item callback: items need ids */
  BW__WANT_ENQUEUE_NS = 1u << 1, /* item_enqueued or item_started */
  BW__WANT_START_NS = 1u << 2,   /* item_started */
  BW__WANT_END_NS = 1u << 3,     /* item_finished */
};

/* The runtime's immutable copy of a registered observer. */
typedef struct bw__observer_copy {
  bw_observer obs; /* first: a copy pointer is an observer pointer */
  unsigned wants;  /* BW__WANT_* */
  /* From item_time_sample_log2, at most the runtime's own stats sampling:
   * an item is timed whatever the gate says when (count & mask) == 0. */
  unsigned sample_mask;
} bw__observer_copy;

/* The runtime samples item queue waits for bw_pool_stats one item in
 * (this + 1) per submitting thread. */
#define BW__STATS_SAMPLE_MASK 31u

extern _Atomic(const bw__observer_copy *) bw__observer;

/* The registered observer's copy, or NULL: one relaxed load on the fast
 * path (plain loads on x86 either way). */
static inline const bw__observer_copy *bw__obs_copy(void) {
  if (atomic_load_explicit(&bw__observer, memory_order_relaxed) == NULL)
    return NULL;
  return atomic_load_explicit(&bw__observer, memory_order_acquire);
}

/* The registered observer, or NULL. */
static inline const bw_observer *bw__obs(void) {
  const bw__observer_copy *c = bw__obs_copy();
  return c != NULL ? &c->obs : NULL;
}

/* Calls the tool's attach function once per runtime copy (first pool). */
void bw__observer_attach_tool(void);
/* Adds/removes a pool in the registry; add announces it to the observer. */
void bw__registry_add(bw_pool *pool);
void bw__registry_remove(bw_pool *pool);

/* ---- cancellation registrations (cancel.c) ------------------------------ */

/* Something that honours a token. `fire` runs at most once, on the canceling
 * thread, with no lock held; it owns whatever reference the registration
 * kept alive. */
typedef struct bw__cancel_reg bw__cancel_reg;
struct bw__cancel_reg {
  bw__cancel_reg *prev, *next;
  void (*fire)(bw__cancel_reg *reg);
  int linked; /* under token->mu */
};

/* Links reg; returns 1 (and links nothing) when the token is already
 * canceled, 0 otherwise. The caller keeps a token reference until it has
 * called bw__token_unregister. */
int bw__token_register(bw_cancel_token *token, bw__cancel_reg *reg);
/* Unlinks reg. Returns 1 when it was still linked (fire will never run), 0
 * when a cancel took it (fire runs or has run: it owns the cleanup). */
int bw__token_unregister(bw_cancel_token *token, bw__cancel_reg *reg);
bw_cancel_token *bw__token_retain(bw_cancel_token *token);

/* ---- tasks (task.c) ----------------------------------------------------- */

/* Called by the gate: completes (or cancels) a delay task. */
void bw__task_fire_delay(bw_task *task, int canceled);
uint64_t bw__task_deadline(const bw_task *task);
/* The task the calling worker is running, or NULL. */
extern BW__TLS bw_task *bw__tls_task;

#endif /* BW_RUNTIME_INTERNAL_H */
