/* blockwatch/runtime.h - the bundled pool runtime: a C ThreadPool/TPL.
 *
 * Work items (bw_submit), tasks with results and continuations (bw_run,
 * bw_then), timer delays that hold no thread (bw_delay), completion sources,
 * cancellation tokens, work stealing and starvation-driven thread injection.
 *
 * Conventions every function here keeps:
 *  - Types are opaque; only the config and stats structs are public.
 *  - Functions returning int return 0 on success or a negative errno value
 *    (-EINVAL, -ENOMEM, ...); bw_strerror() names them.
 *  - Functions returning a pointer return NULL on failure and set errno.
 *  - A NULL pool argument means the process-wide default pool.
 *  - Tasks are reference counted: every bw_task* a function returns carries
 *    one reference that the caller owns and drops with bw_task_release().
 *  - Nothing here calls abort(): bad use is an error code.
 *
 * The runtime depends on libc and pthreads only and knows nothing of the
 * blockwatch tools; it is observed through <blockwatch/observer.h>.
 */
#ifndef BLOCKWATCH_RUNTIME_H
#define BLOCKWATCH_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BW_RUNTIME_VERSION_MAJOR 0
#define BW_RUNTIME_VERSION_MINOR 1

typedef struct bw_pool bw_pool;
typedef struct bw_task bw_task;
typedef struct bw_cancel_token bw_cancel_token;

/* bw_pool_config.flags */
enum {
  /* Start a spare worker at once when a worker announces it is about to
   * block (bw_pool_notify_blocked), bounded by max_workers. */
  BW_POOL_COMPENSATE = 1u << 0,
  /* Never inject workers on starvation (for experiments that show it). */
  BW_POOL_NO_INJECTION = 1u << 1,
  /* A bw_wait without a timeout, off the pool, never runs the pool's queued
   * items on the waiting thread (see bw_wait). */
  BW_POOL_NO_HELPING = 1u << 2,
};

/* Pool settings. A zero field means "the default", so `bw_pool_config cfg =
 * {0};` is a valid configuration. */
typedef struct bw_pool_config {
  const char *name;         /* thread names are "<name>-<n>"; default "bw" */
  unsigned min_workers;     /* workers started at creation; default: CPUs */
  unsigned max_workers;     /* injection / compensation bound; default 256,
                               never below min_workers */
  unsigned starvation_ms;   /* inject a worker when items wait and nothing was
                               dequeued for this long; default 500 */
  unsigned idle_timeout_ms; /* an idle worker above min_workers retires after
                               this long; default 10000 */
  unsigned flags;           /* BW_POOL_* */
} bw_pool_config;

/* A snapshot of a pool, filled by bw_pool_stats_get(). Times in
 * nanoseconds. */
typedef struct bw_pool_stats {
  unsigned workers;          /* live worker threads */
  unsigned idle;             /* workers parked with nothing to run */
  unsigned busy;             /* workers running an item */
  unsigned blocked;          /* workers between notify_blocked/unblocked */
  size_t queue_length;       /* items queued, not yet started */
  uint64_t items_completed;  /* items (work items, tasks, continuations) run */
  uint64_t threads_injected; /* workers added by starvation injection */
  uint64_t threads_compensated; /* workers added by compensation */
  uint64_t threads_retired;     /* idle workers that exited */
  uint64_t queue_wait_min_ns;   /* submit-to-start of items run so far */
  uint64_t queue_wait_median_ns;
  uint64_t queue_wait_p99_ns;
  uint64_t queue_wait_max_ns;
} bw_pool_stats;

/* Task states, as returned by bw_task_state_get(). */
typedef enum bw_task_state {
  BW_TASK_PENDING = 0, /* not yet completed (queued, running or waiting) */
  BW_TASK_COMPLETED,   /* ran to completion; bw_task_result() is valid */
  BW_TASK_CANCELED,    /* canceled through a token or bw_task_cancel() */
} bw_task_state;

/* ---- pools ------------------------------------------------------------ */

/* Creates a pool and starts cfg->min_workers workers. cfg NULL = defaults.
 * Returns NULL with errno EINVAL (max < min after defaults, bad name) or
 * ENOMEM / EAGAIN (thread creation failed). */
bw_pool *bw_pool_create(const bw_pool_config *cfg);

