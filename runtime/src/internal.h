/* internal.h - the runtime's private types, shared by its source files.
 *
 * Invariants (each file repeats the ones its code depends on):
 *  - An item (bwrt__item) is owned by exactly one queue or one worker at a
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

#define BWRT__CACHE_LINE 64

/* Thread-locals of the runtime. initial-exec: a fixed offset from the
 * thread pointer instead of a __tls_get_addr call on every submit. It uses
 * ~175 bytes of the static TLS surplus glibc reserves for such libraries, so
 * dlopen() of the runtime works too (tested). */
#define BWRT__TLS _Thread_local __attribute__((tls_model("initial-exec")))

/* ---- clock -------------------------------------------------------------- */

static inline uint64_t bwrt__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The CLOCK_MONOTONIC time `ms` milliseconds from now, for
 * pthread_cond_timedwait on a condvar from bwrt__cond_init_monotonic (a
 * wall-clock step must not stretch or cut a timeout). */
static inline void bwrt__deadline_in_ms(struct timespec *ts, uint64_t ms) {
  clock_gettime(CLOCK_MONOTONIC, ts);
  ts->tv_sec += (time_t)(ms / 1000u);
  ts->tv_nsec += (long)(ms % 1000u) * 1000000L;
  if (ts->tv_nsec >= 1000000000L) {
    ts->tv_sec++;
    ts->tv_nsec -= 1000000000L;
  }
}

/* A condvar whose timed waits take CLOCK_MONOTONIC deadlines. */
static inline int bwrt__cond_init_monotonic(pthread_cond_t *cv) {
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  int rc = pthread_cond_init(cv, &attr);
  pthread_condattr_destroy(&attr);
  return rc;
}

/* The struct of `type` whose `member` ptr points to: how a callback that
 * gets an embedded node (a continuation, a cancel registration, a timer)
 * finds what it is embedded in. Like the kernel's container_of it drops a
 * const qualifier: assign the result to a const pointer where ptr was one. */
#define BWRT__CONTAINER_OF(ptr, type, member)                                  \
  ((type *)(void *)(((char *)(ptr)) - offsetof(type, member)))

/* A spin-loop hint: lets the sibling hyperthread run, saves power. */
static inline void bwrt__cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* ---- items -------------------------------------------------------------- */

typedef struct bwrt__item bwrt__item;
struct bwrt__item {
  bwrt__item *next;            /* link in the global queue */
  void (*run)(bwrt__item *it); /* runs the item once and disposes of it */
  uint64_t id;                 /* observer item id; 0 = none assigned */
  uint64_t enqueue_ns;         /* 0 = not timestamped (stats are sampled) */
  /* 1: enqueue_ns came from the clock; 0: it is 0 or an observer's
   * item_time_gate value (observer.h), which is no queue-wait start. */
  unsigned timed;
};

/* ---- block recycling (alloc.c) ------------------------------------------ */

enum {
  BWRT__ALLOC_SMALL_CLASS = 0,
  BWRT__ALLOC_LARGE_CLASS,
  BWRT__ALLOC_CLASSES
};
#define BWRT__ALLOC_SMALL 64  /* work items */
#define BWRT__ALLOC_LARGE 128 /* tasks */

/* A block of the class's size, cache-line aligned, or NULL. */
void *bwrt__alloc(int cls);
/* Returns a block from bwrt__alloc(cls) for reuse by any thread. */
void bwrt__free(int cls, void *p);
/* How many chunks (blocks are carved from chunks of 64 KiB) of the class
 * are held from the C library; 0 where blocks are not recycled (under
 * AddressSanitizer). For tests. */
size_t bwrt__alloc_chunks(int cls);
/* How many chunks of the class were ever taken from the C library. For
 * tests. */
size_t bwrt__alloc_chunks_made(int cls);
/* How long cached blocks may sit unused on the shared stack before they
 * are released (default 10 s). For tests. */
void bwrt__alloc_set_decay_ms(uint64_t ms);

/* ---- work-stealing deque (deque.c) -------------------------------------- */

