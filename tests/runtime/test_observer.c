/* test_observer.c - the observer ABI: the tool lookup through
 * dlsym(RTLD_DEFAULT, "blockwatch_tool_attach"), registration rules, and the
 * callbacks with consistent ids, threads and timestamps.
 *
 * This program plays the tool: it defines blockwatch_tool_attach and is
 * linked with exported symbols. It is built twice, against the shared and
 * the static runtime, since the lookup must work from either copy.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "blockwatch/observer.h"
#include "blockwatch/runtime.h"
#include "rt_helpers.h"

/* ---- the "tool" --------------------------------------------------------- */

static const bw_runtime_hooks *g_hooks;
static atomic_int g_attach_calls;

void blockwatch_tool_attach(const bw_runtime_hooks *hooks);
void blockwatch_tool_attach(const bw_runtime_hooks *hooks) {
  g_hooks = hooks;
  atomic_fetch_add(&g_attach_calls, 1);
}

/* ---- a recording observer ----------------------------------------------- */

#define MAX_ITEMS 256

typedef struct rec_item {
  uint64_t id;
  uint64_t enq_ns, enq_ns_started, start_ns, end_ns;
  int enqueued, started, finished;
  pthread_t start_thread, finish_thread;
} rec_item;

typedef struct recorder {
  pthread_mutex_t mu;
  uint64_t pool_id;
  int created, destroyed;
  unsigned created_min, created_max;
  char created_name[32];
  int workers_started, workers_stopped;
  int added[3];
  rec_item items[MAX_ITEMS];
  int nitems;
  int unknown_events;
} recorder;

static recorder g_rec;

static rec_item *find_item(recorder *r, uint64_t id, int create) {
  for (int i = 0; i < r->nitems; i++) {
    if (r->items[i].id == id)
      return &r->items[i];
  }
  if (!create || r->nitems == MAX_ITEMS)
    return NULL;
  rec_item *it = &r->items[r->nitems++];
  memset(it, 0, sizeof(*it));
  it->id = id;
  return it;
}

static void on_pool_created(void *user, uint64_t pool_id, const char *name,
                            unsigned min_workers, unsigned max_workers) {
  recorder *r = user;
  pthread_mutex_lock(&r->mu);
  if (strcmp(name, "obs") == 0) {
    r->pool_id = pool_id;
    r->created++;
    r->created_min = min_workers;
    r->created_max = max_workers;
    snprintf(r->created_name, sizeof(r->created_name), "%s", name);
  }
  pthread_mutex_unlock(&r->mu);
}

static void on_pool_destroyed(void *user, uint64_t pool_id) {
  recorder *r = user;
  pthread_mutex_lock(&r->mu);
  if (pool_id == r->pool_id)
    r->destroyed++;
  pthread_mutex_unlock(&r->mu);
}

static void on_worker_started(void *user, uint64_t pool_id, unsigned index) {
  recorder *r = user;
  uint64_t id = 0;
  unsigned idx = 99;
  /* The contract: called on the worker itself. */
  int is_worker = g_hooks->current_worker(&id, &idx);
  /* A worker that has not started an item is between items. */
  int in_item = g_hooks->current_item();
  pthread_mutex_lock(&r->mu);
  if (pool_id == r->pool_id) {
    r->workers_started++;
    if (!is_worker || id != pool_id || idx != index || in_item)
      r->unknown_events++;
  }
  pthread_mutex_unlock(&r->mu);
}

static void on_worker_stopped(void *user, uint64_t pool_id, unsigned index) {
  recorder *r = user;
  (void)index;
  pthread_mutex_lock(&r->mu);
  if (pool_id == r->pool_id)
    r->workers_stopped++;
  pthread_mutex_unlock(&r->mu);
}

static void on_item_enqueued(void *user, uint64_t pool_id, uint64_t item_id,
                             uint64_t enqueue_ns, size_t queue_length) {
  recorder *r = user;
  (void)queue_length;
  pthread_mutex_lock(&r->mu);
  if (pool_id == r->pool_id) {
    rec_item *it = find_item(r, item_id, 1);
    if (it != NULL) {
      it->enqueued++;
      it->enq_ns = enqueue_ns;
    }
  }
  pthread_mutex_unlock(&r->mu);
}

