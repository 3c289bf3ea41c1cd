/* delay_vs_sleep - N timed waits as bw_delay continuations vs N sleeping
 * work items, both on the default pool.
 *
 * What it shows (seed: "Blocking Threads vs Awaiting: 100 Waits Took 1 Second
 * or 5 Seconds"): a bw_delay holds no worker while it waits, so all N waits
 * overlap and the batch takes one wait. A work item that sleeps holds a
 * worker for the whole wait, so the batch runs in rounds of `workers` items:
 * about items / workers x wait, less whatever starvation injection adds.
 *
 * What to expect: the delay half ends in about one wait (200 ms by default,
 * 1 s with --full) on the pool's starting workers; the sleep half takes
 * items / workers times longer (2 s by default on 2 workers). One
 * blocking call, in the sleep half (nanosleep in sleep_item, which blockscan
 * reports and the shim counts); the delay half has none.
 *
 * Usage: delay_vs_sleep [--full] [--delay-only | --sleep-only]
 *   default: 20 waits of 200 ms; --full: the seed's 100 waits of 1 s.
 */
#include <blockwatch/runtime.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "common/sample_util.h"

typedef struct batch {
  unsigned wait_ms;
  atomic_uint remaining; /* items still running; the last completes `done` */
  bw_task *done;         /* completion source the main thread waits on */
} batch;

/* The non-blocking wait: runs on a worker only after the timer fired. */
static void *on_delay_done(bw_task *delay, void *arg) {
  (void)delay;
  batch *b = arg;
  if (atomic_fetch_sub(&b->remaining, 1) == 1)
    bw_task_complete(b->done, NULL);
  return NULL;
}

/* The blocking wait: the worker sleeps and can run nothing else meanwhile. */
static void sleep_item(void *arg) {
  batch *b = arg;
  struct timespec ts = {.tv_sec = b->wait_ms / 1000,
                        .tv_nsec = (long)(b->wait_ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
  if (atomic_fetch_sub(&b->remaining, 1) == 1)
    bw_task_complete(b->done, NULL);
}

/* Waits for the batch from the main thread (not a worker, so blocking is
 * fine here), sampling the pool so the peak thread count is known. */
static int wait_batch(batch *b, unsigned *peak_workers) {
  bw_pool_stats st;
  int rc;
  do {
    rc = bw_wait(b->done, 20);
    if (bw_pool_stats_get(NULL, &st) == 0 && st.workers > *peak_workers)
      *peak_workers = st.workers;
  } while (rc == -ETIMEDOUT);
  return rc;
}

static int run_delays(unsigned items, unsigned wait_ms) {
  batch b = {.wait_ms = wait_ms, .done = bw_completion_create(NULL)};
  atomic_init(&b.remaining, items);
  bw_pool_stats st;
  bw_pool_stats_get(NULL, &st);
  unsigned start_workers = st.workers, peak = st.workers;

  double t0 = sample_now_ms();
  for (unsigned i = 0; i < items; i++) {
    bw_task *delay = bw_delay(NULL, wait_ms);
    bw_task *cont = delay ? bw_then(delay, on_delay_done, &b) : NULL;
    if (cont == NULL) {
      fprintf(stderr, "delay_vs_sleep: could not queue delay %u\n", i);
      return 1;
    }
    bw_task_release(delay);
    bw_task_release(cont);
  }
  int rc = wait_batch(&b, &peak);
  double elapsed = sample_now_ms() - t0;
  bw_task_release(b.done);
  if (rc != 0) {
    fprintf(stderr, "delay_vs_sleep: wait failed: %s\n", bw_strerror(rc));
    return 1;
  }
  printf("%u x bw_delay(%u ms):    %8.1f ms elapsed, pool threads %u at "
         "start, %u at peak\n",
         items, wait_ms, elapsed, start_workers, peak);
  printf("  arithmetic: the waits overlap, so about one wait = %u ms\n",
         wait_ms);
  return 0;
}

static int run_sleeps(unsigned items, unsigned wait_ms) {
  batch b = {.wait_ms = wait_ms, .done = bw_completion_create(NULL)};
  atomic_init(&b.remaining, items);
  bw_pool_stats before, after;
  bw_pool_stats_get(NULL, &before);
  unsigned peak = before.workers;

  double t0 = sample_now_ms();
  for (unsigned i = 0; i < items; i++) {
    int err = bw_submit(NULL, sleep_item, &b);
    if (err != 0) {
      fprintf(stderr, "delay_vs_sleep: submit: %s\n", bw_strerror(err));
      return 1;
    }
  }
  int rc = wait_batch(&b, &peak);
  double elapsed = sample_now_ms() - t0;
  bw_task_release(b.done);
  if (rc != 0) {
    fprintf(stderr, "delay_vs_sleep: wait failed: %s\n", bw_strerror(rc));
    return 1;
  }
  bw_pool_stats_get(NULL, &after);
  unsigned workers = before.workers ? before.workers : 1;
  printf(
      "%u x sleep item (%u ms): %8.1f ms elapsed, pool threads %u at "
      "start, %u at peak (%llu injected)\n",
      items, wait_ms, elapsed, before.workers, peak,
      (unsigned long long)(after.threads_injected - before.threads_injected));
  printf("  arithmetic: %u items / %u workers x %u ms = %u ms without "
         "injection\n",
         items, workers, wait_ms, (items + workers - 1) / workers * wait_ms);
  return 0;
}

int main(int argc, char **argv) {
  static const char *const known[] = {"--full", "--delay-only", "--sleep-only",
                                      NULL};
  const char *bad = sample_unknown_flag(argc, argv, known);
  if (bad != NULL) {
    fprintf(stderr,
            "delay_vs_sleep: unknown argument '%s'\n"
            "usage: delay_vs_sleep [--full] [--delay-only | --sleep-only]\n",
            bad);
    return 2;
  }
  int full = sample_has_flag(argc, argv, "--full");
  unsigned items = full ? 100 : 20;
  unsigned wait_ms = full ? 1000 : 200;
  int delays = !sample_has_flag(argc, argv, "--sleep-only");
  int sleeps = !sample_has_flag(argc, argv, "--delay-only");

  if (bw_pool_default() == NULL) {
    perror("delay_vs_sleep: default pool");
    return 1;
  }
  /* Delays first: injected threads from the sleep half would linger and
   * flatter the delay half's thread count. */
  if (delays && run_delays(items, wait_ms) != 0)
    return 1;
  if (sleeps && run_sleeps(items, wait_ms) != 0)
    return 1;
  return 0;
}
