/* interpose.c - the wrapped functions, generated from table.h, and the
 * resolution of the real ones.
 *
 * Invariants:
 *  - One typed static pointer real_<fn> per wrapped function, resolved in
 *    one place (bwsh__resolve_all, from the constructor) with
 *    dlsym(RTLD_NEXT). A call that arrives before that (another library's
 *    constructor) resolves its own pointer lazily; a call that arrives
 *    while this thread is inside dlsym (dlsym may call calloc, and a
 *    preloaded allocator may call back into us) cannot resolve and fails
 *    with ENOSYS and a loud message - never a call through NULL.
 *  - A wrapper goes straight to the real function, with nothing else done,
 *    when: the shim is not active yet (before the constructor, or in a
 *    process whose options said so), this thread is inside the shim
 *    (bwsh__self.depth), the function is not counted (rules/options), or the
 *    call cannot block: the table's gate (O_NONBLOCK, WNOHANG, zero
 *    timeout) or an "unless" condition of the function's rule.
 *  - The return value is the real one, unchanged, and so is errno.
 *  - pthread_cond_wait/timedwait exist in two symbol versions on x86_64
 *    (GLIBC_2.3.2, the default, and the old GLIBC_2.2.5 ABI); each of ours
 *    forwards to the same version the caller linked against (dlvsym).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#undef _FORTIFY_SOURCE
#include "shim.h"

#include <blockwatch/runtime.h>

#include <dirent.h>
#include <dlfcn.h>
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

/* ---- gates: can this call block? ---------------------------------------- */

static inline int tv_waits(const struct timeval *tv) {
  return !tv || tv->tv_sec || tv->tv_usec;
}

static inline int ts_waits(const struct timespec *ts) {
  return !ts || ts->tv_sec || ts->tv_nsec;
}

static inline int sock_blocks(int fd, int flags) {
  return !(flags & MSG_DONTWAIT) && bwsh__fd_blocking(fd);
}

static inline int file_blocks(FILE *fp) {
  return fp && bwsh__fd_blocking(fileno_unlocked(fp));
}

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

/* ---- resolution ---------------------------------------------------------- */

static BWSH__TLS __thread int resolving;