static void on_item_started(void *user, uint64_t pool_id, uint64_t item_id,
                            uint64_t enqueue_ns, uint64_t start_ns) {
  recorder *r = user;
  pthread_mutex_lock(&r->mu);
  if (pool_id == r->pool_id) {
    rec_item *it = find_item(r, item_id, 1);
    if (it != NULL) {
      it->started++;
      it->enq_ns_started = enqueue_ns;
      it->start_ns = start_ns;
      it->start_thread = pthread_self();
    }
  }
  pthread_mutex_unlock(&r->mu);
}

static void on_item_finished(void *user, uint64_t pool_id, uint64_t item_id,
                             uint64_t end_ns) {
  recorder *r = user;
  pthread_mutex_lock(&r->mu);
  if (pool_id == r->pool_id) {
    rec_item *it = find_item(r, item_id, 1);
    if (it != NULL) {
      it->finished++;
      it->end_ns = end_ns;
      it->finish_thread = pthread_self();
    }
  }
  pthread_mutex_unlock(&r->mu);
}

static void on_added_or_retired(void *user, uint64_t pool_id, int reason) {
  recorder *r = user;
  pthread_mutex_lock(&r->mu);
  if (pool_id == r->pool_id && reason >= 0 && reason <= 2)
    r->added[reason]++;
  pthread_mutex_unlock(&r->mu);
}

static bw_observer make_observer(void) {
  bw_observer o;
  memset(&o, 0, sizeof(o));
  o.version = BW_OBSERVER_VERSION;
  o.size = sizeof(o);
  o.user = &g_rec;
  o.pool_created = on_pool_created;
  o.pool_destroyed = on_pool_destroyed;
  o.worker_started = on_worker_started;
  o.worker_stopped = on_worker_stopped;
  o.item_enqueued = on_item_enqueued;
  o.item_started = on_item_started;
  o.item_finished = on_item_finished;
  o.worker_added_or_retired = on_added_or_retired;
  return o;
}

static int reset_recorder(void **state) {
  (void)state;
  pthread_mutex_destroy(&g_rec.mu);
  memset(&g_rec, 0, sizeof(g_rec));
  pthread_mutex_init(&g_rec.mu, NULL);
  g_rec.pool_id = UINT64_MAX;
  return 0;
}

static int unregister_after(void **state) {
  (void)state;
  bw_observer_unregister();
  return 0;
}

static bw_pool *make_pool(unsigned workers) {
  bw_pool_config cfg = {0};
  cfg.name = "obs";
  cfg.min_workers = workers;
  cfg.max_workers = workers + 2;
  cfg.flags = BW_POOL_COMPENSATE;
  bw_pool *pool = bw_pool_create(&cfg);
  assert_non_null(pool);
  return pool;
}

/* ---- tests -------------------------------------------------------------- */

static void test_observer_tool_is_found_through_dlsym_once(void **state) {
  (void)state;
  assert_int_equal(atomic_load(&g_attach_calls), 0);
  bw_pool *a = make_pool(1);
  bw_pool *b = make_pool(1);
  assert_int_equal(atomic_load(&g_attach_calls), 1);
  assert_non_null(g_hooks);
  assert_int_equal(g_hooks->version, BW_OBSERVER_VERSION);
  assert_true(g_hooks->size >= sizeof(bw_runtime_hooks));
  assert_int_equal(g_hooks->current_worker(NULL, NULL), 0);
  assert_true(g_hooks->size >= offsetof(bw_runtime_hooks, current_item) +
                                   sizeof g_hooks->current_item);
  assert_int_equal(g_hooks->current_item(), 0);
  assert_int_equal(g_hooks->notify_blocked(), -EPERM);
  assert_int_equal(bw_pool_destroy(a), 0);
  assert_int_equal(bw_pool_destroy(b), 0);
}

static void test_observer_register_rules(void **state) {
  (void)state;
  bw_observer o = make_observer();
  bw_observer bad = o;
  bad.version = 99;
  assert_int_equal(g_hooks->observer_register(&bad), -EINVAL);
  assert_int_equal(bw_observer_register(NULL), -EINVAL);
  assert_int_equal(bw_observer_unregister(), -EINVAL);
  assert_int_equal(g_hooks->observer_register(&o), 0);
  assert_int_equal(bw_observer_register(&o), -EBUSY);
  assert_int_equal(g_hooks->observer_unregister(), 0);
  assert_int_equal(bw_observer_register(&o), 0);
  assert_int_equal(bw_observer_unregister(), 0);
}

