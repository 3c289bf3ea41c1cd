/* pools.c - what the shim knows about pools: per-pool worker and blocked
 * counts, the "every worker blocked" timeline and the starvation delay of
 * each item (told by the runtime bridge, bridge.c, and by state.c).
 *
 * Invariants:
 *  - A pool's counts and timeline are changed only under its spinlock,
 *    held for a few instructions and never across a call out of this
 *    file; its holder has bwsh__self.depth raised, so a signal handler that
 *    interrupts it passes straight through the wrappers instead of
 *    spinning on the lock it holds.
 *  - An all-blocked interval is open exactly while live > 0 and
 *    blocked >= live; it is closed (and pushed on the ring) by whichever
 *    change ends that state. The ring keeps the last RING intervals in
 *    time order; an item's starvation delay is the overlap of its
 *    [enqueue, start] with them.
 *  - Per-item numbers (item count, queue-wait maximum and histogram) are
 *    kept in per-pool shards, summed by the report. Shard k < SHARDS of
 *    every pool belongs to the one runtime worker that claimed k
 *    (shard_owner, bwsh__self.shard = k + 1) from its first item until it
 *    stops: it alone writes there, with plain loads and stores (atomic,
 *    relaxed, no read-modify-write), handed over to the next owner through
 *    the claim's release/acquire. Everyone else (helping waiters, workers
 *    that found every shard taken) adds to the shared shard SHARDS with
 *    atomic read-modify-writes.
 *  - all_recent is 0 until an all-blocked interval opened, UINT64_MAX
 *    while one is open, else the end of the newest closed one: an item
 *    enqueued at or after it cannot overlap any interval, so its start
 *    takes no lock.
 *  - Pools are never freed: their statistics outlive them for the report.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "shim.h"

#include <string.h>

#define RING 256
#define SHARDS 16

typedef struct interval {
  uint64_t start, end;
} interval;

/* One thread group's share of a pool's per-item numbers; aligned so that
 * two shards never share a cache line. */
typedef struct shard {
  _Alignas(64) atomic_uint_least64_t items;
  atomic_uint_least64_t timed; /* items whose queue wait was measured */
  atomic_uint_least64_t qwait_max;
  bwsh__hist qwait_hist;
} shard;

typedef struct pool {
  atomic_int lock; /* not atomic_flag: GCC's TSan does not see that one */
  atomic_int used;
  int copy; /* runtime copy, -1 for the option pool, else foreign_copy() */
  uint64_t id;
  int kind; /* BW_POOL_* */
  char name[48];
  unsigned live, peak_live, blocked, peak_blocked;
  uint64_t all_since; /* 0 = not all blocked now */
  uint64_t all_blocked_ns;
  interval ring[RING];
  unsigned ring_next, ring_len;
  uint64_t starv_total, starv_max, starv_items;
  /* Per item, so outside the lock: items start on every worker at once. */
  shard shards[SHARDS + 1];         /* the last one shared */
  atomic_uint_least64_t all_recent; /* see the invariants */
  bwsh__hist starv_hist;
  atomic_uint_least64_t compensated, injected;
  /* Blocking calls on its threads taken for the pool's own (not counted):
   * an item_fn pool's and C-Thread-Pool's, whose calls are told apart one
   * by one. */
  atomic_uint_least64_t idle_waits;
  /* Items queued, for the trace: the runtime's count at each enqueue, one
   * less at each start (between enqueues the shim keeps it itself). */
  atomic_llong queued;
} pool;

static pool pools[BW_MAX_POOLS];
static atomic_int npools;
static atomic_int option_pool = -1;
/* 1 while shard k (of every pool) has an owner (see the invariants). */
static atomic_int shard_owner[SHARDS];

static void lock(pool *p) {
  bwsh__self.locks_held++;
  while (atomic_exchange_explicit(&p->lock, 1, memory_order_acquire))
    __builtin_ia32_pause();
}

static void unlock(pool *p) {
  atomic_store_explicit(&p->lock, 0, memory_order_release);
  bwsh__self.locks_held--;
}

