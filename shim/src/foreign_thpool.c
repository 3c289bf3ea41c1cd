/* foreign_thpool.c - C-Thread-Pool (Debian's cthreadpool-dev), compiled
 * into the program from source: nothing of it can be interposed, so its
 * workers are known by the names they give themselves ("thread-pool-N",
 * thread_do in thpool.c) and its own waits by the function they are made
 * from.
 *
 * Invariants:
 *  - One pool of this kind per process (every thpool_init names its
 *    threads from 0 again, so pools cannot be told apart); its size is one
 *    more than the highest N seen.
 *  - A blocking call on such a thread is the pool's own (its idle wait in
 *    bsem_wait, its queue and count locks) when the function it is made
 *    from, inlined or not, is one of thpool.c's; any other is an item's.
 *    The answer is cached per call site: symbolizing (libdw, the program's
 *    symbol table) happens once per site, under the symbolizer's lock. A site
 * with no name (a stripped program, no libdw) counts as the pool's own: a wait
 *    the shim cannot place is not reported as an item's.
 *  - Where an item starts and ends is not seen (no call marks it): its
 *    queue wait and starvation delay are not measured.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "shim.h"

#include <string.h>

#define PREFIX "thread-pool-"
#define SITES 256

/* The functions of thpool.c (Debian's 0.0+git20201207). */
static const char *const own_functions[] = {
    "thpool_init",    "thpool_add_work", "thpool_wait",
    "thpool_destroy", "thpool_pause",    "thpool_resume",
    "thread_init",    "thread_hold",     "thread_do",
    "thread_destroy", "jobqueue_init",   "jobqueue_clear",
    "jobqueue_push",  "jobqueue_pull",   "jobqueue_destroy",
    "bsem_init",      "bsem_reset",      "bsem_post",
    "bsem_post_all",  "bsem_wait",       NULL};

static atomic_uint highest; /* highest N + 1 seen */

int bwsh__thpool_pool_of_name(const char *name) {
  size_t n = strlen(PREFIX);
  if (strncmp(name, PREFIX, n) != 0 || !name[n])
    return -1;
  unsigned index = 0;
  for (const char *p = name + n; *p; p++) {
    if (*p < '0' || *p > '9' || index > 100000)
      return -1;
    index = index * 10 + (unsigned)(*p - '0');
  }
  unsigned size = index + 1;
  int p = bwsh__pool_foreign(BW_POOL_CTHREADPOOL, 0, "thread-pool", size);
  unsigned seen = atomic_load(&highest);
  while (size > seen && !atomic_compare_exchange_weak(&highest, &seen, size))
    ;
  if (size > seen)
    bwsh__pool_resize(p, size, bwsh__now_ns());
  return p;
}

static int is_own_function(const char *name) {
  for (int i = 0; own_functions[i]; i++)
    if (strcmp(name, own_functions[i]) == 0)
      return 1;
  return 0;
}

/* Call site -> 1 (the pool's own) or 2 (an item's). */
static bwsh__verdict_slot sites[SITES];

static int verdict_of(void *caller) {
  bwsh__sym frames[8];
  /* symbolize.c's session stays open for the report (as worker_start's
   * lookups leave it): closing it here could pull it from under a report
   * another thread is writing. */
  int n = bwsh__symbolize_inline(caller, frames, 8, 0);
  if (n < 1 || !frames[0].function[0] || strchr(frames[0].function, '+'))
    return 1; /* no name: see the invariants */
  return is_own_function(frames[0].function) ? 1 : 2;
}

int bwsh__thpool_own_call(void *caller) {
  return bwsh__verdict(sites, SITES, caller, verdict_of) == 1;
}
