/* verdicts.c - a per-address cache of verdicts that need the symbolizer,
 * shared by foreign_thpool.c and items.c (see bwsh__verdict in shim.h).
 *
 * Invariants: a slot's pc is stored (release) only after its verdict, so a
 * lock-free reader that finds the pc reads its verdict; slots are only ever
 * filled, never emptied, and only under bwsh__symbolize_lock, so two
 * threads never judge or store the same address twice. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "shim.h"

static unsigned slot_of(const void *pc, unsigned n) {
  return (unsigned)(((uintptr_t)pc * 0x9E3779B97F4A7C15ull) >> 32) & (n - 1);
}

/* The cached verdict on pc, 0 when there is none. */
static int cached(bwsh__verdict_slot *table, unsigned n, void *pc) {
  unsigned h = slot_of(pc, n);
  for (unsigned k = 0; k < n; k++) {
    bwsh__verdict_slot *s = &table[(h + k) & (n - 1)];
    void *at = atomic_load_explicit(&s->pc, memory_order_acquire);
    if (at == pc)
      return atomic_load_explicit(&s->verdict, memory_order_relaxed);
    if (at == NULL)
      return 0;
  }
  return 0;
}

int bwsh__verdict(bwsh__verdict_slot *table, unsigned n, void *pc,
                  int (*judge)(void *pc)) {
  int v = cached(table, n, pc);
  if (v)
    return v;
  bwsh__symbolize_lock();
  v = cached(table, n, pc); /* another thread may have judged it meanwhile */
  if (!v) {
    v = judge(pc);
    unsigned h = slot_of(pc, n);
    for (unsigned k = 0; k < n; k++) {
      bwsh__verdict_slot *s = &table[(h + k) & (n - 1)];
      if (atomic_load_explicit(&s->pc, memory_order_relaxed) == NULL) {
        atomic_store_explicit(&s->verdict, v, memory_order_relaxed);
        atomic_store_explicit(&s->pc, pc, memory_order_release);
        break;
      }
    }
  }
  bwsh__symbolize_unlock();
  return v;
}
