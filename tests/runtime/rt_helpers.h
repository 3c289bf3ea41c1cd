/* rt_helpers.h - small helpers shared by the runtime tests: clocks, sleeps,
 * a one-shot gate, and spinning until a condition holds with a bound.
 *
 * Header-only (static inline) so each test binary stays one source file.
 */
#ifndef BW_TESTS_RT_HELPERS_H
#define BW_TESTS_RT_HELPERS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static inline uint64_t rt_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static inline void rt_sleep_ms(unsigned ms) {
  struct timespec ts = {.tv_sec = ms / 1000u,
                        .tv_nsec = (long)(ms % 1000u) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* A latch: threads wait until someone opens it. */
typedef struct rt_latch {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int open;
} rt_latch;

static inline void rt_latch_init(rt_latch *l) {
  pthread_mutex_init(&l->mu, NULL);
  pthread_cond_init(&l->cv, NULL);
  l->open = 0;
}

static inline void rt_latch_open(rt_latch *l) {
  pthread_mutex_lock(&l->mu);
  l->open = 1;
  pthread_cond_broadcast(&l->cv);
  pthread_mutex_unlock(&l->mu);
}

static inline void rt_latch_wait(rt_latch *l) {
  pthread_mutex_lock(&l->mu);
  while (!l->open)
    pthread_cond_wait(&l->cv, &l->mu);
  pthread_mutex_unlock(&l->mu);
}

static inline void rt_latch_destroy(rt_latch *l) {
  pthread_mutex_destroy(&l->mu);
  pthread_cond_destroy(&l->cv);
}

/* Polls an atomic counter until it reaches `want` or `limit_ms` passes;
 * returns the last value seen. Bounds are generous: the box is noisy. */
static inline long rt_wait_count(atomic_long *c, long want, unsigned limit_ms) {
  uint64_t end = rt_now_ms() + limit_ms;
  long v;
  while ((v = atomic_load(c)) < want && rt_now_ms() < end)
    rt_sleep_ms(1);
  return v;
}

#endif /* BW_TESTS_RT_HELPERS_H */
