/* sites_memo_target - two jobs of a hand-written pool that call one helper
 * by turns, many times, so a memo of their chains that mixed them would
 * show in the counts.
 *
 * Invariants: one thread named "hp-worker" (worker_name=hp-*) runs ROUNDS
 * rounds; mode "turns": job_a then job_b, each one sched_yield() through
 * yield_once(); mode "alloca": job_c (one frame deeper, through deep())
 * then job_d, each one sched_yield() through yield_alloca(), which sizes
 * its alloca so that both calls leave the helper with the same stack
 * pointer: the shim's frames then sit at the same depth while the helper's
 * return address into job_d lies where job_c's did not, and job_c's stale
 * copy lies inside the untouched alloca block. Built with -g twice: -O0,
 * and -O2 -fomit-frame-pointer (only the alloca helper keeps rbp as its
 * frame pointer); no function tail-calls, so each stays a frame. Mode
 * "signals": "turns" with some work between the jobs, while main sends the
 * worker SIGUSR1 every 20 us; its handler calls sched_yield() through
 * yield_once() from job_s.
 */
#define _GNU_SOURCE
#include <alloca.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

enum { ROUNDS = 3000 };

static void *volatile sink;
static char *deep_frame; /* the helper's frame address under job_c */
static int same_sp;      /* calls whose pointer matched job_c's */
static char *deep_sp;

static __attribute__((noinline)) void yield_once(void) {
  sched_yield();
  sink = NULL; /* no tail call: the helper stays a frame */
}

/* extra: bytes both jobs add in a round, so the depth also varies. */
static __attribute__((noinline)) void yield_alloca(size_t extra) {
  char *frame = __builtin_frame_address(0);
  if (deep_frame == NULL)
    deep_frame = frame;
  char *p = alloca(64 + extra + (size_t)(frame - deep_frame));
  sink = p; /* the block is never written */
  if (frame == deep_frame)
    deep_sp = p;
  else if (p == deep_sp)
    same_sp++;
  sched_yield();
  sink = NULL;
}

static __attribute__((noinline)) void job_a(void) {
  yield_once();
  sink = NULL; /* no tail call: the job stays a frame */
}

static __attribute__((noinline)) void job_b(void) {
  yield_once();
  sink = &deep_sp; /* not job_a's body: no identical-code folding */
}

static __attribute__((noinline)) void job_c(size_t extra) {
  yield_alloca(extra);
  sink = NULL;
}

static __attribute__((noinline)) void job_d(size_t extra) {
  yield_alloca(extra);
  sink = &deep_sp;
}

/* job_c one frame deeper than job_d: 512 bytes of its own. */
static __attribute__((noinline)) void deep(size_t extra) {
  volatile char pad[512];
  pad[0] = 0;
  job_c(extra);
  pad[1] = pad[0];
}

static __attribute__((noinline)) void job_s(void) {
  yield_once();
  sink = &same_sp;
}

static volatile sig_atomic_t handled;
static atomic_int worker_done;

/* A counted call from a signal handler, landing anywhere in the worker's
 * loop, the shim's memo included. */
static void on_signal(int sig) {
  (void)sig;
  job_s();
  handled++;
}

/* Work outside any wrapper, where most signals then land. */
static void spin(void) {
  for (volatile int i = 0; i < 2000; i++) {
  }
}

static void *pool_thread(void *arg) {
  int mode = *(int *)arg;
  pthread_setname_np(pthread_self(), "hp-worker");
  for (int i = 0; i < ROUNDS; i++) {
    if (mode == 1) {
      size_t extra = (size_t)(i % 3) * 32;
      deep(extra);
      job_d(extra);
      continue;
    }
    job_a();
    if (mode == 2)
      spin();
    job_b();
  }
  atomic_store(&worker_done, 1);
  return NULL;
}

int main(int argc, char **argv) {
  static const char *const modes[] = {"turns", "alloca", "signals"};
  int mode = 0;
  while (argc == 2 && mode < 3 && strcmp(argv[1], modes[mode]) != 0)
    mode++;
  if (argc != 2 || mode == 3) {
    fprintf(stderr, "usage: sites_memo_target turns|alloca|signals\n");
    return 2;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESTART;
  pthread_t t;
  if (sigaction(SIGUSR1, &sa, NULL) != 0 ||
      pthread_create(&t, NULL, pool_thread, &mode) != 0)
    return 1;
  while (mode == 2 && !atomic_load(&worker_done)) {
    pthread_kill(t, SIGUSR1);
    struct timespec nap = {0, 20000};
    nanosleep(&nap, NULL);
  }
  pthread_join(t, NULL);
  printf("rounds %d\nsame_sp %d\nsignals %d\n", ROUNDS, same_sp, (int)handled);
  return 0;
}
