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

/* The overridden defaults of one field. */
typedef struct bwsc__vt_field {
  const char **fns; /* their USRs, borrowed from the flow facts */
  size_t nfns, capfns;
} bwsc__vt_field;

typedef struct bwsc__vtables {
  bwsc__strmap by_slot; /* field USR (borrowed) -> index into fields */
  bwsc__vt_field *fields;
  size_t nfields, capfields;
} bwsc__vtables;

/* Finds the overridden defaults among flows[0..n) (every store of a
 * function into a field, across the program's TUs). */
void bwsc__vtables_build(bwsc__vtables *v, const bwsc__flow_fact *const *flows,
                         size_t n);

/* The index of field `slot`'s overridden defaults, or -1 when it has none:
 * a lookup by the field's USR, which a caller asks once per call site. */
long bwsc__vtables_field(const bwsc__vtables *v, const char *slot);

/* Is function `fn` (a USR) one of field `field`'s overridden defaults? */
int bwsc__vtables_overridden(const bwsc__vtables *v, long field,
                             const char *fn);

void bwsc__vtables_free(bwsc__vtables *v);

#endif /* BLOCKSCAN_VTABLES_H */
