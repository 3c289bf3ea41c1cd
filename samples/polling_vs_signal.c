/* polling_vs_signal - how fast a waiter notices an event: a polling loop
 * (`while (!done) usleep(1000)`) vs continuations that hold no thread, on a
 * completion source and on the runtime's async event (bw_event_wait).
 *
 * What it shows (seed: "Thread.Sleep vs Task.Delay vs SpinWait", the
 * wake-up latency table, where an event woke its waiter 50 times sooner
 * than a sleep-1-ms loop): the main thread, never a worker, sets an event
 * after a random 0-3 ms, and a waiter on the pool notices it
 *  - polling: an item checks a flag every millisecond, holding a worker
 *    the whole time;
 *  - completion source: a bw_then continuation of a completion source
 *    that the main thread completes;
 *  - async event: an item asks bw_event_wait for a task and returns at
 *    once; the task's bw_then continuation runs when the main thread's
 *    bw_event_set completes it. No thread waits in between.
 * The latency is the time from the event to the waiter running; the sample
 * prints its median and p99 per variant, then the polling median over the
 * async event's.
 *
 * What to expect: the poller notices the event somewhere within its 1 ms
 * nap (median about half a millisecond, p99 about 1 ms); both
 * continuations in microseconds (median under 0.05 ms), tens of times
 * sooner. One blocking call: usleep in poll_until_set (rule
 * blocking-sleep); nothing in the other two.
 *
 * Invariants: the main thread only sets events and waits for the waiters
 * (the pool has BW_POOL_NO_HELPING, so it never runs one of them itself);
 * an event's waiter is in place before the event is set, so the latency
 * holds no start-up time.
 *
 * Usage: polling_vs_signal [--full] [--poll-only | --event-only]
 *   (default 200 runs each, --full 1000; --poll-only and --event-only run
 *   that variant alone, for the shim's report of it)
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
  bw_event *event;   /* the async event (its variant only) */
  bw_task *armed;    /* completed once the event's waiter is in place */
  bw_task *waiter;   /* the continuation of the event's wait */
} run_state;

/* The polling waiter: occupies a worker, wakes every millisecond. */
static void poll_until_set(void *arg) {
  run_state *r = arg;
  while (!atomic_load(&r->flag))
    usleep(1000);
  r->noticed_ms = sample_now_ms();
  bw_task_complete(r->noticed, NULL);
}

/* The signalled waiter: runs only once the event completed its task. */
static void *on_signal(bw_task *event, void *arg) {
  run_state *r = arg;
  if (bw_task_error(event) == 0)
    r->noticed_ms = sample_now_ms();
  return NULL;
}

/* Asks for the event from a worker, so that the continuation runs on this
 * pool rather than the default one, and returns without waiting. */
static void arm_event_wait(void *arg) {
  run_state *r = arg;
  bw_task *wait = bw_event_wait(r->event, NULL);
  r->waiter = wait != NULL ? bw_then_consume(wait, on_signal, r) : NULL;
  if (r->waiter == NULL && wait != NULL)
    bw_task_release(wait);
  bw_task_complete(r->armed, NULL);
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

static double one_source_run(bw_pool *pool) {
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

/* One auto-reset event serves every run: each set completes the one wait
 * armed for it and leaves the event unset for the next. */
static double one_event_run(bw_pool *pool, bw_event *event) {
  run_state r = {.event = event, .armed = bw_completion_create(pool)};
  if (bw_submit(pool, arm_event_wait, &r) != 0) {
    bw_task_release(r.armed);
    return -1.0;
  }
  bw_wait(r.armed, -1);
  bw_task_release(r.armed);
  if (r.waiter == NULL)
    return -1.0;
  pause_before_event();
  r.set_ms = sample_now_ms();
  bw_event_set(event);
  bw_wait(r.waiter, -1);
  bw_task_release(r.waiter);
  return r.noticed_ms - r.set_ms;
}

/* Prints one variant's line; returns its median. */
static double report(const char *label, double *lat, size_t n) {
  double median = sample_quantile(lat, n, 0.5);
  double p99 = sample_quantile(lat, n, 0.99);
  printf("%-26s median %7.3f ms   p99 %7.3f ms   (%zu runs)\n", label, median,
         p99, n);
  return median;
}

typedef struct variants {
  int poll, source, event;
} variants;

/* Which variants to run, or -1 after printing the usage. */
static int parse_args(int argc, char **argv, variants *v, size_t *runs) {
  static const char *const known[] = {"--full", "--poll-only", "--event-only",
                                      NULL};
  static const char usage[] =
      "usage: polling_vs_signal [--full] [--poll-only | --event-only]\n";
  const char *bad = sample_unknown_flag(argc, argv, known);
  int poll_only = sample_has_flag(argc, argv, "--poll-only");
  int event_only = sample_has_flag(argc, argv, "--event-only");
  if (bad != NULL) {
    fprintf(stderr, "polling_vs_signal: unknown argument '%s'\n%s", bad, usage);
    return -1;
  }
  if (poll_only && event_only) {
    fprintf(stderr,
            "polling_vs_signal: --poll-only and --event-only exclude each "
            "other\n%s",
            usage);
    return -1;
  }
  v->poll = !event_only;
  v->source = !poll_only && !event_only;
  v->event = !poll_only;
  *runs = sample_has_flag(argc, argv, "--full") ? 1000 : 200;
  return 0;
}

int main(int argc, char **argv) {
  variants v;
  size_t runs;
  if (parse_args(argc, argv, &v, &runs) != 0)
    return 2;
  double *poll_lat = calloc(runs, sizeof *poll_lat);
  double *source_lat = calloc(runs, sizeof *source_lat);
  double *event_lat = calloc(runs, sizeof *event_lat);
  bw_pool_config cfg = {
      .name = "wake", .min_workers = 2, .flags = BW_POOL_NO_HELPING};
  bw_pool *pool = bw_pool_create(&cfg);
  bw_event *event = bw_event_create(0);
  if (pool == NULL || event == NULL || poll_lat == NULL || source_lat == NULL ||
      event_lat == NULL) {
    perror("polling_vs_signal");
    return 1;
  }
  srand(42); /* the same event delays in every run of the sample */
  for (size_t i = 0; i < runs; i++) {
    if (v.poll && (poll_lat[i] = one_polling_run(pool)) < 0) {
      fprintf(stderr, "polling_vs_signal: could not submit the poller\n");
      return 1;
    }
    if (v.source)
      source_lat[i] = one_source_run(pool);
    if (v.event && (event_lat[i] = one_event_run(pool, event)) < 0) {
      fprintf(stderr, "polling_vs_signal: could not wait for the event\n");
      return 1;
    }
  }
  printf("wake-up latency, event set after a random 0-3 ms:\n");
  double poll_median = 0, event_median = 0;
  if (v.poll)
    poll_median = report("polling (usleep 1 ms):", poll_lat, runs);
  if (v.source)
    report("completion source:", source_lat, runs);
  if (v.event)
    event_median = report("async event (bw_event):", event_lat, runs);
  if (v.poll && v.event)
    printf("polling / async event:     %.1fx at the median\n",
           event_median > 0 ? poll_median / event_median : 0.0);
  bw_event_destroy(event);
  bw_pool_destroy(pool);
  free(poll_lat);
  free(source_lat);
  free(event_lat);
  return 0;
}
