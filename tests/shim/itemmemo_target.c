/* itemmemo_target - one worker of a hand-written pool, named "mypool-0",
 * that reaches one helper chain from its idle loop and from an item by
 * turns, for the shim's memo of item verdicts (item_fn=job_*).
 *
 * Invariants:
 *  - Each of ROUNDS rounds makes three sched_yield calls on the worker,
 *    each from wait_step: idle_tick -> common -> wait_step (the pool's
 *    own), job_tick -> common -> wait_step (an item's: the same two
 *    nearest frames as the idle one) and job_two -> wait_step (an item's,
 *    from another caller of the helper). No other blocking call is made
 *    on the worker.
 *  - idle_tick and job_tick differ only in what they add to sink, so their
 *    frames are alike: common and wait_step run at the same stack depth
 *    from both, and the return addresses nearest the call lie in the same
 *    stack slots. Prints "rounds N" and "same_sp N" (the rounds whose
 *    job_tick ran wait_step at idle_tick's frame address) on stdout.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

enum { ROUNDS = 2000 };

static volatile int sink; /* keeps calls out of tail position */
static void *volatile step_frame;

static __attribute__((noinline)) void wait_step(void) {
  step_frame = __builtin_frame_address(0);
  sched_yield();
  sink++;
}

static __attribute__((noinline)) void common(void) {
  wait_step();
  sink++;
}

static __attribute__((noinline)) void idle_tick(void) {
  common();
  sink += 1;
}

static __attribute__((noinline)) void job_tick(void) {
  common();
  sink += 2;
}

static __attribute__((noinline)) void job_two(void) {
  wait_step();
  sink += 3;
}

static int same_sp;

static void *worker(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "mypool-0");
  for (int i = 0; i < ROUNDS; i++) {
    idle_tick();
    void *idle = step_frame;
    job_tick();
    same_sp += step_frame == idle;
    job_two();
  }
  return NULL;
}

int main(void) {
  pthread_t t;
  if (pthread_create(&t, NULL, worker, NULL) != 0)
    return 1;
  pthread_join(t, NULL);
  printf("rounds %d\nsame_sp %d\n", ROUNDS, same_sp);
  return 0;
}
