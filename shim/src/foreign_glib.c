/* foreign_glib.c - GLib's GThreadPool (and GIO's GTask pool, made the same
 * way): the pool's func runs through a trampoline whose user_data is a
 * record of the shim's standing in for the program's, so the shim knows
 * when each item was pushed, where it runs and when it starts and ends.
 *
 * Invariants:
 *  - No allocation: records live in a fixed array, one per pool for the
 *    life of the process (a pool's last items may run after
 *    g_thread_pool_free returned). A pool made when they are all taken is
 *    passed to GLib untouched.
 *  - A record knows its pool by GLib's public GThreadPool fields: a pool
 *    whose func is the trampoline has the record as user_data. Those two
 *    fields are the only place the program can see the shim.
 *  - Push times are matched to item starts in push order (a ring per
 *    record, stamped with the push's sequence number): GLib pops items in
 *    that order unless a sort function is set. A start whose push time was
 *    overwritten (RING pushes ahead) counts as an item, not timed.
 *  - A thread GLib made is its own (nothing it does outside an item
 *    counts) when the function it runs is GLib's: GThread's public
 *    fields (deprecated/gthread.h, a stable ABI) start with that function.
 *  - The pool's size is max_threads (g_thread_pool_set_max_threads
 *    changes it); -1, unbounded, is size 0: never all blocked, since GLib
 *    then starts a thread for every item that finds none idle.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "shim.h"

#include <dlfcn.h>
#include <errno.h>
#include <string.h>

/* GLib's public struct _GThreadPool (glib/gthreadpool.h). */
typedef struct glib_pool_head {
  bwsh__glib_func func;
  void *user_data;
  int exclusive;
} glib_pool_head;

#define RECORDS 64
#define RING 1024

typedef struct stamp {
  atomic_uint_least64_t seq; /* push number + 1; 0: never written */
  atomic_uint_least64_t ns;
} stamp;

typedef struct record {
  atomic_int used;
  bwsh__glib_func func;
  void *user_data;
  atomic_int size; /* max_threads, 0: unbounded */
  const char *name;
  atomic_uint_least64_t pushed, started;
  stamp ring[RING];
} record;

static record records[RECORDS];

static record *record_claim(void) {
  for (int i = 0; i < RECORDS; i++) {
    int free_ = 0;
    if (atomic_compare_exchange_strong(&records[i].used, &free_, 1))
      return &records[i];
  }
  return NULL;
}

static unsigned size_of(int max_threads) {
  return max_threads > 0 ? (unsigned)max_threads : 0u;
}

static int pool_of(record *r) {
  return bwsh__pool_foreign(BW_POOL_GLIB, (uint64_t)(r - records) + 1, r->name,
                            (unsigned)atomic_load(&r->size));
}

static void trampoline(void *data, void *user_data) {
  record *r = user_data;
  uint64_t s = atomic_fetch_add(&r->started, 1);
  stamp *st = &r->ring[s % RING];
  uint64_t seq = atomic_load_explicit(&st->seq, memory_order_acquire);
  uint64_t enqueue_ns = atomic_load_explicit(&st->ns, memory_order_relaxed);
  if (seq != s + 1)
    enqueue_ns = 0; /* overwritten by a later push, or not yet written */
  bwsh__item_frame saved;
  bwsh__foreign_item_begin(pool_of(r), enqueue_ns, (void *)r->func, &saved);
  r->func(data, r->user_data);
  bwsh__foreign_item_end(&saved);
}

/* The record of a pool the shim made, else NULL. */
static record *record_of(void *pool) {
  const glib_pool_head *h = pool;
  return h && h->func == trampoline ? h->user_data : NULL;
}

/* Claims a record for a new pool; GIO's GTask pool is named for itself. */
static record *record_new(bwsh__glib_func func, void *user_data,
                          int max_threads) {
  if (!bwsh__foreign_watched() || !func)
    return NULL;
  record *r = record_claim();
  if (!r)
    return NULL;
  r->func = func;
  r->user_data = user_data;
  atomic_store(&r->size, (int)size_of(max_threads));
  r->name = "glib";
  bwsh__self.depth++;
  Dl_info info;
  void *addr;
  memcpy(&addr, &func, sizeof addr);
  if (dladdr(addr, &info) && info.dli_fname && strstr(info.dli_fname, "libgio"))
    r->name = "gio-task";
  bwsh__self.depth--;
  return r;
}

