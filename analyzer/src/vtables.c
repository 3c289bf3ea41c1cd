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
      size_t at;
      if (!bwsc__strmap_get(&v->by_slot, f->slot, &at)) {
        at = v->nfields;
        BWSC__PUSH(v->fields, v->nfields, v->capfields);
        bwsc__strmap_put(&v->by_slot, f->slot, at);
      }
      if (!bwsc__vtables_overridden(v, (long)at, f->value.ref)) {
        bwsc__vt_field *field = &v->fields[at];
        *BWSC__PUSH(field->fns, field->nfns, field->capfns) = f->value.ref;
      }
    }
    free(record);
  }
  counts_free(&pairs);
  counts_free(&impls);
  counts_free(&setters);
  counts_free(&open);
}

long bwsc__vtables_field(const bwsc__vtables *v, const char *slot) {
  size_t at;
  return slot && v->nfields && bwsc__strmap_get(&v->by_slot, slot, &at)
             ? (long)at
             : -1;
}

int bwsc__vtables_overridden(const bwsc__vtables *v, long field,
                             const char *fn) {
  if (field < 0 || (size_t)field >= v->nfields || !fn)
    return 0;
  const bwsc__vt_field *f = &v->fields[field];
  for (size_t k = 0; k < f->nfns; k++)
    if (strcmp(f->fns[k], fn) == 0)
      return 1;
  return 0;
}

void bwsc__vtables_free(bwsc__vtables *v) {
  for (size_t i = 0; i < v->nfields; i++)
    free(v->fields[i].fns);
  free(v->fields);
  bwsc__strmap_free(&v->by_slot);
  memset(v, 0, sizeof(*v));
}
