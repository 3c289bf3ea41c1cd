/* bridge.c - the shim's side of the bundled runtime's observer interface
 * (observer.h): blockwatch_tool_attach, the observer callbacks and the
 * runtime hooks the shim calls back (current_worker, current_item,
 * notify_blocked/unblocked).
 *
 * Invariants:
 *  - The shim never links the runtime: it only calls the hooks table each
 *    runtime copy hands to blockwatch_tool_attach (at most MAX_COPIES
 *    copies: a program may carry several, static and shared).
 *  - Every callback raises bwsh__self.depth around its work, so whatever it
 *    calls that the shim wraps goes straight through.
 *  - What the callbacks learn goes to pools.c; this file keeps only which
 *    copies attached and their hooks.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "shim.h"

#include <blockwatch/observer.h>

#include <dlfcn.h>
#include <errno.h>
#include <string.h>

#define MAX_COPIES 4

static const bw_runtime_hooks *copies[MAX_COPIES];
/* 1 when copies[k] lay in a loaded module when it attached (so dladdr can
 * tell later whether that module is still there). */
static int copy_in_module[MAX_COPIES];
static atomic_int ncopies;

/* The copy's current_item hook, or NULL when its runtime predates it. */
static int (*item_query_of(int copy))(void) {
  const bw_runtime_hooks *h =
      copy >= 0 && copy < MAX_COPIES ? copies[copy] : NULL;
  if (!h || h->size < offsetof(bw_runtime_hooks, current_item) +
                          sizeof h->current_item)
    return NULL;
  return h->current_item;
}

/* log2 of sample_items, rounded down. */
static unsigned sample_log2(void) {
  unsigned n = bwsh__opt.sample_items ? bwsh__opt.sample_items : 1, k = 0;
  while (n >>= 1)
    k++;
  return k;
}

/* ---- the runtime observer ----------------------------------------------- */

static int copy_of(void *user) {
  return (int)(intptr_t)user;
}

static void on_pool_created(void *user, uint64_t id, const char *name,
                            unsigned min_workers, unsigned max_workers) {
  (void)min_workers;
  (void)max_workers;
  bwsh__self.depth++;
  bwsh__pool_new(copy_of(user), id, name);
  bwsh__reclassify_all();
  bwsh__self.depth--;
}

static void on_pool_destroyed(void *user, uint64_t id) {
  (void)user;
  (void)id; /* kept for the report */
}

static void on_worker_started(void *user, uint64_t id, unsigned index) {
  (void)index;
  bwsh__self.depth++;
  int i = bwsh__pool_find(copy_of(user), id);
  if (i < 0)
    i = bwsh__pool_new(copy_of(user), id, "bw");
  if (bwsh__self.kind == BW_THREAD_WORKER && bwsh__self.classified_by_option)
    bwsh__pool_worker_leave(bwsh__self.pool, bwsh__now_ns());
  bwsh__self.kind = BW_THREAD_WORKER;
  bwsh__self.classified_by_option = 0;
  bwsh__self.pool = i;
  bwsh__self.in_item = 0;
  bwsh__self.item_query = item_query_of(copy_of(user));
  bwsh__pool_worker_join(i, bwsh__now_ns());
  bwsh__thread_name_slot();
  bwsh__self.depth--;
}

static void on_worker_stopped(void *user, uint64_t id, unsigned index) {
  (void)user;
  (void)id;
  (void)index;
  bwsh__self.depth++;
  if (bwsh__self.kind == BW_THREAD_WORKER)
    bwsh__pool_worker_leave(bwsh__self.pool, bwsh__now_ns());
  bwsh__pool_shard_release();
  bwsh__self.kind = BW_THREAD_OTHER;
  bwsh__self.pool = -1;
  bwsh__self.in_item = 0;
  bwsh__self.item_query = NULL;
  bwsh__self.depth--;
}

static void on_item_enqueued(void *user, uint64_t id, uint64_t item,
                             uint64_t enqueue_ns, size_t queue_length) {
  (void)item;
  if (!bwsh__opt.trace_path[0])
    return;
  bwsh__self.depth++;
  int i = bwsh__pool_find(copy_of(user), id);
  if (i >= 0)
    bwsh__pool_item_enqueued(i, enqueue_ns, queue_length);
  bwsh__self.depth--;
}

static void on_item_started_ex(void *user, uint64_t id, uint64_t item,
                               uint64_t enqueue_ns, uint64_t start_ns,
                               unsigned flags) {
  (void)item;
  bwsh__self.depth++;
  int i = bwsh__self.kind == BW_THREAD_WORKER
              ? bwsh__self.pool
              : bwsh__pool_find(copy_of(user), id);
  bwsh__self.in_item = 1;
  /* Untimed ends stand for bounds (the gate): good for the overlap with
   * all-blocked intervals, not for the queue-wait statistics. */
  int timed = (flags & (BW_ITEM_ENQUEUE_TIMED | BW_ITEM_START_TIMED)) ==
              (BW_ITEM_ENQUEUE_TIMED | BW_ITEM_START_TIMED);
  bwsh__pool_item_started(i, enqueue_ns, start_ns, timed);
  bwsh__self.depth--;
}

/* For a runtime without item_started_ex: every item is timed. */
static void on_item_started(void *user, uint64_t id, uint64_t item,
                            uint64_t enqueue_ns, uint64_t start_ns) {
  on_item_started_ex(user, id, item, enqueue_ns, start_ns,
                     BW_ITEM_ENQUEUE_TIMED | BW_ITEM_START_TIMED);
}

