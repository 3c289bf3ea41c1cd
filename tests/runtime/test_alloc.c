/* test_alloc.c - the runtime's block recycling (runtime/src/alloc.c),
 * driven through its internal interface (linked against the static
 * library): blocks freed on one thread and reused on another, with every
 * handed-out block overwritten at once, as the runtime's callers do (a
 * block that any list or magazine still pointed to would be handed out
 * twice); reuse order (newest magazine first, the bound of the shared
 * stack), cache-line alignment, and chunks going back to the C library.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "internal.h"
#include "rt_helpers.h"

enum { N = 5000 }; /* several batches of the allocator's size */

typedef struct hand_over {
  void **blocks;
  size_t n;
  int cls;
} hand_over;

static void *free_all(void *arg) {
  hand_over *h = arg;
  for (size_t i = 0; i < h->n; i++)
    bwrt__free(h->cls, h->blocks[i]);
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
      blocks[i] = bwrt__alloc(cls);
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
  reuse_across_threads(BWRT__ALLOC_SMALL_CLASS, BWRT__ALLOC_SMALL);
}

static void test_alloc_large_blocks_reused_across_threads(void **state) {
  (void)state;
  reuse_across_threads(BWRT__ALLOC_LARGE_CLASS, BWRT__ALLOC_LARGE);
}

/* Interleaved: a few blocks out, a few back, on one thread, while batches
 * freed by another thread are being handed out (the read-ahead front meets
 * the end of a batch and the thread's own frees in every pattern). */
static void test_alloc_interleaved_with_own_frees(void **state) {
  (void)state;
  void **blocks = calloc(N, sizeof(void *));
  assert_non_null(blocks);
  for (size_t i = 0; i < N; i++)
    blocks[i] = bwrt__alloc(BWRT__ALLOC_SMALL_CLASS);
  hand_over h = {.blocks = blocks, .n = N, .cls = BWRT__ALLOC_SMALL_CLASS};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, free_all, &h), 0);
  pthread_join(th, NULL);
  void *held[7];
  for (int i = 0; i < 3 * N; i++) {
    int k = i % 7;
    if (i >= 7)
      bwrt__free(BWRT__ALLOC_SMALL_CLASS, held[k]);
    held[k] = bwrt__alloc(BWRT__ALLOC_SMALL_CLASS);
    assert_non_null(held[k]);
    memset(held[k], 0x5A, BWRT__ALLOC_SMALL);
  }
  for (int k = 0; k < 7; k++)
    bwrt__free(BWRT__ALLOC_SMALL_CLASS, held[k]);
  free(blocks);
}

/* Batches are reused newest first, one at a time: a thread that has used
 * up its batch takes the batch freed last, not one it took long ago (the
 * blocks freed lately are the likeliest still to be in a cache). Three
 * batches A, B, C are freed in that order by one thread; a fresh thread
 * uses up B (the newest then), C is freed, and the fresh thread's next
 * block must come from C, not from A. */
#if !defined(__SANITIZE_ADDRESS__) /* no recycling under ASan */
enum { BATCH_BLOCKS = 256 };       /* alloc.c's BATCH */

typedef struct lifo_case {
  void *sets[3][BATCH_BLOCKS]; /* A, B, C */
  rt_latch b_used, c_freed;
  int next_from; /* which set the block after C's free came from, or -1 */
} lifo_case;

static void *free_set_a_b(void *arg) {
  lifo_case *lc = arg;
  for (int s = 0; s < 2; s++)
    for (int i = 0; i < BATCH_BLOCKS; i++)
      bwrt__free(BWRT__ALLOC_LARGE_CLASS, lc->sets[s][i]);
  return NULL;
}

static void *free_set_c(void *arg) {
  lifo_case *lc = arg;
  for (int i = 0; i < BATCH_BLOCKS; i++)
    bwrt__free(BWRT__ALLOC_LARGE_CLASS, lc->sets[2][i]);
  return NULL;
}

static int set_of(lifo_case *lc, void *p) {
  for (int s = 0; s < 3; s++)
    for (int i = 0; i < BATCH_BLOCKS; i++)
      if (lc->sets[s][i] == p)
        return s;
  return -1;
}

static void *use_b_then_one(void *arg) {
  lifo_case *lc = arg;
  void *got[BATCH_BLOCKS];
  for (int i = 0; i < BATCH_BLOCKS; i++)
    got[i] = bwrt__alloc(BWRT__ALLOC_LARGE_CLASS);
  int all_b = 1;
  for (int i = 0; i < BATCH_BLOCKS; i++)
    all_b &= set_of(lc, got[i]) == 1;
  rt_latch_open(&lc->b_used);
  rt_latch_wait(&lc->c_freed);
  void *next = bwrt__alloc(BWRT__ALLOC_LARGE_CLASS);
  lc->next_from = all_b ? set_of(lc, next) : -2;
  return NULL;
}

#endif

