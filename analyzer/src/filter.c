/* filter.c - suppression comments applied to findings.
 *
 * Invariants: suppressions are looked up by "file\nline", so the cost is one
 * hash probe per finding and line, whatever the number of comments; the
 * NOLINT comments of clang-tidy's own forms are read from the finding's line
 * (and the one before) in its file, each file read once per run.
 */
#include "filter.h"

#include "util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether a suppression naming `rule` (a rule id, a category or "*"; NULL
 * for all) covers finding f. */
static int names(const char *rule, const bwsc__finding *f) {
  if (!rule || strcmp(rule, "*") == 0)
    return 1;
  if (strcmp(rule, f->rule->id) == 0)
    return 1;
  const char *category = bw_rule_category_name(f->rule->category);
  return category && strcmp(rule, category) == 0;
}

/* ---- NOLINT, read from the source ---------------------------------------- */

/* One source file's text and where its lines start. */
typedef struct source {
  char *name;    /* the key of this file in sources.index */
  char *text;    /* NULL when it cannot be read */
  size_t *lines; /* lines[n - 1]: offset of line n */
  size_t nlines, caplines;
} source;

typedef struct sources {
  bwsc__strmap index; /* file -> position in items */
  source *items;
  size_t count, cap;
} sources;

static void source_load(source *src, const char *file) {
  FILE *in = fopen(file, "rb");
  if (!in)
    return;
  size_t len = 0, cap = 0;
  char buf[8192];
  size_t got;
  while ((got = fread(buf, 1, sizeof(buf), in)) > 0) {
    bwsc__grow((void **)&src->text, &cap, len + got + 1, 1);
    memcpy(src->text + len, buf, got);
    len += got;
  }
  fclose(in);
  if (!src->text)
    src->text = bwsc__xstrdup("");
  src->text[len] = '\0';
  *BWSC__PUSH(src->lines, src->nlines, src->caplines) = 0;
  for (size_t i = 0; i < len; i++)
    if (src->text[i] == '\n')
      *BWSC__PUSH(src->lines, src->nlines, src->caplines) = i + 1;
}

/* Line `line` (from 1) of `file` as a span, or 0 when there is none. */
static size_t source_line(sources *all, const char *file, unsigned line,
                          const char **start) {
  size_t at;
  if (!bwsc__strmap_get(&all->index, file, &at)) {
    at = all->count;
    source *src = BWSC__PUSH(all->items, all->count, all->cap);
    src->name = bwsc__xstrdup(file);
    bwsc__strmap_put(&all->index, src->name, at);
    source_load(src, file);
  }
  const source *src = &all->items[at];
  if (!src->text || line == 0 || line > src->nlines)
    return 0;
  *start = src->text + src->lines[line - 1];
  const char *nl = strchr(*start, '\n');
  return nl ? (size_t)(nl - *start) : strlen(*start);
}

static void sources_free(sources *all) {
  for (size_t i = 0; i < all->count; i++) {
    free(all->items[i].text);
    free(all->items[i].lines);
    free(all->items[i].name);
  }
  free(all->items);
  bwsc__strmap_free(&all->index);
}

/* Whether one entry of a NOLINT list, as clang-tidy names checks, covers
 * f: "*", "blockscan", "blockscan-*", "blockscan-" + a rule id or a
 * category. Other tools' checks cover nothing. */
static int list_entry_covers(const char *entry, size_t len,
                             const bwsc__finding *f) {
  static const char ours[] = "blockscan";
  const size_t n = sizeof(ours) - 1;
  if (len == 1 && entry[0] == '*')
    return 1;
  if (len < n || memcmp(entry, ours, n) != 0)
    return 0;
  if (len == n || (len == n + 2 && entry[n] == '-' && entry[n + 1] == '*'))
    return 1;
  if (entry[n] != '-')
    return 0;
  char *rule = bwsc__xasprintf("%.*s", (int)(len - n - 1), entry + n + 1);
  int covered = names(rule, f);
  free(rule);
  return covered;
}

/* Whether the line [p, end) holds a `marker` ("NOLINT" or
 * "NOLINTNEXTLINE") that covers f: the word alone, or followed by a
 * "(check, check...)" list. */
