/* gqueue.c - the pool's global FIFO queue: a bounded lock-free ring
 * (D. Vyukov's MPMC queue) with a mutex-protected overflow list behind it.
 *
 * Invariants:
 *  - Ring cell c holds an item when seq + c == pos + 1 (pos: the producer
 *    ticket that filled it) and is free for ticket pos when seq + c == pos
 *    (seq is stored relative to the cell's index so that zeroed memory is a
 *    valid empty ring: calloc's untouched pages cost no memory until a burst
 *    reaches them). A ticket is taken by a CAS on tail (producers) or head
 *    (consumers), so each item is handed out once.
 *  - FIFO across the ring and the overflow: while the overflow list holds
 *    items every push goes there, and consumers take from the ring first,
 *    so every ring item is older than every overflow item (exactly FIFO for
 *    one producer; concurrent producers have no order to keep).
 *  - Closing (bw_pool_destroy) sets RING_CLOSED in tail and `closed` under
 *    ov_mu. The tail CAS is a push's linearization point, so a push either
 *    landed before the close (and destroy, which looks at the queue after
 *    closing, sees it) or fails; internal pushes then go to the overflow
 *    list, which accepts them while closed.
 *  - The tail CAS and the overflow length update are seq_cst: a producer's
 *    item is visible to bwrt__gq_nonempty() in the single total order, which
 *    the park protocol in worker.c relies on. A ticket taken but not yet
 *    written makes the queue look non-empty while pop returns NULL; the
 *    worker then polls again rather than parking (a short window).
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

/* A power of two. Large enough for a burst of 100,000 tiny items; only the
 * pages a burst reaches are ever touched. */
#define RING_CAPACITY ((size_t)1 << 17)
#define RING_CLOSED ((size_t)1 << (sizeof(size_t) * 8 - 1))

int bwrt__gq_init(bwrt__gqueue *q) {
  /* Zeroed memory is an empty ring (see the invariants). */
  q->cells = calloc(RING_CAPACITY, sizeof(*q->cells));
  if (q->cells == NULL)
    return -ENOMEM;
  q->mask = RING_CAPACITY - 1;
  atomic_init(&q->head, 0);
  atomic_init(&q->tail, 0);
  atomic_init(&q->ov_len, 0);
  q->ov_head = q->ov_tail = NULL;
  q->closed = 0;
  pthread_mutex_init(&q->ov_mu, NULL);
  return 0;
}

void bwrt__gq_free(bwrt__gqueue *q) {
  free(q->cells);
  q->cells = NULL;
  pthread_mutex_destroy(&q->ov_mu);
}

/* 0 pushed, -1 full or closed. */
static int ring_push(bwrt__gqueue *q, bwrt__item *it) {
  size_t pos = atomic_load_explicit(&q->tail, memory_order_relaxed);
  for (;;) {
    if (pos & RING_CLOSED)
      return -1;
    bwrt__gq_cell *c = &q->cells[pos & q->mask];
    size_t seq =
        atomic_load_explicit(&c->seq, memory_order_acquire) + (pos & q->mask);
    intptr_t diff = (intptr_t)seq - (intptr_t)pos;
    if (diff == 0) {
      if (atomic_compare_exchange_weak_explicit(&q->tail, &pos, pos + 1,
                                                memory_order_seq_cst,
                                                memory_order_relaxed)) {
        c->item = it;
        atomic_store_explicit(&c->seq, pos + 1 - (pos & q->mask),
                              memory_order_release);
        return 0;
      }
    } else if (diff < 0) {
      return -1; /* full */
    } else {
      pos = atomic_load_explicit(&q->tail, memory_order_relaxed);
    }
  }
}

static bwrt__item *ring_pop(bwrt__gqueue *q) {
  size_t pos = atomic_load_explicit(&q->head, memory_order_relaxed);
  for (;;) {
    bwrt__gq_cell *c = &q->cells[pos & q->mask];
    size_t seq =
        atomic_load_explicit(&c->seq, memory_order_acquire) + (pos & q->mask);
    intptr_t diff = (intptr_t)seq - (intptr_t)(pos + 1);
    if (diff == 0) {
      if (atomic_compare_exchange_weak_explicit(&q->head, &pos, pos + 1,
                                                memory_order_relaxed,
                                                memory_order_relaxed)) {
        bwrt__item *it = c->item;
        atomic_store_explicit(&c->seq, pos + q->mask + 1 - (pos & q->mask),
                              memory_order_release);
        return it;
      }
    } else if (diff < 0) {
      return NULL; /* empty, or the next ticket is still being written */
    } else {
      pos = atomic_load_explicit(&q->head, memory_order_relaxed);
    }
  }
}

int bwrt__gq_push(bwrt__gqueue *q, bwrt__item *it, int internal) {
  if (atomic_load_explicit(&q->ov_len, memory_order_relaxed) == 0 &&
      ring_push(q, it) == 0)
    return 0;
  it->next = NULL;
  pthread_mutex_lock(&q->ov_mu);
  if (q->closed && !internal) {
    pthread_mutex_unlock(&q->ov_mu);
    return -ESHUTDOWN;
  }
  if (q->ov_tail != NULL)
    q->ov_tail->next = it;
  else
    q->ov_head = it;
  q->ov_tail = it;
  atomic_fetch_add_explicit(&q->ov_len, 1, memory_order_seq_cst);
  pthread_mutex_unlock(&q->ov_mu);
  return 0;
}

int bwrt__gq_close(bwrt__gqueue *q) {
  size_t old =
      atomic_fetch_or_explicit(&q->tail, RING_CLOSED, memory_order_seq_cst);
  pthread_mutex_lock(&q->ov_mu);
  q->closed = 1;
  pthread_mutex_unlock(&q->ov_mu);
  return (old & RING_CLOSED) != 0;
}

bwrt__item *bwrt__gq_pop(bwrt__gqueue *q) {
  bwrt__item *it = ring_pop(q);
  if (it != NULL || atomic_load_explicit(&q->ov_len, memory_order_relaxed) == 0)
    return it;
  pthread_mutex_lock(&q->ov_mu);
  it = q->ov_head;
  if (it != NULL) {
    q->ov_head = it->next;
    if (q->ov_head == NULL)
      q->ov_tail = NULL;
    atomic_fetch_sub_explicit(&q->ov_len, 1, memory_order_seq_cst);
  }
  pthread_mutex_unlock(&q->ov_mu);
  return it;
}

size_t bwrt__gq_length(bwrt__gqueue *q) {
  size_t head = atomic_load_explicit(&q->head, memory_order_seq_cst);
  size_t tail =
      atomic_load_explicit(&q->tail, memory_order_seq_cst) & ~RING_CLOSED;
  size_t ring = tail > head ? tail - head : 0;
  return ring + atomic_load_explicit(&q->ov_len, memory_order_seq_cst);
}
