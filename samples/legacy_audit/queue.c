/* queue.c - the legacy job queue: forwards to bw_submit and counts jobs.
 *
 * Invariant: `finished` only grows; the drain completion source is completed
 * exactly once, by whichever job brings `finished` up to the drain target.
 */
#include <blockwatch/runtime.h>

#include <stdatomic.h>
#include <stddef.h>

#include "queue.h"

static atomic_uint finished;
static atomic_uint target;
static _Atomic(bw_task *) drained;

int legacy_queue_job(void (*fn)(void *ctx), void *ctx) {
  return bw_submit(NULL, fn, ctx);
}

void legacy_job_done(void) {
  unsigned now = atomic_fetch_add(&finished, 1) + 1;
  bw_task *t = atomic_load(&drained);
  if (t != NULL && now == atomic_load(&target))
    bw_task_complete(t, NULL);
}

int legacy_queue_drain(unsigned count) {
  bw_task *t = bw_completion_create(NULL);
  if (t == NULL)
    return -1;
  atomic_store(&target, count);
  atomic_store(&drained, t);
  /* Jobs may all have finished before `drained` was published. */
  if (atomic_load(&finished) >= count)
    bw_task_complete(t, NULL);
  int rc = bw_wait(t, -1);
  bw_task_release(t);
  return rc;
}
