/* report_target - the program the report tests run under the shim: call
 * sites of known blocked time, one of them inside an inlined function.
 *
 * Invariants: built with -O2 and debug info, so nap_ms really is inlined
 * into long_sleeper (always_inline) and the report must expand it; each
 * worker names itself "rep-<n>" before its first call (worker_name=rep-?);
 * "others" adds calls on the main thread (not a worker) of known counts;
 * stdout says, one "key value" per line, the lines of the two calls that
 * the inlined frames name and the load address of the program.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static atomic_int naps;
static int nap_line, call_line;

/* Makes a call and records its line: __LINE__ in a macro argument is the
 * line the macro is used on, whatever the formatter does to it. */
#define CALL_AT(line_var, call)                                                \
  do {                                                                         \
    call;                                                                      \
    line_var = __LINE__;                                                       \
  } while (0)

/* Inlined into its caller: the report shows it as a frame of its own. The
 * count after the call keeps the compiler from making it a tail call. */
static inline __attribute__((always_inline)) void nap_ms(unsigned ms) {
  struct timespec ts = {0, (long)ms * 1000000L};
  CALL_AT(nap_line, nanosleep(&ts, NULL));
  atomic_fetch_add(&naps, 1);
}

/* 3 x 20 ms of nanosleep: the site that blocked longest. */
static __attribute__((noinline)) void long_sleeper(void) {
  for (int i = 0; i < 3; i++) {
    CALL_AT(call_line, nap_ms(20));
  }
}

/* 1 x 36 ms of poll (one call: a loop of them is unrolled into two sites):
 * far from both neighbours in blocked time, so a loaded machine that makes
 * every 1 ms usleep late does not reorder the sites. */
static __attribute__((noinline)) void medium_poller(void) {
  poll(NULL, 0, 36);
  atomic_fetch_add(&naps, 1);
}

/* 5 x 1 ms of usleep: the most calls, the least time. */
static __attribute__((noinline)) void short_napper(void) {
  for (int i = 0; i < 5; i++)
    usleep(1000);
  atomic_fetch_add(&naps, 1);
}

static void *worker(void *arg) {
  char name[16];
  snprintf(name, sizeof name, "rep-%d", (int)(intptr_t)arg);
  pthread_setname_np(pthread_self(), name);
  if (arg == 0) {
    long_sleeper();
    medium_poller();
    short_napper();
  }
  return NULL;
}

/* "others": calls on the main thread, which is no worker: 7 usleep, 3
 * poll, 2 nanosleep, each of them short. */
static void other_thread_calls(void) {
  for (int i = 0; i < 7; i++)
    usleep(1);
  for (int i = 0; i < 3; i++)
    poll(NULL, 0, 1);
  struct timespec ns = {0, 1};
  for (int i = 0; i < 2; i++)
    nanosleep(&ns, NULL);
}

int main(int argc, char **argv) {
  /* "clean": workers that block on nothing. */
  int clean = argc > 1 && strcmp(argv[1], "clean") == 0;
  if (argc > 1 && strcmp(argv[1], "others") == 0)
    other_thread_calls();
  pthread_t th[2];
  for (intptr_t i = 0; i < 2; i++)
    pthread_create(&th[i], NULL, worker, clean ? (void *)(i + 1) : (void *)i);
  for (int i = 0; i < 2; i++)
    pthread_join(th[i], NULL);
  Dl_info info;
  if (dladdr((void *)&main, &info) == 0)
    return 1;
  printf("nap_line %d\ncall_line %d\nbase %lu\n", nap_line, call_line,
         (unsigned long)(uintptr_t)info.dli_fbase);
  return 0;
}
