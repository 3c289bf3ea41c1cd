/* interpose.c - the exported wrappers: every function libblockwatch.so
 * wraps, generated from table.h, plus the few written out by hand.
 *
 * Invariants:
 *  - A wrapper finds its real function through real.h and asks policy.h
 *    whether the call counts; it holds no table or rule of its own.
 *  - A wrapper whose real function is missing fails loudly (ENOSYS and a
 *    "blockwatch: ERROR" line) - never a call through NULL.
 *  - A wrapper goes straight to the real function, with nothing else done,
 *    when bwsh__passthrough says so (the function does not count) or the
 *    call cannot block: an "unless" condition of the function's rule
 *    (zero timeouts, WNOHANG, O_NONBLOCK: policy.c), getchar's stdin
 *    check or, for a lock, a try-lock that succeeds (table.h).
 *  - The return value is the real one, unchanged, and so is errno.
 *  - pthread_cond_wait/timedwait exist in two symbol versions on x86_64
 *    (GLIBC_2.3.2, the default, and the old GLIBC_2.2.5 ABI); each of ours
 *    forwards to the same version the caller linked against.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#undef _FORTIFY_SOURCE
#include "policy.h"
#include "real.h"

#include <linux/close_range.h>
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/msg.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

/* ---- descriptor bookkeeping helpers (table.h, BW_SHIM_FDS) ----------- */

static inline void forget_file(FILE *fp) {
  if (fp)
    bwsh__fd_forget(fileno_unlocked(fp));
}

static inline void forget_dir(DIR *d) {
  if (d)
    bwsh__fd_forget(dirfd(d));
}

/* close_range: forget what it closed (CLOSE_RANGE_CLOEXEC closes nothing). */
static inline void forget_range(int r, unsigned first, unsigned last,
                                int flags) {
  if (r != 0 || (flags & CLOSE_RANGE_CLOEXEC))
    return;
  for (unsigned fd = first; fd <= last && fd < 65536u; fd++)
    bwsh__fd_forget((int)fd);
}

static inline void forget_pair(int r, const int fds[2]) {
  if (r == 0) {
    bwsh__fd_forget(fds[0]);
    bwsh__fd_forget(fds[1]);
  }
}

/* A wrapped function whose real one cannot be found: loud, never NULL. */
static long missing(const char *name) {
  static const char msg[] = "blockwatch: ERROR: real function not found: ";
  bwsh__write_all(2, msg, sizeof msg - 1);
  bwsh__write_all(2, name, strlen(name));
  bwsh__write_all(2, "\n", 1);
  errno = ENOSYS;
  return -1;
}

