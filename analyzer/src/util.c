/* util.c - checked allocation, growable arrays, the string map and the
 * intern table.
 *
 * Invariant of bwsc__strmap and of the intern table: load factor stays
 * below 1/2, so probing always finds an empty slot. Interned text lives in
 * blocks that are only appended to, so a returned pointer never moves.
 */
#include "util.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void out_of_memory(void) {
  fputs("blockscan: error: out of memory\n", stderr);
  exit(2);
}

void *bwsc__xmalloc(size_t size) {
  void *ptr = malloc(size ? size : 1);
  if (!ptr)
    out_of_memory();
  return ptr;
}

void *bwsc__xcalloc(size_t count, size_t size) {
  void *ptr = calloc(count ? count : 1, size ? size : 1);
  if (!ptr)
    out_of_memory();
  return ptr;
}

void *bwsc__xrealloc(void *ptr, size_t size) {
  void *grown = realloc(ptr, size ? size : 1);
  if (!grown)
    out_of_memory();
  return grown;
}

char *bwsc__xstrdup(const char *s) {
  size_t len = strlen(s) + 1;
  char *copy = bwsc__xmalloc(len);
  memcpy(copy, s, len);
  return copy;
}

char *bwsc__xasprintf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int len = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (len < 0)
    out_of_memory();
  char *buf = bwsc__xmalloc((size_t)len + 1);
  va_start(ap, fmt);
  vsnprintf(buf, (size_t)len + 1, fmt, ap);
  va_end(ap);
  return buf;
}

void bwsc__grow(void **array, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap)
    return;
  size_t next = *cap ? *cap * 2 : 8;
  while (next < need)
    next *= 2;
  *array = bwsc__xrealloc(*array, next * elem);
  *cap = next;
}

uint64_t bwsc__fnv1a(uint64_t hash, const char *s) {
  for (; *s; s++) {
    hash ^= (unsigned char)*s;
    hash *= UINT64_C(1099511628211);
  }
  /* A separator, so ("ab","c") and ("a","bc") hash differently. */
  hash ^= 0xff;
  hash *= UINT64_C(1099511628211);
  return hash;
}

static size_t slot_of(const bwsc__strmap *map, const char *key) {
  size_t mask = map->cap - 1;
  size_t i = (size_t)bwsc__fnv1a(BWSC__FNV_INIT, key) & mask;
  while (map->keys[i] && strcmp(map->keys[i], key) != 0)
    i = (i + 1) & mask;
  return i;
}

int bwsc__strmap_get(const bwsc__strmap *map, const char *key, size_t *value) {
  if (!map->cap)
    return 0;
  size_t i = slot_of(map, key);
  if (!map->keys[i])
    return 0;
  if (value)
    *value = map->values[i];
  return 1;
}

static void rehash(bwsc__strmap *map, size_t cap) {
  bwsc__strmap bigger = {bwsc__xcalloc(cap, sizeof(char *)),
                         bwsc__xcalloc(cap, sizeof(size_t)), cap, 0};
  for (size_t i = 0; i < map->cap; i++)
    if (map->keys[i])
      bwsc__strmap_put(&bigger, map->keys[i], map->values[i]);
  bwsc__strmap_free(map);
  *map = bigger;
}

void bwsc__strmap_put(bwsc__strmap *map, const char *key, size_t value) {
  if ((map->count + 1) * 2 > map->cap)
    rehash(map, map->cap ? map->cap * 2 : 64);
  size_t i = slot_of(map, key);
  if (!map->keys[i]) {
    map->keys[i] = key;
    map->count++;
  }
  map->values[i] = value;
}

void bwsc__strmap_free(bwsc__strmap *map) {
  free(map->keys);
  free(map->values);
  map->keys = NULL;
  map->values = NULL;
  map->cap = map->count = 0;
}

/* ---- interned strings ---------------------------------------------------- */

/* Text is packed into large blocks: a USR of 30 bytes costs 31, not the
 * 48 a malloc'd copy of its own would. Blocks are never freed (they stay
 * reachable from `intern`, so leak checkers do not count them). */
enum { INTERN_BLOCK = 256 * 1024 };

typedef struct intern_block {
  struct intern_block *prev;
  size_t used;
  char text[];
} intern_block;

static struct {
  pthread_mutex_t lock;
  const char **strings; /* open addressing, cap a power of two */
  uint64_t *hashes;
  size_t cap, count, bytes;
  intern_block *block;
} intern = {PTHREAD_MUTEX_INITIALIZER, NULL, NULL, 0, 0, 0, NULL};

static size_t intern_slot(uint64_t hash, const char *s) {
  size_t mask = intern.cap - 1;
  size_t i = (size_t)hash & mask;
  while (intern.strings[i] &&
         (intern.hashes[i] != hash || strcmp(intern.strings[i], s) != 0))
    i = (i + 1) & mask;
  return i;
}

static void intern_grow(void) {
  const char **old = intern.strings;
  uint64_t *old_hashes = intern.hashes;
  size_t old_cap = intern.cap;
  intern.cap = old_cap ? old_cap * 2 : 1024;
  intern.strings = bwsc__xcalloc(intern.cap, sizeof(char *));
  intern.hashes = bwsc__xcalloc(intern.cap, sizeof(uint64_t));
  for (size_t i = 0; i < old_cap; i++) {
    if (!old[i])
      continue;
    size_t at = intern_slot(old_hashes[i], old[i]);
    intern.strings[at] = old[i];
    intern.hashes[at] = old_hashes[i];
  }
  free(old);
  free(old_hashes);
}

/* A copy of s (len bytes with its NUL) in the current block. */
static const char *intern_copy(const char *s, size_t len) {
  intern_block *block = intern.block;
  if (!block || INTERN_BLOCK - block->used < len) {
    size_t room = len > INTERN_BLOCK ? len : INTERN_BLOCK;
    block = bwsc__xmalloc(sizeof(*block) + room);
    /* A string longer than a block gets a block of its own, marked full. */
    block->prev = intern.block;
    block->used = room > INTERN_BLOCK ? INTERN_BLOCK : 0;
    intern.block = block;
    if (room > INTERN_BLOCK) {
      memcpy(block->text, s, len);
      return block->text;
    }
  }
  char *copy = block->text + block->used;
  memcpy(copy, s, len);
  block->used += len;
  return copy;
}

const char *bwsc__intern(const char *s) {
  uint64_t hash = bwsc__fnv1a(BWSC__FNV_INIT, s);
  pthread_mutex_lock(&intern.lock);
  if ((intern.count + 1) * 2 > intern.cap)
    intern_grow();
  size_t i = intern_slot(hash, s);
  if (!intern.strings[i]) {
    size_t len = strlen(s) + 1;
    intern.strings[i] = intern_copy(s, len);
    intern.hashes[i] = hash;
    intern.count++;
    intern.bytes += len;
  }
  const char *found = intern.strings[i];
  pthread_mutex_unlock(&intern.lock);
  return found;
}

void bwsc__intern_stats(size_t *count, size_t *bytes) {
  pthread_mutex_lock(&intern.lock);
  *count = intern.count;
  *bytes = intern.bytes;
  pthread_mutex_unlock(&intern.lock);
}
