/* sites.c - call sites: the caller chain of each counted blocking call,
 * kept in a fixed-size lock-free hash table.
 *
 * Invariants:
 *  - A site is keyed by a 64-bit hash of (function, return address into
 *    the caller); a slot is claimed once with a compare-and-swap of its key
 *    and then only counted with relaxed atomic adds. The claimer captures
 *    the caller chain (backtrace, ~1 us) once, before it publishes `ready`;
 *    the reporter reads only ready slots. So a counted call costs two
 *    atomic adds, and a site's chain is the first one seen at that caller.
 *  - Full table: the call is still counted in the totals, and in `dropped`.
 *  - Frames that lie inside libblockwatch.so itself are skipped, so frame 0
 *    is the caller of the blocking function.
 *  - backtrace() allocates on its first call (it loads libgcc_s): the
 *    constructor primes it (bwsh__sites_init) before any wrapper counts.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "shim.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <string.h>

typedef struct site {
  atomic_uint_least64_t key; /* 0 = free */
  atomic_int ready;
  int fn;
  int nframes;
  void *frames[BW_SITE_FRAMES];
  atomic_uint_least64_t count;
  atomic_uint_least64_t blocked_ns;
} site;

static site sites[BW_MAX_SITES];
static atomic_uint_least64_t dropped;
static uintptr_t self_lo, self_hi;

static int find_self(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  uintptr_t base = (uintptr_t)data;
  if ((uintptr_t)info->dlpi_addr != base)
    return 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD)
      continue;
    uintptr_t lo = base + ph->p_vaddr, hi = lo + ph->p_memsz;
    if (!self_lo || lo < self_lo)
      self_lo = lo;
    if (hi > self_hi)
      self_hi = hi;
  }
  return 1;
}

void bwsh__sites_init(void) {
  Dl_info info;
  if (dladdr((void *)&bwsh__sites_init, &info) && info.dli_fbase)
    dl_iterate_phdr(find_self, info.dli_fbase);
  void *prime[2];
  backtrace(prime, 2);
}

int bwsh__capture_frames(void **frames, int n) {
  void *raw[BW_SITE_FRAMES + 16];
  int got = backtrace(raw, (int)(sizeof raw / sizeof raw[0]));
  int k = 0;
  for (int i = 0; i < got && k < n; i++) {
    uintptr_t pc = (uintptr_t)raw[i];
    if (pc >= self_lo && pc < self_hi)
      continue;
    frames[k++] = raw[i];
  }
  return k;
}

static uint64_t hash_site(int fn, void *caller) {
  uint64_t h = (uint64_t)(uintptr_t)caller * 0x9e3779b97f4a7c15u;
  h ^= (uint64_t)(fn + 1) * 0xc2b2ae3d27d4eb4fu;
  h ^= h >> 31;
  return h ? h : 1;
}

int bwsh__site_add(int fn, void *caller, uint64_t count, uint64_t blocked_ns) {
  uint64_t key = hash_site(fn, caller);
  for (unsigned probe = 0; probe < BW_MAX_SITES; probe++) {
    site *s = &sites[(key + probe) % BW_MAX_SITES];
    uint64_t cur = atomic_load_explicit(&s->key, memory_order_acquire);
    if (cur == 0) {
      uint64_t expected = 0;
      if (atomic_compare_exchange_strong(&s->key, &expected, key)) {
        s->fn = fn;
        s->nframes = bwsh__capture_frames(s->frames, (int)bwsh__opt.frames);
        if (s->nframes == 0 && caller) {
          s->frames[0] = caller; /* no unwinder: at least the caller */
          s->nframes = 1;
        }
        atomic_store_explicit(&s->ready, 1, memory_order_release);
        cur = key;
      } else {
        cur = expected;
      }
    }
    if (cur == key) {
      atomic_fetch_add_explicit(&s->count, count, memory_order_relaxed);
      atomic_fetch_add_explicit(&s->blocked_ns, blocked_ns,
                                memory_order_relaxed);
      return (int)(s - sites);
    }
  }
  atomic_fetch_add_explicit(&dropped, count, memory_order_relaxed);
  return -1;
}

void bwsh__site_add_ns(int i, uint64_t blocked_ns) {
  if (i >= 0 && i < BW_MAX_SITES)
    atomic_fetch_add_explicit(&sites[i].blocked_ns, blocked_ns,
                              memory_order_relaxed);
}

int bwsh__site_get(int i, bwsh__site_view *out) {
  site *s = &sites[i];
  if (!atomic_load_explicit(&s->ready, memory_order_acquire))
    return 0;
  out->fn = s->fn;
  out->nframes = s->nframes;
  memcpy(out->frames, s->frames, sizeof out->frames);
  out->count = atomic_load_explicit(&s->count, memory_order_relaxed);
  out->blocked_ns = atomic_load_explicit(&s->blocked_ns, memory_order_relaxed);
  return out->count > 0;
}

uint64_t bwsh__sites_dropped(void) {
  return atomic_load(&dropped);
}

void bwsh__sites_after_fork(void) {
  memset(sites, 0, sizeof sites);
  atomic_store(&dropped, 0);
}
