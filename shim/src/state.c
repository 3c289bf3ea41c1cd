/* state.c - per-thread state, thread classification, the counting ledger
 * and the descriptor cache: everything a wrapped call touches.
 *
 * Invariants:
 *  - The hot path takes no lock, calls no allocator and no dlsym: counters
 *    are relaxed atomics in a fixed slot array, classification is cached in
 *    TLS and redone only when the global epoch moves (a runtime attached, a
 *    thread was renamed, a fork happened).
 *  - bw__call_begin raises bw__self.depth and bw__call_end lowers it, so
 *    anything called in between (the real function, runtime hooks, the
 *    reporter) passes straight through the wrappers and is never counted
 *    twice (bw_wait's own pthread_cond_wait, for instance).
 *  - errno seen by the caller is the one the real function left.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "shim.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

BW__TLS __thread bw__thread bw__self = {.pool = -1, .blocked_pool = -1};
atomic_int bw__active;
bw__slot bw__slots[BW_MAX_SLOTS];

/* Bumped whenever a thread's kind may have changed behind its back. */
static atomic_uint classify_epoch = 1;
static BW__TLS __thread unsigned my_epoch;
static pthread_key_t exit_key;
static atomic_int exit_key_ok;
static atomic_int fail_fired;

static atomic_int own_pid;

void bw__own_pid_set(void) {
  atomic_store(&own_pid, (int)getpid());
}

int bw__is_own_process(void) {
  return (int)getpid() == atomic_load(&own_pid);
}

uint64_t bw__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void bw__reclassify_all(void);
void bw__reclassify_all(void) {
  atomic_fetch_add_explicit(&classify_epoch, 1, memory_order_relaxed);
}

/* ---- descriptor cache ---------------------------------------------------
 * F_GETFL is a system call; a read on a worker should not pay two. The
 * answer is cached per descriptor number and forgotten by the wrappers of
 * everything that closes, duplicates onto, creates or re-flags a
 * descriptor (interpose.c). Descriptors closed inside libc without a
 * wrapped call (fclose) may leave a stale entry until the number is reused
 * by a wrapped creator. */
#define FD_CACHE 65536
enum { FD_UNKNOWN = 0, FD_BLOCKING = 1, FD_NONBLOCKING = 2 };
static _Atomic unsigned char fd_cache[FD_CACHE];

int bw__fd_blocking(int fd) {
  if (fd < 0)
    return 0;
  if (fd < FD_CACHE) {
    unsigned char c = atomic_load_explicit(&fd_cache[fd], memory_order_relaxed);
    if (c != FD_UNKNOWN)
      return c == FD_BLOCKING;
  }
  int fl = bw__real_fcntl(fd, F_GETFL, 0);
  if (fl < 0)
    return 0; /* a bad descriptor fails at once: nothing blocks */
  int blocking = !(fl & O_NONBLOCK);
  if (fd < FD_CACHE)
    atomic_store_explicit(&fd_cache[fd],
                          blocking ? FD_BLOCKING : FD_NONBLOCKING,
                          memory_order_relaxed);
  return blocking;
}

void bw__fd_forget(int fd) {
  if (fd >= 0 && fd < FD_CACHE)
    atomic_store_explicit(&fd_cache[fd], FD_UNKNOWN, memory_order_relaxed);
}

/* ---- slots -------------------------------------------------------------- */

static void thread_exit(void *arg) {
  bw__slot *s = arg;
  bw__self.depth++;
  /* Canceled inside a counted call: its end never ran. */
  if (bw__self.blocked_pool >= 0)
    bw__pool_unblock(bw__self.blocked_pool, bw__now_ns());
  bw__self.blocked_pool = -1;
  if (s)
    atomic_store_explicit(&s->busy_since, 0, memory_order_relaxed);
  if (bw__self.kind == BW_THREAD_WORKER && bw__self.classified_by_option)
    bw__pool_worker_leave(bw__self.pool, bw__now_ns());
  bw__self.kind = BW_THREAD_OTHER;
  bw__self.pool = -1;
  if (s) {
    atomic_store_explicit(&s->named, 0, memory_order_relaxed);
    atomic_store_explicit(&s->used, 0, memory_order_release);
  }
  bw__self.slot = NULL;
  bw__self.depth--;
}

