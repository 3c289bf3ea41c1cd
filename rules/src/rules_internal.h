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

#include <ctype.h>
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
  bwrl__vec blocking;  /* bw_blocking_rule * */
  bwrl__vec entries;   /* bw_entry_rule * */
  bwrl__vec allows;    /* bw_allow_rule * */
  bwrl__vec posts;     /* bw_post_rule * */
  bwrl__vec passes;    /* bw_pass_rule * */
  bwrl__vec hints;     /* bw_hint_rule *, few: searched in order */
  bwrl__vec nonblocks; /* bw_nonblock_rule * */
  bwrl__vec readies;   /* bw_ready_rule * */
  bwrl__index blocking_index;
  bwrl__index entry_index;
  bwrl__index allow_index; /* allow rules without glob characters */
  bwrl__index post_index;
  bwrl__index pass_index;
  bwrl__index nonblock_index;
  bwrl__index ready_index;
  size_t n_glob_allows; /* allow rules with glob characters */
  unsigned char enabled[BW_CATEGORY_COUNT];
  bw_rules_error *errors;
  size_t n_errors, cap_errors;
  bw_rules_error_fn error_fn;
  void *error_ctx;
};

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
  size_t old_blocking, old_entries, old_allows, old_posts, old_passes,
      old_hints, old_nonblocks, old_readies;
  size_t *old_callbacks; /* n_callbacks of each old entry */
  unsigned char old_enabled[BW_CATEGORY_COUNT];
} bwrl__load;

/* Blocking / entry rule for name, committed or added by this load
 * (rules.c). */
bw_blocking_rule *bwrl__load_find_blocking(const bwrl__load *ld,
                                           const char *name);
bw_entry_rule *bwrl__load_find_entry(const bwrl__load *ld, const char *name);

/* Reports "file:line:column: error: <fmt>" (or "file: error: <fmt>" when
 * line is 0) to the set's callback and records it in its error list
 * (errors.c). */
void bwrl__vreport(bwrl__load *ld, const char *file, unsigned line,
                   unsigned column, const char *fmt, va_list ap)
    __attribute__((format(printf, 5, 0)));
void bwrl__report(bwrl__load *ld, const char *file, unsigned line,
                  unsigned column, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Frees the set's error list (errors.c). */
void bwrl__errors_free(bw_rules *rs);

/* Parses one text. `file` names it in messages, `dir` is where include:
 * paths are resolved ("" for the current directory), `api` is the default
 * api name of its rules. Errors go through bwrl__report(). */
void bwrl__parse(bwrl__load *ld, const char *file, const char *dir,
                 const char *api, const char *text, size_t len);

/* Loads the file an include: line names: `name` is taken as it is when it
 * is absolute or `dir` is "", else relative to `dir`. Errors about opening
 * it are reported at from_file's line and column (load.c). */
void bwrl__load_include(bwrl__load *ld, const char *dir, const char *name,
                        const char *from_file, unsigned from_line,
                        unsigned from_column);

/* ---- one line of a rule file: parse.c reads it, cond.c and directive.c
 * give it its meaning ---- */

/* Highest argument index a rule may name. */
#define BWRL__MAX_ARG 31
/* Most key=value fields on one line. */
#define BWRL__MAX_FIELDS 16
/* Longest quotation of offending text in a message; a buffer for one
 * quotation (the text, "..." and a NUL) is BWRL__QUOTE_BUF bytes. */
#define BWRL__QUOTE_MAX 60
#define BWRL__QUOTE_BUF (BWRL__QUOTE_MAX + 4)

typedef struct bwrl__field {
  const char *key; /* points into the kind's key table */
  const char *value;
  size_t len;
  unsigned column; /* of the value's first character (or its quote) */
  unsigned key_column;
} bwrl__field;

/* The line being parsed and what has been read of it so far. */
typedef struct bwrl__line {
  bwrl__load *ld;
  const char *file;
  const char *dir;
  const char *api;
  unsigned lineno;
  const char *s; /* the line, without its newline */
  size_t len;
  size_t pos;
  int failed;
  char *scratch; /* unescaped values */
  size_t scratch_used;
  bwrl__field fields[BWRL__MAX_FIELDS];
  size_t n_fields;
} bwrl__line;

/* What follows "kind:", unescaped and NUL-terminated. */
typedef struct bwrl__subject {
  const char *text;
  size_t len;
  unsigned column;
} bwrl__subject;

/* One key a kind accepts; a kind's table ends with a {NULL} sentinel. */
typedef struct bwrl__key_spec {
  const char *name;
  int repeatable;
} bwrl__key_spec;

static inline int bwrl__is_space(char c) {
  return c == ' ' || c == '\t';
}

static inline int bwrl__is_ident_start(char c) {
  return isalpha((unsigned char)c) || c == '_';
}

/* Copies at most BWRL__QUOTE_MAX bytes of s into out (BWRL__QUOTE_BUF
 * bytes) for quoting in a message; returns out. */
const char *bwrl__quote(const char *s, size_t n, char *out);
/* Reports the line's first error at column col; later ones are dropped. */
void bwrl__fail(bwrl__line *lc, unsigned col, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A C identifier / an allow pattern (identifier, glob and C++ name
 * characters). */
int bwrl__valid_ident(const char *s, size_t n);
int bwrl__valid_pattern(const char *s, size_t n);
/* Reads the key=value fields of the rest of the line into lc->fields; 0 or
 * -EINVAL after reporting. `kind` names the rule in messages. */
int bwrl__read_fields(bwrl__line *lc, const bwrl__key_spec *keys,
                      const char *kind);
/* The field read for key, or NULL. */
const bwrl__field *bwrl__get_field(const bwrl__line *lc, const char *key);
/* Nothing but a comment may follow; 0 or -EINVAL after reporting. */
int bwrl__expect_end(bwrl__line *lc, const char *kind);
/* Copies s into the set's arena; NULL (and ld->oom set) when out of
 * memory. */
const char *bwrl__keep(bwrl__line *lc, const char *s, size_t n);

/* An argument index: decimal 0..BWRL__MAX_ARG (cond.c). */
int bwrl__parse_arg_index(const char *s, size_t n, int *out);
/* Parses the unless= condition in f into cond; 0, or -EINVAL after
 * reporting, or -ENOMEM (cond.c). */
int bwrl__parse_condition(bwrl__line *lc, const bwrl__field *f,
                          bw_rule_cond *cond);
/* Parses every `key` field of the line (unless=, when=) into conds, at
 * most BW_RULE_MAX_CONDS; 0, or -EINVAL after reporting (cond.c). */
int bwrl__parse_conditions(bwrl__line *lc, const char *key, bw_rule_cond *conds,
                           size_t *n);

/* A directive: its keyword, what its subject is called in messages, and
 * the function that carries it out once the subject was read (it reads the
 * rest of the line itself; kcol is the column of the keyword). */
typedef struct bwrl__directive {
  const char *word; /* "blocking" */
  const char *subject;
  void (*run)(bwrl__line *lc, const bwrl__subject *subj, unsigned kcol);
} bwrl__directive;
/* All directives, ending with a {NULL} sentinel (directive.c). */
extern const bwrl__directive bwrl__directives[];

/* Embedded packs, generated at build time; ends with a {NULL} sentinel. */
typedef struct bwrl__pack {
  const char *name; /* "libc" */
  const char *text; /* NUL-terminated */
  size_t len;
} bwrl__pack;
extern const bwrl__pack bwrl__packs[];

#endif /* BW_RULES_INTERNAL_H */