static void test_observer_existing_pools_are_announced(void **state) {
  (void)state;
  bw_pool *pool = make_pool(2);
  bw_observer o = make_observer();
  assert_int_equal(bw_observer_register(&o), 0);
  pthread_mutex_lock(&g_rec.mu);
  assert_int_equal(g_rec.created, 1);
  assert_int_equal(g_rec.created_min, 2);
  assert_int_equal(g_rec.created_max, 4);
  assert_string_equal(g_rec.created_name, "obs");
  pthread_mutex_unlock(&g_rec.mu);
  assert_int_equal(bw_pool_destroy(pool), 0);
  assert_int_equal(g_rec.destroyed, 1);
  /* Workers that started before registration were not announced to us
   * (a slow start may still be seen), but every one stops in front of us. */
  assert_true(g_rec.workers_started <= 2);
  assert_int_equal(g_rec.workers_stopped, 2);
}

static void tiny(void *arg) {
  atomic_fetch_add((atomic_long *)arg, 1);
}

typedef struct probe {
  int is_worker;
  int in_item;
  uint64_t pool_id;
  unsigned index;
  atomic_long done;
} probe;

static void probe_item(void *arg) {
  probe *p = arg;
  p->is_worker = g_hooks->current_worker(&p->pool_id, &p->index);
  p->in_item = g_hooks->current_item();
  atomic_fetch_add(&p->done, 1);
}

static void
test_observer_sees_items_with_consistent_ids_and_times(void **state) {
  (void)state;
  bw_observer o = make_observer();
  assert_int_equal(bw_observer_register(&o), 0);
  bw_pool *pool = make_pool(2);
  assert_int_equal(g_rec.created, 1);
  atomic_long count = 0;
  for (int i = 0; i < 100; i++)
    assert_int_equal(bw_submit(pool, tiny, &count), 0);
  probe p = {0};
  assert_int_equal(bw_submit(pool, probe_item, &p), 0);
  assert_int_equal(rt_wait_count(&p.done, 1, 20000), 1);
  assert_int_equal(p.is_worker, 1);
  assert_int_equal(p.in_item, 1);
  assert_int_equal(p.pool_id, g_rec.pool_id);
  assert_true(p.index < 2);
  assert_int_equal(bw_pool_destroy(pool), 0);

  pthread_mutex_lock(&g_rec.mu);
  assert_int_equal(g_rec.destroyed, 1);
  assert_int_equal(g_rec.workers_started, 2);
  assert_int_equal(g_rec.workers_stopped, 2);
  assert_int_equal(g_rec.unknown_events, 0);
  assert_int_equal(g_rec.nitems, 101);
  for (int i = 0; i < g_rec.nitems; i++) {
    rec_item *it = &g_rec.items[i];
    assert_true(it->id != 0);
    assert_int_equal(it->enqueued, 1);
    assert_int_equal(it->started, 1);
    assert_int_equal(it->finished, 1);
    assert_true(it->enq_ns == it->enq_ns_started);
    assert_true(it->enq_ns <= it->start_ns);
    assert_true(it->start_ns <= it->end_ns);
    assert_true(pthread_equal(it->start_thread, it->finish_thread));
  }
  pthread_mutex_unlock(&g_rec.mu);
}

static void blocking_item(void *arg) {
  assert_int_equal(bw_pool_notify_blocked(), 0);
  rt_sleep_ms(50);
  assert_int_equal(bw_pool_notify_unblocked(), 0);
  atomic_fetch_add((atomic_long *)arg, 1);
}

static void test_observer_sees_compensation(void **state) {
  (void)state;
  bw_observer o = make_observer();
  assert_int_equal(bw_observer_register(&o), 0);
  bw_pool *pool = make_pool(1);
  atomic_long count = 0;
  assert_int_equal(bw_submit(pool, blocking_item, &count), 0);
  assert_int_equal(rt_wait_count(&count, 1, 20000), 1);
  assert_int_equal(bw_pool_destroy(pool), 0);
  pthread_mutex_lock(&g_rec.mu);
  assert_int_equal(g_rec.added[1], 1);
  assert_int_equal(g_rec.workers_started, 2);
  assert_int_equal(g_rec.workers_stopped, 2);
  pthread_mutex_unlock(&g_rec.mu);
}