typedef struct bwrt__deque_buf bwrt__deque_buf;
struct bwrt__deque_buf {
  int64_t mask;             /* capacity - 1; capacity is a power of two */
  bwrt__deque_buf *retired; /* older, smaller buffers freed with the deque */
  _Atomic(bwrt__item *) cells[];
};

typedef struct bwrt__deque {
  _Alignas(BWRT__CACHE_LINE) _Atomic int64_t top;    /* stealers take here */
  _Alignas(BWRT__CACHE_LINE) _Atomic int64_t bottom; /* owner pushes/pops */
  _Atomic(bwrt__deque_buf *) buf;
} bwrt__deque;

int bwrt__deque_init(bwrt__deque *dq);
void bwrt__deque_free(bwrt__deque *dq);
/* Owner only. Returns -ENOMEM when the deque could not grow. */
int bwrt__deque_push(bwrt__deque *dq, bwrt__item *it);
/* Owner only: the newest item, or NULL. */
bwrt__item *bwrt__deque_pop(bwrt__deque *dq);
/* Any thread: the oldest item, or NULL (empty or lost a race). */
bwrt__item *bwrt__deque_steal(bwrt__deque *dq, int *lost_race);
/* Any thread: a racy size, exact when nobody pushes or pops. */
size_t bwrt__deque_size(bwrt__deque *dq);

/* ---- global FIFO queue (gqueue.c) --------------------------------------- */

typedef struct bwrt__gq_cell {
  _Atomic size_t seq;
  bwrt__item *item;
} bwrt__gq_cell;

typedef struct bwrt__gqueue {
  _Alignas(BWRT__CACHE_LINE) _Atomic size_t head; /* consumers' ticket */
  _Alignas(BWRT__CACHE_LINE) _Atomic size_t tail; /* producers' ticket */
  _Alignas(BWRT__CACHE_LINE) bwrt__gq_cell *cells;
  size_t mask;
  _Atomic size_t ov_len; /* items in the overflow list */
  pthread_mutex_t ov_mu; /* protects ov_head/ov_tail and closed */
  bwrt__item *ov_head, *ov_tail;
  int closed;
} bwrt__gqueue;

int bwrt__gq_init(bwrt__gqueue *q);
void bwrt__gq_free(bwrt__gqueue *q);
/* Any thread. Returns 0, or -ESHUTDOWN once closed unless `internal`
 * (internal pushes always land: the overflow list takes them). */
int bwrt__gq_push(bwrt__gqueue *q, bwrt__item *it, int internal);
/* Refuses further non-internal pushes; returns 1 if already closed. */
int bwrt__gq_close(bwrt__gqueue *q);
/* Any thread: the oldest item, or NULL. */
bwrt__item *bwrt__gq_pop(bwrt__gqueue *q);
/* Items queued (seq_cst reads; may count a push still being written). */
size_t bwrt__gq_length(bwrt__gqueue *q);

/* ---- queue-wait histogram (stats.c) ------------------------------------- */

#define BWRT__HIST_BUCKETS 496

typedef struct bwrt__hist {
  /* Written by one thread (the owning worker) with relaxed stores; read by
   * bw_pool_stats with relaxed loads. */
  _Atomic uint64_t count[BWRT__HIST_BUCKETS];
  _Atomic uint64_t min_ns, max_ns, samples;
} bwrt__hist;

void bwrt__hist_init(bwrt__hist *h);
void bwrt__hist_add(bwrt__hist *h, uint64_t ns);
/* Merges src into a plain (non-atomic) bucket array. */
void bwrt__hist_merge(const bwrt__hist *src, uint64_t *buckets,
                      uint64_t *min_ns, uint64_t *max_ns, uint64_t *samples);
/* The lower bound of the bucket holding the q-quantile (0..1). */
uint64_t bwrt__hist_quantile(const uint64_t *buckets, uint64_t samples,
                             double q);

/* ---- gate / timer thread (gate.c) --------------------------------------- */

/* A deadline in a pool's timer heap, embedded in what waits for it (a delay
 * task, which finds itself with BWRT__CONTAINER_OF). Its owner keeps it
 * alive from bwrt__gate_add_timer until fire has run. */