void bw__state_init(void) {
  if (pthread_key_create(&exit_key, thread_exit) == 0)
    atomic_store(&exit_key_ok, 1);
}

bw__slot *bw__slot_get(void) {
  if (bw__self.slot)
    return bw__self.slot;
  if (!bw__self.tid)
    bw__self.tid = (int)syscall(SYS_gettid);
  unsigned start = (unsigned)bw__self.tid * 2654435761u % BW_MAX_SLOTS;
  for (unsigned i = 0; i < BW_MAX_SLOTS; i++) {
    bw__slot *s = &bw__slots[(start + i) % BW_MAX_SLOTS];
    int expected = 0;
    if (s == &bw__slots[0])
      continue; /* slot 0 is shared by everyone when the table is full */
    if (atomic_compare_exchange_strong(&s->used, &expected, 1)) {
      atomic_store_explicit(&s->tid, bw__self.tid, memory_order_relaxed);
      bw__self.slot = s;
      if (atomic_load_explicit(&exit_key_ok, memory_order_relaxed))
        pthread_setspecific(exit_key, s);
      return s;
    }
  }
  bw__self.slot = &bw__slots[0];
  return bw__self.slot;
}

void bw__totals_get(bw__totals *t) {
  memset(t, 0, sizeof *t);
  uint64_t now = bw__now_ns();
  for (int i = 0; i < BW_MAX_SLOTS; i++) {
    bw__slot *s = &bw__slots[i];
    t->calls_worker +=
        atomic_load_explicit(&s->calls_worker, memory_order_relaxed);
    t->calls_other +=
        atomic_load_explicit(&s->calls_other, memory_order_relaxed);
    t->blocked_ns_worker +=
        atomic_load_explicit(&s->blocked_ns_worker, memory_order_relaxed);
    uint64_t since = atomic_load_explicit(&s->busy_since, memory_order_relaxed);
    if (since) {
      t->in_progress++;
      t->in_progress_ns += now > since ? now - since : 0;
    }
  }
}

/* Adds to a slot counter. A slot has one writer, its thread, so a relaxed
 * load and store will do (no locked instruction on the hot path); slot 0 is
 * shared by the threads that found the table full and needs the real add. */
static inline void slot_add(bw__slot *s, atomic_uint_least64_t *counter,
                            uint64_t v) {
  if (__builtin_expect(s == &bw__slots[0], 0))
    atomic_fetch_add_explicit(counter, v, memory_order_relaxed);
  else
    atomic_store_explicit(
        counter, atomic_load_explicit(counter, memory_order_relaxed) + v,
        memory_order_relaxed);
}

/* ---- classification ----------------------------------------------------- */

/* Any of the comma-separated globs in `list` matches s (the rules' glob
 * syntax; bw_rules_glob_match never allocates, unlike fnmatch). */
static int glob_list_match(const char *list, const char *s) {
  char one[sizeof bw__opt.worker_name];
  while (*list) {
    size_t n = strcspn(list, ",");
    if (n < sizeof one) {
      memcpy(one, list, n);
      one[n] = '\0';
      if (n > 0 && bw_rules_glob_match(one, s))
        return 1;
    }
    list += n;
    if (*list == ',')
      list++;
  }
  return 0;
}

int bw__runtime_current_worker(int *pool); /* pools.c */

static void join_option_pool(void) {
  bw__self.kind = BW_THREAD_WORKER;
  bw__self.pool = bw__pool_for_option();
  bw__self.in_item = 1;
  bw__self.item_query = NULL;
  bw__pool_worker_join(bw__self.pool, bw__now_ns());
}

