/* task.c - tasks: bw_run, continuations, delays, completion sources,
 * when_all/when_any (the blocking waits on a task are task_wait.c's).
 *
 * Invariants:
 *  - state goes PENDING -> RESOLVING -> COMPLETED|CANCELED exactly once; the
 *    thread whose CAS leaves PENDING writes `result` and then publishes the
 *    final state with a release store. Readers load state with acquire.
 *  - `conts` is a lock-free stack of continuation nodes (then-tasks, when
 *    nodes, waiters). Resolving swaps in CONTS_DONE and fires the nodes it
 *    took, oldest first; a node attached after that fires at once. So every
 *    node fires exactly once, after the final state is visible.
 *  - References: the caller's one, plus one held by the runtime while the
 *    task is queued (run/then) or in the timer heap (delay) or registered
 *    with a token (delay), plus one per continuation or when node that
 *    depends on it (released after that node fired). A continuation of a
 *    run/then task takes its reference only when it fires (the queue
 *    reference keeps the antecedent alive until then), and the one that runs
 *    next on the same worker inherits the queue reference instead (see
 *    then_fire). A continuation made by bw_then_consume holds the caller's
 *    reference from the start, counted in the tag of the list head (see
 *    HANDED_MAX). A waiter that timed out leaves its node in `conts`
 *    holding only the waiter; such nodes are fired with done == NULL when
 *    the task is freed.
 *  - magic is TASK_LIVE from creation until free; a call on a task whose
 *    magic is wrong returns -EINVAL. That check catches a use after free only
 *    while the memory has not been reused: it is a debugging aid, not a
 *    guarantee (a released task must not be used).
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

#define TASK_LIVE 0x6277746bu /* "bwtk" */
#define TASK_DEAD 0xdead7a5cu

enum task_kind { K_RUN, K_THEN, K_DELAY, K_SOURCE, K_WHEN_ALL, K_WHEN_ANY };
/* Beyond the public states: a resolution in progress. */
enum { S_RESOLVING = 3 };

static bwrt__cont conts_done_marker;
#define CONTS_DONE (&conts_done_marker)

/* The head pointer in `conts` carries in its low bits how many nodes on the
 * list hold a reference their creator handed over (bw_then_consume), up to
 * HANDED_MAX, which means "that many or more". Counted there, in the word
 * the attach CAS writes anyway, a finishing worker can tell that those
 * nodes hold every reference but its own (see sole_holder) without a
 * locked instruction. CONTS_DONE is never tagged. */
#define HANDED_MAX ((uintptr_t)7)
_Static_assert(_Alignof(bwrt__cont) > HANDED_MAX, "no room for the tag");

static inline bwrt__cont *untag(bwrt__cont *head) {
  return (bwrt__cont *)((uintptr_t)head & ~HANDED_MAX);
}

static inline unsigned handed_count(bwrt__cont *head) {
  return (unsigned)((uintptr_t)head & HANDED_MAX);
}

typedef struct when_node {
  bwrt__cont cont;
  bw_task *owner;
} when_node;

struct bw_task {
  /* How the runtime holds the task: queued as an item (run/then), or in the
   * pool's timer heap (delay), never both. First, so an item pointer is a
   * task pointer. */
  union {
    bwrt__item item;
    bwrt__timer timer;
  };
  uint32_t magic;
  int kind;
  _Atomic int state;
  _Atomic unsigned refs;
  void *result;
  bw_pool *pool;
  _Atomic(bwrt__cont *) conts;
  union {
    struct {
      void *(*fn)(void *arg);
      void *arg;
    } run;
    struct {
      void *(*fn)(bw_task *done, void *arg);
      void *arg;
      bw_task *antecedent;
      /* How many references on the antecedent this task holds (0-2): the
       * one its creator handed over (bw_then_consume); for a run/then
       * antecedent, which its queue reference keeps alive until its
       * continuations have fired, one taken or inherited only when this
       * node fires (see then_fire); for any other, one taken at once. */
      unsigned antecedent_refs;
      bwrt__cont node;
    } then;
    struct {
      bw_cancel_token *token;
      bwrt__cancel_reg reg;
    } delay;
    struct {
      _Atomic size_t left; /* nodes not yet fired */
      _Atomic int any_canceled;
      when_node *nodes;
    } when;
  } u;
};

