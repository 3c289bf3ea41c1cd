/* runtime_target - the seed's starvation experiment on the bundled runtime,
 * run by the shim tests under LD_PRELOAD (linked against the shared or the
 * static runtime: the observer must work with both).
 *
 * Invariants: a 2-worker pool with injection off gets SLEEPERS items that
 * each usleep(SLEEP_MS) - the only blocking calls on workers - then a probe
 * item whose queue wait the program measures itself and prints as
 * "probe_wait_ms N". Modes: starve, compensate (BW_POOL_COMPENSATE, the
 * shim's compensate=1 announces each block), syncwait (one item polls a
 * bw_delay task with a zero timeout, then waits for it with bw_wait:
 * sync-over-async), many (MANY_ITEMS tiny items on a MANY_WORKERS-worker
 * pool, nothing blocking: the shim's per-thread item counts must add up),
 * offload (each of OFFLOADS items hands a usleep to bw_run_blocking and
 * waits for nothing; one bw_fd_ready waits on a pipe that the main thread
 * writes to later: nothing blocks a worker, OFFLOADS calls run on blocking
 * threads, and the poller's and idle threads' waits are the runtime's),
 * loops (LOOPS parallel loops of LOOP_N iterations from the main thread,
 * and as many from inside an item: the runtime's yields while it waits
 * for its helpers are its own, neither a worker's nor the program's).
 */
#include <blockwatch/runtime.h>

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { SLEEPERS = 6, SLEEP_MS = 200 };
enum { MANY_ITEMS = 20000, MANY_WORKERS = 4 };
enum { OFFLOADS = 3 };
enum { LOOPS = 40, LOOP_N = 1000000 };

static atomic_uint remaining;
static atomic_uint_least64_t probe_started_ns;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleeper(void *arg) {
  (void)arg;
  usleep(SLEEP_MS * 1000);
  atomic_fetch_sub(&remaining, 1);
}

static void probe(void *arg) {
  (void)arg;
  atomic_store(&probe_started_ns, now_ns());
}

static void sync_waiter(void *arg) {
  bw_pool *pool = arg;
  bw_task *delay = bw_delay(pool, 50);
  /* A zero timeout only polls: the rule's unless="arg1 is 0" says it does
   * not block, so only the second wait counts. */
  printf("bw_wait_poll %d\n", bw_wait(delay, 0) == -ETIMEDOUT);
  int rc = bw_wait(delay, -1);
  bw_task_release(delay);
  printf("bw_wait %d\n", rc);
  atomic_fetch_sub(&remaining, 1);
}

/* A pool of the runtime with injection off (the modes' workers are the
 * ones they ask for), or NULL. */
static bw_pool *pool_of(const char *name, unsigned min, unsigned max,
                        unsigned flags) {
  bw_pool_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.name = name;
  cfg.min_workers = min;
  cfg.max_workers = max;
  cfg.flags = flags;
  return bw_pool_create(&cfg);
}

static void tiny(void *arg) {
  (void)arg;
  atomic_fetch_sub(&remaining, 1);
}

static void *blocking_job(void *arg) {
  (void)arg;
  usleep(30 * 1000);
  atomic_fetch_sub(&remaining, 1);
  return NULL;
}

static void offloader(void *arg) {
  bw_task *t = bw_run_blocking(arg, blocking_job, NULL);
  if (t)
    bw_task_release(t);
}

static int run_offload(void) {
  bw_pool *pool = pool_of("off", 2, 2, BW_POOL_NO_INJECTION);
  int p[2];
  if (!pool || pipe(p) != 0)
    return 1;
  atomic_store(&remaining, OFFLOADS);
  for (int i = 0; i < OFFLOADS; i++)
    bw_submit(pool, offloader, pool);
  bw_task *ready = bw_fd_ready(pool, p[0], POLLIN, -1);
  while (atomic_load(&remaining))
    usleep(1000);
  if (!ready || write(p[1], "x", 1) != 1)
    return 1;
  while (bw_task_state_get(ready) == BW_TASK_PENDING)
    usleep(1000);
  printf("ready %d\n", (int)(intptr_t)bw_task_result(ready));
  bw_task_release(ready);
  bw_pool_destroy(pool);
  printf("done 1\n");
  return 0;
}

static atomic_uint_least64_t loop_sum;

static void loop_body(size_t begin, size_t end, void *arg) {
  (void)arg;
  uint64_t s = 0;
  for (size_t i = begin; i < end; i++)
    s += (uint64_t)i * 2654435761u;
  atomic_fetch_add(&loop_sum, s);
}

static void nested_loops(void *arg) {
  for (int i = 0; i < LOOPS; i++)
    bw_parallel_for(arg, 0, LOOP_N, 0, loop_body, NULL);
  atomic_fetch_sub(&remaining, 1);
}

static int run_loops(void) {
  bw_pool *pool = pool_of("loops", 2, 2, BW_POOL_NO_INJECTION);
  if (!pool)
    return 1;
  for (int i = 0; i < LOOPS; i++)
    if (bw_parallel_for(pool, 0, LOOP_N, 0, loop_body, NULL) != 0)
      return 1;
  atomic_store(&remaining, 1);
  bw_submit(pool, nested_loops, pool);
  while (atomic_load(&remaining))
    usleep(1000);
  bw_pool_destroy(pool);
  uint64_t one = (uint64_t)LOOP_N * (LOOP_N - 1) / 2 * 2654435761u;
  printf("sum_ok %d\n", atomic_load(&loop_sum) == one * 2 * LOOPS);
  printf("done 1\n");
  return 0;
}

/* Many short items spread over several workers, none blocking. */
static int run_many(void) {
  bw_pool *pool =
      pool_of("many", MANY_WORKERS, MANY_WORKERS, BW_POOL_NO_INJECTION);
  if (!pool)
    return 1;
  atomic_store(&remaining, MANY_ITEMS);
  for (int i = 0; i < MANY_ITEMS; i++)
    bw_submit(pool, tiny, NULL);
  while (atomic_load(&remaining))
    usleep(1000);
  bw_pool_destroy(pool);
  printf("done 1\n");
  return 0;
}

static int run(int compensate, int syncwait) {
  bw_pool *pool =
      pool_of("exp", 2, compensate ? 16 : 2,
              BW_POOL_NO_INJECTION | (compensate ? BW_POOL_COMPENSATE : 0u));
  if (!pool)
    return 1;
  if (syncwait) {
    atomic_store(&remaining, 1);
    bw_submit(pool, sync_waiter, pool);
  } else {
    atomic_store(&remaining, SLEEPERS);
    for (int i = 0; i < SLEEPERS; i++)
      bw_submit(pool, sleeper, NULL);
    uint64_t submitted = now_ns();
    bw_submit(pool, probe, NULL);
    while (!atomic_load(&probe_started_ns))
      usleep(1000);
    printf("probe_wait_ms %llu\n",
           (unsigned long long)((atomic_load(&probe_started_ns) - submitted) /
                                1000000u));
  }
  while (atomic_load(&remaining))
    usleep(1000);
  bw_pool_destroy(pool);
  printf("done 1\n");
  return 0;
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  const char *mode = argc > 1 ? argv[1] : "starve";
  if (strcmp(mode, "starve") == 0)
    return run(0, 0);
  if (strcmp(mode, "compensate") == 0)
    return run(1, 0);
  if (strcmp(mode, "syncwait") == 0)
    return run(0, 1);
  if (strcmp(mode, "many") == 0)
    return run_many();
  if (strcmp(mode, "offload") == 0)
    return run_offload();
  if (strcmp(mode, "loops") == 0)
    return run_loops();
  return 2;
}