/* The value a failed call returns: -1, or NULL for pointer results. */
#define FAIL_VALUE(ret, name)                                                  \
  ((ret)(intptr_t)(_Generic((ret)0, FILE * : 1, char * : 1, void * : 1,        \
                            struct hostent * : 1, default : 0)                 \
                       ? (missing(#name), 0)                                   \
                       : missing(#name)))

/* The return address into the program: identifies the call site. Used in
 * the exported function itself, never in a helper it calls. */
#define CALLER __builtin_return_address(0)

/* A counted call on a thread known not to be a worker takes the short way
 * (bwsh__count_other_call: +3-8 ns against +14-22 through begin/end). The
 * "unlikely" is a code-layout hint, not a guess about programs: it moves
 * that path out of the worker path's cache line. Laid out the other way
 * (same instructions) a counted call on a worker cost ~20 ns more on the
 * development VM's AMD EPYC, measured interleaved; with it, no change.
 * The short way takes the caller: one from libuv's code goes the long way,
 * which tells libuv's one-time setup from a call of the program's. */
#define OTHER_THREAD() __builtin_expect(bwsh__self.kind == BW_THREAD_OTHER, 0)

/* ---- the generated wrappers ---------------------------------------------- */

/* 1 when an "unless" condition of the function's rule says this call, with
 * these arguments (a parenthesized list), cannot block. Keeps errno. A
 * function whose rule has none (sched_yield, the locks) is not asked. */
#define EXCUSED(id, args)                                                      \
  (bwsh__fn_conditional[id] &&                                                 \
   bwsh__call_excused(                                                         \
       id, (const uint64_t[])BWSH__ARGV args + 1,                              \
       sizeof((const uint64_t[])BWSH__ARGV args) / sizeof(uint64_t) - 1))

#define WRAP_FUNC(ret, name, canon, params, args, check)                       \
  EXPORT ret name params {                                                     \
    ret(*fn) params = bwsh__get_##name();                                      \
    if (!fn)                                                                   \
      return FAIL_VALUE(ret, name);                                            \
    if (__builtin_expect(bwsh__passthrough(BW_FN_##name), 1))                  \
      return fn args;                                                          \
    if (!(check) || EXCUSED(BW_FN_##name, args))                               \
      return fn args;                                                          \
    if (OTHER_THREAD() && bwsh__count_other_call(BW_FN_##name, CALLER))        \
      return fn args;                                                          \
    bwsh__call call;                                                           \
    bwsh__call_begin(&call, BW_FN_##name, CALLER);                             \
    ret r = fn args;                                                           \
    bwsh__call_end(&call);                                                     \
    return r;                                                                  \
  }
BW_SHIM_GENERATED(WRAP_FUNC)
#undef WRAP_FUNC

/* Locks: try first; only a lock that is held by someone else is timed. A
 * mutex that cannot block (one thread, policy.h) skips the try: glibc's
 * lock is cheaper than its try-lock then. What follows a busy try is out
 * of line (name_held, reached by a tail call, the caller passed in), so
 * that the wrapper that only passes a call on, as every lock does with
 * lock=0, or takes a free lock needs no more frame than that. */
#define WRAP_LOCK(name, type, trylock, xparams, xargs)                         \
  static __attribute__((noinline)) int name##_held(                            \
      int (*fn)(type * lk BW_EXPAND xparams), type *lk BW_EXPAND xparams,      \
      void *caller) {                                                          \
    if (EXCUSED(BW_FN_##name, (lk BW_EXPAND xargs)) ||                         \
        (OTHER_THREAD() && bwsh__count_other_call(BW_FN_##name, caller)))      \
      return fn(lk BW_EXPAND xargs);                                           \
    bwsh__call call;                                                           \
    bwsh__call_begin(&call, BW_FN_##name, caller);                             \
    int r = fn(lk BW_EXPAND xargs);                                            \
    bwsh__call_end(&call);                                                     \
    return r;                                                                  \
  }                                                                            \
  EXPORT int name(type *lk BW_EXPAND xparams) {                                \
    int (*fn)(type * lk BW_EXPAND xparams) = bwsh__get_##name();               \
    if (!fn)                                                                   \
      return FAIL_VALUE(int, name);                                            \
    int (*try_fn)(type *);                                                     \
    if (__builtin_expect(bwsh__passthrough(BW_FN_##name), 1) ||                \
        BWSH__LOCK_CANNOT_BLOCK(lk) || !(try_fn = bwsh__get_##trylock()))      \
      return fn(lk BW_EXPAND xargs);                                           \
    int r = try_fn(lk);                                                        \
    if (r != EBUSY)                                                            \
      return r; /* taken at once (or an error the lock would give too) */      \
    return name##_held(fn, lk BW_EXPAND xargs, CALLER);                        \
  }
BW_SHIM_LOCKS(WRAP_LOCK)
#undef WRAP_LOCK

/* Descriptor bookkeeping: never counted, only keeps the fd cache honest. */
#define WRAP_FD(ret, name, params, args, before, after)                        \
  EXPORT ret name params {                                                     \
    ret(*fn) params = bwsh__get_##name();                                      \
    if (!fn)                                                                   \
      return FAIL_VALUE(ret, name);                                            \
    before;                                                                    \
    ret r = fn args;                                                           \
    int saved = errno;                                                         \
    after;                                                                     \
    errno = saved;                                                             \
    return r;                                                                  \
  }
BW_SHIM_FDS(WRAP_FD)
#undef WRAP_FD

static int fcntl_common(int (*fn)(int, int, ...), int fd, int cmd, long arg) {
  if (!fn)
    return FAIL_VALUE(int, fcntl);
  int r = fn(fd, cmd, arg);
  int saved = errno;
  if (cmd == F_SETFL)
    bwsh__fd_forget(fd);
  else if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)
    bwsh__fd_forget(r);
  errno = saved;
  return r;
}

#define WRAP_FCNTL(name)                                                       \
  EXPORT int name(int fd, int cmd, ...) {                                      \
    va_list ap;                                                                \
    va_start(ap, cmd);                                                         \
    long arg = va_arg(ap, long);                                               \
    va_end(ap);                                                                \
    return fcntl_common(bwsh__get_##name(), fd, cmd, arg);                     \
  }
WRAP_FCNTL(fcntl)
WRAP_FCNTL(fcntl64)
#undef WRAP_FCNTL

EXPORT int ioctl(int fd, unsigned long req, ...) {
  va_list ap;
  va_start(ap, req);
  void *arg = va_arg(ap, void *);
  va_end(ap);
  int (*fn)(int, unsigned long, ...) = bwsh__get_ioctl();
  if (!fn)
    return FAIL_VALUE(int, ioctl);
  int r = fn(fd, req, arg);
  if (req == FIONBIO)
    bwsh__fd_forget(fd);
  return r;
}

#define WRAP_OPEN(name, params, pre, call)                                     \
  EXPORT int name params {                                                     \
    unsigned mode = 0; /* read only when the caller passed one */              \
    if (flags & (O_CREAT | O_TMPFILE)) {                                       \
      va_list ap;                                                              \
      va_start(ap, flags);                                                     \
      mode = va_arg(ap, unsigned);                                             \
      va_end(ap);                                                              \
    }                                                                          \
    int(*fn) pre = bwsh__get_##name();                                         \
    if (!fn)                                                                   \
      return FAIL_VALUE(int, name);                                            \
    int r = fn call;                                                           \
    bwsh__fd_forget(r);                                                        \
    return r;                                                                  \
  }
WRAP_OPEN(open, (const char *path, int flags, ...), (const char *, int, ...),
          (path, flags, mode))
WRAP_OPEN(open64, (const char *path, int flags, ...), (const char *, int, ...),
          (path, flags, mode))
WRAP_OPEN(openat, (int dfd, const char *path, int flags, ...),
          (int, const char *, int, ...), (dfd, path, flags, mode))
WRAP_OPEN(openat64, (int dfd, const char *path, int flags, ...),
          (int, const char *, int, ...), (dfd, path, flags, mode))
#undef WRAP_OPEN

/* ---- hand-written: sync (void), condition variables (versioned) --------- */

EXPORT void sync(void) {
  void (*fn)(void) = bwsh__get_sync();
  if (!fn) {
    missing("sync");
    return;
  }
  if (bwsh__passthrough(BW_FN_sync) || EXCUSED(BW_FN_sync, ())) {
    fn();
    return;
  }
  bwsh__call call;
  bwsh__call_begin(&call, BW_FN_sync, CALLER);
  fn();
  bwsh__call_end(&call);
}

/* One body for both versions: `fn` is the matching real one. */
static int cond_wait_via(bwsh__cond_wait_fn fn, pthread_cond_t *c,
                         pthread_mutex_t *m, void *caller) {
  if (!fn)
    return FAIL_VALUE(int, pthread_cond_wait);
  if (bwsh__passthrough(BW_FN_pthread_cond_wait) ||
      EXCUSED(BW_FN_pthread_cond_wait, (c, m)))
    return fn(c, m);
  bwsh__call call;
  bwsh__call_begin(&call, BW_FN_pthread_cond_wait, caller);
  int r = fn(c, m);
  bwsh__call_end(&call);
  return r;
}

static int cond_timedwait_via(bwsh__cond_timedwait_fn fn, pthread_cond_t *c,
                              pthread_mutex_t *m, const struct timespec *ts,
                              void *caller) {
  if (!fn)
    return FAIL_VALUE(int, pthread_cond_timedwait);
  if (bwsh__passthrough(BW_FN_pthread_cond_timedwait) ||
      EXCUSED(BW_FN_pthread_cond_timedwait, (c, m, ts)))
    return fn(c, m, ts);
  bwsh__call call;
  bwsh__call_begin(&call, BW_FN_pthread_cond_timedwait, caller);
  int r = fn(c, m, ts);
  bwsh__call_end(&call);
  return r;
}

#if defined(__x86_64__)
#define COND_NEW "GLIBC_2.3.2"
#define COND_OLD "GLIBC_2.2.5"
EXPORT int bwsh__cond_wait_new(pthread_cond_t *c, pthread_mutex_t *m);
EXPORT int bwsh__cond_wait_old(pthread_cond_t *c, pthread_mutex_t *m);
EXPORT int bwsh__cond_timedwait_new(pthread_cond_t *c, pthread_mutex_t *m,
                                    const struct timespec *ts);
EXPORT int bwsh__cond_timedwait_old(pthread_cond_t *c, pthread_mutex_t *m,
                                    const struct timespec *ts);
__asm__(".symver bwsh__cond_wait_new, pthread_cond_wait@@" COND_NEW);
__asm__(".symver bwsh__cond_wait_old, pthread_cond_wait@" COND_OLD);
__asm__(".symver bwsh__cond_timedwait_new, pthread_cond_timedwait@@" COND_NEW);
__asm__(".symver bwsh__cond_timedwait_old, pthread_cond_timedwait@" COND_OLD);

int bwsh__cond_wait_new(pthread_cond_t *c, pthread_mutex_t *m) {
  return cond_wait_via(bwsh__real_cond_wait(0), c, m, CALLER);
}
int bwsh__cond_wait_old(pthread_cond_t *c, pthread_mutex_t *m) {
  return cond_wait_via(bwsh__real_cond_wait(1), c, m, CALLER);
}
int bwsh__cond_timedwait_new(pthread_cond_t *c, pthread_mutex_t *m,
                             const struct timespec *ts) {
  return cond_timedwait_via(bwsh__real_cond_timedwait(0), c, m, ts, CALLER);
}
int bwsh__cond_timedwait_old(pthread_cond_t *c, pthread_mutex_t *m,
                             const struct timespec *ts) {
  return cond_timedwait_via(bwsh__real_cond_timedwait(1), c, m, ts, CALLER);
}
#else
/* Other architectures have one version. */
EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m) {
  return cond_wait_via(bwsh__real_cond_wait(0), c, m, CALLER);
}
EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
                                  const struct timespec *ts) {
  return cond_timedwait_via(bwsh__real_cond_timedwait(0), c, m, ts, CALLER);
}
#endif

/* ---- GLib's waits with no result, and its locks (table.h) ---------------- */

/* The counted call of a void function, once the wrapper decided it needs
 * begin/end (the other thread fast path taken when it can). */
#define TIMED_VOID(name, call)                                                 \
  do {                                                                         \
    if (OTHER_THREAD() && bwsh__count_other_call(BW_FN_##name, CALLER)) {      \
      call;                                                                    \
      return;                                                                  \
    }                                                                          \
    bwsh__call c_;                                                             \
    bwsh__call_begin(&c_, BW_FN_##name, CALLER);                               \
    call;                                                                      \
    bwsh__call_end(&c_);                                                       \
  } while (0)

#define WRAP_GLIB_VOID(ret, name, canon, params, args, check)                  \
  EXPORT void name params {                                                    \
    void(*fn) params = bwsh__get_##name();                                     \
    if (!fn) {                                                                 \
      missing(#name);                                                          \
      return;                                                                  \
    }                                                                          \
    if (__builtin_expect(bwsh__passthrough(BW_FN_##name), 1) ||                \
        EXCUSED(BW_FN_##name, args)) {                                         \
      fn args;                                                                 \
      return;                                                                  \
    }                                                                          \
    TIMED_VOID(name, fn args);                                                 \
  }
BW_SHIM_GLIB_VOID(WRAP_GLIB_VOID)
#undef WRAP_GLIB_VOID

/* GLib's try-locks give TRUE when they took the lock: then it is held, and
 * the call is over. */
#define WRAP_GLIB_LOCK(ret, name, canon, params, args, trylock)                \
  EXPORT void name(void *lk) {                                                 \
    void (*fn)(void *) = bwsh__get_##name();                                   \
    if (!fn) {                                                                 \
      missing(#name);                                                          \
      return;                                                                  \
    }                                                                          \
    int (*try_fn)(void *);                                                     \
    if (__builtin_expect(bwsh__passthrough(BW_FN_##name), 1) ||                \
        !(try_fn = bwsh__get_##trylock())) {                                   \
      fn(lk);                                                                  \
      return;                                                                  \
    }                                                                          \
    if (try_fn(lk))                                                            \
      return;                                                                  \
    if (EXCUSED(BW_FN_##name, (lk))) {                                         \
      fn(lk);                                                                  \
      return;                                                                  \
    }                                                                          \
    TIMED_VOID(name, fn(lk));                                                  \
  }
BW_SHIM_GLIB_LOCKS(WRAP_GLIB_LOCK)
#undef WRAP_GLIB_LOCK
#undef TIMED_VOID

/* ---- the loop runners: a loop thread while one runs (loops.c) ---------- */

/* Function pointers do not convert to void *: the runner goes to loops.c
 * as a generic function pointer, to find its library. */
typedef void (*any_fn)(void);

/* `call` runs as a loop of `kind` on this thread. */
#define AS_LOOP(kind, fn, call)                                                \
  do {                                                                         \
    bwsh__loop_thread saved_;                                                  \
    int on_ = bwsh__loop_enter(&saved_, kind, (any_fn)fn,                      \
                               __builtin_return_address(0));                   \
    call;                                                                      \
    if (on_)                                                                   \
      bwsh__loop_leave(&saved_);                                               \
  } while (0)

#define WRAP_LOOP(name, kind, params, args)                                    \
  EXPORT int name params {                                                     \
    int(*fn) params = bwsh__get_##name();                                      \
    if (!fn)                                                                   \
      return FAIL_VALUE(int, name);                                            \
    int r;                                                                     \
    AS_LOOP(kind, fn, r = fn args);                                            \
    return r;                                                                  \
  }
WRAP_LOOP(uv_run, BW_LOOP_LIBUV, (void *loop, int mode), (loop, mode))
WRAP_LOOP(g_main_context_iteration, BW_LOOP_GLIB, (void *ctx, int may_block),
          (ctx, may_block))
WRAP_LOOP(event_base_loop, BW_LOOP_LIBEVENT, (void *base, int flags),
          (base, flags))
WRAP_LOOP(event_base_dispatch, BW_LOOP_LIBEVENT, (void *base), (base))
#undef WRAP_LOOP

EXPORT void g_main_loop_run(void *loop) {
  void (*fn)(void *) = bwsh__get_g_main_loop_run();
  if (!fn) {
    missing("g_main_loop_run");
    return;
  }
  AS_LOOP(BW_LOOP_GLIB, fn, fn(loop));
}
#undef AS_LOOP

/* ---- exits: _exit and _Exit flush the report first ---------------------- */

/* Ends the process through `fn` (the real _exit or _Exit: each wrapper
 * forwards to its own), or the system call when it is missing. */
__attribute__((noreturn)) static void exit_through(void (*fn)(int),
                                                   int status) {
  if (fn)
    fn(status);
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}

/* The status to exit with, after the final report. */
static int report_before_exit(int status) {
  /* A vfork child shares our memory: its _exit must not write (and so use
   * up) the parent's report. */
  if (atomic_load_explicit(&bwsh__active, memory_order_relaxed) &&
      bwsh__is_own_process()) {
    bwsh__report_final(BW_WHY_EXIT);
    if (bwsh__opt.fail == BW_FAIL_REPORT && status == 0 && bwsh__has_findings())
      status = bwsh__opt.exitcode;
  }
  return status;
}

EXPORT void _exit(int status) {
  exit_through(bwsh__get__exit(), report_before_exit(status));
}

EXPORT void _Exit(int status) {
  exit_through(bwsh__get__Exit(), report_before_exit(status));
}

/* ---- threads: start routines and names classify workers ----------------- */

typedef struct trampoline {
  void *(*start)(void *);
  void *arg;
  int maker; /* BW_LIB_* of the code that made the thread, or BW_LIB_NONE */
} trampoline;

/* The new thread's first instruction: it is what its maker made it (a
 * foreign pool's), or a worker_start worker. */
static void *start_known(void *p) {
  trampoline t = *(trampoline *)p;
  free(p);
  if (t.maker != BW_LIB_NONE)
    bwsh__thread_born_of(t.maker);
  else
    bwsh__thread_is_option_worker();
  return t.start(t.arg);
}

/* Is `start` the routine named by worker_start? A few answers are cached:
 * symbolizing costs far more than a thread creation. */
static int is_worker_start(void *(*start)(void *)) {
  static struct {
    _Atomic(void *) addr;
    atomic_int match;
  } cache[16];
  void *addr;
  memcpy(&addr, &start, sizeof addr);
  for (int i = 0; i < 16; i++)
    if (atomic_load(&cache[i].addr) == addr)
      return atomic_load(&cache[i].match);
  bwsh__sym sym;
  bwsh__symbolize_lock();
  bwsh__symbolize((char *)addr + 1, &sym, 0); /* +1: it wants a return pc */
  bwsh__symbolize_unlock();
  int match = strcmp(sym.function, bwsh__opt.worker_start) == 0;
  static atomic_uint next;
  unsigned k = atomic_fetch_add(&next, 1) % 16;
  atomic_store(&cache[k].match, match);
  atomic_store(&cache[k].addr, addr);
  return match;
}

EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr,
                          void *(*start)(void *), void *arg) {
  int (*fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *) =
      bwsh__get_pthread_create();
  if (!fn)
    return EAGAIN;
  if (!atomic_load_explicit(&bwsh__active, memory_order_relaxed) ||
      bwsh__self.depth)
    return fn(th, attr, start, arg);
  int saved_errno = errno;
  bwsh__self.depth++;
  int maker = bwsh__foreign_thread_maker(CALLER);
  int match = maker == BW_LIB_NONE && bwsh__opt.worker_start[0] &&
              is_worker_start(start);
  trampoline *t = maker != BW_LIB_NONE || match ? malloc(sizeof *t) : NULL;
  if (t && maker == BW_LIB_UV)
    bwsh__thread_starts_uv_pool();
  bwsh__self.depth--;
  errno = saved_errno;
  if (!t)
    return fn(th, attr, start, arg);
  t->start = start;
  t->arg = arg;
  t->maker = maker;
  int r = fn(th, attr, start_known, t);
  if (r != 0)
    free(t);
  return r;
}

EXPORT int pthread_setname_np(pthread_t th, const char *name) {
  int (*fn)(pthread_t, const char *) = bwsh__get_pthread_setname_np();
  if (!fn)
    return ENOSYS;
  int r = fn(th, name);
  if (r == 0 && bwsh__opt.worker_name[0])
    bwsh__reclassify_all();
  return r;
}

/* ---- foreign pools: their submit functions (foreign_*.c) ---------------- */

EXPORT int uv_queue_work(void *loop, void *req, bwsh__uv_work_cb work_cb,
                         bwsh__uv_after_cb after_cb) {
  return bwsh__uv_queue_work(loop, req, work_cb, after_cb);
}

EXPORT int uv_cancel(void *req) {
  return bwsh__uv_cancel(req);
}

EXPORT void *g_thread_pool_new(bwsh__glib_func func, void *user_data,
                               int max_threads, int exclusive, void **error) {
  return bwsh__glib_pool_new(func, user_data, max_threads, exclusive, error);
}

EXPORT void *g_thread_pool_new_full(bwsh__glib_func func, void *user_data,
                                    void (*item_free)(void *), int max_threads,
                                    int exclusive, void **error) {
  return bwsh__glib_pool_new_full(func, user_data, item_free, max_threads,
                                  exclusive, error);
}

EXPORT int g_thread_pool_push(void *pool, void *data, void **error) {
  return bwsh__glib_pool_push(pool, data, error);
}

EXPORT int g_thread_pool_set_max_threads(void *pool, int max_threads,
                                         void **error) {
  return bwsh__glib_pool_set_max_threads(pool, max_threads, error);
}
