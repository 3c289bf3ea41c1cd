/* consumer.c - runs one task on an installed runtime and prints its result. */
#include <stdint.h>
#include <stdio.h>

#include <blockwatch/runtime.h>

static void *answer(void *arg) {
  return (void *)((uintptr_t)arg + 1);
}

int main(void) {
  bw_pool_config cfg = {.name = "consumer", .min_workers = 1};
  bw_pool *pool = bw_pool_create(&cfg);
  if (!pool)
    return 1;
  bw_task *task = bw_run(pool, answer, (void *)(uintptr_t)41);
  int rc = task ? bw_wait(task, 10000) : -1;
  uintptr_t result = task ? (uintptr_t)bw_task_result(task) : 0;
  if (task)
    bw_task_release(task);
  bw_pool_destroy(pool);
  printf("consumer: %lu %s\n", (unsigned long)result,
         rc == 0 ? "ok" : bw_strerror(rc));
  return rc == 0 ? 0 : 1;
}
