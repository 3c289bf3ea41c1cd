/* task_wait.c - the blocking waits on a task: bw_wait and
 * bw_wait_cancelable.
 *
 * Invariants:
 *  - A waiter off the pool spins first and, without a timeout, runs the
 *    pool's queued items meanwhile (spin_or_help); a worker that waits
 *    blocks at once and tells the pool (bw_pool_notify_blocked), so the
 *    pool can compensate.
 *  - A wait that could never end (the waited-for task needs a worker of the
 *    waiter's pool and none is left) returns -EDEADLK instead of blocking.
 *  - The waiter is a node on the task's continuation list and may outlive
 *    the wait: its references (the waiting thread's, the node's, the token
 *    registration's) free it when the last one is dropped.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>

#include "internal.h"

/* Polls of a waited-for task before the waiter blocks (see bw_wait). */
#define WAIT_SPINS 2048

/* A blocked waiter. References: the waiting thread's, the task node's, and
 * the token registration's while linked. */
typedef struct waiter {
  bwrt__cont cont;
  bwrt__cancel_reg reg;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int done, canceled; /* under mu */
  _Atomic unsigned refs;
} waiter;

static void waiter_release(waiter *w) {
  if (atomic_fetch_sub_explicit(&w->refs, 1, memory_order_acq_rel) != 1)
    return;
  pthread_mutex_destroy(&w->mu);
  pthread_cond_destroy(&w->cv);
  free(w);
}

static void waiter_task_fire(bwrt__cont *c, bw_task *done) {
  waiter *w = (waiter *)c;
  (void)done;
  pthread_mutex_lock(&w->mu);
  w->done = 1;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
  waiter_release(w);
}

static void waiter_token_fire(bwrt__cancel_reg *reg) {
  waiter *w = BWRT__CONTAINER_OF(reg, waiter, reg);
  pthread_mutex_lock(&w->mu);
  w->canceled = 1;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
  waiter_release(w);
}

/* Waiting on a task that needs a worker of this pool, from a worker of this
 * pool, when every other worker already waits and the pool cannot grow:
 * nothing could ever run the task. */
static int would_deadlock(const bw_task *task, bwrt__worker *self) {
  if (self == NULL || self->pool != bwrt__task_pool(task))
    return 0;
  if (!bwrt__task_needs_worker(task))
    return 0;
  bw_pool *pool = self->pool;
  unsigned live = atomic_load_explicit(&pool->live, memory_order_relaxed);
  unsigned blocked = atomic_load_explicit(&pool->blocked, memory_order_relaxed);
  int can_grow =
      live < pool->max_workers && (!(pool->flags & BW_POOL_NO_INJECTION) ||
                                   (pool->flags & BW_POOL_COMPENSATE));
  return blocked + 1 >= live && !can_grow;
}

/* Whether this thread is running items as a helping waiter: a wait inside
 * such an item does not help again (no unbounded nesting on one stack). */
static BWRT__TLS int tls_helping;

/* The first phase of a wait off the pool: polls the task, and when the wait
 * has no timeout (and the pool allows it) runs the pool's queued items on
 * this thread meanwhile, oldest first, like TBB's waiting thread: a fork
 * and join from outside then needs no hand-off to a worker and no wake-up
 * (the waiter would otherwise sit idle on a CPU the workers need). Only
 * without a timeout: an item may take any time, and a timed wait must not
 * overshoot its deadline by someone else's item. The spins restart after
 * each item run. Returns 0 / -ECANCELED when the task ended (or the token
 * was canceled) meanwhile, 1 when the caller must block. */
static int spin_or_help(bw_task *task, int64_t timeout_ms,
                        bw_cancel_token *token) {
  bw_pool *pool = bwrt__task_pool(task);
  int helping = timeout_ms < 0 && !tls_helping && bwrt__help_enter(pool);
  int rc = 1;
  if (helping)
    tls_helping = 1;
  for (unsigned i = 0; i < WAIT_SPINS; i++) {
    rc = bwrt__task_final_code(task);
    if (rc <= 0)
      break;
    if (token != NULL && bw_cancel_token_is_canceled(token)) {
      rc = -ECANCELED;
      break;
    }
    if (helping && bwrt__help_run_one(pool)) {
      i = 0;
      continue;
    }
    if ((i & 15u) == 15u)
      sched_yield();
    else
      bwrt__cpu_relax();
  }
  if (helping) {
    tls_helping = 0;
    bwrt__help_leave(pool);
  }
  return rc;
}

int bw_wait_cancelable(bw_task *task, int64_t timeout_ms,
                       bw_cancel_token *token) {
  if (!bwrt__task_live(task))
    return -EINVAL;
  int rc = bwrt__task_final_code(task);
  if (rc <= 0)
    return rc;
  if (bwrt__tls_task == task)
    return -EDEADLK;
  if (bw_cancel_token_is_canceled(token))
    return -ECANCELED;
  if (timeout_ms == 0)
    return -ETIMEDOUT;
  bwrt__worker *self = bwrt__current_worker();
  if (would_deadlock(task, self))
    return -EDEADLK;
  /* Spin, then block (like .NET's SpinThenBlockingWait): a task that is
   * about to finish costs no sleep/wake pair. Off the pool only: a worker
   * that waits should free its CPU for the pool at once. */
  if (self == NULL) {
    rc = spin_or_help(task, timeout_ms, token);
    if (rc <= 0)
      return rc;
  }

  waiter *w = malloc(sizeof(*w));
  if (w == NULL)
    return -ENOMEM;
  pthread_mutex_init(&w->mu, NULL);
  bwrt__cond_init_monotonic(&w->cv);
  w->done = 0;
  w->canceled = 0;
  w->cont.fire = waiter_task_fire;
  w->reg.fire = waiter_token_fire;
  atomic_init(&w->refs, token != NULL ? 3 : 2);
  if (token != NULL) {
    bwrt__token_retain(token);
    if (bwrt__token_register(token, &w->reg)) {
      w->canceled = 1; /* canceled meanwhile: nothing registered */
      atomic_fetch_sub_explicit(&w->refs, 1, memory_order_relaxed);
    }
  }
  bwrt__task_attach(task, &w->cont);

  if (self != NULL)
    bw_pool_notify_blocked();
  struct timespec deadline;
  if (timeout_ms > 0)
    bwrt__deadline_in_ms(&deadline, (uint64_t)timeout_ms);
  pthread_mutex_lock(&w->mu);
  while (!w->done && !w->canceled) {
    if (timeout_ms < 0) {
      pthread_cond_wait(&w->cv, &w->mu);
    } else if (pthread_cond_timedwait(&w->cv, &w->mu, &deadline) == ETIMEDOUT) {
      break;
    }
  }
  int canceled = w->canceled;
  pthread_mutex_unlock(&w->mu);
  if (self != NULL)
    bw_pool_notify_unblocked();

  if (token != NULL) {
    if (bwrt__token_unregister(token, &w->reg))
      waiter_release(w); /* the registration's reference */
    bw_cancel_token_release(token);
  }
  waiter_release(w);
  rc = bwrt__task_final_code(task);
  if (rc <= 0)
    return rc;
  return canceled ? -ECANCELED : -ETIMEDOUT;
}

int bw_wait(bw_task *task, int64_t timeout_ms) {
  return bw_wait_cancelable(task, timeout_ms, NULL);
}
