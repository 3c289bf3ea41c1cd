/* uv_pool_target - libuv's thread pool as a program uses it, for the shim's
 * foreign-pool tests (test_pools.c).
 *
 * Invariants: "starve" queues SLEEPERS items that each sleep 200 ms (one
 * usleep: one blocking call per item) on libuv's default 4 threads, then a
 * probe item that does not block, and prints the probe's queue wait as the
 * program measures it ("probe_wait_us N", from its uv_queue_work call to
 * the start of its work_cb); "clean" queues CLEAN items that compute and
 * never block. Both print "items N" when every after_work_cb ran.
 */
#include "pool_target.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#define SLEEPERS 8
#define CLEAN 32

static uv_work_t reqs[SLEEPERS + CLEAN + 1];
static int done;
static unsigned long long probe_queued_ns, probe_started_ns;
static unsigned long sink; /* atomic: items run on 4 threads at once */

static void sleepy(uv_work_t *req) {
  (void)req;
  usleep(200 * 1000);
}

static void probe(uv_work_t *req) {
  (void)req;
  probe_started_ns = pool_target_now_ns();
}

static void compute(uv_work_t *req) {
  (void)req;
  unsigned long v = 0;
  for (unsigned long i = 0; i < 100000; i++)
    v += i * i;
  __atomic_store_n(&sink, v, __ATOMIC_RELAXED);
}

static void after(uv_work_t *req, int status) {
  (void)status;
  /* The program's req is its own again: work_cb is the one it gave. */
  if (req->work_cb != sleepy && req->work_cb != probe &&
      req->work_cb != compute)
    fprintf(stderr, "uv_pool_target: work_cb changed behind our back\n");
  done++;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "starve";
  uv_loop_t *loop = uv_default_loop();
  int n = 0;
  if (strcmp(mode, "clean") == 0) {
    for (; n < CLEAN; n++)
      uv_queue_work(loop, &reqs[n], compute, after);
  } else {
    for (; n < SLEEPERS; n++)
      uv_queue_work(loop, &reqs[n], sleepy, after);
    probe_queued_ns = pool_target_now_ns();
    uv_queue_work(loop, &reqs[n++], probe, after);
  }
  uv_run(loop, UV_RUN_DEFAULT);
  if (probe_started_ns)
    printf("probe_wait_us %llu\n", (probe_started_ns - probe_queued_ns) / 1000);
  printf("items %d\n", done);
  return done == n ? 0 : 1;
}
