/* foreign_uv.c - libuv's thread pool: uv_queue_work's work_cb runs through
 * a trampoline that tells the shim when each item was queued, where it
 * runs and when it starts and ends (interpose.c exports the wrappers).
 *
 * Invariants:
 *  - No allocation: a submitted req is remembered in a fixed open-address
 *    table (req -> work_cb, enqueue time). A req that finds no room is
 *    passed to libuv untouched (its item is then not seen).
 *  - The trampoline is given to libuv only for a req that is in the table,
 *    so it always finds its work_cb; it takes the entry out (a tombstone)
 *    before running it. uv_cancel takes out a req it cancelled.
 *  - What libuv and the program read in the req is theirs again once the
 *    item starts (or is cancelled): req->work_cb holds the trampoline only
 *    while the req waits in the queue.
 *  - libuv has one pool per process (shared by every loop); its size is
 *    read as libuv reads it, from UV_THREADPOOL_SIZE at the first submit.
 *  - libuv does its one-time setup under uv_once (pthread_once): starting
 *    the pool's threads (init_threads) and waiting for each to run, its
 *    signal lock's first write. Nothing else runs libuv's code under a
 *    pthread_once that libuv's code called, so that shape of the stack is
 *    what tells setup apart; a thread the program asks for
 *    (uv_thread_create) has the program's frame right above libuv's.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "shim.h"

#include <errno.h>
#include <stdlib.h>

/* The start of libuv 1.x's uv_work_t on Unix (uv.h, a stable ABI):
 * UV_REQ_FIELDS (data, type, reserved[6]), then loop, work_cb,
 * after_work_cb. Only work_cb is read or written here. */
typedef struct uv_work_head {
  void *data;
  int type;
  void *reserved[6];
  void *loop;
  bwsh__uv_work_cb work_cb;
} uv_work_head;

#define TABLE 4096 /* requests waiting in libuv's queue at once */
#define PROBES 64
#define TOMB ((void *)1)

typedef struct entry {
  _Atomic(void *) req; /* NULL: never used, TOMB: free again */
  bwsh__uv_work_cb work_cb;
  uint64_t enqueue_ns;
} entry;

static entry table[TABLE];

static unsigned slot_of(const void *req) {
  uintptr_t v = (uintptr_t)req >> 4;
  return (unsigned)((v * 0x9E3779B97F4A7C15ull) >> 52) % TABLE;
}

/* Claims an entry for req; NULL when PROBES entries in a row are taken. */
static entry *claim(void *req) {
  unsigned h = slot_of(req);
  for (unsigned k = 0; k < PROBES; k++) {
    entry *e = &table[(h + k) % TABLE];
    void *cur = atomic_load_explicit(&e->req, memory_order_relaxed);
    if ((cur == NULL || cur == TOMB) &&
        atomic_compare_exchange_strong_explicit(
            &e->req, &cur, req, memory_order_acq_rel, memory_order_relaxed))
      return e;
  }
  return NULL;
}

/* The entry of req (NULL: none). A lookup stops at a never-used entry:
 * claim fills the first free one of the probe run, so none lies past it. */
static entry *find(const void *req) {
  unsigned h = slot_of(req);
  for (unsigned k = 0; k < PROBES; k++) {
    entry *e = &table[(h + k) % TABLE];
    void *cur = atomic_load_explicit(&e->req, memory_order_acquire);
    if (cur == req)
      return e;
    if (cur == NULL)
      return NULL;
  }
  return NULL;
}

static void release(entry *e) {
  atomic_store_explicit(&e->req, TOMB, memory_order_release);
}

/* libuv's pool size: UV_THREADPOOL_SIZE as libuv parses it (atoi, 0 is 1,
 * at most MAX_THREADPOOL_SIZE = 1024 since libuv 1.30), else 4. */