static void *made_or_released(void *pool, record *r) {
  if (r && !pool) {
    atomic_store(&r->pushed, 0);
    atomic_store(&r->started, 0);
    atomic_store(&r->used, 0);
  }
  return pool;
}

/* g_thread_pool_new is g_thread_pool_new_full without item_free (GLib
 * 2.70 on, inside libglib where no wrapper sees it): it goes the same way.
 * An older GLib's pools are left alone. */
void *bwsh__glib_pool_new(bwsh__glib_func func, void *user_data,
                          int max_threads, int exclusive, void **error) {
  static bwsh__foreign_fn real_full = {.said = 1}; /* missing: quietly */
  void *full;
  bwsh__foreign_next(&real_full, "g_thread_pool_new_full", &full, sizeof full);
  if (full)
    return bwsh__glib_pool_new_full(func, user_data, NULL, max_threads,
                                    exclusive, error);
  static bwsh__foreign_fn real;
  void *(*fn)(bwsh__glib_func, void *, int, int, void **);
  bwsh__foreign_next(&real, "g_thread_pool_new", &fn, sizeof fn);
  return fn ? fn(func, user_data, max_threads, exclusive, error) : NULL;
}

void *bwsh__glib_pool_new_full(bwsh__glib_func func, void *user_data,
                               void (*item_free)(void *), int max_threads,
                               int exclusive, void **error) {
  static bwsh__foreign_fn real;
  void *(*fn)(bwsh__glib_func, void *, void (*)(void *), int, int, void **);
  bwsh__foreign_next(&real, "g_thread_pool_new_full", &fn, sizeof fn);
  if (!fn)
    return NULL;
  int saved_errno = errno;
  record *r = record_new(func, user_data, max_threads);
  errno = saved_errno;
  if (!r)
    return fn(func, user_data, item_free, max_threads, exclusive, error);
  return made_or_released(
      fn(trampoline, r, item_free, max_threads, exclusive, error), r);
}

int bwsh__glib_pool_push(void *pool, void *data, void **error) {
  static bwsh__foreign_fn real;
  int (*fn)(void *, void *, void **);
  bwsh__foreign_next(&real, "g_thread_pool_push", &fn, sizeof fn);
  if (!fn)
    return 0;
  record *r = record_of(pool);
  if (r) {
    int saved_errno = errno;
    uint64_t s = atomic_fetch_add(&r->pushed, 1);
    stamp *st = &r->ring[s % RING];
    atomic_store_explicit(&st->ns, bwsh__now_ns(), memory_order_relaxed);
    atomic_store_explicit(&st->seq, s + 1, memory_order_release);
    errno = saved_errno;
  }
  /* GLib queues the item even when it fails to start a thread for it. */
  return fn(pool, data, error);
}

int bwsh__glib_pool_set_max_threads(void *pool, int max_threads, void **error) {
  static bwsh__foreign_fn real;
  int (*fn)(void *, int, void **);
  bwsh__foreign_next(&real, "g_thread_pool_set_max_threads", &fn, sizeof fn);
  if (!fn)
    return 0;
  int r = fn(pool, max_threads, error);
  record *rec = record_of(pool);
  if (rec) {
    int saved_errno = errno;
    atomic_store(&rec->size, (int)size_of(max_threads));
    bwsh__self.depth++;
    bwsh__pool_resize(pool_of(rec), size_of(max_threads), bwsh__now_ns());
    bwsh__self.depth--;
    errno = saved_errno;
  }
  return r;
}

int bwsh__glib_own_thread(void) {
  static bwsh__foreign_fn real;
  void *const *(*fn)(void);
  bwsh__foreign_next(&real, "g_thread_self", &fn, sizeof fn);
  if (!fn)
    return 0;
  bwsh__self.depth++;
  void *const *thread = fn(); /* GThread: func, data, joinable, priority */
  bwsh__self.depth--;
  return thread && bwsh__code_library(thread[0]) == BW_LIB_GLIB;
}
