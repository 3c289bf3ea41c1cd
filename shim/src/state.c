/* state.c - per-thread state, thread classification, the counting ledger
 * and the descriptor cache: everything a wrapped call touches.
 *
 * Invariants:
 *  - The hot path takes no lock, calls no allocator and no dlsym: counters
 *    are relaxed atomics in a fixed slot array, classification is cached in
 *    TLS and redone only when the global epoch moves (a runtime attached, a
 *    thread was renamed, a fork happened).
 *  - bwsh__call_begin raises bwsh__self.depth and bwsh__call_end lowers it, so
 *    anything called in between (the real function, runtime hooks, the
 *    reporter) passes straight through the wrappers and is never counted
 *    twice (bw_wait's own pthread_cond_wait, for instance).
 *  - errno seen by the caller is the one the real function left.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "policy.h"
#include "real.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

BWSH__TLS __thread bwsh__thread bwsh__self = {.pool = -1, .blocked_pool = -1};
atomic_int bwsh__active;
atomic_int bwsh__stood_down;
bwsh__slot bwsh__slots[BW_MAX_SLOTS];

/* Bumped whenever a thread's kind may have changed behind its back. */
static atomic_uint classify_epoch = 1;
static BWSH__TLS __thread unsigned my_epoch;
static pthread_key_t exit_key;
static atomic_int exit_key_ok;
static atomic_int fail_fired;

static atomic_int own_pid;

void bwsh__own_pid_set(void) {
  atomic_store(&own_pid, (int)getpid());
}

int bwsh__is_own_process(void) {
  return (int)getpid() == atomic_load(&own_pid);
}

