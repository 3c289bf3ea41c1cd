/* blocking.c - bw_run_blocking: a pool's blocking threads, kept apart from
 * its workers, for calls that must block (.NET's LongRunning tasks), and the
 * thread roles a tool uses to tell these threads from workers.
 *
 * Invariants:
 *  - A pool's blocking set (pool->blocking) is made on first use (under
 *    create_mu, never once destroy began stopping it), stopped by
 *    bw_pool_destroy (bwrt__blocking_stop) and freed with the pool, after
 *    its workers were joined: an item still running may be reading it.
 *    Every field below mu is under it. Threads are made on demand, at most
 * max_threads, while more jobs are queued than threads are idle; an idle thread
 * retires after idle_ms. They are detached: stop waits for `threads` to reach
 * 0, and a thread touches nothing of the set after its last unlock.
 *  - A job's task is a completion source holding one reference for the job
 *    (the caller owns the other). Jobs run in FIFO order; a job whose task
 *    was canceled before it started is skipped (fn never runs).
 *  - Stop: no new job is accepted (ESHUTDOWN); jobs not yet started are
 *    canceled; stop returns once every running job has returned and
 *    completed its task.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

#define DEFAULT_MAX_THREADS 64u
#define DEFAULT_IDLE_MS 10000u

typedef struct job {
  struct job *next;
  void *(*fn)(void *arg);
  void *arg;
  bw_task *task;
} job;

struct bwrt__blocking {
  bw_pool *pool;
  pthread_mutex_t mu;
  pthread_cond_t work_cv; /* idle threads wait here */
  pthread_cond_t exit_cv; /* stop waits here for threads == 0 */
  job *head, *tail;
  size_t queued;
  unsigned threads, idle, max_threads, idle_ms, next_index;
  int stop;
  uint64_t started, completed, retired;
};

static BWRT__TLS int tls_role;

void bwrt__set_thread_role(int role) {
  tls_role = role;
}

bw_thread_role bw_thread_role_get(void) {
  if (bwrt__current_worker() != NULL)
    return BW_ROLE_WORKER;
  return (bw_thread_role)tls_role;
}

/* Guards making a pool's blocking set against destroy's stop. */
static pthread_mutex_t create_mu = PTHREAD_MUTEX_INITIALIZER;

/* The pool's blocking set, made on first use, never once destroy began
 * stopping it (offload_closed). NULL with errno ENOMEM or ESHUTDOWN. */
static bwrt__blocking *blocking_of(bw_pool *pool) {
  bwrt__blocking *b =
      atomic_load_explicit(&pool->blocking, memory_order_acquire);
  if (b != NULL)
    return b;
  pthread_mutex_lock(&create_mu);
  b = atomic_load_explicit(&pool->blocking, memory_order_acquire);
  if (b == NULL &&
      atomic_load_explicit(&pool->offload_closed, memory_order_relaxed)) {
    errno = ESHUTDOWN;
  } else if (b == NULL && (b = calloc(1, sizeof(*b))) == NULL) {
    errno = ENOMEM;
  } else if (b->pool == NULL) {
    b->pool = pool;
    b->max_threads = DEFAULT_MAX_THREADS;
    b->idle_ms = DEFAULT_IDLE_MS;
    pthread_mutex_init(&b->mu, NULL);
    bwrt__cond_init_monotonic(&b->work_cv);
    pthread_cond_init(&b->exit_cv, NULL);
    atomic_store_explicit(&pool->blocking, b, memory_order_release);
  }
  pthread_mutex_unlock(&create_mu);
  return b;
}

/* The blocking set of `pool` (NULL: the default pool), or NULL with errno
 * set. */
static bwrt__blocking *blocking_resolve(bw_pool *pool) {
  pool = bwrt__pool_resolve(pool);
  return pool != NULL ? blocking_of(pool) : NULL;
}

static void run_job(job *j) {
  /* Canceled while queued (bw_task_cancel): the caller gave up on it. The
   * role is BLOCKING only inside fn: the thread's waits for work are the
   * runtime's own, which a tool must not count as blocking. */
  if (bw_task_state_get(j->task) == BW_TASK_PENDING) {
    bwrt__set_thread_role(BW_ROLE_BLOCKING);
    void *result = j->fn(j->arg);
    bwrt__set_thread_role(BW_ROLE_RUNTIME);
    (void)bw_task_complete(j->task, result);
  }
  bw_task_release(j->task);
  free(j);
}

static void *blocking_main(void *arg) {
  bwrt__blocking *b = arg;
  bwrt__set_thread_role(BW_ROLE_RUNTIME);
  pthread_mutex_lock(&b->mu);
  char name[16];
  snprintf(name, sizeof(name), "%.8s.blk%u", b->pool->name, b->next_index++);
  pthread_setname_np(pthread_self(), name);
  for (;;) {
    if (b->head != NULL) {
      job *j = b->head;
      b->head = j->next;
      if (b->head == NULL)
        b->tail = NULL;
      b->queued--;
      b->started++;
      pthread_mutex_unlock(&b->mu);
      run_job(j);
      pthread_mutex_lock(&b->mu);
      b->completed++;
      continue;
    }
    if (b->stop)
      break;
    struct timespec deadline;
    bwrt__deadline_in_ms(&deadline, b->idle_ms);
    b->idle++;
    int rc = pthread_cond_timedwait(&b->work_cv, &b->mu, &deadline);
    b->idle--;
    if (rc == ETIMEDOUT && b->head == NULL && !b->stop) {
      b->retired++;
      break;
    }
  }
  if (--b->threads == 0)
    pthread_cond_broadcast(&b->exit_cv);
  pthread_mutex_unlock(&b->mu);
  return NULL;
}