_Static_assert(sizeof(bw_task) <= BWRT__ALLOC_LARGE, "bw_task too big");

BWRT__TLS bw_task *bwrt__tls_task;
/* The run/then task whose continuations this worker is firing right after
 * running it. */
static BWRT__TLS bw_task *tls_finishing;

static bw_task *task_new(int kind, bw_pool *pool, unsigned refs) {
  bw_task *t = bwrt__alloc(BWRT__ALLOC_LARGE_CLASS);
  if (t == NULL) {
    errno = ENOMEM;
    return NULL;
  }
  t->magic = TASK_LIVE;
  t->kind = kind;
  atomic_init(&t->state, BW_TASK_PENDING);
  atomic_init(&t->refs, refs);
  t->result = NULL;
  t->pool = pool;
  atomic_init(&t->conts, NULL);
  return t;
}

static int task_ok(const bw_task *t) {
  return t != NULL && t->magic == TASK_LIVE;
}

/* The library's own retain and release on tasks it knows to be live:
 * static, so they inline (the public functions are exported and may not
 * be inlined into their callers here). */
static inline void task_retain(bw_task *task) {
  atomic_fetch_add_explicit(&task->refs, 1, memory_order_relaxed);
}

/* Drops n references the caller holds. */
static void task_release_n(bw_task *task, unsigned n) {
  /* The last references need no read-modify-write: their holder is the
   * only thread that can still reach the task, so nobody can add one. */
  if (atomic_load_explicit(&task->refs, memory_order_acquire) != n &&
      atomic_fetch_sub_explicit(&task->refs, n, memory_order_acq_rel) != n)
    return;
  /* Only abandoned waiter nodes can remain on an unresolved task. */
  bwrt__cont *c =
      untag(atomic_load_explicit(&task->conts, memory_order_acquire));
  while (c != NULL && c != CONTS_DONE) {
    bwrt__cont *next = c->next;
    c->fire(c, NULL);
    c = next;
  }
  if (task->kind == K_DELAY && task->u.delay.token != NULL)
    bw_cancel_token_release(task->u.delay.token);
  task->magic = TASK_DEAD;
  bwrt__free(BWRT__ALLOC_LARGE_CLASS, task);
}

static void task_release(bw_task *task) {
  task_release_n(task, 1);
}

bw_task *bw_task_retain(bw_task *task) {
  if (task_ok(task))
    task_retain(task);
  return task;
}

void bw_task_release(bw_task *task) {
  if (task_ok(task))
    task_release(task);
}

/* Whether no thread but the caller, which holds one reference to the
 * task, can attach a node to it any more: every other reference is held by
 * a node on its list that took it over from its creator. The list is read
 * first, the count next. Those nodes hold their references until they run,
 * after this; a node attached between the two reads came from a reference
 * counted in the second; so if the count is the caller's plus the nodes',
 * nobody else held one then, and nobody can get one from now on. */
static int sole_holder(bw_task *task) {
  unsigned handed =
      handed_count(atomic_load_explicit(&task->conts, memory_order_acquire));
  return handed < HANDED_MAX &&
         atomic_load_explicit(&task->refs, memory_order_acquire) == 1 + handed;
}

/* Fires every node attached so far, oldest first. `sole`: sole_holder()
 * said no other thread can attach a node any more, so the list is taken
 * without an atomic exchange (a chain whose links the user released or
 * handed over saves one locked instruction per link this way). */
static void fire_conts(bw_task *task, int sole) {
  bwrt__cont *list;
  if (sole) {
    list = atomic_load_explicit(&task->conts, memory_order_relaxed);
    atomic_store_explicit(&task->conts, CONTS_DONE, memory_order_relaxed);
  } else {
    list = atomic_exchange_explicit(&task->conts, CONTS_DONE,
                                    memory_order_acq_rel);
  }
  list = untag(list);
  bwrt__cont *fifo = NULL;
  while (list != NULL) { /* the stack is newest first: reverse it */
    bwrt__cont *next = list->next;
    list->next = fifo;
    fifo = list;
    list = next;
  }
  while (fifo != NULL) {
    bwrt__cont *next = fifo->next;
    fifo->fire(fifo, task);
    fifo = next;
  }
}

