/* thpool_target - Debian's C-Thread-Pool (thpool.c compiled in, as its
 * README says) as a program uses it, for the shim's foreign-pool tests
 * (test_pools.c).
 *
 * Invariants: SLEEPERS items that each sleep 200 ms (one usleep: one
 * blocking call per item) on a pool of 2 threads, then a probe item that
 * does not block, whose queue wait the program prints as it measures it
 * ("probe_wait_us N", from thpool_add_work to the start of the item);
 * "items N" once thpool_wait returned. Between items the pool's threads
 * wait in pthread_cond_wait (bsem_wait) and take its locks.
 */
#include "pool_target.h"

#include <stdio.h>
#include <thpool.h>
#include <unistd.h>

#define SLEEPERS 6

static int done;
static unsigned long long probe_added_ns, probe_started_ns;

static void sleepy(void *arg) {
  (void)arg;
  usleep(200 * 1000);
  __atomic_add_fetch(&done, 1, __ATOMIC_SEQ_CST);
}

static void probe(void *arg) {
  (void)arg;
  probe_started_ns = pool_target_now_ns();
  __atomic_add_fetch(&done, 1, __ATOMIC_SEQ_CST);
}

int main(void) {
  threadpool pool = thpool_init(2);
  for (int i = 0; i < SLEEPERS; i++)
    thpool_add_work(pool, sleepy, NULL);
  probe_added_ns = pool_target_now_ns();
  thpool_add_work(pool, probe, NULL);
  thpool_wait(pool);
  thpool_destroy(pool);
  printf("probe_wait_us %llu\n", (probe_started_ns - probe_added_ns) / 1000);
  printf("items %d\n", done);
  return done == SLEEPERS + 1 ? 0 : 1;
}
