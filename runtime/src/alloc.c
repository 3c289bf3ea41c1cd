/* alloc.c - recycling allocator for the runtime's small fixed-size blocks
 * (work items and tasks), so a tiny item costs no malloc/free pair.
 *
 * Items are typically allocated by one thread (the submitter) and freed by
 * another (a worker), which is the pattern general allocators handle worst.
 * So each thread collects the blocks it frees in a private magazine (an
 * array of block pointers); a full magazine goes onto a process-wide stack
 * of magazines. A thread that needs a block takes from its own frees first,
 * then from the magazine it is using, and when both are empty it trades the
 * empty magazine for the full one pushed last, whose blocks are the
 * likeliest still to be in a cache. Only when no full magazine is left are
 * new blocks carved, a magazine's worth at a time, from a chunk.
 *
 * Why arrays and chunks (bench (d), a chain of continuations built after a
 * section that left ~20,000 recycled tasks behind; docs/bench-runtime.md):
 *  - With batches linked through the blocks themselves, reading ahead meant
 *    chasing each block's link: one dependent cache miss per block once the
 *    blocks were scattered, and building a chain took 37-55 ns per link
 *    instead of 18-20. From an array the allocator prefetches the block
 *    AHEAD places on without touching the blocks in between.
 *  - Blocks carved from a chunk are cache-line aligned and adjacent: a task
 *    of 128 bytes is exactly two lines, shares none with its neighbours
 *    (two workers running neighbouring links of a chain wrote to one line
 *    when blocks came from malloc, 16 bytes of header apart) and a fresh
 *    magazine walks memory in address order.
 *
 * Invariants:
 *  - A block is in at most one magazine. Every block belongs to a chunk
 *    whose header counts its blocks that are not released; a released
 *    block is never handed out again, and a chunk whose count reaches 0
 *    goes back to free().
 *  - The shared stack is doubly linked under a mutex taken once per BATCH
 *    blocks; each visit both gives and takes (a full magazine for an
 *    empty one, or the other way round), so a thread never locks twice per
 *    magazine. It holds at most SHARED_MAX blocks per class; beyond that,
 *    the oldest magazines' blocks are released - the coldest blocks, not
 *    the ones just freed (dropping the new magazine instead kept a stack
 *    filled by an earlier burst forever: bench (d) after (b) alternated
 *    between 15 and 42 ns per link to build).
 *  - A chunk is freed only when all its blocks are released, so after a
 *    burst the memory held can exceed SHARED_MAX blocks by the chunks that
 *    a few live or cached blocks keep. That is the price of alignment
 *    without a header per block.
 *  - Every chunk is on a registry list and every magazine is reachable
 *    from a static or a live thread, so leak checkers stay quiet. A
 *    thread's private magazines and uncarved blocks are handed back when it
 *    exits (a pthread key destructor, removed if the library is unloaded).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "internal.h"

#define BATCH 256         /* blocks per magazine */
#define SHARED_MAX 65536  /* blocks per class on the shared stack */
#define SPARE_MAX 64      /* empty magazines kept for reuse */
#define CHUNK_BYTES 65536 /* a power of two: a block finds its chunk */
#define AHEAD 8           /* how many blocks ahead bwrt__alloc prefetches */
#define DECAY_DROP_MAX 16 /* stale magazines released per visit */

typedef struct magazine {
  struct magazine *older, *newer; /* on the shared stack or spare list */
  uint64_t given_ns;              /* when it went onto the shared stack */
  size_t n;                       /* p[0..n) are blocks, p[n-1] goes next */
  void *p[BATCH];
} magazine;

/* The first cache line of a chunk; its blocks follow. */
typedef struct chunk {
  _Atomic size_t held;       /* blocks not released */
  struct chunk *prev, *next; /* registry, under chunk_mu */
} chunk;

_Static_assert(sizeof(chunk) <= BWRT__CACHE_LINE, "chunk header too big");
_Static_assert(BWRT__ALLOC_SMALL % BWRT__CACHE_LINE == 0 &&
                   BWRT__ALLOC_LARGE % BWRT__CACHE_LINE == 0,
               "blocks must be whole cache lines");

typedef struct local_lists {
  magazine *fill; /* this thread's frees, newest last */
  magazine *use;  /* the magazine being used up */
  char *carve;    /* the next uncarved block of this thread's chunk */
  size_t carve_left;
} local_lists;

