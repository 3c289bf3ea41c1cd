/* two_pools_target - two pools of the bundled runtime starved at once, for
 * the timeline tests: each must keep its own counters and queue waits.
 *
 * Invariants: pools "alpha" and "beta" have one worker each and injection
 * off; each gets SLEEPERS items that usleep(SLEEP_MS) - the only blocking
 * calls on workers - so every item after the first waits while its pool's
 * only worker is blocked (SLEEPERS - 1 starved waits per pool). The program
 * prints "sleep_line N", the line of its usleep call, and "done 1".
 */
#include <blockwatch/runtime.h>

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum { SLEEPERS = 3, SLEEP_MS = 60 };

static atomic_uint remaining;
static atomic_int sleep_line;

/* One macro so that the line recorded is the line of the call. */
#define SLEEP_HERE()                                                           \
  (atomic_store(&sleep_line, __LINE__), usleep(SLEEP_MS * 1000))

static void sleeper(void *arg) {
  (void)arg;
  SLEEP_HERE();
  atomic_fetch_sub(&remaining, 1);
}

static bw_pool *make_pool(const char *name) {
  bw_pool_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.name = name;
  cfg.min_workers = 1;
  cfg.max_workers = 1;
  cfg.flags = BW_POOL_NO_INJECTION;
  return bw_pool_create(&cfg);
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  bw_pool *pools[2] = {make_pool("alpha"), make_pool("beta")};
  if (!pools[0] || !pools[1])
    return 1;
  atomic_store(&remaining, 2 * SLEEPERS);
  for (int i = 0; i < SLEEPERS; i++)
    for (int p = 0; p < 2; p++)
      bw_submit(pools[p], sleeper, NULL);
  while (atomic_load(&remaining))
    usleep(1000);
  bw_pool_destroy(pools[0]);
  bw_pool_destroy(pools[1]);
  printf("sleep_line %d\n", atomic_load(&sleep_line));
  printf("done 1\n");
  return 0;
}
