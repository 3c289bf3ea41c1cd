/* util.h - small helpers shared by blockscan's files: checked allocation,
 * growable arrays, a string-keyed hash map, FNV-1a hashing, interned
 * strings.
 *
 * Invariants: allocation failure ends the process with a message (blockscan
 * is a command-line tool, not a library living in someone else's process);
 * a bwsc__strmap never owns its keys - callers keep them alive; an interned
 * string is never freed or changed, and lives until the process ends.
 */
#ifndef BLOCKSCAN_UTIL_H
#define BLOCKSCAN_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* malloc/calloc/realloc/strdup that never return NULL. */
void *bwsc__xmalloc(size_t size);
void *bwsc__xcalloc(size_t count, size_t size);
void *bwsc__xrealloc(void *ptr, size_t size);
char *bwsc__xstrdup(const char *s);
/* strdup of a printf-formatted string. */
char *bwsc__xasprintf(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* Makes room for `need` elements of `elem` bytes in *array (capacity *cap),
 * growing geometrically. */
void bwsc__grow(void **array, size_t *cap, size_t need, size_t elem);

/* Appends one element to an array described by (items, count, cap); returns a
 * pointer to the new, zeroed slot. */
#define BWSC__PUSH(items, count, cap)                                          \
  (bwsc__grow((void **)&(items), &(cap), (count) + 1, sizeof(*(items))),       \
   memset(&(items)[(count)], 0, sizeof(*(items))), &(items)[(count)++])

/* 64-bit FNV-1a over a NUL-terminated string, continuing from `hash` (start
 * with BWSC__FNV_INIT). */
#define BWSC__FNV_INIT UINT64_C(14695981039346656037)
uint64_t bwsc__fnv1a(uint64_t hash, const char *s);

/* A string -> size_t map (open addressing). Keys are borrowed. */
typedef struct bwsc__strmap {
  const char **keys;
  size_t *values;
  size_t cap; /* power of two, 0 when empty */
  size_t count;
} bwsc__strmap;

/* Returns 1 and sets *value when key is present, else 0. */
int bwsc__strmap_get(const bwsc__strmap *map, const char *key, size_t *value);
/* Inserts or replaces key -> value. */
void bwsc__strmap_put(bwsc__strmap *map, const char *key, size_t value);
void bwsc__strmap_free(bwsc__strmap *map);

/* The process's one copy of the string s (equal strings give the same
 * pointer): the thousands of USRs and file names that every TU including a
 * large header repeats are held once. Safe from any thread. */
const char *bwsc__intern(const char *s);

/* How many distinct strings and bytes (their text) are interned. */
void bwsc__intern_stats(size_t *count, size_t *bytes);

#endif /* BLOCKSCAN_UTIL_H */