static void on_item_finished(void *user, uint64_t id, uint64_t item,
                             uint64_t end_ns) {
  (void)user;
  (void)id;
  (void)item;
  (void)end_ns;
  bwsh__self.in_item = 0;
}

static void on_worker_added_or_retired(void *user, uint64_t id, int reason) {
  bwsh__self.depth++;
  int i = bwsh__pool_find(copy_of(user), id);
  if (i >= 0 && (reason == 0 || reason == 1))
    bwsh__pool_spare_worker(i, reason == 1);
  bwsh__self.depth--;
}

void blockwatch_tool_attach(const bw_runtime_hooks *hooks) {
  if (!hooks || hooks->version != BW_OBSERVER_VERSION ||
      atomic_load(&bwsh__stood_down))
    return;
  bwsh__self.depth++;
  int n = atomic_load(&ncopies);
  for (int k = 0; k < n; k++)
    if (copies[k] == hooks) {
      bwsh__self.depth--;
      return;
    }
  int copy = atomic_fetch_add(&ncopies, 1);
  if (copy >= MAX_COPIES) {
    atomic_store(&ncopies, MAX_COPIES);
    bwsh__log("too many runtime copies; ignoring one");
    bwsh__self.depth--;
    return;
  }
  Dl_info info;
  copy_in_module[copy] = dladdr(hooks, &info) != 0;
  copies[copy] = hooks;
  bw_observer obs;
  memset(&obs, 0, sizeof obs);
  obs.version = BW_OBSERVER_VERSION;
  obs.size = sizeof obs;
  obs.user = (void *)(intptr_t)copy;
  obs.pool_created = on_pool_created;
  obs.pool_destroyed = on_pool_destroyed;
  obs.worker_started = on_worker_started;
  obs.worker_stopped = on_worker_stopped;
  /* item_enqueued only feeds the trace's queue counter: without a trace
   * the runtime is spared the call (and its queue length) on every submit.
   * Before the options are read (a pool made by another constructor) it
   * stays registered: it then only returns. */
  if (bwsh__opt.trace_path[0] ||
      !atomic_load_explicit(&bwsh__active, memory_order_acquire))
    obs.item_enqueued = on_item_enqueued;
  obs.item_started = on_item_started;
  obs.item_started_ex = on_item_started_ex;
  obs.item_time_gate = bwsh__pool_item_gate();
  obs.item_time_sample_log2 = sample_log2();
  /* item_finished only marks a worker as between items; a runtime that
   * answers current_item is asked that on the (slow) blocking path
   * instead, which spares it a callback and a clock read per item. */
  if (!item_query_of(copy))
    obs.item_finished = on_item_finished;
  obs.worker_added_or_retired = on_worker_added_or_retired;
  int rc = hooks->observer_register ? hooks->observer_register(&obs) : -EINVAL;
  if (rc != 0)
    bwsh__log("could not observe the runtime (error %d)", rc);
  else if (bwsh__opt.verbosity >= 2)
    bwsh__log("attached to runtime copy %d", copy);
  bwsh__reclassify_all();
  bwsh__self.depth--;
}

/* Asks each attached runtime copy whether the calling thread is one of its
 * workers (for threads that started before the observer registered). */
int bwsh__runtime_current_worker(int *out) {
  int n = atomic_load(&ncopies);
  for (int k = 0; k < n && k < MAX_COPIES; k++) {
    uint64_t id;
    unsigned idx;
    /* A runtime loaded with dlopen may have been unloaded since: its hooks
     * table is then unmapped. Checked here, once per thread and epoch. */
    Dl_info info;
    if (copies[k] && copy_in_module[k] && !dladdr(copies[k], &info)) {
      copies[k] = NULL;
      continue;
    }
    if (copies[k] && copies[k]->current_worker &&
        copies[k]->current_worker(&id, &idx)) {
      int i = bwsh__pool_find(k, id);
      if (i < 0)
        i = bwsh__pool_new(k, id, "bw");
      *out = i;
      bwsh__self.item_query = item_query_of(k);
      return i >= 0;
    }
  }
  return 0;
}

/* The thread roles of observer.h's thread_role hook (runtime.h's
 * bw_thread_role): a blocking thread inside a job, the poller, another
 * runtime thread in the runtime's own waits. */
enum { ROLE_BLOCKING = 2, ROLE_POLLER = 3, ROLE_RUNTIME = 4 };

int bwsh__runtime_thread_kind(void) {
  int n = atomic_load(&ncopies);
  for (int k = 0; k < n && k < MAX_COPIES; k++) {
    const bw_runtime_hooks *h = copies[k];
    if (!h ||
        h->size <
            offsetof(bw_runtime_hooks, thread_role) + sizeof h->thread_role ||
        !h->thread_role)
      continue;
    int role = h->thread_role();
    if (role == ROLE_BLOCKING)
      return BW_THREAD_BLOCKING;
    if (role == ROLE_POLLER || role == ROLE_RUNTIME)
      return BW_THREAD_RUNTIME;
  }
  return BW_THREAD_OTHER;
}

int bwsh__pool_notify(int i, int blocked) {
  int copy = bwsh__pool_copy(i);
  if (copy < 0 || copy >= MAX_COPIES)
    return -EPERM;
  const bw_runtime_hooks *h = copies[copy];
  if (!h)
    return -EPERM;
  int (*fn)(void) = blocked ? h->notify_blocked : h->notify_unblocked;
  return fn ? fn() : -ENOSYS;
}