static const size_t class_size[BWRT__ALLOC_CLASSES] = {BWRT__ALLOC_SMALL,
                                                       BWRT__ALLOC_LARGE};

static pthread_mutex_t shared_mu = PTHREAD_MUTEX_INITIALIZER;
/* Under shared_mu: newest and oldest full magazine of each class. */
static magazine *shared[BWRT__ALLOC_CLASSES];
static magazine *shared_oldest[BWRT__ALLOC_CLASSES];
static size_t shared_count[BWRT__ALLOC_CLASSES];
static magazine *spares; /* empty magazines, linked through `older` */
static size_t spare_count;
/* How long a full magazine may sit on the shared stack unused before its
 * blocks are released (see visit_shared); a test may shorten it. */
static _Atomic uint64_t decay_ns = 10 * (uint64_t)1000000000;

static pthread_mutex_t chunk_mu = PTHREAD_MUTEX_INITIALIZER;
static chunk *chunks;                           /* under chunk_mu */
static size_t chunk_count[BWRT__ALLOC_CLASSES]; /* under chunk_mu */
static size_t chunks_made[BWRT__ALLOC_CLASSES]; /* under chunk_mu */

static BWRT__TLS local_lists local[BWRT__ALLOC_CLASSES];
static BWRT__TLS int local_registered;
static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static int key_made;

static size_t blocks_per_chunk(int cls) {
  return (CHUNK_BYTES - BWRT__CACHE_LINE) / class_size[cls];
}

static chunk *chunk_of(void *block) {
  return (chunk *)((uintptr_t)block & ~(uintptr_t)(CHUNK_BYTES - 1));
}

static chunk *chunk_new(int cls) {
  chunk *c = aligned_alloc(CHUNK_BYTES, CHUNK_BYTES);
  if (c == NULL)
    return NULL;
  atomic_init(&c->held, blocks_per_chunk(cls));
  pthread_mutex_lock(&chunk_mu);
  c->next = chunks;
  c->prev = NULL;
  if (chunks != NULL)
    chunks->prev = c;
  chunks = c;
  chunk_count[cls]++;
  chunks_made[cls]++;
  pthread_mutex_unlock(&chunk_mu);
  return c;
}

/* Takes one block out of circulation for good; the last one out of its
 * chunk frees the chunk. */
static void release_block(int cls, void *block) {
  chunk *c = chunk_of(block);
  if (atomic_fetch_sub_explicit(&c->held, 1, memory_order_acq_rel) != 1)
    return;
  pthread_mutex_lock(&chunk_mu);
  if (c->prev != NULL)
    c->prev->next = c->next;
  else
    chunks = c->next;
  if (c->next != NULL)
    c->next->prev = c->prev;
  chunk_count[cls]--;
  pthread_mutex_unlock(&chunk_mu);
  free(c);
}

/* Under shared_mu: moves the oldest full magazine (there is one) onto the
 * list `drop` of magazines whose blocks are to be released. */
static void drop_oldest(int cls, magazine **drop) {
  magazine *old = shared_oldest[cls];
  shared_oldest[cls] = old->newer;
  if (shared_oldest[cls] != NULL)
    shared_oldest[cls]->older = NULL;
  else
    shared[cls] = NULL;
  shared_count[cls] -= old->n;
  old->older = *drop;
  *drop = old;
}

/* Under shared_mu: unlinks the newest full magazine (there is one). */
static magazine *pop_newest(int cls) {
  magazine *m = shared[cls];
  shared[cls] = m->older;
  if (shared[cls] != NULL)
    shared[cls]->newer = NULL;
  else
    shared_oldest[cls] = NULL;
  shared_count[cls] -= m->n;
  return m;
}

/* Whether m sat on the shared stack unused for the decay period. `now`
 * may be a little behind a given_ns stamped by a thread that read the
 * clock later but locked first. */
static int stale(const magazine *m, uint64_t now, uint64_t decay) {
  return m != NULL && now > m->given_ns && now - m->given_ns >= decay;
}

/* What a visit to the shared stack takes away. */
typedef enum { TAKE_NOTHING, TAKE_FULL, TAKE_EMPTY } take_kind;