static void test_alloc_newest_batch_first(void **state) {
  (void)state;
#if defined(__SANITIZE_ADDRESS__)
  skip(); /* no recycling under ASan */
#else
  static lifo_case lc;
  memset(&lc, 0, sizeof lc);
  rt_latch_init(&lc.b_used);
  rt_latch_init(&lc.c_freed);
  for (int s = 0; s < 3; s++)
    for (int i = 0; i < BATCH_BLOCKS; i++)
      lc.sets[s][i] = bwrt__alloc(BWRT__ALLOC_LARGE_CLASS);
  pthread_t freer, user;
  assert_int_equal(pthread_create(&freer, NULL, free_set_a_b, &lc), 0);
  pthread_join(freer, NULL); /* A then B are batches on the shared stack */
  assert_int_equal(pthread_create(&user, NULL, use_b_then_one, &lc), 0);
  rt_latch_wait(&lc.b_used);
  assert_int_equal(pthread_create(&freer, NULL, free_set_c, &lc), 0);
  pthread_join(freer, NULL);
  rt_latch_open(&lc.c_freed);
  pthread_join(user, NULL);
  assert_int_equal(lc.next_from, 2); /* C, the newest; not A */
  rt_latch_destroy(&lc.b_used);
  rt_latch_destroy(&lc.c_freed);
#endif
}

/* The shared stack is bounded (alloc.c's SHARED_MAX blocks per class):
 * when it is full, the oldest batches go back to free(), never the one
 * just freed. A thread frees one batch more than the bound holds; a fresh
 * thread's first block must come from the batch freed last. */
#if !defined(__SANITIZE_ADDRESS__)
enum { SHARED_BLOCKS = 65536, OVERFLOW_BATCHES = SHARED_BLOCKS / 256 + 1 };

/* A fresh thread's first block, stored at *arg (and freed again). */
static void *take_first(void *arg) {
  void **first = arg;
  *first = bwrt__alloc(BWRT__ALLOC_LARGE_CLASS);
  bwrt__free(BWRT__ALLOC_LARGE_CLASS, *first);
  return NULL;
}
#endif

static void test_alloc_full_stack_keeps_the_newest_batch(void **state) {
  (void)state;
#if defined(__SANITIZE_ADDRESS__)
  skip(); /* no recycling under ASan */
#else
  size_t n = (size_t)OVERFLOW_BATCHES * 256u;
  void **blocks = calloc(n, sizeof(void *));
  assert_non_null(blocks);
  for (size_t i = 0; i < n; i++) {
    blocks[i] = bwrt__alloc(BWRT__ALLOC_LARGE_CLASS);
    assert_non_null(blocks[i]);
  }
  /* Freed in this order on another thread. */
  hand_over h = {.blocks = blocks, .n = n, .cls = BWRT__ALLOC_LARGE_CLASS};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, free_all, &h), 0);
  pthread_join(th, NULL);
  void *first = NULL;
  assert_int_equal(pthread_create(&th, NULL, take_first, &first), 0);
  pthread_join(th, NULL);
  int in_newest = 0;
  for (size_t i = n - 256; i < n; i++)
    in_newest |= blocks[i] == first;
  assert_true(in_newest);
  free(blocks);
#endif
}

/* Blocks are cache-line aligned, fresh or recycled, in every build: a task
 * that shares a line with its neighbour has two workers writing to one
 * line when they run neighbouring links of a chain. */
static void *alloc_and_check_aligned(void *arg) {
  int cls = *(int *)arg;
  void *held[600];
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < 600; i++) {
      held[i] = bwrt__alloc(cls);
      assert_non_null(held[i]);
      assert_int_equal((uintptr_t)held[i] % BWRT__CACHE_LINE, 0);
    }
    for (int i = 0; i < 600; i++)
      bwrt__free(cls, held[i]);
  }
  return NULL;
}

static void test_alloc_blocks_are_cache_line_aligned(void **state) {
  (void)state;
  for (int cls = 0; cls < BWRT__ALLOC_CLASSES; cls++) {
    pthread_t th;
    for (int t = 0; t < 2; t++) { /* the second reuses the first's frees */
      assert_int_equal(pthread_create(&th, NULL, alloc_and_check_aligned, &cls),
                       0);
      pthread_join(th, NULL);
    }
  }
}

/* Memory goes back: blocks are carved from 64 KiB chunks, and when a burst
 * of frees takes the shared stack over its bound (SHARED_MAX blocks), the
 * chunks whose blocks all fell off it are freed. And what is cached is
 * reused: a later burst of nearly the bound's size needs no new chunk. */
#if !defined(__SANITIZE_ADDRESS__)
enum { BURST = 200000 }; /* ~26 MB of tasks, three times the bound */

/* Nearly the bound: the stack may be up to a magazine short of it after
 * dropping whole magazines, and the freeing thread's last one was part. */
enum { CACHED_SURELY = SHARED_BLOCKS - 2 * 256 };

/* Blocks of the large class a 64 KiB chunk holds after its header line. */
static size_t large_per_chunk(void) {
  return (65536 - BWRT__CACHE_LINE) / BWRT__ALLOC_LARGE;
}

