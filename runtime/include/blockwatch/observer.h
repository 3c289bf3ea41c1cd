/* blockwatch/observer.h - the runtime's observer ABI, for tools such as the
 * libblockwatch.so shim.
 *
 * This header is the whole contract between the runtime and a tool: a tool
 * includes it but never links the runtime, so the shim loads into programs
 * that do not use the runtime at all.
 *
 * Invariants:
 *  - The ABI is versioned: bw_observer.version must be BW_OBSERVER_VERSION
 *    and bw_observer.size the sizeof the struct the tool was built with; the
 *    runtime never reads a field beyond `size`, and new callbacks are only
 *    ever appended.
 *  - Every callback may be NULL. Callbacks must not block, must not call
 *    back into the runtime and must be async-signal-tolerant in the sense of
 *    taking no lock a worker could hold.
 *  - With no observer registered each hook costs one relaxed atomic load.
 *    A NULL callback costs nothing beyond that: item ids are made only when
 *    some item callback is set, and the clock is read only for the
 *    callbacks that receive that time - and, with item_time_gate, only for
 *    the items the tool wants timed.
 *  - Thread on which each callback runs is part of the contract (below):
 *    a tool keys per-thread state on it.
 *
 * How a tool loaded with LD_PRELOAD finds the runtime, whether the runtime is
 * linked statically into the program or loaded as a shared library:
 *  When a pool is created (and so before any worker or item exists), the
 *  runtime looks up the symbol BW_TOOL_ATTACH_SYMBOL with
 *  dlsym(RTLD_DEFAULT, ...). A preloaded library is in the global scope, so
 *  the lookup finds the tool's definition from either kind of runtime copy.
 *  If found, it is called once per runtime copy with a bw_runtime_hooks
 *  table; the tool registers its observer through that table (and keeps it
 *  to call notify_blocked / notify_unblocked for compensation). Pools that
 *  already exist when an observer registers are announced to it through
 *  pool_created; workers are announced only when they start, so a tool that
 *  registers late classifies the threads it meets with current_worker().
 */
#ifndef BLOCKWATCH_OBSERVER_H
#define BLOCKWATCH_OBSERVER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BW_OBSERVER_VERSION 1

/* The symbol a tool defines so that the runtime finds it (see above). Its
 * type is bw_tool_attach_fn. */
#define BW_TOOL_ATTACH_SYMBOL "blockwatch_tool_attach"

struct bw_pool;

typedef struct bw_observer {
  uint32_t version; /* BW_OBSERVER_VERSION */
  uint32_t size;    /* sizeof(bw_observer) as the tool was built */
  void *user;       /* passed back as the first argument of each callback */

  /* A pool was created (on the creating thread), or already existed when
   * the observer registered. pool_id is unique in the process. */
  void (*pool_created)(void *user, uint64_t pool_id, const char *name,
                       unsigned min_workers, unsigned max_workers);
  /* The pool is gone (on the destroying thread, after its workers exited). */
  void (*pool_destroyed)(void *user, uint64_t pool_id);

  /* On the worker thread itself, before it runs anything / as it exits.
   * worker_index is its <n> in the thread name. */
  void (*worker_started)(void *user, uint64_t pool_id, unsigned worker_index);
  void (*worker_stopped)(void *user, uint64_t pool_id, unsigned worker_index);

  /* On the submitting thread, after the item is visible to workers.
   * Times are CLOCK_MONOTONIC nanoseconds (with item_time_gate, an untimed
   * item's enqueue_ns is the gate's value). item_id is unique per pool
   * (neither dense nor ordered: threads take ids in blocks). */
  void (*item_enqueued)(void *user, uint64_t pool_id, uint64_t item_id,
                        uint64_t enqueue_ns, size_t queue_length);
  /* On the thread that runs the item, just before its function runs: a
   * worker, or an outside thread helping the pool inside an untimed bw_wait
   * (see runtime.h; current_worker() is 0 there). Its queue wait is
   * start_ns - enqueue_ns. */
  void (*item_started)(void *user, uint64_t pool_id, uint64_t item_id,
                       uint64_t enqueue_ns, uint64_t start_ns);
  /* On the same thread, just after the item's function returned. */
  void (*item_finished)(void *user, uint64_t pool_id, uint64_t item_id,
                        uint64_t end_ns);

  /* A worker was added by starvation injection (reason 0) or compensation
   * (reason 1), or retired when idle (reason 2). On the thread deciding it. */
  void (*worker_added_or_retired)(void *user, uint64_t pool_id, int reason);

  /* ---- appended after the first release: a runtime reads these only when
   * `size` covers them, and an older runtime ignores them ---- */

  /* Item times on demand. Reading the clock twice per item costs more than
   * a tiny item itself, and a tool may need exact times only at moments it
   * knows of (say, while some worker is blocked). When item_time_gate is
   * NULL every item is timed, as above. When set, it points to a word the
   * tool writes with atomic stores (__atomic_store_n or a C11 atomic of the
   * same size) and the runtime reads with relaxed atomic loads, at each
   * enqueue and each start:
   *  - 0: time the item (read the clock);
   *  - T != 0: a CLOCK_MONOTONIC time the tool chose; the item is not timed
   *    and T stands for its enqueue or start time. (A tool that stores
   *    "when the last watched condition ended" gets lower bounds of enqueue
   *    times and upper bounds of start times that are exact enough for
   *    anything that can only happen while the word is 0.)
   * Besides, one item in 2^item_time_sample_log2 per submitting thread is
   * timed whatever the word says (log2 0: every item; the runtime may time
   * more often, never less). An item timed at enqueue is timed at start. */
  const uint64_t *item_time_gate;
  unsigned item_time_sample_log2;
  /* Like item_started, and called instead of it when set: `flags` says
   * which of the two times came from the clock (BW_ITEM_ENQUEUE_TIMED,
   * BW_ITEM_START_TIMED); the others are the gate's T (or, for an item
   * queued before the observer registered, enqueue_ns == start_ns). */
  void (*item_started_ex)(void *user, uint64_t pool_id, uint64_t item_id,
                          uint64_t enqueue_ns, uint64_t start_ns,
                          unsigned flags);
} bw_observer;