/* One visit to the shared stack, under shared_mu:
 *  - `full` (may be NULL) becomes the newest magazine;
 *  - `empty` (may be NULL) joins the spares - except with TAKE_FULL when
 *    no full magazine is there to trade it for: then it comes back;
 *  - TAKE_FULL returns the newest full magazine, TAKE_EMPTY a spare; either
 *    may be NULL.
 * Magazines pushed off the bottom (over SHARED_MAX), and magazines that sat
 * there for decay_ns, have their blocks released after the unlock - the
 * stale ones at most DECAY_DROP_MAX per visit (4,096 blocks, tens of
 * microseconds), so the first allocation after a long pause does not pay
 * for a whole stack (65,536 blocks and their chunks: about a millisecond).
 * A stale magazine is never handed out, released yet or not.
 *
 * Why the decay: blocks cached after a burst are not only memory held for
 * nothing, they are a bad layout for later work. Freed by several threads
 * in whatever order those ran, they come back in a jumble with holes, and
 * a chain of continuations built from them is run - and freed, and rebuilt
 * - in that jumble for good: bench (d) ran at 40-46 ns per link after an
 * earlier section's leftovers against 31-33 on fresh chunks. Released,
 * they free their chunks, and new work is carved in address order. Ten
 * seconds is the decay jemalloc uses for its dirty pages. */
static magazine *visit_shared(int cls, magazine *full, magazine *empty,
                              take_kind take) {
  magazine *drop = NULL, *got = NULL, *spare_drop = NULL;
  uint64_t now = bwrt__now_ns();
  uint64_t decay = atomic_load_explicit(&decay_ns, memory_order_relaxed);
  pthread_mutex_lock(&shared_mu);
  for (int n = 0; n < DECAY_DROP_MAX && stale(shared_oldest[cls], now, decay);
       n++)
    drop_oldest(cls, &drop);
  if (full != NULL) {
    full->given_ns = now;
    full->newer = NULL;
    full->older = shared[cls];
    if (shared[cls] != NULL)
      shared[cls]->newer = full;
    else
      shared_oldest[cls] = full;
    shared[cls] = full;
    shared_count[cls] += full->n;
    while (shared_count[cls] > SHARED_MAX)
      drop_oldest(cls, &drop);
  }
  if (take == TAKE_FULL) {
    if (shared[cls] != NULL && !stale(shared[cls], now, decay)) {
      got = pop_newest(cls);
    } else {
      got = empty; /* nothing (fresh) to trade for */
      empty = NULL;
    }
  } else if (take == TAKE_EMPTY && spares != NULL) {
    got = spares;
    spares = got->older;
    spare_count--;
  }
  if (empty != NULL) {
    if (spare_count < SPARE_MAX) {
      empty->older = spares;
      spares = empty;
      spare_count++;
    } else {
      spare_drop = empty;
    }
  }
  pthread_mutex_unlock(&shared_mu);
  free(spare_drop);
  while (drop != NULL) {
    magazine *next = drop->older;
    for (size_t i = 0; i < drop->n; i++)
      release_block(cls, drop->p[i]);
    free(drop);
    drop = next;
  }
  return got;
}

/* A magazine a thread gives up: with blocks it joins the shared stack, an
 * empty one the spares. */
static void hand_back(int cls, magazine *m) {
  if (m != NULL)
    visit_shared(cls, m->n > 0 ? m : NULL, m->n > 0 ? NULL : m, TAKE_NOTHING);
}

static void on_thread_exit(void *unused) {
  (void)unused;
  for (int cls = 0; cls < BWRT__ALLOC_CLASSES; cls++) {
    local_lists *l = &local[cls];
    /* The uncarved rest of the chunk goes round like any freed block. */
    while (l->carve_left > 0) {
      void *b = l->carve;
      l->carve += class_size[cls];
      l->carve_left--;
      bwrt__free(cls, b);
    }
    hand_back(cls, l->fill);
    hand_back(cls, l->use);
    l->fill = l->use = NULL;
  }
  local_registered = 0; /* a later use registers (and flushes) again */
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
  for (size_t off = 0; off < size; off += BWRT__CACHE_LINE)
    __builtin_prefetch((const char *)p + off, 1);
}

/* Fills the empty magazine m with up to BATCH new blocks from this thread's
 * chunk (and new chunks), handed out in address order. Returns how many. */
