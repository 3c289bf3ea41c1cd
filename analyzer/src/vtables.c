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
    size_t r;
    if (!bwsc__strmap_get(&v->by_record, record, &r)) {
      r = v->nrecords;
      BWSC__PUSH(v->records, v->nrecords, v->caprecords)->usr =
          bwsc__xstrdup(record);
      bwsc__strmap_put(&v->by_record, v->records[r].usr, r);
    }
    bwsc__vt_record *rec = &v->records[r];
    *BWSC__PUSH(rec->flows, rec->nflows, rec->capflows) = f;
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

/* What one function storing into a struct does with the fields that
 * bwsc__vtables_self asks about. */
typedef struct vt_type {
  const char *fn;
  unsigned stores_k : 1;   /* stores something into K */
  unsigned stores_m : 1;   /* stores the method into K */
  unsigned stores_to : 1;  /* stores something into `to` */
  unsigned unknown_to : 1; /* ... that is not a function */
  unsigned is_default : 1; /* the struct's own type's default init */
} vt_type;

static int same(const char *a, const char *b) {
  return a == b || (a && b && strcmp(a, b) == 0);
}

static int holds_fn(const bwsc__flow_fact *f) {
  return f->value.kind == BWSC__VAL_FUNC && f->value.ref;
}

size_t bwsc__vtables_self(const bwsc__vtables *v, const char *method,
                          const char *to, const char ***out) {
  *out = NULL;
  char *record = method && to ? record_of(to) : NULL;
  size_t r;
  int found = record && bwsc__strmap_get(&v->by_record, record, &r);
  free(record);
  if (!found)
    return 0;
  const bwsc__vt_record *rec = &v->records[r];
  const char *k = NULL;
  for (size_t i = 0; i < rec->nflows; i++) {
    const bwsc__flow_fact *f = rec->flows[i];
    if (!f->in_fn)
      return 0; /* filled at file scope: a static vtable */
    if (holds_fn(f) && strcmp(f->value.ref, method) == 0) {
      if (k && strcmp(k, f->slot) != 0)
        return 0;
      k = f->slot;
    }
  }
  if (!k || strcmp(k, to) == 0)
    return 0;
  bwsc__strmap index = {0};
  vt_type *types = NULL;
  size_t ntypes = 0, captypes = 0;
  for (size_t i = 0; i < rec->nflows; i++) {
    const bwsc__flow_fact *f = rec->flows[i];
    size_t t;
    if (!bwsc__strmap_get(&index, f->in_fn, &t)) {
      t = ntypes;
      BWSC__PUSH(types, ntypes, captypes)->fn = f->in_fn;
      bwsc__strmap_put(&index, f->in_fn, t);
    }
    vt_type *type = &types[t];
    type->is_default |= f->in_default != 0;
    if (strcmp(f->slot, k) == 0) {
      type->stores_k = 1;
      type->stores_m |= holds_fn(f) && strcmp(f->value.ref, method) == 0;
    } else if (strcmp(f->slot, to) == 0) {
      type->stores_to = 1;
      type->unknown_to |= !holds_fn(f);
    }
  }
  int known = 1;
  for (size_t t = 0; t < ntypes && known; t++) {
    const vt_type *type = &types[t];
    int runs = type->stores_m || !type->stores_k;
    if (runs && (type->unknown_to || (!type->stores_to && !type->is_default)))
      known = 0;
  }
  size_t count = 0, cap = 0;
  for (size_t i = 0; known && i < rec->nflows; i++) {
    const bwsc__flow_fact *f = rec->flows[i];
    size_t t = 0;
    bwsc__strmap_get(&index, f->in_fn, &t);
    if (strcmp(f->slot, to) != 0 || !(types[t].stores_m || !types[t].stores_k))
      continue;
    size_t j = 0;
    while (j < count && !same((*out)[j], f->value.ref))
      j++;
    if (j == count)
      *BWSC__PUSH(*out, count, cap) = f->value.ref;
  }
  free(types);
  bwsc__strmap_free(&index);
  if (!known || !count) {
    free(*out);
    *out = NULL;
    return 0;
  }
  return count;
}

void bwsc__vtables_free(bwsc__vtables *v) {
  for (size_t i = 0; i < v->nfields; i++)
    free(v->fields[i].fns);
  free(v->fields);
  bwsc__strmap_free(&v->by_slot);
  for (size_t i = 0; i < v->nrecords; i++) {
    free(v->records[i].usr);
    free(v->records[i].flows);
  }
  free(v->records);
  bwsc__strmap_free(&v->by_record);
  memset(v, 0, sizeof(*v));
}
