/* alloc.c - recycling allocator for the runtime's small fixed-size blocks
 * (work items and tasks), so a tiny item costs no malloc/free pair.
 *
 * Items are typically allocated by one thread (the submitter) and freed by
 * another (a worker), which is the pattern general allocators handle worst.
 * So each thread collects the blocks it frees on a private list; when that
 * list reaches BATCH blocks it becomes a batch on a process-wide stack of
 * batches. A thread that needs a block takes from its own frees first, then
 * from the batch it is using, and when both are empty pops one batch: the
 * one pushed last, whose blocks are the likeliest still to be in a cache.
 *
 * Invariants:
 *  - A block is on at most one list. A batch's first block carries the
 *    batch's length and the link to the next batch.
 *  - The shared stack is a plain LIFO under a mutex, taken once per BATCH
 *    blocks (a pop of one batch needs no ABA defence then), doubly linked
 *    through the batch heads. It holds at most SHARED_MAX blocks per
 *    class; beyond that, the oldest batches go back to free(). Every cached
 *    block stays reachable from a static or a live thread, so leak checkers
 *    stay quiet.
 *  - One batch at a time: a thread never sits on batches it does not use,
 *    so blocks freed lately (warm) are reused before blocks freed long ago
 *    (cold, scattered over the heap). Taking the whole stack at once, as an
 *    earlier version did, made a thread cycle through every cached block -
 *    up to SHARED_MAX of them, tens of megabytes - before it reached its
 *    own recent frees (bench (d) after (b): 29 -> 46 ns per link).
 *  - A thread's private blocks are handed back when it exits (a pthread key
 *    destructor, removed if the library is unloaded).
 */
#include <pthread.h>
#include <stdlib.h>

#include "internal.h"

#define BATCH 256
#define SHARED_MAX 65536

typedef struct free_block {
  struct free_block *next;       /* within a list or batch */
  struct free_block *next_batch; /* batch heads only: the next older batch */
  struct free_block *prev_batch; /* batch heads only: the next newer one */
  size_t count;                  /* batch heads only: blocks in the batch */
} free_block;

_Static_assert(sizeof(free_block) <= BW__ALLOC_SMALL, "block too small");

typedef struct local_lists {
  free_block *freed; /* this thread's frees, newest first */
  size_t nfreed;
  free_block *cursor; /* remainder of the batch being used */
  /* The prefetch front: a block of the cursor's list `ahead_dist` blocks
   * after the cursor (NULL: none), see bw__alloc. */
  free_block *ahead;
  unsigned ahead_dist;
} local_lists;

/* How many blocks ahead of the cursor bw__alloc prefetches. */
#define AHEAD 8

static const size_t class_size[BW__ALLOC_CLASSES] = {BW__ALLOC_SMALL,
                                                     BW__ALLOC_LARGE};

static pthread_mutex_t shared_mu = PTHREAD_MUTEX_INITIALIZER;
/* Newest and oldest batch of each class, under shared_mu. */
static free_block *shared[BW__ALLOC_CLASSES];
static free_block *shared_oldest[BW__ALLOC_CLASSES];
static size_t shared_count[BW__ALLOC_CLASSES]; /* under shared_mu */

static BW__TLS local_lists local[BW__ALLOC_CLASSES];
static BW__TLS int local_registered;
static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static int key_made;

static void free_chain(free_block *b) {
  while (b != NULL) {
    free_block *next = b->next;
    free(b);
    b = next;
  }
}

/* Pushes the chain head..(next == NULL) of n blocks as the newest batch;
 * when that takes the stack over SHARED_MAX blocks, the oldest batches go
 * back to free() - the coldest blocks, not the ones just freed (dropping
 * the new batch instead kept a stack filled by an earlier burst forever
 * and sent every later thread to malloc: bench (d) after (b) alternated
 * between 15 and 42 ns per link to build). */
static void give_batch(int cls, free_block *head, size_t n) {
  free_block *drop = NULL;
  pthread_mutex_lock(&shared_mu);
  head->count = n;
  head->prev_batch = NULL;
  head->next_batch = shared[cls];
  if (shared[cls] != NULL)
    shared[cls]->prev_batch = head;
  else
    shared_oldest[cls] = head;
  shared[cls] = head;
  shared_count[cls] += n;
  while (shared_count[cls] > SHARED_MAX) {
    free_block *old = shared_oldest[cls];
    shared_oldest[cls] = old->prev_batch;
    if (shared_oldest[cls] != NULL)
      shared_oldest[cls]->next_batch = NULL;
    else
      shared[cls] = NULL;
    shared_count[cls] -= old->count;
    old->next_batch = drop;
    drop = old;
  }
  pthread_mutex_unlock(&shared_mu);
  while (drop != NULL) {
    free_block *next = drop->next_batch;
    free_chain(drop);
    drop = next;
  }
}

