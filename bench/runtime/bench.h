/* bench.h - the contract between the runtime benchmark driver and each
 * contender ("peer"): blockwatch's runtime and the pools it is compared to.
 *
 * Invariants every peer keeps:
 *  - An operation times only the work it is named for: pool creation, the
 *    allocation of request structs and the final teardown stay outside the
 *    clock (open/close), so every peer is measured warm.
 *  - An operation returns 0, -ENOTSUP when the peer has no equivalent (the
 *    table prints "n/a"), or another negative errno on failure.
 *  - "workers" means threads that execute items. For OpenMP and oneTBB the
 *    submitting thread is one of them (it helps while it waits, that is
 *    their model); for the others it only submits and waits.
 *  - Every tiny item does the same thing: one atomic increment of a shared
 *    counter; the item that makes the counter reach its target wakes the
 *    waiter. The waiting idiom is the peer's own where it has one.
 *
 * This header is included from C and from the C++ oneTBB peer.
 */
#ifndef BW_BENCH_RUNTIME_BENCH_H
#define BW_BENCH_RUNTIME_BENCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* bench_peer.open flags */
enum {
  /* Blocking-aware compensation on (blockwatch only; others give ENOTSUP). */
  BENCH_COMPENSATE = 1u << 0,
  /* The pool may grow beyond `workers` (needed for compensation). */
  BENCH_ELASTIC = 1u << 1,
};

/* Result of the sleepers scenario (c). */
typedef struct bench_sleep_result {
  uint64_t makespan_ns;   /* first submit to the last item (probe included) */
  uint64_t probe_wait_ns; /* the probe item's submit-to-start wait */
} bench_sleep_result;

typedef struct bench_peer {
  const char *name;
  /* Nonzero: run this peer in a child process per worker count (libuv's
   * pool size is fixed per process by UV_THREADPOOL_SIZE). */
  int remote;
  /* Creates a pool of `workers` threads; NULL with errno on failure. */
  void *(*open)(unsigned workers, unsigned flags);
  void (*close)(void *pool);
  /* (a) `rounds` times: submit `items` tiny items from this thread, wait
   * for all. *ns is the total wall time of all rounds. */
  int (*tiny)(void *pool, size_t items, size_t rounds, uint64_t *ns);
  /* (b) n timer delays of ms each, each followed by a continuation that
   * counts it; *ns is submit of the first to the last continuation. */
  int (*delays)(void *pool, size_t n, unsigned ms, uint64_t *ns);
  /* (c) n items that each sleep ms (announcing it when the peer can), then
   * one trivial probe item. */
  int (*sleepers)(void *pool, size_t n, unsigned ms, bench_sleep_result *out);
  /* (d) a chain of `links` items, each started by the previous one's end;
   * *ns is the wall time from the first submit to the end of the last. */
  int (*chain)(void *pool, size_t links, uint64_t *ns);
  /* How long this peer's threads may keep a CPU busy after an operation
   * returned (libgomp spins tens of ms after a parallel region): the driver
   * waits that long before the next contender's sample. */
  unsigned cooldown_ms;
} bench_peer;

/* The peers compiled in, NULL-terminated, in display order. */
extern const bench_peer *const bench_peers[];

/* Names of peers whose package was not found when this was built, NULL-
 * terminated (printed so that a missing column is never a silent one). */
extern const char *const bench_missing_peers[];

/* ---- helpers shared by the peers (util.c) ------------------------------ */

/* A whole decimal number in [min, max] from a command-line value: 0 and
 * *out set, or -EINVAL (trailing text, overflow, out of range). */
int bench_parse_count(const char *text, unsigned long min, unsigned long max,
                      unsigned long *out);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t bench_now_ns(void);

/* Sleeps ms milliseconds, resuming after signals. */
void bench_sleep_ms(unsigned ms);

/* A one-shot latch: bench_latch_open() wakes every bench_latch_wait(). */
typedef struct bench_latch bench_latch;
bench_latch *bench_latch_create(void);
void bench_latch_destroy(bench_latch *latch);
void bench_latch_open(bench_latch *latch);
void bench_latch_wait(bench_latch *latch);
/* Closes it again for the next round; only while nobody waits. */
void bench_latch_reset(bench_latch *latch);

#ifdef __cplusplus
}
#endif

#endif /* BW_BENCH_RUNTIME_BENCH_H */
