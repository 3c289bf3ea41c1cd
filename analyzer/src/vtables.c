/* vtables.c - see vtables.h.
 *
 * Invariants: a field's USR is "<record USR>@FI@<name>", so a store's
 * record is the prefix of its slot; a record with a store written at file
 * scope (a static vtable's initialiser, whose implementation has no
 * function to name) has no overridden defaults; only stores of functions
 * (or slots holding them) are facts at all, so an implementation that
 * sets nothing is not seen (hence low confidence, not dropped).
 */
#include "vtables.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct counts {
  bwsc__strmap map; /* key -> count, or 1 for a pair */
  char **keys;
  size_t nkeys, capkeys;
} counts;

static const char *keep(counts *c, char *key) {
  *BWSC__PUSH(c->keys, c->nkeys, c->capkeys) = key;
  return key;
}

/* Adds 1 to `key`'s count (a copy of the key is kept on first sight). */
static void bump(counts *c, const char *key) {
  size_t n = 0;
  if (bwsc__strmap_get(&c->map, key, &n))
    bwsc__strmap_put(&c->map, key, n + 1);
  else
    bwsc__strmap_put(&c->map, keep(c, bwsc__xstrdup(key)), 1);
}

/* Marks `key` once; returns 1 the first time. */
static int mark(counts *c, const char *key) {
  if (bwsc__strmap_get(&c->map, key, NULL))
    return 0;
  bwsc__strmap_put(&c->map, keep(c, bwsc__xstrdup(key)), 1);
  return 1;
}

static size_t count_of(const counts *c, const char *key) {
  size_t n = 0;
  return bwsc__strmap_get(&c->map, key, &n) ? n : 0;
}

static void counts_free(counts *c) {
  for (size_t i = 0; i < c->nkeys; i++)
    free(c->keys[i]);
  free(c->keys);
  bwsc__strmap_free(&c->map);
}

/* The record part of a field's USR, or NULL when `slot` is no field. */
static char *record_of(const char *slot) {
  const char *at = strstr(slot, "@FI@");
  return at ? bwsc__xasprintf("%.*s", (int)(at - slot), slot) : NULL;
}

void bwsc__vtables_build(bwsc__vtables *v, const bwsc__flow_fact *const *flows,
                         size_t n) {
  memset(v, 0, sizeof(*v));
  counts pairs = {0};   /* "R\x1f fn" and "F\x1f fn" seen */
  counts impls = {0};   /* R -> implementations storing into it */
  counts setters = {0}; /* F -> implementations storing into it */
  counts open = {0};    /* R with a store at file scope */
  for (size_t i = 0; i < n; i++) {
    const bwsc__flow_fact *f = flows[i];
    char *record = record_of(f->slot);
    if (!record)
      continue;
    if (!f->in_default && !f->in_fn) {
      mark(&open, record);
    } else if (!f->in_default) {
      char *rk = bwsc__xasprintf("%s\x1f%s", record, f->in_fn);
      char *fk = bwsc__xasprintf("%s\x1f%s", f->slot, f->in_fn);
      if (mark(&pairs, rk))
        bump(&impls, record);
      if (mark(&pairs, fk))
        bump(&setters, f->slot);
      free(rk);
      free(fk);
    }
    free(record);
  }
  for (size_t i = 0; i < n; i++) {
    const bwsc__flow_fact *f = flows[i];
    if (!f->in_default || f->value.kind != BWSC__VAL_FUNC || !f->value.ref)
      continue;
    char *record = record_of(f->slot);
    size_t implementations = record ? count_of(&impls, record) : 0;
    if (implementations > 0 && !count_of(&open, record) &&
        count_of(&setters, f->slot) == implementations) {
      char *key = bwsc__xasprintf("%s\x1f%s", f->slot, f->value.ref);
      if (bwsc__strmap_get(&v->overridden, key, NULL)) {
        free(key);
      } else {
        *BWSC__PUSH(v->keys, v->nkeys, v->capkeys) = key;
        bwsc__strmap_put(&v->overridden, key, 1);
      }
    }
    free(record);
  }
  counts_free(&pairs);
  counts_free(&impls);
  counts_free(&setters);
  counts_free(&open);
}

int bwsc__vtables_overridden(const bwsc__vtables *v, const char *slot,
                             const char *fn) {
  if (!v->nkeys || !slot || !fn)
    return 0;
  char key[1024];
  int len = snprintf(key, sizeof(key), "%s\x1f%s", slot, fn);
  return len > 0 && (size_t)len < sizeof(key) &&
         bwsc__strmap_get(&v->overridden, key, NULL);
}

void bwsc__vtables_free(bwsc__vtables *v) {
  for (size_t i = 0; i < v->nkeys; i++)
    free(v->keys[i]);
  free(v->keys);
  bwsc__strmap_free(&v->overridden);
  memset(v, 0, sizeof(*v));
}
