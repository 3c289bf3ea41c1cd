/* polling_vs_signal - how fast a waiter notices an event: a polling loop
 * (`while (!done) usleep(1000)`) vs a continuation on a completion source.
 *
 * What it shows (seed: "Thread.Sleep vs Task.Delay vs SpinWait", the
 * wake-up latency table): the main thread sets an event after a random
 * 0-3 ms; a pool item notices it either by polling a flag every millisecond,
 * holding a worker the whole time, or by being a bw_then continuation of a
 * completion source that the event completes, holding nothing until then.
 * The latency is the time from the event to the waiter running.
 *
 * What to expect: the poller notices the event somewhere within its 1 ms
 * nap (median about half a millisecond, p99 about 1 ms); the continuation in
 * microseconds (median under 0.05 ms), tens of times sooner. One blocking
 * call: usleep in poll_until_set (rule blocking-sleep); nothing in the
 * completion-source version.
 *
 * Usage: polling_vs_signal [--full]   (default 200 runs each, --full 1000)
 */
#include <blockwatch/runtime.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "common/sample_util.h"

typedef struct run_state {
  atomic_int flag;   /* the polled event */
  double set_ms;     /* when the main thread set the event */
  double noticed_ms; /* when the waiter saw it */
  bw_task *noticed;  /* completed by the polling waiter when it saw it */
} run_state;

/* The polling waiter: occupies a worker, wakes every millisecond. */
static void poll_until_set(void *arg) {
  run_state *r = arg;
  while (!atomic_load(&r->flag))
    usleep(1000);
  r->noticed_ms = sample_now_ms();
  bw_task_complete(r->noticed, NULL);
}

/* The signalled waiter: runs only once the event completed the source. */
static void *on_signal(bw_task *event, void *arg) {
  (void)event;
  run_state *r = arg;
  r->noticed_ms = sample_now_ms();
  return NULL;
}

/* The main thread (not a worker) waits a random 0-3 ms before the event. */
static void pause_before_event(void) {
  long us = rand() % 3001;
  struct timespec ts = {.tv_sec = 0, .tv_nsec = us * 1000L};
  nanosleep(&ts, NULL);
}

static double one_polling_run(bw_pool *pool) {
  run_state r = {.noticed = bw_completion_create(pool)};
  atomic_init(&r.flag, 0);
  if (bw_submit(pool, poll_until_set, &r) != 0) {
    bw_task_release(r.noticed);
    return -1.0; /* nothing would ever notice the event */
  }
  pause_before_event();
  r.set_ms = sample_now_ms();
  atomic_store(&r.flag, 1);
  bw_wait(r.noticed, -1);
  bw_task_release(r.noticed);
  return r.noticed_ms - r.set_ms;
}

static double one_signal_run(bw_pool *pool) {
  run_state r = {0};
  bw_task *event = bw_completion_create(pool);
  bw_task *waiter = bw_then(event, on_signal, &r);
  pause_before_event();
  r.set_ms = sample_now_ms();
  bw_task_complete(event, NULL);
  bw_wait(waiter, -1);
  bw_task_release(waiter);
  bw_task_release(event);
  return r.noticed_ms - r.set_ms;
}

static void report(const char *label, double *lat, size_t n) {
  double median = sample_quantile(lat, n, 0.5);
  double p99 = sample_quantile(lat, n, 0.99);
  printf("%-26s median %7.3f ms   p99 %7.3f ms   (%zu runs)\n", label, median,
         p99, n);
}

int main(int argc, char **argv) {
  static const char *const known[] = {"--full", NULL};
  const char *bad = sample_unknown_flag(argc, argv, known);
  if (bad != NULL) {
    fprintf(stderr, "polling_vs_signal: unknown argument '%s'\n", bad);
    fprintf(stderr, "usage: polling_vs_signal [--full]\n");
    return 2;
  }
  size_t runs = sample_has_flag(argc, argv, "--full") ? 1000 : 200;
  double *poll_lat = calloc(runs, sizeof *poll_lat);
  double *signal_lat = calloc(runs, sizeof *signal_lat);
  bw_pool_config cfg = {.name = "wake", .min_workers = 2};
  bw_pool *pool = bw_pool_create(&cfg);
  if (pool == NULL || poll_lat == NULL || signal_lat == NULL) {
    perror("polling_vs_signal");
    return 1;
  }
  srand(42); /* the same event delays in every run of the sample */
  for (size_t i = 0; i < runs; i++) {
    poll_lat[i] = one_polling_run(pool);
    signal_lat[i] = one_signal_run(pool);
    if (poll_lat[i] < 0) {
      fprintf(stderr, "polling_vs_signal: could not submit the poller\n");
      return 1;
    }
  }
  printf("wake-up latency, event set after a random 0-3 ms:\n");
  report("polling (usleep 1 ms):", poll_lat, runs);
  report("completion source:", signal_lat, runs);
  bw_pool_destroy(pool);
  free(poll_lat);
  free(signal_lat);
  return 0;
}