/* ---- the item time gate (observer.h, item_time_gate) --------------------
 * Runtime items are timed only while some pool has all its workers blocked
 * (and one in sample_items besides): starvation accrues only then. The
 * gate closes (0) when a pool's all-blocked interval opens and reopens
 * when no pool is in one, holding the latest end of such an interval
 * (gate_end): that is at or before the enqueue of any item that reads it,
 * and at or after the end of every interval so far, so an untimed item's
 * [gate at enqueue, gate at start] overlaps the intervals as its true
 * [enqueue, start] does. (An item enqueued between an interval's start
 * time being read and the gate closing gets that short window counted as
 * starvation: nanoseconds.) Only those transitions touch the gate: a
 * counted call that leaves some worker of its pool free costs nothing
 * here. With a trace or sample_items=1 the gate stays 0: every item is
 * timed. Lock order: a pool's lock, then gate_lock. */
static uint64_t item_gate; /* read by the runtime: atomics only */
static unsigned gate_all;  /* pools in an all-blocked interval (gate_lock) */
static uint64_t gate_end;  /* latest end of such an interval (gate_lock) */
static atomic_int gate_lock;

static void gate_acquire(void) {
  bwsh__self.locks_held++;
  while (atomic_exchange_explicit(&gate_lock, 1, memory_order_acquire))
    __builtin_ia32_pause();
}

static void gate_release(void) {
  atomic_store_explicit(&gate_lock, 0, memory_order_release);
  bwsh__self.locks_held--;
}

static int gate_always_open(void) {
  return bwsh__opt.trace_path[0] || bwsh__opt.sample_items <= 1;
}

/* Stores the gate's value (gate_lock held). */
static void gate_settle(void) {
  uint64_t v = 0;
  if (gate_all == 0 && !gate_always_open())
    v = gate_end ? gate_end : 1;
  __atomic_store_n(&item_gate, v, __ATOMIC_RELEASE);
}

void bwsh__pool_gate_init(uint64_t now) {
  gate_acquire();
  gate_all = 0;
  if (now > gate_end)
    gate_end = now;
  gate_settle();
  gate_release();
}

/* A pool's all-blocked interval opened / closed at `end`. */
static void gate_all_begin(void) {
  gate_acquire();
  if (gate_all++ == 0)
    __atomic_store_n(&item_gate, 0, __ATOMIC_RELEASE);
  gate_release();
}

static void gate_all_end(uint64_t end) {
  gate_acquire();
  if (gate_all)
    gate_all--;
  if (end > gate_end)
    gate_end = end;
  if (gate_all == 0)
    gate_settle();
  gate_release();
}

/* ---- histogram: 8 linear sub-buckets per power of two (12.5% error) ---- */

static unsigned bucket_of(uint64_t v) {
  if (v < 8)
    return (unsigned)v;
  unsigned msb = 63u - (unsigned)__builtin_clzll(v);
  unsigned sub = (unsigned)(v >> (msb - 3)) & 7u;
  unsigned b = (msb - 2) * 8 + sub;
  return b < BW_HIST_BUCKETS ? b : BW_HIST_BUCKETS - 1;
}

static uint64_t bucket_top(unsigned b) {
  if (b < 8)
    return b;
  unsigned msb = b / 8 + 2, sub = b % 8;
  return ((uint64_t)(8 + sub + 1) << (msb - 3)) - 1;
}

void bwsh__hist_add(bwsh__hist *h, uint64_t v) {
  atomic_fetch_add_explicit(&h->b[bucket_of(v)], 1, memory_order_relaxed);
}

/* The quantile q of n histograms taken together (their bucket sums). */
static uint64_t quantile_of(const bwsh__hist *const *h, unsigned n, double q) {
  uint64_t total = 0;
  for (unsigned k = 0; k < n; k++)
    for (unsigned i = 0; i < BW_HIST_BUCKETS; i++)
      total += atomic_load_explicit(&h[k]->b[i], memory_order_relaxed);
  if (total == 0)
    return 0;
  uint64_t rank = (uint64_t)(q * (double)total + 0.999999);
  if (rank == 0)
    rank = 1;
  uint64_t seen = 0;
  for (unsigned i = 0; i < BW_HIST_BUCKETS; i++) {
    for (unsigned k = 0; k < n; k++)
      seen += atomic_load_explicit(&h[k]->b[i], memory_order_relaxed);
    if (seen >= rank)
      return bucket_top(i);
  }
  return bucket_top(BW_HIST_BUCKETS - 1);
}