typedef struct bwrt__timer bwrt__timer;
struct bwrt__timer {
  uint64_t deadline_ns; /* bwrt__now_ns() time; fixed while in the heap */
  /* Runs once, with no runtime lock held: canceled == 0 when the deadline
   * passed, 1 when the gate stops or compaction takes the timer out. */
  void (*fire)(bwrt__timer *tm, int canceled);
  /* Whether the owner stopped waiting before the deadline (a delay canceled
   * early): firing it would change nothing but references, so the gate may
   * take it out of the heap early. Called under gate_mu. */
  int (*resolved)(const bwrt__timer *tm);
};

/* A heap entry carries a copy of its timer's deadline, so sifting compares
 * entries in one array instead of reading every timer it passes. */
typedef struct bwrt__timer_entry {
  uint64_t deadline_ns;
  bwrt__timer *tm;
} bwrt__timer_entry;

typedef struct bwrt__timer_heap {
  bwrt__timer_entry *items; /* 4-ary min-heap on deadline_ns */
  size_t len, cap;
} bwrt__timer_heap;

int bwrt__gate_start(bw_pool *pool);
/* Stops the gate thread and fires every pending timer as canceled. */
void bwrt__gate_stop(bw_pool *pool);
/* Adds a timer; -ESHUTDOWN once the gate stops, -ENOMEM. */
int bwrt__gate_add_timer(bw_pool *pool, bwrt__timer *tm);

/* ---- workers and pools (pool.c, worker.c, spawn.c) ---------------------- */

enum { BWRT__SLOT_FREE = 0, BWRT__SLOT_LIVE, BWRT__SLOT_ZOMBIE };

typedef struct bwrt__worker {
  bwrt__deque deque;
  bw_pool *pool;
  pthread_t thread;
  unsigned slot;            /* index in pool->slots */
  unsigned index;           /* <n> in the thread name, unique in the pool */
  int state;                /* BWRT__SLOT_*, under pool->park_mu */
  unsigned blocked_depth;   /* notify_blocked nesting; owner only */
  int compensation_checked; /* in this blocked span; owner only */
  bwrt__item *run_next;     /* runs before anything queued; owner only */
  uint32_t rng;             /* victim choice; owner only */
  /* Owner-written counters (relaxed stores, read by stats). */
  _Atomic uint64_t started;
  _Atomic uint64_t completed;
  _Atomic int running;
  bwrt__hist hist;
} bwrt__worker;

struct bw_pool {
  uint64_t id;
  char name[16];
  unsigned min_workers, max_workers, starvation_ms, idle_timeout_ms, flags;
  int is_default;
  /* BWRT__POOL_LIVE until destroyed; checked on entry to catch most uses of
   * a destroyed pool (a debugging aid: the memory is freed). */
  uint32_t magic;

  bwrt__gqueue queue; /* the global FIFO queue; closed by destroy */

  /* Workers: park_mu protects slot states, live, stop and the condvars. */
  _Alignas(BWRT__CACHE_LINE) _Atomic unsigned sleepers;
  /* Workers looking for work (spinning, or woken and not yet running):
   * while one is, pushers need not wake anyone. */
  _Atomic unsigned searching;
  unsigned wake_tokens; /* signals not yet taken by a waking worker */
  unsigned cpus;        /* online CPUs at creation (see bwrt__help_run_one) */
  pthread_mutex_t park_mu;
  pthread_cond_t park_cv;    /* parked workers wait here */
  pthread_cond_t quiesce_cv; /* bw_pool_destroy waits here */
  bwrt__worker **slots;      /* max_workers entries */
  _Atomic unsigned nslots;   /* slots ever used; only grows */
  _Atomic unsigned live;     /* LIVE workers (written under park_mu) */
  unsigned next_index;
  int stop;     /* workers exit once they find no work */
  int draining; /* destroy is waiting for quiescence */
  _Atomic unsigned blocked;
  _Atomic uint64_t injected, compensated, retired;
  /* Waiters off the pool that run its queued items (see bwrt__help_enter);
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
  int gate_stop;           /* under gate_mu */
  bwrt__timer_heap timers; /* under gate_mu */

  bw_pool *reg_next; /* the process-wide registry list (observer.c) */

