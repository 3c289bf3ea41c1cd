/* real.c - finds the real functions: one dlsym(RTLD_NEXT) per pointer of
 * real.h, lazily or all at once (bwsh__resolve_all).
 *
 * Invariants:
 *  - bwsh__real_lookup is the one place that calls dlsym/dlvsym (the
 *    foreign pools' functions, foreign.c, are found through it too). It raises
 *    bwsh__self.depth around the call, so whatever dlsym calls that we wrap
 *    goes straight through, and refuses to nest: a lookup from inside
 *    dlsym (calloc -> a preloaded allocator -> one of our wrappers) returns
 *    NULL instead of recursing into the loader.
 *  - A resolved pointer never changes again (the same symbol is found
 *    every time); it is published with a release store and read with an
 *    acquire load, so any thread may resolve it first.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "real.h"

#include <dlfcn.h>
#include <string.h>
#include <sys/syscall.h>

static BWSH__TLS __thread int resolving;

int bwsh__real_in_lookup(void) {
  return resolving;
}

void *bwsh__real_lookup(const char *name, const char *version) {
  if (resolving)
    return NULL;
  resolving = 1;
  bwsh__self.depth++;
  void *p = version ? dlvsym(RTLD_NEXT, name, version) : dlsym(RTLD_NEXT, name);
  bwsh__self.depth--;
  resolving = 0;
  return p;
}

/* Function pointers may not live in a void *, so the dlsym result is
 * copied in. */
#define BWSH__REAL(ret, name, params)                                          \
  ret(*bwsh__next_##name) params;                                              \
  ret(*bwsh__resolve_##name(void)) params {                                    \
    void *p = bwsh__real_lookup(#name, NULL);                                  \
    ret(*fn) params = NULL;                                                    \
    memcpy(&fn, &p, sizeof fn);                                                \
    if (fn)                                                                    \
      __atomic_store_n(&bwsh__next_##name, fn, __ATOMIC_RELEASE);              \
    return fn;                                                                 \
  }
BWSH__ALL_REALS
#undef BWSH__REAL

/* ---- condition variables: looked up by (name, version) ------------------ */

#if defined(__x86_64__)
#define COND_NEW "GLIBC_2.3.2"
#define COND_OLD "GLIBC_2.2.5"
#else
#define COND_NEW NULL
#define COND_OLD NULL
#endif

/* [timed][old]: pthread_cond_wait / _timedwait, default / old version. */
static void *cond_fns[2][2];

static void *cond_lookup(int timed, int old) {
  void **slot = &cond_fns[timed][old ? 1 : 0];
  void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  if (!p) {
    p = bwsh__real_lookup(timed ? "pthread_cond_timedwait"
                                : "pthread_cond_wait",
                          old ? COND_OLD : COND_NEW);
    if (p)
      __atomic_store_n(slot, p, __ATOMIC_RELEASE);
  }
  return p;
}

bwsh__cond_wait_fn bwsh__real_cond_wait(int old) {
  void *p = cond_lookup(0, old);
  bwsh__cond_wait_fn fn;
  memcpy(&fn, &p, sizeof fn);
  return fn;
}

bwsh__cond_timedwait_fn bwsh__real_cond_timedwait(int old) {
  void *p = cond_lookup(1, old);
  bwsh__cond_timedwait_fn fn;
  memcpy(&fn, &p, sizeof fn);
  return fn;
}

void bwsh__resolve_all(void) {
#define BWSH__REAL(ret, name, params) bwsh__resolve_##name();
  BWSH__ALL_REALS
#undef BWSH__REAL
  for (int k = 0; k < 4; k++)
    cond_lookup(k / 2, k % 2);
}

/* ---- real functions the shim itself uses --------------------------------- */

long bwsh__real_write(int fd, const void *p, size_t n) {
  ssize_t (*fn)(int, const void *, size_t) = bwsh__get_write();
  if (!fn)
    return syscall(SYS_write, fd, p, n);
  return fn(fd, p, n);
}

int bwsh__real_close(int fd) {
  int (*fn)(int) = bwsh__get_close();
  if (!fn)
    return (int)syscall(SYS_close, fd);
  return fn(fd);
}

int bwsh__real_fcntl(int fd, int cmd, long arg) {
  int (*fn)(int, int, ...) = bwsh__get_fcntl();
  if (!fn)
    return (int)syscall(SYS_fcntl, fd, cmd, arg);
  return fn(fd, cmd, arg);
}

void bwsh__real_exit_now(int status) {
  void (*fn)(int) = bwsh__get__exit();
  if (fn)
    fn(status);
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}
