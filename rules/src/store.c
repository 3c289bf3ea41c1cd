/* Storage helpers of the rules loader: string arena, pointer vector, hash
 * index and glob matcher.
 *
 * Invariants: bwrl__index_get() and bw_rules_glob_match() never allocate and
 * never write (the shim calls them from wrapped functions); an index's capacity
 * is a power of two and it is at most half full, so probing always ends.
 */
#include "rules_internal.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct bwrl__arena_chunk {
  bwrl__arena_chunk *next;
  size_t used, cap;
  char data[];
};

enum { ARENA_CHUNK = 8192 };

char *bwrl__arena_strndup(bwrl__arena *arena, const char *s, size_t len) {
  bwrl__arena_chunk *chunk = arena->head;
  if (chunk == NULL || chunk->cap - chunk->used < len + 1) {
    /* Oversized strings get a chunk of their own. */
    size_t cap = len + 1 > ARENA_CHUNK ? len + 1 : ARENA_CHUNK;
    chunk = malloc(sizeof(*chunk) + cap);
    if (chunk == NULL)
      return NULL;
    chunk->used = 0;
    chunk->cap = cap;
    chunk->next = arena->head;
    arena->head = chunk;
  }
  char *out = chunk->data + chunk->used;
  if (len > 0)
    memcpy(out, s, len);
  out[len] = '\0';
  chunk->used += len + 1;
  return out;
}

void bwrl__arena_free(bwrl__arena *arena) {
  bwrl__arena_chunk *chunk = arena->head;
  while (chunk != NULL) {
    bwrl__arena_chunk *next = chunk->next;
    free(chunk);
    chunk = next;
  }
  arena->head = NULL;
}

int bwrl__vec_push(bwrl__vec *vec, void *item) {
  if (vec->n == vec->cap) {
    size_t cap = vec->cap ? vec->cap * 2 : 32;
    void **items = realloc(vec->items, cap * sizeof(*items));
    if (items == NULL)
      return -ENOMEM;
    vec->items = items;
    vec->cap = cap;
  }
  vec->items[vec->n++] = item;
  return 0;
}

void bwrl__vec_free(bwrl__vec *vec) {
  free(vec->items);
  vec->items = NULL;
  vec->n = vec->cap = 0;
}

/* FNV-1a: short keys, good enough spread, no tables. */
static uint64_t hash_name(const char *key) {
  uint64_t h = 1469598103934665603ull;
  for (const unsigned char *p = (const unsigned char *)key; *p; p++) {
    h ^= *p;
    h *= 1099511628211ull;
  }
  return h;
}

static bwrl__index_slot *probe(bwrl__index_slot *slots, size_t cap,
                               const char *key) {
  size_t mask = cap - 1;
  size_t i = (size_t)hash_name(key) & mask;
  while (slots[i].key != NULL && strcmp(slots[i].key, key) != 0)
    i = (i + 1) & mask;
  return &slots[i];
}

static int grow(bwrl__index *index) {
  size_t cap = index->cap ? index->cap * 2 : 64;
  bwrl__index_slot *slots = calloc(cap, sizeof(*slots));
  if (slots == NULL)
    return -ENOMEM;
  for (size_t i = 0; i < index->cap; i++) {
    if (index->slots[i].key != NULL)
      *probe(slots, cap, index->slots[i].key) = index->slots[i];
  }
  free(index->slots);
  index->slots = slots;
  index->cap = cap;
  return 0;
}

int bwrl__index_put(bwrl__index *index, const char *key, void *value) {
  if ((index->n + 1) * 2 > index->cap) {
    int err = grow(index);
    if (err)
      return err;
  }
  bwrl__index_slot *slot = probe(index->slots, index->cap, key);
  if (slot->key == NULL)
    index->n++;
  slot->key = key;
  slot->value = value;
  return 0;
}

void *bwrl__index_get(const bwrl__index *index, const char *key) {
  if (index->cap == 0 || key == NULL)
    return NULL;
  return probe(index->slots, index->cap, key)->value;
}

void bwrl__index_clear(bwrl__index *index) {
  free(index->slots);
  index->slots = NULL;
  index->cap = index->n = 0;
}

/* Iterative matcher with one backtrack point: the last '*' seen. Linear in
 * practice, and no recursion a hostile pattern could exhaust. */
int bw_rules_glob_match(const char *pattern, const char *text) {
  const char *star = NULL, *resume = NULL;
  while (*text) {
    if (*pattern == '*') {
      star = pattern++;
      resume = text;
    } else if (*pattern == '?' || *pattern == *text) {
      pattern++;
      text++;
    } else if (star != NULL) {
      pattern = star + 1;
      text = ++resume;
    } else {
      return 0;
    }
  }
  while (*pattern == '*')
    pattern++;
  return *pattern == '\0';
}
