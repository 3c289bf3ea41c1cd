/* bw_bench_shim - what libblockwatch.so costs per intercepted call.
 *
 * Run natively and under LD_PRELOAD by bench/shim/run.sh, which prints the
 * difference. Each figure is the best of REPEATS runs of ITERS calls, in
 * nanoseconds per call (per lock/unlock pair for the mutex).
 *
 * Invariants: the same calls run on the main thread (never a worker) and on
 * a thread named "work-0" (a worker when the shim runs with
 * worker_name=work-*); output is "name ns" lines, one per measurement.
 * `bw_bench_shim N whole` instead times a whole small program (threads
 * sharing a mutex, computing, polling) and prints "whole.ms".
 */
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { REPEATS = 5 };
static long iters = 200000;

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Best-of-REPEATS ns per call of fn. */
static double measure(void (*fn)(long)) {
  double best = 1e30;
  for (int r = 0; r < REPEATS; r++) {
    double t0 = now_ns();
    fn(iters);
    double dt = (now_ns() - t0) / (double)iters;
    if (dt < best)
      best = dt;
  }
  return best;
}

/* poll with a zero timeout: wrapped, but the gate says it cannot block. */
static void poll_zero(long n) {
  for (long i = 0; i < n; i++)
    poll(NULL, 0, 0);
}

/* sched_yield: wrapped and counted (category yield). */
static void yield(long n) {
  for (long i = 0; i < n; i++)
    sched_yield();
}

static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;

/* An uncontended pair: with lock=1 the shim tries first and counts nothing. */
static void mutex_pair(long n) {
  for (long i = 0; i < n; i++) {
    pthread_mutex_lock(&mtx);
    pthread_mutex_unlock(&mtx);
  }
}

static void run_all(const char *where) {
  printf("%s.poll_zero %.1f\n", where, measure(poll_zero));
  printf("%s.sched_yield %.1f\n", where, measure(yield));
  printf("%s.mutex_pair %.1f\n", where, measure(mutex_pair));
}

static void *worker(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "work-0");
  run_all("worker");
  return NULL;
}

/* ---- whole run: threads mixing locks, arithmetic and writes ------------ */

enum { WHOLE_THREADS = 4 };
static pthread_mutex_t shared = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long sink;

static void *whole_thread(void *arg) {
  (void)arg;
  unsigned long local = 0;
  for (long i = 0; i < iters; i++) {
    pthread_mutex_lock(&shared);
    sink++;
    pthread_mutex_unlock(&shared);
    for (int k = 0; k < 50; k++)
      local = local * 6364136223846793005u + 1442695040888963407u;
    if (i % 256 == 0)
      poll(NULL, 0, 0);
  }
  sink += local;
  return NULL;
}

/* Wall time of WHOLE_THREADS threads doing `iters` iterations, best of 5. */
static void whole(void) {
  double best = 1e30;
  for (int r = 0; r < REPEATS; r++) {
    pthread_t th[WHOLE_THREADS];
    double t0 = now_ns();
    for (int i = 0; i < WHOLE_THREADS; i++)
      pthread_create(&th[i], NULL, whole_thread, NULL);
    for (int i = 0; i < WHOLE_THREADS; i++)
      pthread_join(th[i], NULL);
    double ms = (now_ns() - t0) / 1e6;
    if (ms < best)
      best = ms;
  }
  printf("whole.ms %.1f\n", best);
}

int main(int argc, char **argv) {
  if (argc > 1)
    iters = strtol(argv[1], NULL, 10);
  if (argc > 2 && strcmp(argv[2], "whole") == 0) {
    whole();
    return 0;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  run_all("other");
  pthread_t th;
  pthread_create(&th, NULL, worker, NULL);
  pthread_join(th, NULL);
  return 0;
}