/* An observer with item_finished only: the runtime then reads no clock on
 * enqueue or start, but every item still gets a unique, nonzero id and its
 * finish is reported on the worker that ran it. */
static void test_observer_finished_only_still_gets_unique_ids(void **state) {
  (void)state;
  bw_observer o = make_observer();
  o.item_enqueued = NULL;
  o.item_started = NULL;
  assert_int_equal(bw_observer_register(&o), 0);
  bw_pool *pool = make_pool(2);
  atomic_long count = 0;
  for (int i = 0; i < 200; i++)
    assert_int_equal(bw_submit(pool, tiny, &count), 0);
  assert_int_equal(rt_wait_count(&count, 200, 20000), 200);
  assert_int_equal(bw_pool_destroy(pool), 0);
  pthread_mutex_lock(&g_rec.mu);
  assert_int_equal(g_rec.nitems, 200); /* find_item: one entry per id */
  for (int i = 0; i < g_rec.nitems; i++) {
    assert_true(g_rec.items[i].id != 0);
    assert_int_equal(g_rec.items[i].finished, 1);
    assert_int_equal(g_rec.items[i].started, 0);
    assert_true(g_rec.items[i].end_ns != 0);
  }
  pthread_mutex_unlock(&g_rec.mu);
}

/* ---- compensation asked for by the tool ---------------------------------- */

/* What a blocking item does on a worker, and what it saw. */
typedef struct block_probe {
  int via_user_first; /* bracket with bw_pool_notify_blocked outside */
  int hook_calls;     /* hooks->notify_blocked calls, nested */
  int submit_inner;   /* queue an item and wait for it while blocked */
  int rc_blocked, rc_unblocked;
  long inner_seen;
  bw_pool_stats during; /* stats while blocked */
  atomic_long inner;
  atomic_long done;
} block_probe;

static void inner_item(void *arg) {
  atomic_fetch_add((atomic_long *)arg, 1);
}

static void hook_blocking_item(void *arg) {
  block_probe *p = arg;
  bw_pool *pool = bw_current_pool();
  if (p->via_user_first)
    p->rc_blocked |= bw_pool_notify_blocked();
  for (int i = 0; i < p->hook_calls; i++)
    p->rc_blocked |= g_hooks->notify_blocked();
  if (p->submit_inner) {
    /* Only a spare worker can run it: this one is "blocked" until then. */
    assert_int_equal(bw_submit(pool, inner_item, &p->inner), 0);
    p->inner_seen = rt_wait_count(&p->inner, 1, 20000);
  }
  bw_pool_stats_get(pool, &p->during);
  for (int i = 0; i < p->hook_calls; i++)
    p->rc_unblocked |= g_hooks->notify_unblocked();
  if (p->via_user_first)
    p->rc_unblocked |= bw_pool_notify_unblocked();
  atomic_fetch_add(&p->done, 1);
}

/* A pool without BW_POOL_COMPENSATE whose starvation injection cannot help
 * within the test's time: only compensation can add a worker (and none
 * retires meanwhile, however slow the box). */
static bw_pool *plain_pool(unsigned max_workers) {
  bw_pool_config cfg = {0};
  cfg.name = "obs";
  cfg.min_workers = 1;
  cfg.max_workers = max_workers;
  cfg.starvation_ms = 600000;
  cfg.idle_timeout_ms = 600000; /* a spare stays for the whole test */
  bw_pool *pool = bw_pool_create(&cfg);
  assert_non_null(pool);
  return pool;
}

static void run_probe(bw_pool *pool, block_probe *p) {
  assert_int_equal(bw_submit(pool, hook_blocking_item, p), 0);
  assert_int_equal(rt_wait_count(&p->done, 1, 30000), 1);
  assert_int_equal(p->rc_blocked, 0);
  assert_int_equal(p->rc_unblocked, 0);
}