static size_t carve(int cls, local_lists *l, magazine *m) {
  size_t n = 0;
  while (n < BATCH) {
    if (l->carve_left == 0) {
      chunk *c = chunk_new(cls);
      if (c == NULL)
        break;
      l->carve = (char *)c + BWRT__CACHE_LINE;
      l->carve_left = blocks_per_chunk(cls);
    }
    size_t take = l->carve_left < BATCH - n ? l->carve_left : BATCH - n;
    for (size_t i = 0; i < take; i++) {
      m->p[BATCH - 1 - n - i] = l->carve; /* popped from the end */
      l->carve += class_size[cls];
    }
    l->carve_left -= take;
    n += take;
  }
  /* Packed at the top of p[]: move down to p[0..n). */
  for (size_t i = 0; i < n && n < BATCH; i++)
    m->p[i] = m->p[BATCH - n + i];
  m->n = n;
  return n;
}

/* A new empty magazine from the C library, or NULL. */
static magazine *empty_magazine(void) {
  magazine *m = malloc(sizeof(*m));
  if (m != NULL)
    m->n = 0;
  return m;
}

/* The used-up magazine is traded for the newest full one, or refilled
 * from a chunk. Returns the magazine to use, or NULL (out of memory). */
static magazine *refill(int cls, local_lists *l) {
  if (!local_registered)
    register_thread();
  magazine *m = visit_shared(cls, NULL, l->use, TAKE_FULL);
  if (m == NULL)
    m = empty_magazine();
  l->use = m;
  if (m == NULL || m->n > 0)
    return m;
  return carve(cls, l, m) > 0 ? m : NULL;
}

/* Under AddressSanitizer blocks come from the C library one by one, so
 * that a use of a freed task or item is reported instead of hidden by
 * recycling. They are cache-line aligned there too. */
#if defined(__SANITIZE_ADDRESS__)
#define RECYCLE 0
#else
#define RECYCLE 1
#endif

void *bwrt__alloc(int cls) {
  if (!RECYCLE)
    return aligned_alloc(BWRT__CACHE_LINE, class_size[cls]);
  local_lists *l = &local[cls];
  magazine *m = l->fill;
  if (m != NULL && m->n > 0) /* our own frees: still warm in this cache */
    return m->p[--m->n];
  m = l->use;
  if (m == NULL || m->n == 0) {
    m = refill(cls, l);
    if (m == NULL)
      return NULL;
    for (size_t i = 1; i <= AHEAD && i <= m->n; i++)
      prefetch_block(m->p[m->n - i], class_size[cls]);
  }
  /* Blocks from the shared stack were last written on another CPU (a
   * worker freed them): initialising each would stall. So the block AHEAD
   * places on is fetched (for writing) now, straight from the array. */
  void *b = m->p[--m->n];
  if (m->n >= AHEAD)
    prefetch_block(m->p[m->n - AHEAD], class_size[cls]);
  return b;
}

/* The full or missing magazine of bwrt__free: the full one goes onto the
 * shared stack and an empty one takes its place; with no memory for a
 * magazine, the block is released instead of lost. */
static void free_slow(int cls, local_lists *l, void *block) {
  if (!local_registered)
    register_thread();
  magazine *full = l->fill; /* full, `block` pushed already; or none yet */
  magazine *m = visit_shared(cls, full, NULL, TAKE_EMPTY);
  if (m == NULL)
    m = empty_magazine();
  l->fill = m;
  if (full != NULL)
    return; /* `block` went with it */
  if (m != NULL)
    m->p[m->n++] = block;
  else
    release_block(cls, block); /* no memory for a magazine */
}

void bwrt__free(int cls, void *p) {
  if (p == NULL)
    return;
  if (!RECYCLE) {
    free(p);
    return;
  }
  local_lists *l = &local[cls];
  magazine *m = l->fill;
  if (m != NULL) {
    m->p[m->n++] = p;
    if (m->n < BATCH)
      return;
  }
  free_slow(cls, l, p);
}

void bwrt__alloc_set_decay_ms(uint64_t ms) {
  atomic_store_explicit(&decay_ns, ms * 1000000u, memory_order_relaxed);
}

size_t bwrt__alloc_chunks(int cls) {
  pthread_mutex_lock(&chunk_mu);
  size_t n = chunk_count[cls];
  pthread_mutex_unlock(&chunk_mu);
  return n;
}

size_t bwrt__alloc_chunks_made(int cls) {
  pthread_mutex_lock(&chunk_mu);
  size_t n = chunks_made[cls];
  pthread_mutex_unlock(&chunk_mu);
  return n;
}
