/* test_leave_cpu.c - bwrt__leave_cpu (runtime/src/cpu_spread.c), through
 * the runtime's private header: a thread on the CPU it is asked to leave
 * moves off it and keeps its affinity mask; a thread elsewhere, one whose
 * mask holds no other CPU, and a CPU number out of range are left alone.
 * A parallel loop's helpers (which call it) keep their masks too, and a
 * helper that shares its caller's only CPU still takes part, since the
 * caller yields to it (parallel_for.c), while a caller whose pool has no
 * idle worker never yields.
 */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <pthread.h>

#include <cmocka.h>

#include "blockwatch/runtime.h"
#include "internal.h"
#include "rt_fixed_pool.h"

static int mask_of(cpu_set_t *set) {
  CPU_ZERO(set);
  return sched_getaffinity(0, sizeof *set, set);
}

static void set_mask(const cpu_set_t *set) {
  assert_int_equal(sched_setaffinity(0, sizeof *set, set), 0);
}

/* Moves: the thread runs elsewhere right after, its mask unchanged. The
 * scheduler may move a thread back at any time, so a few of the 20 tries
 * may find it on the old CPU again; a call that moved nothing finds it
 * there every time. */
static void test_moves_off_and_keeps_mask(void **state) {
  (void)state;
  cpu_set_t before, after;
  assert_int_equal(mask_of(&before), 0);
  if (CPU_COUNT(&before) < 2)
    skip(); /* nowhere to go */
  int moved = 0;
  for (int i = 0; i < 20; i++) {
    int cpu = sched_getcpu();
    assert_int_equal(bwrt__leave_cpu(cpu), 1);
    moved += sched_getcpu() != cpu;
    assert_int_equal(mask_of(&after), 0);
    assert_true(CPU_EQUAL(&before, &after));
  }
  assert_true(moved >= 15);
}

static void test_elsewhere_or_out_of_range_is_left_alone(void **state) {
  (void)state;
  cpu_set_t before, after;
  assert_int_equal(mask_of(&before), 0);
  int cpu = sched_getcpu();
  assert_int_equal(bwrt__leave_cpu(cpu + 1), 0);
  assert_int_equal(bwrt__leave_cpu(-1), 0);
  assert_int_equal(bwrt__leave_cpu(CPU_SETSIZE), 0);
  assert_int_equal(mask_of(&after), 0);
  assert_true(CPU_EQUAL(&before, &after));
}

/* A thread pinned to one CPU stays there: the call never widens or
 * empties a mask. */
static void test_single_cpu_mask_is_left_alone(void **state) {
  (void)state;
  cpu_set_t before, one, after;
  assert_int_equal(mask_of(&before), 0);
  int cpu = sched_getcpu();
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  set_mask(&one);
  assert_int_equal(bwrt__leave_cpu(cpu), 0);
  assert_int_equal(sched_getcpu(), cpu);
  assert_int_equal(mask_of(&after), 0);
  assert_true(CPU_EQUAL(&one, &after));
  set_mask(&before);
}

typedef struct masks_seen {
  cpu_set_t want;
  _Atomic int calls, other_masks;
} masks_seen;

static void record_mask(size_t begin, size_t end, void *arg) {
  (void)begin, (void)end;
  masks_seen *m = arg;
  cpu_set_t now;
  if (mask_of(&now) != 0 || !CPU_EQUAL(&now, &m->want))
    atomic_fetch_add(&m->other_masks, 1);
  atomic_fetch_add(&m->calls, 1);
}

/* Every participant of many loops (helpers that moved included) runs its
 * ranges with the mask the process gave it. */
static void test_parallel_loop_helpers_keep_their_masks(void **state) {
  (void)state;
  masks_seen m = {.calls = 0, .other_masks = 0};
  assert_int_equal(mask_of(&m.want), 0);
  bw_pool *pool = rt_fixed_pool("masks", 2);
  for (int i = 0; i < 200; i++)
    assert_int_equal(bw_parallel_for(pool, 0, 4096, 1, record_mask, &m), 0);
  bw_pool_destroy(pool);
  assert_int_equal(atomic_load(&m.calls), 200 * 4096);
  assert_int_equal(atomic_load(&m.other_masks), 0);
}