static void test_observer_tool_hook_compensates_on_a_plain_pool(void **state) {
  (void)state;
  bw_observer o = make_observer();
  assert_int_equal(bw_observer_register(&o), 0);
  bw_pool *pool = plain_pool(3);
  block_probe p = {.hook_calls = 1, .submit_inner = 1};
  run_probe(pool, &p);
  assert_int_equal(p.inner_seen, 1);
  assert_int_equal(p.during.workers, 2);
  assert_int_equal(p.during.blocked, 1);
  assert_int_equal(p.during.threads_compensated, 1);
  assert_int_equal(p.during.threads_injected, 0);
  assert_int_equal(bw_pool_destroy(pool), 0);
  pthread_mutex_lock(&g_rec.mu);
  assert_int_equal(g_rec.added[1], 1);
  assert_int_equal(g_rec.added[0], 0);
  pthread_mutex_unlock(&g_rec.mu);
}

/* The user API keeps honouring the pool's flag. */
static void
test_observer_user_notify_on_a_plain_pool_does_not_compensate(void **state) {
  (void)state;
  bw_pool *pool = plain_pool(3);
  block_probe p = {.via_user_first = 1};
  run_probe(pool, &p);
  assert_int_equal(p.during.workers, 1);
  assert_int_equal(p.during.blocked, 1);
  assert_int_equal(p.during.threads_compensated, 0);
  assert_int_equal(bw_pool_destroy(pool), 0);
}

/* A hook call nested in a user bracket on a plain pool still compensates,
 * once per blocked span however many hook calls nest. */
static void test_observer_nested_hook_compensates_once(void **state) {
  (void)state;
  bw_pool *pool = plain_pool(4);
  block_probe p = {.via_user_first = 1, .hook_calls = 3, .submit_inner = 1};
  run_probe(pool, &p);
  assert_int_equal(p.inner_seen, 1);
  assert_int_equal(p.during.workers, 2);
  assert_int_equal(p.during.blocked, 1);
  assert_int_equal(p.during.threads_compensated, 1);
  /* A second span compensates again only if the spare is gone; with it
   * still parked (live 2 >= blocked 1 + min 1) nothing is added. */
  block_probe q = {.hook_calls = 1};
  run_probe(pool, &q);
  assert_int_equal(q.during.threads_compensated, 1);
  assert_int_equal(bw_pool_destroy(pool), 0);
}

static void test_observer_tool_hook_is_bounded_by_max_workers(void **state) {
  (void)state;
  bw_pool *pool = plain_pool(1);
  block_probe p = {.hook_calls = 1};
  run_probe(pool, &p);
  assert_int_equal(p.during.workers, 1);
  assert_int_equal(p.during.threads_compensated, 0);
  assert_int_equal(bw_pool_destroy(pool), 0);
}

static void quiet_sleep(void *arg) {
  rt_sleep_ms(300);
  atomic_fetch_add((atomic_long *)arg, 1);
}

static void test_observer_sees_injection_and_retirement(void **state) {
  (void)state;
  bw_observer o = make_observer();
  assert_int_equal(bw_observer_register(&o), 0);
  bw_pool_config cfg = {0};
  cfg.name = "obs";
  cfg.min_workers = 1;
  cfg.max_workers = 4;
  cfg.starvation_ms = 50;
  cfg.idle_timeout_ms = 50;
  bw_pool *pool = bw_pool_create(&cfg);
  assert_non_null(pool);
  atomic_long count = 0;
  /* Blocking without telling: only starvation injection helps. */
  for (int i = 0; i < 3; i++)
    assert_int_equal(bw_submit(pool, quiet_sleep, &count), 0);
  assert_int_equal(rt_wait_count(&count, 3, 20000), 3);
  /* The injected workers retire after 50 ms idle. */
  bw_pool_stats st;
  uint64_t end = rt_now_ms() + 20000;
  do {
    rt_sleep_ms(10);
    bw_pool_stats_get(pool, &st);
  } while (st.workers > 1 && rt_now_ms() < end);
  assert_int_equal(bw_pool_destroy(pool), 0);
  pthread_mutex_lock(&g_rec.mu);
  assert_true(g_rec.added[0] >= 1);
  assert_int_equal(g_rec.added[1], 0);
  assert_int_equal(g_rec.added[2], g_rec.added[0]);
  assert_int_equal(g_rec.workers_started, 1 + g_rec.added[0]);
  assert_int_equal(g_rec.workers_stopped, g_rec.workers_started);
  pthread_mutex_unlock(&g_rec.mu);
}

