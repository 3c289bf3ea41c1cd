/* sync.c - the waiter queue under the async semaphore, event and mutex:
 * units, and a FIFO of pending acquire tasks that gives complete.
 *
 * Invariants:
 *  - units, the list and every waiter's `queued` change under mu. A give
 *    hands units to queued waiters before it lets them count as free, so
 *    while a waiter is queued no unit is free (a manual event completes all
 *    its waiters when set); that is the FIFO order.
 *  - A waiter leaves the list once, taken by a give (its task completes
 *    with NULL), by its token's cancel (canceled) or by destroy (completed
 *    with -ESHUTDOWN). Whoever unlinks it resolves its task after mu is
 *    released: completing a task runs continuation code that takes pool
 *    locks, and mu must not come before them.
 *  - mu is held around bwrt__token_register only, so the order is
 *    sync->mu -> token->mu; a token's fire runs with no token lock held and
 *    takes mu then, which keeps the order.
 *  - A waiter's references: the list's (held by its unlinker until it has
 *    resolved the task) and, while a token registration is linked or its
 *    fire runs, the registration's. The waiter holds one reference on its
 *    task, its token and the sync, so a fire racing destroy finds mu alive;
 *    a give holds one on the sync while it completes waiters, whose owners
 *    may destroy it meanwhile.
 *  - A task the user canceled directly (bw_task_cancel) stays queued until
 *    a give reaches it; that give's unit passes to the next waiter.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "internal.h"

struct bwrt__sync_waiter {
  bwrt__sync_waiter *prev, *next;
  bwrt__sync *sync;
  bw_task *task;
  bw_cancel_token *token;
  bwrt__cancel_reg reg;
  int queued; /* under sync->mu */
  _Atomic unsigned refs;
};

bwrt__sync *bwrt__sync_create(size_t size, unsigned units, unsigned cap,
                              int manual) {
  bwrt__sync *s = calloc(1, size);
  if (s == NULL) {
    errno = ENOMEM;
    return NULL;
  }
  pthread_mutex_init(&s->mu, NULL);
  atomic_init(&s->units, units < cap ? units : cap);
  s->cap = cap;
  s->manual = manual != 0;
  atomic_init(&s->waiting, 0);
  atomic_init(&s->refs, 1);
  return s;
}