/* Returns 1 if this call resolved the task, 0 if it was already resolved. */
static int try_resolve(bw_task *task, int final_state, void *result) {
  int expected = BW_TASK_PENDING;
  if (!atomic_compare_exchange_strong_explicit(
          &task->state, &expected, S_RESOLVING, memory_order_acquire,
          memory_order_relaxed))
    return 0;
  /* A waiter may return (and drop the last reference) the moment it sees
   * the final state, while we are still firing continuations: hold our own
   * reference until we are done. The caller's reference still exists now,
   * since nobody can have seen the task resolved yet. */
  atomic_fetch_add_explicit(&task->refs, 1, memory_order_relaxed);
  /* A canceled task keeps its reason here (NULL: -ECANCELED), which
   * bw_task_result hides and bw_task_error reads. */
  task->result = result;
  atomic_store_explicit(&task->state, final_state, memory_order_release);
  fire_conts(task, 0); /* we hold an extra reference: never sole */
  task_release(task);
  return 1;
}

/* Pushes c on the task's list, or fires it at once if the task resolved.
 * `handed`: c holds a reference its creator handed over (counted in the
 * head's tag, see HANDED_MAX). */
static void attach(bw_task *task, bwrt__cont *c, int handed) {
  bwrt__cont *head = atomic_load_explicit(&task->conts, memory_order_acquire);
  for (;;) {
    if (head == CONTS_DONE) {
      c->fire(c, task);
      return;
    }
    uintptr_t count = handed_count(head);
    if (handed && count < HANDED_MAX)
      count++;
    c->next = untag(head);
    if (atomic_compare_exchange_weak_explicit(
            &task->conts, &head, (bwrt__cont *)((uintptr_t)c | count),
            memory_order_acq_rel, memory_order_acquire))
      return;
  }
}

bw_task_state bw_task_state_get(const bw_task *task) {
  if (!task_ok(task))
    return BW_TASK_PENDING;
  int s = atomic_load_explicit(&task->state, memory_order_acquire);
  return s == S_RESOLVING ? BW_TASK_PENDING : (bw_task_state)s;
}

void *bw_task_result(const bw_task *task) {
  if (!task_ok(task) ||
      atomic_load_explicit(&task->state, memory_order_acquire) !=
          BW_TASK_COMPLETED)
    return NULL;
  return task->result;
}

/* ---- run and then ------------------------------------------------------- */

static void then_fire(bwrt__cont *c, bw_task *done);

static void prefetch_task_of_node(const bwrt__cont *c) {
  __builtin_prefetch(c, 1);
  __builtin_prefetch(BWRT__CONTAINER_OF(c, bw_task, u.then.node), 1);
}

static void run_task_item(bwrt__item *it) {
  bw_task *task = (bw_task *)it;
  /* A chain runs link after link on this worker, every link written last
   * by the thread that built it, on another CPU; and when recycled blocks
   * lie in no order, no hardware prefetcher guesses the next one. So links
   * are fetched two ahead: the next link (the first continuation) was
   * prefetched when the previous link started, so its own first
   * continuation can be read now without a stall, and is prefetched while
   * fn runs. Safe to read: nodes on a task that has not resolved are alive
   * (each holds a reference or is its task's), and a then-node's task is
   * alive until it runs, after this one. */
  bwrt__cont *next =
      untag(atomic_load_explicit(&task->conts, memory_order_acquire));
  if (next != NULL && next != CONTS_DONE) {
    prefetch_task_of_node(next);
    if (next->fire == then_fire) {
      const bw_task *t = BWRT__CONTAINER_OF(next, bw_task, u.then.node);
      bwrt__cont *after =
          untag(atomic_load_explicit(&t->conts, memory_order_relaxed));
      if (after != NULL && after != CONTS_DONE)
        prefetch_task_of_node(after);
    }
  }
  bw_task *outer = bwrt__tls_task;
  bwrt__tls_task = task;
  void *result;
  if (task->kind == K_RUN) {
    result = task->u.run.fn(task->u.run.arg);
  } else {
    bw_task *done = task->u.then.antecedent;
    result = task->u.then.fn(done, task->u.then.arg);
    task_release_n(done, task->u.then.antecedent_refs);
  }
  bwrt__tls_task = outer;
  /* Nothing else resolves a run/then task (they cannot be canceled), so
   * no CAS is needed to claim it. */
  task->result = result;
  /* The queue's reference (dropped below) keeps the task alive while its
   * continuations fire, even if a waiter drops its own at once. */
  atomic_store_explicit(&task->state, BW_TASK_COMPLETED, memory_order_release);
  bw_task *outer_finishing = tls_finishing;
  tls_finishing = task;
  /* When the queue's reference is the only one left but those its
   * continuations took over, nobody can attach to the task any more (attach
   * needs a reference). Acquire: the nodes attached by users that released
   * since are visible. */
  fire_conts(task, sole_holder(task));
  /* then_fire clears tls_finishing when a continuation that runs next on
   * this worker took over the queue's reference. */
  int handed_over = tls_finishing != task;
  tls_finishing = outer_finishing;
  if (!handed_over)
    task_release(task); /* the queue's reference */
}