  /* Made on first use, freed with the pool (blocking.c, fd_ready.c). */
  _Atomic(struct bwrt__blocking *) blocking;
  _Atomic(struct bwrt__poller *) poller;
  /* Set by destroy's stops: neither is made from then on. */
  _Atomic int offload_closed;
};

#define BWRT__POOL_LIVE 0x6277706cu /* "bwpl" */
#define BWRT__POOL_DEAD 0xdead9001u

/* pool.c: a pool's life. */

/* Resolves NULL to the default pool; NULL with errno ESHUTDOWN for a pool
 * that has been destroyed, EAGAIN when the default pool cannot exist. */
bw_pool *bwrt__pool_resolve(bw_pool *pool);

/* worker.c: the worker loop, pushes, helping waiters, blocked spans. */

/* The worker the calling thread is, or NULL. */
bwrt__worker *bwrt__current_worker(void);
enum {
  /* Continuations and timer completions: accepted while the pool drains
   * (outside submits are not). */
  BWRT__PUSH_INTERNAL = 1,
};
/* Queues an item (flags: BWRT__PUSH_*). */
int bwrt__pool_push(bw_pool *pool, bwrt__item *it, int flags);
/* For an item that continues what the calling thread (a worker of `pool`,
 * or a waiter helping it) just finished: keeps it as this thread's
 * run_next, unqueued and unseen by other threads, and returns 1; returns 0
 * (and does nothing) when this thread is neither or already has one. */
int bwrt__pool_push_run_next(bw_pool *pool, bwrt__item *it);
/* Racy but ordered (seq_cst) check for queued work anywhere in the pool. */
int bwrt__pool_has_work(bw_pool *pool);
size_t bwrt__pool_queue_length(bw_pool *pool);
/* Sum of items started by all workers: the gate's progress signal. */
uint64_t bwrt__pool_progress(bw_pool *pool);
/* Helping waiters (bw_wait off the pool): enter returns 1 when the calling
 * thread may run the pool's queued items until it calls leave, 0 when the
 * pool is being destroyed (or does not allow helping). */
int bwrt__help_enter(bw_pool *pool);
void bwrt__help_leave(bw_pool *pool);
/* Between enter and leave: runs the continuation this thread kept to run
 * next, else the oldest item of the global queue; returns 0 when there was
 * none. leave queues a kept continuation for the workers. */
int bwrt__help_run_one(bw_pool *pool);
/* bw_pool_notify_blocked with the compensation decision made by the caller:
 * the user API compensates only on BW_POOL_COMPENSATE pools, a tool's hook
 * (its user asked for compensation) on any pool. Calls nest; the first
 * one in a blocked span that asks for compensation does the check. */
int bwrt__pool_notify_blocked(int compensate);
/* Starts the thread of w, a slot just made LIVE (the thread's body lives
 * in worker.c). Returns pthread_create's result. */
int bwrt__worker_start(bwrt__worker *w);

/* spawn.c: starting, naming and joining threads. */

/* pthread_create with every signal blocked in the new thread; returns
 * pthread_create's result. */
int bwrt__thread_start(pthread_t *thread, void *(*fn)(void *arg), void *arg);
/* Formats a worker's thread name "<pool name>-<n>" (15 chars at most). */
char *bwrt__thread_name(char out[16], const char *pool_name, unsigned index);
/* Starts one more worker if below max_workers; reason is the observer's
 * worker_added_or_retired reason (0 injection, 1 compensation). Caller holds
 * park_mu. Returns 0 or a negative errno. */
int bwrt__pool_spawn_locked(bw_pool *pool, int reason);
/* Joins retired workers; caller holds park_mu. */
void bwrt__pool_reap_locked(bw_pool *pool);

/* ---- observer (observer.c) ---------------------------------------------- */

/* What the registered observer's callbacks need from the item paths,
 * computed once at registration so that a NULL callback costs nothing: no
 * id, no clock read, no call. */
enum {
  BWRT__WANT_ID = 1u << 0,         /* any item callback: items need ids */
  BWRT__WANT_ENQUEUE_NS = 1u << 1, /* item_enqueued or item_started */
  BWRT__WANT_START_NS = 1u << 2,   /* item_started */
  BWRT__WANT_END_NS = 1u << 3,     /* item_finished */
};

