/* items.c - where an item runs on a worker named by options
 * (worker_name, worker_start), for item_fn=GLOB[,GLOB...]: a hand-written
 * pool makes no call when it starts or ends an item, so a blocking call
 * there is an item's when its call chain passes through a function the
 * globs name, and the pool's own (its idle wait, its queue lock) when not.
 *
 * Invariants:
 *  - The chain is the return addresses of the ITEM_FRAMES frames nearest
 *    the call, outside the shim and the sanitizer runtimes: a call made
 *    deeper inside an item than that is the pool's own.
 *  - Each return address is named once, with the functions inlined there
 *    (bwsh__symbolize_inline: libdw reads the program's symbol table and
 *    debug information) and its verdict cached (bwsh__verdict): 1 when one
 *    of those functions matches a glob, 2 when none does. So a call
 *    unwinds its chain and looks its addresses up (lock-free), and only an
 *    address never seen before is symbolized, under the symbolizer's lock.
 *  - A frame with no name (a stripped program, no libdw; the symbolizer
 *    then gives "0x..." or "module+0x...") matches no glob: a wait the
 *    shim cannot place is taken for the pool's own, as C-Thread-Pool's
 *    are (foreign_thpool.c).
 *  - A full cache (PCS addresses) still gives the right verdict: an
 *    address it has no room for is symbolized at each call that meets it.
 *  - The verdict is a function of the frames up to *last alone: sites.c
 *    unwinds once for it and the call's site key together, and keeps both
 *    in its per-thread memo of chains, which serves a repeat only while
 *    every one of those frames still lies where it did.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "shim.h"

#include <string.h>

#define ITEM_FRAMES 32 /* frames looked at, nearest the call first */
#define PCS 4096
#define INLINE_MAX 8 /* functions named at one address, inlined ones first */

static bwsh__verdict_slot pcs[PCS];

/* A name the symbolizer made up for want of one matches nothing. */
static int is_named(const char *f) {
  return f[0] && strncmp(f, "0x", 2) != 0 && strchr(f, '+') == NULL &&
         strcmp(f, "??") != 0;
}

/* The verdict on pc, symbolized now (the symbolizer's lock held). */
static int verdict_of(void *pc) {
  bwsh__sym frames[INLINE_MAX];
  int n = bwsh__symbolize_inline(pc, frames, INLINE_MAX, 0);
  int match = -1;
  for (int i = 0; i < n && match < 0; i++)
    if (is_named(frames[i].function) &&
        bwsh__glob_list_match(bwsh__opt.item_fn, frames[i].function))
      match = i;
  if (bwsh__opt.verbosity >= 2)
    bwsh__log("item_fn: %p in %s%s: %s", pc,
              frames[match < 0 ? 0 : match].function,
              frames[match < 0 ? 0 : match].inlined ? " (inlined)" : "",
              match < 0 ? "not an item function" : "an item function");
  return match < 0 ? 2 : 1;
}

static int pc_in_item(void *pc) {
  return bwsh__verdict(pcs, PCS, pc, verdict_of) == 1;
}

int bwsh__item_chain(void *const *raw, int got, int *last) {
  int seen = 0;
  *last = -1;
  for (int i = 0; i < got && seen < ITEM_FRAMES; i++) {
    if (bwsh__code_kind(raw[i]) == BW_CODE_INTERPOSER)
      continue; /* the shim's own frames, a sanitizer's interceptor */
    seen++;
    *last = i;
    if (pc_in_item(raw[i]))
      return 1;
  }
  return 0;
}