void bw__thread_classify(void) {
  my_epoch = atomic_load_explicit(&classify_epoch, memory_order_relaxed);
  if (bw__self.classified_by_option == 2)
    return; /* start routine matched: a worker for life */
  if (bw__self.kind == BW_THREAD_WORKER && !bw__self.classified_by_option)
    return; /* announced by the runtime itself */
  int pool;
  if (bw__runtime_current_worker(&pool)) {
    if (bw__self.classified_by_option)
      bw__pool_worker_leave(bw__self.pool, bw__now_ns());
    bw__self.classified_by_option = 0;
    bw__self.kind = BW_THREAD_WORKER;
    bw__self.pool = pool;
    bw__self.in_item = 1; /* met late: its items are not announced */
    bw__pool_worker_join(pool, bw__now_ns());
    return;
  }
  int was_option = bw__self.kind == BW_THREAD_WORKER;
  int is_option = 0;
  char name[17] = {0};
  if (bw__opt.worker_name[0] && prctl(PR_GET_NAME, name, 0, 0, 0) == 0)
    is_option = glob_list_match(bw__opt.worker_name, name);
  if (is_option && !was_option) {
    join_option_pool();
    bw__self.classified_by_option = 1;
    bw__thread_name_slot();
  } else if (!is_option && was_option) {
    bw__pool_worker_leave(bw__self.pool, bw__now_ns());
    bw__self.classified_by_option = 0;
    bw__self.kind = BW_THREAD_OTHER;
    bw__self.pool = -1;
  } else if (!is_option) {
    bw__self.kind = BW_THREAD_OTHER;
  }
}

/* Called by the pthread_create trampoline for a start routine match. */
void bw__thread_is_option_worker(void);
void bw__thread_is_option_worker(void) {
  bw__self.depth++;
  join_option_pool();
  bw__self.classified_by_option = 2;
  bw__thread_name_slot();
  bw__self.depth--;
}

void bw__thread_name_slot(void) {
  bw__slot *s = bw__slot_get();
  char name[17] = {0};
  prctl(PR_GET_NAME, name, 0, 0, 0);
  memcpy(s->name, name, sizeof s->name);
  atomic_store_explicit(&s->named, 1, memory_order_release);
  if (!bw__self.tid)
    bw__self.tid = (int)syscall(SYS_gettid);
  if (bw__opt.trace_path[0])
    bw__trace_thread_name(bw__self.tid, s->name);
}

/* ---- counted calls ------------------------------------------------------ */

static void fail_now(bw__call *c) {
  if (atomic_exchange(&fail_fired, 1))
    return;
  void *frames[BW_SITE_FRAMES];
  int n = bw__capture_frames(frames, BW_SITE_FRAMES);
  bw__log("ERROR: blocking call %s() on a pool worker (fail=1)",
          bw__fn_name(c->fn));
  for (int i = 0; i < n; i++) {
    bw__sym sym;
    bw__symbolize(frames[i], &sym, 0);
    if (sym.file[0])
      bw__log("    #%d %p in %s %s:%d", i, frames[i], sym.function, sym.file,
              sym.line);
    else
      bw__log("    #%d %p in %s", i, frames[i], sym.function);
  }
  bw__site_add(c->fn, c->caller, 1, 0);
  bw__slot *s = bw__slot_get();
  slot_add(s, &s->calls_worker, 1);
  bw__report_final(BW_WHY_FAIL);
  bw__real_exit_now(bw__opt.exitcode);
}

int bw__count_other_call(void) {
  bw__slot *s = bw__self.slot;
  /* No slot yet, a stale classification or a fired fail=1: bw__call_begin
   * takes those. (slot_add itself knows the shared slot 0.) */
  if (bw__self.kind != BW_THREAD_OTHER || s == NULL ||
      my_epoch != atomic_load_explicit(&classify_epoch, memory_order_relaxed) ||
      atomic_load_explicit(&fail_fired, memory_order_relaxed))
    return 0;
  slot_add(s, &s->calls_other, 1);
  return 1;
}

