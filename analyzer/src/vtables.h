/* vtables.h - default methods of GObject interfaces and classes that every
 * implementation in the program overrides.
 *
 * A call through `iface->method` reaches every function stored into that
 * field, the interface's default (set in its `*_default_init`, or in the
 * declaring class's own `*_class_init`) too. When every function of the
 * program that stores methods into that struct stores this one, each
 * implementation replaces the default, and a chain through the default
 * is low confidence. Not dropped: an implementation that sets no method
 * at all (it inherits its parent's vtable, or keeps the defaults) stores
 * nothing, so it cannot be told apart here.
 */
#ifndef BLOCKSCAN_VTABLES_H
#define BLOCKSCAN_VTABLES_H

#include "facts.h"
#include "util.h"

#include <stddef.h>

typedef struct bwsc__vtables {
  bwsc__strmap overridden; /* "<field USR>\x1f<function USR>" */
  char **keys;             /* the map's keys, owned */
  size_t nkeys, capkeys;
} bwsc__vtables;

/* Finds the overridden defaults among flows[0..n) (every store of a
 * function into a field, across the program's TUs). */
void bwsc__vtables_build(bwsc__vtables *v, const bwsc__flow_fact *const *flows,
                         size_t n);

/* Is function `fn` (a USR) a default of field `slot` that every
 * implementation overrides? */
int bwsc__vtables_overridden(const bwsc__vtables *v, const char *slot,
                             const char *fn);

void bwsc__vtables_free(bwsc__vtables *v);

#endif /* BLOCKSCAN_VTABLES_H */
