/* sym_target.c - the program the symbolization tests run: many call sites
 * on one worker thread, one of them through an inlined function.
 *
 * Invariants: built with -O2 and debug info; the worker names itself
 * "sym-worker" (worker_name=sym-*); "sites N" (default 20, at most 20)
 * makes one 1 ms usleep from each of N distinct functions, then a 200 ms
 * nanosleep from an always_inline helper; "die" does the same, then
 * raises SIGTERM (handle_fatal=1 writes the report in the handler).
 * Nothing is printed.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static atomic_int calls;

/* One call site per function: the count after the call keeps it from
 * being a tail call. */
#define SITE(n)                                                                \
  static __attribute__((noinline)) void site_##n(void) {                       \
    usleep(1000);                                                              \
    atomic_fetch_add(&calls, 1);                                               \
  }
SITE(0)
SITE(1)
SITE(2)
SITE(3)
SITE(4)
SITE(5)
SITE(6)
SITE(7)
SITE(8)
SITE(9)
SITE(10)
SITE(11)
SITE(12)
SITE(13)
SITE(14)
SITE(15)
SITE(16)
SITE(17)
SITE(18)
SITE(19)

static void (*const sites[])(void) = {
    site_0,  site_1,  site_2,  site_3,  site_4,  site_5,  site_6,
    site_7,  site_8,  site_9,  site_10, site_11, site_12, site_13,
    site_14, site_15, site_16, site_17, site_18, site_19};

static inline __attribute__((always_inline)) void nap(void) {
  /* The worst site, by far: a 1 ms usleep of a loaded machine can take
   * tens of ms, never 200. */
  struct timespec ts = {0, 200000000};
  nanosleep(&ts, NULL);
  atomic_fetch_add(&calls, 1);
}

static __attribute__((noinline)) void napper(void) {
  nap();
  atomic_fetch_add(&calls, 1);
}

static void *worker(void *arg) {
  int n = *(int *)arg;
  pthread_setname_np(pthread_self(), "sym-worker");
  for (int i = 0; i < n; i++)
    sites[i]();
  napper();
  return NULL;
}

int main(int argc, char **argv) {
  int die = argc > 1 && strcmp(argv[1], "die") == 0;
  int n = argc > 2 ? atoi(argv[2]) : 20;
  if (n < 0 || n > 20)
    n = 20;
  pthread_t t;
  if (pthread_create(&t, NULL, worker, &n) != 0)
    return 1;
  pthread_join(t, NULL);
  if (die)
    raise(SIGTERM);
  return 0;
}
