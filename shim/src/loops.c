/* loops.c - loop threads: a thread inside uv_run, g_main_loop_run /
 * g_main_context_iteration or event_base_loop / event_base_dispatch, which
 * of its counted calls are the loop's own wait and which a callback's, and
 * the loops[] records of the report.
 *
 * Invariants:
 *  - The loop's own wait is a poll-family call (poll, ppoll, select,
 *    pselect, epoll_wait and its forms) whose return address lies in the
 *    loop library's executable segment, which the real runner's address
 *    marks in modules.c's table. Under a sanitizer the call reaches the
 *    shim from the sanitizer's interceptor: a poll-family call from an
 *    interposer on a loop thread is taken for the loop's own too.
 *  - A callback stretch runs from the runner's start or the end of the
 *    loop's own wait to the next own wait or the runner's return; a poll
 *    that cannot block (zero timeout) passes the shim by and does not end
 *    it: work that keeps the loop from waiting is lag all the same.
 *  - A record belongs to one (process, thread, kind) and is written only by
 *    that thread (relaxed loads and stores); the reporter reads published
 *    records only. No allocation, no lock on any path but the first entry
 *    of a kind (marking its segment: dl_iterate_phdr).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "shim.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

BWSH__TLS __thread bwsh__loop_thread bwsh__loop_self = {.rec = -1};

const char *bwsh__loop_kind_name(int kind) {
#define NAME(id, name) name,
  static const char *const names[] = {BWSH__LOOP_KINDS(NAME)};
#undef NAME
  return kind >= 0 && kind < BW_LOOP_KIND_COUNT ? names[kind] : "?";
}

/* ---- records ------------------------------------------------------------- */

typedef struct loop_rec {
  atomic_int state; /* 0 free, 1 being claimed, 2 published */
  int kind, tid, pid;
  atomic_uint_least64_t calls, blocked_ns, longest_ns;
} loop_rec;

static loop_rec recs[BW_MAX_LOOPS];

static int my_tid(void) {
  if (!bwsh__self.tid)
    bwsh__self.tid = (int)syscall(SYS_gettid);
  return bwsh__self.tid;
}

/* The record of (this thread, kind), made when there is none (-1: full).
 * A thread's own records are found first through a per-kind cache; the
 * tid check drops a cache a fork child inherited. */
static int record_for(int kind) {
  static BWSH__TLS __thread int cache[BW_LOOP_KIND_COUNT]; /* index + 1 */
  int tid = my_tid();
  int c = cache[kind] - 1;
  if (c >= 0 && recs[c].tid == tid)
    return c;
  int pid = (int)getpid();
  for (int i = 0; i < BW_MAX_LOOPS; i++) {
    loop_rec *r = &recs[i];
    int st = atomic_load_explicit(&r->state, memory_order_acquire);
    if (st == 2 && r->tid == tid && r->kind == kind && r->pid == pid) {
      cache[kind] = i + 1;
      return i;
    }
    int expected = 0;
    if (st == 0 && atomic_compare_exchange_strong(&r->state, &expected, 1)) {
      r->kind = kind;
      r->tid = tid;
      r->pid = pid;
      atomic_store(&r->calls, 0);
      atomic_store(&r->blocked_ns, 0);
      atomic_store(&r->longest_ns, 0);
      atomic_store_explicit(&r->state, 2, memory_order_release);
      cache[kind] = i + 1;
      return i;
    }
  }
  return -1;
}

/* One writer per record: a relaxed load and store will do. */
static void rec_add(atomic_uint_least64_t *v, uint64_t d) {
  atomic_store_explicit(v, atomic_load_explicit(v, memory_order_relaxed) + d,
                        memory_order_relaxed);
}

/* The callback stretch that began at out_since ends now. */
static void stretch_end(uint64_t now) {
  const bwsh__loop_thread *l = &bwsh__loop_self;
  if (now < l->out_since)
    return;
  uint64_t dur = now - l->out_since;
  if (bwsh__opt.trace_path[0])
    bwsh__trace_loop_callbacks(l->kind, my_tid(), l->out_since, dur);
  if (l->rec < 0)
    return;
  atomic_uint_least64_t *longest = &recs[l->rec].longest_ns;
  if (dur > atomic_load_explicit(longest, memory_order_relaxed))
    atomic_store_explicit(longest, dur, memory_order_relaxed);
}

/* ---- the runners --------------------------------------------------------- */

