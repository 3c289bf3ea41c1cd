/* foreign.c - what the foreign pools' files (foreign_*.c) share: the next
 * definition of the library functions they wrap, and when to watch.
 *
 * Invariants:
 *  - These libraries may be loaded after the shim's constructor ran (a
 *    dlopen) or never: their functions are looked up at their first call,
 *    not by real.c's bwsh__resolve_all, and a missing one is said once.
 *  - The lookup is real.c's (its re-entrancy guard and raised depth
 *    included): one refused from inside dlsym is not a missing function,
 *    and is tried again at the next call. A pointer once found never
 *    changes.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "real.h"

#include <string.h>

void bwsh__foreign_next(bwsh__foreign_fn *f, const char *name, void *out,
                        size_t size) {
  void *p = atomic_load_explicit(&f->fn, memory_order_acquire);
  if (!p) {
    p = bwsh__real_lookup(name, NULL);
    if (p)
      atomic_store_explicit(&f->fn, p, memory_order_release);
    else if (!bwsh__real_in_lookup() && !atomic_exchange(&f->said, 1))
      bwsh__log("ERROR: real function not found: %s", name);
  }
  memset(out, 0, size);
  if (p && size == sizeof p)
    memcpy(out, &p, size);
}

int bwsh__foreign_thread_maker(void *caller) {
  if (bwsh__code_kind(caller) == BW_CODE_PROGRAM)
    bwsh__modules_scan(); /* or a library loaded since the last scan */
  int lib = bwsh__code_library(caller);
  if (lib == BW_LIB_NONE && bwsh__code_kind(caller) == BW_CODE_INTERPOSER) {
    /* A sanitizer's pthread_create called us: who called it? */
    void *frames[BW_SITE_FRAMES + 16];
    int n = bwsh__capture_frames(frames, (int)(sizeof frames / sizeof *frames));
    int i = 0;
    while (i < n && bwsh__code_kind(frames[i]) == BW_CODE_INTERPOSER)
      i++;
    lib = i < n ? bwsh__code_library(frames[i]) : BW_LIB_NONE;
  }
  if (lib == BW_LIB_UV)
    return bwsh__uv_in_setup() ? BW_LIB_UV : BW_LIB_NONE;
  return lib;
}

int bwsh__foreign_watched(void) {
  return atomic_load_explicit(&bwsh__active, memory_order_relaxed) &&
         !atomic_load_explicit(&bwsh__stood_down, memory_order_relaxed) &&
         !bwsh__self.depth;
}