static void *alloc_then_free(void *arg) {
  size_t n = *(size_t *)arg;
  void **blocks = calloc(n, sizeof(void *));
  assert_non_null(blocks);
  for (size_t i = 0; i < n; i++)
    assert_non_null(blocks[i] = bwrt__alloc(BWRT__ALLOC_LARGE_CLASS));
  for (size_t i = 0; i < n; i++)
    bwrt__free(BWRT__ALLOC_LARGE_CLASS, blocks[i]);
  free(blocks);
  return NULL; /* exiting hands this thread's blocks to the shared stack */
}

static void on_fresh_thread(size_t n) {
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, alloc_then_free, &n), 0);
  pthread_join(th, NULL);
}
#endif

static void test_alloc_chunks_go_back_after_a_burst(void **state) {
  (void)state;
#if defined(__SANITIZE_ADDRESS__)
  skip(); /* no chunks under ASan */
#else
  size_t per_chunk = large_per_chunk();
  size_t bound = (SHARED_BLOCKS + per_chunk - 1) / per_chunk;
  void **blocks = calloc(BURST, sizeof(void *));
  assert_non_null(blocks);
  for (size_t i = 0; i < BURST; i++)
    assert_non_null(blocks[i] = bwrt__alloc(BWRT__ALLOC_LARGE_CLASS));
  assert_true(bwrt__alloc_chunks(BWRT__ALLOC_LARGE_CLASS) >= BURST / per_chunk);
  pthread_t th;
  hand_over h = {.blocks = blocks, .n = BURST, .cls = BWRT__ALLOC_LARGE_CLASS};
  assert_int_equal(pthread_create(&th, NULL, free_all, &h), 0);
  pthread_join(th, NULL);
  free(blocks);
  /* The bound's worth of cached blocks, plus a few chunks that hold this
   * thread's uncarved blocks or straddle the cut. */
  size_t after = bwrt__alloc_chunks(BWRT__ALLOC_LARGE_CLASS);
  assert_in_range(after, bound, bound + 4);
  on_fresh_thread(CACHED_SURELY);
  assert_int_equal(bwrt__alloc_chunks(BWRT__ALLOC_LARGE_CLASS), after);
#endif
}

/* Cached blocks decay: full magazines that sat on the shared stack for the
 * decay period are released, at most alloc.c's DECAY_DROP_MAX (16) per
 * visit, and chunks whose blocks all went back are freed; a stale magazine
 * is never handed out, even before its turn to be released; younger
 * magazines are reused instead. */
enum { DECAY_BURST = 8000 }; /* ~32 magazines: two visits' worth of drops */

static void test_alloc_cached_blocks_decay(void **state) {
  (void)state;
#if defined(__SANITIZE_ADDRESS__)
  skip(); /* no chunks under ASan */
#else
  size_t per_chunk = large_per_chunk();
  bwrt__alloc_set_decay_ms(0); /* visits release what earlier tests left */
  for (int i = 0; i < 40; i++)
    on_fresh_thread(1);
  size_t base = bwrt__alloc_chunks(BWRT__ALLOC_LARGE_CLASS);
  bwrt__alloc_set_decay_ms(60000);
  on_fresh_thread(DECAY_BURST);
  size_t grown = bwrt__alloc_chunks(BWRT__ALLOC_LARGE_CLASS);
  assert_true(grown >= base + DECAY_BURST / per_chunk);
  on_fresh_thread(DECAY_BURST); /* young: reused, no chunk added */
  assert_int_equal(bwrt__alloc_chunks(BWRT__ALLOC_LARGE_CLASS), grown);
  bwrt__alloc_set_decay_ms(20);
  struct timespec pause = {0, 60 * 1000000};
  nanosleep(&pause, NULL);
  /* Its first visit releases 16 stale magazines and must not take the
   * newest (stale too): it carves its block from a new chunk. Its later
   * visits (handing its blocks back as it exits) release the rest. */
  size_t made = bwrt__alloc_chunks_made(BWRT__ALLOC_LARGE_CLASS);
  on_fresh_thread(1);
  assert_int_equal(bwrt__alloc_chunks_made(BWRT__ALLOC_LARGE_CLASS), made + 1);
  /* Left: what this thread holds, plus the one chunk the fresh thread
   * carved (its blocks went back to the stack only as it exited). */
  assert_in_range(bwrt__alloc_chunks(BWRT__ALLOC_LARGE_CLASS), 0, base + 1);
  bwrt__alloc_set_decay_ms(10000);
#endif
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_alloc_small_blocks_reused_across_threads),
      cmocka_unit_test(test_alloc_large_blocks_reused_across_threads),
      cmocka_unit_test(test_alloc_interleaved_with_own_frees),
      cmocka_unit_test(test_alloc_newest_batch_first),
      cmocka_unit_test(test_alloc_full_stack_keeps_the_newest_batch),
      cmocka_unit_test(test_alloc_blocks_are_cache_line_aligned),
      cmocka_unit_test(test_alloc_chunks_go_back_after_a_burst),
      cmocka_unit_test(test_alloc_cached_blocks_decay),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