uint64_t bwsh__hist_quantile(const bwsh__hist *h, double q) {
  return quantile_of(&h, 1, q);
}

/* ---- pool table --------------------------------------------------------- */

int bwsh__pool_find(int copy, uint64_t id) {
  int n = atomic_load(&npools);
  for (int i = 0; i < n; i++)
    if (pools[i].copy == copy && pools[i].id == id &&
        atomic_load(&pools[i].used))
      return i;
  return -1;
}

int bwsh__pool_new(int copy, uint64_t id, const char *name) {
  int i = bwsh__pool_find(copy, id);
  if (i >= 0)
    return i;
  i = atomic_fetch_add(&npools, 1);
  if (i >= BW_MAX_POOLS) {
    atomic_store(&npools, BW_MAX_POOLS);
    return -1;
  }
  pool *p = &pools[i];
  p->copy = copy;
  p->id = id;
  p->kind = copy == -1 ? BW_POOL_THREADS : BW_POOL_BLOCKWATCH;
  strncpy(p->name, name ? name : "bw", sizeof p->name - 1);
  atomic_store(&p->used, 1);
  return i;
}

static void settle(pool *p, uint64_t now);

/* Foreign pools share the (copy, id) key space: each kind is a "copy" of
 * its own, below the option pool's -1. */
static int foreign_copy(int kind) {
  return -2 - kind;
}

int bwsh__pool_foreign(int kind, uint64_t id, const char *name, unsigned size) {
  int i = bwsh__pool_find(foreign_copy(kind), id);
  if (i >= 0)
    return i;
  /* Two threads may make the same pool at once (GIO's pool, libuv's):
   * one lock around find-or-make, taken once per pool. */
  static atomic_int making;
  while (atomic_exchange_explicit(&making, 1, memory_order_acquire))
    __builtin_ia32_pause();
  i = bwsh__pool_new(foreign_copy(kind), id, name);
  if (i >= 0 && pools[i].kind != kind) {
    pool *p = &pools[i];
    lock(p);
    p->kind = kind;
    p->live = size;
    p->peak_live = size;
    unlock(p);
  }
  atomic_store_explicit(&making, 0, memory_order_release);
  return i;
}

void bwsh__pool_resize(int i, unsigned size, uint64_t now) {
  if (i < 0)
    return;
  pool *p = &pools[i];
  lock(p);
  p->live = size;
  if (size > p->peak_live)
    p->peak_live = size;
  settle(p, now);
  unlock(p);
}

const char *bwsh__pool_kind_name(int kind) {
#define BWSH__POOL_KIND_NAME(id, name) name,
  static const char *const names[] = {BWSH__POOL_KINDS(BWSH__POOL_KIND_NAME)};
#undef BWSH__POOL_KIND_NAME
  return kind >= 0 && kind < BW_POOL_KIND_COUNT ? names[kind] : "threads";
}

int bwsh__pool_for_option(void) {
  int p = atomic_load(&option_pool);
  if (p >= 0)
    return p;
  static atomic_int creating;
  while (atomic_exchange(&creating, 1))
    __builtin_ia32_pause();
  p = atomic_load(&option_pool);
  if (p < 0) {
    const char *name = bwsh__opt.worker_name[0] ? bwsh__opt.worker_name
                                                : bwsh__opt.worker_start;
    p = bwsh__pool_new(-1, 0, name);
    atomic_store(&option_pool, p);
  }
  atomic_store(&creating, 0);
  return p;
}

int bwsh__pool_count(void) {
  int n = atomic_load(&npools);
  return n > BW_MAX_POOLS ? BW_MAX_POOLS : n;
}

