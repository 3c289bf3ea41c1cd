/* observer.c - the observer registration, the pool registry and how a
 * preloaded tool finds this copy of the runtime.
 *
 * Invariants:
 *  - bwrt__observer points at an immutable copy of the registered observer
 *    (with what its callbacks need, see BWRT__WANT_*), or is NULL. Copies are
 * never freed (a callback may still be running on another thread after
 * unregister); one small struct per registration, all kept on kept_list.
 *  - registry_mu protects the pool list and serialises register/unregister
 *    with pool creation, so each pool is announced exactly once to an
 *    observer: either by register (pool already listed) or by
 *    bwrt__registry_add (observer already set).
 *  - Each copy of the runtime (static in the program, shared library) has its
 *    own statics, so the tool is attached once per copy.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

_Atomic(const bwrt__observer_copy *) bwrt__observer = NULL;

static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
static bw_pool *registry_head;
static pthread_once_t attach_once = PTHREAD_ONCE_INIT;

/* Every copy ever registered, newest first (under registry_mu). Kept, not
 * freed, because a callback may still be running after unregister; the list
 * also keeps them reachable, so leak checkers stay quiet. */
typedef struct kept_observer {
  bwrt__observer_copy copy;
  struct kept_observer *older;
} kept_observer;

/* Which costs of the item paths the callbacks actually need. */
static unsigned wants_of(const bw_observer *o) {
  unsigned wants = 0;
  int started = o->item_started != NULL || o->item_started_ex != NULL;
  if (o->item_enqueued != NULL || started || o->item_finished != NULL)
    wants |= BWRT__WANT_ID;
  if (o->item_enqueued != NULL || started)
    wants |= BWRT__WANT_ENQUEUE_NS;
  if (started)
    wants |= BWRT__WANT_START_NS;
  if (o->item_finished != NULL)
    wants |= BWRT__WANT_END_NS;
  return wants;
}
static kept_observer *kept_list;

/* Fields of bw_observer a tool built against an older header may lack: the
 * copy starts zeroed and takes at most `size` bytes. */
int bw_observer_register(const bw_observer *observer) {
  if (observer == NULL || observer->version != BW_OBSERVER_VERSION ||
      observer->size < offsetof(bw_observer, pool_created))
    return -EINVAL;
  kept_observer *kept = calloc(1, sizeof(*kept));
  if (kept == NULL)
    return -ENOMEM;
  bw_observer *copy = &kept->copy.obs;
  size_t n = observer->size < sizeof(*copy) ? observer->size : sizeof(*copy);
  memcpy(copy, observer, n);
  copy->size = (uint32_t)n;
  kept->copy.wants = wants_of(copy);
  unsigned log2 = copy->item_time_sample_log2;
  unsigned mask = log2 >= 31 ? ~0u : (1u << log2) - 1u;
  kept->copy.sample_mask =
      mask < BWRT__STATS_SAMPLE_MASK ? mask : BWRT__STATS_SAMPLE_MASK;

  pthread_mutex_lock(&registry_mu);
  if (atomic_load_explicit(&bwrt__observer, memory_order_relaxed) != NULL) {
    pthread_mutex_unlock(&registry_mu);
    free(kept);
    return -EBUSY;
  }
  kept->older = kept_list;
  kept_list = kept;
  atomic_store_explicit(&bwrt__observer, &kept->copy, memory_order_release);
  if (copy->pool_created != NULL) {
    for (bw_pool *p = registry_head; p != NULL; p = p->reg_next)
      copy->pool_created(copy->user, p->id, p->name, p->min_workers,
                         p->max_workers);
  }
  pthread_mutex_unlock(&registry_mu);
  return 0;
}

int bw_observer_unregister(void) {
  pthread_mutex_lock(&registry_mu);
  const bwrt__observer_copy *old =
      atomic_exchange_explicit(&bwrt__observer, NULL, memory_order_acq_rel);
  pthread_mutex_unlock(&registry_mu);
  return old == NULL ? -EINVAL : 0;
}

void bwrt__registry_add(bw_pool *pool) {
  pthread_mutex_lock(&registry_mu);
  pool->reg_next = registry_head;
  registry_head = pool;
  const bw_observer *o = bwrt__obs();
  if (o != NULL && o->pool_created != NULL)
    o->pool_created(o->user, pool->id, pool->name, pool->min_workers,
                    pool->max_workers);
  pthread_mutex_unlock(&registry_mu);
}

void bwrt__registry_remove(bw_pool *pool) {
  pthread_mutex_lock(&registry_mu);
  for (bw_pool **pp = &registry_head; *pp != NULL; pp = &(*pp)->reg_next) {
    if (*pp == pool) {
      *pp = pool->reg_next;
      break;
    }
  }
  pthread_mutex_unlock(&registry_mu);
}

static int hook_current_worker(uint64_t *pool_id, unsigned *worker_index) {
  bwrt__worker *w = bwrt__current_worker();
  if (w == NULL)
    return 0;
  if (pool_id != NULL)
    *pool_id = w->pool->id;
  if (worker_index != NULL)
    *worker_index = w->index;
  return 1;
}

static int hook_current_item(void) {
  bwrt__worker *w = bwrt__current_worker();
  return w != NULL && atomic_load_explicit(&w->running, memory_order_relaxed);
}

static int hook_thread_role(void) {
  return (int)bw_thread_role_get();
}

/* The tool only calls this when its user asked for compensation, so the
 * pool's BW_POOL_COMPENSATE flag does not gate it (max_workers still
 * bounds it). */
static int hook_notify_blocked(void) {
  return bwrt__pool_notify_blocked(1);
}

static const bw_runtime_hooks hooks = {
    .version = BW_OBSERVER_VERSION,
    .size = sizeof(bw_runtime_hooks),
    .observer_register = bw_observer_register,
    .observer_unregister = bw_observer_unregister,
    .notify_blocked = hook_notify_blocked,
    .notify_unblocked = bw_pool_notify_unblocked,
    .current_worker = hook_current_worker,
    .current_item = hook_current_item,
    .thread_role = hook_thread_role,
};

/* dlsym(RTLD_DEFAULT) searches the global scope: the program, its libraries
 * and anything LD_PRELOADed, so it finds the tool whichever way this copy of
 * the runtime was linked. The symbol is looked up, never linked, so the
 * runtime works with no tool present. */
static void attach_tool(void) {
  void *sym = dlsym(RTLD_DEFAULT, BW_TOOL_ATTACH_SYMBOL);
  if (sym == NULL)
    return;
  bw_tool_attach_fn attach;
  /* ISO C has no function/object pointer conversion; POSIX guarantees it. */
  memcpy(&attach, &sym, sizeof(attach));
  attach(&hooks);
}

void bwrt__observer_attach_tool(void) {
  pthread_once(&attach_once, attach_tool);
}