static void test_observer_short_struct_is_accepted(void **state) {
  (void)state;
  /* A tool built against an older, shorter header: fields past `size` are
   * never read (here the item callbacks, which are set but cut off). */
  bw_observer o = make_observer();
  o.size = (uint32_t)offsetof(bw_observer, item_enqueued);
  assert_int_equal(bw_observer_register(&o), 0);
  bw_pool *pool = make_pool(1);
  atomic_long count = 0;
  assert_int_equal(bw_submit(pool, tiny, &count), 0);
  assert_int_equal(rt_wait_count(&count, 1, 20000), 1);
  assert_int_equal(bw_pool_destroy(pool), 0);
  assert_int_equal(g_rec.created, 1);
  assert_int_equal(g_rec.nitems, 0);
}

#ifdef BW_TEST_SHARED_RUNTIME
#include <dlfcn.h>

/* This binary links the static runtime; the shared one loaded beside it is
 * a second copy with its own statics: it attaches the tool once more, with
 * its own hooks, and its pools work on their own. */
static void test_observer_second_copy_attaches_once_more(void **state) {
  (void)state;
  int before = atomic_load(&g_attach_calls);
  const bw_runtime_hooks *first = g_hooks;
  void *lib = dlopen(BW_TEST_SHARED_RUNTIME, RTLD_NOW | RTLD_LOCAL);
  assert_non_null(lib);
  bw_pool *(*create)(const bw_pool_config *);
  int (*submit)(bw_pool *, void (*)(void *), void *);
  int (*destroy)(bw_pool *);
  *(void **)&create = dlsym(lib, "bw_pool_create");
  *(void **)&submit = dlsym(lib, "bw_submit");
  *(void **)&destroy = dlsym(lib, "bw_pool_destroy");
  assert_non_null(create);
  assert_true((void *)create != (void *)bw_pool_create);
  /* Internal names are not exported. */
  assert_null(dlsym(lib, "bwrt__pool_push"));
  bw_pool_config cfg = {0};
  cfg.name = "copy2";
  cfg.min_workers = 1;
  bw_pool *pool = create(&cfg);
  assert_non_null(pool);
  assert_int_equal(atomic_load(&g_attach_calls), before + 1);
  assert_true(g_hooks != first);
  atomic_long count = 0;
  for (int i = 0; i < 100; i++)
    assert_int_equal(submit(pool, tiny, &count), 0);
  assert_int_equal(destroy(pool), 0);
  assert_int_equal(atomic_load(&count), 100);
  /* Leave it loaded: its pthread key destructor and TLS stay valid. */
}
#endif

/* ---- the item time gate ------------------------------------------------- */

/* What item_started_ex saw, against the gate value G the test set. */
static uint64_t g_gate;
static uint64_t g_gate_value; /* G */
static atomic_long g_ex_untimed, g_ex_timed, g_ex_start_only, g_ex_bad;
static atomic_long g_plain_started;

static void gate_started_ex(void *user, uint64_t pool_id, uint64_t item_id,
                            uint64_t enqueue_ns, uint64_t start_ns,
                            unsigned flags) {
  (void)user;
  (void)pool_id;
  (void)item_id;
  uint64_t g = g_gate_value;
  if (flags == 0 && enqueue_ns == g && start_ns == g)
    atomic_fetch_add(&g_ex_untimed, 1);
  else if (flags == (BW_ITEM_ENQUEUE_TIMED | BW_ITEM_START_TIMED) &&
           enqueue_ns > g && start_ns >= enqueue_ns)
    atomic_fetch_add(&g_ex_timed, 1);
  else if (flags == BW_ITEM_START_TIMED && enqueue_ns == g && start_ns > g)
    atomic_fetch_add(&g_ex_start_only, 1);
  else
    atomic_fetch_add(&g_ex_bad, 1);
}

static void gate_started_plain(void *user, uint64_t pool_id, uint64_t item_id,
                               uint64_t enqueue_ns, uint64_t start_ns) {
  (void)user;
  (void)pool_id;
  (void)item_id;
  (void)enqueue_ns;
  (void)start_ns;
  atomic_fetch_add(&g_plain_started, 1);
}

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void gate_blocker(void *arg) {
  rt_latch_wait(arg);
}

static long ex_total(void) {
  return atomic_load(&g_ex_untimed) + atomic_load(&g_ex_timed) +
         atomic_load(&g_ex_start_only) + atomic_load(&g_ex_bad);
}

