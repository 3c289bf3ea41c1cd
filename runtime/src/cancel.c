/* cancel.c - cancellation tokens (CancellationTokenSource and token in one).
 *
 * Invariants:
 *  - `canceled` goes 0 -> 1 once, under mu; the registrations linked at that
 *    moment are detached under mu and fired after mu is released, so a fire
 *    callback may take any other lock (mu comes first in the lock order and
 *    is never held while calling out).
 *  - A registration is either linked (unregister removes it; fire never
 *    runs) or detached by cancel (fire runs exactly once); `linked` under mu
 *    tells which.
 *  - The token is freed when refs reaches 0: one for the creator, one for
 *    each delay task or wait that honours it.
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

struct bw_cancel_token {
  pthread_mutex_t mu;
  _Atomic int canceled;
  _Atomic unsigned refs;
  bwrt__cancel_reg *head;
};

bw_cancel_token *bw_cancel_token_create(void) {
  bw_cancel_token *t = calloc(1, sizeof(*t));
  if (t == NULL) {
    errno = ENOMEM;
    return NULL;
  }
  pthread_mutex_init(&t->mu, NULL);
  atomic_init(&t->canceled, 0);
  atomic_init(&t->refs, 1);
  return t;
}

bw_cancel_token *bwrt__token_retain(bw_cancel_token *token) {
  atomic_fetch_add_explicit(&token->refs, 1, memory_order_relaxed);
  return token;
}

bw_cancel_token *bw_cancel_token_retain(bw_cancel_token *token) {
  return token != NULL ? bwrt__token_retain(token) : NULL;
}

void bw_cancel_token_release(bw_cancel_token *token) {
  if (token == NULL)
    return;
  if (atomic_fetch_sub_explicit(&token->refs, 1, memory_order_acq_rel) != 1)
    return;
  pthread_mutex_destroy(&token->mu);
  free(token);
}

int bw_cancel_token_cancel(bw_cancel_token *token) {
  if (token == NULL)
    return -EINVAL;
  pthread_mutex_lock(&token->mu);
  if (atomic_load_explicit(&token->canceled, memory_order_relaxed)) {
    pthread_mutex_unlock(&token->mu);
    return 0;
  }
  atomic_store_explicit(&token->canceled, 1, memory_order_release);
  bwrt__cancel_reg *list = token->head;
  token->head = NULL;
  for (bwrt__cancel_reg *r = list; r != NULL; r = r->next)
    r->linked = 0;
  pthread_mutex_unlock(&token->mu);
  /* Each fire may free its registration: read `next` first. */
  while (list != NULL) {
    bwrt__cancel_reg *next = list->next;
    list->fire(list);
    list = next;
  }
  return 0;
}

int bw_cancel_token_is_canceled(const bw_cancel_token *token) {
  if (token == NULL)
    return 0;
  return atomic_load_explicit(&token->canceled, memory_order_acquire);
}

int bwrt__token_register(bw_cancel_token *token, bwrt__cancel_reg *reg) {
  pthread_mutex_lock(&token->mu);
  if (atomic_load_explicit(&token->canceled, memory_order_relaxed)) {
    pthread_mutex_unlock(&token->mu);
    reg->linked = 0;
    return 1;
  }
  reg->prev = NULL;
  reg->next = token->head;
  if (token->head != NULL)
    token->head->prev = reg;
  token->head = reg;
  reg->linked = 1;
  pthread_mutex_unlock(&token->mu);
  return 0;
}

int bwrt__token_unregister(bw_cancel_token *token, bwrt__cancel_reg *reg) {
  pthread_mutex_lock(&token->mu);
  int was_linked = reg->linked;
  if (was_linked) {
    if (reg->prev != NULL)
      reg->prev->next = reg->next;
    else
      token->head = reg->next;
    if (reg->next != NULL)
      reg->next->prev = reg->prev;
    reg->linked = 0;
  }
  pthread_mutex_unlock(&token->mu);
  return was_linked;
}
