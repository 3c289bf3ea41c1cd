/* Internal layout of a bw_rules set, shared by the loader's source files.
 *
 * Invariants:
 *  - Rules are allocated one by one and referenced from pointer vectors, so
 *    a pointer handed to a caller never moves when a vector grows.
 *  - Every string a rule points to lives in the set's arena and is freed
 *    only by bw_rules_free().
 *  - The indexes map a function name to its rule and always describe exactly
 *    the rules in the vectors (they are rebuilt after a rollback).
 */
#ifndef BW_RULES_INTERNAL_H
#define BW_RULES_INTERNAL_H

#include "blockwatch/rules.h"

#include <stdarg.h>
#include <stddef.h>

/* Nesting limit for include: (a cycle is reported before this is hit). */
#define BWRL__MAX_INCLUDE_DEPTH 16

/* ---- arena: bump allocator for strings, freed all at once ---- */
typedef struct bwrl__arena_chunk bwrl__arena_chunk;
typedef struct bwrl__arena {
  bwrl__arena_chunk *head;
} bwrl__arena;

/* Copies len bytes of s and a NUL into the arena; NULL when out of memory. */
char *bwrl__arena_strndup(bwrl__arena *arena, const char *s, size_t len);
void bwrl__arena_free(bwrl__arena *arena);

/* ---- growable vector of pointers ---- */
typedef struct bwrl__vec {
  void **items;
  size_t n, cap;
} bwrl__vec;

/* Appends item; 0 or -ENOMEM. */
int bwrl__vec_push(bwrl__vec *vec, void *item);
void bwrl__vec_free(bwrl__vec *vec);

/* ---- open-addressing hash index: name -> value, no allocation on get ---- */
typedef struct bwrl__index_slot {
  const char *key; /* NULL = empty */
  void *value;
} bwrl__index_slot;

typedef struct bwrl__index {
  bwrl__index_slot *slots;
  size_t cap; /* 0 or a power of two */
  size_t n;
} bwrl__index;

/* Adds key (which must outlive the index) -> value; replaces an equal key.
 * 0 or -ENOMEM. */
int bwrl__index_put(bwrl__index *index, const char *key, void *value);
/* The value stored for key, or NULL. Never allocates. */
void *bwrl__index_get(const bwrl__index *index, const char *key);
void bwrl__index_clear(bwrl__index *index);

/* ---- the set ---- */
struct bw_rules {
  bwrl__arena arena;
  bwrl__vec blocking; /* bw_blocking_rule * */
  bwrl__vec entries;  /* bw_entry_rule * */
  bwrl__vec allows;   /* bw_allow_rule * */
  bwrl__index blocking_index;
  bwrl__index entry_index;
  bwrl__index allow_index; /* allow rules without glob characters */
  size_t n_glob_allows;    /* allow rules with glob characters */
  unsigned char enabled[BW_CATEGORY_COUNT];
  bw_rules_error *errors;
  size_t n_errors, cap_errors;
  bw_rules_error_fn error_fn;
  void *error_ctx;
};

/* The default hint of a category (never NULL for a valid category). */
const char *bwrl__category_hint(bw_rule_category cat);

/* Rebuilds all indexes from the vectors. The new indexes replace the old
 * ones only on success; on -ENOMEM the old ones are kept. */
int bwrl__rules_reindex(bw_rules *rs);

/* ---- one load call (possibly many files through include:) ---- */
typedef struct bwrl__load {
  bw_rules *rs;
  size_t n_errors; /* errors reported during this load */
  int oom;         /* an allocation failed */
  int io_err;      /* negative errno of the first unreadable file, or 0 */
  const char *stack[BWRL__MAX_INCLUDE_DEPTH]; /* identities being loaded */
  size_t depth;
  /* Rules added by this load, for duplicate checks before they are
   * committed into the set's own indexes. */
  bwrl__index new_blocking;
  bwrl__index new_entries;
  /* What to restore when the load fails. */
  size_t old_blocking, old_entries, old_allows;
  size_t *old_callbacks; /* n_callbacks of each old entry */
  unsigned char old_enabled[BW_CATEGORY_COUNT];
} bwrl__load;

/* Blocking / entry rule for name, committed or added by this load. */
bw_blocking_rule *bwrl__load_find_blocking(const bwrl__load *ld,
                                           const char *name);
bw_entry_rule *bwrl__load_find_entry(const bwrl__load *ld, const char *name);

/* Reports "file:line:column: error: <fmt>" (or "file: error: <fmt>" when
 * line is 0) to the set's callback and records it in its error list. */
void bwrl__vreport(bwrl__load *ld, const char *file, unsigned line,
                   unsigned column, const char *fmt, va_list ap)
    __attribute__((format(printf, 5, 0)));
void bwrl__report(bwrl__load *ld, const char *file, unsigned line,
                  unsigned column, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Parses one text. `file` names it in messages, `dir` is where include:
 * paths are resolved ("" for the current directory), `api` is the default
 * api name of its rules. Errors go through bwrl__report(). */
void bwrl__parse(bwrl__load *ld, const char *file, const char *dir,
                 const char *api, const char *text, size_t len);

/* Loads the file at path for an include: line of from_file (NULL for a
 * top-level load); errors about opening it are reported at from_file's
 * line and column. */
void bwrl__load_path(bwrl__load *ld, const char *path, const char *from_file,
                     unsigned from_line, unsigned from_column);

/* Embedded packs, generated at build time; ends with a {NULL} sentinel. */
typedef struct bwrl__pack {
  const char *name; /* "libc" */
  const char *text; /* NUL-terminated */
  size_t len;
} bwrl__pack;
extern const bwrl__pack bwrl__packs[];

#endif /* BW_RULES_INTERNAL_H */