/* Stops accepting work, runs every item already queued (and continuations
 * they queue), joins the workers and frees the pool. Returns -EINVAL for NULL
 * or the default pool, -EDEADLK when called from one of the pool's own
 * workers. Pending delays are canceled. */
int bw_pool_destroy(bw_pool *pool);

/* The process-wide pool, created on first use with default settings (the
 * environment variable BW_DEFAULT_POOL_WORKERS overrides min_workers). Never
 * destroyed; returns NULL only if it could not be created. */
bw_pool *bw_pool_default(void);

/* Copies a consistent-enough snapshot of the pool's counters into *out. */
int bw_pool_stats_get(bw_pool *pool, bw_pool_stats *out);

/* The pool whose worker is the calling thread, or NULL. */
bw_pool *bw_current_pool(void);

/* Announces that the calling worker is about to block (or has stopped
 * blocking). With BW_POOL_COMPENSATE the pool starts a spare worker at once
 * (bounded by max_workers); counted in stats either way. Calls nest. Returns
 * -EPERM when the calling thread is not a worker of any pool. */
int bw_pool_notify_blocked(void);
int bw_pool_notify_unblocked(void);

/* ---- work items ------------------------------------------------------- */

/* Queues fn(arg) to run once on a worker (QueueUserWorkItem). From a worker
 * of the same pool it goes to that worker's local deque, otherwise to the
 * global queue. Returns -EINVAL for a NULL fn, -ESHUTDOWN once the pool is
 * being destroyed, -ENOMEM. */
int bw_submit(bw_pool *pool, void (*fn)(void *arg), void *arg);

/* ---- tasks ------------------------------------------------------------ */

/* Runs fn(arg) on the pool; the task completes with fn's return value as its
 * result (Task.Run). */
bw_task *bw_run(bw_pool *pool, void *(*fn)(void *arg), void *arg);

/* Queues fn(done, arg) to the task's pool once `task` completes or is
 * canceled (ContinueWith); at once if it already has. The returned task
 * completes with fn's result. `task` keeps its own reference count: the
 * caller may release it right after this call. */
bw_task *bw_then(bw_task *task, void *(*fn)(bw_task *done, void *arg),
                 void *arg);

/* As bw_then, and the caller's reference to `task` passes to the returned
 * continuation, as if bw_task_release(task) followed - but without the
 * release's locked instruction. The idiom for building a chain:
 * `t = bw_then_consume(t, step, arg)`. To keep using `task`, hand over a
 * reference of its own: bw_then_consume(bw_task_retain(task), ...). On
 * failure (NULL, errno set) the caller keeps its reference. */
bw_task *bw_then_consume(bw_task *task, void *(*fn)(bw_task *done, void *arg),
                         void *arg);

/* A task that completes after `ms` milliseconds, driven by the pool's timer
 * thread: it holds no worker while it waits (Task.Delay). Its result is
 * NULL. */
bw_task *bw_delay(bw_pool *pool, uint64_t ms);

/* As bw_delay, canceled early (state BW_TASK_CANCELED) when `token` is. */
bw_task *bw_delay_cancelable(bw_pool *pool, uint64_t ms,
                             bw_cancel_token *token);

/* A task that completes when all n tasks have (WhenAll); its result is NULL.
 * It is canceled if any of them was canceled. n == 0 completes at once. */
bw_task *bw_when_all(bw_task *const *tasks, size_t n);

/* A task that completes when the first of n tasks does (WhenAny); its result
 * is that task (borrowed: valid while the caller holds its own reference). */
bw_task *bw_when_any(bw_task *const *tasks, size_t n);

/* Blocks the calling thread until the task completes (Task.Wait). timeout_ms
 * -1 waits forever. Returns 0 when completed, -ETIMEDOUT, -ECANCELED when the
 * task was canceled, -EDEADLK when called from inside the task itself (or a
 * pool whose every worker would wait on it), -EINVAL for NULL. This is the
 * sync-over-async call both tools flag on a worker: prefer bw_then.
 * Helping: with timeout_ms -1, on a thread that is not a pool worker, the
 * wait runs queued items of the task's pool on the calling thread while the
 * task is pending, fewer of its workers are awake than there are CPUs and
 * none is announced blocked (so a task still queued may run on its
 * waiter); never with BW_POOL_NO_HELPING.
 * The pool must not be destroyed before the wait begins. */