bw_task *bw_run(bw_pool *pool, void *(*fn)(void *arg), void *arg) {
  if (fn == NULL) {
    errno = EINVAL;
    return NULL;
  }
  pool = bwrt__pool_resolve(pool);
  if (pool == NULL)
    return NULL;
  bw_task *t = task_new(K_RUN, pool, 2);
  if (t == NULL)
    return NULL;
  t->item.run = run_task_item;
  t->u.run.fn = fn;
  t->u.run.arg = arg;
  int rc = bwrt__pool_push(pool, &t->item, 0);
  if (rc != 0) {
    t->magic = TASK_DEAD;
    bwrt__free(BWRT__ALLOC_LARGE_CLASS, t);
    errno = -rc;
    return NULL;
  }
  return t;
}

/* The antecedent resolved: queue the continuation on the pool.
 *
 * When the antecedent is the task this worker is just finishing, the first
 * continuation becomes the worker's run_next (see bwrt__pool_push): a chain of
 * continuations stays on one warm worker, with no queue traffic. It also
 * inherits the antecedent's queue reference (run_task_item then does not
 * drop it), so no reference count changes hands at all. Any other
 * continuation of a run/then antecedent takes its reference here, while the
 * firing thread's reference keeps the antecedent alive. Either way before
 * the push: once queued, the continuation may run (and release) at once. */
static void then_fire(bwrt__cont *c, bw_task *done) {
  bw_task *t = BWRT__CONTAINER_OF(c, bw_task, u.then.node);
  if (done != NULL && done == tls_finishing &&
      bwrt__pool_push_run_next(t->pool, &t->item)) {
    /* Unqueued: only this thread can run it, after we return, so the
     * order of these writes does not matter. */
    t->u.then.antecedent_refs++; /* the queue's, inherited */
    tls_finishing = NULL;        /* handed over; later continuations queue */
    return;
  }
  if (t->u.then.antecedent_refs == 0 && done != NULL) {
    task_retain(done);
    t->u.then.antecedent_refs = 1;
  }
  (void)bwrt__pool_push(t->pool, &t->item,
                        BWRT__PUSH_INTERNAL); /* cannot fail */
}

/* bw_then and bw_then_consume: `handed` says whether the caller hands its
 * reference on `task` over to the continuation. */
static bw_task *then_new(bw_task *task, void *(*fn)(bw_task *done, void *arg),
                         void *arg, int handed) {
  if (!task_ok(task) || fn == NULL) {
    errno = EINVAL;
    return NULL;
  }
  bw_task *t = task_new(K_THEN, task->pool, 2);
  if (t == NULL)
    return NULL;
  t->item.run = run_task_item;
  t->u.then.fn = fn;
  t->u.then.arg = arg;
  t->u.then.antecedent = task;
  /* A run/then task is alive until its continuations fired (its queue
   * reference); anything else may be released while pending, so the
   * continuation keeps it alive from now on: with the caller's reference
   * when handed over, else with one of its own. */
  t->u.then.antecedent_refs = handed != 0;
  if (!handed && task->kind != K_RUN && task->kind != K_THEN) {
    task_retain(task);
    t->u.then.antecedent_refs = 1;
  }
  t->u.then.node.fire = then_fire;
  attach(task, &t->u.then.node, handed);
  return t;
}

