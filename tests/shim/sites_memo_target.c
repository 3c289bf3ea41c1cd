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
 * frame pointer); no function tail-calls, so each stays a frame.
 */
#define _GNU_SOURCE
#include <alloca.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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

static void *pool_thread(void *arg) {
  int turns = *(int *)arg;
  pthread_setname_np(pthread_self(), "hp-worker");
  for (int i = 0; i < ROUNDS; i++) {
    if (turns) {
      job_a();
      job_b();
    } else {
      size_t extra = (size_t)(i % 3) * 32;
      deep(extra);
      job_d(extra);
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 2 || (strcmp(argv[1], "turns") && strcmp(argv[1], "alloca"))) {
    fprintf(stderr, "usage: sites_memo_target turns|alloca\n");
    return 2;
  }
  int turns = strcmp(argv[1], "turns") == 0;
  pthread_t t;
  if (pthread_create(&t, NULL, pool_thread, &turns) != 0)
    return 1;
  pthread_join(t, NULL);
  printf("rounds %d\nsame_sp %d\n", ROUNDS, same_sp);
  return 0;
}