/* Opens or closes the all-blocked interval after a change (lock held). */
static void settle(pool *p, uint64_t now) {
  int all = p->live > 0 && p->blocked >= p->live;
  if (all && !p->all_since) {
    p->all_since = now ? now : 1;
    atomic_store_explicit(&p->all_recent, UINT64_MAX, memory_order_release);
    if (p->copy >= 0) /* the option pool has no runtime items */
      gate_all_begin();
  } else if (!all && p->all_since) {
    uint64_t start = p->all_since;
    p->all_since = 0;
    if (p->copy >= 0)
      gate_all_end(now > start ? now : start);
    atomic_store_explicit(&p->all_recent, now > start ? now : start,
                          memory_order_release);
    if (now > start) {
      p->all_blocked_ns += now - start;
      p->ring[p->ring_next] = (interval){start, now};
      p->ring_next = (p->ring_next + 1) % RING;
      if (p->ring_len < RING)
        p->ring_len++;
    }
  }
}

/* One more (delta 1) or one fewer (-1) blocked worker in pool i. */
static void blocked_by(int i, int delta, uint64_t now) {
  if (i < 0)
    return;
  pool *p = &pools[i];
  lock(p);
  if (delta > 0 && ++p->blocked > p->peak_blocked)
    p->peak_blocked = p->blocked;
  else if (delta < 0 && p->blocked)
    p->blocked--;
  settle(p, now);
  unsigned b = p->blocked;
  unlock(p);
  if (bwsh__opt.trace_path[0])
    bwsh__trace_counter(i, BW_TRACE_BLOCKED, now, b);
}

void bwsh__pool_block(int i, uint64_t now) {
  blocked_by(i, 1, now);
}

void bwsh__pool_unblock(int i, uint64_t now) {
  blocked_by(i, -1, now);
}

void bwsh__pool_worker_join(int i, uint64_t now) {
  if (i < 0)
    return;
  pool *p = &pools[i];
  lock(p);
  p->live++;
  if (p->live > p->peak_live)
    p->peak_live = p->live;
  settle(p, now);
  unlock(p);
}

void bwsh__pool_worker_leave(int i, uint64_t now) {
  if (i < 0)
    return;
  pool *p = &pools[i];
  lock(p);
  if (p->live)
    p->live--;
  settle(p, now);
  unlock(p);
}

/* Overlap of [from, to] with the all-blocked intervals (lock held). Walks
 * the ring newest first and stops at the first interval that ended before
 * `from`: intervals are pushed in time order. */
static uint64_t overlap(const pool *p, uint64_t from, uint64_t to) {
  uint64_t sum = 0;
  if (p->all_since && p->all_since < to)
    sum += to - (p->all_since > from ? p->all_since : from);
  for (unsigned k = 0; k < p->ring_len; k++) {
    const interval *iv = &p->ring[(p->ring_next + RING - 1 - k) % RING];
    if (iv->end <= from)
      break;
    uint64_t s = iv->start > from ? iv->start : from;
    uint64_t e = iv->end < to ? iv->end : to;
    if (e > s)
      sum += e - s;
  }
  return sum;
}

void bwsh__pool_get(int i, bwsh__pool_report *out) {
  pool *p = &pools[i];
  memset(out, 0, sizeof *out);
  /* A report from a signal handler that interrupted this very thread
   * inside a pool's lock must not wait for itself: it reads unlocked (the
   * numbers may be one update behind). */
  int locked = bwsh__self.locks_held == 0;
  if (locked)
    lock(p);
  memcpy(out->name, p->name, sizeof out->name);
  out->kind = p->kind;
  out->workers = p->peak_live;
  out->peak_blocked = p->peak_blocked;
  out->all_blocked_ns = p->all_blocked_ns;
  if (p->all_since) {
    uint64_t now = bwsh__now_ns();
    if (now > p->all_since)
      out->all_blocked_ns += now - p->all_since;
  }
  out->starv_total = p->starv_total;
  out->starv_max = p->starv_max;
  out->starv_items = p->starv_items;
  if (locked)
    unlock(p);
  const bwsh__hist *qh[SHARDS + 1];
  for (unsigned k = 0; k <= SHARDS; k++) {
    const shard *sh = &p->shards[k];
    uint64_t m = atomic_load_explicit(&sh->qwait_max, memory_order_relaxed);
    if (m > out->qwait_max)
      out->qwait_max = m;
    out->items += atomic_load_explicit(&sh->items, memory_order_relaxed);
    out->timed_items += atomic_load_explicit(&sh->timed, memory_order_relaxed);
    qh[k] = &sh->qwait_hist;
  }
  out->starv_p99 = bwsh__hist_quantile(&p->starv_hist, 0.99);
  if (out->starv_p99 > out->starv_max)
    out->starv_p99 = out->starv_max;
  out->qwait_p99 = quantile_of(qh, SHARDS + 1, 0.99);
  if (out->qwait_p99 > out->qwait_max)
    out->qwait_p99 = out->qwait_max;
  out->compensated = atomic_load(&p->compensated);
  out->idle_waits = atomic_load_explicit(&p->idle_waits, memory_order_relaxed);
}