int bwsh__loop_enter(bwsh__loop_thread *saved, int kind, void (*real)(void),
                     void *ret) {
  if (!atomic_load_explicit(&bwsh__active, memory_order_relaxed) ||
      bwsh__self.depth || kind < 0 || kind >= BW_LOOP_KIND_COUNT)
    return 0;
  int saved_errno = errno;
  bwsh__self.depth++;
  void *addr;
  memcpy(&addr, &real, sizeof addr);
  bwsh__modules_mark_loop(addr, kind);
  *saved = bwsh__loop_self;
  bwsh__loop_self.depth = saved->depth + 1;
  bwsh__loop_self.kind = kind;
  bwsh__loop_self.rec = record_for(kind);
  bwsh__loop_self.in_wait = 0;
  bwsh__loop_self.out_since = bwsh__now_ns();
  bwsh__loop_self.runner_ret = ret;
  bwsh__self.depth--;
  errno = saved_errno;
  return 1;
}

void bwsh__loop_leave(const bwsh__loop_thread *saved) {
  int saved_errno = errno;
  if (!bwsh__loop_self.in_wait)
    stretch_end(bwsh__now_ns());
  /* An outer runner of another kind was in a callback all along: its
   * stretch goes on. One of the same kind (event_base_dispatch calls
   * event_base_loop; a callback runs the loop it is in again) served its
   * own callbacks meanwhile: its stretch began when the inner one's did. */
  uint64_t inner_since = bwsh__loop_self.out_since;
  int same = saved->depth && saved->kind == bwsh__loop_self.kind;
  bwsh__loop_self = *saved;
  if (same)
    bwsh__loop_self.out_since = inner_since;
  errno = saved_errno;
}

/* ---- calls on a loop thread ---------------------------------------------- */

static int is_poll_family(int fn) {
  switch (fn) {
  case BW_FN_poll:
  case BW_FN___poll_chk:
  case BW_FN_ppoll:
  case BW_FN___ppoll_chk:
  case BW_FN_select:
  case BW_FN_pselect:
  case BW_FN_epoll_wait:
  case BW_FN_epoll_pwait:
  case BW_FN_epoll_pwait2:
    return 1;
  default:
    return 0;
  }
}

/* 1 when the first frame of the program's own code above the call is the
 * one that called the runner: the loop library made the call for itself,
 * from no callback. Unwinds (about a microsecond): only for calls the loop
 * library makes that are not its wait. */
static int made_by_the_loop(const bwsh__loop_thread *l) {
  void *frames[BW_SITE_FRAMES + 24];
  int n = bwsh__capture_frames(frames, (int)(sizeof frames / sizeof *frames));
  for (int i = 0; i < n; i++)
    if (bwsh__code_kind(frames[i]) == BW_CODE_PROGRAM)
      return frames[i] == l->runner_ret;
  return 0;
}

int bwsh__loop_call_begin(int fn, void *caller) {
  bwsh__loop_thread *l = &bwsh__loop_self;
  int own_code = bwsh__code_loop(caller) == l->kind;
  if (is_poll_family(fn) &&
      (own_code || bwsh__code_kind(caller) == BW_CODE_INTERPOSER)) {
    stretch_end(bwsh__now_ns());
    l->in_wait = 1;
    return 0;
  }
  if (own_code && l->runner_ret && made_by_the_loop(l))
    return 0;
  return 1;
}

void bwsh__loop_wait_end(void) {
  bwsh__loop_self.in_wait = 0;
  bwsh__loop_self.out_since = bwsh__now_ns();
}

void bwsh__loop_call_counted(uint64_t dur_ns) {
  int rec = bwsh__loop_self.rec;
  if (rec < 0)
    return;
  rec_add(&recs[rec].calls, 1);
  rec_add(&recs[rec].blocked_ns, dur_ns);
}

/* ---- the report ---------------------------------------------------------- */

int bwsh__loop_get(int i, bwsh__loop_report *out) {
  if (i < 0 || i >= BW_MAX_LOOPS)
    return 0;
  const loop_rec *r = &recs[i];
  if (atomic_load_explicit(&r->state, memory_order_acquire) != 2 ||
      r->pid != (int)getpid())
    return 0;
  out->kind = r->kind;
  out->tid = r->tid;
  out->calls = atomic_load_explicit(&r->calls, memory_order_relaxed);
  out->blocked_ns = atomic_load_explicit(&r->blocked_ns, memory_order_relaxed);
  out->longest_ns = atomic_load_explicit(&r->longest_ns, memory_order_relaxed);
  return 1;
}