/* dlsym / dlvsym with the re-entrancy guard described above. */
static void *lookup(const char *name, const char *version) {
  if (resolving)
    return NULL;
  resolving = 1;
  bwsh__self.depth++;
  void *p = version ? dlvsym(RTLD_NEXT, name, version) : dlsym(RTLD_NEXT, name);
  bwsh__self.depth--;
  resolving = 0;
  return p;
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
  ((ret)(intptr_t)(_Generic((ret)0, FILE * : 1, char * : 1,                    \
                            struct hostent * : 1, default : 0)                 \
                       ? (missing(#name), 0)                                   \
                       : missing(#name)))

/* Typed pointer, its lazy resolver (function pointers may not live in a
 * void *, so the dlsym result is copied in). */
#define DEFINE_REAL(ret, name, params, version)                                \
  static ret(*real_##name) params;                                             \
  static ret(*resolve_##name(void)) params {                                   \
    void *p = lookup(#name, version);                                          \
    ret(*fn) params = NULL;                                                    \
    memcpy(&fn, &p, sizeof fn);                                                \
    if (fn)                                                                    \
      __atomic_store_n(&real_##name, fn, __ATOMIC_RELEASE);                    \
    return fn;                                                                 \
  }                                                                            \
  static inline ret(*get_##name(void)) params {                                \
    ret(*fn) params = __atomic_load_n(&real_##name, __ATOMIC_ACQUIRE);         \
    return __builtin_expect(fn != NULL, 1) ? fn : resolve_##name();            \
  }

/* The return address into the program: identifies the call site. Used in
 * the exported function itself, never in a helper it calls. */
#define CALLER __builtin_return_address(0)

/* A counted call on a thread known not to be a worker takes the short way
 * (bwsh__count_other_call: +3-8 ns against +14-22 through begin/end). The
 * "unlikely" is a code-layout hint, not a guess about programs: it moves
 * that path out of the worker path's cache line. Laid out the other way
 * (same instructions) a counted call on a worker cost ~20 ns more on the
 * development VM's AMD EPYC, measured interleaved; with it, no change. */
#define OTHER_THREAD() __builtin_expect(bwsh__self.kind == BW_THREAD_OTHER, 0)

static inline int passthrough(int fn) {
  return !atomic_load_explicit(&bwsh__active, memory_order_relaxed) ||
         bwsh__self.depth || !bwsh__fn_enabled[fn];
}

/* ---- the rules' "unless" conditions -------------------------------------- */

/* The arguments of a call as integers, for rule conditions: ARGV(a, b)
 * is {0, a, b} (the leading 0 keeps a no-argument call a valid array). */
static inline uint64_t as_u64(const void *p, size_t size) {
  /* By bytes: some parameters are transparent unions (__SOCKADDR_ARG). */
  if (size == 4) {
    int32_t v;
    memcpy(&v, p, 4);
    return (uint64_t)(int64_t)v; /* -1 stays -1 */
  }
  uint64_t v = 0;
  memcpy(&v, p, size < sizeof v ? size : sizeof v);
  return v;
}
#define AS_U64(x) as_u64(&(x), sizeof(x))
#define MAP1(a) AS_U64(a)
#define MAP2(a, b) MAP1(a), AS_U64(b)
#define MAP3(a, b, c) MAP2(a, b), AS_U64(c)
#define MAP4(a, b, c, d) MAP3(a, b, c), AS_U64(d)
#define MAP5(a, b, c, d, e) MAP4(a, b, c, d), AS_U64(e)
#define MAP6(a, b, c, d, e, f) MAP5(a, b, c, d, e), AS_U64(f)
#define MAP7(a, b, c, d, e, f, g) MAP6(a, b, c, d, e, f), AS_U64(g)
#define PICK(_1, _2, _3, _4, _5, _6, _7, name, ...) name
#define MAP_ALL(...)                                                           \
  PICK(__VA_ARGS__, MAP7, MAP6, MAP5, MAP4, MAP3, MAP2, MAP1, )(__VA_ARGS__)
#define ARGV(...)                                                              \
  { 0 __VA_OPT__(, MAP_ALL(__VA_ARGS__)) }

/* The rule whose "unless" conditions say when each wrapped symbol cannot
 * block, or NULL: the rule that names the symbol itself ("__recv_chk"), or
 * failing that the plain function's ("recv", fn_rule_plain set). When there
 * is one, its conditions replace the table's RULE() gate, so a rule file
 * decides what cannot block; without one the gate decides. */
static const bw_blocking_rule *fn_rule[BW_FN_COUNT];
static unsigned char fn_rule_plain[BW_FN_COUNT];

/* Where a fortified form's extra size argument sits: its index + 1. A
 * plain function's rule is read against the fortified form's arguments
 * with that one left out. 0: the arguments are the plain function's
 * (_IO_getc, __getdelim) or the symbol is not a fortified form. */
static const unsigned char chk_extra[BW_FN_COUNT] = {
    [BW_FN___read_chk] = 4,  [BW_FN___pread_chk] = 5,
    [BW_FN___recv_chk] = 4,  [BW_FN___recvfrom_chk] = 4,
    [BW_FN___poll_chk] = 4,  [BW_FN___ppoll_chk] = 5,
    [BW_FN___fgets_chk] = 2, [BW_FN___fgets_unlocked_chk] = 2,
    [BW_FN___fread_chk] = 2,
};

static int cond_holds(const bw_rule_cond *c, const uint64_t *av, size_t n) {
  if (c->arg < 0 || (size_t)c->arg >= n)
    return 0; /* unknown: the call counts */
  uint64_t v = av[c->arg];
  switch (c->kind) {
  case BW_COND_EQUALS:
    return v == (uint64_t)c->value;
  case BW_COND_HAS_FLAG:
    return c->value && (v & (uint64_t)c->value) == (uint64_t)c->value;
  case BW_COND_IS_NULL:
    return v == 0;
  case BW_COND_NOT_NULL:
    return v != 0;
  case BW_COND_NONBLOCKING_FD:
    return !bwsh__fd_blocking((int)v);
  case BW_COND_NONBLOCKING_FILE:
    return v && !bwsh__fd_blocking(fileno_unlocked((FILE *)(uintptr_t)v));
  case BW_COND_ZERO_TIMEOUT: {
    /* struct timespec and struct timeval: two longs, both zero. */
    const long *t = (const long *)(uintptr_t)v;
    return t && t[0] == 0 && t[1] == 0;
  }
  case BW_COND_COUNT:
    break;
  }
  return 0;
}

/* 1 when a rule's "unless" condition says this call does not block. */
static int rule_unless(int fn, const uint64_t *av, size_t n) {
  const bw_blocking_rule *rule = fn_rule[fn];
  if (!rule)
    return 0;
  uint64_t plain[8];
  unsigned extra = chk_extra[fn];
  if (fn_rule_plain[fn] && extra && extra <= n && n <= 8) {
    for (size_t i = 0, k = 0; i < n; i++)
      if (i != extra - 1)
        plain[k++] = av[i];
    av = plain;
    n--;
  }
  for (size_t i = 0; i < rule->n_unless; i++)
    if (cond_holds(&rule->unless[i], av, n))
      return 1;
  return 0;
}

/* ---- the generated wrappers ---------------------------------------------- */

/* A table gate the rules can say too (a flag, a zero timeout, O_NONBLOCK):
 * it stands only while no rule names the symbol (own_rule, in the wrapper).
 * Gates outside RULE() (getchar's stdin) always apply. */
#define RULE(may_block) (own_rule || (may_block))

#define REAL_FUNC(ret, name, canon, params, args, cat, gate)                   \
  DEFINE_REAL(ret, name, params, NULL)
BW_SHIM_FUNCS(REAL_FUNC)
#undef REAL_FUNC

#define WRAP_FUNC(ret, name, canon, params, args, cat, gate)                   \
  EXPORT ret name params {                                                     \
    ret(*fn) params = get_##name();                                            \
    if (!fn)                                                                   \
      return FAIL_VALUE(ret, name);                                            \
    if (__builtin_expect(passthrough(BW_FN_##name), 1))                        \
      return fn args;                                                          \
    int saved = errno;                                                         \
    const uint64_t argv_[] = ARGV args;                                        \
    int own_rule = fn_rule[BW_FN_##name] != NULL;                              \
    int may_block =                                                            \
        (gate) &&                                                              \
        !(own_rule && rule_unless(BW_FN_##name, argv_ + 1,                     \
                                  sizeof argv_ / sizeof argv_[0] - 1));        \
    errno = saved;                                                             \
    if (!may_block)                                                            \
      return fn args;                                                          \
    if (OTHER_THREAD() && bwsh__count_other_call())                            \
      return fn args;                                                          \
    bwsh__call call;                                                           \
    bwsh__call_begin(&call, BW_FN_##name, CALLER);                             \
    ret r = fn args;                                                           \
    bwsh__call_end(&call);                                                     \
    return r;                                                                  \
  }
BW_SHIM_FUNCS(WRAP_FUNC)
#undef WRAP_FUNC

/* Locks: try first; only a lock that is held by someone else is timed. */
#define REAL_TRY(name, type) DEFINE_REAL(int, name, (type *), NULL)
BW_SHIM_TRYLOCKS(REAL_TRY)
#undef REAL_TRY

#define WRAP_LOCK(name, type, trylock, cat, xparams, xargs)                    \
  DEFINE_REAL(int, name, (type * lk BW_EXPAND xparams), NULL)                  \
  EXPORT int name(type *lk BW_EXPAND xparams) {                                \
    int (*fn)(type * lk BW_EXPAND xparams) = get_##name();                     \
    if (!fn)                                                                   \
      return FAIL_VALUE(int, name);                                            \
    int (*try_fn)(type *);                                                     \
    if (__builtin_expect(passthrough(BW_FN_##name), 1) ||                      \
        !(try_fn = get_##trylock()))                                           \
      return fn(lk BW_EXPAND xargs);                                           \
    int r = try_fn(lk);                                                        \
    if (r != EBUSY)                                                            \
      return r; /* taken at once (or an error the lock would give too) */      \
    if (OTHER_THREAD() && bwsh__count_other_call())                            \
      return fn(lk BW_EXPAND xargs);                                           \
    bwsh__call call;                                                           \
    bwsh__call_begin(&call, BW_FN_##name, CALLER);                             \
    r = fn(lk BW_EXPAND xargs);                                                \
    bwsh__call_end(&call);                                                     \
    return r;                                                                  \
  }
BW_SHIM_LOCKS(WRAP_LOCK)
#undef WRAP_LOCK

/* Descriptor bookkeeping: never counted, only keeps the fd cache honest. */
#define WRAP_FD(ret, name, params, args, before, after)                        \
  DEFINE_REAL(ret, name, params, NULL)                                         \
  EXPORT ret name params {                                                     \
    ret(*fn) params = get_##name();                                            \
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

/* fcntl/ioctl/open are variadic: the optional argument is passed on as a
 * long / pointer, which is how the x86_64 and aarch64 ABIs pass it. */
DEFINE_REAL(int, fcntl, (int, int, ...), NULL)
DEFINE_REAL(int, fcntl64, (int, int, ...), NULL)
DEFINE_REAL(int, ioctl, (int, unsigned long, ...), NULL)
DEFINE_REAL(int, open, (const char *, int, ...), NULL)
DEFINE_REAL(int, open64, (const char *, int, ...), NULL)
DEFINE_REAL(int, openat, (int, const char *, int, ...), NULL)
DEFINE_REAL(int, openat64, (int, const char *, int, ...), NULL)

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

EXPORT int fcntl(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  long arg = va_arg(ap, long);
  va_end(ap);
  return fcntl_common(get_fcntl(), fd, cmd, arg);
}

EXPORT int fcntl64(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  long arg = va_arg(ap, long);
  va_end(ap);
  return fcntl_common(get_fcntl64(), fd, cmd, arg);
}

EXPORT int ioctl(int fd, unsigned long req, ...) {
  va_list ap;
  va_start(ap, req);
  void *arg = va_arg(ap, void *);
  va_end(ap);
  int (*fn)(int, unsigned long, ...) = get_ioctl();
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
    int(*fn) pre = get_##name();                                               \
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

DEFINE_REAL(void, sync, (void), NULL)

EXPORT void sync(void) {
  void (*fn)(void) = get_sync();
  if (!fn) {
    missing("sync");
    return;
  }
  if (passthrough(BW_FN_sync)) {
    fn();
    return;
  }
  bwsh__call call;
  bwsh__call_begin(&call, BW_FN_sync, CALLER);
  fn();
  bwsh__call_end(&call);
}

#define COND_WAIT_ARGS (pthread_cond_t *, pthread_mutex_t *)
#define COND_TIMED_ARGS                                                        \
  (pthread_cond_t *, pthread_mutex_t *, const struct timespec *)

/* One body for both versions: `fn` is the matching real one. */
static int cond_wait_via(int (*fn)(pthread_cond_t *, pthread_mutex_t *),
                         pthread_cond_t *c, pthread_mutex_t *m, void *caller) {
  if (!fn)
    return FAIL_VALUE(int, pthread_cond_wait);
  if (passthrough(BW_FN_pthread_cond_wait))
    return fn(c, m);
  bwsh__call call;
  bwsh__call_begin(&call, BW_FN_pthread_cond_wait, caller);
  int r = fn(c, m);
  bwsh__call_end(&call);
  return r;
}

static int cond_timedwait_via(int (*fn)(pthread_cond_t *, pthread_mutex_t *,
                                        const struct timespec *),
                              pthread_cond_t *c, pthread_mutex_t *m,
                              const struct timespec *ts, void *caller) {
  if (!fn)
    return FAIL_VALUE(int, pthread_cond_timedwait);
  if (passthrough(BW_FN_pthread_cond_timedwait))
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
/* Looked up by (name, version) below, not by DEFINE_REAL's own name. */
static int(*real_cond_wait_new) COND_WAIT_ARGS;
static int(*real_cond_wait_old) COND_WAIT_ARGS;
static int(*real_cond_timedwait_new) COND_TIMED_ARGS;
static int(*real_cond_timedwait_old) COND_TIMED_ARGS;

static int (*resolve_cond(const char *ver))(pthread_cond_t *,
                                            pthread_mutex_t *) {
  void *p = lookup("pthread_cond_wait", ver);
  int (*fn)(pthread_cond_t *, pthread_mutex_t *) = NULL;
  memcpy(&fn, &p, sizeof fn);
  return fn;
}

static int (*resolve_timed(const char *ver))(pthread_cond_t *,
                                             pthread_mutex_t *,
                                             const struct timespec *) {
  void *p = lookup("pthread_cond_timedwait", ver);
  int (*fn)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *) =
      NULL;
  memcpy(&fn, &p, sizeof fn);
  return fn;
}

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

static void resolve_conds(void) {
  if (!real_cond_wait_new)
    real_cond_wait_new = resolve_cond(COND_NEW);
  if (!real_cond_wait_old)
    real_cond_wait_old = resolve_cond(COND_OLD);
  if (!real_cond_timedwait_new)
    real_cond_timedwait_new = resolve_timed(COND_NEW);
  if (!real_cond_timedwait_old)
    real_cond_timedwait_old = resolve_timed(COND_OLD);
}

static int (*cond_fn(int old))(pthread_cond_t *, pthread_mutex_t *) {
  int (*fn)(pthread_cond_t *, pthread_mutex_t *) = __atomic_load_n(
      old ? &real_cond_wait_old : &real_cond_wait_new, __ATOMIC_ACQUIRE);
  if (!fn) {
    fn = resolve_cond(old ? COND_OLD : COND_NEW);
    __atomic_store_n(old ? &real_cond_wait_old : &real_cond_wait_new, fn,
                     __ATOMIC_RELEASE);
  }
  return fn;
}

static int (*timed_fn(int old))(pthread_cond_t *, pthread_mutex_t *,
                                const struct timespec *) {
  int (*fn)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *) =
      __atomic_load_n(old ? &real_cond_timedwait_old : &real_cond_timedwait_new,
                      __ATOMIC_ACQUIRE);
  if (!fn) {
    fn = resolve_timed(old ? COND_OLD : COND_NEW);
    __atomic_store_n(old ? &real_cond_timedwait_old : &real_cond_timedwait_new,
                     fn, __ATOMIC_RELEASE);
  }
  return fn;
}

int bwsh__cond_wait_new(pthread_cond_t *c, pthread_mutex_t *m) {
  return cond_wait_via(cond_fn(0), c, m, CALLER);
}
int bwsh__cond_wait_old(pthread_cond_t *c, pthread_mutex_t *m) {
  return cond_wait_via(cond_fn(1), c, m, CALLER);
}
int bwsh__cond_timedwait_new(pthread_cond_t *c, pthread_mutex_t *m,
                             const struct timespec *ts) {
  return cond_timedwait_via(timed_fn(0), c, m, ts, CALLER);
}
int bwsh__cond_timedwait_old(pthread_cond_t *c, pthread_mutex_t *m,
                             const struct timespec *ts) {
  return cond_timedwait_via(timed_fn(1), c, m, ts, CALLER);
}
#else
/* Other architectures have one version: plain dlsym. */
DEFINE_REAL(int, pthread_cond_wait, COND_WAIT_ARGS, NULL)
DEFINE_REAL(int, pthread_cond_timedwait, COND_TIMED_ARGS, NULL)
static void resolve_conds(void) {
  resolve_pthread_cond_wait();
  resolve_pthread_cond_timedwait();
}
EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m) {
  return cond_wait_via(get_pthread_cond_wait(), c, m, CALLER);
}
EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
                                  const struct timespec *ts) {
  return cond_timedwait_via(get_pthread_cond_timedwait(), c, m, ts, CALLER);
}
#endif

/* ---- exits: _exit and _Exit flush the report first ---------------------- */

DEFINE_REAL(void, _exit, (int), NULL)
DEFINE_REAL(void, _Exit, (int), NULL)

/* Ends the process through `fn` (the real _exit or _Exit: each wrapper
 * forwards to its own), or the system call when it is missing. */
__attribute__((noreturn)) static void exit_through(void (*fn)(int),
                                                   int status) {
  if (fn)
    fn(status);
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}

void bwsh__real_exit_now(int status) {
  exit_through(get__exit(), status);
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
  exit_through(get__exit(), report_before_exit(status));
}

EXPORT void _Exit(int status) {
  exit_through(get__Exit(), report_before_exit(status));
}

/* ---- threads: start routines and names classify workers ----------------- */

DEFINE_REAL(int, pthread_create,
            (pthread_t *, const pthread_attr_t *, void *(*)(void *), void *),
            NULL)
DEFINE_REAL(int, pthread_setname_np, (pthread_t, const char *), NULL)

void bwsh__thread_is_option_worker(void); /* state.c */
void bwsh__reclassify_all(void);

typedef struct trampoline {
  void *(*start)(void *);
  void *arg;
} trampoline;

static void *start_as_worker(void *p) {
  trampoline t = *(trampoline *)p;
  free(p);
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
  bwsh__symbolize((char *)addr + 1, &sym, 0); /* +1: it wants a return pc */
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
      get_pthread_create();
  if (!fn)
    return EAGAIN;
  if (!atomic_load_explicit(&bwsh__active, memory_order_relaxed) ||
      bwsh__self.depth || !bwsh__opt.worker_start[0])
    return fn(th, attr, start, arg);
  bwsh__self.depth++;
  int match = is_worker_start(start);
  trampoline *t = match ? malloc(sizeof *t) : NULL;
  bwsh__self.depth--;
  if (!t)
    return fn(th, attr, start, arg);
  t->start = start;
  t->arg = arg;
  int r = fn(th, attr, start_as_worker, t);
  if (r != 0)
    free(t);
  return r;
}

EXPORT int pthread_setname_np(pthread_t th, const char *name) {
  int (*fn)(pthread_t, const char *) = get_pthread_setname_np();
  if (!fn)
    return ENOSYS;
  int r = fn(th, name);
  if (r == 0 && bwsh__opt.worker_name[0])
    bwsh__reclassify_all();
  return r;
}

/* ---- names, enablement, resolve-all -------------------------------------- */

static const char *const fn_names[BW_FN_COUNT] = {
#define NAME_FUNC(ret, name, canon, params, args, cat, gate) #canon,
#define NAME_LOCK(name, type, trylock, cat, xp, xa) #name,
    BW_SHIM_FUNCS(NAME_FUNC) BW_SHIM_LOCKS(NAME_LOCK) "pthread_cond_wait",
    "pthread_cond_timedwait", "sync"
#undef NAME_FUNC
#undef NAME_LOCK
};

static const bw_rule_category fn_categories[BW_FN_COUNT] = {
#define CAT_FUNC(ret, name, canon, params, args, cat, gate) BW_CATEGORY_##cat,
#define CAT_LOCK(name, type, trylock, cat, xp, xa) BW_CATEGORY_##cat,
    BW_SHIM_FUNCS(CAT_FUNC) BW_SHIM_LOCKS(CAT_LOCK) BW_CATEGORY_WAIT,
    BW_CATEGORY_WAIT, BW_CATEGORY_IO
#undef CAT_FUNC
#undef CAT_LOCK
};

unsigned char bwsh__fn_enabled[BW_FN_COUNT];

const char *bwsh__fn_name(int fn) {
  return fn >= 0 && fn < BW_FN_COUNT ? fn_names[fn] : "?";
}

/* A function counts when the rules name it as blocking in an enabled
 * category; a function no rule names falls back to its built-in category
 * (enabled per the rule set, or all but "lock" without one). */
static void log_enabled(void) {
  char on[2048] = "", off[2048] = "";
  for (int i = 0; i < BW_FN_COUNT; i++) {
    char *list = bwsh__fn_enabled[i] ? on : off;
    if (i > 0 && strcmp(fn_names[i], fn_names[i - 1]) == 0)
      continue; /* a __*_chk form next to its plain one */
    size_t len = strlen(list);
    snprintf(list + len, sizeof on - len, " %s", fn_names[i]);
  }
  bwsh__log("counting:%s", on);
  bwsh__log("not counting:%s", off);
}

static const char *const fn_symbols[BW_FN_COUNT] = {
#define SYM_FUNC(ret, name, canon, params, args, cat, gate) #name,
#define SYM_LOCK(name, type, trylock, cat, xp, xa) #name,
    BW_SHIM_FUNCS(SYM_FUNC) BW_SHIM_LOCKS(SYM_LOCK) "pthread_cond_wait",
    "pthread_cond_timedwait", "sync"
#undef SYM_FUNC
#undef SYM_LOCK
};

void bwsh__fn_enable_init(void) {
  for (int i = 0; i < BW_FN_COUNT; i++) {
    /* Counted or not: the rule of the name the report uses. Which calls
     * cannot block: the rule of the symbol itself (fn_rule). */
    const bw_blocking_rule *rule =
        bwsh__rules ? bw_rules_lookup_blocking(bwsh__rules, fn_names[i]) : NULL;
    fn_rule[i] = bwsh__rules
                     ? bw_rules_lookup_blocking(bwsh__rules, fn_symbols[i])
                     : NULL;
    /* A fortified form missing from chk_extra keeps its gate rather than
     * read a rule at the wrong positions. */
    size_t len = strlen(fn_symbols[i]);
    int unmapped = len > 4 && strcmp(fn_symbols[i] + len - 4, "_chk") == 0 &&
                   !chk_extra[i];
    fn_rule_plain[i] = !fn_rule[i] && rule && !unmapped &&
                       strcmp(fn_symbols[i], fn_names[i]) != 0;
    if (fn_rule_plain[i])
      fn_rule[i] = rule;
    if (rule)
      bwsh__fn_enabled[i] =
          (unsigned char)bw_rules_is_active(bwsh__rules, rule);
    else if (bwsh__rules)
      bwsh__fn_enabled[i] = (unsigned char)bw_rules_category_enabled(
          bwsh__rules, fn_categories[i]);
    else
      bwsh__fn_enabled[i] =
          fn_categories[i] != BW_CATEGORY_LOCK || bwsh__opt.lock ? 1 : 0;
  }
  if (bwsh__opt.verbosity >= 2)
    log_enabled();
}

void bwsh__resolve_all(void) {
#define RESOLVE_FUNC(ret, name, canon, params, args, cat, gate)                \
  resolve_##name();
#define RESOLVE_LOCK(name, type, trylock, cat, xp, xa) resolve_##name();
#define RESOLVE_TRY(name, type) resolve_##name();
#define RESOLVE_FD(ret, name, params, args, before, after) resolve_##name();
  BW_SHIM_FUNCS(RESOLVE_FUNC)
  BW_SHIM_LOCKS(RESOLVE_LOCK)
  BW_SHIM_TRYLOCKS(RESOLVE_TRY)
  BW_SHIM_FDS(RESOLVE_FD)
#undef RESOLVE_FUNC
#undef RESOLVE_LOCK
#undef RESOLVE_TRY
#undef RESOLVE_FD
  resolve_fcntl();
  resolve_fcntl64();
  resolve_ioctl();
  resolve_open();
  resolve_open64();
  resolve_openat();
  resolve_openat64();
  resolve_sync();
  resolve__exit();
  resolve__Exit();
  resolve_pthread_create();
  resolve_pthread_setname_np();
  resolve_conds();
}

/* ---- real functions the shim itself uses --------------------------------- */

long bwsh__real_write(int fd, const void *p, size_t n) {
  ssize_t (*fn)(int, const void *, size_t) = get_write();
  if (!fn)
    return syscall(SYS_write, fd, p, n);
  return fn(fd, p, n);
}

int bwsh__real_close(int fd) {
  int (*fn)(int) = get_close();
  if (!fn)
    return (int)syscall(SYS_close, fd);
  bwsh__fd_forget(fd);
  return fn(fd);
}

int bwsh__real_fcntl(int fd, int cmd, long arg) {
  int (*fn)(int, int, ...) = get_fcntl();
  if (!fn)
    return (int)syscall(SYS_fcntl, fd, cmd, arg);
  return fn(fd, cmd, arg);
}