/* The runtime's immutable copy of a registered observer. */
typedef struct bwrt__observer_copy {
  bw_observer obs; /* first: a copy pointer is an observer pointer */
  unsigned wants;  /* BWRT__WANT_* */
  /* From item_time_sample_log2, at most the runtime's own stats sampling:
   * an item is timed whatever the gate says when (count & mask) == 0. */
  unsigned sample_mask;
} bwrt__observer_copy;

/* The runtime samples item queue waits for bw_pool_stats one item in
 * (this + 1) per submitting thread. */
#define BWRT__STATS_SAMPLE_MASK 31u

extern _Atomic(const bwrt__observer_copy *) bwrt__observer;

/* The registered observer's copy, or NULL: one relaxed load on the fast
 * path (plain loads on x86 either way). */
static inline const bwrt__observer_copy *bwrt__obs_copy(void) {
  if (atomic_load_explicit(&bwrt__observer, memory_order_relaxed) == NULL)
    return NULL;
  return atomic_load_explicit(&bwrt__observer, memory_order_acquire);
}

/* The registered observer, or NULL. */
static inline const bw_observer *bwrt__obs(void) {
  const bwrt__observer_copy *c = bwrt__obs_copy();
  return c != NULL ? &c->obs : NULL;
}

/* Calls the tool's attach function once per runtime copy (first pool). */
void bwrt__observer_attach_tool(void);
/* Adds/removes a pool in the registry; add announces it to the observer. */
void bwrt__registry_add(bw_pool *pool);
void bwrt__registry_remove(bw_pool *pool);

/* ---- cancellation registrations (cancel.c) ------------------------------ */

/* Something that honours a token. `fire` runs at most once, on the canceling
 * thread, with no lock held; it owns whatever reference the registration
 * kept alive. */
typedef struct bwrt__cancel_reg bwrt__cancel_reg;
struct bwrt__cancel_reg {
  bwrt__cancel_reg *prev, *next;
  void (*fire)(bwrt__cancel_reg *reg);
  int linked; /* under token->mu */
};

/* Links reg; returns 1 (and links nothing) when the token is already
 * canceled, 0 otherwise. The caller keeps a token reference until it has
 * called bwrt__token_unregister. */
int bwrt__token_register(bw_cancel_token *token, bwrt__cancel_reg *reg);
/* Unlinks reg. Returns 1 when it was still linked (fire will never run), 0
 * when a cancel took it (fire runs or has run: it owns the cleanup). */
int bwrt__token_unregister(bw_cancel_token *token, bwrt__cancel_reg *reg);
bw_cancel_token *bwrt__token_retain(bw_cancel_token *token);

/* ---- offloading (blocking.c, fd_ready.c, parallel_for.c) -------------- */

typedef struct bwrt__blocking bwrt__blocking;
typedef struct bwrt__poller bwrt__poller;

/* Sets the calling thread's bw_thread_role (a BW_ROLE_* value); workers
 * need not: a worker is known by bwrt__current_worker(). The gate, the
 * poller and the blocking threads set theirs (blocking.c owns the TLS). */
void bwrt__set_thread_role(int role);
/* Called by bw_pool_destroy after the gate stopped (so no timer of a
 * descriptor wait fires any more): cancels every pending descriptor wait,
 * refuses new ones and stops the poller thread. */
void bwrt__poller_stop(bw_pool *pool);
/* Called by bw_pool_destroy after bwrt__poller_stop: refuses new blocking
 * jobs, cancels the queued ones and waits for the running ones. */
void bwrt__blocking_stop(bw_pool *pool);
/* Free what the stops left (the structs, which a running item may still
 * read); called with the pool, after its workers were joined. */
void bwrt__poller_free(bw_pool *pool);
void bwrt__blocking_free(bw_pool *pool);
/* worker.c: runs one item the calling worker finds (its run_next, its deque,
 * the global queue, a steal) as its main loop would; 0 when it found none.
 * For a worker that waits without blocking (bw_parallel_for). */
int bwrt__worker_run_one(bwrt__worker *w);
/* ---- waiter queues of the async primitives (sync.c) --------------------- */

