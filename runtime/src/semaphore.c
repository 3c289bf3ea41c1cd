/* semaphore.c - the async counting semaphore (SemaphoreSlim.WaitAsync): a
 * waiter queue (sync.c) whose units are the semaphore's count.
 *
 * Invariants: the count never passes UINT_MAX (a release that would make
 * it is refused whole); a unit released while acquires are pending goes to
 * the oldest of them, never to a later try_acquire.
 */
#include <errno.h>
#include <limits.h>

#include "internal.h"

struct bw_semaphore {
  bwrt__sync sync;
};

bw_semaphore *bw_semaphore_create(unsigned initial) {
  bwrt__sync *s = bwrt__sync_create(sizeof(bw_semaphore), initial, UINT_MAX, 0);
  return s != NULL ? BWRT__CONTAINER_OF(s, bw_semaphore, sync) : NULL;
}

bw_task *bw_semaphore_acquire(bw_semaphore *s, bw_cancel_token *token) {
  if (s == NULL) {
    errno = EINVAL;
    return NULL;
  }
  return bwrt__sync_take(&s->sync, token);
}

int bw_semaphore_try_acquire(bw_semaphore *s) {
  if (s == NULL)
    return -EINVAL;
  return bwrt__sync_try_take(&s->sync) ? 0 : -EAGAIN;
}

int bw_semaphore_release(bw_semaphore *s, unsigned n) {
  if (s == NULL)
    return -EINVAL;
  return bwrt__sync_give(&s->sync, n, 0);
}

unsigned bw_semaphore_count(const bw_semaphore *s) {
  return s != NULL ? bwrt__sync_units(&s->sync) : 0;
}

size_t bw_semaphore_waiters(const bw_semaphore *s) {
  return s != NULL ? bwrt__sync_waiting(&s->sync) : 0;
}

int bw_semaphore_destroy(bw_semaphore *s) {
  if (s == NULL)
    return -EINVAL;
  bwrt__sync_destroy(&s->sync);
  return 0;
}
