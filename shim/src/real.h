/* real.h - the real functions: one typed pointer per function the shim
 * wraps or needs, found with dlsym(RTLD_NEXT) (real.c).
 *
 * Invariants:
 *  - bwsh__next_<fn> is the next definition of <fn> after the shim's own
 *    (libc's, or another preloaded library's). bwsh__resolve_all (from the
 *    constructor) sets every one; a call that arrives before that (another
 *    library's constructor) resolves its own pointer lazily through
 *    bwsh__get_<fn>.
 *  - A pointer may stay NULL: while this thread is inside dlsym (dlsym may
 *    call calloc, and a preloaded allocator may call back into us) nothing
 *    can be resolved, and a symbol may be missing. The caller then fails
 *    loudly (interpose.c) - never a call through NULL.
 *  - This layer uses nothing above it: no rules, no counting, no output.
 */
#ifndef BW_SHIM_REAL_H
#define BW_SHIM_REAL_H

#include "shim.h"

#include <blockwatch/runtime.h>

#include <dirent.h>
#include <mqueue.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/msg.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Real functions beyond the table's: X(ret, name, params). fcntl, ioctl
 * and open are variadic (the optional argument is passed on as a long /
 * pointer, which is how the x86_64 and aarch64 ABIs pass it). */
#define BWSH__REAL_OTHERS(X)                                                   \
  X(int, fcntl, (int, int, ...))                                               \
  X(int, fcntl64, (int, int, ...))                                             \
  X(int, ioctl, (int, unsigned long, ...))                                     \
  X(int, open, (const char *, int, ...))                                       \
  X(int, open64, (const char *, int, ...))                                     \
  X(int, openat, (int, const char *, int, ...))                                \
  X(int, openat64, (int, const char *, int, ...))                              \
  X(void, sync, (void))                                                        \
  X(void, _exit, (int))                                                        \
  X(void, _Exit, (int))                                                        \
  X(int, pthread_create,                                                       \
    (pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))          \
  X(int, pthread_setname_np, (pthread_t, const char *))

/* Every real function as BWSH__REAL(ret, name, params): define BWSH__REAL,
 * expand BWSH__ALL_REALS, undefine it. */
#define BWSH__REAL_OF_FUNC(ret, name, canon, params, args, check)              \
  BWSH__REAL(ret, name, params)
#define BWSH__REAL_OF_LOCK(name, type, trylock, xp, xa)                        \
  BWSH__REAL(int, name, (type * lk BW_EXPAND xp))
#define BWSH__REAL_OF_TRY(name, type) BWSH__REAL(int, name, (type *))
#define BWSH__REAL_OF_FD(ret, name, params, args, before, after)               \
  BWSH__REAL(ret, name, params)
#define BWSH__REAL_OF_OTHER(ret, name, params) BWSH__REAL(ret, name, params)
#define BWSH__ALL_REALS                                                        \
  BW_SHIM_FUNCS(BWSH__REAL_OF_FUNC)                                            \
  BW_SHIM_LOCKS(BWSH__REAL_OF_LOCK)                                            \
  BW_SHIM_TRYLOCKS(BWSH__REAL_OF_TRY)                                          \
  BW_SHIM_FDS(BWSH__REAL_OF_FD)                                                \
  BWSH__REAL_OTHERS(BWSH__REAL_OF_OTHER)

/* The pointer, its lazy resolver and the getter a wrapper calls: one
 * acquire load, the resolver only while the pointer is still NULL. */
#define BWSH__REAL(ret, name, params)                                          \
  BWSH__HIDDEN extern ret(*bwsh__next_##name) params;                          \
  BWSH__HIDDEN ret(*bwsh__resolve_##name(void)) params;                        \
  static inline ret(*bwsh__get_##name(void)) params {                          \
    ret(*fn) params = __atomic_load_n(&bwsh__next_##name, __ATOMIC_ACQUIRE);   \
    return __builtin_expect(fn != NULL, 1) ? fn : bwsh__resolve_##name();      \
  }
BWSH__ALL_REALS
#undef BWSH__REAL

/* pthread_cond_wait/timedwait exist in two symbol versions on x86_64
 * (GLIBC_2.3.2, the default, and the old GLIBC_2.2.5 ABI): the real one of
 * the version asked for (old != 0: GLIBC_2.2.5). Elsewhere there is one
 * version and `old` is ignored. NULL when missing. */
typedef int (*bwsh__cond_wait_fn)(pthread_cond_t *, pthread_mutex_t *);
typedef int (*bwsh__cond_timedwait_fn)(pthread_cond_t *, pthread_mutex_t *,
                                       const struct timespec *);
BWSH__HIDDEN bwsh__cond_wait_fn bwsh__real_cond_wait(int old);
BWSH__HIDDEN bwsh__cond_timedwait_fn bwsh__real_cond_timedwait(int old);

/* The next definition of `name` (of symbol version `version`, NULL: the
 * default) after the shim's own, or NULL: missing, or asked from inside
 * dlsym on this thread (which this refuses, rather than recurse). */
BWSH__HIDDEN void *bwsh__real_lookup(const char *name, const char *version);
/* 1 while this thread is inside bwsh__real_lookup's dlsym. */
BWSH__HIDDEN int bwsh__real_in_lookup(void);

/* Resolves every real function (dlsym RTLD_NEXT). Idempotent. */
BWSH__HIDDEN void bwsh__resolve_all(void);

/* Real functions the shim itself needs, with the system call as the
 * fallback when the real one is missing. */
BWSH__HIDDEN long bwsh__real_write(int fd, const void *p, size_t n);
/* Closes without the close wrapper: the caller forgets the descriptor. */
BWSH__HIDDEN int bwsh__real_close(int fd);
BWSH__HIDDEN int bwsh__real_fcntl(int fd, int cmd, long arg);
BWSH__HIDDEN void bwsh__real_exit_now(int status) __attribute__((noreturn));

#endif /* BW_SHIM_REAL_H */
