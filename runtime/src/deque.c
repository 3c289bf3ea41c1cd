/* deque.c - a Chase-Lev work-stealing deque of items.
 *
 * Invariants:
 *  - Only the owning worker calls push and pop (at `bottom`); any thread may
 *    steal (at `top`). top <= bottom except transiently inside pop.
 *  - An item is handed out exactly once: the owner and a stealer racing for
 *    the last item both CAS `top`, and only the winner takes it.
 *  - Growing never frees the old buffer (a stealer may still read it); old
 *    buffers are chained on the new one and freed with the deque.
 *  - Orderings are seq_cst rather than the paper's fences, because
 *    ThreadSanitizer understands atomics but not fences. The seq_cst store of
 *    `bottom` in push is also what the park protocol in worker.c relies on.
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

#define DEQUE_INITIAL_CAPACITY 256

static bwrt__deque_buf *buf_new(int64_t capacity) {
  bwrt__deque_buf *b =
      malloc(sizeof(*b) + (size_t)capacity * sizeof(_Atomic(bwrt__item *)));
  if (b == NULL)
    return NULL;
  b->mask = capacity - 1;
  b->retired = NULL;
  for (int64_t i = 0; i < capacity; i++)
    atomic_init(&b->cells[i], NULL);
  return b;
}

int bwrt__deque_init(bwrt__deque *dq) {
  bwrt__deque_buf *b = buf_new(DEQUE_INITIAL_CAPACITY);
  if (b == NULL)
    return -ENOMEM;
  atomic_init(&dq->top, 0);
  atomic_init(&dq->bottom, 0);
  atomic_init(&dq->buf, b);
  return 0;
}

void bwrt__deque_free(bwrt__deque *dq) {
  bwrt__deque_buf *b = atomic_load_explicit(&dq->buf, memory_order_relaxed);
  while (b != NULL) {
    bwrt__deque_buf *older = b->retired;
    free(b);
    b = older;
  }
  atomic_store_explicit(&dq->buf, NULL, memory_order_relaxed);
}

/* Copies the live range [top, bottom) into a buffer twice the size. */
static bwrt__deque_buf *grow(bwrt__deque_buf *old, int64_t top,
                             int64_t bottom) {
  bwrt__deque_buf *b = buf_new((old->mask + 1) * 2);
  if (b == NULL)
    return NULL;
  for (int64_t i = top; i < bottom; i++) {
    bwrt__item *it =
        atomic_load_explicit(&old->cells[i & old->mask], memory_order_relaxed);
    atomic_store_explicit(&b->cells[i & b->mask], it, memory_order_relaxed);
  }
  b->retired = old;
  return b;
}

int bwrt__deque_push(bwrt__deque *dq, bwrt__item *it) {
  int64_t b = atomic_load_explicit(&dq->bottom, memory_order_relaxed);
  int64_t t = atomic_load_explicit(&dq->top, memory_order_acquire);
  bwrt__deque_buf *buf = atomic_load_explicit(&dq->buf, memory_order_relaxed);
  if (b - t > buf->mask) {
    bwrt__deque_buf *bigger = grow(buf, t, b);
    if (bigger == NULL)
      return -ENOMEM;
    atomic_store_explicit(&dq->buf, bigger, memory_order_release);
    buf = bigger;
  }
  atomic_store_explicit(&buf->cells[b & buf->mask], it, memory_order_relaxed);
  atomic_store_explicit(&dq->bottom, b + 1, memory_order_seq_cst);
  return 0;
}

bwrt__item *bwrt__deque_pop(bwrt__deque *dq) {
  /* Empty for sure (the common case of a worker looking for work): only
   * the owner adds items and `top` never decreases, so bottom <= top stays
   * true until this thread pushes. No fence then: a worker's every look
   * for work starts here. */
  if (atomic_load_explicit(&dq->bottom, memory_order_relaxed) <=
      atomic_load_explicit(&dq->top, memory_order_relaxed))
    return NULL;
  int64_t b = atomic_load_explicit(&dq->bottom, memory_order_relaxed) - 1;
  bwrt__deque_buf *buf = atomic_load_explicit(&dq->buf, memory_order_relaxed);
  atomic_store_explicit(&dq->bottom, b, memory_order_seq_cst);
  int64_t t = atomic_load_explicit(&dq->top, memory_order_seq_cst);
  if (t > b) { /* empty */
    atomic_store_explicit(&dq->bottom, b + 1, memory_order_relaxed);
    return NULL;
  }
  bwrt__item *it =
      atomic_load_explicit(&buf->cells[b & buf->mask], memory_order_relaxed);
  if (t == b) { /* the last item: race stealers for it */
    if (!atomic_compare_exchange_strong_explicit(
            &dq->top, &t, t + 1, memory_order_seq_cst, memory_order_relaxed))
      it = NULL;
    atomic_store_explicit(&dq->bottom, b + 1, memory_order_relaxed);
  }
  return it;
}

bwrt__item *bwrt__deque_steal(bwrt__deque *dq, int *lost_race) {
  int64_t t = atomic_load_explicit(&dq->top, memory_order_seq_cst);
  int64_t b = atomic_load_explicit(&dq->bottom, memory_order_seq_cst);
  if (t >= b)
    return NULL;
  bwrt__deque_buf *buf = atomic_load_explicit(&dq->buf, memory_order_acquire);
  bwrt__item *it =
      atomic_load_explicit(&buf->cells[t & buf->mask], memory_order_relaxed);
  if (!atomic_compare_exchange_strong_explicit(
          &dq->top, &t, t + 1, memory_order_seq_cst, memory_order_relaxed)) {
    if (lost_race != NULL)
      *lost_race = 1;
    return NULL;
  }
  return it;
}

size_t bwrt__deque_size(bwrt__deque *dq) {
  int64_t t = atomic_load_explicit(&dq->top, memory_order_seq_cst);
  int64_t b = atomic_load_explicit(&dq->bottom, memory_order_seq_cst);
  return b > t ? (size_t)(b - t) : 0;
}