typedef struct who_ran {
  pthread_t caller;
  _Atomic uint64_t sum;
  _Atomic int by_helper; /* takes run by another thread than the caller */
} who_ran;

static void count_helper_takes(size_t begin, size_t end, void *arg) {
  who_ran *w = arg;
  uint64_t s = 0;
  for (size_t i = begin; i < end; i++)
    s += (uint64_t)i * 2654435761u;
  atomic_fetch_add(&w->sum, s);
  if (!pthread_equal(pthread_self(), w->caller))
    atomic_fetch_add(&w->by_helper, 1);
}

/* The caller and the pool's worker on one CPU: the woken helper can only
 * run when the caller lets it, and it cannot move away. A caller that
 * never yielded would run nearly every loop alone (each is far shorter
 * than a time slice: 1-2 of 20 had help, measured); one that yields while
 * no helper has started had help in 9-20 of 20 on the loaded 2-CPU VM
 * (other processes on that CPU take some of the yields). */
static void test_helper_on_the_callers_only_cpu_takes_part(void **state) {
  (void)state;
  cpu_set_t before, one;
  assert_int_equal(mask_of(&before), 0);
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu(), &one);
  set_mask(&one); /* the worker created below inherits it */
  bw_pool *pool = rt_fixed_pool("pinned", 1);
  enum { LOOPS = 40, N = 1000000 };
  int helped = 0;
  for (int i = 0; i < LOOPS; i++) {
    who_ran w = {.caller = pthread_self(), .sum = 0, .by_helper = 0};
    assert_int_equal(bw_parallel_for(pool, 0, N, 0, count_helper_takes, &w), 0);
    assert_int_equal(atomic_load(&w.sum),
                     (uint64_t)N * (N - 1) / 2 * 2654435761u);
    helped += atomic_load(&w.by_helper) > 0;
  }
  bw_pool_destroy(pool);
  set_mask(&before);
  print_message("helped %d of %d\n", helped, LOOPS);
  assert_true(helped >= LOOPS / 4);
}

typedef struct gate {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int open, entered;
} gate;

static void hold_worker(void *arg) {
  gate *g = arg;
  pthread_mutex_lock(&g->mu);
  g->entered = 1;
  pthread_cond_broadcast(&g->cv);
  while (!g->open)
    pthread_cond_wait(&g->cv, &g->mu);
  pthread_mutex_unlock(&g->mu);
}

/* The pool's only worker is held in an item: nobody can come, nobody is
 * on the caller's CPU because of the loop, and a yield would only give
 * the CPU away. The loop runs on the caller alone without one. */
static void test_caller_of_a_busy_pool_does_not_yield(void **state) {
  (void)state;
  bw_pool *pool = rt_fixed_pool("busy", 1);
  gate g = {.mu = PTHREAD_MUTEX_INITIALIZER,
            .cv = PTHREAD_COND_INITIALIZER,
            .open = 0,
            .entered = 0};
  assert_int_equal(bw_submit(pool, hold_worker, &g), 0);
  pthread_mutex_lock(&g.mu);
  while (!g.entered)
    pthread_cond_wait(&g.cv, &g.mu);
  pthread_mutex_unlock(&g.mu);

  enum { N = 1000000 };
  who_ran w = {.caller = pthread_self(), .sum = 0, .by_helper = 0};
  unsigned long yields = bwrt__tls_yields;
  assert_int_equal(bw_parallel_for(pool, 0, N, 0, count_helper_takes, &w), 0);
  assert_int_equal(atomic_load(&w.sum),
                   (uint64_t)N * (N - 1) / 2 * 2654435761u);
  assert_int_equal(bwrt__tls_yields - yields, 0);

  pthread_mutex_lock(&g.mu);
  g.open = 1;
  pthread_cond_broadcast(&g.cv);
  pthread_mutex_unlock(&g.mu);
  bw_pool_destroy(pool);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_moves_off_and_keeps_mask),
      cmocka_unit_test(test_elsewhere_or_out_of_range_is_left_alone),
      cmocka_unit_test(test_single_cpu_mask_is_left_alone),
      cmocka_unit_test(test_parallel_loop_helpers_keep_their_masks),
      cmocka_unit_test(test_helper_on_the_callers_only_cpu_takes_part),
      cmocka_unit_test(test_caller_of_a_busy_pool_does_not_yield),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
