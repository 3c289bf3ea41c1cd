/* stats.c - a log-linear histogram of queue waits, one per worker.
 *
 * Invariants:
 *  - Each histogram has one writer (its worker), which updates it with
 *    relaxed load+store pairs (no read-modify-write: nothing to contend on).
 *    Readers merge with relaxed loads; a snapshot may miss in-flight samples.
 *  - Buckets: values 0..15 exactly, then 8 sub-buckets per power of two, so
 *    a quantile is within 12.5% of the true value.
 */
#include <stdint.h>

#include "internal.h"

static unsigned bucket_of(uint64_t v) {
  if (v < 16)
    return (unsigned)v;
  unsigned msb = 63u - (unsigned)__builtin_clzll(v);
  unsigned sub = (unsigned)(v >> (msb - 3)) & 7u;
  return 16u + (msb - 4u) * 8u + sub;
}

static uint64_t bucket_low(unsigned idx) {
  if (idx < 16)
    return idx;
  unsigned msb = (idx - 16u) / 8u + 4u;
  uint64_t sub = (idx - 16u) % 8u;
  return (UINT64_C(1) << msb) | (sub << (msb - 3));
}

void bwrt__hist_init(bwrt__hist *h) {
  for (unsigned i = 0; i < BWRT__HIST_BUCKETS; i++)
    atomic_init(&h->count[i], 0);
  atomic_init(&h->min_ns, UINT64_MAX);
  atomic_init(&h->max_ns, 0);
  atomic_init(&h->samples, 0);
}

static inline void bump(_Atomic uint64_t *c) {
  uint64_t v = atomic_load_explicit(c, memory_order_relaxed);
  atomic_store_explicit(c, v + 1, memory_order_relaxed);
}

void bwrt__hist_add(bwrt__hist *h, uint64_t ns) {
  bump(&h->count[bucket_of(ns)]);
  bump(&h->samples);
  if (ns < atomic_load_explicit(&h->min_ns, memory_order_relaxed))
    atomic_store_explicit(&h->min_ns, ns, memory_order_relaxed);
  if (ns > atomic_load_explicit(&h->max_ns, memory_order_relaxed))
    atomic_store_explicit(&h->max_ns, ns, memory_order_relaxed);
}

void bwrt__hist_merge(const bwrt__hist *src, uint64_t *buckets,
                      uint64_t *min_ns, uint64_t *max_ns, uint64_t *samples) {
  for (unsigned i = 0; i < BWRT__HIST_BUCKETS; i++)
    buckets[i] += atomic_load_explicit(&src->count[i], memory_order_relaxed);
  uint64_t lo = atomic_load_explicit(&src->min_ns, memory_order_relaxed);
  uint64_t hi = atomic_load_explicit(&src->max_ns, memory_order_relaxed);
  if (lo < *min_ns)
    *min_ns = lo;
  if (hi > *max_ns)
    *max_ns = hi;
  *samples += atomic_load_explicit(&src->samples, memory_order_relaxed);
}

uint64_t bwrt__hist_quantile(const uint64_t *buckets, uint64_t samples,
                             double q) {
  if (samples == 0)
    return 0;
  uint64_t rank = (uint64_t)(q * (double)(samples - 1)) + 1;
  uint64_t seen = 0;
  for (unsigned i = 0; i < BWRT__HIST_BUCKETS; i++) {
    seen += buckets[i];
    if (seen >= rank)
      return bucket_low(i);
  }
  return bucket_low(BWRT__HIST_BUCKETS - 1);
}