/* item_started_ex flags. */
#define BW_ITEM_ENQUEUE_TIMED 1u
#define BW_ITEM_START_TIMED 2u

/* What the runtime hands a tool (see the comment at the top). */
typedef struct bw_runtime_hooks {
  uint32_t version; /* BW_OBSERVER_VERSION */
  uint32_t size;    /* sizeof(bw_runtime_hooks) as the runtime was built */
  /* Registers the one observer of this runtime copy (the struct is copied).
   * Returns 0, -EBUSY if another is registered, -EINVAL on a bad version. */
  int (*observer_register)(const bw_observer *observer);
  /* Unregisters it; callbacks already running may still finish. */
  int (*observer_unregister)(void);
  /* Same as bw_pool_notify_blocked / _unblocked for the calling worker,
   * except that notify_blocked compensates on ANY pool, whether or not it
   * was created with BW_POOL_COMPENSATE: a tool calls it only when its user
   * asked for compensation. It starts a spare worker at once when fewer
   * than min_workers workers of the pool would be unblocked, bounded by
   * max_workers; the pool's stats count it in threads_compensated and the
   * observer sees worker_added_or_retired with reason 1. Calls nest with
   * the user API's; the first call of a blocked span that compensates
   * (this one always does) makes the check, once per span. */
  int (*notify_blocked)(void);
  int (*notify_unblocked)(void);
  /* Nonzero when the calling thread is a worker of this runtime copy; fills
   * *pool_id and *worker_index when they are non-NULL. */
  int (*current_worker)(uint64_t *pool_id, unsigned *worker_index);
  /* Appended after the first release: a tool checks `size` before calling.
   * Nonzero when the calling thread is a worker of this runtime copy and is
   * inside an item's function; 0 on any other thread, and on a worker
   * between items (looking for work, spinning or parked). It lets a tool
   * tell a worker's own idle waits from its items' blocking calls without
   * item_finished, and so spares the runtime that callback and its clock
   * read on every item. Cheap, but not free: call it on slow paths. */
  int (*current_item)(void);
  /* Appended after current_item (check `size`): what the calling thread is
   * to this runtime copy, a bw_thread_role value of runtime.h (0 other, 1
   * worker, 2 a blocking thread inside a bw_run_blocking job, 3 the
   * bw_fd_ready poller, 4 another runtime thread in the runtime's own waits:
   * the gate, a blocking thread between jobs). A tool counts the calls of
   * role 2 apart from worker blocking, and those of roles 3 and 4 not at
   * all: they are the runtime's idle waits. It may change between calls. */
  int (*thread_role)(void);
} bw_runtime_hooks;

/* The tool's entry point, found by name (BW_TOOL_ATTACH_SYMBOL). */
typedef void (*bw_tool_attach_fn)(const bw_runtime_hooks *hooks);

/* The same registration for code that links the runtime directly. */
int bw_observer_register(const bw_observer *observer);
int bw_observer_unregister(void);

#ifdef __cplusplus
}
#endif

#endif /* BLOCKWATCH_OBSERVER_H */
