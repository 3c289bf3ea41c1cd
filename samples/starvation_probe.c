/* starvation_probe - how long a trivial work item waits behind blocking ones,
 * with compensation off and on.
 *
 * What it shows (seed: "Thread.Sleep vs Task.Delay vs SpinWait", the 17 s
 * probe): N work items that each sleep fill a small pool; then a dedicated
 * thread queues one trivial item and measures how long it waited before it
 * started. With compensation off the probe waits until the sleepers have
 * drained: about N / workers x wait (the pool injects a thread only when no
 * item was dequeued for 500 ms, and sleepers finishing in rounds keep
 * dequeuing). With compensation on, each sleeper first announces that it is
 * about to block (bw_pool_notify_blocked, the way Java's ManagedBlocker does)
 * and the pool starts a spare worker at once, so the probe starts in
 * milliseconds.
 *
 * What to expect: "probe waited" about 2000 ms off, under a ms on (default
 * size); --full: about 50 s off (the seed's 10 threads: 17 s), under 0.1 s
 * on. One blocking call: nanosleep in sleep_ms, reached from both items.
 *
 * Usage: starvation_probe [--full] [--off-only | --on-only]
 *   default: 16 sleepers of 250 ms on 2 workers; --full: 200 of 1 s.
 * The line "probe waited X ms" is read by the shim's integration test.
 */
#include <blockwatch/runtime.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "common/sample_util.h"

typedef struct batch {
  unsigned wait_ms;
  atomic_uint remaining; /* sleepers still running */
  bw_task *done;         /* completed by the last sleeper */
} batch;

typedef struct probe {
  bw_pool *pool;
  double submitted_ms; /* set by the probe thread before bw_submit */
  double started_ms;   /* set by the probe item when it runs */
  bw_task *started;    /* completed by the probe item */
  int err;
} probe;

static void sleep_ms(unsigned ms) {
  struct timespec ts = {.tv_sec = ms / 1000,
                        .tv_nsec = (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static void finish(batch *b) {
  if (atomic_fetch_sub(&b->remaining, 1) == 1)
    bw_task_complete(b->done, NULL);
}

/* Compensation off: the worker is simply gone for wait_ms. */
static void blocking_item(void *arg) {
  batch *b = arg;
  sleep_ms(b->wait_ms);
  finish(b);
}

/* Compensation on: the same sleep, announced to the pool first. */
static void compensated_item(void *arg) {
  batch *b = arg;
  bw_pool_notify_blocked();
  sleep_ms(b->wait_ms);
  bw_pool_notify_unblocked();
  finish(b);
}

/* The trivial item whose queue wait is the measurement. */
static void probe_item(void *arg) {
  probe *p = arg;
  p->started_ms = sample_now_ms();
  bw_task_complete(p->started, NULL);
}

/* A thread of our own (not a worker), so waiting here starves nobody. */
static void *probe_thread(void *arg) {
  probe *p = arg;
  p->submitted_ms = sample_now_ms();
  p->err = bw_submit(p->pool, probe_item, p);
  if (p->err == 0)
    p->err = bw_wait(p->started, -1);
  return NULL;
}

static int run_variant(int compensate, unsigned items, unsigned wait_ms) {
  bw_pool_config cfg = {
      .name = compensate ? "probe-on" : "probe-off",
      .min_workers = 2,
      .max_workers = items + 4,
      .flags = compensate ? BW_POOL_COMPENSATE : 0,
  };
  bw_pool *pool = bw_pool_create(&cfg);
  if (pool == NULL) {
    perror("starvation_probe: bw_pool_create");
    return 1;
  }
  batch b = {.wait_ms = wait_ms, .done = bw_completion_create(pool)};
  atomic_init(&b.remaining, items);
  probe p = {.pool = pool, .started = bw_completion_create(pool)};

  double t0 = sample_now_ms();
  void (*sleeper)(void *) = blocking_item;
  if (compensate)
    sleeper = compensated_item;
  for (unsigned i = 0; i < items; i++) {
    int err = bw_submit(pool, sleeper, &b);
    if (err != 0) {
      fprintf(stderr, "starvation_probe: submit: %s\n", bw_strerror(err));
      bw_pool_destroy(pool); /* runs what was queued: it points at b */
      return 1;
    }
  }

  pthread_t tid;
  if (pthread_create(&tid, NULL, probe_thread, &p) != 0) {
    fprintf(stderr, "starvation_probe: cannot start the probe thread\n");
    return 1;
  }
  pthread_join(tid, NULL);
  int rc = bw_wait(b.done, -1);
  double batch_ms = sample_now_ms() - t0;

  bw_pool_stats st;
  bw_pool_stats_get(pool, &st);
  printf("compensation %s: %u sleepers of %u ms on %u workers\n",
         compensate ? "on " : "off", items, wait_ms, cfg.min_workers);
  if (p.err != 0 || rc != 0) {
    fprintf(stderr, "starvation_probe: %s\n",
            bw_strerror(p.err != 0 ? p.err : rc));
    return 1;
  }
  printf("  probe waited %.1f ms\n", p.started_ms - p.submitted_ms);
  printf("  all sleepers done in %.1f ms; pool threads now %u "
         "(%llu injected, %llu compensated)\n",
         batch_ms, st.workers, (unsigned long long)st.threads_injected,
         (unsigned long long)st.threads_compensated);
  bw_task_release(p.started);
  bw_task_release(b.done);
  return bw_pool_destroy(pool) == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
  static const char *const known[] = {"--full", "--off-only", "--on-only",
                                      NULL};
  const char *bad = sample_unknown_flag(argc, argv, known);
  if (bad != NULL) {
    fprintf(stderr,
            "starvation_probe: unknown argument '%s'\n"
            "usage: starvation_probe [--full] [--off-only | --on-only]\n",
            bad);
    return 2;
  }
  int full = sample_has_flag(argc, argv, "--full");
  unsigned items = full ? 200 : 16;
  unsigned wait_ms = full ? 1000 : 250;

  if (!sample_has_flag(argc, argv, "--on-only") &&
      run_variant(0, items, wait_ms) != 0)
    return 1;
  if (!sample_has_flag(argc, argv, "--off-only") &&
      run_variant(1, items, wait_ms) != 0)
    return 1;
  return 0;
}