void bw__call_begin(bw__call *c, int fn, void *caller) {
  int saved = errno;
  bw__self.depth++;
  c->fn = fn;
  c->caller = caller;
  c->worker = 0;
  c->compensated = 0;
  if (bw__self.kind == BW_THREAD_UNKNOWN ||
      my_epoch != atomic_load_explicit(&classify_epoch, memory_order_relaxed))
    bw__thread_classify();
  bw__slot *s = bw__slot_get();
  if (__builtin_expect(atomic_load_explicit(&fail_fired, memory_order_relaxed),
                       0)) {
    c->start_ns = 0; /* fail=1 fired: the report is being written */
    errno = saved;
    return;
  }
  if (bw__self.kind != BW_THREAD_WORKER) {
    slot_add(s, &s->calls_other, 1);
    c->start_ns = 0;
    errno = saved;
    return;
  }
  if (!(bw__self.item_query ? bw__self.item_query() : bw__self.in_item)) {
    c->start_ns = 0; /* a runtime worker between items: the runtime's own */
    errno = saved;
    return;
  }
  c->worker = 1;
  c->pool = bw__self.pool;
  if (bw__opt.fail == BW_FAIL_NOW)
    fail_now(c);
  if (bw__opt.compensate)
    c->compensated = bw__pool_notify(c->pool, 1) == 0;
  /* Counted now, so that a call that never returns (a hang, a deadlock
   * ended by a signal) is in the report; with a threshold (or fail=1, whose
   * report must hold exactly the first call) only once it returned. */
  c->counted_early = bw__opt.threshold_ns == 0 && bw__opt.fail != BW_FAIL_NOW;
  c->site = -1;
  if (c->counted_early) {
    slot_add(s, &s->calls_worker, 1);
    c->site = bw__site_add(fn, caller, 1, 0);
  }
  c->start_ns = bw__now_ns();
  bw__self.blocked_pool = c->pool;
  atomic_store_explicit(&s->busy_since, c->start_ns, memory_order_relaxed);
  bw__pool_block(c->pool, c->start_ns);
  errno = saved;
}

void bw__call_end(bw__call *c) {
  if (!c->worker) {
    bw__self.depth--;
    return;
  }
  int saved = errno;
  uint64_t end = bw__now_ns();
  uint64_t dur = end - c->start_ns;
  bw__slot *s = bw__slot_get();
  atomic_store_explicit(&s->busy_since, 0, memory_order_relaxed);
  bw__self.blocked_pool = -1;
  bw__pool_unblock(c->pool, end);
  if (c->compensated)
    bw__pool_notify(c->pool, 0);
  int record = c->counted_early;
  if (record) {
    slot_add(s, &s->blocked_ns_worker, dur);
    bw__site_add_ns(c->site, dur);
  } else if (dur >= bw__opt.threshold_ns &&
             !atomic_load_explicit(&fail_fired, memory_order_relaxed)) {
    record = 1;
    slot_add(s, &s->calls_worker, 1);
    slot_add(s, &s->blocked_ns_worker, dur);
    bw__site_add(c->fn, c->caller, 1, dur);
  }
  if (record && bw__opt.trace_path[0])
    bw__trace_slice(c->fn, bw__self.tid, c->start_ns, dur);
  bw__self.depth--;
  errno = saved;
}

/* ---- fork --------------------------------------------------------------- */

void bw__state_after_fork(void) {
  bw__slot *mine = bw__self.slot;
  for (int i = 0; i < BW_MAX_SLOTS; i++) {
    bw__slot *s = &bw__slots[i];
    atomic_store(&s->calls_worker, 0);
    atomic_store(&s->calls_other, 0);
    atomic_store(&s->blocked_ns_worker, 0);
    atomic_store(&s->busy_since, 0);
    atomic_store(&s->named, 0);
    if (s != mine)
      atomic_store(&s->used, 0);
  }
  bw__own_pid_set();
  /* The child's only thread copies a worker's stack, not its pool. */
  bw__self.tid = (int)syscall(SYS_gettid);
  if (mine)
    atomic_store(&mine->tid, bw__self.tid);
  bw__self.kind = BW_THREAD_OTHER;
  bw__self.pool = -1;
  bw__self.in_item = 0;
  bw__self.item_query = NULL;
  bw__self.classified_by_option = 0;
  bw__self.blocked_pool = -1;
  atomic_store(&fail_fired, 0);
  bw__reclassify_all();
}