bw_task *bw_then(bw_task *task, void *(*fn)(bw_task *done, void *arg),
                 void *arg) {
  return then_new(task, fn, arg, 0);
}

bw_task *bw_then_consume(bw_task *task, void *(*fn)(bw_task *done, void *arg),
                         void *arg) {
  return then_new(task, fn, arg, 1);
}

/* ---- completion sources ------------------------------------------------- */

bw_task *bw_completion_create(bw_pool *pool) {
  pool = bwrt__pool_resolve(pool);
  if (pool == NULL)
    return NULL;
  return task_new(K_SOURCE, pool, 1);
}

int bw_task_complete(bw_task *task, void *result) {
  if (!task_ok(task))
    return -EINVAL;
  if (task->kind != K_SOURCE)
    return -EPERM;
  return try_resolve(task, BW_TASK_COMPLETED, result) ? 0 : -EALREADY;
}

int bw_task_cancel(bw_task *task) {
  return bw_task_cancel_with(task, -ECANCELED);
}

int bw_task_cancel_with(bw_task *task, int err) {
  if (!task_ok(task) || err >= 0)
    return -EINVAL;
  if (task->kind != K_SOURCE && task->kind != K_DELAY)
    return -EPERM;
  return try_resolve(task, BW_TASK_CANCELED, (void *)(intptr_t)err) ? 0
                                                                    : -EALREADY;
}

int bw_task_error(const bw_task *task) {
  if (!task_ok(task))
    return -EINVAL;
  switch (atomic_load_explicit(&task->state, memory_order_acquire)) {
  case BW_TASK_COMPLETED:
    return 0;
  case BW_TASK_CANCELED:
    return task->result ? (int)(intptr_t)task->result : -ECANCELED;
  default:
    return -EINPROGRESS; /* pending, or being resolved right now */
  }
}

/* ---- delays ------------------------------------------------------------- */

/* The token was canceled: cancel the delay; drop the registration's ref. */
static void delay_token_fire(bwrt__cancel_reg *reg) {
  bw_task *t = BWRT__CONTAINER_OF(reg, bw_task, u.delay.reg);
  try_resolve(t, BW_TASK_CANCELED, NULL);
  task_release(t);
}

/* The delay's timer fired (or the gate stopped, or never took it):
 * completes or cancels it and drops the heap's and the registration's
 * references. */
static void delay_timer_fire(bwrt__timer *tm, int canceled) {
  bw_task *task = BWRT__CONTAINER_OF(tm, bw_task, timer);
  try_resolve(task, canceled ? BW_TASK_CANCELED : BW_TASK_COMPLETED, NULL);
  if (task->u.delay.token != NULL &&
      bwrt__token_unregister(task->u.delay.token, &task->u.delay.reg))
    task_release(task); /* the registration's reference */
  task_release(task);   /* the heap's reference */
}

/* Canceled before its deadline: see bwrt__timer. */
static int delay_timer_resolved(const bwrt__timer *tm) {
  return bw_task_state_get(BWRT__CONTAINER_OF(tm, bw_task, timer)) !=
         BW_TASK_PENDING;
}

bw_task *bw_delay_cancelable(bw_pool *pool, uint64_t ms,
                             bw_cancel_token *token) {
  pool = bwrt__pool_resolve(pool);
  if (pool == NULL)
    return NULL;
  if (ms > UINT64_MAX / 2000000u) /* keep the deadline from overflowing */
    ms = UINT64_MAX / 2000000u;
  /* The caller's reference, the heap's, and the token registration's. */
  bw_task *t = task_new(K_DELAY, pool, token != NULL ? 3 : 2);
  if (t == NULL)
    return NULL;
  t->timer.deadline_ns = bwrt__now_ns() + ms * 1000000u;
  t->timer.fire = delay_timer_fire;
  t->timer.resolved = delay_timer_resolved;
  t->u.delay.token = token != NULL ? bwrt__token_retain(token) : NULL;
  t->u.delay.reg.fire = delay_token_fire;
  if (token != NULL && bwrt__token_register(token, &t->u.delay.reg)) {
    try_resolve(t, BW_TASK_CANCELED, NULL); /* already canceled */
    atomic_fetch_sub_explicit(&t->refs, 2, memory_order_relaxed);
    return t;
  }
  int rc = bwrt__gate_add_timer(pool, &t->timer);
  if (rc != 0) {
    /* Never in the heap: cancel it and drop the heap's and the
     * registration's references the way a firing timer does. */
    delay_timer_fire(&t->timer, 1);
    task_release(t);
    errno = -rc;
    return NULL;
  }
  return t;
}