static void sync_release(bwrt__sync *s) {
  if (atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
    return;
  pthread_mutex_destroy(&s->mu);
  free(s);
}

static void waiter_release(bwrt__sync_waiter *w) {
  if (atomic_fetch_sub_explicit(&w->refs, 1, memory_order_acq_rel) != 1)
    return;
  bw_task_release(w->task);
  bw_cancel_token_release(w->token);
  sync_release(w->sync);
  free(w);
}

/* Caller holds mu. */
static void unlink_waiter(bwrt__sync *s, bwrt__sync_waiter *w) {
  if (w->prev != NULL)
    w->prev->next = w->next;
  else
    s->head = w->next;
  if (w->next != NULL)
    w->next->prev = w->prev;
  else
    s->tail = w->prev;
  w->queued = 0;
  w->prev = w->next = NULL;
  atomic_store_explicit(
      &s->waiting, atomic_load_explicit(&s->waiting, memory_order_relaxed) - 1,
      memory_order_relaxed);
}

/* Unlinks the waiters that *units can serve, oldest first, and returns
 * them as a list linked through `next`. Caller holds mu. */
static bwrt__sync_waiter *pop_served(bwrt__sync *s, unsigned *units) {
  bwrt__sync_waiter *list = NULL, **tail = &list;
  while (*units > 0 && s->head != NULL) {
    bwrt__sync_waiter *w = s->head;
    unlink_waiter(s, w);
    if (!s->manual)
      (*units)--;
    *tail = w;
    tail = &w->next;
  }
  return list;
}

/* Resolves the task of a waiter this thread unlinked, withdraws its token
 * registration and drops the list's reference. Returns bw_task_complete's
 * result: -EALREADY when the user had canceled the task. */
/* Resolves a waiter taken off the list: completed (err 0, it got its
 * unit) or canceled with err (-ESHUTDOWN: destroyed first). */
static int settle(bwrt__sync_waiter *w, int err) {
  int rc = err == 0 ? bw_task_complete(w->task, NULL)
                    : bw_task_cancel_with(w->task, err);
  if (w->token != NULL && bwrt__token_unregister(w->token, &w->reg))
    waiter_release(w); /* the registration's reference */
  waiter_release(w);
  return rc;
}

/* The token was canceled: the waiter leaves the list unless a give or
 * destroy took it first, which then resolve it. */
static void waiter_token_fire(bwrt__cancel_reg *reg) {
  bwrt__sync_waiter *w = BWRT__CONTAINER_OF(reg, bwrt__sync_waiter, reg);
  bwrt__sync *s = w->sync;
  pthread_mutex_lock(&s->mu);
  int mine = w->queued;
  if (mine)
    unlink_waiter(s, w);
  pthread_mutex_unlock(&s->mu);
  if (mine) {
    bw_task_cancel(w->task);
    waiter_release(w); /* the list's reference */
  }
  waiter_release(w); /* the registration's reference */
}

/* Takes a unit if one is free. Caller holds mu. */
static int take_locked(bwrt__sync *s) {
  unsigned units = atomic_load_explicit(&s->units, memory_order_relaxed);
  if (units == 0)
    return 0;
  if (!s->manual)
    atomic_store_explicit(&s->units, units - 1, memory_order_relaxed);
  return 1;
}

bw_task *bwrt__sync_take(bwrt__sync *s, bw_cancel_token *token) {
  bw_task *task = bw_completion_create(bw_current_pool());
  if (task == NULL)
    return NULL;
  if (bw_cancel_token_is_canceled(token)) {
    bw_task_cancel(task);
    return task;
  }
  pthread_mutex_lock(&s->mu);
  if (take_locked(s)) {
    pthread_mutex_unlock(&s->mu);
    bw_task_complete(task, NULL);
    return task;
  }
  bwrt__sync_waiter *w = malloc(sizeof(*w));
  if (w == NULL) {
    pthread_mutex_unlock(&s->mu);
    bw_task_release(task);
    errno = ENOMEM;
    return NULL;
  }
  w->sync = s;
  w->task = task;
  w->token = token;
  w->reg.fire = waiter_token_fire;
  w->reg.linked = 0;
  /* Registered before the waiter is visible, so whoever unlinks it finds
   * the registration in its final state. */
  if (token != NULL && bwrt__token_register(token, &w->reg)) {
    pthread_mutex_unlock(&s->mu); /* canceled meanwhile */
    free(w);
    bw_task_cancel(task);
    return task;
  }
  bw_task_retain(task);
  if (token != NULL)
    bwrt__token_retain(token);
  atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
  atomic_init(&w->refs, token != NULL ? 2 : 1);
  w->queued = 1;
  w->next = NULL;
  w->prev = s->tail;
  if (s->tail != NULL)
    s->tail->next = w;
  else
    s->head = w;
  s->tail = w;
  atomic_store_explicit(
      &s->waiting, atomic_load_explicit(&s->waiting, memory_order_relaxed) + 1,
      memory_order_relaxed);
  pthread_mutex_unlock(&s->mu);
  return task;
}

int bwrt__sync_try_take(bwrt__sync *s) {
  pthread_mutex_lock(&s->mu);
  int took = take_locked(s);
  pthread_mutex_unlock(&s->mu);
  return took;
}

int bwrt__sync_give(bwrt__sync *s, unsigned n, int saturate) {
  /* A continuation of a task completed here may destroy the primitive
   * while this call still runs (it got its unit, so it may): once there
   * are waiters to complete, hold a reference on the memory to the end. */
  int held = 0;
  for (;;) {
    pthread_mutex_lock(&s->mu);
    unsigned units = atomic_load_explicit(&s->units, memory_order_relaxed);
    if (n > s->cap - units) {
      if (!saturate) {
        pthread_mutex_unlock(&s->mu);
        return -EOVERFLOW;
      }
      n = s->cap - units;
    }
    units += n;
    bwrt__sync_waiter *list = pop_served(s, &units);
    atomic_store_explicit(&s->units, units, memory_order_relaxed);
    if (list != NULL && !held) {
      atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
      held = 1;
    }
    pthread_mutex_unlock(&s->mu);
    /* Units taken by waiters whose tasks the user canceled meanwhile go
     * back, to the next waiters (a manual event consumed none). */
    n = 0;
    while (list != NULL) {
      bwrt__sync_waiter *next = list->next;
      if (settle(list, 0) != 0 && !s->manual)
        n++;
      list = next;
    }
    if (n == 0)
      break;
    /* Counted once already, they fit unless gives raced; after a destroy
     * nobody waits and they stay. */
    saturate = 1;
  }
  if (held)
    sync_release(s);
  return 0;
}

void bwrt__sync_clear(bwrt__sync *s) {
  pthread_mutex_lock(&s->mu);
  atomic_store_explicit(&s->units, 0, memory_order_relaxed);
  pthread_mutex_unlock(&s->mu);
}

unsigned bwrt__sync_units(const bwrt__sync *s) {
  return atomic_load_explicit(&s->units, memory_order_relaxed);
}

size_t bwrt__sync_waiting(const bwrt__sync *s) {
  return atomic_load_explicit(&s->waiting, memory_order_relaxed);
}

void bwrt__sync_destroy(bwrt__sync *s) {
  pthread_mutex_lock(&s->mu);
  bwrt__sync_waiter *list = s->head;
  for (bwrt__sync_waiter *w = list; w != NULL; w = w->next)
    w->queued = 0;
  s->head = s->tail = NULL;
  atomic_store_explicit(&s->waiting, 0, memory_order_relaxed);
  pthread_mutex_unlock(&s->mu);
  while (list != NULL) {
    bwrt__sync_waiter *next = list->next;
    settle(list, -ESHUTDOWN);
    list = next;
  }
  sync_release(s);
}
