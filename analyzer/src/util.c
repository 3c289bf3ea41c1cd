/* util.c - checked allocation, growable arrays and the string map.
 *
 * Invariant of bwsc__strmap: load factor stays below 1/2, so probing always
 * finds an empty slot.
 */
#include "util.h"

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