bw_task *bw_delay(bw_pool *pool, uint64_t ms) {
  return bw_delay_cancelable(pool, ms, NULL);
}

/* ---- when_all / when_any ------------------------------------------------ */

static void when_fire(bwrt__cont *c, bw_task *done) {
  when_node *node = (when_node *)c;
  bw_task *t = node->owner;
  if (t->kind == K_WHEN_ALL) {
    if (bw_task_state_get(done) == BW_TASK_CANCELED)
      atomic_store_explicit(&t->u.when.any_canceled, 1, memory_order_relaxed);
  } else {
    try_resolve(t, BW_TASK_COMPLETED, done);
  }
  task_release(done); /* the node's reference on its antecedent */
  if (atomic_fetch_sub_explicit(&t->u.when.left, 1, memory_order_acq_rel) != 1)
    return;
  if (t->kind == K_WHEN_ALL) {
    int canceled =
        atomic_load_explicit(&t->u.when.any_canceled, memory_order_relaxed);
    try_resolve(t, canceled ? BW_TASK_CANCELED : BW_TASK_COMPLETED, NULL);
  }
  free(t->u.when.nodes);
  task_release(t); /* the nodes' reference */
}

static bw_task *when_create(int kind, bw_task *const *tasks, size_t n) {
  if (n > 0 && tasks == NULL) {
    errno = EINVAL;
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    if (!task_ok(tasks[i])) {
      errno = EINVAL;
      return NULL;
    }
  }
  bw_pool *pool = n > 0 ? tasks[0]->pool : bw_pool_default();
  if (pool == NULL)
    return NULL;
  bw_task *t = task_new(kind, pool, n > 0 ? 2 : 1);
  if (t == NULL)
    return NULL;
  if (n == 0) {
    try_resolve(t, BW_TASK_COMPLETED, NULL);
    return t;
  }
  t->u.when.nodes = calloc(n, sizeof(when_node));
  if (t->u.when.nodes == NULL) {
    t->magic = TASK_DEAD;
    bwrt__free(BWRT__ALLOC_LARGE_CLASS, t);
    errno = ENOMEM;
    return NULL;
  }
  atomic_init(&t->u.when.left, n);
  atomic_init(&t->u.when.any_canceled, 0);
  /* `left` may reach zero (and free the nodes) during the last attach:
   * take the array pointer once. */
  when_node *nodes = t->u.when.nodes;
  for (size_t i = 0; i < n; i++) {
    nodes[i].owner = t;
    nodes[i].cont.fire = when_fire;
    task_retain(tasks[i]);
    attach(tasks[i], &nodes[i].cont, 0);
  }
  return t;
}

bw_task *bw_when_all(bw_task *const *tasks, size_t n) {
  return when_create(K_WHEN_ALL, tasks, n);
}

bw_task *bw_when_any(bw_task *const *tasks, size_t n) {
  if (n == 0) {
    errno = EINVAL; /* it could never complete */
    return NULL;
  }
  return when_create(K_WHEN_ANY, tasks, n);
}

/* ---- what the waits need (task_wait.c) ---------------------------------- */

int bwrt__task_live(const bw_task *task) {
  return task_ok(task);
}

int bwrt__task_final_code(const bw_task *task) {
  int s = atomic_load_explicit(&task->state, memory_order_acquire);
  if (s == BW_TASK_COMPLETED)
    return 0;
  if (s == BW_TASK_CANCELED)
    return -ECANCELED;
  return 1; /* still pending */
}

void bwrt__task_attach(bw_task *task, bwrt__cont *c) {
  attach(task, c, 0);
}

bw_pool *bwrt__task_pool(const bw_task *task) {
  return task->pool;
}

int bwrt__task_needs_worker(const bw_task *task) {
  return task->kind == K_RUN || task->kind == K_THEN;
}