uint64_t bwsh__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void bwsh__reclassify_all(void) {
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

int bwsh__fd_blocking(int fd) {
  if (fd < 0)
    return 0;
  if (fd < FD_CACHE) {
    unsigned char c = atomic_load_explicit(&fd_cache[fd], memory_order_relaxed);
    if (c != FD_UNKNOWN)
      return c == FD_BLOCKING;
  }
  int saved = errno;
  int fl = bwsh__real_fcntl(fd, F_GETFL, 0);
  errno = saved;
  if (fl < 0)
    return 0; /* a bad descriptor fails at once: nothing blocks */
  int blocking = !(fl & O_NONBLOCK);
  if (fd < FD_CACHE)
    atomic_store_explicit(&fd_cache[fd],
                          blocking ? FD_BLOCKING : FD_NONBLOCKING,
                          memory_order_relaxed);
  return blocking;
}

void bwsh__fd_forget(int fd) {
  if (fd >= 0 && fd < FD_CACHE)
    atomic_store_explicit(&fd_cache[fd], FD_UNKNOWN, memory_order_relaxed);
}

/* ---- slots -------------------------------------------------------------- */

static void thread_exit(void *arg) {
  bwsh__slot *s = arg;
  bwsh__self.depth++;
  /* Canceled inside a counted call: its end never ran. */
  if (bwsh__self.blocked_pool >= 0)
    bwsh__pool_unblock(bwsh__self.blocked_pool, bwsh__now_ns());
  bwsh__self.blocked_pool = -1;
  if (s)
    atomic_store_explicit(&s->busy_since, 0, memory_order_relaxed);
  if (bwsh__self.kind == BW_THREAD_WORKER && bwsh__self.classified_by_option)
    bwsh__pool_worker_leave(bwsh__self.pool, bwsh__now_ns());
  bwsh__self.kind = BW_THREAD_OTHER;
  bwsh__self.pool = -1;
  bwsh__self.own_by_caller = 0;
  if (s) {
    atomic_store_explicit(&s->named, 0, memory_order_relaxed);
    atomic_store_explicit(&s->used, 0, memory_order_release);
  }
  bwsh__self.slot = NULL;
  bwsh__self.depth--;
}

void bwsh__state_init(void) {
  if (pthread_key_create(&exit_key, thread_exit) == 0)
    atomic_store(&exit_key_ok, 1);
}

/* One bit per slot that a thread ever claimed (slot 0, shared, always
 * counts as used): a fork child clears those slots and reads no other. */
static atomic_uint_least64_t ever_used[BW_MAX_SLOTS / 64];

static void mark_ever_used(int i) {
  uint64_t bit = (uint64_t)1 << (i % 64);
  if (!(atomic_load_explicit(&ever_used[i / 64], memory_order_relaxed) & bit))
    atomic_fetch_or_explicit(&ever_used[i / 64], bit, memory_order_relaxed);
}

bwsh__slot *bwsh__slot_get(void) {
  if (bwsh__self.slot)
    return bwsh__self.slot;
  if (!bwsh__self.tid)
    bwsh__self.tid = (int)syscall(SYS_gettid);
  unsigned start = (unsigned)bwsh__self.tid * 2654435761u % BW_MAX_SLOTS;
  for (unsigned i = 0; i < BW_MAX_SLOTS; i++) {
    bwsh__slot *s = &bwsh__slots[(start + i) % BW_MAX_SLOTS];
    int expected = 0;
    if (s == &bwsh__slots[0])
      continue; /* slot 0 is shared by everyone when the table is full */
    if (atomic_compare_exchange_strong(&s->used, &expected, 1)) {
      mark_ever_used((int)(s - bwsh__slots));
      atomic_store_explicit(&s->tid, bwsh__self.tid, memory_order_relaxed);
      bwsh__self.slot = s;
      if (atomic_load_explicit(&exit_key_ok, memory_order_relaxed))
        pthread_setspecific(exit_key, s);
      return s;
    }
  }
  bwsh__self.slot = &bwsh__slots[0];
  return bwsh__self.slot;
}

/* Calls on other threads by function, one row per slot beside the slot's
 * own counters (same single writer), apart from bwsh__slot so that the
 * slot stays one cache line; pages no thread writes are never touched. */
static atomic_uint_least64_t other_by_fn[BW_MAX_SLOTS][BW_FN_COUNT];
/* Calls on the runtime's blocking threads, per slot likewise. */
static atomic_uint_least64_t calls_blocking[BW_MAX_SLOTS];

void bwsh__totals_get(bwsh__totals *t) {
  memset(t, 0, sizeof *t);
  uint64_t now = bwsh__now_ns();
  for (int i = 0; i < BW_MAX_SLOTS; i++) {
    bwsh__slot *s = &bwsh__slots[i];
    t->calls_worker +=
        atomic_load_explicit(&s->calls_worker, memory_order_relaxed);
    uint64_t other =
        atomic_load_explicit(&s->calls_other, memory_order_relaxed);
    t->calls_other += other;
    /* A row is written only after its slot's calls_other (count_other):
     * the rows of slots that counted none stay unread, so a report, in a
     * fork child that exits at once too, touches no page of theirs. */
    if (other != 0)
      for (int fn = 0; fn < BW_FN_COUNT; fn++)
        t->other_by_fn[fn] +=
            atomic_load_explicit(&other_by_fn[i][fn], memory_order_relaxed);
    t->calls_blocking +=
        atomic_load_explicit(&calls_blocking[i], memory_order_relaxed);
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
static inline void slot_add(bwsh__slot *s, atomic_uint_least64_t *counter,
                            uint64_t v) {
  if (__builtin_expect(s == &bwsh__slots[0], 0))
    atomic_fetch_add_explicit(counter, v, memory_order_relaxed);
  else
    atomic_store_explicit(
        counter, atomic_load_explicit(counter, memory_order_relaxed) + v,
        memory_order_relaxed);
}

/* One call on a thread that is not a worker, by its function. */
static inline void count_other(bwsh__slot *s, int fn) {
  slot_add(s, &s->calls_other, 1);
  slot_add(s, &other_by_fn[s - bwsh__slots][fn], 1);
}

/* ---- classification ----------------------------------------------------- */

static void join_option_pool(void) {
  bwsh__self.kind = BW_THREAD_WORKER;
  bwsh__self.pool = bwsh__pool_for_option();
  bwsh__self.in_item = 1;
  bwsh__self.item_query = NULL;
  bwsh__pool_worker_join(bwsh__self.pool, bwsh__now_ns());
}

void bwsh__thread_classify(void) {
  my_epoch = atomic_load_explicit(&classify_epoch, memory_order_relaxed);
  if (bwsh__self.classified_by_option == 2)
    return; /* start routine matched: a worker for life */
  if (bwsh__self.kind == BW_THREAD_POOL_IDLE)
    return; /* a foreign pool's thread: its items say when it works */
  if (bwsh__self.kind == BW_THREAD_WORKER && !bwsh__self.classified_by_option)
    return; /* announced by the runtime itself */
  int pool;
  if (bwsh__runtime_current_worker(&pool)) {
    if (bwsh__self.classified_by_option)
      bwsh__pool_worker_leave(bwsh__self.pool, bwsh__now_ns());
    bwsh__self.classified_by_option = 0;
    bwsh__self.kind = BW_THREAD_WORKER;
    bwsh__self.pool = pool;
    bwsh__self.in_item = 1; /* met late: its items are not announced */
    bwsh__pool_worker_join(pool, bwsh__now_ns());
    return;
  }
  int was_option = bwsh__self.kind == BW_THREAD_WORKER;
  int runtime_kind = bwsh__runtime_thread_kind();
  if (runtime_kind != BW_THREAD_OTHER) { /* the runtime's word beats a glob */
    if (was_option)
      bwsh__pool_worker_leave(bwsh__self.pool, bwsh__now_ns());
    bwsh__self.classified_by_option = 0;
    bwsh__self.kind = runtime_kind;
    bwsh__self.pool = -1;
    return;
  }
  if (bwsh__self.born_of == BW_LIB_GLIB) {
    bwsh__self.born_of = BW_LIB_NONE; /* asked once: the answer holds */
    if (bwsh__glib_own_thread()) {
      if (was_option)
        bwsh__pool_worker_leave(bwsh__self.pool, bwsh__now_ns());
      bwsh__self.classified_by_option = 0;
      bwsh__self.kind = BW_THREAD_POOL_IDLE;
      bwsh__self.pool = -1;
      return;
    }
  }
  int is_option = 0;
  char name[17] = {0};
  if (prctl(PR_GET_NAME, name, 0, 0, 0) != 0)
    name[0] = '\0';
  int thpool = bwsh__thpool_pool_of_name(name);
  if (thpool >= 0) { /* C-Thread-Pool's worker: beats a glob too */
    if (was_option)
      bwsh__pool_worker_leave(bwsh__self.pool, bwsh__now_ns());
    bwsh__self.classified_by_option = 0;
    bwsh__self.kind = BW_THREAD_WORKER;
    bwsh__self.pool = thpool;
    bwsh__self.in_item = 1;
    bwsh__self.item_query = NULL;
    bwsh__self.own_by_caller = 1;
    bwsh__thread_name_slot();
    return;
  }
  if (bwsh__opt.worker_name[0])
    is_option = bwsh__glob_list_match(bwsh__opt.worker_name, name);
  if (is_option && !was_option) {
    join_option_pool();
    bwsh__self.classified_by_option = 1;
    bwsh__thread_name_slot();
  } else if (!is_option && was_option) {
    bwsh__pool_worker_leave(bwsh__self.pool, bwsh__now_ns());
    bwsh__self.classified_by_option = 0;
    bwsh__self.kind = BW_THREAD_OTHER;
    bwsh__self.pool = -1;
  } else if (!is_option) {
    bwsh__self.kind = BW_THREAD_OTHER;
  }
}

/* Called by the pthread_create trampoline for a start routine match. */
void bwsh__thread_is_option_worker(void) {
  bwsh__self.depth++;
  join_option_pool();
  bwsh__self.classified_by_option = 2;
  bwsh__thread_name_slot();
  bwsh__self.depth--;
}

void bwsh__thread_born_of(int lib) {
  if (lib == BW_LIB_UV) {
    bwsh__self.kind = BW_THREAD_POOL_IDLE;
    bwsh__self.pool = -1;
  } else {
    bwsh__self.born_of = lib;
  }
}

void bwsh__thread_starts_uv_pool(void) {
  bwsh__self.uv_setup = 1;
}

void bwsh__thread_name_slot(void) {
  bwsh__slot *s = bwsh__slot_get();
  char name[17] = {0};
  prctl(PR_GET_NAME, name, 0, 0, 0);
  memcpy(s->name, name, sizeof s->name);
  atomic_store_explicit(&s->named, 1, memory_order_release);
  if (!bwsh__self.tid)
    bwsh__self.tid = (int)syscall(SYS_gettid);
  if (bwsh__opt.trace_path[0])
    bwsh__trace_thread_name(bwsh__self.tid, s->name);
}

/* ---- foreign pools' items (foreign_*.c) -------------------------------- */

void bwsh__foreign_item_begin(int p, uint64_t enqueue_ns, void *fn,
                              bwsh__item_frame *saved) {
  int err = errno;
  bwsh__self.depth++;
  saved->kind = bwsh__self.kind;
  saved->pool = bwsh__self.pool;
  saved->in_item = bwsh__self.in_item;
  saved->classified_by_option = bwsh__self.classified_by_option;
  saved->item_query = bwsh__self.item_query;
  saved->item_fn = bwsh__self.item_fn;
  /* A worker_name glob that matched a foreign pool's thread gives way:
   * the items say exactly when it works. */
  if (saved->kind == BW_THREAD_WORKER && saved->classified_by_option) {
    bwsh__pool_worker_leave(saved->pool, bwsh__now_ns());
    saved->kind = BW_THREAD_POOL_IDLE;
    saved->classified_by_option = 0;
  }
  if (saved->kind == BW_THREAD_UNKNOWN || saved->kind == BW_THREAD_OTHER) {
    saved->kind = BW_THREAD_POOL_IDLE;
    saved->pool = -1;
  }
  /* Counted in the pool's shared shard: a foreign thread never gives back
   * a shard of its own (no "worker stopped" is ever seen). */
  bwsh__self.kind = BW_THREAD_POOL_IDLE;
  if (p >= 0) {
    uint64_t now = bwsh__now_ns();
    bwsh__pool_item_started(p, enqueue_ns ? enqueue_ns : now, now,
                            enqueue_ns != 0);
    bwsh__self.kind = BW_THREAD_WORKER;
    bwsh__self.pool = p;
    bwsh__self.in_item = 1;
    bwsh__self.item_query = NULL;
    bwsh__self.classified_by_option = 0;
    bwsh__self.item_fn = fn;
    if (!bwsh__self.slot || !atomic_load(&bwsh__self.slot->named))
      bwsh__thread_name_slot();
  }
  bwsh__self.depth--;
  errno = err;
}

void bwsh__foreign_item_end(const bwsh__item_frame *saved) {
  bwsh__self.kind = saved->kind;
  bwsh__self.pool = saved->pool;
  bwsh__self.in_item = saved->in_item;
  bwsh__self.classified_by_option = saved->classified_by_option;
  bwsh__self.item_query = saved->item_query;
  bwsh__self.item_fn = saved->item_fn;
}

/* ---- counted calls ------------------------------------------------------ */

/* The return address that keys the call's site: a loop callback's own
 * (bwsh__loop_site_key), apart from a worker's at the same address. */
static inline void *site_caller(const bwsh__call *c) {
  return c->worker == 2 ? bwsh__loop_site_key(c->caller) : c->caller;
}

static void fail_now(bwsh__call *c) {
  if (atomic_exchange(&fail_fired, 1))
    return;
  void *frames[BW_SITE_FRAMES];
  int n = bwsh__capture_frames(frames, BW_SITE_FRAMES);
  bwsh__log("ERROR: blocking call %s() on a pool worker (fail=1)",
            bwsh__fn_name(c->fn));
  for (int i = 0; i < n; i++) {
    bwsh__sym sym;
    bwsh__symbolize(frames[i], &sym, 0);
    if (sym.file[0])
      bwsh__log("    #%d %p in %s %s:%d", i, frames[i], sym.function, sym.file,
                sym.line);
    else
      bwsh__log("    #%d %p in %s", i, frames[i], sym.function);
  }
  bwsh__site_add(c->fn, site_caller(c), c->caller_slot, c->key, 1, 0);
  bwsh__slot *s = bwsh__slot_get();
  slot_add(s, &s->calls_worker, 1);
  bwsh__report_final(BW_WHY_FAIL);
  bwsh__real_exit_now(bwsh__opt.exitcode);
}

int bwsh__count_other_call(int fn, void *caller) {
  bwsh__slot *s = bwsh__self.slot;
  /* No slot yet, a stale classification or a fired fail=1: bwsh__call_begin
   * takes those. (slot_add itself knows the shared slot 0.) So does a call
   * from libuv's code or an interposer: it may be libuv's one-time setup
   * (libuv_setup_call), which a thread that blocked before runs too. */
  if (bwsh__self.kind != BW_THREAD_OTHER || s == NULL ||
      bwsh__self.uv_setup /* libuv starts its pool: ask the caller */ ||
      bwsh__code_maybe_uv(caller) ||
      bwsh__loop_self.depth /* a loop thread: its callbacks' calls count */ ||
      my_epoch != atomic_load_explicit(&classify_epoch, memory_order_relaxed) ||
      atomic_load_explicit(&fail_fired, memory_order_relaxed))
    return 0;
  count_other(s, fn);
  return 1;
}

/* 1 when a call from caller on an "other" thread is libuv's one-time
 * setup (bwsh__uv_in_setup): its own, counted nowhere. (A worker that
 * starts libuv's pool is kept from its items meanwhile: that counts.)
 * Asked (an unwind) only of calls from libuv's code or from an
 * interposer (a sanitizer's interceptor stands between libuv and us), and
 * on a loop thread only while it is starting libuv's pool: a loop's own
 * waits are libuv's code too, and loops.c tells those. */
static int libuv_setup_call(void *caller) {
  if (bwsh__loop_self.depth && !bwsh__self.uv_setup)
    return 0;
  if ((bwsh__code_library(caller) == BW_LIB_UV ||
       bwsh__code_kind(caller) == BW_CODE_INTERPOSER) &&
      bwsh__uv_in_setup())
    return 1;
  bwsh__self.uv_setup = 0;
  return 0;
}

/* The slot of the return address into `caller` in the frame above fp
 * (bwsh__call_begin's own): the wrapper's, when it called begin itself
 * (the shim keeps frame pointers); NULL when that frame is another of the
 * shim's (sites.c then walks). The reads are of saved-rbp and
 * return-address slots of the shim's live frames. */
__attribute__((no_sanitize_address)) static void *const *
slot_above(void *const *fp, const void *caller) {
  void *const *up = fp[0];
  if (up <= fp || (uintptr_t)up - (uintptr_t)fp > 65536)
    return NULL;
  return up[1] == caller ? &up[1] : NULL;
}

void bwsh__call_begin(bwsh__call *c, int fn, void *caller) {
  int saved = errno;
  bwsh__self.depth++;
  c->fn = fn;
  c->caller = caller;
  c->caller_slot = NULL;
  c->key = 0;
  c->worker = 0;
  c->compensated = 0;
  if (bwsh__self.kind == BW_THREAD_UNKNOWN ||
      my_epoch != atomic_load_explicit(&classify_epoch, memory_order_relaxed))
    bwsh__thread_classify();
  bwsh__slot *s = bwsh__slot_get();
  if (__builtin_expect(atomic_load_explicit(&fail_fired, memory_order_relaxed),
                       0)) {
    c->start_ns = 0; /* fail=1 fired: the report is being written */
    errno = saved;
    return;
  }
  if (bwsh__self.kind == BW_THREAD_OTHER && libuv_setup_call(caller)) {
    c->start_ns = 0;
    errno = saved;
    return;
  }
  /* A loop thread (not a worker): its loop's own wait is not counted at
   * all, a callback's call is counted like a worker's (loops.c). */
  int on_loop = bwsh__self.kind != BW_THREAD_WORKER && bwsh__loop_self.depth;
  if (on_loop && !bwsh__loop_call_begin(fn, caller)) {
    c->start_ns = 0;
    errno = saved;
    return;
  }
  if (!on_loop && bwsh__self.kind != BW_THREAD_WORKER) {
    int kind = bwsh__self.kind;
    /* A blocking thread is the runtime's own between its jobs: asked on
     * every call (these threads never take the other-thread fast path). */
    if (kind == BW_THREAD_BLOCKING || kind == BW_THREAD_RUNTIME)
      kind = bwsh__runtime_thread_kind();
    if (kind == BW_THREAD_BLOCKING)
      slot_add(s, &calls_blocking[s - bwsh__slots], 1);
    else if (kind != BW_THREAD_RUNTIME && kind != BW_THREAD_POOL_IDLE)
      count_other(s, fn);
    c->start_ns = 0;
    errno = saved;
    return;
  }
  if (!on_loop &&
      !(bwsh__self.item_query ? bwsh__self.item_query() : bwsh__self.in_item)) {
    c->start_ns = 0; /* a runtime worker between items: the runtime's own */
    errno = saved;
    return;
  }
  if (__builtin_expect(bwsh__self.own_by_caller, 0) &&
      bwsh__thpool_own_call(caller)) {
    bwsh__pool_idle_wait(bwsh__self.pool);
    c->start_ns = 0; /* C-Thread-Pool's own wait */
    errno = saved;
    return;
  }
  /* A worker named by options, told its items by item_fn: a call outside
   * every item function is the pool's own (its idle wait). The verdict's
   * unwind (or memo) gives the site key too. */
  if (bwsh__self.classified_by_option) /* sites.c's memo wants the slot */
    c->caller_slot = slot_above(__builtin_frame_address(0), caller);
  if (__builtin_expect(bwsh__self.classified_by_option != 0, 0) &&
      bwsh__opt.item_fn[0] && !on_loop &&
      !bwsh__item_call(fn, caller, c->caller_slot, &c->key)) {
    bwsh__pool_idle_wait(bwsh__self.pool);
    c->start_ns = 0;
    errno = saved;
    return;
  }
  c->worker = on_loop ? 2 : 1;
  c->pool = on_loop ? -1 : bwsh__self.pool;
  if (bwsh__opt.fail == BW_FAIL_NOW)
    fail_now(c);
  if (bwsh__opt.compensate)
    c->compensated = bwsh__pool_notify(c->pool, 1) == 0;
  /* Counted now, so that a call that never returns (a hang, a deadlock
   * ended by a signal) is in the report; with a threshold (or fail=1, whose
   * report must hold exactly the first call) only once it returned. */
  c->counted_early = bwsh__policy_counts_at_begin();
  c->site = -1;
  if (c->counted_early) {
    slot_add(s, &s->calls_worker, 1);
    c->site = bwsh__site_add(fn, site_caller(c), c->caller_slot, c->key, 1, 0);
  }
  c->start_ns = bwsh__now_ns();
  bwsh__self.blocked_pool = c->pool;
  atomic_store_explicit(&s->busy_since, c->start_ns, memory_order_relaxed);
  bwsh__pool_block(c->pool, c->start_ns);
  errno = saved;
}

void bwsh__call_end(bwsh__call *c) {
  if (!c->worker) {
    if (bwsh__loop_self.in_wait)
      bwsh__loop_wait_end();
    bwsh__self.depth--;
    return;
  }
  int saved = errno;
  uint64_t end = bwsh__now_ns();
  uint64_t dur = end - c->start_ns;
  bwsh__slot *s = bwsh__slot_get();
  atomic_store_explicit(&s->busy_since, 0, memory_order_relaxed);
  bwsh__self.blocked_pool = -1;
  bwsh__pool_unblock(c->pool, end);
  if (c->compensated)
    bwsh__pool_notify(c->pool, 0);
  int record = c->counted_early, site = c->site;
  if (record) {
    slot_add(s, &s->blocked_ns_worker, dur);
    bwsh__site_add_ns(site, dur);
  } else if (bwsh__policy_long_enough(dur) &&
             !atomic_load_explicit(&fail_fired, memory_order_relaxed)) {
    record = 1;
    slot_add(s, &s->calls_worker, 1);
    slot_add(s, &s->blocked_ns_worker, dur);
    site =
        bwsh__site_add(c->fn, site_caller(c), c->caller_slot, c->key, 1, dur);
  }
  if (record && c->worker == 2)
    bwsh__loop_call_counted(dur);
  if (record && bwsh__opt.trace_path[0])
    bwsh__trace_slice(c->fn, bwsh__self.tid, bwsh__site_frame0(site, c->caller),
                      c->start_ns, dur);
  bwsh__self.depth--;
  errno = saved;
}

/* ---- fork --------------------------------------------------------------- */

/* Stores 0 where the word is not 0 already: a child that only reads a
 * page its parent never wrote (or wrote to zero) neither copies nor
 * allocates it, and most fork children exec at once. */
#define CLEAR(word)                                                            \
  do {                                                                         \
    if (atomic_load_explicit(&(word), memory_order_relaxed) != 0)              \
      atomic_store_explicit(&(word), 0, memory_order_relaxed);                 \
  } while (0)

void bwsh__state_after_fork(void) {
  bwsh__slot *mine = bwsh__self.slot;
  for (int i = 0; i < BW_MAX_SLOTS; i++) {
    uint64_t word =
        atomic_load_explicit(&ever_used[i / 64], memory_order_relaxed);
    if (i != 0 && !(word & ((uint64_t)1 << (i % 64))))
      continue; /* never claimed: never written */
    bwsh__slot *s = &bwsh__slots[i];
    CLEAR(s->calls_worker); /* a freed slot keeps its counts: clear it too */
    /* A row is only ever written after its slot's calls_other: the rows of
     * slots that counted none are zero already (and stay untouched pages). */
    if (atomic_load_explicit(&s->calls_other, memory_order_relaxed) != 0) {
      atomic_store(&s->calls_other, 0);
      for (int fn = 0; fn < BW_FN_COUNT; fn++)
        CLEAR(other_by_fn[i][fn]);
    }
    CLEAR(s->blocked_ns_worker);
    CLEAR(calls_blocking[i]);
    CLEAR(s->busy_since);
    CLEAR(s->named);
    if (s != mine)
      CLEAR(s->used);
  }
  bwsh__own_pid_set();
  /* The child's only thread copies a worker's stack, not its pool. */
  bwsh__self.tid = (int)syscall(SYS_gettid);
  if (mine)
    atomic_store(&mine->tid, bwsh__self.tid);
  bwsh__self.kind = BW_THREAD_OTHER;
  bwsh__self.pool = -1;
  bwsh__self.in_item = 0;
  bwsh__self.item_query = NULL;
  bwsh__self.classified_by_option = 0;
  bwsh__self.own_by_caller = 0;
  bwsh__self.blocked_pool = -1;
  atomic_store(&fail_fired, 0);
  bwsh__reclassify_all();
}