/* Starts one more thread; caller holds b->mu. */
static int spawn_locked(bwrt__blocking *b) {
  pthread_t thread;
  if (bwrt__thread_start(&thread, blocking_main, b) != 0)
    return -EAGAIN;
  pthread_detach(thread);
  b->threads++;
  return 0;
}

bw_task *bw_run_blocking(bw_pool *pool, void *(*fn)(void *arg), void *arg) {
  bwrt__blocking *b = fn != NULL ? blocking_resolve(pool) : NULL;
  if (b == NULL) {
    if (fn == NULL)
      errno = EINVAL;
    return NULL;
  }
  job *j = malloc(sizeof(*j));
  bw_task *task = j != NULL ? bw_completion_create(b->pool) : NULL;
  if (task == NULL) {
    free(j);
    errno = ENOMEM;
    return NULL;
  }
  j->next = NULL;
  j->fn = fn;
  j->arg = arg;
  j->task = bw_task_retain(task); /* the job's reference */
  int rc = 0;
  pthread_mutex_lock(&b->mu);
  if (b->stop) {
    rc = -ESHUTDOWN;
  } else {
    if (b->tail != NULL)
      b->tail->next = j;
    else
      b->head = j;
    b->tail = j;
    b->queued++;
    if (b->idle > 0)
      pthread_cond_signal(&b->work_cv);
    /* More jobs waiting than idle threads to take them: one more thread.
     * When none can start and none exists, nothing would ever run it. */
    if (b->queued > b->idle && b->threads < b->max_threads &&
        spawn_locked(b) != 0 && b->threads == 0) {
      b->head = b->tail = NULL;
      b->queued = 0;
      rc = -EAGAIN;
    }
  }
  pthread_mutex_unlock(&b->mu);
  if (rc != 0) {
    bw_task_release(task);
    bw_task_release(task);
    free(j);
    errno = -rc;
    return NULL;
  }
  return task;
}

int bw_run_blocking_limits(bw_pool *pool, unsigned max_threads,
                           unsigned idle_timeout_ms) {
  bwrt__blocking *b = blocking_resolve(pool);
  if (b == NULL)
    return -errno;
  pthread_mutex_lock(&b->mu);
  b->max_threads = max_threads != 0 ? max_threads : DEFAULT_MAX_THREADS;
  b->idle_ms = idle_timeout_ms != 0 ? idle_timeout_ms : DEFAULT_IDLE_MS;
  /* Idle threads pick up the new timeout now, not after the old one. */
  pthread_cond_broadcast(&b->work_cv);
  pthread_mutex_unlock(&b->mu);
  return 0;
}

int bw_blocking_stats_get(bw_pool *pool, bw_blocking_stats *out) {
  bwrt__blocking *b = out != NULL ? blocking_resolve(pool) : NULL;
  if (b == NULL)
    return out == NULL ? -EINVAL : -errno;
  pthread_mutex_lock(&b->mu);
  out->threads = b->threads;
  out->idle = b->idle;
  out->max_threads = b->max_threads;
  out->queued = b->queued;
  out->started = b->started;
  out->completed = b->completed;
  out->retired = b->retired;
  pthread_mutex_unlock(&b->mu);
  return 0;
}

void bwrt__blocking_stop(bw_pool *pool) {
  pthread_mutex_lock(&create_mu);
  atomic_store_explicit(&pool->offload_closed, 1, memory_order_relaxed);
  bwrt__blocking *b =
      atomic_load_explicit(&pool->blocking, memory_order_acquire);
  pthread_mutex_unlock(&create_mu);
  if (b == NULL)
    return;
  pthread_mutex_lock(&b->mu);
  b->stop = 1;
  job *pending = b->head;
  b->head = b->tail = NULL;
  b->queued = 0;
  pthread_cond_broadcast(&b->work_cv);
  pthread_mutex_unlock(&b->mu);
  /* Outside the lock: canceling runs the tasks' continuations' pushes. */
  while (pending != NULL) {
    job *next = pending->next;
    (void)bw_task_cancel_with(pending->task, -ESHUTDOWN);
    bw_task_release(pending->task);
    free(pending);
    pending = next;
  }
  pthread_mutex_lock(&b->mu);
  while (b->threads > 0)
    pthread_cond_wait(&b->exit_cv, &b->mu);
  pthread_mutex_unlock(&b->mu);
}

void bwrt__blocking_free(bw_pool *pool) {
  bwrt__blocking *b =
      atomic_load_explicit(&pool->blocking, memory_order_relaxed);
  if (b == NULL)
    return;
  atomic_store_explicit(&pool->blocking, NULL, memory_order_relaxed);
  pthread_mutex_destroy(&b->mu);
  pthread_cond_destroy(&b->work_cv);
  pthread_cond_destroy(&b->exit_cv);
  free(b);
}
