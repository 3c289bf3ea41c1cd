/* loops.c - loop threads: a thread inside uv_run, g_main_loop_run /
 * g_main_context_iteration or event_base_loop / event_base_dispatch, which
 * of its counted calls are the loop's own wait and which a callback's, and
 * the loops[] records of the report.
 *
 * Invariants:
 *  - The loop's own wait is a poll-family call (poll, ppoll, select,
 *    pselect, epoll_wait and its forms) whose return address lies in the
 *    loop library's executable segment, found once per kind from the real
 *    runner's address. Under a sanitizer the call reaches the shim from the
 *    sanitizer's interceptor: a poll-family call from a sanitizer runtime
 *    on a loop thread is taken for the loop's own too.
 *  - A callback stretch runs from the runner's start or the end of the
 *    loop's own wait to the next own wait or the runner's return; a poll
 *    that cannot block (zero timeout) passes the shim by and does not end
 *    it: work that keeps the loop from waiting is lag all the same.
 *  - A record belongs to one (process, thread, kind) and is written only by
 *    that thread (relaxed loads and stores); the reporter reads published
 *    records only. No allocation, no lock on any path but the first entry
 *    of a kind (dl_iterate_phdr).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "shim.h"

#include <errno.h>
#include <link.h>
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

/* ---- modules: the loop libraries and the sanitizer runtimes -------------- */

/* What an executable segment is to this file. */
enum { MOD_OTHER = 0, MOD_SANITIZER = 1, MOD_LOOP = 2 /* + kind */ };

/* Executable segments already classified: [lo, hi) and their class,
 * published by `hi` (0: free). Small: a loop thread's polls come from its
 * loop library and, under a sanitizer, the sanitizer's runtime. */
#define MODULES 16
static struct {
  _Atomic uintptr_t lo, hi;
  atomic_int cls;
} modules[MODULES];
static atomic_int n_modules;

typedef struct segment {
  uintptr_t addr, lo, hi;
  const char *name;
} segment;

static int find_segment(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  segment *s = data;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
      continue;
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
    if (s->addr >= lo && s->addr < lo + ph->p_memsz) {
      s->lo = lo;
      s->hi = lo + ph->p_memsz;
      s->name = info->dlpi_name;
      return 1;
    }
  }
  return 0;
}

static int is_sanitizer_runtime(const char *name) {
  static const char *const runtimes[] = {"libasan", "libtsan", "liblsan",
                                         "libubsan", "libclang_rt"};
  for (size_t i = 0; name && i < sizeof runtimes / sizeof *runtimes; i++)
    if (strstr(name, runtimes[i]))
      return 1;
  return 0;
}

/* The index of the known segment holding addr, or -1. */
static int module_lookup(uintptr_t addr) {
  int n = atomic_load_explicit(&n_modules, memory_order_acquire);
  for (int i = 0; i < n && i < MODULES; i++) {
    uintptr_t hi = atomic_load_explicit(&modules[i].hi, memory_order_acquire);
    if (addr < hi &&
        addr >= atomic_load_explicit(&modules[i].lo, memory_order_relaxed))
      return i;
  }
  return -1;
}

/* The class of the segment holding addr; `loop_kind` >= 0 says addr is a
 * loop runner of that kind (which outranks what a poll from there made of
 * the segment before). Unknown segments are looked up (once each, while
 * there is room; after that, every time). */
static int module_class(uintptr_t addr, int loop_kind) {
  int known = module_lookup(addr);
  if (known >= 0) {
    if (loop_kind >= 0)
      atomic_store_explicit(&modules[known].cls, MOD_LOOP + loop_kind,
                            memory_order_relaxed);
    return atomic_load_explicit(&modules[known].cls, memory_order_relaxed);
  }
  int cls;
  segment s = {.addr = addr};
  if (!dl_iterate_phdr(find_segment, &s))
    return MOD_OTHER;
  cls = loop_kind >= 0                 ? MOD_LOOP + loop_kind
        : is_sanitizer_runtime(s.name) ? MOD_SANITIZER
                                       : MOD_OTHER;
  static atomic_flag adding = ATOMIC_FLAG_INIT;
  while (atomic_flag_test_and_set(&adding))
    __builtin_ia32_pause();
  int n = atomic_load(&n_modules);
  if (module_lookup(addr) < 0 && n < MODULES) {
    atomic_store(&modules[n].lo, s.lo);
    atomic_store(&modules[n].cls, cls);
    atomic_store(&modules[n].hi, s.hi);
    atomic_store_explicit(&n_modules, n + 1, memory_order_release);
  }
  atomic_flag_clear(&adding);
  return cls;
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
  uintptr_t addr;
  memcpy(&addr, &real, sizeof addr);
  module_class(addr, kind);
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
  int cls = module_class((uintptr_t)caller, -1);
  if (is_poll_family(fn) &&
      (cls == MOD_LOOP + l->kind || cls == MOD_SANITIZER)) {
    stretch_end(bwsh__now_ns());
    l->in_wait = 1;
    return 0;
  }
  if (cls == MOD_LOOP + l->kind && l->runner_ret && made_by_the_loop(l))
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
