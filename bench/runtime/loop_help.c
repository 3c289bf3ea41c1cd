/* loop_help.c - bw_bench_loop_help: who runs a parallel loop's ranges.
 *
 * The (e) rows of bw_bench_offload time whole loops; this says why a loop
 * is slow. It runs rounds of back-to-back bw_parallel_for loops of tiny
 * iterations, each round after a pause (as the offload bench pauses
 * between samples), and counts per loop the ranges run by a thread other
 * than the caller. A loop with none ran on the caller alone: its helper
 * was queued but never got a CPU in time (parked, woken late, or stuck
 * behind the caller on the caller's CPU). Prints how many loops ran alone
 * and the median time of the loops with and without help.
 *
 * usage: bw_bench_loop_help [--workers N] [--rounds N] [--loops N]
 *                           [--iterations N] [--pause-ms N]
 */
#include <blockwatch/runtime.h>

#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

typedef struct loop_seen {
  pthread_t caller;
  _Atomic uint64_t sum;
  _Atomic unsigned helped; /* ranges run by another thread */
} loop_seen;

static void body(size_t begin, size_t end, void *arg) {
  loop_seen *s = arg;
  uint64_t sum = 0;
  for (size_t i = begin; i < end; i++)
    sum += (uint64_t)i * 2654435761u;
  atomic_fetch_add_explicit(&s->sum, sum, memory_order_relaxed);
  if (!pthread_equal(pthread_self(), s->caller))
    atomic_fetch_add_explicit(&s->helped, 1, memory_order_relaxed);
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, size_t n) {
  if (n == 0)
    return 0.0;
  qsort(v, n, sizeof(*v), by_value);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

int main(int argc, char **argv) {
  unsigned long workers = 2, rounds = 20, loops = 20, n = 1000000, pause = 5;
  static const struct option opts[] = {
      {"workers", required_argument, NULL, 'w'},
      {"rounds", required_argument, NULL, 'r'},
      {"loops", required_argument, NULL, 'l'},
      {"iterations", required_argument, NULL, 'n'},
      {"pause-ms", required_argument, NULL, 'p'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  int c, at = 0;
  while ((c = getopt_long(argc, argv, "", opts, &at)) != -1) {
    int rc = 0;
    switch (c) {
    case 'w':
      rc = bench_parse_count(optarg, 1, 64, &workers);
      break;
    case 'r':
      rc = bench_parse_count(optarg, 1, 100000, &rounds);
      break;
    case 'l':
      rc = bench_parse_count(optarg, 1, 100000, &loops);
      break;
    case 'n':
      rc = bench_parse_count(optarg, 1, 1000000000, &n);
      break;
    case 'p':
      rc = bench_parse_count(optarg, 1, 10000, &pause);
      break;
    case 'h':
      printf("usage: %s [--workers N] [--rounds N] [--loops N] "
             "[--iterations N] [--pause-ms N]\n",
             argv[0]);
      return 0;
    default:
      return 2;
    }
    if (rc != 0) {
      fprintf(stderr, "bw_bench_loop_help: bad value '%s' for --%s\n", optarg,
              opts[at].name);
      return 2;
    }
  }
  bw_pool_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.min_workers = (unsigned)workers;
  cfg.max_workers = (unsigned)workers;
  cfg.flags = BW_POOL_NO_INJECTION;
  bw_pool *pool = bw_pool_create(&cfg);
  size_t total = rounds * loops;
  double *helped = calloc(total, sizeof(double));
  double *alone = calloc(total, sizeof(double));
  if (!pool || !helped || !alone) {
    fprintf(stderr, "bw_bench_loop_help: out of memory or no pool\n");
    return 1;
  }
  size_t nhelped = 0, nalone = 0, first_alone = 0;
  uint64_t want = (uint64_t)n * (n - 1) / 2 * 2654435761u;
  for (unsigned long r = 0; r < rounds; r++) {
    bench_sleep_ms(pause);
    for (unsigned long l = 0; l < loops; l++) {
      loop_seen s = {.caller = pthread_self(), .sum = 0, .helped = 0};
      uint64_t t0 = bench_now_ns();
      int rc = bw_parallel_for(pool, 0, n, 0, body, &s);
      double us = (double)(bench_now_ns() - t0) / 1e3;
      if (rc != 0 || atomic_load(&s.sum) != want) {
        fprintf(stderr, "bw_bench_loop_help: loop failed (%d)\n", rc);
        return 1;
      }
      if (atomic_load(&s.helped) > 0) {
        helped[nhelped++] = us;
      } else {
        alone[nalone++] = us;
        first_alone += l == 0;
      }
    }
  }
  bw_pool_destroy(pool);
  printf("%lu workers, %lu rounds of %lu loops of %lu iterations after "
         "%lu ms pauses\n",
         workers, rounds, loops, n, pause);
  printf("loops run on the caller alone: %zu of %zu (%zu of them the first "
         "of a round)\n",
         nalone, total, first_alone);
  printf("median us per loop: %.1f with help, %.1f alone\n",
         median(helped, nhelped), median(alone, nalone));
  free(helped);
  free(alone);
  return 0;
}
