/* policy.h - "does this call count?": which wrapped functions count, which
 * of their calls cannot block, and how long a counted call must last
 * (policy.c).
 *
 * Invariants:
 *  - Everything is decided at start-up (bwsh__policy_init, from the
 *    constructor, before bwsh__active is set); afterwards it is only read,
 *    with no allocation, no lock and no output, from any thread.
 *  - The rules are the one source of what blocks: a function counts when
 *    a loaded rule names it in an enabled category, and only an "unless"
 *    condition of that rule excuses one of its calls. table.h adds only
 *    what no condition can express.
 *  - bwsh__call_excused keeps errno.
 */
#ifndef BW_SHIM_POLICY_H
#define BW_SHIM_POLICY_H

#include "shim.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 32)
#include <sys/single_threaded.h>
#endif

/* Loads the rules (embedded packs, rules=FILE, categories=, lock=) and
 * decides per function whether it counts. Returns 0, or a negative errno
 * when the embedded packs did not load (reported on stderr): the shim then
 * stays inactive, since without them it knows nothing that blocks. */
BWSH__HIDDEN int bwsh__policy_init(void);

/* Per function: 1 when its calls count as blocking (rules + options). */
BWSH__HIDDEN extern unsigned char bwsh__fn_enabled[BW_FN_COUNT];

/* The fix hint of the rule that makes fn count (its hint=, or its
 * category's), for the report; NULL when no rule names it. */
BWSH__HIDDEN const char *bwsh__fn_hint(int fn);

/* 1 when a wrapper goes straight to the real function, with nothing else
 * done: the shim is not active yet (before the constructor, or in a
 * process whose options said so), this thread is inside the shim, or the
 * function does not count. */
static inline int bwsh__passthrough(int fn) {
  return !atomic_load_explicit(&bwsh__active, memory_order_relaxed) ||
         bwsh__self.depth || !bwsh__fn_enabled[fn];
}

/* 1 when an "unless" condition of the function's rule holds for these
 * arguments (av[i] is argument i as an integer, see BWSH__ARGV): the call
 * cannot block and does not count. */
BWSH__HIDDEN int bwsh__call_excused(int fn, const uint64_t *av, size_t n);
/* Per function: 1 when its rule has "unless" conditions, so that
 * bwsh__call_excused can say 1 (a wrapper asks only then). */
BWSH__HIDDEN extern unsigned char bwsh__fn_conditional[BW_FN_COUNT];

/* ---- the arguments of a call as integers, for rule conditions ----------- */

static inline uint64_t bwsh__as_u64(const void *p, size_t size) {
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
#define BWSH__AS_U64(x) bwsh__as_u64(&(x), sizeof(x))
#define BWSH__MAP1(a) BWSH__AS_U64(a)
#define BWSH__MAP2(a, b) BWSH__MAP1(a), BWSH__AS_U64(b)
#define BWSH__MAP3(a, b, c) BWSH__MAP2(a, b), BWSH__AS_U64(c)
#define BWSH__MAP4(a, b, c, d) BWSH__MAP3(a, b, c), BWSH__AS_U64(d)
#define BWSH__MAP5(a, b, c, d, e) BWSH__MAP4(a, b, c, d), BWSH__AS_U64(e)
#define BWSH__MAP6(a, b, c, d, e, f) BWSH__MAP5(a, b, c, d, e), BWSH__AS_U64(f)
#define BWSH__MAP7(a, b, c, d, e, f, g)                                        \
  BWSH__MAP6(a, b, c, d, e, f), BWSH__AS_U64(g)
#define BWSH__PICK(_1, _2, _3, _4, _5, _6, _7, name, ...) name
#define BWSH__MAP_ALL(...)                                                     \
  BWSH__PICK(__VA_ARGS__, BWSH__MAP7, BWSH__MAP6, BWSH__MAP5, BWSH__MAP4,      \
             BWSH__MAP3, BWSH__MAP2, BWSH__MAP1, )                             \
  (__VA_ARGS__)
/* BWSH__ARGV(a, b) is {0, a, b}: the leading 0 keeps a no-argument call a
 * valid array; the arguments start at index 1. */
#define BWSH__ARGV(...)                                                        \
  { 0 __VA_OPT__(, BWSH__MAP_ALL(__VA_ARGS__)) }

/* ---- the one check no rule can state (table.h, getchar) ---------------- */

/* 0 when the stream's descriptor has O_NONBLOCK set. */
static inline int bwsh__file_blocks(FILE *fp) {
  return fp && bwsh__fd_blocking(fileno_unlocked(fp));
}

/* ---- a lock that cannot block (table.h, BW_SHIM_LOCKS) ----------------- */

/* 1 when pthread_mutex_lock on m cannot block: the process has one thread
 * (glibc's __libc_single_threaded), the mutex is private to it and free.
 * glibc's own lock takes its cheaper single-thread path on the same test;
 * the try-lock the wrapper would otherwise call first never does. Another
 * thread cannot take m in between, since there is none (a process-shared
 * mutex may be held by another process: it takes the try-lock). */
static inline int bwsh__mutex_cannot_block(const pthread_mutex_t *m) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 32)
  return __libc_single_threaded && !(m->__data.__kind & 128) &&
         m->__data.__lock == 0; /* 128: glibc's PTHREAD_MUTEX_PSHARED_BIT */
#else
  (void)m;
  return 0;
#endif
}

/* The same for the other lock types of BW_SHIM_LOCKS: never known. */
static inline int bwsh__other_lock_cannot_block(const volatile void *lk) {
  (void)lk;
  return 0;
}

#define BWSH__LOCK_CANNOT_BLOCK(lk)                                            \
  _Generic((lk), pthread_mutex_t *                                             \
           : bwsh__mutex_cannot_block, default                                 \
           : bwsh__other_lock_cannot_block)(lk)

/* ---- the threshold ------------------------------------------------------- */

/* 1 when a counted call on a worker is counted as it begins (no threshold:
 * a call that never returns still shows), 0 when only once it returned
 * and lasted long enough (fail=1, whose report holds exactly the first
 * call, counts at the end too). */
static inline int bwsh__policy_counts_at_begin(void) {
  return bwsh__opt.threshold_ns == 0 && bwsh__opt.fail != BW_FAIL_NOW;
}

/* 1 when a call that lasted dur_ns is long enough to count. */
static inline int bwsh__policy_long_enough(uint64_t dur_ns) {
  return dur_ns >= bwsh__opt.threshold_ns;
}

#endif /* BW_SHIM_POLICY_H */
