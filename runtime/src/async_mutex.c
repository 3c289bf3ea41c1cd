/* async_mutex.c - a mutex for critical sections that span continuations:
 * a waiter queue (sync.c) with one unit, free while unlocked.
 *
 * Invariants: the mutex belongs to no thread; an unlock with waiters
 * pending passes it to the oldest of them (it stays locked throughout), so
 * a try_lock never overtakes a queued lock.
 */
#include <errno.h>

#include "internal.h"

struct bw_async_mutex {
  bwrt__sync sync;
};

bw_async_mutex *bw_async_mutex_create(void) {
  bwrt__sync *s = bwrt__sync_create(sizeof(bw_async_mutex), 1, 1, 0);
  return s != NULL ? BWRT__CONTAINER_OF(s, bw_async_mutex, sync) : NULL;
}

bw_task *bw_async_mutex_lock(bw_async_mutex *m, bw_cancel_token *token) {
  if (m == NULL) {
    errno = EINVAL;
    return NULL;
  }
  return bwrt__sync_take(&m->sync, token);
}

int bw_async_mutex_try_lock(bw_async_mutex *m) {
  if (m == NULL)
    return -EINVAL;
  return bwrt__sync_try_take(&m->sync) ? 0 : -EBUSY;
}

int bw_async_mutex_unlock(bw_async_mutex *m) {
  if (m == NULL)
    return -EINVAL;
  return bwrt__sync_give(&m->sync, 1, 0) == 0 ? 0 : -EPERM;
}

int bw_async_mutex_is_locked(const bw_async_mutex *m) {
  return m != NULL && bwrt__sync_units(&m->sync) == 0;
}

int bw_async_mutex_destroy(bw_async_mutex *m) {
  if (m == NULL)
    return -EINVAL;
  bwrt__sync_destroy(&m->sync);
  return 0;
}
