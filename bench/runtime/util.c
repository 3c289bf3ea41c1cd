/* util.c - clock, sleep, a one-shot latch and the count parser shared by
 * the bench programs and peers.
 *
 * The latch is a mutex and a condition variable, not a spin: the waiter in
 * a benchmark is an outside thread and must not steal a CPU from the
 * workers it measures on a small machine.
 */
#include "bench.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

int bench_parse_count(const char *text, unsigned long min, unsigned long max,
                      unsigned long *out) {
  char *end;
  errno = 0;
  unsigned long value = strtoul(text, &end, 10);
  if (errno || end == text || *end != '\0' || value < min || value > max)
    return -EINVAL;
  *out = value;
  return 0;
}

uint64_t bench_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void bench_sleep_ms(unsigned ms) {
  struct timespec left = {.tv_sec = ms / 1000,
                          .tv_nsec = (long)(ms % 1000) * 1000000L};
  while (nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
}

struct bench_latch {
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  int open;
};

bench_latch *bench_latch_create(void) {
  bench_latch *latch = calloc(1, sizeof *latch);
  if (latch == NULL)
    return NULL;
  pthread_mutex_init(&latch->mutex, NULL);
  pthread_cond_init(&latch->cond, NULL);
  return latch;
}

void bench_latch_destroy(bench_latch *latch) {
  if (latch == NULL)
    return;
  pthread_cond_destroy(&latch->cond);
  pthread_mutex_destroy(&latch->mutex);
  free(latch);
}

void bench_latch_open(bench_latch *latch) {
  pthread_mutex_lock(&latch->mutex);
  latch->open = 1;
  pthread_cond_broadcast(&latch->cond);
  pthread_mutex_unlock(&latch->mutex);
}

void bench_latch_wait(bench_latch *latch) {
  pthread_mutex_lock(&latch->mutex);
  while (!latch->open)
    pthread_cond_wait(&latch->cond, &latch->mutex);
  pthread_mutex_unlock(&latch->mutex);
}

void bench_latch_reset(bench_latch *latch) {
  pthread_mutex_lock(&latch->mutex);
  latch->open = 0;
  pthread_mutex_unlock(&latch->mutex);
}
