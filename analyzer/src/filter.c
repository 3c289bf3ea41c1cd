/* filter.c - suppression comments applied to findings.
 *
 * Invariant: suppressions are looked up by "file\nline", so the cost is one
 * hash probe per finding and line, whatever the number of comments.
 */
#include "filter.h"

#include "util.h"

#include <stdlib.h>
#include <string.h>

static int covers(const bwsc__suppress_fact *s, const bwsc__finding *f) {
  if (!s->rule || strcmp(s->rule, "*") == 0)
    return 1;
  if (strcmp(s->rule, f->rule->id) == 0)
    return 1;
  const char *category = bw_rule_category_name(f->rule->category);
  return category && strcmp(s->rule, category) == 0;
}

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
      if (covers(idx->facts[at], f))
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
  for (size_t i = 0; i < findings->count;) {
    if (suppressed(&idx, &findings->items[i]))
      bwsc__findings_remove(findings, i);
    else
      i++;
  }
  for (size_t i = 0; i < nkeys; i++)
    free(idx.keys[i]);
  free(idx.keys);
  free(idx.facts);
  free(idx.next);
  bwsc__strmap_free(&idx.first);
}
