/* alloc.c - recycling allocator for the runtime's small fixed-size blocks
 * (work items and tasks), so a tiny item costs no malloc/free pair.
 *
 * Items are typically allocated by one thread (the submitter) and freed by
 * another (a worker), which is the pattern general allocators handle worst.
 * So each thread keeps a private free list per size class; a thread whose
 * list grows past LOCAL_MAX hands the whole list to a process-wide stack,
 * and a thread whose list is empty takes that whole stack.
 *
 * Invariants:
 *  - A block is on at most one list. The shared stack is only pushed onto
 *    (a chain, by CAS) or emptied at once (exchange), so there is no ABA
 *    problem without tags.
 *  - The shared stack holds at most SHARED_MAX blocks per class (checked
 *    approximately); beyond that, blocks go back to free(). Memory cached
 *    is bounded, and every cached block stays reachable from a static, so
 *    leak checkers stay quiet.
 *  - A thread's private lists are handed to the shared stack when the
 *    thread exits (a pthread key destructor, removed if the library is
 *    unloaded).
 */
#include <pthread.h>
#include <stdlib.h>

#include "internal.h"

#define LOCAL_MAX 256
#define SHARED_MAX 65536

typedef struct free_block {
  struct free_block *next;
} free_block;

typedef struct local_list {
  free_block *head, *tail;
  unsigned count;
} local_list;

static const size_t class_size[BW__ALLOC_CLASSES] = {BW__ALLOC_SMALL,
                                                     BW__ALLOC_LARGE};

static _Atomic(free_block *) shared[BW__ALLOC_CLASSES];
static _Atomic size_t shared_count[BW__ALLOC_CLASSES];

static _Thread_local local_list local[BW__ALLOC_CLASSES];
static _Thread_local int local_registered;
static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

/* Pushes a chain head..tail of n blocks onto the shared stack, or frees it
 * when the stack is full. */
static void give_back(int cls, free_block *head, free_block *tail, unsigned n) {
  if (atomic_load_explicit(&shared_count[cls], memory_order_relaxed) + n >
      SHARED_MAX) {
    while (head != NULL) {
      free_block *next = head->next;
      free(head);
      head = next;
    }
    return;
  }
  atomic_fetch_add_explicit(&shared_count[cls], n, memory_order_relaxed);
  free_block *old = atomic_load_explicit(&shared[cls], memory_order_relaxed);
  do {
    tail->next = old;
  } while (!atomic_compare_exchange_weak_explicit(
      &shared[cls], &old, head, memory_order_release, memory_order_relaxed));
}

static void flush_local(int cls) {
  local_list *l = &local[cls];
  if (l->head != NULL)
    give_back(cls, l->head, l->tail, l->count);
  l->head = l->tail = NULL;
  l->count = 0;
}

static void on_thread_exit(void *unused) {
  (void)unused;
  for (int cls = 0; cls < BW__ALLOC_CLASSES; cls++)
    flush_local(cls);
}

static int key_made;

static void make_key(void) {
  key_made = pthread_key_create(&exit_key, on_thread_exit) == 0;
}

/* If this copy of the runtime is unloaded (dlclose), threads that outlive
 * it must not run a destructor that is gone. */
__attribute__((destructor)) static void forget_key(void) {
  if (key_made)
    pthread_key_delete(exit_key);
}

/* A destructor runs only for threads whose key value is non-NULL. */
static void register_thread(void) {
  pthread_once(&key_once, make_key);
  pthread_setspecific(exit_key, &local_registered);
  local_registered = 1;
}

void *bw__alloc(int cls) {
  local_list *l = &local[cls];
  if (l->head == NULL) {
    free_block *all =
        atomic_exchange_explicit(&shared[cls], NULL, memory_order_acquire);
    if (all == NULL)
      return malloc(class_size[cls]);
    /* Count and find the tail once; the chain now belongs to us. */
    unsigned n = 0;
    free_block *tail = all;
    for (free_block *b = all; b != NULL; b = b->next) {
      n++;
      tail = b;
    }
    atomic_fetch_sub_explicit(&shared_count[cls], n, memory_order_relaxed);
    l->head = all;
    l->tail = tail;
    l->count = n;
    if (!local_registered)
      register_thread();
  }
  free_block *b = l->head;
  l->head = b->next;
  if (l->head == NULL)
    l->tail = NULL;
  l->count--;
  return b;
}

void bw__free(int cls, void *p) {
  if (p == NULL)
    return;
  local_list *l = &local[cls];
  free_block *b = p;
  b->next = l->head;
  if (l->head == NULL)
    l->tail = b;
  l->head = b;
  if (!local_registered)
    register_thread();
  if (++l->count >= LOCAL_MAX)
    flush_local(cls);
}