int bw_wait(bw_task *task, int64_t timeout_ms);

/* As bw_wait; also returns -ECANCELED as soon as `token` is canceled. */
int bw_wait_cancelable(bw_task *task, int64_t timeout_ms,
                       bw_cancel_token *token);

/* The state of a task; never blocks. */
bw_task_state bw_task_state_get(const bw_task *task);

/* The result of a completed task, NULL while pending or when canceled. */
void *bw_task_result(const bw_task *task);

/* Adds a reference; returns task. */
bw_task *bw_task_retain(bw_task *task);

/* Drops a reference; the task is freed when the last one goes (the runtime
 * holds its own while the task is queued or has continuations). */
void bw_task_release(bw_task *task);

/* ---- completion sources (TaskCompletionSource) ------------------------ */

/* A pending task that only bw_task_complete()/bw_task_cancel() finish, from
 * any thread. Continuations run on `pool`. */
bw_task *bw_completion_create(bw_pool *pool);

/* Completes a completion-source task with `result`. Returns -EALREADY if it
 * has already been completed or canceled, -EPERM for a task that is not a
 * completion source. */
int bw_task_complete(bw_task *task, void *result);

/* Cancels a completion-source or delay task. -EALREADY if already done. */
int bw_task_cancel(bw_task *task);

/* As bw_task_cancel, with the reason bw_task_error() then reports: `err`
 * is a negative errno (-EINVAL otherwise). The runtime's own waits use it:
 * -ETIMEDOUT for a bw_fd_ready timeout, -ESHUTDOWN for a wait whose
 * primitive or pool went away first. */
int bw_task_cancel_with(bw_task *task, int err);

/* How a task ended: 0 completed (bw_task_result() is valid), the negative
 * errno it was canceled with (-ECANCELED for a token or bw_task_cancel()),
 * -EINPROGRESS while pending, -EINVAL for NULL. Never blocks. */
int bw_task_error(const bw_task *task);

/* ---- cancellation ----------------------------------------------------- */

/* A cancellation token (CancellationTokenSource and its token in one). */
bw_cancel_token *bw_cancel_token_create(void);

/* Cancels the token: delays and waits that honour it end with ECANCELED.
 * Idempotent. */
int bw_cancel_token_cancel(bw_cancel_token *token);

/* Nonzero once the token has been canceled. */
int bw_cancel_token_is_canceled(const bw_cancel_token *token);

/* Frees the token once nothing that honours it still refers to it. */
void bw_cancel_token_release(bw_cancel_token *token);

/* Adds a reference (e.g. for another thread that will cancel it); each
 * retain is matched by a bw_cancel_token_release(). Returns token. */
bw_cancel_token *bw_cancel_token_retain(bw_cancel_token *token);

/* ---- waits that hold no thread: semaphore, event, mutex, timer --------
 *
 * An acquire, wait or lock that cannot complete at once returns a pending
 * task that a release, set or unlock completes later; no thread waits.
 * Waiters are served in the order they asked (FIFO). Such a task's
 * continuations run on the pool of the worker that asked, or on the
 * default pool when a thread off the pool asked; that pool must outlive
 * the wait. How the task ended, as bw_task_error() reads it:
 *  - 0: the unit, event or lock was taken (state COMPLETED, result NULL);
 *  - -ECANCELED: `token` was canceled first, or the task was canceled with
 *    bw_task_cancel() (state CANCELED; nothing was taken);
 *  - -ESHUTDOWN: the primitive was destroyed first (state CANCELED; nothing
 *    was taken).
 * A continuation checks bw_task_error(done) == 0 before it uses what it
 * waited for. Releases, sets and unlocks may come from any thread. Whoever
 * sees its wait completed may destroy the primitive, even while the release
 * that completed it has not yet returned. */

typedef struct bw_semaphore bw_semaphore;
typedef struct bw_event bw_event;
typedef struct bw_async_mutex bw_async_mutex;
typedef struct bw_timer bw_timer;

/* A counting semaphore with `initial` units (SemaphoreSlim). NULL with
 * errno ENOMEM. */