void bwsh__pool_idle_wait(int i) {
  if (i >= 0 && i < BW_MAX_POOLS)
    atomic_fetch_add_explicit(&pools[i].idle_waits, 1, memory_order_relaxed);
}

void bwsh__pools_after_fork(void) {
  /* The child has no workers: forget everything, runtime copies too (the
   * child's runtime copy re-attaches when it creates a pool). Only the
   * pools made so far are cleared: the rest were never written, and
   * writing them would fault in megabytes of zero pages in every child,
   * most of which exec or exit at once (libuv's uv_spawn). */
  int n = atomic_load(&npools);
  memset(pools, 0,
         (size_t)(n < BW_MAX_POOLS ? n : BW_MAX_POOLS) * sizeof(pool));
  for (unsigned k = 0; k < SHARDS; k++)
    atomic_store(&shard_owner[k], 0);
  bwsh__self.shard = 0;
  atomic_store(&npools, 0);
  atomic_store(&option_pool, -1);
  /* A parent thread may have held the gate lock: it does not exist here. */
  atomic_store(&gate_lock, 0);
  bwsh__pool_gate_init(bwsh__now_ns());
}

/* ---- per-item shards --------------------------------------------------- */

/* Claims a free shard for the calling worker (none when all are taken). */
static void shard_claim(void) {
  for (unsigned k = 0; k < SHARDS; k++) {
    int free_ = 0;
    if (atomic_load_explicit(&shard_owner[k], memory_order_relaxed) == 0 &&
        atomic_compare_exchange_strong_explicit(&shard_owner[k], &free_, 1,
                                                memory_order_acquire,
                                                memory_order_relaxed)) {
      bwsh__self.shard = k + 1;
      return;
    }
  }
}

/* Gives the calling thread's shard back (its counts stay for the report). */
void bwsh__pool_shard_release(void) {
  if (bwsh__self.shard)
    atomic_store_explicit(&shard_owner[bwsh__self.shard - 1], 0,
                          memory_order_release);
  bwsh__self.shard = 0;
}

/* Single writer: a load and a store, no locked instruction. */
static void bump(atomic_uint_least64_t *v, uint64_t by) {
  atomic_store_explicit(v, atomic_load_explicit(v, memory_order_relaxed) + by,
                        memory_order_relaxed);
}

/* Counts an item (timed: its wait was measured; in_stats: `wait` enters
 * the queue-wait max and histogram). */
static void own_add(shard *sh, uint64_t wait, int timed, int in_stats) {
  bump(&sh->items, 1);
  if (timed)
    bump(&sh->timed, 1);
  if (!in_stats)
    return;
  if (wait > atomic_load_explicit(&sh->qwait_max, memory_order_relaxed))
    atomic_store_explicit(&sh->qwait_max, wait, memory_order_relaxed);
  bump(&sh->qwait_hist.b[bucket_of(wait)], 1);
}