/* The batch pushed last, or NULL. */
static free_block *take_batch(int cls) {
  pthread_mutex_lock(&shared_mu);
  free_block *head = shared[cls];
  if (head != NULL) {
    shared[cls] = head->next_batch;
    if (shared[cls] != NULL)
      shared[cls]->prev_batch = NULL;
    else
      shared_oldest[cls] = NULL;
    shared_count[cls] -= head->count;
  }
  pthread_mutex_unlock(&shared_mu);
  return head;
}

static void on_thread_exit(void *unused) {
  (void)unused;
  for (int cls = 0; cls < BW__ALLOC_CLASSES; cls++) {
    local_lists *l = &local[cls];
    if (l->freed != NULL)
      give_batch(cls, l->freed, l->nfreed);
    size_t n = 0;
    for (free_block *b = l->cursor; b != NULL; b = b->next)
      n++;
    if (l->cursor != NULL)
      give_batch(cls, l->cursor, n);
    l->freed = l->cursor = l->ahead = NULL;
    l->nfreed = l->ahead_dist = 0;
  }
}

static void make_key(void) {
  key_made = pthread_key_create(&exit_key, on_thread_exit) == 0;
}

/* If this copy of the runtime is unloaded (dlclose), threads that outlive
 * it must not run a destructor that is gone. */
__attribute__((destructor)) static void forget_key(void) {
  if (key_made)
    pthread_key_delete(exit_key);
}

/* A key destructor runs only for threads whose key value is non-NULL. */
static void register_thread(void) {
  pthread_once(&key_once, make_key);
  if (key_made)
    pthread_setspecific(exit_key, &local_registered);
  local_registered = 1;
}

static inline void prefetch_block(const void *p, size_t size) {
  for (size_t off = 0; off < size; off += BW__CACHE_LINE)
    __builtin_prefetch((const char *)p + off, 1);
}

/* Under AddressSanitizer blocks go straight to malloc/free, so that a use
 * of a freed task or item is reported instead of hidden by recycling. */
#if defined(__SANITIZE_ADDRESS__)
#define RECYCLE 0
#else
#define RECYCLE 1
#endif

void *bw__alloc(int cls) {
  if (!RECYCLE)
    return malloc(class_size[cls]);
  local_lists *l = &local[cls];
  free_block *b = l->freed;
  if (b != NULL) { /* our own frees: still warm in this CPU's cache */
    l->freed = b->next;
    l->nfreed--;
    return b;
  }
  if (l->cursor == NULL) {
    l->cursor = take_batch(cls);
    if (l->cursor == NULL)
      return malloc(class_size[cls]);
    if (!local_registered)
      register_thread();
    l->ahead = l->cursor;
    l->ahead_dist = 0;
  }
  b = l->cursor;
  l->cursor = b->next;
  /* Blocks from the shared stack were last written on another CPU (a
   * worker freed them): reading a block's link, and then initialising it,
   * would stall on each. So the blocks up to AHEAD places after the cursor
   * are fetched (for writing) in advance: the front moves two blocks per
   * call until it is AHEAD ahead, then one, and each step reads the link of
   * a block fetched calls ago. The front is never behind the cursor (a
   * block handed out is no longer on the list). */
  if (l->ahead == b) {
    l->ahead = l->cursor;
    l->ahead_dist = 0;
  } else {
    l->ahead_dist--;
  }
  for (int step = 0; step < 2 && l->ahead != NULL && l->ahead_dist < AHEAD;
       step++) {
    free_block *n = l->ahead->next;
    if (n == NULL)
      break;
    l->ahead = n;
    l->ahead_dist++;
    prefetch_block(n, class_size[cls]);
  }
  return b;
}

void bw__free(int cls, void *p) {
  if (p == NULL)
    return;
  if (!RECYCLE) {
    free(p);
    return;
  }
  local_lists *l = &local[cls];
  free_block *b = p;
  b->next = l->freed;
  l->freed = b;
  if (!local_registered)
    register_thread();
  if (++l->nfreed >= BATCH) {
    give_batch(cls, l->freed, l->nfreed);
    l->freed = NULL;
    l->nfreed = 0;
  }
}
