/* test_alloc.c - the runtime's block recycling (runtime/src/alloc.c),
 * driven through its internal interface (linked against the static
 * library): blocks freed on one thread and reused on another, with every
 * handed-out block overwritten at once, as the runtime's callers do. The
 * allocator reads ahead in the lists it hands blocks out from (prefetching
 * the blocks it will hand out next); a read-ahead that ever reached a block
 * already handed out would follow the garbage written into it and crash or
 * hand a block out twice.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"

enum { N = 5000 }; /* several batches of the allocator's size */

typedef struct hand_over {
  void **blocks;
  size_t n;
  int cls;
} hand_over;

static void *free_all(void *arg) {
  hand_over *h = arg;
  for (size_t i = 0; i < h->n; i++)
    bw__free(h->cls, h->blocks[i]);
  return NULL;
}

static int cmp_ptr(const void *a, const void *b) {
  uintptr_t x = (uintptr_t) * (void *const *)a;
  uintptr_t y = (uintptr_t) * (void *const *)b;
  return x < y ? -1 : x > y;
}

static void reuse_across_threads(int cls, size_t size) {
  void **blocks = calloc(N, sizeof(void *));
  assert_non_null(blocks);
  for (int round = 0; round < 4; round++) {
    for (size_t i = 0; i < N; i++) {
      blocks[i] = bw__alloc(cls);
      assert_non_null(blocks[i]);
      assert_int_equal((uintptr_t)blocks[i] % 16u, 0);
      memset(blocks[i], 0xA5, size); /* the caller owns every byte */
    }
    qsort(blocks, N, sizeof(void *), cmp_ptr);
    for (size_t i = 1; i < N; i++)
      assert_true(blocks[i] != blocks[i - 1]); /* none handed out twice */
    /* Freed on another thread: they come back through the shared stack
     * of batches, the lists the allocator reads ahead in. */
    hand_over h = {.blocks = blocks, .n = N, .cls = cls};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, free_all, &h), 0);
    pthread_join(th, NULL);
  }
  free(blocks);
}

static void test_alloc_small_blocks_reused_across_threads(void **state) {
  (void)state;
  reuse_across_threads(BW__ALLOC_SMALL_CLASS, BW__ALLOC_SMALL);
}

static void test_alloc_large_blocks_reused_across_threads(void **state) {
  (void)state;
  reuse_across_threads(BW__ALLOC_LARGE_CLASS, BW__ALLOC_LARGE);
}

/* Interleaved: a few blocks out, a few back, on one thread, while batches
 * freed by another thread are being handed out (the read-ahead front meets
 * the end of a batch and the thread's own frees in every pattern). */
static void test_alloc_interleaved_with_own_frees(void **state) {
  (void)state;
  void **blocks = calloc(N, sizeof(void *));
  assert_non_null(blocks);
  for (size_t i = 0; i < N; i++)
    blocks[i] = bw__alloc(BW__ALLOC_SMALL_CLASS);
  hand_over h = {.blocks = blocks, .n = N, .cls = BW__ALLOC_SMALL_CLASS};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, free_all, &h), 0);
  pthread_join(th, NULL);
  void *held[7];
  for (int i = 0; i < 3 * N; i++) {
    int k = i % 7;
    if (i >= 7)
      bw__free(BW__ALLOC_SMALL_CLASS, held[k]);
    held[k] = bw__alloc(BW__ALLOC_SMALL_CLASS);
    assert_non_null(held[k]);
    memset(held[k], 0x5A, BW__ALLOC_SMALL);
  }
  for (int k = 0; k < 7; k++)
    bw__free(BW__ALLOC_SMALL_CLASS, held[k]);
  free(blocks);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_alloc_small_blocks_reused_across_threads),
      cmocka_unit_test(test_alloc_large_blocks_reused_across_threads),
      cmocka_unit_test(test_alloc_interleaved_with_own_frees),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