static unsigned pool_size(void) {
  static atomic_uint size;
  unsigned n = atomic_load_explicit(&size, memory_order_relaxed);
  if (n)
    return n;
  const char *v = getenv("UV_THREADPOOL_SIZE");
  n = 4;
  if (v) {
    n = (unsigned)atoi(v);
    if (n == 0)
      n = 1;
    if (n > 1024)
      n = 1024;
  }
  atomic_store_explicit(&size, n, memory_order_relaxed);
  return n;
}

static int libuv_pool(void) {
  return bwsh__pool_foreign(BW_POOL_LIBUV, 0, "libuv", pool_size());
}

static void trampoline(void *req) {
  entry *e = find(req);
  bwsh__uv_work_cb work_cb = e->work_cb;
  uint64_t enqueue_ns = e->enqueue_ns;
  ((uv_work_head *)req)->work_cb = work_cb;
  release(e);
  bwsh__item_frame saved;
  bwsh__foreign_item_begin(libuv_pool(), enqueue_ns, (void *)work_cb, &saved);
  work_cb(req);
  bwsh__foreign_item_end(&saved);
}

/* Walks frames[i..n) past those for which in(frame) holds. */
static int skip(void *const *frames, int i, int n, int (*in)(const void *)) {
  while (i < n && in(frames[i]))
    i++;
  return i;
}

static int in_libuv(const void *pc) {
  return bwsh__code_library(pc) == BW_LIB_UV;
}

static int in_interposer(const void *pc) {
  return bwsh__code_kind(pc) == BW_CODE_INTERPOSER;
}

/* Neither libuv's nor the program's: libc's pthread_once, or a sanitizer's
 * interceptor of it. */
static int in_other_library(const void *pc) {
  return !in_libuv(pc) && bwsh__code_kind(pc) != BW_CODE_PROGRAM;
}

int bwsh__uv_in_setup(void) {
  void *frames[BW_SITE_FRAMES + 16];
  int n = bwsh__capture_frames(frames, (int)(sizeof frames / sizeof *frames));
  int i = skip(frames, 0, n, in_interposer);
  if (i == n || !in_libuv(frames[i]))
    return 0; /* not called from libuv's code */
  i = skip(frames, i, n, in_libuv);
  int once = skip(frames, i, n, in_other_library);
  return once > i && once < n && in_libuv(frames[once]);
}

int bwsh__uv_queue_work(void *loop, void *req, bwsh__uv_work_cb work_cb,
                        bwsh__uv_after_cb after_cb) {
  static bwsh__foreign_fn real;
  int (*fn)(void *, void *, bwsh__uv_work_cb, bwsh__uv_after_cb);
  bwsh__foreign_next(&real, "uv_queue_work", &fn, sizeof fn);
  if (!fn)
    return -ENOSYS; /* libuv's UV_ENOSYS; the lookup said why */
  if (!bwsh__foreign_watched() || !work_cb || !req)
    return fn(loop, req, work_cb, after_cb);
  int saved_errno = errno;
  bwsh__self.depth++;
  entry *e = claim(req);
  if (e) {
    e->work_cb = work_cb;
    e->enqueue_ns = bwsh__now_ns();
    libuv_pool(); /* the pool exists from its first item on */
  }
  bwsh__self.depth--;
  errno = saved_errno;
  if (!e)
    return fn(loop, req, work_cb, after_cb);
  int r = fn(loop, req, trampoline, after_cb);
  if (r != 0) {
    ((uv_work_head *)req)->work_cb = work_cb;
    release(e);
  }
  return r;
}

int bwsh__uv_cancel(void *req) {
  static bwsh__foreign_fn real;
  int (*fn)(void *);
  bwsh__foreign_next(&real, "uv_cancel", &fn, sizeof fn);
  if (!fn)
    return -ENOSYS;
  int r = fn(req);
  if (r == 0 && req) {
    entry *e = find(req);
    if (e) { /* its work_cb never runs: the req gets its own back */
      ((uv_work_head *)req)->work_cb = e->work_cb;
      release(e);
    }
  }
  return r;
}