static void wait_ex_total(long want) {
  uint64_t end = rt_now_ms() + 20000;
  while (ex_total() < want && rt_now_ms() < end)
    rt_sleep_ms(1);
  assert_int_equal(ex_total(), want);
}

static void test_observer_item_time_gate(void **state) {
  (void)state;
  bw_observer o;
  memset(&o, 0, sizeof o);
  o.version = BW_OBSERVER_VERSION;
  o.size = sizeof o;
  o.item_started = gate_started_plain; /* item_started_ex wins */
  o.item_started_ex = gate_started_ex;
  o.item_time_gate = &g_gate;
  o.item_time_sample_log2 = 3; /* one in 8 timed anyway */
  g_gate_value = mono_ns();
  __atomic_store_n(&g_gate, g_gate_value, __ATOMIC_RELEASE);
  assert_int_equal(bw_observer_register(&o), 0);
  bw_pool *pool = make_pool(1);
  atomic_long count = 0;

  /* Gate holds G: one item in 8 of this thread's is timed, the others
   * carry G at both ends. */
  for (int i = 0; i < 800; i++)
    assert_int_equal(bw_submit(pool, tiny, &count), 0);
  wait_ex_total(800);
  assert_int_equal(atomic_load(&g_ex_bad), 0);
  assert_true(atomic_load(&g_ex_timed) >= 100);
  assert_true(atomic_load(&g_ex_timed) <= 400);
  assert_int_equal(atomic_load(&g_ex_timed) + atomic_load(&g_ex_untimed), 800);

  /* Queued under G, started after the gate closed: timed at start only. */
  rt_latch latch;
  rt_latch_init(&latch);
  assert_int_equal(bw_submit(pool, gate_blocker, &latch), 0);
  for (int i = 0; i < 7; i++) /* the 8th would be sampled */
    assert_int_equal(bw_submit(pool, tiny, &count), 0);
  __atomic_store_n(&g_gate, 0, __ATOMIC_RELEASE);
  rt_latch_open(&latch);
  wait_ex_total(808);
  assert_int_equal(atomic_load(&g_ex_bad), 0);
  assert_true(atomic_load(&g_ex_start_only) >= 6);

  /* Gate 0: every item timed. */
  long timed_before = atomic_load(&g_ex_timed);
  for (int i = 0; i < 100; i++)
    assert_int_equal(bw_submit(pool, tiny, &count), 0);
  wait_ex_total(908);
  assert_int_equal(atomic_load(&g_ex_bad), 0);
  assert_int_equal(atomic_load(&g_ex_timed) - timed_before, 100);
  assert_int_equal(atomic_load(&g_plain_started), 0);

  assert_int_equal(bw_pool_destroy(pool), 0);
  rt_latch_destroy(&latch);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_observer_tool_is_found_through_dlsym_once),
      cmocka_unit_test(test_observer_register_rules),
      cmocka_unit_test_setup_teardown(
          test_observer_existing_pools_are_announced, reset_recorder,
          unregister_after),
      cmocka_unit_test_setup_teardown(
          test_observer_sees_items_with_consistent_ids_and_times,
          reset_recorder, unregister_after),
      cmocka_unit_test_setup_teardown(test_observer_sees_compensation,
                                      reset_recorder, unregister_after),
      cmocka_unit_test_setup_teardown(
          test_observer_sees_injection_and_retirement, reset_recorder,
          unregister_after),
      cmocka_unit_test_setup_teardown(
          test_observer_finished_only_still_gets_unique_ids, reset_recorder,
          unregister_after),
      cmocka_unit_test_setup_teardown(
          test_observer_tool_hook_compensates_on_a_plain_pool, reset_recorder,
          unregister_after),
      cmocka_unit_test(
          test_observer_user_notify_on_a_plain_pool_does_not_compensate),
      cmocka_unit_test(test_observer_nested_hook_compensates_once),
      cmocka_unit_test(test_observer_tool_hook_is_bounded_by_max_workers),
      cmocka_unit_test_setup_teardown(test_observer_short_struct_is_accepted,
                                      reset_recorder, unregister_after),
      cmocka_unit_test_setup_teardown(test_observer_item_time_gate,
                                      reset_recorder, unregister_after),
#ifdef BW_TEST_SHARED_RUNTIME
      cmocka_unit_test(test_observer_second_copy_attaches_once_more),
#endif
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