bw_semaphore *bw_semaphore_create(unsigned initial);
/* A task that completes when a unit is taken (WaitAsync): at once when one
 * is free and nobody waits. A token already canceled gives a canceled
 * task. NULL with errno EINVAL or ENOMEM. */
bw_task *bw_semaphore_acquire(bw_semaphore *s, bw_cancel_token *token);
/* Takes a unit if one is free now: 0, or -EAGAIN. */
int bw_semaphore_try_acquire(bw_semaphore *s);
/* Adds n units, handed to the oldest waiters first. -EOVERFLOW (nothing
 * added) when the count would pass UINT_MAX. */
int bw_semaphore_release(bw_semaphore *s, unsigned n);
/* Units free now, and acquires pending now (racy snapshots). */
unsigned bw_semaphore_count(const bw_semaphore *s);
size_t bw_semaphore_waiters(const bw_semaphore *s);
/* Frees the semaphore; pending acquires complete with -ESHUTDOWN. */
int bw_semaphore_destroy(bw_semaphore *s);

/* An event, unset at creation. Manual reset (ManualResetEvent): set
 * completes every wait and the event stays set until bw_event_reset. Auto
 * reset (AutoResetEvent): set completes the oldest wait, or, when none is
 * pending, leaves the event set until one wait takes it; setting a set
 * event changes nothing. NULL with errno ENOMEM. */
bw_event *bw_event_create(int manual_reset);
int bw_event_set(bw_event *e);
int bw_event_reset(bw_event *e);
/* A task that completes when the event is set (at once if it is); an
 * auto-reset event is reset by the wait it completes. */
bw_task *bw_event_wait(bw_event *e, bw_cancel_token *token);
/* Nonzero while set (a racy snapshot). */
int bw_event_is_set(const bw_event *e);
/* Frees the event; pending waits complete with -ESHUTDOWN. */
int bw_event_destroy(bw_event *e);

/* A mutex for critical sections that span continuations: it belongs to no
 * thread, so any thread may unlock it once the lock task completed. */
bw_async_mutex *bw_async_mutex_create(void);
/* A task that completes when the caller holds the mutex. */
bw_task *bw_async_mutex_lock(bw_async_mutex *m, bw_cancel_token *token);
/* Takes the mutex if it is free now: 0, or -EBUSY. */
int bw_async_mutex_try_lock(bw_async_mutex *m);
/* Passes the mutex to the oldest waiter, or frees it. -EPERM when it is
 * not locked. */
int bw_async_mutex_unlock(bw_async_mutex *m);
int bw_async_mutex_is_locked(const bw_async_mutex *m);
/* Frees the mutex (locked or not); pending locks complete with
 * -ESHUTDOWN. */
int bw_async_mutex_destroy(bw_async_mutex *m);

/* Runs fn(arg) on the pool first_ms from now, then every period_ms on the
 * fixed schedule first + k * period (period_ms 0: once). Runs never
 * overlap: the next one is scheduled when fn returns, at the first tick
 * still ahead, so ticks that pass while fn runs (or waits in the queue)
 * are skipped, not queued. Between runs the timer holds no thread: it
 * waits in the pool's timer heap. Pool destroy ends it (no run after the
 * pool's queue drained). NULL with errno EINVAL (fn NULL), ESHUTDOWN or
 * ENOMEM. */
bw_timer *bw_timer_start(bw_pool *pool, uint64_t first_ms, uint64_t period_ms,
                         void (*fn)(void *arg), void *arg);
/* Stops the timer and frees the handle (call it once for every started
 * timer, one-shot or not, even after its pool is gone). Waits for nothing:
 * no run starts after it returns; a run that has already started goes on.
 * Returns 1 when a run was executing fn at that moment (also when called
 * from fn itself), so the caller knows fn may still touch arg; 0 when fn
 * will never run again; -EINVAL for NULL. */
int bw_timer_stop(bw_timer *timer);

/* ---- errors ----------------------------------------------------------- */

/* A static description of a negative (or positive) errno returned here. */
const char *bw_strerror(int err);

/* ---- offloading: blocking calls, descriptor readiness, parallel loops -- */

/* What the calling thread is to the runtime (bw_thread_role_get). A tool
 * counts blocking on BW_ROLE_BLOCKING threads apart from worker
 * blocking: blocking there is what they are for. */
