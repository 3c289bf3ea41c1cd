/* sites_target - call sites as the shim should file them: two jobs of a
 * hand-written pool that block through one shared helper, and a runtime
 * item that blocks through a library function (libuv's uv_sleep).
 *
 * Invariants: mode "pool" runs job_a then job_b on one thread named
 * "hp-worker" (worker_name=hp-*), each napping NAPS times through nap();
 * mode "library" runs one item on a bundled-runtime pool that calls
 * uv_sleep(SLEEP_MS) from library_item; mode "uv" queues work_a and work_b
 * on libuv's pool (uv_queue_work), each napping NAPS times through nap().
 * Built with debug info so the
 * report names these functions and this file; nothing else blocks a
 * worker.
 */
#define _GNU_SOURCE
#include <blockwatch/runtime.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

enum { NAPS = 3, NAP_US = 2000, SLEEP_MS = 20 };

static atomic_int naps;

/* The shared helper: one return address for both jobs' calls. */
static __attribute__((noinline)) void nap(void) {
  usleep(NAP_US);
  atomic_fetch_add(&naps, 1); /* no tail call: nap stays a frame */
}

static __attribute__((noinline)) void job_a(void) {
  for (int i = 0; i < NAPS; i++)
    nap();
  atomic_fetch_add(&naps, 0);
}

static __attribute__((noinline)) void job_b(void) {
  for (int i = 0; i < NAPS; i++)
    nap();
  atomic_fetch_add(&naps, 0);
}

static void *pool_thread(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "hp-worker");
  job_a();
  job_b();
  return NULL;
}

static atomic_int library_done;

static __attribute__((noinline)) void library_item(void *arg) {
  (void)arg;
  uv_sleep(SLEEP_MS);
  atomic_store(&library_done, 1);
}

static int run_library(void) {
  bw_pool_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.name = "lib";
  cfg.min_workers = 1;
  cfg.max_workers = 1;
  bw_pool *pool = bw_pool_create(&cfg);
  if (pool == NULL || bw_submit(pool, library_item, NULL) != 0)
    return 1;
  while (!atomic_load(&library_done))
    usleep(1000);
  bw_pool_destroy(pool);
  return 0;
}

static void work_a(uv_work_t *req) {
  (void)req;
  job_a();
}

static void work_b(uv_work_t *req) {
  (void)req;
  job_b();
}

static void work_done(uv_work_t *req, int status) {
  (void)req;
  (void)status;
}

static int run_uv(void) {
  uv_loop_t *loop = uv_default_loop();
  uv_work_t a, b;
  if (uv_queue_work(loop, &a, work_a, work_done) != 0 ||
      uv_queue_work(loop, &b, work_b, work_done) != 0)
    return 1;
  uv_run(loop, UV_RUN_DEFAULT);
  printf("naps %d\n", atomic_load(&naps));
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "pool") == 0) {
    pthread_t t;
    if (pthread_create(&t, NULL, pool_thread, NULL) != 0)
      return 1;
    pthread_join(t, NULL);
    printf("naps %d\n", atomic_load(&naps));
    return 0;
  }
  if (argc == 2 && strcmp(argv[1], "library") == 0)
    return run_library();
  if (argc == 2 && strcmp(argv[1], "uv") == 0)
    return run_uv();
  fprintf(stderr, "usage: sites_target pool|library|uv\n");
  return 2;
}