/* Units and a FIFO of pending acquire tasks: the one mechanism under the
 * async semaphore, event and mutex (semaphore.c, event.c, async_mutex.c),
 * which embed it first in their public struct. A take completes at once
 * while a unit is free, else queues a waiter whose task a later give
 * completes; nothing blocks a thread. `manual`: a take does not consume
 * the unit and a give completes every waiter (a manual-reset event). */
typedef struct bwrt__sync_waiter bwrt__sync_waiter;
typedef struct bwrt__sync {
  pthread_mutex_t mu;     /* a leaf but for token->mu (see sync.c) */
  _Atomic unsigned units; /* written under mu, read racily by getters */
  unsigned cap;           /* units never exceed it */
  int manual;
  bwrt__sync_waiter *head, *tail; /* under mu, oldest first */
  _Atomic size_t waiting;         /* queued waiters; written under mu */
  _Atomic unsigned refs;          /* the owner's and one per waiter */
} bwrt__sync;

/* Allocates `size` bytes (the embedding public struct, whose first member
 * is the bwrt__sync) and sets the queue up; NULL with errno ENOMEM. */
bwrt__sync *bwrt__sync_create(size_t size, unsigned units, unsigned cap,
                              int manual);
/* A task that completes (result NULL) once a unit is taken, is canceled
 * when `token` is, or completes with (void *)(intptr_t)-ESHUTDOWN when the
 * queue is destroyed first. Continuations run on the calling worker's pool,
 * off the pool on the default pool. NULL with errno on failure. */
bw_task *bwrt__sync_take(bwrt__sync *s, bw_cancel_token *token);
/* Takes a unit if one is free at once: returns 1, else 0. */
int bwrt__sync_try_take(bwrt__sync *s);
/* Adds n units and hands them to waiters, oldest first. When units would
 * exceed cap: -EOVERFLOW and nothing changes, or with `saturate` units
 * stop at cap. */
int bwrt__sync_give(bwrt__sync *s, unsigned n, int saturate);
/* Sets units to 0 (a manual event's reset). */
void bwrt__sync_clear(bwrt__sync *s);
unsigned bwrt__sync_units(const bwrt__sync *s);
size_t bwrt__sync_waiting(const bwrt__sync *s);
/* Completes every queued waiter with -ESHUTDOWN and drops the owner's
 * reference; the memory goes when the last waiter's token is done too. */
void bwrt__sync_destroy(bwrt__sync *s);

/* ---- tasks (task.c) ----------------------------------------------------- */

/* The task the calling worker is running, or NULL. */
extern BWRT__TLS bw_task *bwrt__tls_task;

/* A node on a task's continuation list: fired exactly once, with the
 * resolved task as `done`, or with NULL when the task is freed unresolved
 * (a waiter that gave up leaves its node behind). */
typedef struct bwrt__cont bwrt__cont;
struct bwrt__cont {
  bwrt__cont *next;
  void (*fire)(bwrt__cont *c, bw_task *done);
};

/* What the waits of task_wait.c need to know of a task. */
int bwrt__task_live(const bw_task *task);
/* 0 completed, -ECANCELED canceled, 1 still pending (acquire). */
int bwrt__task_final_code(const bw_task *task);
/* Pushes c on the task's list, or fires it at once if it resolved. */
void bwrt__task_attach(bw_task *task, bwrt__cont *c);
bw_pool *bwrt__task_pool(const bw_task *task);
/* Whether the task runs as an item of its pool (bw_run, bw_then). */
int bwrt__task_needs_worker(const bw_task *task);

/* Moves the calling thread off `cpu` when it runs there and its affinity
 * mask holds another CPU, leaving the mask as it was (cpu_spread.c).
 * Returns 1 when it moved the thread, 0 when it had no reason or no way. */
int bwrt__leave_cpu(int cpu);

/* A yield of the runtime's own, made while it schedules a parallel loop's
 * participants (cpu_spread.c): not a call of the program, so it goes to
 * the kernel directly and an interposer (the shim) does not count it as
 * one. bwrt__tls_yields counts this thread's (the tests read it). */
void bwrt__yield(void);
extern _Thread_local unsigned long bwrt__tls_yields;

#endif /* BW_RUNTIME_INTERNAL_H */
