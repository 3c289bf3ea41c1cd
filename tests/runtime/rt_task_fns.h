/* rt_task_fns.h - task functions shared by the runtime's task tests: a run
 * function that returns its argument, and continuations that add one to
 * the antecedent's result or report the state it ended in.
 *
 * Header-only (static inline), like rt_helpers.h.
 */
#ifndef BW_TESTS_RT_TASK_FNS_H
#define BW_TESTS_RT_TASK_FNS_H

#include <stdint.h>

#include "blockwatch/runtime.h"

/* bw_run: the task's result is `arg`. */
static inline void *rt_return_arg(void *arg) {
  return arg;
}

/* bw_then: the antecedent's result (an integer) plus one. */
static inline void *rt_add_one(bw_task *done, void *arg) {
  (void)arg;
  return (void *)((uintptr_t)bw_task_result(done) + 1);
}

/* bw_then: the antecedent's final state (BW_TASK_COMPLETED or
 * BW_TASK_CANCELED) as the result. */
static inline void *rt_note_state(bw_task *done, void *arg) {
  (void)arg;
  return (void *)(uintptr_t)bw_task_state_get(done);
}

#endif