typedef enum bw_thread_role {
  BW_ROLE_OTHER = 0, /* not a runtime thread */
  BW_ROLE_WORKER,    /* a pool worker */
  BW_ROLE_BLOCKING,  /* a blocking thread while it runs a bw_run_blocking job */
  BW_ROLE_POLLER,    /* a pool's descriptor poller (bw_fd_ready) */
  /* Any other runtime thread, in the runtime's own waits: the gate thread
   * (timers, injection), a blocking thread between jobs. */
  BW_ROLE_RUNTIME,
} bw_thread_role;

bw_thread_role bw_thread_role_get(void);

/* Runs fn(arg) on one of the pool's blocking threads, kept apart from its
 * workers, for a call that must block (a synchronous database client,
 * getaddrinfo, fsync); the task completes with fn's result. Threads are
 * started on demand, at most the pool's blocking limit at once (further jobs
 * wait in FIFO order), and retire after an idle timeout
 * (bw_run_blocking_limits). bw_task_cancel() on the task before fn started
 * keeps fn from running. bw_pool_destroy cancels the jobs not yet started
 * (bw_task_error: -ESHUTDOWN) and waits for the running ones. NULL with errno
 * EINVAL (fn NULL), ESHUTDOWN (pool being destroyed), ENOMEM, EAGAIN (no thread
 * could start). */
bw_task *bw_run_blocking(bw_pool *pool, void *(*fn)(void *arg), void *arg);

/* Sets the pool's blocking-thread bound (default 64) and how long an idle
 * blocking thread waits for a job before it exits (default 10000 ms); 0
 * keeps the default. A lower bound does not stop running threads; they
 * retire as they go idle. */
int bw_run_blocking_limits(bw_pool *pool, unsigned max_threads,
                           unsigned idle_timeout_ms);

/* A snapshot of a pool's blocking threads. */
typedef struct bw_blocking_stats {
  unsigned threads;     /* live blocking threads */
  unsigned idle;        /* of which waiting for a job */
  unsigned max_threads; /* the bound */
  size_t queued;        /* jobs waiting for a thread */
  uint64_t started;     /* jobs taken by a thread (canceled ones too) */
  uint64_t completed;   /* jobs done */
  uint64_t retired;     /* threads that exited idle */
} bw_blocking_stats;

int bw_blocking_stats_get(bw_pool *pool, bw_blocking_stats *out);

/* A task that completes when `fd` is ready for `events` (POLLIN, POLLOUT,
 * POLLPRI; POLLERR and POLLHUP always count) with the ready events as its
 * result, `(void *)(intptr_t)revents`; canceled when timeout_ms (>= 0)
 * passes first (bw_task_error: -ETIMEDOUT), by bw_task_cancel (-ECANCELED),
 * when the pool is destroyed (-ESHUTDOWN) or when fd was closed and its
 * number reused by a newer wait (-EBADF). It
 * holds no thread: one epoll instance and one poller thread per pool serve
 * every descriptor, and timeouts are the pool's timers. One pending wait per
 * open file description: a second gets EBUSY. A regular file is always
 * ready. NULL with errno EBADF (fd not open), EINVAL (no events asked),
 * EBUSY, ESHUTDOWN, ENOMEM. */
bw_task *bw_fd_ready(bw_pool *pool, int fd, int events, int64_t timeout_ms);

/* Calls body(b, e, arg) over disjoint ranges [b, e) that cover [begin,
 * end) exactly once, on the calling thread and the pool's workers at once,
 * and returns when every range has run. The range is split among the
 * participants and idle ones steal halves of the others' remaining ranges;
 * each takes `grain` indices at a time (0: chosen from the range and the
 * number of workers). A loop that its first take shows to be too short to
 * share runs on the caller alone. Called from a worker (a nested loop included)
 * the worker runs ranges and other queued items while it waits: it never
 * blocks. Returns 0, -EINVAL (body NULL, begin > end), -ESHUTDOWN,
 * -ENOMEM. */
int bw_parallel_for(bw_pool *pool, size_t begin, size_t end, size_t grain,
                    void (*body)(size_t begin, size_t end, void *arg),
                    void *arg);

#ifdef __cplusplus
}
#endif

#endif /* BLOCKWATCH_RUNTIME_H */
