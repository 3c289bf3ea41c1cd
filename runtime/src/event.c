/* event.c - async manual- and auto-reset events: a waiter queue (sync.c)
 * with one unit, the event's "set" state.
 *
 * Invariants: a manual event's waits never consume the unit, and a set
 * completes every pending wait; an auto event's set gives at most one
 * unit (setting a set event changes nothing), taken by the oldest wait.
 */
#include <errno.h>

#include "internal.h"

struct bw_event {
  bwrt__sync sync;
};

bw_event *bw_event_create(int manual_reset) {
  bwrt__sync *s = bwrt__sync_create(sizeof(bw_event), 0, 1, manual_reset);
  return s != NULL ? BWRT__CONTAINER_OF(s, bw_event, sync) : NULL;
}

int bw_event_set(bw_event *e) {
  if (e == NULL)
    return -EINVAL;
  return bwrt__sync_give(&e->sync, 1, 1);
}

int bw_event_reset(bw_event *e) {
  if (e == NULL)
    return -EINVAL;
  bwrt__sync_clear(&e->sync);
  return 0;
}

bw_task *bw_event_wait(bw_event *e, bw_cancel_token *token) {
  if (e == NULL) {
    errno = EINVAL;
    return NULL;
  }
  return bwrt__sync_take(&e->sync, token);
}

int bw_event_is_set(const bw_event *e) {
  return e != NULL && bwrt__sync_units(&e->sync) > 0;
}

int bw_event_destroy(bw_event *e) {
  if (e == NULL)
    return -EINVAL;
  bwrt__sync_destroy(&e->sync);
  return 0;
}