static void shared_add(shard *sh, uint64_t wait, int timed, int in_stats) {
  atomic_fetch_add_explicit(&sh->items, 1, memory_order_relaxed);
  if (timed)
    atomic_fetch_add_explicit(&sh->timed, 1, memory_order_relaxed);
  if (!in_stats)
    return;
  uint64_t max = atomic_load_explicit(&sh->qwait_max, memory_order_relaxed);
  while (wait > max && !atomic_compare_exchange_weak_explicit(
                           &sh->qwait_max, &max, wait, memory_order_relaxed,
                           memory_order_relaxed))
    ;
  bwsh__hist_add(&sh->qwait_hist, wait);
}

/* ---- what the runtime bridge reports (bridge.c) ----------------------- */

/* bwsh__pool_item_started past its common case. */
static __attribute__((noinline)) void item_started(pool *p, int i,
                                                   uint64_t enqueue_ns,
                                                   uint64_t start_ns,
                                                   int timed) {
  uint64_t wait = start_ns - enqueue_ns;
  /* The lock and the ring only when an all-blocked interval may overlap
   * [enqueue, start]: one is open, or the newest ended after the
   * enqueue. all_recent is always seen in time: this worker was itself
   * blocked (or not yet live) in every such interval and left it through
   * the lock that all_recent was stored under. */
  uint64_t starved = 0;
  if (atomic_load_explicit(&p->all_recent, memory_order_acquire) > enqueue_ns) {
    lock(p);
    starved = overlap(p, enqueue_ns, start_ns);
    if (starved) {
      p->starv_total += starved;
      p->starv_items++;
      if (starved > p->starv_max)
        p->starv_max = starved;
      /* Written only here, under the lock: no locked add. */
      bump(&p->starv_hist.b[bucket_of(starved)], 1);
    }
    unlock(p);
  }
  /* An untimed item that starved waited at least that long: its wait
   * enters the statistics with that lower bound (queue_wait_ms.max is
   * then never below starvation_delay_ms.max). */
  uint64_t measured = timed ? wait : starved;
  int in_stats = timed || starved;
  if (!bwsh__self.shard && bwsh__self.kind == BW_THREAD_WORKER)
    shard_claim();
  if (bwsh__self.shard)
    own_add(&p->shards[bwsh__self.shard - 1], measured, timed, in_stats);
  else
    shared_add(&p->shards[SHARDS], measured, timed, in_stats);
  if (bwsh__opt.trace_path[0]) {
    /* Only starved waits: they are what the picture is for, and a busy
     * pool that is never starved would otherwise fill the trace. */
    if (starved)
      bwsh__trace_queue_wait(i, enqueue_ns, wait, starved);
    long long q = atomic_fetch_sub(&p->queued, 1) - 1;
    bwsh__trace_counter(i, BW_TRACE_QUEUE, start_ns, q > 0 ? (uint64_t)q : 0u);
  }
}

/* An item of pool i started at start_ns after waiting since enqueue_ns
 * (timed: both ends were measured, else they are the gate's bounds). The
 * common case, an untimed item that no all-blocked interval can overlap
 * on a worker with a shard of its own and no trace, only counts it. */
void bwsh__pool_item_started(int i, uint64_t enqueue_ns, uint64_t start_ns,
                             int timed) {
  if (i < 0 || start_ns < enqueue_ns)
    return;
  pool *p = &pools[i];
  unsigned k = bwsh__self.shard;
  if (!timed && k && !bwsh__opt.trace_path[0] &&
      atomic_load_explicit(&p->all_recent, memory_order_acquire) <=
          enqueue_ns) {
    bump(&p->shards[k - 1].items, 1);
    return;
  }
  item_started(p, i, enqueue_ns, start_ns, timed);
}

const uint64_t *bwsh__pool_item_gate(void) {
  return &item_gate;
}

int bwsh__pool_copy(int i) {
  return i >= 0 && i < BW_MAX_POOLS ? pools[i].copy : -1;
}

void bwsh__pool_item_enqueued(int i, uint64_t enqueue_ns, size_t queued) {
  atomic_store(&pools[i].queued, (long long)queued);
  bwsh__trace_counter(i, BW_TRACE_QUEUE, enqueue_ns, queued);
}

void bwsh__pool_spare_worker(int i, int compensated) {
  atomic_fetch_add(compensated ? &pools[i].compensated : &pools[i].injected, 1);
}