static int line_marked(const char *p, const char *end, const char *marker,
                       const bwsc__finding *f) {
  size_t n = strlen(marker);
  for (; (size_t)(end - p) >= n; p++) {
    if (memcmp(p, marker, n) != 0)
      continue;
    const char *after = p + n;
    if (after < end && (isalnum((unsigned char)*after) || *after == '_'))
      continue; /* NOLINTBEGIN, NOLINTNEXTLINE seen as NOLINT, ... */
    if (after >= end || *after != '(')
      return 1;
    const char *close = memchr(after, ')', (size_t)(end - after));
    if (!close)
      return 1; /* clang-tidy reads an unclosed list as no list */
    for (const char *q = after + 1; q < close;) {
      while (q < close && (*q == ' ' || *q == ','))
        q++;
      const char *stop = q;
      while (stop < close && *stop != ',' && *stop != ' ')
        stop++;
      if (stop > q && list_entry_covers(q, (size_t)(stop - q), f))
        return 1;
      q = stop;
    }
  }
  return 0;
}

/* clang-tidy's rule: NOLINT on the finding's line, NOLINTNEXTLINE on the
 * line before it. */
static int nolint_covers(sources *all, const bwsc__finding *f) {
  if (!f->loc.file)
    return 0;
  const char *line = NULL;
  size_t len = source_line(all, f->loc.file, f->loc.line, &line);
  if (len && line_marked(line, line + len, "NOLINT", f))
    return 1;
  len = f->loc.line > 1 ? source_line(all, f->loc.file, f->loc.line - 1, &line)
                        : 0;
  return len && line_marked(line, line + len, "NOLINTNEXTLINE", f);
}

/* ---- suppression facts -----------------------------------------------------
 */

typedef struct supp_index {
  bwsc__strmap first; /* "file\nline" -> first fact in `facts` */
  const bwsc__suppress_fact **facts;
  size_t *next; /* chain of facts with the same key, SIZE_MAX ends */
  char **keys;
  size_t count, cap, capnext, capkeys;
} supp_index;

static char *key_of(const char *file, unsigned line) {
  return bwsc__xasprintf("%s\n%u", file ? file : "", line);
}

static int suppressed(const supp_index *idx, const bwsc__finding *f) {
  for (unsigned delta = 0; delta < 2; delta++) {
    if (f->loc.line < delta + 1)
      break;
    char *key = key_of(f->loc.file, f->loc.line - delta);
    size_t at;
    int found = bwsc__strmap_get(&idx->first, key, &at);
    free(key);
    for (; found && at != SIZE_MAX; at = idx->next[at])
      if (names(idx->facts[at]->rule, f))
        return 1;
  }
  return 0;
}

void bwsc__suppress_apply(bwsc__findings *findings, const bwsc__tu_facts *tus,
                          size_t ntus) {
  supp_index idx;
  memset(&idx, 0, sizeof(idx));
  size_t nkeys = 0;
  for (size_t t = 0; t < ntus; t++) {
    for (size_t i = 0; i < tus[t].nsuppress; i++) {
      const bwsc__suppress_fact *s = &tus[t].suppress[i];
      size_t at = idx.count;
      *BWSC__PUSH(idx.facts, idx.count, idx.cap) = s;
      bwsc__grow((void **)&idx.next, &idx.capnext, idx.count, sizeof(size_t));
      char *key = key_of(s->file, s->line);
      size_t head;
      if (bwsc__strmap_get(&idx.first, key, &head)) {
        /* An existing key keeps its stored pointer; only the value moves. */
        idx.next[at] = head;
        bwsc__strmap_put(&idx.first, key, at);
        free(key);
      } else {
        idx.next[at] = SIZE_MAX;
        *BWSC__PUSH(idx.keys, nkeys, idx.capkeys) = key;
        bwsc__strmap_put(&idx.first, key, at);
      }
    }
  }
  sources all;
  memset(&all, 0, sizeof(all));
  for (size_t i = 0; i < findings->count;) {
    if (suppressed(&idx, &findings->items[i]) ||
        nolint_covers(&all, &findings->items[i]))
      bwsc__findings_remove(findings, i);
    else
      i++;
  }
  sources_free(&all);
  for (size_t i = 0; i < nkeys; i++)
    free(idx.keys[i]);
  free(idx.keys);
  free(idx.facts);
  free(idx.next);
  bwsc__strmap_free(&idx.first);
}
